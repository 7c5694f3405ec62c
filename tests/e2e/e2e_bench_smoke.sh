#!/usr/bin/env bash
# e2e_bench_smoke.sh - keeps `make bench` from rotting: runs every benchmark workload in its
# tiny smoke mode (bench/run.sh BUILD smoke) and reports one case per workload:
#   PASS: bench-NAME          it ran and verified the verdicts it expected;
#   FAIL: bench-NAME          it failed, or ended without verifying its verdicts;
#   SKIP: bench-NAME (why)    it cannot run on this machine.
# No timing is checked: the machine is shared and noisy. The workloads clean up their own
# namespaces, attachments and pins; this script creates none.
set -uo pipefail
build=${1:-build}
cd "$(dirname "$0")/../.." || exit 1

mapfile -t workloads < <(bash bench/run.sh --list)
if [[ $(id -u) -ne 0 ]]; then
	for w in "${workloads[@]}"; do echo "SKIP: bench-$w (needs root to load BPF programs)"; done
	exit 0
fi

out=$(mktemp /tmp/xbbench-smoke.XXXXXX)
trap 'rm -f "$out"' EXIT
bash bench/run.sh "$build" smoke >"$out" 2>&1
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
	echo "--- bench/run.sh $build smoke (exit $rc) ---"
	cat "$out"
	exit 1
fi
exit 0
