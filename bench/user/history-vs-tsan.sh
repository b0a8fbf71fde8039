#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The happens-before suite (tests/history/, expectations in expect.tsv)
# under kcsand at its defaults and under ThreadSanitizer, side by side:
# recall on the racy programs, precision over every report, wall time and
# peak RSS; then kcsand's overhead at the defaults on the P2 hash table
# (bench/programs/hashtable.c) at about 2, 5 and 30 s of native run time, and
# whether it found the race.
#
# Targets (issue 11): recall >= 0.9 on the racy programs, precision >= 0.95,
# P2 <= 1.3x native at each length with the race found.
#
# A report counts as a true positive when its title is the program's
# expected one ("data-race in A / B", functions in KCSAN's order); every
# other distinct title in a run is a false positive, so a racy program that
# also reports a race in main() costs precision.  TSan's reports get titles
# the same way, from the top frame of each of its two stacks.  TSan is
# built without Archer: it does not see libgomp's own synchronization
# (futexes), so its OpenMP false positives are part of what this measures.
#
# Usage: bench/user/history-vs-tsan.sh [BUILD_DIR]   (root; builds nothing)
#   make bench-programs
# Environment: HB_REPS (runs of each program per tool, default 3),
# HB_TIMEOUT (seconds per run, default 60), P2_LENGTHS (native seconds,
# default "2 5 30"; empty: skip P2), P2_REPS (default 1), HB_ARGS (extra
# kcsanctl run options for both parts, default none), HB_SUITE (0: P2 only).
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
bench_init history-vs-tsan "${1:-}" root
REPS=${HB_REPS:-3}
TIMEOUT=${HB_TIMEOUT:-60}
LENGTHS=${P2_LENGTHS-2 5 30}
P2REPS=${P2_REPS:-1}
EXPECT=tests/history/expect.tsv
HT=$B/bench/hashtable
mapfile -t NAMES < <(awk -F'\t' '!/^#/ && NF >= 3 { print $1 }' "$EXPECT")
bench_need "$B/kcsanctl" "$HT" "${NAMES[@]/#/$B/tests/history/}" "${NAMES[@]/#/$B/tests/history-tsan/}"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

expected() { awk -F'\t' -v p="$1" '$1 == p { print $2 }' "$EXPECT"; }

# kcsand's titles: the text after "BUG: KCSAN: ", one per line, distinct.
titles_kcsand() { sed -n 's/^BUG: KCSAN: //p' "$1" | sort -u; }

# TSan's: the top frame's function of the access and of the previous one.
titles_tsan() {
	awk '
	/^WARNING: ThreadSanitizer: data race/ { want = 2; n = 0; next }
	want && /^ +#0 / { f[n++] = $2; if (n == 2) { want = 0
		if (f[0] > f[1]) { t = f[0]; f[0] = f[1]; f[1] = t }
		print "data-race in " f[0] " / " f[1] } }
	' "$1" | sort -u
}

# run_one TOOL NAME: wall s, peak RSS KiB, and the titles it reported, into globals.
run_one() {
	local tool=$1 name=$2 t0
	local -a cmd

	if [[ $tool == kcsand ]]; then
		local plugin=()

		# A plugin program's library is probed as a user asks for a library's: --object.
		[[ -e $B/tests/history/${name}_lib.so ]] && plugin=(--object "$B/tests/history/${name}_lib.so")
		# shellcheck disable=SC2206
		cmd=("${KCSANCTL_RUN[@]}" ${HB_ARGS-} "${plugin[@]}" -- "$B/tests/history/$name")
	else
		cmd=("$B/tests/history-tsan/$name")
	fi
	t0=$EPOCHREALTIME
	/usr/bin/time -f '%M' -o "$tmp/rss" timeout -k 5 "$TIMEOUT" "${cmd[@]}" \
		>/dev/null 2>"$tmp/err"
	WALL=$(elapsed "$t0")
	RSS=$(tail -1 "$tmp/rss" | grep -E '^[0-9]+$' || echo 0)
	"titles_$tool" "$tmp/err" >"$tmp/titles"
}

# The suite, each program REPS times under each tool, and the summary table.
suite() {
	declare -gA TP FP FOUND RUNS WSUM RMAX
	for tool in kcsand tsan; do
		TP[$tool]=0 FP[$tool]=0 FOUND[$tool]=0 RUNS[$tool]=0 WSUM[$tool]=0 RMAX[$tool]=0
	done

	echo "History suite: ${#NAMES[@]} programs x $REPS runs, kcsand at its defaults vs gcc -fsanitize=thread"
	printf '  %-28s %-11s %-22s %-22s\n' program expected kcsand tsan
	nracy=0
	for name in "${NAMES[@]}"; do
		exp=$(expected "$name")
		[[ $exp != none ]] && nracy=$((nracy + 1))
		line=$(printf '  %-28s %-11s' "$name" "$([[ $exp == none ]] && echo race-free || echo racy)")
		for tool in kcsand tsan; do
			hits=0 fps=0
			for ((r = 0; r < REPS; r++)); do
				run_one "$tool" "$name"
				RUNS[$tool]=$((RUNS[$tool] + 1))
				WSUM[$tool]=$(awk -v a="${WSUM[$tool]}" -v b="$WALL" 'BEGIN { print a + b }')
				((RSS > RMAX[$tool])) && RMAX[$tool]=$RSS
				while IFS= read -r t; do
					[[ -z $t ]] && continue
					if [[ $t == "$exp" ]]; then
						TP[$tool]=$((TP[$tool] + 1)) hits=$((hits + 1))
					else
						FP[$tool]=$((FP[$tool] + 1)) fps=$((fps + 1))
						echo "$tool $name: $t" >>"$tmp/fp"
					fi
				done <"$tmp/titles"
			done
			FOUND[$tool]=$((FOUND[$tool] + hits))
			if [[ $exp == none ]]; then
				cell="$fps false in $REPS"
			else
				cell="found $hits/$REPS"
				((fps)) && cell+=", $fps false"
			fi
			line+=$(printf ' %-22s' "$cell")
		done
		echo "$line"
	done

	echo
	printf '  %-8s %8s %10s %12s %14s\n' tool recall precision "wall s/run" "peak RSS MiB"
	for tool in kcsand tsan; do
		awk -v t="$tool" -v f="${FOUND[$tool]}" -v nr="$((nracy * REPS))" -v tp="${TP[$tool]}" \
		    -v fp="${FP[$tool]}" -v w="${WSUM[$tool]}" -v n="${RUNS[$tool]}" -v r="${RMAX[$tool]}" \
		    'BEGIN { printf "  %-8s %8.2f %10s %12.3f %14.1f\n", t, nr ? f / nr : 0,
			     tp + fp ? sprintf("%.2f", tp / (tp + fp)) : "-", w / n, r / 1024 }'
	done
	echo "  targets: recall >= 0.90 on the racy programs, precision >= 0.95"
	if [[ -s $tmp/fp ]]; then
		echo "  false reports (tool program: title, each run):"
		sort "$tmp/fp" | uniq -c | sed 's/^/   /'
	fi
}

[[ ${HB_SUITE:-1} != 0 ]] && suite

[[ -z $LENGTHS ]] && exit 0

# P2: the hash table's native rate, then runs of about each length, native
# and kcsand interleaved.
echo
t0=$EPOCHREALTIME
"$HT" 20000000 >/dev/null
rate=$(awk -v s="$(elapsed "$t0")" 'BEGIN { printf "%.0f", 20000000 / s }')
echo "P2: hash table, kcsand at its defaults (native rate measured now: $rate operations/s per thread)"
printf '  %-8s %12s %9s %9s %7s  %s\n' length operations "native s" "kcsand s" "x" "race found (first report after)"
for len in $LENGTHS; do
	ops=$(awk -v r="$rate" -v l="$len" 'BEGIN { printf "%.0f", r * l }')
	for ((r = 0; r < P2REPS; r++)); do
		t0=$EPOCHREALTIME
		"$HT" "$ops" >/dev/null
		t1=$EPOCHREALTIME
		rm -f "$tmp/p2first"
		timeout -k 5 $((len * 10 + 60)) "${KCSANCTL_RUN[@]}" -v ${HB_ARGS-} -- "$HT" "$ops" \
			>/dev/null 2> >(first_line '^BUG: KCSAN: ' "$tmp/p2first" >"$tmp/p2err")
		t2=$EPOCHREALTIME
		wait $!
		first=$(cat "$tmp/p2first" 2>/dev/null)
		n=$(elapsed "$t0" "$t1") k=$(elapsed "$t1" "$t2")
		found=no
		[[ -n $first ]] && found="yes ($(elapsed "$t1" "$first") s)"
		printf '  %-8s %12d %9s %9s %7s  %s\n' "$len s" "$ops" "$n" "$k" "$(ratio "$k" "$n")" "$found"
		grep -Eho 'armed_sites: .*site_levels: [0-9/]*( cold_start_ms: [0-9]+ cold_credit_outs: [0-9]+)?' "$tmp/p2err" |
			sed -E 's/ (hot_turns_one_thread|unarmed_hits|trap_floor_pct|trap_ns): [^ ]+//g; s/^/           /'
	done
done
echo "  target: <= 1.30x native at each length, race found"
