#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# The copy target (dm-copy.ko): serves copies itself, offloading them to
# the device below when it can and copying with dm-kcopyd when it cannot,
# in each mode, within and across targets and devices; status counters,
# table lines that recreate the device, messages, suspend and reload in
# the middle of copies, stacking, module references, and every bad table
# and message refused with its own error and nothing left behind.

load ../lib/common
load ../lib/dm
load ../lib/nvme

MiB=1048576
SECTORS_PER_MIB=2048

setup() {
	guest_setup
	[ -x "$COPY_RANGE" ] || fail "$COPY_RANGE not built (make -C tests/helpers)"
	dm_copy_load
}

teardown() {
	dm_cleanup
	nullb_unload || true
	guest_teardown
}

# copy_dev NAME DEV OFFSET_MIB SIZE_MIB [FEATURE...]: a one-target copy
# device; FEATUREs are passed with their count.
copy_dev() {
	local name=$1 dev=$2 off=$3 size=$4
	shift 4
	local features=""
	[ $# -eq 0 ] || features=" $# $*"
	dmsetup create "$name" --table \
		"0 $(( size * SECTORS_PER_MIB )) copy $dev $(( off * SECTORS_PER_MIB ))$features"
}

# copy_counters NAME: "offloaded_copies offloaded_bytes emulated_copies
# emulated_bytes errors inflight" from the status line.
copy_counters() {
	local -a v
	read -r -a v <<<"$(dmsetup status "$1")"
	echo "${v[*]:4:6}"
}

@test "over null_blk, mode auto: copies are offloaded to it, counted as offloaded" {
	nullb_load copy_max_bytes=$MiB
	copy_dev dmt-c /dev/nullb0 16 512
	# Its own limit, larger than null_blk's.
	[ "$(dm_queue dmt-c copy_max_hw_bytes)" = $(( 8 * MiB )) ]
	local len=$(( 6 * MiB + 4096 ))
	copy_and_verify -r /dev/nullb0 /dev/mapper/dmt-c $(( 2 * MiB )) /dev/mapper/dmt-c $(( 100 * MiB )) $len
	[ "$COPY_RW" = "0 0" ]
	dev_expect /dev/nullb0 $(( 116 * MiB )) "$BATS_TEST_TMPDIR/src"
	# One copy request (6 MiB + 4 KiB < 8 MiB), offloaded.
	[ "$(copy_counters dmt-c)" = "1 $len 0 0 0 0" ]
	[ "$(dm_status_field dmt-c 1)" = auto ]
	copy_and_verify /dev/mapper/dmt-c $(( 20 * MiB )) /dev/mapper/dmt-c $(( 200 * MiB )) $(( 20 * MiB + 512 ))
	[ "$(dm_status_field dmt-c 6)" = 0 ]
}

@test "over null_blk, mode emulate: copies go through dm-kcopyd, counted as emulated" {
	nullb_load copy_max_bytes=$MiB
	copy_dev dmt-c /dev/nullb0 16 512 mode emulate
	local len=$(( 3 * MiB ))
	copy_and_verify -r /dev/nullb0 /dev/mapper/dmt-c $(( 2 * MiB )) /dev/mapper/dmt-c $(( 100 * MiB )) $len
	[ "$(copy_counters dmt-c)" = "0 0 1 $len 0 0" ]
	# dm-kcopyd read and wrote it, once.
	[ "$COPY_RW" = "$(( len / 512 )) $(( len / 512 ))" ]
}

@test "copy_stat: a dm-kcopyd emulation through the copy target counts as emulated, never as executed" {
	nullb_load copy_max_bytes=$MiB
	copy_dev dmt-c /dev/nullb0 16 512 mode emulate
	local len=$(( 3 * MiB )) below
	below=$(disk_attr /dev/nullb0 copy_stat)
	copy_mark /dev/mapper/dmt-c
	copy_and_verify /dev/mapper/dmt-c $(( 2 * MiB )) /dev/mapper/dmt-c $(( 100 * MiB )) $len
	echo "dmt-c copy_stat: $(disk_attr /dev/mapper/dmt-c copy_stat)"
	[ "$(copy_stat_since emulated_bytes)" = $len ]
	[ "$(copy_stat_since offloaded_bytes)" = 0 ]
	[ "$(copy_stat_since device_bytes)" = 0 ]
	# Nothing copied by the disk below either.
	[ "$(disk_attr /dev/nullb0 copy_stat)" = "$below" ]
	# In mode auto the disk below executes it: counted on both.
	dmsetup message dmt-c 0 mode auto
	copy_mark /dev/mapper/dmt-c
	copy_and_verify /dev/mapper/dmt-c $(( 2 * MiB )) /dev/mapper/dmt-c $(( 100 * MiB )) $len
	[ "$(copy_stat_since offloaded_bytes)" = $len ]
	[ "$(copy_stat_since device_bytes)" = $len ]
	[ "$(copy_stat /dev/nullb0 device_bytes)" = $(( $(read -r -a v <<<"$below"; echo "${v[7]}") + len )) ]
}

@test "over null_blk, mode offload: offloaded" {
	nullb_load copy_max_bytes=$MiB
	copy_dev dmt-c /dev/nullb0 16 512 mode offload
	copy_and_verify /dev/mapper/dmt-c $(( 2 * MiB )) /dev/mapper/dmt-c $(( 100 * MiB )) $(( 2 * MiB ))
	[ "$(copy_counters dmt-c)" = "1 $(( 2 * MiB )) 0 0 0 0" ]
}

@test "over virtio-blk (no copy): auto and emulate copy with dm-kcopyd, offload refuses and the caller emulates" {
	copy_dev dmt-c /dev/vda 16 128
	# dm-copy offers copies whatever is below.
	[ "$(dm_queue dmt-c copy_max_hw_bytes)" = $(( 8 * MiB )) ]
	copy_mark /dev/mapper/dmt-c
	copy_and_verify /dev/mapper/dmt-c $(( 1 * MiB )) /dev/mapper/dmt-c $(( 40 * MiB )) $(( 5 * MiB ))
	[ "$(copy_counters dmt-c)" = "0 0 1 $(( 5 * MiB )) 0 0" ]
	# dm-kcopyd read and wrote it: the caller counts it as emulated, not
	# as copied by a device.
	[ "$(copy_stat_since emulated_bytes)" = $(( 5 * MiB )) ]
	[ "$(copy_stat_since offloaded_bytes)" = 0 ]
	[ "$(copy_stat_since device_bytes)" = 0 ]

	dmsetup message dmt-c 0 mode offload
	copy_mark /dev/mapper/dmt-c
	copy_and_verify /dev/mapper/dmt-c $(( 1 * MiB )) /dev/mapper/dmt-c $(( 60 * MiB )) $(( 2 * MiB ))
	# Refused by the target, not counted by it; emulated by the caller.
	[ "$(copy_counters dmt-c)" = "0 0 1 $(( 5 * MiB )) 0 0" ]
	[ "$(copy_stat_since emulated_bytes)" = $(( 2 * MiB )) ]

	# mode emulate: dm-kcopyd, as auto does here.
	dmsetup message dmt-c 0 mode emulate
	copy_and_verify /dev/mapper/dmt-c $(( 1 * MiB )) /dev/mapper/dmt-c $(( 80 * MiB )) $(( 3 * MiB ))
	[ "$(copy_counters dmt-c)" = "0 0 2 $(( 8 * MiB )) 0 0" ]
}

@test "over QEMU NVMe: offloaded with the Copy command in modes auto and offload, dm-kcopyd in emulate" {
	local ns mode
	ns=$(qemu_ns 1)
	[ "$(cat /sys/block/$ns/queue/copy_max_hw_bytes)" -gt 0 ] ||
		fail "QEMU's NVMe namespace 1 reports no copy limit (copy_max_hw_bytes 0)"
	local len=$(( 4 * MiB ))
	for mode in auto offload emulate; do
		copy_dev dmt-c /dev/$ns 64 256 mode $mode
		copy_and_verify -r /dev/$ns /dev/mapper/dmt-c 0 /dev/mapper/dmt-c $(( 128 * MiB )) $len
		if [ $mode = emulate ]; then
			[ "$COPY_RW" = "$(( len / 512 )) $(( len / 512 ))" ]
			[ "$(copy_counters dmt-c)" = "0 0 1 $len 0 0" ]
		else
			[ "$COPY_RW" = "0 0" ]
			[ "$(copy_counters dmt-c)" = "1 $len 0 0 0 0" ]
		fi
		copy_and_verify /dev/mapper/dmt-c $(( 8 * MiB )) /dev/mapper/dmt-c $(( 64 * MiB )) $(( 3 * MiB + 4096 ))
		dmsetup remove dmt-c
	done
}

@test "two copy targets on one disk: a copy between them is offloaded" {
	nullb_load copy_max_bytes=$MiB
	dm_create dmt-c "0 $(( 64 * SECTORS_PER_MIB )) copy /dev/nullb0 0" \
		"$(( 64 * SECTORS_PER_MIB )) $(( 64 * SECTORS_PER_MIB )) copy /dev/nullb0 $(( 300 * SECTORS_PER_MIB ))"
	local len=$(( 4 * MiB ))
	copy_and_verify -r /dev/nullb0 /dev/mapper/dmt-c $(( 8 * MiB )) /dev/mapper/dmt-c $(( 90 * MiB )) $len
	[ "$COPY_RW" = "0 0" ]
	dev_expect /dev/nullb0 $(( 326 * MiB )) "$BATS_TEST_TMPDIR/src"
	# Counted by the destination's target, the second line.
	[ "$(dmsetup status dmt-c | sed -n 2p | cut -d' ' -f5-10)" = "1 $len 0 0 0 0" ]
	# And a copy across the boundary of the two: dm refuses it, the block
	# layer emulates it, whole.
	copy_and_verify /dev/mapper/dmt-c $(( 62 * MiB )) /dev/mapper/dmt-c $(( 20 * MiB )) $(( 4 * MiB ))
}

@test "two copy targets on two devices: a copy between them goes through dm-kcopyd" {
	nullb_load copy_max_bytes=$MiB
	dm_create dmt-c "0 $(( 64 * SECTORS_PER_MIB )) copy /dev/nullb0 0" \
		"$(( 64 * SECTORS_PER_MIB )) $(( 64 * SECTORS_PER_MIB )) copy /dev/vda $(( 16 * SECTORS_PER_MIB ))"
	copy_and_verify /dev/mapper/dmt-c $(( 8 * MiB )) /dev/mapper/dmt-c $(( 90 * MiB )) $(( 5 * MiB ))
	[ "$(dmsetup status dmt-c | sed -n 2p | cut -d' ' -f5-10)" = "0 0 1 $(( 5 * MiB )) 0 0" ]
	copy_and_verify /dev/mapper/dmt-c $(( 70 * MiB )) /dev/mapper/dmt-c $(( 2 * MiB )) $(( 3 * MiB + 512 ))
	[ "$(dmsetup status dmt-c | sed -n 1p | cut -d' ' -f5-10)" = "0 0 1 $(( 3 * MiB + 512 )) 0 0" ]
}

@test "two copy targets over two dm-linear volumes of one disk: offloaded through both" {
	nullb_load copy_max_bytes=$MiB
	linear dmt-a /dev/nullb0 32 64
	linear dmt-b /dev/nullb0 200 64
	dm_create dmt-c "0 $(( 64 * SECTORS_PER_MIB )) copy /dev/mapper/dmt-a 0" \
		"$(( 64 * SECTORS_PER_MIB )) $(( 64 * SECTORS_PER_MIB )) copy /dev/mapper/dmt-b 0"
	local len=$(( 3 * MiB ))
	copy_and_verify -r /dev/nullb0 /dev/mapper/dmt-c $(( 8 * MiB )) /dev/mapper/dmt-c $(( 70 * MiB )) $len
	[ "$COPY_RW" = "0 0" ]
	dev_expect /dev/nullb0 $(( 206 * MiB )) "$BATS_TEST_TMPDIR/src"
	[ "$(dmsetup status dmt-c | sed -n 2p | cut -d' ' -f5-10)" = "1 $len 0 0 0 0" ]
	copy_and_verify /dev/mapper/dmt-c $(( 100 * MiB )) /dev/mapper/dmt-c $(( 2 * MiB )) $(( 5 * MiB ))
	[ "$(dmsetup status dmt-c | sed -n 1p | cut -d' ' -f5-10)" = "1 $(( 5 * MiB )) 0 0 0 0" ]
}

@test "the disk below refuses part of a copy: auto copies the rest with dm-kcopyd, offload refuses it whole" {
	nullb_load copy_max_bytes=$MiB
	# Two segments of one disk: a copy chunk across their boundary (at
	# 64 MiB) is refused by dm below the copy target.
	dm_create dmt-low "0 $(( 64 * SECTORS_PER_MIB )) linear /dev/nullb0 $(( 32 * SECTORS_PER_MIB ))" \
		"$(( 64 * SECTORS_PER_MIB )) $(( 64 * SECTORS_PER_MIB )) linear /dev/nullb0 $(( 200 * SECTORS_PER_MIB ))"
	copy_dev dmt-c /dev/mapper/dmt-low 0 128
	local d=$BATS_TEST_TMPDIR len=$(( 2 * MiB )) dst=$(( 62 * MiB + MiB / 2 ))
	random_file "$d/src" $len
	dev_write /dev/mapper/dmt-c $(( 8 * MiB )) "$d/src"
	rw_mark /dev/nullb0
	copy_mark /dev/mapper/dmt-low
	run "$COPY_RANGE" -d /dev/mapper/dmt-c $(( 8 * MiB )) /dev/mapper/dmt-c $dst $len
	[ "$output" = "copied=$len" ]
	# The first MiB (one chunk of dmt-low) copied below, the second read
	# and written by dm-kcopyd: one copy, counted as emulated.
	[ "$(rw_since)" = "$SECTORS_PER_MIB $SECTORS_PER_MIB" ]
	[ "$(copy_counters dmt-c)" = "0 $MiB 1 $MiB 0 0" ]
	dev_expect /dev/mapper/dmt-c $dst "$d/src"
	[ "$(copy_stat_since offloaded_bytes)" = $MiB ]
	# Offered only: dmt-low neither emulated nor counts a failure.
	[ "$(copy_stat_since emulated_bytes)" = 0 ]
	[ "$(copy_stat_since failed_copies)" = 0 ]
	copy_and_verify /dev/mapper/dmt-c $(( 8 * MiB )) /dev/mapper/dmt-c $dst $len

	# mode offload: never dm-kcopyd. The bio is refused and the block
	# layer above dm-copy reads and writes the whole of it.
	dmsetup message dmt-c 0 mode offload
	dmsetup message dmt-c 0 stats reset
	copy_mark /dev/mapper/dmt-c
	copy_and_verify /dev/mapper/dmt-c $(( 8 * MiB )) /dev/mapper/dmt-c $dst $len
	[ "$(copy_counters dmt-c)" = "0 0 0 0 0 0" ]
	[ "$(copy_stat_since emulated_bytes)" = $len ]
	[ "$(copy_stat_since offloaded_bytes)" = 0 ]
}

@test "the status counters add up over many copies; stats reset zeroes them" {
	nullb_load copy_max_bytes=$MiB
	copy_dev dmt-c /dev/nullb0 16 512 max_copy_bytes $MiB
	local i
	for i in 1 2 3; do
		copy_and_verify /dev/mapper/dmt-c $(( i * MiB )) /dev/mapper/dmt-c $(( (100 + i * 4) * MiB )) $(( 2 * MiB ))
	done
	# 3 copies of 2 MiB in 1 MiB requests: 6 offloaded.
	[ "$(copy_counters dmt-c)" = "6 $(( 6 * MiB )) 0 0 0 0" ]
	dmsetup message dmt-c 0 mode emulate
	copy_and_verify /dev/mapper/dmt-c $(( 1 * MiB )) /dev/mapper/dmt-c $(( 200 * MiB )) $(( 2 * MiB ))
	[ "$(copy_counters dmt-c)" = "6 $(( 6 * MiB )) 2 $(( 2 * MiB )) 0 0" ]
	dmsetup message dmt-c 0 stats reset
	[ "$(copy_counters dmt-c)" = "0 0 0 0 0 0" ]
	[ "$(dm_status_field dmt-c 1)" = emulate ]
}

@test "dmsetup table prints a line that recreates an identical device" {
	nullb_load copy_max_bytes=$MiB
	local line
	for features in "" "2 mode offload" "2 max_copy_bytes 65536" \
		"4 mode emulate max_copy_bytes 1048576" "4 max_copy_bytes 4096 mode auto"; do
		dmsetup create dmt-c --table "0 4096 copy /dev/nullb0 2048 $features"
		line=$(dmsetup table dmt-c)
		dmsetup create dmt-d --table "$line"
		[ "$(dmsetup table dmt-d)" = "$line" ]
		[ "$(dm_queue dmt-d copy_max_hw_bytes)" = "$(dm_queue dmt-c copy_max_hw_bytes)" ]
		dmsetup remove dmt-c
		dmsetup remove dmt-d
	done
	dmsetup create dmt-c --table "0 4096 copy /dev/nullb0 2048 4 max_copy_bytes 65536 mode auto"
	# The default mode is not printed; the count is recomputed.
	[ "$(dmsetup table dmt-c)" = "0 4096 copy $(devno /dev/nullb0) 2048 2 max_copy_bytes 65536" ]
	[ "$(dm_queue dmt-c copy_max_hw_bytes)" = 65536 ]
	# A mode set by message is what the table says now.
	dmsetup message dmt-c 0 mode offload
	[ "$(dmsetup table dmt-c)" = "0 4096 copy $(devno /dev/nullb0) 2048 4 mode offload max_copy_bytes 65536" ]
}

@test "messages: bad ones are refused with a log line and change nothing" {
	nullb_load copy_max_bytes=$MiB
	copy_dev dmt-c /dev/nullb0 16 64 mode emulate
	local table log_at
	table=$(dmsetup table dmt-c)
	for msg in "mode" "mode fast" "mode auto extra" "stats" "stats clear" "reset" "frobnicate 1 2"; do
		log_at=$(dmesg_here)
		# shellcheck disable=SC2086
		run dmsetup message dmt-c 0 $msg
		echo "$msg: $output"
		[ "$status" -ne 0 ]
		dmesg_since "$log_at" | grep -q "device-mapper: copy: .*\(invalid mode\|unsupported message\)"
	done
	[ "$(dmsetup table dmt-c)" = "$table" ]
	[ "$(dm_status_field dmt-c 1)" = emulate ]
}

@test "every bad table is refused with its own error and leaves no device" {
	nullb_load copy_max_bytes=$MiB
	local dev=/dev/nullb0 cap log_at
	cap=$(blockdev --getsz $dev)
	while IFS='|' read -r args error; do
		log_at=$(dmesg_here)
		run dmsetup create dmt-bad --table "0 2048 copy $args"
		echo "copy $args: $output"
		[ "$status" -ne 0 ]
		run dmsetup info dmt-bad
		[ "$status" -ne 0 ] || fail "copy $args: a device was left behind"
		dmesg_since "$log_at" | grep -F "copy: $error" ||
			fail "copy $args: no '$error' in the kernel log"
	done <<-EOF
	|Invalid argument count: need <dev> <offset>
	$dev|Invalid argument count: need <dev> <offset>
	$dev x|Invalid device sector
	$dev -1|Invalid device sector
	$dev +1|Invalid device sector
	$dev 18446744073709551616|Invalid device sector
	$dev 1.5|Invalid device sector
	/dev/nonexistent 0|Device lookup failed
	$dev $(( cap - 1024 ))|Offset and length reach past the end of the device
	$dev $(( cap + 4096 ))|Offset and length reach past the end of the device
	$dev 0 x|Invalid number of feature args
	$dev 0 5 mode auto mode auto x|Invalid number of feature args
	$dev 0 3 mode auto|Invalid number of feature args
	$dev 0 4294967298 mode auto|Invalid number of feature args
	$dev 0 +2 mode auto|Invalid number of feature args
	$dev 0 02x mode auto|Invalid number of feature args
	$dev 0 1 mode|Feature mode needs an argument
	$dev 0 2 mode fast|Invalid mode: need auto, offload or emulate
	$dev 0 4 mode auto mode auto|Duplicate feature mode
	$dev 0 4 mode auto mode emulate|Conflicting mode features
	$dev 0 2 speed 1|Unrecognised copy feature requested
	$dev 0 1 max_copy_bytes|Feature max_copy_bytes needs an argument
	$dev 0 2 max_copy_bytes x|Invalid max_copy_bytes
	$dev 0 2 max_copy_bytes -512|Invalid max_copy_bytes
	$dev 0 2 max_copy_bytes 99999999999999999999|Invalid max_copy_bytes
	$dev 0 2 max_copy_bytes 0|max_copy_bytes must not be 0
	$dev 0 2 max_copy_bytes 1000|max_copy_bytes is not whole logical blocks
	$dev 0 2 max_copy_bytes 8589934592|max_copy_bytes is larger than one copy can be
	$dev 0 4 max_copy_bytes 4096 max_copy_bytes 4096|Duplicate feature max_copy_bytes
	$dev 0 2 mode auto extra|Too many arguments
	EOF
}

@test "kcopyd_throttle takes a whole number of percent, and keeps its value otherwise" {
	local p=/sys/module/dm_copy/parameters/kcopyd_throttle v was
	was=$(cat $p)
	for v in abc -1 "" 1.5 50x 4294967296; do
		run bash -c "echo '$v' >$p"
		echo "'$v': $output"
		[ "$status" -ne 0 ]
		[[ $output == *"Invalid argument"* || $output == *"Numerical result out of range"* ]]
		[ "$(cat $p)" = "$was" ]
	done
	echo 50 >$p
	[ "$(cat $p)" = 50 ]
	echo "$was" >$p
}

@test "4 KiB logical blocks below: max_copy_bytes must be whole blocks" {
	nullb_load copy_max_bytes=$MiB bs=4096
	run dmsetup create dmt-bad --table "0 2048 copy /dev/nullb0 0 2 max_copy_bytes 6144"
	[ "$status" -ne 0 ]
	dmsetup create dmt-c --table "0 65536 copy /dev/nullb0 0 2 max_copy_bytes 65536"
	copy_and_verify /dev/mapper/dmt-c $(( 1 * MiB )) /dev/mapper/dmt-c $(( 10 * MiB )) $(( 2 * MiB + 4096 ))
}

@test "suspend/resume and reload in the middle of a stream of copies, offloaded and emulated: nothing lost or corrupted" {
	nullb_load copy_max_bytes=$(( 64 * 1024 ))
	local n len=$(( 3 * MiB )) i mode table
	n=$(long_or 6 12)
	for mode in auto emulate; do
		table="0 $(( 256 * SECTORS_PER_MIB )) copy /dev/nullb0 $(( 8 * SECTORS_PER_MIB )) 4 mode $mode max_copy_bytes 262144"
		dmsetup create dmt-c --table "$table"
		stream_setup /dev/mapper/dmt-c $n $len
		copy_stream /dev/mapper/dmt-c $n $len &
		local pid=$!
		for i in $(seq 1 "$(long_or 4 8)"); do
			dmsetup suspend dmt-c
			dmsetup resume dmt-c
			dmsetup reload dmt-c --table "$table"
			dmsetup suspend --noflush dmt-c
			dmsetup resume dmt-c
		done
		wait $pid
		stream_check /dev/mapper/dmt-c $n $len
		# Nothing in flight once all came back.
		[ "$(dm_status_field dmt-c 7)" = 0 ]
		dmsetup remove dmt-c
	done
}

@test "stacked: dm-copy over dm-linear over null_blk still offloads" {
	nullb_load copy_max_bytes=$MiB
	dmsetup create dmt-low --table "0 $(( 512 * SECTORS_PER_MIB )) linear /dev/nullb0 $(( 32 * SECTORS_PER_MIB ))"
	copy_dev dmt-c /dev/mapper/dmt-low 16 256
	local len=$(( 5 * MiB ))
	copy_and_verify -r /dev/nullb0 /dev/mapper/dmt-c 0 /dev/mapper/dmt-c $(( 100 * MiB )) $len
	[ "$COPY_RW" = "0 0" ]
	dev_expect /dev/nullb0 $(( (32 + 16 + 100) * MiB )) "$BATS_TEST_TMPDIR/src"
	[ "$(copy_counters dmt-c)" = "1 $len 0 0 0 0" ]
}

@test "stacked: dm-linear over dm-copy over virtio-blk copies through dm-copy" {
	copy_dev dmt-c /dev/vda 16 128
	dmsetup create dmt-top --table "0 $(( 64 * SECTORS_PER_MIB )) linear /dev/mapper/dmt-c $(( 32 * SECTORS_PER_MIB ))"
	[ "$(dm_queue dmt-top copy_max_hw_bytes)" = $(( 8 * MiB )) ]
	copy_and_verify /dev/mapper/dmt-top $(( 1 * MiB )) /dev/mapper/dmt-top $(( 30 * MiB )) $(( 4 * MiB ))
	[ "$(copy_counters dmt-c)" = "0 0 1 $(( 4 * MiB )) 0 0" ]
}

@test "rmmod dm_copy is refused while a device uses it, and clean afterwards" {
	nullb_load copy_max_bytes=$MiB
	copy_dev dmt-c /dev/nullb0 0 16
	run rmmod dm_copy
	[ "$status" -ne 0 ]
	lsmod | grep -q '^dm_copy '
	dmsetup remove dmt-c
	rmmod dm_copy
	! lsmod | grep -q '^dm_copy '
}
