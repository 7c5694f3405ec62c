#!/usr/bin/env bash
# e2e_probe.sh - the probe class end to end: a protected host serves HTTP on its one
# open TCP port and runs xdpband with `[ports] open-tcp` and `open-udp`; the other side of its
# veth holds an HTTP client, two scanners running the real nmap, and the servers the host
# itself queries (the real dnsmasq, a python3 http.server).
#   config_in_force           status shows the open ports; nothing counted yet
#   open_and_bound_not_probes a client's HTTP requests to the open port, a datagram to an open
#                             UDP port nothing listens on, and one to a UDP port not open but
#                             bound by a socket of the host: none counted
#   syn_scan_banned           nmap -sS over 200 closed ports: the scanner is banned at its 11th
#                             probe (class probe), nmap saw 11 closed ports, every later SYN was
#                             dropped as banned
#   udp_scan_banned           nmap -sU over 30 closed ports (high ones, where nmap has no
#                             payloads: one datagram a port) from another address: the same
#   client_works_after        the client's HTTP requests still succeed, and it was never counted
#   own_queries_not_counted   the host's own DNS queries to dnsmasq (answers from port 53 to its
#                             ephemeral ports) and its own HTTP connections (SYN-ACKs): all
#                             answered, the server's address has no count, class_probe unchanged
# nmap runs with --ttl 64: by default it picks a random TTL per scan packet, and the spoof
# defence (mode hop) then disputes the source instead of banning it.
# Uses the daemon's helpers of tests/e2e/e2e_lib.sh; every namespace, daemon, process, pin and file it
# makes is removed by the cleanup of tests/e2e/e2e_lib.sh, also on failure. Documentation
# addresses only; it never touches an interface it did not create.
#
# Usage: tests/e2e/e2e_probe.sh BUILD_DIR
# shellcheck disable=SC2317 # the cases are called below
set -uo pipefail
# shellcheck source=tests/e2e/e2e_lib.sh
source "$(dirname "$0")/e2e_lib.sh"
cd "$(dirname "$0")/../.." || exit 1

CASES=(config_in_force open_and_bound_not_probes syn_scan_banned udp_scan_banned
	stock_nmap_disputes_itself stock_nmap_banned_spoof_off client_works_after
	own_queries_not_counted)
xbd_require "${CASES[@]}"
command -v nmap >/dev/null || xbd_skip_all "nmap is not installed (make deps)" "${CASES[@]}"
command -v dnsmasq >/dev/null || xbd_skip_all "dnsmasq is not installed (make deps: dnsmasq-base)" "${CASES[@]}"

tag=pr$$
NS_H=xbd-$tag-h NS_O=xbd-$tag-o IF_H=xbd${tag}h IF_O=xbd${tag}o
HOST=192.0.2.1 SCANNER=192.0.2.66 SCANNER_U=192.0.2.67 CLIENT=192.0.2.11 SERVER=192.0.2.53
SCANNER_R=192.0.2.68 SCANNER_OFF=192.0.2.69 # stock nmap: a random TTL on every packet
WEB=8080 BOUND_UDP=5000 SERVER_WEB=8000 NAME=www.example.test ANSWER=203.0.113.7
QUERIES=20

# --- topology: protected host <-> the others ------------------------------------------------------

setup() {
	XBD_TMP=$(mktemp -d /tmp/xbd-e2e.XXXXXX) || return 1
	XBD_NS_S=$NS_O XBD_NS_R=$NS_H XBD_PIN=/sys/fs/bpf/xbd-e2e-$tag
	XBD_SOCK=$XBD_TMP/xdpban.sock XBD_CONF=$XBD_TMP/xdpban.conf XBD_LOG=$XBD_TMP/daemon.log
	e2e_defer xbd_cleanup # kills the daemon, removes the pins and the temp directory
	install -m 755 "$XBD_BUILD/xdpband" "$XBD_BUILD/xdpban" "$XBD_TMP/" || return 1
	XBD_BIN=$XBD_TMP
	local ns addr
	for ns in "$NS_H" "$NS_O"; do
		e2e_netns_add "$ns" || return 1
		# IPv4 only: every frame the data path sees is ours.
		ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
			net.ipv6.conf.default.disable_ipv6=1 || return 1
	done
	# Every closed UDP port answers (not 6 a second): what nmap sees is what passed.
	ip netns exec "$NS_H" sysctl -qw net.ipv4.icmp_ratelimit=0 &&
		e2e_veth_add "$NS_H" "$IF_H" "$NS_O" "$IF_O" &&
		ip -n "$NS_H" addr add "$HOST/24" dev "$IF_H" || return 1
	for addr in "$SCANNER" "$SCANNER_U" "$CLIENT" "$SERVER" "$SCANNER_R" "$SCANNER_OFF"; do
		ip -n "$NS_O" addr add "$addr/24" dev "$IF_O" || return 1
	done
}

write_conf() {
	cat >"$XBD_CONF" <<EOF
# written by $(basename "$0"): the defaults but for the paths and the open ports
[xdp]
interfaces = $IF_H
pin-dir = $XBD_PIN
detach-on-exit = yes
[ports]
open-tcp = 443, $WEB
open-udp = 53, 6000-6010
[control]
socket = $XBD_SOCK
[metrics]
listen = off
[state]
file = off
EOF
}

# The host's web server, a UDP socket of its own on a port not listed, and on the other side
# the DNS and web servers the host itself uses.
start_services() {
	mkdir -p "$XBD_TMP/www" && echo "xdpban e2e_probe" >"$XBD_TMP/www/index.html" || return 1
	e2e_bg "$NS_H" "$XBD_TMP/web.log" "$XBD_PY" -m http.server "$WEB" --bind "$HOST" \
		--directory "$XBD_TMP/www"
	e2e_bg "$NS_H" "$XBD_TMP/udp.log" "$XBD_PY" tests/tools/xb_udp_count.py "$BOUND_UDP" \
		"$XBD_TMP/udp.seen" "$XBD_TMP/udp.ready" "$HOST"
	e2e_bg "$NS_O" "$XBD_TMP/server-web.log" "$XBD_PY" -m http.server "$SERVER_WEB" \
		--bind "$SERVER" --directory "$XBD_TMP/www"
	e2e_bg "$NS_O" "$XBD_TMP/dnsmasq.log" dnsmasq --keep-in-foreground --conf-file=/dev/null \
		--no-resolv --no-hosts --bind-interfaces --listen-address="$SERVER" --port=53 \
		--pid-file= --user=nobody --address="/$NAME/$ANSWER" --log-queries --log-facility=-
	e2e_wait 100 listens "$NS_H" -t "$WEB" && e2e_wait 100 test -e "$XBD_TMP/udp.ready" &&
		e2e_wait 100 listens "$NS_O" -t "$SERVER_WEB" && e2e_wait 100 listens "$NS_O" -u 53
}
listens() { [[ -n $(ip netns exec "$1" ss -Hln "$2" "sport = :$3") ]]; }
# seen_from ADDR N: the host's bound UDP socket has received N datagrams from ADDR.
seen_from() { [[ $(grep -cxF "$1" "$XBD_TMP/udp.seen" 2>/dev/null) == "$2" ]]; }


# http NS SRC URL COUNT: how many of COUNT requests from SRC got a 200.
http() {
	local i ok=0
	for ((i = 0; i < $4; i++)); do
		[[ $(ip netns exec "$1" curl -s -o /dev/null -w '%{http_code}' --max-time 5 \
			--interface "$2" "$3") == 200 ]] && ok=$((ok + 1))
	done
	echo "$ok"
}
client_http() { http "$NS_O" "$CLIENT" "http://$HOST:$WEB/" "$1"; }

# scan SRC NMAP_ARGS...: nmap from SRC at the host; its output goes to $XBD_TMP/nmap-SRC.
# -Pn: no host discovery (its probes would be probes too), --max-retries 0: one packet a port.
# One TTL for every packet (NMAP_TTL), as zmap and masscan send; empty: nmap's own random one.
NMAP_TTL=(--ttl 64)
scan() {
	local src=$1
	shift
	ip netns exec "$NS_O" timeout 120 nmap -n -Pn -v --reason -T4 --max-retries 0 \
		"${NMAP_TTL[@]}" --send-ip -e "$IF_O" -S "$src" "$@" "$HOST" >"$XBD_TMP/nmap-$src" 2>&1
}
# nmap_sent SRC: the raw packets nmap says it sent; nmap_ports SRC STATE: ports it found so.
nmap_sent() { sed -n 's/^ *Raw packets sent: \([0-9]*\) .*/\1/p' "$XBD_TMP/nmap-$1"; }
nmap_ports() {
	local n
	n=$(grep -cE "^[0-9]+/(tcp|udp) +$2 " "$XBD_TMP/nmap-$1")
	if ((n == 0)); then # nmap folds the most common states into one line
		n=$(sed -n "s/^Not shown: .*\b\([0-9]\+\) $2 \(tcp\|udp\) port.*/\1/p" "$XBD_TMP/nmap-$1")
	fi
	echo "${n:-0}"
}

# --- cases ---------------------------------------------------------------------------------------

case_config() {
	local ports
	ports=$(xbd_cli status --json | xbd_json '(d["ports"]["open_tcp"], d["ports"]["open_udp"], d["ports"]["probe_icmp"])' 2>&1)
	if [[ $ports != "(['443', '$WEB'], ['53', '6000-6010'], False)" ]]; then
		xbd_fail config_in_force "status --json ports (open_tcp, open_udp, probe_icmp): $ports"
	elif [[ $(xbd_stat errors) != 0 || $(xbd_stat class_probe) != 0 ]]; then
		xbd_fail config_in_force "errors $(xbd_stat errors), class_probe $(xbd_stat class_probe) before any traffic"
	else
		xbd_pass config_in_force
	fi
}

case_open_and_bound() {
	local ok seen
	ok=$(client_http 5)
	ip netns exec "$NS_O" "$XBD_PY" tests/tools/xb_send.py udp "$CLIENT" "$HOST" 53 3
	ip netns exec "$NS_O" "$XBD_PY" tests/tools/xb_send.py udp "$CLIENT" "$HOST" "$BOUND_UDP" 3
	e2e_wait 50 seen_from "$CLIENT" 3
	seen=$(grep -cxF "$CLIENT" "$XBD_TMP/udp.seen")
	if [[ $ok != 5 ]]; then
		xbd_fail open_and_bound_not_probes "$ok of 5 HTTP requests to the open port succeeded"
	elif [[ $seen != 3 ]]; then
		xbd_fail open_and_bound_not_probes "the bound UDP socket received $seen of 3 datagrams"
	elif ! xbd_untouched "$CLIENT" || [[ $(xbd_stat class_probe) != 0 ]]; then
		xbd_fail open_and_bound_not_probes "class_probe $(xbd_stat class_probe); client $(xbd_cli query "$CLIENT" --json)"
	else
		xbd_pass open_and_bound_not_probes
	fi
}

# scanned NAME SRC CLOSED_STATE PROBE0 DROP0 CREATED0: the checks after a scan from SRC.
scanned() {
	local name=$1 src=$2 state=$3 probes dropped sent seen
	probes=$(xbd_stat_delta class_probe "$4") dropped=$(xbd_stat_delta drop_banned "$5")
	sent=$(nmap_sent "$src") seen=$(nmap_ports "$src" "$state")
	echo "#   nmap from $src: sent $sent, $seen $state; xdpban: class_probe +$probes, drop_banned +$dropped"
	if ! xbd_banned "$src"; then
		xbd_fail "$name" "not banned: $(xbd_cli query "$src" --json); nmap: $(tail -n 4 "$XBD_TMP/nmap-$src" | tr '\n' ' ')"
	elif [[ $(xbd_ban_of "$src") != "11 errors" || $(xbd_ban_classes "$src") != probe ]]; then
		xbd_fail "$name" "its ban: '$(xbd_ban_of "$src")', classes '$(xbd_ban_classes "$src")'"
	elif [[ $probes != 11 || $(xbd_stat_delta bans_created "$6") != 1 ]]; then
		xbd_fail "$name" "class_probe +$probes, bans_created +$(xbd_stat_delta bans_created "$6")"
	elif [[ $seen != 11 ]]; then
		xbd_fail "$name" "nmap found $seen ports $state, not the 11 answered before the ban"
	elif ! [[ $sent =~ ^[0-9]+$ ]] || ((sent != probes + dropped)); then
		xbd_fail "$name" "nmap sent '$sent' packets: not the 11 probes and the $dropped dropped as banned"
	else
		xbd_pass "$name"
	fi
}

case_scan() { # NAME SRC CLOSED_STATE NMAP_ARGS...
	local name=$1 src=$2 state=$3 p d c
	shift 3
	p=$(xbd_stat class_probe) d=$(xbd_stat drop_banned) c=$(xbd_stat bans_created)
	scan "$src" "$@"
	xbd_wait_until xbd_banned "$src"
	scanned "$name" "$src" "$state" "$p" "$d" "$c"
}

# Stock nmap gives each packet a random TTL (37 to 59): under the default spoof mode its first
# probe sets the reference, one that disagrees disputes the source, and the rest are suspect
# (docs/datapath.md, section 9). No ban, and every probe passed to the kernel's answer.
case_stock_nmap() {
	local p s sent closed
	p=$(xbd_stat class_probe) s=$(xbd_stat errors_suspect)
	NMAP_TTL=() scan "$SCANNER_R" -sS -p 1-200
	sent=$(nmap_sent "$SCANNER_R") closed=$(nmap_ports "$SCANNER_R" closed)
	echo "#   stock nmap from $SCANNER_R: sent $sent, $closed closed; class_probe +$(xbd_stat_delta class_probe "$p"), errors_suspect +$(xbd_stat_delta errors_suspect "$s"), count $(xbd_query "$SCANNER_R" 'd["count"]')"
	if xbd_banned "$SCANNER_R"; then
		xbd_fail stock_nmap_disputes_itself "banned: $(xbd_cli query "$SCANNER_R" --json)"
	elif [[ $(xbd_query "$SCANNER_R" 'd["disputed"]') != True ]]; then
		xbd_fail stock_nmap_disputes_itself "not disputed: $(xbd_cli query "$SCANNER_R" --json)"
	elif [[ $(xbd_stat_delta class_probe "$p") != "$sent" || $closed != "$sent" ]]; then
		xbd_fail stock_nmap_disputes_itself "nmap sent $sent, found $closed closed; class_probe +$(xbd_stat_delta class_probe "$p")"
	elif (($(xbd_stat_delta errors_suspect "$s") < sent - 11)); then
		xbd_fail stock_nmap_disputes_itself "errors_suspect +$(xbd_stat_delta errors_suspect "$s") of $sent probes"
	else
		xbd_pass stock_nmap_disputes_itself
	fi
}

# With the spoof defence off, every probe counts: the same stock scan is banned at its 11th.
case_stock_nmap_off() {
	local p d c out
	if ! out=$(xbd_cli set spoof off 2>&1); then
		xbd_fail stock_nmap_banned_spoof_off "xdpban set spoof off: $out"
		return
	fi
	p=$(xbd_stat class_probe) d=$(xbd_stat drop_banned) c=$(xbd_stat bans_created)
	NMAP_TTL=() scan "$SCANNER_OFF" -sS -p 1-200
	xbd_wait_until xbd_banned "$SCANNER_OFF"
	scanned stock_nmap_banned_spoof_off "$SCANNER_OFF" closed "$p" "$d" "$c"
	xbd_cli set spoof hop >/dev/null
}

case_client_after() {
	local ok
	ok=$(client_http 5)
	if [[ $ok != 5 ]]; then
		xbd_fail client_works_after "$ok of 5 HTTP requests after the scans succeeded"
	elif ! xbd_untouched "$CLIENT"; then
		xbd_fail client_works_after "client $(xbd_cli query "$CLIENT" --json)"
	else
		xbd_pass client_works_after
	fi
}

case_own_queries() {
	local probes dns web
	probes=$(xbd_stat class_probe)
	dns=$(ip netns exec "$NS_H" "$XBD_PY" tests/tools/xb_dns.py query "$HOST" "$SERVER" "$NAME" "$QUERIES")
	web=$(http "$NS_H" "$HOST" "http://$SERVER:$SERVER_WEB/" "$QUERIES")
	echo "#   the host's own: DNS '$dns' (answers, last address), HTTP $web of $QUERIES; dnsmasq logged $(grep -c "$NAME is $ANSWER" "$XBD_TMP/dnsmasq.log") replies"
	if [[ $dns != "$QUERIES $ANSWER" || $web != "$QUERIES" ]]; then
		xbd_fail own_queries_not_counted "DNS answers '$dns', HTTP $web, not $QUERIES each"
	elif ! xbd_untouched "$SERVER"; then
		xbd_fail own_queries_not_counted "the server: $(xbd_cli query "$SERVER" --json)"
	elif [[ $(xbd_stat_delta class_probe "$probes") != 0 ]]; then
		xbd_fail own_queries_not_counted "class_probe +$(xbd_stat_delta class_probe "$probes") from the answers"
	else
		xbd_pass own_queries_not_counted
	fi
}

# --- run -----------------------------------------------------------------------------------------

started=$(date +%s%N)
if ! setup; then
	xbd_fail_all "cannot create the test namespaces" "${CASES[@]}"
fi
write_conf
if ! start_services; then
	xbd_fail_all "a server did not start: $(tail -qn 2 "$XBD_TMP"/*.log | tr '\n' ' ')" "${CASES[@]}"
fi
if ! xbd_start; then
	xbd_fail_all "the daemon did not start" "${CASES[@]}"
fi
case_config
case_open_and_bound
case_scan syn_scan_banned "$SCANNER" closed -sS -p 1-200
case_scan udp_scan_banned "$SCANNER_U" closed -sU -p 40000-40029
case_stock_nmap
case_stock_nmap_off
case_client_after
case_own_queries
xbd_stop TERM
echo "#   e2e_probe ran for $((($(date +%s%N) - started) / 1000000)) ms"
((E2E_FAILED == 0))
