#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# P11: a kprobe per site against code-breakpoint sampling on one large site set
# (issue 13), in Debian's stock 6.1 kernel under QEMU (tests/vm/kcsan-vm), in one
# boot: SECONDS (default 60) of the mixed workload alone, then the same under
# `kcsanctl run --kernel --sample kprobes`, then under `--sample breakpoints`, on
# the same SPECs (default: the VFS, pipe and page-cache functions, about 900 sites).
# Prints for each: the time to attach and to detach, the traps, the watchpoints set,
# the sites sampled (breakpoints), the reports, and the workload's throughput.
# Usage: [P11_MODES=breakpoints] [P11_ARGS="--sample-period 100000"] \
#        bench/kernel/p11-kprobes-vs-breakpoints.sh [BUILD_DIR [SECONDS [SPEC...]]]
#        (root; files kept in build/vm/p11.*; the guest side is
#        bench/kernel/p11-kprobes-vs-breakpoints-steps.sh)
set -u
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
bench_init p11 "${1:-}" root
SECS=${2:-60}
shift 2 2>/dev/null || shift $#
bench_need "$B/kcsanctl"
specs=("$@")
[ ${#specs[@]} -gt 0 ] || specs=('vfs_*' 'pipe_*' '*_pipe_*' 'generic_file_*' 'filemap_*')
probes=()
for s in "${specs[@]}"; do probes+=(--probe "$s"); done
out=$(vm_out p11) || exit 2
gcc -O2 -Wall -pthread tests/vm/workload/kworkload.c -o "$out/kworkload" || exit 2
cp "$B/kcsanctl" "$out/kcsanctl"
start=$(date +%s)
MODES=${P11_MODES:-kprobes breakpoints}
KCSAN_VM_PROBE_CMD="$REPO/bench/kernel/p11-kprobes-vs-breakpoints-steps.sh --modes ${MODES// /,} ${P11_ARGS:-}" \
tests/vm/kcsan-vm --out "$out" --keep --timeout $((SECS * 3 + 900)) \
	--duration "$SECS" "${probes[@]}" > "$out/harness.out" 2> "$out/harness.err"
rc=$?
echo "p11: guest run $(( $(date +%s) - start )) s, kcsan-vm exit $rc, files in $out"
echo "== the workload alone, $SECS s"
cat "$out/base.txt"
for mode in $MODES; do
	echo "== --sample $mode"
	read -r t0 ws we t1 < "$out/$mode.times" 2>/dev/null
	awk -v a="$t0" -v b="${ws:-0}" -v c="${we:-0}" -v d="${t1:-0}" 'BEGIN {
		if (b > 0 && c > 0)
			printf "start to attached %.1f s, workload %.1f s, detach to exit %.1f s\n", b - a, c - b, d - c
		else print "the workload did not run" }'
	grep -E '^kcsand: decoded' "$out/$mode.err"
	summary_line "$out/$mode.err" |
		grep -oE '^kcsand: [0-9]+ reports?|[0-9]+ hits|(setup_watchpoints|armed_sites|total_sites|unarmed_hits|trap_floor_pct|trap_ns|breakpoint_[a-z_]+): [0-9x/.%-]+' |
		paste -sd' '
	grep '^kworkload:' "$out/$mode.out"
	grep -h '^BUG: KCSAN:' "$out/$mode.out" | sort | uniq -c | sort -rn
done
guest_log "$out"
