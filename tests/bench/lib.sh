# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Shared by the benchmarks in tests/bench (sourced).

# rq_issued DEV CMD...: the requests the block layer issued to DEV's
# driver while CMD ran (tracepoint block_rq_issue), as "N OP:COUNT..."
# with OP the request's rwbs letters. A count of what the disk was asked
# to do, which an emulated CPU's speed does not distort.
rq_issued() {
	local dev=$1 t=/sys/kernel/tracing devno
	shift
	[ -d $t/events/block ] || mount -t tracefs nodev $t
	devno=$(stat -L -c '%Hr,%Lr' "$dev")
	echo >$t/trace
	echo "dev == $(( $(stat -L -c %Hr "$dev") << 20 | $(stat -L -c %Lr "$dev") ))" \
		>$t/events/block/block_rq_issue/filter
	echo 1 >$t/events/block/block_rq_issue/enable
	"$@" >/dev/null
	echo 0 >$t/events/block/block_rq_issue/enable
	echo 0 >$t/events/block/block_rq_issue/filter
	grep -o "block_rq_issue: $devno [A-Z]*" $t/trace | awk '
		{ n++; ops[$3]++ }
		END { printf "%d", n; for (o in ops) printf " %s:%d", o, ops[o]; print "" }'
}

# rq_issued_by_disk CMD...: the requests issued to every disk while CMD
# ran, a line "NAME N OP:COUNT..." per disk (NAME from /sys/dev/block, or
# MAJ:MIN for a disk without a node, such as an NVMe multipath path).
rq_issued_by_disk() {
	local t=/sys/kernel/tracing line devno name
	[ -d $t/events/block ] || mount -t tracefs nodev $t
	echo >$t/trace
	echo 1 >$t/events/block/block_rq_issue/enable
	"$@" >/dev/null
	echo 0 >$t/events/block/block_rq_issue/enable
	grep -o 'block_rq_issue: [0-9]*,[0-9]* [A-Z]*' $t/trace | awk '
		{ n[$2]++; ops[$2 " " $3]++ }
		END {
			for (d in n) {
				printf "%s %d", d, n[d]
				for (k in ops) { split(k, a, " "); if (a[1] == d) printf " %s:%d", a[2], ops[k] }
				print ""
			}
		}' | while read -r devno line; do
		name=$(basename "$(readlink "/sys/dev/block/${devno/,/:}" 2>/dev/null)" 2>/dev/null)
		echo "${name:-${devno/,/:}} $line"
	done
}
