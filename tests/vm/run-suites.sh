#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make vm-tests: the guest suites in two queues, each queue booting its guests one after
# the other, the two side by side.
#
#   tests/vm/run-suites.sh LOGDIR "SUITE [ARG...]"...
#
# Each queue takes the next suite of the list when its last one has ended (so list the
# longest first), and runs it from the repository's top directory, its output to
# LOGDIR/vm-suite-N.log.  When a suite ends its "== SUITE took N s, C s CPU (status S, queue Q)"
# line comes out; at the end every suite's log is printed whole, in the list's order, then
# "N suites, N failed".  Exit status: 0 when every suite passed, else 1.
#
# Why: a TCG guest keeps about one core of two busy (docs/test-kernel.md, "What make check
# costs"), so once the host suites are done a second guest has the other core.  Each queue
# takes its own guest lock (tests/vm/kcsan-vm): the first KCSAN_VM_LOCK (default
# /tmp/kcsan-vm.lock), the second the same name with ".2", so that other checkouts' guests
# still wait on the first.
#
# Environment: KCSAN_VM_QUEUES, 1 or 2 (default 2; 1: one guest at a time, as before);
# KCSAN_VM_SECOND_AFTER=FILE[:FILE...]: the second queue starts once one of the FILEs
# exists (make check: once the host half's CPU-bound suites are over, or once it has ended,
# failed or not: the Makefile's VM_SECOND_AFTER), or once the first queue has taken the
# last suite.
set -u
[ $# -ge 2 ] || { echo "usage: $0 LOGDIR 'SUITE [ARG...]'..." >&2; exit 2; }
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
. "$REPO/tests/lib.sh"
dir=$1
shift
suites=("$@")
n=${#suites[@]}
queues=${KCSAN_VM_QUEUES:-2}
[[ $queues =~ ^[12]$ ]] || { echo "$0: KCSAN_VM_QUEUES must be 1 or 2, not '$queues'" >&2; exit 2; }
lock=${KCSAN_VM_LOCK:-/tmp/kcsan-vm.lock}
mkdir -p "$dir" || exit 2
rm -f "$dir"/vm-suite-*.{log,rc} "$dir/vm-queue.next"
echo 0 > "$dir/vm-queue.next"
cd "$REPO" || exit 2

# take: the next suite's index, and the list moves on; nothing when none is left.
take() {
	local i

	exec 7>>"$dir/vm-queue.lock"
	flock 7
	i=$(cat "$dir/vm-queue.next")
	echo $((i + 1)) > "$dir/vm-queue.next"
	exec 7>&-
	((i < n)) && echo "$i"
}

# queue Q LOCK: runs suites until none is left, each with its guests under LOCK.
queue() {
	local q=$1 i t0 rc t1

	while i=$(take) && [ -n "$i" ]; do
		t0=$(date +%s)
		child_ticks
		t1=$child_ticks
		# shellcheck disable=SC2086	# "SUITE ARG...": words
		KCSAN_VM_LOCK=$2 tests/vm/${suites[i]} > "$dir/vm-suite-$i.log" 2>&1 < /dev/null
		rc=$?
		child_ticks
		echo "$rc" > "$dir/vm-suite-$i.rc"
		echo "== ${suites[i]} took $(($(date +%s) - t0)) s, $(ticks_seconds $((child_ticks - t1))) s CPU (status $rc, queue $q)"
	done
}

queue 1 "$lock" & q1=$!
if [ "$queues" = 2 ]; then
	(
		IFS=: read -ra after <<< "${KCSAN_VM_SECOND_AFTER:-}"
		# 0 when one of the FILEs is there.
		appeared() { local f; for f in "${after[@]}"; do [ -e "$f" ] && return 0; done; return 1; }
		while [ ${#after[@]} -gt 0 ] && ! appeared && (($(cat "$dir/vm-queue.next") < n)); do
			sleep 2
		done
		queue 2 "$lock.2"
	) & q2=$!
	wait $q2
fi
wait $q1

failed=0
for ((i = 0; i < n; i++)); do
	echo "==== ${suites[i]} ($dir/vm-suite-$i.log):"
	cat "$dir/vm-suite-$i.log" 2>/dev/null
	[ "$(cat "$dir/vm-suite-$i.rc" 2>/dev/null)" = 0 ] || failed=$((failed + 1))
done
echo "$n suites, $failed failed"
[ $failed = 0 ]
