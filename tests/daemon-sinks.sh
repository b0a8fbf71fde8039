#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# kcsand's sinks: KCSAN's text on stderr in the foreground and in the log,
# JSON lines with --json, journald's structured fields (a stand-in journal
# socket), and KCSAN's dedup before all of them: every sink gets the same
# reports, as many as the daemon counts.
#
#   tests/daemon-sinks.sh [BUILD_DIR]     (root)

. "$(dirname "$0")/daemon-lib.sh"
need_root daemon-sinks

RACES=$SRC_DIR/$BUILD/tests/daemon/two_races
[[ $BUILD == /* ]] && RACES=$BUILD/tests/daemon/two_races

# A stand-in journald: prints each datagram's fields, one datagram per line, until the
# test's end kills it (an idle timeout of its own ran out at load 16-33 before the first
# report came).
python3 - "$TMP/journal" >"$TMP/journal.out" <<'PY' &
import socket, sys, struct
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
while True:
    d = s.recv(1 << 20)
    fields, i = {}, 0
    while i < len(d):
        nl = d.index(b"\n", i)
        line = d[i:nl]
        if b"=" in line:
            k, v = line.split(b"=", 1); i = nl + 1
        else:
            k = line; n = struct.unpack("<Q", d[nl + 1:nl + 9])[0]
            v = d[nl + 9:nl + 9 + n]; i = nl + 9 + n + 1
        fields[k.decode()] = v.decode()
    print(" ".join("%s=%s" % (k, v.replace("\n", "\\n")) for k, v in sorted(fields.items())),
          flush=True)
PY
jpid=$!
TPIDS+=($jpid)
for ((i = 0; i < WAIT_S * 10; i++)); do [[ -S $TMP/journal ]] && break; sleep 0.1; done

cat >"$TMP/kcsand.conf" <<CONF
target user $RACES --functions reader_a,writer_a
report_once_in_ms 500
syslog yes
stderr yes
kmsg yes
CONF
kmarker="kcsand-daemon-sinks $$ $RANDOM"
echo "$kmarker" >/dev/kmsg
KCSAND_JOURNAL_SOCKET=$TMP/journal start_daemon "$TMP/kcsand.conf" || { fail start "kcsand did not start"; finish; exit; }
start_target "$RACES"
m=$(log_mark)
wait_title "$m" "data-race in reader_a / writer_a" 30
# Until KCSAN's dedup has held a report back (the check below), bounded: a fixed 2 s
# saw none at load 16 (the race is continuous, but the probes' hits came that slowly).
for ((i = 0; i < WAIT_S * 4; i++)); do
	(( $("$CTL" -j stats | jq .kcsand.suppressed_by_dedup) > 0 )) && break
	sleep 0.25
done
"$CTL" off
sleep 1
n=$("$CTL" -j stats | jq .kcsand.reports)
kmsg=$("$CTL" -j stats | jq '.kcsand.kmsg_reports + .kcsand.kmsg_dropped')
kmsg_written=$("$CTL" -j stats | jq .kcsand.kmsg_reports)
stop_daemon

check log_reports_counted "$n" "$(grep -c '^BUG: KCSAN: ' "$LOG")"
check stderr_reports_counted "$n" "$(grep -c '^BUG: KCSAN: ' "$DERR")"
check journal_reports_counted "$n" "$(grep -c 'KCSAN_TITLE=' "$TMP/journal.out")"
# kmsg yes: each report in the kernel log, or counted as dropped by the rate limit.
check kmsg_reports_counted "$n" "$kmsg"
# This daemon's reports only: another kcsand on the machine (CI beside other work)
# may write the same title to the kernel log meanwhile; each report's "PID:" line
# names its target.
check kmsg_reports_in_dmesg "$kmsg_written" \
	"$(dmesg | sed -n "/$kmarker/,\$p" | sed -E 's/^\[ *[0-9.]+\] ?//' |
	   awk -v t='BUG: KCSAN: data-race in reader_a / writer_a' -v p="$TPID" '
		$0 == t { title = 1; next }
		/^BUG: KCSAN: / { title = 0 }
		title && $0 ~ ("^CPU: [0-9]+ PID: " p " ") { n++; title = 0 }
		END { print n + 0 }')"
if ((n > 0)); then ok reports_seen; else fail reports_seen "reports, got $n"; fi
line=$(grep -m1 'KCSAN_TITLE=' "$TMP/journal.out")
for want in "KCSAN_TITLE=data-race in reader_a / writer_a" \
	    "KCSAN_BINARY=$RACES" "SYSLOG_IDENTIFIER=kcsand" "PRIORITY=3" "MESSAGE===="; do
	if [[ " $line" == *" $want"* ]]; then ok "journal_field_${want%%=*}"
	else fail "journal_field_${want%%=*}" "'$want' in the datagram, got: $line"; fi
done
# Each function with its own access, in either order: writer_a came first in one run
# when the history reported the pair.
field() { grep -oE "(^| )$1=[^ ]+" <<<"$line" | sed 's/.*=//'; }
pairs="$(field KCSAN_FUNC1)/$(field KCSAN_ACCESS1) $(field KCSAN_FUNC2)/$(field KCSAN_ACCESS2)"
if [[ $pairs == "reader_a/read writer_a/write" || $pairs == "writer_a/write reader_a/read" ]]; then
	ok journal_field_accesses
else fail journal_field_accesses "reader_a/read and writer_a/write, got $pairs in: $line"; fi
# Fields with a value of their own: not empty, and of the right form.
for want in "KCSAN_ADDR=0x[0-9a-f]+" "KCSAN_PID1=[1-9][0-9]*" "KCSAN_PID2=[1-9][0-9]*"; do
	if [[ " $line " =~ \ $want\  ]]; then ok "journal_field_${want%%=*}"
	else fail "journal_field_${want%%=*}" "'$want' in the datagram, got: $line"; fi
done
if [[ $line == *"MESSAGE="*"BUG: KCSAN: data-race in "*"Reported by Kernel Concurrency"* ]]
then ok journal_message_is_the_report; else fail journal_message_is_the_report "KCSAN's text"; fi
# KCSAN's dedup ran before the sinks: the summary counts what it held back.
if grep -Eq "suppressed_by_dedup: [1-9]" "$DERR"; then ok dedup_before_sinks
else fail dedup_before_sinks "duplicates suppressed, got: $(grep -o 'suppressed_by_dedup[^ ]* [0-9]*' "$DERR")"
fi

# --json: JSON lines on stderr and in the log.
cat >"$TMP/kcsand.conf" <<CONF
target user $RACES --functions reader_b,writer_b
report_once_in_ms 500
CONF
start_daemon "$TMP/kcsand.conf" --json || { fail start "kcsand did not start"; finish; exit; }
# Until the pair: on a loaded machine the first report may be the reader's alone, "race
# at unknown origin" (title "data-race in reader_b", one access), which is as right.
for ((i = 0; i < WAIT_S * 4; i++)); do
	grep -q '"title":"data-race in reader_b / writer_b"' "$LOG" 2>/dev/null && break
	sleep 0.25
done
stop_daemon
if [[ -s $LOG ]] && jq -e -s 'any(.title == "data-race in reader_b / writer_b") and
	all(.title | test("^data-race in (reader_b|writer_b)( / (reader_b|writer_b))?$"))' \
	"$LOG" >/dev/null; then ok json_log; else fail json_log "JSON lines, got: $(head -c 200 "$LOG")"; fi
if grep '^{' "$DERR" | jq -e -s 'any(.accesses | length == 2) and all(.accesses | length >= 1)' >/dev/null
then ok json_stderr; else fail json_stderr "JSON lines on stderr"; fi

finish
