#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Guest side of bench/kernel/p11-kprobes-vs-breakpoints.sh, run by tests/vm/kcsan-vm as its
# probe command: the --probe SPECs and --duration S reach it as arguments.
#   base         the mixed workload alone for S seconds: its throughput without kcsand;
#   kprobes      kcsanctl run --kernel --sample kprobes on the SPECs around S seconds of it;
#   breakpoints  the same with --sample breakpoints.
# Each run's stdout (reports and the workload's throughput) goes to MODE.out, its -v
# stderr to MODE.err, and MODE.times gets four clocks: kcsanctl started, the workload
# started (the probes were attached), the workload ended, kcsanctl exited (detached).
# --modes A,B (first) runs only those modes.
set -u
OUT=${KCSAN_VM_OUT:?run by tests/vm/kcsan-vm}
# The host side copied kcsanctl into $OUT: that is the build here.
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
bench_init p11 "$OUT"
secs=60
modes="kprobes breakpoints"
if [ "${1:-}" = --modes ]; then modes=${2//,/ }; shift 2; fi
probe_args "$@"
"$OUT/kworkload" mixed "$secs" > "$OUT/base.txt" 2>&1
for mode in $modes; do
	t0=$(date +%s.%N)
	"${KCSANCTL_RUN[@]}" --kernel --output - -v --sample "$mode" "${args[@]}" -- \
		sh -c "date +%s.%N > $OUT/$mode.wstart; $OUT/kworkload mixed $secs;
		       date +%s.%N > $OUT/$mode.wend" > "$OUT/$mode.out" 2> "$OUT/$mode.err"
	echo "$t0 $(cat "$OUT/$mode.wstart" "$OUT/$mode.wend" 2>/dev/null | tr '\n' ' ')$(date +%s.%N)" \
		> "$OUT/$mode.times"
done
