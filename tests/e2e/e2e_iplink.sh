#!/usr/bin/env bash
# e2e_iplink.sh BUILD - the issue's acceptance in a real kernel, with nothing but iproute2 and
# bpftool: BUILD/xdpban.bpf.o attached natively with plain `ip link ... xdpdrv obj` and its
# compiled-in defaults (no config is written), between a sender namespace and a receiver
# namespace that counts the UDP datagrams reaching its socket per source address.
#
# It must never touch state it did not create: it refuses to start when xdpban_* pins exist
# under /sys/fs/bpf/xdp/globals, holds the iproute2 e2e lock for its whole run (tests/e2e/e2e_cli.sh
# uses the same pin directory), and removes every namespace, attachment, pin, file and process
# it made on any exit. Only documentation addresses are used.
# shellcheck disable=SC2317 # the case functions are called through e2e_case
set -uo pipefail
build=${1:-build}
cd "$(dirname "$0")/../.." || exit 1
source tests/e2e/e2e_lib.sh

readonly NS_A=xbe2e-a NS_B=xbe2e-b # sender, receiver
readonly IF_A=xbe2e-a0 IF_B=xbe2e-b0
readonly OBJ=$build/xdpban.bpf.o
readonly PIN_DIR=$E2E_IPROUTE2_PINS # where iproute2 pins LIBBPF_PIN_BY_NAME maps
readonly PY=$E2E_PY
readonly PORT=5300
readonly WAIT_TRIES=100 # bounded waits: 100 polls of 0.1 s

readonly V4_RECV=198.51.100.1
readonly V4_PING=198.51.100.2    # never sends an error
readonly V4_BANNED=198.51.100.10 # 11 errors: banned
readonly V4_EDGE=198.51.100.11   # 10 errors: the threshold, not banned
readonly V4_OTHER=198.51.100.12  # never sends an error; marks "everything before has arrived"
readonly V4_TRUSTED_NET=198.51.100.128/28 V4_TRUSTED=198.51.100.130
readonly V4_DENY_NET=198.51.100.64/28 V4_DENIED=198.51.100.66
readonly V6_RECV=2001:db8:e2e::1
readonly V6_PING=2001:db8:e2e::2
readonly V6_DENIED=2001:db8:e2e::66 # a deny entry of its own, /128
readonly V6_BAN_NET=2001:db8:e2e:1::/64 # counted and banned as one source by default
readonly V6_BAN_SPOOF=2001:db8:e2e:1::a V6_BAN_HELD=2001:db8:e2e:1::b

# What the receiver's data path must have counted, built up as each case sends.
declare -A expect=([drop_malformed]=0 [drop_banned]=0 [drop_deny]=0 [bans_created]=0
	[errors]=0 [passed_trusted]=0)

tmp='' recv_mac=''

# --- helpers ---------------------------------------------------------------------------------

dst_for() { [[ $1 == *:* ]] && echo "$V6_RECV" || echo "$V4_RECV"; }

send_udp() { # SRC COUNT: valid datagrams through a socket bound to SRC
	e2e_run ip netns exec "$NS_A" "$PY" tests/tools/xb_send.py udp "$1" "$(dst_for "$1")" \
		"$PORT" "$2"
}

send_synfin() { # SRC COUNT: malformed TCP segments (SYN+FIN)
	e2e_run ip netns exec "$NS_A" "$PY" tests/tools/xb_send.py synfin "$IF_A" "$recv_mac" \
		"$1" "$(dst_for "$1")" "$2"
}

maps() { "$PY" tests/tools/xb_maps.py "$1" "$PIN_DIR" "${@:2}"; }

received() { grep -cxF -- "$1" "$tmp/received" || true; }
received_reaches() { (($(received "$1") >= $2)); }

# Waits until SRC's datagrams at the receiver number N. Datagrams sent earlier by any source
# went through the same veth queue first, so their fate is settled once this returns.
wait_received() {
	e2e_wait "$WAIT_TRIES" received_reaches "$1" "$2" && return 0
	E2E_WHY="only $(received "$1") of $2 datagrams from $1 arrived"
	return 1
}

expect_ban() { # KEY "COUNT REASON" | none
	e2e_expect "ban of $1" "$2" "$(maps ban "$1" 2>&1)"
}

expect_counter() { # KEY COUNT | none
	e2e_expect "error count of $1" "$2" "$(maps counter "$1" 2>&1)"
}

expect_received() { # SRC N
	e2e_expect "datagrams from $1 at the receiver" "$2" "$(received "$1")"
}

stat_of() { awk -v n="$1" '$1 == n { print $2 }' <<<"$2"; }

neigh_known() { # NS IF ADDR: the neighbour has a link-layer address (not INCOMPLETE/FAILED)
	ip -n "$1" neigh show "$3" dev "$2" | grep -q lladdr
}

wait_neigh() {
	e2e_wait "$WAIT_TRIES" neigh_known "$@" && return 0
	E2E_WHY="$1 never learnt the link-layer address of $3: $(ip -n "$1" neigh show "$3" dev "$2")"
	return 1
}

flush_neigh() { # FAMILY: forget neighbours on both sides, so the next send must resolve again
	ip -n "$NS_A" "$1" neigh flush dev "$IF_A" && ip -n "$NS_B" "$1" neigh flush dev "$IF_B"
}

# --- setup -----------------------------------------------------------------------------------

make_topology() {
	e2e_netns_add "$NS_A" && e2e_netns_add "$NS_B" &&
		e2e_veth_add "$NS_A" "$IF_A" "$NS_B" "$IF_B" || return 1
	ip -n "$NS_B" addr add "$V4_RECV/24" dev "$IF_B" &&
		ip -n "$NS_B" addr add "$V6_RECV/64" dev "$IF_B" nodad || return 1
	local a
	for a in "$V4_PING" "$V4_BANNED" "$V4_EDGE" "$V4_OTHER" "$V4_TRUSTED" "$V4_DENIED"; do
		ip -n "$NS_A" addr add "$a/24" dev "$IF_A" || return 1
	done
	for a in "$V6_PING" "$V6_DENIED" "$V6_BAN_HELD"; do
		ip -n "$NS_A" addr add "$a/64" dev "$IF_A" nodad || return 1
	done
	recv_mac=$(ip -n "$NS_B" -br link show dev "$IF_B" | awk '{ print $3 }')
}

# iproute2 creates and pins the maps by name; they are ours from here on (the directory held
# none a moment ago and we hold the lock), so their removal is registered before the attach.
attach_xdp() {
	e2e_defer sh -c "rm -f $PIN_DIR/xdpban_*"
	e2e_defer ip -n "$NS_B" link set dev "$IF_B" xdpdrv off
	if ! e2e_run nsenter --net="/run/netns/$NS_B" ip link set dev "$IF_B" xdpdrv obj "$OBJ" sec xdp
	then
		E2E_WHY="attaching $OBJ to $IF_B: $E2E_WHY"
		return 1
	fi
	ip -n "$NS_B" link show dev "$IF_B" | grep -q 'prog/xdp id' && return 0
	E2E_WHY="ip link reported success but $IF_B has no native XDP program"
	return 1
}

write_policy() {
	e2e_run maps policy "$V4_TRUSTED_NET" trusted 1 &&
		e2e_run maps policy "$V4_DENY_NET" deny 2 &&
		e2e_run maps policy "$V6_DENIED/128" deny 2
}

start_receiver() {
	e2e_bg "$NS_B" "$tmp/receiver.log" "$PY" tests/tools/xb_udp_count.py "$PORT" \
		"$tmp/received" "$tmp/ready" "$V4_RECV" "$V6_RECV"
	e2e_wait "$WAIT_TRIES" test -e "$tmp/ready" && return 0
	E2E_WHY="the receiver did not start: $(head -1 "$tmp/receiver.log")"
	return 1
}

setup() {
	[[ -f $OBJ ]] || { E2E_WHY="$OBJ not found: run make first"; return 1; }
	e2e_take_iproute2_lock && e2e_refuse_existing_pins || return 1
	tmp=$(mktemp -d /tmp/xbe2e-iplink.XXXXXX) || return 1
	e2e_defer rm -rf "$tmp"
	if ! make_topology; then
		E2E_WHY=${E2E_WHY:-"creating the namespaces, the veth pair or their addresses failed"}
		return 1
	fi
	attach_xdp && write_policy && start_receiver
}

# --- cases -----------------------------------------------------------------------------------

# 11 errors cross the default limit of 10: banned, and then even valid datagrams are dropped.
case_ban_after_11_malformed() {
	send_synfin "$V4_BANNED" 11 && send_udp "$V4_BANNED" 5 && send_udp "$V4_OTHER" 5 &&
		wait_received "$V4_OTHER" 5 || return 1
	((expect[drop_malformed] += 11, expect[errors] += 11, expect[bans_created] += 1,
		expect[drop_banned] += 5))
	expect_ban "$V4_BANNED" "11 errors" && expect_received "$V4_BANNED" 0 &&
		expect_received "$V4_OTHER" 5
}

case_no_ban_at_10_malformed() {
	send_synfin "$V4_EDGE" 10 && send_udp "$V4_EDGE" 5 || return 1
	((expect[drop_malformed] += 10, expect[errors] += 10))
	wait_received "$V4_EDGE" 5 && expect_ban "$V4_EDGE" none && expect_counter "$V4_EDGE" 10
}

case_trusted_never_banned() {
	send_synfin "$V4_TRUSTED" 50 && send_udp "$V4_TRUSTED" 5 || return 1
	((expect[passed_trusted] += 55))
	wait_received "$V4_TRUSTED" 5 && expect_ban "$V4_TRUSTED" none &&
		expect_counter "$V4_TRUSTED" none
}

case_deny_always_dropped() {
	local before
	before=$(received "$V4_OTHER")
	send_udp "$V4_DENIED" 5 && send_udp "$V4_OTHER" 5 || return 1
	((expect[drop_deny] += 5))
	wait_received "$V4_OTHER" $((before + 5)) && expect_received "$V4_DENIED" 0 &&
		e2e_expect "drop_deny packets" "${expect[drop_deny]}" \
			"$(stat_of drop_deny "$(maps stats)")"
}

# ARP is not IP, so it passes even from a banned address: the receiver learns the banned
# sender from its ARP request, and the sender learns the receiver from the reply.
case_arp_works_for_banned_source() {
	local before
	before=$(received "$V4_OTHER")
	flush_neigh -4 && send_udp "$V4_BANNED" 1 || return 1
	((expect[drop_banned] += 1))
	wait_neigh "$NS_B" "$IF_B" "$V4_BANNED" && wait_neigh "$NS_A" "$IF_A" "$V4_RECV" &&
		send_udp "$V4_OTHER" 1 && wait_received "$V4_OTHER" $((before + 1)) &&
		expect_received "$V4_BANNED" 0
}

ping_from() { # SRC DST
	e2e_run ip netns exec "$NS_A" ping -c 1 -W 5 -I "$1" "$2"
}

case_ping_unbanned_while_bans_exist() {
	expect_ban "$V4_BANNED" "11 errors" && ping_from "$V4_PING" "$V4_RECV"
}

# NDP passes before policy: with a deny entry for the sender's own address, neighbour
# solicitations from that address still reach the receiver, which learns it from them (no
# other packet from it gets through), while its datagrams are dropped.
case_ndp_passes_for_denied_source() {
	flush_neigh -6 && send_udp "$V6_DENIED" 3 || return 1
	((expect[drop_deny] += 3))
	wait_neigh "$NS_B" "$IF_B" "$V6_DENIED" && wait_neigh "$NS_A" "$IF_A" "$V6_RECV" &&
		send_udp "$V6_PING" 3 && wait_received "$V6_PING" 3 && expect_received "$V6_DENIED" 0
}

case_ping6_unbanned_while_deny_exists() {
	ping_from "$V6_PING" "$V6_RECV"
}

# Errors from one address of a /64 ban the whole /64: another address in it is dropped.
case_ipv6_banned_per_64() {
	local before
	before=$(received "$V6_PING")
	send_synfin "$V6_BAN_SPOOF" 11 && send_udp "$V6_BAN_HELD" 3 && send_udp "$V6_PING" 1 ||
		return 1
	((expect[drop_malformed] += 11, expect[errors] += 11, expect[bans_created] += 1,
		expect[drop_banned] += 3))
	wait_received "$V6_PING" $((before + 1)) && expect_ban "$V6_BAN_NET" "11 errors" &&
		expect_received "$V6_BAN_HELD" 0
}

# The per-CPU statistics, summed, match what every case above sent.
case_stats_agree() {
	local stats name got bad=()
	stats=$(maps stats 2>&1) || { E2E_WHY=$stats; return 1; }
	for name in drop_malformed drop_banned drop_deny bans_created errors passed_trusted; do
		got=$(stat_of "$name" "$stats")
		[[ $got == "${expect[$name]}" ]] || bad+=("$name=${got:-missing} (expected ${expect[$name]})")
	done
	((${#bad[@]} == 0)) && return 0
	E2E_WHY="${bad[*]}"
	return 1
}

# --- main ------------------------------------------------------------------------------------

e2e_require_root e2e_iplink
if ! command -v ping >/dev/null; then
	e2e_fail setup "ping not found: install iputils-ping (make deps)"
	e2e_finish
fi
E2E_WHY=
if ! setup; then
	e2e_fail setup "$E2E_WHY"
	e2e_finish
fi

e2e_case ban_after_11_malformed case_ban_after_11_malformed
e2e_case no_ban_at_10_malformed case_no_ban_at_10_malformed
e2e_case trusted_never_banned case_trusted_never_banned
e2e_case deny_always_dropped case_deny_always_dropped
e2e_case arp_works_for_banned_source case_arp_works_for_banned_source
e2e_case ping_unbanned_while_bans_exist case_ping_unbanned_while_bans_exist
e2e_case ndp_passes_for_denied_source case_ndp_passes_for_denied_source
e2e_case ping6_unbanned_while_deny_exists case_ping6_unbanned_while_deny_exists
e2e_case ipv6_banned_per_64 case_ipv6_banned_per_64
e2e_case stats_agree case_stats_agree
e2e_finish
