#!/usr/bin/env bash
# e2e_limits.sh - the rules of limits end to end (docs/datapath.md, "Rules of limits"): xdpband
# with a global limit of 10, `limit.probe = 2`, and `limit.6969 = 1` for the guarded tracker
# port (53 is guarded too, without limits of its own); datagrams from addresses of the sender
# namespace, through an ordinary socket.
#   config_shows_rules        status --json lists the two rules with their limits, what they own
#                             and what they inherit
#   class_limit_own_class     a prober of closed ports is banned at its 3rd probe (class probe),
#                             while a source of 3 protocol errors to port 53 is not: its query
#                             names the global rule and limit 10, the prober's names probe
#   port_limit_own_port       2 junk datagrams to 6969 ban their source (port 6969's limit 1)
#   ban_shows_last_error      the tracker junk sender's ban names its last error, 6969/udp, and
#                             the rule 6969/udp: in query (JSON and text, with the ban's start),
#                             in bans --json and in its ban event (JSON and text); the prober's
#                             names 9999/udp and probe
#   set_changes_one_rule      `xdpban set limit.probe 4`: status shows it, a new prober is
#                             counted past 3 and banned at its 5th; the state file keeps it, and
#                             the global limit did not move
#   set_refuses_bad_rules     an unknown class, a port out of range, a port without a guard, a
#                             bad value: one line each, exit non-zero, the rules unchanged
#   restart_keeps_set_rule    after a restart the rule set at run time is still in force
#   restart_keeps_last_error  after a restart that made new maps (detach-on-exit), the tracker
#                             junk sender's ban, restored from the state file, still names its
#                             last error 6969/udp and the rule 6969/udp
#   upgrade_replaces_config   an older build's program attached with a pinned config entry of
#                             the older, shorter layout: the next start replaces that pin (and
#                             says so) and the program, and the rules apply: a new prober is
#                             banned at its 5th probe
# Uses the daemon's helpers of tests/e2e/e2e_lib.sh; every namespace, daemon, process, pin and
# file it makes is removed by the cleanup of tests/e2e/e2e_lib.sh, also on failure.
# Documentation addresses only; it never touches an interface it did not create.
#
# Usage: tests/e2e/e2e_limits.sh BUILD_DIR
# shellcheck disable=SC2317 # the cases are called below
set -uo pipefail
# shellcheck source=tests/e2e/e2e_lib.sh
source "$(dirname "$0")/e2e_lib.sh"
cd "$(dirname "$0")/../.." || exit 1

CASES=(config_shows_rules class_limit_own_class port_limit_own_port ban_shows_last_error
	set_changes_one_rule
	set_refuses_bad_rules restart_keeps_set_rule restart_keeps_last_error upgrade_replaces_config)
xbd_begin xbli "${CASES[@]}"

HOST=192.0.2.1 PROBER=192.0.2.20 DNS_JUNK=192.0.2.21 TRACKER_JUNK=192.0.2.22
PROBER2=192.0.2.23 PROBER3=192.0.2.24 CLOSED=9999

# send SRC PORT COUNT: COUNT datagrams of 10 bytes (a protocol error for both guards) from SRC.
send() {
	ip netns exec "$XBD_NS_S" "$XBD_PY" tests/tools/xb_send.py udp "$1" "$HOST" "$2" "$3"
}
# rule NAME EXPR: EXPR of the rule NAME of status --json (r is the rule), or "none".
rule() {
	xbd_cli status --json | "$XBD_PY" -c '
import json, sys
d = json.load(sys.stdin)
print(next((eval(sys.argv[2], {}, {"r": r}) for r in d["config"]["rules"]
            if r["rule"] == sys.argv[1]), "none"))' "$1" "$2"
}
count_is() { xbd_count_is "$1" "$2"; }

case_config() {
	local probe port
	probe=$(rule probe '(r["limit"], r["window"], r["ban_time"], r["own"])')
	port=$(rule 6969/udp '(r["limit"], r["ban_time"], r["own"])')
	if [[ $probe != "(2, 86400, 3600, ['limit'])" ]]; then
		xbd_fail config_shows_rules "rule probe (limit, window, ban_time, own): $probe"
	elif [[ $port != "(1, 3600, ['limit'])" ]]; then
		xbd_fail config_shows_rules "rule 6969/udp (limit, ban_time, own): $port"
	elif ! xbd_limit_is 10; then
		xbd_fail config_shows_rules "global limit $(xbd_cli status --json | xbd_json 'd["config"]["limit"]')"
	else
		xbd_pass config_shows_rules
	fi
}

case_class() {
	local q1 q2 text
	send "$PROBER" "$CLOSED" 1
	xbd_wait_until count_is "$PROBER" 1
	q1=$(xbd_query "$PROBER" '(d["limit"], d["rule"])')
	text=$(xbd_cli query "$PROBER")
	send "$PROBER" "$CLOSED" 2
	send "$DNS_JUNK" 53 3
	xbd_wait_until xbd_banned "$PROBER"
	xbd_wait_until count_is "$DNS_JUNK" 3
	q2=$(xbd_query "$DNS_JUNK" '(d["count"], d["banned"], d["limit"], d["rule"])')
	if [[ $q1 != "(2, 'probe')" ]]; then
		xbd_fail class_limit_own_class "the prober's query after 1 probe (limit, rule): $q1"
	elif [[ $(xbd_ban_of "$PROBER") != "3 errors" || $(xbd_ban_classes "$PROBER") != probe ]]; then
		xbd_fail class_limit_own_class "the prober's ban: '$(xbd_ban_of "$PROBER")' '$(xbd_ban_classes "$PROBER")'"
	elif [[ $q2 != "(3, False, 10, 'global')" ]]; then
		xbd_fail class_limit_own_class "the DNS junk sender (count, banned, limit, rule): $q2"
	elif ! grep -q '^limit: *2 (rule probe)$' <<<"$text"; then
		xbd_fail class_limit_own_class "query does not name the rule: $(tr '\n' '|' <<<"$text")"
	else
		xbd_pass class_limit_own_class
	fi
}

case_port() {
	send "$TRACKER_JUNK" 6969 2
	xbd_wait_until xbd_banned "$TRACKER_JUNK"
	if [[ $(xbd_ban_of "$TRACKER_JUNK") != "2 errors" ||
		$(xbd_ban_classes "$TRACKER_JUNK") != protocol ]]; then
		xbd_fail port_limit_own_port "its ban: '$(xbd_ban_of "$TRACKER_JUNK")' '$(xbd_ban_classes "$TRACKER_JUNK")'; $(xbd_cli query "$TRACKER_JUNK" --json)"
	elif ! xbd_not_banned "$DNS_JUNK"; then
		xbd_fail port_limit_own_port "the DNS junk sender was banned too"
	else
		xbd_pass port_limit_own_port
	fi
}

case_last_error() {
	local q text bans event event_text prober
	q=$(xbd_query "$TRACKER_JUNK" '(d["last_error"], d["ban_rule"], d["started"] is not None)')
	text=$(xbd_cli query "$TRACKER_JUNK")
	bans=$(xbd_cli bans --json | xbd_json "[(b['last_error'], b['ban_rule']) for b in d['bans'] if b['prefix'] == '$TRACKER_JUNK']")
	event=$(xbd_cli events --json | "$XBD_PY" -c '
import json, sys
print([(e["last_error"], e["ban_rule"]) for e in map(json.loads, sys.stdin)
       if e["event"] == "ban" and e["source"] == sys.argv[1]])' "$TRACKER_JUNK")
	event_text=$(xbd_cli events | grep " ban $TRACKER_JUNK ")
	prober=$(xbd_query "$PROBER" '(d["last_error"], d["ban_rule"])')
	if [[ $q != "('6969/udp', '6969/udp', True)" ]]; then
		xbd_fail ban_shows_last_error "query (last_error, ban_rule, started): $q"
	elif ! grep -Eq '^last error: +6969/udp at [0-9-]+T[0-9:]+Z \(rule 6969/udp\)$' <<<"$text"; then
		xbd_fail ban_shows_last_error "query text: $(tr '\n' '|' <<<"$text")"
	elif [[ $bans != "[('6969/udp', '6969/udp')]" ]]; then
		xbd_fail ban_shows_last_error "bans --json: $bans"
	elif [[ $event != "[('6969/udp', '6969/udp')]" || $event_text != *"(protocol), last error 6969/udp, reason errors"* ]]; then
		xbd_fail ban_shows_last_error "events: $event / '$event_text'"
	elif [[ $prober != "('9999/udp', 'probe')" ]]; then
		xbd_fail ban_shows_last_error "the prober's query (last_error, ban_rule): $prober"
	elif ! xbd_log_has "2 errors (protocol), last error 6969/udp, reason errors"; then
		xbd_fail ban_shows_last_error "the daemon's line of the ban: $(grep "ban $TRACKER_JUNK" "$XBD_LOG")"
	else
		xbd_pass ban_shows_last_error
	fi
}

case_set() {
	local out probe counted
	if ! out=$(xbd_cli set limit.probe 4 2>&1); then
		xbd_fail set_changes_one_rule "xdpban set limit.probe 4: $out"
		return
	fi
	probe=$(rule probe '(r["limit"], r["own"])')
	send "$PROBER2" "$CLOSED" 4
	xbd_wait_until count_is "$PROBER2" 4
	counted=$(xbd_query "$PROBER2" '(d["count"], d["banned"], d["limit"])')
	send "$PROBER2" "$CLOSED" 1
	xbd_wait_until xbd_banned "$PROBER2"
	if [[ $probe != "(4, ['limit'])" ]]; then
		xbd_fail set_changes_one_rule "rule probe after the set (limit, own): $probe"
	elif [[ $counted != "(4, False, 4)" ]]; then
		xbd_fail set_changes_one_rule "after 4 probes (count, banned, limit): $counted"
	elif [[ $(xbd_ban_of "$PROBER2") != "5 errors" ]]; then
		xbd_fail set_changes_one_rule "its ban: '$(xbd_ban_of "$PROBER2")'"
	elif ! grep -qx 'set limit.probe 4' "$XBD_STATE"; then
		xbd_fail set_changes_one_rule "the state file does not keep it: $(grep '^set' "$XBD_STATE" | tr '\n' '|')"
	elif ! xbd_limit_is 10; then
		xbd_fail set_changes_one_rule "the global limit moved"
	else
		xbd_pass set_changes_one_rule
	fi
}

case_bad() {
	local bad=() before after args out rc
	before=$(xbd_cli status --json | xbd_json 'd["config"]["rules"]')
	for args in "limit.bogus 3|an error class (one of" "limit.70000 1|or a UDP port 1..65535" \
		"limit.6970 1|no guard in force" "limit.probe -1|bad limit.probe" \
		"window.probe 0|out of range" "ban-time.6969 soon|bad ban-time.6969"; do
		# shellcheck disable=SC2086 # the key and value are two words
		out=$(xbd_cli set ${args%%|*} 2>&1)
		rc=$?
		if ((rc == 0)) || [[ $(wc -l <<<"$out") != 1 || $out != *"${args#*|}"* ]]; then
			bad+=("set ${args%%|*}: exit $rc, '$out'")
		fi
	done
	after=$(xbd_cli status --json | xbd_json 'd["config"]["rules"]')
	if ((${#bad[@]})); then
		xbd_fail set_refuses_bad_rules "${bad[*]}"
	elif [[ $before != "$after" ]]; then
		xbd_fail set_refuses_bad_rules "the rules changed: $before -> $after"
	else
		xbd_pass set_refuses_bad_rules
	fi
}

case_restart() {
	xbd_stop TERM
	if ! xbd_start; then
		xbd_fail restart_keeps_set_rule "the daemon did not start again: $(tail -n 3 "$XBD_LOG")"
	elif [[ $(rule probe 'r["limit"]') != 4 || $(rule 6969/udp 'r["limit"]') != 1 ]]; then
		xbd_fail restart_keeps_set_rule "rules after the restart: $(xbd_cli status --json | xbd_json 'd["config"]["rules"]')"
	else
		xbd_pass restart_keeps_set_rule
	fi
	local q
	q=$(xbd_query "$TRACKER_JUNK" '(d["banned"], d["last_error"], d["ban_rule"])')
	if ! grep -q "restored from $XBD_STATE: [1-9][0-9]* bans\?," "$XBD_LOG"; then
		xbd_fail restart_keeps_last_error "no ban restored from the state file: $(grep -i restored "$XBD_LOG" | tail -n 2)"
	elif [[ $q != "(True, '6969/udp', '6969/udp')" ]]; then
		xbd_fail restart_keeps_last_error "query after the restart (banned, last_error, ban_rule): $q"
	else
		xbd_pass restart_keeps_last_error
	fi
}

case_upgrade() {
	local old new
	xbd_stop TERM
	XBD_CONF_LIMIT=10 XBD_CONF_DETACH=no xbd_write_conf "[ports]" "guard = 6969/bep15, 53/dns" \
		"open-udp = 123" "[bans]" "limit.probe = 2" "limit.6969 = 1"
	# an older build, as it would have been attached: its config entry had 32 bytes
	if ! xbd_start || ! xbd_stop TERM || ! xbd_old_build 32 2>"$XBD_TMP/old.err"; then
		xbd_fail upgrade_replaces_config "cannot attach the older build: $(head -c 300 "$XBD_TMP/old.err")"
		return
	fi
	old=$(xbd_prog_id)
	if ! xbd_start; then
		xbd_fail upgrade_replaces_config "xdpband did not start over the older build: $(tail -n 2 "$XBD_LOG")"
		return
	fi
	new=$(xbd_prog_id)
	send "$PROBER3" "$CLOSED" 4
	xbd_wait_until count_is "$PROBER3" 4
	send "$PROBER3" "$CLOSED" 1
	xbd_wait_until xbd_banned "$PROBER3"
	if ! xbd_log_has "xdpban_config: the pin had another version's layout; replaced"; then
		xbd_fail upgrade_replaces_config "no log line of the replaced pin: $(grep -i pin "$XBD_LOG" | tail -n 2)"
	elif [[ -z $old || $new == "$old" ]]; then
		xbd_fail upgrade_replaces_config "the older program $old was not replaced (now '$new')"
	elif [[ $(bpftool -j map show pinned "$XBD_PIN/xdpban_config" | xbd_json 'd["bytes_value"]') == 32 ]]; then
		xbd_fail upgrade_replaces_config "the pin still has the older layout"
	elif [[ $(xbd_ban_of "$PROBER3") != "5 errors" ]]; then
		xbd_fail upgrade_replaces_config "the new prober's ban: '$(xbd_ban_of "$PROBER3")' (limit.probe 4 set at run time)"
	else
		xbd_pass upgrade_replaces_config
	fi
}

for addr in "$PROBER" "$DNS_JUNK" "$TRACKER_JUNK" "$PROBER2" "$PROBER3"; do
	ip -n "$XBD_NS_S" addr add "$addr/24" dev "$XBD_IF_S" || xbd_fail_all "cannot add $addr" "${CASES[@]}"
done
XBD_CONF_LIMIT=10 xbd_write_conf "[ports]" "guard = 6969/bep15, 53/dns" "open-udp = 123" \
	"[bans]" "limit.probe = 2" "limit.6969 = 1"
if ! xbd_start; then
	xbd_fail_all "the daemon did not start: $(tail -n 3 "$XBD_LOG")" "${CASES[@]}"
fi
case_config
case_class
case_port
case_last_error
case_set
case_bad
case_restart
case_upgrade
xbd_stop TERM
e2e_finish
