# SPDX-License-Identifier: GPL-2.0
#
# NVMe helpers for the suites in tests/nvme: QEMU's namespaces by NSID,
# Identify fields through nvme-cli, and an nvmet target built through
# configfs (loop and tcp ports, bdev and file namespaces) with the host
# side connected through nvme-cli. Load after common:
#   load ../lib/common
#   load ../lib/nvme

NVMET_CFS=/sys/kernel/config/nvmet
# A host NQN of our own: the guest shares the host's /etc, which may have
# none, and the target only has to see the same one on every path.
NVME_HOSTNQN=nqn.2014-08.org.nvmexpress:uuid:6d2b1c5e-0f3a-4c1d-9e1b-3a7c5d9e2f10
NVME_HOSTID=6d2b1c5e-0f3a-4c1d-9e1b-3a7c5d9e2f10

# qemu_ns NSID: the disk name of namespace NSID of QEMU's controller
# (nvme0): the kernel scans namespaces in parallel, so names need not
# follow NSIDs.
qemu_ns() {
	local f
	for f in /sys/block/nvme0n*/nsid; do
		[ -e "$f" ] || continue
		if [ "$(cat "$f")" = "$1" ]; then
			basename "$(dirname "$f")"
			return 0
		fi
	done
	echo "no namespace $1 on nvme0" >&2
	return 1
}

# id_field nvme-SUBCOMMAND DEVICE FIELD: a numeric field of nvme-cli's
# id-ctrl or id-ns output.
id_field() {
	nvme "$1" "$2" | awk -v f="$3" '$1 == f { print $3; exit }'
}

# nvme_copy_lbas DEV: min(MSSRL, MCL) of DEV's namespace, the blocks one
# Copy command of this series' host moves.
nvme_copy_lbas() {
	local mssrl mcl
	mssrl=$(id_field id-ns "$1" mssrl)
	mcl=$(id_field id-ns "$1" mcl)
	echo $(( mssrl < mcl ? mssrl : mcl ))
}

# nvme_status_code OUTPUT: the status field nvme-cli printed for a failed
# command, "0x183" style without the DNR/More bits; empty when none.
nvme_status_code() {
	local hex
	hex=$(grep -oE '\(0x[0-9a-fA-F]+\)' <<<"$1" | tail -n 1 | tr -d '()')
	[ -n "$hex" ] || return 0
	printf '0x%x\n' $(( hex & 0x7ff ))
}

# nvme_fill NS LBA COUNT FILE: COUNT random blocks into FILE and onto NS
# at LBA.
nvme_fill() {
	local lbs
	lbs=$(queue_attr "$1" logical_block_size)
	random_file "$4" $(( $3 * lbs ))
	dev_write "$1" $(( $2 * lbs )) "$4"
}

# nvme_copy_refused NS EXPECTED-STATUS SDLBA nvme-copy-args...: nvme copy
# fails with that NVMe status and the NVME_REFUSED_BLOCKS (default 256)
# blocks at SDLBA do not change.
nvme_copy_refused() {
	local ns=$1 want=$2 sdlba=$3 lbs d=$BATS_TEST_TMPDIR
	shift 3
	lbs=$(queue_attr "$ns" logical_block_size)
	nvme_fill "$ns" "$sdlba" "${NVME_REFUSED_BLOCKS:-256}" "$d/old"
	run nvme copy "$ns" --sdlba="$sdlba" "$@"
	echo "nvme copy $ns --sdlba=$sdlba $*: status $status: $output"
	[ "$status" -ne 0 ]
	[ "$(nvme_status_code "$output")" = "$want" ] ||
		fail "expected NVMe status $want, got '$(nvme_status_code "$output")'"
	dev_expect "$ns" $(( sdlba * lbs )) "$d/old"
}

# nvme_copy_cmd_refused NS EXPECTED-STATUS SDLBA SLBA:NLB...: a Copy built
# by nvme-copy-cmd fails with that status and Dword 0 is 0 (the checks
# refused it before any range was copied), and the NVME_REFUSED_BLOCKS
# blocks at SDLBA do not change.
nvme_copy_cmd_refused() {
	local ns=$1 want=$2 sdlba=$3 lbs d=$BATS_TEST_TMPDIR
	shift 3
	lbs=$(queue_attr "$ns" logical_block_size)
	nvme_fill "$ns" "$sdlba" "${NVME_REFUSED_BLOCKS:-256}" "$d/old"
	run "$NVME_COPY_CMD" "$ns" "$sdlba" "$@"
	echo "nvme-copy-cmd $ns $sdlba ${*:1:4}...: $output"
	[ "$status" -eq 0 ]
	[ "$output" = "status=$want result=0" ]
	dev_expect "$ns" $(( sdlba * lbs )) "$d/old"
}

# ------------------------------------------------------------- target ---

# nvmet_subsys NQN: a subsystem any host may connect to.
nvmet_subsys() {
	modprobe nvmet
	mkdir "$NVMET_CFS/subsystems/$1"
	echo 1 >"$NVMET_CFS/subsystems/$1/attr_allow_any_host"
}

# nvmet_ns NQN NSID PATH: namespace NSID of NQN on PATH (a block device
# or a file), enabled.
nvmet_ns() {
	local d=$NVMET_CFS/subsystems/$1/namespaces/$2
	mkdir "$d"
	echo -n "$3" >"$d/device_path"
	echo 1 >"$d/enable"
}

# nvmet_port ID loop | ID tcp ADDR PORT: a port exporting nothing yet.
nvmet_port() {
	local d=$NVMET_CFS/ports/$1
	case $2 in
	loop) modprobe nvme-loop ;;
	tcp) modprobe nvmet-tcp ;;
	esac
	mkdir "$d"
	echo "$2" >"$d/addr_trtype"
	if [ "$2" = tcp ]; then
		echo ipv4 >"$d/addr_adrfam"
		echo "$3" >"$d/addr_traddr"
		echo "$4" >"$d/addr_trsvcid"
	fi
}

# nvmet_export PORT-ID NQN: PORT-ID starts serving NQN. A tcp port listens
# in the network namespace of the process that does this.
nvmet_export() {
	ln -s "$NVMET_CFS/subsystems/$2" "$NVMET_CFS/ports/$1/subsystems/$2"
}

# nvmet_teardown: the host disconnected from every subsystem, then every
# port, namespace and subsystem of the target removed.
nvmet_teardown() {
	local d
	[ -d "$NVMET_CFS" ] || return 0
	for d in "$NVMET_CFS"/subsystems/*/; do
		[ -d "$d" ] || continue
		nvme disconnect -n "$(basename "$d")" >/dev/null 2>&1 || true
	done
	for d in "$NVMET_CFS"/ports/*/subsystems/*; do
		[ -L "$d" ] && rm -f "$d"
	done
	for d in "$NVMET_CFS"/ports/*/; do
		[ -d "$d" ] && rmdir "$d"
	done
	for d in "$NVMET_CFS"/subsystems/*/namespaces/*/; do
		[ -d "$d" ] || continue
		echo 0 >"$d/enable"
		rmdir "$d"
	done
	for d in "$NVMET_CFS"/subsystems/*/; do
		[ -d "$d" ] && rmdir "$d"
	done
	return 0
}

# --------------------------------------------------------------- host ---

# nvme_connect NQN loop | NQN tcp ADDR PORT [nvme-connect options]
nvme_connect() {
	local nqn=$1 tr=$2
	shift 2
	local -a args=(-t "$tr" -n "$nqn" --hostnqn="$NVME_HOSTNQN"
		       --hostid="$NVME_HOSTID")
	if [ "$tr" = tcp ]; then
		args+=(-a "$1" -s "$2")
		shift 2
	fi
	nvme connect "${args[@]}" "$@" >/dev/null
}

# nvme_connect_again NQN loop: one more controller to NQN over loop, a
# second path to its namespaces. nvme-cli 2.3 refuses that as "already
# connected" even with --duplicate-connect, so ask the kernel directly.
nvme_connect_again() {
	echo "transport=$2,nqn=$1,hostnqn=$NVME_HOSTNQN,hostid=$NVME_HOSTID,duplicate_connect" \
		>/dev/nvme-fabrics
}

# nvme_paths DISK: the path disks (nvmeXcYnZ) under multipath node DISK
# (nvmeXnZ), one per controller.
nvme_paths() {
	local sub=${1#nvme} b
	for b in /sys/block/nvme"${sub%%n*}"c*n"${sub#*n}"; do
		[ -e "$b" ] && basename "$b"
	done
	return 0
}

# nvme_ctrl NQN: the character device of the (first) host controller
# connected to subsystem NQN.
nvme_ctrl() {
	local c
	for c in /sys/class/nvme/nvme*; do
		if [ "$(cat "$c/subsysnqn" 2>/dev/null)" = "$1" ]; then
			echo "/dev/$(basename "$c")"
			return 0
		fi
	done
	echo "no host controller for $1" >&2
	return 1
}

# host_ns NQN [NSID]: the block device the host sees for namespace NSID
# (default 1) of subsystem NQN (the multipath node when there is one),
# waiting for the asynchronous scan.
host_ns() {
	local nqn=$1 nsid=${2:-1} i b
	for (( i = 0; i < 100; i++ )); do
		for b in /sys/block/nvme*n*; do
			[[ $(basename "$b") =~ ^nvme[0-9]+n[0-9]+$ ]] || continue
			[ "$(cat "$b/device/subsysnqn" 2>/dev/null)" = "$nqn" ] || continue
			[ "$(cat "$b/nsid" 2>/dev/null)" = "$nsid" ] || continue
			[ -b "/dev/$(basename "$b")" ] || continue
			echo "/dev/$(basename "$b")"
			return 0
		done
		sleep 0.1
	done
	echo "no host block device for $nqn namespace $nsid" >&2
	return 1
}
