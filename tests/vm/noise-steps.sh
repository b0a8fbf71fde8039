#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Guest side of tests/vm/kernel-noise.sh, run by tests/vm/kcsan-vm as its probe
# command, in the guest:
#
#   noise-steps.sh [--kcsanctl PATH] [--quick] --probe SPEC... -- COMMAND...
#
# (the specs and command are unused: the run is tests/vm/noise-lib.sh's, which says
# what it probes and why).  Each step writes its reports and stderr to
# $KCSAN_VM_OUT/STEP.log, its status to steps.rc and its seconds to step-times
# (tests/vm/steps-lib.sh):
#   rules    noise_rules: the three rules' code, pinned, with their workloads, S s;
#   cached   noise_cached: the same sites again, at once (-- true): every verdict from
#            the cache of the source tree (KCSAND_CACHE_DIR, a host directory kcsan-vm
#            shares), which the rules step wrote (-vv decides afresh, and keeps).
# One run for the three rules: each kcsanctl start in the guest costs about 20 s (the
# site sets, the 6.1 verifier); separate runs took 237-253 s.
# Also jiffies.sym (its address from /proc/kallsyms), bpf-after.txt.
# --kcsanctl runs another build's kcsanctl (an old one: the test must fail; one
# without --pin fails at once).  --quick: workloads of 8 s, not 20.
# Exit status 66 when a step reported a race.
set -u
OUT=${KCSAN_VM_OUT:?run by tests/vm/kcsan-vm}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$REPO" || exit 1
KCSANCTL=$REPO/build/kcsanctl
[ "${1:-}" = --kcsanctl ] && { KCSANCTL=$2; shift 2; }
SECS=20
[ "${1:-}" = --quick ] && { SECS=8; shift; }
. tests/vm/steps-lib.sh
. tests/vm/noise-lib.sh

grep -E ' (jiffies|jiffies_64)$' /proc/kallsyms > "$OUT/jiffies.sym"
step rules noise_rules "$KCSANCTL" "$SECS" > "$OUT/rules.log" 2>&1
step cached noise_cached "$KCSANCTL" > "$OUT/cached.log" 2>&1
bpftool link list > "$OUT/bpf-after.txt" 2>&1
grep -q '^BUG: KCSAN:' "$OUT"/*.log && exit 66
exit 0
