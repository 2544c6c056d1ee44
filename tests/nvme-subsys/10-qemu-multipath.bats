#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# The host driver's Copy offload through native NVMe multipath, against
# QEMU's NVMe controller in an NVMe subsystem (tests/vm/run --nvme-subsys),
# whose namespaces are shared: NSID 1 (1G, QEMU's limits mssrl=128 mcl=128
# msrc=127) and NSID 2 (256M, zoned, with the same Copy limits in Identify).
# tests/check boots a guest of its own for this suite (vm-devices).

load ../lib/common
load ../lib/nvme

MiB=$(( 1024 * 1024 ))

setup() {
	guest_setup
	[ -e /sys/block/nvme0n1 ] || skip "no QEMU NVMe controller"
	NS1=/dev/$(qemu_ns 1)
	NS2=/dev/$(qemu_ns 2 2>/dev/null) || NS2=
	PATH1=$(nvme_paths "$(disk_name "$NS1")" | head -n 1)
	[ -n "$PATH1" ] || skip "namespace 1 is no multipath node (tests/vm/run --nvme-subsys)"
}

teardown() {
	guest_teardown
}

# format LBAF BS: nvme format NSID 1 through its node to LBA format LBAF
# and wait until the kernel has rescanned it with block size BS.
format() {
	local i
	nvme format "$NS1" --lbaf="$1" --force >/dev/null
	for (( i = 0; i < 100; i++ )); do
		[ "$(queue_attr "$NS1" logical_block_size)" = "$2" ] && return 0
		sleep 0.1
	done
	fail "$NS1: block size $(queue_attr "$NS1" logical_block_size) after format, not $2"
}

# wait_limit DEV BYTES: copy_max_hw_bytes of DEV becomes BYTES (rescans
# are asynchronous).
wait_limit() {
	local i
	for (( i = 0; i < 100; i++ )); do
		[ "$(queue_attr "$1" copy_max_hw_bytes)" = "$2" ] && return 0
		sleep 0.1
	done
	fail "$1: copy_max_hw_bytes $(queue_attr "$1" copy_max_hw_bytes), not $2"
}

# offloaded_copy SRC DST LEN: copy_and_verify on NSID 1, offloaded whole:
# the node's copy_stat grows by LEN, as copied by the device, and
# emulated nothing; the path disk, which executed the copies, counts them
# as copied by the device too.
offloaded_copy() {
	local path_was
	path_was=$(disk_attr "$PATH1" copy_stat)
	copy_mark "$NS1"
	copy_and_verify "$NS1" "$1" "$NS1" "$2" "$3"
	[ "$(copy_stat_since offloaded_bytes)" = "$3" ] ||
		fail "offloaded $(copy_stat_since offloaded_bytes) of $3 bytes"
	[ "$(copy_stat_since device_bytes)" = "$3" ]
	[ "$(copy_stat_since emulated_bytes)" = 0 ]
	COPY_MARK_DEV=$PATH1 COPY_MARK=$path_was
	echo "$PATH1: device_bytes +$(copy_stat_since device_bytes)"
	[ "$(copy_stat_since device_bytes)" = "$3" ]
	[ "$(copy_stat_since offloaded_bytes)" = 0 ]
}

@test "a shared namespace: a multipath node whose copy limit is its path's" {
	echo "$NS1: path $PATH1, copy_max_hw_bytes $(queue_attr "$NS1" copy_max_hw_bytes)"
	[ "$(queue_attr "$NS1" copy_max_hw_bytes)" = $(( 128 * 512 )) ]
	[ "$(queue_attr "$PATH1" copy_max_hw_bytes)" = $(( 128 * 512 )) ]
	offloaded_copy $(( 1 * MiB )) $(( 32 * MiB )) $(( 3 * 128 * 512 ))
}

# Formatting erases NSID 1. QEMU's LBA formats are 0: 512, 1: 512+8
# metadata, 4: 4096.
@test "the node's copy limit follows nvme format: to metadata (none) and back, then to 4 KiB" {
	format 1 512
	wait_limit "$NS1" 0
	format 0 512
	# the old node limit stacked with the path's would stay 0 for good
	wait_limit "$NS1" $(( 128 * 512 ))
	offloaded_copy $(( 1 * MiB )) $(( 32 * MiB )) $(( 128 * 512 + 512 ))
	format 4 4096
	# larger than at 512 bytes: a minimum with the old one would keep 64K
	wait_limit "$NS1" $(( 128 * 4096 ))
	offloaded_copy $(( 1 * MiB )) $(( 32 * MiB )) $(( 3 * 128 * 4096 ))
	format 0 512
	wait_limit "$NS1" $(( 128 * 512 ))
}

@test "a zoned namespace has no copy limit, although Identify gives MSSRL and MCL" {
	[ -b "$NS2" ] || skip "needs QEMU namespace 2 (--nvme 256M,zoned)"
	[ "$(cat "/sys/block/$(disk_name "$NS2")/queue/zoned")" = host-managed ]
	echo "$NS2: mssrl=$(id_field id-ns "$NS2" mssrl) mcl=$(id_field id-ns "$NS2" mcl)"
	[ "$(id_field id-ns "$NS2" mssrl)" -gt 0 ]
	[ "$(queue_attr "$NS2" copy_max_hw_bytes)" = 0 ]
}
