#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# QEMU's emulated NVMe namespace is present, advertises Copy, and a Copy
# command issued by nvme-cli moves real data and nothing else.

load ../lib/common
load ../lib/nvme

CTRL=/dev/nvme0

setup() {
	guest_setup
	[ -e /sys/block/nvme0n1 ] || skip "no NVMe namespace (tests/vm/run --no-nvme?)"
	NS=/dev/$(qemu_ns 1)
	LBA=$(queue_attr "$NS" logical_block_size)
}

teardown() {
	guest_teardown
}

# fill_blocks FILE LBA COUNT: COUNT random blocks into FILE and onto the
# namespace at LBA.
fill_blocks() {
	random_file "$1" $(( $3 * LBA ))
	dev_write "$NS" $(( $2 * LBA )) "$1"
}

@test "NVMe namespace from QEMU is present" {
	[ -b "$NS" ]
	run cat "/sys/block/$(disk_name "$NS")/device/model"
	[[ $output == "QEMU NVMe Ctrl"* ]]
}

@test "nvme id-ctrl shows Copy in ONCS" {
	local oncs
	oncs=$(id_field id-ctrl "$CTRL" oncs)
	[ -n "$oncs" ]
	echo "oncs=$oncs"
	(( oncs & 0x100 ))
}

@test "nvme id-ns reports the copy limits the runner asked for" {
	[ "$(id_field id-ns "$NS" mssrl)" -eq 128 ]
	[ "$(id_field id-ns "$NS" mcl)" -eq 128 ]
	[ "$(id_field id-ns "$NS" msrc)" -eq 127 ]
}

@test "nvme copy moves the data and touches nothing else" {
	local blocks=64 src=1024 dst=4096 guard=16
	local d=$BATS_TEST_TMPDIR

	fill_blocks "$d/src" $src $blocks
	fill_blocks "$d/before" $(( dst - guard )) $guard
	fill_blocks "$d/old" $dst $blocks
	fill_blocks "$d/after" $(( dst + blocks )) $guard

	run nvme copy "$NS" --sdlba=$dst --slbs=$src --blocks=$(( blocks - 1 ))
	echo "$output"
	[ "$status" -eq 0 ]

	dev_expect "$NS" $(( dst * LBA )) "$d/src"
	dev_expect "$NS" $(( src * LBA )) "$d/src"
	dev_expect "$NS" $(( (dst - guard) * LBA )) "$d/before"
	dev_expect "$NS" $(( (dst + blocks) * LBA )) "$d/after"
}

@test "nvme copy of two source ranges concatenates them" {
	local d=$BATS_TEST_TMPDIR
	fill_blocks "$d/a" 100 8
	fill_blocks "$d/b" 300 24

	run nvme copy "$NS" --sdlba=8192 --slbs=100,300 --blocks=7,23
	echo "$output"
	[ "$status" -eq 0 ]

	cat "$d/a" "$d/b" >"$d/ab"
	dev_expect "$NS" $(( 8192 * LBA )) "$d/ab"
}

@test "nvme copy longer than MCL fails and leaves the destination alone" {
	local d=$BATS_TEST_TMPDIR
	fill_blocks "$d/src" 20000 200
	fill_blocks "$d/old" 30000 200

	run nvme copy "$NS" --sdlba=30000 --slbs=20000 --blocks=199
	echo "$output"
	[ "$status" -ne 0 ]
	dev_expect "$NS" $(( 30000 * LBA )) "$d/old"
}
