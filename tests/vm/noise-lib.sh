# SPDX-License-Identifier: GPL-2.0-only
#
# KCSAN's noise rules on a stock kernel, each silent (docs/marking.md, "Kernel"): the run
# and its checks, shared by tests/vm/kernel-noise.sh (the suite alone, which can run an
# older kcsanctl to see it fail) and tests/vm/kernel-safety.sh (make check's: the run is
# its cache step, which marks from the vmlinux's DWARF anyway).
#
#   . tests/vm/noise-lib.sh
#   guest:  noise_rules KCSANCTL SECS [ARG...] > LOG 2>&1   the rules' run (ARG: more options)
#           noise_cached KCSANCTL [ARG...] > LOG 2>&1       the same sites again, from the cache
#   host:   noise_setup DIR                                 what the guest needs, before the boot
#           noise_checks RULES_LOG CACHED_LOG JIFFIES_SYM    the rules' checks (tests/lib.sh)
#
# One run, -vv (each site's verdict and the first check of each site), code-breakpoint
# sampling over the three rules' code, with their three workloads at once, for SECS:
#   - jiffies: TCP's per-segment readers of jiffies (tcp_ack, tcp_write_xmit,
#     cubictcp_cong_avoid) and __mod_timer around loopback TCP (kworkload net): jiffies
#     is declared volatile but defined by the linker at jiffies_64, a plain u64; the
#     reads are marked by the qualifier rule (volatile jiffies).  jiffies ticks every
#     4 ms, so a 300 us stall at a plain read of it sees a new value about one time in
#     13: without the rule the reads are reported as races of unknown origin;
#   - seqcount sections: the timekeeper's readers (ktime_get*, inside tk_core.seq's read
#     sections) and writer (timekeeping_advance) around stress-ng's futex, signal, socket
#     pair and io_uring stressors (tests/vm/workload/stress.sh stress-ipc), which read
#     the clock for their timeouts: sites marked by the seqcount rule (each tick's update
#     changes what a stalled read sees: without the rule they are reported);
#   - RCU list macros: the dentry cache's hash walks (__d_lookup_rcu, __d_lookup), whose
#     hlist_bl_for_each_entry_rcu() loads through rcu_dereference_raw() inside the macro,
#     around kworkload fs.
# Each rule's positive control (a site of its functions ran and was checked) does not
# depend on the sampler's cycle: NOISE_PIN's functions are pinned (--pin, kbp.h), on a
# register of their own, at a fixed 2 ms tick, so each of their sites that runs is
# placed within a few hundred ms.  Before the pin the dentry walks' 25 sites of 941
# were checked 3-7 times in a 12 s run, and a run with 0 would have failed.

NOISE_FUNCS="tcp_ack tcp_write_xmit cubictcp_cong_avoid __mod_timer ktime_get ktime_get_ts64
	ktime_get_real_ts64 ktime_get_update_offsets_now timekeeping_advance __d_lookup_rcu
	__d_lookup"
# A function or two of each rule, hot under its workload, small enough that the pinned
# register comes round each of their sites in well under a second.
NOISE_PIN="__mod_timer,ktime_get,__d_lookup_rcu"
NOISE_VMLINUX=/usr/lib/debug/boot/vmlinux-$(uname -r)
NOISE_SRC=/usr/src/linux-source-6.1

# noise_probes: NOISE_PROBES, a --probe for each function (no process substitution:
# the guest has no /dev/fd).
noise_probes() {
	local f

	NOISE_PROBES=()
	for f in $NOISE_FUNCS; do
		NOISE_PROBES+=(--probe "$f")
	done
}

# noise_rules KCSANCTL SECS [ARG...]: in the guest, from the repository's top directory.
noise_rules() {
	local ctl=$1 secs=$2

	shift 2
	noise_probes
	"$ctl" run --kernel -vv --output - --kernel-debug "$NOISE_VMLINUX" --source-dir "$NOISE_SRC" \
		--sample breakpoints --sample-period 2000 --pin "$NOISE_PIN" --udelay-task 300 \
		"${NOISE_PROBES[@]}" "$@" -- sh -c \
		"\"\$1\" net \"\$2\" & \"\$3\" stress-ipc \"\$2\" & \"\$1\" fs \"\$2\" & wait" \
		rules build/vm/kworkload "$secs" tests/vm/workload/stress.sh
}

# noise_cached KCSANCTL [ARG...]: the same sites, at once: every verdict from the cache.
noise_cached() {
	local ctl=$1

	shift
	noise_probes
	"$ctl" run --kernel -v --output - --kernel-debug "$NOISE_VMLINUX" --source-dir "$NOISE_SRC" \
		--sample breakpoints "${NOISE_PROBES[@]}" "$@" -- true
}

# noise_setup DIR: on the host: the vmlinux's DWARF (859 MB download), the kernel's
# sources (139 MB, 1.3 GB unpacked) and stress-ng (the guest runs the host's), installed
# when missing (apt's log in DIR), and kworkload built when stale.  The caller holds
# vm_prepare_lock (tests/vm/suite-lib.sh): the other guest queue's suites install with
# apt-get and build build/vm/kworkload too (kernel-scale.sh).
noise_setup() {
	local kver

	kver=$(guest_kver)
	[ -n "$kver" ] || setup_fail "linux-image-amd64 is not installed (tests/vm/kcsan-vm installs it)"
	if [ ! -r "/usr/lib/debug/boot/vmlinux-$kver" ]; then
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "linux-image-$kver-dbg" \
			> "$1/apt.log" 2>&1 ||
			setup_fail "cannot install linux-image-$kver-dbg (see $1/apt.log)"
	fi
	if [ ! -d "$NOISE_SRC/fs" ]; then
		{ DEBIAN_FRONTEND=noninteractive apt-get install -y -qq linux-source-6.1 &&
		  tar -C /usr/src -xaf /usr/src/linux-source-6.1.tar.xz; } >> "$1/apt.log" 2>&1 ||
			setup_fail "cannot install and unpack linux-source-6.1 (see $1/apt.log)"
	fi
	if ! command -v stress-ng > /dev/null; then
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq stress-ng >> "$1/apt.log" 2>&1 ||
			setup_fail "cannot install stress-ng (see $1/apt.log)"
	fi
	if vm_stale build/vm/kworkload tests/vm/workload/kworkload.c; then
		gcc -O2 -Wall -pthread tests/vm/workload/kworkload.c -o build/vm/kworkload ||
			setup_fail "cannot build kworkload"
	fi
}

# noise_marked LOG RE REASON DETAIL_RE: the sites of the functions RE matches whose -vv
# verdict is REASON, with a detail DETAIL_RE matches.
noise_marked() {
	grep -cE "^kcsand: mark: ($2)\+0x[0-9a-f]+ \(0x[0-9a-f]+\) [^ ]+: (data_race, )?$3: ($4)\$" "$1"
}

# noise_checked LOG RE: how many sites of the functions RE matches were checked while
# sampled (-vv: "0xADDR checked for the first time"; -v: "site [kernel] 0xADDR FUNC+0xOFF").
noise_checked() {
	awk -v re="^($2)\\\\+0x" '
		/^kcsand: site \[kernel\] 0x[0-9a-f]+ / { if ($5 ~ re) fn[$4] = 1 }
		/^kcsand: breakpoints: 0x[0-9a-f]+ checked for the first time/ { if ($3 in fn) n++ }
		END { print n + 0 }' "$1"
}

# noise_rule NAME LOG FUNCS_RE MARKED MIN WHAT: the rule marked MARKED sites, at least MIN,
# and, its positive control, a site of FUNCS_RE was checked.
noise_rule() {
	local chk

	chk=$(noise_checked "$2" "$3")
	if [ "$4" -ge "$5" ] && [ "$chk" -gt 0 ]; then
		ok "$1"
		echo "     $4 sites marked $6; $chk sites checked"
	else
		fail "$1" "expected >= $5 sites marked $6 and probed code that ran and was checked; got $4, $chk sites checked"
	fi
}

# noise_pinned LOG: the pinned sites were placed and checked (--pin's own test).
noise_pinned() {
	local line

	line=$(grep -m1 '^kcsand: breakpoints: pinned sites, at the end:' "$1")
	if [[ $line =~ ([0-9]+)\ checked,\ of\ ([0-9]+)\;\ ([0-9]+)\ placements ]] &&
	   [ "${BASH_REMATCH[1]}" -gt 0 ]; then
		ok noise_sites_pinned
		echo "     ${line#kcsand: breakpoints: }"
	else
		fail noise_sites_pinned "expected the pinned sites ($NOISE_PIN) checked, got '${line:-no line}'"
	fi
}

# noise_checks RULES_LOG CACHED_LOG JIFFIES_SYM: on the host, the guest's files.
noise_checks() {
	local L=$1 C=$2 addr at line cache n

	noise_pinned "$L"
	# (1) jiffies: the reads marked, and no report at its address.
	n=$(noise_marked "$L" 'tcp_ack|tcp_write_xmit|cubictcp_cong_avoid|__mod_timer' qualifier \
		'volatile jiffies')
	noise_rule jiffies_reads_marked "$L" 'tcp_ack|tcp_write_xmit|cubictcp_cong_avoid|__mod_timer' \
		"$n" 1 "by qualifier (volatile jiffies)"
	addr=$(awk '$3 == "jiffies" { print $1 }' "$3" 2>/dev/null)
	at=$(grep -ciE "(read|write)[a-z() -]* to 0x${addr:-none} of " "$L")
	if [ -n "$addr" ] && [ "$at" = 0 ]; then
		ok jiffies_silent
	else
		fail jiffies_silent "expected no access at jiffies (0x${addr:-unknown}) in a report, got $at: $(report_titles "$L")"
	fi
	report_titles "$L" | tr ';' '\n' | sed '/^$/d; s/^/     /'
	# The verdicts were cached on the host: a second run took them all from there, and
	# the file is still there after the guest is gone (the next boot reads it).
	line=$(grep -m1 -E "sites' verdicts from the cache" "$C" 2>/dev/null)
	cache=$(sed -nE "s/.* from the cache (.*)$/\1/p" <<< "$line")
	if [[ $line =~ ([0-9]+)\ of\ ([0-9]+)\ sites ]] && [ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ] &&
	   [ "${BASH_REMATCH[2]}" -gt 0 ] && [ -s "build/vm/kcsand-cache/$(basename "${cache:-none}")" ]; then
		ok verdict_cache_kept
		echo "     ${BASH_REMATCH[1]} of ${BASH_REMATCH[2]} verdicts from $(basename "$cache"), kept on the host"
	else
		fail verdict_cache_kept "expected every verdict of the second run from the cache, and the file on the host under build/vm/kcsand-cache; got '${line:-no line}'"
	fi
	# (2) seqcount sections: sites the seqcount rule marked (its detail, the section's
	# helper: no accessor of the inline accessor rule's table has "seq" in its name).
	n=$(noise_marked "$L" 'ktime_get[a-z0-9_]*|timekeeping_advance' 'inline accessor' \
		'[a-z_]*seq[a-z_]*')
	noise_rule seqcount_sections_marked "$L" 'ktime_get[a-z0-9_]*|timekeeping_advance' "$n" 1 \
		"in the timekeeper's seqcount sections"
	line=$(grep -E '^BUG: KCSAN: .*(ktime_get|timekeeping_advance)' "$L" | sort | uniq -c | tr '\n' ';')
	[ -z "$line" ] && ok seqcount_silent || fail seqcount_silent "reports in the timekeeper's sections: $line"
	grep -m1 -E 'stress-ng: (info|metrc).*(successful|passed|skipped)' "$L" | sed 's/^/     /'
	# (3) RCU list macros: the loads of hlist_bl_for_each_entry_rcu()'s own line are
	# marked by it, and the walks are not reported.
	n=$(grep -cE '^kcsand: mark: __d_lookup(_rcu)?\+0x[0-9a-f]+ .*dcache\.c:[0-9]+:[0-9]+: source macro: hlist_bl_for_each_entry_rcu$' "$L")
	noise_rule rculist_loads_marked "$L" '__d_lookup_rcu|__d_lookup' "$n" 2 \
		"by hlist_bl_for_each_entry_rcu"
	line=$(grep -E '^BUG: KCSAN: .*__d_lookup' "$L" | sort | uniq -c | tr '\n' ';')
	[ -z "$line" ] && ok rculist_silent || fail rculist_silent "reports in the hash walks: $line"
}
