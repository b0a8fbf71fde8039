#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make daemon-tests: the service's suites, one at a time, then the user-mode soak.
#
#   tests/run-daemon-tests.sh BUILD_DIR SOAK_S SCRIPT...      (root)
#
# Each SCRIPT (tests/daemon-*.sh) starts its own kcsand on a private socket and
# log, but most target build/tests/daemon/two_races by path, and a daemon probes
# every process of its target: two suites at once see each other's processes
# (daemon-sinks counted a report of daemon-control's two_races).  So they run
# one at a time (jobs_start 1) until each runs a private copy, as daemon-procs
# does.  Each suite's output comes out whole, in order, with its own "N passed,
# N failed"; then one line per suite here (ok, or FAIL when it exited non-zero)
# and the total.
# daemon-procs.sh runs alone (its daemon's RSS over 10,000 processes), and the
# soak last, alone: SOAK_S seconds of six targets restarted in a loop.
set -u
BUILD=$1 SOAK_S=$2
shift 2
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
ALONE=" tests/daemon-procs.sh "

# run_suite SCRIPT ARG...: the suite, timed, and one result for it.
run_suite() {
	echo "== $1"
	if tests/timed.sh "$@"; then ok "${1##*/}"; else fail "${1##*/}" "exited non-zero"; fi
}

jobs_start 1
for s in "$@"; do
	[[ $ALONE == *" $s "* ]] || job run_suite "$s" "$BUILD"
done
jobs_wait
for s in "$@"; do
	[[ $ALONE == *" $s "* ]] && run_suite "$s" "$BUILD"
done
echo "== tests/soak/user-soak.sh ($SOAK_S s)"
run_suite tests/soak/user-soak.sh "$BUILD" "$SOAK_S"
finish daemon-tests
