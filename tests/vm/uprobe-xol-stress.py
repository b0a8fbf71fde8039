#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
#
# Finding 4 (docs/RELIABILITY.md) without kcsand: tests/daemon/churn under perf
# uprobes on its four sites and/or execute breakpoints on one running thread at
# a time, no BPF.  Run in the guest, as root:
#   KCSAN_VM_PROBE_CMD="$PWD/tests/vm/uprobe-xol-stress.py u 8" tests/vm/kcsan-vm --keep -- true
# MODE: u = uprobes only, a = uprobes + execute breakpoints, b = uprobes
# attached and detached every 20 ms, c = execute breakpoints only.  Prints one
# line per run (status -11: SIGSEGV) to stdout and $KCSAN_VM_OUT/stress.txt.
import ctypes, os, random, struct, subprocess, sys, time
MODE, RUNS = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[2].isdigit() else 8
OUT = os.environ.get('KCSAN_VM_OUT', '/tmp')
CHURN = os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../build/tests/daemon/churn')
CHURN = os.path.normpath(CHURN)
SITES = [0x1159, 0x1160, 0x1181, 0x11a2]
T = '/sys/kernel/tracing'
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long

def xbp(tid, addr):
    attr = bytearray(72)
    struct.pack_into('<IIQQQQQIIQQ', attr, 0, 5, 72, 0, 1, 0, 0, 0x60, 0, 4, addr, 8)
    buf = ctypes.create_string_buffer(bytes(attr), 72)
    fd = libc.syscall(298, buf, tid, -1, -1, 8)  # PERF_FLAG_FD_CLOEXEC
    return fd

UFDS = []
UTYPE = int(open('/sys/bus/event_source/devices/uprobe/type').read())
PATHBUF = ctypes.create_string_buffer(CHURN.encode())
def uprobes(on):
    global UFDS
    if on:
        for s in SITES:
            attr = bytearray(72)
            struct.pack_into('<IIQQQQQIIQQ', attr, 0, UTYPE, 72, 0, 0, 0, 0, 0, 0, 0,
                             ctypes.addressof(PATHBUF), s)
            buf = ctypes.create_string_buffer(bytes(attr), 72)
            fd = libc.syscall(298, buf, -1, 0, -1, 8)
            if fd < 0:
                print('uprobe open failed', ctypes.get_errno(), flush=True)
            else:
                UFDS.append(fd)
    else:
        for fd in UFDS:
            os.close(fd)
        UFDS = []

def base_of(pid):
    for line in open('/proc/%d/maps' % pid):
        f = line.split()
        if len(f) >= 6 and f[5] == CHURN and f[2] == '00000000':
            return int(f[0].split('-')[0], 16)
    return None

def running_tids(pid):
    r = []
    for t in os.listdir('/proc/%d/task' % pid):
        try:
            st = open('/proc/%d/task/%s/stat' % (pid, t)).read()
            if st[st.rindex(')') + 2] == 'R' and int(t) != pid:
                r.append(int(t))
        except (OSError, ValueError):
            pass
    return r

uprobes(False)
res = []
for run in range(RUNS):
    if MODE in 'abu':
        uprobes(True)
    p = subprocess.Popen([CHURN, '20', os.environ.get('STRESS_ITERS', '100000')])
    time.sleep(0.05)
    base = base_of(p.pid)
    nx = 0; ntog = 0; t0 = time.time(); on = True
    while p.poll() is None:
        try:
            if MODE == 'b':
                time.sleep(0.02)
                uprobes(False) if on else uprobes(True)
                on = not on; ntog += 1
                continue
            if MODE == 'u':
                time.sleep(0.05); continue
            tids = running_tids(p.pid)
            if not tids or base is None:
                time.sleep(0.002); continue
            tid = random.choice(tids)
            fds = [xbp(tid, base + s) for s in random.sample(SITES, 3)]
            nx += sum(1 for f in fds if f >= 0)
            time.sleep(0.005)
            for f in fds:
                if f >= 0:
                    os.close(f)
        except (OSError, FileNotFoundError):
            pass
    if MODE in 'abu':
        uprobes(False)
    line = 'mode %s run %d status %d xbps %d toggles %d secs %.1f' % (MODE, run, p.returncode, nx, ntog, time.time() - t0)
    print(line, flush=True)
    with open(os.path.join(OUT, 'stress.txt'), 'a') as f:
        f.write(line + '\n')
    res.append(p.returncode)
print('mode %s: %d runs, %d bad' % (MODE, len(res), sum(1 for r in res if r != 0)), flush=True)
