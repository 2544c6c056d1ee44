#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# copy_file_range() between block devices behaves like a read and a
# write: O_APPEND, O_DSYNC and RLIMIT_FSIZE as for write(2), the page
# cache kept coherent, a fatal signal ends a long copy, and ranges at the
# edges (adjacent, partition end, 512 B offsets on 4 KiB blocks, devices
# of two block sizes) are handled exactly.

load ../lib/common

MiB=1048576

setup() {
	guest_setup
	[ -x "$COPY_RANGE" ] || fail "$COPY_RANGE not built (make -C tests/helpers)"
	D=$BATS_TEST_TMPDIR
}

teardown() {
	[ -n "${COPY_PID:-}" ] && kill -9 "$COPY_PID" 2>/dev/null
	nullb_unload || true
	guest_teardown
}

@test "O_APPEND destination: EBADF, nothing written" {
	nullb_load copy_max_bytes=$MiB
	random_file "$D/area" $(( 2 * MiB ))
	dev_write /dev/nullb0 $(( 16 * MiB )) "$D/area"
	run "$COPY_RANGE" -d --dst-append /dev/nullb0 0 /dev/nullb0 $(( 16 * MiB )) $MiB
	echo "$output"
	[ "$status" -eq 1 ]
	[ "$output" = "$(printf 'copied=0\nerrno=EBADF')" ]
	dev_expect /dev/nullb0 $(( 16 * MiB )) "$D/area"
}

@test "O_DSYNC destination: flushed after the copy, and only then" {
	# cache_size gives null_blk a volatile write cache, so flushes reach it.
	nullb_load copy_max_bytes=$MiB cache_size=64
	random_file "$D/src" $(( 3 * MiB ))
	dev_write /dev/nullb0 $(( 2 * MiB )) "$D/src"
	local flushes
	flushes=$(disk_stat /dev/nullb0 16)
	run "$COPY_RANGE" -d /dev/nullb0 $(( 2 * MiB )) /dev/nullb0 $(( 40 * MiB )) $(( 3 * MiB ))
	[ "$output" = "copied=$(( 3 * MiB ))" ]
	[ "$(disk_stat /dev/nullb0 16)" = "$flushes" ]

	copy_mark
	run "$COPY_RANGE" -d --dst-dsync /dev/nullb0 $(( 2 * MiB )) /dev/nullb0 $(( 80 * MiB )) $(( 3 * MiB ))
	[ "$output" = "copied=$(( 3 * MiB ))" ]
	[ "$(copy_stat_since offloaded_bytes)" = $(( 3 * MiB )) ]
	[ "$(disk_stat /dev/nullb0 16)" -gt "$flushes" ]

	# Emulated copies too.
	echo 0 >/sys/block/nullb0/queue/copy_max_bytes
	flushes=$(disk_stat /dev/nullb0 16)
	run "$COPY_RANGE" -d --dst-dsync /dev/nullb0 $(( 2 * MiB )) /dev/nullb0 $(( 120 * MiB )) $(( 3 * MiB ))
	[ "$output" = "copied=$(( 3 * MiB ))" ]
	[ "$(disk_stat /dev/nullb0 16)" -gt "$flushes" ]
	local off
	for off in 40 80 120; do
		dev_expect /dev/nullb0 $(( off * MiB )) "$D/src"
	done
}

@test "RLIMIT_FSIZE does not bound a copy, as it does not bound write(2) to a block device" {
	nullb_load copy_max_bytes=$MiB
	random_file "$D/src" $(( 2 * MiB ))
	dev_write /dev/nullb0 $(( 4 * MiB )) "$D/src"
	# The same limit, for a plain write first.
	run bash -c "ulimit -f 8; dd if=$D/src of=/dev/nullb0 bs=1M seek=20 oflag=direct status=none"
	[ "$status" -eq 0 ]
	dev_expect /dev/nullb0 $(( 20 * MiB )) "$D/src"
	run bash -c "ulimit -f 8; $COPY_RANGE -d /dev/nullb0 $(( 4 * MiB )) /dev/nullb0 $(( 40 * MiB )) $(( 2 * MiB ))"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$output" = "copied=$(( 2 * MiB ))" ]
	dev_expect /dev/nullb0 $(( 40 * MiB )) "$D/src"
}

@test "page cache: a buffered write to the source, not yet synced, is what gets copied" {
	nullb_load copy_max_bytes=$MiB
	random_file "$D/old" $MiB
	random_file "$D/new" $MiB
	dev_write /dev/nullb0 $(( 8 * MiB )) "$D/old"
	# Buffered, no fsync: the new data is only in the page cache.
	dd if="$D/new" of=/dev/nullb0 bs=1M seek=8 conv=notrunc status=none
	copy_mark
	run "$COPY_RANGE" -d /dev/nullb0 $(( 8 * MiB )) /dev/nullb0 $(( 30 * MiB )) $MiB
	echo "$output"
	[ "$output" = "copied=$MiB" ]
	[ "$(copy_stat_since offloaded_bytes)" = $MiB ]
	dev_expect /dev/nullb0 $(( 30 * MiB )) "$D/new"
}

@test "page cache: buffered reads of the destination see the copy" {
	nullb_load copy_max_bytes=$MiB
	random_file "$D/old" $MiB
	random_file "$D/new" $MiB
	dev_write /dev/nullb0 $(( 50 * MiB )) "$D/old"
	dev_write /dev/nullb0 $(( 10 * MiB )) "$D/new"
	# Cache the destination's old contents.
	dd if=/dev/nullb0 of="$D/cached" bs=1M skip=50 count=1 status=none
	cmp "$D/cached" "$D/old"
	run "$COPY_RANGE" -d /dev/nullb0 $(( 10 * MiB )) /dev/nullb0 $(( 50 * MiB )) $MiB
	[ "$output" = "copied=$MiB" ]
	dd if=/dev/nullb0 of="$D/after" bs=1M skip=50 count=1 status=none
	cmp "$D/after" "$D/new"
}

@test "SIGKILL ends a long copy between chunks; nothing outside it changes" {
	# 10 MB/s and no offload: 256 MiB would take half a minute.
	nullb_load copy_max_bytes=0 mbps=10
	local dst=$(( 400 * MiB )) len=$(( 256 * MiB )) guard=65536
	random_file "$D/before" $guard
	random_file "$D/after" $guard
	dev_write /dev/nullb0 $(( dst - guard )) "$D/before"
	dev_write /dev/nullb0 $(( dst + len )) "$D/after"
	"$COPY_RANGE" -d /dev/nullb0 0 /dev/nullb0 $dst $len >"$D/out" 2>&1 &
	COPY_PID=$!
	sleep 2
	kill -0 $COPY_PID
	kill -9 $COPY_PID
	# The chunks in flight (8 x 512 KiB at 10 MB/s) finish first.
	local i
	for i in $(seq 100); do
		kill -0 $COPY_PID 2>/dev/null || break
		sleep 0.1
	done
	! kill -0 $COPY_PID 2>/dev/null || false
	COPY_PID=
	dev_expect /dev/nullb0 $(( dst - guard )) "$D/before"
	dev_expect /dev/nullb0 $(( dst + len )) "$D/after"
}

@test "same range as source and destination: EINVAL; destination right after the source: copied" {
	nullb_load copy_max_bytes=$MiB
	random_file "$D/area" $(( 2 * MiB ))
	dev_write /dev/nullb0 $(( 16 * MiB )) "$D/area"
	run "$COPY_RANGE" -d /dev/nullb0 $(( 16 * MiB )) /dev/nullb0 $(( 16 * MiB )) $MiB
	[ "$output" = "$(printf 'copied=0\nerrno=EINVAL')" ]
	dev_expect /dev/nullb0 $(( 16 * MiB )) "$D/area"
	# The destination starts where the source ends.
	random_file "$D/src" $MiB
	random_file "$D/after" 65536
	dev_write /dev/nullb0 $(( 4 * MiB )) "$D/src"
	dev_write /dev/nullb0 $(( 6 * MiB )) "$D/after"
	copy_mark
	run "$COPY_RANGE" -d /dev/nullb0 $(( 4 * MiB )) /dev/nullb0 $(( 5 * MiB )) $MiB
	[ "$output" = "copied=$MiB" ]
	[ "$(copy_stat_since offloaded_bytes)" = $MiB ]
	dev_expect /dev/nullb0 $(( 4 * MiB )) "$D/src"
	dev_expect /dev/nullb0 $(( 5 * MiB )) "$D/src"
	dev_expect /dev/nullb0 $(( 6 * MiB )) "$D/after"
}

@test "a copy ending exactly at a partition's end, and one running past it" {
	nullb_load copy_max_bytes=$MiB
	printf 'label: gpt\nstart=2048, size=100MiB\nsize=100MiB\n' | sfdisk -q /dev/nullb0
	[ -b /dev/nullb0p1 ] && [ -b /dev/nullb0p2 ]
	local end=$(( 100 * MiB ))
	copy_mark
	random_file "$D/src" $(( 2 * MiB ))
	random_file "$D/next" 65536
	# The first 64 KiB of p2 must survive a copy to the end of p1.
	dev_write /dev/nullb0p2 0 "$D/next"
	dev_write /dev/nullb0p2 $(( 10 * MiB )) "$D/src"
	run "$COPY_RANGE" -d /dev/nullb0p2 $(( 10 * MiB )) /dev/nullb0p1 $(( end - 2 * MiB )) $(( 2 * MiB ))
	[ "$output" = "copied=$(( 2 * MiB ))" ]
	dev_expect /dev/nullb0p1 $(( end - 2 * MiB )) "$D/src"
	dev_expect /dev/nullb0p2 0 "$D/next"
	[ "$(copy_stat_since offloaded_bytes)" = $(( 2 * MiB )) ]
	# Past the end: shortened to it.
	run "$COPY_RANGE" -d --once /dev/nullb0p2 $(( 10 * MiB )) /dev/nullb0p1 $(( end - MiB )) $(( 2 * MiB ))
	[ "$output" = "copied=$MiB" ]
	dev_expect /dev/nullb0p2 0 "$D/next"
}

@test "512-byte offsets or lengths on a 4 KiB device: EINVAL, nothing written" {
	nullb_load copy_max_bytes=$MiB bs=4096
	random_file "$D/area" $MiB
	dev_write /dev/nullb0 $(( 16 * MiB )) "$D/area"
	local args
	for args in "$(( 4 * MiB + 512 )) $(( 16 * MiB )) 4096" \
		    "$(( 4 * MiB )) $(( 16 * MiB + 512 )) 4096" \
		    "$(( 4 * MiB )) $(( 16 * MiB )) 512"; do
		set -- $args
		run "$COPY_RANGE" -d /dev/nullb0 "$1" /dev/nullb0 "$2" "$3"
		echo "$args: $output"
		[ "$output" = "$(printf 'copied=0\nerrno=EINVAL')" ]
	done
	dev_expect /dev/nullb0 $(( 16 * MiB )) "$D/area"
}

@test "between a 512-byte and a 4 KiB device: emulated, aligned to 4 KiB" {
	nullb_load copy_max_bytes=$MiB
	nullb_cfg big4k blocksize=4096 copy_max_bytes=$MiB
	[ "$(queue_attr /dev/big4k logical_block_size)" = 4096 ]
	copy_mark /dev/big4k
	copy_and_verify /dev/nullb0 $(( 4 * MiB )) /dev/big4k $(( 16 * MiB )) $(( MiB + 4096 ))
	copy_and_verify /dev/big4k $(( 16 * MiB )) /dev/nullb0 $(( 40 * MiB )) $(( MiB + 4096 ))
	[ "$(copy_stat_since emulated_bytes)" = $(( MiB + 4096 )) ]
	[ "$(copy_stat_since offloaded_bytes)" = 0 ]
	run "$COPY_RANGE" -d /dev/nullb0 $(( 4 * MiB + 512 )) /dev/big4k $(( 16 * MiB )) 4096
	[ "$output" = "$(printf 'copied=0\nerrno=EINVAL')" ]
	run "$COPY_RANGE" -d /dev/nullb0 $(( 4 * MiB )) /dev/big4k $(( 16 * MiB )) 512
	[ "$output" = "$(printf 'copied=0\nerrno=EINVAL')" ]
}
