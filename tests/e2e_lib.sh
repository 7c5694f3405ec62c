# shellcheck shell=bash
# e2e_lib.sh - shared helpers for the shell end-to-end tests (tests/e2e_*.sh): result lines,
# the root check, network namespaces and veth pairs, background processes, bounded waits, and
# one cleanup stack that runs on every exit (normal end, failure, Ctrl-C, SIGTERM).
#
# Source it, never run it. It must never touch anything it did not create itself: every
# namespace, link and process it makes is registered for cleanup at the moment it is made, and
# an existing namespace is refused, never reused or deleted.
#
#   e2e_pass NAME | e2e_fail NAME WHY | e2e_skip NAME WHY
#                                 one result line; tests/run.sh counts them
#   e2e_case NAME FUNC [ARG...]   runs FUNC: PASS if it returns 0, else FAIL with $E2E_WHY
#   e2e_expect WHAT EXPECTED ACTUAL   0 if equal, else sets E2E_WHY and returns 1
#   e2e_run CMD...                runs CMD quietly; on failure E2E_WHY gets its first line of output
#   e2e_require_root NAME         prints a SKIP line and exits 0 unless root
#   e2e_defer CMD...              pushes a cleanup command (run last-in, first-out, at exit)
#   e2e_netns_add NS              creates a namespace with lo up; refused (E2E_WHY) if it exists
#   e2e_veth_add NS1 IF1 NS2 IF2  a veth pair between two namespaces, both ends up
#   e2e_bg NS LOG CMD...          runs CMD in NS in the background, killed at exit
#   e2e_wait TRIES CMD...         polls CMD every 0.1 s, at most TRIES times; 0 once it succeeds
#   e2e_finish                    exits 1 if any case failed, else 0
#   $E2E_PY                       the python3 every test runs

# tests/run.sh runs every tests/e2e_*.sh, this file included: run directly, it does nothing.
(return 0 2>/dev/null) || exit 0

# Debian's python3, with its scapy and libtorrent: the python3 first on PATH may be another
# (a pyenv shim costs about 0.6 s a call), so no test calls a bare python3.
readonly E2E_PY=/usr/bin/python3

E2E_FAILED=0
E2E_WHY=
E2E_CLEANUP=()

e2e_pass() { echo "PASS: $1"; }
e2e_skip() { echo "SKIP: $1 ($2)"; }
e2e_fail() {
	echo "FAIL: $1 ($2)"
	E2E_FAILED=$((E2E_FAILED + 1))
}

e2e_case() {
	local name=$1
	shift
	E2E_WHY=
	if "$@"; then
		e2e_pass "$name"
	else
		e2e_fail "$name" "${E2E_WHY:-$1 returned non-zero}"
	fi
}

e2e_expect() {
	[[ "$2" == "$3" ]] && return 0
	E2E_WHY="$1: expected '$2', got '$3'"
	return 1
}

e2e_run() {
	local out rc
	out=$("$@" 2>&1) && return 0
	rc=$?
	out=${out%%$'\n'*}
	E2E_WHY=${out:-"'$*' exited with status $rc"}
	return 1
}

# e2e_fail_all WHY: one FAIL line for each of the script's CASES (the setup they all need
# failed), then exit 1.
e2e_fail_all() {
	local c
	for c in "${CASES[@]}"; do e2e_fail "$c" "$1"; done
	exit 1
}

# e2e_require_build BUILD TOOL...: BUILD holds xdpband and xdpban, and each TOOL is installed;
# else every case fails, saying which. Sets BUILD to its absolute path.
e2e_require_build() {
	local tool
	BUILD=$(realpath "$1")
	shift
	[[ -x $BUILD/xdpband && -x $BUILD/xdpban ]] || e2e_fail_all "$BUILD/xdpband is not built"
	for tool in "$@"; do
		command -v "$tool" >/dev/null || e2e_fail_all "$tool is not installed (make deps)"
	done
}

e2e_require_root() {
	if [[ $(id -u) -ne 0 ]]; then
		e2e_skip "$1" "needs root to create namespaces and load XDP programs"
		exit 0
	fi
}

# Cleanup runs once, in reverse order of registration, with errors silenced: a step whose
# object is already gone (the namespace took its veth with it) is not a failure.
e2e__cleanup() {
	local i
	trap - EXIT INT TERM
	for ((i = ${#E2E_CLEANUP[@]} - 1; i >= 0; i--)); do
		eval "${E2E_CLEANUP[i]}" >/dev/null 2>&1
	done
	E2E_CLEANUP=()
}
trap e2e__cleanup EXIT
trap 'exit 130' INT # exit runs the EXIT trap
trap 'exit 143' TERM

e2e_defer() {
	local q
	printf -v q '%q ' "$@"
	E2E_CLEANUP+=("$q")
}

# The tests that attach with plain `ip link` share iproute2's pin directory: this lock keeps
# them from running at once, and they refuse pins they did not make rather than clobber them.
readonly E2E_IPROUTE2_PINS=/sys/fs/bpf/xdp/globals
readonly E2E_IPROUTE2_LOCK=/run/xdpban-e2e-iproute2.lock

e2e_take_iproute2_lock() {
	exec 9>"$E2E_IPROUTE2_LOCK" || return 1
	flock -w 300 9 && return 0
	E2E_WHY="another e2e test held $E2E_IPROUTE2_LOCK for 300 s"
	return 1
}

e2e_refuse_existing_pins() {
	local pins=()
	mapfile -t pins < <(compgen -G "$E2E_IPROUTE2_PINS/xdpban_*")
	((${#pins[@]} == 0)) && return 0
	E2E_WHY="$E2E_IPROUTE2_PINS already holds ${pins[*]##*/}: refusing to clobber someone's xdpban state"
	return 1
}

e2e_netns_add() {
	if [[ -e /run/netns/$1 ]]; then
		E2E_WHY="network namespace $1 already exists (left by a killed run?): 'ip netns del $1'"
		return 1
	fi
	ip netns add "$1" || return 1
	e2e_defer ip netns del "$1"
	ip -n "$1" link set lo up
}

# Deleting either namespace deletes the pair, so no cleanup of its own is needed.
e2e_veth_add() {
	ip link add "$2" netns "$1" type veth peer name "$4" netns "$3" || return 1
	ip -n "$1" link set "$2" up && ip -n "$3" link set "$4" up
}

# `ip netns exec` execs CMD, so $! is CMD's own pid.
e2e_bg() {
	local ns=$1 log=$2
	shift 2
	ip netns exec "$ns" "$@" >"$log" 2>&1 &
	e2e_defer e2e__kill "$!"
}

e2e__kill() {
	kill "$1" && wait "$1"
}

e2e_wait() {
	local tries=$1
	shift
	while ((tries-- > 0)); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}

e2e_finish() {
	((E2E_FAILED == 0))
	exit
}
