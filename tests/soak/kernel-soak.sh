#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The kernel soak (issue 10): kcsanctl run --kernel with a kprobe on every memory
# access of the VFS, pipe and scheduler wake-up functions (500 sites or more) for
# SECONDS (default 600) of the mixed workload (tests/vm/workload/kworkload.c: files,
# pipes, loopback sockets, fork), in Debian's stock kernel under QEMU
# (tests/vm/kcsan-vm).  Checks:
#   - the run ended by itself with its summary (exit 0 or 66), >= 500 sites attached;
#   - the stall budget held: the stalls, at most setup_watchpoints x udelay_task,
#     stay within stall_budget_us per CPU-second of the run;
#   - no kprobe left, and the guest's kernel log has no soft lockup, RCU stall,
#     hung task, BPF warning or BUG other than KCSAN-format reports;
#   - the workload's throughput, and every distinct title, are printed.
# Usage: tests/soak/kernel-soak.sh [SECONDS]      (root; the guest run takes SECONDS
# plus attach and detach: about 3 minutes more for 500 kprobes under TCG)
# Results in tests/lib.sh's format ("ok   NAME", "FAIL NAME: WHY", "N passed, N failed");
# files are kept in build/vm/kernel-soak.* when a check failed or KCSAND_VM_KEEP is set.
set -u
SECS=${1:-600}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$REPO" || exit 1
. "$REPO/tests/vm/suite-lib.sh"

[ "$(id -u)" = 0 ] || setup_fail "must run as root (QEMU guest with kprobes)"
[ -x build/kcsanctl ] || setup_fail "build/kcsanctl missing (run make)"
out=$(mkdir -p build/vm && mktemp -d "$REPO/build/vm/kernel-soak.XXXXXX") ||
	setup_fail "cannot create a directory under build/vm"
gcc -O2 -Wall -pthread tests/vm/workload/kworkload.c -o "$out/kworkload" > "$out/build.log" 2>&1 ||
	setup_fail "cannot build kworkload (see $out/build.log)"
# A copy: a rebuild on the host during the run must not change what the guest runs.
cp build/kcsanctl "$out/kcsanctl"

# VFS, pipe and the scheduler's wake-up path (ttwu), with kprobes on every site.
probes=(--probe 'vfs_*' --probe 'pipe_*' --probe '*_pipe_*' --probe 'try_to_wake_up'
	--probe 'ttwu_*' --probe '__wake_up*' --probe 'wake_up_*' --probe 'generic_file_*')
start=$(date +%s)
KCSAN_VM_PROBE_CMD="$out/kcsanctl run --kernel --output - -v --sample kprobes" \
tests/vm/kcsan-vm --out "$out" --keep --timeout $((SECS + 900)) --duration "$SECS" "${probes[@]}" \
	-- "$out/kworkload" mixed "$SECS" > "$out/reports.txt" 2> "$out/harness.err"
rc=$?
echo "     (guest run: $(( $(date +%s) - start )) s, exit status $rc; files in $out)"
[[ $rc =~ ^(0|66)$ ]] && ok harness_ran || { fail harness_ran "expected 0 or 66, got $rc"; tail -5 "$out/harness.err" | sed 's/^/    /'; }

E=$out/probe.err
sum=$(grep -m1 '^kcsand: [0-9]* reports*, ' "$E" 2>/dev/null)
sites=$(grep -oE '[0-9]+ sites,' <<< "$sum" | grep -oE '[0-9]+')
if [ -n "$sum" ] && [ "$(cat "$out/probe.rc" 2>/dev/null)" != "" ] &&
   [[ $(cat "$out/probe.rc") =~ ^(0|66)$ ]]; then ok run_ended_with_summary
else fail run_ended_with_summary "probe.rc $(cat "$out/probe.rc" 2>/dev/null), no summary: $(tail -3 "$E" 2>/dev/null | tr '\n' ';')"; fi
[ "${sites:-0}" -ge 500 ] && ok at_least_500_sites || fail at_least_500_sites "expected >= 500 sites, got ${sites:-none}"
echo "     $(grep -E '^kcsand: decoded|refused|blacklist' "$E" | tr '\n' ' ')"

# The stall budget: each watchpoint stalls at most udelay_task (80 µs), so the stalls
# were at most setup x 80 µs; the budget is 500,000 µs per CPU-second.
setup=$(summary_value setup_watchpoints "$E") exhausted=$(summary_value stall_budget_exhausted "$E")
read -r t0 t1 < "$out/probe-uptime" 2>/dev/null
run_s=$(awk -v a="${t0:-0}" -v b="${t1:-0}" 'BEGIN { printf "%d", b - a }')
if [ -n "$setup" ] && awk -v s="$setup" -v t="$run_s" 'BEGIN { exit !(s * 80 <= 500000 * 2 * t) }'; then
	ok stall_budget_honoured
	echo "     $setup watchpoints (<= $(( setup * 80 / 1000 )) ms stalled) over ${run_s} s on 2 CPUs; stall_budget_exhausted $exhausted"
else
	fail stall_budget_honoured "setup_watchpoints ${setup:-none} x 80 µs over ${run_s:-?} s on 2 CPUs exceeds 500 ms per CPU-second"
fi
no_kprobe_left "$out"
no_kernel_warning "$out"
if grep -qiE 'bpf.*(warn|bug)|WARNING: .*bpf' "$out/dmesg.txt" 2>/dev/null; then
	fail no_bpf_warning "$(grep -iE 'bpf.*(warn|bug)' "$out/dmesg.txt" | head -3 | tr '\n' ';')"
else ok no_bpf_warning; fi
grep '^kworkload:' "$out/reports.txt" "$out/probe.out" 2>/dev/null | sed 's/^[^:]*://; s/^/     /'
echo "     summary: $sum"
grep -h '^BUG: KCSAN:' "$out/probe.out" 2>/dev/null | sort | uniq -c | sort -rn | sed 's/^/     /'

[ $failed = 0 ] && [ -z "${KCSAND_VM_KEEP:-}" ] && rm -rf "$out"
finish
