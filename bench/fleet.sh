#!/usr/bin/env bash
# fleet.sh - fleet sharing of bans through Redis, measured on real daemons.
# The bed is the one tests/e2e/e2e_fleet.sh runs on (tests/e2e/fleet_lib.sh): redis-server with an ACL
# user in a namespace of its own, and three xdpband nodes a, b and c, each protecting its own
# veth in its own namespace. Then bench/fleet.c measures:
#   - ban propagation: N manual bans on A (1,000 in quick mode), from A's ban to the last of B
#     and C enforcing it, read from the start times the nodes write with their bans;
#   - apply throughput: with A and C stopped, a burst of 100,000 entries XADDed by a node that
#     is not running, and the time until the last one is in force on B; B's applied counter
#     must grow by exactly the burst, and no node may refuse an entry.
# Usage: bench/fleet.sh BUILD MODE. Redis runs with appendonly yes and appendfsync everysec (its
# default; the e2e test syncs every write). Everything made (namespaces xbbench-fleet-PID-*,
# daemons, Redis, pins /sys/fs/bpf/xbfbPID-*, files) is removed on any exit.
set -uo pipefail
build=${1:?usage: $0 BUILD MODE} mode=${2:?usage: $0 BUILD MODE}
cd "$(dirname "$0")/.." || exit 1
case $mode in
smoke) bans=20 burst=1000 ;;
quick) bans=1000 burst=100000 ;;
full) bans=5000 burst=100000 ;;
*)
	echo "bench: fleet: mode '$mode' is not smoke, quick or full" >&2
	exit 2
	;;
esac

skip() {
	echo "bench: fleet: skipped ($1)" >&2
	exit 77
}
fail() {
	echo "bench: fleet: $1" >&2
	exit 1
}
for tool in redis-server redis-cli nsenter; do
	command -v $tool >/dev/null || skip "$tool is not installed (make deps)"
done
BUILD=$(realpath "$build")
for t in bench/fleet xdpband xdpban; do
	[[ -x $BUILD/$t ]] || fail "$BUILD/$t is missing; run make first"
done

source tests/e2e/e2e_lib.sh # its cleanup stack runs on every exit
readonly TAG=xbfb$$
FLEET_NS=xbbench-fleet-$$-
FLEET_APPENDFSYNC=everysec
TMP=$(mktemp -d /tmp/xbbench-fleet.XXXXXX) || exit 1
e2e_defer rm -rf "$TMP"
chmod 711 "$TMP"
install -m 755 "$BUILD/xdpband" "$BUILD/xdpban" "$TMP/" || fail "cannot copy the binaries"
source tests/e2e/fleet_lib.sh

fleet_setup || fail "cannot create the namespaces: ${E2E_WHY:-ip failed}"
fleet_redis_init || fail "cannot write the Redis config in $TMP"
redis_start || fail "redis-server did not start: $(tail -3 "$TMP/redis.log")"
readonly MAXLEN=1000000 # the whole bench stays in the stream
for n in "${NODES[@]}"; do
	write_conf "$n" "maxlen = $MAXLEN" "[bans]" "bans-max = 262144"
	node_start "$n" || fail "node $n did not start or connect: $(tail -3 "$TMP/$n.log")"
done

loadavg() { cut -d' ' -f1-3 /proc/loadavg; }
refused() { # the entries NODE refused, all reasons
	local why sum=0
	for why in malformed expired policy; do
		sum=$((sum + $(fleet "$1" refused_$why)))
	done
	echo "$sum"
}

load_before=$(loadavg)
echo "fleet: $bans bans on node A, timed to B and C" >&2
"$BUILD/bench/fleet" latency "$bans" "${SOCK[a]}" "${PIN[a]}" "${PIN[b]}" "${PIN[c]}" \
	>"$TMP/latency.md" || fail "the propagation run failed"
for n in b c; do
	[[ $(fleet "$n" applied) == "$bans" && $(refused "$n") == 0 ]] ||
		fail "node $n applied $(fleet "$n" applied) of $bans bans, refused $(refused "$n")"
done
load_mid=$(loadavg)

node_stop a && node_stop c || fail "nodes A and C did not stop cleanly"
applied=$(fleet b applied)
echo "fleet: a burst of $burst entries into node B" >&2
nsenter --net="/run/netns/${FLEET_NS}r" "$BUILD/bench/fleet" burst "$burst" "$REDIS_ADDR" 6379 \
	"$REDIS_USER" "$TMP/redis.pass" "$TMP/fleet.key" "$STREAM" "$MAXLEN" "${PIN[b]}" >"$TMP/burst.md" ||
	fail "the burst run failed"
e2e_wait 100 eval '[[ $(fleet b applied) == $((applied + burst)) ]]' ||
	fail "node B's applied counter grew by $(($(fleet b applied) - applied)), not $burst"
[[ $(refused b) == 0 ]] || fail "node B refused $(refused b) entries"
load_after=$(loadavg)

echo "## Fleet sharing through Redis"
echo
echo "bench/fleet.sh: redis-server $(redis-server --version | sed -n 's/.*v=\([^ ]*\).*/\1/p')" \
	"(ACL user, appendonly, appendfsync everysec) and three xdpband daemons, each in its own" \
	"namespace on its own veth, on the bed of tests/e2e/e2e_fleet.sh (tests/e2e/fleet_lib.sh). All share" \
	"this machine's $(nproc) cores: load average (1, 5, 15 min) $load_before before," \
	"$load_mid after the propagation run, $load_after after the burst."
echo
cat "$TMP/latency.md" "$TMP/burst.md"
echo "bench: fleet: verdicts verified ($((2 * bans + 2)) checks)" >&2
