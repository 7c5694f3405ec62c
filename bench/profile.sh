#!/usr/bin/env bash
# profile.sh BUILD MODE - instructions per packet: runs the pipeline workload
# (BUILD/bench/pipeline.static, bench/pipeline.c) in Debian 12's 6.1 kernel under QEMU with TCG
# and `-icount shift=0` (tests/e2e/vm_lib.sh), where the guest's clock advances one nanosecond
# per instruction executed, so that the pipeline's ns per packet there count instructions.
# Prints the "Instructions per packet" section (bench/profile.py) on stdout; with
# XB_BENCH_WORK set (bench/run.sh sets it) and the pipeline's section of this run in
# $XB_BENCH_WORK/pipeline.md, it sets the counts beside this machine's ns.
#
# The VM needs no network; the kernel package is downloaded once into BUILD/kernels/, as for
# tests/e2e/e2e_kernels.sh. Everything else it makes is in a temporary directory, removed on
# exit. Exit 77 (skipped) when QEMU or the kernel cannot be had.
set -uo pipefail
build=${1:?usage: profile.sh BUILD smoke|quick|full} mode=${2:?usage: profile.sh BUILD MODE}
cd "$(dirname "$0")/.." || exit 1
source tests/e2e/vm_lib.sh

readonly TIMEOUT_S=1200 # the quick state (a million prefixes and sources) fills in about a minute
pipeline=$build/bench/pipeline.static

tmp=$(mktemp -d /tmp/xbprofile.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT

skip() {
	echo "bench: profile: skipped ($1)" >&2
	exit 77
}

# The initramfs: the pipeline and the BPF objects it opens by path, under /b as under BUILD.
make_initramfs() {
	local root=$tmp/initramfs
	vm_initramfs_start "$root" && mkdir -p "$root/b/bench/bpf" || return 1
	if ! cp "$pipeline" "$root/pipeline" || ! cp "$build/bare_drop.bpf.o" "$root/b/" ||
		! cp "$build"/bench/bpf/*.bpf.o "$root/b/bench/bpf/"; then
		VM_WHY="cannot fill $root"
		return 1
	fi
	cat >"$root/vm.cmd" <<-SH
		/pipeline --build /b --mode $mode --runs 1 >/pipeline.md 2>/pipeline.log
		rc=\$?
		cat /pipeline.log
		echo PIPELINE-MD
		cat /pipeline.md
		exit \$rc
	SH
	vm_initramfs_pack "$root" "$tmp/initramfs.gz"
}

vm_missing_tools "$pipeline" "$build/bare_drop.bpf.o" || skip "$VM_WHY"
vm_prepare "$build/kernels" || skip "$VM_WHY"
make_initramfs || { echo "bench: profile: $VM_WHY" >&2; exit 1; }
echo "profile: the pipeline in $vm_release under QEMU, one instruction a nanosecond" >&2
vm_boot "$tmp" "$tmp/initramfs.gz" "$TIMEOUT_S" -icount shift=0,sleep=off ||
	{ echo "bench: profile: $VM_WHY" >&2; exit 1; }
if ! vm_finished "$tmp"; then
	echo "bench: profile: $VM_WHY" >&2
	exit 1
fi
vm_output "$tmp" >"$tmp/out"
sed '/^PIPELINE-MD$/,$d' "$tmp/out" | sed 's/^/profile: in the VM: /' >&2
if ((vm_cmd_rc != 0)); then
	echo "bench: profile: the pipeline failed in the VM (exit $vm_cmd_rc)" >&2
	exit 1
fi
sed '1,/^PIPELINE-MD$/d' "$tmp/out" >"$tmp/vm.md"
host=()
[[ -n ${XB_BENCH_WORK:-} && -s $XB_BENCH_WORK/pipeline.md ]] && host=("$XB_BENCH_WORK/pipeline.md")
python3 bench/profile.py "$tmp/vm.md" "$vm_release" "${host[@]}" || exit 1
checks=$(sed -n 's/^bench: pipeline: verdicts verified (\([0-9]*\) checks)$/\1/p' "$tmp/out")
[[ -n $checks ]] || { echo "bench: profile: the pipeline verified no verdict in the VM" >&2; exit 1; }
echo "bench: profile: verdicts verified ($checks checks, in the VM)" >&2
