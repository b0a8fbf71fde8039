#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# tests/timed.sh CMD...: runs CMD, then says how long it took and how it ended, so
# that CI's log shows which suite the time of `make check` went to.
start=$(date +%s)
"$@"
rc=$?
echo "== ${*##*/} took $(( $(date +%s) - start )) s (status $rc)"
exit $rc
