#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Hardware watchpoints in kernel mode, end to end: boots Debian's stock kernel in QEMU
# (tests/vm/kcsan-vm) with the racy module tests/kmod/kcsan_race and runs its scenario 2
# (kcsan_race_hidden_writer vs kcsan_race_origin_reader on kcsan_race_origin_var) under
# tests/vm/hwbp-steps.sh:
#   - with a kprobe on the reader only: a race of unknown origin, escalated to a write
#     watchpoint on every CPU, then the hidden writer's next write reported as a
#     later write (with how much later), with both stacks, marked as seen by a
#     debug register;
#   - with no kprobe and --watch kcsan_race_origin_var: the pair reported from the
#     debug registers alone, each frame at its access (not the next instruction);
#   - --watch on the array of scenario 1 (x[i]++): a read-write pair;
#   - --watch with bad input: exit status 2 and the reason, before the object loads;
#   - each start verified only the programs its run uses (-v's list);
# then that no kprobe, BPF link or perf event was left and that the guest's kernel log
# has no lockup, stall, warning or BUG.
# Results in tests/lib.sh's format ("ok   NAME", "FAIL NAME: WHY", "N passed, N failed");
# the run's files are removed when all passed, unless KCSAND_VM_KEEP is set.
set -u
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$REPO"
ITERS=${KCSAND_VM_ITERS:-20000}	# 5000 left the escalation step without a race in 1 guest run of 3 on the merged tree
VAR=kcsan_race_origin_var
. "$REPO/tests/vm/suite-lib.sh"

vm_suite_start kernel-hwbp
KCSAN_VM_PROBE_CMD="$REPO/tests/vm/hwbp-steps.sh $VAR" \
tests/vm/kcsan-vm --module tests/kmod/kcsan_race --out "$out" --keep --timeout 300 \
	--probe kcsan_race_origin_reader \
	-- tests/kmod/kcsan_race/workload.sh "$ITERS" 120 $((1 << 2)) > "$out/reports.txt" 2> "$out/harness.err"
rc=$?
guest_ran $rc
[ $rc = 66 ] && ok harness_exit_66 || { fail harness_exit_66 "expected 66, got $rc"; sed 's/^/    /' "$out/harness.err" | tail -20; }

# expect_report NAME FILE TITLE REGEX...: some report has this title and lines matching each regex.
expect_report() {
	local name=$1 file=$2 title=$3 block re; shift 3
	block=$(report_block "$file" "$title")
	if [ -z "$block" ]; then
		fail "$name" "expected a report titled \"$title\" in $(basename "$file"), got: $(report_titles "$file")"
		return
	fi
	for re in "$@"; do
		if ! grep -qE -- "$re" <<< "$block"; then
			fail "$name" "report \"$title\" has no line matching /$re/"
			printf '%s\n' "$block" | sed 's/^/    /'
			return
		fi
	done
	ok "$name"
}

task='by task [0-9]+ on cpu [0-9]+:$'
addr='0xffff[0-9a-f]{12}'
pair="data-race in kcsan_race_hidden_writer / kcsan_race_origin_reader"
# The escalation's catch ran after the race's watch window: a later write, not a pair.
later="later write in kcsan_race_hidden_writer after data-race in kcsan_race_origin_reader"
hw_write='^hardware watchpoint: the write by task [0-9]+ was seen by a debug register, after it executed$'
hw_read='^hardware watchpoint: the read by task [0-9]+ was seen by a debug register, after it executed$'
E=$out/escalation.txt W=$out/watch.txt

# (1) Escalation: unknown origin first, then both stacks.
step_rc escalation_exit_66 escalation 66
title=$(grep -m1 -oE 'BUG: KCSAN: data-race in kcsan_race_origin_reader\+0x[0-9a-f]+/0x[0-9a-f]+$' "$E" | sed 's/^BUG: KCSAN: //')
expect_report escalation_unknown_origin "$E" "${title:-data-race in kcsan_race_origin_reader+0x?}" \
	"^race at unknown origin, with read to $addr of 8 bytes $task" "^value changed: 0x"
# The writer, caught by the escalation's debug register: inside a watch window of
# the reader (a pair) or after it (a later write); either shows both stacks.
if grep -qx "BUG: KCSAN: $pair" "$E"; then
	caught=$pair
	expect_report escalation_both_stacks "$E" "$pair" "^write to $addr of 8 bytes $task" \
		"^ kcsan_race_hidden_writer\+0x[0-9a-f]+/0x[0-9a-f]+ \[kcsan_race\]( [^ ]*kcsan_race\.c:[0-9]+)?$" \
		"^read to $addr of 8 bytes $task" "^ kcsan_race_origin_reader\+0x[0-9a-f]+/0x[0-9a-f]+ \[kcsan_race\]( [^ ]*kcsan_race\.c:[0-9]+)?$" \
		"^ race_thread_fn\+0x" "^ kthread\+0x" "$hw_write"
else
	caught=$later
	expect_report escalation_both_stacks "$E" "$later" \
	"^write to $addr of 8 bytes by task [0-9]+ on cpu [0-9]+, [0-9]+\.[0-9]{3} ms after the race below:$" \
	"^ kcsan_race_hidden_writer\+0x[0-9a-f]+/0x[0-9a-f]+ \[kcsan_race\]( [^ ]*kcsan_race\.c:[0-9]+)?$" \
	"^race at unknown origin, with read to $addr of 8 bytes $task" "^ kcsan_race_origin_reader\+0x[0-9a-f]+/0x[0-9a-f]+ \[kcsan_race\]( [^ ]*kcsan_race\.c:[0-9]+)?$" \
	"^ race_thread_fn\+0x" "^ kthread\+0x" "$hw_write"
fi
first_unknown=$(grep -n -m1 'BUG: KCSAN: data-race in kcsan_race_origin_reader+' "$E" | cut -d: -f1)
first_pair=$(grep -n -m1 "BUG: KCSAN: $caught" "$E" | cut -d: -f1)
if [ -n "$first_unknown" ] && [ -n "$first_pair" ] && [ "$first_unknown" -lt "$first_pair" ]; then
	ok escalation_after_unknown_origin
else
	fail escalation_after_unknown_origin "the unknown-origin report (line ${first_unknown:-none}) must come before the writer's report (line ${first_pair:-none})"
fi
summary=$(grep -m1 '^kcsand: [0-9]* reports\?, ' "$out/escalation.err")
armed=$(summary_value hw_watchpoints_armed "$out/escalation.err")
if [ "${armed:-0}" -ge 1 ] && grep -qE '^kcsand: escalation: write watchpoint [0-3] on 0xffff[0-9a-f]+ \(8 bytes\), [0-9]+ CPUs, armed in' "$out/escalation.err"; then
	ok escalation_armed_a_watchpoint
	grep -m1 'escalation: write watchpoint' "$out/escalation.err" | sed 's/^/     /'
	grep -oE 'hw_watchpoints_armed.*' <<< "$summary" | sed 's/^/     escalation: /'
else
	fail escalation_armed_a_watchpoint "no 'kcsand: escalation: write watchpoint N on 0x... on N CPUs' line; summary: ${summary:-none}"
fi

# (2) --watch with neither accessor probed.
step_rc watch_exit_66 watch 66
expect_report watch_unprobed_pair "$W" "$pair" \
	"^write to $addr of 8 bytes $task" "^ kcsan_race_hidden_writer\+0x[0-9a-f]+/0x[0-9a-f]+ \[kcsan_race\]( [^ ]*kcsan_race\.c:[0-9]+)?$" \
	"^read to $addr of 8 bytes $task" "^ kcsan_race_origin_reader\+0x[0-9a-f]+/0x[0-9a-f]+ \[kcsan_race\]( [^ ]*kcsan_race\.c:[0-9]+)?$" \
	"$hw_write" "$hw_read"
if grep -qE '^kcsand: [0-9]+ reports?, 0 sites, 0 hits;' "$out/watch.err"; then
	ok watch_without_kprobes
	grep -m1 '^kcsand: [0-9]* report' "$out/watch.err" | grep -oE 'setup_watchpoints: [0-9]+ data_races: [0-9]+|hw_watchpoints_armed.*' |
		tr '\n' ' ' | sed 's/^/     watch: /; s/ $/\n/'
else
	fail watch_without_kprobes "expected '0 sites, 0 hits' in the summary: $(grep -m1 '^kcsand: [0-9]* report' "$out/watch.err")"
fi
grep -qE "^kcsand: watching $VAR at $addr \(8 bytes\) on [0-9]+ CPUs$" "$out/watch.err" &&
	ok watch_resolved_by_kallsyms || fail watch_resolved_by_kallsyms "no 'kcsand: watching $VAR at ... on N CPUs' line in watch.err"

# (2b) The frame of a trapped access is its own instruction, not the next one (x86
# traps after the access), and a read-modify-write is a read-write, as KCSAN
# prints them: the offsets are the module's, from objdump on the host.
KO=$(ls build/vm/kmod-*/kcsan_race/kcsan_race.ko 2>/dev/null | head -1)
# insn_off FUNC REGEX: the offset in FUNC of its first instruction matching REGEX.
insn_off() {
	local start line
	start=$(objdump -d --no-show-raw-insn "$KO" 2>/dev/null | sed -n "/<$1>:\$/{s/ .*//p;q}")
	line=$(objdump -d --no-show-raw-insn --disassemble="$1" "$KO" 2>/dev/null |
		grep -m1 -E "^ *[0-9a-f]+:.*$2")
	line=${line%%:*}
	[ -n "$start" ] && [ -n "$line" ] && printf '0x%x\n' $(( 0x${line// /} - 0x$start ))
}
store=$(insn_off kcsan_race_hidden_writer 'mov +%r[a-z0-9]+,0x0\(%rip\)')
incr=$(insn_off kcsan_race_rmw_inc '(add|inc)q? .*\(')
if [ -n "$store" ]; then
	expect_report watch_frame_is_the_store "$W" "$pair" \
		"^ kcsan_race_hidden_writer\+$store/0x[0-9a-f]+ \[kcsan_race\]"
else
	fail watch_frame_is_the_store "no store to kcsan_race_origin_var in objdump -d of ${KO:-the module}"
fi
step_rc rmw_exit_66 rmw 66
if [ -n "$incr" ]; then
	expect_report rmw_read_write_at_its_frame "$out/rmw.txt" \
		"data-race in kcsan_race_rmw_inc / kcsan_race_rmw_inc" \
		"^read-write to $addr of 8 bytes $task" "^ kcsan_race_rmw_inc\+$incr/0x[0-9a-f]+ \[kcsan_race\]"
else
	fail rmw_read_write_at_its_frame "no add/inc to memory in kcsan_race_rmw_inc in objdump -d of ${KO:-the module}"
fi

# Bad input: exit 2 and the reason.
step_rc bad_symbol_exit_2 "bad no_such_kcsan_race_var" 2
step_rc bad_address_exit_2 "bad 0x1000" 2
step_rc bad_length_exit_2 "bad $VAR:3" 2
missing=
for re in "no kernel variable 'no_such_kcsan_race_var' in /proc/kallsyms" "0x1000 is not a kernel address" \
	  "bad '$VAR:3': want SYMBOL\[:LEN\] or ADDRESS\[:LEN\]"; do
	grep -q "^kcsand: watch: $re" "$out/bad.err" || missing="$missing 'kcsand: watch: $re'"
done
[ -z "$missing" ] && ok bad_input_reasons || fail bad_input_reasons "bad.err lacks$missing: $(head -5 "$out/bad.err" | tr '\n' ';')"
# Refused before the object loads (a start's verification, 6-10 s here, for nothing):
# nothing was attached.
if [ -s "$out/bad.err" ] && ! grep -q '^kcsand: decoded .* attached them' "$out/bad.err"; then
	ok bad_input_refused_before_load
else
	fail bad_input_refused_before_load "bad.err: $(grep -m2 -E '^kcsand: (decoded|loaded)' "$out/bad.err" | tr '\n' ';')"
fi

# A start verifies what its run uses (-v's program list): the kprobes' program and not the
# code breakpoints' (kcsand_kxbp, 11 s of the 6.1 verifier); a run that only watches
# neither; both the watchpoints' program (an escalation cannot wait for it).
progs() { grep -m1 -oE 'loaded the BPF object in .*' "$out/$1.err" 2>/dev/null; }
if progs escalation | grep -q ' kcsand_kprobe' && ! progs escalation | grep -q 'kcsand_kxbp' &&
   progs escalation | grep -q ' kcsand_hwbp_kernel' && progs watch | grep -q ' kcsand_hwbp_kernel' &&
   ! progs watch | grep -qE 'kcsand_kprobe|kcsand_kxbp'; then
	ok start_loads_what_the_run_uses
	echo "     escalation: $(progs escalation)"
	echo "     watch: $(progs watch)"
else
	fail start_loads_what_the_run_uses "escalation: '$(progs escalation)'; watch: '$(progs watch)'"
fi

# (3) Nothing left behind, nothing in the kernel log.
if grep -q 'perf_event' "$out/bpf-during.txt" 2>/dev/null; then ok bpf_links_listed_while_watching
else fail bpf_links_listed_while_watching "bpftool link list showed no perf_event link during the watch step: $(head -3 "$out/bpf-during.txt" 2>/dev/null | tr '\n' ';')"; fi
no_bpf_link_left "$out" no_bpf_link_or_perf_event_left
no_kprobe_left "$out"
no_kernel_warning "$out"

finish_suite "$out"
