#!/usr/bin/env bash
# e2e_daemon.sh - end-to-end tests of xdpband in a private pair of network namespaces joined by
# two veths: a bad config is refused before anything is made, and `xdpband -t` refuses what a
# start refuses (no or unknown interfaces, a directory, a binary file); it starts and attaches
# to both interfaces, which share one state, and reports its start time in RFC 3339; it bans
# through errors seen on the wire, takes `set` at once, refuses a second daemon and a non-root
# peer, answers garbage on its control socket without dying, and its metrics match the maps.
# Its log lines start with their RFC 3339 time, and the end of a timed ban is one of them;
# restarted under a real systemd-journald of its own (a private mount namespace, its files in
# the temp directory), a ban is read back with journalctl by its SOURCE field, and a line the
# journal's socket no longer takes reaches the journal through stderr.
#
# Its helpers (xbd_*, the daemon in two namespaces) are e2e_lib.sh's. Everything it creates
# (namespaces, veth, pin directory, temp directory, daemons) is named xbd-* and removed by the
# EXIT trap, also on failure. It never touches an interface it did not create.
#
# Usage: tests/e2e/e2e_daemon.sh BUILD_DIR
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
source tests/e2e/e2e_lib.sh

CASES=(bad_config_refused_at_start check_matches_start daemon_starts_and_attaches ban_through_errors
	interfaces_share_state set_limit_without_reload
	second_daemon_refused wrong_socket_said_alike control_refuses_non_root metrics_match_maps
	malformed_control_requests daemon_commands log_lines_stamped journal_fields)
xbd_require "${CASES[@]}"
if ! xbd_setup a; then
	for c in "${CASES[@]}"; do echo "FAIL: $c (cannot create the test namespaces)"; done
	exit 1
fi
T0=$(date +%s)
# socket-mode 0666: anyone may connect, so that the credential check is what refuses.
XBD_CONF_SOCKET_MODE=0666 xbd_write_conf "[metrics]" "listen = 127.0.0.1:9433"

# --- bad values at start: exit 1, one line naming file, line, key and value; nothing made ---
case_bad_config() {
	local bad=$XBD_TMP/bad.conf list=$XBD_TMP/bad.list out1 rc1 out2 rc2
	sed 's/^limit = 3$/limit = -1/' "$XBD_CONF" >"$bad"
	out1=$(nsenter --net="/run/netns/$XBD_NS_R" "$XBD_BIN/xdpband" -c "$bad" 2>&1)
	rc1=$?
	printf '192.0.2.0/24\nhost.example   # no hostnames\n' >"$list"
	{ cat "$XBD_CONF"; echo "[lists]"; echo "deny = $list"; } >"$bad"
	out2=$(nsenter --net="/run/netns/$XBD_NS_R" "$XBD_BIN/xdpband" -c "$bad" 2>&1)
	rc2=$?
	if ((rc1 != 1)) || [[ $(wc -l <<<"$out1") != 1 || $out1 != *"$bad:$(grep -n '^limit' "$XBD_CONF" | cut -d: -f1): [bans] limit = '-1'"* ]]; then
		xbd_fail bad_config_refused_at_start "limit = -1: exit $rc1, '$out1'"
	elif ((rc2 != 1)) || [[ $(wc -l <<<"$out2") != 1 || $out2 != *"$list:2:"*host.example* ]]; then
		xbd_fail bad_config_refused_at_start "hostname in a list: exit $rc2, '$out2'"
	elif [[ -e $XBD_PIN || -e $XBD_SOCK ]]; then
		xbd_fail bad_config_refused_at_start "a refused start left pins or a socket"
	else
		xbd_pass bad_config_refused_at_start
	fi
}

# --- -t makes every check a start makes before loading: what it accepts, a start accepts ---
case_check_config() {
	local dir=$XBD_TMP/t bad=()
	mkdir -p "$dir" && mkfifo "$dir/fifo" || { xbd_fail check_matches_start "cannot set up"; return; }
	grep -v '^interfaces = ' "$XBD_CONF" >"$dir/no-ifaces.conf"
	sed "s/^interfaces = .*/interfaces = $XBD_IF_R, xbdnosuch$$/" "$XBD_CONF" >"$dir/no-such-iface.conf"
	{ head -c 2000 "$XBD_BIN/xdpban"; cat "$XBD_CONF"; } >"$dir/binary.conf"
	sed 's/^limit = 3$/limit = 3\x00junk/' "$XBD_CONF" >"$dir/nul.conf"
	sed "s/^interfaces = \(.*\)/interfaces = \1   # the test veths/" "$XBD_CONF" >"$dir/hash.conf"
	sed 's/^limit = 3$/  limit = 3/' "$XBD_CONF" >"$dir/indented.conf"
	sed -e 's/^ban-time = .*/ban-time = 1w ; weeks, as in xdpban set/' \
		-e 's/^max-ban-time = .*/max-ban-time = 2w/' "$XBD_CONF" >"$dir/weeks.conf"
	xbd_check_t good 0 "configuration OK (2 interfaces" -t -c "$XBD_CONF"
	xbd_check_t weeks 0 "configuration OK (2 interfaces" -t -c "$dir/weeks.conf"
	xbd_check_t no-interfaces 1 "no interface to attach to" -t -c "$dir/no-ifaces.conf"
	xbd_check_t -i-instead 0 "configuration OK (1 interface" -t -c "$dir/no-ifaces.conf" -i "$XBD_IF_R"
	xbd_check_t no-such-interface 1 "interface xbdnosuch$$: no such interface" -t -c "$dir/no-such-iface.conf"
	xbd_check_t no-such-i 1 "interface xbdnosuch$$: no such interface" -t -c "$XBD_CONF" -i "xbdnosuch$$"
	xbd_check_t directory 1 "config $dir is a directory, not a regular file" -t -c "$dir"
	xbd_check_t fifo 1 "config $dir/fifo is a FIFO, not a regular file" -t -c "$dir/fifo"
	xbd_check_t device 1 "config /dev/null is a device, not a regular file" -t -c /dev/null
	xbd_check_t binary 1 "$dir/binary.conf:1: byte 0x7f is not text" -t -c "$dir/binary.conf"
	xbd_check_t nul 1 "$dir/nul.conf:$(grep -n '^limit' "$XBD_CONF" | cut -d: -f1): byte 0x00 is not text" -t -c "$dir/nul.conf"
	xbd_check_t inline-hash 1 "[xdp] interfaces = '$XBD_IF_R, $XBD_IF_R2   # the test veths': '#' starts a comment only at the start of a line" -t -c "$dir/hash.conf"
	xbd_check_t indented 1 "$dir/indented.conf:$(grep -n '^limit' "$XBD_CONF" | cut -d: -f1): indented line" -t -c "$dir/indented.conf"
	xbd_check_ports "$dir"
	# A start refuses the same files, in one line, before it makes anything.
	xbd_check_t start-on-directory 1 "config $dir is a directory, not a regular file" -c "$dir"
	xbd_check_t start-without-interfaces 1 "no interface to attach to" -c "$dir/no-ifaces.conf"
	xbd_checks_done check_matches_start
}

# xbd_check_ports DIR: -t takes a full [ports] section, and refuses each bad value in one line
# naming the file, the line, the key and the bad piece (into the caller's $bad).
xbd_check_ports() {
	local dir=$1 n=$(($(wc -l <"$XBD_CONF") + 2)) name value want
	{ cat "$XBD_CONF"; echo "[ports]"; echo "probe-icmp = yes"; echo "guard = 6969/bep15, 53/dns"
		echo "open-tcp = 22,80,8000-8100"; echo "open-tcp = 443"; echo "open-udp = 53"; } >"$dir/ports.conf"
	xbd_check_t ports-good 0 "configuration OK (2 interfaces" -t -c "$dir/ports.conf"
	while IFS='|' read -r name value want; do
		{ cat "$XBD_CONF"; echo "[ports]"; echo "$value"; } >"$dir/ports-$name.conf"
		xbd_check_t "ports-$name" 1 "$dir/ports-$name.conf:$n: $want" -t -c "$dir/ports-$name.conf"
	done <<'EOT'
empty-piece|open-tcp = 22,,80|[ports] open-tcp = '22,,80': bad open-tcp '22,,80': piece 2 is empty
zero|open-udp = 0|[ports] open-udp = '0': bad open-udp '0': '0' is out of range: ports are 1..65535
too-big|open-tcp = 65536|[ports] open-tcp = '65536': bad open-tcp '65536': '65536' is out of range: ports are 1..65535
reversed|open-tcp = 90-80|[ports] open-tcp = '90-80': bad open-tcp '90-80': range '90-80' is reversed: LO must not be above HI
garbage|open-tcp = ssh|[ports] open-tcp = 'ssh': bad open-tcp 'ssh': 'ssh' is not a port 1..65535 or a range LO-HI
no-profile|guard = 6969|[ports] guard = '6969': bad guard '6969': '6969' is not PORT/PROFILE (profiles: bep15, dns)
bad-profile|guard = 6969/http|[ports] guard = '6969/http': bad guard '6969/http': 'http' is not a guard profile (known: bep15, dns)
icmp-alone|probe-icmp = yes|[ports] probe-icmp needs open ports: without an open TCP or UDP port list nothing is a probe
icmp-word|probe-icmp = maybe|[ports] probe-icmp = 'maybe': not yes or no
EOT
	# a port guarded twice with two profiles: the second line is named
	{ cat "$XBD_CONF"; echo "[ports]"; echo "guard = 53/dns"; echo "guard = 53/bep15"; } >"$dir/ports-twice.conf"
	xbd_check_t ports-twice 1 "$dir/ports-twice.conf:$((n + 1)): [ports] guard = '53/bep15': bad guard '53/bep15': port 53 is guarded as dns already" \
		-t -c "$dir/ports-twice.conf"
	{ cat "$XBD_CONF"; echo "[ports]"; echo "probe-icmp = yes"; echo "probe-icmp = no"; } >"$dir/ports-icmp-twice.conf"
	xbd_check_t ports-icmp-twice 1 "$dir/ports-icmp-twice.conf:$((n + 1)): [ports] probe-icmp = 'no': already set on line $n" \
		-t -c "$dir/ports-icmp-twice.conf"
}

# --- start and attach ---
case_start() {
	local id missing t0
	t0=$(date +%s)
	if ! xbd_start; then
		xbd_fail daemon_starts_and_attaches "xdpband did not start"
		return 1
	fi
	id=$(xbd_prog_id)
	missing=$(pins=$($XBD_PY tests/tools/xb_maps.py pins "$XBD_PIN") || echo "(no list of maps)"
		for pin in $pins; do [[ -e $pin ]] || echo "$pin"; done)
	if [[ -z $id ]]; then
		xbd_fail daemon_starts_and_attaches "no XDP program on $XBD_IF_R"
	elif [[ $(xbd_cli status --json | xbd_json 'd["interfaces"][0]["program_id"]') != "$id" ]]; then
		xbd_fail daemon_starts_and_attaches "status does not name program $id"
	elif [[ -n $missing ]]; then
		xbd_fail daemon_starts_and_attaches "not pinned: ${missing//$'\n'/ }"
	elif ! xbd_log_has "$XBD_IF_R: attached in native mode"; then
		xbd_fail daemon_starts_and_attaches "no 'attached in native mode' log line"
	elif ! xbd_limit_is 3; then
		xbd_fail daemon_starts_and_attaches "the config's limit 3 is not in force"
	elif ! xbd_started_between "$t0" "$(date +%s)"; then
		xbd_fail daemon_starts_and_attaches "xdpband.started is not RFC 3339 UTC within the start: $(xbd_cli status --json | xbd_json 'd["xdpband"]["started"]')"
	else
		xbd_pass daemon_starts_and_attaches
	fi
}

# xbd_started_between T0 T1: status' xdpband.started is RFC 3339 UTC, within [T0, T1] (Unix s).
xbd_started_between() {
	xbd_cli status --json | "$XBD_PY" -c '
import calendar, json, sys, time
s = json.load(sys.stdin)["xdpband"]["started"]
t = calendar.timegm(time.strptime(s, "%Y-%m-%dT%H:%M:%SZ"))
sys.exit(0 if int(sys.argv[1]) <= t <= int(sys.argv[2]) else 1)' "$1" "$2" 2>/dev/null
}

# --- limit 3: the 4th malformed frame bans; 3 do not ---
case_ban() {
	xbd_send synfin 192.0.2.66 4
	xbd_send synfin 192.0.2.67 3
	xbd_wait_until xbd_banned 192.0.2.66
	xbd_wait_until xbd_count_is 192.0.2.67 3
	local ban count67 banned67
	ban=$(xbd_ban_of 192.0.2.66)
	count67=$(xbd_query 192.0.2.67 'd["count"]')
	banned67=$(xbd_query 192.0.2.67 'd["banned"]')
	if [[ $ban != "4 errors" ]]; then
		xbd_fail ban_through_errors "bans --json has '$ban' for 192.0.2.66, not '4 errors'"
	elif [[ $(xbd_query 192.0.2.66 'd["ban_reason"]') != errors ]]; then
		xbd_fail ban_through_errors "query --json does not show 192.0.2.66 banned for errors"
	elif [[ $count67 != 3 || $banned67 != False ]]; then
		xbd_fail ban_through_errors "192.0.2.67 has count $count67, banned $banned67 after 3 errors"
	elif ! xbd_wait_until xbd_log_has "ban 192.0.2.66 for 1h"; then
		xbd_fail ban_through_errors "no log line for the ban of 192.0.2.66"
	else
		xbd_pass ban_through_errors
	fi
}

# --- both interfaces run the program on one state: banned on the first, dropped on the second ---
case_two_ifaces() {
	local before
	before=$(xbd_stat drop_banned)
	xbd_send udp 192.0.2.66 1 "$XBD_IF_S2"
	if [[ $(xbd_cli status --json | xbd_json 'len(d["interfaces"])') != 2 ]]; then
		xbd_fail interfaces_share_state "status does not list two interfaces"
	elif [[ -z $(ip -n "$XBD_NS_R" -j -d link show dev "$XBD_IF_R2" | xbd_json 'd[0]["xdp"]["prog"]["id"]') ]]; then
		xbd_fail interfaces_share_state "no program on $XBD_IF_R2"
	elif ! xbd_wait_until xbd_stat_is drop_banned $((before + 1)); then
		xbd_fail interfaces_share_state "192.0.2.66, banned on $XBD_IF_R, was not dropped on $XBD_IF_R2"
	else
		xbd_pass interfaces_share_state
	fi
}

# --- set limit 1 at run time: the 2nd error bans, no reload involved ---
case_set_limit() {
	xbd_cli set limit 1 >/dev/null
	xbd_send synfin 192.0.2.68 2
	if ! xbd_wait_until xbd_banned 192.0.2.68; then
		xbd_fail set_limit_without_reload "192.0.2.68 not banned after 2 errors with limit 1"
	elif [[ $(xbd_ban_of 192.0.2.68) != "2 errors" ]]; then
		xbd_fail set_limit_without_reload "ban of 192.0.2.68 is '$(xbd_ban_of 192.0.2.68)'"
	elif xbd_log_has "reloaded"; then
		xbd_fail set_limit_without_reload "the daemon reloaded"
	else
		xbd_pass set_limit_without_reload
	fi
	xbd_cli set limit 3 >/dev/null
}

# --- a second daemon on the same pins is refused in one line ---
case_second_daemon() {
	local out rc
	out=$(nsenter --net="/run/netns/$XBD_NS_R" timeout 20 "$XBD_BIN/xdpband" -c "$XBD_CONF" 2>&1)
	rc=$?
	if ((rc == 0 || rc == 124)); then
		xbd_fail second_daemon_refused "second xdpband exited $rc"
	elif [[ $(wc -l <<<"$out") != 1 || $out != *"another xdpband already runs"* ]]; then
		xbd_fail second_daemon_refused "message was: $out"
	elif ! xbd_alive || ! xbd_banned 192.0.2.66; then
		xbd_fail second_daemon_refused "the first daemon or its state was disturbed"
	else
		xbd_pass second_daemon_refused
	fi
}

# --- a socket no daemon answers on, the daemon's pins: a read and a change say the same ---
# (the pin directory locked by another process), and neither says that no daemon runs.
case_wrong_socket() {
	local wrong=$XBD_TMP/wrong.sock status ban rc_s rc_b held="$XBD_PIN is locked by another process"
	status=$("$XBD_BIN/xdpban" --socket "$wrong" --pin-dir "$XBD_PIN" status 2>&1 >"$XBD_TMP/status.out")
	rc_s=$?
	ban=$("$XBD_BIN/xdpban" --socket "$wrong" --pin-dir "$XBD_PIN" ban 192.0.2.98 2>&1 >/dev/null)
	rc_b=$?
	if ((rc_s != 0 || rc_b != 1)); then
		xbd_fail wrong_socket_said_alike "status exited $rc_s (not 0), ban $rc_b (not 1)"
	elif [[ $(wc -l <<<"$status") != 1 || $status != *"$held"* ]]; then
		xbd_fail wrong_socket_said_alike "status's note: '$status'"
	elif [[ $(wc -l <<<"$ban") != 1 || $ban != *"$held"* ]]; then
		xbd_fail wrong_socket_said_alike "ban's refusal: '$ban'"
	elif ! grep -qx "daemon: *none answered (maps read directly from $XBD_PIN)" "$XBD_TMP/status.out"; then
		xbd_fail wrong_socket_said_alike "status: $(grep '^daemon:' "$XBD_TMP/status.out")"
	elif xbd_banned 192.0.2.98; then
		xbd_fail wrong_socket_said_alike "192.0.2.98 got banned behind the daemon's back"
	else
		xbd_pass wrong_socket_said_alike
	fi
}

# --- nobody may connect (mode 0666) but is refused by SO_PEERCRED; root is served ---
case_non_root() {
	local out rc
	out=$(setpriv --reuid=nobody --regid=nogroup --clear-groups "$XBD_BIN/xdpban" --socket "$XBD_SOCK" ban 192.0.2.99 2>&1)
	rc=$?
	if ((rc == 0)); then
		xbd_fail control_refuses_non_root "nobody's ban succeeded: $out"
	elif [[ $out != *"uid 65534"* ]]; then
		xbd_fail control_refuses_non_root "refusal does not name the uid: $out"
	elif xbd_banned 192.0.2.99; then
		xbd_fail control_refuses_non_root "192.0.2.99 got banned anyway"
	elif ! xbd_log_has "refused a connection from uid 65534"; then
		xbd_fail control_refuses_non_root "no log line for the refusal"
	else
		xbd_pass control_refuses_non_root
	fi
}

# --- /metrics against the pinned maps, read while nothing moves ---
case_metrics() {
	local metrics maps
	xbd_send udp 192.0.2.20 5
	xbd_wait_until xbd_metric_is 'xdpban_packets_total{reason="passed"}' 5
	metrics=$(nsenter --net="/run/netns/$XBD_NS_R" curl -sf http://127.0.0.1:9433/metrics)
	maps=$(xbd_maps_as_metrics)
	if [[ -z $metrics || -z $maps ]]; then
		xbd_fail metrics_match_maps "no metrics ('$metrics') or no map dump"
	elif ! diff <(grep -v '^#' <<<"$metrics" | grep -F -f <(cut -d' ' -f1 <<<"$maps" | sed 's/$/ /') | sort) \
		<(sort <<<"$maps") >"$XBD_TMP/metrics.diff"; then
		xbd_fail metrics_match_maps "differs: $(tr '\n' ' ' <"$XBD_TMP/metrics.diff")"
	elif ! grep -q '^xdpban_banned_sources{table="bans"} 2$' <<<"$metrics" ||
		! grep -q '^xdpban_banned_sources{table="policy"} 0$' <<<"$metrics"; then
		xbd_fail metrics_match_maps "xdpban_banned_sources is not 2 in bans and 0 in policy"
	else
		xbd_pass metrics_match_maps
	fi
}

xbd_metric_is() {
	nsenter --net="/run/netns/$XBD_NS_R" curl -sf http://127.0.0.1:9433/metrics | grep -qxF "$1 $2"
}

# The pinned maps, summed over CPUs with bpftool, written as the metrics should read: every
# statistic, and the live slots of the tables (no ban expires and no window ends in this test).
xbd_maps_as_metrics() {
	local name packets bytes verdicts=" passed passed_trusted drop_deny drop_not_allowed drop_banned drop_malformed drop_error "
	"$XBD_PY" tests/tools/xb_maps.py stats "$XBD_PIN" | while read -r name packets bytes; do
		if [[ $verdicts == *" $name "* ]]; then
			echo "xdpban_packets_total{reason=\"$name\"} $packets"
			echo "xdpban_bytes_total{reason=\"$name\"} $bytes"
		elif [[ $name == class_* ]]; then
			echo "xdpban_class_errors_total{class=\"${name#class_}\"} $packets"
		elif [[ $name == counter_full ]]; then # no type ("counter") in a metric's name
			echo "xdpban_tracking_full_total $packets"
		else
			echo "xdpban_${name}_total $packets"
		fi
	done
	echo "xdpban_tracked_sources $("$XBD_PY" tests/tools/xb_maps.py live "$XBD_PIN" counts)"
	echo "xdpban_banned_sources{table=\"bans\"} $("$XBD_PY" tests/tools/xb_maps.py live "$XBD_PIN" bans)"
}

# --- garbage on the control socket: error replies, and the daemon lives on ---
case_garbage() {
	local out
	out=$("$XBD_PY" - "$XBD_SOCK" <<'EOF' 2>&1
import json, socket, sys
path = sys.argv[1]

def exchange(payload, shut=False, replies=1):
    """Sends payload; reads until the server closes, or until `replies` lines came."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(15)
    s.connect(path)
    s.sendall(payload)
    if shut:
        s.shutdown(socket.SHUT_WR)
    data = b""
    while shut or data.count(b"\n") < replies:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    s.close()
    return [json.loads(line) for line in data.decode().splitlines()]

def expect_error(name, payload, text, shut=False):
    replies = exchange(payload, shut)
    if len(replies) != 1 or replies[0].get("ok") is not False or text not in replies[0].get("error", ""):
        sys.exit(f"{name}: got {replies}")

expect_error("garbage", b"garbage\n", "")
expect_error("binary", b"\x00\xff\xfe{\n", "")
expect_error("unknown command", b'{"cmd":"nosuch"}\n', "unknown command")
expect_error("not an object", b"[1,2,3]\n", "")
expect_error("no newline", b'{"cmd":', "", shut=True)
expect_error("oversized", b"a" * 5000, "longer than 4096")
expect_error("oversized then more", b"b" * 4097 + b'\n{"cmd":"status"}\n', "longer than 4096")
expect_error("4096 bytes of junk", b"c" * 4096 + b"\n", "")
# Replies decode as strict UTF-8 (exchange() would raise otherwise): what is quoted is escaped.
expect_error("invalid UTF-8", b'{"cmd":"\xff\xfe"}\n', 'unknown command "\\xff\\xfe"')
expect_error("escaped NUL", b'{"cmd":"ban","prefix":"192.0.2.45\\u0000/8"}\n',
             'field "prefix" contains a NUL character')
both = exchange(b'{"cmd":"status"}\n{"cmd":"stats"}\n', replies=2)
if [r.get("ok") for r in both] != [True, True] or "daemon" not in both[0] or "daemon" in both[1]:
    sys.exit(f"two requests sent at once, not answered in order: {both}")
EOF
	)
	if [[ -n $out ]]; then
		xbd_fail malformed_control_requests "$out"
	elif ! xbd_not_banned 192.0.2.45; then
		xbd_fail malformed_control_requests "a prefix with an escaped NUL banned 192.0.2.45"
	elif ! xbd_alive || ! xbd_answers; then
		xbd_fail malformed_control_requests "the daemon stopped answering"
	else
		xbd_pass malformed_control_requests
	fi
}

# --- the daemon's own commands: save writes the state file; unknown fields are refused ---
case_daemon_commands() {
	local save bad
	save=$("$XBD_PY" -c '
import json, socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
for req in ({"cmd": "save"}, {"cmd": "reload", "now": 1}):
    s.sendall((json.dumps(req) + "\n").encode())
    print(s.makefile().readline().strip())' "$XBD_SOCK")
	bad=$(sed -n 2p <<<"$save")
	if [[ $(head -1 <<<"$save" | xbd_json 'd["ok"]') != True ]]; then
		xbd_fail daemon_commands "save: $save"
	elif ! grep -q '^ban 192.0.2.66 .*count=4 reason=errors' "$XBD_STATE"; then
		xbd_fail daemon_commands "the state file lacks the ban of 192.0.2.66"
	elif [[ $(xbd_json 'd["ok"]' <<<"$bad") != False ]]; then
		xbd_fail daemon_commands "reload with an unknown field: $bad"
	else
		xbd_pass daemon_commands
	fi
}

# --- off the journal, each line starts with its time: RFC 3339, UTC, to the millisecond; the
# end of a timed ban is logged (a sweep found the ban of 1 s made at the start) ---
case_log_stamped() {
	local bad
	bad=$("$XBD_PY" - "$XBD_LOG" "$T0" "$(date +%s)" <<-'EOF'
		import calendar, re, sys, time
		log, t0, t1 = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
		stamp = re.compile(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)\.\d{3}Z xdpband: ")
		lines = [l for l in open(log).read().splitlines() if not l.startswith("== xdpband")]
		for want in ("xdpband: ban 192.0.2.66 for 1h", "xdpband: ban 198.51.100.77 expired"):
		    if not any(want in l for l in lines):
		        print("no line '%s'" % want)
		for l in lines:
		    m = stamp.match(l)
		    if not m:
		        print("a line without its time: %r" % l[:80])
		        break
		    t = calendar.timegm(time.strptime(m[1], "%Y-%m-%dT%H:%M:%S"))
		    if not t0 <= t <= t1:
		        print("%s is not within the test's run" % m[1])
		        break
	EOF
	)
	if [[ -n $bad ]]; then xbd_fail log_lines_stamped "$bad"; else xbd_pass log_lines_stamped; fi
}

# --- under the journal: a systemd-journald of its own, its files in the temp directory ---
JOURNALD=/lib/systemd/systemd-journald
JDIR=$XBD_TMP/journal
JPID=

# jns CMD...: CMD in the journal's mount namespace.
jns() { nsenter --mount="/proc/$JPID/ns/mnt" "$@"; }

# journal_start: systemd-journald in a mount namespace of its own, where /run/systemd,
# /run/log (bound to $JDIR/log, read from here) and its config are its own: no systemd as PID 1
# needed, and the host's journal, sockets and files are never seen. No kernel messages, no
# file kept past the test. 1 with E2E_WHY when it does not come up.
journal_start() {
	mkdir -p "$JDIR/log" || return 1
	printf '[Journal]\nStorage=volatile\nReadKMsg=no\nForwardToSyslog=no\nForwardToWall=no\n' \
		>"$JDIR/journald.conf"
	JDIR=$JDIR unshare -m --propagation private sh -c '
		mount -t tmpfs -o mode=0755 tmpfs /run/systemd &&
		mount --bind "$JDIR/log" /run/log &&
		mount --bind "$JDIR/journald.conf" /etc/systemd/journald.conf &&
		{ [ ! -d /var/log/journal ] || mount -t tmpfs tmpfs /var/log/journal; } &&
		export SYSTEMD_LOG_TARGET=console && exec "$0"' "$JOURNALD" >"$JDIR/journald.out" 2>&1 &
	JPID=$!
	XBD_PIDS+=("$JPID")
	e2e_wait 100 jns test -S /run/systemd/journal/socket && return 0
	E2E_WHY="systemd-journald did not start in a mount namespace of its own: $(tail -n 1 "$JDIR/journald.out")"
	return 1
}

# journal_daemon: xdpband as systemd starts a service, stdout and stderr on the journal's
# stream, which JOURNAL_STREAM names (systemd-cat does not set it). Each program execs the
# next: $XBD_PID is the daemon.
journal_daemon() {
	nsenter --mount="/proc/$JPID/ns/mnt" --net="/run/netns/$XBD_NS_R" systemd-cat -t xdpband sh -c \
		'export JOURNAL_STREAM="$(stat -L -c %d:%i /proc/self/fd/2)" && exec "$@"' sh \
		"$XBD_BIN/xdpband" -c "$XBD_CONF" &
	XBD_PID=$!
	XBD_PIDS+=("$XBD_PID")
	xbd_wait_until xbd_answers && xbd_alive
}

# journal MATCH...: each entry journalctl reads for MATCH, one a line: the fields its sender
# gave (sorted) and how it came (_TRANSPORT), then its MESSAGE up to the first comma.
journal() {
	journalctl -D "$JDIR/log/journal" -q --no-pager -o json "$@" | "$XBD_PY" -c '
import json, sys
for line in sys.stdin:
    e = json.loads(line)
    names = sorted(n for n in e if not n.startswith("_") and n != "MESSAGE") + ["_TRANSPORT"]
    print(" ".join("%s=%s" % (n, e.get(n)) for n in names), "|", e["MESSAGE"].split(",")[0])'
}

# undocumented_fields: the fields of the daemon's entries that xdpband.8 does not name in
# JOURNAL FIELDS.
undocumented_fields() {
	local section name
	section=$(sed -n '/^\.SH "\?JOURNAL FIELDS"\?$/,/^\.SH [A-Z]/p' deploy/xdpband.8)
	for name in $(journal SYSLOG_IDENTIFIER=xdpband | grep -o '[A-Z_]*=' | sort -u | tr -d =); do
		[[ $name == _* || $section =~ [[:space:]]$name([[:space:]]|$) ]] || echo "$name"
	done
}

# journal_is WANT MATCH...: within 5 s, journal MATCH... is WANT.
journal_is() {
	local want=$1 i
	shift
	for ((i = 0; i < 50; i++)); do
		[[ $(journal "$@") == "$want" ]] && return 0
		sleep 0.1
	done
	E2E_WHY="journalctl $*: expected '$want', got '$(journal "$@" | head -n 3)'"
	return 1
}

# A ban of the data path and a manual prefix ban, with their fields; a line about no source
# with its priority alone; and, the journal's socket gone, a line through the stream.
journal_check() {
	local running
	xbd_send synfin 192.0.2.70 4
	xbd_wait_until xbd_banned 192.0.2.70 || { E2E_WHY="192.0.2.70 was not banned"; return 1; }
	journal_is "CLASSES=$(xbd_ban_classes 192.0.2.70) COUNT=4 ORIGIN=local PRIORITY=6 REASON=errors SOURCE=192.0.2.70 SYSLOG_IDENTIFIER=xdpband _TRANSPORT=journal | ban 192.0.2.70 for 1h" \
		SOURCE=192.0.2.70 || return 1
	xbd_cli ban --for 1h 203.0.113.0/24 >/dev/null || { E2E_WHY="xdpban ban refused"; return 1; }
	journal_is "ORIGIN=manual PREFIX=203.0.113.0/24 PRIORITY=6 REASON=manual SYSLOG_IDENTIFIER=xdpband _TRANSPORT=journal | manual ban 203.0.113.0/24 for 1h" \
		PREFIX=203.0.113.0/24 || return 1
	running=$(journal SYSLOG_IDENTIFIER=xdpband | grep -F '| running: port rules')
	e2e_expect "the running line" \
		"PRIORITY=6 SYSLOG_IDENTIFIER=xdpband _TRANSPORT=journal | running: port rules" \
		"${running%%:*}: port rules" || return 1
	e2e_expect "fields xdpband.8 does not name in JOURNAL FIELDS" "" "$(undocumented_fields | xargs)" ||
		return 1
	jns rm /run/systemd/journal/socket || { E2E_WHY="cannot remove the journal's socket"; return 1; }
	xbd_cli unban 192.0.2.70 >/dev/null || { E2E_WHY="xdpban unban refused"; return 1; }
	journal_is "PRIORITY=6 SYSLOG_IDENTIFIER=xdpband _TRANSPORT=stdout | manual unban 192.0.2.70" \
		"MESSAGE=manual unban 192.0.2.70"
}

case_journal() {
	local tool
	for tool in journalctl systemd-cat unshare stat; do
		command -v $tool >/dev/null ||
			{ e2e_skip journal_fields "$tool is not installed (make deps)"; return; }
	done
	[[ -x $JOURNALD ]] || { e2e_skip journal_fields "no $JOURNALD (make deps)"; return; }
	journal_start || { e2e_skip journal_fields "$E2E_WHY"; return; }
	if ! journal_daemon; then
		xbd_fail journal_fields "xdpband did not start under the journal: $(journal | tail -n 2)"
	elif journal_check; then
		xbd_pass journal_fields
	else
		xbd_fail journal_fields "$E2E_WHY"
	fi
	xbd_stop TERM
	kill "$JPID" && wait "$JPID"
}

case_bad_config
case_check_config
if case_start; then
	xbd_cli ban --for 1s 198.51.100.77 >/dev/null # its expiry is logged long before the end
	case_ban
	case_two_ifaces
	case_set_limit
	case_second_daemon
	case_wrong_socket
	case_non_root
	case_metrics
	case_garbage
	case_daemon_commands
	case_log_stamped
	xbd_stop TERM
	case_journal
else
	for c in "${CASES[@]:3}"; do echo "FAIL: $c (the daemon did not start)"; done
	E2E_FAILED=$((E2E_FAILED + ${#CASES[@]} - 3))
	xbd_stop TERM
fi
((E2E_FAILED == 0))
