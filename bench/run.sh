#!/usr/bin/env bash
# run.sh - runs the xdpban benchmarks and writes their report.
#
#   bench/run.sh BUILD quick    `make bench`: every workload, a few minutes; writes bench/RESULTS.md
#   bench/run.sh BUILD full     `make bench-full`: more sources, samples and frames; same report
#   bench/run.sh BUILD smoke    a few iterations of every workload, for tests/e2e/e2e_bench_smoke.sh;
#                               writes BUILD/bench/RESULTS.smoke.md, never bench/RESULTS.md
#   bench/run.sh BUILD MODE NAME...   only the named workloads (see WORKLOADS below)
#   bench/run.sh --list         the workload names
#
# With BASELINE=DIR in the environment (`make bench BASELINE=DIR`), DIR being another
# checkout's build directory (bench/baseline.sh REV makes one), the workloads of COMPARED in
# bench/compare_lib.sh run for DIR's build and BUILD's in turn, BASELINE_ROUNDS times each
# (default 1 smoke, 3 quick, 5 full), and the report gains a "Before and after" table.
#
# Prints each workload's tables as they come, then one line per workload:
# "bench: NAME: ok", "bench: NAME: FAILED (why)" or "bench: NAME: skipped (why)", and exits
# non-zero if any failed. The workloads check their own verdicts and clean up every namespace,
# attachment and pin they make; this script never touches an interface it did not create.
set -uo pipefail

WORKLOADS=(pipeline profile matrix policy policy6 xdp-filter wire flood control reload libapi fleet)

usage() {
	echo "usage: $0 BUILD quick|full|smoke [${WORKLOADS[*]}]" >&2
	echo "       $0 --list" >&2
	exit 2
}

if [[ ${1:-} == --list ]]; then
	printf '%s\n' "${WORKLOADS[@]}"
	exit 0
fi
(($# >= 2)) || usage
build=$1 mode=$2
shift 2
case $mode in quick | full | smoke) ;; *)
	echo "bench: mode '$mode' is not quick, full or smoke" >&2
	usage
	;;
esac
cd "$(dirname "$0")/.." || exit 1
selected=("${@:-${WORKLOADS[@]}}")
for w in "${selected[@]}"; do
	[[ " ${WORKLOADS[*]} " == *" $w "* ]] || {
		echo "bench: unknown workload '$w' (known: ${WORKLOADS[*]})" >&2
		exit 2
	}
done

if [[ $mode == smoke ]]; then
	results=$build/bench/RESULTS.smoke.md
else
	results=bench/RESULTS.md
fi
work=$(mktemp -d /tmp/xbbench-run.XXXXXX)
trap 'rm -rf "$work"' EXIT
# bench/profile.sh sets its counts beside the pipeline's ns of this run ($work/pipeline.md).
export XB_BENCH_WORK=$work
# shellcheck source=bench/compare_lib.sh
. bench/compare_lib.sh

# The bench's own BPF objects, built with the Makefile's BPF_CFLAGS (BUILD/bench/bpf/*.bpf.o).
build_bpf() {
	local arch multiarch src obj
	arch=$(uname -m | sed 's/x86_64/x86/;s/aarch64/arm64/')
	multiarch=$(${CC:-gcc} -print-multiarch 2>/dev/null)
	mkdir -p "$build/bench/bpf" || return 1
	local cut
	for src in bench/bpf/*.bpf.c; do
		build_bpf_one "$src" "$build/bench/bpf/$(basename "${src%.c}").o" || return 1
	done
	# The stage breakdown: the data path cut after each stage (bpf/xdpban.bpf.c,
	# XDPBAN_BENCH_CUT: 1 parse, 2 classes and key, 3 policy, 4 ban check, 5 classify,
	# 6 count).
	for cut in 1 2 3 4 5 6; do
		build_bpf_one bpf/xdpban.bpf.c "$build/bench/bpf/xdpban_cut$cut.bpf.o" \
			-DXDPBAN_BENCH_CUT=$cut || return 1
	done
}

# build_bpf_one SRC OBJ [CFLAG...]: builds OBJ unless it is newer than SRC and every header.
build_bpf_one() {
	local src=$1 obj=$2
	shift 2
	if [[ -f $obj && $obj -nt $src ]] &&
		! find bench/bpf bpf include -name '*.h' -newer "$obj" | grep -q .; then
		return 0
	fi
	printf '  %-8s %s\n' BPF "$obj"
	# Built aside and renamed: a concurrent run (make test beside make bench) never
	# loads a half-written object.
	${CLANG:-clang} -g -O2 -target bpf -mcpu=v3 -D__TARGET_ARCH_"$arch" -Wall -Werror \
		-Iinclude -I/usr/include/"$multiarch" "$@" -c "$src" -o "$obj.$$" &&
		mv "$obj.$$" "$obj" || {
		rm -f "$obj.$$"
		return 1
	}
}

# The command of a workload NAME on the build directory DIR.
workload_cmd() { # NAME DIR
	local b=$2
	case $1 in
	pipeline | matrix | policy | policy6 | reload | libapi) echo "$b/bench/$1 --build $b --mode $mode" ;;
	profile) echo "bash bench/profile.sh $b $mode" ;;
	xdp-filter) echo "bash bench/xdp_filter.sh $b $mode" ;;
	wire) echo "bash bench/wire.sh $b $mode" ;;
	flood) echo "bash bench/flood.sh $b $mode" ;;
	control) echo "bash bench/control.sh $b $mode" ;;
	fleet) echo "bash bench/fleet.sh $b $mode" ;;
	esac
}

# Runs workload NAME of build DIR (default BUILD): its tables to $work/OUT.md, its messages to
# the terminal and $work/OUT.log, its status to $work/OUT.status (OUT defaults to NAME).
# Exit 77 means skipped.
run_workload() { # NAME [OUT DIR]
	local name=$1 out=${2:-$1} cmd limit rc why
	cmd=$(workload_cmd "$name" "${3:-$build}")
	limit=$([[ $mode == full ]] && echo 1800 || echo 900)
	echo "== $name: $cmd" >&2
	# A pipeline, not a process substitution: tee has written the whole log (and its
	# bench-target lines) by the time the pipeline returns.
	timeout --foreground "$limit" $cmd 2>&1 >"$work/$out.md" | tee "$work/$out.log" >&2
	rc=${PIPESTATUS[0]}
	cat "$work/$out.md"
	case $rc in
	0) echo ok >"$work/$out.status" ;;
	77)
		why=$(grep -m1 -o 'skipped (.*)' "$work/$out.log" | sed 's/^skipped (//;s/)$//')
		echo "skipped (${why:-no reason given})" >"$work/$out.status"
		;;
	124) echo "FAILED (no result within ${limit} s)" >"$work/$out.status" ;;
	*)
		why=$(grep -E 'failed|error|cannot|: [A-Z][a-z]+ ' "$work/$out.log" | tail -1)
		echo "FAILED (exit $rc${why:+: $why})" >"$work/$out.status"
		;;
	esac
}

version_of() { dpkg-query -W -f='${Version}' "$1" 2>/dev/null || echo unknown; }

write_results() {
	local w status
	{
		echo "# xdpban benchmarks"
		echo
		echo "Written by \`bench/run.sh $build $mode\` on $(date -u '+%Y-%m-%d %H:%M UTC')."
		echo "Every number below was measured in that one run; ratios compare programs measured"
		echo "side by side in the same run. Figures from elsewhere are labelled as such."
		echo
		echo "## Machine"
		echo
		echo "| CPU | cores | kernel | clang | libbpf | libxdp | xdp-tools | nftables | iptables | ipset |"
		echo "|---|---|---|---|---|---|---|---|---|---|"
		echo "| $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1) | $(nproc) |" \
			"$(uname -r) | $(${CLANG:-clang} --version | head -1 | sed 's/.*version //;s/ .*//') |" \
			"$(version_of libbpf1) | $(version_of libxdp1) | $(version_of xdp-tools) |" \
			"$(version_of nftables) | $(version_of iptables) | $(version_of ipset) |"
		echo
		echo "## Reproduce"
		echo
		echo '```'
		echo "make bench        # quick: bench/run.sh build quick"
		echo "make bench-full   # full:  bench/run.sh build full"
		echo "bench/run.sh build quick pipeline matrix   # some workloads only"
		[[ -n ${BASELINE:-} ]] &&
			echo "make bench BASELINE=DIR   # beside another build: DIR from bench/baseline.sh REV"
		echo '```'
		echo
		echo "Random addresses come from the fixed seed 0x78647062 (\"xdpb\"), so runs compare."
		echo "Each binary takes --seed, --runs and --mode; see \`build/bench/NAME --help\`."
		echo
		echo "## Summary"
		echo
		echo "| workload | status |"
		echo "|---|---|"
		for w in "${selected[@]}"; do
			status=$(cat "$work/$w.status" 2>/dev/null || echo "FAILED (did not run)")
			echo "| $w | $status |"
		done
		echo
		if grep -qs '^bench-target: ' "$work"/*.log; then
			echo "## Targets (goals the benchmark reports, not tests)"
			echo
			echo "| target | measured | verdict |"
			echo "|---|---|---|"
			for w in "${selected[@]}"; do
				sed -n 's/^bench-target: \(.*\) = \(.*\): \(met\|not met\)$/| \1 | \2 | \3 |/p' \
					"$work/$w.log" 2>/dev/null
			done
			echo
		fi
		compare_section
		for w in "${selected[@]}"; do
			cat "$work/$w.md" 2>/dev/null
		done
	} >"$results.$$" && mv "$results.$$" "$results"
}

if [[ $(id -u) -ne 0 ]]; then
	for w in "${selected[@]}"; do echo "bench: $w: skipped (needs root to load BPF programs)"; done
	exit 77
fi
if ! build_bpf; then
	echo "bench: building bench/bpf/*.bpf.c failed" >&2
	exit 1
fi
compare_preflight || exit 1

for w in "${selected[@]}"; do
	if compared "$w"; then
		compare_workload "$w"
	else
		run_workload "$w"
	fi
done
mkdir -p "$(dirname "$results")"
write_results
compare_section
echo
echo "bench: report written to $results"
failed=0
for w in "${selected[@]}"; do
	status=$(cat "$work/$w.status")
	echo "bench: $w: $status"
	[[ $status == FAILED* ]] && failed=1
done
exit $failed
