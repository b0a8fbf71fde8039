#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Guest side of tests/vm/kernel-noise.sh, run by tests/vm/kcsan-vm as its probe
# command, in the guest:
#
#   noise-steps.sh [--kcsanctl PATH] [--quick] --probe SPEC... -- COMMAND...
#
# Marks from the vmlinux's DWARF (/usr/lib/debug/boot/vmlinux-RELEASE, the host's
# linux-image-RELEASE-dbg) and writes each step's reports and stderr to
# $KCSAN_VM_OUT/STEP.log, its exit status to steps.rc:
#   jiffies  the TCP functions that read jiffies on every segment or ACK
#            (tcp_ack, tcp_write_xmit, cubictcp_cong_avoid) and __mod_timer,
#            around COMMAND (loopback TCP): jiffies is declared volatile but
#            defined by the linker at jiffies_64, a plain u64;
#   cached   the jiffies step's sites again, at once (-- true): their verdicts
#            from the cache (KCSAND_CACHE_DIR, a host directory kcsan-vm shares);
#   seqcount the timekeeper's readers (ktime_get*, inside tk_core.seq's read
#            sections) and its writer (timekeeping_advance, in the write section)
#            around 20 s of stress-ng's futex, signal, socket pair and io_uring
#            stressors (tests/vm/workload/stress.sh stress-ipc), which read the
#            clock for their timeouts;
#   rculist  the dentry cache's hash walks (__d_lookup_rcu, __d_lookup), whose
#            hlist_bl_for_each_entry_rcu() loads through rcu_dereference_raw()
#            inside the macro, with the kernel's sources (/usr/src/linux-source-6.1)
#            and -vv (each site's verdict), around 15 s of kworkload fs;
# and jiffies.sym (its address from /proc/kallsyms), bpf-after.txt.
# --kcsanctl runs another build's kcsanctl (an old one: the test must fail).
# --quick: the seqcount and rculist workloads run 8 and 6 s (kernel-noise.sh --quick).
# Exit status 66 when a step reported a race.
set -u
OUT=${KCSAN_VM_OUT:?run by tests/vm/kcsan-vm}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
KCSANCTL=$REPO/build/kcsanctl
[ "${1:-}" = --kcsanctl ] && { KCSANCTL=$2; shift 2; }
QSECS=20 RSECS=15
[ "${1:-}" = --quick ] && { QSECS=8 RSECS=6; shift; }
while [ $# -gt 0 ] && [ "$1" != -- ]; do shift; done
shift
VMLINUX=/usr/lib/debug/boot/vmlinux-$(uname -r)
SRC=/usr/src/linux-source-6.1

grep -E ' (jiffies|jiffies_64)$' /proc/kallsyms > "$OUT/jiffies.sym"
# Code breakpoints, as the cached step: a kprobe on each of the 757 sites took 66 s to
# attach and 96 s to detach; the rule is the marking, which does not depend on the mode.
"$KCSANCTL" run --kernel -v --output - --kernel-debug "$VMLINUX" --sample breakpoints \
	--udelay-task 300 --probe tcp_ack --probe tcp_write_xmit --probe cubictcp_cong_avoid \
	--probe __mod_timer -- "$@" > "$OUT/jiffies.log" 2>&1
echo "jiffies $?" > "$OUT/steps.rc"
# The same sites again: every verdict from the cache the first run wrote to the host.
"$KCSANCTL" run --kernel -v --output - --kernel-debug "$VMLINUX" --sample breakpoints --probe tcp_ack \
	--probe tcp_write_xmit --probe cubictcp_cong_avoid --probe __mod_timer -- true \
	> "$OUT/cached.log" 2>&1
echo "cached $?" >> "$OUT/steps.rc"
"$KCSANCTL" run --kernel -v --output - --kernel-debug "$VMLINUX" --skip-watch 10 \
	--udelay-task 300 --probe ktime_get --probe ktime_get_ts64 --probe ktime_get_real_ts64 \
	--probe ktime_get_update_offsets_now --probe timekeeping_advance -- \
	"$REPO/tests/vm/workload/stress.sh" stress-ipc "$QSECS" > "$OUT/seqcount.log" 2>&1
echo "seqcount $?" >> "$OUT/steps.rc"
# -vv prints each site's verdict (and so bypasses the cache): the dentry hash walk.
"$KCSANCTL" run --kernel -vv --output - --kernel-debug "$VMLINUX" --source-dir "$SRC" \
	--skip-watch 10 --udelay-task 300 --probe __d_lookup_rcu --probe __d_lookup -- \
	"$REPO/build/vm/kworkload" fs "$RSECS" > "$OUT/rculist.log" 2>&1
echo "rculist $?" >> "$OUT/steps.rc"
bpftool link list > "$OUT/bpf-after.txt" 2>&1
grep -q '^BUG: KCSAN:' "$OUT"/*.log && exit 66
exit 0
