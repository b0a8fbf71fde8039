#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# P5: kcsand's peak RSS (kcsanctl run, which embeds the engine) with 10,000
# sites attached, and with 100 for scale; the probed program sleeps 2 s and
# is a few hundred KiB itself.  Target < 32 MiB.
# Usage: bench/user/p5-rss.sh [BUILD_DIR]     (root; make bench-programs builds what it needs)
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
bench_init p5 "${1:-}" root
bench_need "$B/kcsanctl"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "P5: peak RSS of kcsanctl run (engine, BPF maps mmapped, symbolizer)"
for n in 100 10000; do
	bench/programs/gen_sites.sh "$n" > "$tmp/s$n.c"
	gcc -O1 -g -o "$tmp/s$n" "$tmp/s$n.c"
	/usr/bin/time -f '%M' -o "$tmp/rss" "${KCSANCTL_RUN[@]}" --functions 'f*' -- "$tmp/s$n" 2 \
		>/dev/null 2>&1 || true
	awk -v n="$n" -v k="$(tail -1 "$tmp/rss")" \
		'BEGIN { printf "  %6d sites: %6.1f MiB\n", n, k / 1024 }'
done
echo "  target: < 32 MiB with 10,000 sites"
