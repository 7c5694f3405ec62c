#!/usr/bin/env bash
# e2e_fail2ban.sh - the fail2ban action deploy/fail2ban/action.d/xdpban.conf under the real
# fail2ban (Debian's package): xdpband runs in a receiver namespace with a UDP counter behind
# its veth, a sender namespace holds the addresses that "fail", and a private fail2ban-server
# (its own config directory, socket, pid file, database and log under the test's temp
# directory) watches log files the test appends to. Its config directory links to the action and
# to the jail example deploy/fail2ban/jail.d/xdpban.conf.example (which sets banaction); the
# test's own jails only pass the action the test's paths.
#   make_install_fail2ban     make install DESTDIR=... puts the action (with SBINDIR's path) and
#                             the jail example under /etc/fail2ban
#   actionstart_checks        the jail whose xdpban has no daemon and no pins logs xdpban's error
#                             at its start; the others start without one
#   below_maxretry_not_banned maxretry - 1 lines of an address: counted by fail2ban, not banned
#                             in fail2ban or xdpban, its datagrams arrive
#   banned_at_maxretry        the maxretry-th line: banned in xdpban (query; bans shows a manual
#                             ban for fail2ban's bantime), its datagrams stop arriving, those of
#                             an address with fewer lines still arrive
#   ipv6_banned_alone         the same for an IPv6 address: banned alone, another address of its
#                             /64 still gets through
#   unban_lifts_ban           fail2ban-client unban (IPv4) and set JAIL unbanip (IPv6): not
#                             banned in xdpban, their datagrams arrive again
#   unban_of_lifted_ban       fail2ban's unban of an address whose ban in xdpban is gone already
#                             (lifted by hand): no error, nothing left banned
#   permanent_bantime         a jail with bantime = -1: a ban without end in xdpban
#   stop_leaves_other_bans    fail2ban's stop lifts its own ban (actionunban) and leaves a ban
#                             made with xdpban ban and one xdpband made for errors untouched
#   restart_restores_bans     a new fail2ban-server on the same database bans its permanent ban
#                             in xdpban again
# Uses the daemon's helpers of tests/e2e/e2e_lib.sh; every namespace, daemon, fail2ban-server, pin and
# file it makes is removed by the cleanup of tests/e2e/e2e_lib.sh, also on failure. Documentation
# addresses only; it never touches an interface it did not create, nor the system's fail2ban
# (its /etc/fail2ban, its socket or its service).
#
# Usage: tests/e2e/e2e_fail2ban.sh BUILD_DIR
# shellcheck disable=SC2317 # the cases are called through e2e_case
set -uo pipefail
# shellcheck source=tests/e2e/e2e_lib.sh
source "$(dirname "$0")/e2e_lib.sh"
cd "$(dirname "$0")/../.." || exit 1

CASES=(make_install_fail2ban actionstart_checks below_maxretry_not_banned banned_at_maxretry
	ipv6_banned_alone unban_lifts_ban unban_of_lifted_ban permanent_bantime stop_leaves_other_bans
	restart_restores_bans)
xbd_require "${CASES[@]}"
for tool in fail2ban-server fail2ban-client; do
	command -v $tool >/dev/null || xbd_skip_all "$tool is not installed (make deps: fail2ban)" "${CASES[@]}"
done

readonly ACTION=$PWD/deploy/fail2ban/action.d/xdpban.conf
readonly JAIL_EXAMPLE=$PWD/deploy/fail2ban/jail.d/xdpban.conf.example
readonly RECV4=192.0.2.1 RECV6=2001:db8:f2b::1 PORT=5300
readonly BAD4=192.0.2.10   # reaches maxretry: banned
readonly FEWER4=192.0.2.11 # one line short of maxretry: never banned
readonly FOREVER4=192.0.2.12 # one line in the jail with bantime = -1
readonly ERRORS4=192.0.2.13  # banned by xdpband itself, for malformed frames
readonly MANUAL4=198.51.100.77 # banned with xdpban ban, by hand
readonly BAD6=2001:db8:f2b::10 SAME64=2001:db8:f2b::11 # one /64
readonly MAXRETRY=3 BANTIME=600

# --- fail2ban ------------------------------------------------------------------------------------

# f2b_conf: the private config directory. fail2ban.conf and the jails are the test's; the action
# and the jail example are links to the files in deploy/fail2ban, read as they are.
f2b_conf() {
	F2B=$XBD_TMP/fail2ban F2B_SOCK=$XBD_TMP/fail2ban/f2b.sock F2B_LOG=$XBD_TMP/fail2ban/f2b.log
	mkdir -p "$F2B/action.d" "$F2B/filter.d" "$F2B/jail.d" || return 1
	ln -s "$ACTION" "$F2B/action.d/xdpban.conf" &&
		ln -s "$JAIL_EXAMPLE" "$F2B/jail.d/xdpban.conf" || return 1
	: >"$F2B/auth.log" && : >"$F2B/forever.log" && : >"$F2B/nowhere.log" || return 1
	cat >"$F2B/fail2ban.conf" <<EOF
# written by $(basename "$0")
[Definition]
loglevel = INFO
logtarget = $F2B_LOG
socket = $F2B_SOCK
pidfile = $F2B/f2b.pid
dbfile = $F2B/f2b.sqlite3
dbpurgeage = 1d
syslogsocket = auto
EOF
	cat >"$F2B/filter.d/xdpban-e2e.conf" <<'EOF'
[Definition]
failregex = ^xdpban-e2e: bad password from <HOST>$
datepattern = {NONE}
EOF
	# banaction comes from the jail example; the action gets the test's binary, socket and pins,
	# and the port, protocol and chain that Debian's jail.conf (action_) passes every banaction.
	cat >"$F2B/jail.conf" <<EOF
# written by $(basename "$0")
[DEFAULT]
backend = polling
usedns = no
ignoreself = false
filter = xdpban-e2e
findtime = 10m
maxretry = $MAXRETRY
bantime = $BANTIME
action = %(banaction)s[port="ssh", protocol="tcp", chain="INPUT", xdpban="$XBD_BIN/xdpban", socket="$XBD_SOCK", xdpban_opts="--pin-dir $XBD_PIN"]

[e2e]
enabled = true
logpath = $F2B/auth.log

[e2e-forever]
enabled = true
logpath = $F2B/forever.log
maxretry = 1
bantime = -1

# no daemon on this socket and no pins in this directory: its actionstart must fail
[e2e-nowhere]
enabled = true
logpath = $F2B/nowhere.log
action = %(banaction)s[xdpban="$XBD_BIN/xdpban", socket="$F2B/none.sock", xdpban_opts="--pin-dir $XBD_PIN-none"]
EOF
}

# f2b_start: a fail2ban-server in the foreground (a child of this shell, so its pid is ours),
# up once all three jails have started.
f2b_start() {
	echo "== fail2ban-server ($(date +%T))" >>"$F2B/server.out"
	fail2ban-server -f -x -c "$F2B" -s "$F2B_SOCK" -p "$F2B/f2b.pid" --logtarget "$F2B_LOG" \
		--pname xdpban-e2e-fail2ban >>"$F2B/server.out" 2>&1 &
	F2B_PID=$!
	e2e_defer f2b_kill "$F2B_PID"
	local jail
	for jail in e2e e2e-forever e2e-nowhere; do
		if ! xbd_wait_until f2b_log_has "Jail '$jail' started"; then
			E2E_WHY="fail2ban-server did not start jail $jail in 20 s: $(tail -n 3 "$F2B/server.out" "$F2B_LOG" | tr '\n' ' ')"
			return 1
		fi
	done
}

# f2b_kill PID: at exit, a clean stop (SIGTERM: fail2ban lifts its bans), KILL after 10 s.
f2b_kill() {
	kill -0 "$1" 2>/dev/null || return 0
	kill -TERM "$1"
	e2e_wait 100 f2b_gone "$1" || kill -KILL "$1"
	wait "$1"
}
f2b_gone() { ! kill -0 "$1" 2>/dev/null; }

f2b() { timeout 20 fail2ban-client -c "$F2B" -s "$F2B_SOCK" "$@" 2>>"$F2B/client.err"; }
f2b_log_has() { grep -qsF -- "$1" "$F2B_LOG"; } # -s: the log may not exist yet
f2b_found() { grep -cF -- "[$1] Found $2 " "$F2B_LOG"; } # JAIL ADDR: lines fail2ban matched
f2b_found_is() { [[ $(f2b_found "$1" "$2") == "$3" ]]; }
f2b_banned_list() { f2b get "$1" banip; } # JAIL: its banned addresses, space-separated
# f2b_commands_failed: commands of the actions that failed, in fail2ban's log. One is expected:
# the actionstart of jail e2e-nowhere.
f2b_commands_failed() { grep -c ' -- returned [0-9]' "$F2B_LOG"; }

# fail LOGFILE ADDR COUNT: COUNT lines of the filter's failregex for ADDR.
fail() {
	local i
	for ((i = 0; i < $3; i++)); do echo "xdpban-e2e: bad password from $2"; done >>"$F2B/$1"
}

# --- traffic -------------------------------------------------------------------------------------

recv_for() { [[ $1 == *:* ]] && echo "$RECV6" || echo "$RECV4"; }
send_udp() { # SRC COUNT: datagrams through a socket bound to SRC in the sender namespace
	ip netns exec "$XBD_NS_S" "$XBD_PY" tests/tools/xb_send.py udp "$1" "$(recv_for "$1")" \
		"$PORT" "$2" 2>>"$XBD_TMP/send.err"
}
received() { grep -cxF -- "$1" "$XBD_TMP/received"; }
received_is() { [[ $(received "$1") == "$2" ]]; }

# through SRC: 2 datagrams from SRC arrive. blocked SRC PASSING: 2 datagrams from SRC are dropped
# while 2 sent after them from PASSING arrive (one veth queue: SRC's fate is settled by then).
through() {
	local before
	before=$(received "$1")
	send_udp "$1" 2
	xbd_wait_until received_is "$1" $((before + 2)) && return 0
	E2E_WHY="$(($(received "$1") - before)) of 2 datagrams from $1 arrived"
	return 1
}
blocked() {
	local before passing
	before=$(received "$1") passing=$(received "$2")
	send_udp "$1" 2 && send_udp "$2" 2
	if ! xbd_wait_until received_is "$2" $((passing + 2)); then
		E2E_WHY="$(($(received "$2") - passing)) of 2 datagrams from $2 arrived"
		return 1
	fi
	e2e_expect "datagrams from $1 that arrived" 0 $(($(received "$1") - before))
}

# ban_entry ADDR: 'REASON SECONDS_LEFT' of ADDR's ban in bans --json, or nothing.
ban_entry() {
	xbd_cli bans --json |
		xbd_json "' '.join(f'{b[\"reason\"]} {b[\"seconds_left\"]}' for b in d['bans'] if b['prefix'] == '$1')"
}
expect_banned() { # ADDR
	xbd_wait_until xbd_banned "$1" && return 0
	E2E_WHY="$1 not banned in xdpban: $(xbd_cli query "$1" 2>&1 | tr '\n' ' ')"
	return 1
}
expect_not_banned() { # ADDR
	xbd_not_banned "$1" && return 0
	E2E_WHY="$1 banned in xdpban: $(xbd_cli query "$1" 2>&1 | tr '\n' ' ')"
	return 1
}
# expect_timed_ban ADDR: a manual ban with fail2ban's bantime left (a few seconds gone).
expect_timed_ban() {
	local reason left
	read -r reason left <<<"$(ban_entry "$1")"
	if [[ $reason != manual || ! $left =~ ^[0-9]+$ ]] || ((left > BANTIME || left < BANTIME - 30)); then
		E2E_WHY="the ban of $1 in xdpban bans is '$reason $left', not 'manual' with ${BANTIME}s or a little less left"
		return 1
	fi
}

# --- cases ---------------------------------------------------------------------------------------

case_make_install() {
	local root=$XBD_TMP/root etc
	etc=$root/etc/fail2ban
	e2e_run make --no-print-directory -s install BUILD="$XBD_BUILD" DESTDIR="$root" \
		PREFIX=/usr || return 1
	e2e_expect "installed action, but for the path of xdpban" \
		"$(sed 's|/usr/local/sbin|/usr/sbin|g' "$ACTION")" "$(cat "$etc/action.d/xdpban.conf" 2>&1)" &&
		e2e_expect "xdpban line of the installed action" "xdpban = /usr/sbin/xdpban" \
			"$(grep '^xdpban = ' "$etc/action.d/xdpban.conf")" &&
		e2e_expect "installed jail example" "$(sed 's|/usr/local/sbin|/usr/sbin|g' "$JAIL_EXAMPLE")" \
			"$(cat "$etc/jail.d/xdpban.conf.example" 2>&1)"
}

# xdpban's one line names the socket or the pin directory it could not use.
case_actionstart() {
	local err
	err=$(grep -F -- " -- stderr: 'xdpban: " "$F2B_LOG")
	if [[ $(wc -l <<<"$err") != 1 || ($err != *"$XBD_PIN-none"* && $err != *"$F2B/none.sock"*) ]]; then
		E2E_WHY="fail2ban's log has no one line of xdpban's naming $XBD_PIN-none or $F2B/none.sock: '$err'"
		return 1
	fi
	e2e_expect "actionstart failures logged" 1 "$(grep -c "Failed to start jail '[^']*' action" "$F2B_LOG")" &&
		e2e_expect "the failure's jail" 1 "$(grep -c "Failed to start jail 'e2e-nowhere' action 'xdpban'" "$F2B_LOG")" &&
		e2e_expect "failed commands" 1 "$(f2b_commands_failed)"
}

case_below_maxretry() {
	fail auth.log "$BAD4" $((MAXRETRY - 1))
	fail auth.log "$FEWER4" $((MAXRETRY - 1))
	fail auth.log "$BAD6" $((MAXRETRY - 1))
	fail auth.log "$SAME64" 1
	if ! xbd_wait_until f2b_found_is e2e "$SAME64" 1; then
		E2E_WHY="fail2ban found $(f2b_found e2e "$SAME64") lines of $SAME64 in 20 s, not 1"
		return 1
	fi
	e2e_expect "fail2ban's finds of $BAD4" $((MAXRETRY - 1)) "$(f2b_found e2e "$BAD4")" &&
		e2e_expect "fail2ban's finds of $BAD6" $((MAXRETRY - 1)) "$(f2b_found e2e "$BAD6")" &&
		e2e_expect "banned in jail e2e" "" "$(f2b_banned_list e2e)" &&
		expect_not_banned "$BAD4" && expect_not_banned "$BAD6" && through "$BAD4" && through "$BAD6"
}

case_banned_at_maxretry() {
	local dropped
	dropped=$(xbd_stat drop_banned)
	fail auth.log "$BAD4" 1
	expect_banned "$BAD4" || return 1
	e2e_expect "banned in jail e2e" "$BAD4" "$(f2b_banned_list e2e)" && expect_timed_ban "$BAD4" &&
		expect_not_banned "$FEWER4" && blocked "$BAD4" "$FEWER4" &&
		e2e_expect "drop_banned" 2 "$(xbd_stat_delta drop_banned "$dropped")" &&
		e2e_expect "fail2ban's bans in its log" 1 "$(grep -cE 'NOTICE +\[e2e\] Ban ' "$F2B_LOG")"
}

# xdpban bans one IPv6 address as a prefix ban (a /128 deny entry): its datagrams count as
# drop_deny, and the rest of its /64 passes.
case_ipv6() {
	local denied
	denied=$(xbd_stat drop_deny)
	fail auth.log "$BAD6" 1
	expect_banned "$BAD6" || return 1
	e2e_expect "banned in jail e2e" "$BAD4 $BAD6" "$(f2b_banned_list e2e)" &&
		expect_timed_ban "$BAD6" && expect_not_banned "$SAME64" && blocked "$BAD6" "$SAME64" &&
		e2e_expect "drop_deny" 2 "$(xbd_stat_delta drop_deny "$denied")"
}

case_unban() {
	e2e_run f2b unban "$BAD4" || return 1
	expect_not_banned "$BAD4" && through "$BAD4" || return 1
	e2e_run f2b set e2e unbanip "$BAD6" || return 1
	expect_not_banned "$BAD6" && through "$BAD6" &&
		e2e_expect "banned in jail e2e" "" "$(f2b_banned_list e2e)" &&
		e2e_expect "failed commands" 1 "$(f2b_commands_failed)"
}

# A ban that is gone from xdpban already (lifted by hand here, or run out) is unbanned quietly.
case_unban_lifted() {
	e2e_run f2b set e2e banip "$FEWER4" && expect_banned "$FEWER4" &&
		e2e_run xbd_cli unban "$FEWER4" && e2e_run f2b set e2e unbanip "$FEWER4" || return 1
	e2e_expect "banned in jail e2e" "" "$(f2b_banned_list e2e)" &&
		e2e_expect "failed commands" 1 "$(f2b_commands_failed)" && through "$FEWER4"
}

case_permanent() {
	fail forever.log "$FOREVER4" 1
	expect_banned "$FOREVER4" || return 1
	e2e_expect "the ban of $FOREVER4 in xdpban bans" "manual -1" "$(ban_entry "$FOREVER4")" &&
		e2e_expect "banned in jail e2e-forever" "$FOREVER4" "$(f2b_banned_list e2e-forever)"
}

# Before the stop: fail2ban bans FOREVER4; xdpban bans MANUAL4 by hand and ERRORS4 for errors.
case_stop() {
	local out rc
	out=$(xbd_cli ban "$MANUAL4" --for 1h 2>&1) || { E2E_WHY="xdpban ban $MANUAL4: $out"; return 1; }
	xbd_send synfin "$ERRORS4" 4 # limit 3
	xbd_wait_until xbd_banned "$ERRORS4" || { E2E_WHY="xdpband did not ban $ERRORS4"; return 1; }
	e2e_run f2b stop || return 1
	e2e_wait 100 f2b_gone "$F2B_PID"
	wait "$F2B_PID"
	rc=$?
	if kill -0 "$F2B_PID" 2>/dev/null; then
		E2E_WHY="fail2ban-server still runs 10 s after fail2ban-client stop"
		return 1
	fi
	e2e_expect "fail2ban-server's exit status" 0 "$rc" &&
		e2e_expect "xdpban's bans after the stop" "$ERRORS4 errors 4|$MANUAL4 manual 0" \
			"$(xbd_cli bans --json | xbd_json "'|'.join(sorted(f'{b[\"prefix\"]} {b[\"reason\"]} {b[\"count\"]}' for b in d['bans']))")" &&
		e2e_expect "fail2ban's unban of $FOREVER4" 1 "$(grep -c "\[e2e-forever\] Unban $FOREVER4\$" "$F2B_LOG")" &&
		e2e_expect "failed commands" 1 "$(f2b_commands_failed)"
}

case_restart() {
	f2b_start || return 1
	expect_banned "$FOREVER4" &&
		e2e_expect "the ban of $FOREVER4 in xdpban bans" "manual -1" "$(ban_entry "$FOREVER4")" &&
		e2e_expect "restored in fail2ban's log" 1 "$(grep -c "\[e2e-forever\] Restore Ban $FOREVER4\$" "$F2B_LOG")"
}

# --- run -----------------------------------------------------------------------------------------

# setup: xbd_begin's two namespaces and veths, IPv6 on the first veth, the sender's addresses,
# xdpband, the UDP counter and fail2ban.
setup() {
	local a
	ip netns exec "$XBD_NS_S" sysctl -qw "net.ipv6.conf.$XBD_IF_S.disable_ipv6=0" &&
		ip netns exec "$XBD_NS_R" sysctl -qw "net.ipv6.conf.$XBD_IF_R.disable_ipv6=0" &&
		ip -n "$XBD_NS_R" addr add "$RECV6/64" dev "$XBD_IF_R" nodad || return 1
	for a in "$BAD4" "$FEWER4"; do
		ip -n "$XBD_NS_S" addr add "$a/24" dev "$XBD_IF_S" || return 1
	done
	for a in "$BAD6" "$SAME64"; do
		ip -n "$XBD_NS_S" addr add "$a/64" dev "$XBD_IF_S" nodad || return 1
	done
	xbd_write_conf "[metrics]" "listen = off"
	xbd_start || { E2E_WHY="xdpband did not start: $(tail -n 1 "$XBD_LOG")"; return 1; }
	e2e_bg "$XBD_NS_R" "$XBD_TMP/receiver.log" "$XBD_PY" tests/tools/xb_udp_count.py "$PORT" \
		"$XBD_TMP/received" "$XBD_TMP/ready" "$RECV4" "$RECV6"
	if ! e2e_wait 100 test -e "$XBD_TMP/ready"; then
		E2E_WHY="the UDP counter did not start: $(head -n 1 "$XBD_TMP/receiver.log")"
		return 1
	fi
	f2b_conf && f2b_start
}

started=$(date +%s%N)
xbd_begin fb "${CASES[@]}"
if ! setup; then
	xbd_fail_all "setup: ${E2E_WHY:-the namespaces or addresses}" "${CASES[@]}"
fi
e2e_case make_install_fail2ban case_make_install
e2e_case actionstart_checks case_actionstart
e2e_case below_maxretry_not_banned case_below_maxretry
e2e_case banned_at_maxretry case_banned_at_maxretry
e2e_case ipv6_banned_alone case_ipv6
e2e_case unban_lifts_ban case_unban
e2e_case unban_of_lifted_ban case_unban_lifted
e2e_case permanent_bantime case_permanent
e2e_case stop_leaves_other_bans case_stop
e2e_case restart_restores_bans case_restart
if ((E2E_FAILED)); then
	tail -n 20 "$F2B_LOG" | sed 's/^/#   fail2ban: /'
fi
echo "#   e2e_fail2ban ran for $((($(date +%s%N) - started) / 1000000)) ms"
e2e_finish
