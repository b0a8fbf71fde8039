# SPDX-License-Identifier: GPL-2.0-only
#
# Shared by the guest halves of the guest suites (the steps scripts in tests/vm/), run in the
# kcsan-vm guest with $OUT the run's output directory:
#
#   . "$REPO/tests/vm/steps-lib.sh"
#   step NAME CMD... > "$OUT/NAME.log" 2>&1
#
# Each step's exit status goes to $OUT/steps.rc ("NAME STATUS", what the host's
# checks read) and its seconds to $OUT/step-times ("NAME SECONDS"), which the host
# prints with the guest's other times (guest_ran, tests/vm/suite-lib.sh): where a
# suite's minutes go is in every log, not found by hand.

# step NAME CMD...: runs CMD and records its status and seconds; returns its status.
# NAME may hold spaces ("bad 0x1000"): the status is the last word of its line.
step() {
	local name=$1 t0 rc

	shift
	t0=$(cut -d' ' -f1 /proc/uptime)
	"$@"
	rc=$?
	echo "$name $rc" >> "$OUT/steps.rc"
	awk -v n="$name" -v a="$t0" -v b="$(cut -d' ' -f1 /proc/uptime)" \
		'BEGIN { printf "%s %.1f\n", n, b - a }' >> "$OUT/step-times"
	return $rc
}

# round_ended: waits (two minutes at most) for the racy module's round to end: a
# run stopped at its first report leaves the round going, and the next round
# cannot start before it ends (workload.sh's write to run fails with EBUSY).
round_ended() {
	local b=/sys/module/kcsan_race/parameters/busy

	for _ in $(seq 600); do
		[ "$(cat "$b" 2>/dev/null || echo 0)" = 0 ] && return
		sleep 0.2
	done
}

# round_stop: ends the racy module's round now: reloads the module, whose unloading stops
# its threads (its parameters are then back to their defaults).  A run stopped at its
# first report leaves a long round going (kernel-sampler's small step: 1.5M iterations).
round_stop() {
	local ko

	ko=$(. "$OUT/job.env" && echo "$MODULE_KO")
	[ -n "$ko" ] && rmmod kcsan_race && insmod "$ko"
}

: > "$OUT/steps.rc"
: > "$OUT/step-times"
