# SPDX-License-Identifier: GPL-2.0
#
# Helpers shared by the bats suites. Load with:
#   load ../lib/common
#
# Suites under tests/{block,nvme,dm,tools} run inside the test VM
# (tests/vm/run); tests/host runs on the host.

DMCOPY_TOP=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)

# ------------------------------------------------------------ timeouts ---
#
# Every test has its own timeout, so that a hang fails that test by name
# and the tests after it still run: DMCOPY_TEST_TIMEOUT seconds (default
# 180; a file whose tests need longer sets it before loading this file),
# times DMCOPY_TEST_TIMEOUT_SCALE (tests/check raises it on a machine with
# one core and for the debug kernel). bats' own BATS_TEST_TIMEOUT only
# signals the test's direct children, which misses a command under `run`
# or in a pipeline, so a watchdog of ours does the work: when the time is
# up it writes the test's processes (state and kernel wait channel), the
# blocked tasks (sysrq w) and the last kernel lines into the test's output,
# ends every process the test started and lets bats report
# "not ok N ... # timeout after S s" and run the teardown. A teardown
# that hangs too has its processes ended again every DMCOPY_TEST_TIMEOUT
# seconds. Only what sleeps in the kernel uninterruptibly survives that;
# tests/check's idle watchdog ends the guest then.

: "${DMCOPY_TEST_TIMEOUT:=180}"
: "${DMCOPY_TEST_TIMEOUT_SCALE:=1}"

# dmcopy_descendants PID SKIP: the processes below PID, one per line, but
# SKIP and those below it.
dmcopy_descendants() {
	ps -e -o pid=,ppid= | awk -v root="$1" -v skip="$2" '
		$1 != skip { kids[$2] = kids[$2] " " $1 }
		END {
			n = split(kids[root], queue, " ")
			for (i = 1; i <= n; i++) {
				print queue[i]
				m = split(kids[queue[i]], more, " ")
				for (j = 1; j <= m; j++)
					queue[++n] = more[j]
			}
		}'
}

# dmcopy_end_processes PID...: TERM, and KILL for what is left after 2 s.
dmcopy_end_processes() {
	[ $# -gt 0 ] || return 0
	kill -TERM "$@" 2>/dev/null
	sleep 2
	kill -KILL "$@" 2>/dev/null
	return 0
}

# dmcopy_timeout_report TEST-PID SECONDS WATCHDOG-PID: what the test was
# doing when its time ran out.
dmcopy_timeout_report() {
	local pids
	pids=$(dmcopy_descendants "$1" "$3" | paste -sd,)
	echo "timeout: the test ran for $2 s (DMCOPY_TEST_TIMEOUT=$DMCOPY_TEST_TIMEOUT x DMCOPY_TEST_TIMEOUT_SCALE=$DMCOPY_TEST_TIMEOUT_SCALE); its processes:"
	[ -z "$pids" ] || ps -o pid,stat,wchan:28,etimes,args -p "$pids" 2>&1 | cut -c1-160
	if [ -w /proc/sysrq-trigger ] && [ -n "${DMCOPY_KERNEL_RELEASE:-}" ]; then
		echo w >/proc/sysrq-trigger
		echo "the kernel's last lines (blocked tasks last):"
		dmesg | tail -n 80
	fi
}

# dmcopy_started PID: DMCOPY_STARTED gets PID's start time (empty once
# it is gone), which tells it from a later process with the same number.
dmcopy_started() {
	local stat
	DMCOPY_STARTED=
	read -r stat <"/proc/$1/stat" 2>/dev/null || return 0
	# after the command name, which may hold spaces: state is field 3
	read -r -a stat <<<"${stat##*) }"
	DMCOPY_STARTED=${stat[19]}
}

# dmcopy_watchdog TEST-PID SECONDS: runs beside one test (see above).
dmcopy_watchdog() {
	local test_pid=$1 limit=$2 out=${BATS_OUT:-/dev/stderr}
	local started t=0 victims self=$BASHPID tick
	# bats' countdown signals the test's children, this one included.
	trap '' TERM
	# A pipe nobody writes to: read -t waits a second without a process
	# (a sleep every second of every test costs under TCG).
	exec {tick}<> <(:) || tick=
	dmcopy_started "$test_pid"
	started=$DMCOPY_STARTED
	[ -n "$started" ] || return 0
	while dmcopy_started "$test_pid" && [ "$DMCOPY_STARTED" = "$started" ]; do
		if [ -n "$tick" ]; then
			read -r -t 1 -u "$tick" _
		else
			sleep 1
		fi
		t=$(( t + 1 ))
		# A second before bats' own countdown would fire, so that the
		# report is in the output before bats prints it.
		if [ $t -eq $(( limit > 1 ? limit - 1 : 1 )) ]; then
			victims=$(dmcopy_descendants "$test_pid" "$self")
			dmcopy_timeout_report "$test_pid" "$limit" "$self" >>"$out" 2>&1
			# bats' handler: mark the test timed out, then its teardown
			kill -ABRT "$test_pid" 2>/dev/null
			# shellcheck disable=SC2086 # one pid a word
			dmcopy_end_processes $victims
		elif [ $t -gt "$limit" ] && [ $(( (t - limit) % DMCOPY_TEST_TIMEOUT )) -eq 0 ]; then
			echo "timeout: the teardown still runs $(( t - limit )) s later; ending its processes" >>"$out"
			victims=$(dmcopy_descendants "$test_pid" "$self")
			# shellcheck disable=SC2086
			dmcopy_end_processes $victims
		fi
	done
}

# In the process that runs one test (not in the one that counts them or
# runs setup_file): start the watchdog.
if [ -n "${BATS_TEST_NAME:-}" ] && [[ ${0##*/} == bats-exec-test ]] &&
   [ "$DMCOPY_TEST_TIMEOUT" != 0 ]; then
	BATS_TEST_TIMEOUT=$(( DMCOPY_TEST_TIMEOUT * DMCOPY_TEST_TIMEOUT_SCALE ))
	dmcopy_watchdog $$ "$BATS_TEST_TIMEOUT" </dev/null >/dev/null 2>&1 3>&- 4>&- &
	disown
fi

# --------------------------------------------------------------- guest ---

# Skip unless running as root in the test VM booted from our kernel.
require_guest() {
	if [ -z "${DMCOPY_KERNEL_RELEASE:-}" ] || [ "$(uname -r)" != "$DMCOPY_KERNEL_RELEASE" ]; then
		skip "needs the dm-copy test VM (run through tests/vm/run)"
	fi
}

# Kernel log lines that fail a test when they show up during it.
DMESG_BAD='BUG:|WARNING:|Oops|KASAN|UBSAN|general protection|possible recursive locking|possible circular locking|inconsistent lock state|lockdep|unreferenced object|kmemleak|list_add corruption|list_del corruption|refcount_t:|hung_task|Call Trace'

# Positions in the kernel log are lines the tests write into it: the log
# is a ring, and once it is full old lines fall out, so a line count
# stops naming a place (CI lost four tests' messages that way).
# dmesg_here writes a mark and prints it; dmesg_since MARK prints what
# the kernel logged after it (nothing if the mark fell out, which
# dmesg_check reports); dmesg_has MARK tells whether it is still there.
dmesg_here() {
	local mark="bats-mark ${BASHPID}-${RANDOM}${RANDOM}-${SECONDS}"
	# <6>: info, below the console's loglevel, so not on the serial line.
	echo "<6>$mark" >/dev/kmsg
	echo "$mark"
}

dmesg_since() {
	dmesg | awk -v mark="$1" 'seen { print } index($0, mark) { seen = 1 }'
}

dmesg_has() {
	dmesg | grep -qF -- "$1"
}

# Remember where the kernel log stands; dmesg_check looks only past it.
dmesg_mark() {
	DMESG_START=$(dmesg_here)
}

# kmemleak_check: on a kernel with kmemleak, scan now and fail with the
# report if something leaked since the last scan. A scan walks all of
# the guest's memory, about 10 s under TCG with 3 GiB (measured), so the
# teardown runs one per test file, not per test; DMCOPY_KMEMLEAK_EACH=1
# scans after every test too, to find which one leaked.
kmemleak_check() {
	[ -w /sys/kernel/debug/kmemleak ] || return 0
	echo scan >/sys/kernel/debug/kmemleak 2>/dev/null || true
	local leaks
	leaks=$(cat /sys/kernel/debug/kmemleak 2>/dev/null || true)
	[ -n "$leaks" ] || return 0
	echo "kmemleak reports leaks:" >&2
	echo "$leaks" | head -n 60 >&2
	echo clear >/sys/kernel/debug/kmemleak
	return 1
}

# Fail with the offending lines if the kernel logged a bug, a warning, a
# KASAN/lockdep splat or a leak since dmesg_mark.
dmesg_check() {
	if [ "${DMCOPY_KMEMLEAK_EACH:-0}" = 1 ]; then
		kmemleak_check || return 1
	fi
	if ! dmesg_has "$DMESG_START"; then
		echo "the kernel log wrapped during the test: its mark is gone," >&2
		echo "so a warning could have been lost (the guest's log_buf_len is too small)" >&2
		return 1
	fi
	local bad
	bad=$(dmesg_since "$DMESG_START" | grep -E "$DMESG_BAD" || true)
	if [ -n "$bad" ]; then
		echo "kernel log reports problems during the test:" >&2
		dmesg_since "$DMESG_START" | head -n 80 >&2
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
	# The guest's files live in memory: drop the test's patterns now,
	# not at the end of the run.
	[ -n "${BATS_TEST_TMPDIR:-}" ] && rm -rf "${BATS_TEST_TMPDIR:?}"/*
	[ -n "${DMESG_START:-}" ] || return 0
	dmesg_check
}

# The kernel suites' teardown_file: kmemleak_check's scan, once per test
# file. Suites with a teardown_file of their own call it at its end.
guest_teardown_file() {
	[ -n "${DMCOPY_KERNEL_RELEASE:-}" ] && [ "$(uname -r)" = "$DMCOPY_KERNEL_RELEASE" ] || return 0
	kmemleak_check
}

teardown_file() {
	guest_teardown_file
}

# long_or SHORT LONG: LONG when DMCOPY_LONG=1, else SHORT. The stress
# tests' rounds and the largest sizes: the short forms show each point
# in make check's time; the long ones dig for races and bugs that need
# volume (docs/workflow.md).
long_or() {
	if [ "${DMCOPY_LONG:-0}" = 1 ]; then echo "$2"; else echo "$1"; fi
}

# ---------------------------------------------------------------- data ---

# random_file FILE BYTES: FILE gets BYTES of random data.
random_file() {
	head -c "$2" /dev/urandom >"$1"
}

# dev_write DEV OFFSET FILE: write FILE at byte OFFSET of DEV, bypassing the
# page cache so the device itself holds the data.
dev_write() {
	dd if="$3" of="$1" bs=1M seek="$2" oflag=seek_bytes,direct \
		conv=notrunc,fsync status=none
}

# dev_read DEV OFFSET LEN FILE: read LEN bytes at OFFSET of DEV into FILE.
dev_read() {
	dd if="$1" of="$4" bs=1M skip="$2" count="$3" \
		iflag=skip_bytes,count_bytes,direct status=none
}

# dev_expect DEV OFFSET FILE: the bytes of DEV at OFFSET equal FILE.
# (cmp reads the device through a pipe: each process costs under TCG.)
dev_expect() {
	local len
	len=$(stat -c %s "$3")
	if ! cmp -s <(dev_read "$1" "$2" "$len" /dev/stdout) "$3"; then
		echo "$1: $len bytes at offset $2 differ from $3:" >&2
		cmp <(dev_read "$1" "$2" "$len" /dev/stdout) "$3" 2>&1 | head -n 3 >&2
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

# ------------------------------------------------------------ null_blk ---

# nullb_load [PARAM=VALUE...]: null_blk with one memory-backed 1 GiB device
# (/dev/nullb0), PARAMs added to or overriding those defaults.
nullb_load() {
	nullb_unload
	modprobe null_blk nr_devices=1 gb=1 memory_backed=1 "$@"
	[ -b /dev/nullb0 ]
}

nullb_unload() {
	if lsmod | grep -q '^null_blk '; then
		nullb_cfg_remove_all
		rmmod null_blk
	fi
}

# disk_name DEV: the name of DEV's disk in /sys/block (DEV itself unless
# it is a partition); DEV may also be a disk's kernel name (dm-0). Every
# counter a test reads goes through here, so /dev/NAME of a disk costs no
# process; the rest (/dev/mapper nodes, which are no links without udev,
# /dev/VG/LV links, partitions) one stat.
disk_name() {
	local name=${1##*/} num sys
	if { [ "$1" = "/dev/$name" ] || [ "$1" = "$name" ]; } && [ -e "/sys/block/$name" ]; then
		echo "$name"
		return
	fi
	num=$(stat -L -c '%t %T' "$1") || return 1
	read -r -a num <<<"$num"
	sys=$(cd -P "/sys/dev/block/$(( 16#${num[0]} )):$(( 16#${num[1]} ))" && pwd) || return 1
	[ ! -e "$sys/partition" ] || sys=${sys%/*}
	echo "${sys##*/}"
}

# queue_attr DEV ATTR: a queue/ sysfs attribute of DEV's disk.
queue_attr() {
	cat "/sys/block/$(disk_name "$1")/queue/$2"
}

# disk_attr DEV ATTR: an attribute of DEV's disk (stat, copy_stat...).
disk_attr() {
	cat "/sys/block/$(disk_name "$1")/$2"
}

# The position of each counter in copy_stat.
declare -gA COPY_STAT_FIELD=([offloaded_copies]=0 [offloaded_bytes]=1
	[emulated_copies]=2 [emulated_bytes]=3 [failed_copies]=4 [failed_bytes]=5
	[device_copies]=6 [device_bytes]=7)

# copy_stat_field FIELD: COPY_STAT_I gets the position of FIELD.
copy_stat_field() {
	COPY_STAT_I=${COPY_STAT_FIELD[$1]:-}
	[ -n "$COPY_STAT_I" ] || { echo "copy_stat: no field $1" >&2; return 1; }
}

# copy_stat DEV FIELD: one counter of the disk's copy_stat, by name.
copy_stat() {
	local -a v
	copy_stat_field "$2" || return 1
	read -r -a v <"/sys/block/$(disk_name "$1")/copy_stat"
	echo "${v[COPY_STAT_I]}"
}

# copy_mark [DEV]: remember DEV's (default /dev/nullb0) copy counters;
# copy_stat_since FIELD then prints how much one grew since.
copy_mark() {
	COPY_MARK_DEV=${1:-/dev/nullb0}
	COPY_MARK=$(disk_attr "$COPY_MARK_DEV" copy_stat)
}

copy_stat_since() {
	local -a was now
	copy_stat_field "$1" || return 1
	read -r -a was <<<"$COPY_MARK"
	read -r -a now <"/sys/block/$(disk_name "$COPY_MARK_DEV")/copy_stat"
	echo $(( now[COPY_STAT_I] - was[COPY_STAT_I] ))
}

COPY_RANGE=$DMCOPY_TOP/tests/helpers/copy-range
NVME_COPY_CMD=$DMCOPY_TOP/tests/helpers/nvme-copy-cmd
SIGNAL_RUN=$DMCOPY_TOP/tests/helpers/signal-run

# copy_and_verify [-x COPY-RANGE-OPTION]... [-r DISK] SRC SRC_OFF DST DST_OFF LEN
#
# Fill the source range and 64 KiB on each side of the destination with
# random data, copy with copy_file_range() (O_DIRECT unless an option says
# otherwise), and check that the destination holds the source, that the
# source and the bytes around the destination did not change. The source
# pattern stays in $BATS_TEST_TMPDIR/src. With -r, COPY_RW gets the
# sectors DISK read and wrote during the copy alone, "R W" ("0 0" when
# the copy was offloaded below it).
copy_and_verify() {
	local -a opts=()
	local rw_disk=
	while [ $# -gt 0 ]; do
		case $1 in
		-x) opts+=("$2"); shift 2 ;;
		-r) rw_disk=$2; shift 2 ;;
		*) break ;;
		esac
	done
	[ ${#opts[@]} -gt 0 ] || opts=(-d)
	local src=$1 soff=$2 dst=$3 doff=$4 len=$5 guard=65536
	local d=${BATS_TEST_TMPDIR:-/tmp}

	random_file "$d/src" "$len"
	random_file "$d/before" "$guard"
	random_file "$d/after" "$guard"
	dev_write "$dst" $(( doff - guard )) "$d/before"
	dev_write "$dst" $(( doff + len )) "$d/after"
	dev_write "$src" "$soff" "$d/src"

	[ -z "$rw_disk" ] || rw_mark "$rw_disk"
	run "$COPY_RANGE" "${opts[@]}" "$src" "$soff" "$dst" "$doff" "$len"
	[ -z "$rw_disk" ] || COPY_RW=$(rw_since)
	echo "copy-range ${opts[*]} $src $soff $dst $doff $len: $output${rw_disk:+, $rw_disk read and wrote $COPY_RW sectors}"
	[ "$status" -eq 0 ] || return 1
	[ "$output" = "copied=$len" ] || return 1

	dev_expect "$dst" "$doff" "$d/src"
	dev_expect "$src" "$soff" "$d/src"
	dev_expect "$dst" $(( doff - guard )) "$d/before"
	dev_expect "$dst" $(( doff + len )) "$d/after"
}

# nullb_cfg NAME [ATTR=VALUE...]: a null_blk device made through configfs,
# memory-backed, 1 GiB unless ATTRs say otherwise, powered on as
# /dev/NAME (null_blk is loaded without devices of its own if needed).
nullb_cfg() {
	local name=$1 a d=/sys/kernel/config/nullb/$1
	shift
	lsmod | grep -q '^null_blk ' || modprobe null_blk nr_devices=0
	mkdir "$d"
	echo 1 >"$d/memory_backed"
	echo 1024 >"$d/size"
	for a in "$@"; do
		echo "${a#*=}" >"$d/${a%%=*}"
	done
	echo 1 >"$d/power"
	[ -b "/dev/$name" ]
}

# nullb_cfg_remove NAME: power off and remove a nullb_cfg device.
nullb_cfg_remove() {
	local d=/sys/kernel/config/nullb/$1
	[ -d "$d" ] || return 0
	echo 0 >"$d/power" 2>/dev/null || true
	rmdir "$d"
}

# nullb_cfg_remove_all: remove every configfs null_blk device.
nullb_cfg_remove_all() {
	local d
	for d in /sys/kernel/config/nullb/*/; do
		[ -d "$d" ] && nullb_cfg_remove "$(basename "$d")"
	done
	return 0
}

# disk_stat DEV N: field N (from 1) of the disk's stat file, see
# Documentation/block/stat.rst (3: sectors read, 7: sectors written,
# 10: io_ticks, 16: flushes completed).
disk_stat() {
	local -a v
	read -r -a v <"/sys/block/$(disk_name "$1")/stat"
	echo "${v[$2 - 1]}"
}

# sectors_rw DEV: sectors read and written on DEV's disk so far, "R W".
sectors_rw() {
	local -a v
	read -r -a v <"/sys/block/$(disk_name "$1")/stat"
	echo "${v[2]} ${v[6]}"
}

# rw_mark DEV / rw_since: how many sectors DEV's disk read and wrote since
# rw_mark, as "R W" (0 0 when a copy was offloaded below it).
rw_mark() {
	RW_MARK_DEV=$1
	RW_MARK=$(sectors_rw "$1")
}

rw_since() {
	local -a was now
	read -r -a was <<<"$RW_MARK"
	read -r -a now <<<"$(sectors_rw "$RW_MARK_DEV")"
	echo "$(( now[0] - was[0] )) $(( now[1] - was[1] ))"
}
