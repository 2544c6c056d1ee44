#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# dmcopy status against the kernel of the series: null_blk's and QEMU
# NVMe's copy capability, virtio-blk without it, dm-linear and copy target
# devices with their target types and the layer below, counters after a
# copy; JSON checked with jq. valgrind memcheck on the command.

bats_require_minimum_version 1.5.0

load ../lib/common
load ../lib/dm
load ../lib/nvme

DMCOPY=$DMCOPY_TOP/tools/dmcopy
MiB=1048576

setup() {
	guest_setup
	[ -x "$DMCOPY" ] || fail "$DMCOPY not built (make userspace)"
}

teardown() {
	dm_cleanup
	nullb_unload || true
	guest_teardown
}

# status_json DEV COLUMN: one column of dmcopy status -J -b for DEV.
status_json() {
	"$DMCOPY" status -J -b -o NAME,"$2" "$1" | jq -r ".devices[0][\"${2,,}\"]"
}

@test "dmcopy status --json reports null_blk's copy capability, as numbers" {
	nullb_load copy_max_bytes=$MiB
	run "$DMCOPY" status -J -b /dev/nullb0
	echo "$output"
	[ "$status" -eq 0 ]
	[ "$(jq -r '.devices[0].name' <<<"$output")" = nullb0 ]
	[ "$(jq -r '.devices[0]["copy-max-hw"] | type' <<<"$output")" = number ]
	[ "$(jq -r '.devices[0]["copy-max-hw"]' <<<"$output")" = $MiB ]
	[ "$(jq -r '.devices[0]["copy-max"]' <<<"$output")" = $MiB ]
	[ "$(status_json nullb0 VERDICT)" = offload ]
	echo 0 >/sys/block/nullb0/queue/copy_max_bytes
	[ "$(status_json nullb0 COPY-MAX)" = 0 ]
	[ "$(status_json nullb0 VERDICT)" = emulate-kernel ]
}

@test "dmcopy status reports QEMU NVMe's copy capability and virtio-blk's lack of it" {
	local ns
	ns=$(qemu_ns 1)
	[ "$(status_json "$ns" COPY-MAX-HW)" = "$(cat /sys/block/$ns/queue/copy_max_hw_bytes)" ]
	[ "$(status_json "$ns" COPY-MAX-HW)" -gt 0 ]
	[ "$(status_json vda COPY-MAX-HW)" = 0 ]
	[ "$(status_json vda VERDICT)" = emulate-kernel ]
}

@test "dmcopy status shows dm devices' target types and the layer below; counters follow copies" {
	nullb_load copy_max_bytes=$MiB
	dm_copy_load
	dmsetup create dmt-lin --table "0 262144 linear /dev/nullb0 0"
	dmsetup create dmt-cp --table "0 262144 copy /dev/nullb0 524288"
	local lin cp
	lin=$(dm_dev dmt-lin)
	cp=$(dm_dev dmt-cp)
	[ "$(status_json "$lin" TYPE)" = linear ]
	[ "$(status_json "$cp" TYPE)" = copy ]
	[ "$(status_json "$lin" SLAVES)" = nullb0 ]
	[ "$(status_json /dev/mapper/dmt-cp DM-NAME)" = dmt-cp ]
	"$COPY_RANGE" -d /dev/mapper/dmt-lin 0 /dev/mapper/dmt-lin $(( 64 * MiB )) $(( 2 * MiB ))
	[ "$(status_json "$lin" OFFLOADED-BYTES)" = $(( 2 * MiB )) ]
	[ "$(status_json "$lin" EMULATED-BYTES)" = 0 ]
	# Every device at once: exit 0, one row per device, ours among them.
	run "$DMCOPY" status -r -n -o NAME
	[ "$status" -eq 0 ]
	[[ " ${lines[*]} " == *" $lin "* ]]
	[[ " ${lines[*]} " == *" nullb0 "* ]]
}

@test "dmcopy status: a hydrating dm-clone's NOTE says it copies through dm-kcopyd, and how" {
	nullb_load copy_max_bytes=$MiB
	local sz=$(( 64 * 2048 )) note dst
	dmsetup create dmt-src --table "0 $sz linear /dev/nullb0 0"
	dmsetup create dmt-dst --table "0 $sz linear /dev/nullb0 $sz"
	dmsetup create dmt-meta --table "0 8192 linear /dev/nullb0 $(( 2 * sz ))"
	# A slow source (dm-delay, which passes no copies): hydration takes
	# a while, and dm-kcopyd reads and writes.
	dmsetup create dmt-slow --table "0 $sz delay /dev/mapper/dmt-src 0 100"
	dd if=/dev/zero of=/dev/mapper/dmt-meta bs=1M count=1 oflag=direct status=none
	dmsetup create dmt-clone --table "0 $sz clone /dev/mapper/dmt-meta /dev/mapper/dmt-dst /dev/mapper/dmt-slow 8"
	note=$("$DMCOPY" status -J -o NOTE /dev/mapper/dmt-clone | jq -r ".devices[0].note")
	echo "$note"
	[[ $note =~ ^hydrating:\ [0-9.]+%\ \([0-9]+\ of\ 16384\ regions\)\ through\ dm-kcopyd,\ read\ and\ written\ in\ the\ kernel\ \($(dm_dev dmt-slow)\ cannot\ offload\ copies\)$ ]]
	dmsetup remove dmt-clone
	# Source and destination that both offload: offered to the device.
	dd if=/dev/zero of=/dev/mapper/dmt-meta bs=1M count=1 oflag=direct status=none
	dmsetup create dmt-clone --table "0 $sz clone /dev/mapper/dmt-meta /dev/mapper/dmt-dst /dev/mapper/dmt-src 8 1 no_hydration"
	note=$("$DMCOPY" status -J -o NOTE /dev/mapper/dmt-clone | jq -r ".devices[0].note")
	echo "$note"
	dst=$(dm_dev dmt-dst)
	[[ $note =~ ^hydrating:\ 0.0%\ \(0\ of\ 16384\ regions\)\ through\ dm-kcopyd,\ offered\ to\ the\ device\ \($(dm_dev dmt-src),\ $dst\)$ ]]
}

@test "dmcopy status: a missing device among present ones exits 64, one line on stderr" {
	nullb_load copy_max_bytes=$MiB
	run --separate-stderr "$DMCOPY" status nullb0 /dev/nonexistent
	[ "$status" -eq 64 ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ $stderr == dmcopy:* ]]
	[[ $output == *nullb0* ]]
}

@test "dmcopy status is clean under valgrind memcheck" {
	command -v valgrind >/dev/null || fail "valgrind not installed (make deps)"
	nullb_load copy_max_bytes=$MiB
	dmsetup create dmt-lin --table "0 262144 linear /dev/nullb0 0"
	run valgrind -q --leak-check=full --error-exitcode=99 "$DMCOPY" status -J
	echo "$output" | tail -n 20
	[ "$status" -eq 0 ]
}
