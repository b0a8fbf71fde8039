#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Guest side of tests/vm/kernel-wedge.sh, run by tests/vm/kcsan-vm as its probe
# command:
#
#   wedge-steps.sh KCSANCTL SECONDS VMLINUX --probe SPEC... -- COMMAND...
#
#   machinery  breakpoints asked for on arch_uninstall_hw_breakpoint (with vfs_read),
#              moved every 2 ms: the code that moves a breakpoint must never carry
#              one (a move off a site in its window trapped for ever, the wedge);
#   scale      breakpoints over the specs (src:fs/ src:mm/ src:kernel/) around
#              COMMAND for SECONDS, no marking (every counter in scale.stats);
# each STEP's output in $KCSAN_VM_OUT/STEP.log, its exit status in steps.rc.
set -u
OUT=${KCSAN_VM_OUT:?run by tests/vm/kcsan-vm}
KCSANCTL=$1 secs=$2 vmlinux=$3
shift 3
specs=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do specs+=("$1"); shift; done
shift
. "$(dirname "${BASH_SOURCE[0]}")/steps-lib.sh"
step machinery "$KCSANCTL" run --kernel --output - -v --sample breakpoints --sample-period 2000 \
	--probe arch_uninstall_hw_breakpoint --probe vfs_read --duration 10 > "$OUT/machinery.log" 2>&1
step scale "$KCSANCTL" run --kernel --output - --sample breakpoints --no-marking --kernel-debug "$vmlinux" \
	--stats "$OUT/scale.stats" "${specs[@]}" --duration "$secs" -- "$@" > "$OUT/scale.log" 2>&1
grep -q '^BUG: KCSAN:' "$OUT/scale.log" && exit 66
exit 0
