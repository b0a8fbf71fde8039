#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# P4: time to decode and attach 10,000 sites (target < 2 s), with 100 and
# 1,000 for scale, and the site sampler's re-attach (a new uprobe_multi link
# with the same sites, the old one closed) at each size.
# Usage: bench/user/p4-attach.sh [BUILD_DIR]    (root; make bench-programs builds what it needs)
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
bench_init p4 "${1:-}" root
bench_need "$B/kcsanctl" "$B/bench/reattach"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "P4: decode and attach N sites (kcsanctl run -v), and re-attach (median of 5)"
printf '  %8s %12s %12s %12s %14s\n' sites "decode ms" "attach ms" "total ms" "re-attach ms"
for n in 100 1000 10000; do
	bench/programs/gen_sites.sh "$n" > "$tmp/s$n.c"
	gcc -O1 -o "$tmp/s$n" "$tmp/s$n.c"
	line=$("${KCSANCTL_RUN[@]}" -v --functions 'f*' -- "$tmp/s$n" 2>&1 | grep -m1 'decoded' || true)
	dec=$(sed -nE 's/.*decoded [0-9]+ sites in ([0-9.]+) ms.*/\1/p' <<<"$line")
	att=$(sed -nE 's/.*attached them in ([0-9.]+) ms.*/\1/p' <<<"$line")
	re=$("$B/bench/reattach" 'f*' 5 -- "$tmp/s$n" | awk '{ print $4 }')
	awk -v n="$n" -v d="${dec:-0}" -v a="${att:-0}" -v r="${re:-0}" \
		'BEGIN { printf "  %8d %12.1f %12.1f %12.1f %14.1f\n", n, d, a, d + a, r }'
done
echo "  target: 10,000 sites decoded and attached in < 2000 ms"
