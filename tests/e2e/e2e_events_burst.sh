#!/usr/bin/env bash
# e2e_events_burst.sh BUILD - the event stream in a burst (docs/control.md, "events"), with
# xdpband running in a private pair of namespaces and limit 0, so that one malformed frame
# bans its source: 10,000 sources (each its own IPv6 /64 of 2001:db8::/32) are banned by the
# data path in four bursts of 2,500, each made while the daemon is stopped, so that the
# daemon takes each burst from the ring buffer in one turn of its loop before it writes to
# any socket. A prompt follower gets all 10,000 ban events, numbered without a gap; a
# follower that hangs up after 3,000 resumes with --since and gets exactly the rest; one
# that takes nothing for 5 s is dropped, its last line names the event to resume after, and
# it resumes from there; a resume from before the oldest event the ring holds (after 70,000
# more events) is refused with how many were lost; bad --since values get one line and a
# non-zero exit status.
#
# Everything it makes (namespaces, daemon, readers, pins, files) is removed on any exit,
# through the daemon helpers' cleanup (tests/e2e/e2e_lib.sh). Needs root; skips without it.
# shellcheck disable=SC2317 # the case functions are called through e2e_case
set -uo pipefail
build=${1:-build}
cd "$(dirname "$0")/../.." || exit 1
source tests/e2e/e2e_lib.sh

CASES=(burst_reaches_prompt_follower burst_resume_after_hangup burst_resume_after_drop
	resume_too_old_says_lost bad_since_refused)
xbd_begin eb "${CASES[@]}"
readonly BURSTS=4 BURST=2500 # a burst within the data path's ring buffer (about 4,600)
readonly TOTAL=$((BURSTS * BURST)) HANGUP_AT=3000
readonly RING=65536 # XBD_EVRING_EVENTS

# seqs FILE: the "seq" of each event line of FILE, one a line (other lines skipped).
seqs() { "$XBD_PY" -c '
import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    if "seq" in e and "event" in e:
        print(e["seq"])' "$1"; }

# runs FILE FIRST LAST: "ok" when FILE's events are exactly FIRST..LAST in order, else the
# first thing wrong.
runs() { "$XBD_PY" -c '
import json, sys
seq = [json.loads(l)["seq"] for l in open(sys.argv[1]) if "event" in json.loads(l)]
first, last = int(sys.argv[2]), int(sys.argv[3])
want = list(range(first, last + 1))
if seq == want:
    print("ok")
else:
    miss = sorted(set(want) - set(seq))
    print(f"{len(seq)} events {seq[:1]}..{seq[-1:]}, {len(miss)} missing from {miss[:1]}")' "$@"; }

lines_in() { [[ -f $1 ]] && (($(wc -l <"$1") >= $2)); }

# resume FILE SINCE N: `xdpban events --follow --json --since SINCE` into FILE until it holds N
# events (at most 10 s); then the follower is ended.
resume() {
	local pid
	xbd_cli events --follow --json --since "$2" >"$1" 2>"$1.err" &
	pid=$!
	e2e_wait 100 lines_in "$1" "$3"
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
}
events_status() { xbd_cli status --json | xbd_json "d['xdpband']['events']['$1']"; }
stat_of() { "$XBD_PY" tests/tools/xb_maps.py stats "$XBD_PIN" | awk -v s="$1" '$1 == s { print $2 }'; }
bans_created_is() { [[ $(stat_of bans_created) == "$1" ]]; }

# burst N: while the daemon is stopped, the data path bans sources N*BURST .. N*BURST+BURST-1;
# then the daemon takes their events.
burst() {
	local n=$1
	kill -STOP "$XBD_PID" || return 1
	ip netns exec "$XBD_NS_S" "$XBD_PY" tests/tools/xb_send.py burst "$XBD_IF_S" "$RECV_MAC" \
		$((n * BURST)) "$BURST" 2>>"$XBD_TMP/send.err"
	e2e_wait 100 bans_created_is $(((n + 1) * BURST))
	local rc=$?
	kill -CONT "$XBD_PID"
	# the next burst waits for this one's events: the data path's ring buffer has room for one, not two
	((rc == 0)) && e2e_wait 100 eval '[[ $(events_status seq) == $(((n + 1) * BURST)) ]]'
}

# The followers first, then the bursts: a prompt one, one that hangs up after HANGUP_AT
# events, and one whose reader takes nothing until told to (its pipe and socket fill).
case_prompt() {
	local n
	xbd_cli events --follow --json >"$XBD_TMP/prompt" 2>"$XBD_TMP/prompt.err" &
	e2e_defer e2e__kill "$!"
	{ xbd_cli events --follow --json | head -n "$HANGUP_AT" >"$XBD_TMP/hangup"; } &
	e2e_defer e2e__kill "$!"
	{
		xbd_cli events --follow --json 2>"$XBD_TMP/slow.err"
		echo $? >"$XBD_TMP/slow.rc"
	} | {
		while [[ -d $XBD_TMP && ! -e $XBD_TMP/go ]]; do sleep 0.1; done
		cat >"$XBD_TMP/slow"
	} &
	e2e_defer e2e__kill "$!"
	e2e_wait 100 eval '[[ $(events_status subscribers) == 3 ]]' ||
		{ E2E_WHY="3 subscribers expected, status says $(events_status subscribers)"; return 1; }
	for ((n = 0; n < BURSTS; n++)); do
		burst "$n" || { E2E_WHY="burst $n: bans_created $(stat_of bans_created), expected $(((n + 1) * BURST))"; return 1; }
	done
	e2e_expect "events_lost" 0 "$(stat_of events_lost)" || return 1
	e2e_wait 150 lines_in "$XBD_TMP/prompt" "$TOTAL" ||
		{ E2E_WHY="the prompt follower has $(wc -l <"$XBD_TMP/prompt") events of $TOTAL: $(cat "$XBD_TMP/prompt.err")"; return 1; }
	e2e_expect "the prompt follower's events" ok "$(runs "$XBD_TMP/prompt" 1 "$TOTAL")" &&
		e2e_expect "its ban events" "$TOTAL" "$(grep -c '"event":"ban"' "$XBD_TMP/prompt")" &&
		e2e_expect "the daemon's last seq" "$TOTAL" "$(events_status seq)"
}

# The follower that hung up resumes after the last event it printed.
case_hangup() {
	local last
	e2e_expect "events before the hangup" ok "$(runs "$XBD_TMP/hangup" 1 "$HANGUP_AT")" || return 1
	last=$(seqs "$XBD_TMP/hangup" | tail -1)
	resume "$XBD_TMP/resumed" "$last" $((TOTAL - last))
	e2e_expect "the resumed events" ok "$(runs "$XBD_TMP/resumed" $((last + 1)) "$TOTAL")"
}

# The silent one was dropped for taking nothing for 5 s; told so, it reads all it was sent.
case_drop() {
	local since rc
	e2e_wait 150 eval '[[ $(events_status subscribers_dropped) == 1 ]]' ||
		{ E2E_WHY="subscribers_dropped is $(events_status subscribers_dropped), expected 1"; return 1; }
	touch "$XBD_TMP/go"
	e2e_wait 100 test -s "$XBD_TMP/slow.rc" || { E2E_WHY="the dropped follower did not end"; return 1; }
	rc=$(cat "$XBD_TMP/slow.rc")
	e2e_expect "the dropped follower's exit status" 1 "$rc" || return 1
	since=$(sed -n 's/.*: resume with --since \([0-9]*\)$/\1/p' "$XBD_TMP/slow.err")
	[[ $(wc -l <"$XBD_TMP/slow.err") == 1 && $since =~ ^[0-9]+$ &&
		$(<"$XBD_TMP/slow.err") == "xdpban: dropped from the event stream: it took nothing of the event stream for 5 s; the last event sent was $since: resume with --since $since" ]] ||
		{ E2E_WHY="its last words: '$(cat "$XBD_TMP/slow.err")'"; return 1; }
	((since > 0 && since < TOTAL)) || { E2E_WHY="it was dropped after event $since: not mid-burst"; return 1; }
	e2e_expect "the events it took" ok "$(runs "$XBD_TMP/slow" 1 "$since")" || return 1
	resume "$XBD_TMP/slow.resumed" "$since" $((TOTAL - since))
	e2e_expect "the events after the drop" ok "$(runs "$XBD_TMP/slow.resumed" $((since + 1)) "$TOTAL")"
}

# 70,000 more events (manual bans of one address, on four pipelining connections) push the
# burst out of the ring: a resume from before it is refused, saying how many are lost.
case_too_old() {
	local more=70000 last oldest out rc
	"$XBD_PY" - "$XBD_SOCK" $more <<'EOF' || { E2E_WHY="a ban of the 70,000 failed"; return 1; }
import json, socket, sys, threading
path, total = sys.argv[1], int(sys.argv[2])
req = json.dumps({"cmd": "ban", "prefix": "203.0.113.7", "seconds": 3600}).encode() + b"\n"
bad = []
def run(n):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(30)
    s.connect(path)
    def send():
        for _ in range(n):
            s.sendall(req)
    t = threading.Thread(target=send)
    t.start()
    f = s.makefile()
    for _ in range(n):
        if not json.loads(f.readline())["ok"]:
            bad.append(1)
    t.join()
threads = [threading.Thread(target=run, args=(total // 4,)) for _ in range(4)]
for t in threads: t.start()
for t in threads: t.join()
sys.exit(1 if bad else 0)
EOF
	last=$(events_status seq)
	e2e_expect "the last seq" $((TOTAL + more)) "$last" || return 1
	oldest=$((last - RING + 1))
	out=$(xbd_cli events --follow --since 100 2>&1)
	rc=$?
	e2e_expect "exit status" 1 "$rc" &&
		e2e_expect "the refusal" "xdpban: $((oldest - 101)) events after 100 are no longer held; the oldest held is $oldest: resume after $((oldest - 1)) to follow from there without them" "$out" || return 1
	# from just before the oldest held, every event held comes, and nothing is refused
	resume "$XBD_TMP/oldest" $((oldest - 1)) "$RING"
	e2e_expect "the events held" ok "$(runs "$XBD_TMP/oldest" "$oldest" "$last")"
}

# bad_since ARGS... WANT_RC WANT_LINE: xdpban events ARGS exits WANT_RC with that one line.
bad_since() {
	local want_line=${*: -1} want_rc=${*: -2:1} out rc
	out=$(timeout 10 "$XBD_BIN/xdpban" --socket "$XBD_SOCK" events "${@:1:$#-2}" 2>&1)
	rc=$?
	e2e_expect "events ${*:1:$#-2}: exit status" "$want_rc" "$rc" &&
		e2e_expect "events ${*:1:$#-2}" "$want_line" "$out"
}

case_bad_since() {
	local last
	last=$(events_status seq)
	bad_since --follow --since abc 2 "xdpban: bad --since 'abc': expected a sequence number (0..9223372036854775807, with --follow) or a time: RFC 3339 (2026-12-05T06:00:00Z), a duration ago (10m, 2h, 1d) or @UNIX-SECONDS" &&
		bad_since --follow --since -1 2 "xdpban: bad --since '-1': expected a sequence number (0..9223372036854775807, with --follow) or a time: RFC 3339 (2026-12-05T06:00:00Z), a duration ago (10m, 2h, 1d) or @UNIX-SECONDS" &&
		bad_since --follow --since 99999999999999999999 2 "xdpban: bad --since '99999999999999999999': a sequence number is 0..9223372036854775807" &&
		bad_since --since 5 2 "xdpban: events: --since SEQ needs --follow (a time needs a unit, a date or @)" &&
		bad_since --follow --since $((last + 1)) 1 "xdpban: field \"since\" is $((last + 1)), after the last event ($last)" || return 1
	e2e_expect "since: a string" '{"ok":false,"error":"field \"since\" must be a sequence number (a whole number, 0 or more)"}' \
		"$(xbd_request '{"cmd":"events","follow":true,"since":"5"}')" &&
		e2e_expect "since: -1" '{"ok":false,"error":"field \"since\" must be a sequence number (a whole number, 0 or more)"}' \
			"$(xbd_request '{"cmd":"events","follow":true,"since":-1}')" &&
		e2e_expect "since: 1.5" '{"ok":false,"error":"field \"since\" must be a sequence number (a whole number, 0 or more)"}' \
			"$(xbd_request '{"cmd":"events","follow":true,"since":1.5}')" &&
		e2e_expect "since without follow" '{"ok":false,"error":"field \"since\" needs \"follow\": true"}' \
			"$(xbd_request '{"cmd":"events","since":1}')"
}

XBD_CONF_LIMIT=0 xbd_write_conf "[metrics]" "listen = off"
RECV_MAC=$(ip netns exec "$XBD_NS_R" cat "/sys/class/net/$XBD_IF_R/address")
if ! xbd_start; then
	for c in "${CASES[@]}"; do xbd_fail "$c" "xdpband did not start"; done
	e2e_finish
fi
e2e_case burst_reaches_prompt_follower case_prompt
e2e_case burst_resume_after_hangup case_hangup
e2e_case burst_resume_after_drop case_drop
e2e_case resume_too_old_says_lost case_too_old
e2e_case bad_since_refused case_bad_since
e2e_finish
