#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Guest side of bench/kernel/p10-kernel-start.sh, run by tests/vm/kcsan-vm as its probe
# command: p10-kernel-start-steps.sh VMLINUX_DEBUG (kcsan-vm's own arguments are
# ignored).  Writes cold.err, warm.err and big.err in $KCSAN_VM_OUT.
set -u
OUT=${KCSAN_VM_OUT:?run by tests/vm/kcsan-vm}
# The host side copied kcsanctl into $OUT: that is the build here.
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
bench_init p10 "$OUT"
DBG=$1
run=("${KCSANCTL_RUN[@]}" --kernel -v --output /dev/null --duration 5)
# The guest's root is read-only: the cache lives in the output directory.
export KCSAND_CACHE_DIR=$OUT/cache
"${run[@]}" --kernel-debug "$DBG" --probe src:fs/ > /dev/null 2> "$OUT/cold.err"
"${run[@]}" --kernel-debug "$DBG" --probe src:fs/ > /dev/null 2> "$OUT/warm.err"
"${run[@]}" --kernel-debug "$DBG" --no-marking --probe src:fs/ --probe src:mm/ \
	--probe src:kernel/ --probe src:net/ > /dev/null 2> "$OUT/big.err"
exit 0
