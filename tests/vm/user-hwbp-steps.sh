#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Guest side of tests/vm/user-hwbp.sh, run by tests/vm/kcsan-vm as its probe
# command (its arguments are ignored): the user-mode scenarios that need debug
# registers which trap (needs=hwbp in tests/scenarios/*.c), under the guest's
# kernel, whose emulated debug registers do.  Writes to $KCSAN_VM_OUT:
#   hw_traps.txt    build/tests/tools/hw_traps's verdict and exit status here
#   scenarios.txt   tests/run-scenarios.sh's output, scenarios.rc its status
#   bpf-after.txt   the BPF links left afterwards (none should be)
set -u
OUT=${KCSAN_VM_OUT:?run by tests/vm/kcsan-vm}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$REPO" || exit 2
# bash's process substitution reads /dev/fd/N, which the guest's devtmpfs lacks.
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
{ build/tests/tools/hw_traps; echo "exit $?"; } > "$OUT/hw_traps.txt" 2>&1
KCSAND_TEST_NEEDS=hwbp KCSAND_TEST_TIMEOUT=${KCSAND_VM_CASE_TIMEOUT:-180} \
	tests/run-scenarios.sh build > "$OUT/scenarios.txt" 2>&1
echo $? > "$OUT/scenarios.rc"
bpftool link list > "$OUT/bpf-after.txt" 2>&1
exit 0
