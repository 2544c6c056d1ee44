#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# Copy through nvmet over the loop transport, with the host driver on the
# other side: one subsystem, three namespaces on three kinds of backing,
#   NSID 1: null_blk with copy offload (the target offloads),
#   NSID 2: the virtio-blk disk /dev/vda (the target emulates),
#   NSID 3: a file on tmpfs (the target copies with copy_file_range),
# checked from the host side for data and from the target side for how
# the copy was done (the backing disks' copy_stat).

load ../lib/common
load ../lib/nvme

KiB=1024
MiB=$(( 1024 * 1024 ))
NQN=nqn.2026-12.io.dmcopy:loop
# nvme_copy_refused checks this many blocks at the destination
NVME_REFUSED_BLOCKS=4096

setup_file() {
	[ -n "${DMCOPY_KERNEL_RELEASE:-}" ] && [ "$(uname -r)" = "$DMCOPY_KERNEL_RELEASE" ] || return 0
	nvmet_teardown
	nullb_cfg_remove_all
	nullb_cfg tgt0 size=512 copy_max_bytes=$MiB
	mkdir -p "$BATS_FILE_TMPDIR/tmpfs"
	mount -t tmpfs -o size=300M nvmet-file "$BATS_FILE_TMPDIR/tmpfs"
	truncate -s 256M "$BATS_FILE_TMPDIR/tmpfs/ns3.img"
	nvmet_subsys "$NQN"
	nvmet_ns "$NQN" 1 /dev/tgt0
	nvmet_ns "$NQN" 2 /dev/vda
	nvmet_ns "$NQN" 3 "$BATS_FILE_TMPDIR/tmpfs/ns3.img"
	nvmet_port 1 loop
	nvmet_export 1 "$NQN"
	nvme_connect "$NQN" loop
}

teardown_file() {
	[ -n "${DMCOPY_KERNEL_RELEASE:-}" ] || return 0
	nvmet_teardown
	umount "$BATS_FILE_TMPDIR/tmpfs" 2>/dev/null || true
	nullb_cfg_remove_all
	guest_teardown_file
}

setup() {
	guest_setup
	H1=$(host_ns "$NQN" 1)
	H2=$(host_ns "$NQN" 2)
	H3=$(host_ns "$NQN" 3)
}

teardown() {
	local h
	for h in "$H1" "$H2" "$H3"; do
		[ -b "$h" ] && echo "$(queue_attr "$h" copy_max_hw_bytes)" \
			>"/sys/block/$(disk_name "$h")/queue/copy_max_bytes"
	done
	guest_teardown
}

@test "nvmet advertises Copy in ONCS with descriptor formats 0 and 1" {
	local ctrl oncs ocfs
	ctrl=$(nvme_ctrl "$NQN")
	oncs=$(id_field id-ctrl "$ctrl" oncs)
	ocfs=$(id_field id-ctrl "$ctrl" ocfs)
	echo "$ctrl oncs=$oncs ocfs=$ocfs"
	(( oncs & 0x100 ))
	(( ocfs == 0x3 ))
}

@test "copy limits: the backing disk's for null_blk, 8 MiB in one range otherwise" {
	local h
	for h in "$H1" "$H2" "$H3"; do
		echo "$h: mssrl=$(id_field id-ns "$h" mssrl) mcl=$(id_field id-ns "$h" mcl) msrc=$(id_field id-ns "$h" msrc) lbs=$(queue_attr "$h" logical_block_size) copy_max_hw_bytes=$(queue_attr "$h" copy_max_hw_bytes)"
	done
	[ "$(id_field id-ns "$H1" mssrl)" = $(( MiB / 512 )) ]
	[ "$(id_field id-ns "$H1" mcl)" = $(( MiB / 512 )) ]
	[ "$(id_field id-ns "$H1" msrc)" = 127 ]
	[ "$(queue_attr "$H1" copy_max_hw_bytes)" = "$MiB" ]
	for h in "$H2" "$H3"; do
		[ "$(id_field id-ns "$h" msrc)" = 0 ]
		[ "$(queue_attr "$h" copy_max_hw_bytes)" = $(( 8 * MiB )) ]
		[ $(( $(id_field id-ns "$h" mssrl) * $(queue_attr "$h" logical_block_size) )) = $(( 8 * MiB )) ]
	done
}

@test "null_blk namespace: below, at and above the limit, offloaded on the target" {
	local len
	for len in 4096 "$MiB" $(( 3 * MiB + 4096 )); do
		copy_mark /dev/tgt0
		copy_and_verify "$H1" $(( 1 * MiB )) "$H1" $(( 100 * MiB )) "$len"
		[ "$(copy_stat_since offloaded_bytes)" = "$len" ] ||
			fail "target offloaded $(copy_stat_since offloaded_bytes) of $len"
		[ "$(copy_stat_since emulated_bytes)" = 0 ]
	done
}

@test "null_blk namespace: the host offloads, no data crosses the transport" {
	local len=$(( 8 * MiB )) rd wr d=$BATS_TEST_TMPDIR
	random_file "$d/src" "$len"
	dev_write "$H1" $(( 20 * MiB )) "$d/src"
	copy_mark "$H1"
	rd=$(disk_stat "$H1" 3)
	wr=$(disk_stat "$H1" 7)
	run "$COPY_RANGE" -d "$H1" $(( 20 * MiB )) "$H1" $(( 200 * MiB )) "$len"
	echo "$output"
	[ "$output" = "copied=$len" ]
	[ "$(copy_stat_since offloaded_bytes)" = "$len" ]
	[ "$(disk_stat "$H1" 3)" = "$rd" ]
	[ "$(disk_stat "$H1" 7)" = "$wr" ]
	dev_expect "$H1" $(( 200 * MiB )) "$d/src"
}

@test "virtio-blk namespace: offloaded by the host, emulated on the target" {
	local len
	for len in 4096 $(( 8 * MiB )) $(( 9 * MiB + 512 )); do
		copy_mark /dev/vda
		copy_and_verify "$H2" $(( 1 * MiB )) "$H2" $(( 100 * MiB )) "$len"
		[ "$(copy_stat_since emulated_bytes)" = "$len" ] ||
			fail "target emulated $(copy_stat_since emulated_bytes) of $len"
		[ "$(copy_stat_since offloaded_bytes)" = 0 ]
	done
}

@test "file namespace on tmpfs: copies below, at and above the limit are exact" {
	local len
	for len in 4096 $(( 8 * MiB )) $(( 17 * MiB + 4096 )); do
		copy_mark "$H3"
		copy_and_verify "$H3" $(( 1 * MiB )) "$H3" $(( 100 * MiB )) "$len"
		[ "$(copy_stat_since offloaded_bytes)" = "$len" ]
	done
}

@test "file namespace: the copy reaches the backing file" {
	local d=$BATS_TEST_TMPDIR f=$BATS_FILE_TMPDIR/tmpfs/ns3.img
	random_file "$d/src" $(( 2 * MiB ))
	dev_write "$H3" $(( 40 * MiB )) "$d/src"
	run "$COPY_RANGE" -d "$H3" $(( 40 * MiB )) "$H3" $(( 60 * MiB )) $(( 2 * MiB ))
	[ "$output" = "copied=$(( 2 * MiB ))" ]
	cmp <(dd if="$f" bs=1M skip=60 count=2 status=none) "$d/src"
}

@test "host copy_max_bytes=0: emulated on the host, the target sees no copy" {
	echo 0 >"/sys/block/$(disk_name "$H1")/queue/copy_max_bytes"
	copy_mark /dev/tgt0
	copy_and_verify "$H1" $(( 2 * MiB )) "$H1" $(( 120 * MiB )) $(( 2 * MiB ))
	[ "$(copy_stat_since offloaded_copies)" = 0 ]
	[ "$(copy_stat_since emulated_copies)" = 0 ]
}

@test "a copy between two namespaces of the subsystem is emulated and exact" {
	copy_mark "$H2"
	copy_and_verify "$H1" $(( 3 * MiB )) "$H2" $(( 130 * MiB )) $(( 2 * MiB ))
	[ "$(copy_stat_since emulated_bytes)" = $(( 2 * MiB )) ]
	[ "$(copy_stat_since offloaded_bytes)" = 0 ]
}

# ------------------------------------------------ nvme copy (nvme-cli) ---

@test "nvme copy: three ranges, format 0 and format 1, concatenated" {
	local d=$BATS_TEST_TMPDIR fmt
	for fmt in 0 1; do
		nvme_fill "$H1" 1000 8 "$d/a"
		nvme_fill "$H1" 3000 100 "$d/b"
		nvme_fill "$H1" 5000 1 "$d/c"
		run nvme copy "$H1" --sdlba=$(( 400000 + fmt * 1000 )) --slbs=1000,3000,5000 \
			--blocks=7,99,0 --format="$fmt"
		echo "$output"
		[ "$status" -eq 0 ]
		cat "$d/a" "$d/b" "$d/c" >"$d/abc"
		dev_expect "$H1" $(( (400000 + fmt * 1000) * 512 )) "$d/abc"
	done
}

@test "nvme copy: a range longer than MSSRL is refused (Command Size Limit)" {
	nvme_copy_refused "$H1" 0x183 300000 --slbs=1000 --blocks=2048
}

@test "nvme copy: ranges over MCL in all are refused (Command Size Limit)" {
	nvme_copy_refused "$H1" 0x183 300000 --slbs=1000,5000 --blocks=1499,1499
}

@test "nvme copy: more ranges than MSRC+1 are refused (Command Size Limit)" {
	nvme_copy_refused "$H2" 0x183 300000 --slbs=1000,5000 --blocks=7,7
}

@test "nvme copy: a source past the end is refused (LBA Out of Range)" {
	local nsze
	nsze=$(( $(blockdev --getsize64 "$H1") / 512 ))
	nvme_copy_refused "$H1" 0x80 300000 --slbs=1000,$(( nsze - 4 )) --blocks=7,7
}

@test "nvme copy: a destination past the end is refused (LBA Out of Range)" {
	local nsze
	nsze=$(( $(blockdev --getsize64 "$H1") / 512 ))
	run nvme copy "$H1" --sdlba=$(( nsze - 4 )) --slbs=1000 --blocks=7
	echo "$output"
	[ "$status" -ne 0 ]
	[ "$(nvme_status_code "$output")" = 0x80 ]
}

@test "nvme copy: a source overlapping the destination is refused (Invalid Field)" {
	nvme_copy_refused "$H1" 0x2 300000 --slbs=300004 --blocks=7
}

@test "nvme copy: file namespace takes one range and checks its length" {
	local d=$BATS_TEST_TMPDIR
	nvme_fill "$H3" 100 16 "$d/a"
	run nvme copy "$H3" --sdlba=20000 --slbs=100 --blocks=15
	echo "$output"
	[ "$status" -eq 0 ]
	dev_expect "$H3" $(( 20000 * 4096 )) "$d/a"
	nvme_copy_refused "$H3" 0x183 30000 --slbs=100 --blocks=$(( 8 * MiB / 4096 ))
	local nsze
	nsze=$(( $(blockdev --getsize64 "$H3") / 4096 ))
	nvme_copy_refused "$H3" 0x80 40000 --slbs=$(( nsze - 1 )) --blocks=1
}

# Last: it turns copy offload off on this host namespace for good.
@test "a controller refusing Copy as an invalid opcode: emulated, then offload off" {
	local head path fi
	head=$(disk_name "$H1")
	path=$(nvme_paths "$head" | head -n 1)
	fi=/sys/kernel/debug/${path:-$head}/fault_inject
	[ -d "$fi" ] || skip "no NVMe fault injection (CONFIG_FAULT_INJECTION_DEBUG_FS)"
	local d=$BATS_TEST_TMPDIR
	random_file "$d/src" 65536
	dev_write "$H1" $(( 4 * MiB )) "$d/src"
	copy_mark "$H1"
	# the next request to complete on the path is the Copy: COPY_SRC
	# never reaches the controller
	echo 0 >"$fi/verbose"
	echo 0x1 >"$fi/status"
	echo 1 >"$fi/dont_retry"
	echo 1 >"$fi/times"
	echo 100 >"$fi/probability"
	run "$COPY_RANGE" -d "$H1" $(( 4 * MiB )) "$H1" $(( 140 * MiB )) 65536
	echo 0 >"$fi/probability"
	echo "$output"
	[ "$output" = copied=65536 ]
	dev_expect "$H1" $(( 140 * MiB )) "$d/src"
	[ "$(copy_stat_since emulated_bytes)" = 65536 ]
	dmesg | tail -n +$(( DMESG_START + 1 )) | grep -q "Copy refused as an invalid opcode"
	local i
	for (( i = 0; i < 50; i++ )); do
		[ "$(queue_attr "$H1" copy_max_hw_bytes)" = 0 ] && break
		sleep 0.1
	done
	[ "$(queue_attr "$H1" copy_max_hw_bytes)" = 0 ]
	copy_mark "$H1"
	copy_and_verify "$H1" $(( 5 * MiB )) "$H1" $(( 150 * MiB )) 65536
	[ "$(copy_stat_since emulated_bytes)" = 65536 ]
}
