# SPDX-License-Identifier: GPL-2.0
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
