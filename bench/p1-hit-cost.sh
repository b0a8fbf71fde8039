#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# kcsand benchmarks, every figure measured in this one run (root needed):
#   P1  ns per probe hit: an empty BPF program vs the engine with no watchpoint
#       ever set (skip_watch = 10^9), on the same single site; target ratio <= 1.10
#   A1  time to decode and attach 2,000 sites
# Usage: bench/run.sh [BUILD_DIR]     (make bench builds what it needs)
set -euo pipefail
B=${1:-build}
N=${BENCH_HITS:-20000}
REPS=${BENCH_REPS:-5}

[ "$(id -u)" = 0 ] || { echo "bench: must run as root (uprobes, BPF)" >&2; exit 2; }
for f in "$B/kcsanctl" "$B/bench/hotloop" "$B/bench/empty_probe"; do
	[ -x "$f" ] || { echo "bench: $f missing: run 'make bench'" >&2; exit 2; }
done

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

native=(); empty=(); engine=()
for ((r = 0; r < REPS; r++)); do
	# Interleave the three so that drift in the VM hits each alike.
	native+=("$("$B/bench/hotloop" "$N")")
	empty+=("$("$B/bench/empty_probe" touch -- "$B/bench/hotloop" "$N")")
	engine+=("$("$B/kcsanctl" run --functions touch --param skip_watch=1000000000 -- \
		"$B/bench/hotloop" "$N" 2>/dev/null)")
done
n_med=$(printf '%s\n' "${native[@]}" | median)
e_med=$(printf '%s\n' "${empty[@]}" | median)
k_med=$(printf '%s\n' "${engine[@]}" | median)

printf 'P1: ns per probe hit (%d hits, median of %d runs)\n' "$N" "$REPS"
printf '  %-40s %10.1f ns\n' "native (no probe)" "$n_med"
printf '  %-40s %10.1f ns\n' "uprobe + empty BPF program" "$e_med"
printf '  %-40s %10.1f ns\n' "uprobe + kcsand engine, no watchpoint" "$k_med"
awk -v e="$e_med" -v k="$k_med" 'BEGIN { printf "  ratio engine / empty: %.3f (target <= 1.10)\n", k / e }'

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
bench/gen_sites.sh 2000 > "$tmp/sites2000.c"
gcc -O1 -o "$tmp/sites2000" "$tmp/sites2000.c"
line=$("$B/kcsanctl" run -v --functions 'f*' -- "$tmp/sites2000" 2>&1 | grep -m1 'decoded' || true)
echo "A1: decode and attach of 2,000 sites"
echo "  ${line:-no timing line from kcsanctl -v}"
