#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# dmcopy create, remove and message against dm-copy.ko: the tables and
# UUIDs they make, what the target does with them, and every bad input
# refused with one line on stderr and nothing changed.

bats_require_minimum_version 1.5.0

load ../lib/common
load ../lib/dm

DMCOPY=$DMCOPY_TOP/tools/dmcopy
MiB=1048576

setup() {
	guest_setup
	[ -x "$DMCOPY" ] || fail "$DMCOPY not built (make userspace)"
	nullb_load copy_max_bytes=$MiB
	dm_copy_load
}

teardown() {
	dm_cleanup
	nullb_unload || true
	guest_teardown
}

# dm_state: every mapped device with its table, to show nothing changed.
dm_state() {
	dmsetup table 2>&1 | sort
}

# refused STATUS CMD...: CMD exits STATUS with one "dmcopy: " line on
# stderr (a usage error, status 2, adds the line pointing to --help, as
# util-linux does), nothing on stdout, and the device-mapper state is as
# before.
refused() {
	local want=$1 before
	shift
	before=$(dm_state)
	run --separate-stderr "$@"
	echo "$* -> $status"
	echo "stdout: $output"
	echo "stderr: $stderr"
	[ "$status" -eq "$want" ] || fail "exit $status, not $want"
	[ -z "$output" ] || fail "something on stdout"
	if [ "$want" -eq 2 ]; then
		[ "${#stderr_lines[@]}" -eq 2 ] || fail "not two lines on stderr"
		[ "${stderr_lines[1]}" = "Try 'dmcopy --help' for more information." ] ||
			fail "no pointer to --help"
	else
		[ "${#stderr_lines[@]}" -eq 1 ] || fail "not one line on stderr"
	fi
	[[ $stderr == dmcopy:* ]] || fail "stderr does not start with 'dmcopy:'"
	[ "$(dm_state)" = "$before" ] || fail "the device-mapper state changed"
}

@test "dmcopy create maps a whole device with one copy target and a COPY- uuid" {
	local nb
	nb=$(devno /dev/nullb0)
	run "$DMCOPY" create dmt-c1 /dev/nullb0
	echo "$output"
	[ "$status" -eq 0 ]
	[ -b /dev/mapper/dmt-c1 ]
	[ "$(dmsetup table dmt-c1)" = "0 2097152 copy $nb 0" ]
	[ "$(dmsetup info -c --noheadings -o uuid dmt-c1)" = COPY-dmt-c1 ]
	[ "$(dm_queue dmt-c1 copy_max_hw_bytes)" -gt 0 ]
	# A copy within it is offloaded to null_blk.
	copy_and_verify /dev/mapper/dmt-c1 0 /dev/mapper/dmt-c1 $(( 64 * MiB )) $MiB
	[ "$(dm_status_field dmt-c1 1)" = auto ]
	[ "$(dm_status_field dmt-c1 3)" = $MiB ]
	[ "$(dm_status_field dmt-c1 5)" = 0 ]
}

@test "dmcopy create takes --offset, --size, --mode and --max-copy-bytes, with size suffixes" {
	local nb
	nb=$(devno /dev/nullb0)
	"$DMCOPY" create dmt-c2 /dev/nullb0 --offset 1M --size 64M --mode emulate \
		--max-copy-bytes 256K
	[ "$(dmsetup table dmt-c2)" = \
	  "0 131072 copy $nb 2048 4 mode emulate max_copy_bytes 262144" ]
	[ "$(dm_queue dmt-c2 copy_max_hw_bytes)" = 262144 ]
	# The rest of the device from an offset, in offload mode.
	"$DMCOPY" create dmt-c3 /dev/nullb0 --offset 512M -m offload
	[ "$(dmsetup table dmt-c3)" = "0 1048576 copy $nb 1048576 2 mode offload" ]
	# The mapping starts where --offset says: write through dmt-c2, read nullb0.
	random_file "$BATS_TEST_TMPDIR/p" 65536
	dev_write /dev/mapper/dmt-c2 0 "$BATS_TEST_TMPDIR/p"
	dev_expect /dev/nullb0 $MiB "$BATS_TEST_TMPDIR/p"
	copy_and_verify /dev/mapper/dmt-c2 $MiB /dev/mapper/dmt-c2 $(( 32 * MiB )) $MiB
	[ "$(dm_status_field dmt-c2 5)" = $MiB ]
	[ "$(dm_status_field dmt-c2 3)" = 0 ]
}

@test "dmcopy message switches the mode and resets the counters" {
	"$DMCOPY" create dmt-c4 /dev/nullb0 --size 128M
	copy_and_verify /dev/mapper/dmt-c4 0 /dev/mapper/dmt-c4 $(( 64 * MiB )) $MiB
	[ "$(dm_status_field dmt-c4 2)" = 1 ]
	run "$DMCOPY" message dmt-c4 mode emulate
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	[ "$(dm_status_field dmt-c4 1)" = emulate ]
	[[ "$(dmsetup table dmt-c4)" == *" 2 mode emulate" ]]
	copy_and_verify /dev/mapper/dmt-c4 0 /dev/mapper/dmt-c4 $(( 80 * MiB )) $MiB
	[ "$(dm_status_field dmt-c4 4)" = 1 ]
	[ "$(dm_status_field dmt-c4 5)" = $MiB ]
	"$DMCOPY" message dmt-c4 stats-reset
	[ "$(dmsetup status dmt-c4)" = "0 262144 copy emulate 0 0 0 0 0 0" ]
	"$DMCOPY" message dmt-c4 mode auto
	[ "$(dm_status_field dmt-c4 1)" = auto ]
}

@test "dmcopy remove removes the device, and only that one" {
	"$DMCOPY" create dmt-c5 /dev/nullb0 --size 64M
	"$DMCOPY" create dmt-c6 /dev/nullb0 --offset 64M --size 64M
	run "$DMCOPY" remove dmt-c5
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	! dmsetup info dmt-c5 >/dev/null 2>&1 || false
	[ ! -e /dev/mapper/dmt-c5 ]
	dmsetup info dmt-c6 >/dev/null
	"$DMCOPY" remove --noudevsync dmt-c6
	! dmsetup info dmt-c6 >/dev/null 2>&1
}

@test "dmcopy remove refuses a device dmcopy create did not make, unless --force" {
	# No uuid (a plain dmsetup table) and an LV's, as lvm2 sets it.
	dmsetup create dmt-plain --table "0 2048 linear /dev/nullb0 0"
	dmsetup create dmt-lv --uuid LVM-dmcopytestuuid0123456789 --table "0 2048 linear /dev/nullb0 2048"
	refused 1 "$DMCOPY" remove dmt-plain
	[ "$stderr" = "dmcopy: dmt-plain: not made by dmcopy create (uuid '', not COPY-...); --force removes it anyway" ]
	refused 1 "$DMCOPY" remove dmt-lv
	[ "$stderr" = "dmcopy: dmt-lv: not made by dmcopy create (uuid 'LVM-dmcopytestuuid0123456789', not COPY-...); --force removes it anyway" ]
	dmsetup info dmt-plain >/dev/null
	dmsetup info dmt-lv >/dev/null
	run -0 "$DMCOPY" remove --force dmt-plain
	run -0 "$DMCOPY" remove -f dmt-lv
	! dmsetup info dmt-plain >/dev/null 2>&1 || false
	! dmsetup info dmt-lv >/dev/null 2>&1 || false
	refused 1 "$DMCOPY" remove dmt-nonexistent
	[ "$stderr" = "dmcopy: dmt-nonexistent: no such mapped device" ]
}

@test "dmcopy create refuses bad input with one line and creates nothing" {
	"$DMCOPY" create dmt-c7 /dev/nullb0 --size 64M
	refused 1 "$DMCOPY" create dmt-c7 /dev/nullb0
	refused 1 "$DMCOPY" create dmt-c8 /dev/nonexistent
	refused 1 "$DMCOPY" create dmt-c8 /etc/passwd
	refused 1 "$DMCOPY" create dmt-c8 /dev/nullb0 --offset 1G
	refused 1 "$DMCOPY" create dmt-c8 /dev/nullb0 --offset 1000M --size 100M
	refused 2 "$DMCOPY" create dmt-c8 /dev/nullb0 --size 1X
	refused 2 "$DMCOPY" create dmt-c8 /dev/nullb0 --size 0
	refused 1 "$DMCOPY" create dmt-c8 /dev/nullb0 --size 100000T
	refused 2 "$DMCOPY" create dmt-c8 /dev/nullb0 --size 16777216T
	refused 2 "$DMCOPY" create dmt-c8 /dev/nullb0 --offset 1000
	refused 2 "$DMCOPY" create dmt-c8 /dev/nullb0 --mode fast
	refused 2 "$DMCOPY" create dmt-c8 /dev/nullb0 --max-copy-bytes 0
	refused 2 "$DMCOPY" create dmt-c8 /dev/nullb0 --max-copy-bytes 1000
	refused 2 "$DMCOPY" create dmt-c8 /dev/nullb0 --bogus
	refused 2 "$DMCOPY" create dmt-c8
	refused 2 "$DMCOPY" create
	refused 2 "$DMCOPY" create dmt-c8 /dev/nullb0 extra
	[ "$(dmsetup ls | grep -c dmt-)" -eq 1 ]
}

@test "dmcopy remove and message refuse bad input with one line and change nothing" {
	"$DMCOPY" create dmt-c9 /dev/nullb0 --size 64M
	refused 1 "$DMCOPY" remove dmt-nonexistent
	refused 2 "$DMCOPY" remove
	refused 2 "$DMCOPY" remove dmt-c9 dmt-c9
	refused 1 "$DMCOPY" message dmt-nonexistent mode auto
	refused 2 "$DMCOPY" message dmt-c9
	refused 2 "$DMCOPY" message dmt-c9 mode
	refused 2 "$DMCOPY" message dmt-c9 mode fast
	refused 2 "$DMCOPY" message dmt-c9 mode auto extra
	refused 2 "$DMCOPY" message dmt-c9 reboot
	refused 2 "$DMCOPY" message dmt-c9 stats-reset now
	[ "$(dm_status_field dmt-c9 1)" = auto ]
	# A device in use stays.
	dmsetup create dmt-top --table "0 1024 linear /dev/mapper/dmt-c9 0"
	refused 1 "$DMCOPY" remove dmt-c9
	# A message to a linear device: the kernel refuses it, dmcopy says so.
	refused 1 "$DMCOPY" message dmt-top mode emulate
}

@test "dmcopy with no command, an unknown command or option is a usage error" {
	refused 2 "$DMCOPY"
	refused 2 "$DMCOPY" frobnicate
	refused 2 "$DMCOPY" --bogus status
	run --separate-stderr "$DMCOPY" frobnicate
	[ "${stderr_lines[0]}" = "dmcopy: unknown command 'frobnicate'" ]
	run "$DMCOPY" --help
	[ "$status" -eq 0 ]
	[[ $output == Usage:* ]]
	run "$DMCOPY" -V
	[ "$status" -eq 0 ]
	[[ $output == "dmcopy "* ]]
}
