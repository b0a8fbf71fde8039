#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Guest side of tests/vm/kernel-pairs.sh and bench/kernel/p13-kernel-pairs.sh, run by
# tests/vm/kcsan-vm as its probe command, with the module tests/kmod/kcsan_pairs
# loaded:
#
#   pairs-steps.sh KCSANCTL KO TRIES SECONDS MODE[,MODE...] SCENARIO[,SCENARIO...] [VMLINUX] \
#       [--probe SPEC... --] [COMMAND...]         (kcsan-vm's specs and command: ignored)
#
# For each mode, scenario and try: kcsanctl attaches, then the scenario's two
# threads run (tests/kmod/kcsan_pairs) until the first report of the scenario's
# race, or for SECONDS.  Modes:
#   bp      code-breakpoint sampling over the module, data breakpoints in the stalls
#   bp0     the same without the data breakpoints (pair_wait_us=0): the control
#   kp      a kprobe on every site of the module (the sampler at its default)
#   scale   bp, with src:fs/ src:mm/ src:kernel/ of VMLINUX probed too, no marking
#   first   bp, ending at the first report naming either function, pair or not: a
#           user's first sight of the race (kernel-pairs.sh's write-write step)
#   hp      bp, with CPU 1 taken offline and brought back online once kcsanctl has
#           attached, before the threads start; its data breakpoint must then
#           be the one that catches: a run ends at the first partner a data
#           breakpoint caught on CPU 1 (the reader's, bound there), or 2 x SECONDS
#           (one side's catches only: in one run of 60 s, none came)
# MODE:SCENARIO in MODES runs that mode with that scenario only, not SCENARIOS.
# Each run's output is in $KCSAN_VM_OUT/MODE-sN-tI.log, every counter in
# MODE-sN-tI.log.stats, and one line per run is added to results.tsv:
#   MODE SCENARIO TRY STATUS PAIR_S DB_S ANY_S SLOW_ACCESSES FAST_ACCESSES
# PAIR_S: seconds from the start of the threads to the first report with both
# functions in its title (both stacks), "-" if none; DB_S: to the first report
# whose other side a data breakpoint caught in a stall; ANY_S: to the first
# report naming either function.  In the modes with data breakpoints a run goes
# on after a pair that sampling alone caught, until one the breakpoints did.
set -u
OUT=${KCSAN_VM_OUT:?run by tests/vm/kcsan-vm}
KCSANCTL=$1 KO=$2 TRIES=$3 SECS=$4 MODES=$5 SCENARIOS=$6 VMLINUX=${7:-}
P=/sys/module/kcsan_pairs/parameters
[ -d $P ] || { echo "pairs-steps.sh: kcsan_pairs is not loaded" >&2; exit 2; }

# The two racing functions of each scenario (tests/kmod/kcsan_pairs/kcsan_pairs.c).
fns() {
	case $1 in
	1|2|3) echo "kcsan_pairs_rate_read kcsan_pairs_rate_write" ;;
	4) echo "kcsan_pairs_same_read kcsan_pairs_same_write" ;;
	5) echo "kcsan_pairs_ww_write_a kcsan_pairs_ww_write_b" ;;
	6) echo "kcsan_pairs_plain_read kcsan_pairs_marked_write" ;;
	esac
}

# bp and hp wait for a report whose other side a data breakpoint caught: with KCSAN's
# report_once_in_ms, a catch within 3 s of a pair that sampling alone caught has the
# same two functions and is dropped (a CI run caught 4 partners in 60 s and printed
# none of them), so those modes print every report.
mode_args() {
	case $1 in
	bp|hp|first) echo "--sample breakpoints --probe module:kcsan_pairs --param report_once_in_ms=0" ;;
	bp0) echo "--sample breakpoints --probe module:kcsan_pairs --param pair_wait_us=0" ;;
	kp) echo "--sample kprobes --probe module:kcsan_pairs" ;;
	# --no-marking: marking the vmlinux's 117,000 sites cold over 9p takes many minutes.
	scale) echo "--sample breakpoints --no-marking --probe module:kcsan_pairs --probe src:fs/" \
		    "--probe src:mm/ --probe src:kernel/ --kernel-debug $VMLINUX" ;;
	esac
}

# The CPUs on which a data breakpoint caught a watcher's partner, one line each:
# the footer names the task, its access line the CPU.
caught_cpus() {
	awk '/^(read|write)[a-z() -]* to 0x[0-9a-f]+ of [0-9]+ bytes by task [0-9]+ on cpu [0-9]+/ {
		t = $0; sub(/.* by task /, "", t); split(t, w, " "); c = w[4]; sub(/:$/, "", c)
		cpu[w[1]] = c }
	/^hardware watchpoint: .* by task [0-9]+ was seen .* during the watcher.s stall/ {
		t = $0; sub(/.* by task /, "", t); split(t, w, " ")
		if (w[1] in cpu) print cpu[w[1]] }
	/^====/ { delete cpu }' "$1"
}

# CPU 1 offline, then online again, each long enough for kcsand's once-a-second scans.
cycle_cpu1() {
	local f=/sys/devices/system/cpu/cpu1/online
	[ -w $f ] || { echo "pairs-steps.sh: $f cannot be written" >&2; return 1; }
	echo 0 > $f && sleep 3 && echo 1 > $f && sleep 3
}

since() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f\n", b - a }'; }

# round LOG SCENARIO: run by kcsanctl once attached.  Starts the threads, then
# watches LOG for the scenario's first reports; stops at the pair, or at SECONDS.
round() {
	local log=$1 s=$2 a b t0 now pair=- db=- any=- title
	local limit=$SECS
	read -r a b <<< "$(fns "$s")"
	[ "$PAIRS_MODE" != hp ] || { limit=$((2 * SECS)); cycle_cpu1; } || return
	echo "$s" > $P/scenario
	t0=$(date +%s.%N)
	echo 1 > $P/run
	while :; do
		now=$(date +%s.%N)
		while read -r title; do
			[[ $title == *"$a"* || $title == *"$b"* ]] || continue
			[ "$any" = - ] && any=$(since "$t0" "$now")
			# "later write in B after data-race in A" names both, but is no pair.
			[[ $title == "BUG: KCSAN: data-race in "*" / "* && $title == *"$a"* &&
			   $title == *"$b"* && $pair = - ]] && pair=$(since "$t0" "$now")
		done <<< "$(grep '^BUG: KCSAN: ' "$log")"	# the guest has no /dev/fd for <(...)
		if [ "$PAIRS_MODE" = hp ]; then
			[ "$db" = - ] && caught_cpus "$log" | grep -qx 1 && db=$(since "$t0" "$now")
		else
			[ "$db" = - ] && grep -q "during the watcher's stall" "$log" && db=$(since "$t0" "$now")
		fi
		[ "$PAIRS_MODE" = first ] && [ "$any" != - ] && break
		[ "$pair" != - ] && { [ "$db" != - ] || [ "$PAIRS_MODE" = kp ] || [ "$PAIRS_MODE" = bp0 ]; } &&
			break
		[ "$(since "$t0" "$now" | cut -d. -f1)" -ge "$limit" ] && break
		sleep 0.2
	done
	echo "$pair $db $any $(cat $P/accesses)" > "$log.round"
	echo 0 > $P/run
}

if [ "${PAIRS_ROUND:-}" ]; then
	round "$PAIRS_ROUND" "$PAIRS_SCENARIO"
	exit 0
fi

for mode in ${MODES//,/ }; do
	scenarios=$SCENARIOS
	[[ $mode == *:* ]] && { scenarios=${mode#*:}; mode=${mode%%:*}; }
	for s in ${scenarios//,/ }; do
		for i in $(seq 1 "$TRIES"); do
			log=$OUT/$mode-s$s-t$i.log
			# shellcheck disable=SC2046
			PAIRS_ROUND=$log PAIRS_SCENARIO=$s PAIRS_MODE=$mode \
			"$KCSANCTL" run --kernel --output - --stats "$log.stats" --kernel-debug "$KO" \
				$(mode_args "$mode") \
				-- "$0" "$@" > "$log" 2>&1
			rc=$?
			echo "$mode $s $i $rc $(cat "$log.round" 2>/dev/null || echo "- - - - -")" >> "$OUT/results.tsv"
		done
	done
done
exit 0
