# SPDX-License-Identifier: GPL-2.0-only
#
# Shared by the daemon tests (tests/daemon-*.sh): result lines, and a
# kcsand started in the foreground on a private socket and log.
#
#   . tests/daemon-lib.sh BUILD_DIR
#
# Results and summary figures through tests/lib.sh: "ok   NAME" or
# "FAIL NAME: expected ..., got ...", and finish() prints "N passed, N failed".

BUILD=${1:-build}
SRC_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
KCSAND=$BUILD/kcsand
CTL=$BUILD/kcsanctl
TMP=$(mktemp -d /tmp/kcsand-test.XXXXXX)
SOCK=$TMP/kcsand.sock
LOG=$TMP/reports.log
DERR=$TMP/kcsand.stderr
export KCSAND_SOCKET=$SOCK
# How long a wait for something a loaded machine delays may last: each wait ends
# as soon as what it waits for is there.
WAIT_S=${KCSAND_TEST_WAIT_S:-120}
DPID=
TPIDS=()
. "$SRC_DIR/tests/lib.sh"

# stats_layout_re VAR [COUNTER...]: set VAR to an extended regex for the start of
# `kcsanctl stats`, byte for byte the layout of /sys/kernel/debug/kcsan (enabled,
# the nine counters, the filter list, empty here), then kcsand's first figure.  The
# named counters must be nonzero.  Match it against the first 15 lines plus a newline.
stats_layout_re() {
	local -n re_out=$1
	local c v
	shift
	re_out='^enabled: 1'$'\n'
	for c in used_watchpoints setup_watchpoints data_races assert_failures no_capacity \
		report_races races_unknown_origin unencodable_accesses encoding_false_positives; do
		v='[0-9]+'
		[[ " $* " == *" $c "* ]] && v='[1-9][0-9]*'
		re_out+="$c: $v"$'\n'
	done
	re_out+=$'\n''blacklisted functions: none'$'\n\n''records_dropped: [0-9]+'$'\n'
}

cleanup() {
	local p

	for p in "${TPIDS[@]}"; do
		kill "$p" 2>/dev/null
	done
	if [[ -n $DPID ]]; then
		kill "$DPID" 2>/dev/null
		wait "$DPID" 2>/dev/null
	fi
	rm -rf "$TMP"
}
trap cleanup EXIT

need_root() {
	[[ $(id -u) == 0 ]] || setup_fail "must run as root (BPF, uprobes)" "$1"
}

# start_daemon CONFIG [ARGS...]: kcsand in the foreground; waits for its socket, up to
# $KCSAND_TEST_START_S seconds (90: the wait ends at the socket, so it costs nothing on a
# quiet machine; at load 17 on 2 cores a start took more than the 10 s it used to be, and
# attaching kprobes in an emulated guest takes longer still).
start_daemon() {
	local conf=$1 i

	shift
	rm -f "$LOG"
	"$KCSAND" -c "$conf" --socket "$SOCK" --foreground --log "$LOG" "$@" 2>"$DERR" &
	DPID=$!
	for ((i = 0; i < ${KCSAND_TEST_START_S:-90} * 10; i++)); do
		[[ -S $SOCK ]] && "$CTL" status >/dev/null 2>&1 && return 0
		kill -0 "$DPID" 2>/dev/null || break
		sleep 0.1
	done
	echo "kcsand did not start:"
	sed 's/^/    /' "$DERR"
	# Still starting (a loaded machine): stopped, or the wait below never ends.
	kill -TERM "$DPID" 2>/dev/null
	wait "$DPID" 2>/dev/null
	DPID=
	return 1
}

# wait_for CMD...: until CMD succeeds, for up to WAIT_S seconds; status 1 when it never did.
# What a case checks after a change that takes effect "soon" (a --duration, a process's exit)
# waits for it here rather than for a fixed time, which a loaded machine overruns.
wait_for() {
	local i

	for ((i = 0; i < WAIT_S * 10; i++)); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}

# hup_read: kcsand has taken SIGHUP off its signalfd (no SIGHUP pending in ShdPnd).
hup_read() {
	local pnd

	pnd=$(awk '$1 == "ShdPnd:" { print $2 }' /proc/"$DPID"/status 2>/dev/null) || return 0
	(( (0x${pnd:-0} & 1) == 0 ))
}

# reload_daemon: SIGHUP, and back once the reload is over, however loaded the machine: once
# kcsand has read the signal it reloads before it serves another request (one thread, main.c's
# serve()), so the status request answered after that comes after the reload and its message.
# A fixed second's wait was overrun at load 20.
reload_daemon() {
	kill -HUP "$DPID" || return 1
	wait_for hup_read
	"$CTL" status >/dev/null
}

stop_daemon() {
	[[ -n $DPID ]] || return 0
	kill -TERM "$DPID"
	wait "$DPID"
	local rc=$?
	DPID=
	return $rc
}

# start_target PROG [ARGS]: a target in the background.
start_target() {
	"$@" >/dev/null 2>&1 &
	TPIDS+=($!)
	TPID=$!
}

# The link ids a process holds, from its fdinfo: the kernel's own list.
held_links() {
	grep -h '^link_id:' /proc/"$1"/fdinfo/* 2>/dev/null | awk '{print $2}' | sort -n
}

# Which of the link ids given still exist (bpftool link list).
links_alive() {
	local id

	for id in "$@"; do
		bpftool link show id "$id" >/dev/null 2>&1 && echo "$id"
	done
}

# programs_left BUILD FIRST_ID: this build's BPF programs (kcsand_* in its
# skeleton) loaded since FIRST_ID (tests/bpf-leaks.py --max-id) and still
# there; other jobs on the machine load kcsand_* programs of other builds.
programs_left() {
	local ours

	ours=$(grep -o 'struct bpf_program \*kcsand_[a-z_0-9]*;' "$1"/kcsand.skel.h |
	       sed 's/.*\*\(.*\);/\1/' | cut -c1-15 | sort -u)
	"$SRC_DIR"/tests/bpf-leaks.py "$2" | awk 'NR == FNR { o[$1]; next } $2 in o' <(echo "$ours") -
}

# check_links_gone NAME LINK...: a check that every link given is gone (and some were).
check_links_gone() {
	local name=$1 left
	shift
	left=$(links_alive "$@")
	if [[ $# -gt 0 && -z $left ]]; then ok "$name"
	else fail "$name" "links $* gone, got alive: $(echo $left)"; fi
}

# check_no_program_left NAME BUILD FIRST_ID: a check on programs_left.
check_no_program_left() {
	local left

	left=$(programs_left "$2" "$3")
	if [[ -z $left ]]; then ok "$1"; else fail "$1" "got: $left"; fi
}

# Bytes in the log now: a mark to count reports from.
log_mark() {
	stat -c %s "$LOG" 2>/dev/null || echo 0
}

# count_title MARK TITLE: reports with this title since MARK.
count_title() {
	tail -c +$(($1 + 1)) "$LOG" 2>/dev/null | grep -c -F "BUG: KCSAN: $2"
}

# count_reports MARK: every report since MARK.
count_reports() {
	tail -c +$(($1 + 1)) "$LOG" 2>/dev/null | grep -c "^BUG: KCSAN: "
}

# stat_value NAME: one line of kcsanctl stats.
stat_value() {
	"$CTL" stats | awk -v n="$1:" '$1 == n { print $2; exit }'
}

# raw LINE...: send request lines as they are and print the replies.
raw() {
	python3 - "$SOCK" "$@" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
f = s.makefile("rb")
for line in sys.argv[2:]:
    s.sendall(line.encode() + b"\n")
    while True:
        l = f.readline()
        if not l:
            sys.exit(1)
        sys.stdout.write(l.decode(errors="replace"))
        if l == b"ok\n" or l.startswith(b"error: "):
            break
PY
}

# wait_title MARK TITLE [TIMEOUT]: until a report with TITLE came after MARK, for
# at least KCSAND_TEST_WAIT_S (120) seconds: on a loaded machine a race can take
# a minute to be caught, and the wait ends at the report.
wait_title() {
	local i limit=${3:-0}

	((limit < ${KCSAND_TEST_WAIT_S:-120})) && limit=${KCSAND_TEST_WAIT_S:-120}
	for ((i = 0; i < limit * 4; i++)); do
		(( $(count_title "$1" "$2") > 0 )) && return 0
		sleep 0.25
	done
	return 1
}
