#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Guest side of bench/kernel/p8-kernel-budget.sh, run by tests/vm/kcsan-vm as its probe
# command (its --probe arguments are ignored).  Environment: B the build directory,
# SECS the seconds of each read(2) loop, ITERS the iterations of each module round,
# BUDGETS the budgets to compare.  Each configuration is a kcsanctl run of its own;
# their files go to $KCSAN_VM_OUT/p8-*.
set -u
OUT=${KCSAN_VM_OUT:?run by tests/vm/kcsan-vm}
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
bench_init p8 "$B"
KO=$(echo "$REPO"/build/vm/kmod-*/kcsan_race/kcsan_race.ko)
READ_PATH=(--probe ksys_read --probe vfs_read --probe rw_verify_area --probe read_iter_zero
	   --probe security_file_permission --probe __fdget_pos)
MODULE=(--probe module:kcsan_race --probe '!kcsan_race_hidden_writer' --probe '!race_thread_fn'
	--kernel-debug "$KO")

# The median ns per read(2) of the loop's seconds after the third.
loop_ns() {
	sed -n 's/^kloop: second \([0-9]*\): \([0-9]*\) ns.*/\1 \2/p' "$1" |
		awk '$1 > 3 { print $2 }' | median | grep . || echo -
}
# The summary's sampler fields of a kcsanctl run.
summary() {
	summary_line "$1" |
		grep -oE '[0-9]+ sites|armed_sites: [0-9]+|total_sites: [0-9]+|hot_turns: [0-9]+|estimated_overhead_pct: [0-9]+|trap_floor_pct: [0-9]+|trap_ns: [0-9]+' |
		tr '\n' ' '
}
echo "  read(2) of /dev/zero, kprobes on ${READ_PATH[*]//--probe /}:"
echo "  ns per read(2), median of the loop's seconds 4 to $SECS"
"$B/bench/kloop" "$SECS" > "$OUT/p8-loop-native.out"
printf '    %-12s %8s\n' "no kcsand" "$(loop_ns "$OUT/p8-loop-native.out")"
for b in $BUDGETS; do
	"${KCSANCTL_RUN[@]}" --kernel --output - -v --overhead-budget "$b" --param sampler_warmup_cpu_ms=0 \
		"${READ_PATH[@]}" -- "$B/bench/kloop" "$SECS" > "$OUT/p8-loop-$b.out" 2> "$OUT/p8-loop-$b.err"
	printf '    %-12s %8s   %s\n' "budget $b" "$(loop_ns "$OUT/p8-loop-$b.out")" "$(summary "$OUT/p8-loop-$b.err")"
done


# How much of the machine's CPU time each racy scenario takes to its first report
# with every site armed: what the kernel-mode warm-up (sampler_warmup_cpu_ms) covers.
# -vv prints the sampler's line every 100 ms period with the machine's busy CPUs; the
# CPU-ms of a round up to its first report is their sum since the previous round ended.
echo "  machine CPU-ms from the start of a round to its first report, every site armed, at"
echo "  the kernel-mode defaults (kcsan_race's racy scenarios, rounds of $ITERS iterations)"
rounds='for s in 0 1 2 4 8; do tests/kmod/kcsan_race/workload.sh '"$ITERS"' 120 $((1 << s)) || exit 1; done'
"${KCSANCTL_RUN[@]}" --kernel --output - -vv --overhead-budget 100 "${MODULE[@]}" -- sh -c "$rounds" \
	> "$OUT/p8-first.log" 2>&1
awk 'BEGIN { split("0 1 2 4 8", sc, " "); r = 1 }
	/^kcsand: sampler: [0-9]+\/[0-9]+ sites armed/ { for (i = 1; i <= NF; i++) if ($i == "CPUs,") cpu += $(i - 1) * 100 }
	/^BUG: KCSAN: / && !seen { seen = 1; printf "    scenario %-3s %6.0f ms  %s\n", sc[r], cpu, substr($0, 13) }
	/^workload.sh: round .* done/ { if (!seen) printf "    scenario %-3s    no report\n", sc[r]; r++; seen = 0; cpu = 0 }' \
	"$OUT/p8-first.log"
exit 0
