#!/bin/bash
# The causal events' user stacks are walked in the module: taprootctl
# record --events cpu,offcpu of progs/evblock (a reader thread blocked on a
# pipe, woken by a writer thread) uploads the tables (evblock waits on its
# stdin until the module holds them: wait_uploaded), and then
#   - most SWITCH records of the target's switch-outs and most WAKING
#     records of its writer carry the module's walk instead of a stack copy
#     (TAPROOT_SNAP_F_UPCS: ustack_len / 8 pcs, the first the leaf's ip,
#     of the user registers only ip, sp and bp), read from the raw capture;
#   - the offcpu and offwake profiles have whole stacks: the reader's
#     blocked stack and the writer's waking stack both end at a thread's
#     or the process's root (clone3, _start), no marker frame;
#   - every snapshot says how the module's walk ended (the
#     TAPROOT_SNAP_UNWIND bits 8-11 of its flags) as the uapi header says:
#     none without user registers, and never none with them (unwinding is
#     on, the probes walk); under UPCS complete alone, max-frames with
#     USTACK_TRUNC, a fallback's reason with USTACK_FAULT; a copy of the
#     stack only with a fallback's reason, never complete or max-frames;
# with --ustack-private no event carries a byte of user stack: every
# snapshot with user registers has UPCS (the pcs, at most the leaf's ip,
# sp and bp among the registers);
# and with --events offcpu alone (no samples, which alone asked for the
# uploads before) the events themselves have taprootctl upload the
# target: some of its snapshots say no-proc, stale or no-mapping, the
# uploads happened, and then most of its snapshots have UPCS all the same.
# vm-timeout: 300
. "${0%/*}/lib.sh"
. "${0%/*}/lib-sampling.sh"

require_module
require_pprof
[ -x "$PROGS/evblock" ] || die "no $PROGS/evblock: run tests/vm/build-progs"
rounds=150
load_module

# record_evblock NAME RECORD-OPTIONS...: evblock pipe into $TEST_TMP/NAME/,
# its raw capture in NAME.raw, with the profiles of $events, released once
# the module holds its tables and mappings; sets $target to its pid.
events=cpu,offcpu
record_evblock() {
	local name=$1
	shift
	say "taprootctl record --events $events $* -- evblock pipe $rounds, released once uploaded"
	record_held "$name" --events "$events" "$@" --ring-pages 1024 \
		--raw "$TEST_TMP/$name.raw" --output "$TEST_TMP/$name" \
		--stats-json "$TEST_TMP/$name.json" -- "$PROGS/evblock" pipe "$rounds"
	wait_line "record ($name): evblock is ready" "$TEST_TMP/$name.out" '^start$' 60
	target=$(sed -n 's/^ready pid=\([0-9]*\).*/\1/p' "$TEST_TMP/$name.out" | head -n1)
	[ -n "$target" ] || die "no 'ready pid=' from evblock in record's output"
	wait_uploaded "record ($name): evblock ($target) uploaded" "$target" 120
	release_held
	wait_exit "record ($name) ends with evblock" "$REC" 120
	OUT=$(cat "$TEST_TMP/$name.out")
	echo "$OUT"
	[ "$RC" -eq 0 ] || die "record ($name) exited $RC"
	assert_contains "record summary ($name)" "$OUT" "command:  exited with status 0"
}

# check_raw NAME MODE: the SWITCH and WAKING snapshots of raw capture NAME
# as MODE (kernel, private, or events: kernel without samples) expects them.
check_raw() {
	python3 -S - "$TEST_TMP/$1.raw" "$target" "$2" "$TEST_TMP/$1.json" <<'PY'
import gzip, json, struct, sys

path, pid, mode, stats = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
SNAP_USER_REGS, SNAP_FAULT, SNAP_TRUNC, SNAP_TOP, SNAP_UPCS = 1, 4, 8, 16, 32
# enum taproot_kunwind, as taprootctl dump names it; bits 8-11 of the flags
KUNWIND = ["none", "complete", "max-frames", "no-proc", "stale", "no-mapping",
           "no-cfi", "slow-rule", "fault", "bad-frame"]
UPLOADS = ("no-proc", "stale", "no-mapping")	# the ends that ask for uploads
data = gzip.open(path).read()
bad = []
# kind -> [snapshots of the target (or its waker), of them UPCS]
count = {"switch": [0, 0], "waking": [0, 0]}
# the target's snapshots with user registers, by how their walk ended
ends = {}
private_ok = True
off = 0
while off + 8 <= len(data):
    typ, ln = struct.unpack_from("<II", data, off)
    payload = data[off + 8:off + 8 + ln]
    off += 8 + ln
    if typ != 5 or len(payload) < 8 + 16:
        continue
    rec = payload[8:]
    size, rtype, flags = struct.unpack_from("<IHH", rec, 0)
    if rtype == 3 and flags & 8:		# SWITCH with STACKS (of prev)
        kind, at, who = "switch", 80, struct.unpack_from("<I", rec, 24)[0]
    elif rtype == 4 and flags & 16:		# WAKING with STACKS (of the waker)
        kind, at, who = "waking", 64, struct.unpack_from("<I", rec, 28)[0]
    else:
        continue
    knr, sflags, ulen = struct.unpack_from("<HHI", rec, at)
    regs = struct.unpack_from("<18Q", rec, at + 8)
    pcs_at = at + 152 + 8 * knr
    end = (sflags >> 8) & 0xf
    name = KUNWIND[end] if end < len(KUNWIND) else f"?{end}"
    whole = name in ("complete", "max-frames")
    if end >= len(KUNWIND):
        bad.append(f"{kind}: unwind {end} not a TAPROOT_KUNWIND_* (flags {sflags:#x})")
    elif not sflags & SNAP_USER_REGS:
        if name != "none":
            bad.append(f"{kind}: unwind {name} without user registers ({sflags:#x})")
    elif name == "none":
        bad.append(f"{kind} of pid {who}: user registers but no walk ({sflags:#x})")
    elif sflags & SNAP_UPCS:
        if (bool(sflags & SNAP_TRUNC) != (name == "max-frames") or
                bool(sflags & SNAP_FAULT) == whole):
            bad.append(f"{kind}: UPCS snapshot unwind {name}, flags {sflags:#x}")
    elif whole:
        bad.append(f"{kind}: a stack copy with unwind {name} ({sflags:#x})")
    if who == pid and sflags & SNAP_USER_REGS:
        ends[name] = ends.get(name, 0) + 1
    if sflags & SNAP_UPCS:
        pcs = struct.unpack_from(f"<{ulen // 8}Q", rec, pcs_at) if ulen % 8 == 0 else ()
        others = [r for i, r in enumerate(regs) if i not in (6, 7, 16)]
        if (not sflags & SNAP_USER_REGS or ulen % 8 or not 8 <= ulen <= 127 * 8 or
                any(others) or pcs[0] != regs[16] or sflags & SNAP_TOP or
                pcs_at + ulen > size):
            bad.append(f"{kind}: UPCS snapshot flags {sflags:#x} ustack_len {ulen} "
                       f"ip {regs[16]:#x} pcs {[hex(p) for p in pcs[:3]]}")
        if mode != "private" and sflags & (SNAP_FAULT | SNAP_TRUNC):
            bad.append(f"{kind}: a walk not COMPLETE without --ustack-private ({sflags:#x})")
    elif mode == "private" and (ulen or sflags & SNAP_USER_REGS):
        bad.append(f"{kind} of pid {who}: {ulen} stack bytes, flags {sflags:#x}, not UPCS")
    if who == pid and sflags & SNAP_USER_REGS:
        count[kind][0] += 1
        count[kind][1] += bool(sflags & SNAP_UPCS)
st = json.load(open(stats))
uploads = st.get("kernel_uploads", {})
print(f"# {mode}: target's snapshots (with user registers, UPCS): {count}; "
      f"pipeline causal_upcs {st.get('causal_upcs')}")
print(f"# {mode}: target's snapshots by the walk's end: {ends}; "
      f"processes' mappings uploaded {uploads.get('maps_uploaded')}")
for b in bad[:10]:
    print(f"FAIL: {b}")
if bad:
    sys.exit(f"FAIL: {len(bad)} snapshots not as expected")
for kind, (n, upcs) in count.items():
    want = 20 if kind == "switch" else 10
    if upcs < want or upcs < 0.5 * n:
        sys.exit(f"FAIL: {upcs} of the target's {n} {kind} snapshots have UPCS "
                 f"(want half, at least {want})")
if st.get("causal_upcs", 0) < count["switch"][1] // 2:
    sys.exit(f"FAIL: the pipeline took only {st.get('causal_upcs')} causal stacks whole")
if mode == "events":
    # No sample asked for anything: what was uploaded, the events asked for.
    if sum(st.get("kunwind", {}).values()):
        sys.exit(f"FAIL: --events offcpu, yet samples walked: {st.get('kunwind')}")
    if not sum(ends.get(e, 0) for e in UPLOADS):
        sys.exit(f"FAIL: no snapshot of the target asked for an upload: {ends}")
    if uploads.get("maps_uploaded", 0) < 1:
        sys.exit(f"FAIL: no mappings uploaded on the events' request: {uploads}")
PY
	[ $? -eq 0 ] || die "raw capture ($1) not as expected"
}

# check_profiles NAME: the reader's blocked stacks and its writer's waking
# stacks in NAME's offcpu and offwake profiles are whole.
check_profiles() {
	local kind
	for kind in offcpu offwake; do
		expect_ok "pprof -raw $kind ($1)" "$PPROF" -raw -symbolize=none "$TEST_TMP/$1/$kind.pb.gz"
		printf '%s\n' "$OUT" >"$TEST_TMP/$1-$kind.txt"
	done
	python3 -S - "$REPO/tests/vm" "$TEST_TMP/$1" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import pprofraw

base = sys.argv[2]
ROOTS = ("_start", "clone3", "clone", "__clone3", "__clone")
failed = False

def count(s):
    return next(v for t, v in s.values.items() if t.startswith("switches/"))

def whole(frames):
    return frames and frames[-1] in ROOTS and not any(f.startswith("[") for f in frames)

for kind in ("offcpu", "offwake"):
    prof = pprofraw.parse(open(f"{base}-{kind}.txt", errors="replace").read())
    n = ok = 0
    shown = 0
    for s in prof.samples:
        fr = s.frames
        if kind == "offcpu":
            if "ev_read" not in fr:
                continue
            parts = [fr]
        else:
            if "--" not in fr:
                continue
            i = fr.index("--")
            waker, blocked = fr[:i][::-1], fr[i + 1:]
            if "ev_write" not in waker or "ev_read" not in blocked:
                continue
            parts = [waker, blocked]
        c = count(s)
        n += c
        if all(whole(p) for p in parts):
            ok += c
        elif shown < 3:
            shown += 1
            print(f"#   not whole ({c}): {' <- '.join(fr)}")
    print(f"# {kind}: {n} intervals of the reader, {ok} with whole stacks")
    if n < 20 or ok < 0.9 * n:
        print(f"FAIL: {kind}: {ok} of {n} intervals whole (want 90%, at least 20)")
        failed = True
sys.exit(1 if failed else 0)
PY
	[ $? -eq 0 ] || die "profiles ($1) not whole"
}

record_evblock kernel
check_raw kernel kernel
check_profiles kernel

record_evblock private --ustack-private
check_raw private private

events=offcpu
record_evblock events
check_raw events events
check_profiles events
