# SPDX-License-Identifier: GPL-2.0
#
# A storm of concurrent copies beside fio, for the concurrency tests of
# the dm and nvme suites. Load after common:
#   load ../lib/common
#   load ../lib/storm
#
# copy_storm DEV DEV2 runs, all at once, on two devices of 52 MiB or more
# (DEV copies offloaded within itself, DEV2 another device, so copies
# between them are emulated):
#
#   - fio, mixed random reads and writes of 4 KiB with its own
#     verification (crc32c, fatal), on [0, 32 MiB) of both devices;
#   - STORM_COPIES copies (64; DMCOPY_LONG=1: 64 per round, 8 rounds), a
#     quarter each of:
#       overlapping destinations: windows of up to 1 MiB of a golden
#         area G ([32, 36) MiB of DEV) copied to the same offsets of E
#         ([36, 40) MiB of DEV), windows overlapping each other, so that
#         every writer of a byte writes the same value;
#       overlapping sources: windows of up to 256 KiB of A ([40, 44) MiB
#         of DEV), overlapping each other, each copied to a slot of its
#         own in [44, 52) MiB of DEV;
#       the same, each to a slot of its own on DEV2 (emulated);
#       overlapping destinations again, as 4 KiB-unaligned lengths
#         rounded to 512 B where the logical block size allows.
#
# Then every copy reported its whole length, E holds G where windows
# went and its old bytes elsewhere, every slot its source window and its
# old bytes after it, G and A are unchanged (every byte of [32, 52) MiB
# of DEV and [44, 52) MiB of DEV2 checked). STORM_DONE gets the copies
# verified, STORM_MISMATCH the bytes found wrong (0 or the test failed).

STORM_EXPECT=$DMCOPY_TOP/tests/helpers/storm-expect
STORM_ROUNDS=$(long_or 1 8)
STORM_COPIES=64

# Where the storm's areas lie, in bytes (see above).
STORM_G=$(( 32 << 20 ))
STORM_E=$(( 36 << 20 ))
STORM_A=$(( 40 << 20 ))
STORM_S=$(( 44 << 20 ))
STORM_AREA=$(( 4 << 20 ))
STORM_WINDOW=$(( 1 << 20 ))
STORM_SLOT=$(( 256 << 10 ))

# storm_plan SEED LBS: the copies, one a line: "over|slot DEV SRC DEV|DEV2
# DST LEN", in multiples of 4 KiB (of LBS, when larger; the fourth
# quarter in multiples of LBS).
storm_plan() {
	local lbs=$2 unit i kind u ln off slot to
	RANDOM=$1
	unit=$(( lbs > 4096 ? lbs : 4096 ))
	for (( i = 0; i < STORM_COPIES; i++ )); do
		kind=$(( i % 4 ))
		if (( kind == 0 || kind == 3 )); then
			u=$(( kind == 0 ? unit : lbs ))
			ln=$(( (RANDOM % (STORM_WINDOW / u) + 1) * u ))
			off=$(( (RANDOM * 32768 + RANDOM) % ((STORM_AREA - ln) / u + 1) * u ))
			echo "over DEV $(( STORM_G + off )) DEV $(( STORM_E + off )) $ln"
		else
			slot=$(( i / 4 * 2 + kind - 1 ))
			ln=$(( (RANDOM % (STORM_SLOT / unit) + 1) * unit ))
			off=$(( (RANDOM * 32768 + RANDOM) % ((STORM_AREA - ln) / unit + 1) * unit ))
			to=DEV2
			[ $kind = 2 ] || to=DEV
			echo "slot DEV $(( STORM_A + off )) $to $(( STORM_S + slot * STORM_SLOT )) $ln"
		fi
	done
}

# storm_fio DEV NAME: fio's verified mixed I/O on [0, 32 MiB) of DEV, in
# the background; its output in $BATS_TEST_TMPDIR/fio.NAME.
storm_fio() {
	fio --name="storm-$2" --filename="$1" --offset=0 --size=32M --rw=randrw \
		--bs=4k --direct=1 --ioengine=libaio --iodepth=8 \
		--verify=crc32c --verify_fatal=1 --do_verify=1 \
		--io_size="$(long_or 8M 64M)" >"$BATS_TEST_TMPDIR/fio.$2" 2>&1 &
	STORM_FIO_PIDS+=($!)
}

copy_storm() {
	local dev=$1 dev2=$2 d=$BATS_TEST_TMPDIR MiB=1048576 round seed lbs
	local kind sdev src ddev dst ln i pid bad t0 t1 t2 f
	local -a pids plan
	[ -x "$STORM_EXPECT" ] || fail "$STORM_EXPECT not built (make -C tests/helpers)"
	lbs=$(queue_attr "$dev" logical_block_size)
	STORM_DONE=0
	STORM_MISMATCH=0
	for (( round = 0; round < STORM_ROUNDS; round++ )); do
		t0=$SECONDS
		seed=$(( RANDOM * 32768 + RANDOM ))
		echo "round $round: seed $seed"
		storm_plan "$seed" "$lbs" >"$d/plan"
		# G, E, A and the slots: random, remembered.
		random_file "$d/dev.old" $(( 20 * MiB ))
		random_file "$d/dev2.old" $(( 8 * MiB ))
		dev_write "$dev" $(( 32 * MiB )) "$d/dev.old"
		dev_write "$dev2" $(( 44 * MiB )) "$d/dev2.old"
		t1=$SECONDS
		STORM_FIO_PIDS=()
		storm_fio "$dev" 1
		storm_fio "$dev2" 2
		pids=()
		i=0
		while read -r kind sdev src ddev dst ln; do
			sdev=${sdev/DEV2/$dev2}; sdev=${sdev/DEV/$dev}
			ddev=${ddev/DEV2/$dev2}; ddev=${ddev/DEV/$dev}
			"$COPY_RANGE" -d "$sdev" "$src" "$ddev" "$dst" "$ln" >"$d/copy.$i" 2>&1 &
			pids+=($!)
			i=$(( i + 1 ))
		done <"$d/plan"
		mapfile -t plan <"$d/plan"
		for i in "${!pids[@]}"; do
			wait "${pids[i]}" || fail "copy $i (${plan[i]}): $(<"$d/copy.$i")"
			[ "$(<"$d/copy.$i")" = "copied=${plan[i]##* }" ] ||
				fail "copy $i (${plan[i]}): $(<"$d/copy.$i")"
		done
		for pid in "${STORM_FIO_PIDS[@]}"; do
			wait "$pid" || { cat "$d"/fio.*; fail "fio failed (verification or I/O error)"; }
		done
		grep -h "err=" "$d"/fio.* | sed 's/^ *//'
		t2=$SECONDS

		dev_read "$dev" $(( 32 * MiB )) $(( 20 * MiB )) "$d/dev.now"
		dev_read "$dev2" $(( 44 * MiB )) $(( 8 * MiB )) "$d/dev2.now"
		# What the copies should have left: [32, 52) MiB of DEV, [44,
		# 52) MiB of DEV2. Sources (G, A) are never destinations, so
		# the order of the copies does not matter.
		cp "$d/dev.old" "$d/dev.want"
		cp "$d/dev2.old" "$d/dev2.want"
		"$STORM_EXPECT" "$d/dev.old" "$STORM_G" "$d/dev.want" "$STORM_G" \
			"$d/dev2.want" "$STORM_S" <"$d/plan"
		bad=0
		for f in dev dev2; do
			cmp -s "$d/$f.want" "$d/$f.now" && continue
			cmp "$d/$f.want" "$d/$f.now" || true
			bad=$(( bad + $(cmp -l "$d/$f.want" "$d/$f.now" | wc -l) ))
		done
		STORM_DONE=$(( STORM_DONE + ${#pids[@]} ))
		STORM_MISMATCH=$(( STORM_MISMATCH + bad ))
		echo "round $round: setup $(( t1 - t0 )) s, copies and fio $(( t2 - t1 )) s, checks $(( SECONDS - t2 )) s"
		rm -f "$d"/*.old "$d"/*.now "$d"/*.want
	done
	echo "copies verified: $STORM_DONE, bytes mismatched: $STORM_MISMATCH"
	[ "$STORM_MISMATCH" = 0 ]
}
