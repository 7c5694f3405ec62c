#!/usr/bin/env bash
# run.sh - runs every test: the cmocka binaries in BUILD/tests and, at the same time (a core
# each), the same built with ASan and UBSan in BUILD/asan/tests (then on both cores); then the shell tests
# tests/e2e_*.sh (the fuzz smoke among them), one at a time; and prints one closing line with
# the totals. Exits non-zero if any failed.
# Shell tests report each case as a line "PASS: name", "FAIL: name" or "SKIP: name (why)".
# A test's output is shown as it comes (the ASan series' once the plain series is done, test
# by test in their own order) and kept in a file of its own, from which it is counted.
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

outdir=$(mktemp -d)
bg_pids=() # what runs in the background now (the ASan series, an output follower): ended at exit
trap 'for p in "${bg_pids[@]}"; do kill "$p" 2>/dev/null; done; wait; rm -rf "$outdir"' EXIT

# show_as_it_comes OUT CMD...: runs CMD in the foreground with its output in OUT, and shows
# OUT as it grows; returns CMD's status. The output goes to a file, not a pipe, so that a
# process a test leaves behind cannot hold the runner up.
show_as_it_comes() {
	local out=$1 rc sentinel follower
	shift
	: >"$out"
	sleep infinity &
	sentinel=$!
	tail -n +1 -s 0.2 -f --pid="$sentinel" "$out" &
	follower=$!
	bg_pids+=("$sentinel" "$follower")
	"$@" >>"$out" 2>&1
	rc=$?
	kill "$sentinel" 2>/dev/null
	wait "$sentinel" "$follower" 2>/dev/null # tail prints the rest, then ends
	bg_pids=("${bg_pids[@]:0:${#bg_pids[@]}-2}")
	return "$rc"
}

# report NAME OUT RC SECONDS: counts a finished test and notes its time.
report() {
	count "$2" "$3" "$1"
	echo "-- $1: $4 s"
	durations+=("$4 $1")
}

n=0
run_counted() { # $1 = name, then the command to run
	local name=$1 rc start=$SECONDS out
	shift
	out=$outdir/$((++n)).out
	echo "== $name"
	show_as_it_comes "$out" "$@"
	rc=$?
	report "$name" "$out" "$rc" "$((SECONDS - start))"
}

# The same unit tests built with AddressSanitizer and UBSan (make asan, into BUILD/asan). Any
# report (a leak included) ends the binary with a non-zero exit, which counts as a failure.
# No leak is suppressed: neither our code nor libbpf, libelf or json-c leaks in them today.
# They run beside the plain series (the unit tests pin only under per-pid paths), one at a
# time in a worker of their own; once the plain series is done a second worker takes them
# from the other end. Each leaves its output in asan-NAME.out and "STATUS SECONDS" in
# asan-NAME.rc, and they are shown and counted in their own order, each as it comes.
asan_env=(ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:strict_string_checks=1
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1)
asan_tests=()
for t in "$build"/asan/tests/test_*; do
	[[ -x "$t" ]] && asan_tests+=("$t")
done
claim() { mkdir "$outdir/claim-${1##*/}" 2>/dev/null; } # one worker per test
run_asan() {
	local out=$outdir/asan-${1##*/} start=$SECONDS
	env "${asan_env[@]}" "$1" >"$out.out" 2>&1 &
	child=$!
	wait "$child"
	echo "$? $((SECONDS - start))" >"$out.rc"
}
asan_worker() { # TEST...: runs, in this order, each test no other worker has taken
	local t child=
	trap '[[ -n $child ]] && kill "$child" 2>/dev/null; exit 143' TERM
	for t in "$@"; do
		claim "$t" && run_asan "$t"
	done
}
# follow OUT RC: shows OUT as it grows, until RC exists (the test has ended).
follow() {
	local shown=0 size ended
	while :; do
		[[ -s $2 ]] && ended=1 || ended=0
		size=$(stat -c %s "$1" 2>/dev/null || echo 0)
		if ((size > shown)); then
			tail -c +$((shown + 1)) "$1" | head -c $((size - shown))
			shown=$size
		fi
		((ended)) && return 0
		sleep 0.5
	done
}

asan_worker "${asan_tests[@]}" &
bg_pids=("$!")

for t in "$build"/tests/test_*; do
	[[ -x "$t" ]] || continue
	run_counted "$(basename "$t")" "$t"
done

if ((${#asan_tests[@]} == 0)); then
	echo "== asan"
	echo "FAIL: asan (no unit tests in $build/asan: make builds them)"
	failed=$((failed + 1))
	broken+=("asan (not built)")
fi
reversed=()
for ((i = ${#asan_tests[@]} - 1; i >= 0; i--)); do
	reversed+=("${asan_tests[i]}")
done
asan_worker "${reversed[@]}" &
bg_pids+=("$!")
for t in "${asan_tests[@]}"; do
	name=asan/$(basename "$t") out=$outdir/asan-$(basename "$t")
	echo "== $name"
	follow "$out.out" "$out.rc"
	read -r rc secs <"$out.rc"
	report "$name" "$out.out" "$rc" "$secs"
done
wait "${bg_pids[@]}"
bg_pids=()

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
