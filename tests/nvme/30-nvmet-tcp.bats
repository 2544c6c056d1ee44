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
	! ip -4 addr show | grep -q "$TGT_ADDR"
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
	for len in 4096 "$MiB" $(( 9 * MiB + 8192 )); do
		copy_mark /dev/tgt0
		copy_and_verify "$H" $(( 2 * MiB )) "$H" $(( 120 * MiB )) "$len"
		[ "$(copy_stat_since offloaded_bytes)" = "$len" ] ||
			fail "target offloaded $(copy_stat_since offloaded_bytes) of $len"
	done
}
