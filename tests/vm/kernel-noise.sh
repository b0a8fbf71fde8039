#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# KCSAN's noise rules on a stock kernel, each silent (docs/marking.md, "Kernel"), alone:
# boots Debian's kernel in QEMU (tests/vm/kcsan-vm) and runs tests/vm/noise-steps.sh,
# marking from the vmlinux's DWARF (linux-image-$(uname -r)-dbg on the host) and the
# kernel's sources.  The run and its checks are tests/vm/noise-lib.sh's (make check runs
# them in tests/vm/kernel-safety.sh's cache step): jiffies, seqcount sections and RCU
# list macros each marked by its rule, their code run and checked (pinned: --pin), and
# not reported; the verdict cache kept on the host; then that the run set watchpoints,
# no BPF link was left and the guest's kernel log is clean.
#   kernel-noise.sh [--kcsanctl PATH] [--quick]
# PATH: another build's kcsanctl, to see it fail.  --quick: workloads of 8 s instead of
# 20: each rule's marking and its positive control still fail without the rule; what it
# drops is the chance that an old build shows the noise in its reports.
# Results in tests/lib.sh's format ("ok   NAME", "FAIL NAME: WHY", "N passed, N failed").
set -u
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$REPO" || exit 1
. "$REPO/tests/vm/suite-lib.sh"
. "$REPO/tests/vm/noise-lib.sh"
steps="$REPO/tests/vm/noise-steps.sh"
[ "${1:-}" = --kcsanctl ] && { steps="$steps --kcsanctl $2"; shift 2; }
[ "${1:-}" = --quick ] && steps="$steps --quick"

[ "$(id -u)" = 0 ] || setup_fail "must run as root (QEMU guest with kprobes)"
[ -x build/kcsanctl ] || setup_fail "build/kcsanctl missing (run make)"
out=$(mkdir -p "$REPO/build/vm" && mktemp -d "$REPO/build/vm/kernel-noise.XXXXXX") ||
	setup_fail "cannot create a directory under build/vm"
vm_prepare_lock		# apt-get and build/vm/kworkload: kernel-scale.sh's too, in the other queue
noise_setup "$out"
vm_prepare_unlock

vm_start=$(date +%s)
KCSAN_VM_PROBE_CMD="$steps" tests/vm/kcsan-vm --out "$out" --keep --timeout 600 --probe none \
	-- true > "$out/reports.txt" 2> "$out/harness.err"
rc=$?
guest_ran $rc
[ $rc = 0 ] || [ $rc = 66 ] && ok harness_ran || { fail harness_ran "exit $rc"; tail -5 "$out/harness.err"; }

L=$out/rules.log
rrc=$(step_status rules)
[ "$rrc" = 0 ] || [ "$rrc" = 66 ] && ok rules_run_ended ||
	fail rules_run_ended "'kcsanctl run' exited ${rrc:-never ran}: $(tail -3 "$L" 2>/dev/null | tr '\n' ';')"
setups=$(summary_value setup_watchpoints "$L")
[ "${setups:-0}" -gt 0 ] && ok rules_run_watched ||
	fail rules_run_watched "expected watchpoints set by the sampled sites, got ${setups:-none}"
noise_checks "$L" "$out/cached.log" "$out/jiffies.sym"

no_bpf_link_left "$out"
no_kernel_warning "$out"
finish_suite "$out"
