#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# dmcopy copy on null_blk, QEMU NVMe, virtio-blk, dm-linear and a dm-copy
# device: every copy checked byte for byte with the bytes around the
# destination; the report of what was offloaded, emulated and copied in
# user space; progress lines; an interrupted copy's prefix; refusals
# (signatures, holders, overlap) and usage errors; valgrind memcheck.

bats_require_minimum_version 1.5.0

load ../lib/common
load ../lib/dm
load ../lib/nvme

DMCOPY=$DMCOPY_TOP/tools/dmcopy
MiB=1048576
GUARD=65536

setup() {
	guest_setup
	[ -x "$DMCOPY" ] || fail "$DMCOPY not built (make userspace)"
}

teardown() {
	dm_cleanup
	nullb_unload || true
	guest_teardown
}

# fill SRC SOFF DST DOFF LEN: random data in the source range and GUARD
# bytes on each side of the destination range; the patterns stay in
# $BATS_TEST_TMPDIR for verify.
fill() {
	local d=$BATS_TEST_TMPDIR
	random_file "$d/src" "$5"
	random_file "$d/before" $GUARD
	random_file "$d/after" $GUARD
	if [ "$4" -ge $GUARD ]; then
		dev_write "$3" $(( $4 - GUARD )) "$d/before"
	fi
	dev_write "$3" $(( $4 + $5 )) "$d/after"
	dev_write "$1" "$2" "$d/src"
}

# verify SRC SOFF DST DOFF LEN [PREFIX]: the first PREFIX bytes (LEN by
# default) of the destination hold the source; the source and the bytes
# around the destination range are unchanged.
verify() {
	local d=$BATS_TEST_TMPDIR n=${6:-$5}
	if [ "$n" -gt 0 ]; then
		head -c "$n" "$d/src" >"$d/prefix"
		dev_expect "$3" "$4" "$d/prefix"
	fi
	dev_expect "$1" "$2" "$d/src"
	if [ "$4" -ge $GUARD ]; then
		dev_expect "$3" $(( $4 - GUARD )) "$d/before"
	fi
	dev_expect "$3" $(( $4 + $5 )) "$d/after"
}

# copy_checked SRC SOFF DST DOFF LEN [OPTION...]: fill, dmcopy copy with
# OPTIONs, exit 0, verify. stdout and stderr are left in $output/$stderr.
copy_checked() {
	local src=$1 soff=$2 dst=$3 doff=$4 len=$5
	shift 5
	fill "$src" "$soff" "$dst" "$doff" "$len"
	run --separate-stderr "$DMCOPY" copy "$@" --length "$len" \
		"$src:$soff" "$dst:$doff"
	echo "dmcopy copy $* $src:$soff $dst:$doff -> $status"
	echo "stdout: $output"
	echo "stderr: $stderr"
	[ "$status" -eq 0 ] || return 1
	verify "$src" "$soff" "$dst" "$doff" "$len"
}

# report OFFLOADED EMULATED USERSPACE: the last line of stdout.
report() {
	[ "${lines[-1]}" = "copied $(( $1 + $2 + $3 )) bytes: $1 offloaded, $2 emulated in the kernel, $3 in user space" ] ||
		fail "report is '${lines[-1]}'"
}

@test "dmcopy copy on null_blk is offloaded and says so" {
	nullb_load copy_max_bytes=$MiB
	copy_checked /dev/nullb0 0 /dev/nullb0 $(( 64 * MiB )) $(( 8 * MiB )) --debug
	[ "${lines[0]}" = "copy offload: yes" ]
	report $(( 8 * MiB )) 0 0
	# A length that is no multiple of the chunk, in pieces.
	copy_checked /dev/nullb0 $MiB /dev/nullb0 $(( 200 * MiB )) $(( 3 * MiB + 4096 )) --chunk 1M
	report $(( 3 * MiB + 4096 )) 0 0
	# Offsets and length with suffixes.
	fill /dev/nullb0 $MiB /dev/nullb0 $(( 300 * MiB )) $(( 2 * MiB ))
	"$DMCOPY" copy -q -l 2M /dev/nullb0:1M /dev/nullb0:300M
	verify /dev/nullb0 $MiB /dev/nullb0 $(( 300 * MiB )) $(( 2 * MiB ))
	# Without --length: what fits in both, here the rest of the source.
	fill /dev/nullb0 $(( 1022 * MiB )) /dev/nullb0 $(( 400 * MiB )) $(( 2 * MiB ))
	run -0 "$DMCOPY" copy /dev/nullb0:1022M /dev/nullb0:400M
	report $(( 2 * MiB )) 0 0
	verify /dev/nullb0 $(( 1022 * MiB )) /dev/nullb0 $(( 400 * MiB )) $(( 2 * MiB ))
}

@test "dmcopy copy with offload off on null_blk is emulated in the kernel" {
	nullb_load copy_max_bytes=$MiB
	echo 0 >/sys/block/nullb0/queue/copy_max_bytes
	copy_checked /dev/nullb0 0 /dev/nullb0 $(( 64 * MiB )) $(( 4 * MiB )) --debug
	[ "${lines[0]}" = "copy offload: no" ]
	report 0 $(( 4 * MiB )) 0
}

@test "dmcopy copy --no-offload reads and writes in user space" {
	nullb_load copy_max_bytes=$MiB
	copy_checked /dev/nullb0 0 /dev/nullb0 $(( 64 * MiB )) $(( 2 * MiB )) --no-offload --debug
	[ "${lines[0]}" = "copy offload: avoided" ]
	report 0 0 $(( 2 * MiB ))
	[ "$(copy_stat /dev/nullb0 offloaded_bytes)" = 0 ]
	[ "$(copy_stat /dev/nullb0 emulated_bytes)" = 0 ]
}

@test "dmcopy copy on QEMU NVMe is offloaded; across namespaces it still copies" {
	local ns
	ns=/dev/$(qemu_ns 1)
	copy_checked "$ns" 0 "$ns" $(( 64 * MiB )) $(( 2 * MiB )) --debug
	[ "${lines[0]}" = "copy offload: yes" ]
	report $(( 2 * MiB )) 0 0
}

@test "dmcopy copy on virtio-blk is emulated in the kernel" {
	copy_checked /dev/vda 0 /dev/vda $(( 64 * MiB )) $MiB --debug
	[ "${lines[0]}" = "copy offload: no" ]
	report 0 $MiB 0
}

@test "dmcopy copy through a dm-copy device made by dmcopy create" {
	nullb_load copy_max_bytes=$MiB
	dm_copy_load
	"$DMCOPY" create dmt-cc /dev/nullb0 --size 512M
	copy_checked /dev/mapper/dmt-cc 0 /dev/mapper/dmt-cc $(( 128 * MiB )) $(( 4 * MiB ))
	report $(( 4 * MiB )) 0 0
	[ "$(dm_status_field dmt-cc 3)" = $(( 4 * MiB )) ]
	# To another device: the kernel emulates (no shared disk to offload to).
	copy_checked /dev/mapper/dmt-cc 0 /dev/vda $(( 64 * MiB )) $MiB
	report 0 $MiB 0
}

@test "dmcopy copy through dm-linear: offloaded inside a target and between two, emulated across a boundary" {
	nullb_load copy_max_bytes=$MiB
	local nb dm
	nb=$(devno /dev/nullb0)
	# Two targets over one disk: [0, 256M) and [256M, 512M) map to
	# nullb0 at 0 and at 512M.
	dm_create dmt-lin "0 524288 linear $nb 0" "524288 524288 linear $nb 1048576"
	dm=/dev/mapper/dmt-lin
	run -0 "$DMCOPY" status -r -n -o NAME,TYPE,LAYER,VERDICT "$dm"
	[ "$output" = "$(dm_dev dmt-lin) linear nullb0 offload" ]
	fill $dm 0 $dm $(( 128 * MiB )) $(( 4 * MiB ))
	rw_mark /dev/nullb0
	run --separate-stderr "$DMCOPY" copy --debug --length $(( 4 * MiB )) $dm:0 $dm:$(( 128 * MiB ))
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "copy offload: yes" ]
	report $(( 4 * MiB )) 0 0
	# The disk below did it: it wrote nothing (dmcopy's libblkid probe
	# of the destination reads a little).
	local rw
	read -r -a rw <<<"$(rw_since)"
	[ "${rw[1]}" = 0 ] || fail "null_blk wrote ${rw[1]} sectors"
	verify $dm 0 $dm $(( 128 * MiB )) $(( 4 * MiB ))
	# From the first target into the second, both on nullb0 (two LVs of
	# one PV): offloaded too, and the bytes land where the table maps them.
	copy_checked $dm $(( 8 * MiB )) $dm $(( 300 * MiB )) $(( 2 * MiB )) --debug
	[ "${lines[0]}" = "copy offload: yes" ]
	report $(( 2 * MiB )) 0 0
	dev_expect /dev/nullb0 $(( 300 * MiB - 256 * MiB + 512 * MiB )) "$BATS_TEST_TMPDIR/src"
	# A destination across the targets' boundary, off the 1 MiB chunks'
	# alignment: the chunk that crosses it is emulated (dm cannot split
	# a copy), the rest offloaded.
	copy_checked $dm $(( 8 * MiB )) $dm $(( 255 * MiB + 512 * 1024 )) $(( 2 * MiB )) --debug
	[ "${lines[0]}" = "copy offload: yes" ]
	local o e
	read -r o e <<<"$(sed -n 's/^copied [0-9]* bytes: \([0-9]*\) offloaded, \([0-9]*\) emulated in the kernel, 0 in user space$/\1 \2/p' <<<"${lines[-1]}")"
	echo "offloaded $o, emulated $e"
	[ "$(( o + e ))" = $(( 2 * MiB )) ]
	[ "$e" -gt 0 ]
}

@test "dmcopy copy between a block device and a file falls back to user space" {
	nullb_load copy_max_bytes=$MiB
	local f=$BATS_TEST_TMPDIR/image
	truncate -s $(( 8 * MiB )) "$f"
	copy_checked /dev/nullb0 $MiB "$f" $MiB $(( 2 * MiB )) --debug
	[ "${lines[0]}" = "copy offload: unsupported" ]
	[ "${lines[1]}" = "the kernel does not copy between a block device and a regular file: copied in user space" ]
	report 0 0 $(( 2 * MiB ))
	# The file did not grow past the copy's end (8 MiB was its size).
	[ "$(stat -c %s "$f")" -eq $(( 8 * MiB )) ]
	# And back from the file to the device.
	copy_checked "$f" 0 /dev/nullb0 $(( 100 * MiB )) $MiB
	report 0 0 $MiB
}

@test "dmcopy copy --progress prints qemu-img -p lines on stdout; --quiet prints nothing" {
	nullb_load copy_max_bytes=$MiB
	local out=$BATS_TEST_TMPDIR/out err=$BATS_TEST_TMPDIR/err
	copy_checked /dev/nullb0 0 /dev/nullb0 $(( 64 * MiB )) $(( 4 * MiB )) --progress --chunk 1M
	report $(( 4 * MiB )) 0 0
	# As qemu-img -p, on stdout where its callers read it: "    (NN.NN/100%)",
	# each ending in \r, then one \n; then the report. Read from a file:
	# bats strips the leading blanks of $output.
	"$DMCOPY" copy -p --chunk 1M -l 4M /dev/nullb0:0 /dev/nullb0:64M >"$out" 2>"$err"
	od -c "$out" | head -n 8
	[ ! -s "$err" ]
	[ "$(head -n 1 "$out" | tr '\r' '\n' | sed '/^$/d')" = "$(printf '    (%s/100%%)\n' \
		0.00 25.00 50.00 75.00 100.00)" ]
	[ "$(head -n 1 "$out" | tr -cd '\r' | wc -c)" -eq 5 ]
	[ "$(head -n 1 "$out" | tail -c 2 | od -An -c | tr -d ' ')" = '\r\n' ]
	[ "$(sed -n 2p "$out")" = "copied $(( 4 * MiB )) bytes: $(( 4 * MiB )) offloaded, 0 emulated in the kernel, 0 in user space" ]
	[ "$(wc -l <"$out")" -eq 2 ]
	copy_checked /dev/nullb0 0 /dev/nullb0 $(( 64 * MiB )) $MiB --quiet
	[ -z "$output" ]
	[ -z "$stderr" ]
	# Not a terminal and no --progress: only the report.
	copy_checked /dev/nullb0 0 /dev/nullb0 $(( 64 * MiB )) $MiB
	[ -z "$stderr" ]
	[ "${#lines[@]}" -eq 1 ]
}

# interrupted_prefix LEN: the prefix the report on stderr says is copied
# (all of it in user space), checked against the devices.
interrupted_prefix() {
	local len=$1 d=$BATS_TEST_TMPDIR n
	tr '\r' '\n' <"$d/out" | tail -n 2
	cat "$d/err"
	n=$(sed -n 's/.*dmcopy: interrupted: the first \([0-9]*\) of .*/\1/p' "$d/err")
	[ -n "$n" ]
	[ "$n" -lt "$len" ]
	grep -q "dmcopy: interrupted: the first $n of $len bytes are copied: 0 offloaded, 0 emulated in the kernel, $n in user space" "$d/err"
	# The report is no success line on stdout.
	! grep -q '^copied' "$d/out"
	verify /dev/nullb0 0 /dev/nullb0 $(( 512 * MiB )) "$len" "$n"
	PREFIX=$n
}

@test "dmcopy copy interrupted by SIGINT reports the prefix copied, then dies by SIGINT as dd does" {
	nullb_load copy_max_bytes=$MiB
	local len=$(( 128 * MiB )) d=$BATS_TEST_TMPDIR how
	fill /dev/nullb0 0 /dev/nullb0 $(( 512 * MiB )) $len
	# Read and written here in 64 KiB pieces: slow enough to stop half
	# way. Interrupted once it has copied something. Dying by the signal
	# (not exit 130) is what stops a shell loop around dmcopy.
	how=$("$SIGNAL_RUN" "$d/out" "$d/err" '\((0\.[0-9][1-9]|[1-9][0-9.]*)/100%\)' INT -- \
		"$DMCOPY" copy --no-offload --chunk 64K -p /dev/nullb0:0 /dev/nullb0:512M --length $len)
	echo "dmcopy: $how"
	[ "$how" = "signal INT" ]
	interrupted_prefix $len
	[ "$PREFIX" -gt 0 ]
}

@test "dmcopy copy sees SIGTERM between the user-space buffers of one large chunk" {
	nullb_load copy_max_bytes=$MiB
	local len=$(( 128 * MiB )) d=$BATS_TEST_TMPDIR how
	fill /dev/nullb0 0 /dev/nullb0 $(( 512 * MiB )) $len
	# One chunk for all of it, read and written in 8 MiB buffers: the
	# stop must not wait for the chunk's end.
	how=$("$SIGNAL_RUN" "$d/out" "$d/err" '\(0\.00/100%\)' TERM -- \
		"$DMCOPY" copy --no-offload --chunk 128M -p /dev/nullb0:0 /dev/nullb0:512M --length $len)
	echo "dmcopy: $how"
	[ "$how" = "signal TERM" ]
	interrupted_prefix $len
	[ $(( PREFIX % (8 * MiB) )) -eq 0 ]
}

@test "dmcopy copy started with SIGINT ignored (nohup, a background job) keeps it ignored" {
	nullb_load copy_max_bytes=$MiB
	local len=$(( 64 * MiB )) d=$BATS_TEST_TMPDIR how
	fill /dev/nullb0 0 /dev/nullb0 $(( 512 * MiB )) $len
	how=$("$SIGNAL_RUN" --ignore "$d/out" "$d/err" '\(0\.00/100%\)' INT -- \
		"$DMCOPY" copy --no-offload --chunk 64K -p /dev/nullb0:0 /dev/nullb0:512M --length $len)
	echo "dmcopy: $how"
	cat "$d/err"
	[ "$how" = "exit 0" ]
	[ ! -s "$d/err" ]
	grep -q "^copied $len bytes: 0 offloaded, 0 emulated in the kernel, $len in user space" "$d/out"
	verify /dev/nullb0 0 /dev/nullb0 $(( 512 * MiB )) $len
}

@test "dmcopy copy refuses a destination with an ext4 filesystem unless forced" {
	nullb_load copy_max_bytes=$MiB
	mkfs.ext4 -q -F /dev/nullb0 64M
	local before=$BATS_TEST_TMPDIR/head
	dev_read /dev/nullb0 0 $(( 2 * MiB )) "$before"
	run --separate-stderr "$DMCOPY" copy -l 1M /dev/nullb0:512M /dev/nullb0:0
	echo "$stderr"
	[ "$status" -eq 1 ]
	[ "$stderr" = "dmcopy: /dev/nullb0: holds an ext4 filesystem (force overwrites it)" ]
	dev_expect /dev/nullb0 0 "$before"
	copy_checked /dev/nullb0 $(( 512 * MiB )) /dev/nullb0 0 $MiB --force
	[ -z "$(blkid -p /dev/nullb0 -o value -s TYPE)" ]
}

@test "dmcopy copy refuses a destination with a holder or opened exclusively unless forced" {
	nullb_load copy_max_bytes=$MiB
	local dm pid
	dmsetup create dmt-hold --table "0 2048 linear /dev/nullb0 0"
	dm=$(dm_dev dmt-hold)
	run --separate-stderr "$DMCOPY" copy -l 1M /dev/nullb0:0 /dev/nullb0:64M
	echo "$stderr"
	[ "$status" -eq 1 ]
	[ "$stderr" = "dmcopy: /dev/nullb0: in use by $dm (force twice copies anyway)" ]
	# One -f is for signatures only, as mkfs's.
	run --separate-stderr "$DMCOPY" copy -f -l 1M /dev/nullb0:0 /dev/nullb0:64M
	[ "$status" -eq 1 ]
	[ "$stderr" = "dmcopy: /dev/nullb0: in use by $dm (force twice copies anyway)" ]
	copy_checked /dev/nullb0 0 /dev/nullb0 $(( 64 * MiB )) $MiB -ff
	dmsetup remove dmt-hold
	# Opened with O_EXCL by another program, as a mount or mdadm does.
	python3 -c 'import os, sys, time
os.open("/dev/nullb0", os.O_RDONLY | os.O_EXCL); print("open", flush=True); time.sleep(60)' \
		>"$BATS_TEST_TMPDIR/excl" &
	pid=$!
	for _ in $(seq 100); do
		[ -s "$BATS_TEST_TMPDIR/excl" ] && break
		sleep 0.05
	done
	run --separate-stderr "$DMCOPY" copy -l 1M /dev/nullb0:0 /dev/nullb0:64M
	echo "$stderr"
	[ "$status" -eq 1 ]
	[ "$stderr" = "dmcopy: /dev/nullb0: in use: opened exclusively by another program (force twice copies anyway)" ]
	run --separate-stderr "$DMCOPY" copy --force -l 1M /dev/nullb0:0 /dev/nullb0:64M
	[ "$status" -eq 1 ]
	copy_checked /dev/nullb0 0 /dev/nullb0 $(( 64 * MiB )) $MiB --force --force
	kill $pid
	wait $pid || true
}

@test "dmcopy copy refuses an overlap through two names of one storage: a loop device and its file, dm-linear and its disk" {
	nullb_load copy_max_bytes=$MiB
	local d=$BATS_TEST_TMPDIR loop id
	head -c $(( 64 * MiB )) /dev/urandom >"$d/a.img"
	cp "$d/a.img" "$d/a.before"
	loop=$(losetup --show -f "$d/a.img")
	id="file $(stat -c '%Hd:%Ld:%i' "$d/a.img")"
	# loop0 from 1M is a.img from 1M: 24 MiB from a.img's start overlap.
	run --separate-stderr "$DMCOPY" copy -f --length 24M "$d/a.img" "$loop:1M"
	echo "$stderr"
	[ "$status" -eq 1 ]
	[ "$stderr" = "dmcopy: source and destination overlap: $d/a.img and $loop are both stored on $id" ]
	run --separate-stderr "$DMCOPY" copy -f --length 24M "$loop:1M" "$d/a.img"
	[ "$status" -eq 1 ]
	cmp "$d/a.img" "$d/a.before"
	# Apart, they copy.
	run -0 "$DMCOPY" copy -q -f --length 24M "$d/a.img" "$loop:32M"
	losetup -d "$loop"
	cmp -n $(( 24 * MiB )) "$d/a.before" <(tail -c +$(( 32 * MiB + 1 )) "$d/a.img")
	# dm-linear from nullb0's 64 MiB on: its first bytes are nullb0's at 64M.
	dmsetup create dmt-alias --table "0 $(( 64 * 2048 )) linear /dev/nullb0 $(( 64 * 2048 ))"
	dev_read /dev/nullb0 0 $(( 192 * MiB )) "$d/nb.before"
	run --separate-stderr "$DMCOPY" copy -f --length 8M /dev/nullb0:60M /dev/mapper/dmt-alias:0
	echo "$stderr"
	[ "$status" -eq 1 ]
	[ "$stderr" = "dmcopy: source and destination overlap: /dev/nullb0 and /dev/mapper/dmt-alias are both stored on nullb0" ]
	dev_expect /dev/nullb0 0 "$d/nb.before"
	copy_checked /dev/nullb0 0 /dev/mapper/dmt-alias 0 $(( 8 * MiB )) -f
}

@test "dmcopy copy -f onto a whole disk whose partition is mounted: refused, saying where; -ff writes" {
	nullb_load copy_max_bytes=$MiB
	local mnt=$BATS_TEST_TMPDIR/mnt before=$BATS_TEST_TMPDIR/before
	# One partition from 128 MiB on, with a filesystem, mounted.
	printf 'label: gpt\nstart=262144, size=131072\n' | sfdisk -q /dev/nullb0
	[ -b /dev/nullb0p1 ] || partx -a /dev/nullb0
	mkfs.ext4 -q /dev/nullb0p1
	mkdir "$mnt"
	mount /dev/nullb0p1 "$mnt"
	# What lies before the partition (the copy's destination among it);
	# umount writes the partition's own superblock.
	dev_read /dev/nullb0 0 $(( 128 * MiB )) "$before"
	run --separate-stderr "$DMCOPY" copy -f -l 1M /dev/nullb0:512M /dev/nullb0:64M
	echo "$stderr"
	umount "$mnt" || true
	[ "$status" -eq 1 ]
	[ "$stderr" = "dmcopy: /dev/nullb0: a partition ($(stat -c '%Hr:%Lr' /dev/nullb0p1)) is mounted on $mnt (force twice copies anyway)" ]
	dev_expect /dev/nullb0 0 "$before"
	# Unmounted, -f is enough again for the partition table.
	copy_checked /dev/nullb0 $(( 512 * MiB )) /dev/nullb0 $(( 64 * MiB )) $MiB -f
}

@test "dmcopy copy refuses overlapping ranges on one disk and ranges past the end" {
	nullb_load copy_max_bytes=$MiB
	local s
	for s in "/dev/nullb0:0 /dev/nullb0:1M" "/dev/nullb0:1M /dev/nullb0:0" \
		 "/dev/nullb0:0 /dev/nullb0:0"; do
		run --separate-stderr "$DMCOPY" copy -l 2M $s
		echo "$s: $stderr"
		[ "$status" -eq 1 ]
		[ "${#stderr_lines[@]}" -eq 1 ]
		[[ $stderr == *overlap* ]]
	done
	run --separate-stderr "$DMCOPY" copy -l 2M /dev/nullb0:1023M /dev/nullb0:0
	echo "$stderr"
	[ "$status" -eq 1 ]
	[ "${#stderr_lines[@]}" -eq 1 ]
	[[ $stderr == "dmcopy: /dev/nullb0: "* ]]
	run --separate-stderr "$DMCOPY" copy -l 1000 /dev/nullb0:0 /dev/nullb0:1M
	echo "$stderr"
	[ "$status" -eq 1 ]
	[[ $stderr == *"not a multiple of the 512"* ]]
}

@test "dmcopy copy usage errors exit 2 with the message and a pointer to --help" {
	nullb_load copy_max_bytes=$MiB
	local args
	while IFS='|' read -r args msg; do
		# shellcheck disable=SC2086
		run --separate-stderr "$DMCOPY" copy $args
		echo "copy $args: $status: $stderr"
		[ "$status" -eq 2 ]
		[ -z "$output" ]
		[ "${#stderr_lines[@]}" -eq 2 ]
		[ "${stderr_lines[0]}" = "dmcopy: $msg" ]
		[ "${stderr_lines[1]}" = "Try 'dmcopy --help' for more information." ]
	done <<-'EOF'
	--bogus /dev/nullb0 /dev/nullb0:1M|unrecognized option '--bogus'
	-z /dev/nullb0 /dev/nullb0:1M|invalid option -- 'z'
	-l 1Q /dev/nullb0 /dev/nullb0:1M|invalid size '1Q' for --length
	-l 0 /dev/nullb0 /dev/nullb0:1M|--length 0: nothing to copy
	--chunk x /dev/nullb0 /dev/nullb0:1M|invalid size 'x' for --chunk
	|copy: no source given
	/dev/nullb0|copy: no destination given
	/dev/nullb0 /dev/nullb0:1M extra|copy: unexpected argument 'extra'
	-p -q /dev/nullb0 /dev/nullb0:1M|--progress and --quiet are mutually exclusive
	/dev/nullb0 /dev/nullb0:1M --length|option '--length' requires an argument
	/dev/nullb0 /dev/nullb0:1M -fl|option requires an argument -- 'l'
	--force=yes /dev/nullb0 /dev/nullb0:1M|option '--force' doesn't allow an argument
	EOF
	# A missing device is a failure (1), named.
	run --separate-stderr "$DMCOPY" copy -l 1M /dev/nonexistent /dev/nullb0:1M
	[ "$status" -eq 1 ]
	[ "$stderr" = "dmcopy: /dev/nonexistent: No such file or directory" ]
}

@test "dmcopy copy is clean under valgrind memcheck, offloaded and in user space" {
	command -v valgrind >/dev/null || fail "valgrind not installed (make deps)"
	nullb_load copy_max_bytes=$MiB
	local f=$BATS_TEST_TMPDIR/image
	truncate -s $(( 4 * MiB )) "$f"
	run valgrind -q --leak-check=full --error-exitcode=99 \
		"$DMCOPY" copy -p -l 4M /dev/nullb0:0 /dev/nullb0:64M
	echo "$output" | tail -n 20
	[ "$status" -eq 0 ]
	run valgrind -q --leak-check=full --error-exitcode=99 \
		"$DMCOPY" copy -l 1M /dev/nullb0:0 "$f"
	echo "$output" | tail -n 20
	[ "$status" -eq 0 ]
	run valgrind -q --leak-check=full --error-exitcode=99 \
		"$DMCOPY" copy -l 1M /dev/nullb0:0 /dev/nullb0:512K
	echo "$output" | tail -n 20
	# A refusal (overlap) leaks nothing either.
	[ "$status" -eq 1 ]
}
