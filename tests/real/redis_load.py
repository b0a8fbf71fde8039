#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""A small redis load that keeps redis's I/O threads busy: CLIENTS connections,
each on its own keys, ROUNDS of a pipelined batch of SET, GET, INCR, APPEND,
LPUSH, LRANGE and DEL in RESP.

    redis_load.py PORT [CLIENTS] [ROUNDS]

redis hands clients' reads and writes to its I/O threads only when at least
twice as many clients as threads have replies pending in one turn of its
event loop (redis's stopThreadedIOIfNeeded()): so each round sends
every connection's batch before it reads any reply, from one thread.
Prints each client's replies in client order, so two runs against a working
server print the same text whatever the interleaving; then, on stderr,
redis's own count of reads and writes its I/O threads did (INFO stats), which
is timing and not part of the output.  Exits 1 on a lost connection.
"""
import socket
import sys

BATCH = 8


def command(*words):
    """One command in RESP: an array of bulk strings."""
    out = [f"*{len(words)}\r\n"]
    for w in words:
        w = str(w)
        out.append(f"${len(w.encode())}\r\n{w}\r\n")
    return "".join(out)


def reply(f):
    """One RESP reply, as text: +s, -e, :n, $bulk, *array (one level of nesting is enough)."""
    line = f.readline()
    if not line:
        raise ConnectionError("connection closed")
    line = line.decode().rstrip("\r\n")
    kind, rest = line[0], line[1:]
    if kind == "$":
        if int(rest) < 0:
            return "(nil)"
        data = f.read(int(rest) + 2)
        return "$" + data[:-2].decode()
    if kind == "*":
        return "[" + ",".join(reply(f) for _ in range(int(rest))) + "]"
    return line


def batch(me, r):
    key = f"k{me}_{r % 50}"
    val = f"{me}-{r}-" + "x" * (r % 40)
    return [command("SET", key, val), command("GET", key), command("INCR", f"n{me}"),
            command("APPEND", f"a{me}_{r % 20}", "y" * (1 + r % 5)),
            command("LPUSH", f"l{me}", r), command("LRANGE", f"l{me}", 0, 2),
            command("DEL", key) if r % 7 == 0 else command("GET", f"n{me}"),
            command("LTRIM", f"l{me}", 0, 9)]


def main():
    port = int(sys.argv[1])
    clients = int(sys.argv[2]) if len(sys.argv) > 2 else 8
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 300
    conns = [socket.create_connection(("127.0.0.1", port), timeout=600) for _ in range(clients)]
    files = [c.makefile("rb") for c in conns]
    outs = [[] for _ in range(clients)]
    # A clean database: the keys of an earlier run (FLUSHALL's reply is the same in every run).
    conns[0].sendall(command("FLUSHALL").encode())
    outs[0].append(reply(files[0]))
    try:
        for r in range(rounds):
            for me, c in enumerate(conns):
                c.sendall("".join(batch(me, r)).encode())
            for me, f in enumerate(files):
                outs[me].extend(reply(f) for _ in range(BATCH))
        conns[0].sendall(command("INFO", "stats").encode())
        info = reply(files[0])
    except OSError as e:
        print(f"lost the server: {e}", file=sys.stderr)
        return 1
    for me, o in enumerate(outs):
        print(f"client {me}: {len(o)} replies")
        print("\n".join(o))
    for line in info.split("\n"):
        if line.startswith("io_threaded_"):
            print(line.strip(), file=sys.stderr)
    for c in conns:
        c.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
