#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# Copies on a zoned null_blk: offloaded between conventional zones, in
# chunks that never cross a zone; the block layer refuses an offloaded copy
# into a sequential zone (nothing would move its write pointer), so the
# copy is emulated, in order, at the write pointer; a copy away from the
# write pointer fails and writes nothing.
#
# Layout (zone_size=16 MiB, 4 conventional zones): zones 0-3 (0-64 MiB)
# conventional, zones 4-63 sequential write required.

load ../lib/common

MiB=1048576
ZONE=$(( 16 * MiB ))

setup() {
	guest_setup
	[ -x "$COPY_RANGE" ] || fail "$COPY_RANGE not built (make -C tests/helpers)"
	nullb_load zoned=1 zone_size=16 zone_nr_conv=4 copy_max_bytes=$MiB
	[ "$(queue_attr /dev/nullb0 zoned)" = host-managed ]
	D=$BATS_TEST_TMPDIR
	copy_mark
}

teardown() {
	nullb_unload || true
	guest_teardown
}

# write_pointer ZONE_NO: bytes written into the zone, from blkzone(8).
write_pointer() {
	local sector=$(( $1 * ZONE / 512 )) wp
	wp=$(blkzone report -o $sector -c 1 /dev/nullb0 | sed -n 's/.*wptr \(0x[0-9a-f]*\).*/\1/p')
	[ -n "$wp" ] || { echo "no write pointer for zone $1" >&2; return 1; }
	echo $(( wp * 512 ))
}

# unwritten_at OFFSET LEN: the device reads there what it reads past the
# write pointer of a zone nobody wrote (null_blk fills such reads with a
# pattern).
unwritten_at() {
	dev_read /dev/nullb0 $(( 60 * ZONE )) "$2" "$D/unwritten"
	dev_expect /dev/nullb0 "$1" "$D/unwritten"
}

@test "zoned: a copy between conventional zones is offloaded" {
	copy_and_verify /dev/nullb0 $(( 4 * MiB )) /dev/nullb0 $(( 40 * MiB )) $(( 3 * MiB + 4096 ))
	[ "$(copy_stat_since offloaded_bytes)" = $(( 3 * MiB + 4096 )) ]
	[ "$(copy_stat_since emulated_bytes)" = 0 ]
}

@test "zoned: a copy across conventional zone boundaries is offloaded in pieces inside each zone" {
	# Source and destination both cross a zone boundary, at different
	# offsets into their zones: chunks end at every boundary of either.
	local src=$(( ZONE - 3 * MiB / 2 )) dst=$(( 3 * ZONE - MiB / 2 ))
	copy_and_verify /dev/nullb0 $src /dev/nullb0 $dst $(( 3 * MiB ))
	[ "$(copy_stat_since offloaded_bytes)" = $(( 3 * MiB )) ]
	[ "$(copy_stat_since emulated_bytes)" = 0 ]
}

@test "zoned: a copy into a sequential zone is emulated in order at the write pointer" {
	local len=$(( 5 * MiB + 4096 )) dst=$(( 5 * ZONE ))
	random_file "$D/src" $len
	dev_write /dev/nullb0 $(( 2 * MiB )) "$D/src"
	[ "$(write_pointer 5)" = 0 ]

	run "$COPY_RANGE" -d /dev/nullb0 $(( 2 * MiB )) /dev/nullb0 $dst $len
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = "copied=$len" ]
	dev_expect /dev/nullb0 $dst "$D/src"
	[ "$(write_pointer 5)" = $len ]
	[ "$(copy_stat_since offloaded_bytes)" = 0 ]
	[ "$(copy_stat_since emulated_bytes)" = $len ]
	# The neighbouring zones and the rest of this one are untouched.
	[ "$(write_pointer 4)" = 0 ]
	[ "$(write_pointer 6)" = 0 ]
	unwritten_at $(( dst + len )) $MiB

	# A second copy goes on from the new write pointer.
	run "$COPY_RANGE" -d /dev/nullb0 $(( 2 * MiB )) /dev/nullb0 $(( dst + len )) $MiB
	[ "$output" = "copied=$MiB" ]
	head -c $MiB "$D/src" >"$D/head"
	dev_expect /dev/nullb0 $(( dst + len )) "$D/head"
	dev_expect /dev/nullb0 $dst "$D/src"
	[ "$(write_pointer 5)" = $(( len + MiB )) ]
}

@test "zoned: a copy into a sequential zone away from its write pointer fails, writes nothing" {
	local dst=$(( 6 * ZONE + MiB ))
	random_file "$D/src" $(( 2 * MiB ))
	dev_write /dev/nullb0 $(( 2 * MiB )) "$D/src"

	run "$COPY_RANGE" -d /dev/nullb0 $(( 2 * MiB )) /dev/nullb0 $dst $(( 2 * MiB ))
	echo "$output"
	[ "$status" -eq 1 ]
	[ "${lines[0]}" = "copied=0" ]
	[ "${lines[1]}" = "errno=EIO" ]
	[ "$(write_pointer 6)" = 0 ]
	[ "$(copy_stat_since failed_copies)" = 1 ]
	[ "$(copy_stat_since emulated_bytes)" = 0 ]
	# The source is intact.
	dev_expect /dev/nullb0 $(( 2 * MiB )) "$D/src"
}

@test "zoned: a copy from a conventional into a sequential zone with offload off" {
	echo 0 >/sys/block/nullb0/queue/copy_max_bytes
	local len=$(( 2 * MiB )) dst=$(( 7 * ZONE ))
	random_file "$D/src" $len
	dev_write /dev/nullb0 $(( 8 * MiB )) "$D/src"
	run "$COPY_RANGE" -d /dev/nullb0 $(( 8 * MiB )) /dev/nullb0 $dst $len
	[ "$output" = "copied=$len" ]
	dev_expect /dev/nullb0 $dst "$D/src"
	[ "$(write_pointer 7)" = $len ]
	[ "$(copy_stat_since emulated_bytes)" = $len ]
}
