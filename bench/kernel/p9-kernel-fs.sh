#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# P9: kernel mode at subsystem scale (issue 13).  In Debian's stock 6.1 kernel under
# QEMU (tests/vm/kcsan-vm), kcsanctl run --kernel --probe src:fs/ with the vmlinux's
# DWARF (linux-image-<ver>-dbg) samples every site of the core fs/ compile units with
# code breakpoints, around SECONDS (default 600) of the mixed workload
# (tests/vm/workload/kworkload.c), after 60 s of the workload alone.  Prints:
#   - the decode, marking and attach times, the sites, what was left out and why;
#   - sites sampled at least once, full cycles, traps, register moves;
#   - the workload's throughput with and without kcsand (the overhead);
#   - every distinct title, with its count;
#   - the guest's kernel log: lockups, RCU stalls, BPF warnings, BUGs.
# Usage: bench/kernel/p9-kernel-fs.sh [BUILD_DIR [SECONDS [SPEC...]]]
#        (root; files kept in build/vm/p9.*; the guest side is bench/kernel/p9-kernel-fs-steps.sh)
set -u
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
bench_init p9 "${1:-}" root
SECS=${2:-600}
shift 2 2>/dev/null || shift $#
DBG=$(kernel_debug) || exit 2
bench_need "$B/kcsanctl"
specs=("$@")
[ ${#specs[@]} -gt 0 ] || specs=(src:fs/)
probes=()
for s in "${specs[@]}"; do probes+=(--probe "$s"); done
out=$(vm_out p9) || exit 2
gcc -O2 -Wall -pthread tests/vm/workload/kworkload.c -o "$out/kworkload" || exit 2
cp "$B/kcsanctl" "$out/kcsanctl"
# The marking verdicts of earlier runs (the guest writes only under $out).
mkdir -p build/vm/kcache "$out/kcache" && cp -a build/vm/kcache/. "$out/kcache/"
start=$(date +%s)
KCSAN_VM_PROBE_CMD="$REPO/bench/kernel/p9-kernel-fs-steps.sh --kernel-debug $DBG" \
tests/vm/kcsan-vm --out "$out" --keep --timeout $((SECS + 1200)) --memory 2048 \
	--duration "$SECS" "${probes[@]}" > "$out/reports.txt" 2> "$out/harness.err"
rc=$?
cp -a "$out/kcache/." build/vm/kcache/ 2>/dev/null
echo "p9: guest run $(( $(date +%s) - start )) s, kcsan-vm exit $rc, files in $out"
E=$out/run.err
echo "== what was probed"
grep -E '^kcsand: (decoded|src:|breakpoints:|\[kernel\])|refuse|blacklist|__init|left out' "$E" | head -20
echo "== summary"
summary_line "$E" | tr ' ' '\n' | paste -sd' ' | fold -w 150
echo "== throughput (alone, then under kcsand)"
cat "$out/base.txt"; grep '^kworkload:' "$out/probe.out"
echo "== titles"
grep -h '^BUG: KCSAN:' "$out/probe.out" | sort | uniq -c | sort -rn
guest_log "$out"
