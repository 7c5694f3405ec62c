#!/usr/bin/env bash
# e2e_verifier.sh BUILD - the verifier's cost of every program on this machine's kernel: the
# kernel check (BUILD/kernel/kcheck, tests/kernel/kcheck.c) loads each program of this build's
# object as xdpband loads it, prints the kernel's counts (processed instructions, states,
# verification time) and holds each program to a budget of 250,000 processed instructions (a
# quarter of the verifier's limit: room for the next kernel's verifier, which can cost more,
# and for the next stage); it also attaches xdpban natively to a veth, directly and through
# libxdp, and runs the verdict rows. Its PASS and FAIL lines are this test's. Then a budget of
# 1,000 must fail, so that the check is known to be able to. tests/e2e/e2e_kernels.sh runs the
# same check on Debian 12's 6.1.
#
# Never pins a map (the check's maps live as long as it does) and attaches only to a veth of
# a namespace of its own, removed at exit. Needs root; skips without it.
# shellcheck disable=SC2317 # the cases are called through e2e_case
set -uo pipefail
build=${1:-build}
cd "$(dirname "$0")/../.." || exit 1
source tests/e2e/e2e_lib.sh

readonly BUDGET=250000
check=$build/kernel/kcheck
ns=xbverifier-$$

e2e_require_root "verifier"
if [[ ! -x $check ]]; then
	e2e_fail "verifier" "$check is not built: run make"
	e2e_finish
fi

# A veth pair inside a namespace of our own: kcheck attaches to one end.
make_veth() {
	e2e_netns_add "$ns" &&
		ip -n "$ns" link add kva type veth peer name kvb &&
		ip -n "$ns" link set kva up && ip -n "$ns" link set kvb up
}

# The check's own lines are the results; a failure without a FAIL line of its own is one here.
run_check() {
	local out rc fails
	out=$(ip netns exec "$ns" "$check" --budget "$BUDGET" --attach kva --verdicts 2>&1)
	rc=$?
	echo "$out"
	fails=$(grep -c '^FAIL: ' <<<"$out")
	E2E_FAILED=$((E2E_FAILED + fails))
	((rc != 0 && fails == 0)) && e2e_fail "kcheck" "exit $rc without a FAIL line"
	return 0
}

# A budget of 1,000: every program that loads is over it, and the check exits 1 saying so.
case_low_budget_fails() {
	local out rc prog
	out=$("$check" --budget 1000 2>&1)
	rc=$?
	if ((rc != 1)); then
		E2E_WHY="kcheck --budget 1000 exited $rc, expected 1"
		return 1
	fi
	for prog in xdpban xdpban_report; do
		grep -q "^FAIL: \(budget $prog (.* over the budget of 1000 \|load $prog \)" <<<"$out" &&
			continue
		E2E_WHY="no FAIL line for $prog under a budget of 1000: ${out:0:300}"
		return 1
	done
}

if make_veth; then
	run_check
else
	e2e_fail "veth" "${E2E_WHY:-cannot create a veth pair in $ns}"
fi
e2e_case "a budget of 1000 fails" case_low_budget_fails
e2e_finish
