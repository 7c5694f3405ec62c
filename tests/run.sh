#!/usr/bin/env bash
# run.sh - runs every test: the cmocka binaries in BUILD/tests, the same built with ASan and
# UBSan in BUILD/asan/tests, then the shell tests tests/e2e_*.sh (the fuzz smoke among them),
# and prints one closing line with the totals. Exits non-zero if any failed.
# Shell tests report each case as a line "PASS: name", "FAIL: name" or "SKIP: name (why)".
set -uo pipefail
build=${1:-build}
cd "$(dirname "$0")/.." || exit 1

passed=0 failed=0 skipped=0 broken=() durations=()

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

run_counted() { # $1 = name, then the command to run
	local name=$1 rc start=$SECONDS
	shift
	echo "== $name"
	"$@" >"$tmp" 2>&1
	rc=$?
	cat "$tmp"
	count "$tmp" "$rc" "$name"
	echo "-- $name: $((SECONDS - start)) s"
	durations+=("$((SECONDS - start)) $name")
}

for t in "$build"/tests/test_*; do
	[[ -x "$t" ]] || continue
	run_counted "$(basename "$t")" "$t"
done

# The same unit tests built with AddressSanitizer and UBSan (make asan, into BUILD/asan). Any
# report (a leak included) ends the binary with a non-zero exit, which counts as a failure.
# No leak is suppressed: neither our code nor libbpf, libelf or json-c leaks in them today.
asan_env=(ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:strict_string_checks=1
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1)
asan_tests=("$build"/asan/tests/test_*)
if [[ ! -x ${asan_tests[0]} ]]; then
	echo "== asan"
	echo "FAIL: asan (no unit tests in $build/asan: make builds them)"
	failed=$((failed + 1))
	broken+=("asan (not built)")
fi
for t in "${asan_tests[@]}"; do
	[[ -x "$t" ]] || continue
	run_counted "asan/$(basename "$t")" env "${asan_env[@]}" "$t"
done

for t in tests/e2e_*.sh; do
	[[ -f "$t" && "$t" != tests/e2e_lib.sh ]] || continue
	run_counted "$(basename "$t")" bash "$t" "$build"
done

# Where the time went, slowest first: make test has a budget of about ten minutes.
echo
echo "slowest:"
printf '%s\n' "${durations[@]}" | sort -rn | head -8 | awk '{printf "  %4d s  %s\n", $1, $2}'
echo "total: $SECONDS s"
echo
if ((${#broken[@]})); then
	printf 'failing: %s\n' "${broken[@]}" | sort -u
fi
echo "xdpban: $passed passed, $failed failed, $skipped skipped"
((failed == 0))
