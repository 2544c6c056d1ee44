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
# a second subsystem, with settings of a test's own (other_subsys)
NQN2=nqn.2026-12.io.dmcopy:loop2
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
	fail_copy_start_off
	other_subsys_remove
	for h in "$H1" "$H2" "$H3"; do
		[ -b "$h" ] && echo "$(queue_attr "$h" copy_max_hw_bytes)" \
			>"/sys/block/$(disk_name "$h")/queue/copy_max_bytes"
	done
	guest_teardown
}

# other_subsys ATTR=VALUE...: subsystem NQN2 with those attributes and one
# namespace on null_blk tgt1 (offloading 1 MiB at a time, or made with the
# nullb_cfg attributes in OTHER_TGT1 when set), connected over the loop
# port as G1.
other_subsys() {
	local a d=$NVMET_CFS/subsystems/$NQN2
	# shellcheck disable=SC2086 # attribute words
	nullb_cfg tgt1 ${OTHER_TGT1:-size=256 copy_max_bytes=$MiB}
	mkdir "$d"
	echo 1 >"$d/attr_allow_any_host"
	for a in "$@"; do
		echo "${a#*=}" >"$d/${a%%=*}"
	done
	nvmet_ns "$NQN2" 1 /dev/tgt1
	nvmet_export 1 "$NQN2"
	nvme_connect "$NQN2" loop
	G1=$(host_ns "$NQN2" 1)
}

FAIL_FUNCTION=/sys/kernel/debug/fail_function

# fail_copy_start ERRNO [SKIP]: the next blkdev_copy_offload() call after
# the first SKIP (default 0), on the host or the target, returns -ERRNO
# without copying (fail_function), as when it finds no memory for the copy.
fail_copy_start() {
	[ -d "$FAIL_FUNCTION" ] || skip "no function error injection (CONFIG_FAIL_FUNCTION)"
	# 6.12's should_fail_ex() calls get_random_u32_below() from the
	# kprobe's int3 handler, which lockdep reports as an inconsistent
	# lock state (IN-NMI): not a copy bug, and not usable there
	[ ! -e /proc/lockdep ] ||
		skip "fail_function trips lockdep on 6.12 (get_random_u32_below() in int3 context): run on the non-debug kernel"
	grep -qw blkdev_copy_offload "$FAIL_FUNCTION/injectable" ||
		skip "blkdev_copy_offload() takes no injected errors"
	echo blkdev_copy_offload >"$FAIL_FUNCTION/inject"
	printf '%#x\n' "-$1" >"$FAIL_FUNCTION/blkdev_copy_offload/retval"
	echo 0 >"$FAIL_FUNCTION/verbose"
	# calls pass while space exceeds the size (1) of each
	echo $(( ${2:-0} + 1 )) >"$FAIL_FUNCTION/space"
	echo 1 >"$FAIL_FUNCTION/times"
	echo 100 >"$FAIL_FUNCTION/probability"
}

fail_copy_start_off() {
	[ -w "$FAIL_FUNCTION/inject" ] || return 0
	echo >"$FAIL_FUNCTION/inject"
}

other_subsys_remove() {
	local d=$NVMET_CFS/subsystems/$NQN2
	[ -d "$d" ] || return 0
	nvme disconnect -n "$NQN2" >/dev/null 2>&1 || true
	rm -f "$NVMET_CFS/ports/1/subsystems/$NQN2"
	if [ -d "$d/namespaces/1" ]; then
		echo 0 >"$d/namespaces/1/enable"
		rmdir "$d/namespaces/1"
	fi
	rmdir "$d"
	nullb_cfg_remove tgt1
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

# ns_limits NS: MSSRL, MCL and MSRC of NS as nvme id-ns prints them.
ns_limits() {
	echo "mssrl=$(id_field id-ns "$1" mssrl) mcl=$(id_field id-ns "$1" mcl) msrc=$(id_field id-ns "$1" msrc)"
}

@test "copy limits: 8 MiB in up to 128 ranges, whatever offloads below" {
	local h
	for h in "$H1" "$H2" "$H3"; do
		echo "$h: $(ns_limits "$h") lbs=$(queue_attr "$h" logical_block_size) copy_max_hw_bytes=$(queue_attr "$h" copy_max_hw_bytes)"
		# null_blk offloads 1 MiB at a time, virtio-blk and the file
		# nothing: the target splits and emulates, the host sees one
		# limit for all
		[ "$(id_field id-ns "$h" msrc)" = 127 ]
		[ "$(id_field id-ns "$h" mcl)" = "$(id_field id-ns "$h" mssrl)" ]
		[ "$(queue_attr "$h" copy_max_hw_bytes)" = $(( 8 * MiB )) ]
		[ $(( $(id_field id-ns "$h" mssrl) * $(queue_attr "$h" logical_block_size) )) = $(( 8 * MiB )) ]
	done
}

@test "copy limits stay what the host read when the backing disk stops offloading" {
	local was
	was=$(ns_limits "$H1")
	echo 0 >/sys/block/tgt0/queue/copy_max_bytes
	nvme ns-rescan "$(nvme_ctrl "$NQN")"
	echo "before: $was after: $(ns_limits "$H1")"
	[ "$(ns_limits "$H1")" = "$was" ]
	copy_mark /dev/tgt0
	copy_and_verify "$H1" $(( 1 * MiB )) "$H1" $(( 100 * MiB )) $(( 8 * MiB ))
	[ "$(copy_stat_since emulated_bytes)" = $(( 8 * MiB )) ]
	echo "$MiB" >/sys/block/tgt0/queue/copy_max_bytes
	copy_mark /dev/tgt0
	copy_and_verify "$H1" $(( 1 * MiB )) "$H1" $(( 100 * MiB )) $(( 8 * MiB ))
	[ "$(copy_stat_since offloaded_bytes)" = $(( 8 * MiB )) ]
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

@test "a copy between two namespaces of the subsystem is emulated, exact and quiet" {
	dmesg_mark
	copy_mark "$H2"
	copy_and_verify "$H1" $(( 3 * MiB )) "$H2" $(( 130 * MiB )) $(( 2 * MiB ))
	[ "$(copy_stat_since emulated_bytes)" = $(( 2 * MiB )) ]
	[ "$(copy_stat_since offloaded_bytes)" = 0 ]
	# refused by design, and copied: nothing for the kernel log
	dmesg_since "$DMESG_START"
	! dmesg_since "$DMESG_START" | grep -E "COPY|Copy"
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
	# 0's based: 16385 blocks of 512 bytes, one more than 8 MiB
	nvme_copy_refused "$H1" 0x183 300000 --slbs=1000 --blocks=16384
}

@test "nvme copy: ranges over MCL in all are refused (Command Size Limit)" {
	nvme_copy_refused "$H1" 0x183 300000 --slbs=1000,5000 --blocks=9999,9999
}

@test "Copy: more ranges than MSRC+1 are refused (Command Size Limit)" {
	local -a ranges=() i
	for (( i = 0; i < 129; i++ )); do
		ranges+=("$(( 1000 + i * 8 )):8")
	done
	nvme_copy_cmd_refused "$H2" 0x183 300000 "${ranges[@]}"
	# 128 are taken, and concatenated
	local d=$BATS_TEST_TMPDIR
	nvme_fill "$H2" 1000 1024 "$d/src"
	run "$NVME_COPY_CMD" "$H2" 300000 "${ranges[@]:0:128}"
	echo "$output"
	[ "$output" = "status=0x0 result=0" ]
	dev_expect "$H2" $(( 300000 * 512 )) "$d/src"
}

@test "Copy: Dword 0 is 0 when a check refuses a later range, nothing was copied" {
	local nsze
	nsze=$(( $(blockdev --getsize64 "$H1") / 512 ))
	# the third range leaves the namespace
	nvme_copy_cmd_refused "$H1" 0x80 300000 1000:8 2000:8 $(( nsze - 4 )):8
	# the second range is longer than MSSRL
	nvme_copy_cmd_refused "$H1" 0x183 300000 1000:8 2000:16385
	# the second range overlaps the destination
	nvme_copy_cmd_refused "$H1" 0x2 300000 1000:8 300004:8
}

@test "Copy: protection information, STCW or other control bits are an Invalid Field" {
	local high
	# Dword 12 bits 31:16 other than LR (31) and FUA (30): protection
	# information, storage tag and directive bits, which a namespace
	# without PI or directives does not take
	for high in 0x0400 0x2000 0x0100 0x0001 0x3c00; do
		nvme_copy_cmd_refused "$H1" 0x2 300000 -c "$high" 1000:8 ||
			fail "CDW12 bits 31:16 = $high not refused"
	done
}

@test "Copy: PRINFOR, formats 2h and 3h, reserved formats are an Invalid Field" {
	local bits
	# Dword 12 bits 15:8: PRINFOR 15:12 over format 0h; formats 2h,
	# 3h (not in OCFS 3h) and 4h
	for bits in 0x10 0x80 0x02 0x03 0x04; do
		nvme_copy_cmd_refused "$H1" 0x2 300000 -F "$bits" 1000:8 ||
			fail "CDW12 bits 15:8 = $bits not refused"
	done
}

@test "Copy: NR claiming more descriptors than the data carries is a Data SGL Length Invalid" {
	nvme_copy_cmd_refused "$H1" 0xf 300000 -n 4 1000:8 2000:8
	nvme_copy_cmd_refused "$H1" 0xf 300000 -n 256 1000:8
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
	# the subsystem claims NVMe 1.3, before Overlapping I/O Range
	nvme_copy_refused "$H1" 0x2 300000 --slbs=300004 --blocks=7
}

@test "nvme copy: file namespace checks a range's length and the namespace's end" {
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

# -------------------------------------------- descriptor formats, status ---

@test "attr_copy_formats takes 0 to 0x3, and only while no host is connected" {
	local f=$NVMET_CFS/subsystems/$NQN/attr_copy_formats v
	[ "$(cat "$f")" = 0x3 ]
	for v in 4 0x13 -1 abc ""; do
		run bash -c "echo '$v' >$f"
		echo "'$v': $status $output"
		[ "$status" -ne 0 ]
		[[ $output == *"Invalid argument"* ]]
		[ "$(cat "$f")" = 0x3 ]
	done
	# the host connected to this one read OCFS already
	run bash -c "echo 1 >$f"
	echo "$output"
	[ "$status" -ne 0 ]
	[[ $output == *"busy"* ]]
	[ "$(cat "$f")" = 0x3 ]
}

@test "a controller taking format 1h only: the host sends 1h, the target offloads" {
	other_subsys attr_copy_formats=2
	local ctrl
	ctrl=$(nvme_ctrl "$NQN2")
	[ "$(id_field id-ctrl "$ctrl" ocfs)" = 0x2 ]
	[ "$(queue_attr "$G1" copy_max_hw_bytes)" = $(( 8 * MiB )) ]
	copy_mark /dev/tgt1
	copy_and_verify "$G1" $(( 1 * MiB )) "$G1" $(( 100 * MiB )) $(( 3 * MiB ))
	[ "$(copy_stat_since offloaded_bytes)" = $(( 3 * MiB )) ]
	# format 0h, not advertised, is an Invalid Field
	nvme_copy_cmd_refused "$G1" 0x2 200000 1000:8
	local d=$BATS_TEST_TMPDIR
	nvme_fill "$G1" 1000 8 "$d/a"
	run "$NVME_COPY_CMD" -f 1 "$G1" 200000 1000:8
	[ "$output" = "status=0x0 result=0" ]
	dev_expect "$G1" $(( 200000 * 512 )) "$d/a"
}

@test "a controller with no copy format: no Copy in ONCS, copies emulated by the host" {
	other_subsys attr_copy_formats=0
	local ctrl oncs
	ctrl=$(nvme_ctrl "$NQN2")
	oncs=$(id_field id-ctrl "$ctrl" oncs)
	(( !(oncs & 0x100) ))
	[ "$(queue_attr "$G1" copy_max_hw_bytes)" = 0 ]
	copy_mark /dev/tgt1
	copy_and_verify "$G1" $(( 1 * MiB )) "$G1" $(( 100 * MiB )) $(( 2 * MiB ))
	[ "$(copy_stat_since offloaded_bytes)" = 0 ]
	nvme_copy_cmd_refused "$G1" 0x1 200000 1000:8
}

@test "an NVMe 2.1 subsystem: sources overlapping the destination are Overlapping I/O Range" {
	other_subsys attr_version=2.1
	nvme_copy_cmd_refused "$G1" 0x187 300000 1000:8 300004:8
	nvme_copy_cmd_refused "$G1" 0x187 300000 299996:8
}

@test "a zoned namespace: no Copy limits, and the ZNS effects log lists no Copy" {
	OTHER_TGT1="size=512 zoned=1 zone_size=64 blocksize=4096 copy_max_bytes=$MiB" other_subsys
	local ctrl
	ctrl=$(nvme_ctrl "$NQN2")
	[ "$(cat "/sys/block/$(disk_name "$G1")/queue/zoned")" = host-managed ]
	echo "$G1: $(ns_limits "$G1")"
	[ "$(ns_limits "$G1")" = "mssrl=0 mcl=0 msrc=0" ]
	[ "$(queue_attr "$G1" copy_max_hw_bytes)" = 0 ]
	nvme effects-log "$ctrl" --csi=2 | tee "$BATS_TEST_TMPDIR/zns"
	grep -q "Zone Append" "$BATS_TEST_TMPDIR/zns"
	! grep -q "IOCS25 " "$BATS_TEST_TMPDIR/zns" || false
	nvme effects-log "$ctrl" --csi=0 | grep -q "IOCS25 "
	# (a zone takes writes only at its write pointer: no pattern here)
	run "$NVME_COPY_CMD" "$G1" 16384 0:8
	[ "$output" = "status=0x1 result=0" ]
}

@test "refusals the host emulates log nothing; a media error is still logged" {
	local head path fi d=$BATS_TEST_TMPDIR
	head=$(disk_name "$H1")
	path=$(nvme_paths "$head" | head -n 1)
	fi=/sys/kernel/debug/${path:-$head}/fault_inject
	[ -d "$fi" ] || skip "no NVMe fault injection (CONFIG_FAULT_INJECTION_DEBUG_FS)"
	echo 0 >"$fi/verbose"
	echo 1 >"$fi/dont_retry"
	echo 0 >"$fi/times"
	echo 100 >"$fi/probability"
	random_file "$d/src" 65536
	dev_write "$H1" $(( 4 * MiB )) "$d/src"
	# Invalid Field: the host copies by reading and writing, silently;
	# the next request to complete on the path is the Copy
	dmesg_mark
	copy_mark "$H1"
	echo 0x2 >"$fi/status"
	echo 1 >"$fi/times"
	run "$COPY_RANGE" -d "$H1" $(( 4 * MiB )) "$H1" $(( 140 * MiB )) 65536
	echo "$output"
	[ "$output" = copied=65536 ]
	dev_expect "$H1" $(( 140 * MiB )) "$d/src"
	[ "$(copy_stat_since emulated_bytes)" = 65536 ]
	echo "kernel log:"
	dmesg_since "$DMESG_START"
	! dmesg_since "$DMESG_START" | grep -E "COPY|Copy|Invalid Field" || false
	# Unrecovered Read Error: copied all the same, and logged
	dmesg_mark
	echo 0x281 >"$fi/status"
	echo 1 >"$fi/times"
	run "$COPY_RANGE" -d "$H1" $(( 4 * MiB )) "$H1" $(( 150 * MiB )) 65536
	echo 0 >"$fi/probability"
	echo "$output"
	[ "$output" = copied=65536 ]
	dev_expect "$H1" $(( 150 * MiB )) "$d/src"
	dmesg_since "$DMESG_START"
	dmesg_since "$DMESG_START" | grep -q "critical medium error.*COPY_DST"
}

@test "a Copy the target cannot start: out of memory may be retried, a refusal is no Invalid Opcode" {
	local d=$BATS_TEST_TMPDIR
	nvme_fill "$H1" 1000 8 "$d/src"
	nvme_fill "$H1" 300000 256 "$d/old"
	# -ENOMEM: Internal Error without Do Not Retry, nothing copied
	fail_copy_start 12
	run "$NVME_COPY_CMD" -d "$H1" 300000 1000:8
	fail_copy_start_off
	echo "ENOMEM: $output"
	[ "$output" = "status=0x6 result=0 dnr=0" ]
	dev_expect "$H1" $(( 300000 * 512 )) "$d/old"
	# -EOPNOTSUPP: Internal Error with it, never Invalid Opcode (which
	# tells a host to stop sending Copy)
	fail_copy_start 95
	run "$NVME_COPY_CMD" -d "$H1" 300000 1000:8
	fail_copy_start_off
	echo "EOPNOTSUPP: $output"
	[ "$output" = "status=0x6 result=0 dnr=1" ]
	dev_expect "$H1" $(( 300000 * 512 )) "$d/old"
	# a host copy: its own call passes, the target's first fails with
	# -ENOMEM, the host retries the Copy and the target offloads it
	copy_mark /dev/tgt0
	fail_copy_start 12 1
	copy_and_verify "$H1" $(( 1 * MiB )) "$H1" $(( 100 * MiB )) 65536
	fail_copy_start_off
	[ "$(copy_stat_since offloaded_bytes)" = 65536 ]
	[ "$(queue_attr "$H1" copy_max_hw_bytes)" = $(( 8 * MiB )) ]
}

@test "a Copy failing part way: Dword 0 names its range, the error log the first block not copied" {
	local d=$BATS_TEST_TMPDIR ctrl lba bb=/sys/kernel/config/nullb/tgt1/badblocks
	other_subsys
	ctrl=$(nvme_ctrl "$NQN2")
	# range 0: 8 blocks at 8192; range 1: 4096 blocks (2 MiB, two of the
	# backing disk's 1 MiB offloads) at 0, with a bad block at 2048
	nvme_fill "$G1" 8192 8 "$d/r0"
	nvme_fill "$G1" 0 4096 "$d/r1"
	nvme_fill "$G1" 100000 $(( 8 + 4096 + 256 )) "$d/old"
	echo "+2048-2055" >"$bb"
	run "$NVME_COPY_CMD" -d "$G1" 100000 8192:8 0:4096
	echo "-2048-2055" >"$bb"
	echo "$output"
	[ "$output" = "status=0x6 result=1 dnr=1" ]
	# range 0 and range 1 up to the bad block copied, nothing else changed
	{ cat "$d/r0"; head -c $(( 2048 * 512 )) "$d/r1"; } >"$d/new"
	dev_expect "$G1" $(( 100000 * 512 )) "$d/new"
	tail -c +$(( (8 + 2048) * 512 + 1 )) "$d/old" >"$d/rest"
	dev_expect "$G1" $(( (100000 + 8 + 2048) * 512 )) "$d/rest"
	run nvme error-log "$ctrl" --log-entries=1 --output-format=json
	echo "$output"
	lba=$(jq '.errors[0].lba' <<<"$output")
	[ "$lba" = 2048 ]
	[ "$(jq '.errors[0].status_field' <<<"$output")" != 0 ]
}

# Last: it turns copy offload off on this host namespace until a reset.
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
	dmesg_since "$DMESG_START" | grep -q "Copy refused as an invalid opcode"
	local i
	for (( i = 0; i < 50; i++ )); do
		[ "$(queue_attr "$H1" copy_max_hw_bytes)" = 0 ] && break
		sleep 0.1
	done
	[ "$(queue_attr "$H1" copy_max_hw_bytes)" = 0 ]
	copy_mark "$H1"
	copy_and_verify "$H1" $(( 5 * MiB )) "$H1" $(( 150 * MiB )) 65536
	[ "$(copy_stat_since emulated_bytes)" = 65536 ]

	# a controller reset gives Copy another chance: offload comes back
	nvme reset "$(nvme_ctrl "$NQN")"
	for (( i = 0; i < 100; i++ )); do
		[ "$(queue_attr "$H1" copy_max_hw_bytes)" = $(( 8 * MiB )) ] && break
		sleep 0.1
	done
	[ "$(queue_attr "$H1" copy_max_hw_bytes)" = $(( 8 * MiB )) ]
	copy_mark /dev/tgt0
	copy_and_verify "$H1" $(( 5 * MiB )) "$H1" $(( 160 * MiB )) 65536
	[ "$(copy_stat_since offloaded_bytes)" = 65536 ]
}
