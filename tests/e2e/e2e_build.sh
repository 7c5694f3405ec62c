#!/usr/bin/env bash
# e2e_build.sh BUILD - what a new user meets first: plain `make` on a machine without a build
# dependency stops before compiling anything, with one line naming what is missing and
# saying to run `make deps` (shown with a PATH that lacks clang, and with a header that does
# not exist); `--version` of both programs prints the one VERSION of the Makefile (also in the
# installed pkg-config file); `--help` of both programs exits 0 and shows every long option,
# and an unknown long option is named. Needs no root: it builds into, and installs into,
# directories of its own under /tmp, removed at exit, and changes nothing else.
set -uo pipefail
build=${1:-build}
cd "$(dirname "$0")/../.." || exit 1
source tests/e2e/e2e_lib.sh

tmp=$(mktemp -d /tmp/xbbuild.XXXXXX) || exit 1
e2e_defer rm -rf "$tmp"
version=$(sed -n 's/^VERSION *:= *//p' Makefile)

# A PATH with every program of this one but clang: symbolic links in a directory of our own.
path_without_clang() {
	local d=$tmp/path dir f
	mkdir -p "$d" || return 1
	IFS=: read -ra dirs <<<"$PATH"
	for dir in "${dirs[@]}"; do
		for f in "$dir"/*; do
			[[ -x $f && ! -d $f && ${f##*/} != clang* && ! -e $d/${f##*/} ]] || continue
			ln -s "$f" "$d/${f##*/}" || return 1
		done
	done
	echo "$d"
}

# make_refuses WANT_LINE MAKE_ARGS...: make must fail before building, with WANT_LINE among
# its output and no object made.
make_refuses() {
	local want=$1 out rc
	shift
	out=$("$@" 2>&1)
	rc=$?
	if ((rc == 0)); then
		E2E_WHY="make succeeded"
	elif ! grep -qxF -- "$want" <<<"$out"; then
		E2E_WHY="no line '$want' in: ${out:0:300}"
	elif [[ -e $tmp/b ]]; then
		E2E_WHY="make created $tmp/b before it refused"
	else
		return 0
	fi
	return 1
}

case_missing_clang() {
	local path
	command -v clang >/dev/null || { E2E_WHY="clang is not installed here"; return 1; }
	path=$(path_without_clang) || { E2E_WHY="cannot make a PATH without clang"; return 1; }
	[[ -x $path/make && -x $path/gcc && ! -e $path/clang ]] ||
		{ E2E_WHY="the PATH without clang lacks make or gcc"; return 1; }
	make_refuses "xdpban: missing clang: run 'make deps' (as root) to install what the build needs" \
		env PATH="$path" make --no-print-directory BUILD="$tmp/b"
}

case_missing_header() {
	make_refuses "xdpban: missing <xdpban-e2e-absent.h>: run 'make deps' (as root) to install what the build needs" \
		make --no-print-directory BUILD="$tmp/b" BUILD_HEADERS="json-c/json.h xdpban-e2e-absent.h"
}

# With everything present the check passes: the real headers and tools are all found.
case_deps_present() {
	e2e_run make --no-print-directory -s BUILD="$tmp/ok" check-deps
}

case_version() {
	[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { E2E_WHY="Makefile VERSION is '$version'"; return 1; }
	e2e_expect "xdpban --version" "xdpban $version|0" "$("$build/xdpban" --version 2>&1)|$?" &&
		e2e_expect "xdpban status --version" "xdpban $version|0" \
			"$("$build/xdpban" status --version 2>&1)|$?" &&
		e2e_expect "xdpband --version" "xdpband $version|0" "$("$build/xdpband" --version 2>&1)|$?" &&
		e2e_expect "xdpband -V" "xdpband $version|0" "$("$build/xdpband" -V 2>&1)|$?" &&
		e2e_run make --no-print-directory -s install-lib BUILD="$build" DESTDIR="$tmp/root" \
			PREFIX=/usr &&
		e2e_expect "pkg-config --modversion" "$version" \
			"$(PKG_CONFIG_PATH=$tmp/root/usr/lib/pkgconfig pkg-config --modversion xdpban)"
}

# --help: exit 0, on stdout, every option the daemon parses; an unknown option is named.
case_help() {
	local out opt
	out=$("$build/xdpband" --help) || { E2E_WHY="xdpband --help exited $?"; return 1; }
	for opt in "-c, --config FILE" "-i, --interface IFACE" "-t, --check" "-v, --verbose" \
		"-h, --help" "-V, --version"; do
		[[ $out == *"  $opt "* ]] || { E2E_WHY="xdpband --help lacks '$opt': ${out:0:200}"; return 1; }
	done
	e2e_expect "xdpband --frob" "xdpband: unknown option --frob (see xdpband --help)|2" \
		"$("$build/xdpband" --frob 2>&1)|$?" &&
		e2e_expect "xdpband --config" "xdpband: option --config needs a value (see xdpband --help)|2" \
			"$("$build/xdpband" --config 2>&1)|$?" || return 1
	out=$("$build/xdpban" --help) || { E2E_WHY="xdpban --help exited $?"; return 1; }
	for opt in --pin-dir --socket --config --verbose --help --version; do
		[[ $out == *" $opt"* ]] || { E2E_WHY="xdpban --help lacks $opt"; return 1; }
	done
}

e2e_case make_names_a_missing_tool case_missing_clang
e2e_case make_names_a_missing_header case_missing_header
e2e_case make_finds_what_it_needs case_deps_present
e2e_case version_from_the_makefile case_version
e2e_case help_of_both_programs case_help
e2e_finish
