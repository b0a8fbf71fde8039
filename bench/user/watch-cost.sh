#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# What the history's watches of reads cost (docs/history.md, "Watches of
# reads"): two programs, each run natively and under kcsand with each value
# of history_watches in WC_CONFIGS, interleaved, REPS times:
#   - P2, bench/hashtable for about WC_P2_S seconds natively (its threads take a
#     mutex per operation);
#   - bench/yield_storm (three threads that call sched_yield() all the time:
#     nearly every call a context switch, each paid by a thread a watch is
#     armed in), WC_YIELDS calls per thread.
# Prints each run's wall time, x native and the watches' counters
# (hw_history_watches armed, hw_history_switches counted, hw_history_closed),
# then the medians.  A build whose watches are not paced (before 2026-12-07)
# prints no switches and no closes.
#
# Usage: bench/user/watch-cost.sh [BUILD_DIR]   (root; make bench-programs)
# Environment: WC_CONFIGS (default "0 2"), WC_REPS (default 3), WC_P2_S (default 2),
# WC_YIELDS (default 100000).
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
bench_init watch-cost "${1:-}" root
CONFIGS=${WC_CONFIGS:-0 2}
REPS=${WC_REPS:-3}
P2_S=${WC_P2_S:-2}
YIELDS=${WC_YIELDS:-100000}
bench_need "$B/kcsanctl" "$B/bench/hashtable" "$B/bench/yield_storm"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
declare -A X

# counters FILE: the watches' counters of a -v summary, "armed/switches/closed".
counters() {
	local a s c

	a=$(grep -Eo 'hw_history_watches: [0-9]+' "$1" | grep -Eo '[0-9]+$')
	s=$(grep -Eo 'hw_history_switches: [0-9]+' "$1" | grep -Eo '[0-9]+$')
	c=$(grep -Eo 'hw_history_closed: [0-9]+' "$1" | grep -Eo '[0-9]+$')
	echo "${a:--}/${s:--}/${c:--}"
}

# one PROGRAM_LABEL NATIVE_S CMD...: the program under each configuration.
one() {
	local label=$1 native=$2 w t0 k

	shift 2
	for w in $CONFIGS; do
		t0=$EPOCHREALTIME
		timeout -k 5 300 "$B/kcsanctl" run -v --param "history_watches=$w" -- "$@" \
			>/dev/null 2>"$tmp/err"
		k=$(elapsed "$t0")
		printf '  %-12s watches=%s  native %6s s  kcsand %6s s  %6sx  armed/switches/closed %s\n' \
			"$label" "$w" "$native" "$k" "$(ratio "$k" "$native")" "$(counters "$tmp/err")"
		X[$label/$w]+=" $(ratio "$k" "$native")"
	done
}

t0=$EPOCHREALTIME
"$B/bench/hashtable" 20000000 >/dev/null
rate=$(awk -v s="$(elapsed "$t0")" 'BEGIN { printf "%.0f", 20000000 / s }')
ops=$(awk -v r="$rate" -v l="$P2_S" 'BEGIN { printf "%.0f", r * l }')
echo "watch-cost: $B; load $(cut -d' ' -f1-3 /proc/loadavg); $(date -u +%FT%TZ)"
for ((r = 0; r < REPS; r++)); do
	t0=$EPOCHREALTIME
	"$B/bench/hashtable" "$ops" >/dev/null
	one "P2 ${P2_S} s" "$(elapsed "$t0")" "$B/bench/hashtable" "$ops"
	t0=$EPOCHREALTIME
	"$B/bench/yield_storm" "$YIELDS" >/dev/null
	one yield_storm "$(elapsed "$t0")" "$B/bench/yield_storm" "$YIELDS"
done
echo "medians, x native (load now $(cut -d' ' -f1-3 /proc/loadavg))"
for label in "P2 ${P2_S} s" yield_storm; do
	printf '  %-12s' "$label"
	for w in $CONFIGS; do
		printf '  watches=%s %sx' "$w" "$(echo "${X[$label/$w]-}" | median)"
	done
	echo
done
