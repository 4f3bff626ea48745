#!/bin/bash
# JIT code named late: taprootctl record of tests/vm/progs/jitlate, whose
# two functions in anonymous executable memory (jit_alpha, called three
# times for every call of jit_beta) are named by a perf map it writes only
# as it exits, as a JVM with -XX:+DumpPerfMapAtExit does; every sample was
# taken, and its pc symbolized, before the map existed. Read with the real
# pprof:
#   - at least 95% of the samples in the JIT code are named jit_alpha or
#     jit_beta (the rest left as addresses in [anon]), and none is named
#     wrongly (the leaf's address within the function the name says);
#   - jit_alpha's share of the two is within 5 points of the share the
#     program measured of its own CPU time.
# One recording of 3 s under TCG:
# vm-timeout: 120
# vm-scope: userspace
. "${0%/*}/lib.sh"

require_module
require_pprof
[ -x "$PROGS/jitlate" ] || die "no $PROGS/jitlate: run tests/vm/build-progs"
load_module

say "taprootctl record -- jitlate 3"
expect_ok "taprootctl record" "$CTL" record --freq 499 --output "$TEST_TMP/rec" -- \
	"$PROGS/jitlate" 3
assert_contains "record summary" "$OUT" "command:  exited with status 0"
line=$(grep -o 'jitlate: alpha=[0-9]* beta=[0-9]*' <<<"$OUT") ||
	die "the program's line is not in record's output: $OUT"
expect_ok "pprof -raw" "$PPROF" -raw -symbolize=none "$TEST_TMP/rec/cpu.pb.gz"
printf '%s\n' "$OUT" >"$TEST_TMP/cpu.raw"

python3 -S - "$REPO/tests/vm" "$TEST_TMP/cpu.raw" "$line" <<'PY'
import re, sys

sys.path.insert(0, sys.argv[1])
import pprofraw

text = open(sys.argv[2], errors="replace").read()
alpha_ns, beta_ns = map(int, re.match(r"jitlate: alpha=(\d+) beta=(\d+)", sys.argv[3]).groups())
prof = pprofraw.parse(text)
kind = [t for t in prof.types if t.startswith("samples/")][0]
mine = [s for s in prof.samples if s.labels.get("comm", "") == "jitlate"]
named = {"jit_alpha": 0, "jit_beta": 0}
unnamed = 0
for s in mine:
    if not s.frames:
        continue
    if s.frames[0] in named:
        named[s.frames[0]] += s.values[kind]
    elif s.frames[0] == "?" and s.mappings[0] == "[anon]":
        unnamed += s.values[kind]
total = sum(s.values[kind] for s in mine)
jit = sum(named.values()) + unnamed
share = 100.0 * named["jit_alpha"] / sum(named.values()) if sum(named.values()) else 0.0
theirs = 100.0 * alpha_ns / (alpha_ns + beta_ns)
print(f"# {total} samples of jitlate, {jit} in its JIT code: jit_alpha {named['jit_alpha']}, "
      f"jit_beta {named['jit_beta']}, unnamed {unnamed}; jit_alpha {share:.1f}% of the "
      f"named, the program measured {theirs:.1f}%")

# A named location's address lies in the function its name says: the
# perf map's entries are 9 bytes long, at the code's start and 0x100 on.
locs = re.findall(r"^\s+\d+: (0x[0-9a-f]+) M=\d+\s+(jit_alpha|jit_beta) ", text, re.M)
starts = {}
for addr, name in locs:
    starts.setdefault(name, set()).add(int(addr, 16))
wrong = []
if len(starts) == 2:
    base = min(starts["jit_alpha"]) & ~0xfff
    for name, off in (("jit_alpha", 0), ("jit_beta", 0x100)):
        wrong += [f"{name} at {a:#x}" for a in starts[name] if not 0 <= a - base - off < 9]
failed = []
if jit < 300 or jit < 0.5 * total:
    failed.append(f"{jit} samples in the JIT code, of {total}")
elif sum(named.values()) < 0.95 * jit:
    failed.append(f"{sum(named.values())} of {jit} samples in the JIT code named, need 95%")
if wrong:
    failed.append(f"named where the perf map says otherwise: {wrong[:5]}")
if abs(share - theirs) > 5.0:
    failed.append(f"jit_alpha's share {share:.1f}% is {abs(share - theirs):.1f} points from "
                  f"the program's own {theirs:.1f}% (> 5)")
for f in failed:
    print("FAIL:", f)
sys.exit(1 if failed else 0)
PY
