#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# KCSAN's noise rules on a stock kernel, each silent (docs/marking.md, "Kernel"):
# boots Debian's kernel in QEMU (tests/vm/kcsan-vm) and runs tests/vm/noise-steps.sh,
# marking from the vmlinux's DWARF (linux-image-$(uname -r)-dbg on the host) and the
# kernel's sources, in one run of code-breakpoint sampling over the three rules' code
# (-vv: each site's verdict and first check) with their three workloads at once:
#   - jiffies: TCP's per-segment readers of jiffies and __mod_timer, around loopback
#     TCP (tests/vm/workload/kworkload.c net): the jiffies reads are marked by the
#     qualifier rule (volatile jiffies), the probed code ran and was checked, and no
#     report is at jiffies' address.  jiffies ticks every 4 ms, so a 300 us stall at a
#     plain read of it sees a new value about one time in 13: without the rule the
#     reads are reported as races of unknown origin;
#   - seqcount sections: the timekeeper's readers (ktime_get*) and writer
#     (timekeeping_advance) around stress-ng's futex, signal, socket pair and
#     io_uring stressors: sites marked by the seqcount rule, the code ran and was
#     checked, and no report names them (each tick's update changes what a stalled
#     read sees: without the rule they are reported);
#   - RCU list macros: the dentry cache's hash walks around kworkload fs: the loads
#     hlist_bl_for_each_entry_rcu() makes are marked by it, the code ran and was
#     checked, and no report names the walks;
#   - the verdict cache: the same sites again (--source-dir) take every verdict from
#     the source tree's cache, whose file stays on the host (build/vm/kcsand-cache)
#     for the next boot;
# then that the run set watchpoints, no BPF link was left and the guest's kernel log
# is clean.
#   kernel-noise.sh [--kcsanctl PATH] [--quick]
# PATH: another build's kcsanctl, to see it fail.  --quick: the same checks with
# workloads of 12 s instead of 20: each rule's marking and its positive control (the
# code ran and was checked) still fail without the rule; what it drops is the chance
# that an old build shows the noise in its reports.
# Prints "ok NAME" / "FAIL NAME: ..." and "N passed, N failed".
set -u
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$REPO" || exit 1
. "$REPO/tests/vm/suite-lib.sh"
steps="$REPO/tests/vm/noise-steps.sh"
[ "${1:-}" = --kcsanctl ] && { steps="$steps --kcsanctl $2"; shift 2; }
jsecs=20
[ "${1:-}" = --quick ] && { steps="$steps --quick"; jsecs=12; }

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
echo "     (steps, guest seconds: $(awk '{ printf "%s%s %s", (NR > 1 ? ", " : ""), $1, $3 }' "$out/steps.rc" 2>/dev/null))"

L=$out/rules.log
rrc=$(awk '$1 == "rules" { print $2 }' "$out/steps.rc" 2>/dev/null)
[ "$rrc" = 0 ] || [ "$rrc" = 66 ] && ok rules_run_ended ||
	fail rules_run_ended "'kcsanctl run' exited ${rrc:-never ran}: $(tail -3 "$L" 2>/dev/null | tr '\n' ';')"
setups=$(summary_value setup_watchpoints "$L")
[ "${setups:-0}" -gt 0 ] && ok rules_run_watched ||
	fail rules_run_watched "expected watchpoints set by the sampled sites, got ${setups:-none}"

# marked RE REASON DETAIL_RE: the sites of the functions RE matches whose -vv verdict is
# REASON, with a detail DETAIL_RE matches.
marked() {
	grep -cE "^kcsand: mark: ($1)\+0x[0-9a-f]+ \(0x[0-9a-f]+\) [^ ]+: (data_race, )?$2: ($3)\$" "$L"
}
# checked RE: how many sites of the functions RE matches were checked while sampled
# (-vv: "0xADDR checked for the first time"; -v: "site [kernel] 0xADDR FUNC+0xOFF").
checked() {
	awk -v re="^($1)\\\\+0x" '
		/^kcsand: site \[kernel\] 0x[0-9a-f]+ / { if ($5 ~ re) fn[$4] = 1 }
		/^kcsand: breakpoints: 0x[0-9a-f]+ checked for the first time/ { if ($3 in fn) n++ }
		END { print n + 0 }' "$L"
}

# (1) jiffies.
JF='tcp_ack|tcp_write_xmit|cubictcp_cong_avoid|__mod_timer'
qual=$(marked "$JF" qualifier 'volatile jiffies') jchk=$(checked "$JF")
if [ "$qual" -ge 1 ] && [ "$jchk" -gt 0 ]; then
	ok jiffies_reads_marked
	echo "     $qual sites marked by qualifier (volatile jiffies); $jchk sites checked"
else
	fail jiffies_reads_marked "expected >= 1 site marked as a read of volatile jiffies and probed code that ran and was checked; got $qual, $jchk sites checked"
fi
addr=$(awk '$3 == "jiffies" { print $1 }' "$out/jiffies.sym" 2>/dev/null)
at=$(grep -ciE "(read|write)[a-z() -]* to 0x${addr:-none} of " "$L")
if [ -n "$addr" ] && [ "$at" = 0 ]; then
	ok jiffies_silent
else
	fail jiffies_silent "expected no access at jiffies (0x${addr:-unknown}) in a report, got $at: $(report_titles "$L")"
fi
report_titles "$L" | tr ';' '\n' | sed '/^$/d; s/^/     /'

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

# (2) seqcount sections: sites the seqcount rule marked (its detail, the section's
# helper: no accessor of the inline accessor rule's table has "seq" in its name).
TK='ktime_get[a-z0-9_]*|timekeeping_advance'
seq=$(marked "$TK" 'inline accessor' '[a-z_]*seq[a-z_]*') qchk=$(checked "$TK")
if [ "$seq" -ge 1 ] && [ "$qchk" -gt 0 ]; then
	ok seqcount_sections_marked
	echo "     $seq sites marked in the timekeeper's seqcount sections; $qchk sites checked"
else
	fail seqcount_sections_marked "expected >= 1 site marked in a seqcount section and probed code that ran and was checked; got $seq, $qchk sites checked"
fi
tk=$(grep -E '^BUG: KCSAN: .*(ktime_get|timekeeping_advance)' "$L" | sort | uniq -c | tr '\n' ';')
[ -z "$tk" ] && ok seqcount_silent || fail seqcount_silent "reports in the timekeeper's sections: $tk"
grep -m1 -E 'stress-ng: (info|metrc).*(successful|passed|skipped)' "$L" | sed 's/^/     /'

# (3) RCU list macros: the loads of hlist_bl_for_each_entry_rcu()'s own line are marked
# by it, and the walks are not reported.
DL='__d_lookup_rcu|__d_lookup'
macro=$(grep -cE '^kcsand: mark: __d_lookup(_rcu)?\+0x[0-9a-f]+ .*dcache\.c:[0-9]+:[0-9]+: source macro: hlist_bl_for_each_entry_rcu$' "$L")
dchk=$(checked "$DL")
if [ "${macro:-0}" -ge 2 ] && [ "$dchk" -gt 0 ]; then
	ok rculist_loads_marked
	echo "     $macro sites marked by hlist_bl_for_each_entry_rcu; $dchk sites checked"
else
	fail rculist_loads_marked "expected the hash walks' loads marked as hlist_bl_for_each_entry_rcu and the code run and checked; got ${macro:-0} sites, $dchk sites checked"
fi
walk=$(grep -E '^BUG: KCSAN: .*__d_lookup' "$L" | sort | uniq -c | tr '\n' ';')
[ -z "$walk" ] && ok rculist_silent || fail rculist_silent "reports in the hash walks: $walk"

no_bpf_link_left "$out"
no_kernel_warning "$out"
finish_suite "$out"
