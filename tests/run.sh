#!/usr/bin/env bash
# run.sh - runs every test: the cmocka binaries in BUILD/tests, the same built with ASan and
# UBSan in BUILD/asan/tests (shown as asan/test_NAME), and the shell tests tests/e2e/e2e_*.sh (the
# fuzz and bench smokes among them); prints where the time went and one closing line with the
# totals. Exits non-zero if any failed.
# The tests run XDPBAN_TEST_JOBS at a time (default 2, a core each), the longest unit tests
# first, then the shell tests, then the other unit tests; but the tests named in ALONE below run
# after all the others, one at a time with nothing beside them, and no two tests of one APART
# group run at the same time. Why each is there is said where it is named.
# A test's output goes to a file of its own and is shown whole when the test ends (an ALONE
# test's as it comes), so that the lines of two tests never mix; it is counted from that file.
# Shell tests report each case as a line "PASS: name", "FAIL: name" or "SKIP: name (why)".
set -uo pipefail
build=${1:-build}
jobs=${XDPBAN_TEST_JOBS:-2}
cd "$(dirname "$0")/.." || exit 1
if [[ ! $jobs =~ ^[1-9][0-9]?$ ]]; then
	echo "run.sh: XDPBAN_TEST_JOBS='$jobs': expected a whole number 1..99" >&2
	exit 2
fi

# What each of these asserts is exact, but a busy neighbour can make it false with no fault
# of xdpban's: they run alone.
ALONE=(
	e2e_bench_smoke.sh     # its senders are pinned to CPUs, and the flood's must lose no frame in a veth
	e2e_reload.sh          # every datagram of a trusted source must reach a socket a neighbour would slow
	e2e_tracker.sh         # real libtorrent clients within 60 s (Debian's binding crashes when starved)
	e2e_hostile_control.sh # root's status within 2 s under a flood; the idle timeout within 4.5 to 7 s
)
# Each group shares one fixed system-wide resource: its tests never run at the same time.
APART=(
	# iproute2's pin directory /sys/fs/bpf/xdp/globals (E2E_IPROUTE2_PINS). tests/e2e/e2e_lib.sh's
	# lock serialises them too; kept apart here, neither holds a worker waiting for the lock.
	"e2e_cli.sh e2e_iplink.sh"
	# /etc/xdpban/xdpban.conf, which e2e_deb.sh installs and purges, and which the CLI reads when
	# it exists and no --config is given.
	"e2e_deb.sh e2e_cli.sh e2e_lists_runtime.sh e2e_readme.sh e2e_operator.sh e2e_completion.sh e2e_demo.sh"
)
# The longest unit tests: first, so that no worker takes them up last.
FIRST=(asan/test_flat_kernel test_flat_kernel)

passed=0 failed=0 skipped=0 broken=() durations=() skips=()

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
	# What was skipped and why, for the closing lines: a skip is a test that did not run.
	if ((s > 0)); then
		mapfile -t -O "${#skips[@]}" skips < <(
			sed -n -e "s/^SKIP: \(.*\)/  $name: \1/p" \
				-e "s/.*\[  SKIPPED \] \([a-z_][a-z_0-9]*\).*/  $name: \1/p" "$out" | sort -u)
	fi
}

# report NAME OUT RC SECONDS: counts a finished test and notes its time.
report() {
	count "$2" "$3" "$1"
	echo "-- $1: $4 s"
	durations+=("$4 $1")
}

outdir=$(mktemp -d)
declare -A running=() # a worker's pid -> the queue entry it runs
bg_pids=()            # an output follower and its sentinel, while an ALONE test runs
stop_all() {
	local p
	for p in "${!running[@]}" "${bg_pids[@]}"; do kill "$p" 2>/dev/null; done
	wait
	rm -rf "$outdir"
}
trap stop_all EXIT

# --- the queue -------------------------------------------------------------------------------

# Entry I is the test names[I], run as "${cmds[I]}" split at the unit separator.
names=() cmds=()
add() { # NAME ARG...
	local IFS=$'\x1f'
	names+=("$1")
	shift
	cmds+=("$*")
}

# The unit tests with the sanitizers (make asan, into BUILD/asan): any report (a leak
# included) ends the binary with a non-zero exit, which counts as a failure. No leak is
# suppressed: neither our code nor libbpf, libelf or json-c leaks in them today. The unit
# tests pin only under per-pid paths, so the plain and the ASan build of one run side by side.
# XDPBAN_FLAT_KERNEL_SOURCES scales down the sources test_flat_kernel sends through the
# kernel: the sanitizers check our user space, which every case still runs whole.
asan_env=(ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:strict_string_checks=1
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 XDPBAN_FLAT_KERNEL_SOURCES=10)
n_asan=0
for t in "$build"/asan/tests/test_*; do
	[[ -x $t ]] || continue
	add "asan/${t##*/}" env "${asan_env[@]}" "$t"
	n_asan=$((n_asan + 1))
done
for t in "$build"/tests/test_*; do
	[[ -x $t ]] && add "${t##*/}" "$t"
done
for t in tests/e2e/e2e_*.sh; do
	[[ -f $t && $t != tests/e2e/e2e_lib.sh ]] && add "${t##*/}" bash "$t" "$build"
done

listed() { # NAME WORD...: whether NAME is one of the words
	local name=$1 w
	shift
	for w in "$@"; do [[ $w == "$name" ]] && return 0; done
	return 1
}

# A name in ALONE, APART or FIRST that is no test would keep nothing apart: a failure.
named=("${ALONE[@]}" "${FIRST[@]}")
for group in "${APART[@]}"; do
	read -ra words <<<"$group"
	named+=("${words[@]}")
done
for name in "${named[@]}"; do
	listed "$name" "${names[@]}" && continue
	echo "FAIL: run.sh names $name, which is no test"
	failed=$((failed + 1))
	broken+=("run.sh (names $name)")
done
if ((n_asan == 0)); then
	echo "FAIL: asan (no unit tests in $build/asan: make builds them)"
	failed=$((failed + 1))
	broken+=("asan (not built)")
fi

# The order of the shared queue: FIRST, the shell tests, the other unit tests.
pool=() alone=()
for i in "${!names[@]}"; do listed "${names[i]}" "${FIRST[@]}" && pool+=("$i"); done
for i in "${!names[@]}"; do
	if listed "${names[i]}" "${ALONE[@]}"; then
		alone+=("$i")
	elif [[ ${names[i]} == e2e_* ]]; then
		pool+=("$i")
	fi
done
for i in "${!names[@]}"; do
	[[ ${names[i]} == e2e_* ]] || listed "${names[i]}" "${FIRST[@]}" "${ALONE[@]}" ||
		pool+=("$i")
done

# --- the workers -----------------------------------------------------------------------------

# run_entry I: runs entry I in the foreground.
run_entry() {
	local IFS=$'\x1f' argv
	read -ra argv <<<"${cmds[$1]}"
	"${argv[@]}"
}

# start I: runs entry I in a worker in the background, its output in $outdir/I.out and, once it
# ends, "STATUS SECONDS" in $outdir/I.rc. The output goes to a file, not a pipe, so that a
# process a test leaves behind cannot hold the runner up.
start() {
	(
		child=
		trap '[[ -n $child ]] && kill "$child" 2>/dev/null && wait "$child"; exit 143' TERM
		t0=$SECONDS
		run_entry "$1" >"$outdir/$1.out" 2>&1 </dev/null &
		child=$!
		wait "$child"
		echo "$? $((SECONDS - t0))" >"$outdir/$1.rc"
	) &
	running[$!]=$1
}

# apart_busy NAME: whether a test of NAME's APART group runs now.
apart_busy() {
	local group p
	for group in "${APART[@]}"; do
		# shellcheck disable=SC2086 # a group is a list of words
		listed "$1" $group || continue
		for p in "${!running[@]}"; do
			# shellcheck disable=SC2086
			listed "${names[${running[$p]}]}" $group && return 0
		done
	done
	return 1
}

# take: sets next to the first entry of the pool that may start now and takes it out of the
# pool; 1 if none may.
take() {
	local k
	for k in "${!pool[@]}"; do
		apart_busy "${names[${pool[k]}]}" && continue
		next=${pool[k]}
		unset "pool[k]"
		return 0
	done
	return 1
}

# finish PID: shows and counts what the worker PID ran.
finish() {
	local i=${running[$1]} rc secs
	unset "running[$1]"
	read -r rc secs <"$outdir/$i.rc" || rc=1 secs=0
	echo "== ${names[i]}"
	cat "$outdir/$i.out"
	report "${names[i]}" "$outdir/$i.out" "$rc" "$secs"
}

while ((${#pool[@]} + ${#running[@]})); do
	while ((${#running[@]} < jobs)) && take; do
		start "$next"
	done
	done_pid=
	wait -n -p done_pid "${!running[@]}"
	[[ -n $done_pid ]] && finish "$done_pid"
done

# --- the tests that run alone ------------------------------------------------------------------

# show_as_it_comes OUT CMD...: runs CMD in the foreground with its output in OUT, and shows
# OUT as it grows; returns CMD's status.
show_as_it_comes() {
	local out=$1 rc sentinel follower
	shift
	: >"$out"
	sleep infinity &
	sentinel=$!
	tail -n +1 -s 0.2 -f --pid="$sentinel" "$out" &
	follower=$!
	bg_pids=("$sentinel" "$follower")
	"$@" >>"$out" 2>&1 </dev/null
	rc=$?
	kill "$sentinel" 2>/dev/null
	wait "$sentinel" "$follower" 2>/dev/null # tail prints the rest, then ends
	bg_pids=()
	return "$rc"
}

for i in "${alone[@]}"; do
	echo "== ${names[i]}"
	t0=$SECONDS
	show_as_it_comes "$outdir/$i.out" run_entry "$i"
	report "${names[i]}" "$outdir/$i.out" "$?" "$((SECONDS - t0))"
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
if ((skipped > 0)); then
	echo "WARNING: $skipped tests did not run (each one's reason, where it gave one):"
	printf '%s\n' "${skips[@]}"
fi
echo "xdpban: $passed passed, $failed failed, $skipped skipped"
((failed == 0))
