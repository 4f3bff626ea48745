#!/usr/bin/python3
"""Talk to taproot's kernel interfaces directly, without the library or the
CLI, so that tests can see exactly what the kernel answers.

usage:
  probe.py open PATH r|w|rw     open PATH; print "ok", or the errno name
                                (e.g. EPERM) and exit 1
  probe.py genl CMD             send generic netlink command CMD (a name of
                                enum taproot_cmd without the prefix, e.g.
                                GET_INFO, or a number) to family "taproot"
                                with no attributes; print the reply's
                                attributes as JSON, or "ERRNO: extack message"
                                and exit 1
  probe.py genl-all              every command of enum taproot_cmd, in its
                                order, as genl does: one line "NAME RESULT"
                                each (RESULT "ok" or the errno name); exit 1
                                if any failed
  probe.py dev PATH             every operation on the device PATH: open
                                O_RDONLY, O_WRONLY, O_RDWR, and on the last
                                fd that opened (O_RDWR first), mmap of ring
                                0's consumer page (rw) and producer page
                                (ro), poll, ioctl, read, write; then the
                                same on an O_PATH fd (which no open()
                                method sees). One line of NAME=RESULT
                                words; exit 1 if any open failed
  probe.py ids                  who this process is: "uid=U capeff=HEX
                                uid_map=A,B,N" (the first line of
                                /proc/self/uid_map)
  probe.py listen N SECONDS     join the "session" multicast group, print
                                "listening", then one line per notification
                                (its attributes as JSON) until N came or
                                SECONDS passed; exit 1 if fewer came
  probe.py OP ARGS + OP ARGS...  several of the above in one process: one
                                result line each, exit 1 if any failed

The command and attribute numbers are read from include/uapi/linux/taproot.h,
the single definition of the ABI.
"""

import errno
import json
import os
import re
import socket
import struct
import sys

UAPI = os.path.join(os.path.dirname(os.path.abspath(__file__)),
		    "../../include/uapi/linux/taproot.h")

NETLINK_GENERIC = 16
SOL_NETLINK = 270
NETLINK_EXT_ACK = 11
NLM_F_REQUEST, NLM_F_ACK = 1, 4
NLMSG_ERROR, NLMSG_DONE = 2, 3
NLMSGERR_ATTR_MSG = 1
NLM_F_CAPPED, NLM_F_ACK_TLVS = 0x100, 0x200
GENL_ID_CTRL, CTRL_CMD_GETFAMILY = 0x10, 3
CTRL_ATTR_FAMILY_ID, CTRL_ATTR_FAMILY_NAME = 1, 2


def enum(name):
	"""Members of enum NAME in the uapi header, numbered as C does:
	{member: (value, type word of its trailing comment or None)}."""
	text = open(UAPI).read()
	body = re.search(r"enum\s+" + name + r"\s*\{(.*?)\};", text, re.S).group(1)
	vals, n = {}, -1
	for m in re.finditer(r"^[ \t]*(\w+)[ \t]*(?:=[ \t]*([^,/\n]+?))?[ \t]*,?[ \t]*(?:/\*[ \t]*(\w+))?",
			     body, re.M):
		n = int(m.group(2), 0) if m.group(2) else n + 1
		vals[m.group(1)] = (n, m.group(3))
	return vals


def attrs(buf):
	out, off = {}, 0
	while off + 4 <= len(buf):
		alen, atype = struct.unpack_from("=HH", buf, off)
		if alen < 4:
			break
		out.setdefault(atype & 0x3fff, []).append(buf[off + 4:off + alen])
		off += (alen + 3) & ~3
	return out


def nla(atype, data):
	return struct.pack("=HH", 4 + len(data), atype) + data + b"\0" * (-len(data) % 4)


class Genl:
	def __init__(self):
		self.s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_GENERIC)
		self.s.setsockopt(SOL_NETLINK, NETLINK_EXT_ACK, 1)
		self.s.bind((0, 0))
		self.seq = 0

	def request(self, family, cmd, payload=b"", version=1):
		"""Returns (errno, extack message, [reply payloads])."""
		self.seq += 1
		body = struct.pack("=BBH", cmd, version, 0) + payload
		self.s.send(struct.pack("=IHHII", 16 + len(body), family,
					NLM_F_REQUEST | NLM_F_ACK, self.seq, 0) + body)
		replies = []
		while True:
			data = self.s.recv(65536)
			off = 0
			while off + 16 <= len(data):
				mlen, mtype, mflags, seq, _ = struct.unpack_from("=IHHII", data, off)
				msg = data[off + 16:off + mlen]
				off += (mlen + 3) & ~3
				if seq != self.seq:
					continue
				if mtype == NLMSG_ERROR:
					err = -struct.unpack_from("=i", msg)[0]
					text = ""
					if mflags & NLM_F_ACK_TLVS:
						skip = 4 + (16 if mflags & NLM_F_CAPPED
							    else struct.unpack_from("=I", msg, 4)[0])
						m = attrs(msg[(skip + 3) & ~3:]).get(NLMSGERR_ATTR_MSG)
						if m:
							text = m[0].rstrip(b"\0").decode(errors="replace")
					return err, text, replies
				if mtype == NLMSG_DONE:
					return 0, "", replies
				replies.append(msg[4:])	# past the genlmsghdr

	def family(self, name):
		err, text, rep = self.request(GENL_ID_CTRL, CTRL_CMD_GETFAMILY,
					      nla(CTRL_ATTR_FAMILY_NAME, name.encode() + b"\0"))
		if err:
			return -err, text
		return struct.unpack("=H", attrs(rep[0])[CTRL_ATTR_FAMILY_ID][0][:2])[0], ""


def decode(value, kind):
	if kind in ("u8", "u16", "u32", "u64"):
		return int.from_bytes(value, "little")
	if kind == "string":
		return value.split(b"\0", 1)[0].decode(errors="replace")
	return value.hex()


def cmd_genl(name):
	cmds = enum("taproot_cmd")
	cmd = int(name) if name.isdigit() else cmds.get("TAPROOT_CMD_" + name.upper(), (None,))[0]
	if cmd is None:
		sys.exit(f"probe.py: unknown command {name}")
	g = Genl()
	fam, text = g.family("taproot")
	if fam < 0:
		print(f"{errno.errorcode.get(-fam, -fam)}: family taproot: {text}")
		return 1
	err, text, replies = g.request(fam, cmd)
	if err:
		print(f"{errno.errorcode.get(err, err)}: {text}")
		return 1
	known = {v: (k[len("TAPROOT_A_"):].lower(), kind)
		 for k, (v, kind) in enum("taproot_attr").items()}
	out = {}
	for r in replies:
		for t, vals in attrs(r).items():
			key, kind = known.get(t, (str(t), None))
			vals = [decode(v, kind) for v in vals]
			out[key] = vals if len(vals) > 1 else vals[0]
	print(json.dumps(out, sort_keys=True))
	return 0


def cmd_open(path, mode):
	flags = {"r": os.O_RDONLY, "w": os.O_WRONLY, "rw": os.O_RDWR}[mode]
	try:
		os.close(os.open(path, flags))
	except OSError as e:
		print(errno.errorcode.get(e.errno, e.errno))
		return 1
	print("ok")
	return 0


def errname(e):
	return errno.errorcode.get(e, str(e))


def cmd_genl_all():
	cmds = sorted((v, k) for k, (v, _) in enum("taproot_cmd").items()
		      if not k.startswith("__"))
	g = Genl()
	fam, text = g.family("taproot")
	if fam < 0:
		print(f"{errname(-fam)}: family taproot: {text}")
		return 1
	status = 0
	for v, k in cmds:
		err, _, _ = g.request(fam, v)
		print(f"{k[len('TAPROOT_CMD_'):]} {errname(err) if err else 'ok'}")
		status |= 1 if err else 0
	return status


def cmd_dev(path):
	import fcntl
	import mmap
	import select
	res, fd, status = [], None, 0
	for name, flags in (("open_r", os.O_RDONLY), ("open_w", os.O_WRONLY),
			    ("open_rw", os.O_RDWR)):
		try:
			f = os.open(path, flags)
		except OSError as e:
			res.append(f"{name}={errname(e.errno)}")
			status = 1
			continue
		res.append(f"{name}=ok")
		if flags == os.O_RDWR:
			fd = f
		else:
			os.close(f)
	if fd is None:	# ops on the O_RDONLY fd, if only that opened
		try:
			fd = os.open(path, os.O_RDONLY)
		except OSError:
			pass
	try:
		opath = os.open(path, os.O_PATH)
	except OSError as e:
		res.append(f"open_path={errname(e.errno)}")
		opath = None
	page = mmap.PAGESIZE
	for prefix, f in (("", fd), ("opath_", opath)):
		if f is None:
			continue

		def op(name, fn):
			try:
				fn()
				res.append(f"{prefix}{name}=ok")
			except OSError as e:
				res.append(f"{prefix}{name}={errname(e.errno)}")

		op("mmap_cons_rw", lambda: mmap.mmap(f, page, mmap.MAP_SHARED,
						     mmap.PROT_READ | mmap.PROT_WRITE).close())
		op("mmap_prod_ro", lambda: mmap.mmap(f, page, mmap.MAP_SHARED,
						     mmap.PROT_READ, offset=page).close())

		def poll():
			p = select.poll()
			p.register(f, select.POLLIN)
			ev = p.poll(0)
			if ev and ev[0][1] & (select.POLLNVAL | select.POLLERR):
				raise OSError(errno.EBADF, "POLLNVAL")
		op("poll", poll)
		op("ioctl", lambda: fcntl.ioctl(f, 0x5401))	# TCGETS
		op("read", lambda: os.read(f, 64))
		op("write", lambda: os.write(f, b"\0" * 8))
		os.close(f)
	print(" ".join(res))
	return status


def cmd_ids():
	st = dict(l.split(":", 1) for l in open("/proc/self/status") if ":" in l)
	umap = ",".join(open("/proc/self/uid_map").readline().split())
	print(f"uid={st['Uid'].split()[0]} capeff={st['CapEff'].strip()} uid_map={umap}")
	return 0


def cmd_listen(n, secs):
	import select
	import time
	g = Genl()
	fam, text = g.family("taproot")
	if fam < 0:
		print(f"{errname(-fam)}: family taproot: {text}")
		return 1
	_, _, rep = g.request(GENL_ID_CTRL, CTRL_CMD_GETFAMILY,
			      nla(CTRL_ATTR_FAMILY_NAME, b"taproot\0"))
	group = None
	for grp in attrs(attrs(rep[0]).get(7, [b""])[0]).values():	# MCAST_GROUPS
		a = attrs(grp[0])
		if a.get(1, [b""])[0].rstrip(b"\0") == b"session":	# GRP_NAME
			group = struct.unpack("=I", a[2][0][:4])[0]	# GRP_ID
	if group is None:
		print("no session group")
		return 1
	g.s.setsockopt(SOL_NETLINK, 1, group)	# NETLINK_ADD_MEMBERSHIP
	print("listening", flush=True)
	known = {v: (k[len("TAPROOT_A_"):].lower(), kind)
		 for k, (v, kind) in enum("taproot_attr").items()}
	got, end = 0, time.monotonic() + float(secs)
	while got < int(n) and time.monotonic() < end:
		if not select.select([g.s], [], [], end - time.monotonic())[0]:
			break
		data = g.s.recv(65536)
		off = 0
		while off + 16 <= len(data):
			mlen, mtype, _, _, _ = struct.unpack_from("=IHHII", data, off)
			if mtype == fam:
				out = {"cmd": data[off + 16]}
				for t, vals in attrs(data[off + 20:off + mlen]).items():
					key, kind = known.get(t, (str(t), None))
					out[key] = decode(vals[0], kind)
				print(json.dumps(out, sort_keys=True), flush=True)
				got += 1
			off += (mlen + 3) & ~3
	return 0 if got >= int(n) else 1


def main(argv):
	# Several operations separated by "+" run in one process (python starts
	# slowly under TCG): one result line each, status 1 if any failed.
	ops, cur = [], []
	for a in argv:
		if a == "+":
			ops.append(cur)
			cur = []
		else:
			cur.append(a)
	ops.append(cur)
	status = 0
	for op in ops:
		if len(op) == 3 and op[0] == "open":
			status |= cmd_open(op[1], op[2])
		elif op == ["ids"]:
			status |= cmd_ids()
		elif op == ["genl-all"]:
			status |= cmd_genl_all()
		elif len(op) == 2 and op[0] == "dev":
			status |= cmd_dev(op[1])
		elif len(op) == 3 and op[0] == "listen":
			status |= cmd_listen(op[1], op[2])
		elif len(op) == 2 and op[0] == "genl":
			status |= cmd_genl(op[1])
		else:
			sys.stderr.write(__doc__)
			return 2
		sys.stdout.flush()
	return status


if __name__ == "__main__":
	sys.exit(main(sys.argv[1:]))
