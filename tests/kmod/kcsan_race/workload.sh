#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Runs one round of the loaded kcsan_race scenarios and waits for its end.
#   workload.sh [ITERATIONS] [TIMEOUT_S] [SCENARIO_MASK]
set -eu
P=/sys/module/kcsan_race/parameters
[ -d $P ] || { echo "workload.sh: kcsan_race is not loaded" >&2; exit 2; }
[ $# -ge 1 ] && echo "$1" > $P/iters
[ $# -ge 3 ] && echo "$3" > $P/round_mask
echo 1 > $P/run
t=0 limit=$(( ${2:-120} * 10 ))
while [ "$(cat $P/busy)" != 0 ]; do
	t=$((t + 1))
	[ $t -le "$limit" ] || { echo "workload.sh: round still busy after ${2:-120} s" >&2; exit 1; }
	sleep 0.1
done
echo "workload.sh: round $(cat $P/run) done (scenarios $(cat $P/round_mask), $(cat $P/iters) iterations/thread, timer fired $(cat $P/timer_fires) times)" >&2
