#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The guest side of bench/kernel/p15-rt-share.sh: runs COMMAND (the workload)
# and, beside it, once a second, appends to LOG what the real-time scheduler
# did: each CPU's rt_rq (rt_time, rt_throttled, from the scheduler's debugfs
# file) and each SCHED_FIFO/SCHED_RR thread, and every kcsanctl thread, with
# its priority and its run time in ns (schedstat).  The sampler runs at nice
# -20 so that a starved second shows as a gap, not as no sampler at all.
#   p15-rt-share-steps.sh LOG [RT_CONTROL] COMMAND...
# RT_CONTROL, an executable whose name begins with rt-, runs beside COMMAND
# and is killed with the sampler (bench/programs/rt-tick.c).
# Lines:  T UPTIME
#         R rt_rq[CPU]: FIELD VALUE
#         F TID COMM POLICY PRIO RUN_NS
set -u
log=$1
shift
dbg=/sys/kernel/debug/sched/debug

sample() {
	while :; do
		echo "T $(cut -d' ' -f1 /proc/uptime)"
		awk '/^rt_rq\[/ { c = $1 } /\.rt_(throttled|time) / { print "R", c, $1, $3 }' "$dbg"
		# comm may hold spaces: the fields are counted after its closing parenthesis.
		awk 'FNR == 1 {
			i = index($0, ") "); comm = substr($0, index($0, "(") + 1, i - index($0, "(") - 1)
			n = split(substr($0, i + 2), f, " ")
			if (f[39] == 0 && comm != "kcsanctl") next
			p = FILENAME; sub(/stat$/, "schedstat", p)
			s = ""; getline s < p; close(p); split(s, ss, " ")
			t = FILENAME; sub(/^.*task\//, "", t); sub(/\/stat$/, "", t)
			print "F", t, comm, f[39], f[38], ss[1]
		}' /proc/[0-9]*/task/[0-9]*/stat 2>/dev/null
		sleep 1
	done
}

sample >> "$log" 2>&1 &
spid=$!
renice -n -20 -p "$spid" > /dev/null 2>&1
cpid=
if [[ $(basename "$1") == rt-* ]]; then
	"$1" &
	cpid=$!
	shift
fi
"$@"
rc=$?
kill "$spid" $cpid
wait "$spid" $cpid 2>/dev/null
exit $rc
