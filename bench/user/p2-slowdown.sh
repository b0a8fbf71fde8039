#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# P2: slowdown of a CPU-bound multithreaded workload with one real race
# (bench/programs/hashtable.c), every configuration measured in this one run,
# interleaved when BENCH_REPS > 1:
#   native | kcsand at the default budget | kcsand with every site armed |
#   gcc -fsanitize=thread | valgrind --tool=helgrind | valgrind --tool=drd
# Prints wall-time and peak-RSS ratios to native, whether each found the race
# and when its first report came.  Target: default budget <= 1.3x native with
# the race found within 30 s.
#
# Usage: bench/user/p2-slowdown.sh [BUILD_DIR]   (root; make bench-programs builds what it needs)
# Peak RSS is what wait4 reports for the whole process tree: for kcsand, the larger of
# kcsanctl and the program.
# Environment: P2_OPS (operations per thread, default 300,000,000: 27-50 s natively here),
# P2_TIMEOUT (seconds per slow run, default 120), BENCH_REPS (default 1), P2_CONFIGS
# (the configurations to run, default all: "native kcsand-default kcsand-all tsan helgrind drd";
# native always runs, it is the reference).
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
bench_init p2 "${1:-}" root
OPS=${P2_OPS:-300000000}
TIMEOUT=${P2_TIMEOUT:-120}
REPS=${BENCH_REPS:-1}
HT=$B/bench/hashtable
HT_TSAN=$B/bench/hashtable-tsan
bench_need "$B/kcsanctl" "$HT" "$HT_TSAN"
command -v valgrind >/dev/null || echo "p2: valgrind not installed: helgrind and drd skipped" >&2

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# run NAME PATTERN CMD...: wall seconds, peak RSS (KiB, of the whole process
# tree as wait4 reports it), seconds to the first line matching PATTERN.
declare -A WALL RSS FIRST STATUS
run() {
	local name=$1 pat=$2 t0 wall first rc
	shift 2
	rm -f "$tmp/first"
	t0=$EPOCHREALTIME
	/usr/bin/time -f '%M' -o "$tmp/rss" timeout -k 5 "$TIMEOUT" "$@" \
		>/dev/null 2> >(first_line "$pat" "$tmp/first" >"$tmp/err")
	rc=$?
	wall=$(elapsed "$t0")
	# The first_line reader of the process substitution; $! is unset (and set -u
	# stops the script) when bash started no such process.
	if [[ -n ${!:-} ]]; then wait "$!"; fi
	first=$(cat "$tmp/first" 2>/dev/null)
	WALL[$name]+=" $wall"
	RSS[$name]+=" $(tail -1 "$tmp/rss" 2>/dev/null | grep -E '^[0-9]+$' || echo 0)"
	if [[ -n $first ]]; then
		FIRST[$name]+=" $(elapsed "$t0" "$first")"
	else
		FIRST[$name]+=" -"
	fi
	[[ $rc == 124 || $rc == 137 ]] && STATUS[$name]="timeout"
	cp "$tmp/err" "$tmp/$name.err"
}

CONFIGS=(native kcsand-default kcsand-all tsan helgrind drd)
want() { [[ " native ${P2_CONFIGS:-${CONFIGS[*]}} " == *" $1 "* ]]; }
for c in ${P2_CONFIGS-}; do
	[[ " ${CONFIGS[*]} " == *" $c "* ]] || { echo "p2: P2_CONFIGS: unknown configuration '$c' (one of: ${CONFIGS[*]})" >&2; exit 2; }
done
for ((r = 0; r < REPS; r++)); do
	run native 'x^' "$HT" "$OPS"
	want kcsand-default && run kcsand-default '^BUG: KCSAN: ' "${KCSANCTL_RUN[@]}" -v -- "$HT" "$OPS"
	want kcsand-all && run kcsand-all '^BUG: KCSAN: ' "${KCSANCTL_RUN[@]}" --overhead-budget 100 -- "$HT" "$OPS"
	want tsan && run tsan 'WARNING: ThreadSanitizer: data race' env TSAN_OPTIONS=halt_on_error=0 \
		"$HT_TSAN" "$OPS"
	if command -v valgrind >/dev/null; then
		want helgrind && run helgrind 'Possible data race' valgrind --tool=helgrind "$HT" "$OPS"
		want drd && run drd 'Conflicting (load|store)' valgrind --tool=drd "$HT" "$OPS"
	fi
done

n_wall=$(echo "${WALL[native]}" | median)
n_rss=$(echo "${RSS[native]}" | median)
printf 'P2: hash table, 2 threads x %d operations, one unlocked read of a bucket count\n' "$OPS"
printf '  %-16s %9s %9s %9s %9s  %s\n' config "wall s" "x native" "RSS MiB" "x native" \
	"race found (first report after)"
for c in "${CONFIGS[@]}"; do
	[[ -n ${WALL[$c]-} ]] || continue
	w=$(echo "${WALL[$c]}" | median)
	m=$(echo "${RSS[$c]}" | median)
	firsts=$(echo "${FIRST[$c]}" | tr ' ' '\n' | grep -v '^$')
	nfound=$(grep -vc '^-$' <<<"$firsts")
	if ((REPS > 1)); then
		found="$nfound of $REPS runs ($(echo $firsts | sed 's/ /, /g') s)"
	else
		found="no"
		[[ $firsts != - ]] && found="yes ($firsts s)"
	fi
	[[ $c == native ]] && found="-"
	more=""
	[[ ${STATUS[$c]-} == timeout ]] && more=" (killed at ${TIMEOUT} s: ratio is a lower bound)"
	awk -v c="$c" -v w="$w" -v wr="$(ratio "$w" "$n_wall")" -v m="$m" -v mr="$(ratio "$m" "$n_rss")" \
	    -v f="$found" -v x="$more" \
		'BEGIN { printf "  %-16s %9.1f %9s %9.1f %9s  %s%s\n", c, w, wr, m / 1024, mr, f, x }'
done
echo "  target: kcsand-default <= 1.30x native, race found within 30 s"
[ ! -e "$tmp/kcsand-default.err" ] || grep -h 'armed_sites' "$tmp/kcsand-default.err" | sed -E 's/.*(armed_sites: [^ ]+ total_sites: [^ ]+ hot_turns: [^ ]+ estimated_overhead_pct: [^ ]+ hot_turns_one_thread: [^ ]+).*/  kcsand-default at exit: \1/' || true
