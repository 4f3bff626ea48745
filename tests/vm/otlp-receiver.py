#!/usr/bin/python3 -S
# SPDX-License-Identifier: GPL-2.0
"""An OpenTelemetry collector's profiles endpoint for the tests of taprootd
--push otlp+http://: the receiving end of OTLP/HTTP in protobuf
(opentelemetry-proto v1.11.0, profiles v1development), each request decoded
by the real protoc against the official .proto files (tests/otlp/proto) and
checked to the letter.

usage: otlp-receiver.py PORT OUTDIR PROTO_DIR [--require-bearer TOKEN]
                        [--fail-first N] [--partial-first N]

Serves HTTP/1.1 on 127.0.0.1:PORT and prints "listening PORT" once bound.
It takes one kind of request:

    POST /v1development/profiles
    Content-Type: application/x-protobuf
    Content-Encoding: gzip (or none)
    X-Taproot-Upload-Id: HOSTNAME/FILE
    body: an ExportProfilesServiceRequest

and answers 200 with an empty ExportProfilesServiceResponse. The request
must decode (protoc --decode), and hold what the specification asks:
entry 0 of each table of its dictionary present and the zero value
(string_table[0] ""), every index into a table within it, attribute
indices of one message naming distinct keys, one ResourceProfiles whose
Resource has the attributes service.name, host.name and os.type "linux",
one ScopeProfiles of scope "taproot", in each Profile a sample_type and
samples with one value each, a stack each. Anything else is answered 400
with the reason, which also goes to stderr and, as a JSON line, to
OUTDIR/rejected.jsonl: a test fails if that file is not empty.

--fail-first N: the first N requests are answered 503 (a collector
overloaded), before they are even decoded.

--partial-first N: the first N requests accepted are answered 200 with an
ExportProfilesPartialSuccess (encoded by protoc) that says one of their
profiles was rejected; their log.jsonl lines have "partial": 1.

An accepted request whose id is new gets a line in OUTDIR/log.jsonl; an id
seen before gets a line with "dup": true. The line: {"n", "id", "dup",
"authorization", "encoding", "resource": {KEY: VALUE}, "profiles": [{"type",
"unit", "period_type", "period", "time", "duration", "total", "samples",
"stacks": {"F1;F2;...": VALUE}, "attributes": {KEY: [VALUES]}}],
"functions": [NAMES], "mappings": [{"file", "build_id"}]}, a stack's
frames leaf first, each a function's name, or "0xADDR@FILE" for a
location without lines. SIGTERM or SIGINT: exit 0.
"""
import gzip
import http.server
import json
import os
import re
import signal
import subprocess
import sys
import threading

MESSAGE = "opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest"
RESPONSE = "opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceResponse"
SERVICE_PROTO = "opentelemetry/proto/collector/profiles/v1development/profiles_service.proto"
MAX_BODY = 64 << 20
TABLES = ("mapping_table", "location_table", "function_table", "link_table",
          "attribute_table", "stack_table")


class Reject(Exception):
	def __init__(self, status, reason):
		super().__init__(reason)
		self.status = status
		self.reason = reason


def unquote(s):
	"""A protobuf text format string literal ("..." with C escapes) as str."""
	raw = s[1:-1].encode("latin-1").decode("unicode_escape")
	return raw.encode("latin-1").decode("utf-8")


TOKEN = re.compile(r'\s*(?:([A-Za-z_][A-Za-z0-9_]*)\s*(\{|:\s*("(?:[^"\\]|\\.)*"|[^\s]+))|(\}))')


def parse_text(text):
	"""protoc's text format as nested dicts: each field a list of values."""
	root, stack, pos = {}, [], 0
	cur = root
	while True:
		while pos < len(text) and text[pos].isspace():
			pos += 1
		if pos == len(text):
			break
		m = TOKEN.match(text, pos)
		if not m:
			raise Reject(400, f"protoc's output unreadable at {text[pos:pos + 40]!r}")
		pos = m.end()
		name, brace, value, close = m.groups()
		if close:
			if not stack:
				raise Reject(400, "protoc's output has an unmatched }")
			cur = stack.pop()
		elif brace == "{":
			child = {}
			cur.setdefault(name, []).append(child)
			stack.append(cur)
			cur = child
		else:
			v = unquote(value) if value.startswith('"') else int(value) \
				if re.fullmatch(r"-?\d+", value) else value
			cur.setdefault(name, []).append(v)
	if stack:
		raise Reject(400, "protoc's output has an unclosed {")
	return root


def one(msg, field, default=None):
	v = msg.get(field, [])
	if len(v) > 1:
		raise Reject(400, f"{field} is not repeated, yet given {len(v)} times")
	return v[0] if v else default


def check_index(what, i, n):
	if not 0 <= i < n:
		raise Reject(400, f"{what} {i} is outside its table of {n}")
	return i


def any_value(v):
	for k in ("string_value", "int_value", "bool_value", "double_value"):
		if k in v:
			return one(v, k)
	raise Reject(400, f"an AnyValue of none of the scalar kinds: {v}")


class Decoded:
	"""A request, checked, and what a test wants of it."""

	def __init__(self, req):
		d = one(req, "dictionary")
		if d is None:
			raise Reject(400, "no dictionary")
		self.strings = d.get("string_table", [])
		if not self.strings or self.strings[0] != "":
			raise Reject(400, "string_table[0] must be present and \"\"")
		for t in TABLES:
			rows = d.get(t, [])
			if not rows or rows[0] not in ({},) and not self.zero_link(t, rows[0]):
				raise Reject(400, f"{t}[0] must be present and the zero value, not {rows[:1]}")
		self.d = d
		self.n = {t: len(d[t]) for t in TABLES}
		self.attrs = [self.attribute(a) for a in d["attribute_table"]]
		self.functions = [self.str(one(f, "name_strindex", 0)) for f in d["function_table"]]
		self.mappings = [self.mapping(m) for m in d["mapping_table"]]
		for s in d["stack_table"]:
			for li in s.get("location_indices", []):
				check_index("a stack's location index", li, self.n["location_table"])
		self.locations = [self.location(l) for l in d["location_table"]]
		rps = req.get("resource_profiles", [])
		if len(rps) != 1:
			raise Reject(400, f"{len(rps)} ResourceProfiles, taprootd sends one a request")
		rp = rps[0]
		self.resource = {one(kv, "key"): any_value(one(kv, "value", {}))
				 for kv in one(rp, "resource", {}).get("attributes", [])}
		for k in ("service.name", "host.name", "os.type"):
			if not self.resource.get(k):
				raise Reject(400, f"the Resource has no {k}: {self.resource}")
		if self.resource["os.type"] != "linux":
			raise Reject(400, f"os.type {self.resource['os.type']!r}, not linux")
		sps = rp.get("scope_profiles", [])
		if len(sps) != 1 or one(one(sps[0], "scope", {}), "name") != "taproot":
			raise Reject(400, "one ScopeProfiles of scope taproot expected")
		self.profiles = [self.profile(p) for p in sps[0].get("profiles", [])]
		if not self.profiles:
			raise Reject(400, "no Profile")

	@staticmethod
	def zero_link(t, row):
		# link_table[0]: 16 and 8 zero bytes, as the specification prefers.
		return t == "link_table" and set(row) <= {"trace_id", "span_id"} and \
			all(set(v) <= {"\0"} for vs in row.values() for v in vs)

	def str(self, i):
		return self.strings[check_index("a string index", i, len(self.strings))]

	def attribute(self, a):
		if not a:
			return None
		return self.str(one(a, "key_strindex", 0)), any_value(one(a, "value", {}))

	def attributes(self, what, indices):
		out = {}
		for i in indices:
			check_index(f"{what}'s attribute index", i, len(self.attrs))
			if not i:
				raise Reject(400, f"{what} refers to attribute_table[0]")
			k, v = self.attrs[i]
			if k in out:
				raise Reject(400, f"{what} has the attribute key {k} twice")
			out[k] = v
		return out

	def mapping(self, m):
		a = self.attributes("a mapping", m.get("attribute_indices", []))
		return {"file": self.str(one(m, "filename_strindex", 0)),
			"build_id": a.get("process.executable.build_id.gnu", "")}

	def location(self, l):
		mi = check_index("a location's mapping index", one(l, "mapping_index", 0),
				 self.n["mapping_table"])
		names = [self.functions[check_index("a line's function index",
						    one(ln, "function_index", 0),
						    self.n["function_table"])]
			 for ln in l.get("lines", [])]
		if names:
			return names
		return [f"0x{one(l, 'address', 0):x}@{self.mappings[mi]['file']}"]

	def profile(self, p):
		st = one(p, "sample_type")
		if st is None:
			raise Reject(400, "a Profile without sample_type")
		pt = one(p, "period_type", {})
		out = {"type": self.str(one(st, "type_strindex", 0)),
		       "unit": self.str(one(st, "unit_strindex", 0)),
		       "period_type": self.str(one(pt, "type_strindex", 0)),
		       "period": one(p, "period", 0),
		       "time": one(p, "time_unix_nano", 0), "duration": one(p, "duration_nano", 0),
		       "attributes": self.attributes("a profile", p.get("attribute_indices", [])),
		       "total": 0, "samples": 0, "stacks": {}, "sample_attributes": {}}
		for s in p.get("samples", []):
			vals = s.get("values", [])
			if len(vals) != 1:
				raise Reject(400, f"a sample with {len(vals)} values, one expected")
			si = check_index("a sample's stack index", one(s, "stack_index", 0),
					 self.n["stack_table"])
			frames = []
			for li in self.d["stack_table"][si].get("location_indices", []):
				frames += self.locations[li]
			a = self.attributes("a sample", s.get("attribute_indices", []))
			for k, v in a.items():
				seen = out["sample_attributes"].setdefault(k, [])
				if v not in seen:
					seen.append(v)
			key = ";".join(frames)
			out["stacks"][key] = out["stacks"].get(key, 0) + vals[0]
			out["total"] += vals[0]
			out["samples"] += 1
		return out


class Store:
	def __init__(self, outdir, proto_dir, bearer, fail_first, partial_first):
		self.outdir, self.proto_dir = outdir, proto_dir
		self.bearer, self.fail_left = bearer, fail_first
		self.partial_left = partial_first
		self.lock = threading.Lock()
		self.ids, self.n = set(), 0
		log = os.path.join(outdir, "log.jsonl")
		if os.path.exists(log):
			for line in open(log):
				e = json.loads(line)
				self.ids.add(e["id"])
				self.n = max(self.n, e["n"])

	def note(self, name, entry):
		with open(os.path.join(self.outdir, name), "a") as f:
			f.write(json.dumps(entry, sort_keys=True) + "\n")

	def decode(self, body):
		r = subprocess.run(["protoc", f"--decode={MESSAGE}", "-I", self.proto_dir,
				    SERVICE_PROTO], input=body, capture_output=True, timeout=120)
		if r.returncode:
			raise Reject(400, "protoc cannot decode the body: " +
				     r.stderr.decode(errors="replace").strip())
		return parse_text(r.stdout.decode())

	def partial_answer(self):
		"""A response body saying one profile was rejected, as protoc encodes it."""
		text = 'partial_success { rejected_profiles: 1 error_message: "one profile ' \
		       'rejected (--partial-first)" }'
		r = subprocess.run(["protoc", f"--encode={RESPONSE}", "-I", self.proto_dir,
				    SERVICE_PROTO], input=text.encode(), capture_output=True,
				   timeout=120, check=True)
		return r.stdout

	def take(self, h, body):
		if h.command != "POST" or h.path != "/v1development/profiles":
			raise Reject(404, f"{h.command} {h.path}: only POST /v1development/profiles")
		with self.lock:
			if self.fail_left > 0:
				self.fail_left -= 1
				raise Reject(503, "overloaded (--fail-first)")
		if h.headers.get("Content-Type") != "application/x-protobuf":
			raise Reject(415, f"Content-Type {h.headers.get('Content-Type')!r}")
		auth = h.headers.get("Authorization")
		if self.bearer and auth != f"Bearer {self.bearer}":
			raise Reject(401, f"Authorization {auth!r}")
		enc = h.headers.get("Content-Encoding", "")
		if enc == "gzip":
			body = gzip.decompress(body)
		elif enc:
			raise Reject(415, f"Content-Encoding {enc!r}")
		upload = h.headers.get("X-Taproot-Upload-Id")
		if not upload:
			raise Reject(400, "no X-Taproot-Upload-Id")
		dec = Decoded(self.decode(body))
		with self.lock:
			dup = upload in self.ids
			self.ids.add(upload)
			self.n += 1
			partial = 1 if self.partial_left > 0 else 0
			self.partial_left -= partial
			self.note("log.jsonl", {
				"n": self.n, "id": upload, "dup": dup, "authorization": auth,
				"encoding": enc, "resource": dec.resource, "profiles": dec.profiles,
				"functions": dec.functions[1:], "mappings": dec.mappings[1:],
				"partial": partial})
		return self.partial_answer() if partial else b""


class Handler(http.server.BaseHTTPRequestHandler):
	protocol_version = "HTTP/1.1"

	def log_message(self, fmt, *args):
		pass

	def answer(self, status, body, ctype):
		self.send_response(status)
		self.send_header("Content-Type", ctype)
		self.send_header("Content-Length", str(len(body)))
		self.end_headers()
		self.wfile.write(body)

	def do_POST(self):
		n = int(self.headers.get("Content-Length", "-1"))
		if not 0 <= n <= MAX_BODY:
			self.answer(411, b"Content-Length needed, at most 64 MiB\n", "text/plain")
			return
		body = self.rfile.read(n)
		try:
			reply = self.server.store.take(self, body)
		except Reject as e:
			if e.status != 503:
				print(f"otlp-receiver: {e.status} {e.reason}", file=sys.stderr, flush=True)
				self.server.store.note("rejected.jsonl", {"status": e.status,
									  "reason": e.reason})
			self.answer(e.status, (e.reason + "\n").encode(), "text/plain")
			return
		except Exception as e:		# this receiver's own failure
			self.server.store.note("rejected.jsonl", {"status": 500, "reason": repr(e)})
			self.answer(500, b"receiver error\n", "text/plain")
			return
		self.answer(200, reply, "application/x-protobuf")

	do_GET = do_PUT = do_POST


def main():
	args = sys.argv[1:]
	if len(args) < 3:
		sys.exit(__doc__)
	port, outdir, proto_dir = int(args[0]), args[1], args[2]
	bearer, fail_first, partial_first = None, 0, 0
	rest = args[3:]
	while rest:
		if rest[0] == "--require-bearer" and len(rest) > 1:
			bearer = rest[1]
		elif rest[0] == "--fail-first" and len(rest) > 1:
			fail_first = int(rest[1])
		elif rest[0] == "--partial-first" and len(rest) > 1:
			partial_first = int(rest[1])
		else:
			sys.exit(__doc__)
		rest = rest[2:]
	os.makedirs(outdir, exist_ok=True)
	srv = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
	srv.store = Store(outdir, proto_dir, bearer, fail_first, partial_first)
	signal.signal(signal.SIGTERM, lambda *a: os._exit(0))
	signal.signal(signal.SIGINT, lambda *a: os._exit(0))
	print(f"listening {port}", flush=True)
	srv.serve_forever()


if __name__ == "__main__":
	main()
