#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Guest side of tests/vm/kernel-sampler.sh, run by tests/vm/kcsan-vm as its probe
# command, in the guest, with the harness's arguments:
#
#   sampler-steps.sh --probe SPEC... -- COMMAND...
#
# Runs kcsanctl run --kernel -vv three times, each writing its reports and its stderr, in
# the order they came, to $KCSAN_VM_OUT/STEP.log:
#   small  --overhead-budget 5, no warm-up, around COMMAND (a long round of the racy
#          module) until the log has what the host checks: the sampler works from the
#          first period; a pair of functions is reported at most every 500 ms, so that
#          reports keep coming while it samples;
#   all    --overhead-budget 100, around up to five rounds of scenario 0 (20,000
#          iterations each), stopped at the first report: one round missed the race
#          on a loaded host, whose TCG guest may not overlap the two threads; every
#          site stays armed;
#   cold   --sample breakpoints over uname(2)'s one site and 39 that never run, around
#          one uname(1) a second until a site was checked and a pass over the 40 done
#          (at most 60 s): which sites were checked, and when;
#   share  --sample breakpoints over vfs_read and vfs_write among the same 39, around 8 s
#          of dd: where the registers' time went;
# then what BPF still holds (bpf-after.txt: nothing of kcsand's should be left).
# Exit status 66 when a step reported a race.
set -u
OUT=${KCSAN_VM_OUT:?run by tests/vm/kcsan-vm}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
KCSANCTL=$REPO/build/kcsanctl
# SAMPLER_SMALL_LOG=LOG sampler-steps.sh COMMAND...: the small step's command.  Starts
# COMMAND, the long round, and ends once LOG has what the host checks: three
# periods with sites disarmed, the race reported after the third, a hot turn, and
# the race reported with both sides at least once (a late report of unknown origin
# alone ended it once, and small_race_reported failed: kcsan_race_reader+0x5/0x20
# twice, its writer unseen).  The round
# goes on racing after that, so the run ends, and its summary is taken, with the hot sites
# still disarmed: its armed_sites cannot be the full set an idle last period arms (twice,
# on a loaded host, small_summary_subset failed).  At most the whole round.
if [ "${SAMPLER_SMALL_LOG:-}" ]; then
	"$@" &
	until awk -v t="BUG: KCSAN: data-race in kcsan_race_reader / kcsan_race_writer" '
		/^kcsand: sampler: [0-9]+\/[0-9]+ sites armed/ {
			split($3, a, "/"); if (a[1] < a[2]) n++; if (/ \+ a hot turn/) turns++ }
		$0 == t { pair++ }
		n >= 3 && ($0 == t || /^BUG: KCSAN: data-race in kcsan_race_reader\+/) { late++ }
		END { exit !(late && turns && pair) }' "$SAMPLER_SMALL_LOG"; do
		kill -0 $! 2>/dev/null || { wait $!; exit; }
		sleep 1
	done
	exit 0
fi
. "$REPO/tests/vm/steps-lib.sh"
probes=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do probes+=("$1"); shift; done
shift
# The module's .ko (built by kcsan-vm, with DWARF): without debug info, kcsand never
# watches a module's plain accesses, since any might read a device register.
KO=$(ls "$REPO"/build/vm/kmod-*/kcsan_race/kcsan_race.ko 2>/dev/null | head -1)
common=(--kernel -vv --output - --skip-watch 10 --udelay-task 300 ${KO:+--kernel-debug "$KO"})

SAMPLER_SMALL_LOG=$OUT/small.log \
step small "$KCSANCTL" run "${common[@]}" --overhead-budget 5 --param sampler_warmup_cpu_ms=0 \
	--param report_once_in_ms=500 "${probes[@]}" -- "$0" "$@" > "$OUT/small.log" 2>&1
step "round stop" round_stop
step all "$KCSANCTL" run "${common[@]}" --param overhead_budget=100 --halt-on-error "${probes[@]}" -- \
	sh -c 'for r in 1 2 3 4 5; do tests/kmod/kcsan_race/workload.sh 20000 120 1 || exit; done' \
	> "$OUT/all.log" 2>&1
# cold: code breakpoints over one site that runs once a second (uname(2)) among 39
# that never run here (SysV and POSIX message queues, semaphores), a 100 ms tick and
# so a 3.2 s placement timeout (a loaded host stretches the loop's second): the cold
# site keeps its register until it runs.  A pass over the 40 takes 43 s at most.  What the
# host checks (a site checked, a pass, a placement fired and one timed out) is there once
# -vv has said a site was checked and a pass done: uname stops then, not after a fixed 60 s
# (60 s of kernel-sampler's 104 in a quiet make check), and at 60 s as before if not, with
# status 0 as before (the loop's last grep would make it 1: cold_exit_0 is kcsanctl's status).
# uname(2)'s bounds: its address, then the next symbol's.  Not `sort /proc/kallsyms`, which
# took 180 s of the guest's time at load 17 (19 s on the host itself, where this awk takes
# 2 s).  Addresses are 16 hex digits: compared as strings.
awk -v n=__x64_sys_newuname '{ a[NR] = $1 } $3 == n && lo == "" { lo = $1; l = $0 }
	END { for (i in a) if (a[i] > lo && (hi == "" || a[i] < hi)) hi = a[i]
	      if (lo != "") { print l; print hi " t (next symbol)" } }' /proc/kallsyms > "$OUT/newuname.sym"
step cold "$KCSANCTL" run --kernel -vv --output - --no-marking --sample breakpoints --sample-period 100000 \
	--skip-watch 10 --udelay-task 300 --probe __x64_sys_newuname --probe '__x64_sys_mq_*' \
	--probe 'ksys_msg*' --probe 'ksys_sem*' -- \
	sh -c 'for i in $(seq 60); do uname > /dev/null; sleep 1
		grep -q "^kcsand: breakpoints: 0x[0-9a-f]* checked for the first time" "$1" &&
			grep -q "^kcsand: breakpoints: pass [1-9][0-9]* over the [0-9]* sites done" "$1" && break
	done; true' sh "$OUT/cold.log" > "$OUT/cold.log" 2>&1
# share: code breakpoints over vfs_read and vfs_write, whose sites dd runs thousands of
# times a second (and their error paths never), among the same 39 sites that never run, a
# 10 ms tick, for 8 s: the sites that fired hold most of the register time (a cold
# placement holds 8 to 32 ticks, a fire one or two), the cycle a fifth.
step share "$KCSANCTL" run --kernel -v --output - --no-marking --sample breakpoints \
	--sample-period 10000 --skip-watch 10 --udelay-task 300 --probe vfs_read --probe vfs_write \
	--probe '__x64_sys_mq_*' --probe 'ksys_msg*' --probe 'ksys_sem*' -- \
	sh -c 'timeout 8 dd if=/dev/zero of=/dev/null bs=1 2> /dev/null; true' \
	> "$OUT/share.log" 2>&1
bpftool link list > "$OUT/bpf-after.txt" 2>&1
grep -q '^BUG: KCSAN:' "$OUT/small.log" "$OUT/all.log" && exit 66
exit 0
