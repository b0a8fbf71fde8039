#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""
One result format for every test script: tests/lib.sh's.  Checked on the
shell scripts under tests/ and bench/:
  - none but tests/lib.sh defines ok, fail, check, check_cmd, finish,
    setup_fail, not_applicable or summary_value (a copy counts apart, and
    its summary line is not the one CI reads);
  - none calls bad, the guest suites' old name for fail: with its alias
    gone, a call would be "command not found", a failure that counts for
    nothing;
  - none writes "0 passed, 1 failed" itself (setup_fail does).
Exit status 1 with each offence named, else 0.

  tests/lint-results.py [SOURCE_DIR]      (make lint runs it)
"""
import os
import re
import sys

LIB = "tests/lib.sh"
LIB_FUNCS = ("ok", "fail", "check", "check_cmd", "finish", "setup_fail", "not_applicable",
             "summary_value", "bad")
DEFINES = re.compile(r"^\s*(?:function\s+)?(" + "|".join(LIB_FUNCS) + r")\s*\(\)")
# bad at a command's place: a line's start, or after ; { ( || && then else do.
CALLS_BAD = re.compile(r"(?:^|[;{(]|\|\||&&|\bthen|\belse|\bdo)\s*bad\s+[\"'$\w]")
SETUP_SUMMARY = re.compile(r"\b0 passed, 1 failed\b")


def scripts(root):
    for top in ("tests", "bench"):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for f in sorted(files):
                if f.endswith(".sh"):
                    yield os.path.relpath(os.path.join(dirpath, f), root)


def offences_in(root, rel):
    with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
        lines = f.read().splitlines()
    for no, line in enumerate(lines, 1):
        code = line.split("#", 1)[0] if not line.lstrip().startswith("#") else ""
        if rel == LIB:
            continue
        m = DEFINES.match(code)
        if m:
            yield f"{rel}:{no}: defines {m.group(1)}(), which {LIB} has"
        if CALLS_BAD.search(code):
            yield f"{rel}:{no}: calls bad: use fail ({LIB})"
        if SETUP_SUMMARY.search(code):
            yield f"{rel}:{no}: writes the summary line itself: use setup_fail ({LIB})"


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    offences = [o for rel in scripts(root) for o in offences_in(root, rel)]
    for o in offences:
        print(f"lint-results: {o}", file=sys.stderr)
    return 1 if offences else 0


if __name__ == "__main__":
    sys.exit(main())
