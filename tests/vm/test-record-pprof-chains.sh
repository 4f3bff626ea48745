#!/bin/bash
# taprootctl record -- COMMAND profiles a program built -O2 -fomit-frame-pointer
# with a shared library and known call chains in known proportions
# (tests/vm/progs/tapwork.c: main -> run -> a -> leaf_x, 6 units of 10;
# main -> run -> b -> libfunc -> leaf_y in libtapwork, 4 of 10):
#   - the real pprof reads the profile, and shows the complete chains from
#     main (and _start below it) down to the leaves;
#   - the split between the two chains matches `perf record --call-graph
#     dwarf` of the same program in the same guest within 5 points;
#   - at least 99% of the program's samples unwind completely (no marker
#     frame at the root of their stack);
#   - the module's configuration is restored and sampling stopped after.
# perf record alone takes 10 to 70 s under TCG on 6.12 (its start-up reads
# of /proc and /sys):
# vm-timeout: 300
. "${0%/*}/lib.sh"

require_module
require_pprof
for p in tapwork libtapwork; do
	[ -e "$PROGS/$p" ] || die "no $PROGS/$p: run tests/vm/build-progs"
done
command -v perf >/dev/null || die "perf is not installed (linux-perf)"

secs=${TAPROOT_TAPWORK_SECONDS:-5}
freq=499
load_module
expect_ok "config before" "$CTL" config
before=$OUT

say "taprootctl record --freq $freq -- tapwork $secs"
out=$TEST_TMP/rec
expect_ok "taprootctl record" "$CTL" record --freq "$freq" --ring-pages 2048 --ustack 16384 \
	--output "$out" --stats-json "$TEST_TMP/stats.json" -- "$PROGS/tapwork" "$secs"
echo "$OUT"
assert_contains "record summary" "$OUT" "command:  exited with status 0"
[ -s "$out/cpu.pb.gz" ] || die "record: no $out/cpu.pb.gz"
expect_ok "config after" "$CTL" config
assert_eq "configuration restored" "$before" "$OUT"
expect_ok "status after" "$CTL" status
assert_contains "sampling stopped" "$OUT" "running:        no"

# -symbolize=none: pprof shows what the file holds, names included, instead
# of symbolizing again with binutils (which takes seconds under TCG, and
# would hide a name our symbolizer failed to give).
expect_ok "pprof -traces" "$PPROF" -traces -symbolize=none -sample_index=samples "$out/cpu.pb.gz"
printf '%s\n' "$OUT" >"$TEST_TMP/traces.txt"
expect_ok "pprof -raw" "$PPROF" -raw -symbolize=none "$out/cpu.pb.gz"
printf '%s\n' "$OUT" >"$TEST_TMP/raw.txt"

say "perf record -e cpu-clock -F $freq --call-graph dwarf -- tapwork $secs"
# -B -N --no-bpf-event --synth=no: none of perf's start-up and end work
# that this comparison does not need (slow under TCG); --no-inline: no
# addr2line runs in perf script.
expect_ok "perf record" perf record -q -B -N --no-bpf-event --synth=no -e cpu-clock \
	-F "$freq" --call-graph dwarf -o "$TEST_TMP/perf.data" -- "$PROGS/tapwork" "$secs"
expect_ok "perf script" perf script --no-inline -i "$TEST_TMP/perf.data" -F comm,ip,sym
printf '%s\n' "$OUT" >"$TEST_TMP/perf.txt"

python3 -S - "$TEST_TMP/traces.txt" "$TEST_TMP/raw.txt" "$TEST_TMP/perf.txt" \
	"$TEST_TMP/stats.json" <<'PY'
import json, re, sys

traces_f, raw_f, perf_f, stats_f = sys.argv[1:]
MARKERS = ("[truncated]", "[no cfi]", "[no mapping]", "[bad frame]", "[max depth]")
CHAIN_X = ["leaf_x", "a", "run", "main"]
CHAIN_Y = ["leaf_y", "libfunc", "b", "run", "main"]

def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)

# pprof -traces: blocks of label lines, then "  N   leaf" and one frame a line.
samples = []	# (count, comm, [frames leaf first])
text = open(traces_f, errors="replace").read()
for block in text.split("-----------+-------------------------------------------------------")[1:]:
    labels, frames, count = {}, [], None
    for line in block.split("\n"):
        if not line.strip():
            continue
        m = re.match(r"^\s*(\w+):\s+(.*)$", line)
        if count is None and m and not re.match(r"^\s*\d+\s", line):
            labels[m.group(1)] = m.group(2).strip()
            continue
        m = re.match(r"^\s+(\d+)\s{2,}(\S.*)$", line)
        if count is None and m:
            count = int(m.group(1))
            frames.append(m.group(2).strip())
        elif count is not None:
            frames.append(line.strip())
    if count is not None:
        samples.append((count, labels.get("comm", ""), frames))
mine = [s for s in samples if s[1] == "tapwork"]
total = sum(c for c, _, _ in mine)
if total < 200:
    fail(f"only {total} samples of tapwork in the profile (of {sum(c for c, _, _ in samples)})")

def strip_inline(f):
    return f.replace(" (inline)", "")

def chain_at(frames, chain):
    fr = [strip_inline(f) for f in frames]
    if chain[0] not in fr:
        return None
    i = fr.index(chain[0])
    return fr[i:i + len(chain)] == chain and fr[-1] == "_start"

incomplete = sum(c for c, _, fr in mine if fr[-1] in MARKERS)
x = sum(c for c, _, fr in mine if "leaf_x" in fr)
y = sum(c for c, _, fr in mine if "leaf_y" in fr)
x_ok = sum(c for c, _, fr in mine if chain_at(fr, CHAIN_X))
y_ok = sum(c for c, _, fr in mine if chain_at(fr, CHAIN_Y))
rate = 100.0 * (total - incomplete) / total
print(f"# taproot: {total} samples of tapwork; complete unwinds {rate:.2f}%;"
      f" leaf_x {x} ({x_ok} with main->run->a->leaf_x, _start at the root),"
      f" leaf_y {y} ({y_ok} with main->run->b->libfunc->leaf_y)")
for c, _, fr in mine:
    if fr[-1] in MARKERS:
        print(f"#   incomplete ({c}): {' <- '.join(fr)}")
if x + y < total * 0.7:
    fail(f"only {x + y} of {total} samples are in leaf_x or leaf_y")
if x_ok < x * 0.99 or y_ok < y * 0.99:
    fail(f"incomplete chains: leaf_x {x_ok}/{x}, leaf_y {y_ok}/{y} with the whole chain")
if rate < 99.0:
    fail(f"{rate:.2f}% of tapwork's samples unwound completely, need 99%")

# Mappings: the program and its library, with build IDs and functions.
raw = open(raw_f, errors="replace").read()
for name in ("/tapwork ", "/libtapwork "):
    m = [l for l in raw.split("\n") if name in l and re.search(r" [0-9a-f]{40} ", l)]
    if not m or "[FN]" not in m[0]:
        fail(f"pprof -raw: no mapping{name}with a build ID and functions")

# perf script -F comm,ip,sym: a "comm" line, then one frame a line.
psamples, cur = [], None
for line in open(perf_f, errors="replace"):
    line = line.rstrip("\n")
    if not line.strip():
        continue
    if not line[0].isspace():
        cur = [line.strip(), []]
        psamples.append(cur)
    elif cur is not None:
        parts = line.split()
        if len(parts) >= 2:
            cur[1].append(re.sub(r"\+0x[0-9a-f]+$", "", parts[1]))
pm = [fr for comm, fr in psamples if comm == "tapwork"]
px = sum(1 for fr in pm if "leaf_x" in fr)
py = sum(1 for fr in pm if "leaf_y" in fr)
if px + py < 100:
    fail(f"perf: only {px + py} samples in leaf_x or leaf_y (of {len(pm)} of tapwork)")
tx, ptx = 100.0 * x / (x + y), 100.0 * px / (px + py)
print(f"# leaf_x share: taproot {tx:.1f}% ({x}:{y}), perf {ptx:.1f}% ({px}:{py}),"
      f" difference {abs(tx - ptx):.1f} points")
if abs(tx - ptx) > 5.0:
    fail(f"leaf_x share differs from perf's by {abs(tx - ptx):.1f} points (> 5)")

st = json.load(open(stats_f))
print(f"# record stats: {st['samples']} samples, lost {st['lost']}, unwind {st['unwind']},"
      f" at entry {st['unwind_at_entry']}, complete {st['unwind_complete_permille'] / 10:.1f}%")
PY
