#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# Copy offload through dm-linear: limits stack from the devices below, a
# copy inside one target is offloaded to the device under it, one across a
# target boundary or between two devices is emulated, table reloads in
# the middle of copies lose nothing. Every copy is checked byte for byte,
# with the bytes around its destination; the bottom device's read and
# write counters tell offloaded (no data moved) from emulated.

# The long form's 1000 reloads of an unrelated device took 356 s on the
# normal kernel under TCG with a fuzzer beside it (2026-12-07): the
# default timeout is too close.
[ "${DMCOPY_LONG:-0}" != 1 ] || DMCOPY_TEST_TIMEOUT=1200

load ../lib/common
load ../lib/dm

MiB=1048576
SECTORS_PER_MIB=2048

setup() {
	guest_setup
	[ -x "$COPY_RANGE" ] || fail "$COPY_RANGE not built (make -C tests/helpers)"
}

teardown() {
	dm_cleanup
	nullb_unload || true
	guest_teardown
}

@test "dm-linear over null_blk advertises null_blk's copy limit" {
	nullb_load copy_max_bytes=$MiB
	linear dmt-a /dev/nullb0 16 256
	[ "$(dm_queue dmt-a copy_max_hw_bytes)" = $MiB ]
	[ "$(dm_queue dmt-a copy_max_bytes)" = $MiB ]
}

@test "dm-linear over virtio-blk advertises no copy; copies are emulated, data read and written below" {
	linear dmt-a /dev/vda 16 64
	[ "$(dm_queue dmt-a copy_max_hw_bytes)" = 0 ]
	[ "$(dm_queue dmt-a copy_max_bytes)" = 0 ]
	local len=$(( 2 * MiB ))
	copy_mark /dev/mapper/dmt-a
	copy_and_verify -r /dev/vda /dev/mapper/dmt-a $(( 1 * MiB )) /dev/mapper/dmt-a $(( 20 * MiB )) $len
	[ "$COPY_RW" = "$(( len / 512 )) $(( len / 512 ))" ]
	[ "$(copy_stat_since emulated_bytes)" = $len ]
	copy_and_verify /dev/mapper/dmt-a $(( 4 * MiB )) /dev/mapper/dmt-a $(( 40 * MiB )) $(( MiB + 512 ))
}

@test "a table with a target that does not take copies advertises no copy" {
	nullb_load copy_max_bytes=$MiB
	dm_create dmt-a "0 2048 linear /dev/nullb0 0" "2048 2048 zero"
	[ "$(dm_queue dmt-a copy_max_hw_bytes)" = 0 ]
}

@test "a copy inside dm-linear over null_blk is offloaded: nothing read or written below" {
	nullb_load copy_max_bytes=$MiB
	linear dmt-a /dev/nullb0 16 512
	local len=$(( 5 * MiB + 4096 ))
	copy_mark /dev/mapper/dmt-a
	copy_and_verify -r /dev/nullb0 /dev/mapper/dmt-a $(( 4 * MiB )) /dev/mapper/dmt-a $(( 200 * MiB )) $len
	[ "$COPY_RW" = "0 0" ]
	# And where dm-linear put it on the disk.
	dev_expect /dev/nullb0 $(( 216 * MiB )) "$BATS_TEST_TMPDIR/src"
	[ "$(copy_stat_since offloaded_bytes)" = $len ]
	[ "$(copy_stat_since emulated_bytes)" = 0 ]
	# Not a whole number of pages.
	copy_and_verify /dev/mapper/dmt-a $(( 1 * MiB )) /dev/mapper/dmt-a $(( 300 * MiB )) $(( 3 * MiB + 512 ))
}

# xfs_copy_range_dmt_a BOTTOM: copy 2 MiB from offset 0 of dmt-a to 32 MiB
# with xfs_io copy_range, 1 MiB of old data on each side of the
# destination; the destination and its sides are checked. -f 0: the source
# is the file opened with -d (O_DIRECT), as a copy between block devices
# offloads only with O_DIRECT on both sides (xfs_io opens a named source
# buffered). Leaves dmt-a's copy_stat and BOTTOM's sectors read and
# written since just before the copy in $OFFLOADED, $EMULATED and $RW.
xfs_copy_range_dmt_a() {
	local d=$BATS_TEST_TMPDIR len=$(( 2 * MiB ))
	random_file "$d/src" $len
	random_file "$d/around" $(( 4 * MiB ))
	dev_write /dev/mapper/dmt-a $(( 31 * MiB )) "$d/around"
	dev_write /dev/mapper/dmt-a 0 "$d/src"
	copy_mark /dev/mapper/dmt-a
	rw_mark "$1"
	run xfs_io -d -c "copy_range -f 0 -s 0 -d $(( 32 * MiB )) -l $len" /dev/mapper/dmt-a
	echo "$output"
	[ "$status" -eq 0 ]
	# xfs_io prints its errors but exits 0
	[ -z "$output" ]
	OFFLOADED=$(copy_stat_since offloaded_bytes)
	EMULATED=$(copy_stat_since emulated_bytes)
	RW=$(rw_since)
	echo "offloaded $OFFLOADED, emulated $EMULATED, $1 rw $RW"
	dev_expect /dev/mapper/dmt-a $(( 32 * MiB )) "$d/src"
	head -c $MiB "$d/around" >"$d/head"
	tail -c $MiB "$d/around" >"$d/tail"
	dev_expect /dev/mapper/dmt-a $(( 31 * MiB )) "$d/head"
	dev_expect /dev/mapper/dmt-a $(( 34 * MiB )) "$d/tail"
}

@test "xfs_io copy_range inside dm-linear: correct" {
	nullb_load copy_max_bytes=$MiB
	linear dmt-a /dev/nullb0 16 128
	xfs_copy_range_dmt_a /dev/nullb0
	# Offloaded (copy_stat counts at the device copied into), and
	# null_blk read and wrote nothing for it.
	[ "$OFFLOADED" = $(( 2 * MiB )) ]
	[ "$EMULATED" = 0 ]
	[ "$RW" = "0 0" ]
}

@test "xfs_io copy_range inside dm-linear over virtio-blk: emulated, read and written below" {
	linear dmt-a /dev/vda 16 64
	xfs_copy_range_dmt_a /dev/vda
	[ "$RW" = "$(( 2 * MiB / 512 )) $(( 2 * MiB / 512 ))" ]
	[ "$EMULATED" = $(( 2 * MiB )) ]
	[ "$OFFLOADED" = 0 ]
}

@test "a copy across the boundary of two linear targets: the crossing piece is emulated, all correct" {
	nullb_load copy_max_bytes=$MiB
	# Two targets, the second 100 MiB further on the disk than the first
	# ends, so that the table is not one straight run.
	dm_create dmt-a "0 $(( 64 * SECTORS_PER_MIB )) linear /dev/nullb0 0" \
		"$(( 64 * SECTORS_PER_MIB )) $(( 64 * SECTORS_PER_MIB )) linear /dev/nullb0 $(( 164 * SECTORS_PER_MIB ))"
	copy_mark /dev/mapper/dmt-a
	# Source across the boundary, half a MiB off chunk alignment.
	copy_and_verify /dev/mapper/dmt-a $(( 62 * MiB + MiB / 2 )) /dev/mapper/dmt-a $(( 100 * MiB )) $(( 4 * MiB ))
	[ "$(copy_stat_since emulated_bytes)" -gt 0 ]
	[ "$(copy_stat_since offloaded_bytes)" -gt 0 ]
	[ $(( $(copy_stat_since emulated_bytes) + $(copy_stat_since offloaded_bytes) )) = $(( 4 * MiB )) ]
	# Destination across it.
	copy_and_verify /dev/mapper/dmt-a $(( 10 * MiB )) /dev/mapper/dmt-a $(( 63 * MiB )) $(( 2 * MiB + 4096 ))
}

@test "dm-linear over two null_blk devices: a copy from one to the other is emulated, correct" {
	nullb_load copy_max_bytes=$MiB
	nullb_cfg other copy_max_bytes=$MiB
	dm_create dmt-a "0 $(( 128 * SECTORS_PER_MIB )) linear /dev/nullb0 0" \
		"$(( 128 * SECTORS_PER_MIB )) $(( 128 * SECTORS_PER_MIB )) linear /dev/other 0"
	[ "$(dm_queue dmt-a copy_max_hw_bytes)" = $MiB ]
	copy_mark /dev/mapper/dmt-a
	copy_and_verify /dev/mapper/dmt-a $(( 8 * MiB )) /dev/mapper/dmt-a $(( 160 * MiB )) $(( 9 * MiB + 512 ))
	[ "$(copy_stat_since offloaded_bytes)" = 0 ]
	[ "$(copy_stat_since emulated_bytes)" = $(( 9 * MiB + 512 )) ]
	# Within each half it is offloaded.
	copy_mark /dev/mapper/dmt-a
	copy_and_verify /dev/mapper/dmt-a $(( 150 * MiB )) /dev/mapper/dmt-a $(( 200 * MiB )) $(( 3 * MiB ))
	[ "$(copy_stat_since offloaded_bytes)" = $(( 3 * MiB )) ]
}

@test "between two dm-linear devices on one null_blk: offloaded (the LVs of one PV case)" {
	nullb_load copy_max_bytes=$MiB
	linear dmt-a /dev/nullb0 16 128
	linear dmt-b /dev/nullb0 400 128
	copy_mark /dev/mapper/dmt-b
	local len=$(( 6 * MiB + 8192 ))
	copy_and_verify -r /dev/nullb0 /dev/mapper/dmt-a $(( 2 * MiB )) /dev/mapper/dmt-b $(( 20 * MiB )) $len
	[ "$COPY_RW" = "0 0" ]
	[ "$(copy_stat_since offloaded_bytes)" = $len ]
	copy_and_verify /dev/mapper/dmt-b $(( 1 * MiB )) /dev/mapper/dmt-a $(( 60 * MiB )) $(( 2 * MiB ))
}

@test "between dm-linear and a device it does not sit on: emulated, correct" {
	nullb_load copy_max_bytes=$MiB
	nullb_cfg other copy_max_bytes=$MiB
	linear dmt-a /dev/nullb0 16 128
	copy_mark /dev/other
	copy_and_verify /dev/mapper/dmt-a $(( 2 * MiB )) /dev/other $(( 20 * MiB )) $(( 2 * MiB ))
	[ "$(copy_stat_since offloaded_bytes)" = 0 ]
	[ "$(copy_stat_since emulated_bytes)" = $(( 2 * MiB )) ]
}

@test "dm-linear over dm-linear over null_blk still offloads" {
	nullb_load copy_max_bytes=$MiB
	linear dmt-low /dev/nullb0 32 256
	linear dmt-top /dev/mapper/dmt-low 16 128
	[ "$(dm_queue dmt-top copy_max_hw_bytes)" = $MiB ]
	copy_mark /dev/mapper/dmt-top
	local len=$(( 3 * MiB ))
	copy_and_verify -r /dev/nullb0 /dev/mapper/dmt-top 0 /dev/mapper/dmt-top $(( 64 * MiB )) $len
	[ "$COPY_RW" = "0 0" ]
	dev_expect /dev/nullb0 $(( (32 + 16 + 64) * MiB )) "$BATS_TEST_TMPDIR/src"
	[ "$(copy_stat_since offloaded_bytes)" = $len ]
}

@test "copy_max_bytes 0 on the dm device: emulated; the setting survives a table reload" {
	nullb_load copy_max_bytes=$MiB
	linear dmt-a /dev/nullb0 16 128
	echo 0 >"/sys/block/$(dm_dev dmt-a)/queue/copy_max_bytes"
	copy_mark /dev/mapper/dmt-a
	copy_and_verify /dev/mapper/dmt-a $(( 2 * MiB )) /dev/mapper/dmt-a $(( 40 * MiB )) $(( 2 * MiB ))
	[ "$(copy_stat_since offloaded_bytes)" = 0 ]
	dmsetup reload dmt-a --table "0 $(( 128 * SECTORS_PER_MIB )) linear /dev/nullb0 $(( 16 * SECTORS_PER_MIB ))"
	dmsetup resume dmt-a
	[ "$(dm_queue dmt-a copy_max_hw_bytes)" = $MiB ]
	[ "$(dm_queue dmt-a copy_max_bytes)" = 0 ]
	echo $MiB >"/sys/block/$(dm_dev dmt-a)/queue/copy_max_bytes"
	copy_mark /dev/mapper/dmt-a
	copy_and_verify /dev/mapper/dmt-a $(( 2 * MiB )) /dev/mapper/dmt-a $(( 40 * MiB )) $(( 2 * MiB ))
	[ "$(copy_stat_since offloaded_bytes)" = $(( 2 * MiB )) ]
}

@test "the limit follows the device below on the next table load" {
	nullb_cfg low copy_max_bytes=$MiB
	linear dmt-a /dev/low 0 64
	[ "$(dm_queue dmt-a copy_max_hw_bytes)" = $MiB ]
	echo 65536 >/sys/block/low/queue/copy_max_bytes
	# Not before a reload, as for every other limit; meanwhile the
	# copies sized for the old limit are refused below and emulated.
	[ "$(dm_queue dmt-a copy_max_hw_bytes)" = $MiB ]
	copy_mark /dev/mapper/dmt-a
	copy_and_verify /dev/mapper/dmt-a $(( 1 * MiB )) /dev/mapper/dmt-a $(( 30 * MiB )) $(( 2 * MiB ))
	[ "$(copy_stat_since emulated_bytes)" = $(( 2 * MiB )) ]
	dmsetup reload dmt-a --table "0 $(( 64 * SECTORS_PER_MIB )) linear /dev/low 0"
	dmsetup resume dmt-a
	# After it, the new limit, and offloaded in its chunks.
	[ "$(dm_queue dmt-a copy_max_hw_bytes)" = 65536 ]
	copy_mark /dev/mapper/dmt-a
	copy_and_verify /dev/mapper/dmt-a $(( 1 * MiB )) /dev/mapper/dmt-a $(( 30 * MiB )) $(( 2 * MiB ))
	[ "$(copy_stat_since offloaded_bytes)" = $(( 2 * MiB )) ]
}

@test "suspend/resume and reloads in the middle of a stream of copies lose and corrupt nothing" {
	nullb_load copy_max_bytes=$(( 64 * 1024 ))
	local n len=$(( 3 * MiB )) i table
	n=$(long_or 8 16)
	table="0 $(( 256 * SECTORS_PER_MIB )) linear /dev/nullb0 $(( 8 * SECTORS_PER_MIB ))"
	dmsetup create dmt-a --table "$table"
	stream_setup /dev/mapper/dmt-a $n $len
	copy_stream /dev/mapper/dmt-a $n $len &
	local pid=$!
	for i in $(seq 1 "$(long_or 5 10)"); do
		dmsetup suspend dmt-a
		dmsetup resume dmt-a
		dmsetup suspend --noflush dmt-a
		dmsetup reload dmt-a --table "$table"
		dmsetup resume dmt-a
	done
	wait $pid
	stream_check /dev/mapper/dmt-a $n $len
}

@test "a reload that moves the source during a long copy: every piece holds the old or the new data" {
	nullb_load copy_max_bytes=$(( 64 * 1024 ))
	D=$BATS_TEST_TMPDIR
	local len=$(( 32 * MiB )) i
	# Two copies of the source area on the disk, A at 0 and B at 512 MiB,
	# with different data; the device maps A, and a reload switches it to
	# B (as pvmove would) while a long copy runs.
	random_file "$D/a" $len
	random_file "$D/b" $len
	dev_write /dev/nullb0 0 "$D/a"
	dev_write /dev/nullb0 $(( 512 * MiB )) "$D/b"
	dm_create dmt-a "0 $(( 64 * SECTORS_PER_MIB )) linear /dev/nullb0 0" \
		"$(( 64 * SECTORS_PER_MIB )) $(( 64 * SECTORS_PER_MIB )) linear /dev/nullb0 $(( 256 * SECTORS_PER_MIB ))"
	"$COPY_RANGE" -d /dev/mapper/dmt-a 0 /dev/mapper/dmt-a $(( 64 * MiB )) $len >"$D/out" 2>&1 &
	local pid=$!
	dm_reload dmt-a "0 $(( 64 * SECTORS_PER_MIB )) linear /dev/nullb0 $(( 512 * SECTORS_PER_MIB ))" \
		"$(( 64 * SECTORS_PER_MIB )) $(( 64 * SECTORS_PER_MIB )) linear /dev/nullb0 $(( 256 * SECTORS_PER_MIB ))"
	wait $pid
	[ "$(cat "$D/out")" = "copied=$len" ]
	# Every 64 KiB piece of the destination holds the same piece of A
	# (copied before the switch) or of B (after), never anything else.
	local piece=65536 mixed
	dev_read /dev/nullb0 $(( 256 * MiB )) $len "$D/got"
	mixed=$(/usr/bin/python3 - "$D/a" "$D/b" "$D/got" $piece <<-EOF
	import sys
	a, b, got = (open(f, 'rb').read() for f in sys.argv[1:4])
	piece = int(sys.argv[4])
	bad = [i for i in range(0, len(a), piece)
	       if got[i:i + piece] not in (a[i:i + piece], b[i:i + piece])]
	print(len(bad))
	EOF
	)
	[ "$mixed" = 0 ]
}

# inflight_test SUSPEND RELOAD: copy 64 KiB inside dmt-a over a null_blk
# that completes every command 2 s late; while the copy is at null_blk (one
# request, the destination half; the source half waits for it above),
# suspend the device with SUSPEND ("" or --noflush), reload the same table
# if RELOAD is 1, and resume. Checks the data and the bytes around the
# destination; sets INFLIGHT_RW to the sectors null_blk read and wrote,
# INFLIGHT_OFFLOADED to the bytes dmt-a's copy_stat counts as offloaded,
# and INFLIGHT_SUSPEND_MS to how long the suspend took.
inflight_test() {
	local suspend=$1 reload=$2 len=65536 base=$MiB
	# source, 64 KiB before the destination, destination, 64 KiB after:
	# written and read back in one piece each, since every command takes
	# 2 s.
	local src=$base dst=$(( base + 2 * len ))
	local table="0 $(( 64 * SECTORS_PER_MIB )) linear /dev/nullb0 $(( 8 * SECTORS_PER_MIB ))"
	local d=$BATS_TEST_TMPDIR i pid t0

	nullb_load copy_max_bytes=$MiB irqmode=2 completion_nsec=2000000000
	dmsetup create dmt-a --table "$table"
	random_file "$d/area" $(( 4 * len ))
	dev_write /dev/mapper/dmt-a $base "$d/area"
	# What the area must hold after the copy.
	{ head -c $(( 2 * len )) "$d/area"; head -c $len "$d/area"
	  tail -c $len "$d/area"; } >"$d/expect"
	rw_mark /dev/nullb0
	copy_mark /dev/mapper/dmt-a

	"$COPY_RANGE" -d /dev/mapper/dmt-a $src /dev/mapper/dmt-a $dst $len >"$d/out" 2>&1 &
	pid=$!
	# The copy has reached null_blk: in flight there for 2 s.
	for i in $(seq 1 300); do
		[ "$(awk '{ print $1 + $2 }' /sys/block/nullb0/inflight)" = 0 ] || break
		sleep 0.01
	done
	[ "$i" -lt 300 ] || fail "the copy never reached null_blk"
	t0=$(date +%s%N)
	dmsetup suspend $suspend dmt-a
	INFLIGHT_SUSPEND_MS=$(( ($(date +%s%N) - t0) / 1000000 ))
	[ "$reload" = 0 ] || dmsetup reload dmt-a --table "$table"
	dmsetup resume dmt-a
	wait $pid
	[ "$(cat "$d/out")" = "copied=$len" ] || fail "copy-range: $(cat "$d/out")"
	INFLIGHT_RW=$(rw_since)
	INFLIGHT_OFFLOADED=$(copy_stat_since offloaded_bytes)
	dev_expect /dev/mapper/dmt-a $base "$d/expect"
	echo "suspend took $INFLIGHT_SUSPEND_MS ms; read/written below: $INFLIGHT_RW"
}

@test "a copy in flight across dmsetup suspend: the suspend waits for it, the copy is offloaded" {
	inflight_test "" 0
	[ "$INFLIGHT_RW" = "0 0" ]
	[ "$INFLIGHT_OFFLOADED" = 65536 ]
	# It waited for the copy's request at null_blk (2 s from its start).
	[ "$INFLIGHT_SUSPEND_MS" -ge 500 ]
}

@test "a table swapped while a copy is in flight: the copy ends before the swap, offloaded" {
	inflight_test "" 1
	[ "$INFLIGHT_RW" = "0 0" ]
	[ "$INFLIGHT_OFFLOADED" = 65536 ]
}

@test "dmsetup suspend --noflush with a copy in flight: no hang, the data right" {
	inflight_test --noflush 1
	# Completed by the device, or refused and emulated: never lost.
	[ "$INFLIGHT_OFFLOADED" = 65536 ] || [ "$INFLIGHT_RW" = "128 128" ]
}

# A copy through dm-top (linear) over dm-low (linear) over a slow null_blk;
# dm-low is suspended, reloaded so that the source area maps elsewhere (to
# B instead of A), and resumed while the copy is in flight. The copy ran
# through the old table as a whole (A), never partly through each; a copy
# made after the resume reads B.
@test "dm-low reloaded under dm-top while a copy through both is in flight: every copy reads one table" {
	local len=65536 d=$BATS_TEST_TMPDIR i pid
	local mib=$SECTORS_PER_MIB
	nullb_load copy_max_bytes=$MiB irqmode=2 completion_nsec=1000000000
	random_file "$d/a" $len
	random_file "$d/b" $len
	dev_write /dev/nullb0 0 "$d/a"
	dev_write /dev/nullb0 $(( 32 * MiB )) "$d/b"
	# dm-low: 0-16 MiB -> A area (0), 16-32 MiB -> destination area
	dmsetup create dmt-low --table "0 $(( 16 * mib )) linear /dev/nullb0 0
$(( 16 * mib )) $(( 16 * mib )) linear /dev/nullb0 $(( 64 * mib ))"
	dmsetup create dmt-top --table "0 $(( 32 * mib )) linear /dev/mapper/dmt-low 0"
	copy_mark /dev/mapper/dmt-top
	"$COPY_RANGE" -d /dev/mapper/dmt-top 0 /dev/mapper/dmt-top $(( 16 * MiB )) $len >"$d/out" 2>&1 &
	pid=$!
	for i in $(seq 1 300); do
		[ "$(awk '{ print $1 + $2 }' /sys/block/nullb0/inflight)" = 0 ] || break
		sleep 0.01
	done
	[ "$i" -lt 300 ] || fail "the copy never reached null_blk"
	dmsetup suspend dmt-low
	dmsetup reload dmt-low --table "0 $(( 16 * mib )) linear /dev/nullb0 $(( 32 * mib ))
$(( 16 * mib )) $(( 16 * mib )) linear /dev/nullb0 $(( 64 * mib ))"
	dmsetup resume dmt-low
	wait $pid
	[ "$(cat "$d/out")" = "copied=$len" ] || fail "copy-range: $(cat "$d/out")"
	# The copy was in flight when the suspend began: it ran through the
	# old table, whole.
	dev_expect /dev/nullb0 $(( 64 * MiB )) "$d/a"
	[ "$(copy_stat_since offloaded_bytes)" = $len ]
	# Through the new table now.
	"$COPY_RANGE" -d /dev/mapper/dmt-top 0 /dev/mapper/dmt-top $(( 16 * MiB )) $len
	dev_expect /dev/nullb0 $(( 64 * MiB )) "$d/b"
}

@test "reloads of an unrelated dm device during a stream of copies: the copies stay offloaded" {
	nullb_load copy_max_bytes=$(( 64 * 1024 ))
	local n=8 len=$(( 3 * MiB )) reloads rounds=0 pid copied offloaded
	# A fixed number of reloads (1000 in the long form), with copies
	# running all the while.
	reloads=$(long_or 100 1000)
	dmsetup create dmt-a --table "0 $(( 256 * SECTORS_PER_MIB )) linear /dev/nullb0 $(( 8 * SECTORS_PER_MIB ))"
	dmsetup create dmt-other --table "0 $(( 8 * SECTORS_PER_MIB )) linear /dev/nullb0 0"
	stream_setup /dev/mapper/dmt-a $n $len
	copy_mark /dev/mapper/dmt-a
	(
		for (( i = 0; i < reloads; i++ )); do
			dmsetup suspend dmt-other &&
			dmsetup reload dmt-other --table "0 $(( 8 * SECTORS_PER_MIB )) linear /dev/nullb0 0" &&
			dmsetup resume dmt-other || exit 1
		done
	) &
	pid=$!
	while kill -0 $pid 2>/dev/null; do
		copy_stream /dev/mapper/dmt-a $n $len
		rounds=$(( rounds + 1 ))
	done
	wait $pid || fail "a reload of dmt-other failed"
	stream_check /dev/mapper/dmt-a $n $len
	offloaded=$(copy_stat_since offloaded_bytes)
	copied=$(( rounds * n * len ))
	echo "$reloads reloads of dmt-other during $rounds rounds of $n copies; $offloaded of $copied bytes offloaded"
	[ $(( offloaded * 100 )) -ge $(( copied * 99 )) ]
}

@test "copy_stat counts a copy on every layer it passed: dm-linear over dm-linear over null_blk" {
	nullb_load copy_max_bytes=$MiB
	local len=$(( 4 * MiB )) top low disk
	dmsetup create dmt-low --table "0 $(( 256 * SECTORS_PER_MIB )) linear /dev/nullb0 $(( 8 * SECTORS_PER_MIB ))"
	dmsetup create dmt-top --table "0 $(( 128 * SECTORS_PER_MIB )) linear /dev/mapper/dmt-low $(( 64 * SECTORS_PER_MIB ))"
	low=$(copy_stat /dev/mapper/dmt-low device_bytes)
	disk=$(copy_stat /dev/nullb0 device_bytes)
	copy_mark /dev/mapper/dmt-top
	copy_and_verify /dev/mapper/dmt-top 0 /dev/mapper/dmt-top $(( 32 * MiB )) $len
	for d in dmt-top dmt-low; do echo "$d: $(disk_attr /dev/mapper/$d copy_stat)"; done
	echo "nullb0: $(disk_attr /dev/nullb0 copy_stat)"
	# The call is counted where it was made; the copies the disk executed
	# on the way down, once on each device.
	[ "$(copy_stat_since offloaded_bytes)" = $len ]
	[ "$(copy_stat_since device_bytes)" = $len ]
	[ "$(copy_stat_since device_copies)" = 4 ]
	[ "$(copy_stat /dev/mapper/dmt-low device_bytes)" = $(( low + len )) ]
	[ "$(copy_stat /dev/mapper/dmt-low offloaded_bytes)" = 0 ]
	[ "$(copy_stat /dev/nullb0 device_bytes)" = $(( disk + len )) ]
	[ "$(copy_stat /dev/nullb0 offloaded_bytes)" = 0 ]
}
