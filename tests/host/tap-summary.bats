#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# tests/lib/tap-summary decides make check's verdict: a failed, missing or
# never-started test must fail it.

SUMMARY=$BATS_TEST_DIRNAME/../lib/tap-summary

# summarize TAP: run tap-summary on one file holding TAP (printf format).
summarize() {
	# shellcheck disable=SC2059 # the argument is the format
	printf "$1" >"$BATS_TEST_TMPDIR/a.tap"
	run "$SUMMARY" "$BATS_TEST_TMPDIR/a.tap"
}

@test "all passing: summary line and status 0" {
	summarize '1..2\nok 1 a\nok 2 b\n'
	[ "$status" -eq 0 ]
	[ "${lines[-1]}" = "2 passed, 0 failed" ]
}

@test "a failing test fails the summary" {
	summarize '1..2\nok 1 a\nnot ok 2 b\n# (in test file x)\n'
	[ "$status" -eq 1 ]
	[ "${lines[0]}" = "not ok 2 b" ]
	[ "${lines[-1]}" = "1 passed, 1 failed" ]
}

@test "skips are counted and named, and do not fail" {
	summarize '1..2\nok 1 a\nok 2 b # skip needs NVMe\n'
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "ok 2 b # skip needs NVMe" ]
	[ "${lines[-1]}" = "1 passed, 0 failed, 1 skipped" ]
}

@test "tests a plan announced but that never reported count as failed" {
	summarize '1..5\nok 1 a\nok 2 b\n'
	[ "$status" -eq 1 ]
	[ "${lines[-1]}" = "2 passed, 3 failed" ]
}

@test "a run without a plan (guest never started) fails" {
	: >"$BATS_TEST_TMPDIR/empty.tap"
	printf '1..1\nok 1 a\n' >"$BATS_TEST_TMPDIR/a.tap"
	run "$SUMMARY" "$BATS_TEST_TMPDIR/a.tap" "$BATS_TEST_TMPDIR/empty.tap"
	[ "$status" -eq 1 ]
	[[ $output == *"empty.tap: no TAP plan"* ]]
	[ "${lines[-1]}" = "1 passed, 1 failed" ]
}

@test "several files add up" {
	printf '1..1\nok 1 a\n' >"$BATS_TEST_TMPDIR/a.tap"
	printf '1..2\nok 1 b\nok 2 c # skip no disk\n' >"$BATS_TEST_TMPDIR/b.tap"
	run "$SUMMARY" "$BATS_TEST_TMPDIR/a.tap" "$BATS_TEST_TMPDIR/b.tap"
	[ "$status" -eq 0 ]
	[ "${lines[-1]}" = "2 passed, 0 failed, 1 skipped" ]
}
