#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Kernel mode on core kernel code: Debian's stock kernel in QEMU, kprobes on the
# VFS read/write/open paths, a file-system workload for DURATION seconds (20 by
# default), then: the probes were hit, none is left, the reports are few and listed,
# and the guest's kernel log has no lockup, stall, hung task or other warning.  (By hand, 'vfs_*' with 367
# sites ran 60 s here without a warning: docs/kernel-mode.md.)  kcsanctl gets the
# kernel's vmlinux (KCSAND_VM_KERNEL_DEBUG, default Debian's linux-image-*-dbg one)
# where it is installed, and must then decode each function over its symbol's size.
# Results in tests/lib.sh's format ("ok   NAME", "FAIL NAME: WHY", "N passed, N failed").
set -u
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$REPO"
. "$REPO/tests/vm/suite-lib.sh"
DURATION=${KCSAND_VM_DURATION:-20}
vm_suite_start core-kernel

# Functions with several returns, each patched into `ret; int3...` at boot: their
# sites are counted again, independently, by tests/vm/kcore-sites.py before kcsand
# decodes them, and the two lists must be the same.
COUNTED=atime_needs_update,tcp_poll
# The vmlinux with the guest kernel's symbol table (Debian's linux-image-*-dbg; the
# guest reads it from the host): kcsand takes the functions' sizes from it, and so
# does the independent count, the st_size of each COUNTED function read here.
kver=$(guest_kver)
KDEBUG=${KCSAND_VM_KERNEL_DEBUG:-/usr/lib/debug/boot/vmlinux-$kver}
counted=$COUNTED kdebug_opt=
if [ -r "$KDEBUG" ]; then
	nm -S "$KDEBUG" > "$out/vmlinux.nm" 2> "$out/nm.err"
	counted=$(for f in ${COUNTED//,/ }; do
		awk -v f="$f" '$4 == f && NF == 4 { printf "%s:0x%s\n", f, $2; exit }' "$out/vmlinux.nm"
	done | paste -sd,)
	kdebug_opt="--kernel-debug $KDEBUG"
fi
export KCSAN_VM_PROBE_CMD="$REPO/tests/vm/kcore-sites.py ${counted:-$COUNTED} -- $REPO/build/kcsanctl run --kernel --output - -v $kdebug_opt"
workload='end=$(( $(cut -d. -f1 /proc/uptime) + '$DURATION' )); n=0
while [ $(cut -d. -f1 /proc/uptime) -lt $end ]; do
	cat /etc/services > /tmp/x; cp /tmp/x /tmp/y; ls -l /usr/share/doc > /dev/null
	rm -f /tmp/x /tmp/y; n=$((n + 1))
done; echo "workload: $n rounds" >&2'
# The limit: 142 s on an idle machine, 248 s of QEMU at load 16 (its 725 kprobes take 32 s
# to attach and 68 s to detach idle), and make check runs the host suites beside it.
tests/vm/kcsan-vm --out "$out" --keep --timeout $((DURATION + 480)) \
	--probe vfs_read --probe vfs_write --probe vfs_open --probe 'vfs_getattr*' \
	--probe vfs_statx --probe 'vfs_fstat*' --probe 'path_*' \
	$(printf -- '--probe %s ' ${COUNTED//,/ }) \
	-- sh -c "$workload" > "$out/reports.txt" 2> "$out/harness.err"
rc=$?
guest_ran $rc
if [ $rc = 0 ] || [ $rc = 66 ]; then ok harness_ran; else fail harness_ran "exit status $rc: $(tail -3 "$out/harness.err")"; fi
hits=$(grep -oE 'sites, [0-9]+ hits' "$out/probe.err" 2>/dev/null | grep -oE '[0-9]+ hits' | cut -d' ' -f1)
if [ "${hits:-0}" -gt 1000 ]; then ok probes_hit; else fail probes_hit "expected over 1000 probe hits, got ${hits:-none}"; fi
if grep -q 'attached them in' "$out/probe.err" && grep -q 'detached' "$out/probe.err"; then
	ok attach_detach_timed
	grep -E 'attached them in|detached' "$out/probe.err" | sed 's/^/     /'
else
	fail attach_detach_timed "no attach/detach lines in probe.err"
fi
# The whole function is decoded (not only up to its first `ret; int3`), and rbp-based
# operands are kept where rbp is no frame pointer (Debian's kernel has none).
sites_as_counted() {
	local f want got int3 rbp=0 all=0

	for f in ${COUNTED//,/ }; do
		want=$(sed -n "s/^kcore-sites: \($f+0x[0-9a-f]*\).*/\1/p" "$out/probe.err" | sort)
		got=$(sed -n "s/^kcsand: site \[kernel\] 0x[0-9a-f]* \($f+0x[0-9a-f]*\) .*/\1/p" \
		      "$out/probe.err" | sort)
		int3=$(sed -n "s/^kcore-sites: $f inner int3 \([0-9]*\)/\1/p" "$out/probe.err")
		# rbp-based accesses (Debian's kernel has no frame pointers) that kcsand decoded.
		rbp=$((rbp + $(sed -n "s/^kcore-sites: \($f+0x[0-9a-f]*\) rbp$/\1/p" "$out/probe.err" |
			      grep -cxF -f <(echo "$got"))))
		echo "     $f: $(echo "$want" | grep -c .) sites counted from kcore, $(echo "$got" | grep -c .) decoded, ${int3:-?} int3 inside"
		if [ -z "$want" ] || [ "$want" != "$got" ] || [ "${int3:-0}" -lt 1 ]; then
			fail sites_as_counted "$f: $(diff <(echo "$want") <(echo "$got") | grep '^[<>]' | head -5 | tr '\n' ' ')"
			all=1
		fi
	done
	[ $all = 0 ] && ok sites_as_counted
	if [ $rbp -gt 0 ]; then ok rbp_sites_kept; echo "     $rbp rbp-based sites decoded"
	else fail rbp_sites_kept "no rbp-based site in $COUNTED"; fi
}
sites_as_counted
# With the vmlinux (--kernel-debug), every function is decoded over its symbol's
# st_size, not up to padding: -v counts them, and each COUNTED function's line
# ("kcsand: func [kernel] ADDR NAME size SIZE decoded BYTES (symbol table)") is at
# the vmlinux's address moved by the KASLR slide, with the vmlinux's size, all of
# it decoded.
sized_from_elf() {
	local line elf reach funcs short f addr size dec rt ft want all=0

	# Without Debian's 5 GB -dbg package (not on a fresh machine), said, not passed:
	# kernel-scenarios.sh's module_sized_from_ko checks the same code on every machine.
	if [ ! -r "$KDEBUG" ]; then
		echo "note sized_from_elf: not run, $KDEBUG is not installed (apt-get install" \
			"linux-image-$kver-dbg); kernel-scenarios checks module_sized_from_ko instead"
		return
	fi
	[ -s "$out/vmlinux.nm" ] || { fail sized_from_elf "nm -S $KDEBUG: $(head -2 "$out/nm.err")"; return; }
	line=$(grep -m1 "^kcsand: \[kernel\]: [0-9]* functions sized from the debug files' symbol tables" "$out/probe.err")
	elf=$(sed -n 's/.*: \([0-9]*\) functions sized from the debug.*/\1/p' <<< "$line")
	reach=$(sed -n 's/.*, \([0-9]*\) by reachability.*/\1/p' <<< "$line")
	funcs=$(grep -c '^kcsand: func \[kernel\] ' "$out/probe.err")
	echo "     ${elf:-?} functions sized from the vmlinux's symbol table, ${reach:-?} by reachability, $funcs decoded"
	if [ -z "$elf" ] || [ "$elf" -lt 1 ] || [ "${reach:-1}" != 0 ] || [ "$elf" != "$funcs" ]; then
		fail sized_from_elf "expected all $funcs functions sized from $KDEBUG, -v said: ${line:-nothing}"
		all=1
	fi
	# Padding must not end them: Debian's vfs_fstatat, path_get and others end in a
	# `jmp __x86_return_thunk`, patched into `ret; int3...`, the last int3s in st_size.
	short=$(awk '/^kcsand: func \[kernel\] .*\(symbol table\)$/ && $7 != $9 { print $5, $7, $9 }' \
		"$out/probe.err" | head -3 | tr '\n' ';')
	if [ -n "$short" ]; then
		fail sized_from_elf "decoded short of st_size (name, size, bytes decoded): $short"
		all=1
	fi
	rt=$(sed -n 's/^kcore-sites: _text 0x\([0-9a-f]*\)$/\1/p' "$out/probe.err")
	ft=$(awk '$3 == "_text" { print $1; exit }' "$out/vmlinux.nm")
	for f in ${COUNTED//,/ }; do
		read -r addr size dec <<< "$(sed -n "s/^kcsand: func \[kernel\] 0x\([0-9a-f]*\) $f size 0x\([0-9a-f]*\) decoded 0x\([0-9a-f]*\) (symbol table)$/\1 \2 \3/p" "$out/probe.err")"
		want=$(awk -v f="$f" '$4 == f && NF == 4 { print $1, $2; exit }' "$out/vmlinux.nm")
		if [ -z "$addr" ] || [ -z "$rt" ] || [ -z "$ft" ] || [ -z "$want" ] || [ -z "$dec" ] ||
		   [ "$(printf '%x %x %x' $((0x$addr - 0x$rt + 0x$ft)) $((0x$size)) $((0x$dec)))" != \
		     "$(printf '%x %x %x' $((0x${want% *})) $((0x${want#* })) $((0x${want#* })))" ]; then
			fail sized_from_elf "$f: kcsand decoded $(grep -m1 "^kcsand: func \[kernel\] 0x[0-9a-f]* $f " "$out/probe.err" || echo nothing) (runtime _text ${rt:-?}), the vmlinux has ${want:-nothing} (_text ${ft:-?})"
			all=1
		else
			echo "     $f: 0x$dec bytes decoded, the st_size of its symbol"
		fi
	done
	[ $all = 0 ] && ok sized_from_elf
}
sized_from_elf
# A stock kernel has real races on these paths, but a tool gone wrong (a false pair
# on every site, a report per hit) shows as many distinct titles: at most
# MAX_TITLES, each listed.
MAX_TITLES=${KCSAND_VM_MAX_TITLES:-10}
nr_reports=$(grep -c '^BUG: KCSAN:' "$out/reports.txt")
titles=$(grep '^BUG: KCSAN:' "$out/reports.txt" | sort | uniq -c)
nr_titles=$(grep -c . <<< "$titles")
if [ "$nr_titles" -le "$MAX_TITLES" ]; then ok reports_bounded
else fail reports_bounded "$nr_titles distinct titles, at most $MAX_TITLES expected"; fi
echo "     $nr_reports reports, $nr_titles distinct titles"
[ -n "$titles" ] && sed 's/^/     /' <<< "$titles"
no_kprobe_left "$out"
kernel_settings_kept "$out"
no_kernel_warning "$out"
finish_suite "$out"
