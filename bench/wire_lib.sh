# shellcheck shell=bash
# wire_lib.sh - what the workloads on the wire (bench/wire.sh, bench/flood.sh) share: two
# namespaces joined by a veth pair, the receivers of `build/bench/wire attach`, one run of a
# live-frames sender with the CPU ticks around it, the frames the veth or a socket lost, and
# the medians of samples. Source it, never run it, after setting:
#   WHO    the workload's name, for messages ("wire", "flood");
#   NS_TAG what tells its namespaces apart from another workload's ("" or "flood-");
#   build, work   the build directory and the run's own temporary directory.
# It never touches an interface it did not create: DEV_TX and DEV_RX live in its own namespaces,
# which wire_cleanup deletes with everything in them.

# Names of this run's own (a concurrent run, e.g. `make test` beside `make bench`, gets others).
NS_TX=xbbench-${NS_TAG}tx-$$
NS_RX=xbbench-${NS_TAG}rx-$$
DEV_TX=xbbw-tx
DEV_RX=xbbw-rx
PORT=6969
SEND_CPU=0 # the sender, and with it the receiving softirq, run here
APP_CPU=1  # a user-space receiver runs here
tck=$(getconf CLK_TCK)
wire=$build/bench/wire
rx_pid=
send_pid=
ns_made= # set once the namespaces are ours to delete

# Background processes are started with nsenter directly, never through these functions:
# nsenter (and taskset) exec the command, so $! is the command itself and can be stopped.
rx() { nsenter --net="/run/netns/$NS_RX" "$@"; }
tx() { nsenter --net="/run/netns/$NS_TX" "$@"; }

stop_pid() { # stops a process this script started and waits for it
	[[ -n $1 ]] || return 0
	kill -TERM "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}

# Stops the receiver and the sender, and deletes the namespaces if this run made them: that
# takes the veth, and any table, set, rule or attachment made in them, with it.
wire_cleanup() {
	stop_pid "$rx_pid"
	stop_pid "$send_pid"
	if [[ -n $ns_made ]]; then
		ip netns del "$NS_RX" 2>/dev/null
		ip netns del "$NS_TX" 2>/dev/null
	fi
	return 0
}

fail() { # the caller returns 1, and the main sequence counts the failure
	echo "bench: $WHO: $1: verdict check failed: $2" >&2
}

skip() {
	echo "bench: $WHO: skipped ($1)" >&2
	exit 77
}

# The checks every workload on the wire makes before it starts.
wire_preflight() { # BENCH_PROGRAM...
	local t
	for t in wire "$@"; do
		[[ -x $build/bench/$t ]] || {
			echo "bench: $WHO: $build/bench/$t is missing; run make first" >&2
			exit 1
		}
	done
	[[ -f $build/bench/bpf/srcdrv.bpf.o && -f $build/bench/bpf/xdp_pass.bpf.o ]] || {
		echo "bench: $WHO: the bench BPF objects are missing; run bench/run.sh" >&2
		exit 1
	}
	(($(nproc) >= 2)) || skip "needs two CPUs: one sends, the other runs the rest"
	for ns in "$NS_TX" "$NS_RX"; do
		[[ -e /run/netns/$ns ]] && skip "namespace $ns exists: another bench run is going on"
	done
	return 0
}

setup_namespaces() {
	ns_made=1 # wire_preflight refused namespaces of these names that were there before
	ip netns add "$NS_TX" && ip netns add "$NS_RX" &&
		ip link add "$DEV_TX" netns "$NS_TX" type veth peer name "$DEV_RX" netns "$NS_RX" &&
		ip -n "$NS_TX" addr add 198.51.100.1/24 dev "$DEV_TX" &&
		ip -n "$NS_RX" addr add 198.51.100.2/24 dev "$DEV_RX" || return 1
	# No IPv6: neighbour discovery and MLD would add frames of their own.
	for ns in "$NS_TX" "$NS_RX"; do
		nsenter --net="/run/netns/$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
			net.ipv6.conf.default.disable_ipv6=1 || return 1
		ip -n "$ns" link set lo up || return 1
	done
	ip -n "$NS_TX" link set "$DEV_TX" up && ip -n "$NS_RX" link set "$DEV_RX" up
}

# Starts `wire attach DEV_RX ...` in the receiving namespace and waits for "ready".
start_rx() {
	nsenter --net="/run/netns/$NS_RX" "$wire" --build "$build" attach "$DEV_RX" "$@" \
		>"$work/rx.out" 2>"$work/rx.err" &
	rx_pid=$!
	wait_ready "$work/rx.out" "$rx_pid"
}

wait_ready() { # FILE PID
	for _ in $(seq 100); do
		grep -q '^ready' "$1" && return 0
		kill -0 "$2" 2>/dev/null || break
		sleep 0.1
	done
	echo "bench: $WHO: receiver did not start: $(cat "${1%.out}.err" 2>/dev/null)" >&2
	return 1
}

stop_rx() {
	stop_pid "$rx_pid"
	rx_pid=
}

# /proc/stat ticks, all CPUs: "softirq system user".
ticks() { awk '/^cpu /{print $8, $4, $2}' /proc/stat; }
udp_rcvbuf_errors() { rx awk '/^Udp:/{n++} /^Udp:/ && n==2 {print $6}' /proc/net/snmp; }
# Bytes waiting in the receiver's socket (/proc/net/udp, rx_queue of local port $PORT).
udp_queued() {
	local hex
	hex=$(rx awk -v port="$(printf '%04X' "$PORT")" '$2 ~ ":" port "$" {split($5, q, ":"); print q[2]}' /proc/net/udp)
	[[ -n $hex ]] && echo $((16#$hex))
}
wait_drained() { # until the application has read everything the socket holds
	for _ in $(seq 100); do
		[[ $(udp_queued) == 0 ]] && return 0
		sleep 0.1
	done
	echo "bench: $WHO: the user-space receiver did not drain its socket in 10 s" >&2
	return 1
}

# Frames the receiving veth dropped before its XDP program: its ring was full because the
# receiver fell behind (veth counts these as rx_dropped, like a NIC's missed frames).
veth_rx_dropped() { ip -n "$NS_RX" -s link show dev "$DEV_RX" | awk '/RX:/{getline; print $4; exit}'; }
mac_of() { ip -n "$1" link show dev "$2" | awk '/link\/ether/{print $2}'; } # NS DEV
rx_mac() { mac_of "$NS_RX" "$DEV_RX"; }

# live_send FRAMES DURING CMD...: runs the sender CMD (bench_live.h) in the sending namespace
# on SEND_CPU, and records for the run: ticks before and after ($t0, $t1), the time of the
# send call ($send_ns) and its CLOCK_REALTIME start and end ($send_start, $send_end, ns), and
# how many frames arrived at the receiving program ($arrived) and were lost before it
# ($lost). DURING is a command run once the sender says it is sending, while $send_pid runs
# (":" for nothing); it must return by the time the sender has ended. 1 unless the sender sent
# FRAMES frames.
live_send() {
	local frames=$1 during=$2 d0 rc
	shift 2
	d0=$(veth_rx_dropped)
	t0=$(ticks)
	nsenter --net="/run/netns/$NS_TX" taskset -c "$SEND_CPU" "$@" >"$work/send.out" 2>&1 &
	send_pid=$!
	until grep -q '^sending' "$work/send.out" || ! kill -0 "$send_pid" 2>/dev/null; do
		sleep 0.01
	done
	"$during"
	wait "$send_pid"
	rc=$?
	send_pid=
	t1=$(ticks)
	read -r sent send_ns send_start send_end < <(awk '/^sent /{print $2, $4, $6, $8}' "$work/send.out")
	if ((rc != 0)) || [[ $sent != "$frames" ]]; then
		echo "bench: $WHO: sender: $(tr '\n' ' ' <"$work/send.out")" >&2
		return 1
	fi
	lost=$(($(veth_rx_dropped) - d0))
	arrived=$((frames - lost))
}

# Softirq ticks of the last live_send, and the rate of its send call.
softirq_ticks() { echo $(($(cut -d' ' -f1 <<<"$t1") - $(cut -d' ' -f1 <<<"$t0"))); }
send_rate() { awk -v n="$sent" -v ns="$send_ns" 'BEGIN {printf "%.0f", n * 1e9 / ns}'; }

# Median and range of column COL of a samples file: "median (min-max)".
stat_cell() { # FILE COL DECIMALS
	sort -g -k"$2","$2" "$1" | awk -v c="$2" -v d="$3" '{v[NR]=$c}
		END { m = NR % 2 ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2
		      if (NR == 1) printf "%.*f", d, m; else printf "%.*f (%.*f-%.*f)", d, m, d, v[1], d, v[NR] }'
}
median() { sort -g -k"$2","$2" "$1" | awk -v c="$2" '{v[NR]=$c} END {print NR % 2 ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}'; }
