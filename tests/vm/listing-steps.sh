#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Guest side of the kernel site listings (docs/house-listings.md), run by
# tests/vm/kcsan-vm as its probe command, in the guest:
#
#   listing-steps.sh [--kcsanctl PATH] [--probe SPEC]... -- COMMAND...
#
# For each of a fixed set of kernel specs, lists the sites `kcsanctl run
# --kernel -v` decodes, with their verdicts, and detaches at once (COMMAND
# and the harness's --probe specs are not used).  Writes
# $KCSAN_VM_OUT/listing-NAME.log (all of stderr) and listing-NAME.sites (the
# site lines without their address, which KASLR moves), and exits 0.
# --kcsanctl lists with another build's kcsanctl (an old one, to compare).
set -u
OUT=${KCSAN_VM_OUT:?run by tests/vm/kcsan-vm}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
KCSANCTL=$REPO/build/kcsanctl
[ "${1:-}" = --kcsanctl ] && { KCSANCTL=$2; shift 2; }
# The module's own DWARF, as kcsan-vm's default probe command gives it (marking).
KO=$(ls "$REPO"/build/vm/kmod-*/kcsan_race/kcsan_race.ko 2>/dev/null | head -1)

list() {
	local name=$1
	shift
	"$KCSANCTL" run --kernel -v --output - ${KO:+--kernel-debug "$KO"} "$@" -- true \
		> "$OUT/listing-$name.log" 2>&1
	echo "listing $name: exit $?" >> "$OUT/listing.rc"
	grep '^kcsand: site ' "$OUT/listing-$name.log" |
		awk '{ $4 = ""; print }' > "$OUT/listing-$name.sites"
}

: > "$OUT/listing.rc"
list vfs --probe 'vfs_*'
list pipe --probe 'pipe_*'
list module --probe module:kcsan_race
exit 0
