#!/usr/bin/env bash
# flood.sh - a spoofed flood on the wire. The sender of the
# wire workload (bench_live.h: live XDP frames of srcdrv_redirect into a veth) sends one pass of
# malformed frames from millions of distinct random sources (build/bench/flood gen) into the
# receiving namespace, where the real daemon, xdpband, protects the veth. Mixed into the flood,
# by slot (bench/flood.c): 1% forged frames from a victim whose hop count was verified over
# a real TCP connection, the victim's own valid datagrams, a clean source's valid datagrams,
# and valid datagrams from offenders banned before the flood (each by its own 11 malformed
# frames). In the same run, alternating, the same frames go to the wire floor: an XDP program
# that counts and drops every frame.
#
# Every xdpban run checks, or prints no number: the offenders' bans are all still in the ban
# table after the flood, unchanged, and their frames were dropped as banned; the flood created
# no ban (every source is new); the data path counted exactly the flood's errors, and the
# forged victim frames as errors_suspect; the victim is still verified, not banned; the
# victim's and the clean source's datagrams arrived at a UDP socket in the receiving namespace,
# as many as the data path passed; `xdpban status` answered within 2 s, several times, while
# the flood ran; the daemon stopped cleanly. Reported: the send call's frames per second, the
# receiver's softirq CPU per frame beside the floor's, the daemon's CPU, the status round trips.
#
# Usage: bench/flood.sh BUILD MODE. Everything made here (namespaces xbbench-flood-tx/rx-PID,
# the veth, the daemon and its pins /sys/fs/bpf/xbbench-flood-PID and socket, the TCP and UDP
# servers, the sender) is removed on exit, also on failure or interruption. It never touches an
# interface it did not create.
set -uo pipefail
build=${1:?usage: $0 BUILD MODE} mode=${2:?usage: $0 BUILD MODE}
cd "$(dirname "$0")/.." || exit 1

# Distinct spoofed sources, offenders and runs of each mode.
declare -A sizes=([smoke]="1000000 100 1" [quick]="10000000 1000 3" [full]="20000000 1000 5")
[[ -n ${sizes[$mode]:-} ]] || {
	echo "bench: flood: mode '$mode' is not smoke, quick or full" >&2
	exit 2
}
read -r sources offenders runs <<<"${sizes[$mode]}"
OFFENDER=203.0.113.66 # the offender named in the checks; the others are random
VICTIM=198.51.100.9   # held by the sending namespace, so it can prove itself over TCP
CLEAN=203.0.113.10
TCP_PORT=7
TCP_EXCHANGES=400 # 1 in 16 segments is looked at: all 400 missing is a chance of 1e-11
PROBE_BOUND_S=2   # a liveness bound on `xdpban status`, not a timing target
MIN_PROBES=3      # status answers the flood must have seen
PROBE_PAUSE_S=0.2 # between status requests, after the first MIN_PROBES
PY=/usr/bin/python3
work=$(mktemp -d /tmp/xbbench-flood.XXXXXX)
WHO=flood NS_TAG=flood-
# shellcheck source=bench/wire_lib.sh
. bench/wire_lib.sh
flood=$build/bench/flood
PIN=/sys/fs/bpf/xbbench-flood-$$
SOCK=$work/xdpban.sock
daemon_pid=
helper_pids=()
pin_ours= # set once $PIN is known not to be someone else's
failures=0
checks=0

stop_helpers() {
	local pid
	for pid in "${helper_pids[@]}"; do stop_pid "$pid"; done
	helper_pids=()
}

cleanup() {
	stop_helpers
	stop_pid "$daemon_pid" # it detaches and removes its pins and socket
	wire_cleanup
	[[ -n $pin_ours && -d $PIN ]] && rm -rf "$PIN" # left by a daemon that could not stop
	rm -rf "$work"
	return 0
}
trap cleanup EXIT
trap 'exit 130' INT TERM

wire_preflight flood
[[ -x $build/xdpband && -x $build/xdpban ]] || {
	echo "bench: flood: $build/xdpband or $build/xdpban is missing; run make first" >&2
	exit 1
}
$PY -c '' 2>/dev/null || skip "needs $PY for the TCP and UDP peers"
[[ -e $PIN ]] && skip "$PIN exists: another bench run is going on"
pin_ours=1

cli() { "$build/xdpban" --socket "$SOCK" --pin-dir "$PIN" "$@"; }
answers() { cli status --json 2>/dev/null | grep -q '"daemon":true'; }

# check WHAT WANT GOT: records a failure unless GOT is WANT.
check() {
	[[ $3 == "$2" ]] && checks=$((checks + 1)) && return 0
	fail "$1" "${3:-nothing}, expected $2"
	bad=1
}

# check_between WHAT LOW HIGH GOT: LOW <= GOT <= HIGH (HIGH "": no upper bound).
check_between() {
	[[ $4 =~ ^[0-9]+$ ]] && (($2 <= $4)) && [[ -z $3 || $4 -le $3 ]] &&
		checks=$((checks + 1)) && return 0
	fail "$1" "${4:-nothing}, expected $([[ -n $3 ]] && echo "$2 to $3" || echo "at least $2")"
	bad=1
}

# check_sent WHAT SENT GOT [SLACK]: GOT is SENT, less at most the frames the veth lost (which
# frames they were is not known) and SLACK more.
check_sent() {
	local low=$(($2 - lost - ${4:-0}))
	check_between "$1" $((low > 0 ? low : 0)) "$2" "$3"
}

# Starts a helper (CMD...) in the receiving namespace and waits for its READY file.
start_helper() { # READY CMD...
	local ready=$1
	shift
	rm -f "$ready"
	nsenter --net="/run/netns/$NS_RX" "$@" >>"$work/helpers.log" 2>&1 &
	helper_pids+=("$!")
	for _ in $(seq 100); do
		[[ -e $ready ]] && return 0
		sleep 0.1
	done
	echo "bench: flood: $* did not start: $(tail -1 "$work/helpers.log")" >&2
	return 1
}

write_config() {
	cat >"$work/xdpban.conf" <<-EOF
		# bench/flood.sh: the defaults (limit 10, spoof defence hop) on the receiving veth
		[xdp]
		interfaces = $DEV_RX
		mode = native
		pin-dir = $PIN
		detach-on-exit = yes
		[control]
		socket = $SOCK
		[metrics]
		listen = off
		[state]
		file = off
	EOF
}

# The victim's address on the sending side, and both sides' neighbours fixed: after the
# victim's TCP connection, the kernels would probe each other with ARP some seconds later, and
# an ARP frame reaching the data path during the flood passes and spoils the count.
add_victim() {
	local tx_mac
	tx_mac=$(mac_of "$NS_TX" "$DEV_TX")
	ip -n "$NS_TX" addr add "$VICTIM/24" dev "$DEV_TX" &&
		ip -n "$NS_TX" neigh replace 198.51.100.2 lladdr "$(rx_mac)" dev "$DEV_TX" nud permanent &&
		ip -n "$NS_RX" neigh replace 198.51.100.1 lladdr "$tx_mac" dev "$DEV_RX" nud permanent &&
		ip -n "$NS_RX" neigh replace "$VICTIM" lladdr "$tx_mac" dev "$DEV_RX" nud permanent
}

start_daemon() {
	nsenter --net="/run/netns/$NS_RX" "$build/xdpband" -c "$work/xdpban.conf" \
		>"$work/daemon.log" 2>&1 &
	daemon_pid=$!
	for _ in $(seq 300); do
		answers && return 0
		kill -0 "$daemon_pid" 2>/dev/null || break
		sleep 0.1
	done
	echo "bench: flood: xdpband did not start: $(tail -1 "$work/daemon.log")" >&2
	return 1
}

# Stops the daemon; 1 unless it exited 0 and took its pins and socket with it.
stop_daemon() {
	local rc
	kill -TERM "$daemon_pid" 2>/dev/null
	wait "$daemon_pid"
	rc=$?
	daemon_pid=
	((rc == 0)) && [[ ! -e $PIN && ! -e $SOCK ]]
}

# The daemon's CPU time so far, ns, all its threads (schedstat: exact, not in ticks).
daemon_cpu_ns() { cat /proc/"$daemon_pid"/task/*/schedstat | awk '{ns += $1} END {printf "%.0f\n", ns}'; }

# Every statistic of the data path, "NAME PACKETS" a line (read from the pins).
stats() { $PY tests/tools/xb_maps.py stats "$PIN" | awk '{print $1, $2}'; }
stat_of() { awk -v n="$2" '$1 == n {print $2}' "$1"; } # FILE NAME
delta() { echo $(($(stat_of "$work/stats.after" "$1") - $(stat_of "$work/stats.before" "$1"))); }

# What the data path holds for the victim: "banned B count C verified V hop H disputed D".
victim_state() { "$flood" --build "$build" source "$PIN" "$VICTIM"; }

# The victim proves its return path: a TCP connection from its address into the receiving
# namespace, whose segments the data path learns its hop count from (0: one link away).
verify_victim() {
	start_helper "$work/tcp.ready" "$PY" tests/tools/xb_tcp_flow.py server 198.51.100.2 "$TCP_PORT" \
		"$work/tcp.ready" || return 1
	tx "$PY" tests/tools/xb_send.py tcp "$VICTIM" 198.51.100.2 "$TCP_PORT" "$TCP_EXCHANGES" || {
		fail "victim" "the TCP exchange from $VICTIM failed"
		return 1
	}
	stop_helpers
	[[ $(victim_state) == "banned 0 count 0 verified 1 hop 0 disputed 0" ]] || {
		fail "victim" "not verified at hop 0 by $TCP_EXCHANGES TCP exchanges: $(victim_state)"
		return 1
	}
}

# The offenders, each banned by its own limit + 1 malformed frames; the ban table then holds
# exactly them, saved in $work/bans.before.
ban_offenders() {
	local bad=0
	live_send "$n_offender_frames" : "$flood" --build "$build" send "$DEV_TX" "$(rx_mac)" \
		"$work" offenders || return 1
	((lost == 0)) || {
		fail "offenders" "$lost of their frames were lost in the veth"
		return 1
	}
	"$flood" --build "$build" bans "$PIN" | sort >"$work/bans.before"
	check "bans after the offenders' errors" "$n_offenders" "$(wc -l <"$work/bans.before")"
	check "banned keys that are not the offenders, or offenders not banned" 0 \
		"$(comm -3 <(sort "$work/offenders.txt") <(cut -d' ' -f1 "$work/bans.before") | wc -l)"
	check "offenders' ban counts and reasons" "$((n_offender_frames / n_offenders)) errors" \
		"$(cut -d' ' -f4,5 "$work/bans.before" | sort -u | tr '\n' ' ' | sed 's/ $//')"
	((bad == 0))
}

# One `xdpban status` through the daemon, timed: "START_US END_US STATUS" in $work/probes
# (status 0 only when the daemon itself answered).
probe() {
	local a b rc
	a=$EPOCHREALTIME
	timeout 20 "$build/xdpban" --socket "$SOCK" --pin-dir "$PIN" status --json >"$work/probe.out" 2>&1
	rc=$?
	b=$EPOCHREALTIME
	((rc == 0)) && ! grep -q '"daemon":true' "$work/probe.out" && rc=99
	echo "${a//[.,]/} ${b//[.,]/} $rc" >>"$work/probes"
}

# While the flood is being sent: status requests, the first MIN_PROBES one after the other
# (so that even a short flood sees them), then one every PROBE_PAUSE_S, as a
# monitoring loop would send them.
probe_while_sending() {
	local n=0
	: >"$work/probes"
	while kill -0 "$send_pid" 2>/dev/null; do
		probe
		n=$((n + 1))
		((n < MIN_PROBES)) || sleep "$PROBE_PAUSE_S"
	done
}

# The probes that started while the send call ran: "COUNT MEDIAN_MS MAX_MS FAILED", where
# FAILED counts those that did not answer within the bound.
probe_summary() {
	awk -v s="$((send_start / 1000))" -v e="$((send_end / 1000))" -v bound="$((PROBE_BOUND_S * 1000000))" '
		$1 >= s && $1 <= e { print $2 - $1, ($3 != 0 || $2 - $1 > bound) }' "$work/probes" |
		sort -n | awk '{ d[NR] = $1; f += $2 }
		END {
			if (!NR) { print 0, 0, 0, 0; exit }
			m = NR % 2 ? d[(NR + 1) / 2] : (d[NR / 2] + d[NR / 2 + 1]) / 2
			printf "%d %.1f %.1f %d\n", NR, m / 1000, d[NR] / 1000, f
		}'
}

# The datagrams of ADDR that reached the UDP socket.
delivered() { grep -cxF "$1" "$work/udp.log"; }

# The checks of one flood through xdpban; 0 when all hold.
check_flood() {
	local bad=0 p overflow
	check "verdicts (every frame that arrived)" "$arrived" \
		"$(($(delta passed) + $(delta drop_malformed) + $(delta drop_banned)))"
	check_sent "drop_malformed (the flood and the forged victim frames)" \
		$((n_spoofed + n_victim_forged)) "$(delta drop_malformed)"
	check_sent "errors counted (the flood's)" "$n_spoofed" "$(delta errors)"
	check_sent "errors_suspect (the forged victim frames)" "$n_victim_forged" "$(delta errors_suspect)"
	check_sent "drop_banned (the offenders' datagrams)" "$n_offender" "$(delta drop_banned)"
	check_sent "passed (the victim's and the clean source's datagrams)" \
		$((n_victim + n_clean)) "$(delta passed)"
	for p in bans_created ban_table_full bans_expired errors_exempt errors_unverified counter_full; do
		check "$p during the flood" 0 "$(delta "$p")"
	done
	# No counted ban lost: every ban the data path made is in the table, as it was before.
	check "bans_created in all" "$n_offenders" "$(stat_of "$work/stats.after" bans_created)"
	"$flood" --build "$build" bans "$PIN" | sort >"$work/bans.after"
	check "the ban table after the flood" "the $n_offenders bans from before, unchanged" \
		"$(if cmp -s "$work/bans.before" "$work/bans.after"; then
			echo "the $n_offenders bans from before, unchanged"
		else
			echo "$(wc -l <"$work/bans.after") bans, $(comm -23 "$work/bans.before" "$work/bans.after" | wc -l) of the old ones gone or changed"
		fi)"
	check "xdpban query $OFFENDER: banned" 1 "$(cli query "$OFFENDER" --json | grep -c '"banned":true')"
	check "the victim after the flood" "banned 0 count 0 verified 1 hop 0 disputed 1" "$(victim_state)"
	# The datagrams that passed reached the socket, the victim's and the clean source's.
	overflow=$(($(udp_rcvbuf_errors) - udp_e0))
	check "datagrams at the socket + socket overflows" "$(delta passed)" \
		"$(($(wc -l <"$work/udp.log") + overflow))"
	victim_got=$(delivered "$VICTIM") clean_got=$(delivered "$CLEAN")
	check_sent "the victim's datagrams at the socket" "$n_victim" "$victim_got" "$overflow"
	check_sent "the clean source's datagrams at the socket" "$n_clean" "$clean_got" "$overflow"
	check "datagrams from anyone else at the socket" 0 \
		"$(grep -cvxF -e "$VICTIM" -e "$CLEAN" "$work/udp.log")"
	read -r probe_n probe_med probe_max probe_bad < <(probe_summary)
	check_between "status answers during the flood" "$MIN_PROBES" "" "$probe_n"
	check "status requests not answered by the daemon within ${PROBE_BOUND_S} s" 0 "$probe_bad"
	((bad == 0))
}

# One sample of the floor: "cpu_ns_per_frame softirq_ticks frames_per_s lost".
run_floor() {
	local seen
	start_rx drop && live_send "$n_frames" : "$flood" --build "$build" send "$DEV_TX" \
		"$(rx_mac)" "$work" flood || {
		stop_rx
		return 1
	}
	stop_rx
	seen=$(awk '$1=="xdp_drop"{print $2}' "$work/rx.out")
	if [[ $seen != "$arrived" ]]; then
		fail floor "xdp_drop counted ${seen:-none} frames, expected the $arrived that arrived"
		return 1
	fi
	echo "$(per_frame "$(softirq_ticks)") $(softirq_ticks) $(send_rate) $lost" >>"$work/floor.samples"
	checks=$((checks + 1))
}

per_frame() { awk -v t="$1" -v tck="$tck" -v n="$arrived" 'BEGIN {printf "%.1f", t * 1e9 / tck / n}'; }

# What one status answer costs the daemon, before the flood: its CPU ms over 10 requests / 10.
status_cost() {
	local c0 c1
	c0=$(daemon_cpu_ns)
	for _ in $(seq 10); do cli status --json >/dev/null; done
	c1=$(daemon_cpu_ns)
	awk -v d=$((c1 - c0)) 'BEGIN {printf "%.2f", d / 10 / 1e6}'
}

# One sample of xdpban under the flood, appended to $work/xdpban.samples as
# "cpu_ns_per_frame softirq_ticks daemon_ns_per_frame frames_per_s lost bans_before
# bans_after errors_suspect victim_sent victim_got clean_sent clean_got probes median_ms
# max_ms daemon_ms daemon_ms_per_status idle_ms_per_status", and its ratio to the floor's
# sample of the same run to $work/ratio.samples.
run_xdpban() {
	local d0 d1 idle rc=0
	start_daemon && verify_victim && ban_offenders || {
		stop_daemon
		return 1
	}
	: >"$work/udp.log"
	start_helper "$work/udp.ready" "$PY" tests/tools/xb_udp_count.py "$PORT" "$work/udp.log" \
		"$work/udp.ready" 198.51.100.2 || rc=1
	udp_e0=$(udp_rcvbuf_errors)
	idle=$(status_cost)
	stats >"$work/stats.before"
	d0=$(daemon_cpu_ns)
	((rc == 0)) && live_send "$n_frames" probe_while_sending "$flood" --build "$build" send \
		"$DEV_TX" "$(rx_mac)" "$work" flood || rc=1
	d1=$(daemon_cpu_ns)
	((rc == 0)) && stats >"$work/stats.after" && wait_drained || rc=1
	stop_helpers
	((rc == 0)) && check_flood || rc=1
	stop_daemon || {
		fail xdpband "it did not stop cleanly (exit status, pins or socket left): $(tail -1 "$work/daemon.log")"
		rc=1
	}
	((rc == 0)) || return 1
	echo "$(per_frame "$(softirq_ticks)") $(softirq_ticks) $(((d1 - d0) / arrived)) $(send_rate)" \
		"$lost $n_offenders $(wc -l <"$work/bans.after") $(delta errors_suspect)" \
		"$n_victim $victim_got $n_clean $clean_got $probe_n $probe_med $probe_max" \
		"$(((d1 - d0) / 1000000)) $(awk -v d=$((d1 - d0)) -v n="$(wc -l <"$work/probes")" \
			'BEGIN {printf "%.2f", (n ? d / n / 1e6 : 0)}') $idle" >>"$work/xdpban.samples"
	awk -v x="$(tail -1 "$work/xdpban.samples" | cut -d' ' -f1)" \
		-v f="$(tail -1 "$work/floor.samples" | cut -d' ' -f1)" \
		'BEGIN {printf "%.2f\n", (f > 0 ? x / f : 0)}' >>"$work/ratio.samples"
	checks=$((checks + 1))
}

# Every run left its samples: the numbers may be printed.
complete() {
	local x=$work/xdpban.samples f=$work/floor.samples
	[[ -s $x && $(wc -l <"$x") -ge $runs && -s $f && $(wc -l <"$f") -ge $runs ]]
}

print_table() {
	local x=$work/xdpban.samples f=$work/floor.samples
	echo "## A spoofed flood on the wire"
	echo
	echo "Method: namespaces $NS_TX and $NS_RX joined by a veth pair; xdpband (the real daemon," \
		"defaults: limit 10, spoof defence hop) protects the receiving veth in native mode. The" \
		"sender is the wire's ($flood send: one BPF_PROG_TEST_RUN call with" \
		"BPF_F_TEST_XDP_LIVE_FRAMES, batch 64, of srcdrv_redirect, pinned to CPU $SEND_CPU): one" \
		"pass of $n_frames 60-byte IPv4 UDP frames. Of every 1000: 986 malformed (UDP length past" \
		"the datagram) from $n_spoofed distinct random sources in all (fixed seed; none exempt," \
		"none in the veth's /24), 10 malformed with the victim's address and TTL $((64 - 14))" \
		"(hop count 14), 2 valid from one of $n_offenders offenders banned before the flood" \
		"(each by its own 11 malformed frames), 1 valid from the victim (TTL 64) and 1 valid from" \
		"a clean source ($CLEAN). The victim ($VICTIM) is verified at hop count 0 for real, by" \
		"$TCP_EXCHANGES exchanges over a TCP connection into the receiving namespace. A UDP" \
		"socket there (tests/tools/xb_udp_count.py) counts what arrives per source, and" \
		"\`xdpban status\` is sent to the daemon while the flood runs ($MIN_PROBES requests one" \
		"after the other, then one every $PROBE_PAUSE_S s). The floor, measured alternately in the same run with the same frames, is the" \
		"wire's: an XDP program that counts and drops every frame. CPU per frame = softirq" \
		"ticks from /proc/stat (all CPUs, 1/$tck s each) over the frames that arrived; the" \
		"daemon's CPU (/proc schedstat, all its threads) over the same frames. Every run checks: the" \
		"ban table holds the same $n_offenders bans after the flood as before and the flood" \
		"created none; every verdict and error counter of the data path matches the frames" \
		"sent; the victim is not banned and still verified; the datagrams passed reached the" \
		"socket; status answered within $PROBE_BOUND_S s, at least $MIN_PROBES times during the" \
		"flood; the daemon stopped cleanly. Medians of $runs runs (min-max)."
	echo
	if ! complete; then
		echo "Verdict check failed: no numbers."
		echo
		return
	fi
	echo "| receiver | CPU ns/frame | softirq ticks | daemon CPU ns/frame | frames/s (send call) | lost in the veth | xdpban / floor |"
	echo "|---|---|---|---|---|---|---|"
	echo "| floor: an XDP program that counts and drops every frame | $(stat_cell "$f" 1 0) |" \
		"$(stat_cell "$f" 2 0) | - | $(stat_cell "$f" 3 0) | $(stat_cell "$f" 4 0) | - |"
	echo "| xdpban under the flood, xdpband attached | $(stat_cell "$x" 1 0) | $(stat_cell "$x" 2 0) |" \
		"$(stat_cell "$x" 3 0) | $(stat_cell "$x" 4 0) | $(stat_cell "$x" 5 0) |" \
		"$(stat_cell "$work/ratio.samples" 1 2) |"
	echo
	echo "| bans before the flood | bans after | errors_suspect (forged victim frames) | victim datagrams: sent, at the socket | clean source: sent, at the socket | status answers during the flood | status round trip, median ms | slowest ms | daemon CPU during the flood, ms | the same per status request sent, ms | daemon CPU per status answer before the flood, ms |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|"
	echo "| $(stat_cell "$x" 6 0) | $(stat_cell "$x" 7 0) | $(stat_cell "$x" 8 0) |" \
		"$(stat_cell "$x" 9 0), $(stat_cell "$x" 10 0) | $(stat_cell "$x" 11 0), $(stat_cell "$x" 12 0) |" \
		"$(stat_cell "$x" 13 0) | $(stat_cell "$x" 14 1) | $(stat_cell "$x" 15 1) |" \
		"$(stat_cell "$x" 16 0) | $(stat_cell "$x" 17 2) | $(stat_cell "$x" 18 2) |"
	echo
	echo "The daemon's CPU during the flood includes its answers to the status requests" \
		"(each counts the tracked sources and the bans in the tables): the" \
		"next column divides it by those requests, and the last is what one answer cost it" \
		"before the flood (10 requests)."
	echo
}

"$flood" --build "$build" gen "$work" --sources "$sources" --offenders "$offenders" \
	--offender "$OFFENDER" --victim "$VICTIM" --clean "$CLEAN" || exit 1
# shellcheck source=/dev/null
. "$work/flood.counts"
write_config
setup_namespaces && add_victim || {
	echo "bench: flood: cannot create the namespaces and the veth" >&2
	exit 1
}
for r in $(seq "$runs"); do
	echo "flood: run $r of $runs: floor (count and drop), $n_frames frames" >&2
	run_floor || {
		failures=$((failures + 1))
		break
	}
	echo "flood: run $r of $runs: xdpban, xdpband attached, $n_frames frames" >&2
	run_xdpban || {
		failures=$((failures + 1))
		break
	}
done
print_table
if ((failures)) || ! complete; then
	echo "bench: flood: $failures verdict checks failed" >&2
	exit 1
fi
echo "bench: flood: verdicts verified ($checks checks)" >&2
