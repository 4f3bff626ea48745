#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A strict reader of the Chrome trace taproot writes
(docs/offcpu-and-critical-path.md, "The trace").

usage: tracecheck.py TRACE.json [--summary]

Checks every event against the format as that page documents it, and fails
(exit 1, one line per problem, at most 50) on any deviation:
  - the top level: an object with displayTimeUnit "ms", otherData (the
    producer, the clock, the window, what was left out), stackFrames and
    traceEvents; nothing else;
  - every event: ph one of M, X, i, s, f; integer pid and tid; ts an
    integer >= 0, whole microseconds (not for M); the fields each phase
    has, no others;
  - X slices: dur an integer > 0, name running, runnable or "blocked S|D",
    category sched; on each thread they never overlap (a slice starts at or
    after the end of the one before), a running or runnable slice never
    just continues one of the same name, and they are written in time
    order, as is every event of a thread ("monotonic times per thread");
  - flows: each id has one s and one f, named wakeup, the s not after the
    f, each inside an X slice of its own thread (the s in a running slice);
  - instants (samples): scope t, args.cpu, args.stack a list of names;
  - sf references name frames of stackFrames, whose parents exist, with no
    cycle; every thread with events has a thread_name, every process a
    process_name.
With --summary, prints one JSON object: counts by phase and slice name,
threads and their names, flows, and the per-thread slice time by name
(ns), for a test to compare with what the traced program measured.
"""
import json
import sys

PH_KEYS = {
    "M": {"ph", "name", "pid", "tid", "args"},
    "X": {"ph", "name", "cat", "pid", "tid", "ts", "dur", "args", "sf"},
    "i": {"ph", "name", "cat", "pid", "tid", "ts", "s", "args", "sf"},
    "s": {"ph", "name", "cat", "pid", "tid", "ts", "id"},
    "f": {"ph", "name", "cat", "pid", "tid", "ts", "id", "bp"},
}
REQUIRED = {
    "M": {"ph", "name", "pid", "tid", "args"},
    "X": {"ph", "name", "cat", "pid", "tid", "ts", "dur"},
    "i": {"ph", "name", "cat", "pid", "tid", "ts", "s", "args"},
    "s": {"ph", "name", "cat", "pid", "tid", "ts", "id"},
    "f": {"ph", "name", "cat", "pid", "tid", "ts", "id", "bp"},
}
SLICES = {"running", "runnable", "blocked S", "blocked D"}
OTHER_KEYS = {"producer", "clock", "start_ns", "end_ns", "session_start_ns", "window_ns",
              "processes", "left_out", "slices_moved_for_clock_skew"}
LEFT_OUT = {"before_start_ns", "events_over_limit", "events_of_other_processes",
            "stacks_over_limit", "wakeups_without_waker_slice"}


def check(doc, problems):
    def bad(msg):
        if len(problems) < 50:
            problems.append(msg)

    if not isinstance(doc, dict):
        bad("the top level is not an object")
        return None
    extra = set(doc) - {"displayTimeUnit", "otherData", "stackFrames", "traceEvents"}
    if extra:
        bad(f"unknown top-level keys {sorted(extra)}")
    if doc.get("displayTimeUnit") != "ms":
        bad("displayTimeUnit is not \"ms\"")
    other = doc.get("otherData")
    if not isinstance(other, dict) or set(other) != OTHER_KEYS:
        bad(f"otherData keys {sorted(other) if isinstance(other, dict) else other}")
    else:
        if other["clock"] != "CLOCK_MONOTONIC" or not other["producer"].startswith("taproot"):
            bad("otherData: clock or producer")
        if not (isinstance(other["left_out"], dict) and set(other["left_out"]) == LEFT_OUT and
                all(isinstance(v, int) and v >= 0 for v in other["left_out"].values())):
            bad(f"otherData.left_out: {other['left_out']}")
        if not other["start_ns"] <= other["end_ns"]:
            bad("otherData: start_ns after end_ns")
    frames = doc.get("stackFrames")
    if not isinstance(frames, dict):
        bad("stackFrames is not an object")
        frames = {}
    for fid, fr in frames.items():
        if not isinstance(fr, dict) or not isinstance(fr.get("name"), str) or \
                set(fr) - {"name", "category", "parent"}:
            bad(f"stackFrames[{fid}] malformed: {fr}")
        elif "parent" in fr and fr["parent"] not in frames:
            bad(f"stackFrames[{fid}]: parent {fr['parent']} missing")
    for fid in frames:            # no cycle: every chain reaches a root
        seen, cur = set(), fid
        while cur in frames and "parent" in frames[cur]:
            if cur in seen:
                bad(f"stackFrames: a cycle through {fid}")
                break
            seen.add(cur)
            cur = frames[cur]["parent"]
    events = doc.get("traceEvents")
    if not isinstance(events, list):
        bad("traceEvents is not a list")
        return None

    named_threads, named_procs = set(), set()
    last_ts, last_end, last_name = {}, {}, {}
    slices = {}                   # (pid, tid) -> [(ts, end, name)]
    flows = {}                    # id -> {"s": ev, "f": ev}
    summary = {"phases": {}, "slices": {}, "threads": {}, "slice_ns": {}, "instants": 0}
    for n, e in enumerate(events):
        where = f"event {n}"
        if not isinstance(e, dict):
            bad(f"{where}: not an object")
            continue
        ph = e.get("ph")
        if ph not in PH_KEYS:
            bad(f"{where}: phase {ph!r}")
            continue
        summary["phases"][ph] = summary["phases"].get(ph, 0) + 1
        keys = set(e)
        if not REQUIRED[ph] <= keys or keys - PH_KEYS[ph]:
            bad(f"{where} ({ph}): keys {sorted(keys)}")
            continue
        if not (isinstance(e["pid"], int) and isinstance(e["tid"], int) and
                e["pid"] >= 0 and e["tid"] >= 0):
            bad(f"{where}: pid/tid not integers")
            continue
        th = (e["pid"], e["tid"])
        if not isinstance(e["name"], str):
            bad(f"{where}: name not a string")
        if ph == "M":
            nm = e["args"].get("name") if isinstance(e["args"], dict) else None
            if e["name"] == "thread_name" and isinstance(nm, str):
                named_threads.add(th)
                summary["threads"][f"{th[0]}/{th[1]}"] = nm
            elif e["name"] == "process_name" and isinstance(nm, str):
                named_procs.add(e["pid"])
            else:
                bad(f"{where}: metadata {e['name']!r} {e['args']!r}")
            continue
        ts = e["ts"]
        if not isinstance(ts, int) or isinstance(ts, bool) or ts < 0:
            bad(f"{where}: ts {ts!r}")
            continue
        if ts < last_ts.get(th, 0):
            bad(f"{where}: ts {ts} before the thread's previous event ({last_ts[th]})")
        last_ts[th] = max(ts, last_ts.get(th, 0))
        if "sf" in e and e["sf"] not in frames:
            bad(f"{where}: sf {e['sf']} not in stackFrames")
        if ph == "X":
            dur = e["dur"]
            if not isinstance(dur, int) or isinstance(dur, bool) or dur <= 0:
                bad(f"{where}: dur {dur!r}")
                continue
            if e["name"] not in SLICES or e["cat"] != "sched":
                bad(f"{where}: slice {e['name']!r} of category {e['cat']!r}")
            if ts < last_end.get(th, 0):
                bad(f"{where}: slice at {ts} overlaps the one before, to {last_end[th]}")
            if ts == last_end.get(th) and e["name"] == last_name.get(th) and \
                    not e["name"].startswith("blocked"):
                bad(f"{where}: a {e['name']} slice continues the one before")
            last_end[th] = max(last_end.get(th, 0), ts + dur)
            last_name[th] = e["name"]
            slices.setdefault(th, []).append((ts, ts + dur, e["name"]))
            summary["slices"][e["name"]] = summary["slices"].get(e["name"], 0) + 1
            key = f"{th[0]}/{th[1]}"
            per = summary["slice_ns"].setdefault(key, {})
            per[e["name"]] = per.get(e["name"], 0) + dur * 1000
            if "args" in e and "stack" in e["args"] and not (
                    isinstance(e["args"]["stack"], list) and
                    all(isinstance(x, str) for x in e["args"]["stack"])):
                bad(f"{where}: args.stack")
        elif ph == "i":
            summary["instants"] += 1
            a = e["args"]
            if e["s"] != "t" or e["cat"] != "cpu" or not isinstance(a, dict) or \
                    not isinstance(a.get("cpu"), int) or \
                    ("stack" in a and not (isinstance(a["stack"], list) and
                                           all(isinstance(x, str) for x in a["stack"]))):
                bad(f"{where}: instant {e}")
        else:
            if e["name"] != "wakeup" or e["cat"] != "wakeup" or not isinstance(e["id"], int):
                bad(f"{where}: flow {e}")
                continue
            if ph == "f" and e["bp"] != "e":
                bad(f"{where}: flow end without bp e")
            ends = flows.setdefault(e["id"], {})
            if ph in ends:
                bad(f"{where}: a second {ph} for flow {e['id']}")
            ends[ph] = e
    for th in set(last_ts) - named_threads:
        bad(f"thread {th} has events and no thread_name")
    for pid in {th[0] for th in last_ts} - named_procs:
        bad(f"process {pid} has events and no process_name")

    def inside(e, running_only):
        for a, b, name in slices.get((e["pid"], e["tid"]), []):
            if a <= e["ts"] <= b and (not running_only or name == "running"):
                return True
        return False

    for fid, ends in flows.items():
        if set(ends) != {"s", "f"}:
            bad(f"flow {fid}: ends {sorted(ends)}")
            continue
        if ends["s"]["ts"] > ends["f"]["ts"]:
            bad(f"flow {fid}: starts after it ends")
        if not inside(ends["s"], True):
            bad(f"flow {fid}: its start is in no running slice of {ends['s']['tid']}")
        if not inside(ends["f"], False):
            bad(f"flow {fid}: its end is in no slice of {ends['f']['tid']}")
    summary["flows"] = len(flows)
    return summary


def main():
    args = sys.argv[1:]
    if not args or len(args) > 2 or (len(args) == 2 and args[1] != "--summary"):
        sys.exit(__doc__)
    problems = []
    try:
        with open(args[0], encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        print(f"tracecheck: {args[0]}: {e}")
        sys.exit(1)
    summary = check(doc, problems)
    for p in problems:
        print(f"tracecheck: {args[0]}: {p}")
    if problems:
        sys.exit(1)
    if len(args) == 2:
        print(json.dumps(summary, sort_keys=True))


if __name__ == "__main__":
    main()
