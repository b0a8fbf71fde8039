#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# socket_group: real unprivileged peers (setpriv), so that the daemon's
# own check runs, not only the socket's file mode.  A member, by a group
# its process holds but /etc/group does not list, may read (status, stats,
# probe list, get) and nothing else; a peer outside the group is refused
# even on a socket whose mode lets it connect; idle members cannot take
# every place and lock root out.
#
#   tests/daemon-group.sh [BUILD_DIR]     (root, setpriv from util-linux)

. "$(dirname "$0")/daemon-lib.sh"
need_root daemon-group

RACES=$SRC_DIR/$BUILD/tests/daemon/two_races
[[ $BUILD == /* ]] && RACES=$BUILD/tests/daemon/two_races
CTL_ABS=$(readlink -f "$CTL")
GROUP=users

if ! command -v setpriv >/dev/null || ! id nobody >/dev/null 2>&1 ||
   ! getent group "$GROUP" >/dev/null; then
	fail setup "setpriv (util-linux), user nobody and group $GROUP are needed"
	finish
	exit
fi
# The member is nobody with the group given by setpriv only: /etc/group does not list it.
if id -nG nobody | grep -qw "$GROUP"; then
	fail setup "nobody must not be listed in /etc/group as a member of $GROUP"
	finish
	exit
fi
member() { setpriv --reuid=nobody --regid=nogroup --groups="$GROUP" "$CTL_ABS" "$@"; }
stranger() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$CTL_ABS" "$@"; }

printf 'target user %s\nsocket_group %s\n' "$RACES" "$GROUP" >"$TMP/kcsand.conf"
chmod 0755 "$TMP"
start_daemon "$TMP/kcsand.conf" || { fail start "kcsand did not start"; finish; exit; }
check socket_mode_group "660 $GROUP" "$(stat -c '%a %G' "$SOCK")"

for cmd in status stats "probe list" "get skip_watch" "filter list" "watch list"; do
	out=$(member $cmd 2>&1); rc=$?
	if [[ $rc == 0 && -n $out ]]; then ok "member_reads_${cmd// /_}"
	else fail "member_reads_${cmd// /_}" "exit 0 and output, got $rc: $out"; fi
done
before=$("$CTL" get skip_watch)
for cmd in "set skip_watch 7" "off" "filter add reader_a" "probe add user $RACES" \
	   "probe remove 1" "watch add counter --pid 1"; do
	out=$(member $cmd 2>&1); rc=$?
	if [[ $rc == 1 && $out == *"permission denied: socket_group members may only read"* ]]
	then ok "member_refused_${cmd%% *}"
	else fail "member_refused_${cmd%% *}" "exit 1, 'permission denied...', got $rc: $out"; fi
done
check member_changed_nothing "$before" "$("$CTL" get skip_watch)"
check member_nothing_added 1 "$("$CTL" -j probe list | jq length)"

# A socket left world-writable: the daemon itself turns a stranger away.
chmod 0666 "$SOCK"
out=$(setpriv --reuid=nobody --regid=nogroup --clear-groups /usr/bin/python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.settimeout(10)
print(s.recv(100).decode().strip())' "$SOCK" 2>&1)
check stranger_refused_by_daemon "error: permission denied" "$out"
chmod 0660 "$SOCK"

# Sixteen idle members: root still gets in.
python3 - "$SOCK" "$TMP/held" <<'PY' &
import socket, sys, time, os
held = open(sys.argv[2], "w")
os.setgroups([100]); os.setgid(65534); os.setuid(65534)
socks = []
for i in range(16):
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(sys.argv[1])
    except OSError:
        break
    socks.append(s)
held.write(str(len(socks))); held.close()
time.sleep(20)
PY
idle=$!
for ((i = 0; i < WAIT_S * 10; i++)); do [[ -s $TMP/held ]] && break; sleep 0.1; done
out=$(timeout 10 "$CTL" status 2>&1); rc=$?
if [[ $rc == 0 ]]; then ok root_not_locked_out
else fail root_not_locked_out "status answers with idle members connected, got $rc: $out"; fi
out=$(member status 2>&1); rc=$?
if [[ $rc == 1 && $out == *"too many clients"* ]]; then ok member_places_bounded
else fail member_places_bounded "a 17th member refused (too many clients), got $rc: $out"; fi
kill "$idle" 2>/dev/null
wait "$idle" 2>/dev/null

stop_daemon
finish
