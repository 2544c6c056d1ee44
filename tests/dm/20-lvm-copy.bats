#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# LVM volumes (real lvm2, dm-linear underneath) on copy-capable physical
# volumes: a copy between two LVs on one PV is offloaded to it, one LV
# with segments on two PVs copies across them by emulation. On null_blk
# and on QEMU's NVMe namespace, every byte checked.

load ../lib/common
load ../lib/dm
load ../lib/nvme

MiB=1048576

setup() {
	guest_setup
	[ -x "$COPY_RANGE" ] || fail "$COPY_RANGE not built (make -C tests/helpers)"
}

teardown() {
	dm_cleanup
	nullb_unload || true
	guest_teardown
}

# vg_on VG PV...: a volume group of fresh physical volumes.
vg_on() {
	local vg=$1
	shift
	lvm_cmd pvcreate -ff -y "$@"
	lvm_cmd vgcreate -y "$vg" "$@"
}

# lv VG NAME SIZE PV: a linear LV of SIZE on PV, neither wiped nor zeroed.
lv() {
	lvm_cmd lvcreate -y -Wn -Zn -L "$3" -n "$2" "$1" "$4"
	[ -b "/dev/mapper/$1-$2" ]
}

@test "null_blk PVs: a copy between two LVs on one PV is offloaded, nothing read or written below" {
	nullb_cfg nullbv0 copy_max_bytes=$MiB size=512
	vg_on dmtvg0 /dev/nullbv0
	lv dmtvg0 a 64M /dev/nullbv0
	lv dmtvg0 b 64M /dev/nullbv0
	[ "$(dm_queue dmtvg0-a copy_max_hw_bytes)" = $MiB ]
	local len=$(( 10 * MiB + 4096 ))
	copy_mark /dev/mapper/dmtvg0-b
	copy_and_verify -r /dev/nullbv0 /dev/mapper/dmtvg0-a $(( 4 * MiB )) /dev/mapper/dmtvg0-b $(( 30 * MiB )) $len
	[ "$COPY_RW" = "0 0" ]
	[ "$(copy_stat_since offloaded_bytes)" = $len ]
	copy_and_verify /dev/mapper/dmtvg0-b $(( 1 * MiB )) /dev/mapper/dmtvg0-a $(( 40 * MiB )) $(( 3 * MiB ))
}

@test "null_blk PVs: an LV with segments on two PVs copies within a PV offloaded and across them emulated" {
	nullb_cfg nullbv0 copy_max_bytes=$MiB size=256
	nullb_cfg nullbv1 copy_max_bytes=$MiB size=256
	vg_on dmtvg0 /dev/nullbv0 /dev/nullbv1
	lv dmtvg0 s 64M /dev/nullbv0
	lvm_cmd lvextend -y -L +64M dmtvg0/s /dev/nullbv1
	[ "$(dmsetup table dmtvg0-s | wc -l)" = 2 ]
	local dev=/dev/mapper/dmtvg0-s
	# [0, 64 MiB) is on nullbv0, [64, 128 MiB) on nullbv1.
	copy_mark $dev
	copy_and_verify $dev $(( 1 * MiB )) $dev $(( 30 * MiB )) $(( 8 * MiB ))
	[ "$(copy_stat_since offloaded_bytes)" = $(( 8 * MiB )) ]
	copy_mark $dev
	copy_and_verify $dev $(( 2 * MiB )) $dev $(( 80 * MiB )) $(( 8 * MiB + 512 ))
	[ "$(copy_stat_since offloaded_bytes)" = 0 ]
	[ "$(copy_stat_since emulated_bytes)" = $(( 8 * MiB + 512 )) ]
	# Across the segment boundary, onto both PVs.
	copy_and_verify $dev $(( 60 * MiB )) $dev $(( 100 * MiB )) $(( 8 * MiB ))
}

@test "QEMU NVMe PV: a copy between two LVs is offloaded with the Copy command" {
	local ns
	ns=$(qemu_ns 1)
	[ "$(cat /sys/block/$ns/queue/copy_max_hw_bytes)" -gt 0 ] ||
		fail "QEMU's NVMe namespace 1 reports no copy limit (copy_max_hw_bytes 0)"
	vg_on dmtvg1 /dev/$ns
	lv dmtvg1 golden 128M /dev/$ns
	lv dmtvg1 clone 128M /dev/$ns
	local len=$(( 16 * MiB ))
	copy_mark /dev/mapper/dmtvg1-clone
	copy_and_verify -r /dev/$ns /dev/mapper/dmtvg1-golden 0 /dev/mapper/dmtvg1-clone $(( 64 * MiB )) $len
	[ "$COPY_RW" = "0 0" ]
	[ "$(copy_stat_since offloaded_bytes)" = $len ]
	copy_and_verify /dev/mapper/dmtvg1-golden $(( 20 * MiB )) /dev/mapper/dmtvg1-clone $(( 4 * MiB )) $(( 5 * MiB + 4096 ))
}

@test "LVM --type mirror and pvmove between two PVs on one null_blk: dm-raid1 copies the legs and extents offloaded" {
	# Two PVs as two dm-linear devices of one disk, as two partitions
	# would be: the mirror's resync and pvmove's temporary mirror copy
	# with dm-kcopyd from one PV to the other, inside one disk.
	nullb_cfg nullbv0 copy_max_bytes=$MiB size=512
	local d=$BATS_TEST_TMPDIR size=32
	# Not at sector 0, where LVM would find the PV label on nullbv0 too.
	linear dmt-pva /dev/nullbv0 1 128
	linear dmt-pvb /dev/nullbv0 129 128
	vg_on dmtvg0 /dev/mapper/dmt-pva /dev/mapper/dmt-pvb
	lv dmtvg0 m ${size}M /dev/mapper/dmt-pva
	random_file "$d/golden" $(( size * MiB ))
	dev_write /dev/mapper/dmtvg0-m 0 "$d/golden"

	# kcopyd hands the copies to the LVs above nullbv0: the disk counts
	# them as copies it executed (device_bytes), not ones sent to it.
	copy_mark /dev/nullbv0
	rw_mark /dev/nullbv0
	lvm_cmd lvconvert -y --type mirror -m1 --mirrorlog core dmtvg0/m /dev/mapper/dmt-pvb
	mirror_wait dmtvg0-m
	local rw
	rw=$(rw_since)
	echo "mirror: $(dmsetup status dmtvg0-m); $(copy_stat_since device_bytes) bytes copied by nullbv0, $rw sectors read and written"
	[ "$(copy_stat_since device_bytes)" = $(( size * MiB )) ]
	[ "${rw%% *}" -lt $(( 2 * 2048 )) ]
	dev_expect /dev/mapper/dmtvg0-m_mimage_0 0 "$d/golden"
	dev_expect /dev/mapper/dmtvg0-m_mimage_1 0 "$d/golden"

	# Back to one leg, the one on the second PV; then pvmove it home.
	lvm_cmd lvconvert -y -m0 dmtvg0/m /dev/mapper/dmt-pva
	[ "$(lvm_cmd lvs --noheadings -o devices dmtvg0/m | tr -d ' ')" = "/dev/mapper/dmt-pvb(0)" ]
	copy_mark /dev/nullbv0
	rw_mark /dev/nullbv0
	lvm_cmd pvmove -i 1 /dev/mapper/dmt-pvb /dev/mapper/dmt-pva
	rw=$(rw_since)
	echo "pvmove: $(copy_stat_since device_bytes) bytes copied by nullbv0, $rw sectors read and written"
	[ "$(lvm_cmd lvs --noheadings -o devices dmtvg0/m | tr -d ' ')" = "/dev/mapper/dmt-pva(0)" ]
	[ "$(copy_stat_since device_bytes)" = $(( size * MiB )) ]
	[ "${rw%% *}" -lt $(( 2 * 2048 )) ]
	dev_expect /dev/mapper/dmtvg0-m 0 "$d/golden"
}
