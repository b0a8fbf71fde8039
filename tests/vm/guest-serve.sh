#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The guest side of a serving guest (tests/vm/kcsan-vm, KCSAN_VM_SERVE): run by the
# initramfs's /init chrooted into the host's root, as guest.sh is for a guest of one run.
# $1 is the server's directory, shared writable at the same path as on the host.
#
# It notes what a fresh guest looks like (modules, kprobes, BPF objects, taint, settings,
# mounts, processes), writes "ready", then takes jobs one at a time: the host writes
# "job" ("ID OUT [drop]"), this writes the ID to "job.taken" (the host's sign that it started), runs
# guest.sh on OUT as a fresh guest would, checks that the job left the guest as it found
# it (OUT/reuse.txt: "ok   CHECK" or "FAIL CHECK: what is left") and writes "job.done"
# ("ID GUEST_RC ok|stop").  A job that left anything behind ends the serving: the guest
# powers off, so that the next job boots a fresh one.  It also powers off when the host
# writes "off" or "stop", or when no job came for kcsan_vm_idle seconds (from the kernel's command
# line: a guest whose host side went away must not hold the guest lock for ever).
# The job line may end with "drop": the host changed files this guest may hold in its
# caches, which it drops first.
#
# Why a job's checks are these: they are what a fresh boot gives a job for free, and what
# a job's probe command may change (kcsand places kprobes, BPF programs and links, perf
# breakpoints, and turns kprobe optimization and RCU expediting; a suite loads a module and
# takes CPUs offline).  The job's dmesg holds only its own lines: guest.sh reads the
# kernel's log and clears it (dmesg -c), and so does the check, after a line that names
# the job.

set -u
S=$1
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
idle_limit=${kcsan_vm_idle:-120}
T=/sys/kernel/tracing
# What a module load adds to the taint: O (out of tree) and E (unsigned), 1 << 12 | 1 << 13.
TAINT_MODULE=12288

say() { echo "kcsan-vm(serve): $*" > /dev/console; }
# pause S: waits S seconds (fractions too) without starting a program: sleep(1) costs 0.1 s
# of a guest CPU under TCG, and an idle guest polls for its next job five times a second.
# The coprocess (a fork of this shell, no program) never writes, so a read of its output only
# times out.
coproc PAUSE { read -r _; }
pause() { read -r -t "$1" -u "${PAUSE[0]}" _; }

# user_procs: sets now[procs] to the processes that are not kernel threads (PF_KTHREAD,
# 0x200000 in stat's flags), zombies or this script and what it started: "PID COMMAND;".
# Builtins only where it can: a program started in this guest costs 0.1-0.2 s under TCG.
user_procs() {
	local f st p q cmd
	local -A ppid=()
	local -a cand=()

	for f in /proc/[0-9]*/stat; do
		read -r st 2>/dev/null < "$f" || continue
		p=${f#/proc/} p=${p%/stat}
		# shellcheck disable=SC2086	# the fields after the command's name
		set -- ${st##*) }
		ppid[$p]=$2
		(( $7 & 0x200000 )) || [ "$1" = Z ] || [ "$p" = 1 ] || cand+=("$p")
	done
	now[procs]=
	for p in ${cand[@]+"${cand[@]}"}; do
		q=$p
		while [ "$q" != $$ ] && [ -n "${ppid[$q]:-}" ] && [ "$q" -gt 1 ]; do q=${ppid[$q]}; done
		[ "$q" = $$ ] && continue
		cmd=$(tr '\0' ' ' < "/proc/$p/cmdline" 2>/dev/null)
		now[procs]+="$p ${cmd:0:60};"
	done
}

# lines NAME FILE...: sets now[NAME] to the FILEs' lines, each ended by ";".
lines() {
	local name=$1 f line

	shift
	now[$name]=
	for f; do
		while IFS= read -r line || [ -n "$line" ]; do now[$name]+="$line;"; done < "$f"
	done 2>/dev/null
}

# snapshot: sets now[CHECK] for every CHECK to what the guest looks like.
snapshot() {
	local name _ mp type line

	now[modules]=
	while read -r name _; do now[modules]+="$name "; done < /proc/modules
	now[mounts]=
	while read -r _ mp type _; do now[mounts]+="$mp $type;"; done < /proc/mounts
	lines kprobes /sys/kernel/debug/kprobes/list
	lines trace-probes $T/kprobe_events $T/uprobe_events
	lines kopt /proc/sys/debug/kprobes-optimization
	lines rcu-expedited /sys/kernel/rcu_expedited
	lines cpus /sys/devices/system/cpu/online
	user_procs
	# Every BPF program, link and map ("ID: ..." lines), and every pin under /sys/fs/bpf.
	# Every BPF program, link and map ("ID: ..." lines; bpftool's failure too, so that a check
	# that could not look differs from a fresh guest's), in one bpftool; a here-string, not
	# <(...): the guest's /dev has no /dev/fd.
	now[bpf]=
	while IFS= read -r line; do
		[[ $line =~ ^[0-9]+:|^Error|failed ]] && now[bpf]+="${line:0:70};"
	done <<< "$(printf '%s\n' "prog show" "link show" "map show" | bpftool batch file - 2>&1 ||
		echo "bpftool batch failed")"
	# Every pin under /sys/fs/bpf, and the processes that hold a perf event (a breakpoint
	# among them) open, in one find.
	now[perf]=
	while IFS= read -r line; do
		case $line in pinned*) now[bpf]+="$line;" ;; *) now[perf]+="$line " ;; esac
	done <<< "$(find /sys/fs/bpf /proc/[0-9]*/fd -mindepth 1 -maxdepth 1 \
		\( -path '/sys/fs/bpf/*' -printf 'pinned %p\n' \) -o \
		\( -lname 'anon_inode:\[perf_event\]' -printf '%h\n' \) 2>/dev/null)"
}

CHECKS="procs modules kprobes trace-probes bpf perf kopt rcu-expedited cpus mounts"

# isolation OUT TAINT0: what the job left, one result line a check, in OUT/reuse.txt; false
# when something was left.  What is left may still be going (a process exiting, a BPF object
# or a perf event freed after it): up to 3 s for those to clear, none when something that
# does not clear by itself is left anyway.
isolation() {
	local out=$1 taint0=$2 c try bad going taint warn line

	for try in 1 2 3 4 5 6 7; do
		snapshot
		bad=0 going=0
		for c in $CHECKS; do
			[ "${now[$c]}" = "${base[$c]}" ] && continue
			case $c in procs|bpf|perf) going=1 ;; *) bad=1 ;; esac
		done
		[ $bad = 0 ] && [ $going = 1 ] && [ $try != 7 ] || break
		pause 0.5
	done
	bad=0
	for c in $CHECKS; do
		if [ "${now[$c]}" = "${base[$c]}" ]; then echo "ok   $c"
		else echo "FAIL $c: ${now[$c]:-nothing} (a fresh guest: ${base[$c]:-nothing})"; bad=1; fi
	done
	read -r taint < /proc/sys/kernel/tainted
	if (( (taint & ~TAINT_MODULE) == (taint0 & ~TAINT_MODULE) )); then echo "ok   taint"
	else echo "FAIL taint: $taint after the job, $taint0 before"; bad=1; fi
	dmesg -S -c >> "$out/dmesg.txt" 2>&1
	# tests/vm/suite-lib.sh's no_kernel_warning's lines, KCSAN's reports aside.
	warn=
	while IFS= read -r line; do
		[ -z "$line" ] || [[ $line == *"BUG: KCSAN"* ]] || warn+="${line:0:100};"
	done <<< "$(grep -m 50 -E "soft lockup|self-detected stall|rcu_sched detected|rcu: INFO|hung_task|blocked for more than|BUG:|Oops|WARNING:" \
		"$out/dmesg.txt" 2>/dev/null)"
	if [ -z "$warn" ]; then echo "ok   dmesg"; else echo "FAIL dmesg: ${warn:0:300}"; bad=1; fi
	return $bad
}

# job ID OUT: one job, as a fresh guest runs it; then its checks.  False when the guest
# must not serve again.
job() {
	local id=$1 out=$2 drop=$3 taint0 t=()

	echo "kcsan-vm: job $id ($out)" > /dev/kmsg
	stamp t
	# The host's root is shared with cache=loose: a file the host replaced or rewrote since
	# this guest read it would be read stale (a new one is looked up afresh).  The host
	# says when one may have (serve-lib.sh's serve_changed); then every cache goes.
	if [ "$drop" = drop ]; then
		sync
		echo 3 > /proc/sys/vm/drop_caches
	fi
	# A fresh guest's /tmp and /run are empty (find -xdev: not into the repository or the
	# output shares mounted below them); no program started when they are.
	local left=(/tmp/* /tmp/.[!.]* /run/* /run/.[!.]*)
	[ ${#left[@]} = 0 ] || find /tmp /run -xdev -mindepth 1 -delete 2>/dev/null
	read -r taint0 < /proc/sys/kernel/tainted
	stamp t
	# guest.sh in a subshell of this one, as a fresh guest's /init runs it but for bash's
	# start (0.3-0.7 s under TCG); what this script defines is not exported to its programs.
	(p0=${PAUSE[0]} p1=${PAUSE[1]}; exec {p0}<&- {p1}>&-; shopt -u nullglob
	 cd / && . "$kcsan_vm_repo/tests/vm/guest.sh" "$out") < /dev/null
	job_rc=$?
	echo "$job_rc" > "$out/guest.rc"
	stamp t
	isolation "$out" "$taint0" > "$out/reuse.txt" 2>&1
	local rc=$?
	stamp t
	# Where a job's seconds went in the guest: taken, started, guest.sh over, checked.
	echo "${t[*]} ${drop:-keep}" > "$out/serve-times"
	return $rc
}

# stamp ARRAY: appends the guest's uptime to ARRAY.
stamp() { local -n a=$1; local up _; read -r up _ < /proc/uptime; a+=("$up"); }

declare -A base now
snapshot
for c in $CHECKS; do base[$c]=${now[$c]}; echo "$c: ${base[$c]}"; done > "$S/fresh.txt"
read -r up _ < /proc/uptime
echo "$up" > "$S/ready"
say "serving $S"

# A job is taken once: its ID is the last one's no more.  Files written with echo, not
# renamed (mv is a program): the host reads job.done's line once it has its three words.
idle_since=$SECONDS last=
shopt -s nullglob
while [ ! -e "$S/off" ] && [ ! -e "$S/stop" ] && ((SECONDS - idle_since < idle_limit)); do
	if ! read -r id out drop 2>/dev/null < "$S/job" || [ "$id" = "$last" ]; then
		pause 0.2
		continue
	fi
	last=$id
	echo "$id" > "$S/job.taken"
	if job "$id" "$out" "$drop"; then verdict=ok; else verdict=stop; fi
	echo "$id $job_rc $verdict" > "$S/job.done"
	[ $verdict = ok ] || { say "job $id left the guest changed: powering off"; break; }
	idle_since=$SECONDS
done
sync
