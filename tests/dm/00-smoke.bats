#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# The device-mapper driver answers, and dm-copy.ko loads, maps like linear,
# refuses bad tables and unloads.

load ../lib/common

MODULE=$DMCOPY_TOP/dm-copy/dm-copy.ko
DISK=/dev/vda

setup() {
	guest_setup
}

teardown() {
	dmsetup remove --retry dmcopy-smoke 2>/dev/null || true
	if lsmod | grep -q '^dm_copy '; then
		rmmod dm_copy || true
	fi
	guest_teardown
}

@test "dmsetup version talks to the kernel driver" {
	run dmsetup version
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"Driver version:"* ]]
}

@test "dm-copy.ko inserts, registers the copy target and removes" {
	[ -f "$MODULE" ] || fail "$MODULE not built (make modules)"
	insmod "$MODULE"
	run dmsetup targets
	[[ $output == *"copy "* ]]
	rmmod dm_copy
	run dmsetup targets
	[[ $output != *"copy "* ]]
}

@test "copy target maps like linear and nothing outside moves" {
	local d=$BATS_TEST_TMPDIR
	insmod "$MODULE"
	random_file "$d/around" 1048576
	dev_write "$DISK" 0 "$d/around"

	dmsetup create dmcopy-smoke --table "0 256 copy $DISK 512"
	run dmsetup table dmcopy-smoke
	[ "$output" = "0 256 copy $(lsblk -dno MAJ:MIN "$DISK" | tr -d ' ') 512" ]

	random_file "$d/data" 131072
	dev_write /dev/mapper/dmcopy-smoke 0 "$d/data"
	dev_expect "$DISK" $(( 512 * 512 )) "$d/data"

	# The rest of the first MiB of the disk is as it was.
	head -c $(( 512 * 512 )) "$d/around" >"$d/head"
	tail -c +$(( 768 * 512 + 1 )) "$d/around" >"$d/tail"
	dev_expect "$DISK" 0 "$d/head"
	dev_expect "$DISK" $(( 768 * 512 )) "$d/tail"
}

@test "copy target refuses bad tables with a clear reason" {
	insmod "$MODULE"
	local table reason log_at
	# table | what the kernel log must say
	while IFS='|' read -r table reason; do
		log_at=$(dmesg_here)
		run dmsetup create dmcopy-smoke --table "$table"
		echo "table '$table': $output"
		[ "$status" -ne 0 ]
		[ ! -e /dev/mapper/dmcopy-smoke ]
		dmesg_since "$log_at" | grep -F -- "$reason"
	done <<-EOF
	0 256 copy $DISK|copy: Invalid argument count: need <dev> <offset>
	0 256 copy $DISK x12|copy: Invalid device sector
	0 256 copy $DISK -1|copy: Invalid device sector
	0 256 copy $DISK 12x|copy: Invalid device sector
	0 256 copy $DISK 0 1 mode|copy: Feature mode needs an argument
	0 256 copy $DISK 0 1 fast|copy: Unrecognised copy feature requested
	0 256 copy $DISK 0 3 a|copy: Invalid number of feature args
	0 256 copy $DISK 0 x|copy: Invalid number of feature args
	0 256 copy $DISK 0 0 extra|copy: Too many arguments
	0 256 copy /dev/nonexistent 0|copy: Device lookup failed
	0 256 copy $DISK 999999999|copy: Offset and length reach past the end of the device
	EOF
}
