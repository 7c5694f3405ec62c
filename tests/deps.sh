#!/usr/bin/env bash
# deps.sh - installs the Debian packages xdpban needs to build, test, demo and bench.
# Idempotent and quiet when everything is present; also mounts bpffs if it is missing.
set -euo pipefail

# libclang-rt-14-dev: clang's libFuzzer and sanitizer runtimes (the fuzz harnesses); only
# recommended by clang, so --no-install-recommends would leave it out.
# opentracker, python3-libtorrent, nmap, dnsmasq-base: the real tracker, BitTorrent client,
# scanner and DNS server of tests/e2e_tracker.sh and tests/e2e_probe.sh.
PKGS=(
	clang libclang-rt-14-dev llvm libbpf-dev libxdp-dev bpftool xdp-tools libelf-dev zlib1g-dev
	pkg-config libcmocka-dev libinih-dev libjson-c-dev libmicrohttpd-dev gcc make
	iproute2 iputils-ping curl python3-scapy nftables iptables ipset util-linux procps iperf3
	opentracker python3-libtorrent nmap dnsmasq-base
)

missing=()
for p in "${PKGS[@]}"; do
	status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	[[ "$status" == "install ok installed" ]] || missing+=("$p")
done

if ((${#missing[@]})); then
	if [[ $(id -u) -ne 0 ]]; then
		echo "deps: missing packages: ${missing[*]} (run 'make deps' as root to install them)" >&2
		exit 1
	fi
	echo "deps: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
	# opentracker's package enables and starts a tracker on every address of the machine; the
	# tests run their own inside a namespace, so the one installed just now is stopped again.
	if [[ " ${missing[*]} " == *" opentracker "* && -d /run/systemd/system ]]; then
		systemctl disable --now opentracker.service >/dev/null 2>&1 || true
	fi
fi

# Pinned maps need bpffs; a fresh machine may not have it mounted.
if [[ $(id -u) -eq 0 ]] && ! mountpoint -q /sys/fs/bpf; then
	mount -t bpf bpf /sys/fs/bpf
fi
exit 0
