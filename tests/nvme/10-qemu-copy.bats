#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# The host driver's Copy offload against QEMU's emulated NVMe controller,
# a device model nobody here wrote. tests/check gives the guest three
# namespaces on one controller: NSID 1 (1G, QEMU's limits mssrl=128
# mcl=128 msrc=127), NSID 2 (256M, mssrl=64 mcl=96 msrc=1) and NSID 3
# (256M, 4 KiB logical blocks).

load ../lib/common
load ../lib/nvme

KiB=1024
MiB=$(( 1024 * 1024 ))

setup() {
	guest_setup
	[ -e /sys/block/nvme0n1 ] || skip "no QEMU NVMe controller (tests/vm/run --no-nvme?)"
	NS1=/dev/$(qemu_ns 1)
	NS2=/dev/$(qemu_ns 2 2>/dev/null) || NS2=
	NS3=/dev/$(qemu_ns 3 2>/dev/null) || NS3=
}

teardown() {
	local ns
	dmsetup remove dmt-lv1 2>/dev/null || true
	dmsetup remove dmt-lv2 2>/dev/null || true
	for ns in "$NS1" "$NS2" "$NS3"; do
		[ -b "$ns" ] && echo "$(queue_attr "$ns" copy_max_hw_bytes)" \
			>"/sys/block/$(disk_name "$ns")/queue/copy_max_bytes"
	done
	guest_teardown
}

need_ns() {
	[ -b "$1" ] || skip "needs QEMU namespace $2 (tests/check adds it: --nvme $3)"
}

# limit DEV: the bytes one Copy command moves, from Identify.
limit() {
	echo $(( $(nvme_copy_lbas "$1") * $(queue_attr "$1" logical_block_size) ))
}

# offloaded_copy DEV SRC DST LEN: copy_and_verify, offloaded whole: the
# namespace's copy_stat grows by LEN and emulated nothing.
offloaded_copy() {
	local dev=$1
	copy_mark "$dev"
	copy_and_verify "$dev" "$2" "$dev" "$3" "$4"
	[ "$(copy_stat_since offloaded_bytes)" = "$4" ] ||
		fail "offloaded $(copy_stat_since offloaded_bytes) of $4 bytes"
	[ "$(copy_stat_since emulated_bytes)" = 0 ]
}

@test "copy limits in sysfs are min(MSSRL, MCL) from nvme id-ns" {
	local ns
	for ns in "$NS1" "$NS2" "$NS3"; do
		[ -b "$ns" ] || continue
		echo "$ns: id-ns mssrl=$(id_field id-ns "$ns" mssrl) mcl=$(id_field id-ns "$ns" mcl) lbs=$(queue_attr "$ns" logical_block_size) copy_max_hw_bytes=$(queue_attr "$ns" copy_max_hw_bytes)"
		[ "$(queue_attr "$ns" copy_max_hw_bytes)" = "$(limit "$ns")" ]
		[ "$(queue_attr "$ns" copy_max_bytes)" = "$(limit "$ns")" ]
	done
	[ "$(limit "$NS1")" = $(( 128 * 512 )) ]
}

@test "MCL below MSSRL bounds the limit (NSID 2: mssrl=64 mcl=96)" {
	need_ns "$NS2" 2 256M,mssrl=64,mcl=96,msrc=1
	[ "$(queue_attr "$NS2" copy_max_hw_bytes)" = $(( 64 * 512 )) ]
}

@test "copies below, at and above the limit are offloaded and exact" {
	local lim
	lim=$(limit "$NS1")
	offloaded_copy "$NS1" $(( 1 * MiB )) $(( 64 * MiB )) 4096
	offloaded_copy "$NS1" $(( 2 * MiB )) $(( 65 * MiB )) "$lim"
	# above: split into limit-sized Copy commands, a short one last
	offloaded_copy "$NS1" $(( 4 * MiB )) $(( 80 * MiB )) $(( 5 * lim + 4096 ))
	offloaded_copy "$NS1" $(( 8 * MiB + 512 )) $(( 100 * MiB + 1536 )) $(( 3 * MiB ))
}

@test "an offloaded copy moves no data through the host interface" {
	local d=$BATS_TEST_TMPDIR len=$(( 4 * MiB )) rd wr
	random_file "$d/src" "$len"
	dev_write "$NS1" $(( 30 * MiB )) "$d/src"
	rd=$(disk_stat "$NS1" 3)
	wr=$(disk_stat "$NS1" 7)
	run "$COPY_RANGE" -d "$NS1" $(( 30 * MiB )) "$NS1" $(( 200 * MiB )) "$len"
	echo "$output"
	[ "$output" = "copied=$len" ]
	echo "sectors read $(( $(disk_stat "$NS1" 3) - rd )), written $(( $(disk_stat "$NS1" 7) - wr ))"
	[ "$(disk_stat "$NS1" 3)" = "$rd" ]
	[ "$(disk_stat "$NS1" 7)" = "$wr" ]
	dev_expect "$NS1" $(( 200 * MiB )) "$d/src"
}

@test "copy offload on 4 KiB logical blocks (NSID 3)" {
	need_ns "$NS3" 3 256M,bs=4096
	[ "$(queue_attr "$NS3" logical_block_size)" = 4096 ]
	offloaded_copy "$NS3" $(( 1 * MiB )) $(( 32 * MiB )) 4096
	offloaded_copy "$NS3" $(( 2 * MiB )) $(( 40 * MiB )) "$(limit "$NS3")"
	offloaded_copy "$NS3" $(( 4 * MiB )) $(( 64 * MiB )) $(( 3 * $(limit "$NS3") + 8192 ))
}

@test "4 KiB blocks: a copy not aligned to them is refused" {
	need_ns "$NS3" 3 256M,bs=4096
	run "$COPY_RANGE" -d "$NS3" 512 "$NS3" $(( 8 * MiB )) 4096
	echo "$output"
	[ "$status" -ne 0 ]
	[[ $output == *errno=EINVAL* ]]
}

@test "copy_file_range to a buffered destination is still exact" {
	copy_and_verify -x --direct-src "$NS1" $(( 12 * MiB )) "$NS1" $(( 120 * MiB )) $(( 1 * MiB ))
}

@test "xfs_io -d copy_range on the namespace copies exactly" {
	local d=$BATS_TEST_TMPDIR
	random_file "$d/src" $(( 2 * MiB ))
	random_file "$d/guard" $(( 64 * KiB ))
	dev_write "$NS1" $(( 14 * MiB )) "$d/src"
	dev_write "$NS1" $(( 150 * MiB - 64 * KiB )) "$d/guard"
	dev_write "$NS1" $(( 152 * MiB )) "$d/guard"
	run xfs_io -d -c "copy_range -s $(( 14 * MiB )) -d $(( 150 * MiB )) -l $(( 2 * MiB )) $NS1" "$NS1"
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	dev_expect "$NS1" $(( 150 * MiB )) "$d/src"
	dev_expect "$NS1" $(( 150 * MiB - 64 * KiB )) "$d/guard"
	dev_expect "$NS1" $(( 152 * MiB )) "$d/guard"
}

@test "copy_stat: a copy between two volumes of the namespace counts on the destination volume and on the namespace" {
	local lim len mib=2048 ns
	lim=$(limit "$NS1")
	[ "$lim" -gt 0 ] || skip "NSID 1 does not copy"
	len=$(( 4 * lim ))
	ns=$(disk_name "$NS1")
	# Two "logical volumes" of the namespace, as LVM would map them.
	dmsetup create dmt-lv1 --table "0 $(( 64 * mib )) linear $NS1 $(( 300 * mib ))"
	dmsetup create dmt-lv2 --table "0 $(( 64 * mib )) linear $NS1 $(( 400 * mib ))"
	local lv1 nsb
	lv1=$(disk_attr /dev/mapper/dmt-lv1 copy_stat)
	nsb=$(copy_stat "$NS1" device_bytes)
	copy_mark /dev/mapper/dmt-lv2
	copy_and_verify /dev/mapper/dmt-lv1 $MiB /dev/mapper/dmt-lv2 $(( 8 * MiB )) $len
	echo "dmt-lv2: $(disk_attr /dev/mapper/dmt-lv2 copy_stat); $ns: $(disk_attr "$NS1" copy_stat)"
	[ "$(copy_stat_since offloaded_bytes)" = $len ]
	[ "$(copy_stat_since device_bytes)" = $len ]
	[ "$(copy_stat "$NS1" device_bytes)" = $(( nsb + len )) ]
	# Counted where it writes: the source volume saw no copy into it.
	[ "$(disk_attr /dev/mapper/dmt-lv1 copy_stat)" = "$lv1" ]
}

@test "copy_max_bytes=0 on the namespace: emulated, exact, nothing offloaded" {
	echo 0 >"/sys/block/$(disk_name "$NS1")/queue/copy_max_bytes"
	copy_mark "$NS1"
	copy_and_verify "$NS1" $(( 16 * MiB )) "$NS1" $(( 160 * MiB )) $(( 1 * MiB ))
	[ "$(copy_stat_since offloaded_bytes)" = 0 ]
	[ "$(copy_stat_since emulated_bytes)" = $(( 1 * MiB )) ]
}

@test "a copy between two namespaces of one controller is emulated and exact" {
	need_ns "$NS2" 2 256M,mssrl=64,mcl=96,msrc=1
	copy_mark "$NS2"
	copy_and_verify "$NS1" $(( 20 * MiB )) "$NS2" $(( 8 * MiB )) $(( 1 * MiB ))
	[ "$(copy_stat_since offloaded_bytes)" = 0 ]
	[ "$(copy_stat_since emulated_bytes)" = $(( 1 * MiB )) ]
}

@test "copy_max_bytes takes whole blocks and is capped by the hardware limit" {
	local q
	q=/sys/block/$(disk_name "$NS1")/queue
	run sh -c "echo 1000 >$q/copy_max_bytes"
	[ "$status" -ne 0 ]
	[ "$(cat "$q/copy_max_bytes")" = "$(limit "$NS1")" ]
	echo $(( 2 * $(limit "$NS1") )) >"$q/copy_max_bytes"
	[ "$(cat "$q/copy_max_bytes")" = "$(limit "$NS1")" ]
	echo 4096 >"$q/copy_max_bytes"
	[ "$(cat "$q/copy_max_bytes")" = 4096 ]
	offloaded_copy "$NS1" $(( 40 * MiB )) $(( 210 * MiB )) $(( 64 * KiB ))
}

# ------------------------------------------------ nvme copy (nvme-cli) ---

@test "nvme copy with two ranges (MSRC+1) to NSID 2 concatenates them" {
	need_ns "$NS2" 2 256M,mssrl=64,mcl=96,msrc=1
	local d=$BATS_TEST_TMPDIR
	nvme_fill "$NS2" 100 40 "$d/a"
	nvme_fill "$NS2" 300 50 "$d/b"
	run nvme copy "$NS2" --sdlba=9000 --slbs=100,300 --blocks=39,49
	echo "$output"
	[ "$status" -eq 0 ]
	cat "$d/a" "$d/b" >"$d/ab"
	dev_expect "$NS2" $(( 9000 * 512 )) "$d/ab"
}

@test "nvme copy with more ranges than MSRC+1 fails and changes nothing" {
	need_ns "$NS2" 2 256M,mssrl=64,mcl=96,msrc=1
	nvme_copy_refused "$NS2" 0x183 10000 --slbs=100,200,300 --blocks=1,1,1
}

# QEMU 7.2 checks the number of ranges up front (Command Size Limit) but
# fails the other bad descriptors while it copies, all as Internal Error
# (0x6); what matters here is that nothing was written.
@test "nvme copy of a range longer than MSSRL fails and changes nothing" {
	need_ns "$NS2" 2 256M,mssrl=64,mcl=96,msrc=1
	nvme_copy_refused "$NS2" 0x6 11000 --slbs=100 --blocks=64
}

@test "nvme copy of a source past the end fails and changes nothing" {
	local nsze
	nsze=$(( $(blockdev --getsize64 "$NS1") / 512 ))
	nvme_copy_refused "$NS1" 0x6 20000 --slbs=$(( nsze - 4 )) --blocks=7
}

@test "nvme copy to a destination past the end fails" {
	local nsze
	nsze=$(( $(blockdev --getsize64 "$NS1") / 512 ))
	run nvme copy "$NS1" --sdlba=$(( nsze - 2 )) --slbs=100 --blocks=7
	echo "$output"
	[ "$status" -ne 0 ]
	[ "$(nvme_status_code "$output")" = 0x6 ]
}

# ------------------------------------------------------ format changes ---

# format NS LBAF: nvme format NS to LBA format LBAF and wait until the
# kernel has rescanned it with that block size.
format() {
	local ns=$1 lbaf=$2 bs=$3 i
	nvme format "$ns" --lbaf="$lbaf" --force >/dev/null
	for (( i = 0; i < 100; i++ )); do
		[ "$(queue_attr "$ns" logical_block_size)" = "$bs" ] && return 0
		sleep 0.1
	done
	fail "$ns: block size $(queue_attr "$ns" logical_block_size) after format, not $bs"
}

# Last in this file: formatting erases NSID 3. QEMU's LBA formats are
# 0: 512, 1: 512+8 metadata, 4: 4096.
@test "limits follow nvme format: 512 B blocks, metadata (no offload), back to 4 KiB" {
	need_ns "$NS3" 3 256M,bs=4096
	format "$NS3" 0 512
	[ "$(queue_attr "$NS3" copy_max_hw_bytes)" = $(( $(nvme_copy_lbas "$NS3") * 512 )) ]
	offloaded_copy "$NS3" $(( 1 * MiB )) $(( 32 * MiB )) $(( 128 * KiB + 512 ))

	format "$NS3" 1 512
	echo "with 8 bytes of metadata: copy_max_hw_bytes=$(queue_attr "$NS3" copy_max_hw_bytes)"
	[ "$(queue_attr "$NS3" copy_max_hw_bytes)" = 0 ]
	# Without block integrity support in the kernel such a namespace
	# takes no I/O at all (size 0); with it, copies are emulated.
	if [ "$(blockdev --getsize64 "$NS3")" -gt 0 ]; then
		copy_mark "$NS3"
		copy_and_verify "$NS3" $(( 1 * MiB )) "$NS3" $(( 32 * MiB )) $(( 64 * KiB ))
		[ "$(copy_stat_since offloaded_bytes)" = 0 ]
	fi

	format "$NS3" 4 4096
	[ "$(queue_attr "$NS3" copy_max_hw_bytes)" = $(( $(nvme_copy_lbas "$NS3") * 4096 )) ]
	offloaded_copy "$NS3" $(( 1 * MiB )) $(( 32 * MiB )) $(( 3 * $(limit "$NS3") ))
}
