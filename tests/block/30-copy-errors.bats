#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# copy_file_range() between block devices refuses bad requests with the
# documented errno and changes nothing it does not report as copied.

load ../lib/common

MiB=1048576

setup() {
	guest_setup
	[ -x "$COPY_RANGE" ] || fail "$COPY_RANGE not built (make -C tests/helpers)"
	nullb_load copy_max_bytes=$MiB gb=1
	D=$BATS_TEST_TMPDIR
	# Known contents in the whole area the tests aim at.
	random_file "$D/area" $(( 4 * MiB ))
	dev_write /dev/nullb0 $(( 16 * MiB )) "$D/area"
	blockdev --setrw /dev/nullb0
}

teardown() {
	blockdev --setrw /dev/nullb0 2>/dev/null || true
	nullb_unload || true
	guest_teardown
}

# The area written in setup() is unchanged.
area_unchanged() {
	dev_expect /dev/nullb0 $(( 16 * MiB )) "$D/area"
}

# expect_error ERRNO [COPY-RANGE ARGS...]
expect_error() {
	local want=$1
	shift
	run "$COPY_RANGE" "$@"
	echo "copy-range $*: $output"
	[ "$status" -eq 1 ]
	[ "${lines[0]}" = "copied=0" ]
	[ "${lines[1]}" = "errno=$want" ]
}

@test "misaligned offsets or length with O_DIRECT: EINVAL" {
	expect_error EINVAL -d /dev/nullb0 $(( 16 * MiB + 100 )) /dev/nullb0 $(( 18 * MiB )) 4096
	expect_error EINVAL -d /dev/nullb0 $(( 16 * MiB )) /dev/nullb0 $(( 18 * MiB + 100 )) 4096
	expect_error EINVAL -d /dev/nullb0 $(( 16 * MiB )) /dev/nullb0 $(( 18 * MiB )) 4000
	area_unchanged
}

@test "overlapping ranges of one device: EINVAL, with and without O_DIRECT" {
	expect_error EINVAL -d /dev/nullb0 $(( 16 * MiB )) /dev/nullb0 $(( 16 * MiB + 4096 )) $MiB
	expect_error EINVAL -d /dev/nullb0 $(( 17 * MiB )) /dev/nullb0 $(( 16 * MiB )) $(( 2 * MiB ))
	expect_error EINVAL /dev/nullb0 $(( 16 * MiB )) /dev/nullb0 $(( 16 * MiB + 512 )) $MiB
	area_unchanged
}

@test "overlapping ranges through two partitions of one disk: EINVAL" {
	printf 'label: gpt\nstart=2048, size=100MiB\n' | sfdisk -q /dev/nullb0
	# p1 starts at 1 MiB: its offset 15 MiB is the disk's 16 MiB.
	expect_error EINVAL -d /dev/nullb0p1 $(( 15 * MiB )) /dev/nullb0 $(( 16 * MiB + 4096 )) $MiB
}

@test "zero length copies nothing" {
	run "$COPY_RANGE" -d /dev/nullb0 $(( 16 * MiB )) /dev/nullb0 $(( 18 * MiB )) 0
	[ "$status" -eq 0 ]
	[ "$output" = "copied=0" ]
	area_unchanged
}

@test "source past the end: short copy; destination at the end: ENOSPC" {
	local size
	size=$(blockdev --getsize64 /dev/nullb0)
	local d=$BATS_TEST_TMPDIR
	random_file "$d/tail" 8192
	dev_write /dev/nullb0 $(( size - 8192 )) "$d/tail"

	# Only 8 KiB of source are left: that is what gets copied, once.
	run "$COPY_RANGE" -d --once /dev/nullb0 $(( size - 8192 )) /dev/nullb0 $(( 16 * MiB )) $MiB
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = "copied=8192" ]
	dev_expect /dev/nullb0 $(( 16 * MiB )) "$d/tail"
	tail -c +8193 "$D/area" >"$d/rest"
	dev_expect /dev/nullb0 $(( 16 * MiB + 8192 )) "$d/rest"

	# Source at the end: nothing to copy.
	run "$COPY_RANGE" -d /dev/nullb0 "$size" /dev/nullb0 $(( 16 * MiB )) 4096
	[ "$output" = "copied=0" ]

	# Destination that runs over the end: shortened.
	run "$COPY_RANGE" -d --once /dev/nullb0 $(( 16 * MiB )) /dev/nullb0 $(( size - 4096 )) $MiB
	echo "$output"
	[ "$output" = "copied=4096" ]
	# 16 MiB now holds the tail copied there above.
	head -c 4096 "$d/tail" >"$d/head"
	dev_expect /dev/nullb0 $(( size - 4096 )) "$d/head"

	expect_error ENOSPC -d /dev/nullb0 $(( 16 * MiB )) /dev/nullb0 "$size" 4096
}

@test "destination opened read-only: EBADF" {
	expect_error EBADF -d --dst-rdonly /dev/nullb0 $(( 16 * MiB )) /dev/nullb0 $(( 18 * MiB )) $MiB
	area_unchanged
}

@test "read-only destination device: EPERM, with and without O_DIRECT" {
	blockdev --setro /dev/nullb0
	expect_error EPERM -d /dev/nullb0 $(( 16 * MiB )) /dev/nullb0 $(( 18 * MiB )) $MiB
	expect_error EPERM /dev/nullb0 $(( 16 * MiB )) /dev/nullb0 $(( 18 * MiB )) $MiB
	blockdev --setrw /dev/nullb0
	area_unchanged
}

@test "a block device and a regular file: EINVAL" {
	local f=$BATS_TEST_TMPDIR/file
	truncate -s 4M "$f"
	expect_error EINVAL /dev/nullb0 $(( 16 * MiB )) "$f" 0 $MiB
	expect_error EINVAL "$f" 0 /dev/nullb0 $(( 16 * MiB )) $MiB
	area_unchanged
}

@test "a failed copy is not counted as done" {
	[ "$(copy_stat /dev/nullb0 failed_copies)" = 0 ]
	expect_error EINVAL -d /dev/nullb0 $(( 16 * MiB + 100 )) /dev/nullb0 $(( 18 * MiB )) 4096
	[ "$(copy_stat /dev/nullb0 offloaded_copies)" = 0 ]
	[ "$(copy_stat /dev/nullb0 emulated_copies)" = 0 ]
}
