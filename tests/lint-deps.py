#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""
The dependency rule of docs/DESIGN.md, checked on the #include lines:
no include cycle between the subsystem folders of daemon/, nothing includes
daemon/main.c's level or cli/, and no file includes another folder's
internal header (*_int.h).  Exit status 1 with each offence named, else 0.

  tests/lint-deps.py [SOURCE_DIR]      (make lint runs it)
"""
import os
import re
import sys

# Cycles allowed for now: none.  (engine <-> sampler was one until the
# sampler reached the engine through struct sampler_ops.)
KNOWN_CYCLES = []

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def subsystem(path):
    """daemon/X/... -> X, daemon/main.c -> main, cli/... -> cli."""
    parts = path.split("/")
    if parts[0] == "cli":
        return "cli"
    if parts[0] == "daemon":
        return parts[1] if len(parts) > 2 else "main"
    return None


def edges(root):
    """{(from, to): [file:line, ...]} over daemon/ and cli/."""
    folders = {d for d in os.listdir(os.path.join(root, "daemon"))
               if os.path.isdir(os.path.join(root, "daemon", d))}
    out, offences = {}, []
    for top in ("daemon", "cli"):
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            for name in sorted(names):
                if not name.endswith((".c", ".h")):
                    continue
                path = os.path.relpath(os.path.join(dirpath, name), root)
                src = subsystem(path)
                with open(os.path.join(root, path), errors="replace") as f:
                    for nr, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m or "/" not in m.group(1):
                            continue	# same folder, include/ or build/
                        dst = m.group(1).split("/")[0]
                        if dst not in folders:
                            continue
                        where = f"{path}:{nr}"
                        if dst != src and m.group(1).endswith("_int.h"):
                            offences.append(f"{where}: {src}/ includes {m.group(1)}, "
                                            f"internal to {dst}/")
                        if dst != src:
                            out.setdefault((src, dst), []).append(where)
    return out, offences


def cycles(graph_edges):
    """Strongly connected components of more than one subsystem (Tarjan)."""
    graph = {}
    for a, b in graph_edges:
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set())
    index, low, stack, on, comps, n = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(comp)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return comps


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    graph_edges, offences = edges(root)
    for (a, b), where in sorted(graph_edges.items()):
        if b in ("main", "cli"):
            offences.append(f"{where[0]}: {a}/ includes {b}/, the top")
    for comp in cycles(graph_edges):
        if comp in KNOWN_CYCLES:
            continue
        inside = [f"{a} -> {b} ({w[0]})" for (a, b), w in sorted(graph_edges.items())
                  if a in comp and b in comp]
        offences.append("include cycle between " + ", ".join(sorted(comp)) + ": "
                        + "; ".join(inside))
    if os.environ.get("V"):
        for (a, b), where in sorted(graph_edges.items()):
            print(f"{a} -> {b}: {len(where)} includes, first {where[0]}")
    for o in offences:
        print(f"lint-deps: {o}", file=sys.stderr)
    return 1 if offences else 0


if __name__ == "__main__":
    sys.exit(main())
