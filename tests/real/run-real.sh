#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Real programs as Debian ships them (stripped, no frame pointers), each run
# natively and under `kcsanctl run` at the defaults:
#
#   tests/real/run-real.sh [BUILD_DIR] [PROGRAM...]     (root; `make real`)
#
# PROGRAM: pigz, pbzip2, xz, xz-d, zstd, memcached (default: all).  Each compresses the
# same input with two threads (xz-d decompresses xz's multi-block output with
# two); the library doing the work (zlib, libbz2, liblzma) is probed with the
# program.  memcached -t 2 serves mc_load.py's four clients (its replies are
# the output), then is stopped with SIGTERM.  Harm is checked: the output under kcsand must be
# byte-identical to the native run's, and the exit status the same (kcsanctl's
# 66 stands for the program's 0 when a race was reported).  For each program
# it prints where its functions came from, the sites, the time to decode them,
# the wall time against the native run's, the overhead kcsand measured, and
# the title of every report with its count; docs/real-programs.md explains
# each title.  Not part of `make check`: it needs the packages (apt-get
# install pigz pbzip2 xz-utils zstd memcached) and takes minutes.
set -u
B=${1:-build}
shift $(($# > 0 ? 1 : 0))
PROGS=${*:-pigz pbzip2 xz xz-d zstd memcached}
CTL=$B/kcsanctl
OUT=$B/tests/real

. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

if [[ $(id -u) != 0 || ! -x $CTL ]]; then
	setup_fail "needs root and $CTL (run 'make' as root)"
fi
mkdir -p "$OUT" || exit 1

# 24 MiB of text that compresses as text does (a few ratios), the same in every run:
# large enough that each program splits it into blocks for both threads (xz -1:
# 3 MiB blocks; zstd: a job per 4 MiB or so; pigz: 128 KiB; pbzip2: 900 kB).
IN=$OUT/input.txt
if [[ ! -s $IN ]]; then
	awk 'BEGIN { srand(7); for (i = 0; i < 600000; i++)
		printf "%08d %s %d %.6f line of text that repeats, mostly\n", i,
			substr("abcdefghijklmnopqrstuvwxyz", 1 + int(rand() * 20), 6),
			int(rand() * 100000), rand() }' | head -c 25165824 > "$IN"
fi

# xz-d's input: the 8 blocks xz -T2 -1 makes of it, which its threaded decoder splits.
[[ -s $OUT/input.xz ]] || xz -T2 -1 -c "$IN" > "$OUT/input.xz"

command_for() {
	case $1 in
	pigz) echo "/usr/bin/pigz -p 2 -c $IN" ;;
	pbzip2) echo "/usr/bin/pbzip2 -p2 -c $IN" ;;
	xz) echo "/usr/bin/xz -T2 -1 -c $IN" ;;
	xz-d) echo "/usr/bin/xz -T2 -d -c $OUT/input.xz" ;;
	zstd) echo "/usr/bin/zstd -T2 -q -c $IN" ;;
	memcached) echo "/usr/bin/memcached -t 2 -p $MC_PORT -U 0 -l 127.0.0.1 -u root" ;;
	esac
}

# The libraries that do each program's threaded work, probed too (--object).
LIB=/usr/lib/x86_64-linux-gnu
objects_for() {
	case $1 in
	pigz) echo "--object $LIB/libz.so.1" ;;
	pbzip2) echo "--object $LIB/libbz2.so.1.0" ;;
	xz | xz-d) echo "--object $LIB/liblzma.so.5" ;;
	zstd | memcached) echo "" ;;	# libzstd is linked into /usr/bin/zstd
	esac
}

now() { echo "$EPOCHREALTIME"; }

MC_PORT=${KCSAND_MC_PORT:-22122}
LOAD=$(dirname "${BASH_SOURCE[0]}")/mc_load.py

# serve PID PROGRAM...: wait for the server PROGRAM (run by PID, itself or its
# parent kcsanctl) to listen, load it, stop it with SIGTERM; the load's replies
# on stdout.  Returns 1 when it never listened.
serve() {
	local pid=$1 server i
	shift
	for ((i = 0; i < 600; i++)); do
		python3 -c "import socket; socket.create_connection(('127.0.0.1', $MC_PORT), 1)" \
			2> /dev/null && break
		sleep 0.1
	done
	((i < 600)) || return 1
	python3 "$LOAD" "$MC_PORT" 4 "${KCSAND_MC_ROUNDS:-2000}"
	server=$(pgrep -P "$pid" -x memcached || echo "$pid")
	kill -TERM "$server"
}

# run_native PROGRAM CMD...: the program natively; its status in nrc.
run_native() {
	local p=$1
	shift
	if [[ $p == memcached ]]; then
		"$@" > "$OUT/$p.native.err" 2>&1 < /dev/null &
		serve $! > "$OUT/$p.native"
		wait $!
	else
		"$@" > "$OUT/$p.native" 2> "$OUT/$p.native.err" < /dev/null
	fi
}

# run_kcsand PROGRAM CMD...: the same under kcsanctl run; its status in krc.
run_kcsand() {
	local p=$1 ctl
	shift
	# shellcheck disable=SC2046
	set -- timeout -k 10 1800 "$CTL" run -v --stats "$OUT/$p.stats" $(objects_for "$p") -- "$@"
	if [[ $p == memcached ]]; then
		"$@" > "$OUT/$p.log" 2>&1 < /dev/null &
		ctl=$!
		serve "$(pgrep -P "$ctl" -x kcsanctl || echo "$ctl")" > "$OUT/$p.kcsand"
		wait "$ctl"
	else
		"$@" > "$OUT/$p.kcsand" 2> "$OUT/$p.log" < /dev/null
	fi
}

printf '%-7s %-22s %6s %9s %8s %8s %9s %8s\n' program functions_from sites decode_ms native_s \
	kcsand_s wall_ratio overhead
for p in $PROGS; do
	cmd=$(command_for "$p")
	if [[ -z $cmd ]]; then
		fail "$p" "unknown program (pigz, pbzip2, xz, xz-d, zstd)"
		continue
	fi
	if [[ ! -x ${cmd%% *} ]]; then
		fail "$p" "${cmd%% *} is not installed (apt-get install pigz pbzip2 xz-utils zstd)"
		continue
	fi
	t0=$(now)
	# shellcheck disable=SC2086
	run_native "$p" $cmd
	nrc=$?
	t1=$(now)
	# shellcheck disable=SC2086
	run_kcsand "$p" $cmd
	krc=$?
	t2=$(now)
	reports=$(grep -c '^BUG: KCSAN: ' "$OUT/$p.log")
	from=$(grep -oE 'functions from .*' "$OUT/$p.log" | sed 's/functions from //' | sort -u |
		paste -sd+)
	sites=$(grep -m1 -oE '[0-9]+ sites,' "$OUT/$p.stats" | grep -oE '[0-9]+')
	decode=$(grep -oE 'decoded [0-9]+ sites in [0-9.]+ ms' "$OUT/$p.log" | awk '{ t += $5 } END { print t }')
	cpu=$(grep -oE 'cpu_ms: [0-9]+ native_cpu_ms: [0-9]+' "$OUT/$p.stats" |
		awk '{ if ($4 > 0) printf "%.0f%%", ($2 - $4) * 100 / $4; else print "?" }')
	awk -v p="$p" -v f="${from:-?}" -v s="${sites:-?}" -v d="${decode:-?}" -v a="$t0" \
	    -v b="$t1" -v c="$t2" -v o="${cpu:-?}" 'BEGIN {
		printf "%-7s %-22s %6s %9s %8.2f %8.2f %9.1f %8s\n", p, substr(f, 1, 22), s, d,
			b - a, c - b, (c - b) / (b - a), o }'
	if cmp -s "$OUT/$p.native" "$OUT/$p.kcsand"; then
		ok "${p}_output_identical"
	else
		fail "${p}_output_identical" "the output under kcsand differs from the native run's"
	fi
	if [[ $krc == "$nrc" || ($nrc == 0 && $krc == 66 && $reports -gt 0) ]]; then
		ok "${p}_exit_status ($nrc native, $krc under kcsanctl, $reports reports)"
	else
		fail "${p}_exit_status" "native $nrc, under kcsanctl $krc with $reports reports"
	fi
	if [[ ${sites:-0} -gt 0 ]]; then
		ok "${p}_sites_found"
	else
		fail "${p}_sites_found" "no site decoded (see $OUT/$p.log)"
	fi
	grep '^BUG: KCSAN: ' "$OUT/$p.log" | sort | uniq -c | sort -k1nr | sed 's/^/     /'
done
finish
