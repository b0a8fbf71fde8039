#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Runs the end-to-end scenarios under kcsanctl and checks its reports.
#
#   tests/run-scenarios.sh [BUILD_DIR] [CASE...]
#
# BUILD_DIR (default build) must hold kcsanctl and the scenario programs
# (make scenario-programs); this script builds nothing.  With CASE names,
# only those cases run.  Needs root.
#
# Cases are read from the scenario sources, tests/scenarios/*.c, *.cc and
# tests/demo/*.c, one per comment line of the form
#
#   /* kcsand-test: name=NAME [args="..."] [prog_args="..."] expect=report|none
#      [title="..."] [title_re="..."] [funcs="..."] [access="RE"]... [value_changed=yes|no]
#      [frames_re="RE"] [stack_tail="FUNC..."] [log_re="RE"] [needs=hwbp|nohwbp]
#      [stop=report] [tcg=no] */
#
# (all on one line).  Values are either "double-quoted" (no double quote
# inside) or a single word.
#
#   name           case name, printed in the results
#   args           kcsanctl run options, split on white space (no globbing).
#                  An expect=report case whose args set no overhead budget and no
#                  sampler parameter runs with --overhead-budget 100: every site
#                  stays armed, so a busy machine's backoff cannot leave one side
#                  of the race unprobed (a one-stack "unknown origin" report, or
#                  none).  Cases about the sampler set its parameters themselves.
#   prog_args      arguments for the program, split the same way
#   iters          iterations per thread (KCSAND_TEST_ITERS); racy cases that stop at
#                  the first report get many, so that a loaded machine cannot make
#                  their threads miss each other
#   expect=none    kcsanctl must exit 0 and print no "BUG: KCSAN:" line, and its
#                  summary must show sites armed and hit and watchpoints set
#   expect=error   kcsanctl must exit 2, print no report, and print a line
#                  matching log_re (the reason)
#   expect=report  kcsanctl must exit 66, and one report must satisfy:
#   title          the text after "BUG: KCSAN: " equals this exactly
#   title_re       ... or matches this extended regex
#   access         an extended regex that must match a line of the report;
#                  several access= keys must match different lines
#   frames_re      an extended regex every stack line (" frame") of every report
#                  must match
#   stack_tail     the functions every stack of the report ends with, outermost
#                  last ("start_thread clone3": unwound to where the thread began)
#   log_re         an extended regex some line of kcsanctl's output must match
#                  (its summary line, say; with expect=none too: a positive
#                  control); several log_re= keys must each match
#   value_changed  yes: the report has a "value changed: 0x.. -> 0x.." line;
#                  no: it has none
#   needs          hwbp: runs only where user-mode debug registers trap;
#                  nohwbp: only where they do not (some hypervisors never
#                  deliver the trap: kcsand then says so and falls back).
#                  A case whose need does not hold here is listed as "n/a"
#                  with the reason; tests/vm/user-hwbp.sh runs the hwbp cases
#                  in the QEMU guest, whose debug registers trap.
#   tcg=no         not run where KCSAND_TEST_TCG is set (tests/vm/user-hwbp-steps.sh,
#                  in the QEMU guest, whose TCG emulator raises a second debug exception
#                  inside the kernel's #DB handler when a single-stepped instruction, a
#                  uprobe's copy, hits a data watchpoint: the guest's CPU locks up; see
#                  docs/stacks.md); listed as "n/a" there
#   stop=report    (expect=report) once a report satisfies title, access,
#                  value_changed and stack_tail, the program named by the report's
#                  "PID:" is sent SIGUSR1: a scenario's timed loops end then
#                  (scenario.h), and it exits 0.  For races whose first report may
#                  not be the one the case wants, where --halt-on-error would stop
#                  too early and a fixed length is too short on a loaded machine.
#   funcs          the functions any report may name (white-space separated);
#                  a report naming another function fails the case.
#                  Defaults to the functions in title; unchecked with
#                  title_re alone.
#
# The program is the build of the file that holds the line:
# BUILD_DIR/tests/scenarios/FILE or BUILD_DIR/tests/demo/FILE, without .c or .cc.
#
# Environment: KCSAND_TEST_TIMEOUT (seconds per case, default 120: a racy case
# runs until its report, and its program bounds it below this);
# KCSAND_SCENARIO_TRIES (3: runs of a racy case that exit 0 without a report);
# KCSAND_TEST_NEEDS=hwbp runs only the cases with needs=hwbp; KCSAND_TEST_TCG=1
# (set under QEMU's TCG emulator) leaves out the cases with tcg=no.

set -u

TIMEOUT=${KCSAND_TEST_TIMEOUT:-120}
TRIES=${KCSAND_SCENARIO_TRIES:-3}	# runs of a racy case that end without a report, at most
SEP=$(printf '=%.0s' {1..66})
MAX_LINES=300	# of a failed case's output shown
SRC_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$SRC_DIR/tests/common/lost-trap.sh"

BUILD=${1:-build}
[[ $# -gt 0 ]] && shift
ONLY=("$@")

. "$SRC_DIR/tests/lib.sh"

# ---------------------------------------------------------------- parsing

# All cases, as parallel arrays indexed by case number.
CASE_NAME=() CASE_PROG=() CASE_LINE=()

# Fields of the case being parsed or run (parse_case sets them).
C_NAME= C_ARGS= C_PARGS= C_ITERS= C_EXPECT= C_TITLE= C_TITLE_RE= C_VC= C_FUNCS= C_FUNCS_SET=0 C_FRAMES_RE=
C_STACK_TAIL= C_STOP=
C_LOG_RE=()
C_NEEDS= C_TCG=
C_ACCESS=()
PARSE_ERR=

# parse_case LINE: fills the C_* fields; returns 1 with PARSE_ERR set on error.
parse_case() {
	local s=${1#*kcsand-test:}
	local re='^[[:space:]]*([a-z_]+)=("([^"]*)"|([^[:space:]"]+))(.*)$'
	local key val

	s=${s%%\*/*}
	C_NAME= C_ARGS= C_PARGS= C_ITERS= C_EXPECT= C_TITLE= C_TITLE_RE= C_VC= C_FUNCS= C_FUNCS_SET=0
	C_FRAMES_RE=
	C_STACK_TAIL= C_STOP=
	C_LOG_RE=()
	C_NEEDS= C_TCG=
	C_ACCESS=()
	PARSE_ERR=
	while [[ $s =~ $re ]]; do
		key=${BASH_REMATCH[1]}
		if [[ ${BASH_REMATCH[2]} == \"* ]]; then
			val=${BASH_REMATCH[3]}
		else
			val=${BASH_REMATCH[4]}
		fi
		s=${BASH_REMATCH[5]}
		case $key in
		name) C_NAME=$val ;;
		args) C_ARGS=$val ;;
		prog_args) C_PARGS=$val ;;
		iters) C_ITERS=$val ;;
		expect) C_EXPECT=$val ;;
		title) C_TITLE=$val ;;
		title_re) C_TITLE_RE=$val ;;
		access) C_ACCESS+=("$val") ;;
		value_changed) C_VC=$val ;;
		funcs) C_FUNCS=$val C_FUNCS_SET=1 ;;
		log_re) C_LOG_RE+=("$val") ;;
		frames_re) C_FRAMES_RE=$val ;;
		stack_tail) C_STACK_TAIL=$val ;;
		needs) C_NEEDS=$val ;;
		stop) C_STOP=$val ;;
		tcg) C_TCG=$val ;;
		*) PARSE_ERR="unknown key '$key'"; return 1 ;;
		esac
	done
	if [[ $s =~ [^[:space:]] ]]; then
		PARSE_ERR="cannot parse '${s#"${s%%[![:space:]]*}"}'"
		return 1
	fi
	if [[ ! $C_NAME =~ ^[A-Za-z0-9_.-]+$ ]]; then
		PARSE_ERR="missing or bad name=" ; return 1
	fi
	case $C_NEEDS in
	''|hwbp|nohwbp) ;;
	*) PARSE_ERR="needs= must be hwbp or nohwbp"; return 1 ;;
	esac
	case $C_TCG in
	''|no) ;;
	*) PARSE_ERR="tcg= must be no"; return 1 ;;
	esac
	case $C_EXPECT in
	none) ;;
	error)
		if [[ ${#C_LOG_RE[@]} -eq 0 ]]; then
			PARSE_ERR="expect=error needs log_re= (the reason)"; return 1
		fi ;;
	report)
		if [[ -z $C_TITLE && -z $C_TITLE_RE ]]; then
			PARSE_ERR="expect=report needs title= or title_re="; return 1
		fi ;;
	*) PARSE_ERR="expect= must be report, none or error"; return 1 ;;
	esac
	if [[ -n $C_STOP && ( $C_STOP != report || $C_EXPECT != report ) ]]; then
		PARSE_ERR="stop= must be report, with expect=report"; return 1
	fi
	case $C_VC in
	''|yes|no) ;;
	*) PARSE_ERR="value_changed= must be yes or no"; return 1 ;;
	esac
	if [[ $C_FUNCS_SET == 0 && -n $C_TITLE ]]; then
		C_FUNCS=$(title_funcs "$C_TITLE")
		C_FUNCS_SET=1
	fi
	return 0
}

# title_funcs TITLE: the function names a report title mentions.
#   "data-race in a / b" -> "a b";  "data-race in f+0x8/0x20" -> "f"
#   "later write in w after data-race in r" -> "w r"
title_funcs() {
	local t=${1#data-race in }

	if [[ $t =~ ^later\ write\ in\ ([^ ]+)\ after\ data-race\ in\ ([^ ]+)$ ]]; then
		echo "${BASH_REMATCH[1]} ${BASH_REMATCH[2]}"
		return
	fi

	if [[ $t == *" / "* ]]; then
		if [[ ${t%% / *} == "${t#* / }" ]]; then
			echo "${t%% / *}"
		else
			echo "${t%% / *} ${t#* / }"
		fi
	else
		echo "${t%%+0x*}"
	fi
}

wanted() {
	local n

	[[ ${#ONLY[@]} -eq 0 ]] && return 0
	for n in "${ONLY[@]}"; do
		[[ $n == "$1" ]] && return 0
	done
	return 1
}

# Collects the cases; a line that does not parse counts as a failed case.
collect_cases() {
	local f dir prog line

	for f in "$SRC_DIR"/tests/scenarios/*.c "$SRC_DIR"/tests/scenarios/*.cc \
		 "$SRC_DIR"/tests/demo/*.c; do
		[[ -e $f ]] || continue
		dir=$(basename "$(dirname "$f")")
		prog=$(basename "$f")
		prog=$BUILD/tests/$dir/${prog%.*}
		while IFS= read -r line; do
			if ! parse_case "$line"; then
				fail "${f#"$SRC_DIR"/}" "bad kcsand-test line: $PARSE_ERR"
				echo "    $line"
				continue
			fi
			wanted "$C_NAME" || continue
			[[ -n ${KCSAND_TEST_NEEDS:-} && $C_NEEDS != "$KCSAND_TEST_NEEDS" ]] && continue
			if [[ -n $C_NEEDS && $C_NEEDS != "$HW_NEED" ]]; then
				NA+=("$C_NAME")
				continue
			fi
			if [[ $C_TCG == no && -n ${KCSAND_TEST_TCG:-} ]]; then
				NA_TCG+=("$C_NAME")
				continue
			fi
			CASE_NAME+=("$C_NAME")
			CASE_PROG+=("$prog")
			CASE_LINE+=("$line")
		done < <(grep -h 'kcsand-test:' "$f")
	done
}

# ---------------------------------------------------------------- running

# stamp FIRST [PROG]: copies stdin to stdout and writes the time at which the
# first report title went through to the file FIRST.  With PROG (stop=report),
# stops PROG at the first report that satisfies the case (stop_at_report).
stamp() {
	local line seen=0 start=-1 stopped=

	LINES=()
	while IFS= read -r line || [[ -n $line ]]; do
		if [[ $seen == 0 && $line == "BUG: KCSAN: "* ]]; then
			seen=1
			echo "$EPOCHREALTIME" >"$1"
		fi
		printf '%s\n' "$line"
		[[ -n ${2:-} && -z $stopped ]] || continue
		LINES+=("$line")
		if [[ $line == "BUG: KCSAN: "* ]]; then
			start=$((${#LINES[@]} - 1))
		elif [[ $line == "$SEP" && $start -ge 0 ]]; then
			BLOCK_START=("$start") BLOCK_END=($((${#LINES[@]} - 1)))
			start=-1
			stop_at_report "$2" && stopped=1
		fi
	done
}

# stop_at_report PROG: when the report just read (block 0) satisfies the case,
# sends SIGUSR1 to the process its "PID:" line names, if that process runs PROG
# (a pid is checked before it is signalled: another process may have it by now).
stop_at_report() {
	local j pid

	check_block 0 || return 1
	for ((j = BLOCK_START[0]; j < BLOCK_END[0]; j++)); do
		[[ ${LINES[j]} =~ ^CPU:\ [0-9]+\ PID:\ ([0-9]+)\  ]] && pid=${BASH_REMATCH[1]}
	done
	[[ -n ${pid:-} && $(readlink "/proc/$pid/exe") == "$(realpath "$1")" ]] || return 1
	kill -USR1 "$pid"
}

# Time between two $EPOCHREALTIME values, in seconds with 2 decimals.
elapsed() {
	local us=$(( 10#${2/./} - 10#${1/./} ))

	printf '%d.%02d' $((us / 1000000)) $((us % 1000000 / 10000))
}

# Report blocks of the output in LINES: BLOCK_START[k] is the index of the
# "BUG: KCSAN:" line, BLOCK_END[k] that of the closing separator (or the
# number of lines if there is none).
LINES=() BLOCK_START=() BLOCK_END=()
split_reports() {
	local i j n

	mapfile -t LINES <"$1"
	BLOCK_START=() BLOCK_END=()
	n=${#LINES[@]}
	for ((i = 0; i < n; i++)); do
		[[ ${LINES[i]} == "BUG: KCSAN: "* ]] || continue
		for ((j = i + 1; j < n; j++)); do
			[[ ${LINES[j]} == "$SEP" ]] && break
		done
		BLOCK_START+=("$i")
		BLOCK_END+=("$j")
	done
}

# check_block K: does report K satisfy the case's title, access and
# value_changed expectations?  Sets WHY when not.
WHY=
check_block() {
	local s=${BLOCK_START[$1]} e=${BLOCK_END[$1]}
	local title=${LINES[s]#BUG: KCSAN: }
	local re j found vc=0
	local -A used=()

	if [[ -n $C_TITLE && $title != "$C_TITLE" ]]; then
		WHY="title \"$C_TITLE\""
		return 1
	fi
	if [[ -n $C_TITLE_RE && ! $title =~ $C_TITLE_RE ]]; then
		WHY="title matching /$C_TITLE_RE/"
		return 1
	fi
	if [[ $s -eq 0 || ${LINES[s - 1]} != "$SEP" ]]; then
		WHY="a line of 66 '=' before \"BUG: KCSAN: $title\""
		return 1
	fi
	if [[ $e -ge ${#LINES[@]} ]]; then
		WHY="a line of 66 '=' closing the report \"$title\""
		return 1
	fi
	for re in "${C_ACCESS[@]}"; do
		found=0
		for ((j = s + 1; j < e; j++)); do
			[[ -n ${used[$j]-} ]] && continue
			if [[ ${LINES[j]} =~ $re ]]; then
				used[$j]=1
				found=1
				break
			fi
		done
		if [[ $found == 0 ]]; then
			WHY="a line matching /$re/ in the report \"$title\""
			return 1
		fi
	done
	for ((j = s + 1; j < e; j++)); do
		[[ ${LINES[j]} =~ ^value\ changed:\ 0x[0-9a-f]+\ -\>\ 0x[0-9a-f]+$ ]] && vc=1
	done
	if [[ $C_VC == yes && $vc == 0 ]]; then
		WHY="a \"value changed: 0x.. -> 0x..\" line in the report \"$title\""
		return 1
	fi
	if [[ $C_VC == no && $vc == 1 ]]; then
		WHY="no \"value changed:\" line in the report \"$title\""
		return 1
	fi
	check_tails "$s" "$e" || { WHY="$WHY in the report \"$title\""; return 1; }
	return 0
}

# check_tails START END: every stack (a run of " frame" lines) between the
# two lines ends with the functions of stack_tail.  Sets WHY when not.
check_tails() {
	local j funcs="" f n=0

	[[ -n $C_STACK_TAIL ]] || return 0
	for ((j = $1 + 1; j <= $2; j++)); do
		if [[ $j -lt $2 && ${LINES[j]} == " "* ]]; then
			f=${LINES[j]# }
			funcs+=" ${f%%+0x*}"
			continue
		fi
		[[ -z $funcs ]] && continue
		n=$((n + 1))
		if [[ "$funcs " != *" $C_STACK_TAIL " ]]; then
			WHY="stacks ending with \"$C_STACK_TAIL\", got the stack \"${funcs# }\""
			return 1
		fi
		funcs=""
	done
	if [[ $n == 0 ]]; then
		WHY="stacks ending with \"$C_STACK_TAIL\", got no stack"
		return 1
	fi
	return 0
}

# A report whose title names a function outside C_FUNCS, or "" if none.
unexpected_report() {
	local k t f ok g

	[[ $C_FUNCS_SET == 1 ]] || return 0
	for ((k = 0; k < ${#BLOCK_START[@]}; k++)); do
		t=${LINES[BLOCK_START[k]]#BUG: KCSAN: }
		if [[ $t != "data-race in "* && $t != "later write in "* ]]; then
			echo "$t"
			return 0
		fi
		for f in $(title_funcs "$t"); do
			ok=0
			for g in $C_FUNCS; do
				[[ $f == "$g" ]] && ok=1
			done
			if [[ $ok == 0 ]]; then
				echo "$t"
				return 0
			fi
		done
	done
}

# bad_frame: the first stack line of a report that frames_re does not match, or "".
bad_frame() {
	local k j

	[[ -n $C_FRAMES_RE ]] || return 0
	for ((k = 0; k < ${#BLOCK_START[@]}; k++)); do
		for ((j = BLOCK_START[k] + 1; j < BLOCK_END[k]; j++)); do
			if [[ ${LINES[j]} == " "* && ! ${LINES[j]} =~ $C_FRAMES_RE ]]; then
				echo "${LINES[j]}"
				return 0
			fi
		done
	done
}

# log_matches OUT: every log_re matches a line of OUT or OUT.stats; sets WHY to the first
# that does not.
log_matches() {
	local re

	for re in "${C_LOG_RE[@]}"; do
		WHY=$re
		# The counters are in the --stats file (run_once), not the brief summary.
		cat "$1" "$1.stats" 2>/dev/null | grep -qE -- "$re" || return 1
	done
	return 0
}

fail_case() {
	local out=$1 n

	shift
	fail "$C_NAME" "$*"
	echo "    command: $CMDLINE"
	if [[ -s $out ]]; then
		# Indented; a runaway reporter is cut short.
		sed -e 's/^/    /' -e "${MAX_LINES}q" "$out"
		n=$(wc -l <"$out")
		[[ $n -gt $MAX_LINES ]] && echo "    ... ($((n - MAX_LINES)) more lines)"
	else
		echo "    (no output on stderr)"
	fi
}

# positive_control OUT: a race-free case passes only if kcsand looked: its
# summary line says sites were hit and watchpoints were set.  Watchpoints set
# is what proves an armed site was checked, and the sampler cannot take it back;
# armed_sites is the state at exit, which a loaded machine's backoff can bring to
# 0 after the checks were made (issue 24), so it is shown, not required.
# Prints what it saw (status 0) or what was missing (status 1).
positive_control() {
	local line sites hits armed setup
	local re='^kcsand: [0-9]+ reports?, ([0-9]+) sites?, ([0-9]+) hits?;'

	# Every counter is in the --stats file (run_once); the summary line is brief.
	line=$(cat "$1" "$1.stats" 2>/dev/null | grep -E "$re" | tail -1)
	if [[ ! $line =~ $re ]]; then
		echo "kcsand's summary line (\"kcsand: N reports, N sites, N hits; ...\")"
		return 1
	fi
	sites=${BASH_REMATCH[1]} hits=${BASH_REMATCH[2]}
	[[ $line =~ armed_sites:\ ([0-9]+) ]] && armed=${BASH_REMATCH[1]}
	[[ $line =~ setup_watchpoints:\ ([0-9]+) ]] && setup=${BASH_REMATCH[1]}
	if [[ $sites == 0 || $hits == 0 || ${setup:-0} == 0 ]]; then
		echo "sites hit and watchpoints set, got $sites sites, $hits hits," \
			"setup_watchpoints ${setup:-?} (armed_sites ${armed:-?} at exit)"
		return 1
	fi
	echo "$hits hits, $setup watchpoints, ${armed:-?} sites armed at exit"
}

# run_once PROG OUT FIRST: one run of the case; sets rc, t0 and t1.
run_once() {
	rm -f "$3" "$2.stats"
	t0=$EPOCHREALTIME
	# iters= (the scenario's KCSAND_TEST_ITERS) unless the caller set one for all.
	{ KCSAND_TEST_ITERS=${KCSAND_TEST_ITERS:-$C_ITERS} \
		nice -n "${RUN_NICE:-0}" timeout -k 10 "$TIMEOUT" \
		"$CTL" run --stats "$2.stats" "${args[@]}" -- "$1" "${pargs[@]}" \
		</dev/null 2>&1 >"$TMP/$C_NAME.stdout"; } | stamp "$3" ${C_STOP:+"$1"} >"$2"
	rc=${PIPESTATUS[0]}
	t1=$EPOCHREALTIME
}

run_case() {
	local prog=$1 out=$TMP/$C_NAME.stderr first=$TMP/$C_NAME.first
	local -a args pargs
	local t0 t1 rc k n t titles extra try

	set -f
	args=($C_ARGS)
	if [[ $C_EXPECT == report && ! $C_ARGS =~ overhead|sampler ]]; then
		args=(--overhead-budget 100 "${args[@]}")
	fi
	pargs=($C_PARGS)
	set +f
	CMDLINE="timeout $TIMEOUT $CTL run ${args[*]}${args[*]:+ }-- $prog${pargs[*]:+ }${pargs[*]}"

	if [[ ! -x $prog ]]; then
		: >"$out"
		fail_case "$out" "program $prog not built (make scenario-programs)"
		return
	fi

	run_once "$prog" "$out" "$first"
	if lost_debug_trap "note $C_NAME: " "$rc" "$out"; then
		run_once "$prog" "$out" "$first"
	fi
	# A racy case whose run ended (exit 0) with no report at all: its two threads did
	# not meet while a site watched, within the program's own bound.  On a loaded machine
	# the scheduler decides that: sampled_hot_read ran out its 100 s without one at load 21-30.
	# A fresh process, up to TRIES runs in all, as history-check.sh runs its racy programs;
	# none reported in all of them fails.  A wrong report or status is never run again.
	for ((try = 1; try < TRIES; try++)); do
		[[ $C_EXPECT == report && $rc == 0 ]] && ! grep -q '^BUG: KCSAN: ' "$out" || break
		echo "note $C_NAME: run $try of $TRIES exited 0 without a report; running it again"
		run_once "$prog" "$out" "$first"
	done

	if [[ $rc == 124 || $rc == 137 ]]; then
		fail_case "$out" "expected exit status $([[ $C_EXPECT == report ]] && echo 66 || echo 0)," \
			"got a timeout after $TIMEOUT s (status $rc)"
		return
	fi

	split_reports "$out"
	n=${#BLOCK_START[@]}

	if [[ $C_EXPECT == error ]]; then
		if [[ $n -gt 0 ]]; then
			fail_case "$out" "expected no report, got $n (first: \"${LINES[BLOCK_START[0]]}\")"
		elif [[ $rc != 2 ]]; then
			fail_case "$out" "expected exit status 2, got $rc"
		elif ! log_matches "$out"; then
			fail_case "$out" "expected a line matching /$WHY/ in kcsanctl's output"
		else
			ok "$C_NAME" "refused as expected, $(elapsed "$t0" "$t1") s"
		fi
		return
	fi
	if [[ $C_EXPECT == none ]]; then
		if [[ $n -gt 0 ]]; then
			fail_case "$out" "expected no report, got $n (first: \"${LINES[BLOCK_START[0]]}\")"
		elif [[ $rc != 0 ]]; then
			fail_case "$out" "expected exit status 0, got $rc"
		elif ! WHY=$(positive_control "$out"); then
			fail_case "$out" "expected $WHY: without it \"no report\" proves nothing"
		elif PC=$WHY; ! log_matches "$out"; then
			fail_case "$out" "expected a line matching /$WHY/ in kcsanctl's output"
		else
			ok "$C_NAME" "no report; $PC; $(elapsed "$t0" "$t1") s"
		fi
		return
	fi

	if [[ $rc != 66 ]]; then
		fail_case "$out" "expected exit status 66, got $rc"
		return
	fi
	if ! grep -qx -- "$SEP" "$out"; then
		fail_case "$out" "expected a line of exactly 66 '=', got none"
		return
	fi
	if [[ $n == 0 ]]; then
		fail_case "$out" "expected a \"BUG: KCSAN: ${C_TITLE:-/$C_TITLE_RE/}\" line, got none"
		return
	fi
	WHY=
	for ((k = 0; k < n; k++)); do
		check_block "$k" && break
	done
	if [[ $k == "$n" ]]; then
		# Report why the first report with the right title (or else the
		# first report) did not do.
		for ((k = 0; k < n; k++)); do
			t=${LINES[BLOCK_START[k]]#BUG: KCSAN: }
			[[ -n $C_TITLE && $t == "$C_TITLE" ]] && break
			[[ -n $C_TITLE_RE && $t =~ $C_TITLE_RE ]] && break
		done
		[[ $k == "$n" ]] && k=0
		check_block "$k"
		titles=$(for ((k = 0; k < n; k++)); do echo "${LINES[BLOCK_START[k]]#BUG: KCSAN: }"; done |
			sort | uniq -c | sed -E 's/^ *([0-9]+) (.*)$/"\2" x\1/' | paste -sd ';' | sed 's/;/, /g')
		fail_case "$out" "expected $WHY, got $n report(s): $titles"
		return
	fi
	extra=$(unexpected_report)
	if [[ -n $extra ]]; then
		fail_case "$out" "expected reports naming only: $C_FUNCS, got \"BUG: KCSAN: $extra\""
		return
	fi
	extra=$(bad_frame)
	if [[ -n $extra ]]; then
		fail_case "$out" "expected every stack line to match /$C_FRAMES_RE/, got \"$extra\""
		return
	fi
	if ! log_matches "$out"; then
		fail_case "$out" "expected a line matching /$WHY/ in kcsanctl's output"
		return
	fi
	ok "$C_NAME" "first report after $(elapsed "$t0" "$(cat "$first")") s, $n report(s), $(elapsed "$t0" "$t1") s$( ((try > 1)) && echo ", run $try of $TRIES")"
}

# ---------------------------------------------------------------- main

# Whether this machine's debug registers trap (build/tests/tools/hw_traps asks
# the same check as kcsand): which of a needs= pair runs here.
NA=() NA_TCG=()
HW_TOOL=$BUILD/tests/tools/hw_traps
if [[ ! -x $HW_TOOL ]]; then
	fail setup "$HW_TOOL not built (make scenario-programs)"
	HW_NEED=none
elif HW_WHY=$("$HW_TOOL"); then
	HW_NEED=hwbp
else
	HW_NEED=nohwbp
fi
collect_cases
if [[ ${#CASE_NAME[@]} -eq 0 && $failed -eq 0 ]]; then
	setup_fail "no cases found${ONLY:+ named ${ONLY[*]}} under $SRC_DIR/tests"
fi

CTL=$BUILD/kcsanctl
problem=
if [[ $(id -u) != 0 ]]; then
	problem="must run as root: kcsanctl attaches uprobes and loads BPF programs"
elif [[ ! -x $CTL ]]; then
	problem="$CTL not found or not executable; build it first (make)"
fi
if [[ -n $problem ]]; then
	echo "run-scenarios: $problem; none of the ${#CASE_NAME[@]} case(s) ran" >&2
	echo "$passed passed, $((failed + ${#CASE_NAME[@]})) failed"
	exit 1
fi

TMP=$(mktemp -d "${TMPDIR:-/tmp}/kcsand-scenarios.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT

# run_nth I: case I (its own parse, so that it can run as a job).
run_nth() {
	parse_case "${CASE_LINE[$1]}"
	run_case "${CASE_PROG[$1]}"
}

# Two cases at a time: each is its own process and files, and on 2 CPUs one case
# leaves a CPU idle while kcsanctl starts (the kernel verifies its BPF programs on
# one).  A case that samples sites (a budget below 100, sampler parameters) measures
# CPU time and turns, so it runs alone, after the others.
ALONE=()
jobs_start 2
for ((i = 0; i < ${#CASE_NAME[@]}; i++)); do
	parse_case "${CASE_LINE[i]}"
	if [[ $C_ARGS =~ sampler_|overhead.budget[=\ ]([0-9]+) && ${BASH_REMATCH[1]:-0} != 100 ]]; then
		ALONE+=("$i")
	else
		job run_nth "$i"
	fi
done
jobs_wait
# At nice -10: a sampled case's race is found when a turn's watcher stalls in one thread
# while the other runs.  With equal-priority hogs beside it (stress-ng --cpu 2, load 16-28)
# its threads seldom ran at once: sampled_hot_read got 7 s of CPU in 100 s, and reported in
# 1 run of 5.  What it checks (the report, turns on one thread) needs both threads running,
# not a share of a crowded machine.
RUN_NICE=-10
for i in "${ALONE[@]}"; do
	run_nth "$i"
done
RUN_NICE=

if [[ ${#NA[@]} -gt 0 ]]; then
	case $HW_NEED in
	hwbp) why="debug registers trap here; these check the fallback where they do not" ;;
	nohwbp) why="$HW_WHY; these run in the QEMU guest (tests/vm/user-hwbp.sh)" ;;
	*) why="cannot tell whether debug registers trap" ;;
	esac
	not_applicable "${NA[*]}" "$why"
fi
[[ ${#NA_TCG[@]} -eq 0 ]] || not_applicable "${NA_TCG[*]}" "tcg=no: a single-stepped \
instruction hitting a data watchpoint locks up a QEMU TCG guest's CPU"
finish
