#!/usr/bin/env bash
# e2e_demo.sh BUILD - `make demo`, the README's first command, runs its script deploy/demo.sh
# on the sample config deploy/xdpban.conf: it must keep working when that config changes.
#   demo_runs_to_its_end   the script exits 0 after its last step; the good client's pings
#                          are answered, the denied range's and the banned source's are not,
#                          the daemon logged the ban of 192.0.2.66 at its 11th error, and the
#                          metrics show one ban made
#   demo_leaves_nothing    its namespaces and its pin directory are gone after it
# The demo makes and removes its own namespaces (xbdemo-PID-*), pins and files; this script
# removes them too if the demo dies before its own cleanup.
set -uo pipefail
build=$(realpath "${1:-build}")
cd "$(dirname "$0")/../.." || exit 1
source tests/e2e/e2e_lib.sh
e2e_require_root demo

out=$(mktemp /tmp/xbdemo-test.XXXXXX) || exit 1
e2e_defer rm -f "$out"

bash deploy/demo.sh "$build" >"$out" 2>&1 &
pid=$!
e2e_defer rm -rf "/sys/fs/bpf/xbdemo-$pid"
e2e_defer ip netns del "xbdemo-$pid-srv"
e2e_defer ip netns del "xbdemo-$pid-net"
wait "$pid"
rc=$?

# The ping summary lines of the demo's output, in order: good, denied, banned, good again.
pings() { grep -o '[0-9]* packets transmitted, [0-9]* received' "$out" | tr '\n' '|'; }

demo_runs() {
	local want='3 packets transmitted, 3 received|3 packets transmitted, 0 received|3 packets transmitted, 0 received|3 packets transmitted, 3 received|'
	if ((rc != 0)); then
		E2E_WHY="exit $rc: $(grep -v '^  [A-Z-]* ' "$out" | tail -n 3 | tr '\n' '|')"
		return 1
	fi
	e2e_expect "the pings" "$want" "$(pings)" || return 1
	grep -q 'xdpband: ban 192.0.2.66 for 1d, .*: 11 errors (malformed), reason errors' "$out" ||
		{ E2E_WHY="no log line of the ban of 192.0.2.66"; return 1; }
	grep -q '^ *xdpban_bans_created_total 1$' "$out" ||
		{ E2E_WHY="metrics: $(grep bans_created "$out")"; return 1; }
	grep -q '== Stopping ==' "$out" || { E2E_WHY="no last step"; return 1; }
}

demo_clean() {
	local left
	left=$(ip netns list | grep -c "^xbdemo-$pid-")
	e2e_expect "namespaces left" 0 "$left" || return 1
	[[ ! -e /sys/fs/bpf/xbdemo-$pid ]] || { E2E_WHY="/sys/fs/bpf/xbdemo-$pid is left"; return 1; }
}

e2e_case demo_runs_to_its_end demo_runs
e2e_case demo_leaves_nothing demo_clean
e2e_finish
