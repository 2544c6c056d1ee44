# SPDX-License-Identifier: GPL-2.0
#
# Helpers shared by the bats suites. Load with:
#   load ../lib/common
#
# Suites under tests/{block,nvme,dm,tools} run inside the test VM
# (tests/vm/run); tests/host runs on the host.

DMCOPY_TOP=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)

# --------------------------------------------------------------- guest ---

# Skip unless running as root in the test VM booted from our kernel.
require_guest() {
	if [ -z "${DMCOPY_KERNEL_RELEASE:-}" ] || [ "$(uname -r)" != "$DMCOPY_KERNEL_RELEASE" ]; then
		skip "needs the dm-copy test VM (run through tests/vm/run)"
	fi
}

# Kernel log lines that fail a test when they show up during it.
DMESG_BAD='BUG:|WARNING:|Oops|KASAN|UBSAN|general protection|possible recursive locking|possible circular locking|inconsistent lock state|lockdep|unreferenced object|kmemleak|list_add corruption|list_del corruption|refcount_t:|hung_task|Call Trace'

# Remember where the kernel log stands; dmesg_check looks only past it.
dmesg_mark() {
	DMESG_START=$(dmesg | wc -l)
}

# Fail with the offending lines if the kernel logged a bug, a warning, a
# KASAN/lockdep splat or a leak since dmesg_mark.
dmesg_check() {
	local since=$(( ${DMESG_START:-0} + 1 ))
	if [ -w /sys/kernel/debug/kmemleak ]; then
		echo scan >/sys/kernel/debug/kmemleak 2>/dev/null || true
		local leaks
		leaks=$(cat /sys/kernel/debug/kmemleak 2>/dev/null || true)
		if [ -n "$leaks" ]; then
			echo "kmemleak reports leaks:" >&2
			echo "$leaks" | head -n 60 >&2
			echo clear >/sys/kernel/debug/kmemleak
			return 1
		fi
	fi
	local bad
	bad=$(dmesg | tail -n +"$since" | grep -E "$DMESG_BAD" || true)
	if [ -n "$bad" ]; then
		echo "kernel log reports problems during the test:" >&2
		dmesg | tail -n +"$since" | head -n 80 >&2
		return 1
	fi
}

# Standard setup/teardown for kernel tests; suites that need more define
# their own and call these.
guest_setup() {
	require_guest
	dmesg_mark
}

guest_teardown() {
	[ -n "${DMESG_START:-}" ] || return 0
	dmesg_check
}

# ---------------------------------------------------------------- data ---

# random_file FILE BYTES: FILE gets BYTES of random data.
random_file() {
	head -c "$2" /dev/urandom >"$1"
	[ "$(stat -c %s "$1")" -eq "$2" ]
}

# dev_write DEV OFFSET FILE: write FILE at byte OFFSET of DEV, bypassing the
# page cache so the device itself holds the data.
dev_write() {
	local len
	len=$(stat -c %s "$3")
	dd if="$3" of="$1" bs=512 seek=$(( $2 / 512 )) count=$(( len / 512 )) \
		oflag=direct conv=notrunc,fsync status=none
}

# dev_read DEV OFFSET LEN FILE: read LEN bytes at OFFSET of DEV into FILE.
dev_read() {
	dd if="$1" of="$4" bs=512 skip=$(( $2 / 512 )) count=$(( $3 / 512 )) \
		iflag=direct status=none
}

# dev_expect DEV OFFSET FILE: the bytes of DEV at OFFSET equal FILE.
dev_expect() {
	local len got
	len=$(stat -c %s "$3")
	got=$(mktemp "${BATS_TEST_TMPDIR:-/tmp}/got.XXXXXX")
	dev_read "$1" "$2" "$len" "$got"
	if ! cmp -s "$got" "$3"; then
		echo "$1: $len bytes at offset $2 differ from $3:" >&2
		cmp "$got" "$3" 2>&1 | head -n 3 >&2
		return 1
	fi
}

# No udevd runs in the test VM: let libdevmapper create device nodes itself
# instead of waiting for udev.
export DM_DISABLE_UDEV=1

# fail MESSAGE: fail the test with MESSAGE (as bats-assert's fail does).
fail() {
	echo "$*" >&2
	return 1
}
