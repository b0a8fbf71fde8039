#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# P12: what the CFI unwind of user stacks costs (docs/stacks.md).
#  - BPF: one stack copy (bpf/ustack.bpf.h) against the frame-pointer walk,
#    mean ns per run (build/bench/ustack_cost);
#  - the daemon: the unwind of each copy, and the frames it gave, from -v's
#    "kcsand: stacks:" line, on programs built without frame pointers: a
#    race in worker threads (tests/scenarios/nofp_thread_stacks), an OpenMP
#    race through libgomp (omp_racy_nofp), and a race only the history sees,
#    whose earlier access's copy was taken when it ran (racy_flag_once);
#  - the history's sampled accesses: the BPF time of each check, with its
#    copies of remembered stacks, from -v's history line.
# Usage: bench/user/p12-stacks.sh [BUILD_DIR]   (root; make bench-programs builds what it runs)
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
bench_init p12 "${1:-}" root
RUNS=${P12_RUNS:-3}
bench_need "$B/bench/ustack_cost" "$B/kcsanctl" "$B/tests/scenarios/nofp_thread_stacks" \
	"$B/tests/scenarios/omp_racy_nofp" "$B/tests/history/racy_flag_once"

echo "P12: stack copies in BPF"
"$B/bench/ustack_cost" | sed 's/^/  /'

echo "P12: the daemon's unwind, $RUNS runs of each (halted at the first report)"
for prog in scenarios/nofp_thread_stacks scenarios/omp_racy_nofp history/racy_flag_once; do
	for ((i = 1; i <= RUNS; i++)); do
		out=$(KCSAND_TEST_ITERS=2000000 timeout 120 "${KCSANCTL_RUN[@]}" -v --halt-on-error -- \
			"$B/tests/$prog" 2>&1)
		# Frames of each side of the first report: the stack's depth.
		depth=$(awk '/^BUG: KCSAN:/ { r++ } r == 1 && / bytes by (task|interrupt)/ { s++ }
			     r == 1 && s && /^ [^ ]/ { n[s]++ } END { printf "%d/%d", n[1], n[2] }' <<<"$out")
		echo "  ${prog##*/} run $i: frames $depth; $(grep -o '^kcsand: stacks: .*' <<<"$out" | sed 's/^kcsand: //')"
		grep -o 'history: .* per check[^;]*' <<<"$out" | sed 's/^/    /' | head -1
	done
done
