#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""A small memcached load: THREADS clients, each on its own connection and its
own keys, ROUNDS of set, get, incr and delete in memcached's text protocol.

    mc_load.py PORT [THREADS] [ROUNDS]

Prints each client's replies in client order, so two runs against a working
server print the same text whatever the interleaving; exits 1 on a lost
connection.
"""
import socket
import sys
import threading


def reply(f, multi):
    """One reply: a line, or for a get the lines up to END."""
    lines = []
    while True:
        line = f.readline()
        if not line:
            raise ConnectionError("connection closed")
        lines.append(line.decode().rstrip("\r\n"))
        if not multi or lines[-1] in ("END", "ERROR") or lines[-1].startswith("SERVER_ERROR"):
            return lines


def client(port, me, rounds, out):
    s = socket.create_connection(("127.0.0.1", port), timeout=600)
    f = s.makefile("rb")
    for r in range(rounds):
        key = f"k{me}_{r % 50}"
        val = f"{me}-{r}-" + "x" * (r % 40)
        for cmd, multi in ((f"set {key} 0 0 {len(val)}\r\n{val}\r\n", False),
                           (f"get {key}\r\n", True),
                           (f"set n{me} 0 0 1\r\n0\r\n" if r == 0 else f"incr n{me} 1\r\n", False),
                           (f"delete {key}\r\n" if r % 7 == 0 else f"get n{me}\r\n", r % 7 != 0)):
            s.sendall(cmd.encode())
            out.extend(reply(f, multi))
    s.close()


def main():
    port = int(sys.argv[1])
    threads = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 500
    outs = [[] for _ in range(threads)]
    errors = []

    def run(i):
        try:
            client(port, i, rounds, outs[i])
        except OSError as e:
            errors.append(f"client {i}: {e}")

    ts = [threading.Thread(target=run, args=(i,)) for i in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for i, o in enumerate(outs):
        print(f"client {i}: {len(o)} replies")
        print("\n".join(o))
    for e in errors:
        print(e, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
