#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# P15: where cold marking of a subsystem's kernel sites goes (issue 21, "marking cost").
# Host: build/bench/kmark_cost marks the sites of src:fs/ src:mm/ src:kernel/ decoded from
# the stock kernel's debug vmlinux itself, cold (an empty cache) and warm, and with
# P15_OLD=PATH (kmark_cost of an older build) cold again, the two verdict lists compared.
# Guest (unless P15_HOST_ONLY=1; tests/vm/kcsan-vm, --memory 2048; guest side
# bench/kernel/p15-kmark-cost-steps.sh): kcsanctl run --kernel over the same paths,
# code-breakpoint sampling, --duration 1: cold with the vmlinux over 9p, warm, and cold
# from a copy of the vmlinux in the guest's tmpfs; each run's marking time, and whether
# the three agree site for site.
# Usage: bench/kernel/p15-kmark-cost.sh [BUILD_DIR]  (root; files in build/vm/p15.*)
set -u
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
bench_init p15 "${1:-}" root
DBG=$(kernel_debug) || exit 2
MAP=${DBG/vmlinux-/System.map-}
bench_need "$B/kcsanctl" "$B/bench/kmark_cost"
out=$(vm_out p15) || exit 2
paths=(fs/ mm/ kernel/)
host_run() {	# NAME KMARK_COST CACHE_DIR
	echo "host $1: $(KCSAND_CACHE_DIR=$3 "$2" "$DBG" "$MAP" "$out/host-$1.txt" "${paths[@]}")"
}
mkdir -p "$out/host-cache" "$out/host-old-cache"
host_run cold "$B/bench/kmark_cost" "$out/host-cache"
host_run warm "$B/bench/kmark_cost" "$out/host-cache"
cmp -s "$out/host-cold.txt" "$out/host-warm.txt" && echo "host: warm verdicts = cold ones" ||
	echo "host: WARM VERDICTS DIFFER"
if [ -n "${P15_OLD:-}" ]; then
	host_run old "$P15_OLD" "$out/host-old-cache"
	cmp -s "$out/host-cold.txt" "$out/host-old.txt" && echo "host: verdicts = the old build's" ||
		echo "host: VERDICTS DIFFER FROM THE OLD BUILD'S"
fi
[ "${P15_HOST_ONLY:-0}" = 1 ] && exit 0
guest_run p15 "$out" 2400 "$REPO/bench/kernel/p15-kmark-cost-steps.sh" "$DBG"
for run in cold9p warm9p copy cold-local; do
	[ -f "$out/$run.err" ] || continue
	echo "guest $run: $(grep -hE '^kcsand: \[kernel\]: (site sets|[0-9]+ of)|^copied in' \
		"$out/$run.err" | sed -E 's/^kcsand: \[kernel\]: //; s/ from the cache .*/ cached/' |
		tr '\n' ';')"
done
v() { grep '^kcsand: site ' "$out/$1.err"; }
cmp -s <(v cold9p) <(v warm9p) && cmp -s <(v cold9p) <(v cold-local) &&
	echo "guest: cold, warm and local verdicts agree: $(v cold9p | wc -l) sites" ||
	echo "guest: VERDICTS DIFFER between runs"
