#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Recall and precision of kcsand at its defaults on an outside suite of
# OpenMP C micro-benchmarks named as DataRaceBench names them: NAME-yes.c
# has a data race, NAME-no.c has none.  Nothing of the suite is kept in
# this repository: give its path.
#
# Each program is built with gcc -O1 -g -fopenmp -fno-omit-frame-pointer
# (the suite's polybench helpers linked when it includes them) and run
# once under `kcsanctl run`.  A run that reports (any "BUG: KCSAN:" line)
# is a positive.  recall = racy programs reported / racy programs run,
# precision = racy programs reported / programs reported.  A program that
# does not build, or whose run passes the timeout, is counted apart and
# left out of both.
#
# Usage: bench/omp-suite.sh SUITE_DIR [BUILD_DIR]   (root)
#   SUITE_DIR: the suite's checkout (with micro-benchmarks/) or that folder.
# Environment: OMP_SUITE_TIMEOUT (seconds per run, default 60),
# OMP_SUITE_OPT (the optimization level, default -O1; -O0 keeps the
# races that -O1 removes with the dead code around them),
# OMP_SUITE_TOOL (kcsand, the default, or tsan: each program built with
# -fsanitize=thread as well and run alone, a positive being a "WARNING:
# ThreadSanitizer: data race"; gcc's TSan, without Archer, does not see
# libgomp's own synchronization),
# OMP_SUITE_STRIP (1: each program stripped after its build, as a
# distribution ships it: no symbol for its outlined functions, nor for the
# functions that would name a report),
# OMP_SUITE_ONLY (a grep -E pattern over the file names), OMP_SUITE_ARGS
# (extra kcsanctl run options), OMP_SUITE_OUT (where the builds, logs and
# per-program results go, default a temporary folder, removed at the end).
set -uo pipefail
SUITE=${1:?usage: bench/omp-suite.sh SUITE_DIR [BUILD_DIR]}
B=${2:-build}
TIMEOUT=${OMP_SUITE_TIMEOUT:-60}
ONLY=${OMP_SUITE_ONLY:-.}
OPT=${OMP_SUITE_OPT:--O1}
TOOL=${OMP_SUITE_TOOL:-kcsand}
case $TOOL in
kcsand) SAN=() PAT='^BUG: KCSAN: ' ;;
tsan) SAN=(-fsanitize=thread) PAT='^WARNING: ThreadSanitizer: data race' ;;
*) echo "omp-suite: OMP_SUITE_TOOL is kcsand or tsan" >&2; exit 2 ;;
esac
read -ra ARGS <<<"${OMP_SUITE_ARGS:-}"

[ "$(id -u)" = 0 ] || { echo "omp-suite: must run as root (uprobes, BPF)" >&2; exit 2; }
[ -d "$SUITE/micro-benchmarks" ] && SUITE=$SUITE/micro-benchmarks
[ -d "$SUITE" ] || { echo "omp-suite: no folder $SUITE" >&2; exit 2; }
[ -x "$B/kcsanctl" ] || { echo "omp-suite: no $B/kcsanctl: run make first" >&2; exit 2; }
KCSANCTL=$(realpath "$B/kcsanctl")
OUT=${OMP_SUITE_OUT:-}
if [ -z "$OUT" ]; then
	OUT=$(mktemp -d)
	trap 'rm -rf "$OUT"' EXIT
fi
mkdir -p "$OUT" || exit 2

# build SRC BIN: 0 when built.
build() {
	local extra=()

	grep -q 'polybench' "$1" && [ -f "$SUITE/utilities/polybench.c" ] &&
		extra=(-DPOLYBENCH_NO_FLUSH_CACHE "$SUITE/utilities/polybench.c")
	gcc "$OPT" -g -fopenmp -fno-omit-frame-pointer "${SAN[@]}" -I"$SUITE" \
		-I"$SUITE/utilities" -o "$2" "$1" "${extra[@]}" -lm >"$2.build" 2>&1 || return 1
	[ "${OMP_SUITE_STRIP:-0}" != 1 ] || strip "$2"
}

tp=0 fn=0 fp=0 tn=0 timeouts=0 unbuilt=0
printf 'program\texpected\tgot\tseconds\n' >"$OUT/results.tsv"
for src in "$SUITE"/*.c; do
	name=$(basename "$src" .c)
	case $name in
	*-yes) racy=1 ;;
	*-no) racy=0 ;;
	*) continue ;;
	esac
	grep -Eq "$ONLY" <<<"$name" || continue
	bin=$OUT/$name
	if ! build "$src" "$bin"; then
		unbuilt=$((unbuilt + 1))
		printf '%s\t%s\tunbuilt\t0\n' "$name" "$racy" >>"$OUT/results.tsv"
		continue
	fi
	t0=$(date +%s.%N)
	if [ "$TOOL" = tsan ]; then
		(cd "$OUT" && timeout "$TIMEOUT" "$bin" >"$bin.log" 2>&1 </dev/null)
	else
		(cd "$OUT" && timeout "$TIMEOUT" "$KCSANCTL" run "${ARGS[@]}" -- "$bin" \
			>"$bin.log" 2>&1 </dev/null)
	fi
	rc=$?
	secs=$(echo "$(date +%s.%N) - $t0" | bc)
	if [ "$rc" = 124 ]; then
		got=timeout
		timeouts=$((timeouts + 1))
	elif grep -Eq "$PAT" "$bin.log"; then
		got=1
	else
		got=0
	fi
	case $racy$got in
	11) tp=$((tp + 1)) ;;
	10) fn=$((fn + 1)) ;;
	01) fp=$((fp + 1)) ;;
	00) tn=$((tn + 1)) ;;
	esac
	printf '%s\t%s\t%s\t%.1f\n' "$name" "$racy" "$got" "$secs" >>"$OUT/results.tsv"
done

echo "omp-suite: $((tp + fn)) racy programs run, $((fp + tn)) race-free; $timeouts timed out" \
	"(over ${TIMEOUT} s), $unbuilt did not build: left out"
echo "omp-suite: reported: $tp racy (missed $fn), $fp race-free"
awk -v tp=$tp -v fn=$fn -v fp=$fp 'BEGIN {
	printf "omp-suite: recall %.2f, precision %.2f\n",
		tp + fn ? tp / (tp + fn) : 0, tp + fp ? tp / (tp + fp) : 0 }'
echo "omp-suite: missed:" $(awk -F'\t' '$2 == 1 && $3 == 0 { print $1 }' "$OUT/results.tsv")
echo "omp-suite: false reports:" $(awk -F'\t' '$2 == 0 && $3 == 1 { print $1 }' "$OUT/results.tsv")
