#!/usr/bin/env bash
# e2e_fleet.sh BUILD - fleet sharing of bans through a Redis stream (docs/fleet.md), with three
# xdpband nodes A, B and C, each in a namespace of its own protecting its own veth from one
# sender namespace, and Debian's redis-server in a fourth namespace, bound to 198.51.100.10
# behind a bridge, with an ACL user (the default user is off):
#   - a source banned for errors on A is dropped on B and C (its datagrams stop reaching a
#     socket there), and `bans`, `query` and `status` on B name A as its origin; the times
#     from A's ban to B's and C's enforcement are printed (no threshold);
#   - B stopped, A bans five and unbans one, B started again enforces the four and not the
#     fifth; with the stream trimmed while B was down, B gets them from the snapshot hash;
#   - Redis stopped: A still bans (by hand and for errors) and answers; when Redis is back,
#     B and C get A's bans;
#   - a trusted source on B stays trusted although A banned it;
#   - stream entries not signed with the fleet's key (XADD by redis-cli: junk, a permanent
#     /16, an unban in a node's name) change nothing and are counted by every node; signed
#     junk is refused and counted as junk;
#   - expired bans are pruned from the snapshot hash, active ones kept;
#   - entries queued at a clean stop are published (Redis paused, then back within the flush's
#     2 s), and those Redis never took are counted in the log;
#   - a rotated password is read again at reconnection, and at SIGHUP;
#   - a password file others can read, or a user without one, is refused by xdpband -t; so
#     are a key file others can read, a short key, and a fleet without a key file;
#   - 200,000 signed remote bans fill each node's remote share (1% of its ban table) and no
#     more, said once in the log; local bans, by hand and for errors, still go in;
#   - a restart with redis = off keeps the origins of remote bans in the state file;
#   - the Redis server's address is exempt on every node: a ban of it, by hand or signed in
#     the stream, is refused;
#   - a ban Redis refuses to add (a stream at the largest id) is counted once in status and
#     the metrics, with Redis's reason, logged at once, and kept queued; with that stream
#     deleted, every reader finds its place again and applies the next ban and the kept one;
#   - an entry of 64 MiB is refused by every node having read a few megabytes of it, and the
#     entry after it is applied within 100 ms of Redis handing it out;
#   - Redis restarted empty, one node's link down and another stopped, a third publishing
#     first: both keep the remote bans in force (the snapshot's epoch) and take the new one.
#
# The bed (namespaces, Redis, the nodes' configs) is tests/e2e/fleet_lib.sh, which bench/fleet.sh
# shares. Everything it makes (namespaces, daemons, Redis, pins, files) is removed on any exit.
# Needs root; skips without it.
# shellcheck disable=SC2317 # the case functions are called through e2e_case
set -uo pipefail
build=${1:-build}
cd "$(dirname "$0")/../.." || exit 1
source tests/e2e/e2e_lib.sh

CASES=(errors_ban_reaches_every_node restarted_node_catches_up trimmed_stream_from_snapshot
	redis_down_local_bans_go_on trusted_stays_trusted junk_entries_refused_everywhere
	fleet_metrics snapshot_pruned queue_flushed_at_stop unsent_logged_at_stop
	password_rotated_on_reconnect password_reread_on_sighup bad_fleet_config_refused
	redis_server_never_banned oversized_entry_refused redis_emptied_keeps_remote_bans
	publish_refusal_said deleted_stream_recovered remote_quota_kept origins_kept_with_fleet_off)
e2e_require_root "${CASES[0]}"
e2e_require_build "$build" redis-server redis-cli nsenter curl
/usr/bin/python3 -c 'import scapy' 2>/dev/null || e2e_fail_all "python3-scapy is not installed (make deps)"

readonly TAG=xbf$$ PORT=7000
TMP=$(mktemp -d /tmp/xbf-e2e.XXXXXX) || exit 1
# XBF_KEEP=1 keeps the logs and files in $TMP for a post-mortem (everything else goes).
[[ -n ${XBF_KEEP:-} ]] && echo "fleet: keeping $TMP" || e2e_defer rm -rf "$TMP"
chmod 711 "$TMP"
install -m 755 "$BUILD/xdpband" "$BUILD/xdpban" "$TMP/" || e2e_fail_all "cannot copy the binaries"
source tests/e2e/fleet_lib.sh # the namespaces, Redis and the nodes, shared with bench/fleet.sh

fleet_setup || e2e_fail_all "cannot create the test namespaces: ${E2E_WHY:-ip failed}"
fleet_redis_init || e2e_fail_all "cannot write the Redis config in $TMP"
redis_start || e2e_fail_all "redis-server did not start: $(tail -3 "$TMP/redis.log")"
printf '203.0.113.51\n' >"$TMP/trusted.list"

# The receiving socket of each node: every datagram that reaches it, its source on a line.
counter_start() {
	local n=$1
	e2e_bg "${NS[$n]}" "$TMP/$n.counter.err" "$PY" tests/tools/xb_udp_count.py "$PORT" \
		"$TMP/$n.udp" "$TMP/$n.ready" "${ADDR[$n]}"
	e2e_wait 100 test -e "$TMP/$n.ready"
}
arrived() { grep -cx "$2" "$TMP/$1.udp" 2>/dev/null || echo 0; }

# send NODE KIND SRC COUNT: raw frames from the sender namespace to NODE, from SRC (not held
# by anyone); KIND udp: valid datagrams to the counting socket, synfin: malformed TCP.
send() {
	local n=$1 mac
	mac=$(ip -n "${NS[$n]}" -j link show "x${TAG}${n}x" | json 'd[0]["address"]')
	ip netns exec "$TAG"s "$PY" - "x${TAG}${n}s" "$mac" "${ADDR[$n]}" "$2" "$3" "$4" "$PORT" \
		<<'EOF' 2>>"$TMP/scapy.err"
import sys
from scapy.all import Ether, IP, TCP, UDP, conf, sendp
conf.verb = 0
iface, mac, dst, kind, src, count, port = sys.argv[1:8]
l4 = TCP(sport=40000, dport=80, flags="SF") if kind == "synfin" else UDP(sport=40000, dport=int(port)) / b"fleet"
sendp([Ether(dst=mac) / IP(src=src, dst=dst) / l4] * int(count), iface=iface)
EOF
}

for n in "${NODES[@]}"; do
	extra=()
	# 1% of the default ban table: room for 655 remote bans, which remote_quota_kept fills.
	extra=("remote-share = 1%")
	[[ $n == b ]] && extra+=("[lists]" "trusted = $TMP/trusted.list")
	write_conf "$n" "${extra[@]}"
	node_start "$n" || e2e_fail_all "node $n did not start or connect: $(tail -3 "$TMP/$n.log")"
	counter_start "$n" || e2e_fail_all "the counting socket of node $n did not start"
done

# watch ADDR NODE...: starts timing ADDR's ban on the nodes; WATCH_OUT gets "SOCK MS" lines.
watch_start() {
	local addr=$1 n socks=()
	shift
	for n in "$@"; do socks+=("${SOCK[$n]}"); done
	rm -f "$TMP/watch.ready"
	"$PY" tests/tools/xb_fleet_watch.py "$addr" 30 "$TMP/watch.ready" "${socks[@]}" \
		>"$TMP/watch.out" 2>&1 &
	WATCH_PID=$!
	e2e_wait 100 test -e "$TMP/watch.ready"
}
minus() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a - b }'; }
watch_ms() { awk -v s="${SOCK[$1]}" '$1 == s { print $2 }' "$TMP/watch.out"; }

# ---- the cases ----

case_errors_ban() {
	local n src=203.0.113.7 a b c
	for n in b c; do
		send "$n" udp "$src" 5 || { E2E_WHY="cannot send"; return 1; }
		e2e_wait 100 eval '[[ $(arrived '"$n $src"') == 5 ]]' ||
			{ E2E_WHY="before the ban, $(arrived "$n" "$src") of 5 datagrams reached node $n"; return 1; }
	done
	watch_start "$src" a b c || { E2E_WHY="the watcher did not start"; return 1; }
	send a synfin "$src" 4
	wait "$WATCH_PID" || { E2E_WHY="not banned everywhere: $(xargs <"$TMP/watch.out")"; return 1; }
	a=$(watch_ms a) b=$(watch_ms b) c=$(watch_ms c)
	echo "fleet: errors ban of $src: enforced on A after $a ms, B after $b ms (+$(minus "$b" "$a") ms), C after $c ms (+$(minus "$c" "$a") ms)"
	for n in b c; do
		send "$n" udp "$src" 5
	done
	sleep 1 # the counting sockets have had their chance
	for n in b c; do
		e2e_expect "datagrams from $src on node $n after the ban" 5 "$(arrived "$n" "$src")" ||
			return 1
		e2e_expect "query's ban_origin on node $n" node-a \
			"$(cli "$n" query "$src" --json | json 'd.get("ban_origin")')" || return 1
	done
	cli b bans | grep -qE "^$src +manual .* node-a$" ||
		{ E2E_WHY="bans on B: $(cli b bans | grep "$src")"; return 1; }
	cli b query "$src" | grep -q "^origin: *fleet node node-a$" ||
		{ E2E_WHY="query on B: $(cli b query "$src" | xargs)"; return 1; }
	(($(fleet a skipped_own) >= 1)) || { E2E_WHY="A did not skip its own entry"; return 1; }
	manual_timings
}

# Three manual bans on A, each timed to B and C.
manual_timings() {
	local i src
	for i in 1 2 3; do
		src=203.0.113.1$i
		watch_start "$src" a b c || return 1
		cli a ban "$src" --for 1h >/dev/null
		wait "$WATCH_PID" || { E2E_WHY="manual ban $src: $(xargs <"$TMP/watch.out")"; return 1; }
		echo "fleet: manual ban $i on A: enforced on B $(minus "$(watch_ms b)" "$(watch_ms a)") ms, C $(minus "$(watch_ms c)" "$(watch_ms a)") ms after A"
	done
}

case_catch_up() {
	local i
	node_stop b || { E2E_WHY="node B did not stop cleanly"; return 1; }
	for i in 1 2 3 4 5; do
		e2e_run cli a ban "203.0.113.2$i" --for 1h || return 1
	done
	e2e_run cli a unban 203.0.113.25 || return 1
	e2e_wait 100 eval '[[ $(fleet a queued) == 0 ]]' || { E2E_WHY="A did not publish"; return 1; }
	node_start b || { E2E_WHY="node B did not restart: $(tail -2 "$TMP/b.log")"; return 1; }
	e2e_wait 100 caught_up b || { E2E_WHY="B at $(fleet b last_id), the stream at $(stream_last_id)"; return 1; }
	for i in 1 2 3 4; do
		banned b "203.0.113.2$i" || { E2E_WHY="203.0.113.2$i not banned on B"; return 1; }
	done
	not_banned b 203.0.113.25 || { E2E_WHY="203.0.113.25 (unbanned on A) is banned on B"; return 1; }
	e2e_expect "B's rebuilds" 0 "$(fleet b rebuilds)"
}

case_trimmed() {
	local i
	node_stop b || { E2E_WHY="node B did not stop cleanly"; return 1; }
	for i in 1 2 3; do
		e2e_run cli a ban "203.0.113.3$i" --for 1h || return 1
	done
	e2e_run cli a unban 203.0.113.24 || return 1
	e2e_wait 100 eval '[[ $(fleet a queued) == 0 ]]' || { E2E_WHY="A did not publish"; return 1; }
	rcli XTRIM "$STREAM" MAXLEN 1 >/dev/null
	e2e_expect "stream length after XTRIM" 1 "$(rcli XLEN "$STREAM")" || return 1
	node_start b || { E2E_WHY="node B did not restart: $(tail -2 "$TMP/b.log")"; return 1; }
	e2e_wait 100 caught_up b || { E2E_WHY="B at $(fleet b last_id), the stream at $(stream_last_id)"; return 1; }
	for i in 1 2 3; do
		banned b "203.0.113.3$i" || { E2E_WHY="203.0.113.3$i not banned on B"; return 1; }
	done
	not_banned b 203.0.113.24 || { E2E_WHY="203.0.113.24 (unbanned while B was down) is banned on B"; return 1; }
	e2e_expect "B's rebuilds" 1 "$(fleet b rebuilds)" &&
		grep -q "the stream was trimmed past the last entry applied" "$TMP/b.log" ||
		{ E2E_WHY="${E2E_WHY:-no rebuild line in the log of B}"; return 1; }
}

case_redis_down() {
	local n
	redis_stop || { E2E_WHY="redis-server did not stop"; return 1; }
	e2e_wait 100 eval '[[ $(fleet a connected) == False ]]' || { E2E_WHY="A still says connected"; return 1; }
	e2e_run cli a ban 203.0.113.41 --for 1h || return 1
	send a synfin 203.0.113.42 4
	e2e_wait 100 banned a 203.0.113.42 || { E2E_WHY="A did not ban 203.0.113.42 for errors"; return 1; }
	answers a || { E2E_WHY="A does not answer status"; return 1; }
	e2e_expect "A's queued entries" 2 "$(fleet a queued)" || return 1
	not_banned c 203.0.113.41 || { E2E_WHY="C has 203.0.113.41 without Redis?"; return 1; }
	redis_start || { E2E_WHY="redis-server did not start again"; return 1; }
	for n in b c; do
		e2e_wait 200 banned "$n" 203.0.113.41 && e2e_wait 100 banned "$n" 203.0.113.42 ||
			{ E2E_WHY="node $n did not get A's bans after Redis came back"; return 1; }
	done
	e2e_expect "A's queued entries after Redis came back" 0 "$(fleet a queued)"
}

case_trusted() {
	local before
	before=$(fleet b refused_policy)
	e2e_run cli a ban 203.0.113.51 --for 1h || return 1
	e2e_wait 100 banned c 203.0.113.51 || { E2E_WHY="C did not get the ban"; return 1; }
	e2e_wait 100 eval '[[ $(fleet b refused_policy) == $((before + 1)) ]]' ||
		{ E2E_WHY="B's refused_policy is $(fleet b refused_policy), was $before"; return 1; }
	not_banned b 203.0.113.51 || { E2E_WHY="trusted 203.0.113.51 is banned on B"; return 1; }
	grep -q "refused: from node-a: refusing to ban 203.0.113.51: it is trusted" "$TMP/b.log" ||
		{ E2E_WHY="no refusal line in B's log"; return 1; }
}

case_junk() {
	local n unsigned=() malformed=() expired=() i=0
	e2e_run cli a ban 203.0.113.62 --for 1h || return 1
	for n in b c; do
		e2e_wait 100 banned "$n" 203.0.113.62 || { E2E_WHY="203.0.113.62 did not reach $n"; return 1; }
	done
	for n in "${NODES[@]}"; do
		unsigned+=("$(fleet "$n" refused_unsigned)") malformed+=("$(fleet "$n" refused_malformed)")
		expired+=("$(fleet "$n" refused_expired)")
	done
	# Whoever can write the stream but holds no key: junk, a permanent /16 for every node, and
	# an unban in node-a's name of the ban node-a holds.
	rcli XADD "$STREAM" '*' foo bar >/dev/null &&
		rcli XADD "$STREAM" '*' v 1 origin evil kind ban key 198.51.0.0/16 reason manual \
			classes none count 0 expires 0 >/dev/null &&
		rcli XADD "$STREAM" '*' v 1 origin node-a kind unban key 203.0.113.62 >/dev/null ||
		{ E2E_WHY="redis-cli XADD failed"; return 1; }
	# Signed with the key, but wrong: a broken or newer writer's.
	signed_xadd v 2 origin node-x kind ban key 203.0.113.63 >/dev/null &&
		signed_xadd v 1 origin node-x kind ban key 203.0.113.61 reason manual classes none \
			count 0 expires 1 >/dev/null || { E2E_WHY="signed XADD failed"; return 1; }
	for n in "${NODES[@]}"; do
		e2e_wait 100 eval '[[ $(fleet '"$n"' refused_expired) == $((expired[i] + 1)) ]]' ||
			{ E2E_WHY="node $n: refused_expired $(fleet "$n" refused_expired), was ${expired[i]}"; return 1; }
		e2e_expect "node $n's refused_unsigned" "$((unsigned[i] + 3))" "$(fleet "$n" refused_unsigned)" &&
			e2e_expect "node $n's refused_malformed" "$((malformed[i] + 1))" \
				"$(fleet "$n" refused_malformed)" || return 1
		not_banned "$n" 203.0.113.61 || { E2E_WHY="node $n applied an expired ban"; return 1; }
		not_banned "$n" 198.51.0.9 || { E2E_WHY="node $n applied an unsigned /16"; return 1; }
		banned "$n" 203.0.113.62 || { E2E_WHY="node $n applied an unsigned unban"; return 1; }
		grep -q 'refused: no field "mac": not signed' "$TMP/$n.log" &&
			grep -q 'refused: field "v" = "2": not version 1' "$TMP/$n.log" ||
			{ E2E_WHY="no refusal lines in node $n's log"; return 1; }
		i=$((i + 1))
	done
}

metric() { ip netns exec "${NS[$1]}" curl -sf http://127.0.0.1:9433/metrics | awk -v m="$2" '$1 == m { print $2 }'; }

case_metrics() {
	e2e_expect "xdpban_fleet_connected on B" 1 "$(metric b xdpban_fleet_connected)" &&
		e2e_expect "applied on B" "$(fleet b applied)" "$(metric b xdpban_fleet_applied_total)" &&
		e2e_expect "malformed on C" "$(fleet c refused_malformed)" \
			"$(metric c 'xdpban_fleet_refused_total{why="malformed"}')" &&
		e2e_expect "unsigned on C" "$(fleet c refused_unsigned)" \
			"$(metric c 'xdpban_fleet_refused_total{why="unsigned"}')" &&
		e2e_expect "published by A" "$(fleet a published)" "$(metric a xdpban_fleet_published_total)" &&
		e2e_expect "queued on A" 0 "$(metric a xdpban_fleet_queued)" || return 1
	cli b status | grep -q "^fleet: *node node-b, redis $REDIS_ADDR:6379, stream $STREAM: connected$" ||
		{ E2E_WHY="status on B: $(cli b status | grep -A2 '^fleet')"; return 1; }
}

case_bad_config() {
	local out
	cp "$TMP/redis.pass" "$TMP/open.pass" && chmod 644 "$TMP/open.pass"
	sed "s|^password-file = .*|password-file = $TMP/open.pass|" "$TMP/a.conf" >"$TMP/bad.conf"
	out=$(nsenter --net="/run/netns/${NS[a]}" "$TMP/xdpband" -t -c "$TMP/bad.conf" 2>&1)
	[[ $? == 1 && $out != *$'\n'* && $out == *"[fleet] password-file = '$TMP/open.pass': mode 0644"* ]] ||
		{ E2E_WHY="open password file: '$out'"; return 1; }
	grep -v '^password-file' "$TMP/a.conf" >"$TMP/bad.conf"
	out=$(nsenter --net="/run/netns/${NS[a]}" "$TMP/xdpband" -t -c "$TMP/bad.conf" 2>&1)
	[[ $? == 1 && $out == *"[fleet] user = '$REDIS_USER' needs a password-file" ]] ||
		{ E2E_WHY="user without a password file: '$out'"; return 1; }
	cp "$TMP/fleet.key" "$TMP/open.key" && chmod 644 "$TMP/open.key"
	sed "s|^key-file = .*|key-file = $TMP/open.key|" "$TMP/a.conf" >"$TMP/bad.conf"
	out=$(nsenter --net="/run/netns/${NS[a]}" "$TMP/xdpband" -t -c "$TMP/bad.conf" 2>&1)
	[[ $? == 1 && $out != *$'\n'* && $out == *"[fleet] key-file = '$TMP/open.key': mode 0644"* ]] ||
		{ E2E_WHY="open key file: '$out'"; return 1; }
	printf 'short\n' >"$TMP/short.key" && chmod 600 "$TMP/short.key"
	sed "s|^key-file = .*|key-file = $TMP/short.key|" "$TMP/a.conf" >"$TMP/bad.conf"
	out=$(nsenter --net="/run/netns/${NS[a]}" "$TMP/xdpband" -t -c "$TMP/bad.conf" 2>&1)
	[[ $? == 1 && $out == *"[fleet] key-file = '$TMP/short.key': 6 bytes: a key is 32 to 255 bytes"* ]] ||
		{ E2E_WHY="short key file: '$out'"; return 1; }
	grep -v '^key-file' "$TMP/a.conf" >"$TMP/bad.conf"
	out=$(nsenter --net="/run/netns/${NS[a]}" "$TMP/xdpband" -t -c "$TMP/bad.conf" 2>&1)
	[[ $? == 1 && $out == *"needs a key-file: every entry is signed with it"* ]] ||
		{ E2E_WHY="no key file: '$out'"; return 1; }
}

case_prune() {
	local now
	now=$(date +%s)
	rcli HSET "$SNAPSHOT" 203.0.113.71 "$((now - 5)) node-x" 203.0.113.72 "$((now + 3600)) node-x" \
		203.0.113.73 "0 node-x" >/dev/null || { E2E_WHY="HSET failed"; return 1; }
	e2e_wait 100 eval '[[ $(rcli HEXISTS "$SNAPSHOT" 203.0.113.71) == 0 ]]' ||
		{ E2E_WHY="the expired field is still in the snapshot"; return 1; }
	e2e_expect "the active field" 1 "$(rcli HEXISTS "$SNAPSHOT" 203.0.113.72)" &&
		e2e_expect "the permanent field" 1 "$(rcli HEXISTS "$SNAPSHOT" 203.0.113.73)" || return 1
	(($(fleet a pruned) + $(fleet b pruned) + $(fleet c pruned) >= 1)) ||
		{ E2E_WHY="no node counted the prune"; return 1; }
}

in_stream() { rcli XRANGE "$STREAM" - + | grep -cx "$1"; }

# Redis paused: A's publisher waits for the reply to its first entry, the next two are
# queued; A is stopped, Redis comes back within the flush's time: all three are published.
case_flush() {
	local src
	kill -STOP "$REDIS_PID" || { E2E_WHY="cannot pause redis-server"; return 1; }
	e2e_run cli a ban 203.0.113.81 --for 1h || { kill -CONT "$REDIS_PID"; return 1; }
	sleep 0.3
	e2e_run cli a ban 203.0.113.82 --for 1h && e2e_run cli a ban 203.0.113.83 --for 1h ||
		{ kill -CONT "$REDIS_PID"; return 1; }
	kill -TERM "${PID[a]}"
	sleep 0.5
	kill -CONT "$REDIS_PID"
	wait "${PID[a]}"
	for src in 203.0.113.81 203.0.113.82 203.0.113.83; do
		e2e_expect "$src in the stream" 1 "$(in_stream "$src")" || return 1
	done
	grep -q "fleet: the 3 entries queued at stop published" "$TMP/a.log" ||
		{ E2E_WHY="no flush line in A's log: $(grep 'at stop' "$TMP/a.log" | tail -1)"; return 1; }
	node_start a || { E2E_WHY="node A did not start again"; return 1; }
}

# Redis paused past the flush's time: A stops anyway and says what Redis did not confirm.
case_unsent() {
	kill -STOP "$REDIS_PID" || { E2E_WHY="cannot pause redis-server"; return 1; }
	e2e_run cli a ban 203.0.113.84 --for 1h && e2e_run cli a ban 203.0.113.85 --for 1h ||
		{ kill -CONT "$REDIS_PID"; return 1; }
	kill -TERM "${PID[a]}"
	e2e_wait 100 eval '! kill -0 '"${PID[a]}"' 2>/dev/null'
	local stopped=$?
	kill -CONT "$REDIS_PID"
	wait "${PID[a]}"
	((stopped == 0)) || { E2E_WHY="node A did not stop within 10 s with Redis paused"; return 1; }
	grep -q "fleet: 2 of the 2 entries queued at stop not confirmed by redis" "$TMP/a.log" ||
		{ E2E_WHY="no unsent line in A's log: $(grep 'at stop' "$TMP/a.log" | tail -1)"; return 1; }
	node_start a || { E2E_WHY="node A did not start again"; return 1; }
}

# rotate NEW: the password file and the fleet user's password in Redis both become NEW.
rotate() {
	printf '%s\n' "$1" >"$TMP/redis.pass.new" && chmod 600 "$TMP/redis.pass.new" &&
		mv -f "$TMP/redis.pass.new" "$TMP/redis.pass" &&
		[[ $(radmin ACL SETUSER "$REDIS_USER" resetpass ">$1") == OK ]]
}

case_rotation() {
	local n
	rotate "rotated-1-$TAG" || { E2E_WHY="cannot change the password"; return 1; }
	radmin CLIENT KILL USER "$REDIS_USER" >/dev/null
	e2e_run cli a ban 203.0.113.91 --for 1h && e2e_run cli c ban 203.0.113.92 --for 1h || return 1
	for n in b c; do
		e2e_wait 100 banned "$n" 203.0.113.91 ||
			{ E2E_WHY="node $n did not get A's ban after the rotation: $(fleet "$n" error)"; return 1; }
	done
	e2e_wait 100 banned a 203.0.113.92 || { E2E_WHY="node A did not get C's ban: $(fleet a error)"; return 1; }
	for n in "${NODES[@]}"; do
		e2e_wait 100 eval '[[ $(fleet '"$n"' connected) == True ]]' ||
			{ E2E_WHY="node $n not connected after the rotation"; return 1; }
	done
}

# The ids of B's connections to Redis (it is 198.51.100.21 on the bridge).
b_clients() { radmin CLIENT LIST | grep " user=$REDIS_USER " | grep ' addr=198.51.100.21:' | sed 's/^id=\([0-9]*\) .*/\1/' | sort; }
all_new() { # OLD_IDS: B has two connections again, none of them among OLD_IDS
	local now
	now=$(b_clients)
	[[ $(wc -l <<<"$now") == 2 && -z $(comm -12 <(echo "$1") <(echo "$now")) ]]
}

case_sighup() {
	local before
	# After the rotation before, "connected" says B's reader is; its publisher may be a
	# moment behind.
	e2e_wait 100 eval '[[ $(b_clients | wc -l) == 2 ]]'
	before=$(b_clients)
	[[ $(wc -l <<<"$before") == 2 ]] || { E2E_WHY="B has connections '$before', not two"; return 1; }
	rotate "rotated-2-$TAG" || { E2E_WHY="cannot change the password"; return 1; }
	kill -HUP "${PID[b]}"
	e2e_wait 100 grep -q "reload: fleet: the password in $TMP/redis.pass changed" "$TMP/b.log" ||
		{ E2E_WHY="no re-read line in B's log"; return 1; }
	e2e_wait 100 all_new "$before" || { E2E_WHY="B's connections before '$before', now '$(b_clients)'"; return 1; }
	e2e_wait 100 eval '[[ $(fleet b connected) == True ]]' || { E2E_WHY="B not connected"; return 1; }
	e2e_run cli a ban 203.0.113.93 --for 1h || return 1
	e2e_wait 100 banned b 203.0.113.93 || { E2E_WHY="B did not get A's ban"; return 1; }
}

# 200,000 signed remote bans (a node gone mad, or a key thief): each node takes them up to its
# remote-share and no further, says so once, and still bans for itself, by hand and for errors.
case_quota() {
	local n max before=() refused=() i=0
	for n in "${NODES[@]}"; do
		before+=("$(fleet "$n" remote_bans)") refused+=("$(fleet "$n" refused_quota)")
	done
	max=$(fleet b remote_bans_max)
	e2e_expect "B's remote_bans_max" 655 "$max" || return 1
	signed_flood 200000 || { E2E_WHY="the flood's XADDs failed"; return 1; }
	for n in "${NODES[@]}"; do
		e2e_wait 600 eval '[[ $(fleet '"$n"' remote_bans) == '"$max"' ]]' ||
			{ E2E_WHY="node $n: remote_bans $(fleet "$n" remote_bans) of $max"; return 1; }
		e2e_wait 600 eval '[[ $(fleet '"$n"' refused_quota) == $((refused[i] + before[i] + 200000 - max)) ]]' ||
			{ E2E_WHY="node $n: refused_quota $(fleet "$n" refused_quota), was ${refused[i]}"; return 1; }
		[[ $(grep -c "remote bans\? refused: remote bans hold their share of the ban table ($max, remote-share 1%)" "$TMP/$n.log") == 1 ]] ||
			{ E2E_WHY="node $n did not say it once"; return 1; }
		i=$((i + 1))
	done
	e2e_run cli b ban 203.0.113.96 --for 1h || return 1
	send b synfin 203.0.113.97 4
	e2e_wait 100 banned b 203.0.113.97 || { E2E_WHY="B did not ban for errors beside the fleet's bans"; return 1; }
}

# A restart with redis = off keeps the origins of the remote bans in the state file: back on
# the fleet, they are remote again, not local and permanent.
case_origins_off() {
	local before after
	node_stop b || { E2E_WHY="B did not stop"; return 1; }
	before=$(grep -c '^origin ' "$TMP/b.state")
	((before > 0)) || { E2E_WHY="no origin in B's state file to keep"; return 1; }
	sed -i 's/^redis = .*/redis = off/' "$TMP/b.conf"
	nsenter --net="/run/netns/${NS[b]}" "$TMP/xdpband" -c "$TMP/b.conf" >>"$TMP/b.log" 2>&1 &
	PID[b]=$!
	e2e_defer e2e__kill "${PID[b]}"
	e2e_wait 200 answers b || { E2E_WHY="B did not start with redis = off"; return 1; }
	node_stop b || { E2E_WHY="B did not stop"; return 1; }
	after=$(grep -c '^origin ' "$TMP/b.state")
	sed -i "s/^redis = .*/redis = $REDIS_ADDR:6379/" "$TMP/b.conf"
	node_start b || { E2E_WHY="B did not start on the fleet again"; return 1; }
	e2e_expect "origins in B's state file after a run with redis = off" "$before" "$after" &&
		e2e_expect "B's remote bans back on the fleet" "$before" "$(fleet b remote_bans)"
}

# The Redis server's address is exempt on every node: no local ban, no signed fleet entry.
case_redis_exempt() {
	local n out policy=() i=0
	for n in "${NODES[@]}"; do policy+=("$(fleet "$n" refused_policy)"); done
	out=$(cli a ban "$REDIS_ADDR" 2>&1)
	e2e_expect "a ban of Redis on A" \
		"xdpban: refusing to ban $REDIS_ADDR: it is never banned (the fleet's Redis server $REDIS_ADDR)" \
		"$out" || return 1
	signed_xadd v 1 origin node-x kind ban key "$REDIS_ADDR" reason manual classes none count 0 \
		expires 0 >/dev/null || { E2E_WHY="signed XADD failed"; return 1; }
	for n in "${NODES[@]}"; do
		e2e_wait 100 eval '[[ $(fleet '"$n"' refused_policy) == $((policy[i] + 1)) ]]' ||
			{ E2E_WHY="node $n: refused_policy $(fleet "$n" refused_policy), was ${policy[i]}"; return 1; }
		e2e_expect "node $n's query of Redis" "True fleet False" \
			"$(cli "$n" query "$REDIS_ADDR" --json |
				json 'str(d["exempt"]) + " " + d["exempt_why"] + " " + str(d["banned"])')" ||
			return 1
		i=$((i + 1))
	done
}

# An entry of 64 MiB from whoever can write the stream: every node refuses it having read a
# few megabytes of it at most (its peak memory grows by less than 16 MiB) and applies the
# signed ban added right after it; then the next entry is applied within 100 ms of Redis
# handing it out. (Right after the big one, Redis itself may still be busy copying it into
# each reader's reply: that time is printed, not held to the bound.)
peak_kb() { awk '/^VmHWM:/ { print $2 }' "/proc/${PID[$1]}/status"; }
# late_ms NODE ID ANSWERED: from Redis's answer to the XADD of ID (its AOF written and synced)
# to the node's handling of it, by the node's lag from the entry's id.
late_ms() { echo $((${2%-*} + $(fleet "$1" lag_ms) - $3)); }
case_oversized() {
	local n over=() peak=() i=0 grown id answered late
	for n in "${NODES[@]}"; do over+=("$(fleet "$n" refused_oversize)") peak+=("$(peak_kb "$n")"); done
	head -c 67108864 /dev/zero | tr '\0' x >"$TMP/big" || { E2E_WHY="cannot write 64 MiB"; return 1; }
	rcli -x XADD "$STREAM" '*' junk <"$TMP/big" >/dev/null || { E2E_WHY="XADD of 64 MiB failed"; return 1; }
	rm -f "$TMP/big"
	id=$(signed_xadd v 1 origin node-x kind ban key 203.0.113.120 reason manual classes none \
		count 0 expires 0) || { E2E_WHY="signed XADD failed"; return 1; }
	answered=$(($(date +%s%N) / 1000000))
	for n in "${NODES[@]}"; do
		e2e_wait 200 banned "$n" 203.0.113.120 ||
			{ E2E_WHY="node $n did not apply the ban after the 64 MiB entry"; return 1; }
		echo "fleet: node $n applied the entry right after the 64 MiB one $(late_ms "$n" "$id" "$answered") ms after Redis answered its XADD"
		e2e_expect "node $n's refused_oversize" "$((over[i] + 1))" "$(fleet "$n" refused_oversize)" ||
			return 1
		grown=$(($(peak_kb "$n") - peak[i]))
		((grown < 16384)) || { E2E_WHY="node $n's peak memory grew by $grown kB"; return 1; }
		i=$((i + 1))
	done
	id=$(signed_xadd v 1 origin node-x kind ban key 203.0.113.121 reason manual classes none \
		count 0 expires 0) || { E2E_WHY="signed XADD failed"; return 1; }
	answered=$(($(date +%s%N) / 1000000))
	for n in "${NODES[@]}"; do
		e2e_wait 100 banned "$n" 203.0.113.121 || { E2E_WHY="node $n did not apply the next ban"; return 1; }
		late=$(late_ms "$n" "$id" "$answered")
		echo "fleet: node $n applied the next entry $late ms after Redis answered its XADD"
		((late <= 100)) || { E2E_WHY="node $n applied the next entry $late ms after Redis answered its XADD"; return 1; }
	done
	grep -q "refused: over [0-9]* bytes of fields and values: over the 4096 allowed" "$TMP/b.log" ||
		{ E2E_WHY="no refusal line in B's log"; return 1; }
}

# Redis restarted empty while B could not reach it and C was stopped, and A published before
# both came back: the new stream looks like one trimmed past them, but its epoch (C's kept in
# its state file) says it is new, so both keep the remote bans in force and take the new ones.
case_redis_emptied() {
	local n link=x${TAG}br
	e2e_run cli a ban 203.0.113.110 --for 1h || return 1
	for n in b c; do
		e2e_wait 100 banned "$n" 203.0.113.110 || { E2E_WHY="203.0.113.110 did not reach $n"; return 1; }
	done
	node_stop c || { E2E_WHY="C did not stop"; return 1; }
	grep -Eq '^fleet last=[0-9]+-[0-9]+ epoch=[0-9a-f]{32}$' "$TMP/c.state" ||
		{ E2E_WHY="no epoch in C's state file: $(grep '^fleet' "$TMP/c.state")"; return 1; }
	ip -n "${NS[b]}" link set "$link" down || { E2E_WHY="cannot take B's link down"; return 1; }
	radmin ACL SAVE >/dev/null || { E2E_WHY="ACL SAVE failed"; return 1; } # the rotated password
	redis_stop || { E2E_WHY="redis-server did not stop"; return 1; }
	rm -rf "$TMP/redis/appendonlydir" "$TMP/redis/appendonly.aof"
	redis_start || { E2E_WHY="redis-server did not start again: $(tail -1 "$TMP/redis.log")"; return 1; }
	e2e_run cli a ban 203.0.113.111 --for 1h || return 1
	e2e_wait 200 eval '[[ $(rcli XLEN "$STREAM") -ge 1 ]]' || { E2E_WHY="A did not publish after the restart"; return 1; }
	ip -n "${NS[b]}" link set "$link" up || { E2E_WHY="cannot bring B's link up"; return 1; }
	node_start c || { E2E_WHY="C did not start again"; return 1; }
	for n in b c; do
		e2e_wait 300 banned "$n" 203.0.113.111 || { E2E_WHY="node $n did not get A's ban after the restart"; return 1; }
		banned "$n" 203.0.113.110 || { E2E_WHY="node $n lifted the remote ban 203.0.113.110"; return 1; }
		grep -q "Redis lost its data (the snapshot's epoch changed): rebuilding from snapshot" "$TMP/$n.log" ||
			{ E2E_WHY="no rebuild line in $n's log"; return 1; }
	done
}

# An entry with the largest id makes Redis refuse every later XADD (deleted_stream_recovered,
# next, repairs the stream). A's refused ban is counted once, said in status and in the log at
# once, and stays queued: sent again with backoff, it is refused again and not counted again.
case_publish_refused() {
	local failed
	failed=$(fleet a publish_failed)
	rcli XADD "$STREAM" 18446744073709551615-18446744073709551615 foo bar >/dev/null ||
		{ E2E_WHY="XADD of the largest id failed"; return 1; }
	e2e_run cli a ban 203.0.113.94 --for 1h || return 1
	e2e_wait 100 eval '[[ $(fleet a publish_failed) == $((failed + 1)) ]]' ||
		{ E2E_WHY="A's publish_failed $(fleet a publish_failed), was $failed"; return 1; }
	[[ $(fleet a publish_error) == *"exhausted the last possible ID"* ]] ||
		{ E2E_WHY="A's publish_error: '$(fleet a publish_error)'"; return 1; }
	e2e_expect "A's metric" "$(fleet a publish_failed)" "$(metric a xdpban_fleet_publish_failed_total)" &&
		grep -q "fleet: publisher: Redis refused this node's next entry (1 time since the last line); it and the 0 after it stay queued and are sent again: ERR" "$TMP/a.log" ||
		{ E2E_WHY="${E2E_WHY:-no log line on A}"; return 1; }
	sleep 1 # a few more tries
	e2e_expect "A's queued entries" 1 "$(fleet a queued)" &&
		e2e_expect "A's publish_failed after the tries" "$((failed + 1))" "$(fleet a publish_failed)"
}

# After the largest id, the stream deleted (what an operator does to repair it): every reader,
# left at that id, finds its place again and applies the next ban, and A's refused ban, sent
# again, reaches every node.
case_stream_deleted() {
	local n
	radmin DEL "$STREAM" >/dev/null || { E2E_WHY="DEL failed"; return 1; }
	e2e_run cli a ban 203.0.113.98 --for 1h || return 1
	for n in b c; do
		e2e_wait 200 banned "$n" 203.0.113.98 ||
			{ E2E_WHY="node $n did not get the ban after the stream was deleted (last_id $(fleet "$n" last_id))"; return 1; }
		e2e_wait 100 banned "$n" 203.0.113.94 ||
			{ E2E_WHY="node $n did not get the ban Redis had refused"; return 1; }
	done
	e2e_expect "A's queued entries" 0 "$(fleet a queued)" || return 1
	grep -q "the stream is older than the last entry applied (Redis lost it): rebuilding from snapshot" "$TMP/b.log" ||
		{ E2E_WHY="no rebuild line in B's log"; return 1; }
}

# After each case, with XBF_KEEP: the stream and the snapshot, for a post-mortem.
dump() { [[ -z ${XBF_KEEP:-} ]] || { rcli XRANGE "$STREAM" - +; rcli HGETALL "$SNAPSHOT"; } >"$TMP/redis.$1" 2>&1; }
e2e_case errors_ban_reaches_every_node case_errors_ban
dump errors_ban_reaches_every_node
e2e_case restarted_node_catches_up case_catch_up
dump restarted_node_catches_up
e2e_case trimmed_stream_from_snapshot case_trimmed
dump trimmed_stream_from_snapshot
e2e_case redis_down_local_bans_go_on case_redis_down
dump redis_down_local_bans_go_on
e2e_case trusted_stays_trusted case_trusted
dump trusted_stays_trusted
e2e_case junk_entries_refused_everywhere case_junk
dump junk_entries_refused_everywhere
e2e_case fleet_metrics case_metrics
dump fleet_metrics
e2e_case snapshot_pruned case_prune
dump snapshot_pruned
e2e_case queue_flushed_at_stop case_flush
dump queue_flushed_at_stop
e2e_case unsent_logged_at_stop case_unsent
dump unsent_logged_at_stop
e2e_case password_rotated_on_reconnect case_rotation
dump password_rotated_on_reconnect
e2e_case password_reread_on_sighup case_sighup
dump password_reread_on_sighup
e2e_case bad_fleet_config_refused case_bad_config
dump bad_fleet_config_refused
e2e_case redis_server_never_banned case_redis_exempt
dump redis_server_never_banned
e2e_case oversized_entry_refused case_oversized
dump oversized_entry_refused
e2e_case redis_emptied_keeps_remote_bans case_redis_emptied
dump redis_emptied_keeps_remote_bans
e2e_case publish_refusal_said case_publish_refused
dump publish_refusal_said
e2e_case deleted_stream_recovered case_stream_deleted
dump deleted_stream_recovered
e2e_case remote_quota_kept case_quota
dump remote_quota_kept
e2e_case origins_kept_with_fleet_off case_origins_off
dump origins_kept_with_fleet_off
e2e_finish
