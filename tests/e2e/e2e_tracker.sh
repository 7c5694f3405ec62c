#!/usr/bin/env bash
# e2e_tracker.sh - the protocol guard end to end: a tracker host runs the real
# opentracker (Debian's, whitelisting, IPv4) on UDP port 6969, protected by xdpband with
# `[ports] guard = 6969/bep15`; a client host one veth away runs real BitTorrent clients
# (python3-libtorrent) and a junk sender.
#   config_in_force           status shows the guard, and nothing was counted yet
#   clients_get_replies       a seeder and a leecher of 16 torrents, the leecher announcing
#                             each 4 times: every announce answered, every download finished
#                             (it found the seeder through the tracker alone), opentracker
#                             counted them
#   clients_never_counted     their sources have no count and no ban; class_protocol 0
#   junk_reaches_tracker      10 invalid BEP 15 datagrams: counted (10, class protocol), not
#                             banned, and passed to opentracker (protocol errors pass by default)
#   junk_banned_at_11th       the 11th bans; the ban's classes say protocol
#   banned_junk_dropped       its 12th (a valid connect) is dropped as banned: no reply, and
#                             opentracker never saw it, while a client's connect is answered
#   ipv6_junk_banned_per_64   11 invalid datagrams over IPv6: the /64 is banned
# Uses the daemon's helpers of tests/e2e/e2e_lib.sh; every namespace, daemon, process, pin and file it
# makes is removed by the cleanup of tests/e2e/e2e_lib.sh, also on failure. Documentation
# addresses only; it never touches an interface it did not create.
#
# Usage: tests/e2e/e2e_tracker.sh BUILD_DIR
# shellcheck disable=SC2317 # the cases are called below
set -uo pipefail
# shellcheck source=tests/e2e/e2e_lib.sh
source "$(dirname "$0")/e2e_lib.sh"
cd "$(dirname "$0")/../.." || exit 1

CASES=(config_in_force clients_get_replies clients_never_counted junk_reaches_tracker
	junk_banned_at_11th banned_junk_dropped ipv6_junk_banned_per_64)
xbd_require "${CASES[@]}"
command -v opentracker >/dev/null || xbd_skip_all "opentracker is not installed (make deps)" "${CASES[@]}"
$XBD_PY -c 'import libtorrent' 2>/dev/null || xbd_skip_all "python3-libtorrent is not installed (make deps)" "${CASES[@]}"

tag=tr$$
NS_T=xbd-$tag-t NS_C=xbd-$tag-c IF_T=xbd${tag}t IF_C=xbd${tag}c
TRACKER=192.0.2.1 SEEDER=192.0.2.11 LEECHER=192.0.2.12 JUNK=192.0.2.66
TRACKER6=2001:db8:69::1 JUNK6=2001:db8:6a::66 JUNK6_PEER=2001:db8:6a::77 JUNK6_NET=2001:db8:6a::/64
PORT=6969 TORRENTS=16 ROUNDS=2
SEEDER_PID='' SEEN=0 PROTO=0

# --- topology: tracker host <-> client host ------------------------------------------------------

setup() {
	XBD_TMP=$(mktemp -d /tmp/xbd-e2e.XXXXXX) || return 1
	XBD_NS_S=$NS_C XBD_NS_R=$NS_T XBD_PIN=/sys/fs/bpf/xbd-e2e-$tag
	XBD_SOCK=$XBD_TMP/xdpban.sock XBD_CONF=$XBD_TMP/xdpban.conf XBD_LOG=$XBD_TMP/daemon.log
	e2e_defer xbd_cleanup # kills the daemon, removes the pins and the temp directory
	install -m 755 "$XBD_BUILD/xdpband" "$XBD_BUILD/xdpban" "$XBD_TMP/" || return 1
	XBD_BIN=$XBD_TMP
	e2e_netns_add "$NS_T" && e2e_netns_add "$NS_C" || return 1
	# IPv6 on the veth only, without autoconfiguration: the data path sees our frames and
	# neighbour discovery, nothing else. The junk comes from a /64 of its own, reached over
	# the link by a route: one on the tracker's own link would be keyed per address.
	local ns
	for ns in "$NS_T" "$NS_C"; do
		ip netns exec "$ns" sysctl -qw net.ipv6.conf.default.autoconf=0 \
			net.ipv6.conf.default.accept_ra=0 || return 1
	done
	e2e_veth_add "$NS_T" "$IF_T" "$NS_C" "$IF_C" || return 1
	ip -n "$NS_T" addr add "$TRACKER/24" dev "$IF_T" &&
		ip -n "$NS_T" addr add "$TRACKER6/64" dev "$IF_T" nodad &&
		ip -n "$NS_C" addr add "$SEEDER/24" dev "$IF_C" &&
		ip -n "$NS_C" addr add "$LEECHER/24" dev "$IF_C" &&
		ip -n "$NS_C" addr add "$JUNK/24" dev "$IF_C" &&
		ip -n "$NS_C" addr add "$JUNK6/64" dev "$IF_C" nodad &&
		ip -n "$NS_T" route add "$JUNK6_NET" dev "$IF_T" &&
		ip -n "$NS_C" route add 2001:db8:69::/64 dev "$IF_C"
}

write_conf() {
	cat >"$XBD_CONF" <<EOF
# written by $(basename "$0"): the defaults but for the paths and the guard of the tracker
[xdp]
interfaces = $IF_T
pin-dir = $XBD_PIN
detach-on-exit = yes
[ports]
guard = $PORT/bep15
[control]
socket = $XBD_SOCK
[metrics]
listen = off
[state]
file = off
EOF
}

# The tracker: Debian builds opentracker IPv4-only and whitelisting (README.Debian), so the
# torrents' info hashes go into its whitelist; it chroots to its directory and runs as nobody,
# and serves its statistics to its own address only.
start_tracker() {
	local dir=$XBD_TMP/tracker
	mkdir -m 755 "$dir" || return 1
	"$XBD_PY" tests/tools/xb_bittorrent.py make "$XBD_TMP/bt" "udp://$TRACKER:$PORT/announce" \
		"$TORRENTS" >"$dir/whitelist" || return 1
	cat >"$dir/opentracker.conf" <<EOF
listen.tcp $TRACKER:$PORT
listen.udp $TRACKER:$PORT
access.whitelist /whitelist
access.stats $TRACKER
tracker.rootdir $dir
tracker.user nobody
EOF
	e2e_bg "$NS_T" "$XBD_TMP/opentracker.log" opentracker -f "$dir/opentracker.conf"
	e2e_wait 100 udp_listens
}
udp_listens() { [[ -n $(ip netns exec "$NS_T" ss -Hlun "sport = :$PORT") ]]; }

# tracker_udp FIELD: opentracker's own count (stats mode everything, connections/udp): overall
# (every datagram it received), connect, announce.
tracker_udp() {
	ip netns exec "$NS_T" curl -sf "http://$TRACKER:$PORT/stats?mode=everything" |
		sed -n '/<udp>/,/<\/udp>/p' | sed -n "s|.*<$1>\([0-9]*\)</$1>.*|\1|p"
}
tracker_udp_is() { [[ $(tracker_udp "$1") == "$2" ]]; }

in_clients() { ip netns exec "$NS_C" "$@"; }
junk() { in_clients "$XBD_PY" tests/tools/xb_bep15.py junk "$1" "$2" "$PORT" "$3"; }
bep15_connect() { in_clients "$XBD_PY" tests/tools/xb_bep15.py connect "$1" "$TRACKER" "$PORT" 2; }

# --- cases ---------------------------------------------------------------------------------------

case_config() {
	local guards
	guards=$(xbd_cli status --json | xbd_json 'd["ports"]["guards"]' 2>&1)
	if [[ $guards != "['$PORT/bep15']" ]]; then
		xbd_fail config_in_force "status --json ports.guards: $guards"
	elif [[ $(xbd_stat errors) != 0 || $(xbd_stat class_protocol) != 0 ]]; then
		xbd_fail config_in_force "errors $(xbd_stat errors), class_protocol $(xbd_stat class_protocol) before any traffic"
	else
		xbd_pass config_in_force
	fi
}

# A seeder of every torrent, then a leecher of every torrent: each torrent announced when
# added, when downloaded and ROUNDS times more, and each announce answered by the tracker.
case_clients() {
	local result=$XBD_TMP/leech.json out announces
	e2e_bg "$NS_C" "$XBD_TMP/seeder.log" "$XBD_PY" tests/tools/xb_bittorrent.py seed "$SEEDER" \
		6881 "$XBD_TMP/bt" "$XBD_TMP/seeder.ready"
	SEEDER_PID=$!
	if ! e2e_wait 450 test -e "$XBD_TMP/seeder.ready"; then
		xbd_fail clients_get_replies "the seeder got no reply for every torrent: $(tail -n 3 "$XBD_TMP/seeder.log"); $(tracker_state)"
		return
	fi
	# Debian's libtorrent Python binding now and then dies of a signal (a segfault inside the
	# library) on a busy machine; that says nothing of xdpban, so a leecher killed by a signal
	# runs once more, from scratch, and says so. A timeout (124) or an error is not retried.
	local attempt rc
	for attempt in 1 2; do
		rm -rf "$result" "$XBD_TMP/bt/leech" # from scratch: the downloads announce again
		in_clients timeout 60 "$XBD_PY" tests/tools/xb_bittorrent.py leech "$LEECHER" 6882 \
			"$XBD_TMP/bt" "$ROUNDS" "$result" >"$XBD_TMP/leecher.log" 2>&1
		rc=$?
		((rc > 128 && attempt == 1)) || break
		echo "#   the leecher died of signal $((rc - 128)) (libtorrent), xdpban dropped $(xbd_stat drop_banned) banned and $(xbd_stat drop_error) error packets: running it once more"
	done
	out=$(xbd_json '(d["torrents"], d["replies_min"] >= '$((ROUNDS + 2))', d["finished"], d["errors"], d["timed_out"])' <"$result" 2>&1)
	announces=$(tracker_udp announce)
	echo "#   leecher: $(cat "$result" 2>/dev/null); $(tracker_state)"
	if [[ $out != "($TORRENTS, True, $TORRENTS, [], False)" ]]; then
		xbd_fail clients_get_replies "leecher (torrents, every one answered $((ROUNDS + 2)) times, finished, errors, timed out): $out; $(tail -n 2 "$XBD_TMP/leecher.log"); $(tracker_state)"
	elif ! [[ $announces =~ ^[0-9]+$ ]] || ((announces < TORRENTS * (ROUNDS + 3))); then
		xbd_fail clients_get_replies "opentracker counted '$announces' announces, not at least $((TORRENTS * (ROUNDS + 3)))"
	else
		xbd_pass clients_get_replies
	fi
}

# tracker_state: what a failed exchange with the tracker needs explained, in one line: what
# opentracker counted, what xdpban did, what the veth dropped.
tracker_state() {
	local f line=opentracker
	for f in overall connect announce missmatch; do line+=" $f $(tracker_udp $f)"; done
	for f in passed drop_banned drop_error errors; do line+=", $f $(xbd_stat $f)"; done
	line+=", tracker veth rx dropped $(ip -n "$NS_T" -j -s link show dev "$IF_T" |
		xbd_json 'd[0]["stats64"]["rx"]["dropped"]' 2>&1)"
	line+=", client veth rx dropped $(ip -n "$NS_C" -j -s link show dev "$IF_C" |
		xbd_json 'd[0]["stats64"]["rx"]["dropped"]' 2>&1)"
	line+="; tracker host: $(udp_counters "$NS_T"); client host: $(udp_counters "$NS_C")"
	echo "$line"
}

# udp_counters NS: the kernel's UDP counters of a host that are not zero (a datagram lost to
# a full socket buffer shows here, not in xdpban's counts).
udp_counters() {
	ip netns exec "$1" nstat -az 'Udp*' 2>&1 | awk 'NR > 1 && $2 != 0 { printf "%s%s %s", sep, $1, $2; sep = ", " }'
}

case_clients_never_counted() {
	if ! xbd_untouched "$SEEDER" || ! xbd_untouched "$LEECHER"; then
		xbd_fail clients_never_counted "seeder $(xbd_cli query "$SEEDER" --json); leecher $(xbd_cli query "$LEECHER" --json)"
	elif [[ $(xbd_stat class_protocol) != 0 || $(xbd_stat errors) != 0 ]]; then
		xbd_fail clients_never_counted "class_protocol $(xbd_stat class_protocol), errors $(xbd_stat errors) after the clients alone"
	else
		xbd_pass clients_never_counted
	fi
}

# The seeder is stopped first: from here on every datagram opentracker counts is ours.
case_junk_reaches() {
	e2e__kill "$SEEDER_PID" 2>/dev/null
	SEEN=$(tracker_udp overall)
	PROTO=$(xbd_stat class_protocol)
	junk "$JUNK" "$TRACKER" 10
	if ! xbd_wait_until xbd_count_is "$JUNK" 10 || ! xbd_not_banned "$JUNK"; then
		xbd_fail junk_reaches_tracker "after 10 invalid datagrams: $(xbd_cli query "$JUNK" --json)"
	elif [[ $(xbd_stat_delta class_protocol "$PROTO") != 10 ]]; then
		xbd_fail junk_reaches_tracker "class_protocol +$(xbd_stat_delta class_protocol "$PROTO"), not +10"
	elif ! xbd_wait_until tracker_udp_is overall $((SEEN + 10)); then
		xbd_fail junk_reaches_tracker "opentracker received $(($(tracker_udp overall) - SEEN)) of them, not 10"
	else
		xbd_pass junk_reaches_tracker
	fi
}

case_junk_banned() {
	local created
	created=$(xbd_stat bans_created)
	junk "$JUNK" "$TRACKER" 1
	if ! xbd_wait_until xbd_banned "$JUNK"; then
		xbd_fail junk_banned_at_11th "not banned after 11: $(xbd_cli query "$JUNK" --json)"
	elif [[ $(xbd_ban_of "$JUNK") != "11 errors" || $(xbd_ban_classes "$JUNK") != protocol ]]; then
		xbd_fail junk_banned_at_11th "its ban: '$(xbd_ban_of "$JUNK")', classes '$(xbd_ban_classes "$JUNK")'"
	elif [[ $(xbd_stat_delta bans_created "$created") != 1 || $(xbd_stat_delta class_protocol "$PROTO") != 11 ]]; then
		xbd_fail junk_banned_at_11th "bans_created +$(xbd_stat_delta bans_created "$created"), class_protocol +$(xbd_stat_delta class_protocol "$PROTO")"
	elif ! xbd_wait_until tracker_udp_is overall $((SEEN + 11)); then
		xbd_fail junk_banned_at_11th "opentracker received $(($(tracker_udp overall) - SEEN)) datagrams, not 11"
	else
		xbd_pass junk_banned_at_11th
	fi
}

# The 12th is a request opentracker would answer; the client's, right after, is answered, so
# by then opentracker has counted all it was given.
case_banned_dropped() {
	local dropped banned_reply client_reply
	dropped=$(xbd_stat drop_banned)
	banned_reply=$(bep15_connect "$JUNK")
	client_reply=$(bep15_connect "$LEECHER")
	if [[ $banned_reply != none || $client_reply != reply ]]; then
		xbd_fail banned_junk_dropped "connect from the banned $JUNK: '$banned_reply', from $LEECHER: '$client_reply'"
	elif [[ $(xbd_stat_delta drop_banned "$dropped") != 1 ]]; then
		xbd_fail banned_junk_dropped "drop_banned +$(xbd_stat_delta drop_banned "$dropped"), not +1"
	elif [[ $(tracker_udp overall) != $((SEEN + 12)) ]]; then
		xbd_fail banned_junk_dropped "opentracker received $(($(tracker_udp overall) - SEEN)) datagrams, not 11 and the client's"
	elif [[ $(xbd_stat_delta class_protocol "$PROTO") != 11 ]] || ! xbd_untouched "$LEECHER"; then
		xbd_fail banned_junk_dropped "class_protocol +$(xbd_stat_delta class_protocol "$PROTO"); leecher $(xbd_cli query "$LEECHER" --json)"
	else
		xbd_pass banned_junk_dropped
	fi
}

# No tracker listens on IPv6 (Debian's opentracker is IPv4 only): the guard judges the
# datagrams all the same, and bans the sender's /64.
case_ipv6() {
	local proto
	proto=$(xbd_stat class_protocol)
	junk "$JUNK6" "$TRACKER6" 10
	if ! xbd_wait_until xbd_count_is "$JUNK6" 10 || ! xbd_not_banned "$JUNK6"; then
		xbd_fail ipv6_junk_banned_per_64 "after 10: $(xbd_cli query "$JUNK6" --json)"
		return
	fi
	junk "$JUNK6" "$TRACKER6" 1
	if ! xbd_wait_until xbd_banned "$JUNK6_PEER"; then
		xbd_fail ipv6_junk_banned_per_64 "$JUNK6_PEER (same /64) not banned after 11: $(xbd_cli query "$JUNK6" --json)"
	elif [[ $(xbd_ban_classes "$JUNK6_NET") != protocol || $(xbd_stat_delta class_protocol "$proto") != 11 ]]; then
		xbd_fail ipv6_junk_banned_per_64 "bans: $(xbd_cli bans --json); class_protocol +$(xbd_stat_delta class_protocol "$proto")"
	else
		xbd_pass ipv6_junk_banned_per_64
	fi
}

# --- run -----------------------------------------------------------------------------------------

started=$(date +%s%N)
if ! setup; then
	xbd_fail_all "cannot create the test namespaces" "${CASES[@]}"
fi
write_conf
if ! start_tracker; then
	xbd_fail_all "opentracker did not start: $(tail -n 3 "$XBD_TMP/opentracker.log")" "${CASES[@]}"
fi
if ! xbd_start; then
	xbd_fail_all "the daemon did not start" "${CASES[@]}"
fi
case_config
case_clients
case_clients_never_counted
case_junk_reaches
case_junk_banned
case_banned_dropped
case_ipv6
xbd_stop TERM
echo "#   e2e_tracker ran for $((($(date +%s%N) - started) / 1000000)) ms"
((E2E_FAILED == 0))
