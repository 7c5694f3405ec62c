#!/usr/bin/env bash
# e2e_kernels.sh BUILD - the kernel matrix: boots Debian 12's stock kernel (the newest
# linux-image-6.1.0-*-cloud-amd64 of Debian's archive) under QEMU with TCG and runs the kernel
# check there (BUILD/kernel/kcheck.static, tests/kernel/kcheck.c): every program of this
# build's object loaded as xdpband loads it and held to the same budget of processed
# instructions as on this machine (tests/e2e/e2e_verifier.sh), xdpban attached natively to a veth
# directly and through libxdp (whose dispatcher this machine's kernel refuses), and the
# verdict rows. `make test-kernels` runs it alone, `make test` with the rest.
#
# The kernel package is downloaded once into BUILD/kernels/ (apt-get download, dpkg -x); a
# rerun boots the cached one unless Debian's archive has a newer one. The initramfs is built
# in a temporary directory from busybox-static, tests/kernel/init.sh, veth.ko of the same
# package and the check, and removed at exit with everything else this test makes. It needs no
# network but Debian's archive, root only to refresh apt's lists when they name no such package,
# and changes nothing on this machine but the cache.
# shellcheck disable=SC2317 # the cases are called through e2e_case
set -uo pipefail
build=${1:-build}
cd "$(dirname "$0")/../.." || exit 1
source tests/e2e/e2e_lib.sh

readonly BUDGET=250000
readonly TIMEOUT_S=300 # a big program's load takes 10 to 30 s under TCG
readonly PKG_RE='^linux-image-6\.1\.0-[0-9]+-cloud-amd64$'
readonly DISPATCHER=/usr/lib/x86_64-linux-gnu/bpf/xdp-dispatcher.o
cache=$build/kernels
check=$build/kernel/kcheck.static

tmp=$(mktemp -d /tmp/xbkernels.XXXXXX) || exit 1
e2e_defer rm -rf "$tmp"

missing_tools() {
	local t missing=()
	for t in qemu-system-x86_64 busybox cpio dpkg-deb apt-get; do
		command -v "$t" >/dev/null || missing+=("$t")
	done
	# Debian's busybox package is linked dynamically: only busybox-static's runs in the VM.
	if command -v busybox >/dev/null && ldd "$(command -v busybox)" >/dev/null 2>&1; then
		missing+=("a static busybox (busybox-static)")
	fi
	[[ -x $check ]] || missing+=("$check (make builds it)")
	((${#missing[@]} == 0)) && return 0
	E2E_WHY="missing ${missing[*]}: run 'make deps' and make"
	return 1
}

# The newest Debian 12 kernel package apt knows of, and its version ("6.1.N-M").
newest_package() {
	apt-cache search --names-only "$PKG_RE" 2>/dev/null | awk '{print $1}' | sort -V | tail -1
}

package_version() {
	apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ {print $2}'
}

# find_package: sets pkg, the package to boot; from apt's lists (refreshed once when they have
# none), else the newest in the cache.
find_package() {
	pkg=$(newest_package)
	if [[ -z $pkg && $(id -u) -eq 0 ]]; then
		apt-get update -qq >/dev/null 2>&1
		pkg=$(newest_package)
	fi
	if [[ -z $pkg ]]; then
		pkg=$(find "$cache" -mindepth 1 -maxdepth 1 -type d -name 'linux-image-6.1.0-*' \
			-printf '%f\n' 2>/dev/null | sort -V | tail -1)
		[[ -n $pkg ]] && return 0
		E2E_WHY="no package matching $PKG_RE in apt's lists and none in $cache: 'apt-get update', then rerun (needs Debian's archive)"
		return 1
	fi
	local version
	version=$(package_version "$pkg")
	[[ $version == 6.1.* ]] && return 0
	E2E_WHY="$pkg has version '${version:-none}', not Debian 12's 6.1"
	return 1
}

# fetch_package: the package unpacked in $cache/$pkg, downloaded if it is not there yet.
fetch_package() {
	local dir=$cache/$pkg out
	[[ -f $dir/unpacked ]] && return 0
	if ! rm -rf "$dir" || ! mkdir -p "$dir/deb"; then
		E2E_WHY="cannot create $dir"
		return 1
	fi
	if ! out=$(cd "$dir/deb" && apt-get download -q -o APT::Sandbox::User=root "$pkg" 2>&1); then
		E2E_WHY="cannot download $pkg from Debian's archive: $(grep -m1 '^E:' <<<"$out" ||
			grep -m1 . <<<"$out")"
		rm -rf "$dir"
		return 1
	fi
	if ! dpkg-deb -x "$dir"/deb/*.deb "$dir/root" || ! rm -f "$dir"/deb/*.deb; then
		E2E_WHY="cannot unpack $pkg in $dir"
		return 1
	fi
	touch "$dir/unpacked"
}

# The initramfs: busybox, the check, veth.ko, libxdp's dispatcher and tests/kernel/init.sh as
# /init. Debian's libxdp.a loads the dispatcher it embeds first; the file, which /init names in
# LIBXDP_OBJECT_PATH, serves a libxdp.a without one.
make_initramfs() {
	local root=$tmp/initramfs veth
	veth=$(find "$cache/$pkg/root/lib/modules" -name veth.ko | head -1)
	[[ -n $veth ]] || { E2E_WHY="$pkg has no veth.ko"; return 1; }
	mkdir -p "$root/bin" "$root/lib/bpf" || return 1
	if ! cp "$(command -v busybox)" "$root/bin/busybox" || ! cp "$check" "$root/kcheck" ||
		! cp "$veth" "$root/veth.ko" || ! install -m 0755 tests/kernel/init.sh "$root/init"; then
		E2E_WHY="cannot fill $root"
		return 1
	fi
	[[ -f $DISPATCHER ]] && cp "$DISPATCHER" "$root/lib/bpf/"
	echo "--budget $BUDGET --attach kva --verdicts" >"$root/kcheck.args"
	(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$tmp/initramfs.gz" ||
		{ E2E_WHY="cpio failed"; return 1; }
}

# boot: runs the VM to its end or the timeout; the kernel's console (first serial line) in
# $tmp/console, what /init prints (second serial line) in $tmp/check.
boot() {
	local vmlinuz t0=$SECONDS
	vmlinuz=$(find "$cache/$pkg/root/boot" -name 'vmlinuz-*' | head -1)
	[[ -n $vmlinuz ]] || { E2E_WHY="$pkg has no vmlinuz"; return 1; }
	timeout -k 5 "$TIMEOUT_S" qemu-system-x86_64 -accel tcg -cpu max -smp 1 -m 2048 \
		-display none -monitor none -serial "file:$tmp/console" -serial "file:$tmp/check" \
		-no-reboot -nic none -kernel "$vmlinuz" -initrd "$tmp/initramfs.gz" \
		-append "console=ttyS0 panic=-1 quiet" >"$tmp/qemu.out" 2>&1 </dev/null &
	e2e_defer kill "$!"
	wait "$!"
	vm_rc=$? vm_s=$((SECONDS - t0))
	# As text: no carriage returns, no terminal escapes (SeaBIOS clears the screen).
	local f
	for f in console check; do
		touch "$tmp/$f"
		sed -E $'s/\r//g; s/\x1b(\\[[0-9;?]*[a-zA-Z]|c)//g' "$tmp/$f" >"$tmp/$f.txt"
	done
	return 0
}

# The check's lines, as the VM printed them, each result named with the kernel.
show_results() {
	local release=$1
	sed -n '/^KCHECK-BEGIN$/,/^KCHECK-END /p' "$tmp/check.txt" | sed '1d;$d' |
		sed -E "s/^(PASS|FAIL|SKIP): /\1: [$release] /"
}

# The VM reached /init and the check ran to its end: 0, with init_s and end_s (uptimes) and rc
# (the check's exit status).
vm_finished() {
	local end
	init_s=$(sed -n 's/^KCHECK-INIT uptime \([0-9.]*\) s$/\1/p' "$tmp/check.txt")
	end=$(sed -n 's/^KCHECK-END \([0-9]*\) uptime \([0-9.]*\) s$/\1 \2/p' "$tmp/check.txt")
	if [[ -z $init_s ]]; then
		E2E_WHY="$release did not reach /init (qemu status $vm_rc after $vm_s s$( ((vm_rc == 124)) && echo ": the timeout")); the console's last lines: $(tail -n 3 "$tmp/console.txt" | tr '\n' ' ')$(grep -q . "$tmp/qemu.out" && echo "; qemu: $(tail -n 2 "$tmp/qemu.out" | tr '\n' ' ')")"
		return 1
	fi
	echo "$release ($(package_version "$pkg")): /init after $init_s s"
	if [[ -z $end ]]; then
		E2E_WHY="the check did not finish on $release (qemu status $vm_rc after $vm_s s$( ((vm_rc == 124)) && echo ": the timeout")); its last lines: $(tail -n 3 "$tmp/check.txt" | tr '\n' ' ')"
		return 1
	fi
	read -r rc end_s <<<"$end"
}

case_boot() {
	find_package && fetch_package && make_initramfs && boot || return 1
	release=${pkg#linux-image-}
	vm_finished && finished=1
}

# Shows the check's lines; each FAIL among them is a failure of this test.
case_results() {
	local out fails
	out=$(show_results "$release")
	echo "$out"
	fails=$(grep -c '^FAIL: ' <<<"$out")
	E2E_FAILED=$((E2E_FAILED + fails))
	echo "$release: the check took $(awk -v a="$end_s" -v b="$init_s" 'BEGIN {printf "%.1f", a - b}') s, the VM $vm_s s in all"
	((rc != 0 && fails == 0)) && e2e_fail "check on $release" "exit $rc without a FAIL line"
}

if ! missing_tools; then
	e2e_fail "kernels" "$E2E_WHY"
	e2e_finish
fi
release='' finished=''
e2e_case "boot Debian 12's 6.1 and run the check to its end" case_boot
[[ -n $finished ]] && case_results
e2e_finish
