#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make check's two halves at once: the host suites (make host-tests) and the guest
# suites (make vm-tests), each its own make, beside the other.
#
#   tests/vm/check-both.sh LOGDIR "HOST COMMAND" "GUEST COMMAND"
#
# Why at once: the guest half took 18 min of an idle 26.5 min run, the host half 8, one
# after the other; but the TCG guest keeps the two cores busy only part of its time
# (core-kernel.sh's QEMU used 86 s of CPU in a 254 s run), so the host half fits in its
# idle stretches (docs/test-kernel.md, "What make check costs").
#
# Each half's output goes to LOGDIR/check-host.log and LOGDIR/check-guest.log, whole
# and unmixed, and LOGDIR/check-NAME.done appears when a half has ended (the host half's
# LOGDIR/check-host.heavy.done, once its CPU-bound suites are over, starts the guest half's
# second queue: the Makefile's VM_SECOND_AFTER); while they run, only the suites' "== ... took" lines come here, each
# prefixed with its half.  At the end each log is printed whole, one after the other,
# then one line per half: its status, wall and CPU seconds, and the load average at its
# start and end.  Exit status: 0 when both halves passed, else 1.
set -u
[ $# = 3 ] || { echo "usage: $0 LOGDIR HOST_COMMAND GUEST_COMMAND" >&2; exit 2; }
dir=$1
mkdir -p "$dir" || exit 2
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

# half NAME COMMAND: runs COMMAND (a shell command line) with its output to LOGDIR/check-NAME.log
# and, in LOGDIR/check-NAME.times, its status, wall seconds, CPU seconds (its children's
# user + system time: the make, the suites, QEMU) and the load averages.
half() {
	local name=$1 cmd=$2 t0 rc

	t0=$(date +%s)
	echo "load $(cut -d' ' -f1 /proc/loadavg)" > "$dir/check-$name.times"
	(eval "$cmd") > "$dir/check-$name.log" 2>&1 < /dev/null
	rc=$?
	: > "$dir/check-$name.done"
	child_ticks
	echo "status $rc wall $(( $(date +%s) - t0 )) cpu $(ticks_seconds "$child_ticks")" \
	     "load_end $(cut -d' ' -f1 /proc/loadavg)" >> "$dir/check-$name.times"
}

# follow NAME PID: the suites' "== ... took" lines of a half's log as they come, until
# the half (PID) has ended.
follow() {
	tail --pid="$2" -n +1 -F "$dir/check-$1.log" 2>/dev/null |
		grep --line-buffered -E '^== .* took [0-9]+ s' | sed -u "s/^/[$1] /"
}

rm -f "$dir"/check-{host,guest}.{log,times,done} "$dir"/check-host.heavy.done
: > "$dir/check-host.log"
: > "$dir/check-guest.log"
half host "$2" & ph=$!
half guest "$3" & pg=$!
follow host $ph & fh=$!
follow guest $pg & fg=$!
wait $ph $pg $fh $fg

rc=0
for name in host guest; do
	echo "==== $name half ($dir/check-$name.log):"
	cat "$dir/check-$name.log"
done
for name in host guest; do
	read -r _ l0 < "$dir/check-$name.times"
	read -r _ st _ wall _ cpu _ l1 < <(tail -n 1 "$dir/check-$name.times")
	echo "==== $name half: status ${st:-?}, ${wall:-?} s wall, ${cpu:-?} s CPU," \
		"load ${l0:-?} -> ${l1:-?}"
	[ "${st:-1}" = 0 ] || rc=1
done
exit $rc
