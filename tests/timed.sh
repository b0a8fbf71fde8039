#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# tests/timed.sh CMD...: runs CMD, then says how long it took, the CPU time it and its
# children used (user + system: QEMU's too, for a guest suite), and how it ended, so
# that CI's log shows which suite the time of `make check` went to, and how much of a
# suite's time was CPU rather than waiting.
start=$(date +%s)
"$@"
rc=$?
# This shell's children's user and system time, cutime and cstime of /proc/PID/stat (in
# clock ticks), read in this shell: a subshell, as of $(times), has no children.
read -r stat < /proc/$$/stat
read -ra f <<< "${stat##*) }"
cpu=$(( (f[13] + f[14]) * 10 / $(getconf CLK_TCK) ))
echo "== ${*##*/} took $(( $(date +%s) - start )) s, $((cpu / 10)).$((cpu % 10)) s CPU (status $rc)"
exit $rc
