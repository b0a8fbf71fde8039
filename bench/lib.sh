# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# What every benchmark shares, so that each script is only its question: where
# the build is, what it needs, how a program runs under kcsanctl, how a ratio
# and a summary read, and where a guest run keeps its files.
#
#   . "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
#   bench_init NAME "${1:-}" [root]
#
# bench_init NAME BUILD_DIR [root]
#	NAME begins every message.  B is BUILD_DIR (default: the tree's build/),
#	made absolute; REPO is the source tree, the working directory from then
#	on; KCSANCTL_RUN is the command that runs a program under kcsand:
#	"${KCSANCTL_RUN[@]}" OPTION... -- PROG ARG... (an array, so that time(1)
#	and timeout(1) can run it).  With root, a run by another user stops with
#	exit status 2.
# bench_need FILE...	each must be executable, else it says which and exits 2
# bench_die WHY		"NAME: WHY" on stderr, exit status 2
# median		the median of the numbers on stdin, any white space between
# elapsed T0 [T1]	seconds from T0 to T1 (default: now), both $EPOCHREALTIME
# ratio A B		A / B to two decimals, "-" when B is 0
# ratio_line WHAT A B [TARGET]	"  ratio WHAT: A/B (target TARGET)"
# summary_line FILE	the first summary line of a kcsanctl run's stderr
# first_line PATTERN STAMP	stdin to stdout, the time of the first line
#			matching PATTERN written to STAMP
# vm_out NAME		a new directory build/vm/NAME.XXXXXX for a guest run's files
# kernel_debug		the stock kernel's vmlinux with debug info (linux-image-*-dbg)
# guest_log DIR		lockups, stalls, warnings and BUGs in the guest's kernel log
# vm_monitor OUT		QEMU's monitor on each CPU and local APIC once the guest stalls
# probe_args ARG...	a guest step's kcsan-vm arguments up to "--": --duration S into
#			secs (unchanged without it), the others (--probe SPEC...) into args

BENCH_NAME=bench

bench_die() {
	echo "$BENCH_NAME: $*" >&2
	exit 2
}

bench_init() {
	BENCH_NAME=$1
	B=$(cd "${2:-$(dirname "${BASH_SOURCE[0]}")/../build}" 2>/dev/null && pwd) ||
		bench_die "no build directory ${2:-build}: run make"
	# shellcheck disable=SC2034 # used by the scripts that source this file
	KCSANCTL_RUN=("$B/kcsanctl" run)
	REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
	cd "$REPO" || exit 2
	if [[ ${3:-} == root && $(id -u) != 0 ]]; then
		bench_die "must run as root (BPF, uprobes, perf events, or the QEMU guest)"
	fi
}

bench_need() {
	local f

	for f in "$@"; do
		[[ -x $f ]] || bench_die "$f missing: run 'make bench-programs'"
	done
}

median() {
	tr -s ' \t' '\n\n' | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

elapsed() {
	awk -v a="$1" -v b="${2:-$EPOCHREALTIME}" 'BEGIN { printf "%.2f", b - a }'
}

ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 == 0) print "-"; else printf "%.2f", a / b }'
}

ratio_line() {
	echo "  ratio $1: $(ratio "$2" "$3")${4:+ (target $4)}"
}

summary_line() {
	grep -m1 '^kcsand: [0-9]* reports*, ' "$1"
}

# Used as `CMD 2> >(first_line PAT STAMP >ERR)`: it wakes only when the tool
# writes, where a loop polling the tool's output every 0.1 s forked 20
# processes a second, which took CPU from the timed program on a 2-CPU machine
# (P2 at 5 s: 6.6 s polled, 6.4 s not).
first_line() {
	local l seen=

	while IFS= read -r l; do
		if [[ -z $seen && $l =~ $1 ]]; then
			echo "$EPOCHREALTIME" >"$2"
			seen=1
		fi
		printf '%s\n' "$l"
	done
}

vm_out() {
	mkdir -p "$REPO/build/vm" && mktemp -d "$REPO/build/vm/$1.XXXXXX"
}

# vm_monitor OUT: for a guest booted with KCSAN_VM_MONITOR=OUT/monitor.sock, once its
# console shows an RCU stall or a soft lockup (a soft lockup's panic comes 27 s after the
# stall), what QEMU's monitor says of each CPU and local APIC, twice 10 s apart, into
# OUT/monitor.txt: each CPU's RIP, RSP, EFLAGS (IF), DR0-DR3 and DR7, and its APIC's ISR,
# IRR and PPR (an interrupt taken and never ended blocks every one at or below its
# priority).  Run in the background; ends at OUT/.done.
vm_monitor() {
	local n

	until [ -e "$1/.done" ]; do
		if grep -qE 'rcu: INFO|soft lockup' "$1/console.log" 2>/dev/null; then
			for n in 1 2; do
				python3 - "$1/monitor.sock" <<-'PY' >> "$1/monitor.txt" 2>&1
				import socket, sys, time
				s = socket.socket(socket.AF_UNIX)
				s.connect(sys.argv[1])
				for c in ("info registers -a", "info lapic 0", "info lapic 1"):
				    s.sendall((c + "\n").encode())
				    time.sleep(2)
				s.settimeout(2)
				out = b""
				try:
				    while True:
				        d = s.recv(65536)
				        if not d:
				            break
				        out += d
				except socket.timeout:
				    pass
				print(out.decode(errors="replace"))
				PY
				sleep 10
			done
			return
		fi
		sleep 1
	done
}

# guest_run NAME OUT TIMEOUT STEPS...: one boot of tests/vm/kcsan-vm, its probe the
# guest-side STEPS command line, with OUT's copy of kcsanctl; says how long it took and
# how kcsan-vm exited (its own status: read before anything else runs).
guest_run() {
	local name=$1 out=$2 timeout=$3 start rc

	shift 3
	cp "$B/kcsanctl" "$out/kcsanctl"
	start=$(date +%s)
	KCSAN_VM_PROBE_CMD="$*" tests/vm/kcsan-vm --out "$out" --keep --timeout "$timeout" \
		--memory 2048 --probe unused > "$out/harness.out" 2> "$out/harness.err"
	rc=$?
	echo "$name: guest run $(( $(date +%s) - start )) s, kcsan-vm exit $rc, files in $out"
}

# The kernel tests/vm/kcsan-vm boots is the one linux-image-amd64 depends on.
kernel_debug() {
	local kver

	kver=$(dpkg-query -W -f='${Depends}' linux-image-amd64 |
		sed -n 's/.*linux-image-\([^ ,]*-amd64\).*/\1/p')
	[[ -r /usr/lib/debug/boot/vmlinux-$kver ]] ||
		bench_die "/usr/lib/debug/boot/vmlinux-$kver missing: apt-get install linux-image-$kver-dbg"
	echo "/usr/lib/debug/boot/vmlinux-$kver"
}

guest_log() {
	local pat='soft lockup|rcu: INFO|self-detected stall|hung_task|WARNING:|BUG:'

	echo "== guest kernel log"
	grep -cE "$pat" "$1/dmesg.txt" 2>/dev/null | sed 's/^/lockup, stall, warning or BUG lines: /'
	grep -E "$pat" "$1/dmesg.txt" 2>/dev/null | grep -v 'BUG: KCSAN' | head -5
}

# shellcheck disable=SC2034 # args and secs are the calling script's
probe_args() {
	args=()
	while [[ $# -gt 0 && $1 != -- ]]; do
		if [[ $1 == --duration ]]; then secs=$2; shift 2; continue; fi
		args+=("$1"); shift
	done
}
