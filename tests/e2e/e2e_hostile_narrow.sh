#!/usr/bin/env bash
# e2e_hostile_narrow.sh - forged frames cannot make an IPv6 ban cover an address xdpban
# protects (docs/datapath.md, "Keys that never cover a protected address"). A host runs xdpband
# on a veth holding 2001:db8:ff::1/64, with 2001:db8:ff::2 its neighbour on the link and the
# never-ban entry 2001:db8:aa::53; forged SYN+FIN frames come from the neighbour's side.
#   never_ban_network_per_address  11 errors from 2001:db8:aa::99 ban its /128, not the /64
#                               that holds the never-ban entry: query says so for both, and the
#                               entry's own address is not banned
#   host_link_neighbour_reachable  12 errors from 2001:db8:ff::99 ban its /128 alone: the
#                               neighbour's pings pass, 3 of 3
#   forged_flood_bans_no_protected  10,000 forged errors, half from random addresses of the
#                               host's /64 and half of the never-ban entry's: no ban shorter
#                               than /128 in either, the entry and the neighbour not banned
#   offender_banned_at_11th     a source of the never-ban entry's /64: the 10th error does not
#                               ban it, the 11th bans its /128
#   other_networks_aggregated   11 errors from 2001:db8:bb::99, whose /64 holds nothing
#                               protected, ban 2001:db8:bb::/64 as before
#   prefix_change_follows       `set ipv6-prefix 48`: the never-ban entry's /48 is keyed per
#                               address within a sweep
#   restored_bans_rechecked     a saved ban of 2001:db8:cc::/64, restored after 2001:db8:cc::53
#                               became a never-ban entry: refused with one log line saying why;
#                               the other saved bans restored
# Uses the daemon's helpers of tests/e2e/e2e_lib.sh; every namespace, daemon, process, pin and file it
# makes is removed by the cleanup of tests/e2e/e2e_lib.sh, also on failure. Documentation
# addresses only; it never touches an interface it did not create.
#
# Usage: tests/e2e/e2e_hostile_narrow.sh BUILD_DIR
# shellcheck disable=SC2317 # the cases are called below
set -uo pipefail
# shellcheck source=tests/e2e/e2e_lib.sh
source "$(dirname "$0")/e2e_lib.sh"
cd "$(dirname "$0")/../.." || exit 1

CASES=(never_ban_network_per_address host_link_neighbour_reachable forged_flood_bans_no_protected
	offender_banned_at_11th other_networks_aggregated prefix_change_follows
	restored_bans_rechecked)
xbd_require "${CASES[@]}"

tag=nw$$
NS_H=xbd-$tag-h NS_N=xbd-$tag-n IF_H=xbd${tag}h IF_N=xbd${tag}n
HOST=2001:db8:ff::1 NEIGHBOUR=2001:db8:ff::2 NEVER_BAN=2001:db8:aa::53

setup() {
	XBD_TMP=$(mktemp -d /tmp/xbd-e2e.XXXXXX) || return 1
	XBD_NS_S=$NS_N XBD_NS_R=$NS_H XBD_PIN=/sys/fs/bpf/xbd-e2e-$tag
	XBD_SOCK=$XBD_TMP/xdpban.sock XBD_CONF=$XBD_TMP/xdpban.conf XBD_LOG=$XBD_TMP/daemon.log
	e2e_defer xbd_cleanup # kills the daemon, removes the pins and the temp directory
	install -m 755 "$XBD_BUILD/xdpband" "$XBD_BUILD/xdpban" "$XBD_TMP/" || return 1
	XBD_BIN=$XBD_TMP
	e2e_netns_add "$NS_H" && e2e_netns_add "$NS_N" || return 1
	# No router solicitations or other autoconfiguration: every frame the program sees is ours,
	# a ping's or neighbour discovery's.
	local ns
	for ns in "$NS_H" "$NS_N"; do
		ip netns exec "$ns" sysctl -qw net.ipv6.conf.default.accept_ra=0 \
			net.ipv6.conf.default.router_solicitations=0 || return 1
	done
	e2e_veth_add "$NS_H" "$IF_H" "$NS_N" "$IF_N" || return 1
	ip -n "$NS_H" addr add "$HOST/64" dev "$IF_H" nodad &&
		ip -n "$NS_N" addr add "$NEIGHBOUR/64" dev "$IF_N" nodad || return 1
	HOST_MAC=$(ip -n "$NS_H" -br link show dev "$IF_H" | awk '{ print $3 }')
	[[ -n $HOST_MAC ]]
}

write_conf() {
	printf '%s\n' "$NEVER_BAN" >"$XBD_TMP/never-ban.list"
	cat >"$XBD_CONF" <<EOF
# written by $(basename "$0"): the defaults (limit 10, ipv6-prefix 64) but for the paths and
# a never-ban list; no spoof defence, so that every forged error counts
[xdp]
interfaces = $IF_H
pin-dir = $XBD_PIN
detach-on-exit = yes
[spoof]
mode = off
[lists]
never-ban = never-ban.list
[control]
socket = $XBD_SOCK
[metrics]
listen = off
[state]
file = $XBD_TMP/state
EOF
}

# forge SRC[,SRC...] COUNT: COUNT SYN+FIN frames from each SRC to the host, from the link.
forge() {
	ip netns exec "$NS_N" "$XBD_PY" tests/tools/xb_send.py synfin "$IF_N" "$HOST_MAC" "$1" \
		"$HOST" "$2" 2>>"$XBD_TMP/scapy.err"
}

# random_in NET COUNT: COUNT random addresses of the /64 NET (written "2001:db8:aa::"),
# comma-separated, none of them the neighbour's, the host's or the never-ban entry's.
random_in() {
	"$XBD_PY" - "$1" "$2" "$HOST" "$NEIGHBOUR" "$NEVER_BAN" <<'EOF'
import ipaddress, random, sys
net = int(ipaddress.IPv6Address(sys.argv[1]))
avoid = {int(ipaddress.IPv6Address(a)) for a in sys.argv[3:]}
out = set()
while len(out) < int(sys.argv[2]):
    a = net | random.getrandbits(64)
    if a not in avoid:
        out.add(str(ipaddress.IPv6Address(a)))
print(",".join(sorted(out)))
EOF
}

# query_is ADDR EXPR WANT: EXPR over `xdpban query ADDR --json` is WANT.
query_is() {
	local got
	got=$(xbd_query "$1" "$2" 2>&1)
	e2e_expect "query $1: $2" "$3" "$got"
}

# short_bans_in NET: the bans in `xdpban bans --json` shorter than /128 inside the /64 NET.
short_bans_in() {
	xbd_cli bans --json | "$XBD_PY" -c '
import ipaddress, json, sys
net = ipaddress.IPv6Network(sys.argv[1])
for b in json.load(sys.stdin)["bans"]:
    n = ipaddress.ip_network(b["prefix"], strict=False)
    if n.version == 6 and n.prefixlen < 128 and n.overlaps(net):
        print(b["prefix"])' "$1"
}

case_never_ban_network() {
	if ! { forge 2001:db8:aa::99 11 && xbd_wait_until xbd_banned 2001:db8:aa::99; }; then
		E2E_WHY="2001:db8:aa::99 not banned after 11 errors"
		return 1
	fi
	query_is 2001:db8:aa::99 'd["key"]' 2001:db8:aa::99 &&
		query_is "$NEVER_BAN" '(d["banned"], d["exempt"])' "(False, True)" &&
		query_is 2001:db8:aa::98 'd["banned"]' False &&
		e2e_expect "short bans in 2001:db8:aa::/64" "" "$(short_bans_in 2001:db8:aa::/64)"
}

case_neighbour() {
	local out
	if ! { forge 2001:db8:ff::99 12 && xbd_wait_until xbd_banned 2001:db8:ff::99; }; then
		E2E_WHY="2001:db8:ff::99 not banned after 12 errors"
		return 1
	fi
	query_is 2001:db8:ff::99 'd["key"]' 2001:db8:ff::99 || return 1
	out=$(ip netns exec "$NS_N" ping -6 -c 3 -i 0.2 -W 2 "$HOST" 2>&1)
	e2e_expect "the neighbour's pings" "3 received" "$(grep -o '[0-9]* received' <<<"$out")" &&
		query_is "$NEIGHBOUR" 'd["banned"]' False
}

case_flood() {
	local before errors
	before=$(xbd_stat bans_created) errors=$(xbd_stat errors)
	{ random_in 2001:db8:ff:: 5000 && random_in 2001:db8:aa:: 5000; } >"$XBD_TMP/flood.srcs"
	forge "@$XBD_TMP/flood.srcs" 1 || { E2E_WHY="scapy failed: $(tail -n 1 "$XBD_TMP/scapy.err")"; return 1; }
	# Every forged error was counted: each source is new, so none met a ban.
	if ! xbd_wait_until xbd_stat_is errors $((errors + 10000)); then
		E2E_WHY="$(xbd_stat_delta errors "$errors") of 10000 forged errors counted"
		return 1
	fi
	e2e_expect "short bans in 2001:db8:aa::/64" "" "$(short_bans_in 2001:db8:aa::/64)" &&
		e2e_expect "short bans in 2001:db8:ff::/64" "" "$(short_bans_in 2001:db8:ff::/64)" &&
		e2e_expect "bans the flood made" 0 "$(xbd_stat_delta bans_created "$before")" &&
		query_is "$NEVER_BAN" 'd["banned"]' False &&
		query_is "$NEIGHBOUR" 'd["banned"]' False &&
		query_is "$HOST" 'd["banned"]' False
}

case_offender() {
	if ! { forge 2001:db8:aa::77 10 && xbd_wait_until xbd_count_is 2001:db8:aa::77 10; }; then
		E2E_WHY="2001:db8:aa::77 did not count 10 errors (count $(xbd_query 2001:db8:aa::77 'd["count"]'))"
		return 1
	fi
	query_is 2001:db8:aa::77 'd["banned"]' False || return 1
	if ! { forge 2001:db8:aa::77 1 && xbd_wait_until xbd_banned 2001:db8:aa::77; }; then
		E2E_WHY="2001:db8:aa::77 not banned after its 11th error"
		return 1
	fi
	query_is 2001:db8:aa::77 'd["key"]' 2001:db8:aa::77 &&
		e2e_expect "the ban of 2001:db8:aa::77" "11 errors" "$(xbd_ban_of 2001:db8:aa::77)"
}

case_other_networks() {
	if ! { forge 2001:db8:bb::99 11 && xbd_wait_until xbd_banned 2001:db8:bb::99; }; then
		E2E_WHY="2001:db8:bb::99 not banned after 11 errors"
		return 1
	fi
	query_is 2001:db8:bb::99 'd["key"]' 2001:db8:bb::/64 &&
		query_is 2001:db8:bb::5 'd["banned"]' True
}

case_prefix_change() {
	e2e_run xbd_cli set ipv6-prefix 48 || return 1
	key() { xbd_query 2001:db8:aa:1::5 'd["key"]'; }
	key_is_addr() { [[ $(key) == 2001:db8:aa:1::5 ]]; }
	if ! xbd_wait_until key_is_addr; then
		E2E_WHY="under ipv6-prefix 48, 2001:db8:aa:1::5 is keyed $(key), not per address"
		return 1
	fi
	query_is 2001:db8:bb:1::5 'd["key"]' 2001:db8:bb::/48
}

case_restore() {
	local line
	e2e_run xbd_cli set ipv6-prefix 64 || return 1
	if ! { forge 2001:db8:cc::99 11 && xbd_wait_until xbd_banned 2001:db8:cc::99; }; then
		E2E_WHY="2001:db8:cc::99 not banned after 11 errors"
		return 1
	fi
	query_is 2001:db8:cc::99 'd["key"]' 2001:db8:cc::/64 || return 1
	# A restart with new maps restores from the file, under the new never-ban entry.
	xbd_stop TERM
	rm -rf "$XBD_PIN"
	printf '%s\n' "$NEVER_BAN" 2001:db8:cc::53 >"$XBD_TMP/never-ban.list"
	xbd_start || { E2E_WHY="the daemon did not start again"; return 1; }
	line=$(grep -F "saved ban refused" "$XBD_LOG")
	e2e_expect "the refusal's log line" \
		"state: 1 saved ban refused, the first: refusing to ban 2001:db8:cc::/64: it contains 2001:db8:cc::53, which is never banned (never-ban list)" \
		"${line#*: warning: }" &&
		query_is 2001:db8:cc::99 'd["banned"]' False &&
		query_is 2001:db8:bb::99 '(d["key"], d["banned"])' "('2001:db8:bb::/64', True)" &&
		query_is 2001:db8:aa::77 '(d["key"], d["banned"])' "('2001:db8:aa::77', True)"
}

# --- run -----------------------------------------------------------------------------------------

started=$(date +%s%N)
if ! setup; then
	xbd_fail_all "cannot create the test namespaces" "${CASES[@]}"
fi
write_conf
if ! xbd_start; then
	xbd_fail_all "the daemon did not start" "${CASES[@]}"
fi
e2e_case never_ban_network_per_address case_never_ban_network
e2e_case host_link_neighbour_reachable case_neighbour
e2e_case forged_flood_bans_no_protected case_flood
e2e_case offender_banned_at_11th case_offender
e2e_case other_networks_aggregated case_other_networks
e2e_case prefix_change_follows case_prefix_change
e2e_case restored_bans_rechecked case_restore
xbd_stop TERM
echo "#   e2e_hostile_narrow ran for $((($(date +%s%N) - started) / 1000000)) ms"
e2e_finish
