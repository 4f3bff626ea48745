#!/usr/bin/python3 -S
# SPDX-License-Identifier: GPL-2.0
"""A profile store for the tests of taprootd --push: the receiving end of the
protocol taprootd speaks (docs/configuration.md: Push to a profile store),
checked to the
letter.

usage: push-receiver.py PORT OUTDIR [--delay-first SECONDS]
                        [--require-bearer TOKEN] [--require-tenant ID]

Serves HTTP/1.1 on 127.0.0.1:PORT and prints "listening PORT" once bound.
It takes one kind of request:

    POST /ingest?name=NAME&from=FROM&until=UNTIL&format=pprof&spyName=taproot
                [&sampleRate=HZ]
    X-Taproot-Upload-Id: HOSTNAME/FILE
    Content-Type: multipart/form-data; boundary=...

    part "profile" (filename "profile.pb.gz"): a gzipped pprof profile;
    part "sample_type_config" (kinds offcpu, offwake, schedlat only): JSON,
        {TYPE: {"units": U, "aggregation": "sum", "display-name": D}, ...}

NAME is SERVICE{KEY=VALUE,...}, the labels holding kind (cpu, offcpu,
offwake, schedlat), hostname and kernel_release, every value made of
[A-Za-z0-9_.:/@+-] only; sampleRate is optional, for kind cpu only;
FROM and UNTIL are integer seconds, UNTIL > FROM; offwake's off_cpu type
is displayed as off_wake. Anything else (another method or path, a
parameter missing, malformed or unknown, a part missing, twice or unknown,
a profile that is not gzip, a config that is not that JSON, no upload id,
--require-bearer or --require-tenant not met) is answered 4xx with the
reason, which also goes to stderr and, as a JSON line, to
OUTDIR/rejected.jsonl (so does a 500 if this receiver fails): a test fails
if that file is not empty.

An accepted upload whose id is new is stored as OUTDIR/N.pb.gz (N = 1, 2,
...) and gets a line in OUTDIR/log.jsonl; an id seen before (a resend) gets
a line with "dup": true and is not stored again. Both are answered 200. The
line: {"n", "file", "id", "name", "service", "labels", "kind", "from",
"until", "sample_rate", "bytes", "sha256", "config", "authorization",
"tenant", "user_agent", "dup", "held", "time", "peer" (the client's port:
the same connection or a new one)}. Ids and N are read back from
OUTDIR/log.jsonl at start, so a receiver restarted on the same OUTDIR (a
store that was down) still knows what it stored.

--delay-first SECONDS: the first upload accepted is stored as any, then
its answer is held SECONDS: "holding ID" is printed when the hold begins
(a test kills the uploader then), "held ID" when it ends. The store took
it: the uploader's next attempt, if any, is a duplicate.

SIGTERM or SIGINT: exit 0.
"""
import gzip
import hashlib
import http.server
import json
import os
import re
import signal
import sys
import threading
import time
import urllib.parse
from email.message import Message

KINDS = ("cpu", "offcpu", "offwake", "schedlat")
OFFCPU_KINDS = ("offcpu", "offwake", "schedlat")
QUERY = {"name", "from", "until", "format", "spyName", "sampleRate"}
VALUE = re.compile(r"[A-Za-z0-9_.:/@+-]+")
KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
MAX_BODY = 64 << 20


class Reject(Exception):
	def __init__(self, status, reason):
		super().__init__(reason)
		self.status = status
		self.reason = reason


class Store:
	"""What was stored, in OUTDIR; one lock for all of it."""

	def __init__(self, outdir):
		self.dir = outdir
		self.lock = threading.Lock()
		self.ids = {}		# upload id -> N
		self.next = 1
		self.first_pending = True
		log = os.path.join(outdir, "log.jsonl")
		if os.path.exists(log):
			for line in open(log):
				e = json.loads(line)
				if not e["dup"]:
					self.ids[e["id"]] = e["n"]
					self.next = max(self.next, e["n"] + 1)

	def append(self, name, entry):
		# One write of a whole line with O_APPEND: a reader never sees
		# half of it.
		fd = os.open(os.path.join(self.dir, name), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
		try:
			os.write(fd, (json.dumps(entry, sort_keys=True) + "\n").encode())
		finally:
			os.close(fd)

	def take(self, entry, profile):
		"""Stores @profile under a new N unless entry's id was stored; logs."""
		with self.lock:
			n = self.ids.get(entry["id"])
			entry["dup"] = n is not None
			if n is None:
				n = self.next
				self.next += 1
				path = os.path.join(self.dir, f"{n}.pb.gz")
				with open(path + ".tmp", "wb") as f:
					f.write(profile)
				os.rename(path + ".tmp", path)
				self.ids[entry["id"]] = n
			entry["n"] = n
			entry["file"] = f"{n}.pb.gz"
			held = self.first_pending
			self.first_pending = False
			entry["held"] = held and DELAY_FIRST > 0
			self.append("log.jsonl", entry)
			return entry, held


def parse_name(name):
	"""(service, {label: value}) of SERVICE{K=V,...}, or Reject."""
	m = re.fullmatch(r"(.+)\{([^{}]*)\}", name, re.S)
	if not m:
		raise Reject(400, f"name {name!r} is not SERVICE{{KEY=VALUE,...}}")
	service, labels = m.group(1), {}
	for pair in m.group(2).split(","):
		k, eq, v = pair.partition("=")
		if not eq or not KEY.fullmatch(k):
			raise Reject(400, f"name {name!r}: label {pair!r} is not KEY=VALUE")
		if not VALUE.fullmatch(v):
			raise Reject(400, f"name {name!r}: label {k}'s value {v!r} is empty or has "
				     "characters outside [A-Za-z0-9_.:/@+-]")
		if k in labels:
			raise Reject(400, f"name {name!r}: label {k} twice")
		labels[k] = v
	for k in ("kind", "hostname", "kernel_release"):
		if k not in labels:
			raise Reject(400, f"name {name!r}: no label {k}")
	if labels["kind"] not in KINDS:
		raise Reject(400, f"name {name!r}: kind {labels['kind']!r} is not one of {KINDS}")
	return service, labels


def parse_query(query):
	"""The parameters of the query string, each once, or Reject."""
	try:
		pairs = urllib.parse.parse_qsl(query, keep_blank_values=True, strict_parsing=True,
					       errors="strict")
	except (ValueError, UnicodeDecodeError) as e:
		raise Reject(400, f"query {query!r}: {e}")
	q = {}
	for k, v in pairs:
		if k not in QUERY:
			raise Reject(400, f"unknown parameter {k!r}")
		if k in q:
			raise Reject(400, f"parameter {k} twice")
		q[k] = v
	for k in sorted(QUERY - {"sampleRate"}):
		if k not in q:
			raise Reject(400, f"no parameter {k}")
	return q


def header_params(name, value):
	"""(main value, Message) of a header with parameters (the email
	package parses them, quotes and all)."""
	m = Message()
	m[name] = value
	params = m.get_params(header=name) or [("", "")]
	return params[0][0].lower(), m


def parse_multipart(ctype, body):
	"""{part name: (filename, bytes)} of a multipart/form-data body (RFC
	7578, 2046). Split here by hand: the email package's parser goes a
	line at a time, tens of ms for a binary body under TCG, and the
	store must keep up with taprootd."""
	kind, m = header_params("Content-Type", ctype)
	if kind != "multipart/form-data":
		raise Reject(400, f"Content-Type {ctype!r} is not multipart/form-data")
	boundary = m.get_boundary()
	if not boundary:
		raise Reject(400, f"Content-Type {ctype!r} has no boundary")
	delim = b"--" + boundary.encode("latin-1")
	if not body.startswith(delim):
		raise Reject(400, f"the body does not start with the boundary {delim!r}: {body[:80]!r}")
	raw, pos = [], len(delim)
	while True:
		if body.startswith(b"--", pos):
			if body[pos + 2:] not in (b"", b"\r\n"):
				raise Reject(400, f"{len(body) - pos - 2} bytes after the closing boundary")
			break
		if not body.startswith(b"\r\n", pos):
			raise Reject(400, f"a boundary not followed by CRLF at byte {pos}")
		end = body.find(b"\r\n" + delim, pos + 2)
		if end < 0:
			raise Reject(400, "a part without a boundary after it (truncated body?)")
		raw.append(body[pos + 2:end])
		pos = end + 2 + len(delim)
	parts = {}
	for r in raw:
		if r.startswith(b"\r\n"):	# no headers
			head, data = b"", r[2:]
		else:
			head, sep, data = r.partition(b"\r\n\r\n")
			if not sep:
				raise Reject(400, f"a part without the blank line after its headers: "
					     f"{r[:80]!r}")
		disp = None
		for line in head.decode("latin-1").split("\r\n") if head else []:
			k, colon, v = line.partition(":")
			if not colon:
				raise Reject(400, f"a part's header line {line!r} is not NAME: VALUE")
			if k.strip().lower() == "content-disposition":
				disp = v.strip()
		if disp is None:
			raise Reject(400, f"a part without Content-Disposition: {head!r}")
		dkind, dm = header_params("Content-Disposition", disp)
		name = dm.get_param("name", header="content-disposition")
		if dkind != "form-data" or not name:
			raise Reject(400, f"a part's Content-Disposition is {disp!r}, not form-data; name=...")
		if name in parts:
			raise Reject(400, f"part {name!r} twice")
		parts[name] = (dm.get_filename(), data)
	return parts


def check_config(kind, raw):
	"""The sample_type_config part, parsed, or Reject."""
	try:
		cfg = json.loads(raw.decode("utf-8"))
	except (UnicodeDecodeError, ValueError) as e:
		raise Reject(400, f"sample_type_config is not JSON: {e}: {raw[:200]!r}")
	if not isinstance(cfg, dict) or not cfg:
		raise Reject(400, f"sample_type_config is not a non-empty object: {cfg!r}")
	for t, v in cfg.items():
		if (not isinstance(v, dict) or set(v) != {"units", "aggregation", "display-name"} or
		    not all(isinstance(x, str) and x for x in v.values())):
			raise Reject(400, f"sample_type_config[{t!r}] = {v!r}: want exactly units, "
				     "aggregation and display-name, non-empty strings")
		if v["aggregation"] != "sum":
			raise Reject(400, f"sample_type_config[{t!r}]: aggregation {v['aggregation']!r}, "
				     "not sum")
	if kind == "offwake" and cfg.get("off_cpu", {}).get("display-name") != "off_wake":
		raise Reject(400, f"offwake's sample_type_config does not display off_cpu as "
			     f"off_wake: {cfg!r}")
	return cfg


class Handler(http.server.BaseHTTPRequestHandler):
	protocol_version = "HTTP/1.1"
	server_version = "push-receiver"
	timeout = 60		# a client that stalls mid-request is dropped

	def answer(self, status, text):
		body = (text + "\n").encode()
		self.send_response(status)
		self.send_header("Content-Type", "text/plain; charset=utf-8")
		self.send_header("Content-Length", str(len(body)))
		if self.close_connection:
			self.send_header("Connection", "close")
		try:
			self.end_headers()
			self.wfile.write(body)
		except (BrokenPipeError, ConnectionResetError):
			# An uploader killed while its answer was held.
			sys.stderr.write(f"push-receiver: {self.command} {self.path}: the client "
					 f"left before its answer ({status})\n")
			self.close_connection = True

	def reject(self, status, reason):
		sys.stderr.write(f"push-receiver: {status} {self.command} {self.path}: {reason}\n")
		STORE.append("rejected.jsonl", {
			"time": time.time(), "status": status, "reason": reason,
			"method": self.command, "path": self.path,
			"id": self.headers.get("X-Taproot-Upload-Id"),
		})
		self.answer(status, reason)

	def read_body(self):
		if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
			body = bytearray()
			while True:
				size = int(self.rfile.readline().split(b";")[0].strip(), 16)
				if size == 0:
					while self.rfile.readline() not in (b"\r\n", b"\n", b""):
						pass	# trailers
					return bytes(body)
				body += self.rfile.read(size)
				self.rfile.readline()
				if len(body) > MAX_BODY:
					raise Reject(413, f"body over {MAX_BODY} bytes")
		length = self.headers.get("Content-Length")
		if length is None or not length.isdigit():
			raise Reject(411, f"Content-Length {length!r}")
		if int(length) > MAX_BODY:
			raise Reject(413, f"body of {length} bytes, over {MAX_BODY}")
		body = self.rfile.read(int(length))
		if len(body) != int(length):
			raise Reject(400, f"body of {len(body)} bytes, Content-Length {length}")
		return body

	def do_POST(self):
		try:
			body = self.read_body()
		except Reject as e:
			self.close_connection = True	# the rest of the body is unread
			return self.reject(e.status, e.reason)
		except ValueError as e:
			self.close_connection = True
			return self.reject(400, f"bad chunked body: {e}")
		try:
			entry, profile = self.check(body)
		except Reject as e:
			return self.reject(e.status, e.reason)
		except Exception as e:	# a bug here: on record, as a refusal is
			return self.reject(500, f"push-receiver failed: {e!r}")
		entry, held = STORE.take(entry, profile)
		if held and DELAY_FIRST > 0:
			print(f"holding {entry['id']}", flush=True)
			time.sleep(DELAY_FIRST)
			print(f"held {entry['id']}", flush=True)
		self.answer(200, f"{'duplicate of' if entry['dup'] else 'stored as'} {entry['file']}")

	def check(self, body):
		url = urllib.parse.urlsplit(self.path)
		if url.path != "/ingest":
			raise Reject(404, f"no {url.path!r} here: POST /ingest")
		q = parse_query(url.query)
		service, labels = parse_name(q["name"])
		kind = labels["kind"]
		times = {}
		for k in ("from", "until"):
			if not re.fullmatch(r"[0-9]{1,12}", q[k]):
				raise Reject(400, f"{k}={q[k]!r} is not integer seconds")
			times[k] = int(q[k])
		if times["until"] <= times["from"]:
			raise Reject(400, f"until={times['until']} is not after from={times['from']}")
		if q["format"] != "pprof":
			raise Reject(400, f"format={q['format']!r}, not pprof")
		if q["spyName"] != "taproot":
			raise Reject(400, f"spyName={q['spyName']!r}, not taproot")
		rate = q.get("sampleRate")
		if kind == "cpu":
			if rate is not None and not re.fullmatch(r"[1-9][0-9]*", rate):
				raise Reject(400, f"kind cpu: sampleRate={rate!r}, want a positive integer")
			rate = rate and int(rate)
		elif rate is not None:
			raise Reject(400, f"kind {kind} with sampleRate={rate!r}: only cpu has one")
		uid = self.headers.get("X-Taproot-Upload-Id")
		# (Whether HOSTNAME is the host's is the test's to check: the
		# name's hostname is sanitized, the id's need not be.)
		if not uid or not re.fullmatch(r"[^/\s]+/\S+", uid):
			raise Reject(400, f"X-Taproot-Upload-Id {uid!r}, want HOSTNAME/FILE")
		auth = self.headers.get("Authorization")
		if REQUIRE_BEARER is not None and auth != f"Bearer {REQUIRE_BEARER}":
			raise Reject(401, f"Authorization {auth!r}, want 'Bearer {REQUIRE_BEARER}'")
		tenant = self.headers.get("X-Scope-OrgID")
		if REQUIRE_TENANT is not None and tenant != REQUIRE_TENANT:
			raise Reject(401, f"X-Scope-OrgID {tenant!r}, want {REQUIRE_TENANT!r}")

		parts = parse_multipart(self.headers.get("Content-Type", ""), body)
		unknown = set(parts) - {"profile", "sample_type_config"}
		if unknown:
			raise Reject(400, f"unknown parts {sorted(unknown)}")
		if "profile" not in parts:
			raise Reject(400, f"no part 'profile' (parts: {sorted(parts)})")
		filename, profile = parts["profile"]
		if filename != "profile.pb.gz":
			raise Reject(400, f"part profile has filename {filename!r}, not profile.pb.gz")
		try:
			if not gzip.decompress(profile):
				raise Reject(400, "the profile is an empty gzip")
		except (OSError, EOFError) as e:
			raise Reject(400, f"the profile ({len(profile)} bytes) is not gzip: {e}")
		cfg = None
		if kind in OFFCPU_KINDS:
			if "sample_type_config" not in parts:
				raise Reject(400, f"kind {kind} without a sample_type_config part")
			cfg = check_config(kind, parts["sample_type_config"][1])
		elif "sample_type_config" in parts:
			raise Reject(400, f"kind {kind} with a sample_type_config part: off-CPU kinds only")
		return {
			"id": uid, "name": q["name"], "service": service, "labels": labels,
			"kind": kind, "from": times["from"], "until": times["until"],
			"sample_rate": rate, "bytes": len(profile),
			"sha256": hashlib.sha256(profile).hexdigest(), "config": cfg,
			"authorization": auth, "tenant": tenant,
			"user_agent": self.headers.get("User-Agent"), "time": time.time(),
			"peer": self.client_address[1],
		}, profile

	def other(self):
		self.close_connection = True	# a body, if any, is not read
		self.reject(405, f"method {self.command}: POST /ingest only")

	do_GET = do_PUT = do_DELETE = do_HEAD = do_PATCH = do_OPTIONS = other

	def log_message(self, fmt, *args):
		sys.stderr.write("push-receiver: %s\n" % (fmt % args))


def usage():
	sys.exit("usage: push-receiver.py PORT OUTDIR [--delay-first SECONDS] "
		 "[--require-bearer TOKEN] [--require-tenant ID]")


def main():
	global STORE, DELAY_FIRST, REQUIRE_BEARER, REQUIRE_TENANT
	args = sys.argv[1:]
	if len(args) < 2 or not args[0].isdigit():
		usage()
	port, outdir, rest = int(args[0]), args[1], args[2:]
	DELAY_FIRST, REQUIRE_BEARER, REQUIRE_TENANT = 0.0, None, None
	while rest:
		if len(rest) < 2:
			usage()
		opt, val, rest = rest[0], rest[1], rest[2:]
		if opt == "--delay-first":
			DELAY_FIRST = float(val)
		elif opt == "--require-bearer":
			REQUIRE_BEARER = val
		elif opt == "--require-tenant":
			REQUIRE_TENANT = val
		else:
			usage()
	os.makedirs(outdir, exist_ok=True)
	STORE = Store(outdir)

	def stop(signo, frame):
		raise SystemExit(0)
	signal.signal(signal.SIGTERM, stop)
	signal.signal(signal.SIGINT, stop)
	server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
	server.daemon_threads = True	# a held answer does not delay the exit
	print(f"listening {port}", flush=True)
	try:
		server.serve_forever()
	finally:
		server.server_close()


STORE = DELAY_FIRST = REQUIRE_BEARER = REQUIRE_TENANT = None
if __name__ == "__main__":
	main()
