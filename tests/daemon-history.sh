#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The history detector in the service, as kcsanctl run has it:
#  - a target without --pid (trace_all): each of three runs of a program
#    whose forked child's two threads each store to one word once, a
#    millisecond apart, round after round (tests/history/racy_fork_child.c;
#    KCSAN's watchpoints do not report a plain word store at the
#    defaults), is reported by the history, every run.  A process found
#    under trace_all is held (no history) from its first probe hit until
#    the daemon has probed its sync functions for it: 200 rounds were
#    often over before that on a loaded machine, and so were 2000 (3 s
#    natively, the suite's build) once at load 28, where attaching the
#    sync probes took seconds.  So the rounds go on until the report (a
#    stop file), at most 100,000 (150 s natively);
#  - a target added with --pid, a race-free process that ran before
#    (tests/daemon/locked_until.c: its threads' earlier locking went
#    unseen, and one may hold the mutex as it is added): no report, with
#    its sync operations traced and accesses checked.
#
#   tests/daemon-history.sh [BUILD_DIR]     (root)

. "$(dirname "$0")/daemon-lib.sh"
need_root daemon-history

TB=$SRC_DIR/$BUILD/tests/daemon
[[ $BUILD == /* ]] && TB=$BUILD/tests/daemon
TITLE="data-race in store_left / store_right"
[[ -x $TB/locked_until ]] || { fail setup "$TB/locked_until missing (make daemon-tests)"; finish; exit; }
# Private copies: no other process on the machine runs the probed inodes.
cp "$TB/locked_until" "$TMP/locked_until"
gcc -O1 -g -pthread -fno-omit-frame-pointer -DROUNDS=100000 -o "$TMP/write_write" \
	"$SRC_DIR/tests/history/racy_fork_child.c" || { fail setup "cannot build racy_fork_child"; finish; exit; }

# Every site armed (budget 100): each round stores once per thread, and at the default
# budget the sampler backed store_left and store_right off (armed_sites 6/13, hits frozen
# while the program ran on): at load 16-28 a run went unreported for minutes, in 4 suite
# runs of 6.  What is checked here is the history in the service, not the sampler.
printf 'target user %s\nreport_once_in_ms 0\noverhead_budget 100\n' "$TMP/write_write" \
	>"$TMP/kcsand.conf"
start_daemon "$TMP/kcsand.conf" || { fail start "kcsand did not start"; finish; exit; }

for run in 1 2 3; do
	m=$(log_mark)
	rm -f "$TMP/ww_stop"
	"$TMP/write_write" "$TMP/ww_stop" &
	ww=$!
	if wait_title "$m" "$TITLE" 20 &&
	   tail -c +$((m + 1)) "$LOG" | grep -q '^previous access [0-9.]* ms earlier, not ordered'; then
		ok "trace_all_run_$run" "$TITLE, by the history"
	else
		fail "trace_all_run_$run" "a report '$TITLE' by the history; got: $(count_reports "$m") reports"
	fi
	touch "$TMP/ww_stop"
	wait "$ww"
done
held=$(stat_value history_processes_held)
[[ ${held:-0} -ge 3 ]] && ok processes_held "$held" ||
	fail processes_held "3 or more (each run found under trace_all), got '${held}'"

# A process that ran before it was added (its sync probes share one budget with the
# runs above, so it comes after them): some of its sync traced and accesses checked.
start_target "$TMP/locked_until" "$TMP/stop"; locked=$TPID
sleep 0.5
out=$("$CTL" probe add user "$TMP/locked_until" --pid "$locked" 2>&1)
check pid_target_added "0" "$?"
m=$(log_mark)
for ((i = 0; i < WAIT_S * 4; i++)); do
	(( $(stat_value history_checked) > 0 )) && break
	sleep 0.25
done
touch "$TMP/stop"
wait "$locked"; rc=$?
check pid_target_exit 0 "$rc"
ops=$(stat_value history_sync_ops) checked=$(stat_value history_checked)
if (( $(count_reports "$m") == 0 && ops > 0 && checked > 0 )); then
	ok pid_target_race_free "history_sync_ops: $ops history_checked: $checked"
else
	fail pid_target_race_free "no report with sync ops and checks; got $(count_reports "$m") reports, history_sync_ops: $ops history_checked: $checked"
	tail -c +$((m + 1)) "$LOG" | head -40 | sed 's/^/    /'
fi
stop_daemon
check daemon_exit 0 "$?"
finish daemon-history
