#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# kcsanctl as a user meets it: bad input gets a clear message and exit status 2;
# the program's own exit status passes through; --object, --json and
# --per-site-links work; kernel mode on a kernel without kprobes says so; and no
# BPF program or uprobe link of kcsand's is left once a run has ended.
# Usage: tests/run-cli-tests.sh [BUILD_DIR]        (root)
set -u
B=${1:-build}
CTL=$B/kcsanctl
out=$(mktemp)
trap 'rm -f "$out" "$out.sh" "$out.stats" "$out.line"' EXIT
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

if [ "$(id -u)" != 0 ] || [ ! -x "$CTL" ]; then
	setup_fail "needs root and $CTL (run 'make' as root)"
fi

# expect_exit NAME STATUS REGEX CMD...: CMD exits STATUS and its output matches REGEX.
expect_exit() {
	local name=$1 want=$2 re=$3 rc
	shift 3
	timeout 120 "$@" > "$out" 2>&1 < /dev/null
	rc=$?
	if [ "$rc" != "$want" ]; then
		fail "$name" "expected exit status $want, got $rc" "$out"
	elif ! grep -qE -- "$re" "$out"; then
		fail "$name" "expected output matching /$re/" "$out"
	else
		ok "$name"
	fi
}

first_prog=$(tests/bpf-leaks.py --max-id)

expect_exit no_command 2 '^Usage: kcsanctl .*COMMAND' "$CTL"
expect_exit unknown_command 2 "unknown (or ambiguous )?command 'frobnicate'" "$CTL" frobnicate
expect_exit run_without_program 2 'run: no program given' "$CTL" run
expect_exit unknown_option 2 'Usage: kcsanctl run' "$CTL" run --no-such-option -- /bin/true
expect_exit unknown_parameter 2 "unknown parameter 'skip_wach'" "$CTL" run --param skip_wach=3 -- /bin/true
expect_exit parameter_out_of_range 2 'skip_watch: bad value .-1. \(expected 0\.\.1000000000\)' \
	"$CTL" run --skip-watch -1 -- /bin/true
expect_exit missing_program 2 'cannot find /nonexistent/prog' "$CTL" run -- /nonexistent/prog
# One watch grammar (daemon/hw/watch_spec.h): LEN is one digit here as on the socket.
expect_exit watch_len_one_digit 2 "watch: bad 'x:04': .*LEN must be 1, 2, 4 or 8" \
	"$CTL" run --watch x:04 -- "$B/tests/scenarios/plain_write_vs_read"
printf '#!/bin/sh\nexit 0\n' > "$out.sh"
chmod +x "$out.sh"
expect_exit not_an_elf 2 "$out.sh: not an ELF file" "$CTL" run -- "$out.sh"
if command -v setpriv > /dev/null; then
	expect_exit needs_root 2 'run: needs root' \
		setpriv --reuid=65534 --regid=65534 --clear-groups "$CTL" run -- /bin/true
fi
expect_exit kernel_mode_without_kprobes_or_probe 2 'needs at least one --probe' "$CTL" run --kernel --duration 1
expect_exit kernel_overhead_budget_out_of_range 2 "overhead_budget: bad value '0' \(expected 1\.\.100\)" \
	"$CTL" run --kernel --overhead-budget 0 --probe vfs_read --duration 1
# A debug register left to a debugger: a bad count, or one that leaves escalation none, is refused.
expect_exit kernel_free_debug_regs_out_of_range 2 "free-debug-regs: bad value '4' \(expected 0 to 3\)" \
	"$CTL" run --kernel --free-debug-regs 4 --probe vfs_read --duration 1
expect_exit kernel_free_debug_regs_with_watches 2 'leave no debug register for escalation' \
	"$CTL" run --kernel --free-debug-regs 2 --watch jiffies --watch jiffies_64 --duration 1
expect_exit kernel_free_debug_regs_no_sampling 2 'breakpoints needs a debug register' \
	"$CTL" run --kernel --free-debug-regs 3 --sample breakpoints --probe vfs_read --duration 1
# --pin is code breakpoints' own: with kprobes, or in user mode, it is refused, said why.
expect_exit kernel_pin_with_kprobes 2 '--pin is for --sample breakpoints' \
	"$CTL" run --kernel --sample kprobes --pin vfs_read --probe vfs_read --duration 1
expect_exit pin_without_kernel 2 '--pin need --kernel' "$CTL" run --pin main -- /bin/true
if [ ! -e /sys/bus/event_source/devices/kprobe ]; then
	expect_exit kernel_without_kprobes 2 'has no kprobes: kernel mode needs CONFIG_KPROBES' \
		"$CTL" run --kernel --probe 'vfs_*' --duration 1
fi
# Vector stores the kernel's probes would emulate as branches are left unprobed:
# every copy is right (the program checks), and the legacy SSE copy is probed.
expect_exit vector_stores_intact 0 'run: [1-9][0-9]* sites attached' \
	"$CTL" run -v --functions 'copy_*' -- "$B/tests/cli/vector_stores"
# Vector loads the kernel's uprobes refuse (ENOTSUPP) are left out too: past the
# sampler's warm-up its re-attach, made while the program runs, succeeds.
expect_exit vector_loads_refused_left_out 0 ' [1-9][0-9]* insns the kernel.s uprobes refuse' \
	"$CTL" run -v --functions 'copy_*' --param sampler_warmup_cpu_ms=0 -- \
	"$B/tests/cli/vector_stores" 20000
if grep -q 'cannot re-attach' "$out"; then
	fail vector_loads_relinked "the sampler's re-attach failed: $(grep -m1 'cannot re-attach' "$out")" "$out"
elif armed=$(summary_value armed_sites "$out") total=$(summary_value total_sites "$out");
     [[ -z $armed || -z $total ]]; then
	fail vector_loads_relinked "no armed_sites and total_sites in the summary" "$out"
elif ((armed >= total)); then
	fail vector_loads_relinked "every site still armed at the end ($armed of $total): no re-attach to check" "$out"
else
	ok vector_loads_relinked
fi
# Debian's own programs are stripped: their functions come from .eh_frame (or a
# debug file installed); tests/debuginfo-check.sh checks both in full.
expect_exit stripped_program 0 ': [1-9][0-9]* functions from (dynsym and eh_frame|debug file )' \
	"$CTL" run -v -- /bin/true
expect_exit exit_status_passes_through 3 'kcsand: 0 reports' "$CTL" run -- "$B/tests/cli/exit_with" 3
# The summary starts a line of its own after output with no newline at its end.
expect_exit summary_on_own_line_file 0 '^kcsand: 0 reports' "$CTL" run -- "$B/tests/cli/exit_with" 0 x=9999
got=$(timeout 120 "$CTL" run -- "$B/tests/cli/exit_with" 0 x=9999 2>&1 < /dev/null | grep -c '^kcsand: ')
if [ "$got" = 1 ]; then ok summary_on_own_line_pipe
else fail summary_on_own_line_pipe "one line starting 'kcsand: ' through a pipe, got $got" "$out"; fi

# The summary: the few numbers a user reads by default; every counter with -v
# or in the --stats file, in the "name: value" form scripts read, and with --json.
brief='^kcsand: 0 reports, [0-9]+ sites, [0-9]+ hits; 0 by watchpoints, 0 by the history; [0-9]+ sites armed'
expect_exit summary_brief 0 "$brief" "$CTL" run -- "$B/tests/cli/exit_with" 0
if grep -q 'setup_watchpoints' "$out"; then fail summary_brief_has_no_counters "no counter without -v" "$out"
else ok summary_brief_has_no_counters; fi
every='^kcsand: 0 reports, [0-9]+ sites, [0-9]+ hits; used_watchpoints: 0 setup_watchpoints: .* armed_sites: [0-9]+ total_sites: [0-9]+ .* cpu_ms: [0-9]+ native_cpu_ms: [0-9]+'
expect_exit summary_verbose 0 "$every" "$CTL" run -v -- "$B/tests/cli/exit_with" 0
# --json: the summary as one JSON object with every figure of the -v line (lists as arrays).
grep -E "$every" "$out" > "$out.line"
expect_exit summary_json 0 '^\{"summary":\{"reports":0,' "$CTL" run --json -- "$B/tests/cli/exit_with" 0
if python3 - "$out.line" "$out" <<'PY'
import json, re, sys
names = re.findall(r" ([a-z_0-9]+): ", open(sys.argv[1]).read().split(";", 1)[1])
obj = [json.loads(l) for l in open(sys.argv[2]) if l.startswith('{"summary":')][0]["summary"]
missing = [n for n in names if n not in obj]
assert len(names) > 40 and not missing, missing
assert isinstance(obj["site_levels"], list) and isinstance(obj["warnings"], list), obj
PY
then ok summary_json_complete; else fail summary_json_complete "every figure of the -v line in the JSON" "$out"; fi
# What `stats` counts too goes by stats' name, as one whole number (engine.h's
# ENGINE_FIGURES, sampler.h's SAMPLER_FIGURES, history.h's HISTORY_STATS_SHOWN, hwbp.h's
# HWBP_STATS_SHOWN; daemon-json pins stats' names and compares them with a summary's).
if python3 - "$out" <<'PY'
import json, sys
obj = [json.loads(l) for l in open(sys.argv[1]) if l.startswith('{"summary":')][0]["summary"]
shared = """sites hits reports suppressed_by_dedup suppressed_by_filter suppressed_no_value_change
	history_sync_ops history_checked hw_watchpoints_armed hw_traps hw_consumed hw_watchers
	hw_pairs hw_no_slot hw_unarmable hw_open_failed armed_sites total_sites hot_turns
	estimated_overhead_pct""".split()
wrong = [n for n in shared if type(obj.get(n)) is not int]
assert not wrong, [(n, obj.get(n)) for n in wrong]
PY
then ok summary_names_are_stats_names
else fail summary_names_are_stats_names "the figures stats shows too, by its names, in the summary" "$out"; fi
rm -f "$out.stats"
expect_exit summary_stats_file 0 "$brief" "$CTL" run --stats "$out.stats" -- "$B/tests/cli/exit_with" 0
if grep -qE "$every" "$out.stats" 2> /dev/null; then ok summary_stats_file_has_every_counter
else fail summary_stats_file_has_every_counter "expected /$every/ in the --stats file" "$out"; fi
# Harm: a program that is all probed accesses (every site armed) runs many times its
# native CPU time, and the summary says so.
expect_exit summary_says_slow 0 \
	'; [0-9]+ sites armed, overhead [0-9]+%; the program ran [0-9]+x its native CPU time' \
	"$CTL" run --overhead-budget 100 --functions peek -- "$B/tests/cli/counted" 2 20000
expect_exit killed_by_signal_is_128_plus 143 'kcsand: 0 reports' "$CTL" run -- "$B/tests/cli/exit_with" kill
expect_exit shared_object 66 'BUG: KCSAN: data-race in lib_bump / lib_bump' \
	"$CTL" run --halt-on-error --object "$B/tests/shlib/libracy.so" --functions 'lib_*' -- \
	"$B/tests/shlib/shlib_race"
expect_exit per_site_links 66 'BUG: KCSAN: data-race in reader / writer' \
	"$CTL" run --per-site-links --halt-on-error -- "$B/tests/scenarios/plain_write_vs_read"

# The engine's per-CPU state (hits, the skip_watch countdown) under threads on
# both CPUs: the hits are exactly the program's calls, and the watchpoints tried
# (set, or refused for a slot) are one per skip_watch + 1 hits of each CPU, so
# between H / 10 and H / 10 + CPUs.  A lost update of either shows as a drift.
T=4 K=5000 H=20000
timeout 120 "$CTL" run --stats "$out.stats" --functions peek --param overhead_budget=100 \
	--param skip_watch=9 --param skip_watch_randomize=0 --param udelay_task=10 \
	--param stall_budget_us=0 -- "$B/tests/cli/counted" $T $K > "$out" 2>&1 < /dev/null
rc=$?
hits=$(grep -oE '[0-9]+ hits' "$out.stats" | awk '{ print $1 }')
tried=$(( $(summary_value setup_watchpoints "$out.stats") + $(summary_value no_capacity "$out.stats") +
	  $(summary_value stall_budget_exhausted "$out.stats") ))
ncpu=$(getconf _NPROCESSORS_CONF)
echo "# counters: $hits hits (want $H), $tried watchpoints tried (want $((H / 10))..$((H / 10 + ncpu)))"
if [ $rc = 0 ] && [ "$hits" = $H ] && [ $tried -ge $((H / 10)) ] && [ $tried -le $((H / 10 + ncpu)) ]
then ok counters_exact
else fail counters_exact "exit 0, $H hits, $((H / 10))..$((H / 10 + ncpu)) tried; got $rc, '$hits', $tried" "$out"; fi

# A re-arm makes again only the links of the sites that changed: 1,600 sites that
# never run stay armed, and hot()'s backs off.  Its loop ends (exit 0) once it no
# longer traps, within a minute; each re-arm (-v -v) must have left most of the
# object's links (chunks of 256 sites) alone, and there must have been one.
timeout 120 "$CTL" run -v -v --no-history --param sampler_warmup_cpu_ms=100 \
	--param sampler_backoff_hits=2000 -- "$B/tests/cli/cold_and_hot" > "$out" 2>&1 < /dev/null
rc=$?
rearms=$(grep -oE 're-armed [0-9]+ of [0-9]+ chunks' "$out")
if [ $rc = 0 ] && [ -n "$rearms" ] &&
   echo "$rearms" | awk '$4 < 6 || $2 > 2 { bad = 1 } END { exit bad }'
then ok rearm_only_changed
else fail rearm_only_changed "exit 0, re-arms of at most 2 of 6 or more chunks; got $rc, $(echo $rearms)" "$out"; fi

# --json: one object per report, parseable, with the fields a tool would read.
timeout 120 "$CTL" run --json --halt-on-error --output "$out.json" -- \
	"$B/tests/scenarios/plain_write_vs_read" > "$out" 2>&1
rc=$?
if [ $rc = 66 ] && python3 - "$out.json" <<'PY'
import json, sys
rep = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
r = rep[0]
assert r["title"] == "data-race in reader / writer", r["title"]
types = sorted(a["type"] for a in r["accesses"])
assert types == ["read", "write"], types
assert all(a["stack"] and a["size"] == 4 for a in r["accesses"])
PY
then ok json_output; else fail json_output "expected exit 66 and a JSON report of reader / writer (got $rc)" "$out"; fi
rm -f "$out.json"

# --kmsg: the report also lands in the kernel log, line for line as on stderr: what
# `dmesg | grep "BUG: KCSAN:"` and syzkaller's console parser read.
marker="kcsand-cli-test kmsg $$ $RANDOM"
echo "$marker" > /dev/kmsg
timeout 120 "$CTL" run --kmsg --halt-on-error --output "$out.rep" -- \
	"$B/tests/scenarios/plain_write_vs_read" > "$out" 2>&1
rc=$?
dmesg | sed -n "/$marker/,\$p" | sed -E 's/^\[ *[0-9.]+\] ?//' > "$out.kmsg"
title=$(grep -m1 '^BUG: KCSAN:' "$out.rep")
# Every line of the report, in order, in the kernel log: other lines may come
# between (another kcsand on the machine may write its reports meanwhile).
if [ $rc = 66 ] && [ "$title" = "BUG: KCSAN: data-race in reader / writer" ] &&
   grep -E '^(read|write) to 0x[0-9a-f]+ of 4 bytes by task [0-9]+ on cpu' "$out.rep" |
	grep -qxFf - "$out.kmsg" &&
   python3 - "$out.rep" "$out.kmsg" <<'PY' &&
import sys
want = open(sys.argv[1]).read().splitlines()
got = iter(open(sys.argv[2]).read().splitlines())
sys.exit(0 if want and all(line in got for line in want) else 1)
PY
   grep -q 'kmsg: 1 reports written, 0 dropped' "$out"; then
	ok kmsg_report_in_dmesg
else
	fail kmsg_report_in_dmesg "expected exit 66 and the report in dmesg as on stderr (got $rc)" "$out"
	sed 's/^/    kmsg: /' "$out.kmsg" | head -30
fi
rm -f "$out.rep" "$out.kmsg"

# Nothing of ours stays loaded after the runs above (runs of others still going keep theirs).
if left=$(tests/bpf-leaks.py "$first_prog"); then
	ok no_bpf_program_left
else
	fail no_bpf_program_left "programs held by no process: $left" "$out"
fi

finish
