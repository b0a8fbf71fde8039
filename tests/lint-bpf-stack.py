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
  counts only what a path reaches, so this is an upper bound), directly or
  through a register that holds r10 plus a constant: "r2 = r10; r2 += -480"
  hands a helper a buffer the function never touches itself, and the
  verifier counts it (check_stack_range_initialized) as deep as its start;
- a call (R_BPF_64_32 to a function, or to .text at (imm + 1) * 8; without a
  relocation, a call within its section at pc + imm + 1) and a callback's
  address (R_BPF_64_64 to a function, or to .text at imm) are frames on top
  of the caller's;
- a call the lint cannot resolve to a function is an error, not a chain
  left out.

    tests/lint-bpf-stack.py --self-test OBJ.bpf.o

checks the lint on tests/lint/bpf_stack_cases.bpf.c: each program named
over_* must be found over 512 bytes, each within_* not.
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


# One instruction of llvm-objdump -dr: index, raw bytes, text.
INSN = re.compile(r"^\s*(\d+):\s+((?:[0-9a-f]{2}[ \t])+)\s*(.*)$")
RELOC = re.compile(r"^\s*[0-9a-f]+:\s+(R_BPF_64_32|R_BPF_64_64)\s+(\S+)$")
CALLER_SAVED = ("r0", "r1", "r2", "r3", "r4", "r5")


def stack_offsets(text, fp):
    """Stack offsets an instruction reaches, fp: {register: its r10 offset}, updated."""
    found = []
    for reg, sign, num in re.findall(r"\((r\d+) ([+-]) (0x[0-9a-f]+|\d+)\)", text):
        if reg in fp:
            found.append(fp[reg] + (int(num, 0) if sign == "+" else -int(num, 0)))
    m = re.match(r"^(r\d+) = (r\d+)$", text)
    if m and m.group(2) in fp:
        fp[m.group(1)] = fp[m.group(2)]
        found.append(fp[m.group(1)])
        return found
    m = re.match(r"^(r\d+) ([+-])= (-?(?:0x[0-9a-f]+|\d+))$", text)
    if m and m.group(1) in fp:
        fp[m.group(1)] += int(m.group(3), 0) * (1 if m.group(2) == "+" else -1)
        found.append(fp[m.group(1)])
        return found
    m = re.match(r"^([rw]\d+) \S*= ", text)
    if m:
        fp.pop("r" + m.group(1)[1:], None)
    if text.startswith("call"):
        for reg in CALLER_SAVED:
            fp.pop(reg, None)
    return found


def scan(obj):
    """Each function's stack depth, the functions it calls or passes as callbacks, and
    the calls the lint could not resolve."""
    by_off, sec_of = functions(obj)
    starts = {}
    for (sec, off), name in by_off.items():
        starts.setdefault(sec, []).append((off, name))
    for v in starts.values():
        v.sort()
    depth, calls, unresolved = {}, {}, []
    sec, cur, last, fp = None, None, None, {}
    for line in objdump(["-dr"], obj).splitlines():
        m = re.match(r"^Disassembly of section (\S+):", line)
        if m:
            sec = m.group(1)
            continue
        m = INSN.match(line)
        if m and sec:
            if last and last["pseudo_call"]:
                resolve_pc_relative(last, by_off, calls, unresolved)
            idx, raw, text = int(m.group(1)), m.group(2).split(), m.group(3)
            name = cur
            for start, fn in starts.get(sec, []):
                if start <= idx * 8:
                    name = fn
            if name != cur:
                cur, fp = name, {"r10": 0}
            last = {"sec": sec, "idx": idx, "text": text, "fn": cur,
                    "pseudo_call": raw[0] == "85" and int(raw[1], 16) >> 4 == 1}
            depth.setdefault(cur, 0)
            calls.setdefault(cur, set())
            for off in stack_offsets(text, fp):
                depth[cur] = max(depth[cur], -off)
            continue
        m = RELOC.match(line)
        if not m or last is None:
            continue
        kind, sym = m.groups()
        pseudo_call, last["pseudo_call"] = last["pseudo_call"], False
        callee = resolve_reloc(kind, sym, last["text"], by_off, sec_of)
        if callee:
            calls[cur].add(callee)
        elif pseudo_call or (sym == ".text" and re.search(r" ll$", last["text"])):
            unresolved.append(f"{cur}: {last['text']} ({kind} {sym})")
    if last and last["pseudo_call"]:
        resolve_pc_relative(last, by_off, calls, unresolved)
    return depth, calls, sec_of, unresolved


def resolve_reloc(kind, sym, text, by_off, sec_of):
    """The function a relocated call or callback address names, or None."""
    call = re.match(r"call (-?\d+)$", text)
    ref = re.match(r"r\d+ = (-?(?:0x[0-9a-f]+|\d+)) ll$", text)
    if sym == ".text":
        if kind == "R_BPF_64_32" and call:
            return by_off.get((".text", (int(call.group(1)) + 1) * 8))
        if kind == "R_BPF_64_64" and ref:
            return by_off.get((".text", int(ref.group(1), 0)))
        return None
    return sym if sym in sec_of and (call or ref) else None


def resolve_pc_relative(insn, by_off, calls, unresolved):
    """A call with no relocation: to a function of its own section, at pc + imm + 1."""
    call = re.match(r"call (-?\d+)$", insn["text"])
    callee = call and by_off.get((insn["sec"], (insn["idx"] + int(call.group(1)) + 1) * 8))
    if callee:
        calls[insn["fn"]].add(callee)
    else:
        unresolved.append(f"{insn['fn']}: {insn['text']} (no relocation)")
    insn["pseudo_call"] = False


def deepest(fn, depth, calls, seen=()):
    """(bytes, chain) of the deepest call chain from fn, 6.1's rounding."""
    own = -(-max(depth.get(fn, 0), 1) // 32) * 32
    best = (0, [])
    for callee in calls.get(fn, ()):
        if callee in seen:
            continue
        best = max(best, deepest(callee, depth, calls, seen + (fn,)))
    return own + best[0], [f"{fn} ({own})"] + best[1]


def chains(obj):
    """({program: (bytes, chain)}, unresolved calls), or None without a program."""
    depth, calls, sec_of, unresolved = scan(obj)
    progs = [f for f, s in sec_of.items() if s != ".text"]
    if not progs:
        print(f"lint-bpf-stack: no BPF program found in {obj}", file=sys.stderr)
        return None
    return {p: deepest(p, depth, calls) for p in sorted(progs)}, unresolved


def check(obj, verbose):
    """Print each program over the bound (and with -v, each one): 1 if any, or a call unseen."""
    res = chains(obj)
    if res is None:
        return 2
    totals, unresolved = res
    for u in unresolved:
        print(f"lint-bpf-stack: {obj}: a call the lint cannot follow, so a chain it cannot "
              f"count: {u}")
    for prog, (total, chain) in totals.items():
        if total > MAX_BPF_STACK:
            print(f"lint-bpf-stack: {prog}: a call chain may take {total} bytes of stack, "
                  f"over the {MAX_BPF_STACK} that 6.1's verifier allows: {' -> '.join(chain)}")
        elif verbose:
            print(f"{prog}: {total} ({' -> '.join(chain)})")
    return 1 if unresolved or any(t > MAX_BPF_STACK for t, _ in totals.values()) else 0


def self_test(obj):
    """over_* programs must be found over the bound, within_* not (tests/lint/)."""
    res = chains(obj)
    if res is None:
        return 2
    totals, unresolved = res
    bad = [p for p, (t, _) in totals.items()
           if (p.startswith("over_") and t <= MAX_BPF_STACK) or
           (p.startswith("within_") and t > MAX_BPF_STACK)]
    for p in bad:
        print(f"lint-bpf-stack: self-test: {p} counted {totals[p][0]} bytes "
              f"({' -> '.join(totals[p][1])}), which its name denies")
    for u in unresolved:
        print(f"lint-bpf-stack: self-test: a call not followed: {u}")
    print(f"lint-bpf-stack: self-test: {len(totals) - len(bad)} of {len(totals)} programs "
          "counted as their names say")
    return 1 if bad or unresolved else 0


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("-")]
    if len(args) != 1:
        print("usage: lint-bpf-stack.py [--self-test] OBJ.bpf.o [-v]", file=sys.stderr)
        return 2
    if "--self-test" in sys.argv[1:]:
        return self_test(args[0])
    return check(args[0], "-v" in sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
