#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Lists the sites `kcsanctl run -v` decodes, with their verdicts, in libc,
# libstdc++ and a kcsanctl binary, so that two builds can be compared
# (docs/house-listings.md):
#
#	tests/tools/site-listings.sh KCSANCTL OUTDIR [TARGET]
#
# TARGET is the kcsanctl binary to list (default: KCSANCTL itself); give the
# same one to both builds.  The libraries are probed as private copies,
# never by their real path: every process on the machine maps those, and
# attaching to them stalls fork() machine-wide.  --no-history keeps the
# sync-function probes off the real libc too.  Each OUTDIR/NAME.sites has
# the object's path cut to its file name.
set -euo pipefail

CTL=$(realpath "$1")
OUT=$2
TARGET=${3:-$1}
# grep reads the whole help: with -q it would stop at the match, and under
# pipefail the help's SIGPIPE would read as "no --no-history".
if ! "$CTL" run --help 2>&1 | grep -- --no-history > /dev/null; then
	echo "site-listings: $CTL has no --no-history: its history would probe the real libc" >&2
	exit 2
fi
mkdir -p "$OUT"
OUT=$(realpath "$OUT")
PRIV=$(mktemp -d /tmp/site-listings.XXXXXX)
trap 'rm -rf "$PRIV"' EXIT

cp /lib/x86_64-linux-gnu/libc.so.6 /usr/lib/x86_64-linux-gnu/libstdc++.so.6 "$PRIV/"
cp "$TARGET" "$PRIV/kcsanctl.target"
printf '#include <stdio.h>\nint main(void){puts("hi");return 0;}\n' > "$PRIV/hello.c"
gcc -O2 -o "$PRIV/hello" "$PRIV/hello.c"

list() {
	local name=$1
	shift
	(cd "$PRIV" && "$CTL" run -v --no-history "$@") > "$OUT/$name.out" 2> "$OUT/$name.err" || true
	{ grep '^kcsand: site ' "$OUT/$name.err" || true; } |
		sed -E 's#^kcsand: site [^ ]*/([^/ ]+) #kcsand: site \1 #' > "$OUT/$name.sites"
	echo "$name: $(wc -l < "$OUT/$name.sites") sites"
}

list libc --object "$PRIV/libc.so.6" -- ./hello
list libstdcxx --object "$PRIV/libstdc++.so.6" -- ./hello
list kcsanctl -- ./kcsanctl.target
