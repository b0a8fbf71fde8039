#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# KCSAN's noise rules on a stock kernel, each silent (docs/marking.md, "Kernel"):
# boots Debian's kernel in QEMU (tests/vm/kcsan-vm) and runs tests/vm/noise-steps.sh,
# marking from the vmlinux's DWARF (linux-image-$(uname -r)-dbg on the host):
#   - jiffies: TCP's per-segment readers of jiffies and __mod_timer, sampled with
#     code breakpoints (757 kprobes took 66 s to attach and 96 s to detach), around
#     20 s of loopback TCP (tests/vm/workload/kworkload.c net): the jiffies reads are marked
#     (the qualifier count), the probed code ran and set watchpoints, and no report
#     is at jiffies' address.  jiffies ticks every 4 ms, so a 300 us stall at a
#     plain read of it sees a new value about one time in 13: without the rule the
#     reads are reported as races of unknown origin;
#   - the verdict cache: the same sites again take every verdict from the cache,
#     whose file stays on the host (build/vm/kcsand-cache) for the next boot;
#   - seqcount sections: the timekeeper's readers (ktime_get*) and writer
#     (timekeeping_advance) around 20 s of stress-ng's futex, signal, socket pair and
#     io_uring stressors: sites marked in tk_core.seq's sections, the code ran and
#     watched, and no report names them (each tick's update changes what a stalled
#     read sees: without the rule they are reported);
#   - RCU list macros: the dentry cache's hash walks around 15 s of kworkload fs,
#     with the kernel's sources: the loads hlist_bl_for_each_entry_rcu() makes are
#     marked by it (-vv's verdicts), the code ran, and no report names the walks;
# then that no BPF link was left and the guest's kernel log is clean.
#   kernel-noise.sh [--kcsanctl PATH] [--quick]
# PATH: another build's kcsanctl, to see it fail.  --quick: the same checks with
# workloads of 8 s (jiffies, seqcount) and 6 s (rculist) instead of 20, 20 and 15:
# each rule's marking and its positive control (the code ran and watched) still
# fail without the rule; what it drops is the chance that an old build shows the
# noise in its reports.
# Prints "ok NAME" / "FAIL NAME: ..." and "N passed, N failed".
set -u
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$REPO" || exit 1
. "$REPO/tests/vm/suite-lib.sh"
steps="$REPO/tests/vm/noise-steps.sh"
[ "${1:-}" = --kcsanctl ] && { steps="$steps --kcsanctl $2"; shift 2; }
jsecs=20
[ "${1:-}" = --quick ] && { steps="$steps --quick"; jsecs=8; }

[ "$(id -u)" = 0 ] || setup_fail "must run as root (QEMU guest with kprobes)"
[ -x build/kcsanctl ] || setup_fail "build/kcsanctl missing (run make)"
kver=$(sed -n 's/.*linux-image-\([^ ,]*-amd64\).*/\1/p' <<<"$(dpkg-query -W -f='${Depends}' linux-image-amd64 2>/dev/null)" | head -1)
[ -n "$kver" ] || setup_fail "linux-image-amd64 is not installed (tests/vm/kcsan-vm installs it)"
out=$(mkdir -p "$REPO/build/vm" && mktemp -d "$REPO/build/vm/kernel-noise.XXXXXX") ||
	setup_fail "cannot create a directory under build/vm"
# The vmlinux's DWARF (859 MB download) and the kernel's sources (139 MB, 1.3 GB
# unpacked), installed when missing, as kernel-wedge.sh does the first.
if [ ! -r "/usr/lib/debug/boot/vmlinux-$kver" ]; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "linux-image-$kver-dbg" > "$out/apt.log" 2>&1 ||
		setup_fail "cannot install linux-image-$kver-dbg (see $out/apt.log)"
fi
if [ ! -d /usr/src/linux-source-6.1/fs ]; then
	{ DEBIAN_FRONTEND=noninteractive apt-get install -y -qq linux-source-6.1 &&
	  tar -C /usr/src -xaf /usr/src/linux-source-6.1.tar.xz; } >> "$out/apt.log" 2>&1 ||
		setup_fail "cannot install and unpack linux-source-6.1 (see $out/apt.log)"
fi
w=$REPO/build/vm/kworkload
if [ ! -x "$w" ] || [ tests/vm/workload/kworkload.c -nt "$w" ]; then
	gcc -O2 -Wall -pthread tests/vm/workload/kworkload.c -o "$w" || setup_fail "cannot build kworkload"
fi

start=$(date +%s)
KCSAN_VM_PROBE_CMD="$steps" tests/vm/kcsan-vm --out "$out" --keep --timeout 600 --probe none \
	-- "$w" net "$jsecs" > "$out/reports.txt" 2> "$out/harness.err"
rc=$?
echo "     (guest run: $(( $(date +%s) - start )) s, exit status $rc; files in $out)"
[ $rc = 0 ] || [ $rc = 66 ] && ok harness_ran || { fail harness_ran "exit $rc"; tail -5 "$out/harness.err"; }

# (1) jiffies.
J=$out/jiffies.log
jrc=$(awk '$1 == "jiffies" { print $2 }' "$out/steps.rc" 2>/dev/null)
[ "$jrc" = 0 ] || [ "$jrc" = 66 ] && ok jiffies_run_ended ||
	fail jiffies_run_ended "'kcsanctl run' exited ${jrc:-never ran}: $(tail -3 "$J" 2>/dev/null | tr '\n' ';')"
qual=$(sed -nE 's/.* ([0-9]+) qualifier,.*/\1/p' "$J" | head -1)
setups=$(summary_value setup_watchpoints "$J")
hits=$(grep -m1 -oE '^kcsand: [0-9]+ reports?, [0-9]+ sites, [0-9]+ hits' "$J" | grep -oE '[0-9]+ hits' | cut -d' ' -f1)
if [ "${qual:-0}" -ge 1 ] && [ "${hits:-0}" -gt 0 ] && [ "${setups:-0}" -gt 0 ]; then
	ok jiffies_reads_marked
	echo "     $qual sites marked by qualifier; $hits hits, $setups watchpoints set"
else
	fail jiffies_reads_marked "expected >= 1 qualifier-marked site and probed code that ran and watched; got ${qual:-none}, ${hits:-none} hits, ${setups:-none} watchpoints"
fi
addr=$(awk '$3 == "jiffies" { print $1 }' "$out/jiffies.sym" 2>/dev/null)
at=$(grep -ciE "(read|write)[a-z() -]* to 0x${addr:-none} of " "$J")
if [ -n "$addr" ] && [ "$at" = 0 ]; then
	ok jiffies_silent
else
	fail jiffies_silent "expected no access at jiffies (0x${addr:-unknown}) in a report, got $at: $(report_titles "$J")"
fi
report_titles "$J" | tr ';' '\n' | sed '/^$/d; s/^/     /'

# (1b) The verdicts were cached on the host: a second run took them all from there,
# and the file is still there after the guest is gone (the next boot reads it).
C=$out/cached.log
line=$(grep -m1 -E "sites' verdicts from the cache" "$C" 2>/dev/null)
cache=$(sed -nE "s/.* from the cache (.*)$/\1/p" <<< "$line")
if [[ $line =~ ([0-9]+)\ of\ ([0-9]+)\ sites ]] && [ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ] &&
   [ "${BASH_REMATCH[2]}" -gt 0 ] && [ -s "$REPO/build/vm/kcsand-cache/$(basename "${cache:-none}")" ]; then
	ok verdict_cache_kept
	echo "     ${BASH_REMATCH[1]} of ${BASH_REMATCH[2]} verdicts from $(basename "$cache"), kept on the host"
else
	fail verdict_cache_kept "expected every verdict of the second run from the cache, and the file on the host under build/vm/kcsand-cache; got '${line:-no line}'"
fi

# (2) seqcount sections.
Q=$out/seqcount.log
qrc=$(awk '$1 == "seqcount" { print $2 }' "$out/steps.rc" 2>/dev/null)
[ "$qrc" = 0 ] || [ "$qrc" = 66 ] && ok seqcount_run_ended ||
	fail seqcount_run_ended "'kcsanctl run' exited ${qrc:-never ran}: $(tail -3 "$Q" 2>/dev/null | tr '\n' ';')"
acc=$(sed -nE 's/.* ([0-9]+) inline accessor,.*/\1/p' "$Q" | head -1)
sites=$(grep -m1 -oE '^kcsand: \[kernel\]: [0-9]+ functions, [0-9]+ sites' "$Q" | grep -oE '[0-9]+ sites' | cut -d' ' -f1)
setups=$(summary_value setup_watchpoints "$Q")
qhits=$(grep -m1 -oE '^kcsand: [0-9]+ reports?, [0-9]+ sites, [0-9]+ hits' "$Q" | grep -oE '[0-9]+ hits' | cut -d' ' -f1)
if [ "${acc:-0}" -ge 1 ] && [ "${qhits:-0}" -gt 0 ] && [ "${setups:-0}" -gt 0 ]; then
	ok seqcount_sections_marked
	echo "     $acc of ${sites:-?} sites marked as inline accessors (seqcount sections); $qhits hits, $setups watchpoints set"
else
	fail seqcount_sections_marked "expected >= 1 site marked in a seqcount section and probed code that ran and watched; got ${acc:-none}, ${qhits:-none} hits, ${setups:-none} watchpoints"
fi
tk=$(grep -E '^BUG: KCSAN: .*(ktime_get|timekeeping_advance)' "$Q" | sort | uniq -c | tr '\n' ';')
[ -z "$tk" ] && ok seqcount_silent || fail seqcount_silent "reports in the timekeeper's sections: $tk"
report_titles "$Q" | tr ';' '\n' | sed '/^$/d; s/^/     /'
grep -m1 -E 'stress-ng: (info|metrc).*(successful|passed|skipped)' "$Q" | sed 's/^/     /'

# (3) RCU list macros: the loads of hlist_bl_for_each_entry_rcu()'s own line are marked
# by it, and the walks are not reported.
R=$out/rculist.log
rrc=$(awk '$1 == "rculist" { print $2 }' "$out/steps.rc" 2>/dev/null)
[ "$rrc" = 0 ] || [ "$rrc" = 66 ] && ok rculist_run_ended ||
	fail rculist_run_ended "'kcsanctl run' exited ${rrc:-never ran}: $(tail -3 "$R" 2>/dev/null | tr '\n' ';')"
macro=$(grep -cE '^kcsand: mark: __d_lookup(_rcu)?\+0x[0-9a-f]+ .*dcache\.c:[0-9]+:[0-9]+: source macro: hlist_bl_for_each_entry_rcu$' "$R")
rhits=$(grep -m1 -oE '^kcsand: [0-9]+ reports?, [0-9]+ sites, [0-9]+ hits' "$R" | grep -oE '[0-9]+ hits' | cut -d' ' -f1)
if [ "${macro:-0}" -ge 2 ] && [ "${rhits:-0}" -gt 0 ]; then
	ok rculist_loads_marked
	echo "     $macro sites marked by hlist_bl_for_each_entry_rcu; $rhits hits"
else
	fail rculist_loads_marked "expected the hash walks' loads marked as hlist_bl_for_each_entry_rcu and the code run; got ${macro:-0} sites, ${rhits:-none} hits"
fi
walk=$(grep -E '^BUG: KCSAN: .*__d_lookup' "$R" | sort | uniq -c | tr '\n' ';')
[ -z "$walk" ] && ok rculist_silent || fail rculist_silent "reports in the hash walks: $walk"

no_bpf_link_left "$out"
no_kernel_warning "$out"
finish_suite "$out"
