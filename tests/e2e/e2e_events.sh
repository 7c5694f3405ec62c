#!/usr/bin/env bash
# e2e_events.sh BUILD - the daemon's event stream (docs/control.md, "events"), with xdpband
# running in a private pair of namespaces (limit 3): `xdpban events` prints the backlog of a
# ban made on the wire (errors) and one made by hand; two `xdpban events --follow` readers
# each get every one of 300 bans in order, and the daemon answers other requests meanwhile,
# while a third subscriber that never reads is dropped and counted; an unban and the expiry
# of a 1 s ban reach a follower; without the daemon, and for a bad request, there is one
# clear error.
#
# Everything it makes (namespaces, daemon, readers, pins, files) is removed on any exit,
# through the daemon helpers' cleanup (tests/e2e/e2e_lib.sh). Needs root; skips without it.
# shellcheck disable=SC2317 # the case functions are called through e2e_case
set -uo pipefail
build=${1:-build}
cd "$(dirname "$0")/../.." || exit 1
source tests/e2e/e2e_lib.sh

CASES=(backlog_has_both_bans followers_get_every_ban silent_subscriber_dropped
	unban_and_expiry_followed bad_request_refused events_need_the_daemon)
xbd_begin v "${CASES[@]}"
readonly BURST=300

# The events a follower wrote, one JSON object a line: "EVENT SOURCE" for each.
events_of() { "$XBD_PY" -c '
import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    print(e["event"], e["source"])' "$1"; }

# Sequence numbers of a follower's file: they must rise by one.
seq_gaps() { "$XBD_PY" -c '
import json, sys
seq = [json.loads(l)["seq"] for l in open(sys.argv[1])]
print(sum(1 for a, b in zip(seq, seq[1:]) if b != a + 1))' "$1"; }

lines_in() { [[ -f $1 ]] && (($(wc -l <"$1") >= $2)); }

events_status() { xbd_cli status --json | xbd_json "d['xdpband']['events']['$1']"; }

case_backlog() {
	local out
	xbd_send synfin 192.0.2.2 4 || { E2E_WHY="cannot send"; return 1; }
	e2e_wait 100 xbd_banned 192.0.2.2 || { E2E_WHY="192.0.2.2 was not banned"; return 1; }
	e2e_run xbd_cli ban 203.0.113.5 --for 1h || return 1
	out=$(xbd_cli events --json | "$XBD_PY" -c '
import json, sys
for line in sys.stdin:
    e = json.loads(line)
    print(e["event"], e["source"], e["reason"], e["count"], ",".join(e["classes"]), e["seconds"])')
	e2e_expect "the backlog" "ban 192.0.2.2 errors 4 malformed 3600
ban 203.0.113.5 manual 0  3600" "$out" || return 1
	out=$(xbd_cli events | tail -1)
	[[ $out == *" ban 203.0.113.5 for 1h"*", reason manual" ]] ||
		{ E2E_WHY="text line: '$out'"; return 1; }
	# Every time of day as the protocol writes them, RFC 3339 in UTC, with Unix seconds beside.
	out=$(xbd_cli events --json | "$XBD_PY" -c '
import json, sys, time
for line in sys.stdin:
    e = json.loads(line)
    if e["source"] != "203.0.113.5":
        continue
    stamp = lambda t: time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))
    print(e["time"] == stamp(e["time_unix"]), e["expires"] == stamp(e["expires_unix"]),
          e["expires_unix"] - e["time_unix"])')
	e2e_expect "the manual ban's times" "True True 3600" "$out"
}

# Two followers and a subscriber that never reads; then a burst of manual bans on one
# connection.
case_followers() {
	local i want
	for i in 1 2; do
		xbd_cli events --follow --json >"$XBD_TMP/follow$i" 2>"$XBD_TMP/follow$i.err" &
		e2e_defer e2e__kill "$!"
	done
	"$XBD_PY" -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.connect(sys.argv[1])
s.sendall(b"{\"cmd\":\"events\",\"follow\":true}\n")
time.sleep(600)' "$XBD_SOCK" &
	e2e_defer e2e__kill "$!"
	e2e_wait 100 eval '[[ $(events_status subscribers) == 3 ]]' ||
		{ E2E_WHY="3 subscribers expected, status says $(events_status subscribers)"; return 1; }
	"$XBD_PY" -c '
import json, socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(20)
s.connect(sys.argv[1])
f = s.makefile()
for i in range(int(sys.argv[2])):
    s.sendall(json.dumps({"cmd": "ban", "prefix": "2001:db8:e::%x" % (i + 1), "seconds": 3600}).encode() + b"\n")
    r = json.loads(f.readline())
    if not r["ok"]:
        sys.exit(r["error"])' "$XBD_SOCK" "$BURST" || { E2E_WHY="a ban of the burst failed"; return 1; }
	xbd_answers || { E2E_WHY="the daemon did not answer status after the burst"; return 1; }
	want=$((BURST + 2)) # the backlog's two bans, then the burst
	for i in 1 2; do
		e2e_wait 100 lines_in "$XBD_TMP/follow$i" "$want" ||
			{ E2E_WHY="follower $i has $(wc -l <"$XBD_TMP/follow$i") events, expected $want"; return 1; }
		e2e_expect "follower $i's last event" "ban 2001:db8:e::12c" \
			"$(events_of "$XBD_TMP/follow$i" | tail -1)" &&
			e2e_expect "bans of the burst follower $i got" "$BURST" \
				"$(events_of "$XBD_TMP/follow$i" | grep -c '^ban 2001:db8:e::')" &&
			e2e_expect "gaps in follower $i's sequence" 0 "$(seq_gaps "$XBD_TMP/follow$i")" ||
			return 1
	done
}

case_silent() {
	e2e_wait 100 eval '[[ $(events_status subscribers_dropped) == 1 ]]' ||
		{ E2E_WHY="subscribers_dropped is $(events_status subscribers_dropped), expected 1"; return 1; }
	e2e_expect subscribers 2 "$(events_status subscribers)" &&
		e2e_wait 50 xbd_log_has "dropped the event subscriber of uid 0"
}

case_unban_expiry() {
	e2e_run xbd_cli ban 203.0.113.9 --for 1s && e2e_run xbd_cli unban 203.0.113.5 || return 1
	# the sweep tells of an expiry: every 5 s
	e2e_wait 150 eval 'events_of "$XBD_TMP/follow1" | grep -qx "expire 203.0.113.9"' ||
		{ E2E_WHY="no expiry of 203.0.113.9 in $(events_of "$XBD_TMP/follow1" | tail -3 | xargs)"; return 1; }
	e2e_expect "the tail of follower 1" "ban 203.0.113.9
unban 203.0.113.5
expire 203.0.113.9" "$(events_of "$XBD_TMP/follow1" | tail -3)"
}

case_bad_request() {
	e2e_expect "follow: 1" '{"ok":false,"error":"field \"follow\" must be true or false"}' \
		"$(xbd_request '{"cmd":"events","follow":1}')" &&
		e2e_expect "an unknown field" '{"ok":false,"error":"unknown field \"from\" for events"}' \
			"$(xbd_request '{"cmd":"events","from":3}')"
}

case_no_daemon() {
	local out rc
	xbd_stop TERM
	out=$(xbd_cli events 2>&1)
	rc=$?
	e2e_expect "exit status" 1 "$rc" || return 1
	[[ $out == "xdpban: events come from the daemon, and it does not answer: "* && $out != *$'\n'* ]] ||
		{ E2E_WHY="message: '$out'"; return 1; }
	# followers see the end of the stream and exit 1
	e2e_wait 50 eval '! pgrep -f "xdpban --socket $XBD_SOCK --pin-dir $XBD_PIN events" >/dev/null' ||
		{ E2E_WHY="a follower did not end with the daemon"; return 1; }
	grep -q "the daemon closed the connection without a further line" "$XBD_TMP/follow1.err" ||
		{ E2E_WHY="follower 1 said: $(cat "$XBD_TMP/follow1.err")"; return 1; }
}

xbd_write_conf "[metrics]" "listen = off"
if ! xbd_start; then
	for c in "${CASES[@]}"; do xbd_fail "$c" "xdpband did not start"; done
	e2e_finish
fi
e2e_case backlog_has_both_bans case_backlog
e2e_case followers_get_every_ban case_followers
e2e_case silent_subscriber_dropped case_silent
e2e_case unban_and_expiry_followed case_unban_expiry
e2e_case bad_request_refused case_bad_request
e2e_case events_need_the_daemon case_no_daemon
e2e_finish
