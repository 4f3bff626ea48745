#!/bin/bash
# A JVM as it runs by default: taprootctl record of Debian's OpenJDK 17
# running tests/vm/progs/JavaSplit.java with no flag (no perf map, no
# agent, no frame pointers), whose two chains end in hotAlpha (three calls
# for every call of hotBeta), loops the JIT compiles. Read with the real
# pprof:
#   - the compiled leaves are named JavaSplit.hotAlpha and
#     JavaSplit.hotBeta, from the JVM's own tables (vmStructs), in the
#     mapping [java]; no perf map was written;
#   - at least 95% of the samples whose leaf is code the JVM made (the
#     code cache) are named;
#   - hotAlpha's share of the two is within 5 points of the share the
#     program measured of its own CPU time.
# The Java frames below the leaf are not walked yet (issue 32).
# One recording of 4 s and the JVM's start under TCG:
# vm-timeout: 150
. "${0%/*}/lib.sh"

require_module
require_pprof
[ -f "$PROGS/java/JavaSplit.class" ] || die "no $PROGS/java/JavaSplit.class: run tests/vm/build-progs (it needs javac)"
command -v java >/dev/null || die "no java: scripts/deps installs openjdk-17-jdk-headless"
load_module

say "taprootctl record -- java JavaSplit 4"
expect_ok "taprootctl record" "$CTL" record --freq 499 --output "$TEST_TMP/rec" -- \
	java -cp "$PROGS/java" JavaSplit 4
assert_contains "record summary" "$OUT" "command:  exited with status 0"
line=$(grep -o 'javasplit: alpha=[0-9]* beta=[0-9]*' <<<"$OUT") ||
	die "the program's line is not in record's output: $OUT"
expect_ok "pprof -raw" "$PPROF" -raw -symbolize=none "$TEST_TMP/rec/cpu.pb.gz"
printf '%s\n' "$OUT" >"$TEST_TMP/cpu.raw"

python3 -S - "$REPO/tests/vm" "$TEST_TMP/cpu.raw" "$line" <<'PY'
import os, re, sys

sys.path.insert(0, sys.argv[1])
import pprofraw

prof = pprofraw.parse(open(sys.argv[2], errors="replace").read())
alpha_ns, beta_ns = map(int, re.match(r"javasplit: alpha=(\d+) beta=(\d+)", sys.argv[3]).groups())
kind = [t for t in prof.types if t.startswith("samples/")][0]
mine = [s for s in prof.samples if s.labels.get("exe", "").endswith("/bin/java")]
pids = {s.labels.get("pid") for s in mine}
leaves = {"JavaSplit.hotAlpha": 0, "JavaSplit.hotBeta": 0}
jit = named = 0
for s in mine:
    if not s.frames:
        continue
    n = s.values[kind]
    if s.frames[0] in leaves and s.mappings[0] == "[java]":
        leaves[s.frames[0]] += n
    # Code the JVM made: named in [java], or left an address in [anon].
    if s.mappings[0] == "[java]" or (s.mappings[0] == "[anon]" and s.frames[0] == "?"):
        jit += n
        named += n if s.mappings[0] == "[java]" and s.frames[0] != "?" else 0
total = sum(s.values[kind] for s in mine)
both = sum(leaves.values())
share = 100.0 * leaves["JavaSplit.hotAlpha"] / both if both else 0.0
theirs = 100.0 * alpha_ns / (alpha_ns + beta_ns)
print(f"# {total} samples of the JVM (pid {', '.join(sorted(p for p in pids if p))}), {jit} in "
      f"its code cache, {named} of them named; hotAlpha {leaves['JavaSplit.hotAlpha']}, "
      f"hotBeta {leaves['JavaSplit.hotBeta']}: hotAlpha {share:.1f}%, the program measured "
      f"{theirs:.1f}%")
failed = []
maps = [p for p in pids if p and os.path.exists(f"/tmp/perf-{p}.map")]
if maps:
    failed.append(f"the JVM wrote a perf map (/tmp/perf-{maps[0]}.map): the names may be its")
if both < 300 or both < 0.25 * total:
    failed.append(f"{both} samples in hotAlpha or hotBeta, of {total}")
if jit < both or named < 0.95 * jit:
    failed.append(f"{named} of the {jit} samples in the code cache named, need 95%")
if abs(share - theirs) > 5.0:
    failed.append(f"hotAlpha's share {share:.1f}% is {abs(share - theirs):.1f} points from the "
                  f"program's own {theirs:.1f}% (> 5)")
for f in failed:
    print("FAIL:", f)
sys.exit(1 if failed else 0)
PY
