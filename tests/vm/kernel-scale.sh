#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Kernel mode at scale, in Debian's stock kernel under QEMU (tests/vm/kcsan-vm) with
# the racy module tests/kmod/kcsan_race; the guest side is tests/vm/scale-steps.sh:
#   - --kmsg: a report of scenario 0 in the guest's kernel log, line for line as
#     kcsanctl printed it (title, access lines, the closing line);
#   - __init functions (freed after boot) are left out of a site set, and so are
#     built-in __exit functions, freed with them;
#   - --duration with a command: the run ends when the time is up, not when the
#     command does;
#   - execute breakpoints per CPU with a BPF program, moved while attached, and the
#     addresses the kernel refuses (tests/vm/bpf-check/xbp_check.c);
#   - --sample breakpoints over the module: no kprobe, every site sampled, the race,
#     and placements that followed evidence of running (IP samples, fires);
#   - the budget sets the period: longer at --overhead-budget 1, shorter at 100,
#     with a trap's cost calibrated;
#   - the module unloaded while its functions have kprobes: the run ends cleanly;
# then that no kprobe or BPF link was left and that the guest's kernel log has no
# lockup, stall, warning or BUG.
# Results in tests/lib.sh's format ("ok   NAME", "FAIL NAME: WHY", "N passed, N failed");
# the run's files are removed when all passed, unless KCSAND_VM_KEEP is set.
# tests/vm/kernel-scale.sh --check DIR checks the kept files of an earlier run.
set -u
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$REPO" || exit 1
. "$REPO/tests/vm/suite-lib.sh"

vm_check_arg "$@"
run_guest() {
vm_suite_start kernel-scale

# The guest runs host binaries: the breakpoint check and the workload, built here.
# Only what is stale, and one suite at a time (vm_prepare_lock): kernel-safety's guest may be
# running the same breakpoint check from the other queue (tests/vm/run-suites.sh).
mkdir -p build/vm/xbp
vm_prepare_lock
{ { ! vm_stale build/vm/xbp/hwbp_check.bpf.o tests/vm/bpf-check/hwbp_check.bpf.c ||
    clang -O2 -g -target bpf -D__TARGET_ARCH_x86 -I/usr/include/x86_64-linux-gnu \
	-c tests/vm/bpf-check/hwbp_check.bpf.c -o build/vm/xbp/hwbp_check.bpf.o; } &&
  { ! vm_stale build/vm/xbp/xbp-check tests/vm/bpf-check/xbp_check.c ||
    gcc -O2 -Wall tests/vm/bpf-check/xbp_check.c -o build/vm/xbp/xbp-check -lbpf; } &&
  { ! vm_stale build/vm/kworkload tests/vm/workload/kworkload.c ||
    gcc -O2 -Wall -pthread tests/vm/workload/kworkload.c -o build/vm/kworkload; }; } > "$out/build.log" 2>&1 ||
	setup_fail "cannot build the guest's helpers (see $out/build.log)"
vm_prepare_unlock

cp build/kcsanctl "$out/kcsanctl"
KCSAN_VM_PROBE_CMD="$REPO/tests/vm/scale-steps.sh" \
tests/vm/kcsan-vm --module tests/kmod/kcsan_race --out "$out" --keep --timeout 400 \
	--probe kcsan_race_reader --probe kcsan_race_writer \
	-- tests/kmod/kcsan_race/workload.sh 200000 200 1 > "$out/reports.txt" 2> "$out/harness.err"
rc=$?
guest_ran $rc
[ $rc = 66 ] && ok harness_exit_66 || { fail harness_exit_66 "expected 66, got $rc"; sed 's/^/    /' "$out/harness.err" | tail -20; }
}
[ -n "${check_only:-}" ] || run_guest

# step NAME: the steps.rc line of a step ("NAME STATUS").
step() { awk -v s="$1" '$1 == s' "$out/steps.rc" 2>/dev/null; }

# (1) --kmsg: the report in the kernel log as printed, and the counts in the summary.
K=$out/kmsg.log
read -r _ krc _ <<< "$(step kmsg)"
# The step halts at its first report, which on a loaded host may be the
# reader's one-stack "race at unknown origin" rather than the pair: either
# is scenario 0's race, and what this checks is the copy in the kernel log.
rep=$(sed -n "/^==========/,/^==========/p" "$K" | head -200)
title=$(grep -m1 '^BUG: KCSAN: data-race in kcsan_race_reader' "$K")
if [ "${krc:-}" = 66 ] && [ -n "$title" ] && grep -qxF "$title" "$out/kmsg.txt" &&
   grep -E '^(race at unknown origin, with )?(read|write) to 0xffff[0-9a-f]{12} of 8 bytes by task [0-9]+ on cpu [0-9]+:' "$K" |
	grep -qxFf - "$out/kmsg.txt" &&
   [ "$(head -n "$(wc -l <<< "$rep")" < <(sed -n '/^==========/,$p' "$out/kmsg.txt"))" = "$rep" ]; then
	ok kmsg_report_in_guest_dmesg "$title"
else
	fail kmsg_report_in_guest_dmesg "exit ${krc:-none}; expected a 'data-race in kcsan_race_reader' report in kmsg.txt line for line as in kmsg.log"
fi
grep -qE '^kcsanctl: run: kmsg: [1-9][0-9]* reports written' "$K" && ok kmsg_summary ||
	fail kmsg_summary "no 'kmsg: N reports written' line"

# (1b) Functions of vmlinux's init text: kallsyms lists them, their pages were freed.
read -r _ irc _ <<< "$(step init)"
if [ "${irc:-0}" != 0 ] && grep -q "no probe-able kernel function matches the spec 'vfs_caches_init\*' (all matches are __init or __exit code, freed after boot)" "$out/init.log"; then
	ok init_text_left_out
else
	fail init_text_left_out "exit ${irc:-none}: $(head -3 "$out/init.log" 2>/dev/null | tr '\n' ';')"
fi

read -r _ erc _ <<< "$(step exit)"
if [ "${erc:-0}" != 0 ] && grep -q "no probe-able kernel function matches the spec 'exit_elf_binfmt' (all matches are __init or __exit code, freed after boot)" "$out/exit.log"; then
	ok exit_text_left_out
else
	fail exit_text_left_out "exit ${erc:-none}: $(head -3 "$out/exit.log" 2>/dev/null | tr '\n' ';')"
fi

# (2) --duration with a command that would go on for 300 s more: the budget100 step's run,
# which may exit 66 (the VFS and pipe code has real races, below).
read -r _ drc _ <<< "$(step budget100)"
dsec=$(awk '$1 == "budget100" { printf "%d\n", $2 }' "$out/step-times" 2>/dev/null)
if [[ ${drc:-} =~ ^(0|66)$ ]] && [ "${dsec:-999}" -lt 150 ]; then
	ok duration_ends_command
	echo "     --duration 12 -- (8 s of workload, then sleep 300) ended after ${dsec} s"
else
	fail duration_ends_command "expected exit 0 or 66 well before 300 s, got ${drc:-none} after ${dsec:-?} s"
fi

# (3) Execute breakpoints with a BPF program, moved while attached.
read -r _ xrc _ <<< "$(step xbp)"
if [ "${xrc:-}" = 0 ] && grep -q 'with a BPF program: .*: ok$' "$out/xbp.txt"; then
	ok xbp_bpf_program_and_move
	sed 's/^/     /' "$out/xbp.txt"
else
	fail xbp_bpf_program_and_move "xbp-check exited ${xrc:-never ran}: $(tr '\n' ';' < "$out/xbp.txt" 2>/dev/null)"
fi

# (4) --sample breakpoints over the module: no kprobe, every site sampled, the race.
B=$out/bp.log
read -r _ brc _ <<< "$(step bp)"
sampled=$(summary_value breakpoint_sites_sampled "$B") traps=$(summary_value breakpoint_traps "$B")
if [ -f "$out/kprobes-during.txt" ] && [ ! -s "$out/kprobes-during.txt" ]; then ok bp_no_kprobe
else fail bp_no_kprobe "kprobes registered during the run: $(head -3 "$out/kprobes-during.txt" 2>/dev/null | tr '\n' ';')"; fi
if [[ ${sampled:-} =~ ^([0-9]+)/([0-9]+)$ ]] && [ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ] &&
   [ "${BASH_REMATCH[2]}" -gt 0 ] && [ "${traps:-0}" -gt 0 ]; then
	ok bp_every_site_sampled
	echo "     breakpoint_sites_sampled $sampled, breakpoint_traps $traps"
else
	fail bp_every_site_sampled "expected breakpoint_sites_sampled N/N and traps > 0, got '${sampled:-none}', '${traps:-none}' (exit ${brc:-none})"
fi
if [ "${brc:-}" = 66 ] && grep -qE '^BUG: KCSAN: data-race in kcsan_race_(reader|writer)' "$B"; then
	ok bp_race_reported
else
	fail bp_race_reported "exit ${brc:-none}; titles: $(grep 'BUG: KCSAN' "$B" | sort | uniq -c | tr '\n' ';')"
fi
grep 'BUG: KCSAN' "$B" | sort | uniq -c | sed 's/^/     /'
# Placements follow evidence of running (daemon/sampler/kbp_place.c): the module's functions
# were seen (kernel IP samples or a sibling site's fire) and a placement they chose fired.
ev=$(grep -m1 '^kcsand: breakpoints: evidence, at the end: ' "$B")
if [[ ${ev:-} =~ :\ ([0-9]+)\ functions\ seen\ running\ \(([0-9]+)\ IP\ samples\).*warm\ [0-9]+\ \(([0-9]+)\),\ live\ [0-9]+\ \(([0-9]+)\) ]] &&
   [ "${BASH_REMATCH[1]}" -gt 0 ] && [ "${BASH_REMATCH[2]}" -gt 0 ] &&
   [ $((BASH_REMATCH[3] + BASH_REMATCH[4])) -gt 0 ]; then
	ok bp_placements_follow_evidence
	echo "     ${ev#kcsand: breakpoints: }"
else
	fail bp_placements_follow_evidence "expected functions seen > 0, IP samples > 0 and a warm or live placement fired, got '${ev:-no evidence line}'"
fi
grep -m1 '^kcsand: [0-9]* reports*, ' "$B" | grep -oE '(unknown_origin_[a-z]+|data_races|races_unknown_origin|setup_watchpoints): [0-9]+' | tr '\n' ' ' | sed 's/^/     /'; echo

# (4b) The budget sets the period (10 ms at the start): at 1% the moves alone are over
# it under TCG, so it must grow; at 100% it must shrink (the machine has room).  The probed
# vfs_*/pipe_* code has real races (ci-M: pipe_read / pipe_write, both stacks), so a run
# that reports one exits 66 and still measured its period.
kv() { summary_value "$2" "$1"; }
read -r _ b1rc _ <<< "$(step budget1)"
read -r _ b100rc _ <<< "$(step budget100)"
r1=$(kv "$out/budget1.log" breakpoint_period_range_us); r100=$(kv "$out/budget100.log" breakpoint_period_range_us)
t1=$(kv "$out/budget1.log" breakpoint_trap_ns)
echo "     period range at budget 1: ${r1:-none} us, at 100: ${r100:-none} us; a trap ${t1:-?} ns"
if [[ ${b1rc:-} =~ ^(0|66)$ ]] && [[ ${r1:-} =~ ^([0-9]+)-([0-9]+)$ ]] && [ "${BASH_REMATCH[2]}" -gt 10000 ]; then
	ok budget_lengthens_the_period
else
	fail budget_lengthens_the_period "exit ${b1rc:-none}, period range '${r1:-none}', expected a maximum above 10000: $(grep -E 'breakpoints:|rror' "$out/budget1.log" | head -3 | tr '\n' ';')"
fi
if [[ ${b100rc:-} =~ ^(0|66)$ ]] && [[ ${r100:-} =~ ^([0-9]+)-([0-9]+)$ ]] && [ "${BASH_REMATCH[1]}" -lt 10000 ]; then
	ok budget_shortens_the_period
else
	fail budget_shortens_the_period "exit ${b100rc:-none}, period range '${r100:-none}', expected a minimum below 10000"
fi
if [ "${t1:-0}" -gt 0 ]; then ok trap_cost_calibrated
else fail trap_cost_calibrated "breakpoint_trap_ns '${t1:-none}': $(grep 'time a trap' "$out/budget1.log" | head -1)"; fi

# (5) A module unloaded while probed (issue 10's fault): the run ends cleanly.
read -r _ urc _ <<< "$(step unload)"
U=$out/unload.log
if [[ ${urc:-} =~ ^(0|66)$ ]] && grep -qx 'rmmod 0' "$U" && grep -q '^kcsand: [0-9]* reports*, ' "$U"; then
	ok unload_while_probed
else
	fail unload_while_probed "exit ${urc:-none}, expected 0 or 66 with 'rmmod 0' and the summary: $(tail -3 "$U" 2>/dev/null | tr '\n' ';')"
fi
# A refused kprobe is named by kcsand, never as libbpf's "(null)+0xADDRESS".
if grep -q '(null)+0x' "$out"/*.log 2>/dev/null; then fail no_null_kprobe_name "$(grep -h '(null)+0x' "$out"/*.log | head -2)"
else ok no_null_kprobe_name; fi

no_kprobe_left "$out"
no_bpf_link_left "$out"
no_kernel_warning "$out"

finish_suite "$out"
