#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# Short runs of the fuzzers in tests/fuzz (libFuzzer, ASan, UBSan): each
# over its seed corpus and what earlier runs kept, for DMCOPY_FUZZ_RUNS
# inputs (by default about ten seconds' worth of each; docs/workflow.md
# has the long form). A crash,
# leak, sanitizer report or failed check fails the test, and the input
# that caused it is left in build/fuzz/.

bats_require_minimum_version 1.5.0

TOP=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
FUZZ=$TOP/tests/fuzz
WORK=$TOP/build/fuzz

setup_file() {
	make -s -C "$FUZZ" all
}

# fuzz TARGET RUNS: run it for DMCOPY_FUZZ_RUNS or RUNS inputs, print its
# final statistics, fail on any finding.
fuzz() {
	local runs=${DMCOPY_FUZZ_RUNS:-$2}
	mkdir -p "$WORK/$1"
	rm -f "$WORK"/crash-* "$WORK"/leak-* "$WORK"/timeout-* "$WORK"/oom-*
	run "$FUZZ/$1" -runs="$runs" -print_final_stats=1 -close_fd_mask=2 \
		-dict="$FUZZ/dm-copy.dict" -artifact_prefix="$WORK/" \
		"$WORK/$1" "$FUZZ/corpus/$1"
	grep -E '^stat::number_of_executed_units|^Done' <<<"$output" || true
	if [ "$status" -ne 0 ]; then
		grep -E 'ERROR|SUMMARY|Assertion|runtime error|kernel shim' <<<"$output" | head -n 20
		ls "$WORK"/crash-* "$WORK"/leak-* 2>/dev/null
		return 1
	fi
	grep -qE "^stat::number_of_executed_units: *$runs\$" <<<"$output"
}

@test "fuzz-dm-copy: the copy target's table, features, status and messages" {
	fuzz fuzz-dm-copy 300000
}

@test "fuzz-libdmcopy: sizes, modes, copy status and table lines" {
	fuzz fuzz-libdmcopy 3000000
}

@test "fuzz-dmcopy-cli: dmcopy status, and create's and copy's command lines" {
	fuzz fuzz-dmcopy-cli 100000
}
