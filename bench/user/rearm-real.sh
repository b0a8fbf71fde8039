#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# What the site sampler's re-arms cost a real program: how many, their time
# (the sampler's tick lines at -v -v: the last re-arm's ms, counted once per
# new value), the longest, the run's wall time and, for stress-ng, the
# length it reports itself.  Every uprobe registered or unregistered takes
# the kernel's dup_mmap_sem for writing, which the target's forks wait for:
# the re-arms' time is time the target may be held.  memcached is loaded by
# tests/real/mc_load.py and stopped with SIGTERM.
# Usage: bench/user/rearm-real.sh [BUILD_DIR] [stress-atomic|stress-pthread|memcached ...]
#        (root; the Debian packages stress-ng and memcached)
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
bench_init rearm-real "${1:-}" root
shift $(($# > 0 ? 1 : 0))
bench_need "$B/kcsanctl" /usr/bin/stress-ng /usr/bin/memcached
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
PORT=${KCSAND_MC_PORT:-22132}

# mc PORT PID: wait for memcached (kcsanctl PID's child), load it, stop it.
mc() {
	local i server

	for ((i = 0; i < 1200; i++)); do
		python3 -c "import socket; socket.create_connection(('127.0.0.1', $1), 1)" \
			2> /dev/null && break
		sleep 0.1
	done
	python3 tests/real/mc_load.py "$1" 4 2000 > /dev/null
	server=$(pgrep -P "$2" -x memcached) && kill -TERM "$server"
}

run() {
	local p=$1 t0
	local sng=(/usr/bin/stress-ng --"${p#stress-}" 2 --timeout 120 --verify
		--log-file "$tmp/sng.log")

	rm -f "$tmp/sng.log"
	t0=$EPOCHREALTIME
	case $p in
	stress-atomic) "${KCSANCTL_RUN[@]}" -v -v -- "${sng[@]}" --atomic-ops 50 ;;
	stress-pthread) "${KCSANCTL_RUN[@]}" -v -v -- "${sng[@]}" --pthread-ops 500 ;;
	memcached)
		"${KCSANCTL_RUN[@]}" -v -v -- /usr/bin/memcached -t 2 -p "$PORT" -U 0 \
			-l 127.0.0.1 -u root < /dev/null &
		mc "$PORT" $!
		wait $!
		;;
	*) bench_die "unknown program $p" ;;
	esac > /dev/null 2> "$tmp/err"
	wall=$(elapsed "$t0")
	own=$(sed -nE 's/.*completed in ([0-9.]+)s.*/\1/p' "$tmp/sng.log" 2> /dev/null)
	grep -oE 're-attach [0-9.]+ ms' "$tmp/err" | awk -v p="$p" -v w="$wall" \
		-v o="${own:--}" '$2 > 0 && $2 != last { n++; s += $2; if ($2 > m) m = $2 }
		{ last = $2 }
		END { printf "  %-15s %8d %12.1f %12.1f %10.1f %10s\n", p, n, s / 1000,
			m / 1000, w, o }'
}

echo "rearm-real: the sampler's re-arms on real programs (kcsanctl run -v -v, load $(cut -d' ' -f1 /proc/loadavg))"
printf '  %-15s %8s %12s %12s %10s %10s\n' program re-arms "re-arm s" "longest s" "wall s" "own s"
(($#)) || set -- stress-atomic memcached
for p in "$@"; do
	run "$p"
done
