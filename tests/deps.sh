#!/usr/bin/env bash
# deps.sh [demo] - installs the Debian packages xdpban needs to build, test, demo and bench;
# with "demo", only those that building the programs and running `make demo` need (BUILD_PKGS
# and DEMO_PKGS), so that a first demo does not wait for the test suite's servers and tools.
# Idempotent and quiet when everything is present; also mounts bpffs if it is missing.
set -euo pipefail

# libclang-rt-14-dev: clang's libFuzzer and sanitizer runtimes (the fuzz harnesses); only
# recommended by clang, so --no-install-recommends would leave it out.
# opentracker, python3-libtorrent, nmap, dnsmasq-base: the real tracker, BitTorrent client,
# scanner and DNS server of tests/e2e/e2e_tracker.sh and tests/e2e/e2e_probe.sh.
# fail2ban: the real fail2ban that tests/e2e/e2e_fail2ban.sh drives through deploy/fail2ban/.
# prometheus: the real Prometheus server that tests/e2e/e2e_prometheus.sh runs the queries of the
# Grafana dashboard deploy/grafana/ through.
# zmap: its shipped blocklist (/etc/zmap/blacklist.conf), loaded unedited by
# tests/e2e/e2e_lists_runtime.sh.
# libncurses-dev: the curses of `xdpban top`; tmux: the real terminal of tests/e2e/e2e_top.sh.
# libhiredis-dev: xdpband's Redis client ([fleet]); libssl-dev: the HMAC that signs its
# entries; redis-server: the real Redis of tests/e2e/e2e_fleet.sh.
# libsystemd-dev: the journal fields of xdpband's log (sd_journal_sendv); systemd: the real
# systemd-journald, journalctl and systemd-cat of that case in tests/e2e/e2e_daemon.sh.
# stunnel4: the TLS that carries the fleet's Redis link (deploy/stunnel/); openssl makes the
# run's CA and certificate, and tcpdump shows the link is TLS on the wire, in
# tests/e2e/e2e_fleet_tls.sh. Nothing starts at install: stunnel4 runs only the configs in
# /etc/stunnel/, which it ships empty.
# libzstd-dev: the last of the static libraries build/kernel/kcheck.static links; qemu-system-x86,
# busybox-static, cpio: the VM of Debian 12's kernel that tests/e2e/e2e_kernels.sh boots (its kernel
# package comes from Debian's archive at the first run, with apt-get download).
# debhelper, dpkg-dev, lintian: `make deb` (debian/, Rules-Requires-Root: no, so no fakeroot) and
# its check, tests/e2e/e2e_deb.sh.
# The programs, the library and the BPF object: what `make deb` and `make demo` build.
BUILD_PKGS=(
	clang llvm libbpf-dev libxdp-dev bpftool libelf-dev zlib1g-dev pkg-config libinih-dev
	libjson-c-dev libmicrohttpd-dev gcc make libncurses-dev libhiredis-dev libssl-dev libzstd-dev
	libsystemd-dev
)
# What deploy/demo.sh runs beside them: namespaces and veth, its scapy sender, ping and curl.
DEMO_PKGS=(iproute2 iputils-ping curl python3-scapy util-linux procps)
# The tests, fuzzers and benches.
TEST_PKGS=(
	libclang-rt-14-dev xdp-tools libcmocka-dev nftables iptables ipset iperf3
	opentracker python3-libtorrent nmap dnsmasq-base fail2ban prometheus tmux zmap
	redis-server stunnel4 openssl tcpdump qemu-system-x86 busybox-static cpio debhelper dpkg-dev
	lintian systemd
)
case ${1:-all} in
demo) PKGS=("${BUILD_PKGS[@]}" "${DEMO_PKGS[@]}") ;;
all) PKGS=("${BUILD_PKGS[@]}" "${DEMO_PKGS[@]}" "${TEST_PKGS[@]}") ;;
*) echo "deps: unknown set '$1' (demo, or none for everything)" >&2; exit 2 ;;
esac

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
	# opentracker's, fail2ban's and prometheus's packages enable and start their service (a
	# tracker on every address of the machine; fail2ban's sshd jail with its own firewall rules;
	# a Prometheus server on port 9090 of every address; Redis on 127.0.0.1:6379); the tests run their own inside a
	# namespace or a private directory, so the ones installed just now are stopped again.
	# Without systemd, their init scripts started them.
	for svc in opentracker fail2ban prometheus redis-server; do
		[[ " ${missing[*]} " == *" $svc "* ]] || continue
		if [[ -d /run/systemd/system ]]; then
			systemctl disable --now "$svc.service" >/dev/null 2>&1 || true
		elif [[ -x /etc/init.d/$svc ]]; then
			{ "/etc/init.d/$svc" stop; update-rc.d "$svc" disable; } >/dev/null 2>&1 || true
		fi
	done
fi

# Pinned maps need bpffs; a fresh machine may not have it mounted.
if [[ $(id -u) -eq 0 ]] && ! mountpoint -q /sys/fs/bpf; then
	mount -t bpf bpf /sys/fs/bpf
fi
exit 0
