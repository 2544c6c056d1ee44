# SPDX-License-Identifier: GPL-2.0
#
# Helpers for the device-mapper suites (tests/dm). Load after common:
#   load ../lib/common
#   load ../lib/dm
#
# Devices the tests make are named dmt-*, volume groups dmtvg*; dm_cleanup
# removes them all.

DM_COPY_MODULE=$DMCOPY_TOP/dm-copy/dm-copy.ko

# dm_copy_load: dm-copy.ko from this tree, unless it is loaded already.
dm_copy_load() {
	[ -f "$DM_COPY_MODULE" ] || fail "$DM_COPY_MODULE not built (make modules)"
	lsmod | grep -q '^dm_copy ' || insmod "$DM_COPY_MODULE"
}

# dm_create NAME LINE...: a mapped device with a table of these lines.
dm_create() {
	local name=$1
	shift
	printf '%s\n' "$@" | dmsetup create "$name"
}

# linear NAME DEV OFFSET_MIB SIZE_MIB: a one-target dm-linear device.
linear() {
	dmsetup create "$1" --table \
		"0 $(( $4 * 2048 )) linear $2 $(( $3 * 2048 ))"
}

# dm_reload NAME LINE...: load these lines as the inactive table and
# swap them in (suspend, then resume).
dm_reload() {
	local name=$1
	shift
	printf '%s\n' "$@" | dmsetup reload "$name"
	dmsetup suspend "$name"
	dmsetup resume "$name"
}

# dm_dev NAME: the dm-N name of a mapped device, as in /sys/block.
dm_dev() {
	dmsetup info -c --noheadings -o blkdevname "$1"
}

# dm_queue NAME ATTR: a queue attribute of a mapped device.
dm_queue() {
	cat "/sys/block/$(dm_dev "$1")/queue/$2"
}

# dm_status_field NAME N: field N (from 1) of the status line's target
# arguments, after "<start> <len> <target>".
dm_status_field() {
	local -a v
	read -r -a v <<<"$(dmsetup status "$1")"
	echo "${v[$(( $2 + 2 ))]}"
}

# mirror_wait NAME [RATIO [failed]]: until dm-raid1's sync ratio (status
# field 4) reads RATIO, or is whole without one; with "failed", until a
# leg's health character (field 6) is no longer A as well.
mirror_wait() {
	local i v
	for (( i = 0; i < 600; i++ )); do
		v=$(dm_status_field "$1" 4)
		if { [ -n "${2:-}" ] && [ "$v" = "$2" ]; } ||
		   { [ -z "${2:-}" ] && [ -n "$v" ] && [ "${v%/*}" = "${v#*/}" ]; }; then
			[ -z "${3:-}" ] || [[ $(dm_status_field "$1" 6) == *[!A]* ]] && return 0
		fi
		sleep 0.2
	done
	fail "$1 not at ${2:-a whole sync ratio} after 120 s: $(dmsetup status "$1")"
}

# devno DEV: MAJ:MIN of a block device, as dm prints it in tables.
devno() {
	local num
	num=$(stat -L -c '%t %T' "$1") || return 1
	read -r -a num <<<"$num"
	echo "$(( 16#${num[0]} )):$(( 16#${num[1]} ))"
}

# A stream of copies, for suspends and reloads under load: copy i of N
# copies LEN bytes (3 MiB at most) inside DEV from i * 4 MiB to
# (100 + i * 4) MiB, one after the other. Files in $BATS_TEST_TMPDIR.
#
# stream_setup DEV N LEN: a random source for each copy, and random data
# all over the destination area, so that stream_check sees any byte the
# copies should not have written.
stream_setup() {
	local dev=$1 n=$2 len=$3 i d=$BATS_TEST_TMPDIR
	for i in $(seq 1 "$n"); do
		random_file "$d/src.$i" "$len"
		dev_write "$dev" $(( i * 4 * MiB )) "$d/src.$i"
	done
	random_file "$d/dst-area" $(( (n + 1) * 4 * MiB ))
	dev_write "$dev" $(( 100 * MiB )) "$d/dst-area"
}

# copy_stream DEV N LEN: the copies; the output of copy i in
# $BATS_TEST_TMPDIR/stream.i.
copy_stream() {
	local dev=$1 n=$2 len=$3 i d=$BATS_TEST_TMPDIR
	for i in $(seq 1 "$n"); do
		"$COPY_RANGE" -d "$dev" $(( i * 4 * MiB )) "$dev" $(( (100 + i * 4) * MiB )) "$len" \
			>"$d/stream.$i" 2>&1
	done
}

# stream_check DEV N LEN: every copy copied all of it, the sources did not
# change, and the destination area holds the sources where the copies
# went and what stream_setup wrote everywhere else.
stream_check() {
	local dev=$1 n=$2 len=$3 i d=$BATS_TEST_TMPDIR
	cp "$d/dst-area" "$d/dst-expected"
	for i in $(seq 1 "$n"); do
		[ "$(cat "$d/stream.$i")" = "copied=$len" ] ||
			fail "copy $i of the stream: $(cat "$d/stream.$i")"
		dev_expect "$dev" $(( i * 4 * MiB )) "$d/src.$i"
		dd if="$d/src.$i" of="$d/dst-expected" bs=1M seek=$(( i * 4 )) \
			conv=notrunc status=none
	done
	dev_expect "$dev" $(( 100 * MiB )) "$d/dst-expected"
}

# lvm CMD ARGS...: an lvm2 command that sees only the test's devices, keeps
# no backups and needs neither udev nor lvmetad-style daemons.
LVM_CONFIG='devices { types = [ "nullb", 16 ] use_devicesfile = 0
	global_filter = [ "a|^/dev/nullb|", "a|^/dev/nvme|", "a|^/dev/mapper/dmt-|", "r|.*|" ] }
	global { use_lvmpolld = 0 } backup { backup = 0 archive = 0 }
	activation { udev_sync = 0 udev_rules = 0 monitoring = 0 }'

lvm_cmd() {
	local cmd=$1
	shift
	LVM_SUPPRESS_FD_WARNINGS=1 lvm "$cmd" --config "$LVM_CONFIG" "$@"
}

# dm_cleanup: remove every volume group and device the dm suites made:
# mapped devices of the tests (dmt-*, and dmcopy-* that dmcopy provision
# makes) may sit on top of LVs and hold them, or under a VG; so devices,
# then VGs, a few times over, then what is left of the VGs' devices and
# directories.
dm_cleanup() {
	local vg pv name found
	# Until a round finds nothing of ours (each lvm command costs a
	# third of a second under TCG).
	for _ in 1 2 3; do
		found=0
		for name in $(dmsetup ls 2>/dev/null | awk '{ print $1 }'); do
			case $name in
			dmt-*|dmcopy-*)
				found=1
				# A test that failed half way may leave it suspended.
				dmsetup resume "$name" >/dev/null 2>&1
				dmsetup remove "$name" >/dev/null 2>&1 ;;
			esac
		done
		while read -r pv vg; do
			case $vg in
			dmtvg*)
				found=1
				lvm_cmd vgchange -an "$vg" >/dev/null 2>&1
				lvm_cmd vgremove -ff "$vg" >/dev/null 2>&1
				lvm_cmd pvremove -ff -y "$pv" >/dev/null 2>&1 ;;
			esac
		done < <(lvm_cmd pvs --noheadings -o pv_name,vg_name 2>/dev/null)
		[ $found = 1 ] || break
	done
	for name in $(dmsetup ls 2>/dev/null | awk '{ print $1 }'); do
		case $name in
		dmtvg*)
			dmsetup resume "$name" >/dev/null 2>&1
			dmsetup remove "$name" >/dev/null 2>&1 ;;
		esac
	done
	# lvm makes /dev/<vg> itself (no udev here); a VG that went away
	# under a device it could not deactivate leaves it behind.
	rm -rf /dev/dmtvg*
	return 0
}
