#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# The userspace the suites drive is there in the guest (shared from the
# host's root), so a missing package fails here, by name, rather than as a
# puzzling error in some later test.

load ../lib/common

setup() {
	guest_setup
}

teardown() {
	guest_teardown
}

@test "guest has the tools the suites use" {
	local t missing=
	for t in bats dmsetup lvm nvme xfs_io fio blkid losetup modprobe dd cmp; do
		command -v "$t" >/dev/null || missing+=" $t"
	done
	[ -z "$missing" ] || fail "missing in the guest:$missing (make deps)"
}

@test "guest root is writable without touching the host" {
	echo probe >/etc/dmcopy-vm-probe
	[ "$(cat /etc/dmcopy-vm-probe)" = probe ]
	findmnt -n -o FSTYPE / | grep -qx overlay
}
