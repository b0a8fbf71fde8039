#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Kernel targets in the kcsand service, for real: boots Debian's stock kernel in QEMU
# (tests/vm/kcsan-vm) with the racy module tests/kmod/kcsan_race loaded, and runs
# tests/vm/daemon-kernel-guest.sh there as the probe command: kcsand with a
# configuration whose kernel target is module:kcsan_race minus the hidden writer,
# steered with kcsanctl (probe list, filter add, set, stats, probe add/remove, SIGHUP,
# SIGTERM), each step checked by its effect.  Then, from the host: no kprobe was left
# in the guest and its kernel log has no lockup, stall or other BUG.
# Results in tests/lib.sh's format ("ok   NAME", "FAIL NAME: WHY", "N passed, N failed"),
# the guest's own prefixed with "guest: ".
set -u
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$REPO"
. "$REPO/tests/vm/suite-lib.sh"
vm_suite_start daemon-kernel build/kcsand build/kcsanctl

export KCSAN_VM_PROBE_CMD="$REPO/tests/vm/daemon-kernel-guest.sh"
# race_thread_fn runs every scenario's loop: probing it only slows the rounds down.
tests/vm/kcsan-vm --module tests/kmod/kcsan_race --out "$out" --keep --timeout 420 \
	--probe module:kcsan_race --probe '!kcsan_race_hidden_writer' --probe '!race_thread_fn' \
	-- true > "$out/guest.txt" 2> "$out/harness.err"
rc=$?
guest_ran $rc

if [ $rc = 0 ] || [ $rc = 66 ]; then ok harness_ran
else fail harness_ran "exit status $rc: $(tail -3 "$out/harness.err" | tr '\n' ';')"; fi
# The guest's own checks.
while IFS= read -r line; do
	case $line in
	"ok "*) ok "guest: ${line#ok }" ;;
	"FAIL "*) n=${line#FAIL }; fail "guest: ${n%%:*}" "${n#*: }" ;;
	"     ("*) echo "$line" ;;
	esac
done < "$out/guest.txt"
if grep -qE '^[0-9]+ passed, [0-9]+ failed$' "$out/guest.txt"; then ok guest_script_completed
else fail guest_script_completed "no summary line from the guest: $(tail -3 "$out/probe.err" 2>/dev/null | tr '\n' ';')"; fi

no_kprobe_left "$out"
no_kernel_warning "$out"
finish_suite "$out"
