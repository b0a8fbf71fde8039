#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# kcsanctl without a daemon: exit statuses and help for bad usage, the
# one-line message when no kcsand runs, and summarize against the shell
# pipeline it replaces.  Needs no root.
#
#   tests/kcsanctl-usage.sh [BUILD_DIR]

. "$(dirname "$0")/daemon-lib.sh"

export KCSAND_SOCKET=$TMP/no-daemon.sock

# usage NAME EXPECTED_STATUS HELP_WORD ARGS...: status, and help on stderr mentioning HELP_WORD.
usage() {
	local name=$1 want=$2 word=$3 rc

	shift 3
	"$CTL" "$@" >"$TMP/out" 2>"$TMP/err"; rc=$?
	if [[ $rc == "$want" ]] && grep -q -- "$word" "$TMP/err"; then ok "$name"
	else fail "$name" "exit $want, help '$word', got $rc $(head -2 "$TMP/err" | tr '\n' '|')"
	fi
}

usage unknown_command 2 "Usage: kcsanctl" frobnicate
usage no_command 2 "Usage: kcsanctl"
usage unknown_option 2 "Usage: kcsanctl" --frob stats
usage ambiguous_prefix 2 "Usage: kcsanctl" s
usage filter_no_sub 2 "kcsanctl filter add" filter
usage filter_bad_sub 2 "kcsanctl filter add" filter frob x
usage filter_add_nothing 2 "kcsanctl filter add" filter add
usage set_one_arg 2 "kcsanctl set PARAM VALUE" set skip_watch
usage get_two_args 2 "kcsanctl \[-j\] get" get a b
usage probe_no_kind 2 "kcsanctl probe add user" probe add
usage probe_bad_kind 2 "kcsanctl probe add user" probe add nosuch x
usage probe_remove_word 2 "kcsanctl probe remove ID" probe remove one
usage probe_add_bad_option 2 "kcsanctl probe add user" probe add user /bin/true --frob x
usage watch_no_spec 2 "kcsanctl watch \[add\]" watch
usage watch_add_no_spec 2 "kcsanctl watch \[add\]" watch add
usage watch_bad_len 2 "LEN must be 1, 2, 4 or 8" watch add level:3
usage watch_bad_option 2 "unexpected '--frob'" watch level --frob 1
usage watch_pid_and_kernel 2 "unexpected '--kernel'" watch level --pid 1 --kernel
usage watch_remove_word 2 "kcsanctl watch remove ID" watch remove one
usage watch_list_extra 2 "kcsanctl \[-j\] watch list" watch list now
usage reports_bad_flag 2 "kcsanctl \[-j\] reports" reports -x
usage stats_extra 2 "kcsanctl \[-j\] stats" stats now
usage on_extra 2 "kcsanctl on" on now
usage summarize_nothing 2 "kcsanctl summarize LOG" summarize

for cmd in status stats on off "filter list" "filter add f" whitelist blacklist "get" \
	   "set skip_watch 1" "probe list" "watch list" "watch level --pid 1" reports; do
	out=$("$CTL" $cmd 2>&1); rc=$?
	check "no_daemon_${cmd// /_}" "1 kcsanctl: no kcsand running on $KCSAND_SOCKET" "$rc $out"
done
check no_daemon_json "1" "$("$CTL" -j stats 2>/dev/null; echo $?)"
check socket_option "kcsanctl: no kcsand running on /nonexistent/sock" \
	"$("$CTL" --socket /nonexistent/sock stats 2>&1)"
check help_command "0" "$("$CTL" help filter >/dev/null; echo $?)"

# summarize: the same counts, in the same order, as the pipeline of KCSAN's users.
cat >"$TMP/console.log" <<'LOG'
[    1.000000] ==================================================================
[    1.000001] BUG: KCSAN: data-race in reader / writer
[    1.000002] 
[    2.000001] BUG: KCSAN: data-race in a_func / b_func
[    3.000001] BUG: KCSAN: data-race in reader / writer
BUG: KCSAN: data-race in deposit / deposit
[    4.000001] BUG: KCSAN: data-race in a_func / b_func
[    5.000001] BUG: KCSAN: data-race in reader / writer
random line
[ 6.1][ T12] BUG: KCSAN: data-race in reader / writer
LOG
cp "$TMP/console.log" "$TMP/second.log"
want=$(cat "$TMP/console.log" "$TMP/second.log" | grep "BUG: KCSAN: " |
       sed -e 's/^\[[^]]*] //' | LC_ALL=C sort | uniq -c | LC_ALL=C sort -k1nr)
check summarize_matches_pipeline "$want" "$("$CTL" summarize "$TMP/console.log" "$TMP/second.log")"
check summarize_stdin "$("$CTL" summarize "$TMP/console.log")" \
	"$("$CTL" summarize - <"$TMP/console.log")"
check summarize_json '{"count":6,"title":"BUG: KCSAN: data-race in reader / writer"}' \
	"$("$CTL" -j summarize "$TMP/console.log" "$TMP/second.log" | jq -c '.[0]')"
check summarize_missing_file "1" "$("$CTL" summarize "$TMP/nope" 2>/dev/null; echo $?)"

finish
