#!/usr/bin/env bash
# e2e_operator.sh - what an operator reads from a running xdpband, end to end: the daemon's
# log names error classes and writes durations in the one format (never "7200s", never a
# hex mask); `ban` replies "for 7d"; a query shows the time left and a manual prefix ban as
# "manual", not by its list id; `unban` of an IPv6 address lifts the ban of its /64 key (and
# the daemon logs the prefix it lifted), and of an address inside a manual prefix ban names
# the prefix; the text `status` shows the state file, the lists and escalation that --json
# has; the xdpban_banned_sources gauge counts the ban table and the manual prefix bans, as
# status does; the CLI finds the daemon through $XDPBAN_SOCKET and through the config's
# [control] socket, and when nothing answers names the socket it tried and where it came
# from; `bans` keeps only the bans of a reason, an origin or inside a prefix, and sorts them by
# start, count or time left, text and --json alike, and refuses a bad value with exit 2; a
# ban's --comment shows in bans, query, events and the log, text and JSON, survives a stop
# and start through the state file, and a bad one (control character, too long, not UTF-8)
# is refused with exit 2 and bans nothing;
# `unban --all --reason R` lifts the bans of that reason only and `unban --all` the rest,
# saying how many, with an unban event for each, the offences forgotten and the state file
# saved without them; a bad unban changes nothing.
# Uses the daemon's helpers of tests/e2e/e2e_lib.sh; every namespace, daemon, pin and file it
# makes is removed by the cleanup of tests/e2e/e2e_lib.sh, also on failure.
#
# Usage: tests/e2e/e2e_operator.sh BUILD_DIR
set -uo pipefail
# shellcheck source=tests/e2e/e2e_lib.sh
source "$(dirname "$0")/e2e_lib.sh"

CASES=(log_names_classes_and_durations ban_and_query_in_one_format unban_lifts_key_or_names_prefix
	status_text_complete banned_gauge_counts_prefix_bans socket_from_env_and_config
	bans_filtered_and_sorted bans_bad_view_refused ban_comment_shown_everywhere
	ban_comment_bad_refused ban_comment_survives_restart unban_all_bad_input_refused
	unban_all_by_reason_then_the_rest)
xbd_begin o "${CASES[@]}"
XBD_DENY=$XBD_TMP/deny.list
printf '192.0.2.128/25\n' >"$XBD_DENY"
xbd_write_conf "[metrics]" "listen = 127.0.0.1:9433" "[lists]" "deny = $XBD_DENY"
sed -i 's/^ban-time = .*/&\nwindow = 2h/' "$XBD_CONF"

# run_cli ARGS...: the CLI on our daemon; sets out, err, rc.
run_cli() {
	xbd_cli "$@" >"$XBD_TMP/out" 2>"$XBD_TMP/err"
	rc=$?
	out=$(<"$XBD_TMP/out") err=$(<"$XBD_TMP/err")
}

# A duration as a person reads it: days to seconds, no zero part.
readonly ONE_FORMAT='([1-9][0-9]*d)?([1-9][0-9]?h)?([1-9][0-9]?m)?([1-9][0-9]?s)?'

case_log() {
	local bad
	run_cli set window 7200
	if ((rc != 0)); then
		xbd_fail log_names_classes_and_durations "set window 7200: $err"
	elif ! xbd_log_has "running: limit 3 errors per 2h, ban 1h,"; then
		xbd_fail log_names_classes_and_durations "no 'running: limit 3 errors per 2h, ban 1h,' line"
	elif ! xbd_wait_until xbd_log_has "settings changed over the control socket: limit 3, window 2h, ban-time 1h, limit rules none, ipv6-prefix 64, errors malformed,reported,protocol,probe, drop malformed,"; then
		xbd_fail log_names_classes_and_durations "the settings line lacks durations or class names: $(grep 'settings changed' "$XBD_LOG")"
	elif bad=$(grep -E '0x[0-9a-f]+|[0-9]{3,} ?s\b' "$XBD_LOG"); then
		xbd_fail log_names_classes_and_durations "raw values in the log: ${bad:0:200}"
	else
		xbd_pass log_names_classes_and_durations
	fi
}

case_ban_query() {
	local t0 left
	run_cli ban 192.0.2.50 --for 604800
	if [[ $rc != 0 || $out != "banned 192.0.2.50 for 7d" ]]; then
		xbd_fail ban_and_query_in_one_format "ban --for 604800 replied '$out' (exit $rc, $err)"
		return
	fi
	run_cli ban 203.0.113.0/24 --for 1d12h
	[[ $rc == 0 && $out == "banned 203.0.113.0/24 for 1d12h" ]] ||
		{ xbd_fail ban_and_query_in_one_format "ban --for 1d12h replied '$out' ($err)"; return; }
	run_cli query 192.0.2.50
	left=$(sed -n 's/^banned: *yes (manual, \(.*\))$/\1/p' <<<"$out")
	if ! xbd_wait_until xbd_log_has "manual ban 192.0.2.50 for 7d"; then
		xbd_fail ban_and_query_in_one_format "the log lacks 'manual ban 192.0.2.50 for 7d'"
	elif [[ ! $left =~ ^(7d|6d23h$ONE_FORMAT)$ ]]; then
		xbd_fail ban_and_query_in_one_format "query shows time left '$left': ${out:0:300}"
	elif ! run_cli query 203.0.113.9 || ! grep -qx 'policy: *deny (203.0.113.0/24, manual)' <<<"$out" ||
		! grep -qEx "banned: *yes \\(manual, (1d12h|1d11h$ONE_FORMAT)\\)" <<<"$out"; then
		xbd_fail ban_and_query_in_one_format "query of an address in a manual prefix ban: $(grep -E '^(policy|banned):' <<<"$out" | tr '\n' '|')"
	else
		xbd_pass ban_and_query_in_one_format
	fi
}

case_unban() {
	local want="no ban on 203.0.113.9 itself: it lies in the prefix ban 203.0.113.0/24 (unban 203.0.113.0/24 to lift it)"
	run_cli ban 2001:db8:77::/64 && run_cli unban 2001:db8:77::1
	if [[ $rc != 0 || $out != "unbanned 2001:db8:77::/64 (the key of 2001:db8:77::1)" ]]; then
		xbd_fail unban_lifts_key_or_names_prefix "unban 2001:db8:77::1: '$out' (exit $rc, $err)"
	elif ! xbd_not_banned 2001:db8:77::1; then
		xbd_fail unban_lifts_key_or_names_prefix "2001:db8:77::1 is still banned"
	elif ! xbd_wait_until xbd_log_has "manual unban 2001:db8:77::/64"; then
		xbd_fail unban_lifts_key_or_names_prefix "the log lacks 'manual unban 2001:db8:77::/64'"
	elif run_cli unban 203.0.113.9; [[ $rc != 1 || $err != "xdpban: $want" ]]; then
		xbd_fail unban_lifts_key_or_names_prefix "unban 203.0.113.9: exit $rc, '$err'"
	elif ! xbd_banned 203.0.113.9; then
		xbd_fail unban_lifts_key_or_names_prefix "unban 203.0.113.9 lifted the prefix ban"
	else
		xbd_pass unban_lifts_key_or_names_prefix
	fi
}

# The text shows what --json holds of the daemon, value for value.
case_status_text() {
	local json pid lines=() line missing=()
	json=$(xbd_cli status --json) || { xbd_fail status_text_complete "status --json failed"; return; }
	pid=$(xbd_json 'd["xdpband"]["pid"]' <<<"$json")
	run_cli status
	lines=("daemon: *running \\(pid $pid, since [0-9T:-]+Z\\)"
		"pin dir: *$XBD_PIN \\(detached and removed at exit\\)"
		"state file: *$XBD_STATE"
		"lists: *deny $XBD_DENY \\(1 entry\\)"
		"escalation: *on: ban time x2 per repeat within 1h, at most 1d; [0-9]+ offenders?, [0-9]+ bans? lengthened"
		"host addrs: .*192.0.2.1 \\($XBD_IF_R\\).*")
	for line in "${lines[@]}"; do
		grep -qEx "$line" <<<"$out" || missing+=("$line")
	done
	if ((rc != 0)); then
		xbd_fail status_text_complete "status exited $rc: $err"
	elif ((${#missing[@]})); then
		xbd_fail status_text_complete "no line /${missing[0]}/ in: $(head -12 <<<"$out" | tr '\n' '|')"
	else
		xbd_pass status_text_complete
	fi
}

# One ban in the ban table (192.0.2.50) and one manual prefix ban (203.0.113.0/24).
case_gauge() {
	local metrics json
	metrics=$(nsenter --net="/run/netns/$XBD_NS_R" curl -sf http://127.0.0.1:9433/metrics)
	json=$(xbd_cli status --json)
	if ! grep -qx 'xdpban_banned_sources{table="bans"} 1' <<<"$metrics" ||
		! grep -qx 'xdpban_banned_sources{table="policy"} 1' <<<"$metrics"; then
		xbd_fail banned_gauge_counts_prefix_bans "gauge: $(grep '^xdpban_banned_sources' <<<"$metrics" | tr '\n' '|')"
	elif [[ $(xbd_json '(d["banned"], d["prefix_bans"])' <<<"$json") != "(1, 1)" ]]; then
		xbd_fail banned_gauge_counts_prefix_bans "status says $(xbd_json '(d["banned"], d["prefix_bans"])' <<<"$json")"
	else
		xbd_pass banned_gauge_counts_prefix_bans
	fi
}

# cli_from ENV... -- ARGS...: the CLI with no --socket, ENV set, maps it can never find.
cli_from() {
	local env=()
	while [[ $1 != -- ]]; do env+=("$1"); shift; done
	shift
	env -u XDPBAN_SOCKET "${env[@]}" "$XBD_BIN/xdpban" --pin-dir "$XBD_TMP/no-pins" "$@" \
		>"$XBD_TMP/out" 2>"$XBD_TMP/err"
	rc=$?
	out=$(<"$XBD_TMP/out") err=$(<"$XBD_TMP/err")
}

case_socket() {
	local other=$XBD_TMP/other.conf
	sed "s|^socket = .*|socket = $XBD_TMP/other.sock|" "$XBD_CONF" >"$other"
	cli_from XDPBAN_SOCKET="$XBD_SOCK" -- status --json
	if [[ $rc != 0 || $(xbd_json 'd["daemon"]' <<<"$out") != True ]]; then
		xbd_fail socket_from_env_and_config "\$XDPBAN_SOCKET: exit $rc, $err"
		return
	fi
	cli_from -- --config "$XBD_CONF" status --json
	if [[ $rc != 0 || $(xbd_json 'd["daemon"]' <<<"$out") != True ]]; then
		xbd_fail socket_from_env_and_config "--config: exit $rc, $err"
		return
	fi
	cli_from XDPBAN_SOCKET="$XBD_TMP/none.sock" -- status
	if [[ $rc != 1 || $err != "xdpban: no daemon answers on $XBD_TMP/none.sock (\$XDPBAN_SOCKET), and "* ]]; then
		xbd_fail socket_from_env_and_config "a socket from \$XDPBAN_SOCKET that does not answer: exit $rc, '$err'"
		return
	fi
	cli_from -- --config "$other" status
	if [[ $rc != 1 || $err != "xdpban: no daemon answers on $XBD_TMP/other.sock ([control] socket of $other), and "* ]]; then
		xbd_fail socket_from_env_and_config "a socket from the config that does not answer: exit $rc, '$err'"
		return
	fi
	cli_from -- --config "$XBD_TMP/no.conf" status
	if [[ $rc != 1 || $err != "xdpban: cannot find the daemon's socket: cannot read config $XBD_TMP/no.conf: No such file or directory (give --socket or \$XDPBAN_SOCKET)" ]]; then
		xbd_fail socket_from_env_and_config "a config that does not exist: exit $rc, '$err'"
	else
		xbd_pass socket_from_env_and_config
	fi
}

# bans_of ARGS...: the prefixes `bans ARGS...` lists, in its order, on one line.
bans_of() { xbd_cli bans "$@" | awk 'NR > 1 { printf "%s%s", sep, $1; sep = " " }'; }

# After case_gauge: 192.0.2.50 (manual, 7d) and 203.0.113.0/24 (a manual prefix ban, 1d12h,
# no start recorded). Added a second later, so that they start in a later second than
# 192.0.2.50 (what the time order is checked on): a reported ban, an error ban and a manual
# IPv6 ban of 30m.
case_bans_view() {
	local got want json
	run_cli report 198.51.100.20 4
	sleep 1
	xbd_send synfin 192.0.2.66 4
	xbd_wait_until xbd_banned 192.0.2.66 || { xbd_fail bans_filtered_and_sorted "192.0.2.66 was not banned"; return; }
	run_cli ban 2001:db8:5::/64 --for 30m
	local -a checks=(
		"--reason manual --sort left|2001:db8:5::/64 203.0.113.0/24 192.0.2.50"
		"--reason errors|192.0.2.66"
		"--origin local --sort count|192.0.2.66 198.51.100.20"
		"--origin manual --sort count|192.0.2.50 203.0.113.0/24 2001:db8:5::/64"
		"--origin remote|"
		"--sort count|192.0.2.66 198.51.100.20 192.0.2.50 203.0.113.0/24 2001:db8:5::/64"
		"--sort time --reason manual|2001:db8:5::/64 192.0.2.50 203.0.113.0/24"
		"--sort time 192.0.2.0/23|192.0.2.66 192.0.2.50"
		"192.0.2.0/24 --sort count|192.0.2.66 192.0.2.50"
		"2001:db8::/32|2001:db8:5::/64"
		"203.0.113.0/25|"
		"--reason reported 198.51.100.0/24|198.51.100.20")
	for c in "${checks[@]}"; do
		# shellcheck disable=SC2086 # the words of the arguments
		got=$(bans_of ${c%%|*})
		want=${c#*|}
		[[ $got == "$want" ]] || { xbd_fail bans_filtered_and_sorted "bans ${c%%|*}: '$got', not '$want'"; return; }
	done
	json=$(xbd_cli bans --json --origin manual --sort left 192.0.2.0/23)
	got=$(xbd_json '" ".join(b["prefix"] + ":" + b["reason"] for b in d["bans"])' <<<"$json")
	if [[ $got != "192.0.2.50:manual" ]]; then
		xbd_fail bans_filtered_and_sorted "bans --json --origin manual 192.0.2.0/23: '$got'"
	elif [[ $(xbd_cli bans --reason manual 203.0.113.0/24 | tail -n1) != 203.0.113.0/24*manual*0*1d1* ]]; then
		xbd_fail bans_filtered_and_sorted "the prefix ban's row: $(xbd_cli bans --reason manual 203.0.113.0/24 | tail -n1)"
	elif [[ $(xbd_cli bans --reason errors 198.51.100.0/24) != "no bans" ]]; then
		xbd_fail bans_filtered_and_sorted "a view that keeps nothing does not say 'no bans'"
	else
		xbd_pass bans_filtered_and_sorted
	fi
}

# refused CASE CMD "ARGS|ERROR"...: each `CMD ARGS` exits 2 with ERROR alone on stderr and
# nothing on stdout; false after failing CASE on the first that does not.
refused() {
	local case=$1 cmd=$2 c
	shift 2
	for c in "$@"; do
		# shellcheck disable=SC2086 # the words of the arguments
		run_cli $cmd ${c%%|*}
		if [[ $rc != 2 || $err != "${c#*|}" || -n $out ]]; then
			xbd_fail "$case" "$cmd ${c%%|*}: exit $rc, '$err', '$out'"
			return 1
		fi
	done
}

case_bans_bad_view() {
	local before
	before=$(bans_of --sort count)
	local -a bad=(
		"--reason banned|xdpban: unknown reason 'banned': expected errors, manual, reported"
		"--sort oldest|xdpban: unknown sort key 'oldest': expected time, count or left"
		"--origin web/2|xdpban: bad origin 'web/2': expected local, manual, remote or a fleet node's name"
		"192.0.2.0/33|xdpban: bad prefix length in '192.0.2.0/33': must be 0..32"
		"2001:db8::/129|xdpban: bad prefix length in '2001:db8::/129': must be 0..128")
	refused bans_bad_view_refused bans "${bad[@]}" || return
	if [[ $(bans_of --sort count) != "$before" ]]; then
		xbd_fail bans_bad_view_refused "the bans changed: '$(bans_of --sort count)', not '$before'"
	else
		xbd_pass bans_bad_view_refused
	fi
}

readonly NOTE='ssh scan, 50% of SYNs'

# comment_of ADDR: the comment `query ADDR --json` shows, or None.
comment_of() { xbd_query "$1" 'd.get("comment")'; }

# bans_comments: "PREFIX=COMMENT" of the bans --json that have one, sorted, joined by "|";
# and "comments" when the reply kept that member (the CLI moves it into the bans).
bans_comments() {
	xbd_cli bans --json | xbd_json '"|".join(sorted(b["prefix"] + "=" + b["comment"] for b in d["bans"] if "comment" in b)) + ("|comments" if "comments" in d else "")'
}

# The bans of case_bans_view, two of them banned again with a comment.
case_comments() {
	local line events
	run_cli ban 192.0.2.50 --for 7d --comment "$NOTE"
	[[ $rc == 0 && $out == "banned 192.0.2.50 for 7d" ]] ||
		{ xbd_fail ban_comment_shown_everywhere "ban --comment: '$out' (exit $rc, $err)"; return; }
	run_cli ban 2001:db8:5::/64 --for 30m --comment 'café 😀'
	line=$(xbd_cli bans --reason manual 192.0.2.0/24)
	events=$(xbd_cli events --json | "$XBD_PY" -c '
import json, sys
print([e.get("comment") for e in map(json.loads, sys.stdin) if e["event"] == "ban" and e["source"] == "192.0.2.50"][-1])')
	if [[ $(bans_comments) != "192.0.2.50=$NOTE|2001:db8:5::/64=café 😀" ]]; then
		xbd_fail ban_comment_shown_everywhere "bans --json: '$(bans_comments)'"
	elif [[ $line != *"COMMENT"*$'\n'"192.0.2.50 "*" manual "*" $NOTE" ]]; then
		xbd_fail ban_comment_shown_everywhere "bans text: '$line'"
	elif [[ $(xbd_cli bans --reason manual 203.0.113.0/24 | tail -n1) != *" -" ]]; then
		xbd_fail ban_comment_shown_everywhere "a ban without a comment: '$(xbd_cli bans --reason manual 203.0.113.0/24 | tail -n1)'"
	elif [[ $(comment_of 192.0.2.50) != "$NOTE" || $(comment_of 2001:db8:5::77) != 'café 😀' ]] ||
		! grep -qx "comment: *$NOTE" <<<"$(xbd_cli query 192.0.2.50)"; then
		xbd_fail ban_comment_shown_everywhere "query: '$(comment_of 192.0.2.50)', '$(comment_of 2001:db8:5::77)'"
	elif [[ $(comment_of 192.0.2.66) != None ]]; then
		xbd_fail ban_comment_shown_everywhere "an error ban has a comment: $(comment_of 192.0.2.66)"
	elif [[ $events != "$NOTE" ]] || ! grep -q "ban 192.0.2.50 for 7d, reason manual; comment: $NOTE\$" <<<"$(xbd_cli events)"; then
		xbd_fail ban_comment_shown_everywhere "the ban event's comment: '$events'"
	elif ! xbd_wait_until xbd_log_has "manual ban 192.0.2.50 for 7d: $NOTE"; then
		xbd_fail ban_comment_shown_everywhere "the log lacks the comment"
	else
		xbd_pass ban_comment_shown_everywhere
	fi
}

case_comments_bad() {
	local before long
	before=$(bans_comments)
	long=$(printf 'x%.0s' {1..201})
	run_cli ban 192.0.2.51 --comment $'a\tb'
	[[ $rc == 2 && $err == "xdpban: comment holds a control character (0x09 at byte 2)" && -z $out ]] ||
		{ xbd_fail ban_comment_bad_refused "a tab: exit $rc, '$err'"; return; }
	run_cli ban 192.0.2.51 --comment "$long"
	[[ $rc == 2 && $err == "xdpban: comment of 201 bytes: at most 200" && -z $out ]] ||
		{ xbd_fail ban_comment_bad_refused "201 bytes: exit $rc, '$err'"; return; }
	run_cli ban 192.0.2.51 --comment $'caf\xe9'
	[[ $rc == 2 && $err == "xdpban: comment is not UTF-8 text (byte 4)" && -z $out ]] ||
		{ xbd_fail ban_comment_bad_refused "Latin-1: exit $rc, '$err'"; return; }
	if [[ $(xbd_request '{"cmd":"ban","prefix":"192.0.2.51","comment":"a\u001bb"}') != '{"ok":false,"error":"comment holds a control character (0x1b at byte 2)"}' ]]; then
		xbd_fail ban_comment_bad_refused "an escape over the socket: $(xbd_request '{"cmd":"ban","prefix":"192.0.2.51","comment":"a\u001bb"}')"
	elif ! xbd_not_banned 192.0.2.51 || [[ $(bans_comments) != "$before" ]]; then
		xbd_fail ban_comment_bad_refused "a refused ban changed the bans: $(bans_comments)"
	else
		xbd_pass ban_comment_bad_refused
	fi
}

# A stop and a start: the maps are made afresh (detach-on-exit), the bans and their comments
# come back from the state file.
case_comments_restart() {
	xbd_stop TERM
	if ! grep -qF "comment 192.0.2.50 text=ssh%20scan,%2050%25%20of%20SYNs" "$XBD_STATE"; then
		xbd_fail ban_comment_survives_restart "the state file lacks the comment: $(grep '^comment' "$XBD_STATE" | tr '\n' '|')"
	elif ! xbd_start; then
		xbd_fail ban_comment_survives_restart "xdpband did not start again"
	elif [[ $(bans_comments) != "192.0.2.50=$NOTE|2001:db8:5::/64=café 😀" ]]; then
		xbd_fail ban_comment_survives_restart "bans --json after the restart: '$(bans_comments)'"
	elif [[ $(comment_of 192.0.2.50) != "$NOTE" ]]; then
		xbd_fail ban_comment_survives_restart "query after the restart: '$(comment_of 192.0.2.50)'"
	else
		xbd_pass ban_comment_survives_restart
	fi
}

# events_unbanned: the sources of the unban events in the backlog, sorted, on one line.
events_unbanned() {
	xbd_cli events --json | "$XBD_PY" -c '
import json, sys
print(" ".join(sorted(e["source"] for e in map(json.loads, sys.stdin) if e["event"] == "unban")))'
}

case_unban_all_bad() {
	local before c
	before=$(bans_of --sort count)
	local -a bad=(
		"--all --reason banned|xdpban: unknown reason 'banned': expected errors, manual, reported"
		"--all 192.0.2.50|xdpban: unban: ADDR[/LEN] and --all exclude each other"
		"--reason manual 192.0.2.50|xdpban: unban: --reason goes with --all"
		"|xdpban: unban: missing ADDR[/LEN] or --all (see 'xdpban help unban')")
	refused unban_all_bad_input_refused unban "${bad[@]}" || return
	local -a raw=(
		'{"cmd":"unban","all":true,"prefix":"192.0.2.50"}|field \"prefix\" and \"all\": true exclude each other'
		'{"cmd":"unban","reason":"manual","prefix":"192.0.2.50"}|field \"reason\" needs \"all\": true'
		'{"cmd":"unban","all":"yes"}|field \"all\" must be true or false'
		'{"cmd":"unban","all":true,"reason":"oops"}|unknown reason')
	for c in "${raw[@]}"; do
		if [[ $(xbd_request "${c%%|*}") != '{"ok":false,"error":"'"${c#*|}"* ]]; then
			xbd_fail unban_all_bad_input_refused "${c%%|*}: $(xbd_request "${c%%|*}")"
			return
		fi
	done
	if [[ $(bans_of --sort count) != "$before" ]]; then
		xbd_fail unban_all_bad_input_refused "the bans changed: '$(bans_of --sort count)', not '$before'"
	else
		xbd_pass unban_all_bad_input_refused
	fi
}

# The five bans of case_bans_view: three manual, one reported, one of errors. The events come
# from the history, which kept the unban of case_unban across the restart of
# case_comments_restart.
case_unban_all() {
	local offenders
	run_cli unban --all --reason manual
	if [[ $rc != 0 || $out != "unbanned 3 sources" ]]; then
		xbd_fail unban_all_by_reason_then_the_rest "unban --all --reason manual: '$out' (exit $rc, $err)"
		return
	fi
	if [[ $(bans_of --sort count) != "192.0.2.66 198.51.100.20" ]]; then
		xbd_fail unban_all_by_reason_then_the_rest "after --reason manual: '$(bans_of --sort count)'"
		return
	elif ! xbd_not_banned 203.0.113.9 || ! xbd_wait_until xbd_log_has "manual unban of every manual ban: 3 bans lifted"; then
		xbd_fail unban_all_by_reason_then_the_rest "the prefix ban stayed, or no log line"
		return
	fi
	run_cli unban --all
	if [[ $rc != 0 || $out != "unbanned 2 sources" ]]; then
		xbd_fail unban_all_by_reason_then_the_rest "unban --all: '$out' (exit $rc, $err)"
		return
	fi
	run_cli unban --all
	offenders=$(xbd_cli status --json | xbd_json 'd["xdpband"]["escalation"]["offenders"]')
	if [[ $out != "unbanned 0 sources" || $(xbd_cli bans) != "no bans" ]]; then
		xbd_fail unban_all_by_reason_then_the_rest "a second unban --all: '$out'; bans: $(xbd_cli bans | head -3)"
	elif [[ $(events_unbanned) != "192.0.2.50 192.0.2.66 198.51.100.20 2001:db8:5::/64 2001:db8:77::/64 203.0.113.0/24" ]]; then
		xbd_fail unban_all_by_reason_then_the_rest "unban events: '$(events_unbanned)'"
	elif [[ $offenders != 0 ]]; then
		xbd_fail unban_all_by_reason_then_the_rest "$offenders offenders remembered after unban --all"
	elif [[ $(xbd_request '{"cmd":"save"}') != '{"ok":true,'* ]] || grep -qE '^(ban|prefix|offence|comment) ' "$XBD_STATE"; then
		xbd_fail unban_all_by_reason_then_the_rest "the state file keeps: $(grep -E '^(ban|prefix|offence|comment) ' "$XBD_STATE" | tr '\n' '|')"
	else
		xbd_pass unban_all_by_reason_then_the_rest
	fi
}

if xbd_start; then
	case_log
	case_ban_query
	case_unban
	case_status_text
	case_gauge
	case_socket
	case_bans_view
	case_bans_bad_view
	case_comments
	case_comments_bad
	case_comments_restart
	case_unban_all_bad
	case_unban_all
else
	for c in "${CASES[@]}"; do xbd_fail "$c" "the daemon did not start"; done
fi
xbd_stop TERM
((E2E_FAILED == 0))
