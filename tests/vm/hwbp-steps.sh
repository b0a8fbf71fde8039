#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Guest side of tests/vm/kernel-hwbp.sh, run by tests/vm/kcsan-vm as its probe
# command, in the guest, with the harness's arguments:
#
#   hwbp-steps.sh VARIABLE --probe SPEC... -- COMMAND...
#
# Runs kcsanctl run --kernel three ways around COMMAND, each writing its reports
# to $KCSAN_VM_OUT/STEP.txt and its stderr to STEP.err:
#   escalation  kprobes on the SPECs (the reader of VARIABLE, not its writer): a
#               race of unknown origin, then the writer seen by a hardware
#               watchpoint on every CPU;
#   watch       no kprobe at all, --watch VARIABLE: every pair of conflicting
#               accesses to it, seen by the debug registers alone;
#               these two run COMMAND (a round of the module) up to five times,
#               until their log has the report the host checks: one round gave
#               none in one run of three at 5000 iterations, and a loaded host
#               may leave the two threads apart for a whole round;
#   rmw         the same on kcsan_race_array:8 around up to five rounds of scenario
#               1 (x[i]++), whatever COMMAND is, until the pair is reported;
#   bad_*       --watch with a missing variable, a user address, a bad length:
#               each must exit 2 with a reason, refused before the object loads.
# Then lists what BPF and perf still hold (bpf-after.txt): nothing should (and
# bpf-during.txt, taken while the watch step ran, shows what that looks like).
# Prints the reports of the first two steps; exit status 66 when one reported.
set -u
# HWBP_UNTIL_LOG=LOG HWBP_UNTIL_RE=ERE hwbp-steps.sh COMMAND...: a step's command, COMMAND up
# to five times, until LOG (the step's reports, written as they come) has a line
# matching ERE; not at all once it has.
if [ "${HWBP_UNTIL_LOG:-}" ]; then
	for _ in 1 2 3 4 5; do
		grep -qE -- "$HWBP_UNTIL_RE" "$HWBP_UNTIL_LOG" 2>/dev/null && exit 0
		"$@" || exit
	done
	exit 0
fi
OUT=${KCSAN_VM_OUT:?run by tests/vm/kcsan-vm}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
KCSANCTL=$REPO/build/kcsanctl
. "$REPO/tests/vm/steps-lib.sh"
var=$1; shift
probes=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do probes+=("$1"); shift; done
shift
# Every site armed: the escalation must not wait for the reader's turn (kernel-sampler.sh
# tests the sampler).
# The module's .ko (built by kcsan-vm, with DWARF): without debug info, kcsand never
# watches a module's plain accesses, since any might read a device register.
KO=$(ls "$REPO"/build/vm/kmod-*/kcsan_race/kcsan_race.ko 2>/dev/null | head -1)
common=(--kernel -v --skip-watch 10 --udelay-task 300 --overhead-budget 100 ${KO:+--kernel-debug "$KO"})

# Rounds until the report the host checks (the helper above): the writer's, caught by the
# escalation's debug register, which is armed only once the watchpoints' program has
# loaded at the first escalation (seconds here: the round may be over by then).
SELF=$REPO/tests/vm/hwbp-steps.sh
writer='^BUG: KCSAN: (data-race in kcsan_race_hidden_writer / kcsan_race_origin_reader|later write in kcsan_race_hidden_writer after)'
step escalation "$KCSANCTL" run "${common[@]}" --output "$OUT/escalation.txt" "${probes[@]}" -- \
	env HWBP_UNTIL_LOG="$OUT/escalation.txt" HWBP_UNTIL_RE="$writer" "$SELF" "$@" \
	2> "$OUT/escalation.err"
# What BPF holds while the watchpoint is armed: the links bpf-after.txt must not show.
step watch "$KCSANCTL" run "${common[@]}" --output "$OUT/watch.txt" --watch "$var" -- \
	sh -c 'bpftool link list > "$0/bpf-during.txt" 2>&1; exec "$@"' "$OUT" \
	env HWBP_UNTIL_LOG="$OUT/watch.txt" \
	HWBP_UNTIL_RE='^BUG: KCSAN: data-race in kcsan_race_hidden_writer / kcsan_race_origin_reader' \
	"$SELF" "$@" 2> "$OUT/watch.err"
# A read-modify-write seen by the debug registers alone (scenario 1, x[i]++): the
# access decoded from the trapping instruction, its own frame and read-write. The
# two threads of one round may not overlap in a loaded TCG guest: up to five rounds,
# until the pair is reported.  Not stopped at the first report: in a loaded guest
# the first may be the watcher's value change with the partner's trap too late
# for its stall, "race at unknown origin" (CI ci-AA, 2026-12-07, 13 races, the
# first of them that one); the pair comes in the same round.
step rmw "$KCSANCTL" run "${common[@]}" --output "$OUT/rmw.txt" --watch kcsan_race_array:8 -- \
	env HWBP_UNTIL_LOG="$OUT/rmw.txt" \
	HWBP_UNTIL_RE='^BUG: KCSAN: data-race in kcsan_race_rmw_inc / kcsan_race_rmw_inc$' \
	"$SELF" tests/kmod/kcsan_race/workload.sh 20000 120 2 2> "$OUT/rmw.err"
# With -v: a refusal before the object loads leaves no "decoded ... attached" line.
for bad in no_such_kcsan_race_var 0x1000 "$var:3"; do
	step "bad $bad" "$KCSANCTL" run -v --kernel --watch "$bad" --duration 1 > /dev/null 2>> "$OUT/bad.err"
done
{ bpftool link list; bpftool perf list; } > "$OUT/bpf-after.txt" 2>&1
cat "$OUT/escalation.txt" "$OUT/watch.txt" "$OUT/rmw.txt"
grep -q '^BUG: KCSAN:' "$OUT/escalation.txt" "$OUT/watch.txt" "$OUT/rmw.txt" && exit 66
exit 0
