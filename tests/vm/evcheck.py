"""What the causal event tests (test-events-*.sh) read: the records of a
'taprootctl --json dump', and what tests/vm/progs/evblock and
/proc/PID/maps said about the targets."""

import json


def records(path, kind=None):
	"""The records of a JSON Lines dump, of type KIND if given."""
	out = []
	for line in open(path):
		r = json.loads(line)
		if kind is None or r["type"] == kind:
			out.append(r)
	return out


def target(path):
	"""(pid, {role: [tid...]}) from evblock's output."""
	pid, roles = None, {}
	for line in open(path):
		w = dict(x.split("=", 1) for x in line.split() if "=" in x)
		if line.startswith("ready "):
			pid = int(w["pid"])
		elif line.startswith("tid "):
			roles.setdefault(w["role"], []).append(int(w["tid"]))
	return pid, roles


def exec_ranges(path, only=None):
	"""The executable mappings of a copy of /proc/PID/maps, as (lo, hi),
	only those of files whose path ends with ONLY if given."""
	out = []
	for line in open(path):
		f = line.split()
		if len(f) < 2 or "x" not in f[1]:
			continue
		if only is not None and (len(f) < 6 or not f[5].endswith(only)):
			continue
		lo, hi = (int(x, 16) for x in f[0].split("-"))
		out.append((lo, hi))
	return out


def inside(addr, ranges):
	return any(lo <= addr < hi for lo, hi in ranges)


def knames(stack):
	"""The function names of a snapshot's kernel frames."""
	return [(f["sym"] or "?").split("+", 1)[0] for f in stack["kstack"]]


def uwords(stack):
	"""The 8-byte words of a snapshot's user stack copy."""
	b = bytes.fromhex(stack.get("ustack", ""))
	return [int.from_bytes(b[i:i + 8], "little") for i in range(0, len(b) - 7, 8)]


def summary(**kv):
	print(" ".join(f"{k}={v}" for k, v in kv.items()))
