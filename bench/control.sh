#!/usr/bin/env bash
# control.sh - the control plane.
#   - loading the same N prefixes (1M in quick and full mode) into xdpban (the policy compile
#     xdpband's list loader uses, and the bare trie in batches), with `nft -f` (a netdev
#     interval set) and with `ipset restore` (hash:net), in a namespace of its own; and N IPv6
#     prefixes of real-looking lengths through the same compile;
#   - the memory the kernel reports for tables of 1M tracked sources, 1M bans and 1M prefixes;
#   - with the CLI (build/xdpban), dumping 1M bans as JSON, and how long `xdpban set limit`
#     takes to reach the data path.
# Usage: bench/control.sh BUILD MODE. Every load is checked (sources inside the prefixes are
# denied, outside pass; nft and ipset hold the set); a failed check prints no number. The
# namespace xbbench-ctl-PID and the pin directory /sys/fs/bpf/xbbench-ctl-PID are removed on exit.
set -uo pipefail
build=${1:?usage: $0 BUILD MODE} mode=${2:?usage: $0 BUILD MODE}
cd "$(dirname "$0")/.." || exit 1

# Names of this run's own (a concurrent run, e.g. `make test` beside `make bench`, gets others).
NS=xbbench-ctl-$$
PIN=/sys/fs/bpf/xbbench-ctl-$$
case $mode in
smoke) prefixes=10000 entries=10000 runs=1 ;;
quick) prefixes=1000000 entries=1000000 runs=3 ;;
full) prefixes=1000000 entries=1000000 runs=5 ;;
*)
	echo "bench: control: mode '$mode' is not smoke, quick or full" >&2
	exit 2
	;;
esac
ctl=$build/bench/ctl
FLAT_BYTES=$((((1 << 16) + (1 << 24)) / 4)) # the flat table: 2 bits per /16 and per /24
cli=$build/xdpban
work=$(mktemp -d /tmp/xbbench-ctl.XXXXXX)
child=
failures=0
checks=0

cleanup() {
	if [[ -n $child ]]; then
		kill -TERM "$child" 2>/dev/null
		wait "$child" 2>/dev/null
	fi
	ip netns del "$NS" 2>/dev/null
	# ctl removes its pins; if it was killed first, they are still ours (checked below).
	[[ -f $work/pinned-by-us && -d $PIN ]] && rm -rf "$PIN"
	rm -rf "$work"
	return 0
}
trap cleanup EXIT
trap 'exit 130' INT TERM

skip() {
	echo "bench: control: skipped ($1)" >&2
	exit 77
}

for t in ctl wire; do
	[[ -x $build/bench/$t ]] || {
		echo "bench: control: $build/bench/$t is missing; run make first" >&2
		exit 1
	}
done
[[ -e /run/netns/$NS ]] && skip "namespace $NS exists: another bench run is going on"
[[ -e $PIN ]] && skip "$PIN exists: another bench run is going on"

fail() { # the caller returns 1, and the main sequence counts the failure
	echo "bench: control: $1: verdict check failed: $2" >&2
}

now_ns() { date +%s%N; }

# Runs a command in the background (so a signal can stop it) and waits for it.
run_bg() {
	"$@" &
	child=$!
	wait "$child"
	local rc=$?
	child=
	return $rc
}

# xdpban: "load N seconds S retries R memory_bytes M free_seconds F" per run.
load_xdpban() { # compile|trie|compile6
	local out cmd=(load "$work/prefixes.txt" "$1")
	[[ $1 == compile6 ]] && cmd=(load6 "$work/prefixes6.txt")
	for _ in $(seq "$runs"); do
		out=$(run_bg "$ctl" "${cmd[@]}") || {
			fail "xdpban $1 load" "${out:-ctl failed}"
			return 1
		}
		awk '{print $4, $6, $8, $12, $14, $16, $18}' <<<"$out" >>"$work/xdpban-$1.samples"
		checks=$((checks + 1))
	done
}

# Some sources (all inside the prefixes) that the loaded set must hold.
sample_sources() { head -3 "$work/sources.txt"; }

load_nft() {
	local t0 t1 a
	command -v nft >/dev/null || {
		echo "nftables is not installed" >"$work/nft.skip"
		return 0
	}
	for _ in $(seq "$runs"); do
		ip netns add "$NS" || return 1
		t0=$(now_ns)
		run_bg nsenter --net="/run/netns/$NS" nft -f "$work/nft.conf" || {
			fail "nft -f" "nft refused the set"
			return 1
		}
		t1=$(now_ns)
		# nft -f commits the whole file in one transaction, so its exit status is the check:
		# reading back one element of a million-element interval set takes nft ~50 s.
		ip netns del "$NS"
		echo "$(((t1 - t0) / 1000)) -" >>"$work/nft.samples"
		checks=$((checks + 1))
	done
}

load_ipset() {
	local t0 t1 a held memory
	command -v ipset >/dev/null || {
		echo "ipset is not installed" >"$work/ipset.skip"
		return 0
	}
	for _ in $(seq "$runs"); do
		ip netns add "$NS" || return 1
		t0=$(now_ns)
		run_bg nsenter --net="/run/netns/$NS" ipset restore -f "$work/ipset.restore" || {
			fail "ipset restore" "ipset refused the set"
			return 1
		}
		t1=$(now_ns)
		held=$(nsenter --net="/run/netns/$NS" ipset list -t xbbench-deny | awk '/^Number of entries/{print $4}')
		memory=$(nsenter --net="/run/netns/$NS" ipset list -t xbbench-deny | awk '/^Size in memory/{print $4}')
		for a in $(sample_sources); do
			nsenter --net="/run/netns/$NS" ipset test xbbench-deny "$a" >/dev/null 2>&1 || {
				fail "ipset restore" "the set does not hold $a"
				return 1
			}
		done
		ip netns del "$NS"
		[[ $held == "$prefixes" ]] || {
			fail "ipset restore" "the set holds ${held:-?} entries, expected $prefixes"
			return 1
		}
		echo "$(((t1 - t0) / 1000)) $memory" >>"$work/ipset.samples"
		checks=$((checks + 1))
	done
}

# "median (min-max)" of column COL (seconds, or microseconds scaled by DIV).
cell() { # FILE COL DIV DECIMALS
	sort -g -k"$2","$2" "$1" | awk -v c="$2" -v div="$3" -v d="$4" '{v[NR]=$c / div}
		END { m = NR % 2 ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2
		      if (NR == 1) printf "%.*f", d, m; else printf "%.*f (%.*f-%.*f)", d, m, d, v[1], d, v[NR] }'
}
median() { # FILE COL DIV
	sort -g -k"$2","$2" "$1" | awk -v c="$2" -v div="$3" '{v[NR]=$c / div}
		END { print NR % 2 ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2 }'
}

load_row() { # LABEL FILE DIV MEMORY_COL [not-nft's-list]
	local f=$work/$2.samples base s
	if [[ -f $work/$2.skip ]]; then
		echo "| $1 | skipped: $(cat "$work/$2.skip") | | | |"
		return
	fi
	if [[ ! -s $f || $(wc -l <"$f") -lt $runs ]]; then
		echo "| $1 | verdict check failed | - | - | - |"
		return
	fi
	s=$(median "$f" 1 "$3")
	base=$([[ -n ${5:-} ]] || median "$work/nft.samples" 1 1000000 2>/dev/null)
	echo "| $1 | $(cell "$f" 1 "$3" 2) | $(awk -v n="$prefixes" -v s="$s" 'BEGIN{printf "%.0f", n / s}') |" \
		"$4 | $(awk -v b="$base" -v s="$s" 'BEGIN{ if (b > 0) printf "%.1fx", b / s; else print "-" }') |"
}

mb() { awk -v b="$1" 'BEGIN{ if (b > 0) printf "%.1f MB", b / 1e6; else print "-" }'; }

print_loads() {
	local trie ipset_mem f m
	trie=$(awk '{print $3}' "$work/xdpban-trie.samples" 2>/dev/null | head -1)
	ipset_mem=$(awk '{print $2}' "$work/ipset.samples" 2>/dev/null | head -1)
	echo "## The control plane"
	echo
	echo "### Loading $prefixes prefixes"
	echo
	echo "The same random disjoint IPv4 prefixes (fixed seed), from a text file each loader reads:" \
		"xdpban in a fresh, unpinned instance ($build/bench/ctl: the policy compile of" \
		"user/lib/policy.h that xdpband's list loader runs, and the bare trie as the floor; every load" \
		"is checked through the data path: sources inside the prefixes denied, sources outside passed); \`nft -f\`" \
		"of a netdev table with an interval set, and \`ipset restore\` of a hash:net, each in a fresh" \
		"namespace (nft commits the file in one transaction, so its exit status is the check; ipset must" \
		"hold every prefix and three listed sources). Wall time; medians of $runs runs (min-max)."
	echo
	echo "| loader | seconds | prefixes/s | memory reported | speed vs nft -f |"
	echo "|---|---|---|---|---|"
	load_row "xdpban: the policy compile xdpband's list loader runs (trie in batches, then the flat table)" xdpban-compile 1 "$(mb "$trie") + $(mb "$FLAT_BYTES") flat"
	load_row "xdpban's LPM trie alone, batch updates (ENOMEM retried): the floor" xdpban-trie 1 "$(mb "$trie")"
	load_row "xdpban, $prefixes IPv6 prefixes (/32 to /64, some /128, as policy6 draws them; not the same list): the same compile, checked against a reference lookup" xdpban-compile6 1 "$(mb "$(awk '{print $3; exit}' "$work/xdpban-compile6.samples" 2>/dev/null)") (IPv6 trie)" other
	load_row "nft -f, netdev interval set" nft 1000000 "-"
	load_row "ipset restore, hash:net" ipset 1000000 "$(mb "${ipset_mem:-0}")"
	echo
	echo "Where the compile's time goes (medians, seconds; ctl times the steps through the compile's observer):" \
		"reading the text file; building the set, checking, sorting and diffing it against the tries and" \
		"marking LOOKUP where it changes anything; the trie writes (batches); the flat table's codes and lines."
	echo
	echo "| family | read | set, check, sort, diff | trie writes | flat table | total |"
	echo "|---|---|---|---|---|---|"
	for m in compile:IPv4 compile6:IPv6; do
		f=$work/xdpban-${m%:*}.samples
		[[ -s $f ]] || continue
		echo "| ${m#*:} | $(median "$f" 4 1) | $(median "$f" 5 1) | $(median "$f" 6 1) | $(median "$f" 7 1) | $(median "$f" 1 1) |"
	done
	echo
}

target_load() {
	local s b m
	[[ $mode == smoke ]] && return 0
	# either family's 1M loaded, from the text file, in at most 2 s
	for m in compile:IPv4 compile6:IPv6; do
		[[ -s $work/xdpban-${m%:*}.samples ]] || continue
		awk -v s="$(median "$work/xdpban-${m%:*}.samples" 1 1)" -v f="${m#*:}" 'BEGIN {
			printf "bench-target: 1M %s prefixes loaded (policy compile, from the text file) in at most 2 s = %.2f s: %s\n", f, s, s <= 2 ? "met" : "not met" }' >&2
	done
	[[ -s $work/nft.samples && -s $work/xdpban-compile.samples ]] || return 0
	b=$(median "$work/nft.samples" 1 1000000)
	s=$(median "$work/xdpban-compile.samples" 1 1)
	awk -v b="$b" -v s="$s" 'BEGIN {
		verdict = (b / s >= 3) ? "met" : "not met"
		printf "bench-target: 1M prefixes loaded at least 3x faster than nft -f (xdpban, the policy compile xdpband runs) = %.1fx (%.2f s vs %.2f s): %s\n", b / s, s, b, verdict }' >&2
}

# The tables of 1M, the JSON dump and the threshold latency, from one ctl run.
state() {
	local rc args=("$entries" "$entries" "$PIN")
	if [[ -x $cli ]]; then
		args+=("$cli")
		touch "$work/pinned-by-us"
	else
		echo "$cli is not built yet" >"$work/cli.skip"
	fi
	run_bg "$ctl" state "${args[@]}" >"$work/state.out"
	rc=$?
	rm -f "$work/pinned-by-us"
	((rc == 0)) || {
		fail "tables, dump and threshold" "ctl state failed"
		return 1
	}
	checks=$((checks + 1))
}

print_state() {
	local f=$work/state.out
	echo "### Tables and the command line"
	echo
	echo "Memory as the kernel reports it for each map (/proc/PID/fdinfo \"memlock\"), tables sized" \
		"to $entries entries and filled by $build/bench/ctl; the policy trie's figure is from the loads" \
		"above."
	echo
	echo "| table | entries | memory reported | bytes per entry |"
	echo "|---|---|---|---|"
	awk '/^memory counts/{printf "| xdpban_counts, groups of four slots, 4 slots per source asked for (it holds %d: a group holds what hashes to it) | %d | %.1f MB | %.0f |\n", $6, $3, $4 / 1e6, $4 / $3}
	     /^memory bans/{printf "| xdpban_bans, its index and xdpban_baninfo (groups of four slots, 2 slots per ban) | %d | %.1f MB | %.0f |\n", $3, $4 / 1e6, $4 / $3}' "$f"
	awk -v n="$prefixes" '{print $3; exit}' "$work/xdpban-trie.samples" 2>/dev/null |
		awk -v n="$prefixes" '{printf "| xdpban_policy4, LPM trie | %d | %.1f MB | %.0f |\n", n, $1 / 1e6, $1 / n}'
	echo
	if [[ -f $work/cli.skip ]]; then
		echo "Dumping bans as JSON and the threshold latency were not measured: $(cat "$work/cli.skip")."
		echo
		return
	fi
	echo "The CLI ($cli) works on the maps pinned in a directory of the bench's own, with no daemon" \
		"(\`--socket\` points nowhere, so it reads and writes the maps directly)."
	echo
	echo "| operation | result |"
	echo "|---|---|"
	awk '/^dump bans/{printf "| `xdpban bans --json`, %d bans (every one counted in the output) | %.2f s, %.0f MB of JSON |\n", $3, $5, $7 / 1e6}' "$f"
	awk '/^threshold/{print $5 * 1000}' "$f" >"$work/threshold.samples"
	echo "| \`xdpban set limit\` (0, then 10, alternately), from the command's start to the first packet the data path handles with the new limit | $(cell "$work/threshold.samples" 1 1 1) ms over $(wc -l <"$work/threshold.samples") changes |"
	echo
	if [[ $mode != smoke ]]; then
		awk '/^dump bans/{printf "bench-target: 1M bans dumped in under 1 s = %.2f s: %s\n", $5, $5 < 1 ? "met" : "not met"}' "$f" >&2
	fi
}

"$build/bench/wire" gen "$work" --prefixes "$prefixes" --sources 16 || exit 1
"$ctl" gen6 "$prefixes" "$work/prefixes6.txt" || exit 1
echo "control: xdpban loads" >&2
load_xdpban compile || failures=$((failures + 1))
load_xdpban trie || failures=$((failures + 1))
load_xdpban compile6 || failures=$((failures + 1))
echo "control: nft -f" >&2
load_nft || failures=$((failures + 1))
echo "control: ipset restore" >&2
load_ipset || failures=$((failures + 1))
echo "control: tables, JSON dump, threshold" >&2
state || failures=$((failures + 1))
print_loads
print_state
target_load
if ((failures)); then
	echo "bench: control: $failures verdict checks failed" >&2
	exit 1
fi
echo "bench: control: verdicts verified ($checks checks)" >&2
