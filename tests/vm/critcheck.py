# SPDX-License-Identifier: GPL-2.0
"""What the critical-path VM tests read alike (test-record-critical-path.sh,
test-daemon-critical-path.sh), about tests/vm/progs/critchain.c.

    checks = critcheck.Checks()
    meas = critcheck.measured(open(path).read())   # critchain's own figures
    path = critcheck.CriticalPath(open(raw).read())  # the text of pprof -raw
    checks(path.on("worker_compute") > 0, "...")
    checks.exit()
"""
import re
import sys

import pprofraw


class Checks:
    """Prints each check as ok or FAIL; exit() fails if one failed."""

    def __init__(self):
        self.failed = []

    def __call__(self, ok, msg):
        print(("ok: " if ok else "FAIL: ") + msg)
        if not ok:
            self.failed.append(msg)

    def exit(self):
        sys.exit(1 if self.failed else 0)


def measured(text):
    """critchain's line "critchain: KEY=NS ..." of @text, as {KEY: NS}."""
    m = re.search(r"^critchain: (worker_compute_ns=.*)", text, re.M)
    if not m:
        sys.exit("FAIL: critchain's line is missing from its output")
    return {k: int(v) for k, v in (w.split("=") for w in m.group(1).split())}


def near(got, want, tol=0.10):
    return abs(got - want) <= tol * want


class CriticalPath:
    """A critpath profile as `pprof -raw` shows it."""

    def __init__(self, raw_text):
        self.prof = pprofraw.parse(raw_text)
        self.types = self.prof.types
        self.vt = self.types[0] if self.types else None
        self.samples = self.prof.samples

    def on(self, fn=None, thread=None):
        """Nanoseconds on the path in function @fn, of thread @thread (its label)."""
        return sum(s.values[self.vt] for s in self.samples
                   if (fn is None or fn in s.frames) and
                   (thread is None or s.labels.get("thread") == thread))

    # The kernel's scheduling functions: the leaf of a blocked or preempted
    # task's stack, on the path only under a marker ("[run queue]", ...).
    SCHED = ("__schedule", "schedule", "preempt_schedule", "preempt_schedule_irq",
             "preempt_schedule_common")

    def unmarked_sched(self):
        """Nanoseconds on the path whose leaf is a scheduling function: time
        read as a blocked or preempted stack, without its marker."""
        return sum(s.values[self.vt] for s in self.samples
                   if s.frames and s.frames[0] in self.SCHED)
