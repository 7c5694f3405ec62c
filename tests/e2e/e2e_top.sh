#!/usr/bin/env bash
# e2e_top.sh BUILD - `xdpban top` against xdpband in a private pair of namespaces (limit high,
# so that nothing is banned by the traffic): while malformed frames (TCP SYN+FIN) flow from
# two sources at 40/s and 10/s, the full view in a real terminal (a tmux server of the test's
# own) shows both sources, the busier first, the drop_malformed rate near the rate sent, and a
# hand-made ban of one of them; 'q' ends it and leaves the terminal as it was. Without a
# terminal, --once --json and --once print one frame with those values, and the plain mode a
# line per interval. In a 60x12 terminal the zero verdicts fold into one line and the sources
# table still shows both sources, with the bans' drop rate under it and the banned source that
# sends most at its own drop rate; the full view's ban table and --once --json show each ban's
# drop rate. Left open across a daemon stopped with its pins
# removed and started again, top says it waits for the maps, then that it reopened them, and
# shows the new maps' counts. Without the daemon it reads the same maps.
#
# Everything it makes (namespaces, daemon, tmux server, senders, pins, files) is removed on
# any exit, through tests/e2e/e2e_lib.sh's cleanup. Needs root and tmux; skips without them.
# shellcheck disable=SC2317 # the case functions are called through e2e_case
set -uo pipefail
build=${1:-build}
cd "$(dirname "$0")/../.." || exit 1
source tests/e2e/e2e_lib.sh

CASES=(screen_shows_sources_and_rates screen_quits_on_q once_json_values once_text_values
	plain_line_per_interval small_screen_fits screen_follows_restart top_without_daemon)
if ! command -v tmux >/dev/null; then
	for c in "${CASES[@]}"; do e2e_skip "$c" "tmux is not installed (make deps)"; done
	exit 0
fi
xbd_begin o "${CASES[@]}"
readonly FAST=192.0.2.20 SLOW=192.0.2.30 FAST_RATE=40 SLOW_RATE=10
# detach-on-exit no: the program and its pins outlive the daemon, for the last case
XBD_CONF_LIMIT=1000000 XBD_CONF_DETACH=no xbd_write_conf
xbd_start || xbd_fail_all "xdpband did not start" "${CASES[@]}"

# Malformed frames from FAST and SLOW at their rates, spread over each second, until killed.
ip netns exec "$XBD_NS_S" "$XBD_PY" - "$XBD_IF_S" "$FAST" "$FAST_RATE" "$SLOW" "$SLOW_RATE" <<'EOF' 2>>"$XBD_TMP/scapy.err" &
import sys, time
from scapy.all import Ether, IP, TCP, conf
conf.verb = 0
iface, fast, fast_rate, slow, slow_rate = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
frame = lambda src: bytes(Ether(dst="ff:ff:ff:ff:ff:ff") / IP(src=src, dst="192.0.2.1") / TCP(sport=40000, dport=80, flags="SF"))
per_second = [frame(fast)] * (fast_rate - slow_rate)
for _ in range(slow_rate):
    per_second += [frame(fast), frame(slow)]
sock = conf.L2socket(iface=iface)
step = 1.0 / len(per_second)
t = time.monotonic()
while True:
    for f in per_second:
        sock.send(f)
        t += step
        time.sleep(max(0, t - time.monotonic()))
EOF
e2e_defer e2e__kill "$!"
slow_counted() { (($(xbd_query "$SLOW" 'd["count"]') >= 3)); }
e2e_wait 100 slow_counted ||
	xbd_fail_all "no errors counted from $SLOW: $(tail -1 "$XBD_TMP/scapy.err")" "${CASES[@]}"
e2e_run xbd_cli ban "$SLOW" --for 1h || xbd_fail_all "cannot ban $SLOW: $E2E_WHY" "${CASES[@]}"

# The test's own tmux server, on a socket in its temp directory.
TMUX_SOCK=$XBD_TMP/tmux.sock
tm() { tmux -S "$TMUX_SOCK" "$@"; }
e2e_defer tmux -S "$TMUX_SOCK" kill-server

# A pane running top between two readings of the terminal's settings.
start_pane() {
	cat >"$XBD_TMP/pane.sh" <<EOF
before=\$(stty -g)
echo "shell before top"
$XBD_BIN/xdpban --socket $XBD_SOCK top --interval 1 --count 5
rc=\$?
[ "\$(stty -g)" = "\$before" ] && same=same || same=changed
echo "top exited \$rc, terminal settings \$same"
exec sleep 600
EOF
	tm -f /dev/null new-session -d -s top -x 160 -y 50 "bash $XBD_TMP/pane.sh"
}

# The text of a tmux session's pane (default: top).
pane() { tm capture-pane -p -t "${1:-top}"; }

# The number in column COL (1-based, whitespace-separated) of the first pane line starting
# with WORD.
pane_field() { pane | awk -v w="$1" -v c="$2" '$1 == w { print $c; exit }'; }

# A rate is near what was sent: between a third and three times (the machine is shared).
near() { awk -v got="$1" -v want="$2" 'BEGIN { exit !(got >= want / 3 && got <= want * 3) }'; }

case_screen() {
	local fast_errors slow_row order malformed frozen
	start_pane || { E2E_WHY="tmux did not start"; return 1; }
	# three refreshes, so that a frame covers a whole interval of steady traffic
	e2e_wait 150 eval 'pane | grep -q "^SOURCE"' || { E2E_WHY="no SOURCE header in the pane: $(pane | head -3 | tr "\n" " ")"; return 1; }
	sleep 3
	pane >"$XBD_TMP/pane.txt"
	# the sources table: the ban table under it lists SLOW again
	order=$(awk -v f="$FAST" -v s="$SLOW" '/^bans in force/ { exit } $1 == f || $1 == s { printf "%s ", $1 }' "$XBD_TMP/pane.txt")
	e2e_expect "sources in order" "$FAST $SLOW " "$order" || return 1
	fast_errors=$(awk -v f="$FAST" '$1 == f { print $2 }' "$XBD_TMP/pane.txt")
	near "$fast_errors" "$FAST_RATE" ||
		{ E2E_WHY="$FAST shows $fast_errors errors in the interval, sent $FAST_RATE/s"; return 1; }
	slow_row=$(grep -m1 "^$SLOW " "$XBD_TMP/pane.txt")
	[[ $slow_row == *" malformed "*"manual "* ]] ||
		{ E2E_WHY="the row of $SLOW is '$slow_row', expected class malformed and a manual ban"; return 1; }
	malformed=$(awk '$1 == "drop_malformed" { print $2 }' "$XBD_TMP/pane.txt")
	near "$malformed" "$FAST_RATE" ||
		{ E2E_WHY="drop_malformed shows ${malformed:-nothing}/s, $FAST_RATE/s of it sent from $FAST alone"; return 1; }
	grep -q "^keys: s next sort" "$XBD_TMP/pane.txt" || { E2E_WHY="no line of keys"; return 1; }
	# the ban table: SLOW, banned by hand, still sending at its rate
	e2e_expect "the ban table's row of $SLOW" "manual" \
		"$(awk -v s="$SLOW" '/^BANNED/ { t = 1; next } t && $1 == s { print $2 }' "$XBD_TMP/pane.txt")" || return 1
	slow_row=$(awk -v s="$SLOW" '/^BANNED/ { t = 1; next } t && $1 == s { print $3 }' "$XBD_TMP/pane.txt")
	near "${slow_row%.*}" "$SLOW_RATE" ||
		{ E2E_WHY="the ban of $SLOW drops ${slow_row:-nothing}/s, it sends $SLOW_RATE/s"; return 1; }
	grep -q "^bans in force: 1, drop_banned [0-9.]*/s" "$XBD_TMP/pane.txt" || { E2E_WHY="no line of the bans"; return 1; }
	# 'a' sorts by address at once: the header says so
	tm send-keys -t top a
	e2e_wait 50 eval 'pane | grep -q "sorted by source"' || { E2E_WHY="'a' did not sort by source"; return 1; }
	# paused, the frame stays (its time of day with it); space goes on
	tm send-keys -t top p
	e2e_wait 50 eval 'pane | grep -q "(paused)"' || { E2E_WHY="'p' did not pause"; return 1; }
	frozen=$(pane | head -1)
	sleep 2.5
	e2e_expect "the header while paused" "$frozen" "$(pane | head -1)" || return 1
	tm send-keys -t top Space
	e2e_wait 50 eval '[[ $(pane | head -1) != "$frozen" && $(pane | head -1) != *paused* ]]' ||
		{ E2E_WHY="space did not go on: $(pane | head -1)"; return 1; }
}

case_quit() {
	local out
	tm send-keys -t top q
	e2e_wait 100 eval 'pane | grep -q "^top exited"' || { E2E_WHY="top did not exit on 'q': $(pane | head -2 | tr "\n" " ")"; return 1; }
	out=$(pane)
	[[ $out == *"top exited 0, terminal settings same"* ]] ||
		{ E2E_WHY="$(grep '^top exited' <<<"$out")"; return 1; }
	# the full view was on the alternate screen: what the shell wrote before is back, top's is gone
	[[ $out == *"shell before top"* && $out != *"REASON"* ]] ||
		{ E2E_WHY="the screen was not restored: $(head -3 <<<"$out" | tr "\n" " ")"; return 1; }
}

# EXPR over the one JSON object of `top --once --json`, bound to d.
case_once_json() {
	local out
	out=$(xbd_cli top --once --json --interval 2 </dev/null) || { E2E_WHY="top --once --json failed"; return 1; }
	e2e_expect "objects printed" 1 "$(wc -l <<<"$out")" || return 1
	out=$(xbd_json "' '.join([str(d['seconds'] >= 1.5), str(d['counters']['used'] >= 2),
		str(d['bans']['used'] >= 1), d['sources'][0]['source'], d['sources'][1]['source'],
		str(d['sources'][1]['banned']), d['sources'][1]['ban_reason'],
		','.join(d['sources'][0]['classes']), str(d['sources'][0]['count'] >= d['sources'][0]['errors']),
		str(round(d['rates']['drop_malformed']['packets'])), str(round(d['sources'][0]['errors'] / d['seconds'])),
		str(round(d['banned'][0]['drops_per_s']))])" <<<"$out")
	local -a f
	read -ra f <<<"$out"
	e2e_expect "seconds, counters, bans, sources, ban, classes, count" \
		"True True True $FAST $SLOW True manual malformed True" "${f[*]:0:9}" || return 1
	near "${f[9]}" "$FAST_RATE" || { E2E_WHY="drop_malformed ${f[9]}/s, sent $FAST_RATE/s"; return 1; }
	near "${f[10]}" "$FAST_RATE" || { E2E_WHY="$FAST: ${f[10]} errors/s, sent $FAST_RATE/s"; return 1; }
	near "${f[11]}" "$SLOW_RATE" || { E2E_WHY="the ban of $SLOW: ${f[11]} drops/s, it sends $SLOW_RATE/s"; return 1; }
}

case_once_text() {
	local out
	out=$(xbd_cli top --once --sort source </dev/null) || { E2E_WHY="top --once failed"; return 1; }
	[[ $out == *"sorted by source"* && $out != *"keys:"* ]] || { E2E_WHY="header: $(head -1 <<<"$out")"; return 1; }
	e2e_expect "sources by address" "$FAST $SLOW" \
		"$(awk -v f="$FAST" -v s="$SLOW" '/^bans in force/ { exit } $1 == f || $1 == s { print $1 }' <<<"$out" | paste -sd " ")" || return 1
	e2e_expect "bad --sort" 2 "$(xbd_cli top --sort size >/dev/null 2>&1; echo $?)"
}

case_plain() {
	local out n
	out=$(timeout -s INT 3.5 "$XBD_BIN/xdpban" --socket "$XBD_SOCK" top </dev/null)
	n=$(grep -c " drop_malformed .*; top $FAST [0-9]* of [0-9]*, $SLOW [0-9]* of [0-9]* banned$" <<<"$out")
	((n >= 2 && n <= 4)) || { E2E_WHY="$n matching lines in 3.5 s: $(head -2 <<<"$out" | tr "\n" " ")"; return 1; }
}

# top in a 60x12 terminal, left running for the restart case.
start_small() {
	tm new-session -d -s small -x 60 -y 12 "$XBD_BIN/xdpban --socket $XBD_SOCK top --interval 1; exec sleep 600"
}

# The SOURCE header and the rows of both sources in the small pane.
small_shows_sources() {
	pane small | grep -q "^SOURCE" && pane small | grep -q "^$FAST " && pane small | grep -q "^$SLOW "
}

case_small() {
	local shot fast errors banned lines
	start_small || { E2E_WHY="tmux did not start a 60x12 pane"; return 1; }
	e2e_wait 150 small_shows_sources || { E2E_WHY="the 60x12 pane: $(pane small | tr "\n" "|")"; return 1; }
	sleep 2
	shot=$(pane small)
	# every verdict at 0/s is one line, and the reasons that moved are there
	[[ $shot == *$'\nother verdicts ('* && $shot == *$'\ndrop_malformed '* ]] ||
		{ E2E_WHY="no fold line or drop_malformed: $(tr "\n" "|" <<<"$shot")"; return 1; }
	fast=$(grep "^$FAST " <<<"$shot")
	errors=$(awk '{ print $2 }' <<<"$fast")
	near "$errors" "$FAST_RATE" || { E2E_WHY="$FAST row '$fast': $errors errors, sent $FAST_RATE/s"; return 1; }
	[[ $(grep -m1 "^$SLOW " <<<"$shot") == *" malformed "*"manual "* ]] || { E2E_WHY="$SLOW's row shows no manual ban"; return 1; }
	# the one ban's drops: SLOW keeps sending after its ban
	banned=$(sed -n 's/^bans in force: 1, drop_banned \([0-9.]*\)\/s.*/\1/p' <<<"$shot")
	near "${banned:-0}" "$SLOW_RATE" ||
		{ E2E_WHY="drop_banned of the bans: '${banned}', $SLOW sends $SLOW_RATE/s: $(tr "\n" "|" <<<"$shot")"; return 1; }
	# and the ban of SLOW, the one still sending, at its own rate
	banned=$(sed -n "s/^bans in force: 1, drop_banned [0-9.]*\/s; top $SLOW \([0-9.]*\)\/s\$/\1/p" <<<"$shot")
	near "${banned%.*}" "$SLOW_RATE" ||
		{ E2E_WHY="the ban of $SLOW: '${banned}'/s, it sends $SLOW_RATE/s: $(tr "\n" "|" <<<"$shot")"; return 1; }
	# nothing cut: the header ends with its order, the fast row with its ban column
	[[ $(head -1 <<<"$shot") == *"sorted by errors" && $fast == *" -" ]] ||
		{ E2E_WHY="a line is cut at 60 columns: $(tr "\n" "|" <<<"$shot")"; return 1; }
	lines=$(tm display -p -t small '#{pane_width}x#{pane_height}')
	e2e_expect "the pane's size" 60x12 "$lines"
}

# The errors column of FAST in the small pane is near its rate, and its count no more than the
# daemon's: the new maps' numbers, not the old maps' frozen ones.
small_shows_new_counts() {
	local row count
	row=$(pane small | grep "^$FAST ") || return 1
	count=$(awk '{ print $3 }' <<<"$row")
	near "$(awk '{ print $2 }' <<<"$row")" "$FAST_RATE" && ((count <= $(xbd_query "$FAST" 'd["count"]')))
}

case_restart() {
	local watch=$XBD_TMP/small.log
	# a daemon that removes its pins when it stops
	XBD_CONF_LIMIT=1000000 XBD_CONF_DETACH=yes xbd_write_conf
	e2e_run xbd_cli reload || { E2E_WHY="reload: $E2E_WHY"; return 1; }
	xbd_stop TERM
	e2e_wait 100 eval 'pane small | grep -q "^no xdpban maps pinned at $XBD_PIN: waiting"' ||
		{ E2E_WHY="no waiting notice: $(pane small | head -3 | tr "\n" "|")"; return 1; }
	# the notice lasts a few refreshes, and the start may take longer: watch the pane meanwhile
	(while :; do pane small; sleep 0.2; done) >"$watch" 2>/dev/null &
	e2e_defer e2e__kill "$!"
	XBD_CONF_LIMIT=1000000 XBD_CONF_DETACH=no xbd_write_conf
	xbd_start || { E2E_WHY="xdpband did not start again"; return 1; }
	e2e_wait 100 grep -q "^daemon restarted: maps reopened at [0-9:]*Z" "$watch" ||
		{ E2E_WHY="no restart notice: $(pane small | head -3 | tr "\n" "|")"; return 1; }
	e2e_wait 100 small_shows_new_counts ||
		{ E2E_WHY="not the new counts of $FAST: $(pane small | grep "^$FAST ") (daemon: $(xbd_query "$FAST" 'd["count"]'))"; return 1; }
	# the ban came back from the state file: lift it, so that SLOW is counted again
	xbd_cli unban "$SLOW" >/dev/null 2>&1
	e2e_wait 100 slow_counted || { E2E_WHY="$SLOW not counted after the restart"; return 1; }
}

# The daemon stopped, the program still attached and its maps pinned: top reads them alone.
case_no_daemon() {
	local out
	xbd_stop TERM
	xbd_answers && { E2E_WHY="the daemon still answers"; return 1; }
	out=$(xbd_cli top --once --json </dev/null) || { E2E_WHY="top --once --json without the daemon failed"; return 1; }
	e2e_expect "sources without the daemon" "$FAST $SLOW" \
		"$(xbd_json "' '.join(s['source'] for s in d['sources'])" <<<"$out")" || return 1
	near "$(xbd_json "round(d['rates']['drop_malformed']['packets'])" <<<"$out")" "$FAST_RATE" ||
		{ E2E_WHY="drop_malformed without the daemon: $(xbd_json "d['rates']['drop_malformed']" <<<"$out")"; return 1; }
}

e2e_case screen_shows_sources_and_rates case_screen
e2e_case screen_quits_on_q case_quit
e2e_case once_json_values case_once_json
e2e_case once_text_values case_once_text
e2e_case plain_line_per_interval case_plain
e2e_case small_screen_fits case_small
e2e_case screen_follows_restart case_restart
e2e_case top_without_daemon case_no_daemon
e2e_finish
