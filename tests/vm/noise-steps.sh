#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Guest side of tests/vm/kernel-noise.sh, run by tests/vm/kcsan-vm as its probe
# command, in the guest:
#
#   noise-steps.sh [--kcsanctl PATH] [--quick] --probe SPEC... -- COMMAND...
#
# Marks from the vmlinux's DWARF (/usr/lib/debug/boot/vmlinux-RELEASE, the host's
# linux-image-RELEASE-dbg) with the kernel's sources (/usr/src/linux-source-6.1),
# and writes each step's reports and stderr to $KCSAN_VM_OUT/STEP.log, and a line
# "STEP STATUS SECONDS" to steps.rc (where the suite's time goes):
#   rules    one run, -vv (each site's verdict and the first check of each site),
#            code-breakpoint sampling, over the code of the three rules, with their
#            three workloads at once, for S seconds:
#            - jiffies: the TCP functions that read jiffies on every segment or ACK
#              (tcp_ack, tcp_write_xmit, cubictcp_cong_avoid) and __mod_timer, around
#              COMMAND (loopback TCP): jiffies is declared volatile but defined by
#              the linker at jiffies_64, a plain u64;
#            - seqcount: the timekeeper's readers (ktime_get*, inside tk_core.seq's
#              read sections) and its writer (timekeeping_advance, in the write
#              section) around stress-ng's futex, signal, socket pair and io_uring
#              stressors (tests/vm/workload/stress.sh stress-ipc), which read the
#              clock for their timeouts;
#            - rculist: the dentry cache's hash walks (__d_lookup_rcu, __d_lookup),
#              whose hlist_bl_for_each_entry_rcu() loads through
#              rcu_dereference_raw() inside the macro, around kworkload fs;
#   cached   the same sites again, at once (-- true): every verdict from the cache
#            of the source tree (KCSAND_CACHE_DIR, a host directory kcsan-vm
#            shares), which the rules step wrote (-vv decides afresh, and keeps).
# One run for the three rules: each kcsanctl start in the guest costs about 20 s (the
# site sets, the 6.1 verifier), and kprobes 14 s to attach and 26 s to detach for the
# timekeeper's 159 sites; separate runs took 237-253 s.
# Also jiffies.sym (its address from /proc/kallsyms), bpf-after.txt.
# --kcsanctl runs another build's kcsanctl (an old one: the test must fail).
# --quick: workloads of 12 s, not 20: the dentry walks' 25 sites of 941 were checked
# while sampled 5 and 3 times in two runs of 8 s; 12 s gives about 50% more placements.
# Exit status 66 when a step reported a race.
set -u
OUT=${KCSAN_VM_OUT:?run by tests/vm/kcsan-vm}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
KCSANCTL=$REPO/build/kcsanctl
[ "${1:-}" = --kcsanctl ] && { KCSANCTL=$2; shift 2; }
SECS=20
[ "${1:-}" = --quick ] && { SECS=12; shift; }
while [ $# -gt 0 ] && [ "$1" != -- ]; do shift; done
shift
VMLINUX=/usr/lib/debug/boot/vmlinux-$(uname -r)
SRC=/usr/src/linux-source-6.1
FUNCS="tcp_ack tcp_write_xmit cubictcp_cong_avoid __mod_timer ktime_get ktime_get_ts64
	ktime_get_real_ts64 ktime_get_update_offsets_now timekeeping_advance __d_lookup_rcu
	__d_lookup"
PROBES=()
for f in $FUNCS; do PROBES+=(--probe "$f"); done

# step NAME STATUS T0: one line of steps.rc.
step() {
	echo "$1 $2 $(awk -v a="$3" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')" \
		>> "$OUT/steps.rc"
}

grep -E ' (jiffies|jiffies_64)$' /proc/kallsyms > "$OUT/jiffies.sym"
: > "$OUT/steps.rc"
t0=$(date +%s.%N)
# Code breakpoints: what the steps check, the marking and that the probed code ran
# and watched, does not need a kprobe a site.
"$KCSANCTL" run --kernel -vv --output - --kernel-debug "$VMLINUX" --source-dir "$SRC" \
	--sample breakpoints --udelay-task 300 "${PROBES[@]}" -- sh -c \
	"\"\$1\" \"\$2\" \"\$3\" & \"\$4\" stress-ipc \"\$3\" & \"\$5\" fs \"\$3\" & wait" \
	rules "$1" "$2" "$SECS" "$REPO/tests/vm/workload/stress.sh" "$REPO/build/vm/kworkload" \
	> "$OUT/rules.log" 2>&1
step rules $? "$t0"
t0=$(date +%s.%N)
"$KCSANCTL" run --kernel -v --output - --kernel-debug "$VMLINUX" --source-dir "$SRC" \
	--sample breakpoints "${PROBES[@]}" -- true > "$OUT/cached.log" 2>&1
step cached $? "$t0"
bpftool link list > "$OUT/bpf-after.txt" 2>&1
grep -q '^BUG: KCSAN:' "$OUT"/*.log && exit 66
exit 0
