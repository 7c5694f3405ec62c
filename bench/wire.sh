#!/usr/bin/env bash
# wire.sh - the wire. Two namespaces joined by a veth pair; a sender
# built on BPF_PROG_TEST_RUN with BPF_F_TEST_XDP_LIVE_FRAMES redirects 60-byte UDP frames
# from denied sources into the veth, so they reach the receiving side as XDP frames, the way a
# NIC driver delivers them. Receivers, each dropping every frame:
#   xdpban            the real program, the deny list in its policy trie;
#   nftables          XDP_PASS, then a netdev ingress chain matching an interval set;
#   iptables + ipset  XDP_PASS, then the raw table matching an ipset hash:net;
#   user space        XDP_PASS, then build/bench/udp_drop: recvmmsg and a hash lookup.
# For each: the receiver's CPU time per frame (softirq ticks from /proc/stat, plus the user
# space receiver's own CPU time) and the rates. Every run checks that the receiver dropped
# exactly the frames that reached it (its own counters) or prints no number.
#
# Usage: bench/wire.sh BUILD MODE. Everything made here (namespaces xbbench-tx/rx-PID, the veth,
# nftables tables, ipsets, iptables rules, attachments, processes) is removed on exit, also on
# failure or interruption. It never touches an interface it did not create.
set -uo pipefail
build=${1:?usage: $0 BUILD MODE} mode=${2:?usage: $0 BUILD MODE}
cd "$(dirname "$0")/.." || exit 1

case $mode in
smoke) prefixes=1000 sources=1024 frames=200000 runs=1 ;;
quick) prefixes=10000 sources=65536 frames=3000000 runs=3 ;;
full) prefixes=100000 sources=65536 frames=10000000 runs=5 ;;
*)
	echo "bench: wire: mode '$mode' is not smoke, quick or full" >&2
	exit 2
	;;
esac
work=$(mktemp -d /tmp/xbbench-wire.XXXXXX)
WHO=wire NS_TAG=
# shellcheck source=bench/wire_lib.sh
. bench/wire_lib.sh
app_pid=
failures=0
checks=0

cleanup() {
	stop_pid "$app_pid"
	wire_cleanup
	rm -rf "$work"
	return 0
}
trap cleanup EXIT
trap 'exit 130' INT TERM

wire_preflight udp_drop

# Sends the frames of the run (live_send).
send() {
	live_send "$frames" : "$wire" --build "$build" send "$DEV_TX" "$(rx_mac)" "$work/sources.txt" "$frames"
}

# One sample of a receiver: CPU ns per frame that arrived and the rate, appended to
# $work/NAME.samples as "cpu_ns_per_frame softirq_ticks app_cpu_ns sender_system_ticks
# frames_per_s lost_in_veth".
record() { # NAME APP_CPU_NS
	local d_si d_sys
	read -r si0 sys0 _ <<<"$t0"
	read -r si1 sys1 _ <<<"$t1"
	d_si=$((si1 - si0))
	d_sys=$((sys1 - sys0))
	awk -v si="$d_si" -v sys="$d_sys" -v app="$2" -v tck="$tck" -v n="$arrived" \
		-v ns="$send_ns" -v sent="$frames" -v lost="$lost" 'BEGIN {
			printf "%.1f %d %.0f %d %.0f %d\n", (si * 1e9 / tck + app) / n, si, app, sys,
				sent * 1e9 / ns, lost }' >>"$work/$1.samples"
	checks=$((checks + 1))
}

run_xdpban() {
	local drops rc=0
	for _ in $(seq "$runs"); do
		start_rx xdpban "$work/prefixes.txt" && send || {
			rc=1
			break
		}
		stop_rx
		drops=$(awk '$1=="xdpban" && $2=="drop_deny"{print $3}' "$work/rx.out")
		if [[ $drops != "$arrived" ]]; then
			fail xdpban "drop_deny ${drops:-none}, expected the $arrived frames that arrived"
			rc=1
			break
		fi
		record xdpban 0
	done
	stop_rx
	return $rc
}

# The floor: a program that only counts and drops; what receiving a frame costs at all.
run_floor() {
	local seen rc=0
	for _ in $(seq "$runs"); do
		start_rx drop && send || {
			rc=1
			break
		}
		stop_rx
		seen=$(awk '$1=="xdp_drop"{print $2}' "$work/rx.out")
		if [[ $seen != "$arrived" ]]; then
			fail "XDP_DROP" "xdp_drop counted ${seen:-none} frames, expected the $arrived that arrived"
			rc=1
			break
		fi
		record floor 0
	done
	stop_rx
	return $rc
}

# XDP_PASS on the veth, so redirected frames are accepted and go up the stack.
pass_rx() {
	start_rx pass
}
pass_stop() { # checks that xdp_pass saw at least the frames that arrived
	local seen
	stop_rx
	seen=$(awk '$1=="xdp_pass"{print $2}' "$work/rx.out")
	((${seen:-0} >= arrived)) || {
		fail "$1" "xdp_pass saw ${seen:-none} frames, fewer than the $arrived that arrived"
		return 1
	}
}

nft_matched() { rx nft list chain netdev xbbench in | sed -n 's/.*counter packets \([0-9]*\).*/\1/p'; }

run_nft() {
	local before after rc=0
	command -v nft >/dev/null || {
		echo "nftables is not installed" >"$work/nft.skip"
		return 0
	}
	rx nft -f "$work/nft.conf" &&
		rx nft add chain netdev xbbench in "{ type filter hook ingress device \"$DEV_RX\" priority -500; }" &&
		rx nft add rule netdev xbbench in ip saddr @deny counter drop || {
		fail nftables "cannot install the table"
		rc=1
	}
	for _ in $(seq "$runs"); do
		((rc == 0)) || break
		before=$(nft_matched)
		pass_rx && send && pass_stop nftables || {
			rc=1
			break
		}
		after=$(nft_matched)
		if [[ $((after - before)) != "$arrived" ]]; then
			fail nftables "the set matched $((after - before)) frames, expected the $arrived that arrived"
			rc=1
		else
			record nft 0
		fi
	done
	stop_rx
	rx nft delete table netdev xbbench 2>/dev/null # the next receiver must not meet it
	return $rc
}

ipt_matched() { rx iptables -t raw -L PREROUTING -v -x -n | awk '/match-set xbbench-deny/{print $1}'; }

run_iptables() {
	local before after rc=0
	command -v iptables >/dev/null && command -v ipset >/dev/null || {
		echo "iptables or ipset is not installed" >"$work/ipt.skip"
		return 0
	}
	iptables -V | grep -o '(.*)' >"$work/ipt.variant"
	rx ipset restore <"$work/ipset.restore" &&
		rx iptables -t raw -A PREROUTING -i "$DEV_RX" -m set --match-set xbbench-deny src -j DROP || {
		fail iptables "cannot install the rule and the set"
		rc=1
	}
	for _ in $(seq "$runs"); do
		((rc == 0)) || break
		before=$(ipt_matched)
		pass_rx && send && pass_stop iptables || {
			rc=1
			break
		}
		after=$(ipt_matched)
		if [[ $((after - before)) != "$arrived" ]]; then
			fail iptables "the rule matched $((after - before)) frames, expected the $arrived that arrived"
			rc=1
		else
			record ipt 0
		fi
	done
	stop_rx
	# The next receiver must not meet them.
	rx iptables -t raw -F PREROUTING 2>/dev/null
	rx ipset destroy xbbench-deny 2>/dev/null
	return $rc
}

run_app() {
	local out received banned dropped e0 e1 cpu rc=0
	for _ in $(seq "$runs"); do
		nsenter --net="/run/netns/$NS_RX" taskset -c "$APP_CPU" "$build/bench/udp_drop" "$PORT" \
			"$work/sources.txt" >"$work/app.out" 2>"$work/app.err" &
		app_pid=$!
		wait_ready "$work/app.out" "$app_pid" && pass_rx && e0=$(udp_rcvbuf_errors) && send &&
			wait_drained && e1=$(udp_rcvbuf_errors) || {
			rc=1
			break
		}
		stop_pid "$app_pid"
		app_pid=
		pass_stop "user space" || {
			rc=1
			break
		}
		out=$(grep '^udp_drop' "$work/app.out")
		read -r received banned cpu < <(awk '{print $3, $5, $11}' <<<"$out")
		dropped=$((e1 - e0))
		if [[ -z $received ]] || ((banned != received || received + dropped != arrived)); then
			fail "user space" "received ${received:-?} (banned ${banned:-?}) + socket overflows $dropped, expected the $arrived that arrived"
			rc=1
			break
		fi
		echo "$received $dropped $cpu $(awk '{print $9}' <<<"$out")" >>"$work/app.delivered"
		record app "$cpu"
	done
	stop_pid "$app_pid"
	app_pid=
	stop_rx
	return $rc
}

# Median and range of column COL of a samples file: "median (min-max)".
stat_cell() { # FILE COL DECIMALS
	sort -g -k"$2","$2" "$1" | awk -v c="$2" -v d="$3" '{v[NR]=$c}
		END { m = NR % 2 ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2
		      if (NR == 1) printf "%.*f", d, m; else printf "%.*f (%.*f-%.*f)", d, m, d, v[1], d, v[NR] }'
}
median() { sort -g -k"$2","$2" "$1" | awk -v c="$2" '{v[NR]=$c} END {print NR % 2 ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }

row() { # NAME LABEL
	local f=$work/$1.samples mx mr
	if [[ -f $work/$1.skip ]]; then
		echo "| $2 | skipped: $(cat "$work/$1.skip") | | | | | |"
		return
	fi
	if [[ ! -s $f || $(wc -l <"$f") -lt $runs ]]; then
		echo "| $2 | verdict check failed | - | - | - | - | - |"
		return
	fi
	mx=$(median "$work/xdpban.samples" 1)
	mr=$(median "$f" 1)
	echo "| $2 | $(stat_cell "$f" 1 0) | $(stat_cell "$f" 2 0) | $(stat_cell "$f" 3 0 | awk '{printf "%s", $0}') |" \
		"$(stat_cell "$f" 5 0) | $(stat_cell "$f" 6 0) | $(awk -v x="$mx" -v r="$mr" 'BEGIN{ if (x > 0 && r > 0) printf "%.2f", x / r; else print "-" }') |"
}

target() { # NAME LABEL FRACTION FRACTION_TEXT
	local mx mr
	[[ -s $work/xdpban.samples && -s $work/$1.samples && $(wc -l <"$work/$1.samples") -ge $runs ]] || return 0
	[[ $mode == smoke ]] && return 0
	mx=$(median "$work/xdpban.samples" 1)
	mr=$(median "$work/$1.samples" 1)
	awk -v x="$mx" -v r="$mr" -v f="$3" -v ft="$4" -v l="$2" 'BEGIN {
		verdict = (x / r <= f + 0) ? "met" : "not met"
		printf "bench-target: on the wire, CPU per dropped frame at most %s of %s = %.3f (%.0f vs %.0f ns/frame): %s\n",
			ft, l, x / r, x, r, verdict }' >&2
}

print_table() {
	local variant delivered
	variant=$(cat "$work/ipt.variant" 2>/dev/null)
	delivered=$(awk '{r += $1; d += $2; c += $3; s += $4} END {if (NR && r && s) printf "%.0f%% of the frames reached the application (it read %.0f datagrams/s and spent %.0f ns of its own CPU on each), %.0f%% overflowed its 8 MiB socket buffer", 100 * r / (r + d), r * 1e9 / s, c / r, 100 * d / (r + d)}' "$work/app.delivered" 2>/dev/null)
	echo "## The wire"
	echo
	echo "Method: namespaces $NS_TX and $NS_RX joined by a veth pair. The sender ($build/bench/wire send)" \
		"is one BPF_PROG_TEST_RUN call with BPF_F_TEST_XDP_LIVE_FRAMES (batch 64) of srcdrv_redirect," \
		"which writes the next of $sources sources into a 60-byte UDP frame and redirects it into the" \
		"veth; the receiving side gets XDP frames, no skb, as from a NIC driver. $frames frames per run," \
		"every source inside one of $prefixes random deny prefixes (fixed seed), so every frame must be" \
		"dropped. The sender is pinned to CPU $SEND_CPU; the veth's receive processing runs there as" \
		"softirq. Receiver CPU = softirq ticks from /proc/stat (all CPUs, 1/$tck s each) + the user-space" \
		"receiver's own CPU time (pinned to CPU $APP_CPU), per frame that reached the receiving program;" \
		"the sender's own time shows as system ticks and is left out. Frames the veth dropped because" \
		"its ring was full (the receiver fell behind, like a NIC's missed frames) are counted apart." \
		"Each run checks the receiver's own counter against the frames that arrived: the floor's and" \
		"xdpban's counters, the nftables rule counter, the iptables rule counter, or the application's" \
		"banned count plus the socket's RcvbufErrors. Medians of $runs runs (min-max)."
	echo
	echo "| receiver | CPU ns/frame | softirq ticks | app CPU ns | frames/s (send call) | lost in the veth | xdpban / this |"
	echo "|---|---|---|---|---|---|---|"
	row floor "floor: an XDP program that counts and drops every frame"
	row xdpban "xdpban (XDP; the prefixes compiled: flat tables, IPv4 lines, then the LPM trie)"
	row nft "XDP_PASS + nftables netdev ingress, interval set"
	row ipt "XDP_PASS + iptables raw ${variant} + ipset hash:net"
	row app "XDP_PASS + user space: recvmmsg + hash lookup, UDP port $PORT"
	echo
	if [[ -n $delivered ]]; then
		echo "User space: $delivered; the sender and the receiving softirq share CPU $SEND_CPU, so" \
			"the rate is that of the whole path. A frame that overflowed the socket still cost its softirq."
		echo
	fi
	target floor "the count-and-drop floor" 2.5 2.5x
	target nft "nftables" 0.3333 1/3
	target app "the user-space receiver" 0.1 1/10
}

"$wire" --build "$build" gen "$work" --prefixes "$prefixes" --sources "$sources" || exit 1
setup_namespaces || {
	echo "bench: wire: cannot create the namespaces and the veth" >&2
	exit 1
}
echo "wire: floor (count and drop)" >&2
run_floor || failures=$((failures + 1))
echo "wire: xdpban" >&2
run_xdpban || failures=$((failures + 1))
echo "wire: nftables" >&2
run_nft || failures=$((failures + 1))
echo "wire: iptables + ipset" >&2
run_iptables || failures=$((failures + 1))
echo "wire: user space" >&2
run_app || failures=$((failures + 1))
print_table
if ((failures)); then
	echo "bench: wire: $failures verdict checks failed" >&2
	exit 1
fi
echo "bench: wire: verdicts verified ($checks checks)" >&2
