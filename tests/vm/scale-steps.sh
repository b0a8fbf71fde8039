#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Guest side of tests/vm/kernel-scale.sh, run by tests/vm/kcsan-vm as its probe
# command, in the guest, with the harness's arguments:
#
#   scale-steps.sh --probe SPEC... -- COMMAND...
#
# Each step writes its reports and stderr to $KCSAN_VM_OUT/STEP.log, its exit status to
# steps.rc and its seconds to step-times (tests/vm/steps-lib.sh):
#   kmsg      --kmsg around COMMAND (a round of the racy module), until the first
#             report: it is also in the guest's kernel log (kmsg.txt: dmesg from a
#             marker on);
#   init      --probe 'vfs_caches_init*' (__init code, freed after boot): refused;
#   exit      --probe exit_elf_binfmt (built-in __exit code, freed with it): refused;
#   xbp       build/vm/xbp/xbp-check: execute breakpoints with a BPF program, moved
#             by PERF_EVENT_IOC_MODIFY_ATTRIBUTES, and which addresses the kernel
#             refuses (xbp.txt);
#   bp        --sample breakpoints over the module around rounds of scenario 0 until
#             the first report (6 at most): no kprobe registered meanwhile
#             (kprobes-during.txt), every site sampled;
#   budget1, budget100
#             --sample breakpoints with no --sample-period over the VFS and pipe
#             functions around 8 s of the mixed workload, at --overhead-budget 1
#             and 100: the period the budget chose; budget100 is --duration's run
#             too: --duration 12 with a command that then sleeps 300 s ends at 12 s
#             (a start of its own cost 11-15 s of the suite's);
#   unload    kprobes on the module, which is unloaded (rmmod) while they are attached;
# then what BPF still holds (bpf-after.txt).  Exit status 66 when a step reported.
set -u
OUT=${KCSAN_VM_OUT:?run by tests/vm/kcsan-vm}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# A copy made by kernel-scale.sh, so that a rebuild on the host during the run cannot change it.
KCSANCTL=$OUT/kcsanctl
[ -x "$KCSANCTL" ] || KCSANCTL=$REPO/build/kcsanctl
. "$REPO/tests/vm/steps-lib.sh"
probes=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do probes+=("$1"); shift; done
shift
# The module's own DWARF: without it kcsand never watches a module's plain sites
# (any may be a device register, docs/marking.md).
KO=$(ls "$REPO"/build/vm/kmod-*/kcsan_race/kcsan_race.ko 2>/dev/null | head -1)
common=(--kernel --output - --skip-watch 10 --udelay-task 300 --overhead-budget 100
	${KO:+--kernel-debug "$KO"})

marker="kcsand-scale-kmsg $RANDOM"
echo "$marker" > /dev/kmsg
# One report is what the check compares: the run ends there, its round goes on.
step kmsg "$KCSANCTL" run "${common[@]}" --kmsg --halt-on-error "${probes[@]}" -- "$@" \
	> "$OUT/kmsg.log" 2>&1
round_ended
dmesg | sed -n "/$marker/,\$p" | sed -E 's/^\[ *[0-9.]+\] ?//' > "$OUT/kmsg.txt"

# __init functions, freed after boot: never decoded (their pages hold anything now).
step init "$KCSANCTL" run --kernel --output - --probe 'vfs_caches_init*' --duration 1 \
	> "$OUT/init.log" 2>&1
# Built-in __exit code (.exit.text) is freed with it, though past _einittext.
step exit "$KCSANCTL" run --kernel --output - --probe exit_elf_binfmt --duration 1 \
	> "$OUT/exit.log" 2>&1

X=$REPO/build/vm/xbp
step xbp "$X/xbp-check" "$X/hwbp_check.bpf.o" __x64_sys_getpid vfs_read entry_SYSCALL_64 \
	asm_exc_int3 exc_nmi default_do_nmi perf_event_nmi_handler kprobe_int3_handler \
	0xfffffe0000001000 > "$OUT/xbp.txt" 2>&1

# A placement gives its register back at the site's first trap (DataCollider's rule),
# so a round checks the racing sites only a few times (5-9 traps a round in CI) and
# one round found the race in 5 runs of 6: rounds go on until the first report is in
# the log (the engine flushes each), 6 at most.  The run itself is not halted, so its
# summary still covers every site's placement.
step bp "$KCSANCTL" run "${common[@]}" -v --sample breakpoints --sample-period 2000 \
	--probe module:kcsan_race --probe '!kcsan_race_hidden_writer' --probe '!race_thread_fn' \
	-- sh -c "cat /sys/kernel/debug/kprobes/list > $OUT/kprobes-during.txt; \
		  for i in 1 2 3 4 5 6; do \
			tests/kmod/kcsan_race/workload.sh 1500000 200 1 || exit; \
			grep -q '^BUG: KCSAN:' $OUT/bp.log && exit; \
		  done" > "$OUT/bp.log" 2>&1

# The budget sets the period: no --sample-period.  budget100's seconds, in step-times, are
# --duration's check: its command would go on for 300 s after the workload's 8.
step budget1 "$KCSANCTL" run --kernel --output - -v --sample breakpoints --overhead-budget 1 \
	--probe 'vfs_*' --probe 'pipe_*' -- "$REPO/build/vm/kworkload" mixed 8 > "$OUT/budget1.log" 2>&1
step budget100 "$KCSANCTL" run --kernel --output - -v --sample breakpoints --overhead-budget 100 \
	--probe 'vfs_*' --probe 'pipe_*' --duration 12 -- \
	sh -c "\"\$1\" mixed 8; exec sleep 300" sh "$REPO/build/vm/kworkload" > "$OUT/budget100.log" 2>&1

# Last, as the module does not come back: unloaded while its functions are probed.
step unload "$KCSANCTL" run "${common[@]}" --probe module:kcsan_race --probe '!race_thread_fn' -- \
	sh -c 'tests/kmod/kcsan_race/workload.sh 20000 60 1; rmmod kcsan_race; echo "rmmod $?"; sleep 2' \
	> "$OUT/unload.log" 2>&1

bpftool link list > "$OUT/bpf-after.txt" 2>&1
grep -q '^BUG: KCSAN:' "$OUT"/*.log && exit 66
exit 0
