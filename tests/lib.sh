# SPDX-License-Identifier: GPL-2.0-only
#
# What every test script shares: one result format, and one way to read a
# figure of kcsand's summary.
#
#   . tests/lib.sh
#
#   ok NAME [NOTE]           "ok   NAME", or "ok   NAME  (NOTE)"
#   fail NAME WHY [FILE]     "FAIL NAME: WHY", then FILE's last 20 lines indented (the
#                            output of the command that failed)
#                            Both end with "  [N s]" when a second or more went by
#                            since the previous result, so that CI's log shows
#                            which case a slow suite spends its time in.
#   not_applicable NAMES WHY "n/a  NAMES: WHY" (counted neither way)
#   check NAME EXPECTED GOT  ok when the two are equal, else a failure saying both
#   check_cmd NAME CMD...    ok when CMD succeeds
#   finish [PREFIX]          "[PREFIX: ]N passed, N failed" (what CI reads); status 1
#                            when any failed
#   setup_fail WHY [NAME]    "FAIL NAME: WHY" (NAME: setup), "0 passed, 1 failed", exit 1:
#                            what could not start says so in the same format
#   summary_value NAME FILE  the value of NAME in the last summary in FILE ("NAME: V",
#                            V up to the next blank: 12, 3/5, 10%), empty when none
#   child_ticks              sets child_ticks to the CPU time (user + system, clock ticks)
#                            of the calling shell's children that have ended
#   ticks_seconds TICKS      "N.N", TICKS in seconds
#
# Cases that time nothing and share no state but the machine may run two at a time:
#
#   jobs_start N             from here on, up to N jobs at once (KCSAND_TEST_JOBS, when
#                            set, overrides N; 1 runs each job in the foreground)
#   job FUNC [ARG...]        FUNC ARG... as a job: in the background, once fewer than N
#                            run.  What it prints, its results included, comes out
#                            whole and in the order the jobs were started, and its
#                            results count as if it had run in the foreground; its
#                            variables do not come back.  [N s] is the job's own time.
#   jobs_wait                waits for every job and prints what is left to print
#
# The counts are $passed and $failed.

passed=0
failed=0
lib_last_result=${EPOCHREALTIME/[.,]/}

# lib_took: sets lib_took to "  [N.N s]" since the previous result (or the
# sourcing) when that is 1 s or more, else to nothing.
lib_took() {
	local now=${EPOCHREALTIME/[.,]/} us

	us=$((now - lib_last_result))
	lib_last_result=$now
	lib_took=
	if ((us >= 1000000)); then
		printf -v lib_took '  [%d.%d s]' $((us / 1000000)) $((us / 100000 % 10))
	fi
}

ok() {
	lib_took
	echo "ok   $1${2:+  ($2)}$lib_took"
	passed=$((passed + 1))
}

# A failed case's output: its first report whole (a CI run's clone is gone
# by the time anyone reads the log, and the tail alone cut the title and the
# first access off), then the last lines, where the summary is.
lib_show_output() {
	if (($(wc -l < "$1") <= 60)); then
		sed 's/^/    /' "$1"
		return
	fi
	awk '/^BUG: KCSAN: / && !seen { seen = 1; on = 1; n = 0; print prev }
	     on { print; if (++n > 40 || (n > 1 && /^==========/)) on = 0 }
	     { prev = $0 }
	     END { if (seen) print "..." }' "$1" | sed 's/^/    /'
	sed 's/^/    /' "$1" | tail -20
}

fail() {
	lib_took
	echo "FAIL $1: $2$lib_took"
	[[ -z ${3:-} ]] || lib_show_output "$3"
	failed=$((failed + 1))
}

not_applicable() {
	echo "n/a  $1: $2"
}

check() {
	if [[ $2 == "$3" ]]; then
		ok "$1"
	else
		fail "$1" "expected '$2', got '$3'"
	fi
}

check_cmd() {
	local name=$1

	shift
	if "$@"; then ok "$name"; else fail "$name" "no: $*"; fi
}

# finish [SUITE]: the result line and status.  A suite that checked nothing failed: it
# stopped before its first check (daemon-history once said "0 passed, 0 failed" and exit 0
# when its kcsand did not start).
finish() {
	((passed + failed)) || fail no_checks "the suite stopped before its first check"
	echo "${1:+$1: }$passed passed, $failed failed"
	[[ $failed == 0 ]]
}

setup_fail() {
	echo "FAIL ${2:-setup}: $1"
	echo "0 passed, 1 failed"
	exit 1
}

lib_jobs=1 lib_job_dir= lib_job_next=0 lib_job_shown=0
lib_job_pids=()

jobs_start() {
	lib_jobs=${KCSAND_TEST_JOBS:-$1}
	if ((lib_jobs > 1)) && [[ -z $lib_job_dir ]]; then
		lib_job_dir=$(mktemp -d "${TMPDIR:-/tmp}/kcsand-jobs.XXXXXX") || lib_jobs=1
	fi
}

# lib_jobs_show: prints the finished jobs that every earlier job has been printed before.
lib_jobs_show() {
	local n f

	while ((lib_job_shown < lib_job_next)); do
		f=$lib_job_dir/$lib_job_shown
		[[ -e $f.count ]] || return 0
		cat "$f.out"
		read -r n f <"$f.count"
		passed=$((passed + n))
		failed=$((failed + f))
		lib_job_shown=$((lib_job_shown + 1))
	done
}

# lib_jobs_running: the pids of the jobs still running, in lib_job_pids.
lib_jobs_running() {
	local p
	local -a left=()

	for p in "${lib_job_pids[@]}"; do
		kill -0 "$p" 2>/dev/null && left+=("$p")
	done
	lib_job_pids=("${left[@]}")
}

job() {
	local f

	if ((lib_jobs <= 1)); then
		"$@"
		return
	fi
	for (( ; ; )); do
		lib_jobs_running
		((${#lib_job_pids[@]} < lib_jobs)) && break
		wait -n "${lib_job_pids[@]}"
		lib_jobs_show
	done
	f=$lib_job_dir/$lib_job_next
	(
		passed=0 failed=0
		lib_last_result=${EPOCHREALTIME/[.,]/}
		"$@"
		echo "$passed $failed" >"$f.count"
	) >"$f.out" 2>&1 &
	lib_job_pids+=($!)
	lib_job_next=$((lib_job_next + 1))
}

jobs_wait() {
	local f

	((lib_jobs <= 1)) && return 0
	wait "${lib_job_pids[@]}"
	lib_job_pids=()
	for ((; lib_job_shown < lib_job_next; )); do
		f=$lib_job_dir/$lib_job_shown
		# Ended before counting its results (killed): one failure, after what it printed.
		if [[ ! -e $f.count ]]; then
			echo "FAIL job $lib_job_shown: ended before it counted its results" >>"$f.out"
			echo "0 1" >"$f.count"
		fi
		lib_jobs_show
	done
	rm -rf "$lib_job_dir"
	lib_job_dir=
	lib_last_result=${EPOCHREALTIME/[.,]/}
}

summary_value() {
	grep -oE "(^| )$1: [^ ]+" "$2" 2>/dev/null | tail -1 | sed 's/.*: //'
}

# build_id BIN: BIN's GNU build-id in hex; fails, printing nothing, for a BIN without one.
# Its debug file goes under a debug root as ROOT/.build-id/NN/REST.debug (the layout of
# Debian's -dbg and -dbgsym packages, and KCSAND_DEBUG_ROOT's).
build_id() {
	local id

	id=$(readelf -n "$1" | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p')
	[[ -n $id ]] && echo "$id"
}

# child_ticks: this (sub)shell's cutime + cstime from /proc/PID/stat, read in this shell: a
# subshell, as of $(times), has no children of its own.  Call it directly, not in $(...).
child_ticks() {
	local s f

	read -r s < "/proc/$BASHPID/stat"
	read -ra f <<< "${s##*) }"
	child_ticks=$((f[13] + f[14]))
}

ticks_seconds() {
	local t=$(($1 * 10 / $(getconf CLK_TCK)))

	echo "$((t / 10)).$((t % 10))"
}

