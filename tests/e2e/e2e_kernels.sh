#!/usr/bin/env bash
# e2e_kernels.sh BUILD - the kernel matrix: boots Debian 12's stock kernel under QEMU with TCG
# (tests/e2e/vm_lib.sh) and runs the kernel check there (BUILD/kernel/kcheck.static,
# tests/kernel/kcheck.c): every program of this build's object loaded as xdpband loads it and
# held to the same budget of processed instructions as on this machine
# (tests/e2e/e2e_verifier.sh), xdpban attached natively to a veth directly and through libxdp
# (whose dispatcher this machine's kernel refuses), and the verdict rows. `make test-kernels`
# runs it alone, `make test` with the rest.
#
# The kernel package is cached in BUILD/kernels/. The initramfs (vm_lib.sh's, with veth.ko of
# the same package, libxdp's dispatcher and the check) is built in a temporary directory and
# removed at exit with everything else this test makes; nothing else changes on this machine.
# shellcheck disable=SC2317 # the cases are called through e2e_case
set -uo pipefail
build=${1:-build}
cd "$(dirname "$0")/../.." || exit 1
source tests/e2e/e2e_lib.sh

source tests/e2e/vm_lib.sh

readonly BUDGET=250000
readonly TIMEOUT_S=300 # a big program's load takes 10 to 30 s under TCG
readonly DISPATCHER=/usr/lib/x86_64-linux-gnu/bpf/xdp-dispatcher.o
cache=$build/kernels
check=$build/kernel/kcheck.static

tmp=$(mktemp -d /tmp/xbkernels.XXXXXX) || exit 1
e2e_defer rm -rf "$tmp"

# The initramfs: vm_lib.sh's, the check, veth.ko and libxdp's dispatcher. Debian's libxdp.a
# loads the dispatcher it embeds first; the file, which /init names in LIBXDP_OBJECT_PATH,
# serves a libxdp.a without one.
make_initramfs() {
	local root=$tmp/initramfs veth
	veth=$(find "$vm_root/lib/modules" -name veth.ko | head -1)
	[[ -n $veth ]] || { VM_WHY="$vm_pkg has no veth.ko"; return 1; }
	vm_initramfs_start "$root" && mkdir -p "$root/lib/bpf" || return 1
	if ! cp "$check" "$root/kcheck" || ! cp "$veth" "$root/veth.ko"; then
		VM_WHY="cannot fill $root"
		return 1
	fi
	[[ -f $DISPATCHER ]] && cp "$DISPATCHER" "$root/lib/bpf/"
	echo "/kcheck --budget $BUDGET --attach kva --verdicts" >"$root/vm.cmd"
	vm_initramfs_pack "$root" "$tmp/initramfs.gz"
}

# The check's lines, as the VM printed them, each result named with the kernel.
show_results() {
	vm_output "$tmp" | sed -E "s/^(PASS|FAIL|SKIP): /\1: [$vm_release] /"
}

case_boot() {
	if ! vm_prepare "$cache" || ! make_initramfs || ! vm_boot "$tmp" "$tmp/initramfs.gz" "$TIMEOUT_S"; then
		E2E_WHY=$VM_WHY
		return 1
	fi
	vm_finished "$tmp"
	local rc=$?
	[[ -n $vm_init_s ]] && echo "$vm_release ($(vm_package_version "$vm_pkg")): /init after $vm_init_s s"
	((rc == 0)) || { E2E_WHY=$VM_WHY; return 1; }
	finished=1
}

# Shows the check's lines; each FAIL among them is a failure of this test.
case_results() {
	local out fails
	out=$(show_results)
	echo "$out"
	fails=$(grep -c '^FAIL: ' <<<"$out")
	E2E_FAILED=$((E2E_FAILED + fails))
	echo "$vm_release: the check took $(awk -v a="$vm_end_s" -v b="$vm_init_s" 'BEGIN {printf "%.1f", a - b}') s, the VM $vm_s s in all"
	((vm_cmd_rc != 0 && fails == 0)) && e2e_fail "check on $vm_release" "exit $vm_cmd_rc without a FAIL line"
}

if ! vm_missing_tools "$check"; then
	e2e_fail "kernels" "$VM_WHY"
	e2e_finish
fi
finished=''
e2e_case "boot Debian 12's 6.1 and run the check to its end" case_boot
[[ -n $finished ]] && case_results
e2e_finish
