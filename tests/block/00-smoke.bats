#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# The guest runs the kernel this tree built, and its modules load.

load ../lib/common

setup() {
	guest_setup
}

teardown() {
	if lsmod | grep -q '^null_blk '; then
		rmmod null_blk || true
	fi
	guest_teardown
}

@test "guest runs the kernel built by 'make kernel'" {
	local want
	want=$(sed -n 's/^KERNEL_RELEASE=//p' "$DMCOPY_TOP/build/kernel.env")
	[ -n "$want" ]
	run uname -r
	[ "$status" -eq 0 ]
	[ "$output" = "$want" ]
	[[ $output == *-dmcopy ]]
}

@test "null_blk loads, moves data and unloads" {
	modprobe null_blk nr_devices=1 gb=1 memory_backed=1
	[ -b /dev/nullb0 ]
	random_file "$BATS_TEST_TMPDIR/pattern" 65536
	dev_write /dev/nullb0 1048576 "$BATS_TEST_TMPDIR/pattern"
	dev_expect /dev/nullb0 1048576 "$BATS_TEST_TMPDIR/pattern"
	rmmod null_blk
	[ ! -e /dev/nullb0 ]
}
