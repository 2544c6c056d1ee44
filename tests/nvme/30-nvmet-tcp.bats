#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# Copy over NVMe/TCP: the target listens in one network namespace of the
# guest, the host connects from another, the two joined by a veth pair
# (addresses exist only inside those namespaces). The namespace is a
# null_blk disk with copy offload, so an offloaded copy crosses the link as
# a few commands, while an emulated one crosses it twice as data. Then the
# same subsystem is also exported through a loop port: two paths to one
# namespace, and copies stay offloads whichever path each half takes.

load ../lib/common
load ../lib/nvme
load ../lib/storm

MiB=$(( 1024 * 1024 ))
NQN=nqn.2026-12.io.dmcopy:tcp
TGT_NS=dmcopy-tgt
HOST_NS=dmcopy-host
TGT_ADDR=10.201.0.1
HOST_ADDR=10.201.0.2
PORT=4420

setup_file() {
	[ -n "${DMCOPY_KERNEL_RELEASE:-}" ] && [ "$(uname -r)" = "$DMCOPY_KERNEL_RELEASE" ] || return 0
	nvmet_teardown
	nullb_cfg_remove_all
	ip netns del "$TGT_NS" 2>/dev/null || true
	ip netns del "$HOST_NS" 2>/dev/null || true

	ip netns add "$TGT_NS"
	ip netns add "$HOST_NS"
	ip link add dmc-host type veth peer name dmc-tgt
	ip link set dmc-tgt netns "$TGT_NS"
	ip link set dmc-host netns "$HOST_NS"
	ip -n "$TGT_NS" addr add "$TGT_ADDR/24" dev dmc-tgt
	ip -n "$HOST_NS" addr add "$HOST_ADDR/24" dev dmc-host
	ip -n "$TGT_NS" link set dmc-tgt up
	ip -n "$HOST_NS" link set dmc-host up
	ip -n "$TGT_NS" link set lo up
	ip -n "$HOST_NS" link set lo up

	nullb_cfg tgt0 size=512 copy_max_bytes=$MiB
	nvmet_subsys "$NQN"
	nvmet_ns "$NQN" 1 /dev/tgt0
	nvmet_port 2 tcp "$TGT_ADDR" "$PORT"
	modprobe nvme-tcp
	# The listening socket is made in the network namespace of whoever
	# links the port; nsenter, unlike ip netns exec, keeps our /sys and
	# the configfs mounted in it.
	nsenter --net="/run/netns/$TGT_NS" ln -s "$NVMET_CFS/subsystems/$NQN" \
		"$NVMET_CFS/ports/2/subsystems/$NQN"
	nsenter --net="/run/netns/$HOST_NS" nvme connect -t tcp -a "$TGT_ADDR" -s "$PORT" \
		-n "$NQN" --hostnqn="$NVME_HOSTNQN" --hostid="$NVME_HOSTID" >/dev/null
}

teardown_file() {
	[ -n "${DMCOPY_KERNEL_RELEASE:-}" ] || return 0
	nvmet_teardown
	nullb_cfg_remove_all
	ip netns del "$TGT_NS" 2>/dev/null || true
	ip netns del "$HOST_NS" 2>/dev/null || true
	guest_teardown_file
}

setup() {
	guest_setup
	H=$(host_ns "$NQN" 1)
}

teardown() {
	[ -n "${BG_PID:-}" ] && kill "$BG_PID" 2>/dev/null && wait "$BG_PID" 2>/dev/null
	cut_teardown
	[ -b "$H" ] && echo "$(queue_attr "$H" copy_max_hw_bytes)" \
		>"/sys/block/$(disk_name "$H")/queue/copy_max_bytes"
	local ns2=$NVMET_CFS/subsystems/$NQN/namespaces/2
	if [ -d "$ns2" ]; then
		echo 0 >"$ns2/enable"
		rmdir "$ns2"
		nullb_cfg_remove tgt1
	fi
	guest_teardown
}

# wire_bytes: bytes sent plus received on the host's end of the link.
wire_bytes() {
	local d=/sys/class/net/dmc-host/statistics
	ip netns exec "$HOST_NS" sh -c "echo \$(( \$(cat $d/tx_bytes) + \$(cat $d/rx_bytes) ))"
}

# link_copy SRC DST LEN: copy on the host device with copy_file_range
# (O_DIRECT) and print the bytes that crossed the link meanwhile.
link_copy() {
	local before d=$BATS_TEST_TMPDIR
	random_file "$d/src" "$3"
	dev_write "$H" "$1" "$d/src"
	before=$(wire_bytes)
	"$COPY_RANGE" -d "$H" "$1" "$H" "$2" "$3" >"$d/out"
	echo $(( $(wire_bytes) - before ))
	[ "$(cat "$d/out")" = "copied=$3" ]
	dev_expect "$H" "$2" "$d/src"
}

@test "tcp: the host reached the target through the test's own namespaces" {
	[ "$(cat "/sys/class/nvme/$(basename "$(nvme_ctrl "$NQN")")/transport")" = tcp ]
	# the addresses exist only inside the two namespaces
	! ip -4 addr show | grep -q "$TGT_ADDR" || false
	ip -n "$TGT_NS" -4 addr show dev dmc-tgt | grep -q "$TGT_ADDR"
	[ "$(wire_bytes)" -gt 0 ]
}

@test "tcp: copies below, at and above the limit are offloaded on the target" {
	local len
	# 8 MiB per command, which the target offloads 1 MiB at a time
	[ "$(queue_attr "$H" copy_max_hw_bytes)" = $(( 8 * MiB )) ]
	for len in 4096 "$MiB" $(( 8 * MiB )) $(( 17 * MiB + 4096 )); do
		copy_mark /dev/tgt0
		copy_and_verify "$H" $(( 1 * MiB )) "$H" $(( 100 * MiB )) "$len"
		[ "$(copy_stat_since offloaded_bytes)" = "$len" ]
		[ "$(copy_stat_since emulated_bytes)" = 0 ]
	done
}

@test "tcp: an offloaded copy barely uses the link, an emulated one crosses it twice" {
	local len=$(( 16 * MiB )) offloaded emulated
	run link_copy $(( 10 * MiB )) $(( 200 * MiB )) "$len"
	echo "offloaded: $output bytes on the link for $len copied"
	[ "$status" -eq 0 ]
	offloaded=${lines[0]}
	# 2 Copy commands and their completions, a few KiB
	(( offloaded < len / 100 ))

	echo 0 >"/sys/block/$(disk_name "$H")/queue/copy_max_bytes"
	run link_copy $(( 30 * MiB )) $(( 300 * MiB )) "$len"
	echo "emulated: $output bytes on the link for $len copied"
	[ "$status" -eq 0 ]
	emulated=${lines[0]}
	(( emulated >= 2 * len ))
}

# mem_available_kib: MemAvailable of /proc/meminfo.
mem_available_kib() {
	awk '$1 == "MemAvailable:" { print $2 }' /proc/meminfo
}

@test "tcp: 128 Copies of 8 MiB outstanding, the disk not offloading: memory bounded, target responsive" {
	local d=$BATS_TEST_TMPDIR i pids=() before low h2
	# a disk that copies nothing and moves 400 MB/s, so that every
	# command stays in flight a while
	nullb_cfg tgt1 size=256 mbps=400
	nvmet_ns "$NQN" 2 /dev/tgt1
	h2=$(host_ns "$NQN" 2)
	[ "$(queue_attr "$h2" copy_max_hw_bytes)" = $(( 8 * MiB )) ]
	random_file "$d/storm" $(( 64 * MiB ))
	dev_write "$h2" 0 "$d/storm"
	# the destination's pages exist before: null_blk allocates on write
	dev_write "$h2" $(( 128 * MiB )) "$d/storm"
	before=$(mem_available_kib)
	( low=$before
	  while :; do
		m=$(mem_available_kib)
		(( m < low )) && low=$m && echo "$low" >"$d/low"
		sleep 0.05
	  done ) &
	local sampler=$!
	# 16 calls of 64 MiB, each with 8 chunks of 8 MiB in flight: 128
	# Copy commands queued at the target; all copy the same source to
	# the same destination, so whatever order they land in, it holds
	# the source
	copy_mark /dev/tgt1
	for (( i = 0; i < 16; i++ )); do
		"$COPY_RANGE" -d "$h2" 0 "$h2" $(( 128 * MiB )) $(( 64 * MiB )) >"$d/out$i" &
		pids+=($!)
	done
	# meanwhile the target answers its admin queue and copies locally
	sleep 1
	nvme id-ctrl "$(nvme_ctrl "$NQN")" >/dev/null
	copy_and_verify /dev/tgt0 $(( 330 * MiB )) /dev/tgt0 $(( 450 * MiB )) $(( 8 * MiB ))
	for i in "${!pids[@]}"; do
		wait "${pids[i]}"
		[ "$(cat "$d/out$i")" = "copied=$(( 64 * MiB ))" ]
	done
	kill "$sampler"
	wait "$sampler" 2>/dev/null || true
	low=$(cat "$d/low" 2>/dev/null || echo "$before")
	echo "MemAvailable: $before KiB before, $low KiB at the lowest, $(( (before - low) / 1024 )) MiB used"
	echo "target emulated $(copy_stat_since emulated_bytes) bytes"
	dev_expect "$h2" $(( 128 * MiB )) "$d/storm"
	[ "$(copy_stat_since emulated_bytes)" = $(( 16 * 64 * MiB )) ]
	# 8 Copies at a time with at most 4 MiB of buffers each, not 128
	(( before - low < 128 * 1024 ))
}

# ctrl_state_wait CTRL STATE...: until host controller CTRL (nvmeN) is in
# one of the STATEs, 60 s at most; prints the state it reached.
ctrl_state_wait() {
	local ctrl=$1 end=$(( SECONDS + 60 )) st
	shift
	while :; do
		st=$(cat "/sys/class/nvme/$ctrl/state" 2>/dev/null)
		[[ " $* " == *" $st "* ]] || [ $SECONDS -ge $end ] && break
		sleep 0.2
	done
	echo "$st"
}

# block_check LEN SRC DST OLD: every 4 KiB block of DST (LEN bytes) holds
# SRC's or OLD's: a copy that failed part way left no other bytes.
block_check() {
	cmp -s "$3" "$2" && return 0
	python3 - "$@" <<'PY'
import sys
n, src, dst, old = int(sys.argv[1]), *(open(f, 'rb').read() for f in sys.argv[2:5])
bad = [i for i in range(0, n, 4096)
       if dst[i:i + 4096] not in (src[i:i + 4096], old[i:i + 4096])]
sys.exit(f"blocks neither copied nor as before at {bad[:8]}" if bad else 0)
PY
}

# The link cut: its own subsystem, port and veth pair, the host end in
# the initial network namespace: the host reconnects from a kernel worker,
# and 6.12's nvme-tcp makes that worker's sockets (sock_create()) in the
# namespace of the worker, the initial one, not in the namespace that
# connected.
CUT_NQN=nqn.2026-12.io.dmcopy:tcp-cut
CUT_TGT_ADDR=10.202.0.1
CUT_HOST_ADDR=10.202.0.2
CUT_PORT=4421

cut_setup() {
	ip link add dmc-cut-host type veth peer name dmc-cut-tgt
	ip link set dmc-cut-tgt netns "$TGT_NS"
	ip -n "$TGT_NS" addr add "$CUT_TGT_ADDR/24" dev dmc-cut-tgt
	ip addr add "$CUT_HOST_ADDR/24" dev dmc-cut-host
	ip -n "$TGT_NS" link set dmc-cut-tgt up
	ip link set dmc-cut-host up
	nullb_cfg tgtcut size=128 copy_max_bytes=$MiB
	nvmet_subsys "$CUT_NQN"
	nvmet_ns "$CUT_NQN" 1 /dev/tgtcut
	nvmet_port 4 tcp "$CUT_TGT_ADDR" "$CUT_PORT"
	nsenter --net="/run/netns/$TGT_NS" ln -s "$NVMET_CFS/subsystems/$CUT_NQN" \
		"$NVMET_CFS/ports/4/subsystems/$CUT_NQN"
	# A short keep-alive and reconnect delay: the host notices the cut
	# and reconnects within seconds.
	nvme_connect "$CUT_NQN" tcp "$CUT_TGT_ADDR" "$CUT_PORT" \
		--keep-alive-tmo=1 --reconnect-delay=1 --ctrl-loss-tmo=120
}

cut_teardown() {
	[ -d "$NVMET_CFS/subsystems/$CUT_NQN" ] || return 0
	nvme disconnect -n "$CUT_NQN" >/dev/null 2>&1 || true
	rm -f "$NVMET_CFS/ports/4/subsystems/$CUT_NQN"
	rmdir "$NVMET_CFS/ports/4" 2>/dev/null || true
	echo 0 >"$NVMET_CFS/subsystems/$CUT_NQN/namespaces/1/enable"
	rmdir "$NVMET_CFS/subsystems/$CUT_NQN/namespaces/1"
	rmdir "$NVMET_CFS/subsystems/$CUT_NQN"
	nullb_cfg_remove tgtcut
	ip link del dmc-cut-host 2>/dev/null || true
}

@test "tcp: the link cut in the middle of copies, then restored: each copy done or failed, none corrupt; the host reconnects and offloads again" {
	local d=$BATS_TEST_TMPDIR h ctrl i n=8 len=$(( 4 * MiB )) st ok=0 failed=0
	local src=$(( 8 * MiB )) dst=$(( 64 * MiB ))
	cut_setup
	h=$(host_ns "$CUT_NQN" 1)
	ctrl=$(basename "$(nvme_ctrl "$CUT_NQN")")
	random_file "$d/src" $(( n * len ))
	random_file "$d/old" $(( n * len + 65536 ))
	dev_write "$h" $src "$d/src"
	dev_write "$h" $dst "$d/old"
	# One copy after the other, each into its own place.
	( for (( i = 0; i < n; i++ )); do
		"$COPY_RANGE" -d "$h" $(( src + i * len )) "$h" $(( dst + i * len )) $len >"$d/out$i" 2>&1
		sleep 0.2
	  done ) &
	BG_PID=$!
	sleep 1
	ip link set dmc-cut-host down
	st=$(ctrl_state_wait "$ctrl" resetting connecting)
	echo "link down: $ctrl $st"
	[[ $st == resetting || $st == connecting ]]
	sleep 2
	ip link set dmc-cut-host up
	st=$(ctrl_state_wait "$ctrl" live)
	echo "link up: $ctrl $st"
	[ "$st" = live ]
	wait $BG_PID
	BG_PID=
	for (( i = 0; i < n; i++ )); do
		dd if="$d/src" of="$d/s" bs=$len skip=$i count=1 status=none
		dd if="$d/old" of="$d/o" bs=$len skip=$i count=1 status=none
		dev_read "$h" $(( dst + i * len )) $len "$d/got"
		if [ "$(cat "$d/out$i")" = "copied=$len" ]; then
			cmp "$d/s" "$d/got" || fail "copy $i: reported done, data differs"
			ok=$(( ok + 1 ))
		else
			echo "copy $i: $(tr '\n' ' ' <"$d/out$i")"
			block_check $len "$d/s" "$d/got" "$d/o" || fail "copy $i"
			failed=$(( failed + 1 ))
		fi
	done
	echo "copies done: $ok, failed: $failed"
	dev_expect "$h" $src "$d/src"
	tail -c 65536 "$d/old" >"$d/after"
	dev_expect "$h" $(( dst + n * len )) "$d/after"
	# Offloaded again.
	[ "$(queue_attr "$h" copy_max_hw_bytes)" = $(( 8 * MiB )) ]
	copy_mark /dev/tgtcut
	copy_and_verify "$h" $(( 1 * MiB )) "$h" $(( 100 * MiB )) $(( 8 * MiB ))
	[ "$(copy_stat_since offloaded_bytes)" = $(( 8 * MiB )) ]
}

@test "tcp: the destination's namespace disabled on the target mid-copy: the copy fails promptly, the rest of the subsystem copies on" {
	local d=$BATS_TEST_TMPDIR h2 t0 i ns2=$NVMET_CFS/subsystems/$NQN/namespaces/2
	# A disk that copies nothing and moves 20 MB/s: the copy takes seconds.
	nullb_cfg tgt1 size=128 mbps=20
	nvmet_ns "$NQN" 2 /dev/tgt1
	h2=$(host_ns "$NQN" 2)
	# 1 MiB Copy commands: at most 8 MiB in flight when the namespace
	# goes (disabling it waits for those); every one after it fails.
	echo $MiB >"/sys/block/$(disk_name "$h2")/queue/copy_max_bytes"
	random_file "$d/src" $(( 48 * MiB ))
	dev_write "$h2" 0 "$d/src"
	"$COPY_RANGE" -d "$h2" 0 "$h2" $(( 64 * MiB )) $(( 48 * MiB )) >"$d/out" 2>&1 &
	BG_PID=$!
	sleep 1
	kill -0 $BG_PID
	t0=$SECONDS
	echo 0 >"$ns2/enable"
	for (( i = 0; i < 300; i++ )); do
		kill -0 $BG_PID 2>/dev/null || break
		sleep 0.1
	done
	! kill -0 $BG_PID 2>/dev/null || fail "the copy still runs 30 s after the namespace went"
	wait $BG_PID || true
	BG_PID=
	echo "after $(( SECONDS - t0 )) s: $(tr '\n' ' ' <"$d/out"), size now $(blockdev --getsize64 "$h2" 2>&1)"
	! grep -qx "copied=$(( 48 * MiB ))" "$d/out" || false
	# Failed (EIO from the commands after the namespace went), or stopped
	# short without an error when the host had already seen the namespace
	# go and its size drop to 0: copy_file_range returns 0 past the end.
	grep -q '^errno=' "$d/out" ||
		[ "$(blockdev --getsize64 "$h2" 2>/dev/null || echo 0)" = 0 ]
	# Namespace 1 goes on copying, offloaded.
	copy_mark /dev/tgt0
	copy_and_verify "$H" $(( 1 * MiB )) "$H" $(( 100 * MiB )) $(( 4 * MiB ))
	[ "$(copy_stat_since offloaded_bytes)" = $(( 4 * MiB )) ]
}

@test "tcp: 64 copies at once beside fio on two namespaces: every copy and every byte right" {
	command -v fio >/dev/null || skip "fio not installed"
	local h2
	nullb_cfg tgt1 size=128
	nvmet_ns "$NQN" 2 /dev/tgt1
	h2=$(host_ns "$NQN" 2)
	copy_mark /dev/tgt0
	copy_storm "$H" "$h2"
	echo "target: tgt0 executed $(copy_stat_since device_copies) copies, $(copy_stat_since device_bytes) bytes"
	[ "$(copy_stat_since device_bytes)" -gt 0 ]
}

@test "multipath: tcp and loop paths to one namespace, copies still offload" {
	local head paths len i
	nvmet_port 3 loop
	nvmet_export 3 "$NQN"
	nvme_connect_again "$NQN" loop
	head=$(disk_name "$H")
	for (( i = 0; i < 50; i++ )); do
		paths=$(nvme_paths "$head" | wc -l)
		[ "$paths" -ge 2 ] && break
		sleep 0.1
	done
	echo "paths of $head: $(nvme_paths "$head" | tr '\n' ' ')"
	[ "$paths" -eq 2 ]
	echo round-robin >"$(readlink -f "/sys/block/$head/device")/iopolicy"
	[ "$(queue_attr "$H" copy_max_hw_bytes)" = $(( 8 * MiB )) ]
	local node_was paths_was=0 paths_now=0 p
	node_was=$(( $(disk_attr "$H" copy_stat | cut -d ' ' -f 8) ))
	for p in $(nvme_paths "$head"); do
		paths_was=$(( paths_was + $(disk_attr "$p" copy_stat | cut -d ' ' -f 8) ))
	done
	for len in 4096 "$MiB" $(( 9 * MiB + 8192 )); do
		copy_mark /dev/tgt0
		copy_and_verify "$H" $(( 2 * MiB )) "$H" $(( 120 * MiB )) "$len"
		[ "$(copy_stat_since offloaded_bytes)" = "$len" ] ||
			fail "target offloaded $(copy_stat_since offloaded_bytes) of $len"
	done
	# the node and the paths that executed its copies count them all
	for p in $(nvme_paths "$head"); do
		echo "$p: copy_stat $(disk_attr "$p" copy_stat)"
		paths_now=$(( paths_now + $(disk_attr "$p" copy_stat | cut -d ' ' -f 8) ))
	done
	echo "device_bytes: node +$(( $(disk_attr "$H" copy_stat | cut -d ' ' -f 8) - node_was )), paths +$(( paths_now - paths_was ))"
	[ $(( $(disk_attr "$H" copy_stat | cut -d ' ' -f 8) - node_was )) = $(( 4096 + MiB + 9 * MiB + 8192 )) ]
	[ $(( paths_now - paths_was )) = $(( 4096 + MiB + 9 * MiB + 8192 )) ]
}
