#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# Concurrency: 64 copies at once (overlapping destinations, overlapping
# sources, offloaded within a device and emulated between two) beside
# fio's verified mixed reads and writes on the same devices, through
# dm-linear and through the copy target (tests/lib/storm.bash). Every copy
# is checked, and every byte of the areas they wrote. DMCOPY_LONG=1 runs
# eight rounds instead of one.

DMCOPY_TEST_TIMEOUT=300
# eight rounds (tests/check's guest deadline counts 300 s: set
# DMCOPY_CHECK_TIMEOUT for the long form)
[ "${DMCOPY_LONG:-0}" != 1 ] || DMCOPY_TEST_TIMEOUT=2400

load ../lib/common
load ../lib/dm
load ../lib/storm

MiB=1048576
SECTORS_PER_MIB=2048

setup() {
	guest_setup
	[ -x "$COPY_RANGE" ] || fail "$COPY_RANGE not built (make -C tests/helpers)"
	command -v fio >/dev/null || skip "fio not installed"
	dm_copy_load
	nullb_load nr_devices=2 gb=1 copy_max_bytes=$MiB
}

teardown() {
	dm_cleanup
	nullb_unload || true
	guest_teardown
}

@test "64 copies at once beside fio through dm-linear: every copy and every byte right" {
	linear dmt-a /dev/nullb0 16 128
	linear dmt-b /dev/nullb1 16 128
	copy_mark /dev/nullb0
	copy_storm /dev/mapper/dmt-a /dev/mapper/dmt-b
	echo "nullb0 executed $(copy_stat_since device_copies) copies, $(copy_stat_since device_bytes) bytes"
	[ "$(copy_stat_since device_bytes)" -gt 0 ]
}

@test "64 copies at once beside fio through the copy target: every copy and every byte right" {
	dmsetup create dmt-a --table "0 $(( 128 * SECTORS_PER_MIB )) copy /dev/nullb0 $(( 16 * SECTORS_PER_MIB ))"
	dmsetup create dmt-b --table "0 $(( 128 * SECTORS_PER_MIB )) copy /dev/nullb1 $(( 16 * SECTORS_PER_MIB ))"
	copy_mark /dev/nullb0
	copy_storm /dev/mapper/dmt-a /dev/mapper/dmt-b
	echo "copy target: $(dmsetup status dmt-a)"
	echo "nullb0 executed $(copy_stat_since device_copies) copies, $(copy_stat_since device_bytes) bytes"
	[ "$(copy_stat_since device_bytes)" -gt 0 ]
	# Nothing left in flight.
	[ "$(dm_status_field dmt-a 7)" = 0 ]
	[ "$(dm_status_field dmt-b 7)" = 0 ]
}
