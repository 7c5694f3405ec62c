# shellcheck shell=bash
# fleet_lib.sh - the fleet's test bed, shared by tests/e2e/e2e_fleet.sh and bench/fleet.sh (one
# place, so that the test and the bench run the same setup): three xdpband nodes a, b and c,
# each in a namespace of its own protecting its own veth toward one sender namespace, and
# Debian's redis-server in a fourth namespace, bound to 198.51.100.10 behind a bridge every
# node reaches, with an ACL user (the default user is off).
#
# Source it after tests/e2e/e2e_lib.sh (its cleanup stack removes everything made here), with set:
#   TAG   short and unique per process: link names are x${TAG}${NODE}[rqsx] (at most 15 bytes)
#   TMP   a private directory (mode 711) holding copies of xdpban and xdpband
#   FLEET_NS  (optional) the namespaces' prefix, default TAG: ${FLEET_NS}a, ...r (Redis),
#         ...s (the sender)
# Then: fleet_setup (namespaces), fleet_redis_init and redis_start, write_conf NODE [LINE]...,
# node_start NODE; rcli runs redis-cli as the fleet's user (with the password file's password),
# radmin as an admin user of the bed's own. Functions return non-zero with E2E_WHY set where
# it helps.

# tests/run.sh runs only tests/e2e/e2e_*.sh; run directly, this file does nothing.
(return 0 2>/dev/null) || exit 0

readonly PY=$E2E_PY
readonly REDIS_ADDR=198.51.100.10 REDIS_USER=xdpban REDIS_PASS=fleet-$TAG
readonly REDIS_ADMIN_PASS=admin-$TAG # a user of the test's own, to change the fleet's ACL
readonly STREAM=xdpban:$TAG SNAPSHOT=xdpban:$TAG:active
FLEET_NS=${FLEET_NS:-$TAG}
NODES=(a b c)
declare -A NS ADDR SADDR PIN SOCK PID

# ---- the namespaces ----

# The node's address toward the sender (192.0.2.0/26 for a, .64/26 b, .128/26 c) and Redis's
# bridge (198.51.100.20, .21, .22).
setup_node() {
	local n=$1 i=$2 base=$(($2 * 64)) ns=$FLEET_NS$1
	NS[$n]=$ns ADDR[$n]=192.0.2.$((base + 1)) SADDR[$n]=192.0.2.$((base + 2))
	PIN[$n]=/sys/fs/bpf/$TAG-$n SOCK[$n]=$TMP/$n.sock
	e2e_netns_add "$ns" || return 1
	e2e_defer rm -rf "${PIN[$n]}"
	ip link add "x${TAG}${n}r" netns "$ns" type veth peer name "x${TAG}${n}q" netns "$FLEET_NS"r &&
		ip -n "$FLEET_NS"r link set "x${TAG}${n}q" master br0 up &&
		ip -n "$ns" addr add "198.51.100.2$i/24" dev "x${TAG}${n}r" &&
		ip -n "$ns" link set "x${TAG}${n}r" up || return 1
	ip link add "x${TAG}${n}s" netns "$FLEET_NS"s type veth peer name "x${TAG}${n}x" netns "$ns" &&
		ip netns exec "$FLEET_NS"s sysctl -qw "net.ipv6.conf.x${TAG}${n}s.disable_ipv6=1" &&
		ip netns exec "$ns" sysctl -qw "net.ipv6.conf.x${TAG}${n}x.disable_ipv6=1" &&
		ip netns exec "$ns" sysctl -qw net.ipv4.conf.all.rp_filter=0 &&
		ip netns exec "$ns" sysctl -qw "net.ipv4.conf.x${TAG}${n}x.rp_filter=0" &&
		ip -n "$FLEET_NS"s addr add "${SADDR[$n]}/26" dev "x${TAG}${n}s" &&
		ip -n "$ns" addr add "${ADDR[$n]}/26" dev "x${TAG}${n}x" &&
		ip -n "$FLEET_NS"s link set "x${TAG}${n}s" up && ip -n "$ns" link set "x${TAG}${n}x" up
}

fleet_setup() {
	e2e_netns_add "$FLEET_NS"r && e2e_netns_add "$FLEET_NS"s || return 1
	ip -n "$FLEET_NS"r link add br0 type bridge &&
		ip -n "$FLEET_NS"r addr add "$REDIS_ADDR/24" dev br0 &&
		ip -n "$FLEET_NS"r link set br0 up || return 1
	local i=0 n
	for n in "${NODES[@]}"; do
		setup_node "$n" "$i" || return 1
		i=$((i + 1))
	done
}

# ---- Redis ----

fleet_redis_init() {
	mkdir -p "$TMP/redis" && chmod 700 "$TMP/redis" || return 1
	cat >"$TMP/redis/users.acl" <<EOF2
user default off
user $REDIS_USER on >$REDIS_PASS ~xdpban:* +@stream +@hash +@transaction +@connection
user admin on >$REDIS_ADMIN_PASS ~* &* +@all
EOF2
	cat >"$TMP/redis/redis.conf" <<EOF2
bind $REDIS_ADDR
port 6379
daemonize no
dir $TMP/redis
aclfile $TMP/redis/users.acl
appendonly ${FLEET_APPENDONLY:-yes}
appendfsync ${FLEET_APPENDFSYNC:-always}
save ""
logfile ""
EOF2
	printf '%s\n' "$REDIS_PASS" >"$TMP/redis.pass" && chmod 600 "$TMP/redis.pass" &&
		head -c 48 /dev/urandom | base64 >"$TMP/fleet.key" && chmod 600 "$TMP/fleet.key"
}
REDIS_PID=
redis_start() {
	ip netns exec "$FLEET_NS"r redis-server "$TMP/redis/redis.conf" >>"$TMP/redis.log" 2>&1 &
	REDIS_PID=$!
	e2e_defer e2e__kill "$REDIS_PID"
	e2e_wait 100 eval '[[ $(rcli PING 2>/dev/null) == PONG ]]'
}
redis_stop() { kill "$REDIS_PID" && wait "$REDIS_PID"; }
rcli() {
	ip netns exec "$FLEET_NS"r redis-cli -h "$REDIS_ADDR" --user "$REDIS_USER" \
		--pass "$(head -1 "$TMP/redis.pass")" --no-auth-warning "$@"
}
# signed_xadd FIELD VALUE...: an entry signed with the fleet's key as docs/fleet.md says
# ("Signatures"), computed here on its own, added with XADD: what any holder of the key can
# write.
signed_xadd() {
	local mac
	mac=$("$PY" - "$TMP/fleet.key" "$@" <<'EOF2'
import hashlib, hmac, sys
key = open(sys.argv[1], "rb").read()
key = key[:-1] if key.endswith(b"\n") else key
pairs = dict(zip(sys.argv[2::2], sys.argv[3::2]))
order = ["v", "origin", "kind", "key", "reason", "classes", "count", "expires"]
msg = "xdpban-fleet-entry\n" + "".join(f"{k}={pairs[k]}\n" for k in order if k in pairs)
print(hmac.new(key, msg.encode(), hashlib.sha256).hexdigest())
EOF2
	) || return 1
	rcli XADD "$STREAM" '*' "$@" mac "$mac"
}
# signed_flood COUNT: COUNT signed bans of distinct /64s (2001:db8:f0:N::/64 on) from node-x, an
# hour long, XADDed in one pipeline: what a fleet's node gone mad, or a key thief, can write.
signed_flood() {
	ip netns exec "$FLEET_NS"r "$PY" - "$REDIS_ADDR" "$REDIS_USER" "$TMP/redis.pass" \
		"$TMP/fleet.key" "$STREAM" "$1" <<'EOF2'
import hashlib, hmac, socket, sys, time
addr, user, passfile, keyfile, stream, count = sys.argv[1:7]
key = open(keyfile, "rb").read().rstrip(b"\n")
password = open(passfile).readline().strip()
def cmd(*args):
    out = b"*%d\r\n" % len(args)
    for a in args:
        a = a.encode() if isinstance(a, str) else a
        out += b"$%d\r\n%s\r\n" % (len(a), a)
    return out
expires = str(int(time.time()) + 3600)
buf = [cmd("AUTH", user, password)]
for i in range(int(count)):
    who = "2001:db8:%x:%x::/64" % (0xf0 + (i >> 16), i & 0xffff)  # f0:0:: up, 65536 per /48
    f = {"v": "1", "origin": "node-x", "kind": "ban", "key": who,
         "reason": "manual", "classes": "none", "count": "0", "expires": expires}
    msg = "xdpban-fleet-entry\n" + "".join(f"{k}={v}\n" for k, v in f.items())
    f["mac"] = hmac.new(key, msg.encode(), hashlib.sha256).hexdigest()
    buf.append(cmd("XADD", stream, "*", *[x for kv in f.items() for x in kv]))
s = socket.create_connection((addr, 6379))
s.sendall(b"".join(buf))
s.settimeout(30)
got = b""
while got.count(b"\r\n") < 2 * int(count) + 1:  # +OK, then an id ($LEN and the id) each
    chunk = s.recv(65536)
    if not chunk:
        break
    got += chunk
errors = got.count(b"\r\n-")
sys.exit(1 if errors or not got.startswith(b"+OK") else 0)
EOF2
}
radmin() {
	ip netns exec "$FLEET_NS"r redis-cli -h "$REDIS_ADDR" --user admin --pass "$REDIS_ADMIN_PASS" \
		--no-auth-warning "$@"
}

# The stream's last id, as XINFO STREAM tells it.
stream_last_id() { rcli XINFO STREAM "$STREAM" | awk 'prev == "last-generated-id" { print; exit } { prev = $0 }'; }

# ---- the nodes ----

# write_conf NODE [EXTRA_LINE]...
write_conf() {
	local n=$1 line
	shift
	{
		echo "[xdp]"
		echo "interfaces = x${TAG}${n}x"
		echo "pin-dir = ${PIN[$n]}"
		echo "detach-on-exit = yes"
		echo "[bans]"
		echo "limit = 3"
		echo "ban-time = 1h"
		echo "[control]"
		echo "socket = ${SOCK[$n]}"
		echo "[metrics]"
		echo "listen = 127.0.0.1:9433"
		echo "[state]"
		echo "file = $TMP/$n.state"
		echo "[fleet]"
		echo "redis = $REDIS_ADDR:6379"
		echo "stream = $STREAM"
		echo "snapshot = $SNAPSHOT"
		echo "node = node-$n"
		echo "user = $REDIS_USER"
		echo "password-file = $TMP/redis.pass"
		echo "key-file = $TMP/fleet.key"
		for line in "$@"; do echo "$line"; done
	} >"$TMP/$n.conf"
}

cli() {
	local n=$1
	shift
	"$TMP/xdpban" --socket "${SOCK[$n]}" --pin-dir "${PIN[$n]}" "$@"
}
json() { "$PY" -c 'import json, sys; d = json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }
answers() { [[ $(cli "$1" status --json 2>/dev/null | json 'd["daemon"]' 2>/dev/null) == True ]]; }
fleet() { cli "$1" status --json | json "d['xdpband']['fleet']['$2']"; }
banned() { [[ $(cli "$1" query "$2" --json | json 'd["banned"]') == True ]]; }
not_banned() { [[ $(cli "$1" query "$2" --json | json 'd["banned"]') == False ]]; }
caught_up() { [[ $(fleet "$1" last_id) == "$(stream_last_id)" ]]; }

node_start() {
	local n=$1
	echo "== xdpband ($(date +%T))" >>"$TMP/$n.log"
	nsenter --net="/run/netns/${NS[$n]}" "$TMP/xdpband" ${XBF_KEEP:+-v} -c "$TMP/$n.conf" >>"$TMP/$n.log" 2>&1 &
	PID[$n]=$!
	e2e_defer e2e__kill "${PID[$n]}"
	e2e_wait 200 answers "$n" && e2e_wait 100 eval '[[ $(fleet '"$n"' connected) == True ]]'
}
node_stop() { kill -TERM "${PID[$1]}" && wait "${PID[$1]}"; }
