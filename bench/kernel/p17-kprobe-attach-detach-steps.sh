#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Guest side of bench/kernel/p17-kprobe-attach-detach.sh, run by tests/vm/kcsan-vm
# as its probe command, as p17-kprobe-attach-detach-steps.sh ROUNDS (the harness's
# arguments after it are ignored).  Runs $KCSAN_VM_OUT/kcsanctl (and kcsanctl-old,
# when there) ROUNDS times each, in turn, on tests/vm/core-kernel.sh's probe set;
# writes runs.txt ("BUILD ROUND: attached ... detached ..., exit S, optimization
# A -> B, rcu_expedited C -> D") and each run's stderr as BUILD-ROUND.err.
set -u
OUT=${KCSAN_VM_OUT:?run by tests/vm/kcsan-vm}
ROUNDS=${1:-2}
OPT=/proc/sys/debug/kprobes-optimization
REXP=/sys/kernel/rcu_expedited
SPECS=(vfs_read vfs_write vfs_open 'vfs_getattr*' vfs_statx 'vfs_fstat*' 'path_*'
       atime_needs_update tcp_poll)
probes=()
for s in "${SPECS[@]}"; do probes+=(--probe "$s"); done
run() {
	local build=$1 round=$2 before rbefore rc err=$OUT/$1-$2.err

	before=$(cat "$OPT" 2>/dev/null || echo none)
	rbefore=$(cat "$REXP" 2>/dev/null || echo none)
	"$OUT/$build" run --kernel -v --output /dev/null "${probes[@]}" -- true > /dev/null 2> "$err"
	rc=$?
	printf '%s %s: %s; %s; exit %s, optimization %s -> %s, rcu_expedited %s -> %s\n' "$build" "$round" \
		"$(grep -m1 -oE 'attached them in [0-9.]+ ms' "$err" || echo 'no attach line')" \
		"$(grep -m1 -oE 'detached [0-9]+ sites in [0-9.]+ ms' "$err" || echo 'no detach line')" \
		"$rc" "$before" "$(cat "$OPT" 2>/dev/null || echo none)" \
		"$rbefore" "$(cat "$REXP" 2>/dev/null || echo none)" >> "$OUT/runs.txt"
}
: > "$OUT/runs.txt"
builds=(kcsanctl)
[ -x "$OUT/kcsanctl-old" ] && builds+=(kcsanctl-old)
for ((r = 1; r <= ROUNDS; r++)); do
	for b in "${builds[@]}"; do
		run "$b" "$r"
	done
done
exit 0
