#!/usr/bin/env bash
# xdp_filter.sh - puts xdp-filter (Debian xdp-tools) on a veth in a
# namespace of its own, then runs build/bench/peer, which measures its program against
# xdpban's in the BPF_PROG_TEST_RUN harness. Usage: bench/xdp_filter.sh BUILD MODE
#
# xdp-filter keeps its state pinned in one system-wide place (/sys/fs/bpf/xdp-filter), so
# only one run at a time may use it: this takes a lock (another bench run holding it means a
# skip, exit 77), and refuses to run (skip) when that directory exists without the lock held:
# it belongs to someone else. Everything made here (namespace, veth, xdp-filter's program and
# pins) is removed on exit, also on failure or interruption.
set -uo pipefail
build=${1:?usage: $0 BUILD MODE} mode=${2:?usage: $0 BUILD MODE}
cd "$(dirname "$0")/.." || exit 1

NS=xbbench-xf-$$
DEV=xbbxf-a
PEER=xbbxf-b
PIN=/sys/fs/bpf/xdp-filter
in_ns() { nsenter --net="/run/netns/$NS" "$@"; }

skip() {
	echo "bench: xdp-filter: skipped ($1)" >&2
	exit 77
}

command -v xdp-filter >/dev/null || skip "xdp-filter is not installed (Debian package xdp-tools)"
[[ -x $build/bench/peer ]] || {
	echo "bench: xdp-filter: $build/bench/peer is missing; run make first" >&2
	exit 1
}
exec 9>/run/lock/xbbench-xdp-filter.lock || {
	echo "bench: xdp-filter: cannot open /run/lock/xbbench-xdp-filter.lock" >&2
	exit 1
}
flock -n 9 || skip "another bench run is using xdp-filter (/run/lock/xbbench-xdp-filter.lock)"
[[ -e $PIN ]] && skip "$PIN exists: another xdp-filter is loaded on this machine"
ip netns list | grep -qw "$NS" && skip "namespace $NS exists: another bench run is going on"

child=
cleanup() {
	if [[ -n $child ]]; then
		kill "$child" 2>/dev/null
		wait "$child" 2>/dev/null
	fi
	if [[ -e /run/netns/$NS ]]; then
		in_ns xdp-filter unload "$DEV" >/dev/null 2>&1
		ip netns del "$NS" 2>/dev/null
	fi
	# Pins xdp-filter could not remove itself (it was interrupted): ours, since none existed.
	[[ -d $PIN ]] && rm -rf "$PIN"
	return 0
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Both ends stay down: no live frame may reach xdp-filter and blur its verdict counts.
ip netns add "$NS" &&
	ip -n "$NS" link add "$DEV" type veth peer name "$PEER" || {
	echo "bench: xdp-filter: cannot create namespace $NS with veth $DEV" >&2
	exit 1
}

# Native mode, every feature, default policy (listed addresses are dropped). No dispatcher, so
# the attached program is xdp-filter's own and xdpban's is measured the same way.
if ! out=$(LIBXDP_SKIP_DISPATCHER=1 in_ns xdp-filter load -m native \
	-f tcp,udp,ipv4,ipv6,ethernet "$DEV" 2>&1); then
	echo "bench: xdp-filter: xdp-filter load failed: $out" >&2
	exit 1
fi
id=$(ip -n "$NS" link show dev "$DEV" | grep -o 'prog/xdp id [0-9]*' | grep -o '[0-9]*$')
name=$(bpftool prog show id "${id:-0}" 2>/dev/null | sed -n 's/^[0-9]*: xdp  name \([^ ]*\).*/\1/p')
if [[ -z $id || $name != xdpfilt_* ]]; then
	echo "bench: xdp-filter: no xdp-filter program on $DEV (found id '${id:-none}', '${name:-?}')" >&2
	exit 1
fi

"$build/bench/peer" --build "$build" --mode "$mode" --prog-id "$id" --pin-dir "$PIN" &
child=$!
wait "$child"
rc=$?
child=
exit $rc
