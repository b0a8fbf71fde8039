#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Guest side of bench/kernel/p9-kernel-fs.sh, run by tests/vm/kcsan-vm as its probe
# command: kcsan-vm's --probe SPECs and --duration S reach it as arguments.
#   base   the mixed workload alone for 60 s: its throughput without kcsand;
#   run    kcsanctl run --kernel (code breakpoints, the default at this scale) on the
#          SPECs, around the mixed workload for S seconds: reports on stdout, stderr
#          with -v in run.err.
set -u
OUT=${KCSAN_VM_OUT:?run by tests/vm/kcsan-vm}
# The host side copied kcsanctl into $OUT: that is the build here.
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
bench_init p9 "$OUT"
secs=600
probe_args "$@"
# The marking verdicts outlive the guest (docs/marking.md, "The verdict cache"):
# the host side copies build/vm/kcache in and out of $OUT, the guest's one
# writable share, so only a kernel's first run pays minutes of DWARF over 9p.
export KCSAND_CACHE_DIR=$OUT/kcache
mkdir -p "$KCSAND_CACHE_DIR"
"$OUT/kworkload" mixed 60 > "$OUT/base.txt" 2>&1
"${KCSANCTL_RUN[@]}" --kernel --output - -v ${P9_EXTRA:-} "${args[@]}" --duration "$secs" -- \
	"$OUT/kworkload" mixed "$secs" 2> "$OUT/run.err"
