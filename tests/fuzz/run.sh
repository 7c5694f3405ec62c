#!/usr/bin/env bash
# run.sh - runs the libFuzzer harnesses that make builds in BUILD/fuzz (tests/fuzz/README.md):
#
#   tests/fuzz/run.sh [--smoke] BUILD SECONDS [NAME...]
#
# For each harness NAME (every BUILD/fuzz/fuzz_NAME when none is named): every seed of
# tests/fuzz/corpus/NAME is run once (the regression check), then the harness fuzzes for
# SECONDS from that corpus, with tests/fuzz/NAME.dict and the options of the harness's
# "fuzz-options:" comment. The inputs it adds go to BUILD/fuzz/corpus/NAME, kept so that the
# next run goes on from there (--smoke: a fresh directory, removed after, so that the run
# starts from the seeds alone). What it finds is saved in BUILD/fuzz/artifacts/NAME/ under
# libFuzzer's names (crash-*, leak-*, timeout-*, oom-*), its output in BUILD/fuzz/logs/NAME.log.
#
# Prints one line per harness, e.g.
#   fuzz: prefix: 24 seeds, 60 s: 5995000 runs (99916/s), corpus 310: nothing found
#   fuzz: prefix: FOUND build/fuzz/artifacts/prefix/crash-3f2a... (exit 1; log ...)
# and exits 1 if any harness found something or could not run, 0 otherwise.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1

smoke=0
if [[ ${1:-} == --smoke ]]; then
	smoke=1
	shift
fi
if (($# < 2)) || ! [[ $2 =~ ^[1-9][0-9]*$ ]]; then
	echo "usage: tests/fuzz/run.sh [--smoke] BUILD SECONDS [NAME...]" >&2
	exit 2
fi
build=$1 seconds=$2
shift 2
names=("$@")
if ((${#names[@]} == 0)); then
	for bin in "$build"/fuzz/fuzz_*; do
		[[ -x $bin ]] && names+=("${bin##*/fuzz_}")
	done
fi
if ((${#names[@]} == 0)); then
	echo "fuzz: no harnesses in $build/fuzz (make builds them)"
	exit 1
fi

# A value of libFuzzer's final statistics (-print_final_stats=1).
stat() { sed -n "s/^stat::$1: *//p" "$2" | tail -1; }

# Runs harness $1 and prints its line; returns non-zero when it found something.
fuzz_one() {
	local name=$1 bin="$build/fuzz/fuzz_$1" seeds="tests/fuzz/corpus/$1"
	local artifacts="$build/fuzz/artifacts/$1" log="$build/fuzz/logs/$1.log" work
	local opts=() files=() found rc runs rate corpus stamp

	if [[ ! -x $bin || ! -d $seeds ]]; then
		echo "fuzz: $name: no harness $bin or no seeds $seeds"
		return 1
	fi
	mkdir -p "$artifacts" "${log%/*}"
	if ((smoke)); then
		work=$(mktemp -d "${TMPDIR:-/tmp}/xdpban-fuzz-$name.XXXXXX")
	else
		work="$build/fuzz/corpus/$name"
		mkdir -p "$work"
	fi
	read -ra opts < <(sed -n 's|.*fuzz-options: *\(.*[^ ]\) *\*/.*|\1|p' "tests/fuzz/fuzz_$name.c")
	[[ -f tests/fuzz/$name.dict ]] && opts+=("-dict=tests/fuzz/$name.dict")
	opts+=(-timeout=10 -rss_limit_mb=1024 "-artifact_prefix=$artifacts/")
	mapfile -t files < <(find "$seeds" -type f | sort)
	stamp=$(mktemp) # artifacts newer than this are this run's

	{ "$bin" "${opts[@]}" "${files[@]}" && "$bin" "${opts[@]}" -print_final_stats=1 \
		"-max_total_time=$seconds" "$work" "$seeds"; } >"$log" 2>&1
	rc=$?
	((smoke)) && rm -rf "$work"
	found=$(find "$artifacts" -type f -newer "$stamp" | sort | head -1)
	rm -f "$stamp"
	# A seed that fails is named by the replay ("Running: FILE"); the fuzzer saves its finds.
	[[ -z $found ]] && found=$(sed -n 's/^Running: //p' "$log" | tail -1)
	if ((rc != 0)) || [[ $found == "$artifacts"/* ]]; then
		echo "fuzz: $name: FOUND ${found:-?} (exit $rc; log $log)"
		# What broke, as printable text: the log may quote the input's bytes.
		grep -a -m1 -E 'check failed|ERROR: |runtime error' "$log" | cut -c1-200 |
			tr -c '[:print:]\n' '?' | sed 's/^/    /'
		return 1
	fi
	runs=$(stat number_of_executed_units "$log")
	rate=$(stat average_exec_per_sec "$log")
	corpus=$(sed -n 's/.*DONE .* corp: \([0-9]*\).*/\1/p' "$log" | tail -1)
	echo "fuzz: $name: ${#files[@]} seeds, $seconds s: ${runs:-?} runs (${rate:-?}/s)," \
		"corpus ${corpus:-?}: nothing found"
}

status=0
for name in "${names[@]}"; do
	fuzz_one "$name" || status=1
done
exit $status
