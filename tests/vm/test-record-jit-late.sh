#!/bin/bash
# JIT code named late: taprootctl record of tests/vm/progs/jitlate, whose
# two functions in anonymous executable memory (jit_alpha, called with
# probability 3/4, jit_beta else, in random order and lengths) are named by a perf map it writes only
# as it exits, as a JVM with -XX:+DumpPerfMapAtExit does; every sample was
# taken, and its pc symbolized, before the map existed. Read with the real
# pprof:
#   - at least 95% of the samples in the JIT code are named jit_alpha or
#     jit_beta (the rest left as addresses in [anon]), and none is named
#     wrongly (the leaf's address within the function the name says);
#   - jit_alpha's share of the two is within 5 points of the share the
#     program measured of its own CPU time.
# Then taprootd (10 s intervals, stopped by SIGTERM) while jitlate runs
# 2 s: the interval in which it exits (the last profile with its samples)
# names at least 95% of them as well.
# One recording of 3 s and a taprootd of about 5 s under TCG:
# vm-timeout: 150
# vm-scope: userspace
. "${0%/*}/lib.sh"
. "${0%/*}/lib-sampling.sh"

require_module
require_pprof
require_taprootd
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

# check_jit RAW LINE NAMED: the JIT samples of jitlate in pprof -raw text
# RAW: at least NAMED (a fraction) of them named, none wrongly; with the
# program's LINE, jit_alpha's share within 5 points of its own measure.
check_jit() {
python3 -S - "$REPO/tests/vm" "$1" "$2" "$3" <<'PY'
import re, sys

sys.path.insert(0, sys.argv[1])
import pprofraw

text = open(sys.argv[2], errors="replace").read()
m = re.match(r"jitlate: alpha=(\d+) beta=(\d+)", sys.argv[3])
need = float(sys.argv[4])
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
theirs = 100.0 * int(m[1]) / (int(m[1]) + int(m[2])) if m else None
print(f"# {total} samples of jitlate, {jit} in its JIT code: jit_alpha {named['jit_alpha']}, "
      f"jit_beta {named['jit_beta']}, unnamed {unnamed}; jit_alpha {share:.1f}% of the named"
      + (f", the program measured {theirs:.1f}%" if m else ""))

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
# A profile of taprootd's holds a second of samples at most.
if jit < (300 if m else 50) or jit < 0.5 * total:
    failed.append(f"{jit} samples in the JIT code, of {total}")
elif sum(named.values()) < need * jit:
    failed.append(f"{sum(named.values())} of {jit} samples in the JIT code named, "
                  f"need {need:.0%}")
if wrong:
    failed.append(f"named where the perf map says otherwise: {wrong[:5]}")
if m and abs(share - theirs) > 5.0:
    failed.append(f"jit_alpha's share {share:.1f}% is {abs(share - theirs):.1f} points from "
                  f"the program's own {theirs:.1f}% (> 5)")
for f in failed:
    print("FAIL:", f)
sys.exit(1 if failed else 0)
PY
}

check_jit "$TEST_TMP/cpu.raw" "$line" 0.95

say "taprootd -i 10 while jitlate 2 runs: the interval of its exit names its code"
expect_ok "config set freq 499" "$CTL" config set freq 499
mkdir -p "$TEST_TMP/out"
daemon_begin "$TEST_TMP/out" "$TEST_TMP/state.json" -i 10
"$PROGS/jitlate" 2 >"$TEST_TMP/daemon-jitlate.out" || die "jitlate under taprootd failed"
# SIGTERM: taprootd writes the interval it is in, that of the exit.
kill -TERM "$DAEMON_PID"
wait_exit "taprootd after SIGTERM" "$DAEMON_PID" 30
assert_eq "taprootd's exit status after SIGTERM" 0 "$RC"
last=
for f in "$TEST_TMP"/out/cpu-*.pb.gz; do
	expect_ok "pprof -raw ${f##*/}" "$PPROF" -raw -symbolize=none "$f"
	grep -q 'comm:\[jitlate\]' <<<"$OUT" || continue
	printf '%s\n' "$OUT" >"$TEST_TMP/last.raw"
	last=${f##*/}
done
[ -n "$last" ] || die "no profile of taprootd's has samples of jitlate"
say "the last profile with jitlate's samples: $last"
check_jit "$TEST_TMP/last.raw" "" 0.95
