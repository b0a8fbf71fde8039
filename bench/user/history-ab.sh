#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Two or three builds of kcsand, A, B (and C), on the history's cost, in one
# run, alternated (A B C, then C B A, ...) so that a loaded machine's drift
# falls on each alike; or one build's own figures (what make bench runs):
#   - P2 (bench/programs/hashtable.c at its native rate measured now) at each
#     length of AB_LENGTHS seconds, a native run before each pair, x native;
#   - the BPF time per checked access and per sync operation that -v prints,
#     on a sync-heavy program of tests/history (AB_SYNC).
# Prints each run's figures, then the medians per build.
#
# Usage: bench/user/history-ab.sh BUILD_A [BUILD_B [BUILD_C]]   (root; each: make all
#   build/bench/hashtable history-programs, or make bench-programs)
# Environment: AB_LENGTHS (default "2 5"), AB_REPS (pairs of each, default 3),
# AB_SYNC (default free_fetch_add_message), AB_SYNC_REPS (default 3).
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
[[ $# -ge 1 && $# -le 3 ]] || { echo "usage: $0 BUILD_A [BUILD_B [BUILD_C]]" >&2; exit 2; }
DIRS=() LABELS=(A B C)
for d in "$@"; do
	bench_init history-ab "$d" root
	DIRS+=("$B")
done
LENGTHS=${AB_LENGTHS-2 5}
REPS=${AB_REPS:-3}
SYNC=${AB_SYNC:-free_fetch_add_message}
SREPS=${AB_SYNC_REPS:-3}
for d in "${DIRS[@]}"; do
	bench_need "$d/kcsanctl" "$d/bench/hashtable" "$d/tests/history/$SYNC"
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
declare -A X NS SYNCNS

# bpf_ns FILE: "per checked access" and "per sync operation" of -v's history line.
bpf_ns() {
	sed -nE 's/.*BPF time: ([0-9]+) ns per checked access, ([0-9]+) ns per sync operation.*/\1 \2/p' "$1" | tail -1
}

# each R FUNCTION ARGS...: FUNCTION DIR LABEL ARGS... for every build, in
# order on even R, reversed on odd R.
each() {
	local r=$1 f=$2 n=${#DIRS[@]} i j

	shift 2
	for ((j = 0; j < n; j++)); do
		i=$j
		((r % 2)) && i=$((n - 1 - j))
		"$f" "${DIRS[$i]}" "${LABELS[$i]}" "$@"
	done
}

# p2 BUILD_DIR LABEL OPS NATIVE_S
p2() {
	local t0 k found=no

	t0=$EPOCHREALTIME
	timeout -k 5 200 "$1/kcsanctl" run -v -- "$1/bench/hashtable" "$3" >/dev/null 2>"$tmp/err"
	k=$(elapsed "$t0")
	grep -q '^BUG: KCSAN: ' "$tmp/err" && found=yes
	set -- "$@" "$k" "$(ratio "$k" "$4")" "$(bpf_ns "$tmp/err")"
	printf '  %-2s %-6s native %6s s  kcsand %6s s  %5sx  race %-3s  BPF ns/access, ns/sync: %s\n' \
		"$2" "$len s" "$4" "$5" "$6" "$found" "${7:--}"
	X[$2/$len]+=" $6"
}

t0=$EPOCHREALTIME
"${DIRS[0]}/bench/hashtable" 20000000 >/dev/null
rate=$(awk -v s="$(elapsed "$t0")" 'BEGIN { printf "%.0f", 20000000 / s }')
echo "history-ab: ${DIRS[*]} (A B C in that order); load $(cut -d' ' -f1-3 /proc/loadavg); $(date -u +%FT%TZ)"
echo "P2 (native rate now: $rate operations/s per thread)"
for len in $LENGTHS; do
	ops=$(awk -v r="$rate" -v l="$len" 'BEGIN { printf "%.0f", r * l }')
	for ((r = 0; r < REPS; r++)); do
		t0=$EPOCHREALTIME
		"${DIRS[0]}/bench/hashtable" "$ops" >/dev/null
		n=$(elapsed "$t0")
		each "$r" p2 "$ops" "$n"
	done
done

echo "$SYNC under -v (BPF ns per checked access / per sync operation, wall s)"
sync_run() {
	local t0 w

	t0=$EPOCHREALTIME
	timeout -k 5 200 "$1/kcsanctl" run -v -- "$1/tests/history/$SYNC" >/dev/null 2>"$tmp/err"
	w=$(elapsed "$t0")
	read -r acc sop <<<"$(bpf_ns "$tmp/err")"
	printf '  %s  %6s ns/access  %6s ns/sync  %6s s  %s\n' "$2" "${acc:--}" "${sop:--}" "$w" \
		"$(grep -c '^BUG: KCSAN: ' "$tmp/err") reports"
	NS[$2]+=" ${acc:-}"
	SYNCNS[$2]+=" ${sop:-}"
}
for ((r = 0; r < SREPS; r++)); do
	each "$r" sync_run
done

echo "medians (load now $(cut -d' ' -f1-3 /proc/loadavg))"
for ((i = 0; i < ${#DIRS[@]}; i++)); do
	l=${LABELS[$i]}
	printf '  %s:' "$l"
	for len in $LENGTHS; do
		printf ' P2 %s s %sx,' "$len" "$(echo "${X[$l/$len]-}" | median)"
	done
	echo " $SYNC $(echo "${NS[$l]-}" | median) ns/access $(echo "${SYNCNS[$l]-}" | median) ns/sync"
done
