#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# A small stock-kernel workload for tests/vm/marking-noise.sh: for S seconds (default 20),
# two shell loops fork pipelines (fork, pipes, wait, exit) while two more stream data
# through pipes, so pipe, VFS and process code runs on both CPUs at once; and PIPE_POLL
# (tests/vm/pipe-poll.c, built by marking-noise.sh) polls a pipe that two threads use.
#   noise-workload.sh [S [PIPE_POLL]]
end=$(( $(date +%s) + ${1:-20} ))
forker() {
	while [ "$(date +%s)" -lt $end ]; do
		echo "$$ $1" | cat | wc -c > /dev/null
	done
}
streamer() {
	while [ "$(date +%s)" -lt $end ]; do
		dd if=/dev/zero bs=4096 count=256 2> /dev/null | cat > /dev/null
	done
}
forker a & forker b & streamer c & streamer d &
[ -n "${2:-}" ] && "$2" "${1:-20}" &
wait
