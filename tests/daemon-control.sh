#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Every kcsanctl command against a running kcsand, checked by its effect
# on the reports of tests/daemon/two_races (reader_a / writer_a and
# reader_b / writer_b race independently) and on the counters.
#
#   tests/daemon-control.sh [BUILD_DIR]     (root)

. "$(dirname "$0")/daemon-lib.sh"
need_root daemon-control

RACES=$SRC_DIR/$BUILD/tests/daemon/two_races
[[ $BUILD == /* ]] && RACES=$BUILD/tests/daemon/two_races
SETTLE=${KCSAND_TEST_SETTLE:-3}	# seconds of reports per observation

cat >"$TMP/kcsand.conf" <<CONF
# the daemon tests' configuration
target user $RACES
report_once_in_ms 100
overhead_budget 100
CONF
# Every site armed (budget 100): these checks compare the daemon's links and its
# reports over seconds, and the sampler's hot turns come and go with links of
# their own (a turn ended between two listings once).  The sampler has tests of
# its own.

if ! start_daemon "$TMP/kcsand.conf"; then
	fail daemon_starts "kcsand running, got no socket"
	finish
	exit
fi
ok daemon_starts
start_target "$RACES"

# Both races are reported.
m=$(log_mark)
wait_title "$m" "data-race in reader_a / writer_a"
wait_title "$m" "data-race in reader_b / writer_b"
a=$(count_title "$m" "data-race in reader_a / writer_a")
b=$(count_title "$m" "data-race in reader_b / writer_b")
if ((a > 0 && b > 0)); then ok reports_both_races
else fail reports_both_races "reports of both races, got a=$a b=$b"; fi

# stats: byte for byte the layout of /sys/kernel/debug/kcsan, then kcsand's own.
"$CTL" stats >"$TMP/stats"
stats_layout_re want_re
got=$(head -15 "$TMP/stats")
if [[ $got$'\n' =~ $want_re ]]; then ok stats_kcsan_format
else fail stats_kcsan_format "KCSAN's layout, got: $(head -13 "$TMP/stats" | tr '\n' '|')"; fi
for k in sites suppressed_by_dedup suppressed_by_filter; do
	if grep -q "^$k: [0-9]" "$TMP/stats"; then ok "stats_has_$k"
	else fail "stats_has_$k" "a line '$k: N', got none"; fi
done
sites=$(stat_value sites)
if ((sites > 0)); then ok stats_sites; else fail stats_sites "> 0, got $sites"; fi
if "$CTL" -j stats | jq -e '.counters.setup_watchpoints > 0 and .enabled == 1' >/dev/null
then ok stats_json; else fail stats_json "JSON with counters and enabled"; fi

# filter add silences one race; the other goes on.
"$CTL" filter add reader_a
m=$(log_mark); sleep "$SETTLE"; wait_title "$m" "data-race in reader_b / writer_b"
a=$(count_title "$m" "data-race in reader_a / writer_a")
b=$(count_title "$m" "data-race in reader_b / writer_b")
if ((a == 0 && b > 0)); then ok filter_add_silences_one
else fail filter_add_silences_one "a=0 and b>0, got a=$a b=$b"; fi
check filter_list_kcsan_format "blacklisted functions: | reader_a|" \
	"$("$CTL" filter list | tr '\n' '|')"
check filter_list_json '["reader_a"]' "$("$CTL" -j filter list | jq -c .functions)"

# The same list as a whitelist keeps only that race.
"$CTL" whitelist
m=$(log_mark); sleep "$SETTLE"; wait_title "$m" "data-race in reader_a / writer_a"
a=$(count_title "$m" "data-race in reader_a / writer_a")
b=$(count_title "$m" "data-race in reader_b / writer_b")
if ((a > 0 && b == 0)); then ok whitelist_keeps_only_listed
else
	fail whitelist_keeps_only_listed "a>0 and b=0, got a=$a b=$b"
	"$CTL" stats | sed 's/^/    /'
	tail -5 "$DERR" | sed 's/^/    /'
fi
check stats_whitelist_lines "whitelisted functions: | reader_a|" \
	"$("$CTL" stats | sed -n '12,13p' | tr '\n' '|')"
# reader_b's reports are dropped as they come: wait for the next one, and name the
# value that was tested.
for ((i = 0; i < WAIT_S * 10; i++)); do
	filtered=$(stat_value suppressed_by_filter)
	((filtered > 0)) && break
	sleep 0.1
done
if ((filtered > 0)); then ok stats_counts_filtered
else fail stats_counts_filtered "suppressed_by_filter > 0, got $filtered"
fi

"$CTL" blacklist && "$CTL" filter remove reader_a
check filter_remove "blacklisted functions: none|" "$("$CTL" filter list | tr '\n' '|')"
"$CTL" filter remove reader_a 2>"$TMP/err"; rc=$?
check filter_remove_unlisted_fails "1 kcsanctl: reader_a is not in the filter list" \
	"$rc $(cat "$TMP/err")"
# KCSAN's own debugfs words, as written to /sys/kernel/debug/kcsan.
check debugfs_words \
	"ok|blacklisted functions: | reader_b|ok|ok|whitelisted functions: | reader_b|ok|ok|ok" \
	"$(raw '!reader_b' 'filter list' 'whitelist' 'filter list' 'blacklist' \
	       'filter remove reader_b' | tr '\n' '|' | sed 's/|$//')"

# off stops every report and every watchpoint; on resumes.
"$CTL" off
check off_enabled_0 "0" "$(stat_value enabled)"
# What the ring held before off is still printed: on a loaded machine that took seconds
# (36 reports after a 0.5 s wait at load 17).  Wait for the log to be still for a second.
for ((i = 0; i < 30; i++)); do
	m=$(log_mark); sleep 1; [[ $(log_mark) == "$m" ]] && break
done
m=$(log_mark); s0=$(stat_value setup_watchpoints); sleep "$SETTLE"
n=$(count_reports "$m"); s1=$(stat_value setup_watchpoints)
if ((n == 0 && s1 == s0)); then ok off_stops_all
else fail off_stops_all "no report, no watchpoint, got $n reports, $((s1 - s0)) watchpoints"
fi
"$CTL" on
m=$(log_mark); wait_title "$m" "data-race in"
n=$(count_reports "$m")
if ((n > 0)); then ok on_resumes; else fail on_resumes "reports after on, got none"; fi

# skip_watch changes the rate of setup_watchpoints, live.
rate() {
	local s0 s1

	s0=$(stat_value setup_watchpoints); sleep 2; s1=$(stat_value setup_watchpoints)
	echo $((s1 - s0))
}
# Down from 10^9 too: the per-CPU countdown follows a lower value at once.
"$CTL" set skip_watch 1000000000; slow=$(rate)
check get_skip_watch "skip_watch: 1000000000" "$("$CTL" get skip_watch)"
"$CTL" set skip_watch 10; fast=$(rate)
if ((fast > 10 * (slow + 1))); then ok skip_watch_changes_rate
else fail skip_watch_changes_rate "skip_watch 10 >> 10^9 in watchpoints/2 s, got $fast vs $slow"
fi
"$CTL" set skip_watch 20

# Every live parameter of the issue can be set, and out-of-range values are refused.
for p in skip_watch udelay_task udelay_interrupt report_once_in_ms assume_plain_writes_atomic \
	 report_value_change_only interrupt_watcher skip_watch_randomize; do
	v=$("$CTL" get $p | awk '{print $2}')
	if "$CTL" set $p "$v" && [[ $("$CTL" get $p) == "$p: $v" ]]; then ok "set_$p"
	else fail "set_$p" "set/get round trip of $v"; fi
done
"$CTL" set udelay_task 100001 2>"$TMP/err"; rc=$?
check set_out_of_range "1 kcsanctl: udelay_task: bad value '100001' (expected 0..100000)" \
	"$rc $(cat "$TMP/err")"
"$CTL" set no_such_param 1 2>"$TMP/err"; rc=$?
check set_unknown_param "1 kcsanctl: unknown parameter 'no_such_param'" "$rc $(cat "$TMP/err")"
check get_json '{"udelay_task":400}' "$("$CTL" -j get udelay_task)"

# probes: add, list, remove.
out=$("$CTL" probe add user "$RACES" --functions 'reader_*'); rc=$?
check probe_add "0 probe 2: 2 sites" "$rc $out"
check probe_list "2" "$("$CTL" -j probe list | jq length)"
"$CTL" probe remove 2
check probe_remove "1" "$("$CTL" -j probe list | jq length)"
"$CTL" probe remove 2 2>"$TMP/err"; rc=$?
check probe_remove_unknown "1 kcsanctl: no probe 2" "$rc $(cat "$TMP/err")"
# A kernel target.  Without kprobes (this development VM's kernel) it is refused with
# the reason, and nothing changes: no kernel-mode engine, no link, same probes and
# parameters.  With kprobes it attaches and detaches (tests/vm/daemon-kernel.sh
# tests kernel targets at length in a guest).
state() { "$CTL" -j probe list; "$CTL" -j get; "$CTL" -j status | jq -c 'del(.uptime_s, .reports, .heap_in_use_kb)'; }
before=$(state); links_before=$(held_links "$DPID" | tr '\n' ' ')
"$CTL" probe add kernel vfs_read 'vfs_write*' '!vfs_writev' >"$TMP/out" 2>"$TMP/err"; rc=$?
if [[ -e /sys/bus/event_source/devices/kprobe/type ]]; then
	if [[ $rc == 0 ]] && grep -qE '^probe 3: [1-9][0-9]* sites$' "$TMP/out"; then
		ok probe_add_kernel
		"$CTL" probe remove 3
		check probe_remove_kernel "$before" "$(state)"
	else
		fail probe_add_kernel "exit 0 and 'probe 3: N sites', got $rc $(cat "$TMP/out" "$TMP/err")"
	fi
else
	check probe_add_kernel_without_kprobes \
		"1 kcsanctl: this kernel ($(uname -r)) has no kprobes: kernel mode needs CONFIG_KPROBES and CONFIG_KPROBE_EVENTS" \
		"$rc $(cat "$TMP/err")"
	check probe_add_kernel_changes_nothing "$before" "$(state)"
	check probe_add_kernel_no_new_link "$links_before" "$(held_links "$DPID" | tr '\n' ' ')"
	if grep -q "has no kprobes" "$DERR"; then ok probe_add_kernel_logged
	else fail probe_add_kernel_logged "the reason in kcsand's log"; fi
fi
"$CTL" probe add kernel 'module:' 2>"$TMP/err"; rc=$?
check probe_add_kernel_bad_spec \
	"2 kcsanctl: probe add kernel: bad spec 'module:': module: needs a module's NAME after it" \
	"$rc $(cat "$TMP/err")"
check probe_add_kernel_only_exclusions \
	"error: probe add kernel: only exclusions ('!GLOB'): nothing to probe" \
	"$(raw 'probe add kernel !vfs_*')"
"$CTL" probe add user /no/such/binary 2>"$TMP/err"; rc=$?
check probe_add_missing "2" "$rc"
# The engine's own reason reaches the client (through the print callback, util/print.h).
# An object with no code at all: no symbol, no FDE bounds a function.
gcc -shared -nostdlib -x c /dev/null -o "$TMP/nocode.so"
"$CTL" probe add user "$TMP/nocode.so" 2>"$TMP/err"; rc=$?
check probe_add_engine_reason "1 kcsanctl: $TMP/nocode.so has no functions: no symbol table, \
no debug file and no .eh_frame bounds any" "$rc $(cat "$TMP/err")"

# reports: the kept ones, and a stream.
if "$CTL" reports | grep -q "^BUG: KCSAN: data-race in"; then ok reports_recent
else fail reports_recent "kept reports"; fi
# The first two reports of the stream, or whatever came in 15 s: a loaded CI machine
# once gave none in 3 s.
timeout 15 "$CTL" -j reports -f | head -n 2 >"$TMP/stream"
if [[ -s $TMP/stream ]] && jq -e -s 'length > 0 and all(.title)' "$TMP/stream" >/dev/null
then ok reports_follow_json
else
	fail reports_follow_json "JSON lines with titles in 15 s, got $(wc -l <"$TMP/stream")"
	"$CTL" stats | sed 's/^/    /'
	tail -5 "$DERR" | sed 's/^/    /'
fi

# status, and prefix matching.
if "$CTL" stat 2>/dev/null; then fail prefix_ambiguous "stat: ambiguous"
else ok prefix_ambiguous; fi
if "$CTL" sta >/dev/null 2>&1; then fail prefix_ambiguous_sta "sta: ambiguous"
else ok prefix_ambiguous_sta; fi
check prefix_unique "$("$CTL" status | head -1 | cut -d, -f1)" \
	"$("$CTL" statu | head -1 | cut -d, -f1)"
check status_json "$DPID" "$("$CTL" -j status | jq .pid)"

# Hostile input on the socket: errors, no crash, no change of state.
before=$("$CTL" -j get; "$CTL" -j filter list; "$CTL" -j probe list)
python3 - "$SOCK" >"$TMP/hostile" <<'PY'
import socket, sys, time
# Every reply ends with a line "ok" or "error: ...": read up to it, or to a hang-up,
# for at most 10 s (a loaded CI machine once kept the daemon from answering in 1.3 s).
slowest = 0.0
def talk(data, limit=10):
    global slowest
    s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
    t0 = time.monotonic(); s.sendall(data)
    out = b""
    while time.monotonic() - t0 < limit:
        s.settimeout(max(0.01, limit - (time.monotonic() - t0)))
        try:
            d = s.recv(65536)
        except socket.timeout:
            break
        if not d: break
        out += d
        last = out.rstrip(b"\n").rsplit(b"\n", 1)[-1]
        if out.endswith(b"\n") and (last == b"ok" or last.startswith(b"error: ")):
            break
    slowest = max(slowest, time.monotonic() - t0)
    s.close(); return out
reqs = [b"A" * 10000 + b"\n", b"\x00\xff\x01garbage\n", b"set skip_watch 99999999999\n",
        b"set skip_watch -1\n", b"set skip_watch 0x\n", b"filter add\n",
        b"filter add " + b"f " * 100 + b"\n", b"probe add user relative\n",
        b"probe add user /x --pid 0\n", b"probe remove -1\n", b"!\n", b"\n",
        b"-j\n", b"whitelist now\n", b"set\n", b"get a b\n", b"\xc3\x28\n",
        b"filter add a\x7fb\n", b"reports follow now\n", b"probe add kernel\n",
        b"probe add kernel !a !b\n", b"probe add kernel a+0x\n", b"probe add kernel module:\n"]
print("requests", len(reqs))
for r in reqs:
    out = talk(r)
    print(repr(r[:40]), out.decode(errors="replace").strip().splitlines()[-1:])
socks = []
for i in range(24):
    s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); socks.append(s)
time.sleep(0.3)
print("many clients ok")
print("slowest reply %.2f s" % slowest)
for s in socks: s.close()
# a partial line, then hang up
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(b"stat"); s.close()
PY
# Every request answered with an error, and the crowd of clients came and went.
nreq=$(awk '$1 == "requests" { print $2 }' "$TMP/hostile")
nerr=$(grep -cE "\[['\"]error: " "$TMP/hostile")
if [[ -n $nreq ]] && ((nreq > 0 && nerr == nreq)) && grep -q "many clients ok" "$TMP/hostile"
then ok hostile_input_errors
else
	fail hostile_input_errors "$nreq errors and 'many clients ok', got $nerr: $(head -3 "$TMP/hostile")"
	grep slowest "$TMP/hostile" | sed 's/^/    /'
	tail -5 "$DERR" | sed 's/^/    /'
fi
after=$("$CTL" -j get; "$CTL" -j filter list; "$CTL" -j probe list)
check hostile_input_no_change "$before" "$after"
if kill -0 "$DPID" && "$CTL" status >/dev/null; then ok hostile_input_survived
else fail hostile_input_survived "kcsand alive and answering"; fi
# A peer that is not root is turned away: by the file mode, and by the daemon
# itself (SO_PEERCRED) on a socket whose mode would let it in.
if id nobody >/dev/null 2>&1 && command -v setpriv >/dev/null; then
	check socket_mode "600" "$(stat -c %a "$SOCK")"
	chmod 0755 "$TMP"
	CTL_ABS=$(readlink -f "$CTL")
	out=$(setpriv --reuid=nobody --regid=nogroup --clear-groups "$CTL_ABS" status 2>&1)
	rc=$?
	if [[ $rc == 1 && $out == *"Permission denied"* ]]; then ok socket_mode_refuses_non_root
	else fail socket_mode_refuses_non_root "exit 1, 'Permission denied', got $rc: $out"; fi
	chmod 0666 "$SOCK"
	out=$(setpriv --reuid=nobody --regid=nogroup --clear-groups "$CTL_ABS" status 2>&1)
	rc=$?
	if [[ $rc == 1 && $out == "kcsanctl: permission denied" ]]; then ok daemon_refuses_non_root
	else fail daemon_refuses_non_root "exit 1, 'kcsanctl: permission denied', got $rc: $out"; fi
	chmod 0600 "$SOCK"
else
	fail socket_refuses_non_root "setpriv (util-linux) and a user nobody are needed"
fi

# SIGTERM: everything detached.
links=$(held_links "$DPID")
stop_daemon; rc=$?
check sigterm_exit_status 0 "$rc"
left=$(links_alive $links)
if [[ -n $links && -z $left ]]; then ok sigterm_detaches_all
else fail sigterm_detaches_all "links $(echo $links) gone, got still alive: $(echo $left)"; fi
if [[ ! -e $SOCK ]]; then ok socket_removed; else fail socket_removed "no $SOCK"; fi

finish
