#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# The demo formats the first NVMe namespace it finds: it must refuse to
# run anywhere but in the test VM, before touching any device.

bats_require_minimum_version 1.5.0

TOP=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)

@test "tests/demo/provision-demo refuses to run outside the test VM, touching nothing" {
	[ ! -e /run/dmcopy-test-vm ] || skip "this host has the test VM's marker"
	local bin=$BATS_TEST_TMPDIR/bin cmd
	mkdir "$bin"
	# Every command that could touch a disk only writes down its call.
	for cmd in pvcreate pvremove vgcreate vgremove lvcreate lvremove lvm dmsetup dd nvme; do
		printf '#!/bin/sh\necho "%s $*" >>"%s"\n' "$cmd" "$BATS_TEST_TMPDIR/calls" >"$bin/$cmd"
		chmod +x "$bin/$cmd"
	done
	run --separate-stderr env PATH="$bin:$PATH" "$TOP/tests/demo/provision-demo"
	echo "status $status: $stderr"
	[ "$status" -eq 2 ]
	[ "$stderr" = "demo: refusing to run outside the test VM: it would format the first NVMe namespace (run make demo)" ]
	[ ! -e "$BATS_TEST_TMPDIR/calls" ]
}
