#!/usr/bin/env bash
# e2e_cli.sh BUILD - the xdpban CLI end to end without a daemon: BUILD/xdpban.bpf.o attached
# with plain `ip link ... xdpdrv obj` in a namespace (maps pinned by iproute2 under
# /sys/fs/bpf/xdp/globals), then every command on those maps, malformed frames that get a
# source banned once `set limit 3` is in force, a fake daemon to show that requests go through
# the socket when one answers, and a table of bad arguments, each checked for its exit status,
# a one-line error and a state left exactly as it was.
#
# It must never touch state it did not create: it holds the iproute2 e2e lock for its whole
# run (tests/e2e/e2e_iplink.sh uses the same pin directory), refuses to start when xdpban_* pins
# exist there, and removes every namespace, attachment, pin, socket and process it made on any
# exit. Only documentation addresses are used. Uses tests/e2e/e2e_lib.sh and tests/tools/xb_send.py.
# shellcheck disable=SC2317 # the case functions are called through e2e_case
set -uo pipefail
build=${1:-build}
cd "$(dirname "$0")/../.." || exit 1
source tests/e2e/e2e_lib.sh

readonly NS_S=xbcli-s NS_R=xbcli-r # sender, receiver
readonly IF_S=xbcli-s0 IF_R=xbcli-r0
readonly OBJ=$build/xdpban.bpf.o
readonly PIN_DIR=$E2E_IPROUTE2_PINS # where iproute2 pins LIBBPF_PIN_BY_NAME maps
readonly PY=$E2E_PY
readonly NO_DAEMON=/run/xbcli-no-daemon.sock # never created: the CLI must work directly
readonly FAKE_DAEMON=/run/xbcli-fake-daemon.sock
readonly WAIT_TRIES=100 # bounded waits: 100 polls of 0.1 s

readonly V4_DST=192.0.2.254
readonly V4_MANUAL=192.0.2.10 V4_NET=198.51.100.0/24 V4_IN_NET=198.51.100.7
readonly V4_NOISY=203.0.113.5 V4_REPORTED=203.0.113.77
readonly V4_TRUSTED_NET=203.0.113.128/25 V4_TRUSTED=203.0.113.130
readonly V6_NET=2001:db8:c1::/64

tmp='' recv_mac=''
xdpban() { "$tmp/xdpban" --socket "$NO_DAEMON" --pin-dir "$PIN_DIR" "$@"; }

# Evaluates a Python expression over the JSON document in $1 (as j); true when it holds.
json_holds() {
	"$PY" -c 'import json, sys; j = json.loads(sys.argv[1]); sys.exit(0 if eval(sys.argv[2]) else 1)' \
		"$1" "$2" 2>/dev/null && return 0
	E2E_WHY="not true: $2 in ${1:0:300}"
	return 1
}

run_cli() { # runs xdpban ARGS; sets out, err, rc
	xdpban "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	out=$(<"$tmp/out") err=$(<"$tmp/err")
}

cli_ok() { # xdpban ARGS must succeed; out gets its stdout
	run_cli "$@"
	((rc == 0)) && return 0
	E2E_WHY="xdpban $* exited $rc: ${err%%$'\n'*}"
	return 1
}

stat_packets() { # NAME: packets of one stat reason, from stats --json
	xdpban stats --json | "$PY" -c 'import json, sys; print(json.load(sys.stdin)["stats"][sys.argv[1]]["packets"])' "$1"
}

stat_reaches() { (($(stat_packets "$1") >= $2)); }

send_synfin() { # SRC COUNT: malformed TCP segments (SYN+FIN) from SRC to the receiver
	e2e_run ip netns exec "$NS_S" "$PY" tests/tools/xb_send.py synfin "$IF_S" "$recv_mac" \
		"$1" "$V4_DST" "$2"
}

# Every map but the ring buffer: equal dumps mean equal state. The tables as digests of their
# memory (a bpftool dump of them takes seconds), the others as bpftool prints them.
dump_state() {
	local m
	"$PY" tests/tools/xb_maps.py digest "$PIN_DIR" bans banidx baninfo counts seed || return 1
	for m in config policy4 policy6 exempt4 exempt6 stats; do
		echo "== $m"
		bpftool map dump pinned "$PIN_DIR/xdpban_$m" || return 1
	done
}

# --- setup -----------------------------------------------------------------------------------

# IPv6 is off in both namespaces: no autoconfiguration traffic crosses the link, so every
# packet the data path counts is one this test sent.
quiet_netns_add() {
	e2e_netns_add "$1" &&
		ip netns exec "$1" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
			net.ipv6.conf.default.disable_ipv6=1
}

make_topology() {
	quiet_netns_add "$NS_S" && quiet_netns_add "$NS_R" &&
		e2e_veth_add "$NS_S" "$IF_S" "$NS_R" "$IF_R" || return 1
	recv_mac=$(ip -n "$NS_R" -br link show dev "$IF_R" | awk '{ print $3 }')
	[[ -n $recv_mac ]]
}

# The pins are ours from here on (none existed and we hold the lock): their removal, and that
# of directories iproute2 creates for them, is registered before the attach.
attach_xdp() {
	[[ -d /sys/fs/bpf/xdp ]] || e2e_defer rmdir /sys/fs/bpf/xdp
	[[ -d $PIN_DIR ]] || e2e_defer rmdir "$PIN_DIR"
	e2e_defer sh -c "rm -f $PIN_DIR/xdpban_*"
	e2e_defer ip -n "$NS_R" link set dev "$IF_R" xdpdrv off
	e2e_run nsenter --net="/run/netns/$NS_R" ip link set dev "$IF_R" xdpdrv obj "$OBJ" sec xdp ||
		return 1
	[[ -e $PIN_DIR/xdpban_bans ]] || { E2E_WHY="iproute2 pinned no maps in $PIN_DIR"; return 1; }
}

setup() {
	[[ -x $build/xdpban && -f $OBJ ]] || { E2E_WHY="build $build/xdpban and $OBJ first"; return 1; }
	[[ ! -e $NO_DAEMON ]] || { E2E_WHY="$NO_DAEMON exists"; return 1; }
	tmp=$(mktemp -d /tmp/xbcli.XXXXXX) || return 1
	e2e_defer rm -rf "$tmp"
	# A private copy: a rebuild of the shared tree during the run cannot swap it under us.
	install -m 755 "$build/xdpban" "$tmp/xdpban" || return 1
	e2e_take_iproute2_lock && e2e_refuse_existing_pins && make_topology && attach_xdp
}

# --- cases -----------------------------------------------------------------------------------

case_status_json() {
	cli_ok status --json || return 1
	json_holds "$out" 'j["daemon"] is False and j["pin_dir"] == "'"$PIN_DIR"'"' &&
		json_holds "$out" 'j["config"] == {"limit": 10, "window": 86400, "ban_time": 86400, "rules": [], "ipv6_prefix": 64, "errors": ["malformed", "reported", "protocol", "probe"], "drop": ["malformed"], "spoof": "hop", "hop_tolerance": 1, "learn": "1/16", "allow_only": False, "mode": "enforce", "defaults": True}' &&
		json_holds "$out" 'j["tracked"] == 0 and j["banned"] == 0 and j["prefix_bans"] == 0' &&
		json_holds "$out" 'j["counters_max"] == 262144 and j["bans_max"] == 65536' &&
		json_holds "$out" 'sorted(j["stats"]) == sorted(["passed", "passed_trusted", "drop_deny", "drop_not_allowed", "drop_banned", "drop_malformed", "drop_error", "errors", "bans_created", "ban_table_full", "bans_expired", "events_lost", "errors_suspect", "errors_unverified", "errors_exempt", "counter_full", "sources_verified", "class_malformed", "class_reported", "class_protocol", "class_probe", "observed_deny", "observed_not_allowed", "observed_banned"])' &&
		json_holds "$out" 'j["ports"] == {"guards": [], "open_tcp": [], "open_udp": [], "probe_icmp": False}' &&
		json_holds "$out" 'all(set(v) == {"packets", "bytes"} and v["packets"] == 0 for v in j["stats"].values())'
}

# "FULL - elapsed <= x <= FULL" for a ban of FULL seconds made after `date +%s` gave T0: exact
# bounds, however slow the machine is.
left_within() { echo "$(($1 - $(date +%s) + $2 - 1)) <= $3 <= $1"; }

case_ban_address() {
	local t0
	t0=$(date +%s)
	cli_ok ban "$V4_MANUAL" --for 1h || return 1
	e2e_expect "ban output" "banned $V4_MANUAL for 1h" "$out" &&
		e2e_expect "note on stderr" "xdpban: note: no daemon answers on $NO_DAEMON; changed the maps in $PIN_DIR directly" "$err" &&
		cli_ok bans --json &&
		json_holds "$out" '[b for b in j["bans"] if b["prefix"] == "'"$V4_MANUAL"'" and b["reason"] == "manual" and b["count"] == 0 and '"$(left_within 3600 "$t0" 'b["seconds_left"]')"' and b["table"] == "bans" and b["classes"] == []]' &&
		json_holds "$out" '__import__("re").fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", j["bans"][0]["started"])'
}

case_ban_drops_on_the_wire() {
	local before
	before=$(stat_packets drop_banned) || return 1
	send_synfin "$V4_MANUAL" 2 || return 1
	e2e_wait "$WAIT_TRIES" stat_reaches drop_banned $((before + 2)) && return 0
	E2E_WHY="drop_banned went from $before to $(stat_packets drop_banned), not +2"
	return 1
}

case_ban_prefixes() {
	local t0
	t0=$(date +%s)
	cli_ok ban "$V4_NET" --for 10m && cli_ok ban "$V6_NET" || return 1
	e2e_expect "permanent ban output" "banned $V6_NET until unbanned" "$out" &&
		cli_ok bans --json &&
		json_holds "$out" '[b for b in j["bans"] if b["prefix"] == "'"$V4_NET"'" and b["table"] == "policy" and b["started"] is None and '"$(left_within 600 "$t0" 'b["seconds_left"]')"']' &&
		json_holds "$out" '[b for b in j["bans"] if b["prefix"] == "'"$V6_NET"'" and b["table"] == "bans" and b["seconds_left"] == -1]' &&
		json_holds "$out" 'len(j["bans"]) == 3'
}

# The text listing and the JSON listing are written by two fast paths: row for row, they
# must show the same bans (prefix, reason, count, started or "-").
case_bans_text_matches_json() {
	local json
	cli_ok bans --json || return 1
	json=$out
	cli_ok bans || return 1
	"$PY" -c '
import json, sys
bans = json.loads(sys.argv[1])["bans"]
lines = sys.argv[2].split("\n")
assert lines[0].split() == ["PREFIX", "REASON", "COUNT", "DROPS", "LEFT", "STARTED"], lines[0]
rows = sorted(tuple(l.split()[:4] + l.split()[5:]) for l in lines[1:])
want = sorted((b["prefix"], b["reason"], str(b["count"]),
               "-" if b["drops"] is None else str(b["drops"]), b["started"] or "-") for b in bans)
sys.exit(0 if rows == want and len(bans) == 3 else 1)' "$json" "$out" && return 0
	E2E_WHY="bans and bans --json differ: ${out:0:300} / ${json:0:300}"
	return 1
}

# A listing that cannot be written (a full disk) fails with one line, not a silent exit 0.
case_bans_write_error() {
	xdpban bans --json >/dev/full 2>"$tmp/err"
	rc=$? err=$(<"$tmp/err")
	((rc == 1)) && [[ $(wc -l <"$tmp/err") -eq 1 && $err == "xdpban: cannot list the bans: "* ]] &&
		return 0
	E2E_WHY="bans --json >/dev/full exited $rc: ${err:0:120}"
	return 1
}

case_query_json() {
	cli_ok query "$V4_MANUAL" --json || return 1
	json_holds "$out" 'j["address"] == "'"$V4_MANUAL"'" and j["key"] == "'"$V4_MANUAL"'" and j["banned"] is True and j["ban_reason"] == "manual" and j["policy"] == "none" and j["policy_match"] is None and j["count"] == 0' &&
		cli_ok query "$V4_IN_NET" --json &&
		json_holds "$out" 'j["banned"] is True and j["policy"] == "deny" and j["policy_match"] == "'"$V4_NET"'" and j["policy_list"] == 4294967295' &&
		cli_ok query 2001:db8:c1::99 --json &&
		json_holds "$out" 'j["key"] == "'"$V6_NET"'" and j["banned"] is True and j["seconds_left"] == -1'
}

case_unban() {
	cli_ok unban "$V4_MANUAL" || return 1
	e2e_expect "unban output" "unbanned $V4_MANUAL" "$out" &&
		cli_ok query "$V4_MANUAL" --json && json_holds "$out" 'j["banned"] is False' &&
		cli_ok bans --json &&
		json_holds "$out" 'not [b for b in j["bans"] if b["prefix"] == "'"$V4_MANUAL"'"]' || return 1
	run_cli unban "$V4_MANUAL"
	e2e_expect "second unban exit status" 1 "$rc" &&
		e2e_expect "second unban error" "xdpban: no ban on $V4_MANUAL" "${err##*$'\n'}"
}

# The text of a query: the manual prefix ban named "manual", not by its list id, and the time
# left in the one duration format.
case_query_text() {
	cli_ok query "$V4_IN_NET" || return 1
	grep -qx "policy: *deny ($V4_NET, manual)" <<<"$out" &&
		grep -qEx 'banned: *yes \(manual, (10m|[1-9]m([1-5]?[0-9]s)?|[1-5]?[0-9]s)\)' <<<"$out" &&
		return 0
	E2E_WHY="query $V4_IN_NET: $(grep -E '^(policy|banned):' <<<"$out" | tr '\n' '|')"
	return 1
}

# Every time left in `bans` is in the one format: no zero parts ("1d0h"), no bare seconds.
case_bans_left_one_format() {
	local left listing bad=()
	cli_ok ban 192.0.2.12 --for 1d1h && cli_ok bans || return 1 # once "1d0h" for its first hour
	listing=$out
	cli_ok unban 192.0.2.12 || return 1
	[[ $listing == *$'\n192.0.2.12 '* ]] || { E2E_WHY="the ban of 192.0.2.12 is not listed"; return 1; }
	while read -r left; do
		[[ $left == permanent ||
			($left =~ ^([1-9][0-9]*d)?([1-9][0-9]?h)?([1-9][0-9]?m)?([1-9][0-9]?s)?$ && -n $left) ]] ||
			bad+=("$left")
	done < <(awk 'NR > 1 { print $5 }' <<<"$listing")
	((${#bad[@]} == 0)) && return 0
	E2E_WHY="times left not in the one format: ${bad[*]}"
	return 1
}

# An IPv6 address is banned as its /64 key: unbanning the address lifts that ban and says so;
# an address inside a manual prefix ban is not lifted, the prefix is named.
case_unban_covering() {
	cli_ok unban 2001:db8:c1::99 || return 1
	e2e_expect "unban output" "unbanned $V6_NET (the key of 2001:db8:c1::99)" "$out" &&
		cli_ok query 2001:db8:c1::99 --json && json_holds "$out" 'j["banned"] is False' &&
		cli_ok ban "$V6_NET" || return 1
	run_cli unban "$V4_IN_NET"
	e2e_expect "unban inside a prefix ban" "1|xdpban: no ban on $V4_IN_NET itself: it lies in the prefix ban $V4_NET (unban $V4_NET to lift it)" "$rc|$err" &&
		cli_ok query "$V4_IN_NET" --json && json_holds "$out" 'j["banned"] is True'
}

# Durations take the same units everywhere: w, d, h, m and s, alone or together
# (xb_duration_parse), and are printed in one format (xb_duration_format).
case_durations_in_weeks() {
	local t0
	t0=$(date +%s)
	cli_ok ban 192.0.2.11 --for 2w || return 1
	e2e_expect "ban output" "banned 192.0.2.11 for 14d" "$out" &&
		cli_ok query 192.0.2.11 --json &&
		json_holds "$out" "$(left_within 1209600 "$t0" 'j["seconds_left"]')" &&
		cli_ok set window 1w &&
		e2e_expect "set output" "limit 10, window 7d, ban-time 1d, ipv6-prefix /64, errors malformed,reported,protocol,probe, drop malformed, spoof hop, hop-tolerance 1, learn 1/16" "$out" &&
		cli_ok status --json &&
		json_holds "$out" 'j["config"]["window"] == 604800' &&
		cli_ok set window 1d && cli_ok unban 192.0.2.11
}

# The text status shows each table's use against its size.
case_status_text() {
	cli_ok status || return 1
	[[ $out == *$'\ntracked: '*" source"*" (counter table of 262144)"$'\n'* &&
		$out == *$'\nbanned: '*" in the ban table (of 65536), "*" prefix ban"*$'\n'* ]] && return 0
	E2E_WHY="status lacks the table sizes: $(grep -E '^(tracked|banned):' <<<"$out" | tr '\n' '|')"
	return 1
}

# The ends of the PACKETS and BYTES columns (right-aligned) of each row of a stats table: one
# distinct pair when every row lines up, whatever the length of its reason's name.
column_ends() {
	awk 'NF == 3 { match($0, /^[^ ]+ +[^ ]+/); a = RLENGTH; match($0, /^[^ ]+ +[^ ]+ +[^ ]+$/)
		print a, RLENGTH }' | sort -u
}

case_stats_columns_aligned() {
	local ends
	cli_ok stats || return 1
	ends=$(column_ends <<<"$out")
	[[ $(wc -l <<<"$ends") == 1 && $out == *$'\nerrors_unverified '* ]] ||
		{ E2E_WHY="stats: rows end at columns $(tr '\n' '|' <<<"$ends")"; return 1; }
	cli_ok status || return 1
	ends=$(sed -n '/^REASON /,$p' <<<"$out" | column_ends)
	[[ $(wc -l <<<"$ends") == 1 ]] ||
		{ E2E_WHY="status: stats rows end at columns $(tr '\n' '|' <<<"$ends")"; return 1; }
}

case_set_limit_then_malformed_bans() {
	cli_ok set limit 3 && cli_ok status --json || return 1
	json_holds "$out" 'j["config"]["limit"] == 3 and j["config"]["defaults"] is False' || return 1
	send_synfin "$V4_NOISY" 4 || return 1
	if ! e2e_wait "$WAIT_TRIES" stat_reaches bans_created 1; then
		E2E_WHY="4 malformed packets from $V4_NOISY created no ban"
		return 1
	fi
	cli_ok bans --json &&
		json_holds "$out" '[b for b in j["bans"] if b["prefix"] == "'"$V4_NOISY"'" and b["reason"] == "errors" and b["count"] == 4 and b["classes"] == ["malformed"] and b["table"] == "bans"]' &&
		cli_ok stats --json &&
		json_holds "$out" 'j["stats"]["errors"]["packets"] == 4 and j["stats"]["drop_malformed"]["packets"] == 4 and j["stats"]["bans_created"]["packets"] == 1'
}

case_report() {
	cli_ok report "$V4_REPORTED" 2 || return 1
	e2e_expect "first report" "counted (count 2)" "$out" &&
		cli_ok report "$V4_REPORTED" 2 --json &&
		json_holds "$out" 'j == {"result": "banned", "count": 4}' &&
		cli_ok report "$V4_REPORTED" &&
		e2e_expect "report of a banned source" "already_banned (count 0)" "$out" &&
		cli_ok query "$V4_REPORTED" --json &&
		json_holds "$out" 'j["banned"] is True and j["ban_reason"] == "reported" and j["ban_classes"] == ["reported"] and j["classes"] == []'
}

# A trusted list entry written as xdpband would (list 7, 203.0.113.128/25); bans must not
# override it, and `lists` must show it next to the manual prefix bans.
case_lists_and_trusted() {
	e2e_run bpftool map update pinned "$PIN_DIR/xdpban_policy4" \
		key hex 19 00 00 00 cb 00 71 80 value hex 02 00 00 00 07 00 00 00 00 00 00 00 00 00 00 00 ||
		return 1
	cli_ok lists --json || return 1
	json_holds "$out" '{"list": 7, "manual": False, "default": False, "verdict": "trusted", "ipv4": 1, "ipv6": 0} in j["lists"]' &&
		json_holds "$out" '{"list": 4294967295, "manual": True, "default": False, "verdict": "deny", "ipv4": 1, "ipv6": 0} in j["lists"]' &&
		cli_ok query "$V4_TRUSTED" --json &&
		json_holds "$out" 'j["policy"] == "trusted" and j["policy_match"] == "'"$V4_TRUSTED_NET"'" and j["policy_list"] == 7'
}

# Without a daemon and without its config file (a plain `ip link` attachment): the list
# commands take the config's defaults, as the others do, and say nothing of a missing file.
# An explicit --config must exist.
case_no_config_file() {
	local missing=$tmp/no-such-dir/xdpban.conf
	cli_ok query "$V4_TRUSTED" || return 1
	e2e_expect "query's stderr" "" "$err" || return 1
	cli_ok lists show --json || return 1
	e2e_expect "lists show's stderr" "" "$err" &&
		json_holds "$out" '[l["layer"] for l in j["layers"]] == ["allow", "deny", "trusted", "never-ban", "observed-deny"]' || return 1
	run_cli --config "$missing" lists show
	e2e_expect "an explicit --config that is missing" \
		"1 xdpban: no daemon answers, and without one the lists need its config: cannot read config $missing: No such file or directory" \
		"$rc ${err%%$'\n'*}"
}

# A fake daemon that records the request and answers it: with a socket that answers, the CLI
# sends changes there and leaves the maps alone.
case_daemon_socket_is_used() {
	local before after
	e2e_defer rm -f "$FAKE_DAEMON"
	"$PY" - "$FAKE_DAEMON" "$tmp/request" >"$tmp/fake.log" 2>&1 9>&- <<-'EOF' &
		import socket, sys
		s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
		s.bind(sys.argv[1]); s.listen(1)
		replies = [b'{"ok":true,"prefix":"192.0.2.33","seconds":0}\n',
		           b'{"ok":false,"error":"the fake daemon says no"}\n',
		           b'{"ok":true,"xdpband":{"pid":7,"lists":[],"host_addresses":[],'
		           b'"fleet":{"node":"n1","redis":"192.0.2.99:6379","stream":"xdpban",'
		           b'"connected":false,"error":"READONLY\\nnot a master"}},'
		           b'"config":{"errors":[],"drop":[]},"stats":{}}\n']
		for reply in replies:
		    c, _ = s.accept()
		    line = c.makefile("rb").readline()
		    open(sys.argv[2], "ab").write(line)
		    c.sendall(reply); c.close()
	EOF
	e2e_defer e2e__kill "$!"
	e2e_wait "$WAIT_TRIES" test -S "$FAKE_DAEMON" || { E2E_WHY="the fake daemon never listened"; return 1; }
	before=$(dump_state | md5sum)
	"$tmp/xdpban" --socket "$FAKE_DAEMON" --pin-dir "$PIN_DIR" ban 192.0.2.33 >"$tmp/out" 2>"$tmp/err"
	rc=$?
	e2e_expect "exit status via the daemon" 0 "$rc" &&
		e2e_expect "output via the daemon" "banned 192.0.2.33 until unbanned" "$(<"$tmp/out")" &&
		e2e_expect "stderr via the daemon" "" "$(<"$tmp/err")" &&
		e2e_expect "request sent" '{"cmd":"ban","prefix":"192.0.2.33","seconds":0}' "$(<"$tmp/request")" || return 1
	"$tmp/xdpban" --socket "$FAKE_DAEMON" unban 192.0.2.33 >"$tmp/out" 2>"$tmp/err"
	rc=$?
	after=$(dump_state | md5sum)
	e2e_expect "exit status of a refused request" 1 "$rc" &&
		e2e_expect "error of a refused request" "xdpban: the fake daemon says no" "$(<"$tmp/err")" &&
		e2e_expect "maps untouched when a daemon answers" "$before" "$after" || return 1
	# the fleet's error, a newline in it, stays on the fleet: line
	"$tmp/xdpban" --socket "$FAKE_DAEMON" status >"$tmp/out" 2>"$tmp/err"
	e2e_expect "status's fleet line" \
		"fleet:        node n1, redis 192.0.2.99:6379, stream xdpban: not connected (READONLY\\x0anot a master)" \
		"$(grep '^fleet:' "$tmp/out")" &&
		e2e_expect "the line after the fleet line" "published," \
			"$(sed -n '/^fleet:/{n;p}' "$tmp/out" | awk '{ print $2 }')"
}

# Each row: expected exit status, then the arguments. Every one must print exactly one line on
# stderr, nothing on stdout, and leave every map as it was.
BAD_ARGS=(
	"2|frob"
	"2|status --frob"
	"2|status extra"
	"2|--frob status"
	"2|--pin-dir"
	"2|ban"
	"2|ban 192.0.2.300"
	"2|ban host.example"
	"2|ban 192.0.2.1/24"
	"2|ban 192.0.2.0/33"
	"2|ban 2001:db8::1/129"
	"2|ban 192.0.2.1 --for 0"
	"2|ban 192.0.2.1 --for 3651d"
	"2|ban 192.0.2.1 --for 522w"
	"2|ban 192.0.2.1 --for 1y"
	"2|ban 192.0.2.1 --for"
	"2|ban 192.0.2.1 192.0.2.2"
	"2|ban 192.0.2.1 --comment"
	"2|unban 192.0.2.1/24"
	"2|unban"
	"2|unban --all 192.0.2.1"
	"2|unban --reason manual 192.0.2.1"
	"2|unban --all --reason banned"
	"2|bans --reason banned"
	"2|bans --sort oldest"
	"2|bans --origin web/2"
	"2|bans 192.0.2.0/33"
	"2|query"
	"2|query 192.0.2.0/24"
	"2|query 192.0.2.1 --for 1h"
	"2|report 192.0.2.1 0"
	"2|report 192.0.2.1 1000000001"
	"2|report 192.0.2.1 abc"
	"2|set limit 1000000001"
	"2|set limit -1"
	"2|set limit"
	"2|set limit 3 4"
	"2|set window 0"
	"2|set ban-time 11y"
	"2|set window 1w2"
	"2|set ipv6-prefix 31"
	"2|set errors bogus"
	"2|set drop malformed,"
	"2|set frob 1"
	"2|set spoof on"
	"2|set learn 1/3"
	"2|help frob"
	"2|ban 0.0.0.0/0"
	"2|ban ::/0"
	"1|unban 192.0.2.99"
	"1|ban 192.0.2.42 --comment scanner"
	"1|ban $V4_TRUSTED"
	"1|ban 203.0.113.0/24"
	"1|ban 224.0.0.1"
	"1|--pin-dir /sys/fs/bpf/xbcli-none status"
)

# Which of the bad arguments change the maps: a dump around each (slow: a dump of every map
# takes seconds), so only once the dumps around all of them differ.
bad_args_that_change_maps() {
	local row args before after
	for row in "${BAD_ARGS[@]}"; do
		args=${row#*|}
		before=$(dump_state)
		# shellcheck disable=SC2086 # the arguments are words on purpose
		run_cli $args
		after=$(dump_state)
		[[ $after == "$before" ]] || echo "'$args' changed the maps"
	done
}

case_bad_arguments() {
	local row want args before after bad=() changed
	before=$(dump_state) || { E2E_WHY="cannot dump the maps"; return 1; }
	for row in "${BAD_ARGS[@]}"; do
		want=${row%%|*} args=${row#*|}
		# shellcheck disable=SC2086 # the arguments are words on purpose
		run_cli $args
		if ((rc != want)); then
			bad+=("'$args' exited $rc, not $want")
		elif [[ $(wc -l <"$tmp/err") -ne 1 || $err != "xdpban: "* ]]; then
			bad+=("'$args' printed not one error line: ${err:0:120}")
		elif [[ -n $out ]]; then
			bad+=("'$args' printed on stdout: ${out:0:80}")
		fi
	done
	after=$(dump_state) || { E2E_WHY="cannot dump the maps"; return 1; }
	if [[ $after != "$before" ]]; then
		mapfile -t changed < <(bad_args_that_change_maps)
		bad+=("${changed[@]:-the maps changed, but no single bad argument changes them}")
	fi
	((${#bad[@]} == 0)) && return 0
	E2E_WHY="${#bad[@]} of ${#BAD_ARGS[@]}: ${bad[*]:0:3}"
	return 1
}

# A negative number is a bad value, not an unknown option: the error names the value.
case_negative_values_named() {
	run_cli set limit -3
	e2e_expect "set limit -3" "2|xdpban: bad limit '-3': expected a whole number 0..1000000000" \
		"$rc|$err" || return 1
	run_cli report 192.0.2.1 -2
	e2e_expect "report COUNT -2" "2|xdpban: bad COUNT '-2': expected a whole number 1..1000000000" \
		"$rc|$err"
}

case_help() {
	cli_ok help ban || return 1
	[[ $out == *"--for DURATION"* && $out == *"ADDR[/LEN]"* ]] ||
		{ E2E_WHY="help ban lacks its options: ${out:0:120}"; return 1; }
	"$tmp/xdpban" --help >"$tmp/out" || { E2E_WHY="--help failed"; return 1; }
	grep -q '^  lists' "$tmp/out" || { E2E_WHY="--help lacks the command list"; return 1; }
}

# -V is --version, as xdpband's: one line, the same, exit 0.
case_version() {
	local long short
	long=$("$tmp/xdpban" --version 2>&1) || { E2E_WHY="--version failed: $long"; return 1; }
	short=$("$tmp/xdpban" -V 2>&1) || { E2E_WHY="-V failed: $short"; return 1; }
	[[ $long == "xdpban "* && $long != *$'\n'* ]] ||
		{ E2E_WHY="--version printed '$long', not one line 'xdpban VERSION'"; return 1; }
	e2e_expect "xdpban -V against --version" "$long" "$short"
}

# bans_of ARGS...: the prefixes `bans ARGS...` lists, in its order, on one line.
bans_of() { xdpban bans "$@" | awk 'NR > 1 { printf "%s%s", sep, $1; sep = " " }'; }

# Without a daemon the views and `unban --all` work on the maps directly: the reported and the
# error ban of the cases above stay until the last unban, each manual ban goes at the first.
case_view_and_unban_all_direct() {
	local manual rest
	cli_ok ban 192.0.2.41 && cli_ok ban 2001:db8:c7::/64 --for 1h || return 1
	e2e_expect "bans --origin local 203.0.113.0/24 --sort count" "$V4_NOISY $V4_REPORTED" \
		"$(bans_of --origin local 203.0.113.0/24 --sort count)" &&
		e2e_expect "bans 2001:db8:c7::/48 --reason manual" "2001:db8:c7::/64" \
		"$(bans_of 2001:db8:c7::/48 --reason manual)" || return 1
	manual=$(bans_of --reason manual | wc -w)
	rest=$(($(bans_of | wc -w) - manual))
	((manual >= 2 && rest >= 2)) || { E2E_WHY="$manual manual bans and $rest others"; return 1; }
	cli_ok unban --all --reason manual &&
		e2e_expect "unban --all --reason manual" "unbanned $manual sources" "$out" &&
		e2e_expect "bans --reason manual after it" "no bans" "$(xdpban bans --reason manual)" &&
		e2e_expect "the other bans after it" "$rest" "$(bans_of | wc -w)" &&
		cli_ok unban --all &&
		e2e_expect "unban --all" "unbanned $rest sources" "$out" &&
		e2e_expect "bans after unban --all" "no bans" "$(xdpban bans)"
}

e2e_require_root cli
if ! setup; then
	e2e_fail setup "$E2E_WHY"
	e2e_finish
fi
e2e_case status_json case_status_json
e2e_case ban_address case_ban_address
e2e_case ban_drops_on_the_wire case_ban_drops_on_the_wire
e2e_case ban_prefixes case_ban_prefixes
e2e_case bans_text_matches_json case_bans_text_matches_json
e2e_case bans_write_error case_bans_write_error
e2e_case query_json case_query_json
e2e_case query_text case_query_text
e2e_case bans_left_one_format case_bans_left_one_format
e2e_case unban case_unban
e2e_case unban_covering case_unban_covering
e2e_case durations_in_weeks case_durations_in_weeks
e2e_case status_text case_status_text
e2e_case stats_columns_aligned case_stats_columns_aligned
e2e_case set_limit_then_malformed_bans case_set_limit_then_malformed_bans
e2e_case report case_report
e2e_case lists_and_trusted case_lists_and_trusted
e2e_case no_config_file case_no_config_file
e2e_case daemon_socket_is_used case_daemon_socket_is_used
e2e_case bad_arguments case_bad_arguments
e2e_case negative_values_named case_negative_values_named
e2e_case help case_help
e2e_case version case_version
e2e_case view_and_unban_all_direct case_view_and_unban_all_direct
e2e_finish
