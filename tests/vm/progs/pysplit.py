# A Python program whose time is split between two call chains,
# <module> -> main -> outer_a -> hot_a and <module> -> main -> outer_b ->
# (C: the builtins map and list) -> hot_b, about 70/30, each measured by the program itself (its thread's
# CPU time around each chain): "pysplit: pid=PID a=NS b=NS" at the end.
# First, for WARMUP seconds (or until the file $PYSPLIT_GATE exists, when
# set), the same chains under warm() instead of main(), unmeasured, which
# warms a profiler up (taproot compiles and uploads the interpreter's
# unwind tables, slowly under TCG); then the thread is named pysplit-main
# (its comm), for the samples to tell.
# Usage: pysplit.py SECONDS [WARMUP]. Runs as it is on CPython 3.9 to 3.13.
# pysplit.py --units runs the two chains on command, for scripts/bench-guest
# (insns part runtimes): for each line N it reads, N times each, then
# prints "done".
import os
import sys
import time


def hot_a(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def outer_a(n):
    return hot_a(n)


def hot_b(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def outer_b(n):
    # Python -> C -> Python: the interpreter's C frames lie in between.
    return list(map(hot_b, (n,)))[0]


def warm(seconds):
    # With PYSPLIT_GATE set, until that file exists (for SECONDS at most).
    gate = os.environ.get("PYSPLIT_GATE")
    end = time.monotonic() + seconds
    while time.monotonic() < end and not (gate and os.path.exists(gate)):
        outer_a(7000)
        outer_b(3000)


def main(seconds):
    a = b = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        t = time.thread_time_ns()
        outer_a(7000)
        a += time.thread_time_ns() - t
        t = time.thread_time_ns()
        outer_b(3000)
        b += time.thread_time_ns() - t
    print(f"pysplit: pid={os.getpid()} a={a} b={b}", flush=True)


def units():
    for line in sys.stdin:
        for _ in range(int(line)):
            outer_a(7000)
            outer_b(3000)
        print("done", flush=True)


if sys.argv[1] == "--units":
    units()
    sys.exit(0)
warm(float(sys.argv[2]) if len(sys.argv) > 2 else 0)
with open("/proc/self/comm", "w") as f:
    f.write("pysplit-main")
main(float(sys.argv[1]))
