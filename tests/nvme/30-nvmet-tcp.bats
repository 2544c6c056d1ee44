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
