#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0
# /init of the test VM's initramfs (built by scripts/vm-run.sh; busybox only).
#
# Loads the virtio/9p modules packed next to it, mounts the host's root
# read-only over 9p ("root") and the run directory of vm-run.sh read-write
# ("esavm"), lays writable scratch file systems over the read-only root, and
# chroots into it to run scripts/vm-guest.sh under the host's bash. Whatever
# happens, it powers off: exiting init would panic the kernel.
/bin/busybox --install -s /bin
export PATH=/bin

say() { echo "vm-init: $*" > /dev/kmsg; }
fail() { say "FAILED: $*"; sync; poweroff -f; sleep 5; }

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev

# In the order vm-run.sh wrote: each module's dependencies before it.
for m in $(cat /modules/order); do
	insmod "/modules/$m.ko" || fail "insmod $m"
done

# Parameters from the kernel command line: esa_repo=PATH esa_abi=RELEASE
for arg in $(cat /proc/cmdline); do
	case $arg in
	esa_repo=*) repo=${arg#esa_repo=} ;;
	esa_abi=*) abi=${arg#esa_abi=} ;;
	esac
done
[ -n "$repo" ] && [ -n "$abi" ] || fail "esa_repo/esa_abi missing from the command line"

R=/newroot
mkdir -p $R
# virtio devices may probe a moment after their driver loads.
n=0
until mount -t 9p -o ro,trans=virtio,version=9p2000.L,msize=512000,cache=loose \
		root $R 2> /dev/null; do
	n=$((n + 1))
	[ $n -lt 50 ] || fail "cannot mount the host root over 9p"
	sleep 0.1
done

# Keep a handle on the repository: if it lives under /tmp, /run or
# /var/tmp, the scratch tmpfs below would hide it.
mkdir -p /repo
mount --bind "$R$repo" /repo || fail "no $repo in the host root"

mount -t proc proc $R/proc || fail "mount proc"
mount -t sysfs sysfs $R/sys || fail "mount sysfs"
mount -t devtmpfs devtmpfs $R/dev || fail "mount devtmpfs"
# what udev would add: bash's process substitution needs /dev/fd
ln -sf /proc/self/fd $R/dev/fd
ln -sf /proc/self/fd/0 $R/dev/stdin
ln -sf /proc/self/fd/1 $R/dev/stdout
ln -sf /proc/self/fd/2 $R/dev/stderr
mkdir -p $R/dev/pts $R/dev/shm
mount -t devpts devpts $R/dev/pts
mount -t tmpfs tmpfs $R/dev/shm
mount -t tmpfs -o mode=1777 tmpfs $R/tmp || fail "mount /tmp"
mount -t tmpfs -o mode=755 tmpfs $R/run || fail "mount /run"
mount -t tmpfs -o mode=1777 tmpfs $R/var/tmp
mount -t bpf bpf $R/sys/fs/bpf || fail "mount bpffs"
mount -t debugfs debugfs $R/sys/kernel/debug
mount -t tracefs tracefs $R/sys/kernel/tracing
mount -t cgroup2 cgroup2 $R/sys/fs/cgroup

if [ ! -e "$R$repo/scripts/vm-guest.sh" ]; then
	mkdir -p "$R$repo" && mount --bind /repo "$R$repo" || fail "bind $repo"
fi

# The guest kernel's modules, where the host's kmod tools look for them
# (linux-headers created the directory on the host).
# .cache may be a symbolic link (a git worktree sharing the main
# checkout's): resolve it inside the host root, not in this initramfs.
# Without that directory (a kernel whose headers are not installed on the
# host, 6.12's) a tmpfs over /lib/modules makes room for it.
moddir=$(chroot $R readlink -f "$repo/.cache/kernel/$abi/lib/modules/$abi")
if [ ! -d "$R/lib/modules/$abi" ]; then
	mount -t tmpfs -o mode=755 tmpfs $R/lib/modules ||
		fail "mount /lib/modules (none in the host root? make deps makes it)"
	mkdir -p "$R/lib/modules/$abi"
fi
mount --bind "$R$moddir" "$R/lib/modules/$abi" || fail "bind modules"

# The run directory of vm-run.sh: command, parameters, output, status.
mkdir -p $R/tmp/esa-vm
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 esavm $R/tmp/esa-vm ||
	fail "cannot mount the run directory over 9p"

chroot $R /bin/bash "$repo/scripts/vm-guest.sh" /tmp/esa-vm
say "guest script exited with $?"
sync
poweroff -f
sleep 5
