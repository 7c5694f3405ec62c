#!/usr/bin/env bash
# e2e_hostile_control.sh - end-to-end tests that no client can starve the control socket of
# xdpband: with socket-mode 0666, `nobody` reconnecting 200 connections in a loop takes no
# slot (each is refused at once, and the refusals are logged a few times, not thousands);
# with 0660 and the group nogroup, a member doing the same gets at most its share and cannot
# keep root out; root's own 2000 idle connections do not keep a new root client out; and a
# connection that sends nothing is closed after the idle timeout. In every case root's
# `xdpban status` must answer within 2 s, again and again, while the flood goes on. And eight
# slow HTTP clients of nobody's, each trickling a header line a second, keep no scrape of
# /metrics from being answered within 5 s (each must send its whole request within 3 s). A
# member with group-access = full loads list files with its own rights: its xdpban cannot open
# a root-only file, and a request that names one without sending it open is refused without a
# word of it, with ignore_errors too. A load of 17 links to a gzip file of
# 64 MiB of comment lines is read beside the loop: root's status answers within 1 s while it
# reads, and it stops at 1 GiB read, refused whole.
# Uses the daemon's helpers of tests/e2e/e2e_lib.sh; every namespace, daemon, pin, process and file it
# makes is removed by the cleanup of tests/e2e/e2e_lib.sh, also on failure.
#
# Usage: tests/e2e/e2e_hostile_control.sh BUILD_DIR
set -uo pipefail
# shellcheck source=tests/e2e/e2e_lib.sh
source "$(dirname "$0")/e2e_lib.sh"

CASES=(refused_peers_take_no_slot member_cannot_keep_root_out
	root_idle_connections_do_not_keep_root_out idle_connection_times_out
	member_reads_only_its_own_files load_read_beside_the_loop slow_scrapers_do_not_starve_metrics)
xbd_begin k "${CASES[@]}"
XBD_HOLD=$XBD_TMP/hold # where the flooding user writes its counts
mkdir -p "$XBD_HOLD" && chown nobody:nogroup "$XBD_HOLD"
install -m 644 "$(dirname "$0")/../tools/hold_connections.py" "$XBD_TMP/"

# xbd_flood AS COUNT MODE: runs hold_connections.py as AS (nobody, or root) in the background,
# killed at exit; its counts go to $XBD_HOLD/$AS.json.
xbd_flood() {
	local as=$1 run=()
	[[ $as == nobody ]] && run=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
	# shellcheck disable=SC2016 # $0 and $@ are the inner shell's
	"${run[@]}" bash -c 'ulimit -n 4096; exec "$0" "$@"' "$XBD_PY" "$XBD_TMP/hold_connections.py" \
		"$XBD_SOCK" "$2" "$3" "$XBD_HOLD/$as.json" 2>>"$XBD_TMP/hold.err" &
	XBD_FLOOD_PID=$!
	e2e_defer kill "$XBD_FLOOD_PID"
}

xbd_flood_stop() { kill "$XBD_FLOOD_PID" 2>/dev/null && wait "$XBD_FLOOD_PID" 2>/dev/null; }

# xbd_flood_stat AS EXPR: EXPR over the flood's counts, bound to d.
xbd_flood_stat() { xbd_json "$2" 2>/dev/null <"$XBD_HOLD/$1.json"; }

# xbd_flood_tried AS COUNT: AS's flood has tried each of its COUNT connections.
xbd_flood_tried() { [[ $(xbd_flood_stat "$1" 'd["opened"] + d["connect_failed"]') == "$2" ]]; }

# xbd_root_answers TIMES: root's `xdpban status` answers within 2 s, TIMES times in a row.
xbd_root_answers() {
	local i out
	for ((i = 0; i < $1; i++)); do
		out=$(timeout 2 "$XBD_BIN/xdpban" --socket "$XBD_SOCK" status --json 2>&1)
		if [[ $(xbd_json 'd["daemon"]' <<<"$out" 2>/dev/null) != True ]]; then
			E2E_WHY="status $((i + 1)) of $1: '${out:0:160}'"
			return 1
		fi
		sleep 0.3
	done
}

# --- 0666: nobody may connect but not use the socket; reconnecting 200 at once takes nothing ---
case_refused() {
	local refusals opened
	xbd_flood nobody 200 reconnect
	sleep 1
	if ! xbd_root_answers 5; then
		xbd_fail refused_peers_take_no_slot "under nobody's flood: $E2E_WHY"
		xbd_flood_stop
		return
	fi
	opened=$(xbd_flood_stat nobody 'd["opened"]')
	xbd_flood_stop
	xbd_wait_until xbd_log_has "more connections refused in the last 5s (last from uid 65534)"
	refusals=$(grep -c "refused.*uid 65534" "$XBD_LOG")
	if ((${opened:-0} < 1000)); then
		xbd_fail refused_peers_take_no_slot "the flood opened only ${opened:-no} connections"
	elif [[ $(xbd_flood_stat nobody 'd["seen"]') != *"permission denied: uid 65534 may not use the control socket"* ]]; then
		xbd_fail refused_peers_take_no_slot "nobody was not told why: $(xbd_flood_stat nobody 'd["seen"]')"
	elif ((refusals < 2 || refusals > 4)); then
		xbd_fail refused_peers_take_no_slot "$refusals log lines for $opened refusals (want 2 to 4)"
	elif ! xbd_log_has "more connections refused in the last 5s (last from uid 65534)"; then
		xbd_fail refused_peers_take_no_slot "the log does not count the refusals it did not show"
	else
		xbd_pass refused_peers_take_no_slot
	fi
}

# --- 0660 with the group nogroup: a member's flood gets its share only ---
case_member() {
	xbd_stop TERM
	xbd_write_conf "[metrics]" "listen = off"
	sed -i "s/^socket-mode = .*/socket-mode = 0660\ngroup = nogroup/" "$XBD_CONF"
	xbd_start || { xbd_fail member_cannot_keep_root_out "xdpband did not start with a group"; return; }
	xbd_flood nobody 200 reconnect
	sleep 1
	if ! xbd_root_answers 5; then
		xbd_fail member_cannot_keep_root_out "under a member's flood: $E2E_WHY"
	elif [[ $(xbd_flood_stat nobody 'd["seen"]') != *"too many connections from uid 65534 (at most 4 at once)"* ]]; then
		xbd_fail member_cannot_keep_root_out "no per-user limit seen: $(xbd_flood_stat nobody 'd["seen"]' | head -c 300)"
	elif (($(xbd_flood_stat nobody 'd["open"]') > 200)); then
		xbd_fail member_cannot_keep_root_out "the counts make no sense"
	else
		xbd_pass member_cannot_keep_root_out
	fi
	xbd_flood_stop
}

# --- root's own 2000 idle connections: a new root client still gets in at once ---
case_root_idle() {
	xbd_flood root 2000 hold
	if ! xbd_wait_until xbd_flood_tried root 2000; then
		xbd_fail root_idle_connections_do_not_keep_root_out "the flood did not try its 2000 connections: $(head -c 300 "$XBD_HOLD/root.json" 2>&1)"
	elif ! xbd_root_answers 5; then
		xbd_fail root_idle_connections_do_not_keep_root_out "behind 2000 idle root connections: $E2E_WHY"
	elif [[ $(xbd_flood_stat root 'd["seen"]') != *"a new connection needed the slot of this idle one"* ]]; then
		xbd_fail root_idle_connections_do_not_keep_root_out "no idle connection gave its slot: $(xbd_flood_stat root 'd["seen"]' | head -c 300)"
	else
		xbd_pass root_idle_connections_do_not_keep_root_out
	fi
	xbd_flood_stop
}

# --- a member's connection that sends nothing is closed after 5 s, with a reason ---
case_idle_timeout() {
	local out
	out=$(setpriv --reuid=nobody --regid=nogroup --clear-groups $XBD_PY -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.settimeout(9)
t0 = time.monotonic()
line = s.makefile().readline().strip()
print(f"{time.monotonic() - t0:.1f} {line}")' "$XBD_SOCK" 2>&1)
	if [[ $out != *"timed out waiting for a complete request line"* ]]; then
		xbd_fail idle_connection_times_out "got '$out'"
	elif ! awk '{ exit !($1 >= 4.5 && $1 <= 7) }' <<<"$out"; then
		xbd_fail idle_connection_times_out "closed after ${out%% *} s, not about 5"
	else
		xbd_pass idle_connection_times_out
	fi
}

# --- eight slow HTTP clients of nobody's, one header line a second: a scrape still answers ---
case_slow_scrapers() {
	local i t0 ms out
	xbd_stop TERM
	XBD_CONF_SOCKET_MODE=0666 xbd_write_conf "[metrics]" "listen = 127.0.0.1:$METRICS_PORT"
	xbd_start || { xbd_fail slow_scrapers_do_not_starve_metrics "xdpband did not start with metrics"; return; }
	install -m 644 "$(dirname "$0")/../tools/slow_http.py" "$XBD_TMP/"
	nsenter --net="/run/netns/$XBD_NS_R" setpriv --reuid=nobody --regid=nogroup --clear-groups \
		"$XBD_PY" "$XBD_TMP/slow_http.py" 127.0.0.1 "$METRICS_PORT" 8 1 "$XBD_HOLD/slow.json" \
		2>>"$XBD_TMP/hold.err" &
	XBD_FLOOD_PID=$!
	e2e_defer kill "$XBD_FLOOD_PID"
	sleep 1.5
	for ((i = 0; i < 5; i++)); do
		t0=$(date +%s%N)
		out=$(nsenter --net="/run/netns/$XBD_NS_R" curl -s --max-time 10 \
			-o /dev/null -w '%{http_code}' "http://127.0.0.1:$METRICS_PORT/metrics")
		ms=$((($(date +%s%N) - t0) / 1000000))
		if [[ $out != 200 ]] || ((ms > 5000)); then
			xbd_fail slow_scrapers_do_not_starve_metrics "scrape $((i + 1)) of 5: HTTP '$out' after $ms ms behind 8 slow clients"
			xbd_flood_stop
			return
		fi
	done
	xbd_flood_stop
	if (($(xbd_flood_stat slow 'd["closed"]') < 8)); then
		xbd_fail slow_scrapers_do_not_starve_metrics "the slow clients were not closed: $(cat "$XBD_HOLD/slow.json")"
	elif ! xbd_wait_until xbd_log_has "sent no whole request within 3000 ms"; then
		xbd_fail slow_scrapers_do_not_starve_metrics "no log line about the slow clients"
	else
		xbd_pass slow_scrapers_do_not_starve_metrics
	fi
}

# --- a member with full access loads lists with its own rights, never the daemon's ---
# xbd_member_load FILE [IGNORE]: lists_load of FILE into the deny layer, sent as nobody, by
# name only (the daemon opens no path for a client: each file must come open with it).
xbd_member_load() {
	local req="{\"cmd\":\"lists_load\",\"layer\":\"deny\",\"files\":[\"$1\"]${2:+,\"ignore_errors\":true}}"
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$XBD_PY" -c '
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(10)
s.connect(sys.argv[1])
s.sendall(sys.argv[2].encode() + b"\n")
print(s.makefile().readline().strip())' "$XBD_SOCK" "$req"
}

case_member_files() {
	local secret=$XBD_TMP/secret.list open=$XBD_TMP/open.list out ign cli
	xbd_stop TERM
	xbd_write_conf "[metrics]" "listen = off"
	sed -i "s/^socket-mode = .*/socket-mode = 0660\ngroup = nogroup\ngroup-access = full/" "$XBD_CONF"
	xbd_start || { xbd_fail member_reads_only_its_own_files "xdpband did not start with group-access full"; return; }
	printf 'Redis-S3cret-Pa55\n' >"$secret" && chmod 600 "$secret"
	printf '203.0.113.0/24\n' >"$open" && chmod 644 "$open"
	out=$(xbd_member_load "$secret")
	ign=$(xbd_member_load "$secret" yes)
	cli=$(setpriv --reuid=nobody --regid=nogroup --clear-groups "$XBD_BIN/xdpban" --socket "$XBD_SOCK" \
		lists load --deny "$secret" 2>&1)
	if [[ $out == *S3cret* || $ign == *S3cret* || $cli == *S3cret* ]]; then
		xbd_fail member_reads_only_its_own_files "a line of a root-only file came back: '$out' '$ign' '$cli'"
	elif [[ $out != *"1 file named but 0 sent open"* || $ign != *"1 file named but 0 sent open"* ]]; then
		xbd_fail member_reads_only_its_own_files "no refusal of a file named only: '$out' '$ign'"
	elif [[ $cli != "xdpban: cannot read list $secret: Permission denied" ]]; then
		xbd_fail member_reads_only_its_own_files "nobody's xdpban opened a root-only file: '$cli'"
	elif ! out=$(setpriv --reuid=nobody --regid=nogroup --clear-groups "$XBD_BIN/xdpban" \
		--socket "$XBD_SOCK" lists load --deny "$open" 2>&1); then
		xbd_fail member_reads_only_its_own_files "nobody could not load a file it can read: $out"
	elif ! xbd_cli lists --json | grep -qF "$open"; then
		xbd_fail member_reads_only_its_own_files "the readable file is not in force"
	else
		xbd_pass member_reads_only_its_own_files
	fi
}

# --- a load of many gigabytes of comments: status answers meanwhile, the load is bounded ---
case_load_beside_loop() {
	local gz=$XBD_TMP/comments.gz links=() pid i t0 ms out running=0 began
	head -c 67108864 < <(yes '# a comment line of a long list: nothing in it to load') |
		gzip -1 >"$gz" || { xbd_fail load_read_beside_the_loop "cannot write $gz"; return; }
	for i in $(seq -w 1 17); do
		ln -s "$gz" "$XBD_TMP/l$i.gz" && links+=("$XBD_TMP/l$i.gz")
	done
	began=$(date +%s%N)
	xbd_cli lists load --deny "${links[@]}" >"$XBD_TMP/load.out" 2>&1 &
	pid=$!
	e2e_defer kill "$pid"
	sleep 0.3
	for ((i = 0; i < 5; i++)); do
		kill -0 "$pid" 2>/dev/null && running=$((running + 1))
		t0=$(date +%s%N)
		out=$(timeout 2 "$XBD_BIN/xdpban" --socket "$XBD_SOCK" status --json 2>&1)
		ms=$((($(date +%s%N) - t0) / 1000000))
		if [[ $(xbd_json 'd["daemon"]' <<<"$out" 2>/dev/null) != True ]] || ((ms > 1000)); then
			xbd_fail load_read_beside_the_loop "status $((i + 1)) of 5 during the load: after $ms ms: '${out:0:120}'"
			return
		fi
		sleep 0.2
	done
	wait "$pid"
	echo "hostile: the load of 17 x 64 MiB was refused after $((($(date +%s%N) - began) / 1000000)) ms"
	out=$(cat "$XBD_TMP/load.out")
	if ((running < 2)); then
		xbd_fail load_read_beside_the_loop "the load was over before the second status ($running): nothing tested"
	elif [[ $out != *"the lists read together hold more than 1073741824 bytes of text"* ]]; then
		xbd_fail load_read_beside_the_loop "the load was not stopped at 1 GiB: '$out'"
	elif xbd_cli lists --json | grep -qF "$XBD_TMP/l01.gz"; then
		xbd_fail load_read_beside_the_loop "a list of the refused load is in force"
	else
		xbd_pass load_read_beside_the_loop
	fi
}

METRICS_PORT=$((20000 + $$ % 20000))
XBD_CONF_SOCKET_MODE=0666 xbd_write_conf "[metrics]" "listen = off"
if xbd_start; then
	case_refused
	case_member
	case_root_idle
	case_idle_timeout
	case_member_files
	case_load_beside_loop
	case_slow_scrapers
else
	for c in "${CASES[@]}"; do xbd_fail "$c" "the daemon did not start"; done
fi
xbd_stop TERM
((E2E_FAILED == 0))
