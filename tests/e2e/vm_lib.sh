# shellcheck shell=bash
# shellcheck disable=SC2034 # the callers read the variables the functions set
# vm_lib.sh - boots Debian 12's stock kernel (the newest linux-image-6.1.0-*-cloud-amd64 of
# Debian's archive) under QEMU with TCG, on an initramfs of busybox-static,
# tests/kernel/init.sh as /init and the files a caller puts in, and reads back what the shell
# script the caller writes to the initramfs's /vm.cmd printed. Sourced by
# tests/e2e/e2e_kernels.sh (the kernel matrix) and bench/profile.sh (instructions per packet).
#
# The kernel package is downloaded once into a cache (apt-get download, dpkg -x); a rerun
# boots the cached one unless Debian's archive has a newer one. Needs no network but Debian's
# archive, root only to refresh apt's lists when they name no such package. A function that
# fails returns 1 and says why in VM_WHY.

readonly VM_PKG_RE='^linux-image-6\.1\.0-[0-9]+-cloud-amd64$'
VM_WHY=''

# vm_missing_tools [FILE...]: 0 when QEMU, busybox-static, cpio, dpkg-deb, apt-get and every
# FILE are there.
vm_missing_tools() {
	local t f missing=()
	for t in qemu-system-x86_64 busybox cpio dpkg-deb apt-get; do
		command -v "$t" >/dev/null || missing+=("$t")
	done
	# Debian's busybox package is linked dynamically: only busybox-static's runs in the VM.
	if command -v busybox >/dev/null && ldd "$(command -v busybox)" >/dev/null 2>&1; then
		missing+=("a static busybox (busybox-static)")
	fi
	for f in "$@"; do
		[[ -e $f ]] || missing+=("$f (make builds it)")
	done
	((${#missing[@]} == 0)) && return 0
	VM_WHY="missing ${missing[*]}: run 'make deps' and make"
	return 1
}

# The newest Debian 12 kernel package apt knows of, and its version ("6.1.N-M").
vm_newest_package() {
	apt-cache search --names-only "$VM_PKG_RE" 2>/dev/null | awk '{print $1}' | sort -V | tail -1
}

vm_package_version() {
	apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ {print $2}'
}

# vm_find_package CACHE: sets vm_pkg, the package to boot; from apt's lists (refreshed once
# when they have none), else the newest in CACHE.
vm_find_package() {
	local cache=$1 version
	vm_pkg=$(vm_newest_package)
	if [[ -z $vm_pkg && $(id -u) -eq 0 ]]; then
		apt-get update -qq >/dev/null 2>&1
		vm_pkg=$(vm_newest_package)
	fi
	if [[ -z $vm_pkg ]]; then
		vm_pkg=$(find "$cache" -mindepth 1 -maxdepth 1 -type d -name 'linux-image-6.1.0-*' \
			-printf '%f\n' 2>/dev/null | sort -V | tail -1)
		[[ -n $vm_pkg ]] && return 0
		VM_WHY="no package matching $VM_PKG_RE in apt's lists and none in $cache: 'apt-get update', then rerun (needs Debian's archive)"
		return 1
	fi
	version=$(vm_package_version "$vm_pkg")
	[[ $version == 6.1.* ]] && return 0
	VM_WHY="$vm_pkg has version '${version:-none}', not Debian 12's 6.1"
	return 1
}

# vm_fetch_package CACHE: the package unpacked in CACHE/$vm_pkg, downloaded if it is not
# there yet.
vm_fetch_package() {
	local dir=$1/$vm_pkg out
	[[ -f $dir/unpacked ]] && return 0
	if ! rm -rf "$dir" || ! mkdir -p "$dir/deb"; then
		VM_WHY="cannot create $dir"
		return 1
	fi
	if ! out=$(cd "$dir/deb" && apt-get download -q -o APT::Sandbox::User=root "$vm_pkg" 2>&1); then
		VM_WHY="cannot download $vm_pkg from Debian's archive: $(grep -m1 '^E:' <<<"$out" ||
			grep -m1 . <<<"$out")"
		rm -rf "$dir"
		return 1
	fi
	if ! dpkg-deb -x "$dir"/deb/*.deb "$dir/root" || ! rm -f "$dir"/deb/*.deb; then
		VM_WHY="cannot unpack $vm_pkg in $dir"
		return 1
	fi
	touch "$dir/unpacked"
}

# vm_prepare CACHE: vm_find_package, then vm_fetch_package; sets vm_root, the unpacked
# package, and vm_release ("6.1.0-N-cloud-amd64").
vm_prepare() {
	vm_find_package "$1" && vm_fetch_package "$1" || return 1
	vm_root=$1/$vm_pkg/root
	vm_release=${vm_pkg#linux-image-}
}

# vm_initramfs_start DIR: DIR becomes the root of an initramfs with busybox and /init; the
# caller adds its files and writes the script to run to DIR/vm.cmd.
vm_initramfs_start() {
	local root=$1
	if ! mkdir -p "$root/bin" || ! cp "$(command -v busybox)" "$root/bin/busybox" ||
		! install -m 0755 tests/kernel/init.sh "$root/init"; then
		VM_WHY="cannot fill $root"
		return 1
	fi
}

# vm_initramfs_pack DIR OUT: the initramfs of DIR, gzipped, in OUT.
vm_initramfs_pack() {
	(cd "$1" && find . | cpio -o -H newc --quiet | gzip -1) >"$2" ||
		{ VM_WHY="cpio failed"; return 1; }
}

# vm_boot TMP INITRAMFS TIMEOUT_S [QEMU_ARG...]: runs the VM of $vm_root's kernel to its end
# or the timeout; the kernel's console (first serial line) as text in TMP/console.txt, what
# /init prints (second serial line) in TMP/vm.txt; vm_rc is QEMU's status, vm_s its seconds.
vm_boot() {
	local tmp=$1 initramfs=$2 timeout_s=$3 vmlinuz t0=$SECONDS pid f
	shift 3
	vmlinuz=$(find "$vm_root/boot" -name 'vmlinuz-*' | head -1)
	[[ -n $vmlinuz ]] || { VM_WHY="$vm_pkg has no vmlinuz"; return 1; }
	timeout -k 5 "$timeout_s" qemu-system-x86_64 -accel tcg -cpu max -smp 1 -m 4096 "$@" \
		-display none -monitor none -serial "file:$tmp/console" -serial "file:$tmp/vm" \
		-no-reboot -nic none -kernel "$vmlinuz" -initrd "$initramfs" \
		-append "console=ttyS0 panic=-1 quiet" >"$tmp/qemu.out" 2>&1 </dev/null &
	pid=$!
	wait "$pid"
	vm_rc=$? vm_s=$((SECONDS - t0))
	# As text: no carriage returns, no terminal escapes (SeaBIOS clears the screen).
	for f in console vm; do
		touch "$tmp/$f"
		sed -E $'s/\r//g; s/\x1b(\\[[0-9;?]*[a-zA-Z]|c)//g' "$tmp/$f" >"$tmp/$f.txt"
	done
	return 0
}

# vm_finished TMP: the VM reached /init and the command ran to its end: 0, with vm_init_s and
# vm_end_s (uptimes) and vm_cmd_rc (the command's exit status).
vm_finished() {
	local tmp=$1 end
	vm_init_s=$(sed -n 's/^VM-INIT uptime \([0-9.]*\) s$/\1/p' "$tmp/vm.txt")
	end=$(sed -n 's/^VM-END \([0-9]*\) uptime \([0-9.]*\) s$/\1 \2/p' "$tmp/vm.txt")
	if [[ -z $vm_init_s ]]; then
		VM_WHY="$vm_release did not reach /init (qemu status $vm_rc after $vm_s s$( ((vm_rc == 124)) && echo ": the timeout")); the console's last lines: $(tail -n 3 "$tmp/console.txt" | tr '\n' ' ')$(grep -q . "$tmp/qemu.out" && echo "; qemu: $(tail -n 2 "$tmp/qemu.out" | tr '\n' ' ')")"
		return 1
	fi
	if [[ -z $end ]]; then
		VM_WHY="the command did not finish on $vm_release (qemu status $vm_rc after $vm_s s$( ((vm_rc == 124)) && echo ": the timeout")); its last lines: $(tail -n 3 "$tmp/vm.txt" | tr '\n' ' ')"
		return 1
	fi
	read -r vm_cmd_rc vm_end_s <<<"$end"
}

# vm_output TMP: what the command printed.
vm_output() {
	sed -n '/^VM-BEGIN$/,/^VM-END /p' "$1/vm.txt" | sed '1d;$d'
}
