#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Guest side of bench/kernel/p19-tcg-frame-watch.sh, run by tests/vm/kcsan-vm as its probe
# command (its arguments are kcsan-vm's and unused): frame-watch MODE SECS, its output in
# $KCSAN_VM_OUT/frame-watch.out.
set -u
OUT=${KCSAN_VM_OUT:?run by tests/vm/kcsan-vm}
read -r mode secs < "$OUT/p19-args"
"$OUT/frame-watch" "$mode" "$secs" > "$OUT/frame-watch.out" 2>&1
echo "frame-watch exit $?" >> "$OUT/frame-watch.out"
exit 0
