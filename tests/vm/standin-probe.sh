#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# A stand-in for the kernel-mode engine (`kcsanctl run --kernel`) with the same
# command line, so tests/vm/kcsan-vm runs it as $KCSAN_VM_PROBE_CMD: the
# harness's own tests use it to check the guest's kprobes without kcsand.
#
#   standin-probe.sh [--kernel] --probe [MODULE:]FUNCTION ... [--duration S] -- COMMAND...
#
# Places one kprobe per --probe at the entry of FUNCTION through the kernel's
# own kprobe_events (tracefs), runs COMMAND, removes the kprobes once COMMAND
# has ended, and prints each probe's hit count from kprobe_profile and the
# misses (hits the kernel skipped, e.g. a kprobe hit inside another's
# handler), and the number of kprobes still registered (/sys/kernel/debug/kprobes/list), which
# must be 0.  It reports no races.  Exit status: COMMAND's, or 2 when a probe
# could not be placed or removed.

set -uo pipefail
T=/sys/kernel/tracing
KPLIST=/sys/kernel/debug/kprobes/list
GROUP=kcsan_vm
probes=() duration=""

die() { echo "standin-probe: $*" >&2; exit 2; }

while [ $# -gt 0 ]; do
	case $1 in
	--kernel) shift ;;
	--probe) [ $# -ge 2 ] || die "--probe needs a SPEC"; probes+=("$2"); shift 2 ;;
	--duration) [ $# -ge 2 ] || die "--duration needs seconds"; duration=$2; shift 2 ;;
	--) shift; break ;;
	*) die "unknown option '$1'" ;;
	esac
done
[ ${#probes[@]} -gt 0 ] || die "no --probe given"
[ $# -gt 0 ] || set -- sleep "${duration:-1}"
[ -w $T/kprobe_events ] || die "$T/kprobe_events: not writable (tracefs not mounted or no CONFIG_KPROBE_EVENTS)"

detach() {
	echo 0 > $T/events/$GROUP/enable 2>/dev/null
	local i
	for i in "${!probes[@]}"; do
		echo "-:$GROUP/p$i" >> $T/kprobe_events 2>/dev/null
	done
}

for i in "${!probes[@]}"; do
	if ! echo "p:$GROUP/p$i ${probes[$i]}" >> $T/kprobe_events; then
		detach
		die "cannot place a kprobe on '${probes[$i]}'"
	fi
done
echo 1 > $T/events/$GROUP/enable || { detach; die "cannot enable the kprobes"; }
echo "standin-probe: $(grep -c . $KPLIST) kprobe(s) attached" >&2

if [ -n "$duration" ]; then
	timeout "$duration" "$@"
else
	"$@"
fi
rc=$?

echo 0 > $T/events/$GROUP/enable
declare -A hits misses
while read -r name nhit nmiss _; do
	hits[$name]=$nhit misses[$name]=$nmiss
done < $T/kprobe_profile
detach
for i in "${!probes[@]}"; do
	echo "standin-probe: kprobe ${probes[$i]} hits ${hits[p$i]:-?} missed ${misses[p$i]:-?}"
done
left=$(grep -c . $KPLIST)
echo "standin-probe: kprobes left after detach: $left"
[ "$left" = 0 ] || { cat $KPLIST >&2; exit 2; }
exit $rc
