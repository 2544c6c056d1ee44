#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# Copies near the 32-bit limits: a copy bio's bi_size is 32 bits, so the
# copy limits are capped below 4 GiB, and a copy longer than that arrives
# whole; one copy_file_range() call copies at most MAX_RW_COUNT bytes.
#
# null_blk allocates memory only for blocks written, and a copy of blocks
# never written discards the destination instead of filling it, so the
# 12 GiB device needs memory only for the patterns written here.

load ../lib/common

MiB=1048576
GiB=$(( 1024 * MiB ))
# A driver limit above 4 GiB: 4 GiB + 1 MiB
BIG=4296015872
# What one bio can carry, in whole 4 KiB blocks: 4 GiB - 4 KiB
CAP=4294963200
# INT_MAX rounded down to a page, as for read(2) and write(2)
MAX_RW_COUNT=2147479552

setup() {
	guest_setup
	[ -x "$COPY_RANGE" ] || fail "$COPY_RANGE not built (make -C tests/helpers)"
	D=$BATS_TEST_TMPDIR
}

teardown() {
	nullb_unload || true
	guest_teardown
}

@test "copy limits above 4 GiB are capped to what one bio holds" {
	nullb_load bs=4096 gb=12 copy_max_bytes=$BIG
	[ "$(queue_attr /dev/nullb0 copy_max_hw_bytes)" = $CAP ]
	[ "$(queue_attr /dev/nullb0 copy_max_bytes)" = $CAP ]
	# sysfs takes at most UINT_MAX, and whole blocks only: both refused,
	# nothing changed.
	run sh -c "echo $(( 8 * GiB )) >/sys/block/nullb0/queue/copy_max_bytes"
	[ "$status" -ne 0 ]
	run sh -c "echo 4294967295 >/sys/block/nullb0/queue/copy_max_bytes"
	[ "$status" -ne 0 ]
	[ "$(queue_attr /dev/nullb0 copy_max_bytes)" = $CAP ]
	echo $(( 2 * GiB )) >/sys/block/nullb0/queue/copy_max_bytes
	[ "$(queue_attr /dev/nullb0 copy_max_bytes)" = $(( 2 * GiB )) ]
	echo $CAP >/sys/block/nullb0/queue/copy_max_bytes
	[ "$(queue_attr /dev/nullb0 copy_max_bytes)" = $CAP ]
}

@test "a copy of 4 GiB + 5 MiB offloads every byte, the tail included" {
	nullb_load bs=4096 gb=12 copy_max_bytes=$BIG
	local src=$(( 64 * MiB )) dst=$(( 6 * GiB )) len=$(( BIG + 4 * MiB )) guard=65536
	# Patterns at the head, across the 4 GiB point and at the tail of the
	# source; guards on both sides of the destination.
	random_file "$D/head" $MiB
	random_file "$D/mid" $MiB
	random_file "$D/tail" $MiB
	random_file "$D/before" $guard
	random_file "$D/after" $guard
	dev_write /dev/nullb0 $src "$D/head"
	dev_write /dev/nullb0 $(( src + 4 * GiB - MiB / 2 )) "$D/mid"
	dev_write /dev/nullb0 $(( src + len - MiB )) "$D/tail"
	dev_write /dev/nullb0 $(( dst - guard )) "$D/before"
	dev_write /dev/nullb0 $(( dst + len )) "$D/after"
	copy_mark

	run "$COPY_RANGE" -d --calls /dev/nullb0 $src /dev/nullb0 $dst $len
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "copied=$len" ]
	# At most MAX_RW_COUNT a call: three calls.
	[ "${lines[1]}" = "calls=3" ]
	[ "$(copy_stat_since offloaded_bytes)" = $len ]
	[ "$(copy_stat_since emulated_bytes)" = 0 ]

	dev_expect /dev/nullb0 $dst "$D/head"
	dev_expect /dev/nullb0 $(( dst + 4 * GiB - MiB / 2 )) "$D/mid"
	dev_expect /dev/nullb0 $(( dst + len - MiB )) "$D/tail"
	dev_expect /dev/nullb0 $(( dst - guard )) "$D/before"
	dev_expect /dev/nullb0 $(( dst + len )) "$D/after"
	# What the source never had reads as zeroes at the destination.
	head -c $MiB /dev/zero >"$D/zero"
	dev_expect /dev/nullb0 $(( dst + 2 * GiB )) "$D/zero"
}

@test "one copy_file_range() call copies at most MAX_RW_COUNT bytes" {
	nullb_load bs=4096 gb=12 copy_max_bytes=$BIG
	copy_mark
	run "$COPY_RANGE" -d --once /dev/nullb0 0 /dev/nullb0 $(( 4 * GiB )) $(( 3 * GiB ))
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = "copied=$MAX_RW_COUNT" ]
	[ "$(copy_stat_since offloaded_bytes)" = $MAX_RW_COUNT ]
}
