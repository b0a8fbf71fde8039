#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Functions that do not read in one screen.

Kernel style puts a function's opening and closing braces alone in column 0,
so a function's body is the lines between them.  Lists every function in
daemon/, cli/ and bpf/ whose body is longer than LIMIT lines, the bound of
issue 12, and fails (exit 1) if there is one.  --all lists every function,
the longer ones as errors.  Usage: lint-length.py [ROOT] [--all]
"""
import os
import re
import sys

LIMIT = 60
DIRS = ("daemon", "cli", "bpf")
NAME = re.compile(r"([A-Za-z_][A-Za-z_0-9]*)\s*\(")


def functions(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    start = None
    for i, line in enumerate(lines):
        if line == "{" and start is None:
            start = i
        elif line == "}" and start is not None:
            head = ""
            for j in range(start - 1, max(start - 6, -1), -1):
                head = lines[j] + " " + head
                if NAME.search(lines[j]) and not lines[j].startswith((" ", "\t")):
                    break
            m = NAME.search(head)
            yield (m.group(1) if m else "?"), start, i - start - 1
            start = None


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    root = args[0] if args else "."
    over = []
    for d in DIRS:
        for dirpath, _, files in os.walk(os.path.join(root, d)):
            for name in sorted(files):
                if not name.endswith((".c", ".h")):
                    continue
                path = os.path.join(dirpath, name)
                for func, line, n in functions(path):
                    if n > LIMIT or "--all" in sys.argv:
                        over.append((n, os.path.relpath(path, root), line + 1, func))
    bad = 0
    for n, path, line, func in sorted(over, reverse=True):
        if n > LIMIT:
            bad += 1
            print(f"{path}:{line}: error: {func}() is {n} lines (more than {LIMIT})")
        else:
            print(f"{path}:{line}: note: {func}() is {n} lines")
    if bad:
        print(f"lint-length: {bad} function(s) longer than {LIMIT} lines", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
