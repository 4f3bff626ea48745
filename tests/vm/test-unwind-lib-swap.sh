#!/bin/bash
# No stack from the wrong binary: progs/libswap unloads one library and
# loads another at the same address, over and over (libswapa, whose leaf
# has a 4 KiB frame, and libswapb, whose leaf has none), while taprootctl
# record samples it at 999 Hz with the module unwinding. A sample taken
# after a swap must not be walked with the table of the library that was
# there before: the uploaded mappings are bound to the address space as
# it was, so the module counts such a sample stale and falls back to the
# stack copy until taprootctl uploads the mappings again. Checked on the
# module's own walks, the STACK records of the raw capture:
#   - every walk whose leaf lies in a library's leaf function goes on with
#     the return address into that library's swap_entry, then into the
#     run_a or run_b of main that called it (run_a with libswapa's
#     offsets, run_b with libswapb's): none continues with a return
#     address that the other library's table would have found;
#   - the module did see the mappings change (stale walks counted), and
#     walked enough samples in the leaves for this to mean something (200:
#     recorded again, up to three times, until the recordings together
#     hold that many, since how many samples the module walks rather than
#     leaves stale depends on how soon record's uploads follow each swap:
#     172 in one recording of 5.10 in a make check, 2026-11-27);
#   - no STACK record's id is the unkeyed hash the module once used (ids
#     are keyed, per epoch, so that no process can craft a stack whose id
#     is another's).
# (The profile's stacks of the fallback samples are unwound by taprootctl
# from its own view of the maps, read after the sample: a process that
# swaps libraries this fast can be seen in the wrong one there, a limit
# of every profiler that reads /proc instead of being told of each mmap.)
# vm-timeout: 360
. "${0%/*}/lib.sh"
. "${0%/*}/lib-sampling.sh"

require_module
for p in libswap libswapa libswapb; do
	[ -e "$PROGS/$p" ] || die "no $PROGS/$p: run tests/vm/build-progs"
done
command -v nm >/dev/null || die "no nm (binutils)"
load_module

for p in libswap libswapa libswapb; do
	nm -S "$PROGS/$p" >"$TEST_TMP/$p.nm" || die "nm $p failed"
done

# 300 ms in each library: uploads (at most one per process every 200 ms)
# catch up after most swaps, so that most samples are walked in the
# module, and the first ones after each swap are stale. Each recording's
# walks are checked; their counts add up across recordings.
walks=0 stale=0
for attempt in 1 2 3; do
	rm -rf "$TEST_TMP/rec" "$TEST_TMP/rec.raw"
	expect_ok "record -- libswap (recording $attempt)" "$CTL" record --freq 999 \
		--output "$TEST_TMP/rec" --raw "$TEST_TMP/rec.raw" \
		--stats-json "$TEST_TMP/stats.json" -- "$PROGS/libswap" 6 300
	printf '%s\n' "$OUT" >"$TEST_TMP/out.txt"
	echo "$OUT"
	python3 -S - "$TEST_TMP" "$REPO/tests/vm" <<'PY' || die "the module's walks of libswap are not as expected"
import json, re, struct, sys
sys.path.insert(0, sys.argv[2])
import rawrecords

tmp = sys.argv[1]
def syms(name):
    out = {}
    for line in open(f"{tmp}/{name}.nm"):
        f = line.split()
        if len(f) == 4:
            out[f[3]] = (int(f[0], 16), int(f[0], 16) + int(f[1], 16))
    return out
prog, liba, libb = syms("libswap"), syms("libswapa"), syms("libswapb")
out = open(f"{tmp}/out.txt").read()
main_at = int(re.search(r"libswap: main (0x[0-9a-f]+)", out).group(1), 16)
bases = [int(b, 16) for b in re.findall(r"libswap: base (0x[0-9a-f]+)", out)]
n, same = map(int, re.search(r"swaps (\d+) same-address (\d+)", out).groups())
pbias = main_at - prog["main"][0]
print(f"# {n} loads, {same} at the address before; bases {[hex(b) for b in bases]}")
if same < n // 2:
    sys.exit("FAIL: the loads did not reuse the address: nothing tested")

def within(pc, rng, bias):
    return rng[0] <= pc - bias < rng[1]

# A stack is written once per CPU and epoch (STACK), then referenced by
# each sample of it (SAMPLE_REF): count the samples by stack id.
stacks, refs = [], {}
for rtype, rec in rawrecords.read(f"{tmp}/rec.raw"):
    if len(rec) < 40:
        continue
    if rtype == 9:
        sid = struct.unpack_from("<Q", rec, 48)[0]
        refs[sid] = refs.get(sid, 0) + 1
    elif rtype == 8:
        stacks.append(rec)
# The module's ids before they were keyed (a multiply-xorshift chain from
# a constant): any stack's id was computable, and invertible.
M = (1 << 64) - 1
def mix(h, v):
    h = ((h ^ v) * 0x9e3779b97f4a7c15) & M
    return h ^ (h >> 31)
def unkeyed(epoch, pid, flags, pcs, knr, unr):
    h = mix(mix(0x6a09e667f3bcc909, epoch << 32 | pid), flags << 32 | knr << 16 | unr)
    for v in pcs:
        h = mix(h, v)
    h ^= h >> 29
    h = (h * 0xbf58476d1ce4e5b9) & M
    h ^= h >> 32
    return h or 1
public = 0
for rec in stacks:
    flags = struct.unpack_from("<H", rec, 6)[0]
    sid, epoch, pid, knr, unr = struct.unpack_from("<QIIHB", rec, 16)
    pcs = struct.unpack_from(f"<{knr + unr}Q", rec, 40)
    public += unkeyed(epoch, pid, flags, pcs, knr, unr) == sid
if not stacks or public:
    sys.exit(f"FAIL: {public} of {len(stacks)} stack ids are the unkeyed hash of their stack")
walks = right = wrong = 0
for rec in stacks:
    sid = struct.unpack_from("<Q", rec, 16)[0]
    knr, unr = struct.unpack_from("<HB", rec, 32)
    pcs = struct.unpack_from(f"<{unr}Q", rec, 40 + 8 * knr)
    if True:
        for lib, leaf, run in ((liba, "a_leaf", "run_a"), (libb, "b_leaf", "run_b")):
            if unr < 3 or not within(pcs[2], prog[run], pbias):
                continue
            # Called from run_a, so libswapa was mapped (or the reverse):
            # its leaf, then its swap_entry.
            if not any(within(pcs[0], lib[leaf], b) for b in bases):
                continue
            walks += refs.get(sid, 0)
            if any(within(pcs[1] - 1, lib["swap_entry"], b) for b in bases):
                right += refs.get(sid, 0)
            else:
                wrong += refs.get(sid, 0) or 1
                print(f"# wrong walk: {' '.join(hex(p) for p in pcs)}")
k = json.load(open(f"{tmp}/stats.json"))["kunwind"]
print(f"# module walks in the leaves: {right} samples right, {wrong} wrong"
      f" ({len(stacks)} stacks); all walks {k}")
if wrong:
    sys.exit(f"FAIL: {wrong} walks continued with the wrong library's return address")
with open(f"{tmp}/counts", "w") as f:
    f.write(f"{walks} {k['stale']}\n")
PY
	read -r w st <"$TEST_TMP/counts"
	walks=$((walks + w)) stale=$((stale + st))
	say "recording $attempt: $w module walks in the leaves, $st stale; $walks in all"
	[ "$walks" -lt 200 ] || break
done
assert_le "module walks in the leaves (else nothing tested): 200" 200 "$walks"
assert_gt "stale walks: the module saw the mappings change" "$stale" 0
