#!/bin/busybox sh
# shellcheck shell=sh
# init.sh - /init of the initramfs tests/e2e/e2e_kernels.sh boots another kernel with: mounts what
# the kernel check needs (proc, sysfs, devtmpfs, bpffs), loads veth.ko from the same kernel
# package, makes a veth pair, runs /kcheck with the arguments in /kcheck.args between two
# markers the host reads, and powers off. Runs as PID 1 in the VM only, never on the host.
# What it prints goes to the second serial line (ttyS1), which the host keeps in a file of its
# own: the kernel's messages go to the console (ttyS0) and can land in the middle of a line.
/bin/busybox mkdir -p /proc /sys /dev /tmp
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t bpf bpf /sys/fs/bpf
if [ -c /dev/ttyS1 ]; then
	exec >/dev/ttyS1 2>&1
fi
echo "KCHECK-INIT uptime $(cut -d' ' -f1 /proc/uptime) s"
ip link set lo up
# busybox's ip names the peer itself (veth0).
if insmod /veth.ko && ip link add kva type veth && ip link set kva up && ip link set veth0 up; then
	echo "KCHECK-VETH kva"
else
	echo "KCHECK-VETH none"
fi
echo "KCHECK-BEGIN"
# shellcheck disable=SC2046 # the arguments are words on purpose
LIBXDP_OBJECT_PATH=/lib/bpf /kcheck $(cat /kcheck.args) 2>&1
echo "KCHECK-END $? uptime $(cut -d' ' -f1 /proc/uptime) s"
poweroff -f
