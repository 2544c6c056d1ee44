#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# Errors half way through a copy: bad blocks in a chunk past the first
# eight (on either side), offload failing for some chunks
# (fail_make_request), the device powered off mid-copy, the limits
# rewritten while copies run, and emulation buffers that cannot be
# allocated (fail_page_alloc). The caller gets the exact prefix copied,
# nothing outside the copy changes, and the kernel logs no bug.

load ../lib/common
load ../lib/dm

MiB=1048576

setup() {
	guest_setup
	[ -x "$COPY_RANGE" ] || fail "$COPY_RANGE not built (make -C tests/helpers)"
	D=$BATS_TEST_TMPDIR
}

teardown() {
	[ -n "${BG_PID:-}" ] && kill "$BG_PID" 2>/dev/null && wait "$BG_PID" 2>/dev/null
	local f
	for f in fail_make_request fail_page_alloc; do
		[ -w /sys/kernel/debug/$f/probability ] &&
			echo 0 >/sys/kernel/debug/$f/probability
	done
	dm_cleanup
	nullb_unload || true
	guest_teardown
}

# bad_chunk_copy SIDE: a 12 MiB copy in 1 MiB chunks with a bad block in
# chunk 9 of SIDE (src or dst) stops with the first 9 MiB copied.
bad_chunk_copy() {
	nullb_cfg bad copy_max_bytes=$MiB
	local src=$(( 16 * MiB )) dst=$(( 64 * MiB )) len=$(( 12 * MiB ))
	local guard=65536 bad
	random_file "$D/src" $len
	random_file "$D/after" $guard
	dev_write /dev/bad $src "$D/src"
	dev_write /dev/bad $(( dst + len )) "$D/after"
	if [ "$1" = src ]; then
		bad=$(( (src + 9 * MiB + 4096) / 512 ))
	else
		bad=$(( (dst + 9 * MiB + 4096) / 512 ))
	fi
	echo "+$bad-$(( bad + 7 ))" >/sys/kernel/config/nullb/bad/badblocks
	copy_mark /dev/bad

	run "$COPY_RANGE" -d /dev/bad $src /dev/bad $dst $len
	echo "$output"
	[ "$status" -eq 1 ]
	[ "${lines[0]}" = "copied=$(( 9 * MiB ))" ]
	[ "${lines[1]}" = "errno=EIO" ]
	head -c $(( 9 * MiB )) "$D/src" >"$D/prefix"
	dev_expect /dev/bad $dst "$D/prefix"
	dev_expect /dev/bad $(( dst + len )) "$D/after"
	# The first call stopped at the bad chunk, the second failed on it.
	[ "$(copy_stat_since failed_copies)" = 2 ]
	[ "$(copy_stat_since offloaded_bytes)" -ge $(( 9 * MiB )) ]
}

@test "a bad block in the source's 10th chunk: the first 9 MiB are copied, then EIO" {
	bad_chunk_copy src
}

@test "a bad block in the destination's 10th chunk: the first 9 MiB are copied, then EIO" {
	bad_chunk_copy dst
}

@test "offload failing part way (fail_make_request): those chunks are emulated, the rest offloaded" {
	[ -d /sys/kernel/debug/fail_make_request ] ||
		skip "kernel without CONFIG_FAIL_MAKE_REQUEST"
	nullb_load copy_max_bytes=$MiB
	local f=/sys/kernel/debug/fail_make_request
	random_file "$D/src" $(( 8 * MiB ))
	dev_write /dev/nullb0 $(( 4 * MiB )) "$D/src"
	echo 0 >$f/verbose
	echo 1 >$f/times
	echo 3 >$f/interval
	echo 100 >$f/probability
	echo 1 >/sys/block/nullb0/make-it-fail
	copy_mark
	run "$COPY_RANGE" -d /dev/nullb0 $(( 4 * MiB )) /dev/nullb0 $(( 64 * MiB )) $(( 8 * MiB ))
	echo 0 >/sys/block/nullb0/make-it-fail
	echo 0 >$f/probability
	echo "$output"
	[ "$output" = "copied=$(( 8 * MiB ))" ]
	# One injected failure, or two when two chunks' workers race through
	# fault injection's "times" check together: whole chunks emulated,
	# the others offloaded.
	local emu off
	emu=$(copy_stat_since emulated_bytes)
	off=$(copy_stat_since offloaded_bytes)
	echo "emulated $emu, offloaded $off"
	[ "$emu" -ge $MiB ] && [ $(( emu % MiB )) = 0 ]
	[ "$off" -gt 0 ]
	[ $(( emu + off )) = $(( 8 * MiB )) ]
	dev_expect /dev/nullb0 $(( 64 * MiB )) "$D/src"
}

@test "the device powered off during a copy: the copy stops short, the kernel survives" {
	# Slow (10 MB/s) and emulated, so the copy is still running.
	nullb_cfg gone mbps=10 copy_max_bytes=$MiB
	echo 0 >/sys/block/gone/queue/copy_max_bytes
	"$COPY_RANGE" -d /dev/gone 0 /dev/gone $(( 512 * MiB )) $(( 128 * MiB )) >"$D/out" 2>&1 &
	BG_PID=$!
	sleep 2
	echo 0 >/sys/kernel/config/nullb/gone/power
	local i
	for i in $(seq 300); do
		kill -0 $BG_PID 2>/dev/null || break
		sleep 0.1
	done
	! kill -0 $BG_PID 2>/dev/null || false
	wait $BG_PID || true
	BG_PID=
	cat "$D/out"
	# Short (a powered-off disk has no capacity left, as at its end) or
	# failed, never the whole length.
	grep -q "^copied=" "$D/out"
	! grep -qx "copied=$(( 128 * MiB ))" "$D/out" || false
	[ ! -b /dev/gone ]
}

@test "copy_max_bytes rewritten while copies run: every copy is correct" {
	nullb_load copy_max_bytes=$MiB
	(
		while :; do
			for v in $MiB 65536 0 4096 524288; do
				echo $v >/sys/block/nullb0/queue/copy_max_bytes
			done
		done
	) &
	BG_PID=$!
	local i
	for i in $(seq "$(long_or 6 20)"); do
		copy_and_verify /dev/nullb0 $(( (i % 4) * 8 * MiB )) /dev/nullb0 $(( 100 * MiB + i * 4 * MiB )) $(( 3 * MiB + 4096 ))
	done
	kill $BG_PID
	wait $BG_PID || true
	BG_PID=
}

@test "large allocations failing (fail_page_alloc): emulation runs on its reserve and every copy completes" {
	local f=/sys/kernel/debug/fail_page_alloc
	[ -d $f ] || skip "kernel without CONFIG_FAIL_PAGE_ALLOC"
	nullb_load copy_max_bytes=0
	# Three emulated copies at once: 24 chunk slots wanting a 512 KiB
	# (order 7) buffer each, and two buffers in the reserve.
	local i len=$(( 8 * MiB )) dst=$(( 256 * MiB )) guard=65536 budget=1000000
	local -a pids=()
	for i in 0 1 2; do
		random_file "$D/src$i" $len
		dev_write /dev/nullb0 $(( i * 16 * MiB )) "$D/src$i"
	done
	random_file "$D/before" $guard
	random_file "$D/after" $guard
	dev_write /dev/nullb0 $(( dst - guard )) "$D/before"
	dev_write /dev/nullb0 $(( dst + 3 * 16 * MiB )) "$D/after"
	echo 0 >$f/verbose
	echo N >$f/ignore-gfp-wait
	echo N >$f/ignore-gfp-highmem
	echo 7 >$f/min-order
	echo $budget >$f/times
	echo 100 >$f/probability
	copy_mark
	for i in 0 1 2; do
		"$COPY_RANGE" -d /dev/nullb0 $(( i * 16 * MiB )) /dev/nullb0 $(( dst + i * 16 * MiB )) $len >"$D/out$i" &
		pids+=($!)
	done
	# A copy waiting for a buffer nobody gives back hangs for as long as
	# large allocations fail: give it a minute. (With the injection off,
	# mempool_alloc() retries the page allocator and the copy goes on.)
	local t stuck=
	for t in $(seq 120); do
		kill -0 "${pids[@]}" 2>/dev/null || break
		sleep 0.5
	done
	kill -0 "${pids[@]}" 2>/dev/null && stuck=1
	echo 0 >$f/probability
	[ -z "$stuck" ] || fail "copies still waiting for emulation buffers after 60 s"
	for i in 0 1 2; do
		wait "${pids[i]}" || fail "copy $i: $(cat "$D/out$i")"
		[ "$(cat "$D/out$i")" = "copied=$len" ]
	done
	# Order-7 allocations did fail while the copies ran.
	echo "injected failures: $(( budget - $(cat $f/times) ))"
	[ $(( budget - $(cat $f/times) )) -gt 0 ]
	for i in 0 1 2; do
		dev_expect /dev/nullb0 $(( dst + i * 16 * MiB )) "$D/src$i"
		dev_expect /dev/nullb0 $(( i * 16 * MiB )) "$D/src$i"
	done
	dev_expect /dev/nullb0 $(( dst - guard )) "$D/before"
	dev_expect /dev/nullb0 $(( dst + 3 * 16 * MiB )) "$D/after"
	[ "$(copy_stat_since emulated_bytes)" = $(( 3 * len )) ]
}

@test "40 emulated copies at once between two disks, order-7 allocations failing, dm-thin breaking sharing: all complete, data right" {
	local f=/sys/kernel/debug/fail_page_alloc
	[ -d $f ] || skip "kernel without CONFIG_FAIL_PAGE_ALLOC"
	# Two disks: every copy is emulated, 8 chunk slots each, 320 slots
	# wanting a 512 KiB buffer with two in the reserve: more than the
	# copy workqueue runs at once (256), so a slot that slept there for
	# a buffer would keep the slots holding one from giving it back.
	# Meanwhile dm-thin on nullb1 breaks sharing with copies of its own
	# (offloaded through dm-kcopyd), which must not queue behind them.
	nullb_load nr_devices=2 copy_max_bytes=$MiB
	local i n=40 len=$(( 4 * MiB )) budget=1000000 t stuck= thin_pid blk=$(( 512 * 1024 ))
	local -a pids=()
	random_file "$D/src" $len
	dev_write /dev/nullb0 0 "$D/src"
	linear dmt-tmeta /dev/nullb1 512 8
	linear dmt-tdata /dev/nullb1 576 64
	dd if=/dev/zero of=/dev/mapper/dmt-tmeta bs=1M count=1 oflag=direct status=none
	dmsetup create dmt-pool --table "0 $(( 64 * 2048 )) thin-pool /dev/mapper/dmt-tmeta /dev/mapper/dmt-tdata 1024 0 1 skip_block_zeroing"
	dmsetup message dmt-pool 0 "create_thin 0"
	dmsetup create dmt-thin --table "0 $(( 16 * 2048 )) thin /dev/mapper/dmt-pool 0"
	random_file "$D/origin" $(( 16 * MiB ))
	dev_write /dev/mapper/dmt-thin 0 "$D/origin"
	dmsetup suspend dmt-thin
	dmsetup message dmt-pool 0 "create_snap 1 0"
	dmsetup resume dmt-thin
	dmsetup create dmt-snap --table "0 $(( 16 * 2048 )) thin /dev/mapper/dmt-pool 1"
	cp "$D/origin" "$D/snap"
	random_file "$D/w" $(( 32 * 4096 ))
	for (( i = 0; i < 32; i++ )); do
		dd if="$D/w" of="$D/snap" bs=4096 skip=$i seek=$(( i * blk / 4096 + 2 )) \
			count=1 conv=notrunc status=none
	done

	echo 0 >$f/verbose
	echo N >$f/ignore-gfp-wait
	echo N >$f/ignore-gfp-highmem
	echo 7 >$f/min-order
	echo $budget >$f/times
	echo 100 >$f/probability
	copy_mark /dev/nullb1
	for (( i = 0; i < n; i++ )); do
		"$COPY_RANGE" -d /dev/nullb0 0 /dev/nullb1 $(( i * 8 * MiB )) $len >"$D/out$i" &
		pids+=($!)
	done
	# 4 KiB into the middle of each of the snapshot's 32 blocks: dm-thin
	# copies the rest of the block first.
	(
		for (( i = 0; i < 32; i++ )); do
			dd if="$D/w" of=/dev/mapper/dmt-snap bs=4096 skip=$i \
				seek=$(( i * blk / 4096 + 2 )) count=1 oflag=direct status=none || exit 1
		done
	) &
	thin_pid=$!
	for t in $(seq 120); do
		kill -0 "${pids[@]}" $thin_pid 2>/dev/null || break
		sleep 0.5
	done
	kill -0 "${pids[@]}" $thin_pid 2>/dev/null && stuck=1
	echo 0 >$f/probability
	echo "injected failures: $(( budget - $(cat $f/times) ))"
	[ -z "$stuck" ] || fail "copies or dm-thin writes still waiting after 60 s"
	for (( i = 0; i < n; i++ )); do
		wait "${pids[i]}" || fail "copy $i: $(cat "$D/out$i")"
		[ "$(cat "$D/out$i")" = "copied=$len" ]
	done
	wait $thin_pid || fail "a write to the thin snapshot failed"
	[ $(( budget - $(cat $f/times) )) -gt 0 ]
	for (( i = 0; i < n; i++ )); do
		dev_expect /dev/nullb1 $(( i * 8 * MiB )) "$D/src"
	done
	# Between two destinations nothing was written: still zeroes.
	head -c $len /dev/zero >"$D/zero"
	dev_expect /dev/nullb1 $(( 4 * MiB )) "$D/zero"
	dev_expect /dev/mapper/dmt-snap 0 "$D/snap"
	dev_expect /dev/mapper/dmt-thin 0 "$D/origin"
	[ "$(copy_stat_since emulated_bytes)" = $(( n * len )) ]
}
