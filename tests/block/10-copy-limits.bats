#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# queue/copy_max_hw_bytes, queue/copy_max_bytes and copy_stat, and
# null_blk's copy_max_bytes (module parameter and configfs).

load ../lib/common

setup() {
	guest_setup
}

teardown() {
	rmdir /sys/kernel/config/nullb/copytest 2>/dev/null || true
	nullb_unload || true
	guest_teardown
}

# sysfs_write FILE VALUE: write VALUE, printing the error if refused.
sysfs_write() {
	( echo "$2" >"$1" ) 2>&1
}

@test "a device that cannot copy shows 0 and accepts only 0" {
	local q=/sys/block/vda/queue
	[ "$(cat $q/copy_max_hw_bytes)" = 0 ]
	[ "$(cat $q/copy_max_bytes)" = 0 ]
	[ "$(cat /sys/block/vda/copy_stat)" = "0 0 0 0 0 0 0 0" ]

	run sysfs_write $q/copy_max_bytes 512
	[ "$status" -ne 0 ]
	[[ $output == *"Invalid argument"* ]]
	[ "$(cat $q/copy_max_bytes)" = 0 ]

	sysfs_write $q/copy_max_bytes 0
	[ "$(cat $q/copy_max_bytes)" = 0 ]
}

@test "copy_max_hw_bytes and copy_stat are read-only" {
	nullb_load copy_max_bytes=1048576
	run sysfs_write /sys/block/nullb0/queue/copy_max_hw_bytes 512
	[ "$status" -ne 0 ]
	[ "$(cat /sys/block/nullb0/queue/copy_max_hw_bytes)" = 1048576 ]
	run sysfs_write /sys/block/nullb0/copy_stat "1 2 3 4 5 6 7 8"
	echo "$output"
	[ "$status" -ne 0 ]
	[ "$(cat /sys/block/nullb0/copy_stat)" = "0 0 0 0 0 0 0 0" ]
}

@test "null_blk copy_max_bytes sets the hardware limit" {
	nullb_load copy_max_bytes=1048576
	[ "$(cat /sys/block/nullb0/queue/copy_max_hw_bytes)" = 1048576 ]
	[ "$(cat /sys/block/nullb0/queue/copy_max_bytes)" = 1048576 ]
}

@test "null_blk without copy_max_bytes cannot copy" {
	nullb_load
	[ "$(cat /sys/block/nullb0/queue/copy_max_hw_bytes)" = 0 ]
	[ "$(cat /sys/block/nullb0/queue/copy_max_bytes)" = 0 ]
}

@test "copy_max_bytes: lower, clamp to hw, off and on again" {
	nullb_load copy_max_bytes=1048576
	local f=/sys/block/nullb0/queue/copy_max_bytes

	sysfs_write $f 65536
	[ "$(cat $f)" = 65536 ]

	# More than the hardware takes is clamped to it.
	sysfs_write $f 4194304
	[ "$(cat $f)" = 1048576 ]

	# 0 turns offload off; the hardware limit stays.
	sysfs_write $f 0
	[ "$(cat $f)" = 0 ]
	[ "$(cat /sys/block/nullb0/queue/copy_max_hw_bytes)" = 1048576 ]

	sysfs_write $f 1048576
	[ "$(cat $f)" = 1048576 ]
}

@test "copy_max_bytes refuses bad values and keeps the old one" {
	nullb_load copy_max_bytes=1048576
	local f=/sys/block/nullb0/queue/copy_max_bytes value
	sysfs_write $f 131072
	for value in 100 513 abc -512 "" 1.5 0x; do
		run sysfs_write $f "$value"
		echo "'$value': $output"
		[ "$status" -ne 0 ]
		[[ $output == *"Invalid argument"* ]]
		[ "$(cat $f)" = 131072 ]
	done
}

@test "copy_max_bytes must be whole logical blocks" {
	nullb_load copy_max_bytes=1048576 bs=4096
	local f=/sys/block/nullb0/queue/copy_max_bytes
	run sysfs_write $f 512
	[ "$status" -ne 0 ]
	[ "$(cat $f)" = 1048576 ]
	sysfs_write $f 8192
	[ "$(cat $f)" = 8192 ]
}

@test "null_blk copy_max_bytes is an upper bound: whole blocks, any size" {
	nullb_load copy_max_bytes=1000
	[ "$(cat /sys/block/nullb0/queue/copy_max_hw_bytes)" = 512 ]
	nullb_unload
	# the other proposal's scripts pass UINT_MAX, its default
	nullb_load max_copy_bytes=$(( (1 << 32) - 1 ))
	# what one bio carries, in whole 4 KiB (BLK_COPY_MAX_SECTORS)
	[ "$(cat /sys/block/nullb0/queue/copy_max_hw_bytes)" = $(( (1 << 32) - 4096 )) ]
	[ "$(cat /sys/module/null_blk/parameters/max_copy_bytes)" = $(( (1 << 32) - 1 )) ]
	copy_mark /dev/nullb0
	copy_and_verify /dev/nullb0 $(( 1 << 20 )) /dev/nullb0 $(( 64 << 20 )) $(( 3 << 20 ))
	[ "$(copy_stat_since offloaded_bytes)" = $(( 3 << 20 )) ]
	nullb_unload
	# more than one copy may carry: what it may
	nullb_load copy_max_bytes=$(( 1 << 50 ))
	[ "$(cat /sys/block/nullb0/queue/copy_max_hw_bytes)" = $(( (1 << 32) - 4096 )) ]
}

@test "null_blk refuses a copy_max_bytes that is no number" {
	local v
	for v in -1 abc 1M ""; do
		run modprobe null_blk nr_devices=1 copy_max_bytes="$v"
		echo "copy_max_bytes='$v': $status $output"
		[ "$status" -ne 0 ]
		[ ! -b /dev/nullb0 ]
	done
}

@test "null_blk configfs max_copy_bytes=4294967295 on 4 KiB blocks copies exactly" {
	modprobe null_blk nr_devices=0
	local d=/sys/kernel/config/nullb/copybig v
	mkdir $d
	echo 1 >$d/memory_backed
	echo 256 >$d/size
	echo 4096 >$d/blocksize
	for v in -1 abc; do
		run sh -c "echo '$v' >$d/max_copy_bytes"
		[ "$status" -ne 0 ]
		[ "$(cat $d/max_copy_bytes)" = 0 ]
	done
	echo 4294967295 >$d/max_copy_bytes
	echo 1 >$d/power
	# the effective value, read back where it was written
	[ "$(cat $d/max_copy_bytes)" = $(( (1 << 32) - 4096 )) ]
	[ "$(cat /sys/block/copybig/queue/copy_max_hw_bytes)" = $(( (1 << 32) - 4096 )) ]
	copy_mark /dev/copybig
	copy_and_verify /dev/copybig $(( 1 << 20 )) /dev/copybig $(( 100 << 20 )) $(( 17 << 20 ))
	[ "$(copy_stat_since offloaded_bytes)" = $(( 17 << 20 )) ]
	echo 0 >$d/power
	rmdir $d
}

@test "null_blk configfs copy_max_bytes" {
	modprobe null_blk nr_devices=0
	local d=/sys/kernel/config/nullb/copytest
	mkdir $d
	grep -q copy_max_bytes /sys/kernel/config/nullb/features
	echo 1 >$d/memory_backed
	echo 64 >$d/size
	echo 2097152 >$d/copy_max_bytes
	[ "$(cat $d/copy_max_bytes)" = 2097152 ]
	echo 1 >$d/power
	local dev
	dev=copytest
	[ "$(cat /sys/block/$dev/queue/copy_max_hw_bytes)" = 2097152 ]
	echo 0 >$d/power
	rmdir $d
}

@test "null_blk configfs copy_max_bytes and max_copy_bytes refuse what is no number" {
	modprobe null_blk nr_devices=0
	local d=/sys/kernel/config/nullb/copybad a v
	mkdir $d
	echo 65536 >$d/copy_max_bytes
	for a in copy_max_bytes max_copy_bytes; do
		# (like every numeric attribute of null_blk, 0x10 is a number)
		for v in -1 abc 1M "" 0x 18446744073709551616; do
			run bash -c "echo '$v' >$d/$a"
			echo "$a='$v': $output"
			[ "$status" -ne 0 ]
			[[ $output == *"Invalid argument"* || $output == *"Numerical result out of range"* ]]
			[ "$(cat $d/$a)" = 65536 ]
		done
	done
	rmdir $d
}

@test "null_blk configfs also takes max_copy_bytes, the other proposal's spelling" {
	modprobe null_blk nr_devices=0
	local d=/sys/kernel/config/nullb/copyalias
	mkdir $d
	grep -q max_copy_bytes /sys/kernel/config/nullb/features
	echo 1 >$d/memory_backed
	echo 64 >$d/size
	echo 1048576 >$d/max_copy_bytes
	[ "$(cat $d/max_copy_bytes)" = 1048576 ]
	[ "$(cat $d/copy_max_bytes)" = 1048576 ]
	echo 1 >$d/power
	[ "$(cat /sys/block/copyalias/queue/copy_max_hw_bytes)" = 1048576 ]
	# Like every attribute, not changeable while powered on.
	run sh -c "echo 4096 >$d/max_copy_bytes"
	[ "$status" -ne 0 ]
	[ "$(cat $d/max_copy_bytes)" = 1048576 ]
	echo 0 >$d/power
	rmdir $d
}
