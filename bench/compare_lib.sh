# shellcheck shell=bash
# compare_lib.sh - what bench/run.sh does with BASELINE=DIR (`make bench BASELINE=DIR`): the
# workloads that measure the data path per packet against a floor of their own (COMPARED) run
# for DIR's build ("before") and this run's BUILD ("after") in turn, round after round, and
# their tables give one "before / after" table. DIR is the build directory of another checkout
# (bench/baseline.sh makes one from a git revision): its build/bench/* programs and objects.
# The scripts are this tree's; only the programs and objects come from DIR.
#
# The builds alternate by whole invocations, not inside one process: each program carries its
# build's data path in its skeleton, and the two builds' user-space table code may differ, so
# no process can load both. Rounds go before, after, after, before, before, after, ... so that a
# drift of the machine over the run falls on both alike; every invocation uses the same seed,
# hence the same addresses, state and frames, and measures its own floor in its own samples.
# Source it from run.sh (which sets build, mode, work and selected), never run it.
# shellcheck disable=SC2154 # build, mode, work, selected: run.sh's

COMPARED=(pipeline xdp-filter wire)

compared() { [[ -n ${BASELINE:-} && " ${COMPARED[*]} " == *" $1 "* ]]; }

compare_rounds() {
	case $mode in
	smoke) echo "${BASELINE_ROUNDS:-1}" ;;
	quick) echo "${BASELINE_ROUNDS:-3}" ;;
	full) echo "${BASELINE_ROUNDS:-5}" ;;
	esac
}

side_build() {
	if [[ $1 == before ]]; then echo "$BASELINE"; else echo "$build"; fi
}

# The program each compared workload runs from its build directory.
compare_program() {
	case $1 in
	pipeline) echo pipeline ;;
	xdp-filter) echo peer ;;
	wire) echo wire ;;
	esac
}

# Refuses a BASELINE that is not another build directory holding what the selected compared
# workloads run. 1 with a message when it is not.
compare_preflight() {
	local w p
	[[ -n ${BASELINE:-} ]] || return 0
	[[ $(compare_rounds) =~ ^[1-9][0-9]*$ ]] || {
		echo "bench: BASELINE_ROUNDS='${BASELINE_ROUNDS:-}' is not a count of rounds" >&2
		return 1
	}
	[[ -d $BASELINE ]] || {
		echo "bench: BASELINE=$BASELINE is not a directory" >&2
		return 1
	}
	BASELINE=$(cd "$BASELINE" && pwd)
	[[ $BASELINE != "$(cd "$build" && pwd)" ]] || {
		echo "bench: BASELINE is this run's own build directory ($build)" >&2
		return 1
	}
	for w in "${selected[@]}"; do
		compared "$w" || continue
		p=$(compare_program "$w")
		[[ -x $BASELINE/bench/$p && -f $BASELINE/bench/bpf/srcdrv.bpf.o ]] || {
			echo "bench: BASELINE=$BASELINE has no bench/$p or bench/bpf/srcdrv.bpf.o" \
				"(bench/baseline.sh REV builds them)" >&2
			return 1
		}
	done
	mkdir -p "$work/cmp"
}

loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

# Runs workload NAME for both builds, rounds alternating, into $work/NAME.{before,after}R.*,
# and stops at the first invocation that is not ok. The first "after" invocation's tables and
# log are the workload's own in the report (the failed one's, if it never ran).
compare_workload() {
	local name=$1 rounds r side order last status
	rounds=$(compare_rounds)
	status="ok (before and after, $rounds rounds each)"
	echo "$name $(loadavg)" >>"$work/cmp/load.start"
	for r in $(seq "$rounds"); do
		order="before after"
		((r % 2 == 0)) && order="after before"
		for side in $order; do
			echo "== $name: $side, round $r of $rounds" >&2
			last=$name.$side$r
			run_workload "$name" "$last" "$(side_build "$side")"
			[[ $(cat "$work/$last.status") == ok ]] && continue
			status=$(compare_failed "$(cat "$work/$last.status")" "$side" "$r")
			break 2
		done
	done
	echo "$name $(loadavg)" >>"$work/cmp/load.end"
	[[ -f $work/$name.after1.md ]] && last=$name.after1
	cp "$work/$last.md" "$work/$name.md"
	cp "$work/$last.log" "$work/$name.log"
	echo "$status" >"$work/$name.status"
}

# "FAILED (why)" of one invocation as "FAILED (before build, round 1: why)".
compare_failed() { # STATUS SIDE ROUND
	echo "${1%% (*} ($2 build, round $3: ${1#* (}"
}

# The rows of FILE's tables of five columns whose third and fourth give ns/pkt (xdpban's and
# its floor's, as pipeline and peer print them), as "TABLE H1 H2 FLOOR C1 C2 X FLOOR_NS RATIO",
# tab-separated: the medians of the cells; a cell with no number gives an empty field.
rows_pkt() { # FILE
	awk -v OFS='\t' '
	function num(s) { return match(s, /^-?[0-9][0-9.]*/) ? substr(s, RSTART, RLENGTH) : "" }
	!/^\|/ { open = 0; next }
	{
		n = split($0, c, "|")
		for (i = 2; i < n; i++) gsub(/^ +| +$/, "", c[i])
		if (c[2] ~ /^-+$/) next
		if (!open) {
			open = 1; t++
			ok = n == 7 && c[4] ~ /ns\/pkt$/ && c[5] ~ /ns\/pkt$/
			h1 = c[2]; h2 = c[3]; floor = c[5]; sub(/ ns\/pkt$/, "", floor)
			next
		}
		if (ok) print t, h1, h2, floor, c[2], c[3], num(c[4]), num(c[5]), num(c[6])
	}' "$1"
}

# The wire's rows in the same shape: xdpban's CPU ns per dropped frame against the floor's.
rows_wire() { # FILE
	awk -v OFS='\t' '
	function num(s) { return match(s, /^-?[0-9][0-9.]*/) ? substr(s, RSTART, RLENGTH) : "" }
	/^\| floor: / { split($0, c, "|"); gsub(/^ +/, "", c[3]); f = num(c[3]) }
	/^\| xdpban / { split($0, c, "|"); gsub(/^ +/, "", c[3]); x = num(c[3]) }
	END {
		r = x != "" && f > 0 ? sprintf("%.3f", x / f) : ""
		print 1, "receiver", "measure", "floor", "xdpban (XDP), every frame denied",
			"CPU ns per dropped frame", x, f, r
	}' "$1"
}

# Every invocation's rows, each line prefixed with "SIDE ROUND".
compare_rows() { # NAME ROUNDS
	local r side f
	for r in $(seq "$2"); do
		for side in before after; do
			f=$work/$1.$side$r.md
			[[ -f $f ]] || continue
			if [[ $1 == wire ]]; then rows_wire "$f"; else rows_pkt "$f"; fi |
				sed "s/^/$side	$r	/"
		done
	done
}

# One table per table of the workload: medians over the rounds, side by side.
compare_table() { # NAME ROUNDS
	compare_rows "$1" "$2" | awk -F'\t' -v rounds="$2" '
	function med(a, n,   i, j, v) {
		for (i = 2; i <= n; i++) {
			v = a[i]
			for (j = i - 1; j >= 1 && a[j] > v; j--) a[j + 1] = a[j]
			a[j + 1] = v
		}
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	function cell(s, k, col,   r, a) { for (r = 1; r <= rounds; r++) a[r] = V[s, k, r, col]; return med(a, rounds) }
	function change(k, col, fmt,   r, a, lo, hi) {
		for (r = 1; r <= rounds; r++) {
			a[r] = V["after", k, r, col] / V["before", k, r, col]
			if (r == 1 || a[r] < lo) lo = a[r]
			if (r == 1 || a[r] > hi) hi = a[r]
		}
		return rounds == 1 ? sprintf(fmt, a[1]) : sprintf(fmt " (" fmt "-" fmt ")", med(a, rounds), lo, hi)
	}
	{
		k = $3 SUBSEP $7 SUBSEP $8
		if (!(k in seen)) { seen[k] = 1; order[++nk] = k; tab[k] = $3; H[$3] = $4 "\t" $5 "\t" $6 }
		C1[k] = $7; C2[k] = $8
		if ($9 != "" && $10 > 0 && $11 > 0) { V[$1, k, $2, 1] = $9; V[$1, k, $2, 2] = $10; V[$1, k, $2, 3] = $11; got[k]++ }
	}
	END {
		for (i = 1; i <= nk; i++) {
			k = order[i]
			if (tab[k] != last) {
				split(H[tab[k]], h, "\t")
				printf "\n| %s | %s | before ns | before %s | before ratio | after ns | after %s | after ratio | after / before, ns | after / before, ratio |\n", h[1], h[2], h[3], h[3]
				print "|---|---|---|---|---|---|---|---|---|---|"
				last = tab[k]
			}
			if (got[k] != 2 * rounds) { printf "| %s | %s | not measured in every round | | | | | | | |\n", C1[k], C2[k]; continue }
			printf "| %s | %s | %.1f | %.1f | %.2f | %.1f | %.1f | %.2f | %s | %s |\n", C1[k], C2[k],
				cell("before", k, 1), cell("before", k, 2), cell("before", k, 3),
				cell("after", k, 1), cell("after", k, 2), cell("after", k, 3),
				change(k, 1, "%.3f"), change(k, 3, "%.3f")
		}
	}'
}

# "rev SHORT[, with uncommitted changes to the data path]" of the tree run.sh runs in.
tree_label() {
	local rev dirty
	rev=$(git rev-parse --short HEAD 2>/dev/null) || {
		echo "not a git checkout"
		return
	}
	dirty=$(git status --porcelain -- bpf include user 2>/dev/null)
	echo "commit $rev${dirty:+, with uncommitted changes in bpf/, include/ or user/}"
}

# 'SHORT ("subject")' of the before build, from DIR/baseline.txt; the subject cut at a word
# before 60 characters.
baseline_commit() {
	local commit subject
	commit=$(sed -n 's/^commit: //p' "$BASELINE/baseline.txt" 2>/dev/null)
	subject=$(sed -n 's/^subject: //p' "$BASELINE/baseline.txt" 2>/dev/null)
	[[ -n $commit ]] || return 0
	if ((${#subject} > 60)); then
		subject="${subject:0:60}"
		subject="${subject% *}..."
	fi
	echo "$commit${subject:+ (\"$subject\")}"
}

# The report's section: what was compared, how, and a table per workload.
compare_section() {
	local rounds w commit patch
	[[ -n ${BASELINE:-} ]] || return 0
	for w in "${selected[@]}"; do
		compared "$w" && break
	done
	compared "$w" || return 0 # none of the selected workloads is compared
	rounds=$(compare_rounds)
	commit=$(baseline_commit)
	patch=$(sed -n 's/^patch: //p' "$BASELINE/baseline.txt" 2>/dev/null)
	echo "## Before and after: $BASELINE beside $build"
	echo
	if [[ -z $commit ]]; then
		echo "Before: \`$BASELINE\` (no baseline.txt: not made by bench/baseline.sh)."
	elif [[ $patch == none ]]; then
		echo "Before: \`$BASELINE\`, built by bench/baseline.sh from commit $commit."
	else
		echo "Before: \`$BASELINE\`, built by bench/baseline.sh from commit $commit, patched with"
		echo "\`$patch\`."
	fi
	echo "After: \`$build\` ($(tree_label))."
	echo "Written by \`BASELINE=$BASELINE bench/run.sh $build $mode\`."
	echo "Each workload below ran $rounds times for each build, whole invocations"
	echo "alternating (before, after, after, before, ...) with the same seed, so the same addresses,"
	echo "state and frames; each invocation measures its own floor in its own samples (pipeline:"
	echo "bare_drop behind the same driver; xdp-filter: xdp-filter's program; the wire: the XDP"
	echo "program that counts and drops). Cells: the median over the rounds of each invocation's"
	echo "median; ratio = xdpban over that floor, each invocation's own. after / before: the median"
	echo "(min-max) over the rounds of after's figure over before's of the same round; below 1 the"
	echo "after build is cheaper. The workloads' own sections further down are the first after round."
	for w in "${selected[@]}"; do
		compared "$w" || continue
		echo
		echo "### $w (load average at start and end: $(sed -n "s/^$w //p" "$work/cmp/load.start") and" \
			"$(sed -n "s/^$w //p" "$work/cmp/load.end"))"
		if [[ $(cat "$work/$w.status") != ok* ]]; then
			echo
			echo "Not compared: $(cat "$work/$w.status")."
			continue
		fi
		compare_table "$w" "$rounds"
	done
	echo
}
