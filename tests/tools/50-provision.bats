#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# dmcopy provision / deprovision with real lvm2 on QEMU's NVMe namespaces:
# thick clones of an ext4 golden image, copied with the Copy command,
# checked byte for byte against the golden image (unchanged), mounted
# side by side with new UUIDs; name collisions, a missing golden image,
# thin snapshots whose writes copy chunks offloaded (--thin), clones that
# hydrate in the background (--hydrate) and a hydration error, a pool too
# small for the worst case, a volume group that runs out of space half
# way (--rollback, a re-run),
# an interrupted run and its re-run, deprovision.

bats_require_minimum_version 1.5.0

# Its longest tests take 40 s under TCG on 2 cores (docs/workflow.md).
DMCOPY_TEST_TIMEOUT=300
load ../lib/common
load ../lib/dm
load ../lib/nvme

DMCOPY=$DMCOPY_TOP/tools/dmcopy
MiB=1048576

setup() {
	guest_setup
	[ -x "$DMCOPY" ] || fail "$DMCOPY not built (make userspace)"
	# dmcopy runs lvm2 itself: the suites' lvm configuration, as a file.
	export LVM_SYSTEM_DIR=$BATS_TEST_TMPDIR/lvm
	mkdir -p "$LVM_SYSTEM_DIR"
	echo "$LVM_CONFIG" >"$LVM_SYSTEM_DIR/lvm.conf"
	NS1=/dev/$(qemu_ns 1)
	NS2=/dev/$(qemu_ns 2)
}

teardown() {
	local m
	for m in "$BATS_TEST_TMPDIR"/mnt*; do
		[ -d "$m" ] && umount "$m" 2>/dev/null
	done
	dm_cleanup
	guest_teardown
}

# vg_on VG PV: a volume group on a fresh physical volume.
vg_on() {
	lvm_cmd pvcreate -ff -y "$2"
	lvm_cmd vgcreate -y "$1" "$2"
}

# golden_ext4 VG SIZE: LV VG/golden with an ext4 filesystem holding a few
# hundred small random files; its checksum in GOLDEN_SUM. The filesystem
# is made once per size for the whole file (mkfs.ext4 -d from a tree that
# one process writes) and copied in: under TCG, 300 processes writing a
# file each took longer than most of the tests.
golden_ext4() {
	local tree=$BATS_FILE_TMPDIR/golden-tree img=$BATS_FILE_TMPDIR/golden-$2.img
	if [ ! -d "$tree" ]; then
		mkdir -p "$tree.tmp/etc" "$tree.tmp/data"
		echo "golden image" >"$tree.tmp/etc/motd"
		perl -e 'open(my $r, "<", "/dev/urandom") or die;
			for my $i (0 .. 299) {
				read($r, my $b, ($i * 97) % 8192 + 1) or die;
				open(my $f, ">", "$ARGV[0]/f$i") or die;
				print $f $b;
			}' "$tree.tmp/data"
		mv "$tree.tmp" "$tree"
	fi
	if [ ! -f "$img" ]; then
		truncate -s "$2" "$img.tmp"
		mkfs.ext4 -q -F -d "$tree" "$img.tmp"
		sha256sum <"$img.tmp" >"$img.sum"
		mv "$img.tmp" "$img"
	fi
	lvm_cmd lvcreate -y -Wn -Zn -L "$2" -n golden "$1"
	dd if="$img" of="/dev/$1/golden" bs=1M oflag=direct conv=fsync status=none
	GOLDEN_SUM=$(cat "$img.sum")
	[ "$(stat -c %s "$img")" = "$(blockdev --getsize64 "/dev/$1/golden")" ]
}

# lv_tags VG/LV: its tags, comma-separated, but for the golden image's
# (golden_tag_of).
lv_tags() {
	lvm_cmd lvs --noheadings -o lv_tags "$1" | tr -d ' ' | tr ',' '\n' |
		grep -v '^dmcopy_golden:' | paste -sd,
}

# golden_tag_of VG/LV: the tag naming the golden image it was made from.
golden_tag_of() {
	lvm_cmd lvs --noheadings -o lv_tags "$1" | tr -d ' ' | tr ',' '\n' |
		grep '^dmcopy_golden:'
}

# lv_names VG: the LV names of VG, sorted, on one line.
lv_names() {
	lvm_cmd lvs --noheadings -o lv_name "$1" | tr -d ' ' | sort | tr '\n' ' '
}

@test "provision: 4 thick clones on QEMU NVMe, offloaded, identical to the golden image, which is unchanged" {
	vg_on dmtvg0 "$NS1"
	golden_ext4 dmtvg0 32M
	local disk rw0 rw1
	disk=$(basename "$NS1")
	rw0=$(( $(disk_stat "$NS1" 3) + $(disk_stat "$NS1" 7) ))
	run -0 --separate-stderr "$DMCOPY" provision --golden /dev/dmtvg0/golden \
		--vg dmtvg0 --count 4 --jobs 2 --verify --json
	echo "$output"
	echo "$stderr"
	rw1=$(( $(disk_stat "$NS1" 3) + $(disk_stat "$NS1" 7) ))
	local i
	for i in 1 2 3 4; do
		[ "$(sha256sum <"/dev/dmtvg0/golden-clone$i")" = "$GOLDEN_SUM" ]
		[ "$(lv_tags "dmtvg0/golden-clone$i")" = "dmcopy,dmcopy_clone" ]
		# made from the golden LV, named by its dm UUID
		[ "$(golden_tag_of "dmtvg0/golden-clone$i")" = "dmcopy_golden:$(dmsetup info -c --noheadings -o uuid dmtvg0-golden)" ]
	done
	[ "$(sha256sum </dev/dmtvg0/golden)" = "$GOLDEN_SUM" ]
	# The report: every clone copied, verified and offloaded in full.
	[ "$(jq -r '.total.clones' <<<"$output")" = 4 ]
	[ "$(jq -r '.total.offloaded' <<<"$output")" = $(( 4 * 32 * MiB )) ]
	[ "$(jq -r '[.clones[] | select(.verified == true and .state == "copied")] | length' <<<"$output")" = 4 ]
	# The copies did not cross the NVMe interface: what it read and wrote
	# is the verification's reads (golden and clone, 4 x 2 x 32 MiB) and
	# lvm's metadata, not
	# another 4 x 32 MiB written.
	echo "$disk: $(( rw1 - rw0 )) sectors read and written"
	[ $(( rw1 - rw0 )) -lt $(( (8 * 32 + 16) * 2048 )) ]
	[ $(( rw1 - rw0 )) -ge $(( 8 * 32 * 2048 )) ]
	run -0 "$DMCOPY" deprovision --vg dmtvg0 --tag dmcopy
	[ "$(lv_names dmtvg0)" = "golden " ]
}

@test "provision --new-uuid: clones get their own filesystem UUIDs and mount side by side" {
	vg_on dmtvg0 "$NS1"
	golden_ext4 dmtvg0 32M
	run -0 "$DMCOPY" provision --golden /dev/dmtvg0/golden --vg dmtvg0 \
		--count 2 --name 'vm%02d' --new-uuid --quiet
	echo "$output"
	local u0 u1 u2
	u0=$(blkid -o value -s UUID /dev/dmtvg0/golden)
	u1=$(blkid -o value -s UUID /dev/dmtvg0/vm01)
	u2=$(blkid -o value -s UUID /dev/dmtvg0/vm02)
	[ -n "$u1" ] && [ "$u1" != "$u0" ] && [ "$u2" != "$u0" ] && [ "$u1" != "$u2" ]
	[ "$(sha256sum </dev/dmtvg0/golden)" = "$GOLDEN_SUM" ]
	mkdir "$BATS_TEST_TMPDIR/mnt1" "$BATS_TEST_TMPDIR/mnt2"
	mount /dev/dmtvg0/vm01 "$BATS_TEST_TMPDIR/mnt1"
	mount /dev/dmtvg0/vm02 "$BATS_TEST_TMPDIR/mnt2"
	[ "$(ls "$BATS_TEST_TMPDIR/mnt1/data" | wc -l)" = 300 ]
	diff -r "$BATS_TEST_TMPDIR/mnt1" "$BATS_TEST_TMPDIR/mnt2"
}

@test "provision --thin: instant thin snapshots; a write into one copies its chunks offloaded, the others stay golden" {
	vg_on dmtvg0 "$NS1"
	golden_ext4 dmtvg0 32M
	lvm_cmd lvcreate -y -L 256M -c 512K -T dmtvg0/pool
	run -0 --separate-stderr "$DMCOPY" provision --golden /dev/dmtvg0/golden \
		--vg dmtvg0 --count 4 --thin pool --verify --json
	echo "$output"
	[ "$(jq -r '.origin' <<<"$output")" = golden-thin ]
	[ "$(jq -r '[.clones[] | select(.mode == "thin" and .state == "made" and .verified == true)] | length' <<<"$output")" = 4 ]
	local i d=$BATS_TEST_TMPDIR
	for i in 1 2 3 4; do
		[ "$(lvm_cmd lvs --noheadings -o origin "dmtvg0/golden-clone$i" | tr -d ' ')" = golden-thin ]
	done
	# 4 KiB into three 512 KiB chunks of clone 1: each chunk is copied
	# first, by the NVMe device (dm-thin -> dm-kcopyd -> Copy).
	cp /dev/dmtvg0/golden "$d/expect"
	# kcopyd copies from the pool device to itself: counted there.
	copy_mark /dev/mapper/dmtvg0-pool-tpool
	for i in 5 17 40; do
		random_file "$d/w$i" 4096
		dev_write /dev/dmtvg0/golden-clone1 $(( i * 512 * 1024 + 65536 )) "$d/w$i"
		dd if="$d/w$i" of="$d/expect" bs=4096 seek=$(( i * 128 + 16 )) conv=notrunc status=none
	done
	[ "$(copy_stat_since offloaded_bytes)" = $(( 3 * 512 * 1024 )) ]
	dev_expect /dev/dmtvg0/golden-clone1 0 "$d/expect"
	for i in 2 3 4; do
		[ "$(sha256sum <"/dev/dmtvg0/golden-clone$i")" = "$GOLDEN_SUM" ]
	done
	[ "$(sha256sum </dev/dmtvg0/golden-thin)" = "$GOLDEN_SUM" ]
	[ "$(sha256sum </dev/dmtvg0/golden)" = "$GOLDEN_SUM" ]
	# A re-run keeps them; --rollback removes clones and origin.
	run -0 "$DMCOPY" provision --golden /dev/dmtvg0/golden --vg dmtvg0 --count 4 --thin pool
	[[ $output == *"4 of 4 clones ready (0 made now)"* ]]
	run -0 "$DMCOPY" provision --golden /dev/dmtvg0/golden --vg dmtvg0 --count 4 --thin pool --rollback
	[ "$(lv_names dmtvg0)" = "golden pool " ]
}

@test "provision --thin refuses up front, with the numbers, a pool that cannot hold the worst case" {
	vg_on dmtvg0 "$NS1"
	lvm_cmd lvcreate -y -Wn -Zn -L 32M -n golden dmtvg0
	lvm_cmd lvcreate -y -L 64M -T dmtvg0/pool
	run -1 "$DMCOPY" provision --golden /dev/dmtvg0/golden --vg dmtvg0 --count 4 --thin pool
	echo "$output"
	[[ $output == *"thin pool dmtvg0/pool cannot hold the worst case: 4 new clones and the golden image's import may need 160M once written all over, it has 64M free of 64M and autoextend is off (activation/thin_pool_autoextend_threshold = 100)"* ]]
	[ "$(lv_names dmtvg0)" = "golden pool " ]
	run -1 "$DMCOPY" provision --golden /dev/dmtvg0/golden --vg dmtvg0 --count 1 --thin golden
	[[ $output == *"dmtvg0/golden is not a thin pool"* ]]
}

@test "provision --hydrate: usable at once, hydrated in the background by the device, then plain LVs" {
	vg_on dmtvg0 "$NS1"
	golden_ext4 dmtvg0 32M
	local rw0 rw1 i
	rw0=$(( $(disk_stat "$NS1" 3) + $(disk_stat "$NS1" 7) ))
	run -0 "$DMCOPY" provision --golden /dev/dmtvg0/golden --vg dmtvg0 --count 2 --hydrate
	echo "$output"
	rw1=$(( $(disk_stat "$NS1" 3) + $(disk_stat "$NS1" 7) ))
	[[ $output == *"golden-clone1: usable now as /dev/mapper/dmcopy-dmtvg0-golden-clone1, hydrating"* ]]
	[[ $output == *"2 of 2 clones ready (2 made now)"* ]]
	for i in 1 2; do
		[ "$(sha256sum <"/dev/dmtvg0/golden-clone$i")" = "$GOLDEN_SUM" ]
		[ "$(lv_tags "dmtvg0/golden-clone$i")" = "dmcopy,dmcopy_clone" ]
		[ ! -e "/dev/mapper/dmcopy-dmtvg0-golden-clone$i" ]
	done
	[ "$(lv_names dmtvg0)" = "golden golden-clone1 golden-clone2 " ]
	[ "$(sha256sum </dev/dmtvg0/golden)" = "$GOLDEN_SUM" ]
	# Hydration went through dm-kcopyd to the device's Copy command: the
	# 2 x 32 MiB did not cross the NVMe interface (lvm and dm-clone
	# metadata did).
	echo "NVMe: $(( rw1 - rw0 )) sectors read and written"
	[ $(( rw1 - rw0 )) -lt $(( 16 * 2048 )) ]
}

@test "provision --hydrate --new-uuid --json: the UUID goes through the dm-clone device; the device's copies are reported" {
	vg_on dmtvg0 "$NS1"
	golden_ext4 dmtvg0 32M
	run -0 --separate-stderr "$DMCOPY" provision --golden /dev/dmtvg0/golden \
		--vg dmtvg0 --count 2 --name 'h%d' --hydrate --new-uuid --json
	echo "$output"
	echo "$stderr"
	local i u0 u
	u0=$(blkid -o value -s UUID /dev/dmtvg0/golden)
	mkdir "$BATS_TEST_TMPDIR/mnt1" "$BATS_TEST_TMPDIR/mnt2"
	for i in 1 2; do
		# hydrated over the dm-clone device: the whole image, the
		# device's Copy moved it (copy_stat of the clone's LV)
		[ "$(jq -r ".clones[$(( i - 1 ))] | [.state, .copied, .offloaded, .emulated] | join(\" \")" <<<"$output")" = "hydrated $(( 32 * MiB )) $(( 32 * MiB )) 0" ]
		e2fsck -f -n "/dev/dmtvg0/h$i"
		u=$(blkid -o value -s UUID "/dev/dmtvg0/h$i")
		[ -n "$u" ] && [ "$u" != "$u0" ]
		mount "/dev/dmtvg0/h$i" "$BATS_TEST_TMPDIR/mnt$i"
		[ "$(ls "$BATS_TEST_TMPDIR/mnt$i/data" | wc -l)" = 300 ]
	done
	[ "$(blkid -o value -s UUID /dev/dmtvg0/h1)" != "$(blkid -o value -s UUID /dev/dmtvg0/h2)" ]
	diff -r "$BATS_TEST_TMPDIR/mnt1" "$BATS_TEST_TMPDIR/mnt2"
	[ "$(jq -r '.total.offloaded' <<<"$output")" = $(( 64 * MiB )) ]
	[ "$(sha256sum </dev/dmtvg0/golden)" = "$GOLDEN_SUM" ]
}

@test "provision --hydrate: a clone is readable and writable while it hydrates; the writes stay" {
	vg_on dmtvg0 "$NS1"
	golden_ext4 dmtvg0 32M
	# A slow golden image (dm-delay): hydration takes seconds.
	dmsetup create dmt-slow --table "0 $(( 32 * 2048 )) delay /dev/dmtvg0/golden 0 100"
	local d=$BATS_TEST_TMPDIR i
	"$DMCOPY" provision --golden /dev/mapper/dmt-slow --vg dmtvg0 --count 1 \
		--name h%d --hydrate >"$d/out" 2>&1 &
	local pid=$!
	for (( i = 0; i < 300; i++ )); do
		[ -b /dev/mapper/dmcopy-dmtvg0-h1 ] && break
		sleep 0.1
	done
	[ -b /dev/mapper/dmcopy-dmtvg0-h1 ]
	cp /dev/dmtvg0/golden "$d/expect"
	random_file "$d/w" 65536
	dev_write /dev/mapper/dmcopy-dmtvg0-h1 $(( 20 * MiB )) "$d/w"
	dd if="$d/w" of="$d/expect" bs=65536 seek=$(( 20 * 16 )) conv=notrunc status=none
	# While it hydrates: the write reads back, the rest is the golden image.
	dev_expect /dev/mapper/dmcopy-dmtvg0-h1 0 "$d/expect"
	local status=0
	wait $pid || status=$?
	cat "$d/out"
	[ "$status" = 0 ]
	grep -q "1 of 1 clones ready (1 made now)" "$d/out"
	dev_expect /dev/dmtvg0/h1 0 "$d/expect"
	[ "$(dmsetup table dmtvg0-h1 | awk '{ print $3 }')" = linear ]
	[ ! -e /dev/mapper/dmcopy-dmtvg0-h1 ]
	[ "$(lv_names dmtvg0)" = "golden h1 " ]
}

@test "provision --hydrate: a hydration error is reported and not retried for ever" {
	vg_on dmtvg0 "$NS1"
	golden_ext4 dmtvg0 32M
	# dm-dust fails reads of one 4 KiB block of the golden image.
	dmsetup create dmt-dust --table "0 $(( 32 * 2048 )) dust /dev/dmtvg0/golden 0 4096"
	dmsetup message dmt-dust 0 addbadblock 3000
	dmsetup message dmt-dust 0 enable
	run -1 timeout 300 "$DMCOPY" provision --golden /dev/mapper/dmt-dust --vg dmtvg0 --count 1 --name e%d --hydrate
	echo "$output"
	[[ $output == *"e1: hydration failed at an I/O error (see the kernel log): dmcopy-dmtvg0-e1 stays a dm-clone device over the golden image, usable"* ]]
	[[ $output == *"e1 "*"failed"* ]]
	# Still usable, hydration stopped, still marked unfinished.
	[ -b /dev/mapper/dmcopy-dmtvg0-e1 ]
	[[ "$(dmsetup status dmcopy-dmtvg0-e1)" == *" clone "* ]]
	[[ "$(lv_tags dmtvg0/e1)" == *dmcopy_partial* ]]
	# A re-run tries again: with the block readable it finishes.
	dmsetup message dmt-dust 0 removebadblock 3000
	run -0 timeout 300 "$DMCOPY" provision --golden /dev/mapper/dmt-dust --vg dmtvg0 --count 1 --name e%d --hydrate
	echo "$output"
	[[ $output == *"1 of 1 clones ready (1 made now)"* ]]
	[ "$(sha256sum </dev/dmtvg0/e1)" = "$GOLDEN_SUM" ]
	[ ! -e /dev/mapper/dmcopy-dmtvg0-e1 ]
	[ "$(lv_tags dmtvg0/e1)" = "dmcopy,dmcopy_clone" ]
	# deprovision takes the device down with the volumes.
	run -0 "$DMCOPY" deprovision --vg dmtvg0 --tag dmcopy
	echo "$output"
	[ "$(lv_names dmtvg0)" = "golden " ]
}

@test "provision refuses a name taken by an LV it did not make, and changes nothing" {
	vg_on dmtvg0 "$NS1"
	golden_ext4 dmtvg0 16M
	lvm_cmd lvcreate -y -Wn -Zn -L 16M -n golden-clone2 dmtvg0
	local before
	before=$(sha256sum </dev/dmtvg0/golden-clone2)
	run -1 "$DMCOPY" provision --golden /dev/dmtvg0/golden --vg dmtvg0 --count 3
	echo "$output"
	[[ $output == *"dmtvg0/golden-clone2 exists and is not a clone of an earlier run (no tag 'dmcopy_clone')"* ]]
	[ "$(lv_names dmtvg0)" = "golden golden-clone2 " ]
	[ "$(sha256sum </dev/dmtvg0/golden-clone2)" = "$before" ]
}

@test "a re-run with another golden image refuses the clones of the first, and changes nothing" {
	vg_on dmtvg0 "$NS1"
	golden_ext4 dmtvg0 16M
	lvm_cmd lvcreate -y -L 64M -T dmtvg0/pool
	run -0 "$DMCOPY" provision --golden /dev/dmtvg0/golden --vg dmtvg0 --count 2 --name 'c%d'
	run -0 "$DMCOPY" provision --golden /dev/dmtvg0/golden --vg dmtvg0 --count 1 --name 't%d' --thin pool
	# another image of the same name, in another volume group
	vg_on dmtvg1 "$NS2"
	lvm_cmd lvcreate -y -Wn -Zn -L 16M -n golden dmtvg1
	random_file "$BATS_TEST_TMPDIR/other" $(( 16 * MiB ))
	dev_write /dev/dmtvg1/golden 0 "$BATS_TEST_TMPDIR/other"
	local lv uuid0 uuid1 sums
	uuid0=$(dmsetup info -c --noheadings -o uuid dmtvg0-golden)
	uuid1=$(dmsetup info -c --noheadings -o uuid dmtvg1-golden)
	sums=$(for lv in c1 c2 t1 golden-thin; do sha256sum <"/dev/dmtvg0/$lv"; done)
	run -1 "$DMCOPY" provision --golden /dev/dmtvg1/golden --vg dmtvg0 --count 3 --name 'c%d'
	echo "$output"
	[[ $output == *"dmtvg0/c1 was made from another golden image (dmcopy_golden:$uuid0, this one is dmcopy_golden:$uuid1): deprovision it or choose another --name; nothing was changed"* ]]
	# nor is the first image's thin import taken for the second's
	run -1 "$DMCOPY" provision --golden /dev/dmtvg1/golden --vg dmtvg0 --count 1 --name 'u%d' --thin pool
	echo "$output"
	[[ $output == *"dmtvg0/golden-thin was imported from another golden image (dmcopy_golden:$uuid0, this one is dmcopy_golden:$uuid1)"* ]]
	# --rollback of the second image keeps what the first one made
	run -0 "$DMCOPY" provision --golden /dev/dmtvg1/golden --vg dmtvg0 --count 2 --name 'c%d' --rollback
	echo "$output"
	[[ $output == *"keeping dmtvg0/c1: made from another golden image (dmcopy_golden:$uuid0"* ]]
	[[ $output == *"keeping dmtvg0/c2: made from another golden image"* ]]
	[ "$(lv_names dmtvg0)" = "c1 c2 golden golden-thin pool t1 " ]
	[ "$sums" = "$(for lv in c1 c2 t1 golden-thin; do sha256sum <"/dev/dmtvg0/$lv"; done)" ]
	for lv in c1 c2 t1 golden-thin; do
		[ "$(golden_tag_of "dmtvg0/$lv")" = "dmcopy_golden:$uuid0" ]
	done
}

@test "provision with a missing golden image or volume group: a clear error, nothing made" {
	vg_on dmtvg0 "$NS1"
	run -1 "$DMCOPY" provision --golden /dev/dmtvg0/nosuch --vg dmtvg0 --count 2
	[ "$output" = "dmcopy: golden image /dev/dmtvg0/nosuch: No such file or directory" ]
	lvm_cmd lvcreate -y -Wn -Zn -L 8M -n golden dmtvg0
	run -1 "$DMCOPY" provision --golden /dev/dmtvg0/golden --vg dmtvgX --count 2
	echo "$output"
	[[ $output == *"cannot list the logical volumes of volume group 'dmtvgX'"* ]]
	[ "$(lv_names dmtvg0)" = "golden " ]
	run -2 "$DMCOPY" provision --golden /dev/dmtvg0/golden --vg dmtvg0 --count 2 --name 'x'
	[[ $output == *"invalid --name 'x'"* ]]
	run -2 "$DMCOPY" provision --golden /dev/dmtvg0/golden --vg dmtvg0
	[[ $output == *"how many clones? (--count)"* ]]
	run -2 "$DMCOPY" provision --golden /dev/dmtvg0/golden --vg dmtvg0 --count 2 --tag 'a b'
	[[ $output == *"invalid tag 'a b'"* ]]
	[ "$(lv_names dmtvg0)" = "golden " ]
}

@test "a volume group that fills up half way: error, clones listed, --rollback undoes, a re-run after freeing space finishes" {
	vg_on dmtvg0 "$NS1"
	golden_ext4 dmtvg0 60M
	vg_on dmtvg1 "$NS2"
	# 63 extents of 4 MiB, less 25 for the filler: room for two clones
	# of 15, and for four once the filler is gone.
	lvm_cmd lvcreate -y -Wn -Zn -L 100M -n filler dmtvg1
	local free0
	free0=$(lvm_cmd vgs --noheadings --units b -o vg_free dmtvg1 | tr -d ' ')
	run -1 "$DMCOPY" provision --golden /dev/dmtvg0/golden --vg dmtvg1 --count 4 --name 'c%d'
	echo "$output"
	[[ $output == *"c1 "*"copied"* ]]
	[[ $output == *"c2 "*"copied"* ]]
	[[ $output == *"c3 "*"not created"* ]]
	[[ $output == *"c4 "*"not created"* ]]
	[[ $output == *"2 of 4 clones failed (lvcreate failed: is the volume group full?)"* ]]
	[ "$(lv_names dmtvg1)" = "c1 c2 filler " ]
	[ "$(sha256sum </dev/dmtvg1/c1)" = "$GOLDEN_SUM" ]

	run -0 "$DMCOPY" provision --golden /dev/dmtvg0/golden --vg dmtvg1 --count 4 --name 'c%d' --rollback
	echo "$output"
	[ "$(lv_names dmtvg1)" = "filler " ]
	[ "$(lvm_cmd vgs --noheadings --units b -o vg_free dmtvg1 | tr -d ' ')" = "$free0" ]

	# Again, then free the space and run once more: 2 kept, 2 made.
	run -1 "$DMCOPY" provision --golden /dev/dmtvg0/golden --vg dmtvg1 --count 4 --name 'c%d'
	lvm_cmd lvremove -y dmtvg1/filler
	run -0 "$DMCOPY" provision --golden /dev/dmtvg0/golden --vg dmtvg1 --count 4 --name 'c%d' --verify
	echo "$output"
	[[ $output == *"c1 "*"kept"*"yes"* ]]
	[[ $output == *"c4 "*"copied"*"yes"* ]]
	[[ $output == *"4 of 4 clones ready (2 made now)"* ]]
	local i
	for i in 1 2 3 4; do
		[ "$(sha256sum <"/dev/dmtvg1/c$i")" = "$GOLDEN_SUM" ]
	done
	[ "$(sha256sum </dev/dmtvg0/golden)" = "$GOLDEN_SUM" ]
}

@test "a re-run never copies over a finished clone that was written to: --verify reports it changed, a larger batch leaves it" {
	vg_on dmtvg0 "$NS1"
	golden_ext4 dmtvg0 32M
	local d=$BATS_TEST_TMPDIR sum1
	run -0 "$DMCOPY" provision --golden /dev/dmtvg0/golden --vg dmtvg0 --count 2 --quiet
	# A VM used clone 1: 64 KiB written at 8 MiB.
	random_file "$d/w" 65536
	dev_write /dev/dmtvg0/golden-clone1 $(( 8 * MiB )) "$d/w"
	sum1=$(sha256sum </dev/dmtvg0/golden-clone1)
	[ "$sum1" != "$GOLDEN_SUM" ]
	# The batch grows, checked: clone 1 is reported, not failed, not touched.
	run -0 --separate-stderr "$DMCOPY" provision --golden /dev/dmtvg0/golden --vg dmtvg0 --count 3 --verify
	echo "$output"
	echo "$stderr"
	[[ $output == *"golden-clone1 "*"changed"*"DIFFERS"*"changed since provisioning: left as it is"* ]]
	[[ $output == *"golden-clone2 "*"kept"*"yes"* ]]
	[[ $output == *"golden-clone3 "*"copied"*"yes"* ]]
	[[ $output == *"3 of 3 clones ready (1 made now)"* ]]
	[ "$(sha256sum </dev/dmtvg0/golden-clone1)" = "$sum1" ]
	[ "$(lv_tags dmtvg0/golden-clone1)" = "dmcopy,dmcopy_clone" ]
	# And the same command once more: still left alone.
	run -0 "$DMCOPY" provision --golden /dev/dmtvg0/golden --vg dmtvg0 --count 3 --verify --json
	[ "$(jq -r '.clones[0].state' <<<"$output")" = changed ]
	[ "$(sha256sum </dev/dmtvg0/golden-clone1)" = "$sum1" ]
}

@test "a re-run does not write a half-made clone that is open; once closed, it finishes it" {
	vg_on dmtvg0 "$NS1"
	golden_ext4 dmtvg0 32M
	local d=$BATS_TEST_TMPDIR pid sum1
	run -0 "$DMCOPY" provision --golden /dev/dmtvg0/golden --vg dmtvg0 --count 1 --quiet
	# Left half made (as by a run killed in its copy), and opened by a
	# program that started on it anyway.
	lvm_cmd lvchange --addtag dmcopy_partial dmtvg0/golden-clone1
	random_file "$d/w" 65536
	dev_write /dev/dmtvg0/golden-clone1 0 "$d/w"
	sum1=$(sha256sum </dev/dmtvg0/golden-clone1)
	python3 -c 'import os, time
os.open("/dev/dmtvg0/golden-clone1", os.O_RDONLY); print("open", flush=True); time.sleep(60)' >"$d/open" &
	pid=$!
	for _ in $(seq 100); do
		[ -s "$d/open" ] && break
		sleep 0.05
	done
	run -1 --separate-stderr "$DMCOPY" provision --golden /dev/dmtvg0/golden --vg dmtvg0 --count 1
	kill $pid
	wait $pid || true
	echo "$output"
	[[ $output == *"golden-clone1 "*"in use"*"half made, but open: not written"* ]]
	[ "$(sha256sum </dev/dmtvg0/golden-clone1)" = "$sum1" ]
	run -0 "$DMCOPY" provision --golden /dev/dmtvg0/golden --vg dmtvg0 --count 1 --verify
	echo "$output"
	[[ $output == *"golden-clone1 "*"copied"*"yes"* ]]
	[ "$(sha256sum </dev/dmtvg0/golden-clone1)" = "$GOLDEN_SUM" ]
}

@test "SIGINT during provisioning: unfinished clones are reported and tagged, a re-run finishes them" {
	vg_on dmtvg0 "$NS1"
	golden_ext4 dmtvg0 32M
	# A slow golden image (dm-delay, which does not copy): each clone's
	# copy takes seconds, long enough to interrupt the batch.
	dmsetup create dmt-slow --table "0 $(( 32 * 2048 )) delay /dev/dmtvg0/golden 0 200"
	local sum
	sum=$(sha256sum </dev/mapper/dmt-slow)
	# Interrupted once the copies started (every clone is made by then);
	# it reports, then dies by SIGINT as dd does.
	local d=$BATS_TEST_TMPDIR how i
	how=$("$SIGNAL_RUN" "$d/out" "$d/err" '\(0\.00/100%\)' INT -- \
		"$DMCOPY" provision --golden /dev/mapper/dmt-slow --vg dmtvg0 --count 3 \
		--name 's%d' --progress)
	cat "$d/out" "$d/err"
	[ "$how" = "signal INT" ]
	grep -q "interrupted: clones not finished keep tag 'dmcopy_partial'" "$d/err"
	# One copy at a time: the last clone never started.
	grep -q "^s3 .*interrupted" "$d/out"
	[[ "$(lv_tags dmtvg0/s3)" == *dmcopy_partial* ]]
	run -0 "$DMCOPY" provision --golden /dev/mapper/dmt-slow --vg dmtvg0 --count 3 --name 's%d' --verify
	echo "$output"
	[[ $output == *"3 of 3 clones ready"* ]]
	for i in 1 2 3; do
		[ "$(sha256sum <"/dev/dmtvg0/s$i")" = "$sum" ]
		[ "$(lv_tags "dmtvg0/s$i")" = "dmcopy,dmcopy_clone" ]
	done
}

@test "deprovision asks on a terminal, as lvremove does, unless --yes; anything but yes removes nothing" {
	command -v script >/dev/null || fail "script (util-linux) not installed"
	vg_on dmtvg0 "$NS1"
	lvm_cmd lvcreate -y -Wn -Zn -L 8M -n golden dmtvg0
	run -0 "$DMCOPY" provision --golden /dev/dmtvg0/golden --vg dmtvg0 --count 3 --tag batch1 --quiet
	# script(1) gives it a terminal, and types the answer.
	run script -qec "$DMCOPY deprovision --vg dmtvg0 --tag batch1" /dev/null <<<"n"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ $output == *"Do you really want to remove 3 logical volumes of dmtvg0? [y/n]:"* ]]
	[[ $output == *"dmcopy: nothing was removed"* ]]
	[ "$(lv_names dmtvg0)" = "golden golden-clone1 golden-clone2 golden-clone3 " ]
	run script -qec "$DMCOPY deprovision --vg dmtvg0 golden-clone1" /dev/null </dev/null
	[ "$status" -eq 1 ]
	[ "$(lv_names dmtvg0)" = "golden golden-clone1 golden-clone2 golden-clone3 " ]
	run script -qec "$DMCOPY deprovision --vg dmtvg0 golden-clone1" /dev/null <<<"yes"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output == *"Do you really want to remove 1 logical volume of dmtvg0? [y/n]:"* ]]
	[[ $output == *"removed dmtvg0/golden-clone1"* ]]
	run script -qec "$DMCOPY deprovision --yes --vg dmtvg0 --tag batch1" /dev/null </dev/null
	echo "$output"
	[ "$status" -eq 0 ]
	[[ $output != *"really"* ]]
	[ "$(lv_names dmtvg0)" = "golden " ]
}

@test "deprovision removes only what provision made" {
	vg_on dmtvg0 "$NS1"
	lvm_cmd lvcreate -y -Wn -Zn -L 8M -n golden dmtvg0
	lvm_cmd lvcreate -y -Wn -Zn -L 8M -n other dmtvg0
	run -0 "$DMCOPY" provision --golden /dev/dmtvg0/golden --vg dmtvg0 --count 2 --tag batch1 --quiet
	run -1 "$DMCOPY" deprovision --vg dmtvg0 other golden-clone1
	[[ $output == *"dmtvg0/other was not made by dmcopy provision"* ]]
	[ "$(lv_names dmtvg0)" = "golden golden-clone1 golden-clone2 other " ]
	# lvm's warnings (no metadata backups here) go to stderr
	run -0 --separate-stderr "$DMCOPY" deprovision --vg dmtvg0 golden-clone1
	[ "$output" = "removed dmtvg0/golden-clone1" ]
	run -0 --separate-stderr "$DMCOPY" deprovision --vg dmtvg0 --tag batch1
	[ "$output" = "removed dmtvg0/golden-clone2" ]
	[ "$(lv_names dmtvg0)" = "golden other " ]
}

@test "provision and deprovision change device-mapper through libdmcopy only: no dmsetup runs, --hydrate included" {
	vg_on dmtvg0 "$NS1"
	lvm_cmd lvcreate -y -Wn -Zn -L 16M -n golden dmtvg0
	local d=$BATS_TEST_TMPDIR i
	random_file "$d/golden" $(( 16 * MiB ))
	dev_write /dev/dmtvg0/golden 0 "$d/golden"
	# A dmsetup first in PATH that says it ran and fails.
	mkdir "$d/bin"
	printf '#!/bin/sh\necho "dmsetup $*" >>"%s/dmsetup.log"\nexit 1\n' "$d" >"$d/bin/dmsetup"
	chmod +x "$d/bin/dmsetup"
	PATH=$d/bin:$PATH run -0 "$DMCOPY" provision --golden /dev/dmtvg0/golden \
		--vg dmtvg0 --count 2 --name 'h%d' --hydrate --verify --quiet
	echo "$output"
	[[ $output == *"h1: usable now as /dev/mapper/dmcopy-dmtvg0-h1, hydrating"* ]]
	[[ $output == *"2 of 2 clones ready (2 made now)"* ]]
	for i in 1 2; do
		dev_expect "/dev/dmtvg0/h$i" 0 "$d/golden"
		[ ! -e "/dev/mapper/dmcopy-dmtvg0-h$i" ]
	done
	# A hydration stopped by a signal leaves its dm-clone device, which
	# deprovision removes before the volumes. SIGTERM: a background job
	# starts with SIGINT ignored, and dmcopy keeps it so.
	dmsetup create dmt-slow --table "0 $(( 16 * 2048 )) delay /dev/dmtvg0/golden 0 200"
	PATH=$d/bin:$PATH "$DMCOPY" provision --golden /dev/mapper/dmt-slow \
		--vg dmtvg0 --count 1 --name 's%d' --hydrate --quiet >"$d/out" 2>&1 &
	local pid=$! status=0
	for (( i = 0; i < 300; i++ )); do
		[ -b /dev/mapper/dmcopy-dmtvg0-s1 ] && break
		sleep 0.1
	done
	[ -b /dev/mapper/dmcopy-dmtvg0-s1 ]
	kill -TERM $pid
	wait $pid || status=$?
	cat "$d/out"
	[ "$status" = 143 ]
	[ -b /dev/mapper/dmcopy-dmtvg0-s1 ]
	PATH=$d/bin:$PATH run -0 "$DMCOPY" deprovision --yes --vg dmtvg0 --tag dmcopy
	echo "$output"
	[[ $output == *"removed /dev/mapper/dmcopy-dmtvg0-s1"* ]]
	[ ! -e /dev/mapper/dmcopy-dmtvg0-s1 ]
	[ "$(lv_names dmtvg0)" = "golden " ]
	if [ -e "$d/dmsetup.log" ]; then
		cat "$d/dmsetup.log"
		fail "dmcopy ran dmsetup"
	fi
	dev_expect /dev/dmtvg0/golden 0 "$d/golden"
}

@test "provision and deprovision read the volume group alike whatever lvm.conf's report section says" {
	# A report configured for people (or for another program): the
	# volume group must still read the same. Only dmcopy gets it.
	local conf=$BATS_TEST_TMPDIR/lvm-report
	mkdir "$conf"
	cp "$LVM_SYSTEM_DIR/lvm.conf" "$conf/"
	cat >>"$conf/lvm.conf" <<-'CONF'
	report { output_format = "json" compact_output = 1 aligned = 0
		prefixes = 1 quoted = 0 separator = ":" }
	CONF
	vg_on dmtvg0 "$NS1"
	lvm_cmd lvcreate -y -Wn -Zn -L 8M -n golden dmtvg0
	LVM_SYSTEM_DIR=$conf run -0 "$DMCOPY" provision --golden /dev/dmtvg0/golden \
		--vg dmtvg0 --count 2 --quiet
	[[ $output == *"2 of 2 clones ready (2 made now)"* ]]
	# the re-run finds both, made by the first run
	LVM_SYSTEM_DIR=$conf run -0 "$DMCOPY" provision --golden /dev/dmtvg0/golden \
		--vg dmtvg0 --count 2 --quiet
	echo "$output"
	[[ $output == *"2 of 2 clones ready (0 made now)"* ]]
	LVM_SYSTEM_DIR=$conf run -0 --separate-stderr "$DMCOPY" deprovision \
		--vg dmtvg0 --tag dmcopy
	[ "$output" = "$(printf 'removed dmtvg0/golden-clone1\nremoved dmtvg0/golden-clone2')" ]
	[ "$(lv_names dmtvg0)" = "golden " ]
}
