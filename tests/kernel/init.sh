#!/bin/busybox sh
# shellcheck shell=sh
# init.sh - /init of the initramfs tests/e2e/vm_lib.sh boots another kernel with: mounts what
# the programs in it need (proc, sysfs, devtmpfs, bpffs), loads /veth.ko of the same kernel
# package when there is one and makes a veth pair, runs the shell script /vm.cmd between two
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
echo "VM-INIT uptime $(cut -d' ' -f1 /proc/uptime) s"
ip link set lo up
# busybox's ip names the peer itself (veth0).
if [ -f /veth.ko ] && insmod /veth.ko && ip link add kva type veth && ip link set kva up &&
	ip link set veth0 up; then
	echo "VM-VETH kva"
else
	echo "VM-VETH none"
fi
echo "VM-BEGIN"
LIBXDP_OBJECT_PATH=/lib/bpf sh /vm.cmd 2>&1
echo "VM-END $? uptime $(cut -d' ' -f1 /proc/uptime) s"
poweroff -f
