#!/usr/bin/env bash
# e2e_allow.sh BUILD - allow-only mode on the wire (docs/datapath.md, "Allow-only mode"):
# xdpband in the receiver namespace with `allow = FILE` (192.0.2.0/24, with a deny entry
# inside) on both veths; the sender namespace has 192.0.2.2 (allowed) on the first and
# 198.51.100.2 (in no allow list) on the second.
#   - a datagram from an allowed source reaches a UDP socket; one from an unlisted source does
#     not, and is counted as drop_not_allowed in `xdpban stats`; a denied source inside the
#     allow list is dropped as drop_deny; a manual prefix ban inside it as well;
#   - a new TCP connection from the unlisted source is not let in (its SYN is not allowed);
#   - connections the host opens to the unlisted address get their replies: a TCP connection
#     and a connected UDP socket; an unconnected UDP socket's reply is dropped (the mode lets
#     only connections through);
#   - `xdpban query` says "not allowed" with the mode, `xdpban lists` shows the allow list and
#     the default layer, the settings line says allow-only mode;
#   - a reload without the allow list ends the mode: the unlisted source gets in.
# Everything it makes (namespaces, daemon, servers, pins, files) is removed on any exit,
# through the daemon helpers' cleanup (tests/e2e/e2e_lib.sh). Needs root; skips without it.
# shellcheck disable=SC2317 # the case functions are called through e2e_case
set -uo pipefail
build=${1:-build}
cd "$(dirname "$0")/../.." || exit 1
source tests/e2e/e2e_lib.sh

CASES=(allowed_source_reaches_the_socket unlisted_source_is_not_allowed deny_inside_allow
	manual_ban_inside_allow new_connection_from_unlisted_refused host_connections_get_replies
	unconnected_udp_reply_dropped cli_shows_the_mode reload_without_allow_ends_the_mode)
xbd_begin allow "${CASES[@]}"
readonly D=$XBD_TMP/allow RECV=$XBD_TMP/received UNLISTED=198.51.100.2

allow_conf() {
	xbd_write_conf "[lists]" "$@" "[metrics]" "listen = off"
}

# bg NS NAME TOOL ARGS...: a tool of tests/tools in the background in NS, until the test ends.
bg() { e2e_bg "$1" "$XBD_TMP/$2.log" "$XBD_PY" "tests/tools/$3" "${@:4}"; }
ready() { [[ -e $XBD_TMP/$1.ready ]]; }

# The receiver's UDP socket on port 5353 of both its addresses (xb_udp_count.py logs each
# datagram's source), echo servers of the unlisted host (TCP 7000, UDP 7001), and a TCP
# service of the receiver (7002).
start_servers() {
	bg "$XBD_NS_R" receiver xb_udp_count.py 5353 "$RECV" "$XBD_TMP/udp.ready" 192.0.2.1 198.51.100.1
	bg "$XBD_NS_S" tcp-echo xb_tcp_flow.py server $UNLISTED 7000 "$XBD_TMP/tcp.ready"
	bg "$XBD_NS_S" udp-echo xb_udp_echo.py server $UNLISTED 7001 "$XBD_TMP/echo.ready"
	bg "$XBD_NS_R" service xb_tcp_flow.py server 198.51.100.1 7002 "$XBD_TMP/service.ready"
	e2e_wait 100 ready udp && e2e_wait 100 ready tcp && e2e_wait 100 ready echo &&
		e2e_wait 100 ready service
}

# send_real SRC DST COUNT: real datagrams from the sender namespace to DST:5353.
send_real() { ip netns exec "$XBD_NS_S" "$XBD_PY" tests/tools/xb_send.py udp "$1" "$2" 5353 "$3"; }

received() { grep -cx -- "$1" "$RECV" 2>/dev/null; }

case_allowed() {
	send_real 192.0.2.2 192.0.2.1 2 || { E2E_WHY="cannot send"; return 1; }
	e2e_wait 50 eval '[[ $(received 192.0.2.2) == 2 ]]' ||
		{ E2E_WHY="$(received 192.0.2.2) of 2 allowed datagrams arrived"; return 1; }
}

case_unlisted() {
	local before marks
	before=$(xbd_stat drop_not_allowed) marks=$(received 192.0.2.2)
	send_real $UNLISTED 198.51.100.1 3 || { E2E_WHY="cannot send"; return 1; }
	e2e_wait 50 eval '[[ $(xbd_stat_delta drop_not_allowed "$before") == 3 ]]' ||
		{ E2E_WHY="drop_not_allowed +$(xbd_stat_delta drop_not_allowed "$before"), expected +3"; return 1; }
	send_real 192.0.2.2 192.0.2.1 1 # arrives after anything the XDP program let through
	e2e_wait 50 eval '[[ $(received 192.0.2.2) == $((marks + 1)) ]]' ||
		{ E2E_WHY="the allowed marker did not arrive"; return 1; }
	e2e_expect "datagrams from the unlisted source" 0 "$(received $UNLISTED)"
}

case_deny_inside() {
	local before
	before=$(xbd_stat drop_deny)
	xbd_send udp 192.0.2.77 2 || { E2E_WHY="cannot send"; return 1; }
	e2e_wait 50 eval '[[ $(xbd_stat_delta drop_deny "$before") == 2 ]]' ||
		{ E2E_WHY="drop_deny +$(xbd_stat_delta drop_deny "$before"), expected +2"; return 1; }
	e2e_expect "query of the denied address" "deny" "$(xbd_query 192.0.2.77 'd["policy"]')"
}

case_manual_ban() {
	local before
	e2e_run xbd_cli ban --for 1h 192.0.2.64/28 || return 1
	before=$(xbd_stat drop_deny)
	xbd_send udp 192.0.2.66 2 || { E2E_WHY="cannot send"; return 1; }
	e2e_wait 50 eval '[[ $(xbd_stat_delta drop_deny "$before") == 2 ]]' ||
		{ E2E_WHY="drop_deny +$(xbd_stat_delta drop_deny "$before"), expected +2"; return 1; }
	e2e_run xbd_cli unban 192.0.2.64/28 || return 1
	e2e_expect "query after the unban" "allowed" "$(xbd_query 192.0.2.66 'd["policy"]')"
}

# A TCP connection from the unlisted host to the receiver's service, with one echo: 0 when
# it got through.
connect_from_unlisted() {
	ip netns exec "$XBD_NS_S" "$XBD_PY" tests/tools/xb_send.py tcp $UNLISTED 198.51.100.1 7002 1 \
		2>/dev/null
}

case_new_connection() {
	local before
	before=$(xbd_stat drop_not_allowed)
	if connect_from_unlisted; then
		E2E_WHY="the unlisted host connected"
		return 1
	fi
	(($(xbd_stat_delta drop_not_allowed "$before") >= 1)) ||
		{ E2E_WHY="no SYN was counted as drop_not_allowed"; return 1; }
}

# From the receiver (the host xdpband guards) to the unlisted host's echo servers.
host_tcp() {
	nsenter --net="/run/netns/$XBD_NS_R" "$XBD_PY" tests/tools/xb_send.py tcp 198.51.100.1 $UNLISTED 7000 3
}
host_udp() {
	nsenter --net="/run/netns/$XBD_NS_R" "$XBD_PY" tests/tools/xb_udp_echo.py ask 198.51.100.1 \
		$UNLISTED 7001 "$1" 2
}

case_host_connections() {
	e2e_run host_tcp || { E2E_WHY="a TCP connection the host opened: $E2E_WHY"; return 1; }
	e2e_expect "a connected UDP socket" reply "$(host_udp connected)"
}

case_unconnected_udp() {
	local before
	before=$(xbd_stat drop_not_allowed)
	e2e_expect "an unconnected UDP socket" none "$(host_udp unconnected)" &&
		e2e_wait 50 eval '(($(xbd_stat_delta drop_not_allowed "$before") >= 1))' ||
		{ E2E_WHY="${E2E_WHY:-the dropped reply was not counted as drop_not_allowed}"; return 1; }
}

case_cli() {
	local query lists status
	query=$(xbd_cli query $UNLISTED) lists=$(xbd_cli lists) status=$(xbd_cli status)
	[[ $query == *"policy:       not allowed (allow-only mode: in no allow list)"* ]] ||
		{ E2E_WHY="query: $query"; return 1; }
	[[ $lists =~ (^|$'\n')default\ +not\ allowed\ +1\ +1\ +allow-only\ mode ]] ||
		{ E2E_WHY="lists: $lists"; return 1; }
	[[ $lists =~ (^|$'\n')1\ +allowed\ +1\ +1\  ]] || { E2E_WHY="lists: $lists"; return 1; }
	[[ $status == *"allow-only mode"* ]] || { E2E_WHY="status: $status"; return 1; }
	e2e_expect "query --json" "not allowed" "$(xbd_query $UNLISTED 'd["policy"]')" &&
		e2e_expect "an allowed address" "allowed 192.0.2.0/24" \
			"$(xbd_query 192.0.2.2 'd["policy"] + " " + d["policy_match"]')" &&
		e2e_expect "stats --json" True \
			"$(xbd_cli stats --json | xbd_json '"drop_not_allowed" in d["stats"]')"
}

case_reload() {
	local reply
	allow_conf "deny = $D/deny.list"
	reply=$(xbd_request '{"cmd":"reload"}')
	[[ $reply == '{"ok":true,'* ]] || { E2E_WHY="reload: $reply"; return 1; }
	e2e_wait 50 eval '[[ $(xbd_query $UNLISTED "d[\"policy\"]") == none ]]' ||
		{ E2E_WHY="the unlisted address is $(xbd_query $UNLISTED 'd["policy"]') after the reload"; return 1; }
	connect_from_unlisted || { E2E_WHY="the unlisted host could not connect without the mode"; return 1; }
	[[ $(xbd_cli lists) != *default* ]] || { E2E_WHY="the default layer stayed"; return 1; }
}

write_lists() {
	mkdir -p "$D" && printf '%s\n' "# the office" 192.0.2.0/24 2001:db8:a11::/48 >"$D/allow.list" &&
		printf '%s\n' 192.0.2.77 >"$D/deny.list"
}

write_lists() {
	mkdir -p "$D" && printf '%s\n' "# the office" 192.0.2.0/24 2001:db8:a11::/48 >"$D/allow.list" &&
		printf '%s\n' 192.0.2.77 >"$D/deny.list"
}

if ! write_lists || ! allow_conf "allow = $D/allow.list" "deny = $D/deny.list" || ! xbd_start; then
	for c in "${CASES[@]}"; do xbd_fail "$c" "xdpband did not start with an allow list"; done
	e2e_finish
fi
if ! start_servers; then
	for c in "${CASES[@]}"; do xbd_fail "$c" "the test's servers did not start"; done
	e2e_finish
fi
e2e_case allowed_source_reaches_the_socket case_allowed
e2e_case unlisted_source_is_not_allowed case_unlisted
e2e_case deny_inside_allow case_deny_inside
e2e_case manual_ban_inside_allow case_manual_ban
e2e_case new_connection_from_unlisted_refused case_new_connection
e2e_case host_connections_get_replies case_host_connections
e2e_case unconnected_udp_reply_dropped case_unconnected_udp
e2e_case cli_shows_the_mode case_cli
e2e_case reload_without_allow_ends_the_mode case_reload
e2e_finish
