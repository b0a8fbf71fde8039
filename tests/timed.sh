#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# tests/timed.sh CMD...: runs CMD, then says how long it took, the CPU time it and its
# children used (user + system: QEMU's too, for a guest suite), and how it ended, so
# that CI's log shows which suite the time of `make check` went to, and how much of a
# suite's time was CPU rather than waiting.
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
start=$(date +%s)
"$@"
rc=$?
child_ticks
echo "== ${*##*/} took $(( $(date +%s) - start )) s, $(ticks_seconds "$child_ticks") s CPU (status $rc)"
exit $rc
