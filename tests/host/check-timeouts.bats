#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# A hang fails one test by name, within that test's own timeout, and the
# tests after it still run; a guest that hangs or dies is stopped and the
# summary names the test it was running and every test that never ran.
# Scratch suites with tests that hang or crash on purpose: on the host
# through tests/lib/common.bash's watchdog, and in real guests through
# tests/check (a few boots, seconds each under TCG).

bats_require_minimum_version 1.5.0

TOP=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
FORMAT=$TOP/tests/lib/bats-format-vm

setup() {
	export TMPDIR=$BATS_TEST_TMPDIR
	SUITE=$BATS_TEST_TMPDIR/suite
	mkdir -p "$SUITE"
}

# unbatsed COMMAND...: COMMAND without this bats' BATS_* variables (its
# filter, its run directory) and its libexec directory in PATH, which the
# inner bats and the guest would take.
unbatsed() {
	local -a unset=()
	local v path
	for v in $(compgen -e | grep '^BATS_'); do
		unset+=(-u "$v")
	done
	path=$(tr ':' '\n' <<<"$PATH" | grep -v '/bats-core' | paste -sd:)
	env "${unset[@]}" PATH="$path" "$@"
}

need_kernel() {
	[ -f "$TOP/build/kernel.env" ] ||
		skip "no kernel built ($TOP/build/kernel.env missing; make kernel)"
}

# scratch FILE TIMEOUT BODY: a suite file whose tests have TIMEOUT seconds;
# BODY spells @test as %test, or this file's bats would take them as its own.
scratch() {
	{
		echo "DMCOPY_TEST_TIMEOUT=$2"
		echo "load $TOP/tests/lib/common"
		printf '%s\n' "$3" | sed 's/^%test /@test /'
	} >"$SUITE/$1"
}

@test "watchdog: hangs in run, a pipeline and the teardown fail their test by name, the next tests run" {
	scratch 10-hang.bats 3 '
teardown() { [ "$BATS_TEST_DESCRIPTION" != "hangs, and its teardown too" ] || sleep 600; echo teardown done; }
%test "before" { true; }
%test "hangs under run" { run sleep 600; }
%test "hangs in a pipeline" { sleep 600 | cat; }
%test "hangs, and its teardown too" { sleep 600; }
%test "after" { true; }'
	local t0=$SECONDS
	DMCOPY_TEST_TIMEOUT_SCALE=1 run unbatsed bats --formatter "$FORMAT" "$SUITE"
	echo "$output"
	[ "$status" -eq 1 ]
	# 3 s each, and the hung teardown ended after 3 more (plus 2 s grace)
	[ $(( SECONDS - t0 )) -lt 40 ]
	[ "${lines[0]}" = "1..5" ]
	[[ $output == *$'\nok 1 before\n'* ]]
	[[ $output == *$'\nnot ok 2 hangs under run # timeout after 3 s\n'* ]]
	[[ $output == *$'\nnot ok 3 hangs in a pipeline # timeout after 3 s\n'* ]]
	[[ $output == *$'\nnot ok 4 hangs, and its teardown too # timeout after 3 s\n'* ]]
	[[ $output == *$'\nok 5 after' ]]
	# what the test was doing: its processes, with the one that hung
	[[ $output == *"# timeout: the test ran for 3 s (DMCOPY_TEST_TIMEOUT=3 x DMCOPY_TEST_TIMEOUT_SCALE=1); its processes:"* ]]
	[[ $output == *"sleep 600"* ]]
	[[ $output == *"# timeout: the teardown still runs"* ]]
	# begin lines name each test as it starts
	[[ $output == *$'\n# bats-begin 2 hangs under run\n'* ]]
	# nothing left behind (a process just sent SIGTERM may take a moment)
	local i
	for i in $(seq 50); do
		pgrep -x -f "sleep 600" >/dev/null || break
		sleep 0.1
	done
	! pgrep -x -f "sleep 600" >/dev/null
}

@test "watchdog: DMCOPY_TEST_TIMEOUT_SCALE multiplies the timeout; a test within it passes" {
	scratch 10-slow.bats 1 '@test "takes 2 s" { sleep 2; }'
	DMCOPY_TEST_TIMEOUT_SCALE=4 run -0 unbatsed bats --formatter "$FORMAT" "$SUITE"
	[ "${lines[2]}" = "ok 1 takes 2 s" ]
	DMCOPY_TEST_TIMEOUT_SCALE=1 run -1 unbatsed bats --formatter "$FORMAT" "$SUITE"
	[ "${lines[2]}" = "not ok 1 takes 2 s # timeout after 1 s" ]
}

@test "bats-list: every test of a suite in bats' order, with its file's timeout" {
	scratch 20-b.bats 300 '@test "b one" { true; }'
	scratch 10-a.bats 7 $'%test "a one" { true; }\n%test \'a two\' { true; }'
	run -0 "$TOP/tests/lib/bats-list" "$SUITE"
	[ "${#lines[@]}" -eq 3 ]
	[ "${lines[0]}" = "$SUITE/10-a.bats"$'\t7\ta one' ]
	[ "${lines[1]}" = "$SUITE/10-a.bats"$'\t7\ta two' ]
	[ "${lines[2]}" = "$SUITE/20-b.bats"$'\t300\tb one' ]
	# and the kernel suites agree with bats on their number of tests
	local s
	for s in block nvme dm tools; do
		[ "$("$TOP/tests/lib/bats-list" "$TOP/tests/$s" | wc -l)" = "$(bats --count "$TOP/tests/$s")" ]
	done
}

# check_vm: tests/check --vm on the scratch suite, its summary in $output;
# the timeouts as written (tests/check would double them on one core).
check_vm() {
	run unbatsed DMCOPY_TEST_TIMEOUT_SCALE=1 DMCOPY_TEST_RESULTS="$BATS_TEST_TMPDIR/results" \
		"$TOP/tests/check" --vm "$SUITE"
	echo "$output"
}

@test "guest: a hung test is reported with the kernel's lines, the next runs; a silent guest is killed and the rest named" {
	need_kernel
	scratch 10-hang.bats 8 '
setup() { guest_setup; }
teardown() { guest_teardown; }
%test "hangs in the guest" { run sleep 600; }
%test "runs after the hang" { true; }'
	scratch 20-stuck.bats 900 '
%test "stops printing" { sleep 900; }
%test "never runs" { true; }'
	local t0=$SECONDS
	# 60 s: under load bats may take a while to start in the guest
	DMCOPY_VM_IDLE_TIMEOUT=60 check_vm
	[ "$status" -eq 1 ]
	# the idle watchdog, not the 900 s test timeout nor the deadline
	[ $(( SECONDS - t0 )) -lt 400 ]
	[[ $output == *"timeout: guest killed after the command printed nothing for "* ]]
	[[ $output == *"not ok 1 hangs in the guest # in "*" ms # timeout after 8 s"* ]]
	# the report was written in the guest: blocked tasks and kernel lines
	[[ $output == *"# the kernel's last lines (blocked tasks last):"* ]]
	[[ $output == *"sysrq: Show Blocked State"* ]]
	[[ $output == *$'\nok 2 runs after the hang'* ]]
	[[ $output == *"not ok 3 stops printing # never reported: running when the guest stopped"* ]]
	[[ $output == *"not ok 4 never runs # never reported: did not run"* ]]
	[[ $output == *"not ok 1 test VM 1 exited with status 124"* ]]
	[ "${lines[-1]}" = "1 passed, 4 failed" ]
}

@test "guest: a kernel crash mid-suite names the test that crashed it and those that never ran" {
	need_kernel
	# The crash waits 2 s: a panic right after the test began can stop
	# the guest before the line saying so left it (seen with another
	# guest running beside this one), and the test is then reported as
	# one that did not run.
	scratch 10-crash.bats 60 '
%test "fine" { true; }
%test "crashes the kernel" { sleep 2; echo c >/proc/sysrq-trigger; }
%test "never runs either" { true; }'
	check_vm
	[ "$status" -eq 1 ]
	[[ $output == *"the guest stopped without reporting the command's status"* ]]
	[[ $output == *"not ok 2 crashes the kernel # never reported: running when the guest stopped"* ]]
	[[ $output == *"not ok 3 never runs either # never reported: did not run"* ]]
	[[ $output == *"not ok 1 test VM 1 exited with status 125"* ]]
	[ "${lines[-1]}" = "1 passed, 3 failed" ]
}

@test "two guests (DMCOPY_VM_JOBS=2): one TAP stream each, one summary" {
	need_kernel
	local a=$BATS_TEST_TMPDIR/suite-a b=$BATS_TEST_TMPDIR/suite-b
	mkdir -p "$a" "$b"
	SUITE=$a scratch 10-a.bats 60 $'%test "in a, passes" { true; }\n%test "in a, skips" { skip "no such device"; }'
	SUITE=$b scratch 10-b.bats 60 $'%test "in b, fails" { false; }\n%test "in b, passes" { true; }'
	run unbatsed DMCOPY_VM_JOBS=2 DMCOPY_TEST_RESULTS="$BATS_TEST_TMPDIR/results" \
		"$TOP/tests/check" --vm "$a" "$b"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ $output == *"== kernel suites in two test VMs:"* ]]
	# each guest's lines carry its name; each has its own TAP file
	[[ $output == *"[vm"[12]"] ok 1 in a, passes"* ]]
	[[ $output == *"[vm"[12]"] not ok 1 in b, fails"* ]]
	[[ $output == *"[vm1] "* ]] && [[ $output == *"[vm2] "* ]]
	[ -s "$BATS_TEST_TMPDIR/results/vm1.tap" ]
	[ -s "$BATS_TEST_TMPDIR/results/vm2.tap" ]
	[[ $output == *$'\nnot ok 1 in b, fails'* ]]
	[ "${lines[-1]}" = "2 passed, 1 failed, 1 skipped" ]
}
