#!/usr/bin/env bash
# e2e_bench_smoke_beside.sh BUILD - the smoke runs of the benchmark workloads no neighbour can
# disturb (BESIDE in tests/e2e/e2e_bench_smoke.sh, which says which and why): tests/run.sh runs
# this beside other tests, and e2e_bench_smoke.sh, with the rest, alone.
exec bash "$(dirname "$0")/e2e_bench_smoke.sh" "${1:-build}" --beside
