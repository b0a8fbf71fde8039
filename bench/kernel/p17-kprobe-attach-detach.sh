#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# P17: how long a kprobe per site takes to attach and to detach on many sites, in
# the test guest (Debian's 6.1 under QEMU, tests/vm/kcsan-vm): one boot, ROUNDS
# (default 2) runs of `kcsanctl run --kernel -v ... -- true` on core-kernel's probe
# set (725 sites), by this build's kcsanctl and, given OLD_BUILD_DIR, an older
# one's, the two in turn, so that both meet the same host load.  Prints each run's
# "attached them in" and "detached N sites in" figures, and the guest's
# /proc/sys/debug/kprobes-optimization before and after it (kcsand turns it off
# while it attaches, daemon/engine/kprobe_opt.c, and must put it back).
# Guest side: bench/kernel/p17-kprobe-attach-detach-steps.sh.
# Usage: bench/kernel/p17-kprobe-attach-detach.sh [BUILD_DIR [OLD_BUILD_DIR [ROUNDS]]]
#        (root; files kept in build/vm/p17.*)
set -u
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
bench_init p17 "${1:-}" root
bench_need "$B/kcsanctl"
OLD=${2:-}
ROUNDS=${3:-2}
[[ -z $OLD || -x $OLD/kcsanctl ]] || bench_die "$OLD/kcsanctl missing"
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || bench_die "ROUNDS must be a positive number, not '$ROUNDS'"
out=$(vm_out p17) || exit 2
[[ $OLD ]] && cp "$OLD/kcsanctl" "$out/kcsanctl-old"
guest_run p17 "$out" $((600 + ROUNDS * 600)) \
	"$REPO/bench/kernel/p17-kprobe-attach-detach-steps.sh $ROUNDS"
cat "$out/runs.txt" 2>/dev/null || bench_die "no runs.txt in $out: $(tail -3 "$out/harness.err")"
