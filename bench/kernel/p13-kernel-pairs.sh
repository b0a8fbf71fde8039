#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# P13: how many kernel races are reported as pairs, with both stacks, and how soon
# (issue 21, items 1 and 5).  In Debian's stock 6.1 kernel under QEMU
# (tests/vm/kcsan-vm), one boot with the module tests/kmod/kcsan_pairs: for each
# mode, scenario and try, kcsanctl run --kernel attaches, the scenario's two threads
# run until the first pair a data breakpoint caught (kprobes and bp0: the first
# pair), or SECONDS (tests/vm/pairs-steps.sh).  Modes:
#   bp     code-breakpoint sampling of the module's sites, data breakpoints in the stalls
#   bp0    the same without them (--param pair_wait_us=0)
#   kp     a kprobe on every site of the module (kcsanctl's defaults)
#   scale  bp with src:fs/ src:mm/ src:kernel/ probed too (the vmlinux's DWARF,
#          linux-image-<ver>-dbg; --no-marking, whose cold read over 9p takes minutes)
# Scenarios: 1, 2, 3 a writer at 1, 10, 100 Hz against a 1 kHz reader; 4 a writer of
# the same value; 5 write-write; 6 WRITE_ONCE against a plain read.
# Prints per mode and scenario: runs with a pair (both stacks), with a pair a data
# breakpoint caught, with any report of the race (one stack included), the median
# seconds to each, and the data breakpoints' figures (requests, armed in time, mean
# arm latency, mean re-target, timeouts) summed over the runs; then every report of
# the module's races by kind: pairs, one stack (unknown origin), later writes.
#
# Usage: bench/kernel/p13-kernel-pairs.sh [BUILD_DIR [TRIES [SECONDS [MODES [SCENARIOS]]]]]
#   (root; defaults 5, 60, "bp bp0 kp", "1 2 3 4 5 6"; files kept in build/vm/p13.*)
# P13_KCSANCTL names another kcsanctl (an older build, to compare); P13_ACCEL another
# QEMU accelerator (kcsan-vm --accel: tcg, the default, is multi-threaded; tcg-single).
# The host's load average is read once a minute into load.txt, and its range printed
# with the table: a table without its load cannot be compared with another.
# bench/kernel/p13-kernel-pairs.sh --report DIR "MODES" "SCENARIOS" prints the table of a kept run.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
if [ "${1:-}" = --report ]; then
	out=$(realpath "$2") MODES=$3 SCENARIOS=$4
	bench_init p13
else
bench_init p13 "${1:-}" root
TRIES=${2:-5} SECS=${3:-60} MODES=${4:-bp bp0 kp} SCENARIOS=${5:-1 2 3 4 5 6}
KVER=$(dpkg-query -W -f='${Depends}' linux-image-amd64 | sed -n 's/.*linux-image-\([^ ,]*-amd64\).*/\1/p')
DBG=/usr/lib/debug/boot/vmlinux-$KVER
if [[ " $MODES " == *" scale "* ]] && [ ! -r "$DBG" ]; then
	echo "p13: $DBG missing: apt-get install linux-image-$KVER-dbg" >&2
	exit 2
fi
out=$(mkdir -p build/vm && mktemp -d "$REPO/build/vm/p13.XXXXXX") || exit 2
cp "${P13_KCSANCTL:-$B/kcsanctl}" "$out/kcsanctl" || exit 2
ko=$REPO/build/vm/kmod-$KVER/kcsan_pairs/kcsan_pairs.ko
nruns=$(( TRIES * $(wc -w <<< "$MODES") * $(wc -w <<< "$SCENARIOS") ))
start=$(date +%s)
while :; do cut -d' ' -f1 /proc/loadavg; sleep 60; done > "$out/load.txt" &
loadpid=$!
# 180 s a run beyond its SECONDS: at host load 18, a scale run took 5 minutes (its start
# decodes 130,000 sites in the guest) and a kp run 2 to 2.5; 60 s ran out after 20 of 24.
KCSAN_VM_PROBE_CMD="$REPO/tests/vm/pairs-steps.sh $out/kcsanctl $ko $TRIES $SECS ${MODES// /,} ${SCENARIOS// /,} $DBG" \
tests/vm/kcsan-vm --module tests/kmod/kcsan_pairs --out "$out" --keep --accel "${P13_ACCEL:-tcg}" \
	--timeout $(( 300 + nruns * (SECS + 180) )) > "$out/reports.txt" 2> "$out/harness.err"
rc=$?
kill "$loadpid"
echo "p13: guest run $(( $(date +%s) - start )) s for $nruns runs, kcsan-vm exit $rc, files in $out"
fi
[ -s "$out/results.tsv" ] || { tail -5 "$out/harness.err"; exit 1; }
echo "p13: $(grep -c . "$out/results.tsv") runs; host load (1 min, once a minute):" \
	"$(sort -n "$out/load.txt" 2>/dev/null | awk '{ v[NR] = $1 }
		END { if (NR) print "min " v[1] ", median " v[int((NR + 1) / 2)] ", max " v[NR]; else print "-" }')"

# The sum of a counter over the runs of MODE and SCENARIO.
counter() {
	cat "$out/$1"-s"$2"-t*.log.stats 2>/dev/null | grep -oE "(^| )$3: [0-9]+" |
		awk '{ s += $2 } END { print s + 0 }'
}
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "-" }'; }
printf '%-6s %-3s %-9s %-9s %-9s %-8s %-8s %-8s %s\n' mode sc pairs db_pairs any t_pair t_db t_any \
	"data breakpoints: requests armed arm_us retarget_us timeouts"
for mode in $MODES; do
	for s in $SCENARIOS; do
		R=$(awk -v m="$mode" -v s="$s" '$1 == m && $2 == s' "$out/results.tsv")
		n=$(grep -c . <<< "$R")
		[ -n "$R" ] || continue	# not run: the guest's time ran out first
		col() { awk -v c="$1" '$c != "-"' <<< "$R" | grep -c .; }
		med() { awk -v c="$1" '$c != "-" { print $c }' <<< "$R" | median; }
		req=$(counter "$mode" "$s" pair_requests) armed=$(counter "$mode" "$s" pair_armed)
		ns=$(counter "$mode" "$s" pair_arm_ns) rt=$(counter "$mode" "$s" pair_retarget_us)
		# Runs whose log has the pair itself ("later write in B after data-race in A" is none).
		pairs=$(grep -lE '^BUG: KCSAN: data-race in kcsan_pairs_[a-z_]+ / kcsan_pairs_' \
			"$out/$mode"-s"$s"-t*.log 2>/dev/null | grep -c .)
		printf '%-6s %-3s %-9s %-9s %-9s %-8s %-8s %-8s %s %s %s %s %s\n' "$mode" "$s" \
			"$pairs/$n" "$(col 6)/$n" "$(col 7)/$n" "$(med 5)" "$(med 6)" "$(med 7)" \
			"$req" "$armed" "$(( armed ? ns / armed / 1000 : 0 ))" "$(( rt / n ))" \
			"$(counter "$mode" "$s" pair_timeouts)"
	done
done
# The share of the module's races reported as pairs: every report of the runs, by kind.
echo "== reports of the module's races, by kind (the share reported as pairs, both stacks)"
for mode in $MODES; do
	T=$(cat "$out/$mode"-s*-t*.log 2>/dev/null | grep '^BUG: KCSAN: .*kcsan_pairs_')
	all=$(grep -c . <<< "$T") pairs=$(grep -cE 'data-race in kcsan_pairs_[a-z_]+ / kcsan_pairs_' <<< "$T")
	later=$(grep -c 'later write in' <<< "$T")
	echo "$mode: $all reports: $pairs pairs ($(( all ? 100 * pairs / all : 0 ))%)," \
		"$(( all - pairs - later )) one stack (unknown origin), $later later writes (escalation)"
done
echo "== titles (all runs)"
grep -h '^BUG: KCSAN:' "$out"/*-s*-t*.log | sort | uniq -c | sort -rn | head -20
echo "== guest kernel log"
grep -E 'soft lockup|rcu: INFO|self-detected stall|hung_task|WARNING:|BUG:' "$out/dmesg.txt" 2>/dev/null |
	grep -v 'BUG: KCSAN' | head -5
