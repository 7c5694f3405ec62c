#!/usr/bin/env bash
# baseline.sh - builds the bench of another revision, so that bench/run.sh can measure it beside
# this tree's build in the same run (`make bench BASELINE=DIR`, README.md "Before and after").
#
#   bench/baseline.sh [-o DIR] REV [PATCH-CMD]
#
# Checks REV out into a temporary git worktree, runs PATCH-CMD there (one shell command, e.g. a
# sed that takes a line out, when REV does not load on this kernel as it stands), and builds,
# with REV's own Makefile and into DIR (default /tmp/xdpban-baseline-SHORTREV), what the bench
# runs: the data path objects, build/bench/* and the bench's BPF objects. DIR gets baseline.txt
# (what was built: the commit and its subject, the patch command, the patch's diffstat) and
# baseline.diff (the patch). The worktree is removed on exit, also on failure; the programs carry their data path
# in their skeletons, so DIR is all a run needs. Prints DIR on stdout, everything else on stderr.
# Never touches the checkout it is run from, its index or its build directory.
set -uo pipefail

usage() {
	echo "usage: $0 [-o DIR] REV [PATCH-CMD]" >&2
	exit 2
}

out=
while getopts o: opt; do
	case $opt in
	o) out=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
(($# == 1 || $# == 2)) || usage
rev=$1 patch=${2:-}
repo=$(git -C "$(dirname "$0")" rev-parse --show-toplevel) || exit 1
commit=$(git -C "$repo" rev-parse --verify -q "$rev^{commit}") || {
	echo "baseline: '$rev' is not a commit of $repo" >&2
	exit 1
}
out=${out:-/tmp/xdpban-baseline-${commit:0:7}}
if [[ -e $out ]] && [[ -n $(ls -A "$out" 2>/dev/null) ]]; then
	echo "baseline: $out exists and is not empty; remove it or give another -o DIR" >&2
	exit 1
fi
mkdir -p "$out" && out=$(cd "$out" && pwd) || exit 1

tmp=$(mktemp -d /tmp/xbbench-base.XXXXXX)
wt=$tmp/src
cleanup() {
	if [[ -d $wt ]]; then
		git -C "$repo" worktree remove --force "$wt" >/dev/null 2>&1 ||
			echo "baseline: could not remove the worktree $wt" >&2
	fi
	rm -rf "$tmp"
	return 0
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The worktree of REV, detached, with PATCH-CMD applied.
checkout() {
	git -C "$repo" worktree add --detach "$wt" "$commit" >&2 || return 1
	[[ -n $patch ]] || return 0
	(cd "$wt" && bash -c "$patch") >&2 || {
		echo "baseline: the patch command failed: $patch" >&2
		return 1
	}
	git -C "$wt" diff --quiet && {
		echo "baseline: the patch command changed nothing: $patch" >&2
		return 1
	}
	return 0
}

# What the bench runs, named by REV's own Makefile variables (a variable REV lacks is empty).
build() {
	# shellcheck disable=SC2016 # make expands them
	printf 'xb-baseline: $(BPF_OBJS) $(BENCHES) $(BENCH_BPF_OBJS) $(BENCH_CUT_OBJS)\n' >"$tmp/targets.mk"
	make -C "$wt" --no-print-directory -j"$(nproc)" -f Makefile -f "$tmp/targets.mk" \
		BUILD="$out" xb-baseline >&2
}

describe() {
	git -C "$wt" diff >"$out/baseline.diff"
	{
		echo "commit: $(git -C "$repo" log -1 --format='%h' "$commit")"
		echo "subject: $(git -C "$repo" log -1 --format='%s' "$commit")"
		echo "patch: ${patch:-none}"
		[[ -n $patch ]] && git -C "$wt" diff --stat | sed 's/^/  /'
		echo "built: $(date -u '+%Y-%m-%d %H:%M UTC') with $(clang --version | head -1)"
	} >"$out/baseline.txt"
}

checkout || exit 1
build || {
	echo "baseline: building $commit into $out failed" >&2
	exit 1
}
describe
echo "$out"
