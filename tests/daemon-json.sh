#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The -j replies of the control socket, byte for byte as kcsand printed them
# before it built JSON with json-c: status, stats, get, probe and watch lists
# and additions, filter list, errors, and kcsanctl summarize.  Only the pids,
# the uptime, a watch's address and event count, and the private paths vary.
#
#   tests/daemon-json.sh [BUILD_DIR]     (root)

. "$(dirname "$0")/daemon-lib.sh"
need_root daemon-json

SCN=$SRC_DIR/$BUILD/tests/scenarios
[[ $BUILD == /* ]] && SCN=$BUILD/tests/scenarios
CONF=$TMP/k.conf
printf 'target user %s\nfilter reader/x "q"\nfilter writer\n' "$SCN/mutex_protected" >"$CONF"

# json NAME EXPECTED ARGS...: kcsanctl -j ARGS prints EXPECTED (after masking).
json() {
	local name=$1 want=$2 got

	shift 2
	got=$("$CTL" -j "$@" 2>&1 | sed -E 's/"(pid|uptime_s|heap_in_use_kb)":[0-9]+/"\1":N/g;
		s/"addr":"0x[0-9a-f]+"/"addr":"A"/; s/"events":[0-9]+/"events":N/')
	check "$name" "$want" "$got"
}

start_daemon "$CONF" || { fail start "kcsand did not start"; finish; exit; }
json status '{"version":"'"$("$KCSAND" -V | cut -d' ' -f2)"'","pid":N,"uptime_s":N,"config":"'"$CONF"'","socket":"'"$SOCK"'","enabled":1,"filter_mode":"blacklist","filter_functions":3,"probes":1,"sites":18,"kernel_probes":0,"kernel_sites":0,"reports":0,"heap_in_use_kb":N}' status
want='{"enabled":1,"counters":{"used_watchpoints":0,"setup_watchpoints":0,"data_races":0,"assert_failures":0,"no_capacity":0,"report_races":0,"races_unknown_origin":0,"unencodable_accesses":1,"encoding_false_positives":0},"filter":{"mode":"blacklist","functions":["\"q\"","reader/x","writer"]},"kcsand":{"records_dropped":0,"read_faults":0,"lost_other":0,"stall_budget_exhausted":0,"stalls_clamped":0,"stall_rests":0,"kernel_stall_us":0,"heartbeat_missed":0,"nmi_skipped":0,"stack_copies_dropped":0,"sites":18,"hits":'
got=$("$CTL" -j stats)
check stats_head "$want" "${got:0:${#want}}"
check stats_own_names '["records_dropped","read_faults","lost_other","stall_budget_exhausted","stalls_clamped","stall_rests","kernel_stall_us","heartbeat_missed","nmi_skipped","stack_copies_dropped","sites","hits","reports","suppressed_by_dedup","suppressed_by_filter","suppressed_no_value_change","hw_watchpoints_armed","hw_traps","hw_consumed","hw_watchers","hw_pairs","hw_no_slot","hw_unarmable","hw_open_failed","hw_slots_in_use","watches","history_sync_ops","history_checked","history_processes_held","armed_sites","total_sites","hot_turns","estimated_overhead_pct"]' \
	"$(jq -c '.kcsand | keys_unsorted' <<<"$got")"
json get '{"skip_watch":100,"skip_watch_randomize":1,"udelay_task":400,"udelay_interrupt":20,"delay_randomize":1,"assume_plain_writes_atomic":1,"interrupt_watcher":0,"consumer_wait_us":200,"enabled":1,"stall_budget_us":500000,"pair_wait_us":1000,"report_value_change_only":1,"report_once_in_ms":3000,"overhead_budget":10,"sampler_warmup_cpu_ms":2000,"sampler_period_ms":100,"sampler_turn_ms":20,"sampler_backoff_hits":30000,"sampler_level0_cpu_ms":2000,"sampler_start_credit_ms":300,"ring_buffer_kb":1024,"history_watches":2,"history_switch_us":100,"history_slots":64}' get
json get_one '{"udelay_task":400}' get udelay_task
json probe_list '[{"id":1,"kind":"user","binary":"'"$SCN"'/mutex_protected","functions":null,"pid":N,"sites":18,"from_config":true}]' probe list
json filter_list '{"mode":"blacklist","functions":["\"q\"","reader/x","writer"]}' filter list
json watch_list_empty '{"slots":4,"slots_in_use":{"user":0,"kernel":0},"watches":[]}' watch list
json error '{"error":"no probe 99"}' probe remove 99
json set 'null' set skip_watch 7
json probe_add '{"id":2,"sites":17}' probe add user "$SCN/data_race"
KCSAND_TEST_ITERS=100000000 start_target "$SCN/mutex_protected"
sleep 0.5
# A watch where debug registers trap; elsewhere its refusal, as a JSON error.
if why=$("$SCN/../tools/hw_traps"); then
	json watch_add '{"id":1,"pid":N,"slot":0}' watch add counter --pid "$TPID"
	json watch_list '{"slots":4,"slots_in_use":{"user":1,"kernel":0},"watches":[{"id":1,"kind":"user","spec":"counter","pid":N,"object":"'"$SCN"'/mutex_protected","state":"armed","slot":0,"addr":"A","len":8,"events":N,"remaining_s":-1,"from_config":false}]}' watch list
elif [[ -n $why ]]; then
	json watch_add_refused '{"error":"watch counter: '"$why"'"}' watch add counter --pid "$TPID"
else
	fail hw_traps "$SCN/../tools/hw_traps did not run (make scenario-programs)"
fi
printf 'BUG: KCSAN: data-race in a/b / "c"\nBUG: KCSAN: data-race in a/b / "c"\n' >"$TMP/log"
json summarize '[{"count":2,"title":"BUG: KCSAN: data-race in a/b / \"c\""}]' summarize "$TMP/log"
# stats and the summary the foreground kcsand prints at exit name each figure alike, in
# one form (ENGINE_FIGURES, SAMPLER_FIGURES, ... one table each): every figure of stats'
# own that is not the service's alone is in the summary, a whole number in both; the
# sites attached and known cannot move between the two, so they agree.
got=$("$CTL" -j stats)
if stop_daemon && python3 - "$got" "$DERR" <<'PY'
import json, re, sys
stats = json.loads(sys.argv[1])["kcsand"]
head = r"kcsand: (\d+) reports?, (\d+) sites, (\d+) hits;"
line = [l for l in open(sys.argv[2]) if re.match(head, l)][-1]
summary = dict(re.findall(r" ([a-z_0-9]+): ([^ \n]+)", line.split(";", 1)[1]))
summary.update(zip(("reports", "sites", "hits"), re.match(head, line).groups()))
service = {"hw_slots_in_use", "watches", "history_processes_held"}
missing = [n for n in stats if n not in service and not n.startswith("kmsg_") and n not in summary]
assert not missing, ("not in the summary", missing)
forms = [n for n in stats if n in summary and not summary[n].isdigit()]
assert not forms, ("not one whole number in the summary", [(n, summary[n]) for n in forms])
for n in ("sites", "total_sites"):
    assert summary[n] == str(stats[n]), (n, "summary", summary[n], "stats", stats[n])
PY
then ok stats_names_are_summary_names
else fail stats_names_are_summary_names "stats' figures by their names in the summary at exit" \
	"$DERR"; fi
finish
