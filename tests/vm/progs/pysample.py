# A statistical profiler of a Python program, in the program itself: the
# reference scripts/compare-runtimes holds taproot's Python frames against.
# Every 5 ms of the process's CPU time (ITIMER_PROF) a SIGPROF handler
# counts the function the interrupted frame runs, named as taproot names
# it: MODULE.QUALNAME, the module by the code's file (co_qualname, 3.11
# on; co_name before); at the end it writes "COUNT NAME" lines, most
# first, to OUT.
# Usage: python3 pysample.py OUT -m MODULE [ARGS...]
import collections
import os
import runpy
import signal
import sys

out = sys.argv[1]
if len(sys.argv) < 4 or sys.argv[2] != "-m":
    sys.exit("usage: pysample.py OUT -m MODULE [ARGS...]")
counts = collections.Counter()


def module_of(path):
    """The module taproot names a file by (lib/pipeline/pyframes.c)."""
    if path.startswith("<frozen ") and path.endswith(">"):
        return path[8:-1]
    if path.startswith("<"):
        return ""
    base = os.path.basename(path)
    base = base[:-3] if base.endswith(".py") else base
    if base == "__init__" and "/" in path:
        base = os.path.basename(os.path.dirname(path))
    return base


def handler(sig, frame):
    code = frame.f_code
    name = getattr(code, "co_qualname", code.co_name)
    module = module_of(code.co_filename)
    counts[f"{module}.{name}" if module else name] += 1


signal.signal(signal.SIGPROF, handler)
signal.setitimer(signal.ITIMER_PROF, 0.005, 0.005)
sys.argv = sys.argv[3:]
try:
    runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
except SystemExit:
    pass
finally:
    signal.setitimer(signal.ITIMER_PROF, 0, 0)
    with open(out, "w") as f:
        for name, n in counts.most_common():
            f.write(f"{n} {name}\n")
