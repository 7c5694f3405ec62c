#!/usr/bin/env bash
# e2e_fuzz_smoke.sh - keeps the fuzz harnesses (tests/fuzz, make fuzz) honest in `make test`:
# each harness runs every seed of its corpus once, then fuzzes for FUZZ_SMOKE_TIME seconds
# (default 3) from the seeds alone (tests/fuzz/run.sh --smoke). One case per harness:
#   PASS: fuzz-NAME (seeds, seconds, runs, corpus)   no seed failed and the fuzzer found nothing;
#   FAIL: fuzz-NAME (what it found)                  the input is in BUILD/fuzz/artifacts/NAME
#                                                    or is the seed named, the log beside it.
# A harness that make did not build is a failure, not a skip. No root is needed: the harnesses
# load nothing into the kernel.
set -uo pipefail
build=${1:-build}
cd "$(dirname "$0")/../.." || exit 1
seconds=${FUZZ_SMOKE_TIME:-3}

failed=0
for src in tests/fuzz/fuzz_*.c; do
	name=${src##*/fuzz_}
	name=${name%.c}
	line=$(bash tests/fuzz/run.sh --smoke "$build" "$seconds" "$name")
	rc=$?
	summary=${line#fuzz: "$name": }
	if ((rc == 0)); then
		echo "PASS: fuzz-$name ($summary)"
	else
		echo "FAIL: fuzz-$name (${summary//$'\n'/ })"
		failed=1
	fi
done
exit $failed
