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

# no_kprobe_left DIR: the guest's kprobe list, saved in DIR/kprobes-after.txt once
# kcsand or kcsanctl was gone, is empty.
no_kprobe_left() {
	if [ ! -f "$1/kprobes-after.txt" ]; then fail no_kprobe_left "the guest never wrote kprobes-after.txt"
	elif [ -s "$1/kprobes-after.txt" ]; then
		fail no_kprobe_left "kprobes still registered: $(head -3 "$1/kprobes-after.txt" | tr '\n' ';')"
	else ok no_kprobe_left; fi
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
