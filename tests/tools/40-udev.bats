#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# udev/60-dmcopy.rules under Debian's systemd-udevd, started for each test
# and stopped after it: ID_COPY_OFFLOAD and ID_COPY_MAX_BYTES on block
# devices and partitions, following sysfs changes; the /dev/disk/by-id/dm-copy-NAME link
# of devices dmcopy create makes (with udev synchronisation, as on a
# host), and none for other dm devices.

bats_require_minimum_version 1.5.0

load ../lib/common
load ../lib/dm

DMCOPY=$DMCOPY_TOP/tools/dmcopy
RULES=$DMCOPY_TOP/udev/60-dmcopy.rules
MiB=1048576

setup() {
	guest_setup
	[ -x "$DMCOPY" ] || fail "$DMCOPY not built (make userspace)"
	UDEVD=
	for f in /lib/systemd/systemd-udevd /usr/lib/systemd/systemd-udevd; do
		[ -x "$f" ] && UDEVD=$f && break
	done
	[ -n "$UDEVD" ] || fail "systemd-udevd not installed (make deps: udev)"
	mkdir -p /etc/udev/rules.d
	cp "$RULES" /etc/udev/rules.d/
	"$UDEVD" --daemon
	udevadm control --ping
	# This suite tests udev: libdevmapper waits for it here.
	unset DM_DISABLE_UDEV
	nullb_load copy_max_bytes=$MiB
	dm_copy_load
	udevadm settle
}

teardown() {
	dm_cleanup
	nullb_unload || true
	udevadm settle || true
	udevadm control --exit || true
	rm -f /etc/udev/rules.d/60-dmcopy.rules
	guest_teardown
}

# prop DEV NAME: the udev property NAME of DEV, from udev's database.
prop() {
	udevadm info -q property --property="$2" --value "$1"
}

@test "udev sets ID_COPY_OFFLOAD and ID_COPY_MAX_BYTES from sysfs" {
	[ "$(prop /dev/nullb0 ID_COPY_OFFLOAD)" = 1 ]
	[ "$(prop /dev/nullb0 ID_COPY_MAX_BYTES)" = $MiB ]
	# vda was there before this udevd: it has an event once asked.
	udevadm trigger --action=change --settle /sys/block/vda
	[ "$(prop /dev/vda ID_COPY_OFFLOAD)" = 0 ]
	[ "$(prop /dev/vda ID_COPY_MAX_BYTES)" = "$(queue_attr vda copy_max_bytes)" ]
	# Offload off: the device still can, its limit says no.
	echo 0 >/sys/block/nullb0/queue/copy_max_bytes
	echo change >/sys/block/nullb0/uevent
	udevadm settle
	[ "$(prop /dev/nullb0 ID_COPY_OFFLOAD)" = 1 ]
	[ "$(prop /dev/nullb0 ID_COPY_MAX_BYTES)" = 0 ]
}

@test "a partition gets its disk's ID_COPY_OFFLOAD and ID_COPY_MAX_BYTES" {
	echo 'start=2048, size=65536' | sfdisk -q /dev/nullb0
	udevadm settle
	[ -b /dev/nullb0p1 ]
	[ "$(prop /dev/nullb0p1 ID_COPY_OFFLOAD)" = 1 ]
	[ "$(prop /dev/nullb0p1 ID_COPY_MAX_BYTES)" = $MiB ]
}

@test "udevadm test shows what 60-dmcopy.rules sets, without complaints" {
	run --separate-stderr udevadm test --action=add /sys/block/nullb0
	echo "$stderr" | grep -i dmcopy || true
	[ "$status" -eq 0 ]
	[[ $output == *"ID_COPY_OFFLOAD=1"* ]]
	[[ $output == *"ID_COPY_MAX_BYTES=$MiB"* ]]
	# The rules file parses without a warning naming it.
	! grep -E '60-dmcopy.rules:[0-9]+ ' <<<"$stderr" | grep -iv 'GOTO\|LABEL'
}

@test "dmcopy create gets a /dev/disk/by-id/dm-copy-NAME link; other dm devices do not" {
	local dm
	"$DMCOPY" create dmt-u1 /dev/nullb0 --size 64M
	dm=$(dm_dev dmt-u1)
	[ "$(readlink -f /dev/disk/by-id/dm-copy-dmt-u1)" = "/dev/$dm" ]
	[ "$(prop /dev/$dm ID_COPY_OFFLOAD)" = 1 ]
	[ "$(prop /dev/$dm ID_COPY_MAX_BYTES)" = "$(queue_attr "$dm" copy_max_bytes)" ]
	# The link reaches the device: data written there lands on nullb0.
	random_file "$BATS_TEST_TMPDIR/p" 65536
	dev_write /dev/disk/by-id/dm-copy-dmt-u1 $MiB "$BATS_TEST_TMPDIR/p"
	dev_expect /dev/nullb0 $MiB "$BATS_TEST_TMPDIR/p"
	dmsetup create dmt-u2 --table "0 2048 linear /dev/nullb0 262144"
	udevadm settle
	[ ! -e /dev/disk/by-id/dm-copy-dmt-u2 ]
	[ -z "$(ls /dev/disk/by-id/ | grep 'dm-copy-dmt-u2')" ]
	"$DMCOPY" remove dmt-u1
	udevadm settle
	[ ! -e /dev/disk/by-id/dm-copy-dmt-u1 ]
}

@test "a change event of a suspended dmcopy device keeps its properties and its link" {
	local dm
	"$DMCOPY" create dmt-u3 /dev/nullb0 --size 64M
	dm=$(dm_dev dmt-u3)
	[ "$(readlink -f /dev/disk/by-id/dm-copy-dmt-u3)" = "/dev/$dm" ]
	[ "$(prop /dev/$dm ID_COPY_OFFLOAD)" = 1 ]
	dmsetup suspend dmt-u3
	echo change >/sys/block/$dm/uevent
	udevadm settle
	# The dm rules saw it suspended: nothing read from the device.
	[ "$(prop /dev/$dm DM_SUSPENDED)" = 1 ]
	local offload=$(prop /dev/$dm ID_COPY_OFFLOAD) link=$(readlink -f /dev/disk/by-id/dm-copy-dmt-u3)
	dmsetup resume dmt-u3
	udevadm settle
	[ "$offload" = 1 ]
	[ "$link" = "/dev/$dm" ]
	[ "$(prop /dev/$dm ID_COPY_MAX_BYTES)" = "$(queue_attr "$dm" copy_max_bytes)" ]
	"$DMCOPY" remove dmt-u3
}
