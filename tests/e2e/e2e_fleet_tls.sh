#!/usr/bin/env bash
# e2e_fleet_tls.sh BUILD - the fleet's Redis link over TLS with Debian's stunnel, configured by
# the samples in deploy/stunnel/ (docs/fleet.md, "Over TLS"), changed only in their addresses
# and file names. Redis listens on its namespace's loopback only, behind a stunnel server on
# 198.51.100.10:6380 with a certificate of a CA made for the run; nodes A and B point
# `redis = 127.0.0.1:6380` at a stunnel client in their own namespace that checks that CA and
# the name redis.example.net; node C's stunnel client trusts another CA:
#   - a ban by hand on A is in force on B, with A as its origin;
#   - on the Redis namespace's bridge every node's stunnel opens with a TLS ClientHello, and
#     neither the fleet's password nor the banned address is in the capture, while both are
#     in the capture of the namespace's loopback (stunnel to Redis, in clear) at the same time;
#   - the Redis host's address is exempt through the never-ban list the docs ask for; what
#     xdpband exempts by itself is the loopback address it connects to;
#   - C gets no link: status says it is not connected, its stunnel says why, and A's ban does
#     not reach it;
#   - a stunnel client with the right CA but another host name to check gets no answer
#     through it, where A's stunnel client gets PONG;
#   - the same client sample in front of Redis's own TLS (tls-port), with no stunnel server,
#     gets PONG.
#
# The bed (namespaces, Redis's config, the nodes' configs) is tests/e2e/fleet_lib.sh, as for
# tests/e2e/e2e_fleet.sh. Everything made here (namespaces, daemons, stunnel, tcpdump, Redis, pins,
# files) is removed on any exit. Needs root; skips without it.
# shellcheck disable=SC2317 # the case functions are called through e2e_case
set -uo pipefail
build=${1:-build}
cd "$(dirname "$0")/../.." || exit 1
source tests/e2e/e2e_lib.sh

CASES=(ban_crosses_tls wire_is_tls redis_host_never_banned wrong_ca_no_link
	wrong_name_no_link redis_tls_port)
e2e_require_root "${CASES[0]}"
e2e_require_build "$build" redis-server redis-cli nsenter stunnel4 openssl tcpdump

readonly TAG=xbt$$ TLS_PORT=6380 TLS_PORT2=6381 SERVER_NAME=redis.example.net BANNED=203.0.113.7
TMP=$(mktemp -d /tmp/xbt-e2e.XXXXXX) || exit 1
# XBF_KEEP=1 keeps the logs, captures and certificates in $TMP for a post-mortem.
[[ -n ${XBF_KEEP:-} ]] && echo "fleet-tls: keeping $TMP" || e2e_defer rm -rf "$TMP"
chmod 711 "$TMP"
install -m 755 "$BUILD/xdpband" "$BUILD/xdpban" "$TMP/" || e2e_fail_all "cannot copy the binaries"
source tests/e2e/fleet_lib.sh
RNS=${FLEET_NS}r

# The bed's Redis binds the bridge's address; here it is reached only through stunnel, so it
# binds the loopback, and the bed's redis-cli goes there too.
rcli() {
	ip netns exec "$RNS" redis-cli -h 127.0.0.1 --user "$REDIS_USER" \
		--pass "$(head -1 "$TMP/redis.pass")" --no-auth-warning "$@"
}

# ---- certificates: a CA and the Redis host's certificate from it; another CA ----

# ca NAME: a self-signed CA, $TMP/tls/NAME.pem and .key. EC P-256 keys, a day long: made in
# milliseconds, gone with the run.
ca() {
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 \
		-subj "/CN=xdpban test $1" -keyout "$TMP/tls/$1.key" -out "$TMP/tls/$1.pem"
}
make_certs() {
	mkdir -m 700 "$TMP/tls" && ca fleet-ca && ca other-ca &&
		openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$SERVER_NAME" \
			-addext "subjectAltName=DNS:$SERVER_NAME" -keyout "$TMP/tls/server.key" \
			-out "$TMP/tls/server.csr" &&
		openssl x509 -req -in "$TMP/tls/server.csr" -CA "$TMP/tls/fleet-ca.pem" \
			-CAkey "$TMP/tls/fleet-ca.key" -CAcreateserial -days 1 -copy_extensions copy \
			-out "$TMP/tls/server.pem"
}

# ---- stunnel, from the samples ----

# stunnel_start NS NAME CONF: stunnel in the foreground in NS (its pid is the test's), its log
# $TMP/NAME.stunnel.log; waits until it accepts on the port its config's accept names.
stunnel_start() {
	local port
	port=$(sed -n 's/^accept = .*:\([0-9]*\)$/\1/p' "$3")
	e2e_bg "$1" "$TMP/$2.stunnel.log" stunnel4 "$3"
	e2e_wait 50 eval '[[ -n $(ip netns exec '"$1"' ss -Hltn "sport = :'"$port"'") ]]'
}
# client_conf NAME CAFILE [CHECKHOST [PORT [SERVER_PORT]]]: the sample client config with this
# bed's server address and the CA file made here; by default it checks the server's name and
# accepts on the fleet's port, as the sample does.
client_conf() {
	sed -e "s|^connect = .*|connect = $REDIS_ADDR:${5:-$TLS_PORT}|" -e "s|^CAfile = .*|CAfile = $2|" \
		-e "s|^checkHost = .*|checkHost = ${3:-$SERVER_NAME}|" \
		-e "s|^accept = 127.0.0.1:.*|accept = 127.0.0.1:${4:-$TLS_PORT}|" \
		deploy/stunnel/xdpban-fleet-client.conf >"$TMP/$1.stunnel.conf"
}
tls_setup() {
	sed -i 's/^bind .*/bind 127.0.0.1/' "$TMP/redis/redis.conf" &&
		sed -e "s|^accept = .*|accept = $REDIS_ADDR:$TLS_PORT|" \
			-e "s|^cert = .*|cert = $TMP/tls/server.pem|" -e "s|^key = .*|key = $TMP/tls/server.key|" \
			deploy/stunnel/xdpban-fleet-server.conf >"$TMP/server.stunnel.conf" &&
		stunnel_start "$RNS" server "$TMP/server.stunnel.conf" || return 1
	local n
	for n in "${NODES[@]}"; do
		client_conf "$n" "$TMP/tls/$([[ $n == c ]] && echo other-ca || echo fleet-ca).pem" &&
			stunnel_start "${NS[$n]}" "$n" "$TMP/$n.stunnel.conf" || return 1
	done
}

# ---- captures in the Redis namespace: its bridge (TLS) and its loopback (in clear) ----

declare -A CAPTURE
capture_start() {
	local ifc=$1 port=$2
	# -Z root: Debian's tcpdump drops to its own user, which cannot write in $TMP.
	# --immediate-mode: else packets wait in the kernel's buffer, and those of the last second
	# are still there when the capture stops.
	e2e_bg "$RNS" "$TMP/$ifc.tcpdump.log" tcpdump -i "$ifc" -nn --immediate-mode -U -Z root \
		-w "$TMP/$ifc.pcap" "tcp port $port"
	CAPTURE[$ifc]=$!
	e2e_wait 50 grep -qs "listening on $ifc" "$TMP/$ifc.tcpdump.log"
}
capture_stop() { kill -INT "${CAPTURE[$1]}" && wait "${CAPTURE[$1]}"; }

fleet_setup || e2e_fail_all "cannot create the test namespaces: ${E2E_WHY:-ip failed}"
make_certs >"$TMP/openssl.log" 2>&1 || e2e_fail_all "openssl: $(tail -1 "$TMP/openssl.log")"
fleet_redis_init || e2e_fail_all "cannot write the Redis config in $TMP"
tls_setup || e2e_fail_all "stunnel did not start: $(tail -qn1 "$TMP"/*.stunnel.log | xargs)"
redis_start || e2e_fail_all "redis-server did not start: $(tail -3 "$TMP/redis.log")"
# From here until wire_is_tls, Redis hears only the nodes, through stunnel.
capture_start br0 "$TLS_PORT" && capture_start lo 6379 ||
	e2e_fail_all "tcpdump did not start: $(cat "$TMP"/*.tcpdump.log | xargs)"

# What docs/fleet.md asks of every node: the Redis host's real address in a never-ban list.
# C goes without, to show what xdpband exempts by itself.
printf '%s\n' "$REDIS_ADDR" >"$TMP/redis-host.list"
for n in "${NODES[@]}"; do
	extra=()
	[[ $n != c ]] && extra=("[lists]" "never-ban = $TMP/redis-host.list")
	write_conf "$n" "${extra[@]}"
	sed -i "s/^redis = .*/redis = 127.0.0.1:$TLS_PORT/" "$TMP/$n.conf"
done
for n in a b; do
	node_start "$n" || e2e_fail_all "node $n did not start or connect: $(tail -3 "$TMP/$n.log")"
done
# C's link never comes up, which node_start waits for: C is only asked to answer.
nsenter --net="/run/netns/${NS[c]}" "$TMP/xdpband" -c "$TMP/c.conf" >>"$TMP/c.log" 2>&1 &
PID[c]=$!
e2e_defer e2e__kill "${PID[c]}"
e2e_wait 200 answers c || e2e_fail_all "node C did not start: $(tail -3 "$TMP/c.log")"

# ---- the cases ----

case_ban_crosses() {
	e2e_expect "A's redis" "127.0.0.1:$TLS_PORT" "$(fleet a redis)" || return 1
	e2e_run cli a ban "$BANNED" --for 1h || return 1
	e2e_wait 50 banned b "$BANNED" ||
		{ E2E_WHY="$BANNED not banned on B within 5 s: $(fleet b error)"; return 1; }
	e2e_expect "B's origin of $BANNED" node-a "$(cli b query "$BANNED" --json | json 'd.get("ban_origin")')"
}

# hellos SRC: the packets from SRC to the stunnel server that open with a TLS handshake record
# (content type 22, version 3.x) holding a ClientHello (handshake type 1).
hellos() {
	tcpdump -r "$TMP/br0.pcap" -nn "src $1 and tcp dst port $TLS_PORT and
		tcp[((tcp[12:1] & 0xf0) >> 2):2] = 0x1603 and tcp[((tcp[12:1] & 0xf0) >> 2) + 5:1] = 1" \
		2>/dev/null | wc -l
}
# seen WHAT IFC: how many times WHAT stands in the capture of IFC, byte for byte.
seen() { grep -a -o -F -- "$1" "$TMP/$2.pcap" | wc -l; }

case_wire() {
	local n i what
	# C's xdpband may be the last to try: every node's stunnel has reached the server first.
	for i in 0 1 2; do
		e2e_wait 50 grep -q "accepted connection from 198.51.100.2$i:" "$TMP/server.stunnel.log" ||
			{ E2E_WHY="no connection from 198.51.100.2$i at the stunnel server"; return 1; }
	done
	capture_stop br0 && capture_stop lo || { E2E_WHY="tcpdump did not stop cleanly"; return 1; }
	i=0
	for n in "${NODES[@]}"; do
		(($(hellos "198.51.100.2$i") >= 1)) ||
			{ E2E_WHY="no TLS ClientHello from node $n (198.51.100.2$i) on the bridge"; return 1; }
		i=$((i + 1))
	done
	for what in "$REDIS_PASS" "$BANNED"; do
		(($(seen "$what" lo) >= 1)) ||
			{ E2E_WHY="'$what' is not in the loopback's capture: the check would see nothing"; return 1; }
		e2e_expect "'$what' in the bridge's capture ($(stat -c %s "$TMP/br0.pcap") bytes)" 0 \
			"$(seen "$what" br0)" || return 1
	done
}

# xdpband exempts the address it connects to, 127.0.0.1, which is exempt anyway; the Redis
# host's address is exempt on A and B only by their never-ban list.
case_never_banned() {
	e2e_expect "A's query of $REDIS_ADDR" "True never-ban" \
		"$(cli a query "$REDIS_ADDR" --json | json 'str(d["exempt"]) + " " + d["exempt_why"]')" &&
		e2e_expect "C's query of $REDIS_ADDR (no never-ban list)" False \
			"$(cli c query "$REDIS_ADDR" --json | json 'd["exempt"]')"
}

case_wrong_ca() {
	local err
	e2e_wait 50 grep -q "certificate verify failed" "$TMP/c.stunnel.log" ||
		{ E2E_WHY="C's stunnel did not refuse the server: $(tail -2 "$TMP/c.stunnel.log" | xargs)"; return 1; }
	e2e_wait 50 eval '[[ $(fleet c error) != None ]]' ||
		{ E2E_WHY="C's status names no problem"; return 1; }
	err=$(fleet c error)
	echo "fleet-tls: C's status: connected $(fleet c connected), error '$err'"
	e2e_expect "C's connected" False "$(fleet c connected)" &&
		e2e_expect "C's applied" 0 "$(fleet c applied)" || return 1
	not_banned c "$BANNED" || { E2E_WHY="$BANNED (banned on A) is banned on C"; return 1; }
}

# ping NODE PORT: redis-cli PING, as the fleet's user, through the stunnel client on PORT.
ping() {
	ip netns exec "${NS[$1]}" redis-cli -h 127.0.0.1 -p "$2" --user "$REDIS_USER" \
		--pass "$(head -1 "$TMP/redis.pass")" --no-auth-warning PING 2>&1
}
case_wrong_name() {
	local port=$((TLS_PORT + 1))
	e2e_expect "PING through A's stunnel" PONG "$(ping a "$TLS_PORT")" || return 1
	client_conf c-name "$TMP/tls/fleet-ca.pem" other.example.net "$port" &&
		stunnel_start "${NS[c]}" c-name "$TMP/c-name.stunnel.conf" ||
		{ E2E_WHY="the stunnel checking other.example.net did not start"; return 1; }
	[[ $(ping c "$port") != PONG ]] || { E2E_WHY="PONG through a client checking another name"; return 1; }
	e2e_wait 20 grep -q "CERT: Subject checks failed" "$TMP/c-name.stunnel.log" ||
		{ E2E_WHY="its stunnel did not say why: $(tail -2 "$TMP/c-name.stunnel.log" | xargs)"; return 1; }
}

# Redis's own TLS in place of the stunnel server: a second redis-server with the same users,
# on TLS alone, and the sample client in front of it.
case_redis_tls() {
	local port=$((TLS_PORT + 2))
	mkdir -m 700 "$TMP/redis-tls" && cat >"$TMP/redis-tls/redis.conf" <<EOF2 || return 1
bind $REDIS_ADDR
port 0
tls-port $TLS_PORT2
tls-cert-file $TMP/tls/server.pem
tls-key-file $TMP/tls/server.key
tls-auth-clients no
dir $TMP/redis-tls
aclfile $TMP/redis/users.acl
save ""
EOF2
	e2e_bg "$RNS" "$TMP/redis-tls.log" redis-server "$TMP/redis-tls/redis.conf"
	client_conf b-redis "$TMP/tls/fleet-ca.pem" "$SERVER_NAME" "$port" "$TLS_PORT2" &&
		stunnel_start "${NS[b]}" b-redis "$TMP/b-redis.stunnel.conf" ||
		{ E2E_WHY="the stunnel client of Redis's TLS did not start"; return 1; }
	e2e_wait 50 eval '[[ $(ping b '"$port"') == PONG ]]' ||
		{ E2E_WHY="PING through Redis's TLS: $(ping b "$port") ($(tail -1 "$TMP/redis-tls.log"))"; return 1; }
}

e2e_case ban_crosses_tls case_ban_crosses
e2e_case wire_is_tls case_wire
e2e_case redis_host_never_banned case_never_banned
e2e_case wrong_ca_no_link case_wrong_ca
e2e_case wrong_name_no_link case_wrong_name
e2e_case redis_tls_port case_redis_tls
e2e_finish
