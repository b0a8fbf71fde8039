#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# P6: what a kernel report frame's file:line costs: symbolizer__lookup_func_line()
# finds the function by name in the vmlinux or .ko, then its line.  Measured on the
# newest vmlinux with debug info under /usr/lib/debug/boot (Debian's linux-image-*-dbg),
# or on the ELF given as the second argument.
# Usage: bench/kernel/p6-func-line.sh [BUILD_DIR [ELF]]    (make bench-programs builds what it needs)
set -euo pipefail
ELF=${2:-$(ls -1 /usr/lib/debug/boot/vmlinux-* 2>/dev/null | sort -V | tail -1 || true)}
ELF=${ELF:+$(realpath -e "$ELF" 2>/dev/null || echo "$ELF")}
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
bench_init p6 "${1:-}"
LOOKUPS=${P6_LOOKUPS:-1000}
bench_need "$B/bench/func_line"
[[ -n $ELF && -r $ELF ]] ||
	bench_die "no vmlinux with debug info under /usr/lib/debug/boot: install linux-image-\$(uname -r)-dbg or name an ELF"
echo "P6: lookup of $LOOKUPS kernel frames by function name in $ELF"
"$B/bench/func_line" "$ELF" "$LOOKUPS" | sed 's/; /\n  /g; s/^/  /'
