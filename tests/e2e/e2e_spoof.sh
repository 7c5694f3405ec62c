#!/usr/bin/env bash
# e2e_spoof.sh - forged sources end to end (docs/datapath.md section 8): a
# protected host runs xdpband on its veth behind a router, with a victim and an attacker one
# hop away on the router's other side. The attacker forges with scapy, with a TTL the victim's
# packets never arrive with (40: an attacker who does not know the victim's distance).
#   own_addresses_exempt        SYN+FIN from the host's address, 0.0.0.0, 255.255.255.255 and
#                               the subnet's broadcast: none banned or counted, query says
#                               exempt (and why), errors_exempt counted; the link-local
#                               address is exempt too; a manual ban of each is refused
#   forged_victim_not_banned    the victim's flow is verified; 50 forged SYN+FIN from its
#                               address: not banned, disputed, errors_suspect +50, and its TCP
#                               flow keeps working during and after
#   threshold_without_traffic   the attacker's own address: the 10th error does not ban, the 11th
#   threshold_after_verified    the same for a client whose flow verified it first
#   verified_mode               spoof verified: an unverified source's errors are not counted
#                               (errors_unverified), a verified one is banned after limit + 1
#   never_ban_list_not_counted  a never-ban list entry: its errors not counted, ban refused
#   host_address_added_and_removed  `ip addr add` makes an address exempt within a second,
#                               `ip addr del` ends it within a second, one log line each
#   spoof_settings              [spoof] in the config file: bad values refused by -t in one line
#                               naming key and value; status shows the settings; set changes them
# Uses the daemon's helpers of tests/e2e/e2e_lib.sh; every namespace, daemon, process, pin and file it
# makes is removed by the cleanup of tests/e2e/e2e_lib.sh, also on failure. Documentation
# addresses only; it never touches an interface it did not create.
#
# Usage: tests/e2e/e2e_spoof.sh BUILD_DIR
# shellcheck disable=SC2317 # the cases are called below
set -uo pipefail
# shellcheck source=tests/e2e/e2e_lib.sh
source "$(dirname "$0")/e2e_lib.sh"
cd "$(dirname "$0")/../.." || exit 1

CASES=(own_addresses_exempt forged_victim_not_banned threshold_without_traffic
	threshold_after_verified verified_mode never_ban_list_not_counted
	host_address_added_and_removed spoof_settings)
xbd_require "${CASES[@]}"

tag=sp$$
NS_H=xbd-$tag-h NS_R=xbd-$tag-r NS_V=xbd-$tag-v NS_A=xbd-$tag-a
IF_H=xbd${tag}h IF_RH=xbd${tag}rh IF_RV=xbd${tag}rv IF_V=xbd${tag}v IF_RA=xbd${tag}ra
IF_A=xbd${tag}a
HOST=192.0.2.1 HOST_NET=192.0.2.0/24 HOST_BCAST=192.0.2.255 ROUTER_H=192.0.2.254
ROUTER_V=198.51.100.1 VICTIM=198.51.100.2 CLEAN=198.51.100.3 PROVEN=198.51.100.4
ROUTER_A=198.51.100.65 ATTACKER=198.51.100.66 UNPROVEN=198.51.100.70
NEVER_BAN_NET=198.51.100.96/27 NEVER_BAN=198.51.100.100 RUNTIME=192.0.2.77
PORT=8080 FORGED_TTL=40

# --- topology: host <-> router <-> {victim, attacker} ----------------------------------------

setup() {
	XBD_TMP=$(mktemp -d /tmp/xbd-e2e.XXXXXX) || return 1
	XBD_NS_S=$NS_R XBD_NS_R=$NS_H XBD_PIN=/sys/fs/bpf/xbd-e2e-$tag
	XBD_SOCK=$XBD_TMP/xdpban.sock XBD_CONF=$XBD_TMP/xdpban.conf XBD_LOG=$XBD_TMP/daemon.log
	e2e_defer xbd_cleanup # kills the daemon, removes the pins and the temp directory
	install -m 755 "$XBD_BUILD/xdpband" "$XBD_BUILD/xdpban" "$XBD_TMP/" || return 1
	XBD_BIN=$XBD_TMP
	local ns
	for ns in "$NS_H" "$NS_R" "$NS_V" "$NS_A"; do
		e2e_netns_add "$ns" || return 1
	done
	# IPv6 only on the host (for its link-local address): no autoconfiguration traffic reaches
	# it, so every frame the data path sees is ours or a flow's.
	for ns in "$NS_R" "$NS_V" "$NS_A"; do
		ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
			net.ipv6.conf.default.disable_ipv6=1 || return 1
	done
	e2e_veth_add "$NS_H" "$IF_H" "$NS_R" "$IF_RH" && e2e_veth_add "$NS_R" "$IF_RV" "$NS_V" "$IF_V" &&
		e2e_veth_add "$NS_R" "$IF_RA" "$NS_A" "$IF_A" || return 1
	ip -n "$NS_H" addr add "$HOST/24" dev "$IF_H" && # no brd: the subnet's is exempt anyway
		ip -n "$NS_R" addr add "$ROUTER_H/24" dev "$IF_RH" &&
		ip -n "$NS_R" addr add "$ROUTER_V/26" dev "$IF_RV" &&
		ip -n "$NS_R" addr add "$ROUTER_A/26" dev "$IF_RA" &&
		ip -n "$NS_V" addr add "$VICTIM/26" dev "$IF_V" &&
		ip -n "$NS_V" addr add "$CLEAN/26" dev "$IF_V" &&
		ip -n "$NS_V" addr add "$PROVEN/26" dev "$IF_V" &&
		ip -n "$NS_A" addr add "$ATTACKER/26" dev "$IF_A" || return 1
	ip -n "$NS_H" route add default via "$ROUTER_H" &&
		ip -n "$NS_V" route add default via "$ROUTER_V" &&
		ip -n "$NS_A" route add default via "$ROUTER_A" || return 1
	# The router forwards forged sources too: no reverse-path filter.
	ip netns exec "$NS_R" sysctl -qw net.ipv4.ip_forward=1 net.ipv4.conf.all.rp_filter=0 \
		net.ipv4.conf.default.rp_filter=0 "net.ipv4.conf.$IF_RA.rp_filter=0" \
		"net.ipv4.conf.$IF_RV.rp_filter=0" "net.ipv4.conf.$IF_RH.rp_filter=0" || return 1
	HOST_MAC=$(ip -n "$NS_H" -br link show dev "$IF_H" | awk '{ print $3 }')
	ROUTER_A_MAC=$(ip -n "$NS_R" -br link show dev "$IF_RA" | awk '{ print $3 }')
	ROUTER_V_MAC=$(ip -n "$NS_R" -br link show dev "$IF_RV" | awk '{ print $3 }')
	[[ -n $HOST_MAC && -n $ROUTER_A_MAC && -n $ROUTER_V_MAC ]]
}

write_conf() {
	printf '%s\n' "$NEVER_BAN_NET" >"$XBD_TMP/never-ban.list"
	cat >"$XBD_CONF" <<EOF
# written by $(basename "$0"): the defaults but for the paths, a never-ban list and learning
# from every TCP segment (learn 1/1: the default 1/16 samples by a keyed hash of the sequence
# numbers, so when a flow is first verified would be a matter of chance)
[xdp]
interfaces = $IF_H
pin-dir = $XBD_PIN
detach-on-exit = yes
[spoof]
mode = hop
hop-tolerance = 1
learn = 1/1
[lists]
never-ban = never-ban.list
[control]
socket = $XBD_SOCK
[metrics]
listen = off
[state]
file = off
EOF
}

# --- traffic -----------------------------------------------------------------------------------

# synfin NS IFACE DSTMAC SRC[,SRC...] COUNT [TTL]: forged SYN+FIN frames to the host.
synfin() {
	ip netns exec "$1" "$XBD_PY" tests/tools/xb_send.py synfin "$2" "$3" "$4" "$HOST" "$5" \
		${6:+"$6"} 2>>"$XBD_TMP/scapy.err"
}
from_attacker() { synfin "$NS_A" "$IF_A" "$ROUTER_A_MAC" "$@"; }
from_victim_side() { synfin "$NS_V" "$IF_V" "$ROUTER_V_MAC" "$@"; }
on_the_host_link() { synfin "$NS_R" "$IF_RH" "$HOST_MAC" "$@"; } # 0.0.0.0 crosses no router

# flow SRC: a TCP conversation from SRC (in the victim's namespace) to the host's echo server.
flow() {
	e2e_bg "$NS_V" "$XBD_TMP/flow-$1.log" "$XBD_PY" tests/tools/xb_tcp_flow.py client "$1" \
		"$HOST" "$PORT" "$XBD_TMP/flow-$1"
}
rounds() { local r; r=$(cat "$XBD_TMP/flow-$1" 2>/dev/null); echo "${r:-0}"; }
flow_grows() { # SRC FROM: the flow made more round trips than FROM, and has not failed
	local r
	r=$(rounds "$1")
	[[ $r =~ ^[0-9]+$ ]] && ((r > $2))
}
is_verified() { [[ $(xbd_query "$1" 'd["verified"]') == True ]]; }

# --- cases ---------------------------------------------------------------------------------------

# why_is ADDR: exempt_why of ADDR, or "no".
why_is() { xbd_query "$1" 'd["exempt_why"] if d["exempt"] else "no"'; }

case_own_addresses() {
	local before addr bad=() lladdr out
	before=$(xbd_stat errors_exempt)
	on_the_host_link "$HOST,0.0.0.0,255.255.255.255,$HOST_BCAST" 20
	xbd_wait_until xbd_stat_is errors_exempt $((before + 80))
	lladdr=$(ip -n "$NS_H" -6 -br addr show dev "$IF_H" scope link | awk '{ print $3 }')
	for addr in "$HOST host" "0.0.0.0 built-in" "255.255.255.255 built-in" "$HOST_BCAST host" \
		"${lladdr%/*} host"; do
		set -- $addr
		[[ $(why_is "$1") == "$2" ]] || bad+=("$1 exempt: $(why_is "$1"), not $2")
		xbd_not_banned "$1" && xbd_count_is "$1" 0 || bad+=("$1 was counted or banned")
	done
	out=$(xbd_cli ban "$HOST" 2>&1)
	[[ $out == "xdpban: refusing to ban $HOST: it is never banned (host address of $IF_H)" ]] ||
		bad+=("ban $HOST: '$out'")
	out=$(xbd_cli ban 0.0.0.0 2>&1)
	[[ $out == "xdpban: refusing to ban 0.0.0.0: it is never banned (built in: 0.0.0.0/8)" ]] ||
		bad+=("ban 0.0.0.0: '$out'")
	[[ $(xbd_stat_delta errors_exempt "$before") == 80 ]] ||
		bad+=("errors_exempt +$(xbd_stat_delta errors_exempt "$before"), not +80")
	[[ $(xbd_stat bans_created) == 0 ]] || bad+=("bans_created $(xbd_stat bans_created)")
	if [[ -z $lladdr ]]; then
		bad+=("no link-local address on $IF_H")
	elif ! xbd_log_has "exempt: host address ${lladdr%/*} on $IF_H"; then
		bad+=("no log line for ${lladdr%/*}")
	fi
	((${#bad[@]} == 0)) && xbd_pass own_addresses_exempt ||
		xbd_fail own_addresses_exempt "${bad[*]:0:3}"
}

# The flow's round trips before the forged frames, right after them and a second later: each
# more than the one before, and no packet dropped as banned meanwhile.
case_forged_victim() {
	local suspect dropped before during after
	suspect=$(xbd_stat errors_suspect)
	dropped=$(xbd_stat drop_banned)
	before=$(rounds "$VICTIM")
	from_attacker "$VICTIM" 50 "$FORGED_TTL"
	xbd_wait_until xbd_stat_is errors_suspect $((suspect + 50))
	during=$(rounds "$VICTIM")
	xbd_wait_until flow_grows "$VICTIM" $((during + 20))
	after=$(rounds "$VICTIM")
	if ! xbd_not_banned "$VICTIM"; then
		xbd_fail forged_victim_not_banned "the victim $VICTIM was banned"
	elif [[ $(xbd_stat_delta errors_suspect "$suspect") != 50 ]]; then
		xbd_fail forged_victim_not_banned "errors_suspect +$(xbd_stat_delta errors_suspect "$suspect"), not +50"
	elif [[ $(xbd_query "$VICTIM" '(d["count"], d["disputed"], d["verified"], d["hop"], d["hop_from"])') != "(0, True, True, 1, 'verified')" ]]; then
		xbd_fail forged_victim_not_banned "query: $(xbd_cli query "$VICTIM" --json)"
	elif ! [[ $during =~ ^[0-9]+$ && $after =~ ^[0-9]+$ ]] || ((during <= before || after <= during + 19)); then
		xbd_fail forged_victim_not_banned "the victim's flow: $before round trips, then $during after the attack, then '$after'"
	elif [[ $(xbd_stat_delta drop_banned "$dropped") != 0 ]]; then
		xbd_fail forged_victim_not_banned "drop_banned +$(xbd_stat_delta drop_banned "$dropped")"
	else
		xbd_pass forged_victim_not_banned
	fi
}

# threshold NAME SEND_FN SRC: 10 malformed frames leave SRC unbanned with count 10; the 11th bans.
threshold() {
	local name=$1 send=$2 src=$3 created
	created=$(xbd_stat bans_created)
	$send "$src" 10
	if ! xbd_wait_until xbd_count_is "$src" 10 || ! xbd_not_banned "$src"; then
		xbd_fail "$name" "after 10 errors: $(xbd_cli query "$src" --json)"
		return
	fi
	$send "$src" 1
	if ! xbd_wait_until xbd_banned "$src"; then
		xbd_fail "$name" "not banned after 11 errors: $(xbd_cli query "$src" --json)"
	elif [[ $(xbd_ban_of "$src") != "11 errors" ]]; then
		xbd_fail "$name" "its ban: '$(xbd_ban_of "$src")', not '11 errors'"
	elif [[ $(xbd_stat_delta bans_created "$created") != 1 ]]; then
		xbd_fail "$name" "bans_created +$(xbd_stat_delta bans_created "$created")"
	else
		xbd_pass "$name"
	fi
}

case_threshold_after_verified() {
	if ! is_verified "$CLEAN"; then
		xbd_fail threshold_after_verified "$CLEAN was never verified"
		return
	fi
	threshold threshold_after_verified from_victim_side "$CLEAN"
}

case_verified_mode() {
	local unverified out
	out=$(xbd_cli set spoof verified) || { xbd_fail verified_mode "set spoof verified: $out"; return; }
	unverified=$(xbd_stat errors_unverified)
	from_attacker "$UNPROVEN" 15
	if ! xbd_wait_until xbd_stat_is errors_unverified $((unverified + 15)); then
		xbd_fail verified_mode "errors_unverified +$(xbd_stat_delta errors_unverified "$unverified"), not +15"
	elif ! xbd_count_is "$UNPROVEN" 0 || ! xbd_not_banned "$UNPROVEN"; then
		xbd_fail verified_mode "the unverified $UNPROVEN: $(xbd_cli query "$UNPROVEN" --json)"
	elif [[ $out != *"spoof verified"* || $(xbd_cli status --json | xbd_json 'd["config"]["spoof"]') != verified ]]; then
		xbd_fail verified_mode "set said '$out'"
	elif ! is_verified "$PROVEN"; then
		xbd_fail verified_mode "$PROVEN was never verified"
	else
		threshold verified_mode from_victim_side "$PROVEN"
	fi
	xbd_cli set spoof hop >/dev/null
}

case_never_ban() {
	local before out
	before=$(xbd_stat errors_exempt)
	from_attacker "$NEVER_BAN" 20
	out=$(xbd_cli ban "$NEVER_BAN" 2>&1)
	if ! xbd_wait_until xbd_stat_is errors_exempt $((before + 20)); then
		xbd_fail never_ban_list_not_counted "errors_exempt +$(xbd_stat_delta errors_exempt "$before"), not +20"
	elif [[ $(xbd_query "$NEVER_BAN" '(d["exempt_why"], d["exempt_match"], d["count"], d["banned"])') != "('never-ban', '$NEVER_BAN_NET', 0, False)" ]]; then
		xbd_fail never_ban_list_not_counted "query: $(xbd_cli query "$NEVER_BAN" --json)"
	elif [[ $out != "xdpban: refusing to ban $NEVER_BAN: it is never banned (never-ban list $NEVER_BAN_NET)" ]]; then
		xbd_fail never_ban_list_not_counted "ban: '$out'"
	elif [[ $(xbd_cli lists --json | xbd_json 'd["exempt"]["never_ban"]["ipv4"]') != 1 ]]; then
		xbd_fail never_ban_list_not_counted "lists: $(xbd_cli lists --json)"
	else
		xbd_pass never_ban_list_not_counted
	fi
}

# within_second CMD...: polls CMD, as fast as it answers, for a second; prints the ms it took.
within_second() {
	local t0 ms
	t0=$(date +%s%N)
	while :; do
		ms=$((($(date +%s%N) - t0) / 1000000))
		"$@" && { echo "$ms"; return 0; }
		((ms < 1000)) || return 1
	done
}
host_exempt() { xbd_cli query "$RUNTIME" --json | grep -q '"exempt_why":"host"'; }
not_exempt() { xbd_cli query "$RUNTIME" --json | grep -q '"exempt":false'; }

case_runtime_address() {
	local added removed
	ip -n "$NS_H" addr add "$RUNTIME/24" dev "$IF_H"
	added=$(within_second host_exempt)
	ip -n "$NS_H" addr del "$RUNTIME/24" dev "$IF_H"
	removed=$(within_second not_exempt)
	if [[ -z ${added:-} ]]; then
		xbd_fail host_address_added_and_removed "$RUNTIME not exempt 1 s after ip addr add"
	elif [[ -z ${removed:-} ]]; then
		xbd_fail host_address_added_and_removed "$RUNTIME still exempt 1 s after ip addr del"
	elif ! xbd_log_has "exempt: host address $RUNTIME on $IF_H: never counted or banned" ||
		! xbd_log_has "exempt: host address $RUNTIME on $IF_H is gone: counted again"; then
		xbd_fail host_address_added_and_removed "no log line for the change"
	elif [[ $(why_is "$HOST") != host ]]; then
		xbd_fail host_address_added_and_removed "$HOST is no longer exempt"
	else
		echo "#   exempt ${added} ms after ip addr add, not ${removed} ms after ip addr del"
		xbd_pass host_address_added_and_removed
	fi
}

case_spoof_settings() {
	local bad=() line conf=$XBD_TMP/bad.conf out row key value
	for row in "mode|sometimes|bad spoof 'sometimes': expected off, hop or verified" \
		"hop-tolerance|9|hop-tolerance 9 out of range: must be 0..8" \
		"learn|1/10|bad learn '1/10': expected 1/N with N a power of two from 1 to 65536"; do
		IFS='|' read -r key value out <<<"$row"
		line=$(grep -n "^$key = " "$XBD_CONF" | cut -d: -f1)
		sed "${line}s|.*|$key = $value|" "$XBD_CONF" >"$conf"
		xbd_check_t "$key" 1 "$conf:$line: [spoof] $key = '$value': $out" -t -c "$conf"
	done
	out=$(xbd_cli status)
	[[ $out == *"spoof hop, hop-tolerance 1, learn 1/1"* ]] || bad+=("status: $(grep config: <<<"$out")")
	out=$(xbd_cli set learn 1/64 && xbd_cli set hop-tolerance 2)
	[[ $(xbd_cli status --json | xbd_json '(d["config"]["learn"], d["config"]["hop_tolerance"])') == "('1/64', 2)" ]] ||
		bad+=("after set: $out")
	xbd_cli set learn 1/1 >/dev/null && xbd_cli set hop-tolerance 1 >/dev/null
	((${#bad[@]} == 0)) && xbd_pass spoof_settings || xbd_fail spoof_settings "${bad[*]:0:3}"
}

# --- run -----------------------------------------------------------------------------------------

started=$(date +%s%N)
if ! setup; then
	xbd_fail_all "cannot create the test namespaces" "${CASES[@]}"
fi
write_conf
e2e_bg "$NS_H" "$XBD_TMP/server.log" "$XBD_PY" tests/tools/xb_tcp_flow.py server "$HOST" "$PORT" \
	"$XBD_TMP/server.ready"
if ! xbd_start || ! e2e_wait 50 test -e "$XBD_TMP/server.ready"; then
	xbd_fail_all "the daemon or the echo server did not start" "${CASES[@]}"
fi
for src in "$VICTIM" "$CLEAN" "$PROVEN"; do flow "$src"; done
verified_all() { is_verified "$VICTIM" && is_verified "$CLEAN" && is_verified "$PROVEN"; }
if ! xbd_wait_until verified_all; then
	echo "#   not all flows verified in 20 s: $(for s in "$VICTIM" "$CLEAN" "$PROVEN"; do echo "$s $(rounds "$s") rounds"; done)"
fi
case_own_addresses
case_forged_victim
threshold threshold_without_traffic from_attacker "$ATTACKER"
case_threshold_after_verified
case_verified_mode
case_never_ban
case_runtime_address
case_spoof_settings
xbd_stop TERM
echo "#   e2e_spoof ran for $((($(date +%s%N) - started) / 1000000)) ms"
((E2E_FAILED == 0))
