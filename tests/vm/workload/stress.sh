#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# kcsan-vm --workload stress, stress-fs, stress-vm or stress-ipc: stress-ng's
# stressors (Debian's stress-ng, installed on the host; the guest runs the host's
# binaries), one worker each, for S seconds, in the guest's tmpfs /tmp:
#   stress-fs   files: write/unlink (hdd), directories, renames, links, fallocate
#   stress-vm   memory: anonymous mappings under pressure (half the guest's memory,
#               so that reclaim and compaction run), mmap, memfd, userfaultfd
#   stress-ipc  futexes, queued and plain signals, unix socket pairs and sockets,
#               io_uring
#   stress      all of them at once
# A stressor the kernel or the guest cannot run is skipped by stress-ng, which says
# so; the run ends with stress-ng's metrics (bogo ops per stressor).
#   stress.sh KIND [S]
set -u
kind=$1 secs=${2:-30}
fs="--hdd 1 --hdd-bytes 4M --dir 1 --rename 1 --link 1 --fallocate 1 --fallocate-bytes 4M"
vm="--vm 1 --vm-bytes 50% --mmap 1 --mmap-bytes 16M --memfd 1 --userfaultfd 1"
ipc="--futex 1 --sigq 1 --signal 1 --sockpair 1 --sock 1 --sock-domain unix --io-uring 1"
case $kind in
stress-fs) set -- $fs ;;
stress-vm) set -- $vm ;;
stress-ipc) set -- $ipc ;;
stress) set -- $fs $vm $ipc ;;
*) echo "stress.sh: '$kind' is not stress, stress-fs, stress-vm or stress-ipc" >&2; exit 2 ;;
esac
cd /tmp || exit 2
exec stress-ng --temp-path /tmp --timeout "${secs}s" --metrics-brief "$@"
