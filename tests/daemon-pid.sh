#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Targets with a pid: only that process is traced, others running the same
# binary are not; removing the probe stops its reports.  And a blacklist
# reaches BPF: blacklisted functions set no watchpoints at all.
#
#   tests/daemon-pid.sh [BUILD_DIR]     (root)

. "$(dirname "$0")/daemon-lib.sh"
need_root daemon-pid

RACES=$SRC_DIR/$BUILD/tests/daemon/two_races
[[ $BUILD == /* ]] && RACES=$BUILD/tests/daemon/two_races

printf 'report_once_in_ms 100\n' >"$TMP/kcsand.conf"
start_daemon "$TMP/kcsand.conf" || { fail start "kcsand did not start"; finish; exit; }
check no_targets_no_probes "0" "$("$CTL" -j probe list | jq length)"

start_target "$RACES"; traced=$TPID
start_target "$RACES"; other=$TPID
out=$("$CTL" probe add user "$RACES" --functions 'reader_*,writer_*' --pid "$traced"); rc=$?
check probe_add_pid "0 probe 1: 4 sites" "$rc $out"
check probe_list_pid "$traced" "$("$CTL" -j probe list | jq '.[0].pid')"
m=$(log_mark)
wait_title "$m" "data-race in reader_" 30
sleep 2
pids=$(tail -c +$((m + 1)) "$LOG" | sed -n 's/^CPU: [0-9]* PID: \([0-9]*\) .*/\1/p' | sort -u)
check reports_only_from_pid "$traced" "$(echo $pids)"

# A blacklist of both readers: the writers' plain stores never watch, so no
# watchpoint is set any more, anywhere.
"$CTL" filter add reader_a reader_b
sleep 0.5
s0=$(stat_value setup_watchpoints); sleep 2; s1=$(stat_value setup_watchpoints)
check blacklist_sets_nowatch "0" "$((s1 - s0))"
"$CTL" filter remove reader_a reader_b
# Watchpoints again: on a loaded machine the readers may not run, or their sites
# may be in a sampled turn, for more than the 2 s once waited.
s0=$(stat_value setup_watchpoints)
for ((i = 0; i < WAIT_S * 2; i++)); do
	sleep 0.5
	s1=$(stat_value setup_watchpoints)
	((s1 > s0)) && break
done
if ((s1 > s0)); then ok filter_remove_rearms; else fail filter_remove_rearms "watchpoints again within $WAIT_S s, got none"; fi

"$CTL" probe remove 1
check probe_removed "0" "$(stat_value sites)"
m=$(log_mark); sleep 2
check no_reports_after_remove "0" "$(count_reports "$m")"
out=$("$CTL" probe add user "$RACES" --pid 999999999 2>&1); rc=$?
check probe_add_dead_pid "1 kcsanctl: $RACES: no process 999999999" "$rc $out"
stop_daemon
check stop "0" "$?"
finish
