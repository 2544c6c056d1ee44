#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# The copy core's KUnit suite (block/blk-copy-test.c, kernel patch 0008):
# how the two halves of a copy meet, the checks on copy bios, and the
# asynchronous and synchronous blkdev_copy_offload() against memory-backed
# disks that refuse copies or fail reads on purpose. Loading the module runs it;
# debugfs keeps the KTAP results.

load ../lib/common

setup() {
	guest_setup
}

teardown() {
	lsmod | grep -q '^blk_copy_test ' && rmmod blk_copy_test
	guest_teardown
}

@test "the blk-copy KUnit suite passes" {
	[ -d /sys/kernel/debug/kunit ] ||
		skip "kernel without CONFIG_KUNIT_DEBUGFS"
	modinfo blk-copy-test >/dev/null ||
		fail "no blk-copy-test module: CONFIG_BLK_COPY_KUNIT_TEST is off"
	modprobe blk-copy-test
	local r=/sys/kernel/debug/kunit/blk-copy/results
	[ -r $r ] || fail "no KUnit results at $r"
	cat $r
	! grep -q "not ok" $r || false
	# Every case ran and passed (none skipped), then the suite.
	[ "$(grep -cE '^ +ok [0-9]+ blk_copy_[a-z_]+_test$' $r)" = 10 ]
	grep -qx "ok 1 blk-copy" $r
}
