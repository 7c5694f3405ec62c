#!/usr/bin/env bash
# run.sh - runs every test: the cmocka binaries in BUILD/tests, then the shell tests
# tests/e2e_*.sh, and prints one closing line with the totals. Exits non-zero if any failed.
# Shell tests report each case as a line "PASS: name", "FAIL: name" or "SKIP: name (why)".
set -uo pipefail
build=${1:-build}
cd "$(dirname "$0")/.." || exit 1

passed=0 failed=0 skipped=0 broken=()

count() { # $1 = output file, $2 = exit status, $3 = name
	local out=$1 rc=$2 name=$3 p f s
	p=$(sed -n 's/.*\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$out" | tail -1)
	f=$(sed -n 's/.*\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$out" | tail -1)
	s=$(sed -n 's/.*\[  SKIPPED \] \([0-9]*\) test.*/\1/p' "$out" | tail -1)
	p=$((${p:-0} + $(grep -c '^PASS: ' "$out")))
	f=$((${f:-0} + $(grep -c '^FAIL: ' "$out")))
	s=$((${s:-0} + $(grep -c '^SKIP: ' "$out")))
	# A runner that died without reporting a failure still failed.
	if ((rc != 0 && f == 0)); then
		f=1
		broken+=("$name (exit $rc without a failed case)")
	elif ((f > 0)); then
		broken+=("$name")
	fi
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
}

tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT

for t in "$build"/tests/test_*; do
	[[ -x "$t" ]] || continue
	echo "== $(basename "$t")"
	"$t" >"$tmp" 2>&1
	rc=$?
	cat "$tmp"
	count "$tmp" "$rc" "$(basename "$t")"
done

for t in tests/e2e_*.sh; do
	[[ -f "$t" && "$t" != tests/e2e_lib.sh ]] || continue
	echo "== $(basename "$t")"
	bash "$t" "$build" >"$tmp" 2>&1
	rc=$?
	cat "$tmp"
	count "$tmp" "$rc" "$(basename "$t")"
done

echo
if ((${#broken[@]})); then
	printf 'failing: %s\n' "${broken[@]}" | sort -u
fi
echo "xdpban: $passed passed, $failed failed, $skipped skipped"
((failed == 0))
