#!/usr/bin/env bash
# e2e_layers.sh BUILD - the layering of user/ (`make layers`, tests/tools/layers.py) on this
# build: the application library calls nothing above it, the common library only the
# application library, no program's sources are linked into another binary, and no circle of
# calls or includes joins two modules. Then the checker itself on a small made-up tree that
# breaks each rule, so that a checker that cannot fail fails here. Needs no root; works in a
# directory of its own under /tmp, removed at exit.
set -uo pipefail
build=$(realpath "${1:-build}")
cd "$(dirname "$0")/../.." || exit 1
source tests/e2e/e2e_lib.sh

tmp=$(mktemp -d /tmp/xblayers.XXXXXX) || exit 1
e2e_defer rm -rf "$tmp"

case_this_tree() {
	local out
	out=$(python3 tests/tools/layers.py "$build" 2>&1)
	local rc=$?
	[[ $rc -eq 0 ]] || { E2E_WHY="$(grep '^layers:' <<<"$out" | head -3)"; return 1; }
	# Every program and test was seen, or the check proves nothing.
	grep -q '^xdpband: ' <<<"$out" && grep -q '^xdpban: ' <<<"$out" &&
		grep -q '^tests/test_bans: ' <<<"$out" ||
		{ E2E_WHY="the link maps of xdpband, xdpban or test_bans are missing"; return 1; }
}

# A tree of four modules: lib/a and lib/b call each other, lib/c calls common/d (a library
# calling the one above it), and the test t links the program p's own x.o.
make_bad_tree() {
	local t=$tmp/tree b=$tmp/build
	mkdir -p "$t/user/lib" "$t/user/common" "$t/user/p" "$b/user/lib" "$b/user/common" \
		"$b/user/p" "$b/tests"
	printf 'int b(int n);\nint a(int n) { return b(n - 1); }\n' >"$t/user/lib/a.c"
	printf 'int a(int n);\nint b(int n) { return n > 0 ? a(n) : 1; }\n' >"$t/user/lib/b.c"
	printf 'int d(void);\nint c(void) { return d(); }\n' >"$t/user/lib/c.c"
	printf 'int d(void) { return 2; }\n' >"$t/user/common/d.c"
	printf 'int x(void) { return 3; }\n' >"$t/user/p/x.c"
	printf 'int x(void);\nint a(int n);\nint c(void);\nint main(void) { return x() + a(2) + c(); }\n' \
		>"$tmp/t.c"
	local f
	for f in lib/a lib/b lib/c common/d p/x; do
		gcc -c "$t/user/$f.c" -o "$b/user/$f.o" || return 1
	done
	gcc "$tmp/t.c" "$b"/user/*/*.o -o "$b/tests/t" -Wl,-Map="$b/tests/t.map"
}

case_checker_fails() {
	local out rc
	make_bad_tree || { E2E_WHY="cannot build the made-up tree"; return 1; }
	out=$(python3 tests/tools/layers.py "$tmp/build" "$tmp/tree" 2>&1)
	rc=$?
	e2e_expect "exit status on a broken tree" 1 "$rc" || return 1
	grep -q '^layers: circle of 2 modules: lib/a lib/b' <<<"$out" ||
		{ E2E_WHY="the circle lib/a <-> lib/b was not found"; return 1; }
	grep -q '^layers: user/lib/c calls user/common/d (d): user/lib may not depend on user/common' \
		<<<"$out" || { E2E_WHY="lib calling common was not found"; return 1; }
	grep -q '^layers: tests/t links x of user/p' <<<"$out" ||
		{ E2E_WHY="the test linking a program's source was not found"; return 1; }
	grep -q '^layers: 1 binaries, .* 3 broken rule(s)$' <<<"$out" ||
		{ E2E_WHY="not exactly three broken rules: $(tail -1 <<<"$out")"; return 1; }
}

e2e_case this_tree case_this_tree
e2e_case checker_fails case_checker_fails
e2e_finish
