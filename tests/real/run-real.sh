#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Real programs as Debian ships them (stripped, no frame pointers), each run
# natively and under kcsand at the defaults:
#
#   tests/real/run-real.sh [BUILD_DIR] [PROGRAM...]     (root; `make real`)
#
# PROGRAM (default: all):
#   pigz, pbzip2, xz, xz-d, zstd   compress the same input with two threads (xz-d
#                                  decompresses xz's multi-block output with two); the
#                                  library doing the work (zlib, libbz2, liblzma) is
#                                  probed with the program
#   memcached, redis               servers loaded by a client of our own (mc_load.py,
#                                  redis_load.py: their replies are the output), then
#                                  stopped with SIGTERM; redis with two I/O threads
#   sysbench-threads, sysbench-mutex, sysbench-memory
#   stress-pthread, stress-mutex, stress-futex, stress-atomic   stress-ng's stressors
#   memcached-service, redis-service   the servers as the service's targets: kcsand runs
#                                  first, memcached is probed by pid once it runs
#                                  (`kcsanctl probe add user ... --pid`), redis by its
#                                  path from the configuration before it starts
#   sort, git-grep, git-index-pack, git-pack-objects, python-threads, perl-threads,
#   lbzip2, pixz, 7za, cxx-wordcount
#                                  ordinary multithreaded programs nobody tuned kcsand
#                                  for: coreutils' sort --parallel=2, git's threaded grep,
#                                  index-pack and delta search on a repository of the
#                                  system's headers (pack-objects' output differs from run
#                                  to run: the objects it holds are compared), CPython's
#                                  threading (py_threads.py), Perl's ithreads
#                                  (pl_threads.pl), 7-Zip's
#                                  LZMA2 encoder on 4 MiB, and a C++ word count of our
#                                  own (cxx_wordcount.cc, -O2, stripped)
#   gm                             GraphicsMagick's OpenMP filters (blur, resize, sharpen)
#                                  on a 1200x1200 image, two threads: a stripped OpenMP
#                                  library, whose regions have no symbols
#
# Harm is checked: the output under kcsand must be the native run's (for sysbench and
# stress-ng, once their timings and pids are taken out), and the exit status the same
# (kcsanctl's 66 standing for the program's 0 when a race was reported); a run that took 3
# times its native CPU time or more must say so in its summary, by kcsand's estimate and,
# past 9 times, by the CPU times measured.  For each program it prints
# where its functions came from, the sites, the time to decode them, the wall time against
# the native run's, the overhead kcsand measured, and the title of every report with its
# count; docs/real-programs.md explains each title.  Not part of `make check`: it needs the
# packages (apt-get install pigz pbzip2 xz-utils zstd memcached redis-server sysbench
# stress-ng) and takes minutes.
set -u
B=${1:-build}
shift $(($# > 0 ? 1 : 0))
ALL="pigz pbzip2 xz xz-d zstd memcached redis sysbench-threads sysbench-mutex sysbench-memory
stress-pthread stress-mutex stress-futex stress-atomic memcached-service redis-service
sort git-grep git-index-pack git-pack-objects python-threads perl-threads lbzip2 pixz 7za
cxx-wordcount gm"
PROGS=${*:-$ALL}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# The OpenMP programs (gm) with two threads, as every other program here.
export OMP_NUM_THREADS=2
. "$HERE/../lib.sh"
CTL=$B/kcsanctl
KCSAND=$B/kcsand
OUT=$B/tests/real
DPID=

cleanup() {
	[[ -n $DPID ]] && kill -TERM "$DPID" 2> /dev/null && wait "$DPID"
}
trap cleanup EXIT

if [[ $(id -u) != 0 || ! -x $CTL ]]; then
	setup_fail "needs root and $CTL (run 'make' as root)"
fi
mkdir -p "$OUT" || exit 1
# Absolute: kcsand, the service, takes its socket and log by absolute path only.
OUT=$(cd "$OUT" && pwd)

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

MC_PORT=${KCSAND_MC_PORT:-22122}
RD_PORT=${KCSAND_REDIS_PORT:-22124}
# No persistence (nothing written but the replies), two I/O threads that read as well.
printf '%s\n' "port $RD_PORT" "bind 127.0.0.1" "save \"\"" "appendonly no" "dir $OUT" \
	"io-threads 2" "io-threads-do-reads yes" "daemonize no" > "$OUT/redis.conf"

# stress-ng: a bounded number of operations per instance, its log in a file of its own.
# The inputs of the later programs, made when one of them runs: the text shuffled for
# sort (a fixed random source: the same order every time); a repository of the
# system's C and C++ headers, one commit, packed (git gc) for index-pack; 4 MiB of the
# text for 7za, whose encoder takes minutes on the whole under kcsand; the C++ program.
prepare() {
	case $1 in
	sort) [[ -s $OUT/sort-in.txt ]] || shuf --random-source=<(yes) "$IN" > "$OUT/sort-in.txt" ;;
	git-*)
		[[ -s $OUT/repo.pack ]] && return
		rm -rf "$OUT/gitrepo" && mkdir -p "$OUT/gitrepo" &&
			cp -a /usr/include/c++ /usr/include/linux /usr/include/x86_64-linux-gnu \
				"$OUT/gitrepo/" &&
			git -C "$OUT/gitrepo" init -q && git -C "$OUT/gitrepo" add -A &&
			git -C "$OUT/gitrepo" -c user.name=kcsand -c user.email=kcsand@localhost \
				commit -qm headers && git -C "$OUT/gitrepo" gc -q &&
			cp "$OUT"/gitrepo/.git/objects/pack/pack-*.pack "$OUT/repo.pack" ;;
	7za) [[ -s $OUT/input-4m.txt ]] || head -c 4194304 "$IN" > "$OUT/input-4m.txt" ;;
	gm) [[ -s $OUT/gm-in.ppm ]] || gm convert -size 1200x1200 plasma:fractal "$OUT/gm-in.ppm" ;;
	cxx-wordcount)
		[[ -x $OUT/cxx_wordcount ]] ||
			{ g++ -O2 -std=c++17 -pthread -o "$OUT/cxx_wordcount" "$HERE/cxx_wordcount.cc" &&
				strip "$OUT/cxx_wordcount"; } ;;
	esac
}

stress() {
	echo "/usr/bin/stress-ng --$1 2 --$1-ops $2 --timeout 120 --verify --log-file $OUT/sng.log"
}

command_for() {
	case $1 in
	pigz) echo "/usr/bin/pigz -p 2 -c $IN" ;;
	pbzip2) echo "/usr/bin/pbzip2 -p2 -c $IN" ;;
	xz) echo "/usr/bin/xz -T2 -1 -c $IN" ;;
	xz-d) echo "/usr/bin/xz -T2 -d -c $OUT/input.xz" ;;
	zstd) echo "/usr/bin/zstd -T2 -q -c $IN" ;;
	memcached*) echo "/usr/bin/memcached -t 2 -p $MC_PORT -U 0 -l 127.0.0.1 -u root" ;;
	redis*) echo "/usr/bin/redis-server $OUT/redis.conf" ;;
	sysbench-threads) echo "/usr/bin/sysbench threads --threads=2 --time=0 --events=2000 run" ;;
	sysbench-mutex) echo "/usr/bin/sysbench mutex --threads=2 --mutex-locks=5000 run" ;;
	# --time=0: the run ends with its events, not after sysbench's default 10 s, which a
	# run under the probes can pass (then it reports fewer operations than natively).
	sysbench-memory) echo "/usr/bin/sysbench memory --threads=2 --time=0 --memory-total-size=16M run" ;;
	stress-pthread) stress pthread 500 ;;
	stress-mutex) stress mutex 2000 ;;
	stress-futex) stress futex 2000 ;;
	stress-atomic) stress atomic 50 ;;
	sort) echo "/usr/bin/sort --parallel=2 -S 64M $OUT/sort-in.txt" ;;
	git-grep) echo "/usr/bin/git -C $OUT/gitrepo grep --threads=2 -n -i -e mutex -e thread -e atomic -e lock_" ;;
	git-index-pack) echo "/usr/bin/git index-pack --threads=2 -o $OUT/ip.idx $OUT/repo.pack" ;;
	git-pack-objects) echo "/usr/bin/git -C $OUT/gitrepo pack-objects --revs --all --stdout --threads=2 --window=20 -q --no-reuse-delta --no-reuse-object" ;;
	python-threads) echo "/usr/bin/python3 $HERE/py_threads.py 40000" ;;
	perl-threads) echo "/usr/bin/perl $HERE/pl_threads.pl 20000" ;;
	lbzip2) echo "/usr/bin/lbzip2 -n 2 -c $IN" ;;
	pixz) echo "/usr/bin/pixz -p 2 -1 -i $IN -o /dev/stdout" ;;
	7za) echo "/usr/lib/p7zip/7za a -txz -mx1 -mmt2 -so -an $OUT/input-4m.txt" ;;
	cxx-wordcount) echo "$OUT/cxx_wordcount $IN 200000" ;;
	gm) echo "/usr/bin/gm convert $OUT/gm-in.ppm -blur 0x4 -resize 70% -sharpen 0x1 ppm:-" ;;
	esac
}

# The libraries that do each program's threaded work, probed too (--object).
LIB=/usr/lib/x86_64-linux-gnu
objects_for() {
	case $1 in
	pigz) echo "--object $LIB/libz.so.1" ;;
	pbzip2) echo "--object $LIB/libbz2.so.1.0" ;;
	xz | xz-d | pixz) echo "--object $LIB/liblzma.so.5" ;;
	gm) echo "--object /usr/lib/libGraphicsMagick-Q16.so.3" ;;
	*) echo "" ;;	# libzstd is linked into /usr/bin/zstd, jemalloc into redis
	esac
}

package_of() {
	case $1 in
	xz*) echo xz-utils ;;
	redis*) echo redis-server ;;
	stress-*) echo stress-ng ;;
	sort) echo coreutils ;;
	python-*) echo python3 ;;
	perl-*) echo perl ;;
	7za) echo p7zip-full ;;
	cxx-*) echo g++ ;;
	gm) echo graphicsmagick ;;
	*) echo "${1%%-*}" ;;
	esac
}

now() { echo "$EPOCHREALTIME"; }

# The output to compare: a program's own, but sysbench's without its timings and rates,
# stress-ng's log without its pids and times (each differs from run to run, natively too;
# past a minute stress-ng adds the length in words: "in 225.46s (3 mins, 45.46 secs)").
normalize() {
	case $1 in
	sysbench-*)
		sed -E 's/ \( *[0-9.]+ (per second|MiB\/sec)\)//' "$2" |
			grep -vE 'time|Latency|min:|avg:|max:|percentile|sum:|fairness|events \(avg' ;;
	stress-*) sed -E 's/\[[0-9]+\]//; s/ in [0-9.]+s( \([0-9][^)]*\))?/ in Ns/' "$OUT/sng.log" ;;
	# index-pack prints the pack's name; what its threads made is the index.
	git-index-pack) cat "$2" && sha1sum < "$OUT/ip.idx" ;;
	# Its delta search differs from run to run with two threads: the objects the pack holds.
	git-pack-objects)
		rm -f "$OUT/po.idx" && git index-pack -o "$OUT/po.idx" "$2" > /dev/null &&
			git show-index < "$OUT/po.idx" | awk '{ print $2 }' | sort ;;
	*) cat "$2" ;;
	esac
}

# serve PROGRAM PID: wait for the server (run by PID, itself or its parent) to listen, load
# it, stop it with SIGTERM; the load's replies on stdout.  Returns 1 when it never listened.
serve() {
	local p=$1 pid=$2 port=$MC_PORT load="$HERE/mc_load.py" args="4 ${KCSAND_MC_ROUNDS:-2000}"
	local name=memcached server i

	if [[ $p == redis* ]]; then
		port=$RD_PORT load="$HERE/redis_load.py" args="8 ${KCSAND_REDIS_ROUNDS:-300}"
		name=redis-server
	fi
	for ((i = 0; i < 1200; i++)); do
		python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 1)" \
			2> /dev/null && break
		sleep 0.1
	done
	((i < 1200)) || return 1
	# shellcheck disable=SC2086
	python3 $load "$port" $args 2> "$OUT/$p.load.err"
	server=$(pgrep -P "$pid" -x "$name" || echo "$pid")
	kill -TERM "$server"
}

is_server() { [[ $1 == memcached* || $1 == redis* ]]; }

# run_native PROGRAM CMD...: the program natively; its status in nrc.
run_native() {
	local p=$1
	shift
	rm -f "$OUT/sng.log" "$OUT/ip.idx"
	if is_server "$p"; then
		"$@" > "$OUT/$p.native.err" 2>&1 < /dev/null &
		serve "$p" $! > "$OUT/$p.native"
		wait $!
	else
		# Its CPU time too, children's included, for the slow warning's check.
		/usr/bin/time -f '%U %S' -o "$OUT/$p.native.time" \
			"$@" > "$OUT/$p.native" 2> "$OUT/$p.native.err" < /dev/null
	fi
	nrc=$?
	normalize "$p" "$OUT/$p.native" > "$OUT/$p.native.cmp"
}

# run_kcsand PROGRAM CMD...: the same under kcsanctl run; its status in krc.
run_kcsand() {
	local p=$1 ctl
	shift
	rm -f "$OUT/sng.log" "$OUT/ip.idx"
	# shellcheck disable=SC2046
	set -- timeout -k 10 1800 "$CTL" run -v --stats "$OUT/$p.stats" $(objects_for "$p") -- "$@"
	if is_server "$p"; then
		"$@" > "$OUT/$p.log" 2>&1 < /dev/null &
		ctl=$!
		serve "$p" "$(pgrep -P "$ctl" -x kcsanctl || echo "$ctl")" > "$OUT/$p.kcsand"
		wait "$ctl"
	else
		"$@" > "$OUT/$p.kcsand" 2> "$OUT/$p.log" < /dev/null
	fi
	krc=$?
	normalize "$p" "$OUT/$p.kcsand" > "$OUT/$p.kcsand.cmp"
}

# run_service PROGRAM CMD...: kcsand the service, with the server as its target; the
# server's status in krc, the service's in src.  Reports and the summary land in the log.
run_service() {
	local p=$1 spid i
	shift
	export KCSAND_SOCKET=$OUT/kcsand.sock
	: > "$OUT/$p.conf"
	[[ $p == redis* ]] && echo "target user $(readlink -f "$1")" > "$OUT/$p.conf"
	rm -f "$OUT/$p.log" "$KCSAND_SOCKET"
	"$KCSAND" -c "$OUT/$p.conf" --foreground --socket "$KCSAND_SOCKET" --log "$OUT/$p.log" \
		-v 2> "$OUT/$p.stats" &
	DPID=$!
	for ((i = 0; i < 600; i++)); do
		"$CTL" status > /dev/null 2>&1 && break
		sleep 0.1
	done
	"$@" > "$OUT/$p.server.err" 2>&1 < /dev/null &
	spid=$!
	if [[ $p == memcached* ]]; then
		# A running process, as a user probes one in production.
		sleep 0.5
		"$CTL" probe add user "$1" --pid "$spid" >> "$OUT/$p.stats" 2>&1
	fi
	serve "$p" "$spid" > "$OUT/$p.kcsand"
	wait "$spid"
	krc=$?
	kill -TERM "$DPID"
	wait "$DPID"
	src=$?
	DPID=
	# The service's log is the reports; its -v lines, then its summary, in $p.stats.
	cat "$OUT/$p.stats" >> "$OUT/$p.log"
	cp "$OUT/$p.kcsand" "$OUT/$p.kcsand.cmp"
}

# figures PROGRAM T0 T1 T2: one line of the table.
figures() {
	local p=$1 from sites decode cpu
	from=$(grep -oE 'functions from .*' "$OUT/$p.log" | sed 's/functions from //' | sort -u |
		paste -sd+)
	sites=$(grep -m1 -oE '[0-9]+ sites,' "$OUT/$p.stats" | grep -oE '[0-9]+')
	decode=$(grep -oE 'decoded [0-9]+ sites in [0-9.]+ ms' "$OUT/$p.log" |
		awk '{ t += $5 } END { print t }')
	cpu=$(awk -v c="$(summary_value cpu_ms "$OUT/$p.stats")" \
		-v n="$(summary_value native_cpu_ms "$OUT/$p.stats")" \
		'BEGIN { if (n > 0) printf "%.0f%%", (c - n) * 100 / n; else print "?" }')
	awk -v p="$p" -v f="${from:-?}" -v s="${sites:-?}" -v d="${decode:-?}" -v a="$2" \
	    -v b="$3" -v c="$4" -v o="${cpu:-?}" 'BEGIN {
		printf "%-17s %-20s %6s %9s %8.2f %8.2f %6.1f %8s\n", p, substr(f, 1, 20), s, d,
			b - a, c - b, (c - b) / (b - a), o }'
	echo "$sites" > "$OUT/$p.sites"
}

# says_slow_measured PROGRAM: the slow warning against the CPU time measured rather
# than kcsand's estimate of the native part (an estimate once read 33% for a run 181 times
# as long): the targets' cpu_ms under kcsand (/proc's ticks) over the native run's
# (GNU time, at least a tick).  Past 9x (the warning's 3x, give or take a factor of 3 for
# the estimate), the summary must say so.
says_slow_measured() {
	local p=$1 kcpu measured

	[[ -s $OUT/$p.native.time ]] || return 0
	kcpu=$(summary_value cpu_ms "$OUT/$p.stats")
	# Its last line: GNU time puts "Command exited with non-zero status N" first.
	measured=$(tail -n 1 "$OUT/$p.native.time" | awk -v k="${kcpu:-0}" '{
		n = ($1 + $2) * 1000; if (n < 10) n = 10; print int(k / n) }')
	((${measured:-0} >= 9)) || return 0
	if grep -qE 'the program ran [0-9]+x its native CPU time' "$OUT/$p.log"; then
		ok "${p}_says_slow_measured" "${measured}x measured"
	else
		fail "${p}_says_slow_measured" "${measured}x its native CPU time measured \
(cpu_ms $kcpu), and no warning in $OUT/$p.log"
	fi
}

# worker_stacks PROGRAM: every stack of an access by a thread other than the process's
# first (task != the footer's PID) ends with start_thread then __clone3, where a thread
# begins: Debian's programs and libraries have no frame pointers, so only the CFI unwind
# gets there (issue 22, item 3).  No such access reported: nothing to check.
worker_stacks() {
	local p=$1 got

	got=$(awk '
		/^BUG: KCSAN: / { n = 0; delete tid; delete a; delete b; next }
		/ (to|of) 0x[0-9a-f]+ of [0-9]+ bytes by task [0-9]+ on cpu/ {
			t = $0; sub(/.* by task /, "", t); sub(/ .*/, "", t); tid[++n] = t; next }
		n && /^ [^ ]/ { f = $1; sub(/\+0x.*/, "", f); a[n] = b[n]; b[n] = f; next }
		/^CPU: [0-9]+ PID: [0-9]+ / {
			for (i = 1; i <= n; i++) if (tid[i] != $4) {
				w++; if (a[i] != "start_thread" || b[i] != "__clone3") { bad++; ex = a[i] " " b[i] } }
			n = 0 }
		END { printf "%d %d %s\n", w, bad, ex }' "$OUT/$p.log")
	read -r w bad ex <<< "$got"
	((${w:-0} > 0)) || return 0
	if ((${bad:-0} == 0)); then
		ok "${p}_worker_stacks_reach_clone3" "$w worker stacks"
	else
		fail "${p}_worker_stacks_reach_clone3" "$bad of $w worker stacks end elsewhere (e.g. ...$ex)"
	fi
}

# checks PROGRAM: harm (output, exit status), the slow warning, sites; then the titles.
checks() {
	local p=$1 reports sites factor
	reports=$(grep -c '^BUG: KCSAN: ' "$OUT/$p.log")
	sites=$(cat "$OUT/$p.sites")
	if cmp -s "$OUT/$p.native.cmp" "$OUT/$p.kcsand.cmp" && [[ -s $OUT/$p.native.cmp ]]; then
		ok "${p}_output_identical"
	else
		fail "${p}_output_identical" "the output under kcsand differs from the native run's \
(or is empty): diff $OUT/$p.native.cmp $OUT/$p.kcsand.cmp"
	fi
	if [[ $krc == "$nrc" || ($nrc == 0 && $krc == 66 && $reports -gt 0) ]]; then
		ok "${p}_exit_status" "$nrc native, $krc under kcsand, $reports reports"
	else
		fail "${p}_exit_status" "native $nrc, under kcsand $krc with $reports reports"
	fi
	[[ $p == *-service ]] && check "${p}_service_stopped" 0 "$src"
	factor=$(awk -v c="$(summary_value cpu_ms "$OUT/$p.stats")" \
		-v n="$(summary_value native_cpu_ms "$OUT/$p.stats")" \
		'BEGIN { print (n > 0 && c >= 3 * n) ? int(c / n) : 0 }')
	if ((${factor:-0} >= 3)) && ! grep -qE 'the program ran [0-9]+x its native CPU time' \
		"$OUT/$p.log"; then
		fail "${p}_says_slow" "${factor}x its native CPU time, and no warning in $OUT/$p.log"
	elif ((${factor:-0} >= 3)); then
		ok "${p}_says_slow" "${factor}x"
	fi
	says_slow_measured "$p"
	worker_stacks "$p"
	if [[ ${sites:-0} -gt 0 ]]; then
		ok "${p}_sites_found"
	else
		fail "${p}_sites_found" "no site decoded (see $OUT/$p.log)"
	fi
	grep '^BUG: KCSAN: ' "$OUT/$p.log" | sort | uniq -c | sort -k1nr | sed 's/^/     /'
}

printf '%-17s %-20s %6s %9s %8s %8s %6s %8s\n' program functions_from sites decode_ms \
	native_s kcsand_s ratio overhead
for p in $PROGS; do
	cmd=$(command_for "$p")
	if [[ -z $cmd ]]; then
		fail "$p" "unknown program (one of: $(echo $ALL))"
		continue
	fi
	if ! prepare "$p"; then
		fail "$p" "could not make its input or build it (see above)"
		continue
	fi
	if [[ ! -x ${cmd%% *} ]]; then
		fail "$p" "${cmd%% *} is not installed (apt-get install $(package_of "$p"))"
		continue
	fi
	t0=$(now)
	# shellcheck disable=SC2086
	run_native "$p" $cmd
	t1=$(now)
	if [[ $p == *-service ]]; then
		# shellcheck disable=SC2086
		run_service "$p" $cmd
	else
		# shellcheck disable=SC2086
		run_kcsand "$p" $cmd
	fi
	t2=$(now)
	figures "$p" "$t0" "$t1" "$t2"
	checks "$p"
done
finish
