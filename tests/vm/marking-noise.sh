#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# What marking removes on a stock kernel (docs/marking.md, "Kernel"): boots Debian's
# kernel in QEMU (tests/vm/kcsan-vm) twice, probes the same core kernel functions under
# tests/vm/noise-workload.sh (shell pipelines, and tests/vm/pipe-poll.c), once with --no-marking (lock prefixes only) and once with
# marking from the vmlinux's DWARF (linux-image-$(uname -r)-dbg on the host, found at
# /usr/lib/debug/boot/vmlinux-RELEASE) and, when given, the kernel's sources
# (--source-dir, e.g. /usr/src/linux-source-6.1 from Debian's linux-source-6.1).
# Prints the marked-site counts and the number of distinct report titles of each run.
#   marking-noise.sh [--source-dir DIR] [--seconds S] [PROBE_SPEC...]
set -u
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$REPO"
src= secs=20
while [ $# -gt 0 ]; do
	case $1 in
	--source-dir) src="--source-dir $2"; shift 2 ;;
	--seconds) secs=$2; shift 2 ;;
	*) break ;;
	esac
done
specs=("$@")
[ ${#specs[@]} -gt 0 ] || specs=(pipe_read pipe_write pipe_poll vfs_read vfs_write __fget_light
	__fput filemap_read do_wait alloc_pid free_pid anon_pipe_buf_release __wake_up_common
	wake_up_new_task)
probes=()
for s in "${specs[@]}"; do probes+=(--probe "$s"); done
# build/vm exists only once kcsan-vm has run: without it, $out would be empty
# and the run's files would land in /.
out=$(mkdir -p "$REPO/build/vm" && mktemp -d "$REPO/build/vm/marking-noise.XXXXXX") ||
	{ echo "marking-noise: cannot create a directory under build/vm" >&2; exit 2; }
gcc -O2 -Wall -pthread -o "$out/pipe-poll" tests/vm/pipe-poll.c || exit 2

for mode in no-marking marking; do
	extra=$src
	[ $mode = no-marking ] && extra=--no-marking
	KCSAN_VM_PROBE_CMD="$REPO/build/kcsanctl run --kernel --output - -v --skip-watch 10 --udelay-task 300 $extra" \
	tests/vm/kcsan-vm --out "$out/$mode" --keep --timeout 900 "${probes[@]}" \
		-- tests/vm/noise-workload.sh "$secs" "$out/pipe-poll" > "$out/$mode.txt" 2> "$out/$mode.err"
	echo "$mode: exit $?, $(grep -m1 'marked sites:' "$out/$mode/probe.err" | sed 's/^kcsand: //')"
	echo "$mode: $(grep -c '^BUG: KCSAN:' "$out/$mode.txt") reports, $(grep '^BUG: KCSAN:' "$out/$mode.txt" | sort -u | wc -l) distinct titles"
	grep '^BUG: KCSAN:' "$out/$mode.txt" | sort | uniq -c | sed 's/^/    /'
done
echo "files in $out"
