#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Faults kcsand must survive without harming a target or leaving probes.
# A probed binary rewritten in place (cp) or replaced (rename) while the
# service probes it: no int3 may land in the new program (its code in
# memory is compared with the file), the probes go, and kcsand says why.
# A FIFO or a device given as a binary: refused at once, and a client that
# never finishes its request does not stop the others.  The reports' ring
# buffer full: drops counted, reports go on, nothing left.
#
#   tests/daemon-faults.sh [BUILD_DIR]     (root)

. "$(dirname "$0")/daemon-lib.sh"
. "$(dirname "$0")/common/lost-trap.sh"
need_root daemon-faults

TB=$SRC_DIR/$BUILD/tests/daemon
[[ $BUILD == /* ]] && TB=$BUILD/tests/daemon
RACES=$TB/two_races
REPL=$TB/replacement

# code_intact PID FILE: every executable mapping of FILE in PID holds the
# file's bytes; prints the offsets that differ (an int3 at a stale offset).
code_intact() {
	python3 - "$1" "$2" <<'PY'
import os, sys
pid, path = sys.argv[1], sys.argv[2]
st = os.stat(path)
data = open(path, "rb").read()
bad, seen = [], 0
with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb") as mem:
    for line in maps:
        f = line.split()
        if len(f) < 6 or "x" not in f[1] or int(f[4]) != st.st_ino:
            continue
        lo, hi = (int(x, 16) for x in f[0].split("-"))
        off = int(f[2], 16)
        mem.seek(lo)
        got = mem.read(min(hi - lo, len(data) - off))
        want = data[off:off + len(got)]
        seen += 1
        bad += [hex(off + i) for i in range(len(got)) if got[i] != want[i]]
if not seen:
    print("no executable mapping of", path)
    sys.exit(1)
if bad:
    print("bytes differ at file offsets", " ".join(bad[:8]))
    sys.exit(1)
PY
}

# wait_log TEXT...: until kcsand's stderr says one of the TEXTs, WAIT_S at most.  It was
# 10 s for each in turn: at load 16-27 cp_over_message's line came after 10-20 s.
wait_log() {
	local i t

	for ((i = 0; i < WAIT_S * 10; i++)); do
		for t in "$@"; do
			grep -qF "$t" "$DERR" && return 0
		done
		sleep 0.1
	done
	return 1
}


# The service's sites on the file: none once it changed.
nr_sites() {
	"$CTL" -j status | jq .sites
}

# --- A probed binary rewritten in place, then run: no int3 in the new program.
cp "$RACES" "$TMP/prog"
printf 'target user %s\n' "$TMP/prog" >"$TMP/prog.conf"
start_daemon "$TMP/prog.conf" || { fail replaced_start "kcsand did not start"; finish; exit; }
before=$(nr_sites)
cp "$REPL" "$TMP/prog"
start_target "$TMP/prog" 30
sleep 0.3
if out=$(code_intact "$TPID" "$TMP/prog") && ((before > 0)); then ok cp_over_no_int3
else fail cp_over_no_int3 "sites armed before ($before), code as in the file after, got: $out"; fi
if wait_log "$TMP/prog was rewritten" "$TMP/prog is being rewritten"; then
	ok cp_over_message
else
	fail cp_over_message "'$TMP/prog ... rewritten since it was decoded', got: $(tail -3 "$DERR")"
fi
check cp_over_sites_removed 0 "$(nr_sites)"
kill "$TPID" 2>/dev/null
stop_daemon

# --- A probed binary replaced by rename while the sampler re-attaches it.
cp "$RACES" "$TMP/prog"
cat >"$TMP/prog.conf" <<CONF
target user $TMP/prog
overhead_budget 1
sampler_warmup_cpu_ms 0
sampler_period_ms 50
sampler_turn_ms 5
CONF
start_daemon "$TMP/prog.conf" || { fail renamed_start "kcsand did not start"; finish; exit; }
start_target "$TMP/prog"
old=$TPID
sleep 1
cp "$REPL" "$TMP/prog.new"
mv "$TMP/prog.new" "$TMP/prog"
start_target "$TMP/prog" 30
# Long enough for many sampler periods: each one may re-attach.
sleep 2
if out=$(code_intact "$TPID" "$TMP/prog"); then ok rename_over_no_int3
else fail rename_over_no_int3 "code as in the file, got: $out"; fi
if wait_log "$TMP/prog was replaced or removed"; then ok rename_over_message
else fail rename_over_message "'$TMP/prog was replaced', got: $(tail -3 "$DERR")"; fi
kill "$TPID" "$old" 2>/dev/null
stop_daemon

# --- probe add of a FIFO: an error at once, and the service goes on answering.
printf 'target user %s\n' "$RACES" >"$TMP/races.conf"
start_daemon "$TMP/races.conf" || { fail fifo_start "kcsand did not start"; finish; exit; }
mkfifo "$TMP/fifo"
out=$(timeout 10 "$CTL" probe add user "$TMP/fifo" 2>&1); rc=$?
if [[ $rc == 1 && $out == *"not a regular file"* ]]; then ok probe_add_fifo_refused
else fail probe_add_fifo_refused "exit 1 and 'not a regular file', got $rc: $out"; fi
# A client that never finishes its request must not stop the others.
python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(b"probe add user ")
open(sys.argv[2], "w").close()
time.sleep(15)' "$SOCK" "$TMP/connected" 2>/dev/null &
slow=$!
for ((i = 0; i < WAIT_S * 10; i++)); do [[ -e $TMP/connected ]] && break; sleep 0.1; done
out=$(timeout 10 "$CTL" stats 2>&1); rc=$?
if [[ $rc == 0 && $out == *"enabled: 1"* ]]; then ok stats_while_other_client_waits
else fail stats_while_other_client_waits "stats answered, got $rc: $out"; fi
out=$(timeout 10 "$CTL" probe add user /dev/null 2>&1); rc=$?
if [[ $rc == 1 && $out == *"not a regular file"* ]]; then ok probe_add_device_refused
else fail probe_add_device_refused "exit 1 and 'not a regular file', got $rc: $out"; fi
kill "$slow" 2>/dev/null
# A daemon stuck in open() ignores SIGTERM (blocked for its signalfd): do not wait forever.
kill -TERM "$DPID"; timeout 10 tail --pid="$DPID" -f /dev/null || kill -KILL "$DPID"
wait "$DPID" 2>/dev/null; DPID=

# --- The reports' ring buffer full: a 4 KiB ring (five reports) and a daemon
# stopped for 2 s while every access is watched and every report kept.  The
# drops are counted, the daemon goes on (later reports arrive, it exits 0),
# its links go with it; the size is fixed at start, so `set` refuses it.
# The budget is 100%: every site stays armed.  At the default, the warm-up
# ends within the test and these sites, hundreds of times the program's own
# cost, are watched only in rare hot turns: no report may come in 30 s.
cp "$RACES" "$TMP/ringprog"
cat >"$TMP/ring.conf" <<EOC
target user $TMP/ringprog
ring_buffer_kb 4
skip_watch 0
report_once_in_ms 0
report_value_change_only 0
udelay_task 50
overhead_budget 100
EOC
start_daemon "$TMP/ring.conf" || { fail ring_start "kcsand did not start"; finish; exit; }
links=$(held_links "$DPID")
out=$("$CTL" get ring_buffer_kb 2>&1)
check ring_size_from_config "ring_buffer_kb: 4" "$out"
out=$("$CTL" set ring_buffer_kb 8 2>&1); rc=$?
if [[ $rc == 1 && $out == *"ring_buffer_kb is set when kcsand starts"* ]]; then ok ring_size_not_live
else fail ring_size_not_live "exit 1 and 'set when kcsand starts', got $rc: $out"; fi
mark=$(log_mark)
start_target "$TMP/ringprog"
wait_title "$mark" "data-race in" 30 || fail ring_first_report "a report before the stop"
kill -STOP "$DPID"; sleep 2; kill -CONT "$DPID"
dropped=$(stat_value records_dropped)
if ((dropped > 0)); then ok ring_full_drops_counted
else fail ring_full_drops_counted "records_dropped > 0, got '$dropped'"; fi
mark=$(log_mark)
if wait_title "$mark" "data-race in" 30; then ok ring_full_reports_go_on
else fail ring_full_reports_go_on "a report after the drops, got none in 30 s; $("$CTL" stats |
	grep -E '^(records_dropped|no_capacity|setup_watchpoints|armed_sites|estimated_overhead_pct):' |
	tr '\n' ' ')"; fi
kill -0 "$TPID" 2>/dev/null && ok ring_full_target_alive || fail ring_full_target_alive "target gone"
kill "$TPID"
stop_daemon; rc=$?
check ring_full_daemon_exit 0 "$rc"
check_links_gone ring_full_no_link_left $links
# kcsanctl run, stopped the same way: its status (66: reports) and a summary counting the drops.
KCSAND_TEST_ITERS=30000 "$CTL" run -v --param ring_buffer_kb=4 --param skip_watch=0 \
	--param overhead_budget=100 \
	--param report_once_in_ms=0 --param report_value_change_only=0 --param udelay_task=50 \
	-- "$TMP/ringprog" >"$TMP/ring.out" 2>&1 &
ctl=$!
for ((i = 0; i < WAIT_S * 10; i++)); do grep -q "^BUG: KCSAN" "$TMP/ring.out" && break; sleep 0.1; done
kill -STOP "$ctl"; sleep 2; kill -CONT "$ctl"
timeout 120 tail --pid="$ctl" -f /dev/null || kill "$ctl"
wait "$ctl"; rc=$?
dropped=$(summary_value records_dropped "$TMP/ring.out")
if [[ $rc == 66 ]] && ((dropped > 0)); then ok ring_full_run_summary
else fail ring_full_run_summary "exit 66 (reports) and records_dropped > 0, got $rc, '$dropped': $(tail -2 "$TMP/ring.out")"; fi

# --- Threads that exit while their execute breakpoints (hot turns) or
# hardware watchpoints (escalations) are armed: the program's own status,
# never a signal (SIGTRAP: 133), and each run really armed what it tests.
CHURN=$TB/churn
esc_bad= turn_bad= esc_armed=0 turns=0
for ((i = 0; i < ${KCSAND_TEST_CHURN_RUNS:-1}; i++)); do
	# An escalation needs a race of unknown origin first, which a loaded machine
	# may not produce in one run: up to 5 runs until one armed a watchpoint (one
	# run where debug registers do not trap, since none is ever armed there).
	tries=1
	"$TB"/../tools/hw_traps >/dev/null 2>&1 && tries=5
	for ((try = 0; try < tries; try++)); do
		timeout 300 "$CTL" run -v --functions 'reader*,pace' --param overhead_budget=100 -- \
			"$CHURN" 6 3000 >"$TMP/churn.out" 2>&1
		rc=$?
		[[ $rc == 0 || $rc == 66 ]] || esc_bad+=" $rc"
		armed=$(summary_value hw_watchpoints_armed "$TMP/churn.out")
		esc_armed=$((esc_armed + ${armed:-0}))
		((${armed:-0} > 0)) && break
	done
	# Turns from the start: no warm-up, and no cold-start credit for the
	# turns to pay back first (sampler_start_credit_ms 0: level 0 outside
	# the budget), so that threads exit while their breakpoints are armed.
	# A budget of 30%: at 10% a run took 0 to 6 turns (0 in 1 of 4 here and
	# in a fresh clone's run, once the sampler charged every hit BPF
	# counted), at 30% 6 to 11, with 1 of the 4 sites armed.  Up to 3 runs
	# until one took a turn.
	for ((try = 0; try < 3; try++)); do
		timeout 300 "$CTL" run -v --functions 'reader*,pace' --param overhead_budget=30 \
			--param sampler_warmup_cpu_ms=0 --param sampler_start_credit_ms=0 \
			--param sampler_period_ms=50 \
			--param sampler_turn_ms=5 -- "$CHURN" 200 300000 >"$TMP/churn.out" 2>&1
		rc=$?
		[[ $rc == 0 || $rc == 66 ]] || turn_bad+=" $rc"
		took=$(summary_value hot_turns "$TMP/churn.out")
		turns=$((turns + ${took:-0}))
		((${took:-0} > 0)) && break
	done
done
# Where the debug registers do not trap (tests/tools/hw_traps says why), kcsand
# arms no hardware watchpoint and takes its turns on uprobe links: then only the
# status is asserted, and the turns of any kind.
if why=$("$TB"/../tools/hw_traps); then
	traps=1
elif [[ -n $why ]]; then
	traps=0
	echo "n/a  churn with hardware watchpoints and execute breakpoints armed: $why"
else
	fail hw_traps "$TB/../tools/hw_traps did not run (make scenario-programs)"
	traps=0
fi
if [[ -z $esc_bad ]] && ((esc_armed > 0 || !traps)); then ok churn_escalations_no_signal
else fail churn_escalations_no_signal "status 0 or 66 and watchpoints armed ($esc_armed), got:$esc_bad"; fi
if [[ -z $turn_bad ]] && ((turns > 0)); then ok churn_hot_turns_no_signal
else fail churn_hot_turns_no_signal "status 0 or 66 and hot turns ($turns), got:$turn_bad"; fi

# --- A --watch whose debug register traps tens of thousands of times (the
# neighbours of a widened range, tests/scenarios/watch_neighbours.c) next to
# a uprobe on the same thread: the command that once ended 133 (SIGTRAP;
# docs/RELIABILITY.md, finding 4), as it ran then, and again with sampler
# parameters that detach the probe after its first hit and give the thread
# a hot turn (an execute breakpoint) while the watch traps: uprobe
# unregistration and a second debug register on the trapping thread (1 hot
# turn in a -v -v run here).  Each run the program's own status
# (0), never a signal; a SIGTRAP prints its si_code (tests/common/trap_report.h)
# into the failure.  Positive controls: traps taken, and probe hits.
WN=$TB/../scenarios/watch_neighbours
if ((traps)) && [[ -x $WN ]]; then
	wn_bad= wn_traps=0 wn_hits=0
	for ((i = 0; i < ${KCSAND_TEST_WATCH_RUNS:-2}; i++)); do
		for churn in "" "--param sampler_warmup_cpu_ms=0 --param sampler_period_ms=50 --param sampler_backoff_hits=1 --param overhead_budget=1"; do
			# A second run only after a trap the host lost (tests/common/lost-trap.sh).
			for try in 1 2; do
				# shellcheck disable=SC2086
				timeout 120 "$CTL" run -v --functions tick --watch odd_level $churn -- \
					"$WN" >"$TMP/wn.out" 2>&1
				rc=$?
				[[ $try == 1 ]] && lost_debug_trap "# " "$rc" "$TMP/wn.out" || break
			done
			[[ $rc == 0 ]] || wn_bad+=" $rc$(grep -o 'SIGTRAP si_code=.*' "$TMP/wn.out" | head -1 | sed 's/^/ /')"
			wn_traps=$((wn_traps + $(summary_value hw_traps "$TMP/wn.out")))
			wn_hits=$((wn_hits + $(grep -o '[0-9]* hits;' "$TMP/wn.out" | tail -1 | cut -d' ' -f1)))
		done
	done
	if [[ -z $wn_bad ]] && ((wn_traps > 0 && wn_hits > 0)); then ok watch_and_uprobe_no_signal
	else fail watch_and_uprobe_no_signal "status 0, traps ($wn_traps) and probe hits ($wn_hits), got:$wn_bad"; fi
fi

# --- The target killed while a watchpoint stalls it: kcsanctl ends with the
# target's status, prints its summary, and leaves no BPF program behind.
first_prog=$("$SRC_DIR"/tests/bpf-leaks.py --max-id)
"$CTL" run -v --param udelay_task=100000 --param skip_watch=0 -- "$RACES" >"$TMP/stall.out" 2>&1 &
ctl=$!
# The target execs once kcsanctl has loaded and attached: seconds on a loaded machine.
for ((i = 0; i < WAIT_S * 10; i++)); do
	tgt=$(pgrep -P "$ctl" -x two_races) && grep -q . /proc/"$tgt"/maps 2>/dev/null && break
	sleep 0.1
done
sleep 2
kill -KILL "$tgt"
timeout 30 tail --pid="$ctl" -f /dev/null
wait "$ctl"; rc=$?
if [[ $rc == 137 ]] && grep -qE '^kcsand: [0-9]+ reports?, .*setup_watchpoints: [1-9]' "$TMP/stall.out"
then ok killed_in_stall_clean_exit
else fail killed_in_stall_clean_exit "exit 137 and a summary with watchpoints set, got $rc: $(tail -2 "$TMP/stall.out")"; fi
# Only this build's programs (the kcsand.bpf.c skeleton's): other work on the
# machine loads kcsand_* programs of other families.
left=$(programs_left "$BUILD" "$first_prog")
if [[ -z $left ]]; then ok killed_in_stall_nothing_left
else fail killed_in_stall_nothing_left "no BPF program left, got: $left"; fi

finish
