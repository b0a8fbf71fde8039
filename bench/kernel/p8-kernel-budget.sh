#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# P8: what --overhead-budget does in kernel mode, measured in the test guest
# (tests/vm/kcsan-vm: Debian's stock kernel under QEMU TCG):
#   - bench/kloop, read(2) of one byte from /dev/zero in a loop, without kcsand and
#     under `kcsanctl run --kernel` with kprobes on the functions of the read path at
#     each budget (no warm-up, so that the sampler works from the first period):
#     ns per read(2);
#   - with every site armed, at the kernel-mode defaults: how much of the machine's
#     CPU time each racy scenario of tests/kmod/kcsan_race takes to its first
#     report, which is what the kernel-mode warm-up is chosen from.
# Usage: bench/kernel/p8-kernel-budget.sh [BUILD_DIR [SECS [ITERS]]]   (root; make bench-programs)
# BUDGETS (environment, default "100 10") lists the budgets.  The guest side is
# bench/kernel/p8-kernel-budget-steps.sh.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
bench_init p8 "${1:-}" root
export B SECS=${2:-12} ITERS=${3:-50000} BUDGETS=${BUDGETS:-100 10}
bench_need "$B/bench/kloop"
out=$(vm_out p8)
trap 'rm -rf "$out"' EXIT

echo "P8: --overhead-budget in kernel mode, in the TCG guest (budgets: $BUDGETS)"
KCSAN_VM_PROBE_CMD="env B=$B SECS=$SECS ITERS=$ITERS BUDGETS='$BUDGETS' $REPO/bench/kernel/p8-kernel-budget-steps.sh" \
	tests/vm/kcsan-vm --module tests/kmod/kcsan_race --out "$out/run" \
	--timeout 900 --probe none -- true > "$out/out.txt" 2> "$out/err.txt" ||
	{ echo "p8: the guest run failed:" >&2; tail -5 "$out/err.txt" >&2; tail -5 "$out/run/probe.err" >&2 2>/dev/null; exit 1; }
cat "$out/out.txt"
[ -z "${KCSAND_VM_KEEP:-}" ] || { cp -r "$out/run" "$REPO/build/vm/p8-last"; echo "  (files in build/vm/p8-last)"; }
