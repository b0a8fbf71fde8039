#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Nothing of kcsand's is left attached: after SIGTERM, after SIGINT, and
# after SIGKILL followed by a restart.  The links kcsand holds are read
# from its fdinfo while it runs, then looked up with bpftool.  Also: the
# sd_notify READY=1 datagram comes once the targets are attached, and the
# background mode reports a failed start in its exit status.
#
#   tests/daemon-detach.sh [BUILD_DIR]     (root)

. "$(dirname "$0")/daemon-lib.sh"
need_root daemon-detach

RACES=$SRC_DIR/$BUILD/tests/daemon/two_races
[[ $BUILD == /* ]] && RACES=$BUILD/tests/daemon/two_races

cat >"$TMP/kcsand.conf" <<CONF
target user $RACES
overhead_budget 100
CONF
# Every site armed (budget 100): the links are listed and counted, and a
# sampler's re-attach holds a new link while the old one closes.

# kinds LINK_IDS: the types of those links, as bpftool names them.
kinds() {
	local id

	for id in "$@"; do
		bpftool link show id "$id" -j 2>/dev/null | jq -r .type
	done | sort | tr '\n' ' '
}

# stop_with NAME SIGNAL: links held before, none alive after.
stop_with() {
	local links left

	start_daemon "$TMP/kcsand.conf" || { fail "$1" "kcsand did not start"; return; }
	links=$(held_links "$DPID")
	# The sites' uprobe_multi link (12 to an older bpftool), the history's sync
	# probes' (more of them), and the fork/exit tracepoints (the history's too).
	case " $(kinds $links)" in
	*" raw_tracepoint raw_tracepoint "*) [[ " $(kinds $links)" =~ \ (12|uprobe_multi)\  ]] ||
		fail "$1_links_held" "a uprobe_multi link and 2 raw_tracepoint links, got $(kinds $links)" ;;
	*) fail "$1_links_held" "a uprobe_multi link and 2 raw_tracepoint links, got $(kinds $links)" ;;
	esac
	{ kill -"$2" "$DPID"; wait "$DPID"; } 2>/dev/null
	DPID=
	left=$(links_alive $links)
	if [[ -n $links && -z $left ]]; then ok "$1"
	else fail "$1" "links $(echo $links) gone, got alive: $(echo $left)"; fi
}

start_target "$RACES"
stop_with sigterm_leaves_nothing TERM
stop_with sigint_leaves_nothing INT
stop_with sigkill_leaves_nothing KILL
# The socket of the killed daemon is left, stale: a restart takes it over, and
# holds one uprobe_multi link of its own, nothing doubled (stop_with checks).
if [[ -S $SOCK ]] && ! "$CTL" status >/dev/null 2>&1; then ok sigkill_leaves_stale_socket
else fail sigkill_leaves_stale_socket "a socket nobody answers on at $SOCK"; fi
stop_with restart_after_sigkill TERM

# A second kcsand on a live socket refuses to start.  Bounded: were the first not
# running, the second would serve in the foreground for ever.
if start_daemon "$TMP/kcsand.conf"; then
	out=$(timeout 60 "$KCSAND" -c "$TMP/kcsand.conf" --socket "$SOCK" --foreground 2>&1); rc=$?
	if [[ $rc == 1 && $out == *"another kcsand is running there"* ]]; then ok second_daemon_refused
	else fail second_daemon_refused "exit 1, 'another kcsand is running there', got $rc: $out"; fi
	stop_daemon
else
	fail second_daemon_refused "the first kcsand did not start"
fi

# READY=1 once the targets are attached (no libsystemd: a plain datagram).  The
# listener waits as long as start_daemon does: at load 25 a start took over 20 s.
python3 - "$TMP/notify" "$WAIT_S" >"$TMP/notified" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.settimeout(int(sys.argv[2]))
try:
    while True:
        m = s.recv(4096).decode()
        print(m.replace("\n", " "), flush=True)
        if "READY=1" in m:
            break
except socket.timeout:
    pass
PY
npid=$!
for ((i = 0; i < WAIT_S * 10; i++)); do [[ -S $TMP/notify ]] && break; sleep 0.1; done
NOTIFY_SOCKET=$TMP/notify start_daemon "$TMP/kcsand.conf"
wait $npid
if grep -q "READY=1" "$TMP/notified"; then ok sd_notify_ready
else fail sd_notify_ready "READY=1 on \$NOTIFY_SOCKET, got '$(cat "$TMP/notified")'"; fi
if (( $("$CTL" -j status | jq .sites) > 0 )); then ok ready_after_attach
else fail ready_after_attach "sites attached when ready"; fi
stop_daemon

# Background mode: the parent exits 0 once ready, 1 when the start fails.
"$KCSAND" -c "$TMP/kcsand.conf" --socket "$SOCK" 2>/dev/null; rc=$?
bgpid=$("$CTL" -j status 2>/dev/null | jq .pid)
check background_ready "0" "$rc"
if [[ -n $bgpid ]] && kill -0 "$bgpid" 2>/dev/null; then
	links=$(held_links "$bgpid")
	kill -TERM "$bgpid"
	for ((i = 0; i < WAIT_S * 10; i++)); do kill -0 "$bgpid" 2>/dev/null || break; sleep 0.1; done
	left=$(links_alive $links)
	if [[ -z $left ]]; then ok background_sigterm_leaves_nothing
	else fail background_sigterm_leaves_nothing "none alive, got $(echo $left)"; fi
else
	fail background_running "a running daemon answering status"
fi
printf 'target user /no/such/binary\n' >"$TMP/bad.conf"
"$KCSAND" -c "$TMP/bad.conf" --socket "$SOCK" 2>/dev/null; rc=$?
check background_failed_start "1" "$rc"

finish
