#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# copy_file_range() between block devices: offloaded on null_blk, emulated
# with offload off and between devices, with every byte checked. The
# sources are kept more than 64 KiB away from the destinations, whose
# surroundings copy_and_verify checks.

load ../lib/common

MiB=1048576

setup() {
	guest_setup
	[ -x "$COPY_RANGE" ] || fail "$COPY_RANGE not built (make -C tests/helpers)"
}

teardown() {
	nullb_unload || true
	guest_teardown
}

@test "offload: 512 B, 4 KiB, 1 MiB, exactly copy_max_bytes, one sector more" {
	nullb_load copy_max_bytes=$MiB
	local len total=0
	copy_mark
	for len in 512 4096 $MiB $MiB $(( MiB + 512 )); do
		copy_and_verify /dev/nullb0 $(( 8 * MiB )) /dev/nullb0 $(( 64 * MiB )) $len
		total=$(( total + len ))
	done
	[ "$(copy_stat_since offloaded_bytes)" = $total ]
	[ "$(copy_stat_since emulated_bytes)" = 0 ]
}

@test "offload: one call of 64 MiB (256 MiB with DMCOPY_LONG=1), 64 chunks or more" {
	nullb_load copy_max_bytes=$MiB gb=1
	local len
	len=$(( $(long_or 64 256) * MiB ))
	copy_mark
	copy_and_verify /dev/nullb0 $(( 1 * MiB )) /dev/nullb0 $(( 512 * MiB )) $len
	[ "$(copy_stat_since offloaded_bytes)" = $len ]
	[ "$(copy_stat_since offloaded_copies)" = 1 ]
}

@test "offload: source after the destination" {
	nullb_load copy_max_bytes=$MiB
	copy_and_verify /dev/nullb0 $(( 100 * MiB )) /dev/nullb0 $(( 10 * MiB )) $(( 3 * MiB ))
}

@test "offload on a 4 KiB block device" {
	nullb_load copy_max_bytes=$MiB bs=4096
	copy_mark
	copy_and_verify /dev/nullb0 $(( 4 * MiB )) /dev/nullb0 $(( 40 * MiB )) $(( 2 * MiB + 4096 ))
	[ "$(copy_stat_since offloaded_bytes)" = $(( 2 * MiB + 4096 )) ]
}

@test "offload between partitions, offsets relative to each" {
	nullb_load copy_max_bytes=$MiB
	printf 'label: gpt\nstart=2048, size=100MiB\nsize=100MiB\n' | sfdisk -q /dev/nullb0
	[ -b /dev/nullb0p1 ] && [ -b /dev/nullb0p2 ]
	copy_mark
	copy_and_verify /dev/nullb0p1 $(( 5 * MiB )) /dev/nullb0p2 $(( 7 * MiB )) $(( 2 * MiB ))
	[ "$(copy_stat_since offloaded_bytes)" = $(( 2 * MiB )) ]
	# Seen from the whole disk: p2 starts 1 MiB + 100 MiB in.
	dev_expect /dev/nullb0 $(( 101 * MiB + 7 * MiB )) "$BATS_TEST_TMPDIR/src"
}

@test "offload with null_blk's write cache, and with fua=1 (copies carry no FUA)" {
	nullb_load copy_max_bytes=$MiB cache_size=8
	copy_mark
	copy_and_verify /dev/nullb0 $(( 2 * MiB )) /dev/nullb0 $(( 40 * MiB )) $(( 3 * MiB ))
	[ "$(copy_stat_since offloaded_bytes)" = $(( 3 * MiB )) ]
	# More than the 8 MiB cache: copies go through eviction.
	copy_and_verify /dev/nullb0 $(( 100 * MiB )) /dev/nullb0 $(( 200 * MiB )) $(( 20 * MiB ))
	sync /dev/nullb0
	dev_expect /dev/nullb0 $(( 200 * MiB )) "$BATS_TEST_TMPDIR/src"

	nullb_load copy_max_bytes=$MiB cache_size=8 fua=1
	copy_and_verify /dev/nullb0 $(( 2 * MiB )) /dev/nullb0 $(( 40 * MiB )) $(( 3 * MiB ))
}

@test "null_blk without memory backing completes copies without data" {
	nullb_load copy_max_bytes=$MiB memory_backed=0
	copy_mark
	run "$COPY_RANGE" -d /dev/nullb0 $(( 2 * MiB )) /dev/nullb0 $(( 40 * MiB )) $(( 3 * MiB ))
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = "copied=$(( 3 * MiB ))" ]
	[ "$(copy_stat_since offloaded_bytes)" = $(( 3 * MiB )) ]
}

@test "offload lowered to 64 KiB splits the copy and still offloads it" {
	nullb_load copy_max_bytes=$MiB
	echo 65536 >/sys/block/nullb0/queue/copy_max_bytes
	copy_mark
	copy_and_verify /dev/nullb0 $(( 2 * MiB )) /dev/nullb0 $(( 20 * MiB )) $(( MiB + 65536 + 512 ))
	[ "$(copy_stat_since offloaded_bytes)" = $(( MiB + 65536 + 512 )) ]
}

@test "offload off (copy_max_bytes 0): the same copies are emulated" {
	nullb_load copy_max_bytes=$MiB
	echo 0 >/sys/block/nullb0/queue/copy_max_bytes
	local len total=0
	copy_mark
	for len in 512 4096 $MiB $(( MiB + 512 )) $(( 5 * MiB + 4096 )); do
		copy_and_verify /dev/nullb0 $(( 8 * MiB )) /dev/nullb0 $(( 64 * MiB )) $len
		total=$(( total + len ))
	done
	[ "$(copy_stat_since offloaded_bytes)" = 0 ]
	[ "$(copy_stat_since emulated_bytes)" = $total ]
}

@test "a device without copy offload: emulated, correct" {
	copy_and_verify /dev/vda $(( 1 * MiB )) /dev/vda $(( 32 * MiB )) $(( 3 * MiB + 512 ))
}

@test "between two devices: emulated, correct" {
	nullb_load copy_max_bytes=$MiB
	copy_mark
	copy_and_verify /dev/nullb0 $(( 4 * MiB )) /dev/vda $(( 16 * MiB )) $(( 2 * MiB + 512 ))
	copy_and_verify /dev/vda $(( 40 * MiB )) /dev/nullb0 $(( 30 * MiB )) $(( 2 * MiB ))
	[ "$(copy_stat_since offloaded_bytes)" = 0 ]
	[ "$(copy_stat_since emulated_bytes)" = $(( 2 * MiB )) ]
}

@test "without O_DIRECT on both sides the page cache copies, correctly" {
	nullb_load copy_max_bytes=$MiB
	copy_mark
	copy_and_verify -x --once /dev/nullb0 $(( 3 * MiB )) /dev/nullb0 $(( 9 * MiB )) $(( MiB + 512 ))
	copy_and_verify -x --direct-src /dev/nullb0 $(( 3 * MiB )) /dev/nullb0 $(( 19 * MiB )) $(( MiB + 512 ))
	# Unaligned is fine through the page cache.
	run "$COPY_RANGE" /dev/nullb0 $(( 3 * MiB + 1 )) /dev/nullb0 $(( 29 * MiB + 3 )) 100
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = "copied=100" ]
	[ "$(copy_stat_since offloaded_bytes)" = 0 ]
	[ "$(copy_stat_since emulated_bytes)" = 0 ]
}

@test "xfs_io -d copy_range: correct (source opened buffered, so not offloaded)" {
	# xfs_io opens the copy_range source itself, without O_DIRECT, and
	# the -f form of Debian 12's xfs_io 6.1 passes the wrong descriptor,
	# so this copy takes the page-cache path.
	nullb_load copy_max_bytes=$MiB
	local d=$BATS_TEST_TMPDIR
	random_file "$d/src" $(( 2 * MiB ))
	dev_write /dev/nullb0 $(( 6 * MiB )) "$d/src"
	copy_mark
	run xfs_io -d -c "copy_range -s $(( 6 * MiB )) -d $(( 50 * MiB )) -l $(( 2 * MiB )) /dev/nullb0" /dev/nullb0
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	dev_expect /dev/nullb0 $(( 50 * MiB )) "$d/src"
	[ "$(copy_stat_since offloaded_bytes)" = 0 ]
}

@test "xfs_io copy_range without O_DIRECT copies through the page cache" {
	nullb_load copy_max_bytes=$MiB
	local d=$BATS_TEST_TMPDIR
	random_file "$d/src" $(( MiB ))
	dev_write /dev/nullb0 $(( 6 * MiB )) "$d/src"
	copy_mark
	run xfs_io -c "copy_range -s $(( 6 * MiB )) -d $(( 70 * MiB )) -l $MiB /dev/nullb0" /dev/nullb0
	echo "$output"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	sync
	echo 3 >/proc/sys/vm/drop_caches
	dev_expect /dev/nullb0 $(( 70 * MiB )) "$d/src"
	[ "$(copy_stat_since offloaded_bytes)" = 0 ]
}

@test "tracepoints show offloaded and emulated copies" {
	nullb_load copy_max_bytes=$MiB
	local t=/sys/kernel/tracing
	echo >$t/trace
	echo 1 >$t/events/block/block_copy_start/enable
	echo 1 >$t/events/block/block_copy_done/enable
	copy_and_verify /dev/nullb0 $(( 2 * MiB )) /dev/nullb0 $(( 20 * MiB )) $MiB
	echo 0 >/sys/block/nullb0/queue/copy_max_bytes
	copy_and_verify /dev/nullb0 $(( 2 * MiB )) /dev/nullb0 $(( 30 * MiB )) 4096
	echo 0 >$t/events/block/block_copy_start/enable
	echo 0 >$t/events/block/block_copy_done/enable
	run cat $t/trace
	echo "$output"
	[[ $output == *"block_copy_start: "*" 4096 -> "*" 40960 len 1048576 offload"* ]]
	[[ $output == *"block_copy_done: "*"len 1048576 copied 1048576 offloaded 1048576 emulated 0 error 0"* ]]
	[[ $output == *"block_copy_start: "*" 61440 len 4096 emulate"* ]]
	[[ $output == *"block_copy_done: "*"len 4096 copied 4096 offloaded 0 emulated 4096 error 0"* ]]
}

@test "copy_stat counts calls and bytes per way" {
	nullb_load copy_max_bytes=$MiB
	[ "$(cat /sys/block/nullb0/copy_stat)" = "0 0 0 0 0 0 0 0" ]
	copy_and_verify /dev/nullb0 $(( 2 * MiB )) /dev/nullb0 $(( 20 * MiB )) $(( 3 * MiB ))
	echo 0 >/sys/block/nullb0/queue/copy_max_bytes
	copy_and_verify /dev/nullb0 $(( 2 * MiB )) /dev/nullb0 $(( 30 * MiB )) 8192
	# One call offloaded in 3 copies of 1 MiB that the disk executed,
	# one emulated.
	[ "$(cat /sys/block/nullb0/copy_stat)" = "1 $(( 3 * MiB )) 1 8192 0 0 3 $(( 3 * MiB ))" ]
	# Not in the queue directory, which holds limits only.
	[ ! -e /sys/block/nullb0/queue/copy_stat ]
}
