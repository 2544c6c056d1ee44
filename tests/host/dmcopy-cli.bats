#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# dmcopy's command line on the host, no kernel of ours needed: numbers
# that cannot be meant are refused before any I/O and leave the files as
# they were. Needs 'make userspace'.

bats_require_minimum_version 1.5.0

TOP=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
DMCOPY=$TOP/tools/dmcopy

setup_file() {
	[ -x "$DMCOPY" ] || {
		echo "# $DMCOPY not built: run 'make userspace'" >&3
		return 1
	}
}

setup() {
	D=$BATS_TEST_TMPDIR
	head -c 65536 /dev/urandom >"$D/src"
	head -c 65536 /dev/urandom >"$D/dst"
	cp "$D/dst" "$D/dst.before"
}

# usage_error ARGS... MESSAGE: dmcopy ARGS fails with exit 2 and MESSAGE,
# nothing on stdout, the destination untouched.
usage_error() {
	local message=${*: -1}

	run --separate-stderr "$DMCOPY" "${@:1:$#-1}"
	echo "status $status, stderr: $stderr"
	[ "$status" -eq 2 ]
	[ -z "$output" ]
	[ "${stderr_lines[0]}" = "dmcopy: $message" ]
	cmp "$D/dst" "$D/dst.before"
}

@test "--length: the whole-device value and anything past 2^63 - 1 cannot be typed" {
	usage_error copy --length 18446744073709551615 "$D/src" "$D/dst" \
		"--length '18446744073709551615': too large (at most 9223372036854775807 bytes)"
	usage_error copy --length 9223372036854775808 "$D/src" "$D/dst" \
		"--length '9223372036854775808': too large (at most 9223372036854775807 bytes)"
	usage_error copy --length 16777216T "$D/src" "$D/dst" \
		"--length '16777216T': too large (at most 9223372036854775807 bytes)"
	usage_error copy --chunk 99999999999999999999 "$D/src" "$D/dst" \
		"--chunk '99999999999999999999': too large (at most 9223372036854775807 bytes)"
}

@test "an offset or an end past what the kernel takes: a clear error before any I/O" {
	run --separate-stderr "$DMCOPY" copy --length 4096 "$D/src" "$D/dst:9223372036854775808"
	[ "$status" -eq 1 ]
	[ "$stderr" = "dmcopy: $D/dst: offset 9223372036854775808 is past what the kernel takes (9223372036854775807)" ]
	run --separate-stderr "$DMCOPY" copy --length 4096 "$D/src" "$D/dst:9223372036854775296"
	[ "$status" -eq 1 ]
	[ "$stderr" = "dmcopy: $D/dst: 4096 bytes at 9223372036854775296 end past what the kernel takes (9223372036854775807)" ]
	cmp "$D/dst" "$D/dst.before"
	# What fits is copied.
	run --separate-stderr "$DMCOPY" copy -q --length 4096 "$D/src" "$D/dst:8192"
	[ "$status" -eq 0 ]
	cmp -n 4096 "$D/src" <(tail -c +8193 "$D/dst")
}

@test "provision --count and --jobs take digits only, as sizes do" {
	local n
	for n in +3 " 3" 3x -1 0 ""; do
		run --separate-stderr "$DMCOPY" provision --golden /dev/null --vg vg --count "$n"
		[ "$status" -eq 2 ]
		[ "${stderr_lines[0]}" = "dmcopy: invalid --count '$n': a number from 1 to 10000" ]
		run --separate-stderr "$DMCOPY" provision --golden /dev/null --vg vg --count 2 --jobs "$n"
		[ "$status" -eq 2 ]
		[ "${stderr_lines[0]}" = "dmcopy: invalid --jobs '$n': a number from 1 to 10000" ]
	done
}

@test "without device-mapper in the kernel: 'device-mapper not available', not libdm's message" {
	if dmsetup version 2>/dev/null | grep -q '^Driver version'; then
		skip "this host's kernel has device-mapper"
	fi
	run --separate-stderr "$DMCOPY" remove dmt-none
	[ "$status" -eq 1 ]
	[ "$stderr" = "dmcopy: dmt-none: device-mapper not available (no dm_mod in this kernel, or /dev/mapper/control missing)" ]
}
