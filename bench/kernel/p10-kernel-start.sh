#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# P10: how long kernel mode takes to start on a large site set (issue 13), in
# Debian's stock 6.1 kernel under QEMU (tests/vm/kcsan-vm), one boot, three runs of
# kcsanctl run --kernel -v --duration 5 (guest side: bench/kernel/p10-kernel-start-steps.sh):
#   cold   src:fs/ with the vmlinux's DWARF and an empty marking cache;
#   warm   the same again: the verdicts from the cache (docs/marking.md);
#   big    src:fs/ src:mm/ src:kernel/ src:net/ with --no-marking: the decode of
#          100,000 sites or more from /proc/kcore, and code breakpoints over them.
# Prints each run's stage times (site sets, decode, marking, attach), its cache line,
# and whether the warm run's verdicts are the cold run's, site for site.
# Usage: bench/kernel/p10-kernel-start.sh [BUILD_DIR]
#        (root; files kept in build/vm/p10.*; the guest side is bench/kernel/p10-kernel-start-steps.sh)
set -u
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
bench_init p10 "${1:-}" root
DBG=$(kernel_debug) || exit 2
bench_need "$B/kcsanctl"
out=$(vm_out p10) || exit 2
guest_run p10 "$out" 1800 "$REPO/bench/kernel/p10-kernel-start-steps.sh" "$DBG"
for run in cold warm big; do
	echo "== $run"
	grep -hE '^kcsand: (\[kernel\]: (site sets|[0-9]+ of|marking)|decoded|src:)' "$out/$run.err"
	summary_line "$out/$run.err" | grep -oE 'breakpoint_[a-z_]+: [0-9/x]+' | tr '\n' ' '
	echo
done
if cmp -s <(grep '^kcsand: site ' "$out/cold.err") <(grep '^kcsand: site ' "$out/warm.err"); then
	echo "warm verdicts = cold verdicts: $(grep -c '^kcsand: site ' "$out/cold.err") sites"
else
	echo "warm verdicts differ from cold ones: $(diff <(grep '^kcsand: site ' "$out/cold.err") \
		<(grep '^kcsand: site ' "$out/warm.err") | grep -c '^[<>]') lines"
fi
