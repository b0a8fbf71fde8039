#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# P6: what a kernel report frame's file:line costs: symbolizer__lookup_func_line()
# finds the function by name in the vmlinux or .ko, then its line.  Measured on the
# newest vmlinux with debug info under /usr/lib/debug/boot (Debian's linux-image-*-dbg),
# or on the ELF given as the second argument.
# Usage: bench/p6-func-line.sh [BUILD_DIR [ELF]]    (make bench-programs builds what it needs)
set -euo pipefail
B=${1:-build}
ELF=${2:-$(ls -1 /usr/lib/debug/boot/vmlinux-* 2>/dev/null | sort -V | tail -1 || true)}
LOOKUPS=${P6_LOOKUPS:-1000}

[ -x "$B/bench/func_line" ] || { echo "p6: $B/bench/func_line missing: run 'make bench-programs'" >&2; exit 2; }
[ -n "$ELF" ] && [ -r "$ELF" ] || {
	echo "p6: no vmlinux with debug info under /usr/lib/debug/boot: install linux-image-\$(uname -r)-dbg or name an ELF" >&2
	exit 2
}
echo "P6: lookup of $LOOKUPS kernel frames by function name in $ELF"
"$B/bench/func_line" "$ELF" "$LOOKUPS" | sed 's/; /\n  /g; s/^/  /'
