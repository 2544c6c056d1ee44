#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# Faults in the middle of copies through device-mapper: media errors
# under dm-linear and the copy target (dm-dust on the source, dm-flakey
# failing writes on the destination), a suspend while dm-kcopyd copies
# under a low throttle, a thin pool running out of space while it breaks
# sharing (error_if_no_space and the queueing default), and null_blk's
# module while copies run on it. Each checks the data copied, the bytes
# around it, and that the devices are usable afterwards.

load ../lib/common
load ../lib/dm

MiB=1048576
SECTORS_PER_MIB=2048

setup() {
	guest_setup
	[ -x "$COPY_RANGE" ] || fail "$COPY_RANGE not built (make -C tests/helpers)"
	dm_copy_load
	D=$BATS_TEST_TMPDIR
	THROTTLE=/sys/module/dm_copy/parameters/kcopyd_throttle
	THROTTLE_WAS=$(cat $THROTTLE)
}

teardown() {
	[ -n "${BG_PID:-}" ] && kill "$BG_PID" 2>/dev/null && wait "$BG_PID" 2>/dev/null
	echo "$THROTTLE_WAS" >$THROTTLE
	dm_cleanup
	nullb_unload || true
	guest_teardown
}

# media_table BAD_SECTOR: the table of dmt-media, dm-linear over dmt-dust
# (dm-dust over all of nullb0) with 8 sectors at BAD_SECTOR (0: none) on
# dm-flakey failing every write there; reads pass.
media_table() {
	local bad=$1 size=$(( 1024 * SECTORS_PER_MIB )) lower=/dev/mapper/dmt-dust
	if [ "$bad" = 0 ]; then
		echo "0 $size linear $lower 0"
		return
	fi
	echo "0 $bad linear $lower 0"
	echo "$bad 8 flakey $lower $bad 0 1 1 error_writes"
	echo "$(( bad + 8 )) $(( size - bad - 8 )) linear $lower $(( bad + 8 ))"
}

# media_reload BAD_SECTOR: dmt-media with that table, under what is on it.
media_reload() {
	media_table "$1" | dmsetup reload dmt-media
	dmsetup suspend dmt-media
	dmsetup resume dmt-media
}

# media_copy TOP SIDE [PREFIX]: a 12 MiB copy inside TOP (a device over
# dmt-media) with a media error 4 KiB into its 10th MiB on SIDE (src:
# dm-dust fails the read; dst: dm-flakey fails the write) copies a prefix
# that ends before the error (PREFIX bytes, when given), then fails with
# EIO: the destination holds the source's prefix, the source and the bytes
# after the copy keep what they held. (Past the prefix the destination is
# undefined, as after a failed write: chunks after the failed one may have
# been copied.)
media_copy() {
	local top=$1 side=$2 prefix=${3:-} src=$(( 16 * MiB )) dst=$(( 64 * MiB ))
	local len=$(( 12 * MiB )) guard=65536 bad copied
	random_file "$D/src" $len
	random_file "$D/after" $guard
	dev_write "$top" $src "$D/src"
	dev_write "$top" $(( dst + len )) "$D/after"
	if [ "$side" = src ]; then
		bad=$(( (src + 9 * MiB + 4096) / 512 ))
		dmsetup message dmt-dust 0 addbadblock $bad
		dmsetup message dmt-dust 0 enable
	else
		bad=$(( (dst + 9 * MiB + 4096) / 512 ))
		media_reload $bad
	fi
	run "$COPY_RANGE" -d "$top" $src "$top" $dst $len
	echo "$output"
	[ "$status" -eq 1 ]
	[ "${lines[1]}" = "errno=EIO" ]
	copied=${lines[0]#copied=}
	if [ -n "$prefix" ]; then
		[ "$copied" = "$prefix" ]
	else
		# whole chunks of the emulation, up to the one that failed
		[ "$copied" -gt $(( 8 * MiB )) ] && [ "$copied" -le $(( 9 * MiB + 4096 )) ]
		[ $(( copied % 4096 )) = 0 ]
	fi
	head -c "$copied" "$D/src" >"$D/prefix"
	dev_expect "$top" $dst "$D/prefix"
	dev_expect "$top" $(( dst + len )) "$D/after"
	# Usable afterwards: the source as it was, the whole copy again.
	if [ "$side" = src ]; then
		dmsetup message dmt-dust 0 disable
		dmsetup message dmt-dust 0 clearbadblocks
	else
		media_reload 0
	fi
	dev_expect "$top" $src "$D/src"
	copy_and_verify "$top" $src "$top" $dst $len
}

# media_stack TOP: nullb0, dmt-dust, dmt-media and TOP over it, either
# dm-linear or the copy target (1 MiB copies, emulated: dm-dust and
# dm-flakey take no copies).
media_stack() {
	nullb_load copy_max_bytes=$MiB
	dmsetup create dmt-dust --table "0 $(( 1024 * SECTORS_PER_MIB )) dust /dev/nullb0 0 512"
	media_table 0 | dmsetup create dmt-media
	if [ "$1" = linear ]; then
		dmsetup create dmt-top --table "0 $(( 512 * SECTORS_PER_MIB )) linear /dev/mapper/dmt-media 0"
	else
		dmsetup create dmt-top --table "0 $(( 512 * SECTORS_PER_MIB )) copy /dev/mapper/dmt-media 0 2 max_copy_bytes $MiB"
	fi
}

@test "dm-dust under dm-linear fails a source read in the 10th MiB: the chunks before it are copied, then EIO" {
	media_stack linear
	media_copy /dev/mapper/dmt-top src
}

@test "dm-flakey under dm-linear fails a destination write in the 10th MiB: the chunks before it are copied, then EIO" {
	media_stack linear
	media_copy /dev/mapper/dmt-top dst
}

@test "dm-dust under the copy target fails a source read in the 10th MiB: 9 MiB copied, then EIO" {
	media_stack copy
	media_copy /dev/mapper/dmt-top src $(( 9 * MiB ))
	# dm-kcopyd's chunk that hit the error is counted as failed.
	[ "$(dm_status_field dmt-top 6)" -ge 1 ]
}

@test "dm-flakey under the copy target fails a destination write in the 10th MiB: 9 MiB copied, then EIO" {
	media_stack copy
	media_copy /dev/mapper/dmt-top dst $(( 9 * MiB ))
	[ "$(dm_status_field dmt-top 6)" -ge 1 ]
}

@test "dmsetup suspend while the copy target emulates under kcopyd_throttle=5: done within seconds, the copy completes after resume" {
	# A disk of 50 MB/s: at 5 % dm-kcopyd sleeps about 20 times as long
	# as each of its reads and writes takes.
	nullb_load mbps=50
	dmsetup create dmt-c --table "0 $(( 512 * SECTORS_PER_MIB )) copy /dev/nullb0 0 2 mode emulate"
	local len=$(( 64 * MiB )) t0 t1 ms
	random_file "$D/src" $len
	random_file "$D/after" 65536
	dev_write /dev/mapper/dmt-c 0 "$D/src"
	dev_write /dev/mapper/dmt-c $(( 256 * MiB + len )) "$D/after"
	echo 5 >$THROTTLE
	"$COPY_RANGE" -d /dev/mapper/dmt-c 0 /dev/mapper/dmt-c $(( 256 * MiB )) $len >"$D/out" 2>&1 &
	BG_PID=$!
	# Until the copies are in flight.
	local i
	for i in $(seq 100); do
		[ "$(dm_status_field dmt-c 7)" -gt 0 ] && break
		sleep 0.1
	done
	echo "in flight: $(dm_status_field dmt-c 7)"
	[ "$(dm_status_field dmt-c 7)" -gt 0 ]
	t0=$(date +%s%N)
	dmsetup suspend dmt-c
	t1=$(date +%s%N)
	ms=$(( (t1 - t0) / 1000000 ))
	echo "suspend took $ms ms; in flight after it: $(dm_status_field dmt-c 7)"
	[ "$(dm_status_field dmt-c 7)" = 0 ]
	# The copies in flight finish at full speed once a suspend waits
	# for them; at 5 % they would take minutes.
	[ $ms -lt $(( 15000 * DMCOPY_TEST_TIMEOUT_SCALE )) ]
	dmsetup resume dmt-c
	echo 100 >$THROTTLE
	wait $BG_PID
	BG_PID=
	[ "$(cat "$D/out")" = "copied=$len" ]
	dev_expect /dev/mapper/dmt-c $(( 256 * MiB )) "$D/src"
	dev_expect /dev/mapper/dmt-c $(( 256 * MiB + len )) "$D/after"
	dev_expect /dev/mapper/dmt-c 0 "$D/src"
}

# thin_full_setup FEATURES: a thin pool of 8 MiB in 1 MiB blocks on
# nullb0 (which copies: sharing is broken with offloaded copies), thin
# volume 0 with 6 MiB written, and thin 1 its snapshot: writing 4 KiB
# into each of the six shared blocks of volume 0 needs six new blocks,
# the pool has two.
thin_full_setup() {
	nullb_load copy_max_bytes=$MiB
	linear dmt-tmeta /dev/nullb0 512 4
	linear dmt-tdata /dev/nullb0 576 8
	dd if=/dev/zero of=/dev/mapper/dmt-tmeta bs=1M count=1 oflag=direct status=none
	POOL_TABLE="0 $(( 8 * SECTORS_PER_MIB )) thin-pool /dev/mapper/dmt-tmeta /dev/mapper/dmt-tdata $SECTORS_PER_MIB 0 $*"
	dmsetup create dmt-pool --table "$POOL_TABLE"
	dmsetup message dmt-pool 0 "create_thin 0"
	dmsetup create dmt-thin --table "0 $(( 16 * SECTORS_PER_MIB )) thin /dev/mapper/dmt-pool 0"
	random_file "$D/origin" $(( 6 * MiB ))
	dev_write /dev/mapper/dmt-thin 0 "$D/origin"
	dmsetup suspend dmt-thin
	dmsetup message dmt-pool 0 "create_snap 1 0"
	dmsetup resume dmt-thin
	dmsetup create dmt-snap --table "0 $(( 16 * SECTORS_PER_MIB )) thin /dev/mapper/dmt-pool 1"
	random_file "$D/w" $(( 6 * 4096 ))
}

# thin_write I: write 4 KiB of $D/w into block I of the thin volume, 8 KiB
# in; prints dd's errors.
thin_write() {
	dd if="$D/w" of=/dev/mapper/dmt-thin bs=4096 skip="$1" seek=$(( $1 * 256 + 2 )) \
		count=1 oflag=direct conv=notrunc status=none
}

# thin_check_blocks: every block of the thin volume holds the origin, or
# the origin with its 4 KiB written (never a block half copied: the rest
# of a block whose sharing was broken is the origin's); the snapshot is
# the origin. THIN_NEW gets how many blocks took the write.
thin_check_blocks() {
	local i got want
	THIN_NEW=0
	dev_expect /dev/mapper/dmt-snap 0 "$D/origin"
	for (( i = 0; i < 6; i++ )); do
		got=$(dev_read /dev/mapper/dmt-thin $(( i * MiB )) $MiB /dev/stdout | sha1sum)
		want=$(dd if="$D/origin" bs=1M skip=$i count=1 status=none | sha1sum)
		[ "$got" = "$want" ] && continue
		cp "$D/origin" "$D/expect"
		dd if="$D/w" of="$D/expect" bs=4096 skip=$i seek=$(( i * 256 + 2 )) count=1 \
			conv=notrunc status=none
		want=$(dd if="$D/expect" bs=1M skip=$i count=1 status=none | sha1sum)
		[ "$got" = "$want" ] || fail "thin block $i is neither the origin nor the origin with its write"
		THIN_NEW=$(( THIN_NEW + 1 ))
	done
}

# thin_grow: 8 more MiB of data for the pool, as lvextend does it.
thin_grow() {
	dmsetup suspend --noflush dmt-pool
	dmsetup reload dmt-tdata --table "0 $(( 16 * SECTORS_PER_MIB )) linear /dev/nullb0 $(( 576 * SECTORS_PER_MIB ))"
	dmsetup suspend dmt-tdata
	dmsetup resume dmt-tdata
	dmsetup reload dmt-pool --table "${POOL_TABLE/0 $(( 8 * SECTORS_PER_MIB ))/0 $(( 16 * SECTORS_PER_MIB ))}"
	dmsetup resume dmt-pool
}

@test "a thin pool with error_if_no_space fills while breaking sharing: the writes past it fail, no block half copied, growing it recovers" {
	thin_full_setup 2 skip_block_zeroing error_if_no_space
	local i failed=0
	copy_mark /dev/nullb0
	for (( i = 0; i < 6; i++ )); do
		thin_write $i 2>>"$D/err" || failed=$(( failed + 1 ))
	done
	cat "$D/err"
	echo "writes failed: $failed; pool: $(dmsetup status dmt-pool)"
	[ $failed -eq 4 ]
	grep -q "out_of_data_space" <(dmsetup status dmt-pool)
	thin_check_blocks
	[ $THIN_NEW = 2 ]
	# The blocks it broke sharing of were copied offloaded.
	[ "$(copy_stat_since device_bytes)" = $(( 2 * MiB )) ]
	thin_grow
	for (( i = 0; i < 6; i++ )); do
		thin_write $i
	done
	thin_check_blocks
	[ $THIN_NEW = 6 ]
	[ "$(copy_stat_since device_bytes)" = $(( 6 * MiB )) ]
}

@test "a thin pool queueing when full while breaking sharing: the writes wait, growing the pool in time completes them" {
	thin_full_setup 1 skip_block_zeroing
	local i
	(
		for (( i = 0; i < 6; i++ )); do
			thin_write $i || exit 1
		done
	) 2>"$D/err" &
	BG_PID=$!
	# Until the pool is out of space and the third write waits.
	for i in $(seq 150); do
		grep -q "out_of_data_space" <(dmsetup status dmt-pool) && break
		sleep 0.2
	done
	echo "pool: $(dmsetup status dmt-pool)"
	grep -q "out_of_data_space" <(dmsetup status dmt-pool)
	kill -0 $BG_PID
	thin_grow
	wait $BG_PID || fail "writes failed after growing: $(cat "$D/err")"
	BG_PID=
	thin_check_blocks
	[ $THIN_NEW = 6 ]
}

@test "rmmod null_blk is refused while a copy runs on it, and clean afterwards" {
	nullb_load copy_max_bytes=0 mbps=20
	random_file "$D/src" $(( 16 * MiB ))
	dev_write /dev/nullb0 0 "$D/src"
	"$COPY_RANGE" -d /dev/nullb0 0 /dev/nullb0 $(( 64 * MiB )) $(( 16 * MiB )) >"$D/out" 2>&1 &
	BG_PID=$!
	sleep 0.5
	run rmmod null_blk
	echo "$output"
	[ "$status" -ne 0 ]
	[[ $output == *"in use"* ]]
	wait $BG_PID
	BG_PID=
	[ "$(cat "$D/out")" = "copied=$(( 16 * MiB ))" ]
	dev_expect /dev/nullb0 $(( 64 * MiB )) "$D/src"
	rmmod null_blk
	! lsmod | grep -q '^null_blk ' || false
}
