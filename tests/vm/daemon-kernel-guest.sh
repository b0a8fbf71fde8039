#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Guest side of tests/vm/daemon-kernel.sh: kcsan-vm runs it as its probe command, in
# the guest, from the repository, with the racy module tests/kmod/kcsan_race loaded:
#
#   tests/vm/daemon-kernel-guest.sh --probe SPEC... [-- IGNORED...]
#
# Starts kcsand with a configuration whose kernel target is the SPECs, then drives it
# with kcsanctl through the module's scenarios and checks each step by its effect:
# reports and their titles, probe list, filter add, set, stats, probe add/remove,
# a reload, and, after SIGTERM, no kprobe and no BPF link left.
# Results in tests/lib.sh's format ("ok   NAME", "FAIL NAME: WHY", "N passed, N failed");
# the daemon's log, stderr and the configuration are copied to $KCSAN_VM_OUT for the host.
set -u
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$REPO" || exit 2
. tests/vm/suite-lib.sh		# report_block, report_titles, setup_fail
[ -n "${KCSAN_VM_GUEST:-}" ] || setup_fail "run in the kcsan-vm guest (tests/vm/daemon-kernel.sh)"
export KCSAND_TEST_START_S=120	# kallsyms, kcore and ~50 ms per kprobe under TCG

# count_hidden_pair MARK: reports of the hidden writer and the origin reader, in
# either order, since MARK (count_title, daemon-lib.sh).
count_hidden_pair() {
	echo $(($(count_title "$1" "data-race in kcsan_race_hidden_writer / kcsan_race_origin_reader") +
		$(count_title "$1" "data-race in kcsan_race_origin_reader / kcsan_race_hidden_writer")))
}
. tests/daemon-lib.sh "$REPO/build"

specs=()
while [ $# -gt 0 ]; do
	case $1 in
	--probe) specs+=("$2"); shift 2 ;;
	--) break ;;
	*) setup_fail "unexpected argument '$1'" ;;
	esac
done
[ ${#specs[@]} -gt 0 ] || setup_fail "no --probe SPEC"
KO=$(ls "$REPO"/build/vm/kmod-"$(uname -r)"/kcsan_race/kcsan_race.ko 2>/dev/null)
[ -n "$KO" ] || setup_fail "no kcsan_race.ko built for $(uname -r)"
ITERS=${KCSAND_VM_ITERS:-5000}
KPROBES=/sys/kernel/debug/kprobes/list
CONF=$TMP/kcsand.conf

# keep_files N: the configuration, log and stderr of kcsand's run N (its summary, the
# counters a failure's diagnosis needs) for the host.
keep_files() {
	cp "$CONF" "$LOG" "$KCSAN_VM_OUT/" 2>/dev/null
	cp "$DERR" "$KCSAN_VM_OUT/kcsand-$1.stderr" 2>/dev/null
}

# round MASK: one round of the module's scenarios in MASK (bit n = scenario n), then
# a little time for kcsand's poll loop (one second at most) to write what came.
round() {
	tests/kmod/kcsan_race/workload.sh "$ITERS" 120 "$1" 2>>"$TMP/workload.err" ||
		echo "round $1 failed: $(tail -1 "$TMP/workload.err")" >&2
	sleep 1.5
}

titles() { report_titles "$LOG"; }
nr_kprobes() { grep -c . "$KPROBES"; }

cat >"$CONF" <<CONF
# tests/vm/daemon-kernel-guest.sh
target kernel ${specs[*]}
kernel_debug $KO
# Denser watchpoints than the default, as in kernel-scenarios.sh: the guest is emulated.
skip_watch 10
# Every site stays armed, as in kernel-scenarios.sh: the reports the steps wait for must not
# depend on which hot site has a turn when.  At the default budget, once the warm-up's 2
# CPU-s of the guest have gone, the reader and the writer are hot sites taking turns.  (A
# fresh-clone CI on b99f054 saw six rounds of scenario 0 report nothing; its files are lost,
# so that this was the cause is not known: a miss now says how many watchpoints each round
# set.)  kernel-sampler.sh tests the sampler.
overhead_budget 100
report_once_in_ms 100
stderr no
# No user target: the user engine's history programs (about 101,000 instructions for 6.1's
# verifier at each start) would go unused.
history no
CONF
t0=$(date +%s.%N)
if ! start_daemon "$CONF"; then
	fail daemon_starts "kcsand running with a kernel target, got: $(tail -3 "$DERR" | tr '\n' ';')"
	keep_files 1
	finish
	exit 0
fi
echo "     (kcsand ready in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s)"
ok daemon_starts

# The kernel target is listed, with its sites, and its kprobes are the kernel's.
list=$("$CTL" probe list)
if [[ $list =~ ^1:\ kernel\ ${specs[0]}\ .*\ sites=([0-9]+)\ \(config\)$ ]] && ((BASH_REMATCH[1] > 0)); then
	ok probe_list_kernel_target
else
	fail probe_list_kernel_target "'1: kernel ${specs[*]} sites=N (config)', got '$list'"
fi
sites=$("$CTL" -j probe list | jq '.[0].sites')
k0=$(nr_kprobes)
if ((k0 > 0)) && grep -qE '  kcsan_race_[a-z0-9_]+\+0x[0-9a-f]+  kcsan_race' "$KPROBES"; then
	ok kprobes_registered
else
	fail kprobes_registered "kprobes on kcsan_race's functions in $KPROBES, got $k0: $(head -2 "$KPROBES" | tr '\n' ';')"
fi
echo "     ($sites sites, $k0 kprobes registered)"
if "$CTL" status | grep -qx "kernel: 1 probe, $sites sites"; then ok status_kernel_line
else fail status_kernel_line "'kernel: 1 probe, $sites sites', got: $("$CTL" status | tr '\n' ';')"; fi

# Each mode keeps its own default until set: udelay_task is 400 µs in user mode, 80 in kernel mode.
check get_per_mode "udelay_task: 400 (user), 80 (kernel)" "$("$CTL" get udelay_task)"
check get_per_mode_json '{"user":400,"kernel":80}' "$("$CTL" -j get udelay_task | jq -c .udelay_task)"
"$CTL" set udelay_task 300
check set_reaches_both "udelay_task: 300" "$("$CTL" get udelay_task)"

# rounds_until SCENARIO COUNT...: rounds of SCENARIO until the command COUNT (count_title
# MARK TITLE, count_hidden_pair MARK) prints more than 0, none if it already does, sixteen
# at most: with one watchpoint every 10 accesses and two threads taking turns on two
# emulated CPUs, a round does not always catch its race (three rounds missed the plain race
# once, on a host loaded by other work, and the probed hidden writer once in CI).  Since a
# kernel CPU rests three times each stall before its next watchpoint (include/kcsand.h), a
# plain round sets 24-36 watchpoints, and six such rounds, every site armed, missed the
# plain race in a quiet CI run (ci-G): a round that catches ends the loop, so the bound
# costs time only when the race is missed.  Sets
# $rounds_seen, the rounds run and the watchpoints each set, for a failure's message:
# a round that set none is the sampler or the engine, not chance.
rounds_until() {
	local scenario=$1 i w0

	shift
	rounds_seen="rounds:"
	for ((i = 0; i < 16; i++)); do
		(($("$@") > 0)) && return
		w0=$(stat_value setup_watchpoints)
		round "$scenario"
		rounds_seen+=" $(($(stat_value setup_watchpoints) - w0))"
	done
	rounds_seen+=" watchpoints; kernel_armed_sites $(stat_value kernel_armed_sites) of $(stat_value kernel_total_sites)"
}

plain_rounds() { rounds_until 1 count_title "$1" "data-race in kcsan_race_reader / kcsan_race_writer"; }

# Scenario 0: a report with KCSAN's title and lines, module frames with file:line
# (kernel_debug), and the kernel footer.
m=$(log_mark)
plain_rounds "$m"
block=$(report_block "$LOG" "data-race in kcsan_race_reader / kcsan_race_writer")
if [ -z "$block" ]; then
	fail report_plain_write_vs_read "a report titled 'data-race in kcsan_race_reader / kcsan_race_writer', got: $(titles) ($rounds_seen)"
else
	ok report_plain_write_vs_read
	for re in "^read to 0xffff[0-9a-f]{12} of 8 bytes by task [0-9]+ on cpu [0-9]+:$" \
		"^write to 0xffff[0-9a-f]{12} of 8 bytes by task [0-9]+ on cpu [0-9]+:$" \
		"^ kcsan_race_reader\+0x[0-9a-f]+/0x[0-9a-f]+ \[kcsan_race\] .*kcsan_race\.c:[0-9]+$" \
		"^CPU: [0-9]+ PID: [0-9]+ Comm: kcsan_race/.* kcsand .* \(kernel\) $(uname -r)$"; do
		grep -qE "$re" <<<"$block" || { fail report_lines "a line /$re/ in: $(tr '\n' '|' <<<"$block")"; re=; break; }
	done
	[ -n "$re" ] && ok report_lines
fi
# The pin holds: through the rounds every site stayed armed, with no hot site's turn (at
# the default budget the reader and the writer take turns once their first period has
# measured them).
check every_site_armed "$sites of $sites, 0 hot turns" \
	"$(stat_value kernel_armed_sites) of $(stat_value kernel_total_sites), $(stat_value kernel_hot_turns) hot turns"

# set skip_watch, by its effect on the kernel engine's watchpoints in rounds of
# scenario 1 (x[i]++ on both sides): with 10^9, at most the one each CPU already
# counts down to (2 CPUs); with 10 again, many at once, and the race is reported.
"$CTL" set skip_watch 1000000000
check get_skip_watch "skip_watch: 1000000000" "$("$CTL" get skip_watch)"
s0=$(stat_value setup_watchpoints); round 2; s1=$(stat_value setup_watchpoints)
"$CTL" set skip_watch 10
m=$(log_mark)
s2=$(stat_value setup_watchpoints); round 2; s3=$(stat_value setup_watchpoints)
rounds_until 2 count_title "$m" "data-race in kcsan_race_rmw_inc / kcsan_race_rmw_inc"
if ((s1 - s0 <= 2 && s3 - s2 > 20)); then ok set_skip_watch_changes_watchpoints
else fail set_skip_watch_changes_watchpoints "<= 2 with 10^9 and > 20 with 10, got $((s1 - s0)) and $((s3 - s2))"; fi
echo "     (setup_watchpoints in one rmw round: $((s1 - s0)) with skip_watch 10^9, $((s3 - s2)) with 10)"
if (($(count_title "$m" "data-race in kcsan_race_rmw_inc / kcsan_race_rmw_inc") > 0)); then
	ok report_rmw
else
	fail report_rmw "a report titled 'data-race in kcsan_race_rmw_inc / kcsan_race_rmw_inc', got: $(titles) ($rounds_seen)"
fi

# filter add: the function's reports stop, and (blacklist) its kernel sites set no
# watchpoints; the other race goes on.
"$CTL" filter add kcsan_race_rmw_inc
m=$(log_mark)
s0=$(stat_value setup_watchpoints); round 2; s1=$(stat_value setup_watchpoints)
check filter_add_silences "0" "$(count_title "$m" "data-race in kcsan_race_rmw_inc / kcsan_race_rmw_inc")"
# (A few remain: workload.sh polls the module's parameters, whose handlers are probed.)
if ((s1 - s0 <= 10)); then ok filter_add_nowatch_in_kernel_sites
else fail filter_add_nowatch_in_kernel_sites "<= 10 watchpoints in an rmw round, got $((s1 - s0))"; fi
echo "     (setup_watchpoints in one rmw round with kcsan_race_rmw_inc blacklisted: $((s1 - s0)))"
plain_rounds "$m"
if (($(count_title "$m" "data-race in kcsan_race_reader / kcsan_race_writer") > 0)); then
	ok filter_add_keeps_others
else
	fail filter_add_keeps_others "a reader/writer report with kcsan_race_rmw_inc filtered, got: $(tail -c +$((m + 1)) "$LOG" | report_titles -) ($rounds_seen)"
fi
"$CTL" filter remove kcsan_race_rmw_inc

# stats: KCSAN's debugfs layout, then kcsand's own figures (summed over both engines).
"$CTL" stats >"$TMP/stats"
stats_layout_re want_re setup_watchpoints data_races
if [[ $(head -15 "$TMP/stats")$'\n' =~ $want_re ]]; then ok stats_kcsan_format
else fail stats_kcsan_format "KCSAN's layout, got: $(head -15 "$TMP/stats" | tr '\n' '|')"; fi
check stats_sites "$sites" "$(stat_value sites)"
if (($(stat_value hits) > 0)); then ok stats_hits; else fail stats_hits "> 0"; fi

# watch add --kernel: a debug register on every CPU sees the hidden writer of
# scenario 2, which no kprobe covers, race with the probed origin reader.
tw=$(date +%s.%N)
out=$("$CTL" watch add kcsan_race_origin_var --kernel 2>&1); rc=$?
# (Escalations of the races of unknown origin before may hold other slots.)
if [[ $rc == 0 && $out =~ ^watch\ 1:\ kernel\ kcsan_race_origin_var,\ slot\ [0-3]$ ]]; then
	ok watch_add_kernel
else
	fail watch_add_kernel "exit 0 and 'watch 1: kernel kcsan_race_origin_var, slot N', got $rc '$out'"
fi
line=$("$CTL" watch list | head -1)
if [[ $line =~ ^1:\ kernel\ kcsan_race_origin_var\ slot=[0-3]\ addr=0xffff[0-9a-f]{12}\ len=8\ cpus=[1-9][0-9]*$ ]]; then
	ok watch_list_kernel
else
	fail watch_list_kernel "'1: kernel kcsan_race_origin_var slot=N addr=0xffff... len=8 cpus=N', got '$line'"
fi
m=$(log_mark)
for ((i = 0; i < 2; i++)); do
	round 4; rounds=$((i + 1))
	(($(count_hidden_pair "$m") > 0)) && break
done
block=$(report_block "$LOG" "data-race in kcsan_race_hidden_writer / kcsan_race_origin_reader")
[ -n "$block" ] || block=$(report_block "$LOG" "data-race in kcsan_race_origin_reader / kcsan_race_hidden_writer")
if grep -qE '^hardware watchpoint: the write by task [0-9]+ was seen by a debug register, after it executed$' <<<"$block" &&
   grep -qE '^ kcsan_race_hidden_writer\+0x[0-9a-f]+/0x[0-9a-f]+ \[kcsan_race\]' <<<"$block" &&
   grep -qE '^ kcsan_race_origin_reader\+0x[0-9a-f]+/0x[0-9a-f]+ \[kcsan_race\]' <<<"$block"; then
	ok watch_kernel_reports_hidden_writer
else
	fail watch_kernel_reports_hidden_writer "hidden_writer / origin_reader with the hardware-watchpoint line, got: $(titles) $(tr '\n' '|' <<<"$block")"
fi
"$CTL" watch remove 1
check watch_remove_kernel "0 error: no watch 1" \
	"$("$CTL" -j watch list | jq '.watches | length') $(raw 'watch remove 1')"
echo "     (kernel watch step: $(awk -v a="$tw" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s, $rounds round(s))"

# probe add kernel / probe remove: the hidden writer of scenario 2.
out=$("$CTL" probe add kernel kcsan_race_hidden_writer 2>&1); rc=$?
if [[ $rc == 0 && $out =~ ^probe\ 2:\ ([0-9]+)\ sites$ ]] && ((BASH_REMATCH[1] > 0)); then
	ok probe_add_kernel
	added=${BASH_REMATCH[1]}
else
	fail probe_add_kernel "exit 0 and 'probe 2: N sites', got $rc '$out'"
	added=0
fi
check probe_add_kernel_listed "2: kernel kcsan_race_hidden_writer sites=$added" "$("$CTL" probe list | sed -n 2p)"
check probe_add_kernel_kprobes "$((k0 + added))" "$(nr_kprobes)"
m=$(log_mark)
rounds_until 4 count_hidden_pair "$m"
if (($(count_hidden_pair "$m") > 0)); then
	ok probe_add_kernel_reports_writer
else
	fail probe_add_kernel_reports_writer "a report naming kcsan_race_hidden_writer, got: $(tail -c +$((m + 1)) "$LOG" | report_titles -) ($rounds_seen)"
	"$CTL" stats | sed 's/^/     /'
fi
# A function another kernel target probes is left out: here nothing remains.
out=$("$CTL" probe add kernel kcsan_race_reader 2>&1); rc=$?
check probe_add_kernel_already_probed \
	"1 kcsanctl: no probe-able kernel function matches the spec 'kcsan_race_reader' (1 already probed by another kernel target)" \
	"$rc $out"
out=$("$CTL" probe add kernel no_such_function_kcsand 2>&1); rc=$?
check probe_add_kernel_no_match \
	"1 kcsanctl: no probe-able kernel function matches the spec 'no_such_function_kcsand'" "$rc $out"
"$CTL" probe remove 2
check probe_remove_kernel "1" "$("$CTL" -j probe list | jq length)"
check probe_remove_kernel_kprobes "$k0" "$(nr_kprobes)"

# SIGHUP: a new kernel target in the file is attached; the unchanged one keeps its id.
printf 'target kernel kcsan_race_hidden_writer\n' >>"$CONF"
kill -HUP "$DPID"
for ((i = 0; i < 60; i++)); do
	[[ $("$CTL" -j probe list | jq length) == 2 ]] && break
	sleep 0.5
done
check reload_adds_kernel_target "1 module:kcsan_race true|3 kcsan_race_hidden_writer true" \
	"$("$CTL" -j probe list | jq -r '.[] | "\(.id) \(.specs[0]) \(.from_config)"' | tr '\n' '|' | sed 's/|$//')"

# A reload that fails keeps the running kernel targets: the one that goes is detached
# before the new one is decoded (they could share functions), then attached again
# under its id when the new one cannot be.
before=$("$CTL" probe list)
grep -v '^target kernel kcsan_race_hidden_writer$' "$CONF" >"$TMP/next.conf"
printf 'target kernel no_such_function_kcsand\n' >>"$TMP/next.conf"
cp "$TMP/next.conf" "$CONF"
kill -HUP "$DPID"
for ((i = 0; i < 60; i++)); do
	grep -q "reload: .*; keeping the running configuration" "$DERR" && break
	sleep 0.5
done
if grep -q "reload: no probe-able kernel function matches the spec 'no_such_function_kcsand'; keeping the running configuration" "$DERR"
then ok reload_bad_kernel_target_says_why
else fail reload_bad_kernel_target_says_why "the spec and why, got: $(grep reload "$DERR" | tail -1)"; fi
check reload_bad_kernel_target_keeps_probes "$before" "$("$CTL" probe list)"
check reload_bad_kernel_target_kprobes "$((k0 + added))" "$(nr_kprobes)"
# ...and one that drops it, detaches it.
grep -v '^target kernel no_such_function_kcsand$' "$TMP/next.conf" >"$CONF"
kill -HUP "$DPID"
for ((i = 0; i < 60; i++)); do
	[[ $("$CTL" -j probe list | jq length) == 1 ]] && break
	sleep 0.5
done
check reload_removes_kernel_target "1" "$("$CTL" -j probe list | jq -r '.[].id' | tr '\n' ' ' | sed 's/ $//')"
check reload_removes_kernel_target_kprobes "$k0" "$(nr_kprobes)"

# SIGTERM: nothing of kcsand's is left, by the kernel's own lists.
links=$(held_links "$DPID")
stop_daemon; rc=$?
check sigterm_exit_status 0 "$rc"
left=$(grep -c . "$KPROBES")
check sigterm_no_kprobe_left "0" "$left"
alive=$(links_alive $links)
if [[ -n $links && -z $alive ]]; then ok sigterm_no_link_left
else fail sigterm_no_link_left "links $(echo $links) gone, got alive: $(echo $alive)"; fi
if grep -q 'kcsand: Terminated: detaching' "$DERR"; then ok sigterm_logged
else fail sigterm_logged "'Terminated: detaching' in kcsand's stderr"; fi

keep_files 1

# A kernel watch alone: kcsand without a kernel target loads its kernel engine for
# the watch, with no kprobe, and frees it with the watch.  Neither accessor of
# scenario 2 is probed: both are seen by the debug registers only.
cp "$LOG" "$KCSAN_VM_OUT/kcsand-1.log" 2>/dev/null
printf 'skip_watch 10\nreport_once_in_ms 100\nstderr no\nhistory no\n' >"$CONF"
tw=$(date +%s.%N)
if start_daemon "$CONF"; then
	out=$("$CTL" watch add kcsan_race_origin_var --kernel 2>&1); rc=$?
	check watch_alone_add "0 watch 1: kernel kcsan_race_origin_var, slot 0" "$rc $out"
	check watch_alone_kernel_engine "kernel: 0 probes, 0 sites" "$("$CTL" status | grep '^kernel:')"
	m=$(log_mark)
	for ((i = 0; i < 2; i++)); do
		round 4; rounds=$((i + 1))
		(($(count_hidden_pair "$m") > 0)) && break
	done
	if (($(count_hidden_pair "$m") > 0)); then
		ok watch_alone_reports_pair
	else
		fail watch_alone_reports_pair "hidden_writer / origin_reader, got: $(titles)"
	fi
	"$CTL" watch remove 1
	check watch_alone_engine_freed "" "$("$CTL" status | grep '^kernel:')"
	links=$(held_links "$DPID")
	stop_daemon
	check watch_alone_sigterm "0" "$?"
	check watch_alone_no_link_left "" "$(links_alive $links)"
	echo "     (kernel watch alone, kcsand start to stop: $(awk -v a="$tw" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s, $rounds round(s))"
else
	fail watch_alone_daemon_starts "kcsand without targets, got: $(tail -3 "$DERR" | tr '\n' ';')"
fi
keep_files 2
finish
exit 0
