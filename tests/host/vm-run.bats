#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# tests/vm/run: the interface every kernel test stands on. These boot real
# guests (a few seconds each under TCG).

bats_require_minimum_version 1.5.0

RUN=$BATS_TEST_DIRNAME/../vm/run
TOP=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)

setup() {
	[ -f "$TOP/build/kernel.env" ] || skip "no kernel built (make kernel)"
	RELEASE=$(sed -n 's/^KERNEL_RELEASE=//p' "$TOP/build/kernel.env")
	export TMPDIR=$BATS_TEST_TMPDIR
}

@test "run -- uname -r prints the built release and exits 0" {
	run "$RUN" --timeout 300 -- uname -r
	[ "$status" -eq 0 ]
	[ "$output" = "$RELEASE" ]
}

@test "status, stdout, stderr, directory and arguments come back; the host stays untouched" {
	# One guest for several properties: each boot costs seconds under TCG.
	mkdir -p "$TOP/build"
	local probe=$TOP/build/vm-write-probe.$$
	rm -f "$probe"
	cd "$TOP/tests"
	run --separate-stderr "$RUN" --timeout 300 -- bash -c '
		pwd
		printf "<%s>\n" "$@"
		echo to-stderr >&2
		echo x >'"$probe"' && cat '"$probe"'
		exit 7' argv0 'a b' '$HOME' '*' "it's"
	[ "$status" -eq 7 ]
	[ "$stderr" = "to-stderr" ]
	[ "${lines[0]}" = "$TOP/tests" ]
	[ "${lines[1]}" = "<a b>" ]
	[ "${lines[2]}" = '<$HOME>' ]
	[ "${lines[3]}" = "<*>" ]
	[ "${lines[4]}" = "<it's>" ]
	# The guest wrote the probe into its overlay, not into the host.
	[ "${lines[5]}" = x ]
	[ ! -e "$probe" ]
}

@test "run -- false exits non-zero" {
	run "$RUN" --timeout 300 -- false
	[ "$status" -ne 0 ]
}

@test "a hung command is killed at --timeout with a clear message" {
	run "$RUN" --timeout 10 -- sleep 600
	[ "$status" -eq 124 ]
	[[ $output == *"timeout: guest killed after 10s"* ]]
	[[ $output == *"console log"* ]]
}

@test "--nvme sets the namespaces and their copy limits" {
	run "$RUN" --timeout 300 --nvme 64M,mssrl=16,mcl=64,msrc=3 --nvme 32M,bs=4096 -- \
		bash -c 'nvme id-ns /dev/nvme0n1 | grep -E "^(mssrl|mcl|msrc) "; 
			 cat /sys/block/nvme0n2/queue/logical_block_size /sys/block/nvme0n2/size'
	[ "$status" -eq 0 ]
	[[ $output == *"mssrl   : 16"* ]]
	[[ $output == *"mcl     : 64"* ]]
	[[ $output == *"msrc    : 3"* ]]
	[ "${lines[-2]}" = 4096 ]
	[ "${lines[-1]}" = $(( 32 * 2048 )) ]
}

@test "bad options are refused before booting" {
	run "$RUN" --bogus -- true
	[ "$status" -eq 125 ]
	[[ $output == *"unknown option '--bogus'"* ]]

	run "$RUN"
	[ "$status" -eq 125 ]
	[[ $output == *"no COMMAND given"* ]]

	run "$RUN" --nvme 1G,mcl=x -- true
	[ "$status" -eq 125 ]
	[[ $output == *"'mcl=x' needs a number"* ]]

	run "$RUN" --nvme 1G,foo=1 -- true
	[ "$status" -eq 125 ]
	[[ $output == *"unknown option 'foo=1'"* ]]

	run "$RUN" --nvme lots -- true
	[ "$status" -eq 125 ]
	[[ $output == *"bad size 'lots'"* ]]

	run "$RUN" --timeout 0 -- true
	[ "$status" -eq 125 ]

	run "$RUN" --mem 1G -- true
	[ "$status" -eq 125 ]
	[[ $output == *"--mem takes MiB"* ]]
}

@test "a missing kernel or qemu is a clear error" {
	run "$RUN" --kernel /nonexistent/bzImage -- true
	[ "$status" -eq 125 ]
	[[ $output == *"kernel image '/nonexistent/bzImage' not found"* ]]

	QEMU=/nonexistent/qemu run "$RUN" -- true
	[ "$status" -eq 125 ]
	[[ $output == *"/nonexistent/qemu not found"* ]]
}
