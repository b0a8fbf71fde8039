#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-only
#
# /init of the initramfs that tests/vm/kcsan-vm builds: busybox only.
# Mounts the host's root filesystem read-only at /host (9p tag "hostroot")
# and the run's output directory writable at /host$kcsan_vm_out (tag "out"),
# so that every path is the same as on the host, sets up /proc, /sys,
# debugfs, tracefs, bpffs, /dev and a tmpfs /tmp inside /host, and runs
# $kcsan_vm_repo/tests/vm/guest.sh chrooted into /host with the host's bash.
# Then it reboots, which ends QEMU (-no-reboot).
#
# kcsan_vm_out and kcsan_vm_repo come from the kernel command line: the
# kernel hands unknown name=value parameters to init as environment.

/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null

say() { echo "kcsan-vm(init): $*" > /dev/console; }
die() { say "$*"; echo "$*" > /dev/kmsg 2>/dev/null; sync; reboot -f; sleep 5; }

t_init=$(cut -d' ' -f1 /proc/uptime)
say "init reached, uptime $t_init s"

# virtio/9p modules, in dependency order (written by kcsan-vm).
for m in $(cat /modules.list 2>/dev/null); do
	insmod "/modules/$m" || die "insmod $m failed"
done

mkdir -p /host
opts=trans=virtio,version=9p2000.L,msize=524288
mount -t 9p -o "$opts,ro,cache=loose" hostroot /host || die "cannot mount the host root (9p tag hostroot)"
mount -t proc proc /host/proc
mount -t sysfs sysfs /host/sys
mount -t devtmpfs devtmpfs /host/dev
mount -t debugfs debugfs /host/sys/kernel/debug
mount -t tracefs tracefs /host/sys/kernel/tracing
mount -t bpf bpf /host/sys/fs/bpf 2>/dev/null
# A repository under /tmp or /run (a CI checkout, say) would vanish under the
# tmpfs mounts below: hold it with a bind mount and put it back on top.
case "$kcsan_vm_repo" in
/tmp/*|/run/*)
	mkdir -p /keep-repo
	mount -o bind "/host$kcsan_vm_repo" /keep-repo || die "cannot bind $kcsan_vm_repo"
	;;
esac
mount -t tmpfs tmpfs /host/tmp
mount -t tmpfs tmpfs /host/run
if [ -d /keep-repo ]; then
	mkdir -p "/host$kcsan_vm_repo"
	mount -o bind /keep-repo "/host$kcsan_vm_repo" || die "cannot restore $kcsan_vm_repo"
fi

# After the tmpfs mounts, so an output directory under /tmp stays visible.
[ -n "$kcsan_vm_out" ] || die "no kcsan_vm_out= on the kernel command line"
mkdir -p "/host$kcsan_vm_out" 2>/dev/null
mount -t 9p -o "$opts" out "/host$kcsan_vm_out" || die "cannot mount the output share (9p tag out) at $kcsan_vm_out"
# kcsand's marking cache, kept on the host between boots (guest.sh sets KCSAND_CACHE_DIR).
if [ -n "$kcsan_vm_cache" ]; then
	mkdir -p "/host$kcsan_vm_cache" 2>/dev/null
	mount -t 9p -o "$opts" cache "/host$kcsan_vm_cache" || say "cannot mount the cache share at $kcsan_vm_cache"
fi
echo "$t_init $(cut -d' ' -f1 /proc/uptime)" > "/host$kcsan_vm_out/init-uptime"

chroot /host /bin/bash "$kcsan_vm_repo/tests/vm/guest.sh" "$kcsan_vm_out"
echo "$?" > "/host$kcsan_vm_out/guest.rc"
sync
say "powering off, uptime $(cut -d' ' -f1 /proc/uptime) s"
reboot -f
sleep 5
