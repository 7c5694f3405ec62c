#!/usr/bin/env bash
# e2e_bench_smoke.sh - keeps `make bench` from rotting: runs the benchmark workloads in their
# tiny smoke mode (bench/run.sh BUILD smoke NAME...) and reports one case per workload:
#   PASS: bench-NAME          it ran and verified the verdicts it expected;
#   FAIL: bench-NAME          it failed, or ended without verifying its verdicts;
#   SKIP: bench-NAME (why)    it cannot run on this machine.
# No timing is checked: the machine is shared and noisy. The workloads clean up their own
# namespaces, attachments and pins; this script creates none.
#
#   e2e_bench_smoke.sh BUILD            every workload but those of BESIDE (tests/run.sh runs
#                                       this alone)
#   e2e_bench_smoke.sh BUILD --beside   the workloads of BESIDE (e2e_bench_smoke_beside.sh,
#                                       which tests/run.sh runs beside other tests)
set -uo pipefail
build=${1:-build}
cd "$(dirname "$0")/../.." || exit 1

# The workloads whose verdicts no neighbour can change: their frames go through
# BPF_PROG_TEST_RUN, one call at a time, or through a VM whose clock counts instructions
# (profile). The others send through veths from senders pinned to CPUs, need every frame of a
# flood, or run threads and daemons side by side.
BESIDE=(pipeline profile matrix policy policy6 libapi)

beside=0
[[ ${2:-} == --beside ]] && beside=1
mapfile -t all < <(bash bench/run.sh --list)
# A name in BESIDE that is no workload would leave a workload out of both runs: a failure.
for w in "${BESIDE[@]}"; do
	[[ " ${all[*]} " == *" $w "* ]] && continue
	echo "FAIL: bench-$w (named in BESIDE of $0, but bench/run.sh has no such workload)"
	exit 1
done
workloads=()
for w in "${all[@]}"; do
	in_beside=0
	[[ " ${BESIDE[*]} " == *" $w "* ]] && in_beside=1
	((in_beside == beside)) && workloads+=("$w")
done
if [[ $(id -u) -ne 0 ]]; then
	for w in "${workloads[@]}"; do echo "SKIP: bench-$w (needs root to load BPF programs)"; done
	exit 0
fi

out=$(mktemp /tmp/xbbench-smoke.XXXXXX)
trap 'rm -f "$out"' EXIT
bash bench/run.sh "$build" smoke "${workloads[@]}" >"$out" 2>&1
rc=$?

failed=0
for w in "${workloads[@]}"; do
	status=$(sed -n "s/^bench: $w: //p" "$out" | grep -E '^(ok|FAILED|skipped)' | tail -1)
	if [[ $status == ok ]] && grep -q "^bench: $w: verdicts verified" "$out"; then
		echo "PASS: bench-$w"
	elif [[ $status == skipped* ]]; then
		echo "SKIP: bench-$w ${status#skipped }"
	else
		echo "FAIL: bench-$w (${status:-no status line})"
		failed=1
	fi
done
if ((failed || rc != 0)); then
	echo "--- bench/run.sh $build smoke ${workloads[*]} (exit $rc) ---"
	cat "$out"
	exit 1
fi
exit 0
