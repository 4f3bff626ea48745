# SPDX-License-Identifier: GPL-2.0
"""Reads the text of the real pprof's `pprof -raw FILE` for the VM tests.

The tests judge a profile by what the pprof tool itself decoded from it,
not by a decoder of our own. `pprof -raw` prints every sample with all its
values, its location ids (leaf first) and its labels, then every location
with its mapping and its lines (an inlined call is a further line), then
the mappings:

    Samples:
    switches/count off_cpu/nanoseconds[dflt]
              3   61234567: 1 2 3
                    state:[S] waker:[[hardirq]]
                    pid:[42]
    Locations
         1: 0xffffffff81000000 M=1 schedule :0 s=0
                 inlined_caller file.c:12 s=0
         2: 0x0 -- :0 s=0
    Mappings
    1: 0x0/0x0/0x0 [kernel.kallsyms] BUILDID [FN]

Usage: profile = pprofraw.parse(text); profile.samples is a list of
Sample(values={type: int}, frames=[function names, leaf first],
mappings=[mapping file of each frame], labels={key: value}).
"""
import gzip
import re
from dataclasses import dataclass, field


@dataclass
class Sample:
    values: dict
    frames: list = field(default_factory=list)
    mappings: list = field(default_factory=list)
    labels: dict = field(default_factory=dict)


@dataclass
class Profile:
    types: list
    samples: list
    mappings: dict	# id -> file


_LABEL = re.compile(r"(\w+):\[(.*?)\](?=\s+\w+:\[|\s*$)")


# A location's line: "FUNCTION FILE:LINE s=START" (FILE may be empty, or
# have spaces in angle brackets, as Python's "<frozen posixpath>"); a
# marker's function has spaces ("[run queue]").
_LINE = re.compile(r"^\s*(.*?) (?:<[^>]*>|\S*):\d+ s=\d+\s*$")


def _function(line):
    m = _LINE.match(line)
    return m.group(1) if m else line.split()[0]


def parse(text):
    lines = text.split("\n")
    types, raw, locs, maps = [], [], {}, {}
    section, cur, loc = None, None, None
    for line in lines:
        if line.startswith("Samples:"):
            section = "samples-head"
            continue
        if line.startswith("Locations"):
            section = "locations"
            continue
        if line.startswith("Mappings"):
            section = "mappings"
            continue
        if section == "samples-head":
            types = [t.replace("[dflt]", "") for t in line.split()]
            section = "samples"
            continue
        if section == "samples":
            m = re.match(r"^\s+([-\d\s]+):\s*([\d\s]*)$", line)
            if m:
                vals = [int(v) for v in m.group(1).split()]
                if len(vals) == len(types):
                    cur = (dict(zip(types, vals)),
                           [int(x) for x in m.group(2).split()], {})
                    raw.append(cur)
                    continue
            if cur is not None and line.strip():
                for k, v in _LABEL.findall(line.strip()):
                    cur[2][k] = v
        elif section == "locations":
            # A location without a mapping (a marker frame such as "--")
            # has no M=.
            m = re.match(r"^\s+(\d+): (0x[0-9a-f]+)(?: M=(\d+))?\s*(.*)$", line)
            if m:
                loc = [int(m.group(3) or 0), []]
                locs[int(m.group(1))] = loc
                if m.group(4).strip():
                    loc[1].append(_function(m.group(4)))
            elif loc is not None and line.strip():
                loc[1].append(_function(line))
        elif section == "mappings":
            m = re.match(r"^(\d+): \S+ (\S+)", line)
            if m:
                maps[int(m.group(1))] = m.group(2)
    samples = []
    for vals, ids, labels in raw:
        s = Sample(values=vals, labels=labels)
        for i in ids:
            mid, names = locs.get(i, (0, []))
            # pprof -raw lists a location's lines callee first, as the
            # stack is listed leaf first.
            for n in names or ["?"]:
                s.frames.append(n)
                s.mappings.append(maps.get(mid, ""))
        samples.append(s)
    return Profile(types=types, samples=samples, mappings=maps)


def time_nanos(path):
    """The time_nanos (field 9) of the gzipped profile.proto at @path.

    The one field read here without pprof: a key that tells which files
    are of one interval. Where pprof decodes a file, its Time is checked
    against this value (tests/vm/test-daemon-push.sh).
    """
    data = gzip.open(path).read()
    i = 0

    def varint():
        nonlocal i
        v = shift = 0
        while True:
            b = data[i]
            i += 1
            v |= (b & 0x7f) << shift
            shift += 7
            if b < 0x80:
                return v
    while i < len(data):
        key = varint()
        field, wire = key >> 3, key & 7
        if wire == 0:
            v = varint()
            if field == 9:
                return v - (1 << 64) if v >> 63 else v
        elif wire == 2:
            n = varint()	# first: it moves i
            i += n
        elif wire == 1:
            i += 8
        elif wire == 5:
            i += 4
        else:
            raise ValueError(f"{path}: wire type {wire} at byte {i}")
    return 0
