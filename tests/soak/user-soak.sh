#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# User-mode soak of the service: kcsand with three racy and three race-free
# programs as targets, each restarted in a loop, and a kcsanctl command
# every second.  Prints the daemon's RSS every 10 s and checks: the daemon
# lives throughout and exits 0, reports came (positive control), every
# dropped record is counted in stats, and no link or BPF program of this
# build is left afterwards.  The figures go in docs/RELIABILITY.md.
#
#   tests/soak/user-soak.sh [BUILD_DIR [SECONDS]]     (root; 600 s by default)
#
# make check runs it for 20 s (SOAK_CHECK_S): every command at least once, each
# program run several times.  A run with no report yet at the end goes on
# until the first one, up to WAIT_S (a loaded machine delays it), so that
# reports_seen does not depend on the length.

. "$(dirname "$0")/../daemon-lib.sh"
need_root user-soak
SECONDS_TOTAL=${2:-600}
B=$BUILD
[[ $B == /* ]] || B=$SRC_DIR/$B
RACY=("$B/tests/daemon/two_races" "$B/tests/scenarios/plain_write_vs_read"
      "$B/tests/scenarios/rmw_array")
CLEAN=("$B/tests/scenarios/mutex_protected" "$B/tests/scenarios/c11_acquire_release"
       "$B/tests/scenarios/thread_private")
for p in "${RACY[@]}" "${CLEAN[@]}"; do
	[[ -x $p ]] || { fail setup "$p missing (make scenario-programs daemon-tests)"; finish; exit; }
done

{
	for p in "${RACY[@]}" "${CLEAN[@]}"; do echo "target user $p"; done
	echo "report_once_in_ms 1000"
} >"$TMP/soak.conf"
first_prog=$("$SRC_DIR"/tests/bpf-leaks.py --max-id)
start_daemon "$TMP/soak.conf" || { fail start "kcsand did not start"; finish; exit; }
links=$(held_links "$DPID")

# Each program restarted in a loop, a few seconds a run.
touch "$TMP/running"
for p in "${RACY[@]}" "${CLEAN[@]}"; do
	( while [[ -e $TMP/running ]]; do
		KCSAND_TEST_ITERS=3000 timeout 20 "$p" >/dev/null 2>&1
	  done ) &
	TPIDS+=($!)
done

# A command every second, RSS every 10 s.
cmds=("status" "stats" "get" "probe list" "filter list" "set skip_watch 30"
      "set skip_watch 20" "watch list" "-j stats")
rss() { awk '/^VmRSS:/ { print $2 }' /proc/"$DPID"/status 2>/dev/null; }
echo "# t_s rss_kb reports records_dropped"
alive=1 bad_cmd=0 ncmd=0 samples=() start=$SECONDS next=0 seen=0
while ((SECONDS - start < SECONDS_TOTAL || (seen == 0 && SECONDS - start < WAIT_S))); do
	t=$((SECONDS - start))
	if ((t >= next || (t >= SECONDS_TOTAL && seen == 0))); then
		kill -0 "$DPID" 2>/dev/null || { alive=0; break; }
		r=$(rss)
		samples+=("$r")
		line=$("$CTL" -j stats | jq -r '"\(.kcsand.reports) \(.kcsand.records_dropped)"')
		echo "$t $r $line"
		((${line%% *} > 0)) 2>/dev/null && seen=1
		next=$((next + 10))
	fi
	"$CTL" ${cmds[ncmd % ${#cmds[@]}]} >/dev/null 2>&1 || bad_cmd=$((bad_cmd + 1))
	ncmd=$((ncmd + 1))
	sleep 1
done
rm -f "$TMP/running"
for p in "${TPIDS[@]}"; do wait "$p" 2>/dev/null; done
TPIDS=()

check daemon_alive 1 "$alive"
check commands_answered 0 "$bad_cmd"
"$CTL" stats >"$TMP/stats"
reports=$("$CTL" -j stats | jq .kcsand.reports)
if ((reports > 0)); then ok reports_seen; else fail reports_seen "reports, got $reports"; fi
if grep -qE '^records_dropped: [0-9]+$' "$TMP/stats"; then ok drops_counted
else fail drops_counted "a records_dropped line in stats"; fi
echo "# records_dropped: $(awk '$1 == "records_dropped:" { print $2 }' "$TMP/stats")," \
     "reports: $reports, RSS first/last: ${samples[0]} / ${samples[-1]} kB"
stop_daemon; rc=$?
check daemon_exit_status 0 "$rc"
check_links_gone no_link_left $links
check_no_program_left no_program_left "$B" "$first_prog"
finish
