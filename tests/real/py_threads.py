# SPDX-License-Identifier: GPL-2.0-only
"""CPython's threading as ordinary Python code uses it, for run-real.sh's
python-threads: race-free by design.

    py_threads.py [ITEMS]

The main thread puts ITEMS numbers in a queue.Queue (a lock and condition
variables); two worker threads take them, hash each, and store the digest in
a dict under a threading.Lock; a None per worker stops them, then main joins
them.  The GIL hands the interpreter from thread to thread: a mutex and a
condition variable, and flags (gil_drop_request, eval_breaker) that CPython
reads and writes as relaxed atomics.  The output is the same in every run.
"""
import hashlib
import queue
import sys
import threading

N = int(sys.argv[1]) if len(sys.argv) > 1 else 4000
q = queue.Queue(maxsize=64)
lock = threading.Lock()
totals = {}


def work(name):
    n = 0
    while True:
        item = q.get()
        if item is None:
            break
        d = hashlib.sha256(str(item).encode()).hexdigest()
        with lock:
            totals[item] = d[:8]
        n += 1
    with lock:
        totals[name] = n


ts = [threading.Thread(target=work, args=("w%d" % i,)) for i in range(2)]
for t in ts:
    t.start()
for i in range(N):
    q.put(i)
for t in ts:
    q.put(None)
for t in ts:
    t.join()
print(len(totals), sum(v for k, v in totals.items() if isinstance(k, str)))
print(hashlib.md5("".join(totals[i] for i in range(N)).encode()).hexdigest())
