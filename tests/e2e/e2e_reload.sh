#!/usr/bin/env bash
# e2e_reload.sh BUILD - reloads under traffic are atomic per source
# (docs/datapath.md, "A compile is atomic per source"). xdpband runs in allow-only mode in a
# private pair of namespaces; a sender streams valid UDP datagrams from four groups of sources
# while the lists are swapped between two sets, A and B, RELOADS times (100), each of them large
# (BULK random entries of every layer besides the ones the sources meet):
#   denied   203.0.113.1-8: A allows 203.0.0.0/8 and denies 203.0.113.0/28 in it; B denies
#            the /8. Denied by both, so never passed, whatever a reload is doing.
#   trusted  198.51.100.11-18: A trusts 198.0.0.0/8; B denies it and trusts 198.51.100.0/27.
#            Trusted by both, so never dropped.
#   allowed  192.0.2.65-72: A allows 192.0.2.0/24, B 192.0.2.64/26. Never dropped.
#   moving   192.0.2.201-208: allowed by A, not allowed by B: either verdict may hold.
# The bulk of each set lies partly in those /8s (A's allow entries in 203/8, B's deny entries
# in 198/8), so that a reload writing in the order of addresses would write the /8 thousands
# of entries before the entry inside it: for milliseconds, trusted sources would be dropped
# and denied ones passed (it is so, with that order). tests/kernel/test_flat_kernel.c checks the same
# rule at every step of a compile, this test on the wire.
# Checked: the receiving socket got nothing from a denied source and every datagram from a
# trusted or allowed one; the statistics count every denied datagram in drop_deny, every
# trusted one in passed_trusted, and a moving source's datagrams in drop_not_allowed or on the
# socket.
# Then, with the traffic over, `xdpban reload` on the same daemon: it prints the setting and
# the list files that changed (the lists swapped to the other set, limit 3 -> 7) and status
# has the new limit; a second reload says "no change"; --json names a value `set` put in
# force as the old one; a bad value exits 1 with one line naming FILE:LINE and the old limit
# stays; and with no daemon on the socket it exits 1 with one line, the maps untouched.
# Everything it makes is removed on any exit (the daemon helpers' cleanup in tests/e2e/e2e_lib.sh). Needs
# root; skips without it.
# shellcheck disable=SC2317 # the case functions are called through e2e_case
set -uo pipefail
build=${1:-build}
cd "$(dirname "$0")/../.." || exit 1
source tests/e2e/e2e_lib.sh

readonly RELOADS=${XDPBAN_E2E_RELOADS:-100} BULK=${XDPBAN_E2E_RELOAD_BULK:-10000} PORT=5300
CASES=(reloads_succeed denied_never_passed trusted_and_allowed_never_dropped
	stats_count_every_datagram cli_reload_prints_changes cli_reload_no_change
	cli_reload_json cli_reload_bad_config_keeps_old cli_reload_without_daemon)
xbd_begin R "${CASES[@]}"
readonly D=$XBD_TMP/lists
readonly DENIED=(203.0.113.{1..8}) TRUSTED=(198.51.100.{11..18}) ALLOWED=(192.0.2.{65..72})
readonly MOVING=(192.0.2.{201..208})

# random_in BASE SEED: BULK random prefixes inside BASE, of lengths from 4 bits past it to /32.
random_in() {
	"$XBD_PY" - "$1" "$2" "$BULK" <<'EOF'
import ipaddress, random, sys
net, rng, n = ipaddress.ip_network(sys.argv[1]), random.Random(sys.argv[2]), int(sys.argv[3])
for _ in range(n):
    addr = int(net.network_address) + rng.randrange(net.num_addresses)
    plen = rng.randint(net.prefixlen + 4, 32)
    print(ipaddress.ip_network((addr, plen), strict=False))
EOF
}

# layer FILE SEED BASE ENTRY...: the entries, then BULK random ones inside BASE.
layer() {
	local file=$1 seed=$2 base=$3
	shift 3
	{ printf '%s\n' "$@" && random_in "$base" "$seed"; } >"$file"
}

# use NAME: the config's files become set NAME's (read at the next reload).
use() {
	local layer
	for layer in allow deny trusted; do
		cp "$D/$1.$layer" "$D/live.$layer" || return 1
	done
}

make_sets() {
	mkdir -p "$D" &&
		layer "$D/A.allow" 1 203.0.0.0/8 192.0.2.0/24 203.0.0.0/8 &&
		layer "$D/A.deny" 2 100.64.0.0/10 203.0.113.0/28 &&
		layer "$D/A.trusted" 3 172.16.0.0/12 198.0.0.0/8 &&
		layer "$D/B.allow" 4 10.0.0.0/8 192.0.2.64/26 &&
		layer "$D/B.deny" 5 198.0.0.0/8 203.0.0.0/8 198.0.0.0/8 &&
		layer "$D/B.trusted" 6 172.16.0.0/12 198.51.100.0/27 &&
		use A
}

# conf: the config, with the limit and ban time of $XBD_CONF_LIMIT and $XBD_CONF_BAN_TIME.
conf() {
	xbd_write_conf "[lists]" "allow = $D/live.allow" "deny = $D/live.deny" \
		"trusted = $D/live.trusted" "[metrics]" "listen = off"
}

start() {
	local mac
	conf || return 1
	xbd_start || return 1
	ip netns exec "$XBD_NS_R" sysctl -qw net.ipv4.conf.all.rp_filter=0 \
		"net.ipv4.conf.$XBD_IF_R.rp_filter=0" || return 1
	e2e_bg "$XBD_NS_R" "$XBD_TMP/count.err" "$XBD_PY" tests/tools/xb_udp_count.py "$PORT" \
		"$XBD_TMP/received" "$XBD_TMP/ready" 192.0.2.1 || return 1
	e2e_wait 100 test -e "$XBD_TMP/ready" || return 1
	mac=$(ip -n "$XBD_NS_R" -br link show "$XBD_IF_R" | awk '{print $3}')
	local srcs="${DENIED[*]} ${TRUSTED[*]} ${ALLOWED[*]} ${MOVING[*]}"
	e2e_bg "$XBD_NS_S" "$XBD_TMP/spray.err" "$XBD_PY" tests/tools/xb_send.py spray "$XBD_IF_S" \
		"$mac" 192.0.2.1 "$PORT" "$XBD_TMP/stop" "$XBD_TMP/sent" "${srcs// /,}"
}

REFUSED=""
RELOADED=0
# Swaps the sets RELOADS times, each reload awaited through the control socket.
swap() {
	local i reply name t0=$EPOCHREALTIME
	for ((i = 1; i <= RELOADS; i++)); do
		name=$([[ $((i % 2)) == 1 ]] && echo B || echo A)
		use "$name" || return 1
		reply=$(xbd_request '{"cmd":"reload"}')
		if [[ $reply != '{"ok":true,'* ]]; then
			REFUSED="reload $i (to $name): $reply"
			return 1
		fi
		RELOADED=$i
	done
	echo "# $RELOADS reloads between sets of about $((3 * BULK)) entries in $(awk "BEGIN { printf \"%.1f\", $EPOCHREALTIME - $t0 }") s"
}

# Ends the stream and waits until the socket has read what the data path passed.
stop_traffic() {
	touch "$XBD_TMP/stop"
	e2e_wait 100 test -s "$XBD_TMP/sent" || return 1
	local before after
	after=$(wc -l <"$XBD_TMP/received")
	for _ in 1 2 3 4 5 6 7 8 9 10; do
		sleep 0.2
		before=$after after=$(wc -l <"$XBD_TMP/received")
		[[ $before == "$after" ]] && return 0
	done
}

sent_by() { awk -v s="$1" '$1 == s { print $2 }' "$XBD_TMP/sent"; }
received_by() { grep -cxF -- "$1" "$XBD_TMP/received"; }
# total FUNC ADDR...: the sum of FUNC over the addresses.
total() {
	local f=$1 sum=0 a
	shift
	for a in "$@"; do sum=$((sum + $("$f" "$a"))); done
	echo "$sum"
}

case_reloads() {
	[[ -z $REFUSED && $RELOADED == "$RELOADS" ]] && return 0
	E2E_WHY="${REFUSED:-$RELOADED of $RELOADS reloads done}"
	return 1
}

case_denied() {
	local got sent
	got=$(total received_by "${DENIED[@]}") sent=$(total sent_by "${DENIED[@]}")
	echo "# denied: $sent sent, $got passed"
	[[ $sent -gt 0 ]] || { E2E_WHY="no denied datagram was sent"; return 1; }
	e2e_expect "datagrams of denied sources on the socket" 0 "$got"
}

case_kept() {
	local a got sent bad=""
	for a in "${TRUSTED[@]}" "${ALLOWED[@]}"; do
		got=$(received_by "$a") sent=$(sent_by "$a")
		[[ $sent -gt 0 && $got == "$sent" ]] || bad+=" $a: $got of $sent;"
	done
	echo "# trusted and allowed: $(total sent_by "${TRUSTED[@]}" "${ALLOWED[@]}") sent"
	[[ -z $bad ]] && return 0
	E2E_WHY="received of sent:$bad (UDP receive errors in the namespace: $(ip netns exec "$XBD_NS_R" awk '/^Udp: [0-9]/ { print $6 }' /proc/net/snmp))"
	return 1
}

case_stats() {
	local moved_sent moved_got
	moved_sent=$(total sent_by "${MOVING[@]}") moved_got=$(total received_by "${MOVING[@]}")
	echo "# moving: $moved_sent sent, $moved_got passed"
	e2e_expect "drop_deny" "$(total sent_by "${DENIED[@]}")" "$(xbd_stat drop_deny)" &&
		e2e_expect "passed_trusted" "$(total sent_by "${TRUSTED[@]}")" "$(xbd_stat passed_trusted)" &&
		e2e_expect "drop_not_allowed + moving datagrams passed" "$moved_sent" \
			"$(($(xbd_stat drop_not_allowed) + moved_got))"
}

# --- `xdpban reload`, after the traffic: it waits for the outcome and prints what changed ---

limit_in_force() { xbd_cli status --json | xbd_json 'd["config"]["limit"]'; }

# list_line LAYER BEFORE AFTER: reload's line for a list file whose prefixes changed.
list_line() {
	if [[ $2 == "$3" ]]; then
		echo "  $1 list $D/live.$1: $3 prefixes, other ones"
	else
		echo "  $1 list $D/live.$1: $2 -> $3 prefixes"
	fi
}

# The other set of lists and limit 7: a line for the limit and one for each list file.
case_cli_changes() {
	local other=B out rc want layer
	cmp -s "$D/live.allow" "$D/B.allow" && other=A
	want="reloaded $XBD_CONF:"$'\n'"  [bans] limit: 3 -> 7"
	for layer in allow deny trusted; do
		want+=$'\n'$(list_line "$layer" "$(wc -l <"$D/live.$layer")" "$(wc -l <"$D/$other.$layer")")
	done
	use "$other" && XBD_CONF_LIMIT=7 conf || return 1
	out=$(xbd_cli reload 2>&1)
	rc=$?
	e2e_expect "exit status" 0 "$rc" && e2e_expect "the output" "$want" "$out" &&
		e2e_expect "the limit in status" 7 "$(limit_in_force)"
}

case_cli_no_change() {
	local out rc
	out=$(xbd_cli reload 2>&1)
	rc=$?
	e2e_expect "exit status" 0 "$rc" && e2e_expect "the output" "reloaded $XBD_CONF: no change" "$out"
}

# After `set limit 9`, the value in force is what the reload changes back.
case_cli_json() {
	local out
	xbd_cli set limit 9 >/dev/null && XBD_CONF_LIMIT=7 XBD_CONF_BAN_TIME=2h conf || return 1
	out=$(xbd_cli reload --json) || { E2E_WHY="reload --json exited with status $?"; return 1; }
	e2e_expect "changed" "[{'key': '[bans] limit', 'old': '9', 'new': '7'}, {'key': '[bans] ban-time', 'old': '1h', 'new': '2h'}]" \
		"$(xbd_json 'd["changed"]' <<<"$out")" &&
		e2e_expect "config_file, lists_changed, restart" "$XBD_CONF [] []" \
			"$(xbd_json 'd["config_file"], d["lists_changed"], d["restart"]' <<<"$out" | tr -d "(),'")" &&
		e2e_expect "ban_time in status" 7200 "$(xbd_cli status --json | xbd_json 'd["config"]["ban_time"]')"
}

# One line naming the file, the line and the key, exit status 1; the old limit stays. The
# CLI that finds the socket in that file says the same before it asks.
case_cli_bad() {
	local out rc line err direct
	XBD_CONF_LIMIT=lots XBD_CONF_BAN_TIME=2h conf || return 1
	line=$(grep -n '^limit = lots$' "$XBD_CONF" | cut -d: -f1)
	out=$(xbd_cli reload 2>"$XBD_TMP/reload.err")
	rc=$?
	err=$(<"$XBD_TMP/reload.err")
	direct=$("$XBD_BIN/xdpban" --config "$XBD_CONF" reload 2>&1)
	XBD_CONF_LIMIT=7 XBD_CONF_BAN_TIME=2h conf
	echo "# $err"
	echo "# $direct"
	e2e_expect "exit status" 1 "$rc" && e2e_expect "standard output" "" "$out" &&
		e2e_expect "lines on standard error" 1 "$(wc -l <<<"$err")" || return 1
	[[ $err == "xdpban: reload: $XBD_CONF:$line: [bans] limit = 'lots': "*"; the old configuration is kept" ]] ||
		{ E2E_WHY="the error: '$err'"; return 1; }
	[[ $direct == *"$XBD_CONF:$line: [bans] limit = 'lots': "* ]] ||
		{ E2E_WHY="with --config: '$direct'"; return 1; }
	e2e_expect "the limit in force" 7 "$(limit_in_force)"
}

# No daemon on the socket: one line, status 1, and the pinned maps are not worked on.
case_cli_no_daemon() {
	local out rc
	out=$("$XBD_BIN/xdpban" --socket "$XBD_TMP/none.sock" --pin-dir "$XBD_PIN" reload 2>&1)
	rc=$?
	e2e_expect "exit status" 1 "$rc" &&
		e2e_expect "the error" "xdpban: reload: no daemon answers on $XBD_TMP/none.sock (--socket): No such file or directory" "$out"
}

if ! make_sets || ! start; then
	for c in "${CASES[@]}"; do xbd_fail "$c" "the daemon or the traffic did not start"; done
	e2e_finish
fi
sleep 0.5 # traffic under the first lists
swap
sleep 0.5 # and under the last
if ! stop_traffic; then
	for c in "${CASES[@]}"; do xbd_fail "$c" "the sender did not stop: $(head -c 300 "$XBD_TMP/spray.err")"; done
	e2e_finish
fi
e2e_case reloads_succeed case_reloads
e2e_case denied_never_passed case_denied
e2e_case trusted_and_allowed_never_dropped case_kept
e2e_case stats_count_every_datagram case_stats
t0=$EPOCHREALTIME
e2e_case cli_reload_prints_changes case_cli_changes
e2e_case cli_reload_no_change case_cli_no_change
e2e_case cli_reload_json case_cli_json
e2e_case cli_reload_bad_config_keeps_old case_cli_bad
e2e_case cli_reload_without_daemon case_cli_no_daemon
echo "# xdpban reload cases: $(awk "BEGIN { printf \"%.1f\", $EPOCHREALTIME - $t0 }") s"
e2e_finish
