#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# What a start of kcsand costs before the target runs: the verifier's work
# on each program of the BPF object (instructions it processed, which do
# not depend on the machine's load, and the load's wall time, which does),
# and `kcsanctl run -- true` with and without the history, median of
# STARTUP_RUNS (5), the two interleaved.  With OTHER_BUILD_DIR (another
# version's build, say main's), the same for it, and this build's figures
# over its.
# Usage: bench/user/startup.sh [BUILD_DIR [OTHER_BUILD_DIR]]   (root)
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
bench_init startup "${1:-}" root
bench_need "$B/kcsanctl" "$B/bench/prog_load"
other=
if [[ -n ${2:-} ]]; then
	other=$(cd "$2" && pwd) || bench_die "no build directory $2"
	bench_need "$other/kcsanctl"
fi
runs=${STARTUP_RUNS:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The kernel's programs load only with a kernel's symbols (the guest's): left out here.
user_progs=(kcsand_uprobe_multi kcsand_hwbp kcsand_xbp kcsand_fork kcsand_exit
	    kcsand_hb_entry kcsand_hb_return kcsand_hb_fork kcsand_hb_exec kcsand_hb_exit
	    kcsand_hb_signal_send kcsand_hb_signal_take)

# prog_table BUILD: one line a program, "name load_ms verify_us insns states peak".
prog_table() {
	"$B/bench/prog_load" -m "$1/kcsand.bpf.o" "${user_progs[@]}" 2>/dev/null | tail -n +2
}

# start_times BUILD OPTION...: "wall user sys" of one kcsanctl run -- true.
start_times() {
	local build=$1

	shift
	/usr/bin/time -f '%e %U %S' -o "$tmp/t" "$build/kcsanctl" run "$@" -- true \
		>/dev/null 2>&1 || true
	tail -1 "$tmp/t"
}

echo "startup: the verifier per program (-m: uprobe_multi), load average $(cut -d' ' -f1 /proc/loadavg)"
prog_table "$B" > "$tmp/this"
if [[ -n $other ]]; then
	prog_table "$other" > "$tmp/other"
	printf '  %-22s %10s %10s %8s %10s %10s %8s\n' program insns "other" ratio \
		"load ms" "other" ratio
	join <(sort "$tmp/this") <(sort "$tmp/other") | sort -k4,4nr |
		awk '{ printf "  %-22s %10d %10d %8.2f %10.1f %10.1f %8.2f\n",
			$1, $4, $9, $9 ? $4 / $9 : 0, $2, $7, $7 ? $2 / $7 : 0 }'
else
	printf '  %-22s %10s %10s %8s %8s\n' program insns "load ms" states peak
	sort -k4,4nr "$tmp/this" |
		awk '{ printf "  %-22s %10d %10.1f %8d %8d\n", $1, $4, $2, $5, $6 }'
fi
awk '{ n += $4; ms += $2 } END { printf "  all of them: %d insns, %.0f ms\n", n, ms }' "$tmp/this"

echo "startup: kcsanctl run -- true, median of $runs, load average $(cut -d' ' -f1 /proc/loadavg)"
builds=("$B")
[[ -n $other ]] && builds+=("$other")
for ((i = 0; i < runs; i++)); do
	for b in "${builds[@]}"; do
		key=$([[ $b == "$B" ]] && echo this || echo other)
		start_times "$b" >> "$tmp/$key-hist"
		start_times "$b" --no-history >> "$tmp/$key-nohist"
	done
done
printf '  %-26s %8s %8s %8s\n' run "wall s" "user s" "sys s"
for key in this other; do
	[[ $key == other && -z $other ]] && continue
	for kind in hist nohist; do
		w=$(awk '{ print $1 }' "$tmp/$key-$kind" | median)
		u=$(awk '{ print $2 }' "$tmp/$key-$kind" | median)
		s=$(awk '{ print $3 }' "$tmp/$key-$kind" | median)
		printf '  %-26s %8s %8s %8s\n' "$key $([[ $kind == hist ]] && echo history ||
			echo --no-history)" "$w" "$u" "$s"
		echo "$s" > "$tmp/$key-$kind.sys"
	done
done
ratio_line "sys, history / --no-history" "$(cat "$tmp/this-hist.sys")" \
	"$(cat "$tmp/this-nohist.sys")"
if [[ -n $other ]]; then
	ratio_line "sys with the history, this / other" "$(cat "$tmp/this-hist.sys")" \
		"$(cat "$tmp/other-hist.sys")"
fi
