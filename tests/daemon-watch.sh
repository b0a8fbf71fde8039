#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# kcsanctl watch: a hardware watchpoint on a variable whose accessors are
# not probed (the target probes only tick()) reports the race between
# them, with both stacks and the hardware-watchpoint lines; watch list
# shows it, watch remove and --duration stop it, a watch whose process
# exited is dropped, bad requests change nothing, and the configuration's
# watch lines are applied at start and on SIGHUP.
#
# Where this machine's debug registers do not trap (build/tests/tools/hw_traps),
# a watch could never see an access: the suite then checks that kcsand refuses
# one with that reason, from the socket and from the configuration, and leaves
# the rest undone: under the QEMU guest's TCG this suite's timing does not hold
# (tests/vm/user-hwbp.sh runs the hardware scenarios there instead).
#
#   tests/daemon-watch.sh [BUILD_DIR]     (root)

. "$(dirname "$0")/daemon-lib.sh"
need_root daemon-watch

PROG=$SRC_DIR/$BUILD/tests/daemon/watch_level
[[ $BUILD == /* ]] && PROG=$BUILD/tests/daemon/watch_level
TITLE="data-race in peek / poke"
SHLIB=$(dirname "$PROG")/../shlib/shlib_race
LIBRACY=$(dirname "$PROG")/../shlib/libracy.so

# The perf_event links kcsand holds of the user's watches' program (kcsand_hwbp), one per
# watched thread: its fdinfo, the kernel's own list, and bpftool for each link's program.
# Other perf links come and go on their own: the history's watches (history_watches, on by
# default since 7 December, off in every configuration here) and hot turns' execute
# breakpoints (kcsand_xbp).  Counting every perf link, ci-U and ci-W saw one right after
# the start with no watch set ("0 1"), its program not identified.
perf_links() {
	local f id n=0

	for f in /proc/"$DPID"/fdinfo/*; do
		grep -q '^link_type:[[:space:]]*perf$' "$f" 2>/dev/null || continue
		id=$(awk '/^prog_id:/ { print $2 }' "$f")
		[[ $(bpftool prog show id "$id" -j 2>/dev/null | jq -r .name) == kcsand_hwbp ]] &&
			n=$((n + 1))
	done
	echo "$n"
}

# maps_file PID FILE: PID has mapped FILE (exec'd it, or loaded it): what a watch on one of
# FILE's variables needs.  A fixed 0.3 s wait for it was a guess that a loaded machine overruns.
maps_file() {
	grep -qF "$(realpath "$2")" /proc/"$1"/maps 2>/dev/null
}

# watches_links_are "N M": N watches listed, M perf links held.
watches_links_are() {
	[[ "$(nr_watches) $(perf_links)" == "$1" ]]
}

# watch_dropped: the first watch listed was dropped.
watch_dropped() {
	"$CTL" watch list | head -1 | grep -q dropped
}

nr_watches() {
	"$CTL" -j watch list | jq '.watches | length'
}

# refused_here WHY: the checks of a machine whose debug registers do not trap.
refused_here() {
	local why=$1 out rc

	cat >"$TMP/kcsand.conf" <<EOF
report_once_in_ms 100
history_watches 0
target user $PROG --functions tick
EOF
	start_daemon "$TMP/kcsand.conf" || { fail start "kcsand did not start"; return; }
	start_target "$PROG"
	out=$("$CTL" watch add level --pid "$TPID" 2>&1); rc=$?
	check refused_socket "1 kcsanctl: watch level: $why" "$rc $out"
	check refused_nothing_armed "0 0" "$(nr_watches) $(perf_links)"
	stop_daemon
	check refused_stop "0" "$?"
	printf 'watch level --pid %s\n' "$TPID" >"$TMP/hw.conf"
	out=$("$KCSAND" -c "$TMP/hw.conf" --socket "$TMP/hw.sock" --foreground 2>&1); rc=$?
	check refused_config "1 kcsand: $TMP/hw.conf: watch level: $why" \
		"$rc $(grep -v '^libbpf' <<<"$out" | head -1)"
	echo "n/a  the watch checks that need a trap: $why"
}
if ! why=$("$(dirname "$PROG")/../tools/hw_traps"); then
	if [[ -z $why ]]; then
		fail hw_traps "$(dirname "$PROG")/../tools/hw_traps did not run (make scenario-programs)"
	else
		refused_here "$why"
	fi
	finish
	exit
fi

cat >"$TMP/kcsand.conf" <<EOF
report_once_in_ms 100
history_watches 0
target user $PROG --functions tick
EOF
start_daemon "$TMP/kcsand.conf" || { fail start "kcsand did not start"; finish; exit; }
check no_watches "0 0" "$(nr_watches) $(perf_links)"
start_target "$PROG"; target=$TPID
wait_for maps_file "$target" "$PROG"

# --- the race on level, seen only by the debug register
m=$(log_mark)
out=$("$CTL" watch add level --pid "$target"); rc=$?
check watch_add "0 watch 1: level in process $target, slot 0" "$rc $out"
check watch_list_json "level armed $target 4 $PROG" \
	"$("$CTL" -j watch list | jq -r '.watches[0] | "\(.spec) \(.state) \(.pid) \(.len) \(.object)"')"
line=$("$CTL" watch list | head -1)
if [[ $line =~ ^1:\ user\ level\ pid=$target\ slot=0\ addr=0x[0-9a-f]+\ len=4\ threads=3$ ]]; then
	ok watch_list_text
else
	fail watch_list_text "'1: user level pid=$target slot=0 addr=0x... len=4 threads=3', got '$line'"
fi
check watch_list_slots "hardware watchpoint slots in use: user 1/4" "$("$CTL" watch list | tail -1)"
if (($(perf_links) >= 3)); then ok perf_events_armed; else fail perf_events_armed "3 perf_event links, got $(perf_links)"; fi
if wait_title "$m" "$TITLE" 40; then
	ok report_title
	rep=$(tail -c +$((m + 1)) "$LOG" | awk -v t="BUG: KCSAN: $TITLE" '
		$0 == t { on = 1 } on { print } on && /^====/ && n++ { exit }')
	for want in "^(read|write) to 0x[0-9a-f]+ of 4 bytes by task [0-9]+ on cpu [0-9]+:$" \
		    "^ peek\+0x[0-9a-f]+/0x[0-9a-f]+ .*watch_level.c:" \
		    "^ poke\+0x[0-9a-f]+/0x[0-9a-f]+ .*watch_level.c:" \
		    "^hardware watchpoint: the (read|write) by task [0-9]+ was seen by a debug register, after it executed$"; do
		if grep -Eq "$want" <<<"$rep"; then
			ok "report_line ${want:0:30}"
		else
			fail report_line "a line matching '$want' in:
$rep"
		fi
	done
	check report_two_hw_lines "2" "$(grep -c '^hardware watchpoint: ' <<<"$rep")"
else
	fail report_title "'BUG: KCSAN: $TITLE' in time; stats: $("$CTL" stats | grep -E 'hw_|data_races' | tr '\n' ' ')"
fi
check stats_hw_slots "1" "$(stat_value hw_slots_in_use)"
if (($(stat_value hw_traps) > 0)); then ok stats_hw_traps; else fail stats_hw_traps "hw_traps > 0"; fi

# --- bad requests: each names its reason, and the watch list stays as it was
refused() {	# NAME EXPECTED-STDERR ARGS...
	local name=$1 want=$2 out rc

	shift 2
	out=$("$CTL" watch "$@" 2>&1); rc=$?
	check "$name" "1 kcsanctl: $want" "$rc $out"
}
refused bad_symbol "watch nosuchvar: no variable 'nosuchvar' in $PROG or in a probed object process $target maps" \
	add nosuchvar --pid "$target"
refused bad_pid "watch level: no process 999999999" add level --pid 999999999
refused duplicate "watch level: watch 1 watches it already" add level --pid "$target"
out=$("$CTL" watch add level:3 --pid "$target" 2>&1); rc=$?
check bad_len_cli "2 kcsanctl: watch add: bad 'level:3': LEN must be 1, 2, 4 or 8 (bytes a debug register covers)" "$rc $out"
check bad_len_socket "error: watch add: bad 'level:3': LEN must be 1, 2, 4 or 8 (bytes a debug register covers)" \
	"$(raw "watch add level:3 --pid $target")"
check bad_remove "error: no watch 42" "$(raw "watch remove 42")"
check bad_unchanged "1" "$(nr_watches)"

# --- four debug registers: the fifth watch is refused
for v in spare_a spare_b spare_c; do
	"$CTL" watch add "$v" --pid "$target" >/dev/null || fail "fill_$v" "watch add $v"
done
refused no_slot "watch spare_d: no hardware watchpoint free: the 4 debug registers of the user engine hold watches (kcsanctl watch list)" \
	add spare_d --pid "$target"
check no_slot_unchanged "4 hardware watchpoint slots in use: user 4/4" \
	"$(nr_watches) $("$CTL" watch list | tail -1)"
if (($(stat_value hw_no_slot) >= 1)); then ok stats_no_slot; else fail stats_no_slot "hw_no_slot >= 1"; fi
for id in 2 3 4; do "$CTL" watch remove "$id" || fail "remove_$id" "watch remove $id"; done

# --- watch remove: no perf event left, no report after
check watch_remove "0" "$("$CTL" watch remove 1; echo $?)"
check removed_list "0 0 hardware watchpoint slots in use: user 0/4" \
	"$(nr_watches) $(perf_links) $("$CTL" watch list | tail -1)"
sleep 0.5
m=$(log_mark); sleep 2
check no_report_after_remove "0" "$(count_title "$m" "$TITLE")"

# --- no --pid: the one process running the probed target; with two, a refusal naming both
out=$("$CTL" watch level); rc=$?
check shorthand_chooses_pid "0 watch 5: level in process $target, slot 0" "$rc $out"
"$CTL" watch remove 5
start_target "$PROG"; second=$TPID
wait_for maps_file "$second" "$PROG"
out=$("$CTL" watch add level 2>&1); rc=$?
lo=$((target < second ? target : second)); hi=$((target < second ? second : target))
check two_candidates "1 kcsanctl: watch level: 2 processes run probed user targets ($lo, $hi): choose one with --pid PID" \
	"$rc $out"

# --- --duration: listed with what is left of it, then gone by itself.  Listed from a
# watch that lasts WAIT_S: one of 1 s had gone before the list at load 16-22.
out=$("$CTL" watch add level --pid "$second" --duration "$WAIT_S")
check duration_listed "1" "$("$CTL" -j watch list | jq --argjson d "$WAIT_S" '.watches[0].remaining_s <= $d and .watches[0].remaining_s >= 0' | grep -c true)"
"$CTL" watch remove "$(sed -n 's/^watch \([0-9]*\):.*/\1/p' <<<"$out")" >/dev/null
out=$("$CTL" watch add level --pid "$second" --duration 1); rc=$?
check duration_short_added "0 watch" "$rc ${out%% *}"
# Gone within the poll loop's second: waited for, not timed, then checked.
wait_for watches_links_are "0 0"
check duration_over "0 0" "$(nr_watches) $(perf_links)"

# --- a process that exits: its watch is dropped, and says so
"$CTL" watch add level --pid "$second" >/dev/null
kill "$second"; wait "$second" 2>/dev/null
wait_for watch_dropped
check exited_dropped "8: user level pid=$second dropped: process exited" "$("$CTL" watch list | head -1)"
check exited_json "dropped process exited 0" \
	"$("$CTL" -j watch list | jq -r '.watches[0] | "\(.state) \(.why)"') $(perf_links)"
"$CTL" watch remove 7

# --- SIGTERM with a watch armed: nothing left
"$CTL" watch add level --pid "$target" >/dev/null
links=$(held_links "$DPID")
stop_daemon
check stop "0" "$?"
check no_links_left "" "$(links_alive $links)"

# --- the configuration: a watch line at start, gone on SIGHUP; a bad one named by file:line
cat >"$TMP/kcsand.conf" <<EOF
report_once_in_ms 100
history_watches 0
target user $PROG --functions tick
watch level --pid $target
EOF
start_daemon "$TMP/kcsand.conf" || { fail start "kcsand did not start"; finish; exit; }
check config_watch "1: user level pid=$target" "$("$CTL" watch list | head -1 | cut -d' ' -f1-4)"
check config_watch_from_config "true" "$("$CTL" -j watch list | jq '.watches[0].from_config')"
m=$(log_mark)
if wait_title "$m" "$TITLE" 40; then ok config_watch_reports; else fail config_watch_reports "'$TITLE' in time"; fi
printf 'report_once_in_ms 100\nhistory_watches 0\ntarget user %s --functions tick\nwatch level:3 --pid %s\n' \
	"$PROG" "$target" >"$TMP/kcsand.conf"
reload_daemon
check reload_bad_keeps "1" "$(nr_watches)"
printf 'report_once_in_ms 100\nhistory_watches 0\ntarget user %s --functions tick\nwatch ticks --pid %s\n' \
	"$PROG" "$target" >"$TMP/kcsand.conf"
reload_daemon
check reload_replaces "ticks" "$("$CTL" -j watch list | jq -r '[.watches[].spec] | join(" ")')"

# --- a variable of a probed library, not of the executable: lib_counter of libracy.so,
# bumped by lib_bump in two threads; only lib_peek (never called) is probed.  Slot 0:
# the reload armed ticks before it freed level's.
"$CTL" probe add user "$LIBRACY" --functions lib_peek >/dev/null
start_target "$SHLIB" 1000000000; shlib=$TPID
wait_for maps_file "$shlib" "$LIBRACY"
m=$(log_mark)
out=$("$CTL" watch add lib_counter --pid "$shlib"); rc=$?
check library_watch_add "0 watch 3: lib_counter in process $shlib, slot 0" "$rc $out"
check library_watch_object "$(realpath "$LIBRACY") 8" \
	"$("$CTL" -j watch list | jq -r '.watches[] | select(.id == 3) | "\(.object) \(.len)"')"
if wait_title "$m" "data-race in lib_bump / lib_bump" 40; then
	rep=$(tail -c +$((m + 1)) "$LOG" | awk '$0 == "BUG: KCSAN: data-race in lib_bump / lib_bump" { on = 1 }
		on { print } on && /^====/ { exit }')
	check library_watch_hw_lines "2" "$(grep -c '^hardware watchpoint: the .* was seen by a debug register' <<<"$rep")"
else
	fail library_watch_report "'data-race in lib_bump / lib_bump' in time"
fi
stop_daemon
check stop_config "0" "$?"
printf 'watch level --duration 5\n' >"$TMP/bad.conf"
out=$("$KCSAND" -c "$TMP/bad.conf" --socket "$TMP/bad.sock" --foreground 2>&1); rc=$?
check config_bad_line "2 kcsand: $TMP/bad.conf:1: watch: unexpected '--duration' (--pid PID or --kernel, once)" \
	"$rc $(head -1 <<<"$out")"
printf 'watch level --pid 999999999\n' >"$TMP/dead.conf"
out=$("$KCSAND" -c "$TMP/dead.conf" --socket "$TMP/bad.sock" --foreground 2>&1); rc=$?
check config_dead_pid "1 kcsand: $TMP/dead.conf: watch level: no process 999999999" \
	"$rc $(grep -v '^libbpf' <<<"$out" | head -1)"
[[ ! -e $TMP/bad.sock ]] && ok config_dead_pid_no_socket || fail config_dead_pid_no_socket "no socket"
finish
