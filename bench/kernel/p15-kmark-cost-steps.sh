#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Guest side of bench/kernel/p15-kmark-cost.sh, run by tests/vm/kcsan-vm as its probe
# command: p15-kmark-cost-steps.sh VMLINUX_DEBUG.  Writes cold9p.err, warm9p.err,
# copy.err and cold-local.err in $KCSAN_VM_OUT.
set -u
OUT=${KCSAN_VM_OUT:?run by tests/vm/kcsan-vm}
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
bench_init p15 "$OUT"
DBG=$1
run=("${KCSANCTL_RUN[@]}" --kernel -v --output /dev/null --duration 1 --sample breakpoints
	--probe src:fs/ --probe src:mm/ --probe src:kernel/)
# The guest's root is read-only: the caches live in the output directory.
KCSAND_CACHE_DIR=$OUT/cache-9p "${run[@]}" --kernel-debug "$DBG" > /dev/null 2> "$OUT/cold9p.err"
KCSAND_CACHE_DIR=$OUT/cache-9p "${run[@]}" --kernel-debug "$DBG" > /dev/null 2> "$OUT/warm9p.err"
t0=$EPOCHREALTIME
cp "$DBG" /tmp/vmlinux && echo "copied in $(elapsed "$t0") s" > "$OUT/copy.err"
KCSAND_CACHE_DIR=$OUT/cache-local "${run[@]}" --kernel-debug /tmp/vmlinux > /dev/null \
	2> "$OUT/cold-local.err"
rm -f /tmp/vmlinux
exit 0
