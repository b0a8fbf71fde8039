# SPDX-License-Identifier: GPL-2.0-only
#
# lost_debug_trap PREFIX STATUS FILE: succeeds, saying so after PREFIX, when the
# program whose output is FILE died with STATUS 133 of a SIGTRAP with si_code 1
# (tests/common/trap_report.h prints it): a #DB whose DR6 names no cause, that
# is, a debug-register trap the host lost, about once in 10 million on this
# project's VMs, before any perf event or BPF program saw it
# (docs/RELIABILITY.md, finding 4).  Not kcsand's: the caller runs the program
# again, once.  Any other SIGTRAP is a failure.
lost_debug_trap() {
	[[ $2 == 133 ]] && grep -q 'SIGTRAP si_code=1 ' "$3" || return 1
	echo "$1$(grep -m1 -o 'SIGTRAP si_code=1 .*' "$3"): a debug trap the host lost" \
		"(docs/RELIABILITY.md, finding 4); run again"
}
