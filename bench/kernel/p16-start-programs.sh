#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# P16: what one start of kcsanctl costs per mode in the test guest (Debian's 6.1
# under QEMU, tests/vm/kcsan-vm), where a start is mostly the verifier's
# (docs/test-kernel.md, "The verifier on 6.1"): one boot, each mode started once
# with `-- true` by this build's kcsanctl and, given OLD_BUILD_DIR, by an older
# one's, the two in turn (guest side: bench/kernel/p16-start-programs-steps.sh):
#   kprobes      --kernel --probe pipe_read (a kprobe per site)
#   breakpoints  the same with --sample breakpoints (code breakpoints)
#   watch        --kernel --watch jiffies_64 (no site: debug registers only)
#   user         user mode on /bin/true, the history on
# Prints each start's wall seconds and, from a build that says it (-v), the
# programs it verified and the load's milliseconds.
# Usage: bench/kernel/p16-start-programs.sh [BUILD_DIR [OLD_BUILD_DIR]]   (root)
set -u
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
bench_init p16 "${1:-}" root
bench_need "$B/kcsanctl"
OLD=${2:-}
[[ -z $OLD || -x $OLD/kcsanctl ]] || bench_die "$OLD/kcsanctl missing"
out=$(vm_out p16) || exit 2
[[ $OLD ]] && cp "$OLD/kcsanctl" "$out/kcsanctl-old"
guest_run p16 "$out" 900 "$REPO/bench/kernel/p16-start-programs-steps.sh"
cat "$out/starts.txt" 2>/dev/null || bench_die "no starts.txt in $out: $(tail -3 "$out/harness.err")"
for f in "$out"/*.err; do
	[[ -e $f ]] || continue
	printf '%s: %s\n' "$(basename "$f" .err)" \
		"$(grep -m1 -oE 'loaded the BPF object in .*' "$f" || echo '(no -v load line)')"
done
