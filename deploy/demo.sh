#!/usr/bin/env bash
# demo.sh - `make demo`: xdpban at work on a private network, explained as it goes.
#
# Builds two network namespaces joined by a veth, starts build/xdpband on the server side with
# the sample config deploy/xdpban.conf (pin directory, socket, state file, metrics and lists
# moved into temporary places), sends good, denied and malformed traffic, and shows what the
# daemon did and why. Everything it creates is named xbdemo-* and removed at exit, also on
# failure or Ctrl-C. It never touches a real interface or a real xdpban installation.
#
# Usage: deploy/demo.sh BUILD_DIR
set -uo pipefail

BUILD=$(realpath "${1:-build}")
cd "$(dirname "$0")/.." || exit 1
PY=/usr/bin/python3 # Debian's python3, which has scapy

NS_NET=xbdemo-$$-net NS_SRV=xbdemo-$$-srv # "the internet" and "your server"
IF_NET=xbdemo$$n IF_SRV=xbdemo$$s
PIN=/sys/fs/bpf/xbdemo-$$
TMP=
DAEMON=

if [[ -t 1 ]]; then BOLD=$'\e[1m' OFF=$'\e[0m'; else BOLD='' OFF=''; fi
say() { fold -s -w 96 <<<"$*"; }
step() { printf '\n%s== %s ==%s\n' "$BOLD" "$*" "$OFF"; }
indent() { sed 's/^/    /'; }
die() {
	echo "demo: $*" >&2
	exit 1
}

cleanup() {
	if [[ -n $DAEMON ]] && kill -0 "$DAEMON" 2>/dev/null; then
		kill -TERM "$DAEMON" && wait "$DAEMON" 2>/dev/null
	fi
	ip netns del "$NS_NET" 2>/dev/null
	ip netns del "$NS_SRV" 2>/dev/null
	rm -rf "$PIN"
	[[ -n $TMP ]] && rm -rf "$TMP"
}

preflight() {
	[[ $(id -u) -eq 0 ]] || die "needs root (it creates network namespaces and loads BPF): sudo make demo"
	[[ -x $BUILD/xdpband && -x $BUILD/xdpban ]] || die "$BUILD/xdpband and $BUILD/xdpban are not built: run make"
	$PY -c 'import scapy' 2>/dev/null || die "python3-scapy is missing: run make deps"
	command -v ping >/dev/null || die "ping is missing: apt-get install iputils-ping"
	mountpoint -q /sys/fs/bpf || die "bpffs is not mounted: run make deps"
}

make_network() {
	ip netns add "$NS_NET" && ip netns add "$NS_SRV" &&
		ip link add "$IF_NET" netns "$NS_NET" type veth peer name "$IF_SRV" netns "$NS_SRV" || return 1
	local ns
	for ns in "$NS_NET:$IF_NET" "$NS_SRV:$IF_SRV"; do
		ip netns exec "${ns%%:*}" sysctl -qw "net.ipv6.conf.${ns#*:}.disable_ipv6=1" || return 1
	done
	ip -n "$NS_NET" addr add 192.0.2.10/24 dev "$IF_NET" &&
		ip -n "$NS_NET" addr add 192.0.2.66/24 dev "$IF_NET" &&
		ip -n "$NS_NET" addr add 198.51.100.7/24 dev "$IF_NET" &&
		ip -n "$NS_SRV" addr add 192.0.2.1/24 dev "$IF_SRV" &&
		ip -n "$NS_SRV" addr add 198.51.100.1/24 dev "$IF_SRV" &&
		ip -n "$NS_NET" link set "$IF_NET" up && ip -n "$NS_SRV" link set "$IF_SRV" up &&
		ip -n "$NS_SRV" link set lo up
}

# The sample config, with the places that would touch a real installation moved away.
make_config() {
	echo "198.51.100.0/24    # a range we never want to hear from" >"$TMP/deny.list"
	sed -e "s|^# interfaces = .*|interfaces = $IF_SRV|" \
		-e "s|^# pin-dir = .*|pin-dir = $PIN|" \
		-e "s|^# deny = [^ ]*$|deny = $TMP/deny.list|" \
		-e "s|^# socket = .*|socket = $TMP/xdpban.sock|" \
		-e "s|^# listen = .*|listen = 127.0.0.1:19433|" \
		-e "s|^# file = .*|file = $TMP/state|" \
		deploy/xdpban.conf >"$TMP/xdpban.conf"
	[[ $(diff deploy/xdpban.conf "$TMP/xdpban.conf" | grep -c '^>') == 6 ]] ||
		die "deploy/xdpban.conf no longer has the keys this demo adjusts"
}

cli() { "$BUILD/xdpban" --socket "$TMP/xdpban.sock" --pin-dir "$PIN" "$@"; }

start_daemon() {
	nsenter --net="/run/netns/$NS_SRV" "$BUILD/xdpband" -c "$TMP/xdpban.conf" >"$TMP/daemon.log" 2>&1 &
	DAEMON=$!
	for ((i = 0; i < 100; i++)); do
		cli status --json 2>/dev/null | grep -q '"daemon": *true' && return 0
		kill -0 "$DAEMON" 2>/dev/null || break
		sleep 0.1
	done
	cat "$TMP/daemon.log" >&2
	die "xdpband did not start (its log is above)"
}

# ping_from SRC DST: three pings; prints ping's summary line.
ping_from() {
	ip netns exec "$NS_NET" ping -n -c 3 -i 0.2 -W 1 -I "$1" "$2" 2>&1 | grep 'packets transmitted'
}

send_synfin() {
	ip netns exec "$NS_NET" $PY - "$IF_NET" "$1" "$2" <<'EOF' 2>/dev/null
import sys
from scapy.all import Ether, IP, TCP, conf, get_if_hwaddr, sendp
conf.verb = 0
iface, src, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
frame = Ether(src=get_if_hwaddr(iface), dst="ff:ff:ff:ff:ff:ff") / IP(src=src, dst="192.0.2.1") / TCP(sport=40000, dport=80, flags="SF")
sendp([frame] * count, iface=iface)
EOF
}

stat() { cli stats --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["stats"][sys.argv[1]]["packets"])' "$1"; }

wait_banned() {
	for ((i = 0; i < 100; i++)); do
		cli query "$1" --json | grep -q '"banned": *true' && return 0
		sleep 0.1
	done
	return 1
}

trap cleanup EXIT
trap 'exit 130' INT TERM
preflight
TMP=$(mktemp -d /tmp/xbdemo.XXXXXX) || die "cannot create a temporary directory"

step "The network"
make_network || die "cannot create the demo namespaces"
cat <<EOF
Two network namespaces, joined by a virtual cable (a veth pair). Nothing leaves them.

    $NS_NET  ("the internet")                       $NS_SRV  ("your server")
    192.0.2.10    a well-behaved client    ---veth--->   192.0.2.1, 198.51.100.1
    192.0.2.66    a client sending broken packets        xdpband guards $IF_SRV
    198.51.100.7  a client from a range we deny

EOF
say "All addresses are from the ranges reserved for documentation (RFC 5737)."

step "Starting xdpband on the server"
make_config
say "xdpband reads deploy/xdpban.conf, the commented sample config, with only these lines changed so that it cannot touch a real installation (maps, socket, state file in temporary places, metrics on the server namespace's own loopback):"
diff deploy/xdpban.conf "$TMP/xdpban.conf" | grep '^>' | sed 's/^> /    /'
say "Everything else is the default: a source is banned when it makes more than 10 errors in a day; a ban lasts a day; malformed packets are dropped even before that."
start_daemon
echo "  What the daemon logged:"
indent <"$TMP/daemon.log"
say "It created its maps (the tables of counters and bans) and pinned them under the pin directory, so that they outlive the process. It attached the XDP program to $IF_SRV in native mode: the program runs in the driver, on every packet, before the kernel's network stack. (xdpband asks libxdp for its dispatcher, with the program at priority 10, so that other XDP programs can run next to it. On kernels where the dispatcher cannot load, such as 6.18, which refuses its freplace program with EPERM, libxdp attaches the program directly instead; the 'attached' line above says which way it went.)"

step "1. Good traffic: 192.0.2.10 pings the server"
ping_from 192.0.2.10 192.0.2.1 | indent
say "Every ping is answered: the XDP program looked at each packet, found a well-formed packet from a source with no ban and no deny entry, and passed it to the kernel."

step "2. A denied range: 198.51.100.7 pings the server"
ping_from 198.51.100.7 198.51.100.1 | indent
say "No answer: 198.51.100.0/24 is in the deny list $TMP/deny.list, so XDP drops these packets before the kernel's network stack even sees them. The server never knew they came."

step "3. Malformed traffic: 192.0.2.66 sends 12 TCP packets with both SYN and FIN set"
send_synfin 192.0.2.66 12
wait_banned 192.0.2.66 || die "192.0.2.66 was not banned; see $TMP/daemon.log"
say "A TCP packet cannot ask to open (SYN) and close (FIN) a connection at once: scanners and broken stacks send such packets. Each one is an error against 192.0.2.66 and is dropped. Errors 1 to 10 stay under the limit of 10; the 11th goes over it, and the source is banned. The daemon logged the ban:"
grep 'ban 192.0.2.66' "$TMP/daemon.log" | indent
ping_from 192.0.2.66 192.0.2.1 | indent
say "Even well-formed pings from 192.0.2.66 now go unanswered: while the ban lasts, XDP drops everything from that address. The well-behaved client is not affected:"
ping_from 192.0.2.10 192.0.2.1 | indent

step "xdpban status"
cli status | indent
passed=$(stat passed) deny=$(stat drop_deny) malformed=$(stat drop_malformed)
banned=$(stat drop_banned) errors=$(stat errors) created=$(stat bans_created)
cat <<EOF
How to read it:
  passed $passed: the 6 answered pings from 192.0.2.10, plus $((passed - 6)) ARP packets that let both
      sides find each other's hardware address (ARP is never filtered).
  drop_deny $deny: the 3 pings from the denied range.
  drop_malformed $malformed: the broken packets from 192.0.2.66 up to the one that got it banned.
  drop_banned $banned: what 192.0.2.66 sent after its ban: the 12th broken packet and its 3 pings.
  errors $errors and bans_created $created: the errors counted, and the one ban they caused.
EOF

step "xdpban bans"
cli bans | indent
say "192.0.2.66 is banned for its errors; LEFT is the time until the ban ends. When it does, the source starts over with a clean count. If it is banned again within a week of that, the ban lasts twice as long, then four times (escalation, as fail2ban's bantime.increment does). Lift a ban early with 'xdpban unban 192.0.2.66'."

step "Metrics for Prometheus"
nsenter --net="/run/netns/$NS_SRV" curl -s http://127.0.0.1:19433/metrics |
	grep -E '^xdpban_(packets_total\{reason="(passed|drop_deny|drop_malformed|drop_banned)"\}|banned_sources\{table="(bans|policy)"\}|bans_created_total) ' | indent
say "The same counters as Prometheus scrapes them (an ARP packet may have passed since), served at http://127.0.0.1:9433/metrics in a real installation."

step "Stopping"
kill -TERM "$DAEMON" && wait "$DAEMON"
DAEMON=
tail -n 2 "$TMP/daemon.log" | indent
say "On SIGTERM the daemon saved its bans to the state file and left the program attached, its maps pinned: the interface stays filtered with the last state until the next xdpband takes it over, and 'xdpband --detach' would remove both. The demo now deletes its namespaces (and the attachment with them), its pins and temporary files."
