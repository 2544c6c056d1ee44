#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# dmcopy status against the fixture sysfs tree of the unit tests
# (tests/host/unit/fixtures/sys, read through DMCOPY_SYSFS): output
# formats, columns, and usage and device errors with their exit codes.
# Needs 'make userspace'.

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
	export DMCOPY_SYSFS=$TOP/tests/host/unit/fixtures/sys
}

# status ARGS...: run dmcopy status with stderr apart.
status() {
	run --separate-stderr "$DMCOPY" status "$@"
}

# usage_error ARGS... MESSAGE: dmcopy ARGS fails with exit 2, MESSAGE and
# the pointer to --help on stderr, nothing on stdout.
usage_error() {
	local message=${*: -1}

	run --separate-stderr "$DMCOPY" "${@:1:$#-1}"
	[ "$status" -eq 2 ]
	[ -z "$output" ]
	[ "${#stderr_lines[@]}" -eq 2 ]
	[ "${stderr_lines[0]}" = "dmcopy: $message" ]
	[ "${stderr_lines[1]}" = "Try 'dmcopy --help' for more information." ]
}

@test "plain: a header and one line per device with a size" {
	status
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "${#lines[@]}" -eq 7 ]
	[[ ${lines[0]} =~ ^NAME\ +SIZE\ +LOG-SEC\ +COPY-MAX-HW\ +COPY-MAX\ +OFFLOADED\ +EMULATED\ +FAILED\ +TYPE\ +LAYER\ +NOTE$ ]]
	[[ ${lines[2]} =~ ^nullb0\ +1G\ +512\ +128M\ +128M\ +3\ +1\ +1\ +nullb0\ +nullb0\ offloads\ copies$ ]]
	[[ ${lines[6]} =~ ^vda\ +10G\ +512\ +vda\ +kernel\ without\ copy\ offload:\ copies\ go\ through\ user\ space$ ]]
	[[ $output != *loop0* ]]
}

@test "-J: JSON that jq reads, numbers (sizes in bytes) as numbers, unknown as null" {
	status -J
	[ "$status" -eq 0 ]
	[ "$(jq '.devices | length' <<<"$output")" -eq 6 ]
	[ "$(jq -r '.devices[] | select(.name == "nullb0") | [.offloaded, .emulated, .failed, ."log-sec"] | map(type) | unique | .[]' <<<"$output")" = number ]
	[ "$(jq -c '.devices[] | select(.name == "nullb0") | [.offloaded, .emulated, .failed, ."log-sec"]' <<<"$output")" = "[3,1,1,512]" ]
	[ "$(jq -r '.devices[] | select(.name == "nullb0") | .size' <<<"$output")" = 1073741824 ]
	[ "$(jq -c '.devices[] | select(.name == "vda") | [."copy-max-hw", .offloaded]' <<<"$output")" = "[null,null]" ]
	[ "$(jq -r '.devices[] | select(.name == "sda") | .note' <<<"$output")" = "sda cannot offload copies" ]
}

@test "-J -b: sizes are numbers of bytes" {
	status -J -b -o NAME,SIZE,COPY-MAX-HW,COPY-MAX,OFFLOADED-BYTES,EMULATED-BYTES,FAILED-BYTES nullb0
	[ "$status" -eq 0 ]
	[ "$(jq -c '.devices[0] | [.size, ."copy-max-hw", ."copy-max", ."offloaded-bytes", ."emulated-bytes", ."failed-bytes"]' <<<"$output")" = "[1073741824,134217728,134217728,12288,4096,512]" ]
}

@test "-r: raw output, one space between fields" {
	status -r -o NAME,COPY-MAX,VERDICT nullb1 vda
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "NAME COPY-MAX VERDICT" ]
	[ "${lines[1]}" = "nullb1 0B emulate-kernel" ]
	[ "${lines[2]}" = "vda  userspace" ]
}

@test "-o and -n: chosen columns, no header; dm name, uuid, slaves, holders" {
	status -r -n -o NAME,DM-NAME,UUID,SLAVES,HOLDERS dm-0 nullb0
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 2 ]
	[ "${lines[0]}" = "dm-0 golden COPY-golden nullb0 " ]
	[ "${lines[1]}" = "nullb0    dm-0" ]
}

@test "-o +LIST adds to the default columns; names in any case" {
	status -r -o +uuid dm-0
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "NAME SIZE LOG-SEC COPY-MAX-HW COPY-MAX OFFLOADED EMULATED FAILED TYPE LAYER NOTE UUID" ]
	[[ ${lines[1]} == "dm-0 512M 512 8M 8M 5 2 0 "*" COPY-golden" ]]
}

@test "-b: sizes in bytes; partitions and MAJ:MIN use their disk's queue" {
	status -r -n -b -o NAME,SIZE,LOG-SEC,COPY-MAX-HW,OFFLOADED-BYTES nullb0 259:1
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "nullb0 1073741824 512 134217728 12288" ]
	[ "${lines[1]}" = "nvme0n1p1 536870912 4096 1048576 0" ]
}

@test "-o help lists every column with its help" {
	run --separate-stderr "$DMCOPY" status -o help
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "Available output columns:" ]
	[[ $output =~ \ +COPY-MAX-HW\ +largest\ copy ]]
	[ "${#lines[@]}" -eq 20 ]
}

@test "-h and --help print usage on stdout and exit 0; -V the version" {
	run --separate-stderr "$DMCOPY" --help
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[ "${lines[0]}" = "Usage:" ]
	run --separate-stderr "$DMCOPY" status -h
	[ "$status" -eq 0 ]
	[[ $output == *"--noheadings"* ]]
	run "$DMCOPY" -V
	[ "$status" -eq 0 ]
	[[ $output =~ ^dmcopy\ [0-9]+\.[0-9]+ ]]
}

@test "usage errors exit 2 with one message and the pointer to --help" {
	usage_error foo "unknown command 'foo'"
	usage_error "no command given"
	usage_error --bogus "unrecognized option '--bogus'"
	usage_error status -x "invalid option -- 'x'"
	usage_error status -o NAME,NOPE "unknown column 'NOPE'"
	usage_error status -o NAME,,SIZE "empty column name in 'NAME,,SIZE'"
	usage_error status -J -r "--json and --raw are mutually exclusive"
	usage_error status -o "option requires an argument -- 'o'"
	usage_error status --output "option '--output' requires an argument"
	usage_error status --json=yes "option '--json' doesn't allow an argument"
	usage_error create --offset "option '--offset' requires an argument"
	usage_error copy -f -l "option requires an argument -- 'l'"
	usage_error copy --length "option '--length' requires an argument"
}

@test "LAYER: a dm device names the device below whose limits decide" {
	status -r -n -o NAME,LAYER dm-0 nullb0 vda
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "dm-0 nullb0" ]
	[ "${lines[1]}" = "nullb0 nullb0" ]
	[ "${lines[2]}" = "vda vda" ]
}

@test "no device named was found: exit 32 as lsblk, one line each on stderr, no table" {
	status nosuch
	[ "$status" -eq 32 ]
	[ -z "$output" ]
	[ "$stderr" = "dmcopy: nosuch: no such block device" ]
	status /dev/null
	[ "$status" -eq 32 ]
	[ "$stderr" = "dmcopy: /dev/null: not a block device" ]
}

@test "-J with no device found: still an empty array for JSON readers, exit 32" {
	status -J nosuch
	[ "$status" -eq 32 ]
	[ "$(jq -c . <<<"$output")" = '{"devices":[]}' ]
	mkdir "$BATS_TEST_TMPDIR/sys"
	DMCOPY_SYSFS=$BATS_TEST_TMPDIR/sys status -J
	[ "$status" -eq 0 ]
	[ "$(jq -c . <<<"$output")" = '{"devices":[]}' ]
}

@test "output that cannot be written: exit 1 with a write error, as lsblk" {
	run --separate-stderr "$DMCOPY" status
	[ "$status" -eq 0 ]
	run --separate-stderr bash -c '"$0" status >/dev/full' "$DMCOPY"
	[ "$status" -eq 1 ]
	[ "$stderr" = "dmcopy: write error: No space left on device" ]
	run --separate-stderr bash -c '"$0" --help >/dev/full' "$DMCOPY"
	[ "$status" -eq 1 ]
	# A reader that stopped reading is no error.
	run bash -c 'set -o pipefail; "$0" status -o NAME | head -n 1' "$DMCOPY"
	[ "$status" -eq 0 ]
}

@test "some devices failed: exit 64, the others shown" {
	status -r -n -o NAME nullb0 nosuch vda
	[ "$status" -eq 64 ]
	[ "$stderr" = "dmcopy: nosuch: no such block device" ]
	[ "${lines[0]}" = nullb0 ]
	[ "${lines[1]}" = vda ]
}

@test "a sysfs root without block devices: nothing to show, no error" {
	mkdir "$BATS_TEST_TMPDIR/sys"
	DMCOPY_SYSFS=$BATS_TEST_TMPDIR/sys status
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	[ -z "$stderr" ]
}
