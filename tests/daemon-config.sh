#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# kcsand's configuration: bad files refuse to start with the file and
# line named, a filter file loads, SIGHUP re-attaches only what changed,
# and a bad configuration on reload keeps the running one.
#
#   tests/daemon-config.sh [BUILD_DIR]     (root)

. "$(dirname "$0")/daemon-lib.sh"
need_root daemon-config

RACES=$SRC_DIR/$BUILD/tests/daemon/two_races
[[ $BUILD == /* ]] && RACES=$BUILD/tests/daemon/two_races
SAFE=$SRC_DIR/$BUILD/tests/scenarios/mutex_protected
[[ $BUILD == /* ]] && SAFE=$BUILD/tests/scenarios/mutex_protected

# bad_config NAME 'TEXT' 'EXPECTED MESSAGE': kcsand --check and kcsand itself refuse it.
bad_config() {
	local f=$TMP/$1.conf out rc

	printf '%b' "$2" >"$f"
	out=$("$KCSAND" -c "$f" --check 2>&1); rc=$?
	check "config_$1" "2 kcsand: $f:$3" "$rc $out"
}

bad_config unknown_key 'skip_watch 20\nfrobnicate 1\n' "2: unknown key 'frobnicate'"
bad_config bad_value '# c\n\nskip_watch many\n' \
	"3: skip_watch: bad value 'many' (expected 0..1000000000)"
bad_config out_of_range 'udelay_task 100001\n' \
	"1: udelay_task: bad value '100001' (expected 0..100000)"
bad_config kernel_bad_spec 'target kernel vfs_read module:\n' \
	"1: target kernel: bad spec 'module:': module: needs a module's NAME after it"
bad_config kernel_bad_offset 'target kernel vfs_read+0xzz\n' \
	"1: target kernel: bad spec 'vfs_read+0xzz': FUNC+0xOFF needs a number after '+'"
bad_config kernel_only_exclusions 'target kernel !vfs_*\n' \
	"1: target kernel: only exclusions ('!GLOB'): nothing to probe"
bad_config kernel_no_spec 'target kernel\n' \
	"1: target kernel: expected one or more SPECs (GLOB, module:NAME, FUNC+0xOFF, !GLOB)"
bad_config kernel_twice 'target kernel a* !ab\ntarget kernel a*  !ab\n' \
	"2: target kernel: a* !ab given twice"
bad_config kernel_debug_relative 'kernel_debug vmlinux\n' \
	"1: kernel_debug: 'vmlinux' is not an absolute path"
bad_config kernel_debug_missing 'kernel_debug /no/such.ko\n' \
	" kernel_debug /no/such.ko: No such file or directory"
bad_config relative_target 'target user bin/prog\n' \
	"1: target user: 'bin/prog' is not an absolute path"
bad_config bad_pid 'target user /bin/true --pid x\n' "1: target user: bad pid 'x'"
bad_config bad_mode 'filter_mode greylist\n' \
	"1: filter_mode: bad value 'greylist' (expected blacklist or whitelist)"
bad_config two_values 'json yes no\n' "1: json: expected one value, got 2"
bad_config bad_bool 'syslog maybe\n' "1: syslog: bad value 'maybe' (expected yes or no)"
bad_config control_char 'skip_watch 2\x01\n' "1: control character 0x01"
# kcsand takes parameters from its file and `kcsanctl set`: --param NAME=VALUE is refused
# (it used to print the list and exit 0, leaving the value unset); --param help lists them.
out=$("$KCSAND" --param skip_watch=10 2>&1); rc=$?
check param_on_command_line_refused \
	"2 kcsand: --param skip_watch=10: only '--param help' is an option; set parameters in \
/etc/kcsand.conf (NAME VALUE lines) or with 'kcsanctl set NAME VALUE'" "$rc $out"
out=$("$KCSAND" --param help 2>&1); rc=$?
check param_help_lists_mode_defaults "0 udelay_task default 400, kernel 80" \
	"$rc $(awk '$1 == "udelay_task" { print $1, $3, $4, $5, $6 }' <<<"$out" | tr -d :)"
out=$("$KCSAND" -c "$TMP/none.conf" --check 2>&1); rc=$?
check config_missing "2 kcsand: $TMP/none.conf: No such file or directory" "$rc $out"
printf 'filter_file %s\n' "$TMP/supp.txt" >"$TMP/ff.conf"
printf 'ok_func\nbad func\n' >"$TMP/supp.txt"
out=$("$KCSAND" -c "$TMP/ff.conf" --check 2>&1); rc=$?
check config_bad_filter_file "2 kcsand: $TMP/supp.txt:2: one function per line" "$rc $out"
out=$("$KCSAND" -c "$TMP/ff.conf" --socket "$SOCK" --foreground 2>&1); rc=$?
check config_refuses_to_start "2" "$rc"
[[ ! -e $SOCK ]] && ok config_no_socket_on_failure || fail config_no_socket_on_failure "no socket"
"$KCSAND" -c "$SRC_DIR/docs/kcsand.conf" --check >/dev/null 2>&1
check docs_example_parses "0" "$?"

# A kernel target parses; on a kernel without kprobes (this development VM's) kcsand
# refuses to start and says why.  tests/vm/daemon-kernel.sh runs kernel targets in a
# guest that has kprobes.
printf 'target kernel vfs_read vfs_write* !vfs_writev\nkernel_debug %s\n' "$(realpath "$KCSAND")" \
	>"$TMP/kernel.conf"
out=$("$KCSAND" -c "$TMP/kernel.conf" --check 2>&1); rc=$?
check kernel_target_parses "0 kcsand: $TMP/kernel.conf: ok, 1 targets, 0 filtered functions" \
	"$rc $out"
if [[ ! -e /sys/bus/event_source/devices/kprobe/type ]]; then
	out=$("$KCSAND" -c "$TMP/kernel.conf" --socket "$SOCK" --foreground 2>&1); rc=$?
	check kernel_target_without_kprobes_refused \
		"1 kcsand: $TMP/kernel.conf: this kernel ($(uname -r)) has no kprobes: kernel mode needs CONFIG_KPROBES and CONFIG_KPROBE_EVENTS" \
		"$rc $(tail -1 <<<"$out")"
	[[ ! -e $SOCK ]] && ok kernel_target_no_socket || fail kernel_target_no_socket "no socket"
fi

# A filter file, TSan-suppressions style, loads into the list.
cat >"$TMP/supp.txt" <<SUPP
# known races, reviewed
reader_a	# benign statistics counter

writer_b
SUPP
cat >"$TMP/kcsand.conf" <<CONF
target user $SAFE
report_once_in_ms 100
filter_file $TMP/supp.txt
filter_mode whitelist
skip_watch 30
CONF
if ! start_daemon "$TMP/kcsand.conf"; then
	fail reload_daemon_starts "kcsand running"
	finish
	exit
fi
check filter_file_loaded "whitelisted functions: | reader_a| writer_b|" \
	"$("$CTL" filter list | tr '\n' '|')"
check config_param_applied "skip_watch: 30" "$("$CTL" get skip_watch)"
probes_before=$("$CTL" -j probe list | jq -c '[.[] | {id, binary}]')

# SIGHUP with a new target: the old one stays attached (same id), the new one comes.
"$CTL" set udelay_task 300
cat >"$TMP/kcsand.conf" <<CONF
target user $SAFE
target user $RACES --functions reader_*,writer_*
report_once_in_ms 100
skip_watch 40
CONF
reload_daemon
check reload_keeps_unchanged_target "$(echo "$probes_before" | jq -c '.[0]')" \
	"$("$CTL" -j probe list | jq -c '[.[] | {id, binary}] | .[0]')"
check reload_adds_new_target "$RACES reader_*,writer_*" \
	"$("$CTL" -j probe list | jq -r '.[1] | "\(.binary) \(.functions)"')"
check reload_applies_changed_param "skip_watch: 40" "$("$CTL" get skip_watch)"
check reload_keeps_live_param "udelay_task: 300" "$("$CTL" get udelay_task)"
check reload_applies_filter "blacklisted functions: none|" "$("$CTL" filter list | tr '\n' '|')"
start_target "$RACES"
m=$(log_mark)
if wait_title "$m" "data-race in reader_"; then ok reload_new_target_reports
else fail reload_new_target_reports "a report of two_races after the reload"; fi

# A bad configuration on reload: kept running, said why.
cp "$TMP/kcsand.conf" "$TMP/good.conf"
printf 'skip_watch 50\nbogus_key 1\n' >>"$TMP/kcsand.conf"
reload_daemon
want="reload: $TMP/kcsand.conf:6: unknown key 'bogus_key'; keeping the running configuration"
if grep -q -F "$want" "$DERR"; then ok reload_bad_config_says_why
else fail reload_bad_config_says_why "'$want' on stderr, got: $(grep reload "$DERR")"; fi
check reload_bad_config_keeps_param "skip_watch: 40" "$("$CTL" get skip_watch)"
check reload_bad_config_keeps_probes "2" "$("$CTL" -j probe list | jq length)"
# A target that cannot be attached: nothing changes either.
probes_now=$("$CTL" -j probe list)
printf 'target user /no/such/binary\n' >>"$TMP/good.conf"
cp "$TMP/good.conf" "$TMP/kcsand.conf"
reload_daemon
if grep -q "reload: /no/such/binary: No such file or directory; keeping" "$DERR"
then ok reload_bad_target_says_why
else fail reload_bad_target_says_why "the binary and why, got: $(grep reload "$DERR" | tail -1)"
fi
check reload_bad_target_keeps_probes "2" "$("$CTL" -j probe list | jq length)"
# A kernel target on a kernel without kprobes: the same.
if [[ ! -e /sys/bus/event_source/devices/kprobe/type ]]; then
	head -n -1 "$TMP/good.conf" >"$TMP/kcsand.conf"
	printf 'target kernel vfs_read\n' >>"$TMP/kcsand.conf"
	reload_daemon
	if grep -q "reload: this kernel ($(uname -r)) has no kprobes: kernel mode needs CONFIG_KPROBES and CONFIG_KPROBE_EVENTS; keeping" "$DERR"
	then ok reload_kernel_target_without_kprobes_says_why
	else fail reload_kernel_target_without_kprobes_says_why "no kprobes and why, got: $(grep reload "$DERR" | tail -1)"
	fi
	check reload_kernel_target_keeps_probes "$probes_now" "$("$CTL" -j probe list)"
fi

# Dropping a target on reload detaches it.
cat >"$TMP/kcsand.conf" <<CONF
target user $SAFE
CONF
reload_daemon
check reload_removes_target "$SAFE" "$("$CTL" -j probe list | jq -r '.[] | .binary')"
stop_daemon
check stop_after_reloads "0" "$?"

finish
