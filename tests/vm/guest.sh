#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Guest side of tests/vm/kcsan-vm, run by the initramfs's /init chrooted into
# the host's root filesystem (read-only 9p), as root, with the guest kernel's
# /proc, /sys, /sys/kernel/debug, /sys/kernel/tracing, /sys/fs/bpf, /dev and a
# tmpfs /tmp.  $1 is the run's output directory: the same path as on the
# host, writable.  It holds job.env, written by the host:
#   REPO        the repository (cwd of the probe command)
#   KVER        guest kernel version
#   MODULE_KO   module to insmod before probes attach ("" for none)
#   PROBE_CMD   the probe command (a shell word list, see kcsan-vm)
#   PROBE_ARGS  array: --probe SPEC ... [--duration S]
#   GUEST_CMD   array: the workload
#   CHECK_BPF   "": no BPF check; else the command line of tests/vm/bpf-check's
#               kprobe-check (attach a BPF kprobe, trigger, detach), then
#               list BPF kprobe support with bpftool (slow under TCG)
#   CHECK_HWBP  "" or the command line of tests/vm/bpf-check's hwbp-check (a
#               BPF program on a kernel hardware breakpoint on every CPU)
# Every step leaves its result in the output directory; `stages` lists the
# steps reached, which is how the host tells what went wrong.

set -u
OUT=$1
cd "$OUT" || exit 2
# shellcheck source=/dev/null
. "$OUT/job.env"
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/tmp TMPDIR=/tmp KCSAN_VM_GUEST=1 KCSAN_VM_OUT="$OUT"
# The share guest-init.sh mounted, writable: the verdicts outlive this boot.
[ -z "${kcsan_vm_cache:-}" ] || [ -n "${KCSAND_CACHE_DIR:-}" ] || export KCSAND_CACHE_DIR=$kcsan_vm_cache

stage() { echo "$1 $(cut -d' ' -f1 /proc/uptime)" >> "$OUT/stages"; }
say() { echo "kcsan-vm(guest): $*" > /dev/console; }

stage booted

# What the engine relies on: kprobe support of the kernel and of BPF.
{
	echo "kernel $(uname -r)"
	echo "tracefs kprobe_events: $([ -w /sys/kernel/tracing/kprobe_events ] && echo yes || echo no)"
	echo "debugfs kprobes/list: $([ -r /sys/kernel/debug/kprobes/list ] && echo yes || echo no)"
	echo "btf /sys/kernel/btf/vmlinux: $([ -r /sys/kernel/btf/vmlinux ] && echo yes || echo no)"
	if [ -z "$CHECK_BPF" ]; then
		:
	elif ! $CHECK_BPF 2>&1; then
		echo "bpf-kprobe-check: FAILED"
	elif [ -n "${CHECK_HWBP:-}" ] && ! $CHECK_HWBP 2>&1; then
		echo "bpf-hwbp-check: FAILED"
	elif command -v bpftool >/dev/null; then
		bpftool feature probe kernel 2>&1 | grep -i kprobe
	else
		echo "bpftool: not installed"
	fi
} > "$OUT/checks.txt" 2>&1
if grep -qE '^bpf-(kprobe|hwbp)-check: FAILED' "$OUT/checks.txt"; then
	stage bpf-check-failed
	dmesg > "$OUT/dmesg.txt" 2>&1
	exit 1
fi
stage checked

if [ -n "$MODULE_KO" ]; then
	if ! insmod "$MODULE_KO" > "$OUT/insmod.log" 2>&1; then
		stage insmod-failed
		dmesg > "$OUT/dmesg.txt" 2>&1
		exit 1
	fi
	stage module-loaded
fi

# Loopback, for workloads with sockets inside the guest (kworkload net).
ip link set lo up 2>/dev/null || ifconfig lo up 2>/dev/null || true

say "probe step: $PROBE_CMD ${PROBE_ARGS[*]} -- ${GUEST_CMD[*]}"
cd "$REPO" || exit 2
start=$(cut -d' ' -f1 /proc/uptime)
# kcsand turns kprobe jump optimization off while many kprobes attach and detach, and
# expedites RCU grace periods while they detach, and must put both back
# (daemon/engine/kprobe_opt.c): each setting before and after.
kopt=$(cat /proc/sys/debug/kprobes-optimization 2>/dev/null || echo none)
rexp=$(cat /sys/kernel/rcu_expedited 2>/dev/null || echo none)
eval "$PROBE_CMD"' "${PROBE_ARGS[@]}" -- "${GUEST_CMD[@]}"' \
	> "$OUT/probe.out" 2> "$OUT/probe.err" < /dev/null
echo $? > "$OUT/probe.rc"
echo "$start $(cut -d' ' -f1 /proc/uptime)" > "$OUT/probe-uptime"
stage probe-done

# Probes must be gone now: the kernel's list of registered kprobes.
cat /sys/kernel/debug/kprobes/list > "$OUT/kprobes-after.txt" 2>&1
echo "$kopt $(cat /proc/sys/debug/kprobes-optimization 2>/dev/null || echo none)" \
	> "$OUT/kprobes-optimization.txt"
echo "$rexp $(cat /sys/kernel/rcu_expedited 2>/dev/null || echo none)" > "$OUT/rcu-expedited.txt"

if [ -n "$MODULE_KO" ]; then
	mod=$(basename "$MODULE_KO" .ko)
	if rmmod "$mod" > "$OUT/rmmod.log" 2>&1; then
		stage module-unloaded
	else
		stage rmmod-failed
	fi
fi

dmesg > "$OUT/dmesg.txt" 2>&1
stage "done"
sync
