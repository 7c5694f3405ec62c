#!/usr/bin/env bash
# e2e_jumbo.sh - jumbo frames and big packets with the real xdpband and the real iperf3, in two
# private network namespaces joined by a veth at MTU 9000:
#   1. mode = auto: native attach works at MTU 9000 (the program is multi-buffer aware); a bridge
#      interface, which has no native XDP, falls back to generic mode and the log says why;
#      `xdpban status` shows each interface's mode and MTU;
#   2. iperf3 TCP and UDP in both families through the native program: 0 errors counted;
#   3. mode = skb with BIG TCP (gso/gro max sizes 185000, IPv4 ones too): iperf3 TCP in both
#      families, the program seeing aggregates of over 64 KiB: 0 errors, no ban.
# Everything it creates (namespaces, links, pins, temp directory, daemon, iperf3) is named
# jmb-* and removed at exit, also on failure. It never touches an interface it did not create.
#
# Usage: tests/e2e/e2e_jumbo.sh BUILD_DIR
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
source tests/e2e/e2e_lib.sh

BUILD=$(realpath "${1:-build}")
CASES=("native attach at MTU 9000" "fallback names its reason" "status shows each mode"
	"native tcp ipv4" "native tcp ipv6" "native udp ipv4" "native udp ipv6"
	"skb big tcp ipv6" "skb big tcp ipv4" "skb saw aggregates over 64 KiB")
SECONDS_EACH=2
BIG=185000

skip_all() {
	local c
	for c in "${CASES[@]}"; do e2e_skip "$c" "$1"; done
	exit 0
}

[[ $(id -u) -eq 0 ]] || skip_all "needs root to create namespaces and load XDP programs"
[[ -x $BUILD/xdpband && -x $BUILD/xdpban ]] || skip_all "$BUILD/xdpband is not built"
command -v iperf3 >/dev/null || skip_all "iperf3 is not installed (make deps)"
mountpoint -q /sys/fs/bpf || skip_all "bpffs is not mounted at /sys/fs/bpf"

TAG=$$
NS_S=jmb-$TAG-s NS_R=jmb-$TAG-r
IF_S=jmb${TAG}s IF_R=jmb${TAG}r IF_D=jmb${TAG}d
PIN=/sys/fs/bpf/jmb-e2e-$TAG
TMP=$(mktemp -d /tmp/jmb-e2e.XXXXXX) || exit 1
e2e_defer rm -rf "$TMP"
CONF=$TMP/xdpban.conf SOCK=$TMP/xdpban.sock LOG=$TMP/daemon.log
DAEMON=

# The namespaces go last (e2e_defer is LIFO): the daemon detaches and unpins first.
setup() {
	e2e_netns_add "$NS_S" && e2e_netns_add "$NS_R" || return 1
	e2e_defer rm -rf "$PIN"
	ip link add "$IF_S" netns "$NS_S" mtu 9000 type veth peer name "$IF_R" netns "$NS_R" mtu 9000 &&
		ip -n "$NS_R" link add "$IF_D" mtu 9000 type bridge &&
		ip -n "$NS_S" addr add 192.0.2.2/24 dev "$IF_S" &&
		ip -n "$NS_R" addr add 192.0.2.1/24 dev "$IF_R" &&
		ip -n "$NS_S" addr add 2001:db8:9::2/64 dev "$IF_S" nodad &&
		ip -n "$NS_R" addr add 2001:db8:9::1/64 dev "$IF_R" nodad &&
		ip -n "$NS_S" link set "$IF_S" up && ip -n "$NS_R" link set "$IF_R" up &&
		ip -n "$NS_R" link set "$IF_D" up
}

write_conf() { # $1 = mode, then the interfaces
	local mode=$1
	shift
	cat >"$CONF" <<EOF
[xdp]
interfaces = $(
		IFS=,
		echo "$*"
	)
mode = $mode
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

cli() { "$BUILD/xdpban" --socket "$SOCK" --pin-dir "$PIN" "$@"; }
json() { "$E2E_PY" -c 'import json, sys; d = json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }
answers() { [[ $(cli status --json 2>/dev/null | json 'd["daemon"]' 2>/dev/null) == True ]]; }

start_daemon() {
	echo "== xdpband $1" >>"$LOG"
	write_conf "$@"
	nsenter --net="/run/netns/$NS_R" "$BUILD/xdpband" -c "$CONF" >>"$LOG" 2>&1 &
	DAEMON=$!
	e2e_defer e2e__kill "$DAEMON"
	e2e_wait 300 answers
}

stop_daemon() {
	kill -TERM "$DAEMON" 2>/dev/null && wait "$DAEMON" 2>/dev/null
	DAEMON=
}

# mode_of IFACE: its mode in `xdpban status --json`.
mode_of() { cli status --json | json "[i['mode'] for i in d['interfaces'] if i['name'] == '$1'][0]"; }

stat_of() { cli stats --json | json "d['stats']['$1']['packets']"; }

# no_errors: the program counted no error, dropped nothing as malformed and holds no ban.
no_errors() {
	local e m b
	e=$(stat_of errors) m=$(stat_of drop_malformed)
	b=$(cli bans --json | json 'len(d["bans"])')
	[[ $e == 0 && $m == 0 && $b == 0 ]] && return 0
	E2E_WHY="$E2E_WHY; xdpban counted errors $e, drop_malformed $m, bans $b"
	return 1
}

# transfer NAME IPERF3_ARGS...: one iperf3 run from the sender to the receiver's server; the
# result line goes to stdout, 0 when it moved data with no loss and xdpban counted nothing.
transfer() {
	local name=$1 out rate lost
	shift
	out=$(ip netns exec "$NS_S" iperf3 -J -t "$SECONDS_EACH" "$@" 2>&1)
	read -r rate lost < <("$E2E_PY" -c '
import json, sys
end = json.load(sys.stdin)["end"]
tcp = "sum_received" in end
s = end["sum_received" if tcp else "sum"]
print("%.2f" % (s["bits_per_second"] / 1e9), 0 if tcp else s["lost_packets"])' <<<"$out" 2>/dev/null)
	echo "#   $name: ${rate:-?} Gbit/s received, ${lost:-?} datagrams lost (iperf3)"
	E2E_WHY="iperf3 moved no data: ${out:0:200}"
	[[ -n $rate && $rate != 0.00 ]] || return 1
	E2E_WHY="iperf3: $rate Gbit/s"
	no_errors
}

iperf_server() {
	e2e_bg "$NS_R" "$TMP/iperf3.log" iperf3 -s
	e2e_wait 50 bash -c "ip netns exec $NS_R ss -Hltn 'sport = :5201' | grep -q ."
}

case_native_attach() {
	E2E_WHY="xdpband did not start (log: $(tail -n 3 "$LOG" | tr '\n' ' '))"
	answers || return 1
	e2e_expect "$IF_R mode" native "$(mode_of "$IF_R")" &&
		grep -q "$IF_R: attached in native mode" "$LOG"
}

case_fallback_reason() {
	local line
	line=$(grep "$IF_D: native mode refused" "$LOG")
	echo "#   log: ${line#*: }"
	E2E_WHY="no line names why native mode was refused on $IF_D"
	[[ $line == *"driver bridge, MTU 9000"* && $line == *"falling back to generic (skb) mode"* ]] || return 1
	E2E_WHY="$IF_D did not attach in generic mode"
	grep -q "$IF_D: attached in skb mode" "$LOG" && e2e_expect "$IF_D mode" generic "$(mode_of "$IF_D")"
}

case_status_modes() {
	local text
	text=$(cli status | grep '^interfaces:')
	E2E_WHY="status says '$text'"
	[[ $text == *"$IF_R (native, MTU 9000)"* && $text == *"$IF_D (generic, MTU 9000)"* ]]
}

# set_big NS IFACE: GSO and GRO max sizes of BIG_ on one end, both families. iproute2 6.1 has
# no words for the IPv4 ones (Linux 6.3), so those go by netlink directly.
set_big() {
	ip -n "$1" link set "$2" gso_max_size $BIG gro_max_size $BIG &&
		ip netns exec "$1" "$E2E_PY" - "$2" $BIG <<'EOF'
import socket, struct, sys
IFLA_GSO_IPV4_MAX_SIZE, IFLA_GRO_IPV4_MAX_SIZE = 63, 64  # linux/if_link.h, 6.3 and later
RTM_NEWLINK, NLM_F_REQUEST, NLM_F_ACK = 16, 1, 4
name, size = sys.argv[1], int(sys.argv[2])
body = struct.pack("=BxHiII", socket.AF_UNSPEC, 0, socket.if_nametoindex(name), 0, 0)
body += b"".join(struct.pack("=HHI", 8, t, size) for t in (IFLA_GSO_IPV4_MAX_SIZE, IFLA_GRO_IPV4_MAX_SIZE))
s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
s.send(struct.pack("=IHHII", 16 + len(body), RTM_NEWLINK, NLM_F_REQUEST | NLM_F_ACK, 1, 0) + body)
err = struct.unpack("=i", s.recv(4096)[16:20])[0]
sys.exit(f"netlink: {name}: IPv4 GSO/GRO sizes: {-err}" if err else 0)
EOF
}

# aggregates_seen: the bytes per passed packet show aggregates of over 64 KiB reached it.
case_aggregates_seen() {
	local avg
	avg=$(cli stats --json | json 'd["stats"]["passed"]["bytes"] // max(1, d["stats"]["passed"]["packets"])')
	echo "#   skb mode: $avg bytes per passed packet on average"
	E2E_WHY="$avg bytes per passed packet: no aggregate over 64 KiB reached the program"
	((avg > 65535))
}

if ! setup; then
	for c in "${CASES[@]}"; do e2e_fail "$c" "cannot create the namespaces: ${E2E_WHY:-ip failed}"; done
	exit 1
fi
iperf_server || {
	for c in "${CASES[@]}"; do e2e_fail "$c" "iperf3 -s did not listen"; done
	exit 1
}

start_daemon auto "$IF_R" "$IF_D"
e2e_case "native attach at MTU 9000" case_native_attach
e2e_case "fallback names its reason" case_fallback_reason
e2e_case "status shows each mode" case_status_modes
e2e_case "native tcp ipv4" transfer "tcp ipv4, MTU 9000, native" -c 192.0.2.1
e2e_case "native tcp ipv6" transfer "tcp ipv6, MTU 9000, native" -c 2001:db8:9::1
e2e_case "native udp ipv4" transfer "udp ipv4, MTU 9000, native" -u -b 300M -l 8900 -c 192.0.2.1
e2e_case "native udp ipv6" transfer "udp ipv6, MTU 9000, native" -u -b 300M -l 8900 -c 2001:db8:9::1
stop_daemon

# BIG TCP in generic mode, back at the default MTU, where the aggregates are the stack's.
ip -n "$NS_S" link set "$IF_S" mtu 1500 && ip -n "$NS_R" link set "$IF_R" mtu 1500 &&
	set_big "$NS_S" "$IF_S" && set_big "$NS_R" "$IF_R" ||
	echo "#   could not set the BIG TCP sizes: the skb cases will say so"
start_daemon skb "$IF_R"
e2e_case "skb big tcp ipv6" transfer "tcp ipv6, gso/gro 185000, skb" -c 2001:db8:9::1
e2e_case "skb big tcp ipv4" transfer "tcp ipv4, gso/gro 185000, skb" -c 192.0.2.1
e2e_case "skb saw aggregates over 64 KiB" case_aggregates_seen
stop_daemon
e2e_finish
