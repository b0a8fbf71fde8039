#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# What the history's memory-lifetime probes (free, realloc, munmap: the
# range forgotten; docs/history.md) cost on a malloc-heavy program,
# bench/programs/malloc_heavy.c: two threads, about 2.6 million malloc/free pairs
# at the default ROUNDS.  Wall time natively and under kcsanctl run at the
# defaults and with --no-history; then, on a twentieth of the rounds, every
# probe on (--overhead-budget 100), natively and under kcsanctl, with -v's
# count of sync operations and their BPF time.  With a second build directory, the same
# under it (a build without the lifetime probes) for the difference.
#
# Usage: bench/user/history-malloc.sh [BUILD_DIR [OTHER_BUILD_DIR]]   (root; make
# bench-programs builds what it needs)
# Environment: ROUNDS (per thread, default 1300000), REPS (default 3).
set -uo pipefail
OTHER=${2:+$(cd "$2" && pwd)}
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
bench_init history-malloc "${1:-}" root
ROUNDS=${ROUNDS:-1300000}
REPS=${REPS:-3}
PROG=$B/bench/malloc_heavy
bench_need "$PROG" "$B/kcsanctl" ${OTHER:+"$OTHER/kcsanctl"}

# wall CMD...: seconds of wall time, on stdout; the command's output in $B/bench/last.out.
wall() {
	local t0=$EPOCHREALTIME

	"$@" >"$B/bench/last.out" 2>&1
	elapsed "$t0"
}

runs() {
	local label=$1; shift
	local all=""
	for ((i = 0; i < REPS; i++)); do
		all+=" $(wall "$@")"
	done
	echo "$label:$all s"
}

echo "malloc_heavy $ROUNDS rounds x 2 threads; load: $(cut -d' ' -f1-3 /proc/loadavg)"
runs "native" "$PROG" "$ROUNDS"
for b in "$B" $OTHER; do
	KCSANCTL_RUN=("$b/kcsanctl" run)
	runs "$b defaults" "${KCSANCTL_RUN[@]}" -- "$PROG" "$ROUNDS"
	runs "$b --no-history" "${KCSANCTL_RUN[@]}" --no-history -- "$PROG" "$ROUNDS"
done
echo "$((ROUNDS / 20)) rounds, native: $(wall "$PROG" $((ROUNDS / 20))) s"
for b in "$B" $OTHER; do
	KCSANCTL_RUN=("$b/kcsanctl" run)
	echo "$b --overhead-budget 100 -v: $(wall "${KCSANCTL_RUN[@]}" --overhead-budget 100 -v -- \
		"$PROG" $((ROUNDS / 20))) s"
	grep '^kcsand: history' "$B/bench/last.out" | sed 's/^/    /'
done
