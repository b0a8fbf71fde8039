#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""List kcsand BPF programs that no live process holds.

A program stays loaded while an fd refers to it (the program's or a link's) or it
is pinned; kcsand pins nothing, so a program of ours with an id above FIRST_ID
that no /proc/PID/fdinfo names is left behind.  Other kcsand runs that are still
going (a shared machine, CI beside other work) hold theirs and are not counted.

Two things make one look racy, and neither is a leak: a run that loads a program
after the holders were read, and a run that ends (its programs then go away,
freed a little later: after an RCU grace period, and a uprobe_multi link's
after its uprobes are gone, which takes seconds on a loaded machine) after the
programs were listed.  So the programs are listed first and the holders read
after, and a program counts as left behind only if it is still there and still
held by nobody in every look for WAIT_S seconds.  A leak stays for good, so the
wait costs nothing but on a failure, or while another run is ending.  It is the
suites' wait for what a loaded machine delays (KCSAND_TEST_WAIT_S, 120 s):
kcsand's stops took 3.5-40 s at load 33-35, once 379 s, queued on the
machine's uprobe lock, and an ended run's links let go of their uprobes on
the same lock; 15 s, as before, would have called such a run's programs leaked.

    bpf-leaks.py FIRST_ID       prints one line per leaked program, exits 1 if any
    bpf-leaks.py --max-id       prints the highest program id now
"""
import glob
import json
import os
import re
import subprocess
import sys
import time

WAIT_S = float(os.environ.get("KCSAND_TEST_WAIT_S", 120))
ROUND_GAP_S = 0.5


def progs():
    out = subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True, text=True,
                         check=True).stdout
    return json.loads(out or "[]")


def held_ids():
    held = set()
    for path in glob.glob("/proc/[0-9]*/fdinfo/*"):
        try:
            with open(path) as f:
                for m in re.finditer(r"^prog_id:\s*(\d+)$", f.read(), re.M):
                    held.add(int(m.group(1)))
        except OSError:
            pass
    return held


def unheld(first):
    """Our programs above FIRST now, minus those held once the listing was taken."""
    ours = {p["id"]: p["name"] for p in progs()
            if p["id"] > first and p.get("name", "").startswith("kcsand_")}
    held = held_ids()
    return {i: n for i, n in ours.items() if i not in held}


def main():
    if sys.argv[1:] == ["--max-id"]:
        print(max([p["id"] for p in progs()] or [0]))
        return 0
    first = int(sys.argv[1])
    leaked = unheld(first)
    deadline = time.monotonic() + WAIT_S
    while leaked and time.monotonic() < deadline:
        time.sleep(ROUND_GAP_S)
        again = unheld(first)
        leaked = {i: n for i, n in leaked.items() if i in again}
    for i, n in sorted(leaked.items()):
        print(f"{i} {n}")
    return 1 if leaked else 0


sys.exit(main())
