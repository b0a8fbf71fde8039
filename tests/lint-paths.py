#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Every file of ours that a comment, a script or a doc names must exist.

Files move (a restructure turns one file into two, or a folder) and
comments that name the old place mislead the next reader.  This reads every
source, script and doc of the tree and checks each name that looks like a file
of this repository:

- a path whose first part is the name of one of our folders, at any depth
  (daemon/, tests/, sites/, programs/, ...; not kernel/, Linux's), must exist,
  from the top, from the naming file's folder, or under daemon/ or tests/
  (comments inside daemon/ say sites/decode.c);
- a bare file name (decode.c) must be the name of some file of the tree, a
  system header, or one of ELSEWHERE below: names of other projects' files and
  of examples.

And the other way: docs/DESIGN.md's map (its Layout block) names every
source file of bpf/, include/, daemon/ and cli/ (a header is named by its .c
twin, and NAME_int.h by the rule the page states) and every folder of
tests/ and bench/, so that a newcomer finds each file from the map.

Code fragments that look like file names ($out.sh, t.c as a field access,
NAME.c as a placeholder) are passed over: a stem of two characters or less,
one that starts with '_' or '$', or an upper-case placeholder.

    lint-paths.py [TOP]     prints FILE:LINE: NAME for each, and each file the map
                            leaves out; exits 1 if any
"""
import glob
import os
import re
import sys

# Files that are not ours, named on purpose: where a stack or an example points.
ELSEWHERE = {
    "pthread_create.c",       # glibc, in the frames of a report
    "decode_stacktrace.sh",   # the kernel's scripts/
    "myprog.c",               # the README's example program
    "prog.c",                 # what bench/programs/gen_sites.sh writes
    "pigz.c",                 # pigz's source, where docs/real-programs.md places reports
    "stress-futex.c",         # stress-ng's and memcached's sources, likewise
    "stress-mutex.c",
    "core-mwc.c",
    "stress-atomic.c",
    "core-helper.c",
    "stress-ng.h",
    "items.c",
    "proto_text.c",
    "memcached.c",
    "memcached.h",
    "crawler.c",
    "server.c",               # redis's
    "stream_decoder_mt.c",    # liblzma's
    "sort.c",                 # coreutils', where docs/real-programs.md places sort's report
    "color.c",                # git's
    "locale.c",               # perl's
    "perlvars.h",
}
# A path is checked when its first part is the name of one of our folders, at any depth
# (sites/decode.c, unit/test_array.c), but for these: other projects' paths begin so
# (Linux's kernel/kcsan/core.c), and ours are named from the top (bench/kernel/p9-kernel-fs.sh).
FOREIGN_DIRS = {"kernel"}
TEXT = (".c", ".h", ".cc", ".sh", ".py", ".md", ".mk", ".tsv", ".8", ".conf", ".service")
NAME = re.compile(r"(?<![\w./$-])((?:[\w.-]+/)*[\w-]+(?:\.bpf)?\.(?:c|h|cc|sh|py|md|mk))\b")
SYS_INCLUDE = ("/usr/include", "/usr/include/x86_64-linux-gnu") + tuple(
    glob.glob("/usr/lib/gcc/x86_64-linux-gnu/*/include"))


def tree(top):
    for d, subdirs, names in os.walk(top):
        subdirs[:] = [s for s in subdirs if s not in (".git", "build")]
        for n in names:
            yield os.path.relpath(os.path.join(d, n), top)


def placeholder(name):
    stem = os.path.basename(name).split(".")[0]
    return (len(stem) <= 2 or stem[0] in "_$" or re.search(r"\b[A-Z]{3,}\b|^[A-Z]+_", stem)
            or re.search(r"/[A-Z]+\.", name))


def missing(name, where, files, dirs, basenames, our_dirs):
    if placeholder(name):
        return False
    if "/" not in name:
        return not (name in basenames or name in ELSEWHERE or
                    any(os.path.exists(os.path.join(d, name)) for d in SYS_INCLUDE))
    if name.split("/")[0] not in our_dirs:
        return False
    tries = [name, os.path.normpath(os.path.join(os.path.dirname(where), name)),
             "daemon/" + name, "tests/" + name]
    return not any(t in files or t in dirs for t in tries)


MAPPED = ("bpf/", "include/", "daemon/", "cli/")


def unmapped(top, files):
    """The files and folders docs/DESIGN.md's Layout block does not name."""
    with open(os.path.join(top, "docs/DESIGN.md"), encoding="utf-8") as fh:
        page = fh.read()
    start = page.find("## Layout")
    block = page[start:page.find("\n## ", start + 1)]
    named = set(re.findall(r"[\w.-]+", block))
    out = []
    for f in sorted(files):
        base = os.path.basename(f)
        stem, ext = os.path.splitext(base)
        if not f.startswith(MAPPED) or ext not in (".c", ".h") or base in named:
            continue
        if stem.endswith("_int") or (ext == ".h" and stem + ".c" in named):
            continue
        out.append(f)
    for d in sorted({"/".join(f.split("/")[:2]) for f in files
                     if f.startswith(("tests/", "bench/")) and f.count("/") >= 2}):
        if d.split("/")[1] not in named:
            out.append(d + "/")
    return out


def main():
    top = sys.argv[1] if len(sys.argv) > 1 else "."
    files = set(tree(top))
    dirs = {os.path.dirname(f) for f in files}
    dirs |= {os.path.dirname(d) for d in dirs}
    basenames = {os.path.basename(f) for f in files}
    our_dirs = {part for f in files for part in f.split("/")[:-1]} - FOREIGN_DIRS
    bad = 0
    for f in sorted(files):
        if f == "vmlinux.h" or not (f.endswith(TEXT) or f == "Makefile" or "/" not in f and
                                    f.isupper() or f.startswith((".ci/", "tests/vm/kcsan-vm"))):
            continue
        try:
            with open(os.path.join(top, f), encoding="utf-8") as fh:
                lines = fh.read().split("\n")
        except (OSError, UnicodeDecodeError):
            continue
        for ln, line in enumerate(lines, 1):
            if re.match(r"\s*#\s*include\s*<", line):
                continue
            for m in NAME.finditer(line):
                if missing(m.group(1), f, files, dirs, basenames, our_dirs):
                    print(f"{f}:{ln}: names {m.group(1)}, which is no file of the tree")
                    bad += 1
    for f in unmapped(top, files):
        print(f"docs/DESIGN.md: its map names no {f}")
        bad += 1
    return 1 if bad else 0


sys.exit(main())
