# shellcheck shell=bash
# e2e_lib.sh - shared helpers for the shell end-to-end tests (tests/e2e/e2e_*.sh): result lines,
# the root check, network namespaces and veth pairs, background processes, bounded waits, and
# one cleanup stack that runs on every exit (normal end, failure, Ctrl-C, SIGTERM).
#
# Source it, never run it. It must never touch anything it did not create itself: every
# namespace, link and process it makes is registered for cleanup at the moment it is made, and
# an existing namespace is refused, never reused or deleted.
#
#   e2e_pass NAME | e2e_fail NAME WHY | e2e_skip NAME WHY
#                                 one result line; tests/run.sh counts them
#   e2e_case NAME FUNC [ARG...]   runs FUNC: PASS if it returns 0, else FAIL with $E2E_WHY
#                                 (and returns 1)
#   e2e_expect WHAT EXPECTED ACTUAL   0 if equal, else sets E2E_WHY and returns 1
#   e2e_run CMD...                runs CMD quietly; on failure E2E_WHY gets its first line of output
#   e2e_require_root NAME         prints a SKIP line and exits 0 unless root
#   e2e_defer CMD...              pushes a cleanup command (run last-in, first-out, at exit)
#   e2e_netns_add NS              creates a namespace with lo up; refused (E2E_WHY) if it exists
#   e2e_veth_add NS1 IF1 NS2 IF2  a veth pair between two namespaces, both ends up
#   e2e_bg NS LOG CMD...          runs CMD in NS in the background, killed at exit
#   e2e_wait TRIES CMD...         polls CMD every 0.1 s, at most TRIES times; 0 once it succeeds
#   e2e_finish                    exits 1 if any case failed, else 0
#   $E2E_PY                       the python3 every test runs
#   xbd_*                         the daemon in two namespaces (its section at the end)

# tests/run.sh runs every tests/e2e/e2e_*.sh, this file included: run directly, it does nothing.
(return 0 2>/dev/null) || exit 0

# Debian's python3, with its scapy and libtorrent: the python3 first on PATH may be another
# (a pyenv shim costs about 0.6 s a call), so no test calls a bare python3.
readonly E2E_PY=/usr/bin/python3

E2E_FAILED=0
E2E_WHY=
E2E_CLEANUP=()

e2e_pass() { echo "PASS: $1"; }
e2e_skip() { echo "SKIP: $1 ($2)"; }
e2e_fail() {
	echo "FAIL: $1 ($2)"
	E2E_FAILED=$((E2E_FAILED + 1))
}

e2e_case() {
	local name=$1
	shift
	E2E_WHY=
	if "$@"; then
		e2e_pass "$name"
	else
		e2e_fail "$name" "${E2E_WHY:-$1 returned non-zero}"
		return 1
	fi
}

e2e_expect() {
	[[ "$2" == "$3" ]] && return 0
	E2E_WHY="$1: expected '$2', got '$3'"
	return 1
}

e2e_run() {
	local out rc
	out=$("$@" 2>&1) && return 0
	rc=$?
	out=${out%%$'\n'*}
	E2E_WHY=${out:-"'$*' exited with status $rc"}
	return 1
}

# e2e_fail_all WHY: one FAIL line for each of the script's CASES (the setup they all need
# failed), then exit 1.
e2e_fail_all() {
	local c
	for c in "${CASES[@]}"; do e2e_fail "$c" "$1"; done
	exit 1
}

# e2e_require_build BUILD TOOL...: BUILD holds xdpband and xdpban, and each TOOL is installed;
# else every case fails, saying which. Sets BUILD to its absolute path.
e2e_require_build() {
	local tool
	BUILD=$(realpath "$1")
	shift
	[[ -x $BUILD/xdpband && -x $BUILD/xdpban ]] || e2e_fail_all "$BUILD/xdpband is not built"
	for tool in "$@"; do
		command -v "$tool" >/dev/null || e2e_fail_all "$tool is not installed (make deps)"
	done
}

e2e_require_root() {
	if [[ $(id -u) -ne 0 ]]; then
		e2e_skip "$1" "needs root to create namespaces and load XDP programs"
		exit 0
	fi
}

# Cleanup runs once, in reverse order of registration, with errors silenced: a step whose
# object is already gone (the namespace took its veth with it) is not a failure.
e2e__cleanup() {
	local i
	trap - EXIT INT TERM
	for ((i = ${#E2E_CLEANUP[@]} - 1; i >= 0; i--)); do
		eval "${E2E_CLEANUP[i]}" >/dev/null 2>&1
	done
	E2E_CLEANUP=()
}
trap e2e__cleanup EXIT
trap 'exit 130' INT # exit runs the EXIT trap
trap 'exit 143' TERM

e2e_defer() {
	local q
	printf -v q '%q ' "$@"
	E2E_CLEANUP+=("$q")
}

# The tests that attach with plain `ip link` share iproute2's pin directory: this lock keeps
# them from running at once, and they refuse pins they did not make rather than clobber them.
readonly E2E_IPROUTE2_PINS=/sys/fs/bpf/xdp/globals
readonly E2E_IPROUTE2_LOCK=/run/xdpban-e2e-iproute2.lock

e2e_take_iproute2_lock() {
	exec 9>"$E2E_IPROUTE2_LOCK" || return 1
	flock -w 300 9 && return 0
	E2E_WHY="another e2e test held $E2E_IPROUTE2_LOCK for 300 s"
	return 1
}

e2e_refuse_existing_pins() {
	local pins=()
	mapfile -t pins < <(compgen -G "$E2E_IPROUTE2_PINS/xdpban_*")
	((${#pins[@]} == 0)) && return 0
	E2E_WHY="$E2E_IPROUTE2_PINS already holds ${pins[*]##*/}: refusing to clobber someone's xdpban state"
	return 1
}

e2e_netns_add() {
	if [[ -e /run/netns/$1 ]]; then
		E2E_WHY="network namespace $1 already exists (left by a killed run?): 'ip netns del $1'"
		return 1
	fi
	ip netns add "$1" || return 1
	e2e_defer ip netns del "$1"
	ip -n "$1" link set lo up
}

# Deleting either namespace deletes the pair, so no cleanup of its own is needed.
e2e_veth_add() {
	ip link add "$2" netns "$1" type veth peer name "$4" netns "$3" || return 1
	ip -n "$1" link set "$2" up && ip -n "$3" link set "$4" up
}

# `ip netns exec` execs CMD, so $! is CMD's own pid.
e2e_bg() {
	local ns=$1 log=$2
	shift 2
	ip netns exec "$ns" "$@" >"$log" 2>&1 &
	e2e_defer e2e__kill "$!"
}

e2e__kill() {
	kill "$1" && wait "$1"
}

e2e_wait() {
	local tries=$1
	shift
	while ((tries-- > 0)); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}

e2e_finish() {
	((E2E_FAILED == 0))
	exit
}

# --- the daemon in two namespaces -------------------------------------------------------------
# xbd_*: a sender and a receiver namespace joined by two veths, xdpband on the receiver's side
# with its own pins, socket, config, state file and log under names xbd-*, and the checks the
# daemon's tests share. XBD_BUILD is the build directory the test was given.

XBD_BUILD=$(realpath "${1:-build}")
XBD_PY=$E2E_PY
XBD_PIDS=()
XBD_PID=

xbd_pass() { e2e_pass "$1"; }

# xbd_fail NAME WHY: one FAIL line, then the daemon's last log lines to explain it.
xbd_fail() {
	e2e_fail "$1" "$2"
	if [[ -s ${XBD_LOG:-} ]]; then
		tail -n 15 "$XBD_LOG" | sed 's/^/#   log: /'
	fi
}

# xbd_check NAME WHY CMD...: PASS when CMD succeeds, FAIL with WHY otherwise.
xbd_check() {
	local name=$1 why=$2
	shift 2
	if "$@"; then xbd_pass "$name"; else xbd_fail "$name" "$why"; fi
}

# xbd_require CASE...: when the tests cannot run here, one SKIP line per case, and exit 0.
xbd_require() {
	local why=""
	if [[ $(id -u) -ne 0 ]]; then
		why="needs root"
	elif ! mountpoint -q /sys/fs/bpf; then
		why="bpffs is not mounted at /sys/fs/bpf"
	elif [[ ! -x $XBD_BUILD/xdpband || ! -x $XBD_BUILD/xdpban ]]; then
		why="$XBD_BUILD/xdpband or $XBD_BUILD/xdpban is not built"
	elif ! $XBD_PY -c 'import scapy' 2>/dev/null; then
		why="python3-scapy is not installed (make deps)"
	else
		local tool
		for tool in nsenter setpriv curl bpftool ip; do
			command -v $tool >/dev/null || why="$tool is not installed (make deps)"
		done
	fi
	[[ -z $why ]] || xbd_skip_all "$why" "$@"
}

# xbd_skip_all WHY CASE...: one SKIP line per case, and exit 0.
xbd_skip_all() {
	local why=$1 c
	shift
	for c in "$@"; do e2e_skip "$c" "$why"; done
	exit 0
}

# xbd_fail_all WHY CASE...: one FAIL line per case (the setup they need failed), and exit 1.
xbd_fail_all() {
	local why=$1 c
	shift
	for c in "$@"; do xbd_fail "$c" "$why"; done
	exit 1
}

# xbd_cleanup: kills our daemons, deletes our namespaces (and with them the veth and any
# program attached to it), our pins and our temp directory.
xbd_cleanup() {
	local pid
	for pid in "${XBD_PIDS[@]}"; do
		kill -KILL "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	done
	ip netns del "$XBD_NS_S" 2>/dev/null
	ip netns del "$XBD_NS_R" 2>/dev/null
	[[ -n ${XBD_PIN:-} && $XBD_PIN == /sys/fs/bpf/xbd-* ]] && rm -rf "$XBD_PIN"
	[[ -n ${XBD_TMP:-} && $XBD_TMP == /tmp/xbd-* ]] && rm -rf "$XBD_TMP"
}

# xbd_setup TAG: sender namespace with 192.0.2.2 and receiver namespace with 192.0.2.1,
# joined by a veth, and by a second veth (198.51.100.2 to .1) for the tests of two
# interfaces; IPv6 off so that nothing but our own frames reaches the program.
xbd_setup() {
	local tag=$1$$
	XBD_NS_S=xbd-${XBD_NS_TAG:-}$tag-s XBD_NS_R=xbd-${XBD_NS_TAG:-}$tag-r # XBD_NS_TAG: a longer name
	XBD_IF_S=xbd${tag}s XBD_IF_R=xbd${tag}r
	XBD_IF_S2=xbd${tag}t XBD_IF_R2=xbd${tag}u
	XBD_PIN=/sys/fs/bpf/xbd-e2e-$tag
	trap xbd_cleanup EXIT
	trap 'exit 130' INT TERM
	XBD_TMP=$(mktemp -d /tmp/xbd-e2e.XXXXXX) || return 1
	chmod 711 "$XBD_TMP" # others may reach the socket by name, not list the directory
	# Private copies: a rebuild during the run cannot swap the binaries under the tests, and
	# the copies are reachable by the unprivileged user of the credential tests.
	install -m 755 "$XBD_BUILD/xdpband" "$XBD_BUILD/xdpban" "$XBD_TMP/" || return 1
	XBD_BIN=$XBD_TMP
	XBD_SOCK=$XBD_TMP/xdpban.sock XBD_CONF=$XBD_TMP/xdpban.conf
	XBD_STATE=$XBD_TMP/state XBD_LOG=$XBD_TMP/daemon.log
	ip netns add "$XBD_NS_S" && ip netns add "$XBD_NS_R" &&
		xbd_veth "$XBD_IF_S" 192.0.2.2 "$XBD_IF_R" 192.0.2.1 &&
		xbd_veth "$XBD_IF_S2" 198.51.100.2 "$XBD_IF_R2" 198.51.100.1 &&
		ip -n "$XBD_NS_R" link set lo up
}

# xbd_begin TAG CASE...: the start of a test that sources tests/e2e/e2e_lib.sh as well: skips all
# CASEs when they cannot run (xbd_require), or makes the namespaces (xbd_setup TAG) with
# xbd_cleanup at the bottom of e2e_lib.sh's one cleanup stack; if that fails, one FAIL line
# per case and exit 1.
xbd_begin() {
	local tag=$1 c
	shift
	xbd_require "$@"
	if ! xbd_setup "$tag"; then
		for c in "$@"; do echo "FAIL: $c (cannot create the test namespaces)"; done
		exit 1
	fi
	trap e2e__cleanup EXIT
	e2e_defer xbd_cleanup
}

# xbd_veth IF_S ADDR_S IF_R ADDR_R: one veth from the sender to the receiver namespace.
xbd_veth() {
	ip link add "$1" netns "$XBD_NS_S" type veth peer name "$3" netns "$XBD_NS_R" &&
		ip netns exec "$XBD_NS_S" sysctl -qw "net.ipv6.conf.$1.disable_ipv6=1" &&
		ip netns exec "$XBD_NS_R" sysctl -qw "net.ipv6.conf.$3.disable_ipv6=1" &&
		ip -n "$XBD_NS_S" addr add "$2/24" dev "$1" &&
		ip -n "$XBD_NS_R" addr add "$4/24" dev "$3" &&
		ip -n "$XBD_NS_S" link set "$1" up &&
		ip -n "$XBD_NS_R" link set "$3" up
}

# xbd_write_conf [EXTRA_LINE]...: the test config; XBD_CONF_* variables override defaults.
# Extra lines go at the end, so they may open sections of their own.
xbd_write_conf() {
	{
		echo "# written by $(basename "$0")"
		echo "[xdp]"
		echo "interfaces = $XBD_IF_R, $XBD_IF_R2"
		echo "pin-dir = $XBD_PIN"
		echo "detach-on-exit = ${XBD_CONF_DETACH:-yes}"
		echo "[bans]"
		echo "limit = ${XBD_CONF_LIMIT:-3}"
		echo "ban-time = ${XBD_CONF_BAN_TIME:-1h}"
		echo "[control]"
		echo "socket = $XBD_SOCK"
		echo "socket-mode = ${XBD_CONF_SOCKET_MODE:-0600}"
		echo "[state]"
		echo "file = $XBD_STATE"
		echo "[escalation]"
		echo "factor = ${XBD_CONF_FACTOR:-2}"
		echo "period = 1h"
		echo "max-ban-time = 1d"
		local line
		for line in "$@"; do echo "$line"; done
	} >"$XBD_CONF"
}

# The CLI on our socket. When no daemon answers, the CLI reads the pinned maps directly:
# --pin-dir keeps that to our own maps, never those of another test or installation.
xbd_cli() { "$XBD_BIN/xdpban" --socket "$XBD_SOCK" --pin-dir "$XBD_PIN" "$@"; }

# The daemon itself answers on the socket (not the CLI's direct mode).
xbd_answers() { [[ $(xbd_cli status --json 2>/dev/null | xbd_json 'd["daemon"]' 2>/dev/null) == True ]]; }

xbd_alive() { kill -0 "$XBD_PID" 2>/dev/null; }

# xbd_start: starts xdpband in the receiver namespace (nsenter keeps the shared bpffs in view)
# and waits until it answers on its socket. 1 if it died or never answered.
xbd_start() {
	echo "== xdpband ($(date +%T))" >>"$XBD_LOG"
	nsenter --net="/run/netns/$XBD_NS_R" "$XBD_BIN/xdpband" -c "$XBD_CONF" >>"$XBD_LOG" 2>&1 &
	XBD_PID=$!
	XBD_PIDS+=("$XBD_PID")
	local i
	for ((i = 0; i < 200; i++)); do
		xbd_alive || return 1
		xbd_answers && return 0
		sleep 0.1
	done
	return 1
}

# xbd_stop SIGNAL: signals the daemon and waits for it; returns its exit status.
xbd_stop() {
	kill -"$1" "$XBD_PID" 2>/dev/null
	wait "$XBD_PID" 2>/dev/null
}

# xbd_wait_until CMD...: polls CMD for up to 20 s; the bound only turns a hang into a failure.
xbd_wait_until() {
	local i
	for ((i = 0; i < 200; i++)); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}

# xbd_send KIND SRC COUNT [IFACE]: COUNT frames from SRC to 192.0.2.1, sent raw from the
# sender namespace on IFACE (default the first veth). KIND synfin: TCP with SYN and FIN
# (malformed); udp: a valid UDP datagram.
xbd_send() {
	ip netns exec "$XBD_NS_S" $XBD_PY - "${4:-$XBD_IF_S}" "$1" "$2" "$3" <<'EOF' 2>>"$XBD_TMP/scapy.err"
import sys
from scapy.all import Ether, IP, TCP, UDP, conf, sendp
conf.verb = 0
iface, kind, src, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
l4 = TCP(sport=40000, dport=80, flags="SF") if kind == "synfin" else UDP(sport=40000, dport=53) / b"hello"
sendp([Ether(dst="ff:ff:ff:ff:ff:ff") / IP(src=src, dst="192.0.2.1") / l4] * count, iface=iface)
EOF
}

# xbd_request JSON: sends one raw request line to the daemon's socket and prints the reply line.
xbd_request() {
	"$XBD_PY" -c '
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(10)
s.connect(sys.argv[1])
s.sendall(sys.argv[2].encode() + b"\n")
print(s.makefile().readline().strip())' "$XBD_SOCK" "$1"
}

# xbd_json EXPR: evaluates a Python expression over the JSON on stdin, bound to d.
xbd_json() { "$XBD_PY" -c 'import json, sys; d = json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }

# xbd_query ADDR EXPR: EXPR over `xdpban query ADDR --json`.
xbd_query() { xbd_cli query "$1" --json | xbd_json "$2"; }

xbd_stat() { xbd_cli stats --json | xbd_json "d['stats']['$1']['packets']"; }
xbd_stat_is() { [[ $(xbd_stat "$1") == "$2" ]]; }
xbd_count_is() { [[ $(xbd_query "$1" 'd["count"]') == "$2" ]]; }
xbd_banned() { [[ $(xbd_query "$1" 'd["banned"]') == True ]]; }
xbd_not_banned() { [[ $(xbd_query "$1" 'd["banned"]') == False ]]; }
# xbd_stat_delta NAME BEFORE: how much the stat grew since it read BEFORE.
xbd_stat_delta() { echo $(($(xbd_stat "$1") - $2)); }
# xbd_untouched ADDR: no count, no ban.
xbd_untouched() { xbd_count_is "$1" 0 && xbd_not_banned "$1"; }
# xbd_ban_classes ADDR_OR_PREFIX: the classes of its ban in `xdpban bans --json`, comma-separated.
xbd_ban_classes() {
	xbd_cli bans --json |
		xbd_json "','.join(','.join(b['classes']) for b in d['bans'] if b['prefix'] == '$1')"
}
xbd_limit_is() { [[ $(xbd_cli status --json | xbd_json 'd["config"]["limit"]') == "$1" ]]; }

# xbd_ban_of ADDR: "count reason" of ADDR's ban in `xdpban bans --json`, or nothing.
xbd_ban_of() {
	xbd_cli bans --json |
		xbd_json "' '.join(f'{b[\"count\"]} {b[\"reason\"]}' for b in d['bans'] if b['prefix'] == '$1')"
}

# xbd_ban_length_ns ADDR: expires_ns - start_ns of ADDR's entry in the pinned ban table.
xbd_ban_length_ns() { "$XBD_PY" tests/tools/xb_maps.py ban-length "$XBD_PIN" "$1"; }

# xbd_old_build [CONFIG_BYTES]: another build's program attached directly to the receiver's
# veth, on our pins: a program of its own that uses the pinned ban table and, with
# CONFIG_BYTES, a pinned config entry of that size put in place of ours (an older layout).
xbd_old_build() {
	local pin=/sys/fs/bpf/xbd-old-$$ rc config_map='' config_use=1 maps=()
	if [[ -n ${1:-} ]]; then
		config_map="struct { __uint(type, BPF_MAP_TYPE_ARRAY); __uint(key_size, 4); __uint(value_size, $1); __uint(max_entries, 1); } xdpban_config SEC(\".maps\");"
		config_use='bpf_map_lookup_elem(&xdpban_config, &zero) != 0'
		maps=(map name xdpban_config pinned "$XBD_PIN/xdpban_config")
		rm -f "$XBD_PIN/xdpban_config"
		bpftool map create "$XBD_PIN/xdpban_config" type array key 4 value "$1" entries 1 \
			name xdpban_config || return 1
	fi
	cat >"$XBD_TMP/old.bpf.c" <<EOF
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(key_size, 4);
	__uint(value_size, 128);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_MMAPABLE);
} xdpban_bans SEC(".maps");
$config_map
SEC("xdp") int old_build(struct xdp_md *ctx)
{
	__u32 zero = 0;
	return bpf_map_lookup_elem(&xdpban_bans, &zero) && $config_use ? XDP_DROP : XDP_PASS;
}
char LICENSE[] SEC("license") = "GPL";
EOF
	clang -g -O2 -target bpf -I"/usr/include/$(gcc -print-multiarch)" -c "$XBD_TMP/old.bpf.c" \
		-o "$XBD_TMP/old.o" &&
		bpftool prog load "$XBD_TMP/old.o" "$pin" type xdp \
			map name xdpban_bans pinned "$XBD_PIN/xdpban_bans" "${maps[@]}" &&
		nsenter --net="/run/netns/$XBD_NS_R" ip -force link set dev "$XBD_IF_R" xdpdrv pinned "$pin"
	rc=$?
	rm -f "$pin" # the attachment holds the program
	return $rc
}

# xbd_prog_id [IFACE]: the id of the XDP program on the receiver's veth (or its IFACE), or nothing.
xbd_prog_id() {
	ip -n "$XBD_NS_R" -j -d link show dev "${1:-$XBD_IF_R}" |
		"$XBD_PY" -c 'import json, sys; x = json.load(sys.stdin)[0].get("xdp"); print(x["prog"]["id"] if x else "")'
}

# xbd_log_has TEXT: the daemon logged a line containing TEXT.
xbd_log_has() { grep -qF -- "$1" "$XBD_LOG"; }

# xbd_check_t NAME WANT_RC WANT_TEXT ARGS...: xdpband ARGS in the receiver namespace must exit
# WANT_RC within 5 s, with one line containing WANT_TEXT; otherwise the problem goes into the
# caller's array $bad.
xbd_check_t() {
	local name=$1 want_rc=$2 want=$3 out rc t0
	shift 3
	t0=$(date +%s%N)
	out=$(nsenter --net="/run/netns/$XBD_NS_R" timeout 20 "$XBD_BIN/xdpband" "$@" 2>&1)
	rc=$?
	if ((rc != want_rc)) || [[ $(wc -l <<<"$out") != 1 || $out != *"$want"* ]]; then
		bad+=("$name: exit $rc, '${out:0:200}'")
	elif (($(date +%s%N) - t0 > 5000000000)); then
		bad+=("$name: took more than 5 s")
	fi
}

# xbd_checks_done CASE: PASS when $bad is empty and no check left pins or a socket.
xbd_checks_done() {
	if ((${#bad[@]})); then
		xbd_fail "$1" "${#bad[@]} wrong: ${bad[*]:0:3}"
	elif [[ -e $XBD_PIN || -e $XBD_SOCK ]]; then
		xbd_fail "$1" "a check or a refused start left pins or a socket"
	else
		xbd_pass "$1"
	fi
}
