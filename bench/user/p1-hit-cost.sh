#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# P1: ns per probe hit, an empty BPF program vs the kcsand engine with no
# watchpoint ever set (skip_watch = 10^9), on the same single site, the three
# configurations interleaved in this one run.  Target ratio engine / empty <= 1.10.
# Usage: bench/user/p1-hit-cost.sh [BUILD_DIR]    (root; make bench-programs builds what it needs)
# Environment: BENCH_HITS (default 20000), BENCH_REPS (default 5).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
bench_init p1 "${1:-}" root
N=${BENCH_HITS:-20000}
REPS=${BENCH_REPS:-5}
bench_need "$B/kcsanctl" "$B/bench/hotloop" "$B/bench/empty_probe"

native=(); empty=(); engine=()
for ((r = 0; r < REPS; r++)); do
	# Interleave the three so that drift in the VM hits each alike.
	native+=("$("$B/bench/hotloop" "$N")")
	empty+=("$("$B/bench/empty_probe" touch -- "$B/bench/hotloop" "$N")")
	engine+=("$("${KCSANCTL_RUN[@]}" --overhead-budget 100 --functions touch \
		--param skip_watch=1000000000 -- "$B/bench/hotloop" "$N" 2>/dev/null)")
done
n_med=$(printf '%s\n' "${native[@]}" | median)
e_med=$(printf '%s\n' "${empty[@]}" | median)
k_med=$(printf '%s\n' "${engine[@]}" | median)

printf 'P1: ns per probe hit (%d hits, median of %d runs)\n' "$N" "$REPS"
printf '  %-40s %10.1f ns\n' "native (no probe)" "$n_med"
printf '  %-40s %10.1f ns\n' "uprobe + empty BPF program" "$e_med"
printf '  %-40s %10.1f ns\n' "uprobe + kcsand engine, no watchpoint" "$k_med"
ratio_line "engine / empty" "$k_med" "$e_med" "<= 1.10"
