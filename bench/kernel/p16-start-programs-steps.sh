#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Guest side of bench/kernel/p16-start-programs.sh, run by tests/vm/kcsan-vm as its
# probe command (its arguments are ignored).  Starts $KCSAN_VM_OUT/kcsanctl (and
# kcsanctl-old, when there) once per mode, the builds in turn; writes starts.txt
# ("BUILD MODE SECONDS EXIT") and each start's stderr as BUILD-MODE.err.
set -u
OUT=${KCSAN_VM_OUT:?run by tests/vm/kcsan-vm}
up() { cut -d' ' -f1 /proc/uptime; }
start() {
	local build=$1 mode=$2 t0 rc
	shift 2
	t0=$(up)
	"$OUT/$build" run -v --output /dev/null "$@" > /dev/null 2> "$OUT/$build-$mode.err"
	rc=$?
	awk -v b="$build" -v m="$mode" -v a="$t0" -v z="$(up)" -v r="$rc" \
		'BEGIN { printf "%s %s %.1f s, exit %s\n", b, m, z - a, r }' >> "$OUT/starts.txt"
}
: > "$OUT/starts.txt"
builds=(kcsanctl)
[ -x "$OUT/kcsanctl-old" ] && builds+=(kcsanctl-old)
for mode in kprobes breakpoints watch user; do
	for b in "${builds[@]}"; do
		case $mode in
		kprobes) start "$b" $mode --kernel --probe pipe_read -- true ;;
		breakpoints) start "$b" $mode --kernel --sample breakpoints --probe pipe_read -- true ;;
		watch) start "$b" $mode --kernel --watch jiffies_64 -- true ;;
		user) start "$b" $mode -- /bin/true ;;
		esac
	done
done
exit 0
