#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# P1: ns per probe hit, an empty BPF program vs the kcsand engine with no
# watchpoint ever set (skip_watch = 10^9), on the same single site, the three
# configurations interleaved in this one run.  Target ratio engine / empty <= 1.10.
# Usage: bench/p1-hit-cost.sh [BUILD_DIR]    (root; make bench-programs builds what it needs)
# Environment: BENCH_HITS (default 20000), BENCH_REPS (default 5).
set -euo pipefail
B=${1:-build}
N=${BENCH_HITS:-20000}
REPS=${BENCH_REPS:-5}

[ "$(id -u)" = 0 ] || { echo "p1: must run as root (uprobes, BPF)" >&2; exit 2; }
for f in "$B/kcsanctl" "$B/bench/hotloop" "$B/bench/empty_probe"; do
	[ -x "$f" ] || { echo "p1: $f missing: run 'make bench-programs'" >&2; exit 2; }
done

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

native=(); empty=(); engine=()
for ((r = 0; r < REPS; r++)); do
	# Interleave the three so that drift in the VM hits each alike.
	native+=("$("$B/bench/hotloop" "$N")")
	empty+=("$("$B/bench/empty_probe" touch -- "$B/bench/hotloop" "$N")")
	engine+=("$("$B/kcsanctl" run --overhead-budget 100 --functions touch \
		--param skip_watch=1000000000 -- "$B/bench/hotloop" "$N" 2>/dev/null)")
done
n_med=$(printf '%s\n' "${native[@]}" | median)
e_med=$(printf '%s\n' "${empty[@]}" | median)
k_med=$(printf '%s\n' "${engine[@]}" | median)

printf 'P1: ns per probe hit (%d hits, median of %d runs)\n' "$N" "$REPS"
printf '  %-40s %10.1f ns\n' "native (no probe)" "$n_med"
printf '  %-40s %10.1f ns\n' "uprobe + empty BPF program" "$e_med"
printf '  %-40s %10.1f ns\n' "uprobe + kcsand engine, no watchpoint" "$k_med"
awk -v e="$e_med" -v k="$k_med" 'BEGIN { printf "  ratio engine / empty: %.3f (target <= 1.10)\n", k / e }'
