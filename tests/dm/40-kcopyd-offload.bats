#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# dm-kcopyd offload (kernel patch 0013): dm-clone hydration, dm-thin's
# break-sharing copies and dm-raid1's resync, which go through dm-kcopyd,
# are offloaded when
# their devices copy (dm-linear over a null_blk with copy) and go through
# kcopyd's pages as before when they do not (copy_max_bytes 0). The
# destination's copy_stat and null_blk's read counter tell which; the data
# is checked in the destination and around it every time.

# The long form's 1000 dm-clone rounds took 484 s on the normal kernel
# under TCG (2026-12-07), past the default timeout.
[ "${DMCOPY_LONG:-0}" != 1 ] || DMCOPY_TEST_TIMEOUT=1200

load ../lib/common
load ../lib/dm

MiB=1048576
SECTORS_PER_MIB=2048

setup() {
	guest_setup
}

teardown() {
	dm_cleanup
	nullb_unload || true
	guest_teardown
}

# zero_start DEV: metadata devices must start zeroed to be formatted.
zero_start() {
	dd if=/dev/zero of="$1" bs=1M count=1 oflag=direct status=none
}

# wait_hydrated NAME: until dm-clone says every region is hydrated.
wait_hydrated() {
	local i v
	for (( i = 0; i < 600; i++ )); do
		v=$(dm_status_field "$1" 4)
		[ "${v%/*}" = "${v#*/}" ] && return 0
		sleep 0.2
	done
	fail "$1 not hydrated after 120 s: $(dmsetup status "$1")"
}

# clone_run: hydrate a 32 MiB dm-clone whose source and destination are
# dm-linear devices over nullb0; checks the data. Leaves the counters of
# the destination in CLONE_OFFLOADED (bytes) and null_blk's sectors read
# during hydration in CLONE_READ.
clone_run() {
	local d=$BATS_TEST_TMPDIR size=32 rw
	linear dmt-src /dev/nullb0 16 $size
	linear dmt-dst /dev/nullb0 64 $size
	linear dmt-meta /dev/nullb0 128 4
	zero_start /dev/mapper/dmt-meta
	random_file "$d/golden" $(( size * MiB ))
	random_file "$d/before" $MiB
	random_file "$d/after" $MiB
	dev_write /dev/mapper/dmt-src 0 "$d/golden"
	# Around the destination, on the disk: nothing there may change.
	dev_write /dev/nullb0 $(( 63 * MiB )) "$d/before"
	dev_write /dev/nullb0 $(( (64 + size) * MiB )) "$d/after"

	copy_mark /dev/mapper/dmt-dst
	rw_mark /dev/nullb0
	dmsetup create dmt-clone --table "0 $(( size * SECTORS_PER_MIB )) clone /dev/mapper/dmt-meta /dev/mapper/dmt-dst /dev/mapper/dmt-src 1024"
	wait_hydrated dmt-clone
	CLONE_OFFLOADED=$(copy_stat_since offloaded_bytes)
	rw=$(rw_since)
	CLONE_READ=${rw%% *}
	echo "hydrated: $CLONE_OFFLOADED bytes offloaded into dmt-dst, $CLONE_READ sectors read from null_blk"

	dev_expect /dev/mapper/dmt-clone 0 "$d/golden"
	dmsetup remove dmt-clone
	dev_expect /dev/mapper/dmt-dst 0 "$d/golden"
	dev_expect /dev/mapper/dmt-src 0 "$d/golden"
	dev_expect /dev/nullb0 $(( 63 * MiB )) "$d/before"
	dev_expect /dev/nullb0 $(( (64 + size) * MiB )) "$d/after"
}

@test "dm-clone hydration on a device that copies is offloaded" {
	nullb_load copy_max_bytes=$MiB
	clone_run
	[ "$CLONE_OFFLOADED" = $(( 32 * MiB )) ]
	# Only dm-clone's metadata, never the 32 MiB of data.
	[ "$CLONE_READ" -lt $(( 4 * SECTORS_PER_MIB )) ]
}

@test "dm-clone hydration on a device without copy reads and writes as before" {
	nullb_load copy_max_bytes=0
	[ "$(queue_attr /dev/nullb0 copy_max_bytes)" = 0 ]
	clone_run
	[ "$CLONE_OFFLOADED" = 0 ]
	[ "$CLONE_READ" -ge $(( 32 * SECTORS_PER_MIB )) ]
}

@test "dm-clone hydration with copy_max_bytes 0 on the source device reads and writes" {
	nullb_load copy_max_bytes=$MiB
	local d=$BATS_TEST_TMPDIR
	linear dmt-src /dev/nullb0 16 32
	# Offload turned off where kcopyd looks, like an administrator would.
	echo 0 >"/sys/block/$(dm_dev dmt-src)/queue/copy_max_bytes"
	linear dmt-dst /dev/nullb0 64 32
	linear dmt-meta /dev/nullb0 128 4
	zero_start /dev/mapper/dmt-meta
	random_file "$d/golden" $(( 32 * MiB ))
	dev_write /dev/mapper/dmt-src 0 "$d/golden"
	copy_mark /dev/mapper/dmt-dst
	rw_mark /dev/nullb0
	dmsetup create dmt-clone --table "0 $(( 32 * SECTORS_PER_MIB )) clone /dev/mapper/dmt-meta /dev/mapper/dmt-dst /dev/mapper/dmt-src 1024"
	wait_hydrated dmt-clone
	[ "$(copy_stat_since offloaded_bytes)" = 0 ]
	local rw
	rw=$(rw_since)
	[ "${rw%% *}" -ge $(( 32 * SECTORS_PER_MIB )) ]
	dev_expect /dev/mapper/dmt-clone 0 "$d/golden"
}

# thin_run: a thin volume with 16 MiB of random data in 512 KiB blocks,
# a snapshot of it, and 4 KiB written into 4 of the snapshot's blocks,
# each of which dm-thin copies first (breaking sharing). Checks both
# volumes; leaves the pool data device's offloaded bytes in
# THIN_OFFLOADED and null_blk's sectors read meanwhile in THIN_READ.
thin_run() {
	local d=$BATS_TEST_TMPDIR size=16 rw i
	linear dmt-tmeta /dev/nullb0 0 8
	linear dmt-tdata /dev/nullb0 64 128
	zero_start /dev/mapper/dmt-tmeta
	dmsetup create dmt-pool --table "0 $(( 128 * SECTORS_PER_MIB )) thin-pool /dev/mapper/dmt-tmeta /dev/mapper/dmt-tdata 1024 0 1 skip_block_zeroing"
	dmsetup message dmt-pool 0 "create_thin 0"
	dmsetup create dmt-thin --table "0 $(( size * SECTORS_PER_MIB )) thin /dev/mapper/dmt-pool 0"
	random_file "$d/origin" $(( size * MiB ))
	dev_write /dev/mapper/dmt-thin 0 "$d/origin"
	dmsetup suspend dmt-thin
	dmsetup message dmt-pool 0 "create_snap 1 0"
	dmsetup resume dmt-thin
	dmsetup create dmt-snap --table "0 $(( size * SECTORS_PER_MIB )) thin /dev/mapper/dmt-pool 1"

	cp "$d/origin" "$d/snap"
	# kcopyd copies from the pool device to itself: counted there.
	copy_mark /dev/mapper/dmt-pool
	rw_mark /dev/nullb0
	for i in 1 5 9 30; do
		random_file "$d/w$i" 4096
		# 4 KiB into the middle of block i: the rest of it is copied.
		dev_write /dev/mapper/dmt-snap $(( i * 512 * 1024 + 8192 )) "$d/w$i"
		dd if="$d/w$i" of="$d/snap" bs=4096 seek=$(( i * 128 + 2 )) \
			conv=notrunc status=none
	done
	THIN_OFFLOADED=$(copy_stat_since offloaded_bytes)
	rw=$(rw_since)
	THIN_READ=${rw%% *}
	echo "broke sharing: $THIN_OFFLOADED bytes offloaded in dmt-pool, $THIN_READ sectors read from null_blk"

	dev_expect /dev/mapper/dmt-snap 0 "$d/snap"
	dev_expect /dev/mapper/dmt-thin 0 "$d/origin"
}

@test "dm-thin breaks sharing with offloaded copies on a device that copies" {
	nullb_load copy_max_bytes=$MiB
	thin_run
	[ "$THIN_OFFLOADED" = $(( 4 * 512 * 1024 )) ]
	[ "$THIN_READ" -lt 1024 ]
}

@test "dm-thin breaks sharing by reading and writing on a device without copy" {
	nullb_load copy_max_bytes=0
	thin_run
	[ "$THIN_OFFLOADED" = 0 ]
	[ "$THIN_READ" -ge $(( 4 * 1024 )) ]
}

@test "a bad block under an offloaded hydration: dm-clone reports it, the rest is hydrated" {
	nullb_cfg bad copy_max_bytes=$MiB
	local d=$BATS_TEST_TMPDIR i v mark
	dmsetup create dmt-src --table "0 $(( 32 * SECTORS_PER_MIB )) linear /dev/bad $(( 16 * SECTORS_PER_MIB ))"
	dmsetup create dmt-dst --table "0 $(( 32 * SECTORS_PER_MIB )) linear /dev/bad $(( 64 * SECTORS_PER_MIB ))"
	dmsetup create dmt-meta --table "0 $(( 4 * SECTORS_PER_MIB )) linear /dev/bad $(( 128 * SECTORS_PER_MIB ))"
	zero_start /dev/mapper/dmt-meta
	random_file "$d/golden" $(( 32 * MiB ))
	dev_write /dev/mapper/dmt-src 0 "$d/golden"
	# One 4 KiB block of the source's 10th 512 KiB region cannot be read.
	local bad=$(( (16 * MiB + 9 * 512 * 1024 + 4096) / 512 ))
	echo "+$bad-$(( bad + 7 ))" >/sys/kernel/config/nullb/bad/badblocks
	mark=$(dmesg_here)
	dmsetup create dmt-clone --table "0 $(( 32 * SECTORS_PER_MIB )) clone /dev/mapper/dmt-meta /dev/mapper/dmt-dst /dev/mapper/dmt-src 1024"
	for (( i = 0; i < 600; i++ )); do
		v=$(dm_status_field dmt-clone 4)
		# Every region but the bad one, and the error logged.
		[ "${v%/*}" = $(( ${v#*/} - 1 )) ] &&
			dmesg_since "$mark" | grep -q 'clone: .*hydration failed' && break
		sleep 0.2
	done
	echo "status: $(dmsetup status dmt-clone)"
	dmesg_since "$mark" | grep 'clone' | head -n 3
	dmesg_since "$mark" | grep -q 'clone: .*hydration failed'
	[ "$(dm_status_field dmt-clone 4)" = "63/64" ]
	# Everything but the bad region reads back as the golden image.
	head -c $(( 9 * 512 * 1024 )) "$d/golden" >"$d/head"
	tail -c +$(( 10 * 512 * 1024 + 1 )) "$d/golden" >"$d/tail"
	dev_expect /dev/mapper/dmt-dst 0 "$d/head"
	dev_expect /dev/mapper/dmt-dst $(( 10 * 512 * 1024 )) "$d/tail"
	dmsetup remove dmt-clone
}

@test "dm-clone created, hydrated and removed many times with 4 KiB regions, some removed mid-hydration: data right, no bug" {
	# Each offloaded region completes in kcopyd_offload_endio(); removing
	# the device destroys the kcopyd client as soon as its last job is
	# done. A completion that touched the client after handing over its
	# job would be a use after free (KASAN on the debug kernel).
	nullb_load copy_max_bytes=$MiB
	local d=$BATS_TEST_TMPDIR size rounds i offloaded
	# The long form's 1000 rounds on the debug kernel: 1 MiB, still 256
	# regions a round, so that they fit in a session's VM run.
	rounds=$(long_or 20 1000)
	size=$(long_or 4 1)
	linear dmt-src /dev/nullb0 16 $size
	linear dmt-dst /dev/nullb0 64 $size
	linear dmt-meta /dev/nullb0 128 4
	random_file "$d/golden" $(( size * MiB ))
	random_file "$d/before" $MiB
	random_file "$d/after" $MiB
	dev_write /dev/mapper/dmt-src 0 "$d/golden"
	dev_write /dev/nullb0 $(( 63 * MiB )) "$d/before"
	dev_write /dev/nullb0 $(( (64 + size) * MiB )) "$d/after"
	copy_mark /dev/mapper/dmt-dst
	for (( i = 0; i < rounds; i++ )); do
		zero_start /dev/mapper/dmt-meta
		dmsetup create dmt-clone --table "0 $(( size * SECTORS_PER_MIB )) clone /dev/mapper/dmt-meta /dev/mapper/dmt-dst /dev/mapper/dmt-src 8 0 2 hydration_threshold 64"
		if (( i % 2 )); then
			# Gone while regions are being copied.
			dmsetup remove dmt-clone
		else
			wait_hydrated dmt-clone
			dmsetup remove dmt-clone
			dev_expect /dev/mapper/dmt-dst 0 "$d/golden"
		fi
		# the long form says how far it is (fd 3: bats' TAP stream)
		if (( rounds > 100 && (i + 1) % 100 == 0 )); then
			echo "# dm-clone round $(( i + 1 )) of $rounds" >&3
		fi
	done
	offloaded=$(copy_stat_since offloaded_bytes)
	echo "$rounds rounds, $offloaded bytes offloaded into dmt-dst"
	[ "$offloaded" -ge $(( rounds / 2 * size * MiB )) ]
	dev_expect /dev/mapper/dmt-src 0 "$d/golden"
	dev_expect /dev/nullb0 $(( 63 * MiB )) "$d/before"
	dev_expect /dev/nullb0 $(( (64 + size) * MiB )) "$d/after"
}

# mirror_table DISK A B MIB [FEATURE]: a dm-raid1 line of MIB MiB with two
# legs at MiB A and B of DISK, a core log of 512 KiB regions, resyncing.
mirror_table() {
	local feat=${5:+1 $5}
	echo "0 $(( $4 * SECTORS_PER_MIB )) mirror core 1 1024 2 $1 $(( $2 * SECTORS_PER_MIB )) $1 $(( $3 * SECTORS_PER_MIB )) ${feat:-0}"
}

@test "dm-raid1 resync between two legs on one disk that copies is offloaded: the leg gets the data, nothing around it moves" {
	# recover() in dm-raid1.c copies each region from the default leg to
	# the others with one kcopyd job: with two legs, one destination.
	nullb_load copy_max_bytes=$MiB
	local d=$BATS_TEST_TMPDIR size=32 rw
	random_file "$d/golden" $(( size * MiB ))
	random_file "$d/old" $(( size * MiB ))
	random_file "$d/before" $MiB
	random_file "$d/after" $MiB
	dev_write /dev/nullb0 $(( 16 * MiB )) "$d/golden"
	dev_write /dev/nullb0 $(( 63 * MiB )) "$d/before"
	dev_write /dev/nullb0 $(( 64 * MiB )) "$d/old"
	dev_write /dev/nullb0 $(( (64 + size) * MiB )) "$d/after"
	copy_mark /dev/nullb0
	rw_mark /dev/nullb0
	dmsetup create dmt-mirror --table "$(mirror_table /dev/nullb0 16 64 $size)"
	mirror_wait dmt-mirror 64/64
	rw=$(rw_since)
	echo "resynced: $(dmsetup status dmt-mirror); $(copy_stat_since offloaded_bytes) bytes offloaded, $rw sectors read and written"
	[ "$(dm_status_field dmt-mirror 6)" = AA ]
	[ "$(copy_stat_since offloaded_bytes)" = $(( size * MiB )) ]
	# Nothing of the 32 MiB went through kcopyd's pages.
	[ "${rw%% *}" -lt $SECTORS_PER_MIB ]
	[ "${rw#* }" -lt $SECTORS_PER_MIB ]
	dev_expect /dev/mapper/dmt-mirror 0 "$d/golden"
	dmsetup remove dmt-mirror
	dev_expect /dev/nullb0 $(( 64 * MiB )) "$d/golden"
	dev_expect /dev/nullb0 $(( 16 * MiB )) "$d/golden"
	dev_expect /dev/nullb0 $(( 63 * MiB )) "$d/before"
	dev_expect /dev/nullb0 $(( (64 + size) * MiB )) "$d/after"
}

@test "dm-raid1 with handle_errors: a bad block in leg 0 under an offloaded resync fails the leg (S), every other region is copied" {
	nullb_cfg bad copy_max_bytes=$MiB
	local d=$BATS_TEST_TMPDIR size=32 mark
	random_file "$d/golden" $(( size * MiB ))
	dev_write /dev/bad $(( 16 * MiB )) "$d/golden"
	# One 4 KiB block of leg 0's 10th 512 KiB region cannot be read.
	local bad=$(( (16 * MiB + 9 * 512 * 1024 + 4096) / 512 ))
	echo "+$bad-$(( bad + 7 ))" >/sys/kernel/config/nullb/bad/badblocks
	copy_mark /dev/bad
	mark=$(dmesg_here)
	dmsetup create dmt-mirror --table "$(mirror_table /dev/bad 16 64 $size handle_errors)"
	mirror_wait dmt-mirror 63/64 failed
	echo "status: $(dmsetup status dmt-mirror)"
	dmesg_since "$mark" | grep 'raid1\|mirror' | head -n 5
	# The read error of the default leg during recovery is a sync error.
	[ "$(dm_status_field dmt-mirror 6)" = SA ]
	dmesg_since "$mark" | grep -q 'Unable to read primary mirror during recovery'
	# The other 63 regions went to leg 1 by the device's copy.
	[ "$(copy_stat_since offloaded_bytes)" -ge $(( 63 * 512 * 1024 )) ]
	dmsetup remove dmt-mirror
	head -c $(( 9 * 512 * 1024 )) "$d/golden" >"$d/head"
	tail -c +$(( 10 * 512 * 1024 + 1 )) "$d/golden" >"$d/tail"
	dev_expect /dev/bad $(( 64 * MiB )) "$d/head"
	dev_expect /dev/bad $(( 64 * MiB + 10 * 512 * 1024 )) "$d/tail"
}
