#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# P7: what taking a kprobe out of the site sampler's armed set costs in kernel mode,
# measured in the test guest (tests/vm/kcsan-vm: Debian's stock kernel under QEMU):
# unregistering the kprobe, disabling its perf event, or leaving it attached and
# testing an armed bit in the BPF program (bench/programs/kdisarm.c says what each line is).
# Usage: bench/kernel/p7-kernel-disarm.sh [BUILD_DIR [CALLS]]    (root; make bench-programs)
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
bench_init p7 "${1:-}" root
CALLS=${2:-20000}
bench_need "$B/bench/kdisarm"
out=$(vm_out p7)
trap 'rm -rf "$out"' EXIT

echo "P7: disarming a kprobe in the TCG guest ($CALLS getppid(2) calls per figure, best of 5 rounds)"
KCSAN_VM_PROBE_CMD="bash -c '$B/bench/kdisarm $CALLS' kdisarm" \
	tests/vm/kcsan-vm --out "$out/run" --timeout 300 --probe none -- true > "$out/out.txt" 2> "$out/err.txt" ||
	{ echo "p7: the guest run failed:" >&2; tail -5 "$out/err.txt" >&2; tail -5 "$out/run/probe.err" >&2 2>/dev/null; exit 1; }
sed 's/^kdisarm: /  /' "$out/out.txt"
