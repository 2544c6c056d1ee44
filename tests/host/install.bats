#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0
#
# make install into a DESTDIR: libdmcopy with its soname links, header and
# .pc, dmcopy, its man page and bash completion, the udev rules, each
# under PREFIX; the installed dmcopy runs, the man page renders without
# warnings and says what dmcopy --help says, the completion completes.
# Builds what 'make userspace' builds (make install does).

bats_require_minimum_version 1.5.0

TOP=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
COMPLETION=$TOP/tools/dmcopy.bash-completion
MANPAGE=$TOP/tools/dmcopy.8

setup() {
	ROOT=$BATS_TEST_TMPDIR/root
}

# install_at PREFIX: make install from the top into $ROOT.
install_at() {
	run make -s --no-print-directory -C "$TOP" install PREFIX="$1" DESTDIR="$ROOT"
	echo "$output"
	[ "$status" -eq 0 ]
}

# mode PATH: its permission bits and type, as stat -c '%a %F' says them.
mode() {
	stat -c '%a %F' "$1"
}

# complete_line LINE: what _dmcopy offers with the cursor at the end of
# LINE (words split at blanks, as bash does for these lines), one per line.
complete_line() {
	local -a words

	read -ra words <<<"$1"
	[[ $1 == *' ' ]] && words+=("")
	COMP_LINE=$1
	COMP_POINT=${#1}
	COMP_WORDS=("${words[@]}")
	COMP_CWORD=$((${#words[@]} - 1))
	COMPREPLY=()
	_dmcopy "${words[0]}" "${words[-1]}" "${words[-2]:-}"
	if [ ${#COMPREPLY[@]} -gt 0 ]; then
		printf '%s\n' "${COMPREPLY[@]}"
	fi
}

# The column names 'dmcopy status -o help' lists, one a line.
help_columns() {
	"$TOP/tools/dmcopy" status -o help | awk 'NR > 1 { print $1 }'
}

@test "make install PREFIX=/usr: every file under DESTDIR, at its place" {
	install_at /usr
	local u=$ROOT/usr

	[ "$(mode "$u/bin/dmcopy")" = "755 regular file" ]
	# a shared object is no program: 0644, as Debian policy has it
	[ "$(mode "$u/lib/libdmcopy.so.0.1.0")" = "644 regular file" ]
	[ "$(readlink "$u/lib/libdmcopy.so.0")" = libdmcopy.so.0.1.0 ]
	[ "$(readlink "$u/lib/libdmcopy.so")" = libdmcopy.so.0 ]
	[ "$(mode "$u/include/libdmcopy.h")" = "644 regular file" ]
	[ "$(mode "$u/lib/pkgconfig/dmcopy.pc")" = "644 regular file" ]
	[ "$(mode "$u/share/man/man8/dmcopy.8")" = "644 regular file" ]
	[ "$(mode "$u/share/bash-completion/completions/dmcopy")" = "644 regular file" ]
	[ "$(mode "$u/lib/udev/rules.d/60-dmcopy.rules")" = "644 regular file" ]
	cmp "$u/share/man/man8/dmcopy.8" "$MANPAGE"
	cmp "$u/share/bash-completion/completions/dmcopy" "$COMPLETION"
	cmp "$u/lib/udev/rules.d/60-dmcopy.rules" "$TOP/udev/60-dmcopy.rules"
	# nothing outside PREFIX
	[ "$(find "$ROOT" -mindepth 1 -maxdepth 1)" = "$u" ]
	grep -qx 'prefix=/usr' "$u/lib/pkgconfig/dmcopy.pc"
	grep -qx 'libdir=/usr/lib' "$u/lib/pkgconfig/dmcopy.pc"
}

@test "the installed dmcopy runs on the installed library, found without a RUNPATH of its own" {
	install_at /usr
	# no $ORIGIN rpath in what is installed (the tree's binary keeps one)
	run readelf -d "$ROOT/usr/bin/dmcopy"
	[[ $output != *RUNPATH* && $output != *RPATH* ]]
	run readelf -d "$TOP/tools/dmcopy"
	[[ $output == *'RUNPATH'*'$ORIGIN/../lib'* ]]
	run readelf -d "$ROOT/usr/lib/libdmcopy.so.0.1.0"
	[[ $output != *RUNPATH* && $output != *RPATH* ]]
	run --separate-stderr env LD_LIBRARY_PATH="$ROOT/usr/lib" "$ROOT/usr/bin/dmcopy" --version
	[ "$status" -eq 0 ]
	[[ $output =~ ^dmcopy\ [0-9]+\.[0-9]+ ]]
	run env LD_LIBRARY_PATH="$ROOT/usr/lib" ldd "$ROOT/usr/bin/dmcopy"
	[[ $output == *"libdmcopy.so.0 => $ROOT/usr/lib/libdmcopy.so.0 "* ]]
}

@test "the library exports exactly the functions of libdmcopy.h, each named in the version script" {
	local header exported script
	header=$(grep -oE '^[a-z][a-z0-9_ ]*[ *]dmcopy_[a-z0-9_]+\(' "$TOP/lib/libdmcopy.h" |
		grep -oE 'dmcopy_[a-z0-9_]+\($' | tr -d '(' | sort -u)
	exported=$(nm -D --defined-only "$TOP/lib/libdmcopy.so.0.1.0" |
		awk '$3 ~ /^dmcopy_/ { sub(/@.*/, "", $3); print $3 }' | sort -u)
	script=$(sed -n 's/^\t\(dmcopy_[a-z0-9_]*\);$/\1/p' "$TOP/lib/libdmcopy.sym" | sort -u)
	diff <(echo "$header") <(echo "$exported")
	diff <(echo "$header") <(echo "$script")
	# no wildcard: a new function is exported on purpose
	! grep -q 'dmcopy_\*' "$TOP/lib/libdmcopy.sym"
}

@test "CPPFLAGS and LDFLAGS reach the compiler and the linker (hardening flags)" {
	run make -B -n -C "$TOP/tools" dmcopy CPPFLAGS=-DDMCOPY_TEST_CPPFLAGS LDFLAGS=-Wl,-z,relro
	[[ $output == *-DDMCOPY_TEST_CPPFLAGS*-Wl,-z,relro* ]]
	run make -B -n -C "$TOP/lib" CPPFLAGS=-DDMCOPY_TEST_CPPFLAGS LDFLAGS=-Wl,-z,relro
	[[ $output == *-DDMCOPY_TEST_CPPFLAGS*context.c* ]]
	[[ $output == *-Wl,-z,relro*-shared* ]]
}

@test "make install PREFIX=/opt/x: the same files under /opt/x" {
	install_at /opt/x
	local p=$ROOT/opt/x

	# nothing outside PREFIX
	[ "$(find "$ROOT" -mindepth 1 -maxdepth 2 | sort)" = "$ROOT/opt"$'\n'"$p" ]
	[ -x "$p/bin/dmcopy" ]
	[ -f "$p/lib/libdmcopy.so.0.1.0" ]
	[ -L "$p/lib/libdmcopy.so.0" ] && [ -L "$p/lib/libdmcopy.so" ]
	[ -f "$p/include/libdmcopy.h" ]
	grep -qx 'prefix=/opt/x' "$p/lib/pkgconfig/dmcopy.pc"
	grep -qx 'libdir=/opt/x/lib' "$p/lib/pkgconfig/dmcopy.pc"
	grep -qx 'includedir=/opt/x/include' "$p/lib/pkgconfig/dmcopy.pc"
	[ -f "$p/share/man/man8/dmcopy.8" ]
	[ -f "$p/share/bash-completion/completions/dmcopy" ]
	[ -f "$p/lib/udev/rules.d/60-dmcopy.rules" ]
	LD_LIBRARY_PATH=$p/lib "$p/bin/dmcopy" --version
}

@test "MANDIR and BASHCOMPDIR move the man page and the completion" {
	make -s --no-print-directory -C "$TOP/tools" install PREFIX=/usr \
		DESTDIR="$ROOT" MANDIR=/usr/man BASHCOMPDIR=/etc/bash_completion.d
	[ -f "$ROOT/usr/man/man8/dmcopy.8" ]
	[ -f "$ROOT/etc/bash_completion.d/dmcopy" ]
	[ ! -e "$ROOT/usr/share" ]
}

@test "the installed man page renders with no warning" {
	command -v man >/dev/null && command -v groff >/dev/null ||
		skip "man or groff missing (apt-get install man-db groff-base)"
	install_at /usr
	local page=$ROOT/usr/share/man/man8/dmcopy.8

	run --separate-stderr env MANWIDTH=80 man -l "$page"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
	[[ ${lines[0]} == DMCOPY\(8\)* ]]
	[[ $output == *"dmcopy - copy offload of block devices"* ]]
	local section
	for section in NAME SYNOPSIS DESCRIPTION COMMANDS OPTIONS "OUTPUT COLUMNS" \
		SIZES "EXIT STATUS" ENVIRONMENT EXAMPLES "SEE ALSO"; do
		printf '%s\n' "${lines[@]}" | grep -qx "$section"
	done
	run --separate-stderr groff -man -ww -z "$page"
	[ "$status" -eq 0 ]
	[ -z "$stderr" ]
}

@test "the man page has every status column and every option of --help" {
	local col opt

	# the tree's dmcopy: make install above built it
	[ -x "$TOP/tools/dmcopy" ] || make -s --no-print-directory -C "$TOP" userspace
	for col in $(help_columns); do
		grep -qxF ".B ${col//-/\\-}" "$MANPAGE" ||
			{ echo "# column $col not in dmcopy.8" >&3; false; }
	done
	for opt in $("$TOP/tools/dmcopy" --help | grep -o -- '--[a-z][a-z-]*' | sort -u); do
		grep -qF -- "${opt//-/\\-}" "$MANPAGE" ||
			{ echo "# option $opt not in dmcopy.8" >&3; false; }
	done
}

@test "completion: bash -n, and it registers _dmcopy for dmcopy" {
	bash -n "$COMPLETION"
	install_at /usr
	# shellcheck source=/dev/null
	source "$ROOT/usr/share/bash-completion/completions/dmcopy"
	[ "$(complete -p dmcopy)" = "complete -F _dmcopy dmcopy" ]
}

@test "completion: dmcopy st<TAB> is status, status -o NA<TAB> is NAME" {
	install_at /usr
	# shellcheck source=/dev/null
	source "$ROOT/usr/share/bash-completion/completions/dmcopy"
	# the dmcopy being completed: the installed one
	PATH=$ROOT/usr/bin:$PATH

	run complete_line 'dmcopy st'
	[ "$status" -eq 0 ]
	[ "$output" = status ]
	run complete_line 'dmcopy status -o NA'
	[ "$output" = NAME ]
	run complete_line 'dmcopy status -o name,lo'
	# names in any case; what was typed stays
	[ "$output" = name,LOG-SEC ]
	run complete_line 'dmcopy status --output +UU'
	[ "$output" = +UUID ]
	run complete_line 'dmcopy '
	[ "$output" = "$(printf '%s\n' status create remove message copy provision deprovision)" ]
	# called directly too, under bats' set -e
	complete_line 'dmcopy co' >"$BATS_TEST_TMPDIR/out"
	[ "$(cat "$BATS_TEST_TMPDIR/out")" = copy ]
}

@test "completion: each command's options, as its option table has them" {
	# shellcheck source=/dev/null
	source "$COMPLETION"
	run complete_line 'dmcopy -'
	[ "$output" = "$(printf '%s\n' -h --help -V --version)" ]
	run complete_line 'dmcopy status --'
	[ "$output" = "$(printf '%s\n' --json --raw --output --noheadings --bytes --help)" ]
	run complete_line 'dmcopy create --m'
	[ "$output" = "$(printf '%s\n' --mode --max-copy-bytes)" ]
	run complete_line 'dmcopy remove -'
	[ "$output" = "$(printf '%s\n' -f --force --noudevsync -h --help)" ]
	run complete_line 'dmcopy message -'
	[ "$output" = "$(printf '%s\n' -h --help)" ]
	run complete_line 'dmcopy copy --'
	[ "$output" = "$(printf '%s\n' --length --force --no-offload --chunk --progress --quiet --debug --help)" ]
	# a size: nothing to offer
	run complete_line 'dmcopy copy --chunk '
	[ -z "$output" ]
}

@test "completion: --mode and message values, mapped devices from /dev/mapper" {
	# shellcheck source=/dev/null
	source "$COMPLETION"
	run complete_line 'dmcopy create --mode '
	[ "$output" = "$(printf '%s\n' auto offload emulate)" ]
	run complete_line 'dmcopy create -s 1G -m of'
	[ "$output" = offload ]
	mkdir "$BATS_TEST_TMPDIR/mapper"
	touch "$BATS_TEST_TMPDIR/mapper/"{control,golden,clone}
	_dmcopy_mapper_dir=$BATS_TEST_TMPDIR/mapper
	run complete_line 'dmcopy remove '
	[ "$output" = "$(printf '%s\n' clone golden)" ]
	run complete_line 'dmcopy message g'
	[ "$output" = golden ]
	run complete_line 'dmcopy message golden '
	[ "$output" = "$(printf '%s\n' mode stats-reset)" ]
	run complete_line 'dmcopy message golden mode e'
	[ "$output" = emulate ]
	run complete_line 'dmcopy message golden stats-reset '
	[ -z "$output" ]
}

@test "completion: block devices for status, create and copy" {
	# shellcheck source=/dev/null
	source "$COMPLETION"
	# status reads DMCOPY_SYSFS as dmcopy status does
	DMCOPY_SYSFS=$TOP/tests/host/unit/fixtures/sys run complete_line 'dmcopy status -J nu'
	[ "$output" = "$(printf '%s\n' nullb0 nullb1)" ]
	# the name is free, the device is completed: block devices, and
	# directories on the way to them
	run complete_line 'dmcopy create '
	[ -z "$output" ]
	mkdir "$BATS_TEST_TMPDIR/dir"
	touch "$BATS_TEST_TMPDIR/data"
	run complete_line "dmcopy create -s 1G golden $BATS_TEST_TMPDIR/d"
	[ "$output" = "$BATS_TEST_TMPDIR/dir/" ]
	run complete_line 'dmcopy status /dev/nul'
	[ -z "$output" ]	# a character device
	# copy: paths of block devices and regular files
	run complete_line "dmcopy copy $BATS_TEST_TMPDIR/da"
	[ "$output" = "$BATS_TEST_TMPDIR/data" ]
	run complete_line "dmcopy copy -l 1G $BATS_TEST_TMPDIR/data $BATS_TEST_TMPDIR/d"
	[ "$(sort <<<"$output")" = "$BATS_TEST_TMPDIR/data"$'\n'"$BATS_TEST_TMPDIR/dir/" ]
}

@test "completion: the static column list is that of dmcopy status -o help" {
	# shellcheck source=/dev/null
	source "$COMPLETION"
	[ -x "$TOP/tools/dmcopy" ] || make -s --no-print-directory -C "$TOP" userspace
	# a dmcopy that does not run: the list in the file
	run complete_line '/nonexistent/dmcopy status -o '
	[ "$output" = "$(help_columns; echo help)" ]
	# the tree's: its own list
	run complete_line "$TOP/tools/dmcopy status -o "
	[ "$output" = "$(help_columns; echo help)" ]
}
