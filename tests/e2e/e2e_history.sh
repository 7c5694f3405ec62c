#!/usr/bin/env bash
# e2e_history.sh BUILD - the event history file beside the state file (deploy/xdpband.8,
# "EVENT HISTORY"), with xdpband in a private pair of namespaces: the events from before a
# restart are shown by `xdpban events` after it, the new ones after them, and the file has the
# state file's mode and owner; a history past its bound ([events] history-max) is trimmed at
# the start and again when appends pass it, keeping the newest; a cut last line (a crash while
# writing) is skipped with a warning and the next event is a whole line; with history = off
# there is no file; `save` with no state file says so in one line.
#
# Everything it makes (namespaces, daemon, pins, files) is removed on any exit, through the
# daemon helpers' cleanup (tests/e2e/e2e_lib.sh). Needs root; skips without it.
# shellcheck disable=SC2317 # the case functions are called through e2e_case
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
source tests/e2e/e2e_lib.sh

CASES=(events_survive_restart history_trimmed_past_its_bound torn_last_line_skipped
	history_off_no_file save_without_state_file)
XBD_NS_TAG=xbhi- xbd_begin hi "${CASES[@]}"
XBD_HIST=$XBD_TMP/events

# "EVENT SOURCE" for each event of `xdpban events --json`, oldest first.
events_seen() { xbd_cli events --json | "$XBD_PY" -c '
import json, sys
for line in sys.stdin:
    e = json.loads(line)
    print(e["event"], e["source"])'; }

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

case_off() {
	rm -f "$XBD_HIST"
	restart "[events]" "history = off" || return 1
	e2e_run xbd_cli ban 192.0.2.203 || return 1
	e2e_expect "a history file" "" "$(compgen -G "$XBD_TMP/events*")" &&
		e2e_expect "the ring's events" "ban 192.0.2.203" "$(events_seen)"
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
e2e_case history_off_no_file case_off
e2e_case save_without_state_file case_save_off
e2e_finish
