#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Tests of the kernel-mode VM harness (tests/vm/kcsan-vm), root only:
# a few error paths that fail before any boot, then one guest run with the
# racy module (tests/kmod/kcsan_race) and the stand-in probe command
# (tests/vm/standin-probe.sh), whose results are checked.  Ends with
# "N passed, N failed"; exit status 1 when any failed.

set -uo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
VM=$REPO/tests/vm/kcsan-vm
WORK=$REPO/build/vm/tests
rm -rf "$WORK"; mkdir -p "$WORK"
. "$REPO/tests/lib.sh"

# ---- error paths: exit 2 and "kcsan-vm: <what>: <why>", before booting
"$VM" --kernel /nonexistent > "$WORK/e1.out" 2> "$WORK/e1.err"; rc=$?
check_cmd "missing --kernel exits 2 with the reason" \
	eval '[ $rc = 2 ] && grep -q "^kcsan-vm: --kernel: /nonexistent: not readable" "$WORK/e1.err"'

mkdir -p "$WORK/badmod"
printf 'obj-m := badmod.o\n' > "$WORK/badmod/Makefile"
printf '#include <linux/module.h>\nthis is not C;\n' > "$WORK/badmod/badmod.c"
"$VM" --module "$WORK/badmod" > "$WORK/e2.out" 2> "$WORK/e2.err"; rc=$?
check_cmd "module build failure exits 2 and says so" \
	eval '[ $rc = 2 ] && grep -q "^kcsan-vm: module build: " "$WORK/e2.err"'

kver=$(sed -n 's/.*linux-image-\([^ ,]*-amd64\).*/\1/p' <<<"$(dpkg-query -W -f='${Depends}' linux-image-amd64 2>/dev/null)" | head -1)
if [ -r "/boot/config-$kver" ]; then
	grep -v '^CONFIG_KPROBES=' "/boot/config-$kver" > "$WORK/config-nokprobes"
	"$VM" --config "$WORK/config-nokprobes" > "$WORK/e3.out" 2> "$WORK/e3.err"; rc=$?
	check_cmd "a kernel config without CONFIG_KPROBES exits 2 naming it" \
		eval '[ $rc = 2 ] && grep -q "^kcsan-vm: kernel config: CONFIG_KPROBES is not set" "$WORK/e3.err"'
fi

# ---- one guest run: module + stand-in probe on the module's reader
OUT=$WORK/run
t0=$(date +%s)
KCSAN_VM_PROBE_CMD="$REPO/tests/vm/standin-probe.sh --kernel" \
	"$VM" --check-bpf --timeout 90 --out "$OUT" --module "$REPO/tests/kmod/kcsan_race" \
	--probe kcsan_race:kcsan_race_reader -- tests/kmod/kcsan_race/workload.sh \
	> "$WORK/run.out" 2> "$WORK/run.err"
rc=$?
t1=$(date +%s)
echo "guest run: exit $rc in $((t1 - t0)) s"
sed 's/^/  | /' "$WORK/run.out" "$WORK/run.err"

check_cmd "harness exits 0 (the stand-in reports no race)" [ "$rc" = 0 ]
hits=$(sed -n 's/^standin-probe: kprobe kcsan_race:kcsan_race_reader hits \([0-9]*\) missed [0-9]*$/\1/p' "$WORK/run.out")
check_cmd "the kprobe on kcsan_race_reader was hit (${hits:-none})" [ "${hits:-0}" -gt 0 ]
check_cmd "the stand-in saw no kprobe left after detach" grep -qx 'standin-probe: kprobes left after detach: 0' "$WORK/run.out"
check_cmd "debugfs kprobes/list is empty after the run" eval '[ -f "$OUT/kprobes-after.txt" ] && [ ! -s "$OUT/kprobes-after.txt" ]'
check_cmd "the module loaded in the guest" grep -q '^module-loaded ' "$OUT/stages"
check_cmd "the module unloaded cleanly" grep -q '^module-unloaded ' "$OUT/stages"
fires=$(sed -n 's/.*timer fired \([0-9]*\) times.*/\1/p' "$OUT/probe.err")
check_cmd "the racing hrtimer fired (${fires:-never})" [ "${fires:-0}" -gt 0 ]
check_cmd "the module's threads were created" grep -q 'kcsan_race: [0-9]* threads ready' "$OUT/dmesg.txt"
check_cmd "BPF kprobe programs are available in the guest" grep -q 'eBPF program_type kprobe is available' "$OUT/checks.txt"
check_cmd "a BPF kprobe attached, was hit and detached in the guest (host-built libbpf binary)" \
	grep -q '^bpf-kprobe-check: kprobe on vfs_read: hits [1-9][0-9]*, .*: ok$' "$OUT/checks.txt"
check_cmd "a BPF program ran on a kernel hardware breakpoint on every CPU, with the trap's stack" \
	grep -qE '^bpf-hwbp-check: write breakpoint on jiffies_64 \(0x[0-9a-f]+\) on [0-9]+ CPUs: hits [1-9][0-9]*, .*: ok$' "$OUT/checks.txt"
bad=$(grep -E 'soft lockup|rcu_sched self-detected stall|rcu: INFO|hung_task|blocked for more than|BUG:|Oops|WARNING:' "$OUT/dmesg.txt" | grep -v 'BUG: KCSAN:')
check_cmd "guest dmesg has no lockup, stall, hung task or BUG${bad:+: $bad}" [ -z "$bad" ]

# ---- the race path and the marking cache's share, in one boot (no module: the
# quickest): a probe command that reports a race makes the harness exit 66 and print
# the report; what the guest writes to KCSAND_CACHE_DIR (--cache-dir) is on the host
mkdir -p "$WORK/cache"; rm -f "$WORK/cache/guest-wrote"
report='echo "BUG: KCSAN: data-race in kcsan_race_writer / kcsan_race_reader"; exit 66'
KCSAN_VM_PROBE_CMD="bash -c 'echo \"cache \$KCSAND_CACHE_DIR\"; echo x > \$KCSAND_CACHE_DIR/guest-wrote; $report' fake" \
	"$VM" --timeout 60 --cache-dir "$WORK/cache" --out "$WORK/run66" --probe none -- true \
	> "$WORK/run66.out" 2> "$WORK/run66.err"
rc=$?
check_cmd "a reported race makes the harness exit 66 (got $rc)" [ "$rc" = 66 ]
check_cmd "the report is printed on stdout" grep -q '^BUG: KCSAN: data-race in kcsan_race_writer' "$WORK/run66.out"
check_cmd "the guest's KCSAND_CACHE_DIR is --cache-dir, writable, kept on the host" \
	eval 'grep -qx "cache $WORK/cache" "$WORK/run66.out" && [ -s "$WORK/cache/guest-wrote" ]'

# ---- a guest that does not reach /init in time is ended and booted once more,
# then the harness says so and exits 2, long before the run's own timeout
# (a 1 s limit: no boot here reaches /init that soon)
"$VM" --boot-timeout 1 --timeout 200 --out "$WORK/hung" --probe none -- true > "$WORK/hung.out" 2> "$WORK/hung.err"
rc=$?
check_cmd "a guest that never reaches /init ends the harness with 2 (got $rc)" [ "$rc" = 2 ]
check_cmd "it was booted twice, each said" [ "$(grep -c 'did not reach /init within 1s (console' "$WORK/hung.err")" = 2 ]
check_cmd "the failure names the boot limit" grep -q 'kcsan-vm: boot: the guest did not reach /init within 1s, twice' "$WORK/hung.err"

finish
