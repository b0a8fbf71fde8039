#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Fail when a BPF program's call chain may use more than 512 bytes of stack.

    tests/lint-bpf-stack.py OBJ.bpf.o [-v]

The kernel adds up the stack of every frame of a call chain, each rounded up
to 32 bytes, and refuses a program whose chain passes 512 (MAX_BPF_STACK).
Kernels as old as Debian 12's 6.1 count a global function's frame and a
bpf_loop() callback's frame like any other, so a program that a newer
kernel loads may be refused there (it was: "combined stack size of 3 calls
is 544").  This host's kernel cannot show that, so the bound is checked on
the object instead, with 6.1's rule:

- a function's stack is the deepest r10 offset it touches (the verifier
  counts only what a path reaches, so this is an upper bound);
- a call (R_BPF_64_32 to a function, or to .text at (imm + 1) * 8) and a
  callback's address (R_BPF_64_64 to a function, or to .text at imm) are
  frames on top of the caller's.
"""
import re
import subprocess
import sys

MAX_BPF_STACK = 512


def objdump(args, obj):
    return subprocess.run(["llvm-objdump", *args, obj], check=True,
                          capture_output=True, text=True).stdout


def functions(obj):
    """{(section, start byte): name} and {name: section} of the object's functions."""
    by_off, sec_of = {}, {}
    for line in objdump(["-t"], obj).splitlines():
        m = re.match(r"^([0-9a-f]+)\s+\S+\s+F\s+(\S+)\s+([0-9a-f]+)\s+(\S+)$", line.strip())
        if m:
            by_off[(m.group(2), int(m.group(1), 16))] = m.group(4)
            sec_of[m.group(4)] = m.group(2)
    return by_off, sec_of


def scan(obj):
    """Each function's stack depth and the functions it calls or passes as callbacks."""
    by_off, sec_of = functions(obj)
    starts = {}
    for (sec, off), name in by_off.items():
        starts.setdefault(sec, []).append((off, name))
    for v in starts.values():
        v.sort()
    depth, calls = {}, {}
    sec, cur, last = None, None, ""
    for line in objdump(["-dr", "--no-show-raw-insn"], obj).splitlines():
        m = re.match(r"^Disassembly of section (\S+):", line)
        if m:
            sec = m.group(1)
            continue
        m = re.match(r"^\s*(\d+):\s+(.*)$", line)
        if m and sec:
            off = int(m.group(1)) * 8
            for start, name in starts.get(sec, []):
                if start <= off:
                    cur = name
            last = m.group(2)
            depth.setdefault(cur, 0)
            calls.setdefault(cur, set())
            for o in re.findall(r"r10 - (0x[0-9a-f]+|\d+)\)", last):
                depth[cur] = max(depth[cur], int(o, 0))
            continue
        m = re.match(r"^\s*[0-9a-f]+:\s+(R_BPF_64_32|R_BPF_64_64)\s+(\S+)$", line)
        if not m or cur is None:
            continue
        kind, sym = m.groups()
        call = re.match(r"call (-?\d+)$", last)
        ref = re.match(r"r\d+ = (-?\d+) ll$", last)
        if sym == ".text":
            if kind == "R_BPF_64_32" and call:
                callee = by_off.get((".text", (int(call.group(1)) + 1) * 8))
            elif kind == "R_BPF_64_64" and ref:
                callee = by_off.get((".text", int(ref.group(1))))
            else:
                callee = None
        else:
            callee = sym if sym in sec_of and (call or ref) else None
        if callee:
            calls[cur].add(callee)
    return depth, calls, sec_of


def deepest(fn, depth, calls, seen=()):
    """(bytes, chain) of the deepest call chain from fn, 6.1's rounding."""
    own = -(-max(depth.get(fn, 0), 1) // 32) * 32
    best = (0, [])
    for callee in calls.get(fn, ()):
        if callee in seen:
            continue
        best = max(best, deepest(callee, depth, calls, seen + (fn,)))
    return own + best[0], [f"{fn} ({own})"] + best[1]


def main():
    if len(sys.argv) < 2:
        print("usage: lint-bpf-stack.py OBJ.bpf.o [-v]", file=sys.stderr)
        return 2
    depth, calls, sec_of = scan(sys.argv[1])
    progs = [f for f, s in sec_of.items() if s != ".text"]
    if not progs:
        print(f"lint-bpf-stack: no BPF program found in {sys.argv[1]}", file=sys.stderr)
        return 2
    bad = 0
    for prog in sorted(progs):
        total, chain = deepest(prog, depth, calls)
        if total > MAX_BPF_STACK:
            bad += 1
            print(f"lint-bpf-stack: {prog}: a call chain may take {total} bytes of stack, "
                  f"over the {MAX_BPF_STACK} that 6.1's verifier allows: {' -> '.join(chain)}")
        elif "-v" in sys.argv[2:]:
            print(f"{prog}: {total} ({' -> '.join(chain)})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
