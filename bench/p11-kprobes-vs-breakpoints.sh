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
#        bench/p11-kprobes-vs-breakpoints.sh [SECONDS] [SPEC...]
#        (root; files kept in build/vm/p11.*)
set -u
SECS=${1:-60}
shift || true
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO" || exit 1
specs=("$@")
[ ${#specs[@]} -gt 0 ] || specs=('vfs_*' 'pipe_*' '*_pipe_*' 'generic_file_*' 'filemap_*')
probes=()
for s in "${specs[@]}"; do probes+=(--probe "$s"); done
out=$(mkdir -p build/vm && mktemp -d "$REPO/build/vm/p11.XXXXXX") || exit 2
gcc -O2 -Wall -pthread tests/vm/workload/kworkload.c -o "$out/kworkload" || exit 2
cp build/kcsanctl "$out/kcsanctl"
start=$(date +%s)
MODES=${P11_MODES:-kprobes breakpoints}
KCSAN_VM_PROBE_CMD="$REPO/bench/p11-kprobes-vs-breakpoints-steps.sh --modes ${MODES// /,} ${P11_ARGS:-}" \
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
	grep -m1 '^kcsand: [0-9]* reports*, ' "$out/$mode.err" |
		grep -oE '^kcsand: [0-9]+ reports?|[0-9]+ hits|(setup_watchpoints|armed_sites|unarmed_hits|trap_floor|trap_ns|breakpoint_[a-z_]+): [0-9x/.%-]+' |
		paste -sd' '
	grep '^kworkload:' "$out/$mode.out"
	grep -h '^BUG: KCSAN:' "$out/$mode.out" | sort | uniq -c | sort -rn
done
echo "== guest kernel log"
grep -cE 'soft lockup|rcu: INFO|self-detected stall|hung_task|WARNING:|BUG:' "$out/dmesg.txt" 2>/dev/null |
	sed 's/^/lockup, stall, warning or BUG lines: /'
