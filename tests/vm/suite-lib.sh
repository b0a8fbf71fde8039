# SPDX-License-Identifier: GPL-2.0-only
#
# Shared by the guest suites (tests/vm/*.sh that boot tests/vm/kcsan-vm and check
# its files): result lines, the checks that every suite ends with, and the
# extraction of reports from a log (also in the guest: daemon-kernel-guest.sh).
#
#   . tests/vm/suite-lib.sh
#
# Results through tests/lib.sh ("ok   NAME", "FAIL NAME: ...", setup_fail, finish).

. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

# vm_suite_start NAME [FILE...]: every guest suite's preamble: root, the built files it
# needs (build/kcsanctl when none is named), and $out, a new directory
# build/vm/NAME.XXXXXX for the run's files (build/vm exists only once kcsan-vm ran:
# without the mkdir, $out would be empty and the files would land in /).  Sets
# $vm_start, which guest_ran counts from.
vm_suite_start() {
	local name=$1 f

	shift
	[ "$(id -u)" = 0 ] || setup_fail "must run as root (QEMU guest with kprobes)"
	for f in "${@:-build/kcsanctl}"; do
		[ -x "$f" ] || setup_fail "$f missing (run make all scenario-programs)"
	done
	out=$(mkdir -p build/vm && mktemp -d "$PWD/build/vm/$name.XXXXXX") ||
		setup_fail "cannot create a directory under build/vm"
	vm_start=$(date +%s)
}

# vm_prepare_lock / vm_prepare_unlock: around what a suite installs (apt-get) or builds into
# build/vm for its guest, so that the suites of tests/vm/run-suites.sh's two queues neither run
# apt-get at once nor rewrite a helper the other's guest is running; kcsan-vm takes the same
# lock around its own preparation.
vm_prepare_lock() { exec 8>build/vm/.prepare.lock && flock 8; }
vm_prepare_unlock() { exec 8>&-; }

# vm_stale OUT SRC...: OUT is missing or older than one of the SRCs (build it again).
vm_stale() {
	local out=$1 src

	shift
	[ -e "$out" ] || return 0
	for src; do [ "$src" -nt "$out" ] && return 0; done
	return 1
}

# vm_check_arg ARG...: "--check DIR" (a suite's first arguments) re-checks the kept files
# of an earlier run in DIR, with no guest: sets $out and $check_only; false otherwise.
vm_check_arg() {
	[ "${1:-}" = --check ] && [ -d "${2:-}" ] || return 1
	out=$2
	check_only=1
}

# guest_kver: the version of the kernel linux-image-amd64 depends on ("" if none).
guest_kver() {
	dpkg-query -W -f='${Depends}' linux-image-amd64 2>/dev/null | grep -oE 'linux-image-[^ ,]+' |
		head -1 | sed 's/^linux-image-//'
}

# guest_ran RC: the guest run's line: its seconds and status, and where the seconds
# went (guest_times), for the log.
guest_ran() {
	echo "     (guest run: $(( $(date +%s) - vm_start )) s, exit status $1; files in $out)"
	guest_times "$out"
}

# guest_times DIR: where a guest run's seconds went, from the files kcsan-vm and the
# guest leave in DIR: the lock's wait and QEMU's run (harness.err, if the suite kept
# kcsan-vm's stderr there), the guest's uptime at /init, at each stage of guest.sh
# (stages) and around the probe step (probe-uptime), and each step of a steps script
# (step-times, tests/vm/steps-lib.sh).
guest_times() {
	local d=$1 lock qemu init stages probe steps

	lock=$(sed -n 's/^kcsan-vm: waited \([0-9.]*\) s for the lock.*/\1/p' "$d/harness.err" 2>/dev/null)
	qemu=$(sed -n 's/^kcsan-vm: guest run \([0-9.]*\)s .*/\1/p' "$d/harness.err" 2>/dev/null)
	read -r init _ 2>/dev/null < "$d/init-uptime"
	stages=$(awk '{ printf "%s%s %s", n++ ? ", " : "", $1, $2 }' "$d/stages" 2>/dev/null)
	probe=$(awk '{ printf "%.1f", $2 - $1 }' "$d/probe-uptime" 2>/dev/null)
	steps=$(awk '{ t = $NF; $NF = ""; printf "%s%s%s", n++ ? ", " : "", $0, t }' "$d/step-times" 2>/dev/null)
	echo "     (times: lock wait ${lock:-0} s, QEMU ${qemu:-?} s; guest uptime at /init ${init:-?} s," \
		"stages: ${stages:-none}; probe step ${probe:-?} s)"
	[ -z "$steps" ] || echo "     (steps, s: $steps)"
}

# step_status STEP: the exit status steps.rc recorded for STEP (the last word of its
# line: STEP may hold spaces, "bad 0x1000"); nothing if it never ran.
step_status() {
	awk -v s="$1" '{ st = $NF; $NF = ""; sub(/ $/, ""); if ($0 == s) print st }' \
		"$out/steps.rc" 2>/dev/null
}

# step_rc NAME STEP EXPECTED: the exit status steps.rc recorded for STEP is EXPECTED.
step_rc() {
	local got

	got=$(step_status "$2")
	[ "$got" = "$3" ] && ok "$1" || fail "$1" "step $2 exited ${got:-never ran}, expected $3"
}

# no_kprobe_left DIR: the guest's kprobe list, saved in DIR/kprobes-after.txt once
# kcsand or kcsanctl was gone, is empty.
no_kprobe_left() {
	if [ ! -f "$1/kprobes-after.txt" ]; then fail no_kprobe_left "the guest never wrote kprobes-after.txt"
	elif [ -s "$1/kprobes-after.txt" ]; then
		fail no_kprobe_left "kprobes still registered: $(head -3 "$1/kprobes-after.txt" | tr '\n' ';')"
	else ok no_kprobe_left; fi
}

# kernel_settings_kept DIR: the guest's kprobes-optimization and rcu_expedited settings,
# saved in DIR/kprobes-optimization.txt and DIR/rcu-expedited.txt before and after the
# probe step, are what they were: kcsand turns the first off while many kprobes attach
# and detach, and the second on while they detach (daemon/engine/kprobe_opt.c).
kernel_settings_kept() {
	local name file before after

	for name in kprobe_optimization_kept:kprobes-optimization rcu_expedited_kept:rcu-expedited; do
		file=${name#*:} name=${name%%:*}
		before= after=
		read -r before after 2>/dev/null < "$1/$file.txt"
		if [ -z "${before:-}" ] || [ "$before" = none ]; then
			fail "$name" "the guest saved no $file setting"
		elif [ "$before" != "${after:-}" ]; then
			fail "$name" "$file was $before before the run, ${after:-nothing} after"
		else ok "$name"; fi
	done
}

# no_bpf_link_left DIR [NAME]: what bpftool listed once the runs were over,
# saved in DIR/bpf-after.txt, is empty: no link, no perf event of kcsand's left.
no_bpf_link_left() {
	local name=${2:-no_bpf_link_left}

	if [ -f "$1/bpf-after.txt" ] && [ ! -s "$1/bpf-after.txt" ]; then ok "$name"
	else fail "$name" "bpftool after the runs: $(head -5 "$1/bpf-after.txt" 2>/dev/null | tr '\n' ';')"; fi
}

# no_kernel_warning DIR: the guest's dmesg (DIR/dmesg.txt) was collected and has no
# lockup, stall, hung task, oops, warning or BUG other than KCSAN-format reports.
no_kernel_warning() {
	local warn

	warn=$(grep -E "soft lockup|self-detected stall|rcu_sched detected|rcu: INFO|hung_task|blocked for more than|BUG:|Oops|WARNING:" \
		"$1/dmesg.txt" 2>/dev/null | grep -v "BUG: KCSAN" | head -5)
	if [ -z "$warn" ] && [ -s "$1/dmesg.txt" ]; then ok no_kernel_warning
	else fail no_kernel_warning "${warn:-no dmesg collected}"; fi
}

# finish_suite DIR: the result line; DIR, the run's files, removed when every check
# passed unless KCSAND_VM_KEEP (or check_only, a re-check of kept files) is set; the
# suite's exit status.
finish_suite() {
	[ "$failed" = 0 ] && [ -z "${KCSAND_VM_KEEP:-}${check_only:-}" ] && rm -rf "$1"
	finish
}

# report_block FILE TITLE: the first report in FILE whose title line is
# "BUG: KCSAN: TITLE", from that line to its closing separator; nothing if none.
report_block() {
	awk -v t="BUG: KCSAN: $2" '
		/^==================================================================$/ { if (keep) { print buf; exit } buf = ""; keep = 0; next }
		{ buf = buf $0 "\n"; if ($0 == t) keep = 1 }' "$1"
}

# report_titles FILE: each report title in FILE (-: stdin) with its count, on one line, for
# a failure message.
report_titles() { grep 'BUG: KCSAN' "$1" 2>/dev/null | sort | uniq -c | tr '\n' ';'; }
