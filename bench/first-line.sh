# SPDX-License-Identifier: GPL-2.0-only
#
# Sourced by the benchmarks that time a tool's first report.
#
# first_line PATTERN STAMP: copy stdin to stdout, and write the time
# ($EPOCHREALTIME) of the first line matching the extended regex PATTERN
# to the file STAMP.  Used as `CMD 2> >(first_line PAT STAMP >ERR)`: it
# wakes only when the tool writes, where a loop polling the tool's output
# every 0.1 s forked 20 processes a second, which took CPU from the timed
# program on a 2-CPU machine (P2 at 5 s: 6.6 s polled, 6.4 s not).
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
