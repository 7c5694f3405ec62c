#!/usr/bin/env bash
# e2e_history.sh BUILD - the event history file beside the state file (deploy/xdpband.8,
# "EVENT HISTORY"), with xdpband in a private pair of namespaces: the events from before a
# restart are shown by `xdpban events` after it, the new ones after them, and the file has the
# state file's mode and owner; a history past its bound ([events] history-max) is trimmed at
# the start and again when appends pass it, keeping the newest; a cut last line (a crash while
# writing) is skipped with a warning and the next event is a whole line; `xdpban events
# --since TIME` shows the events from TIME on, from the history, for a time in RFC 3339, a
# duration ago and @UNIX-SECONDS, with --json and --follow, and refuses a bad time with one
# line and exit status 2; with history = off there is no file; a history that cannot be
# opened is one warning and the daemon runs without it; `save` with no state file says so in
# one line.
#
# Everything it makes (namespaces, daemon, pins, files) is removed on any exit, through the
# daemon helpers' cleanup (tests/e2e/e2e_lib.sh). Needs root; skips without it.
# shellcheck disable=SC2317 # the case functions are called through e2e_case
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
source tests/e2e/e2e_lib.sh

CASES=(events_survive_restart history_trimmed_past_its_bound torn_last_line_skipped
	since_filters_by_time since_refuses_bad_times history_off_no_file unusable_history_warned
	save_without_state_file)
XBD_NS_TAG=xbhi- xbd_begin hi "${CASES[@]}"
XBD_HIST=$XBD_TMP/events

# "EVENT SOURCE" for each JSON line of stdin.
events_of() { "$XBD_PY" -c '
import json, sys
for line in sys.stdin:
    e = json.loads(line)
    print(e["event"], e["source"])'; }

# "EVENT SOURCE" for each event of `xdpban events --json ARG...`, oldest first.
events_seen() { xbd_cli events --json "$@" | events_of; }

# The number of lines of FILE that are not a JSON object with an integer time_unix.
bad_lines() { "$XBD_PY" -c '
import json, sys
bad = 0
for line in open(sys.argv[1], "rb").read().split(b"\n")[:-1]:
    try:
        ok = isinstance(json.loads(line)["time_unix"], int)
    except Exception:
        ok = False
    bad += not ok
print(bad)' "$1"; }

# restart [EXTRA_CONF_LINE]...: stops the daemon, writes the config with those lines, starts it.
restart() {
	xbd_stop TERM
	xbd_write_conf "[metrics]" "listen = off" "$@"
	xbd_start || { E2E_WHY="xdpband did not start: $(tail -3 "$XBD_LOG")"; return 1; }
}

case_survive() {
	e2e_run xbd_cli ban 203.0.113.5 --for 1h && e2e_run xbd_cli ban 203.0.113.6 &&
		e2e_run xbd_cli unban 203.0.113.5 || return 1
	e2e_expect "before the restart" "ban 203.0.113.5
ban 203.0.113.6
unban 203.0.113.5" "$(events_seen)" || return 1
	restart || return 1
	e2e_run xbd_cli ban 203.0.113.7 || return 1
	e2e_expect "after the restart" "ban 203.0.113.5
ban 203.0.113.6
unban 203.0.113.5
ban 203.0.113.7" "$(events_seen)" || return 1
	e2e_expect "the history's lines" 4 "$(wc -l <"$XBD_HIST")" &&
		e2e_expect "mode and owner, as the state file's" "$(stat -c '%a %U:%G' "$XBD_STATE")" \
			"$(stat -c '%a %U:%G' "$XBD_HIST")" &&
		e2e_expect "mode" 600 "$(stat -c %a "$XBD_HIST")" &&
		e2e_expect "the text line of a ban from before" 1 \
			"$(xbd_cli events | grep -c ' ban 203.0.113.6 for ever, reason manual$')"
}

# A history of 150 events (seq 1..150, one a second from an hour ago) under a bound of 100:
# the start keeps the newest 75, and 26 more bans pass the bound again.
case_trimmed() {
	local t0 out
	xbd_stop TERM
	t0=$(($(date +%s) - 3600))
	"$XBD_PY" - "$XBD_HIST" "$t0" <<-'EOF'
		import json, sys, time
		path, t0 = sys.argv[1], int(sys.argv[2])
		with open(path, "w") as f:
		    for i in range(1, 151):
		        t = t0 + i
		        f.write(json.dumps({"seq": i, "event": "unban", "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t)),
		                            "time_unix": t, "source": "198.51.100.%d" % (i % 250)}) + "\n")
	EOF
	restart "[events]" "history-max = 100" || return 1
	e2e_expect "lines after the start" 75 "$(wc -l <"$XBD_HIST")" &&
		e2e_expect "the oldest kept" '"seq": 76,' "$(head -1 "$XBD_HIST" | grep -o '"seq": 76,')" || return 1
	for i in $(seq 1 26); do
		xbd_cli ban "192.0.2.$((100 + i))" >/dev/null || { E2E_WHY="ban $i failed"; return 1; }
	done
	e2e_expect "lines after 26 more" 75 "$(wc -l <"$XBD_HIST")" &&
		e2e_expect "bad lines" 0 "$(bad_lines "$XBD_HIST")" || return 1
	out=$(xbd_cli events --json | tail -1 | xbd_json 'd["source"]')
	e2e_expect "the newest event" 192.0.2.126 "$out" &&
		e2e_expect "no temporary file left" "" "$(compgen -G "$XBD_HIST.tmp-*")"
}

case_torn() {
	local before
	restart || return 1
	e2e_run xbd_cli ban 192.0.2.201 || return 1
	xbd_stop TERM
	before=$(wc -l <"$XBD_HIST")
	printf '{"seq":9,"event":"ban","time":"2026-12-05T0' >>"$XBD_HIST" # a crash mid-line
	restart || return 1
	xbd_log_has "$XBD_HIST: its last line is cut short" ||
		{ E2E_WHY="no warning in the log: $(grep -i history "$XBD_LOG" | tail -2)"; return 1; }
	e2e_run xbd_cli ban 192.0.2.202 || return 1
	e2e_expect "lines" $((before + 1)) "$(wc -l <"$XBD_HIST")" &&
		e2e_expect "bad lines" 0 "$(bad_lines "$XBD_HIST")" &&
		e2e_expect "the last two events" "ban 192.0.2.201
ban 192.0.2.202" "$(events_seen | tail -2)"
}

# The history holds three unbans from 3 h, 90 min and 30 min ago (198.51.100.1, .2, .3); a ban
# is made now.
case_since() {
	local now follower
	xbd_stop TERM
	now=$(date +%s)
	"$XBD_PY" - "$XBD_HIST" "$now" <<-'EOF'
		import json, sys, time
		path, now = sys.argv[1], int(sys.argv[2])
		with open(path, "w") as f:
		    for i, ago in enumerate((10800, 5400, 1800), 1):
		        t = now - ago
		        f.write(json.dumps({"seq": i, "event": "unban", "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t)),
		                            "time_unix": t, "source": "198.51.100.%d" % i}) + "\n")
	EOF
	restart || return 1
	e2e_run xbd_cli ban 192.0.2.210 || return 1
	e2e_expect "--since 2h" "unban 198.51.100.2
unban 198.51.100.3
ban 192.0.2.210" "$(events_seen --since 2h)" || return 1
	e2e_expect "--since @(100 min ago)" "3" "$(xbd_cli events --since "@$((now - 6000))" --json | wc -l)" &&
		e2e_expect "--since RFC 3339 (45 min ago)" "2" \
			"$(xbd_cli events --since "$(date -u -d "@$((now - 2700))" +%Y-%m-%dT%H:%M:%SZ)" | wc -l)" &&
		e2e_expect "--since 1d: every one" "4" "$(xbd_cli events --since 1d | wc -l)" &&
		e2e_expect "the text line" 1 "$(xbd_cli events --since 40m | grep -c ' unban 198.51.100.3$')" || return 1
	# with --follow: the events from the time, then every later one
	xbd_cli events --since 40m --follow --json >"$XBD_TMP/follow" 2>&1 &
	follower=$!
	e2e_defer kill "$follower"
	e2e_wait 100 eval '(($(wc -l <"$XBD_TMP/follow") >= 2))' || { E2E_WHY="the follower printed: $(cat "$XBD_TMP/follow")"; return 1; }
	e2e_run xbd_cli ban 192.0.2.211 || return 1
	e2e_wait 100 eval '(($(wc -l <"$XBD_TMP/follow") >= 3))' || { E2E_WHY="the new ban was not followed: $(cat "$XBD_TMP/follow")"; return 1; }
	e2e_expect "followed" "unban 198.51.100.3
ban 192.0.2.210
ban 192.0.2.211" "$(events_of <"$XBD_TMP/follow")"
}

# bad_time ARG WANT_LINE: `xdpban events --since ARG` exits 2 with that one line.
bad_time() {
	local out rc
	out=$(xbd_cli events --since "$1" 2>&1)
	rc=$?
	e2e_expect "--since '$1': exit status" 2 "$rc" && e2e_expect "--since '$1'" "$2" "$out"
}

case_since_bad() {
	local both="expected a sequence number (0..9223372036854775807, with --follow) or a time: RFC 3339 (2026-12-05T06:00:00Z), a duration ago (10m, 2h, 1d) or @UNIX-SECONDS"
	bad_time yesterday "xdpban: bad --since 'yesterday': $both" &&
		bad_time 2026-13-01T00:00:00Z "xdpban: bad --since '2026-13-01T00:00:00Z': $both" &&
		bad_time 2026-12-05T06:00:00 "xdpban: bad --since '2026-12-05T06:00:00': $both" &&
		bad_time 10x "xdpban: bad --since '10x': $both" &&
		bad_time @12ab "xdpban: bad --since '@12ab': $both" &&
		bad_time 2999-01-01T00:00:00Z "xdpban: bad --since '2999-01-01T00:00:00Z': in the future" &&
		bad_time 5 "xdpban: events: --since SEQ needs --follow (a time needs a unit, a date or @)" || return 1
	e2e_expect "since_unix: a string" '{"ok":false,"error":"field \"since_unix\" must be a time in Unix seconds, 0..253402300799"}' \
		"$(xbd_request '{"cmd":"events","since_unix":"5"}')" &&
		e2e_expect "since_unix: -1" '{"ok":false,"error":"field \"since_unix\" must be a time in Unix seconds, 0..253402300799"}' \
			"$(xbd_request '{"cmd":"events","since_unix":-1}')" &&
		e2e_expect "since_unix with since" '{"ok":false,"error":"fields \"since\" and \"since_unix\" cannot go together"}' \
			"$(xbd_request '{"cmd":"events","follow":true,"since":0,"since_unix":5}')"
}

case_off() {
	rm -f "$XBD_HIST"
	restart "[events]" "history = off" || return 1
	e2e_run xbd_cli ban 192.0.2.203 || return 1
	e2e_expect "a history file" "" "$(compgen -G "$XBD_TMP/events*")" &&
		e2e_expect "the ring's events" "ban 192.0.2.203" "$(events_seen)" &&
		e2e_expect "the ring's events, --since 1h" "ban 192.0.2.203" "$(events_seen --since 1h)"
}

# A directory where the history should be: one warning, and the daemon runs without it.
case_unusable() {
	rm -f "$XBD_HIST"
	mkdir "$XBD_HIST" && e2e_defer rmdir "$XBD_HIST"
	restart || return 1
	xbd_log_has "cannot open the event history $XBD_HIST: Is a directory; running without the event history" ||
		{ E2E_WHY="no warning: $(grep -i 'event history' "$XBD_LOG" | tail -1)"; return 1; }
	e2e_run xbd_cli ban 192.0.2.204 || return 1
	e2e_expect "the ring's events" "ban 192.0.2.204" "$(events_seen)"
}

case_save_off() {
	restart || return 1 # the config's [state] file, then off
	xbd_stop TERM
	xbd_write_conf "[metrics]" "listen = off"
	sed -i "s|^file = .*|file = off|" "$XBD_CONF"
	xbd_start || { E2E_WHY="xdpband did not start"; return 1; }
	e2e_expect "save" '{"ok":false,"error":"save: no state file is configured ([state] file = off)"}' \
		"$(xbd_request '{"cmd":"save"}')"
}

xbd_write_conf "[metrics]" "listen = off"
if ! xbd_start; then
	for c in "${CASES[@]}"; do xbd_fail "$c" "xdpband did not start"; done
	e2e_finish
fi
e2e_case events_survive_restart case_survive
e2e_case history_trimmed_past_its_bound case_trimmed
e2e_case torn_last_line_skipped case_torn
e2e_case since_filters_by_time case_since
e2e_case since_refuses_bad_times case_since_bad
e2e_case history_off_no_file case_off
e2e_case unusable_history_warned case_unusable
e2e_case save_without_state_file case_save_off
e2e_finish
