#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""List kcsand BPF programs that no live process holds.

A program stays loaded while an fd refers to it (the program's or a link's) or it
is pinned; kcsand pins nothing, so a program of ours with an id above FIRST_ID
that no /proc/PID/fdinfo names is left behind.  Other kcsand runs that are still
going (a shared development machine) hold theirs and are not counted.

    bpf-leaks.py FIRST_ID       prints one line per leaked program, exits 1 if any
    bpf-leaks.py --max-id       prints the highest program id now
"""
import glob
import json
import re
import subprocess
import sys


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


def main():
    if sys.argv[1:] == ["--max-id"]:
        print(max([p["id"] for p in progs()] or [0]))
        return 0
    first = int(sys.argv[1])
    held = held_ids()
    leaked = [p for p in progs() if p["id"] > first and p.get("name", "").startswith("kcsand_")
              and p["id"] not in held]
    for p in leaked:
        print(f"{p['id']} {p['name']}")
    return 1 if leaked else 0


sys.exit(main())
