#!/bin/bash
# A JVM as it runs by default: taprootctl record of Debian's OpenJDK 17
# running tests/vm/progs/JavaSplit.java with no flag (no perf map, no
# agent, no frame pointers), whose two chains main -> outerAlpha ->
# hotAlpha (three calls in four, in random order) and main -> outerBeta
# -> hotBeta end in loops the JIT compiles while main stays interpreted.
# Read with the real pprof:
#   - the compiled leaves are named JavaSplit.hotAlpha and
#     JavaSplit.hotBeta, from the JVM's own tables (vmStructs), in the
#     mapping [java]; no perf map was written;
#   - chains: at least 95% of the samples in either leaf have, below it,
#     exactly its outer method and main (compiled frames walked by their
#     frame sizes, main's interpreted frame by its rbp and named by its
#     Method*), then the JVM's call stub ("StubRoutines (1)", 21's
#     "StubRoutines (initial stubs)") and its C++ caller
#     JavaCalls::call_helper, and end where the thread began (no marker
#     of an unwind cut short);
#   - at least 95% of the samples with Java code on their stack (frames
#     in [java]) have every Java frame named;
#   - hotAlpha's share of the two is within 5 points of the share the
#     program measured of its own CPU time, or 4 standard errors of the
#     samples in the two when that is more (a starved guest's stalls);
#   - the module walked Java frames (the JVM's code cache was described
#     to it: "HotSpot frames" in the ABI): 20 at least, counting an
#     interned stack's once.
# Then again for 3 s of the program's CPU with --unwind verify, where
# each sample the module walked whole is walked in userspace too (and
# none is interned): at least 200 compared, 95% of them identical pc for
# pc, and at least as many Java frames walked in the module as identical
# walks (Java frames as the module writes them: methods, and code with
# its compile id). Not 100%: userspace reads the code cache later than
# the module, and the JIT changes it meanwhile. Every recording is at
# 199 Hz: the consumer names Java frames, and unwinds the walks the
# module could not make, from the JVM's live memory, and at 499 Hz under
# TCG it fell seconds behind the JVM, whose last samples it then reached
# after the JVM had exited (a stop's CI: 6% of the verify walks
# differing, now not compared, and one run in nine comparing fewer than
# 200; a clean clone's make check, two guests on two cores: 503 of 2,121
# samples in the code cache named, 76% of the walks stale).
# JavaSplit runs until its chains have had the seconds asked of its CPU,
# not of the clock: a stop's CI, two guests on two slow host cores, once
# gave its main thread 218 samples in 4 s by the clock.
# The first runs with each JVM the guest has: Debian's 17 in every guest
# for 4 s, and the one of its kernel's release, in that release's root
# (bullseye's 11 in 5.10's guest, sid's 21 in 7.2's), for 8 s: its
# libjvm's unwind table is compiled within record's work budget (a
# quarter of the time) before the module holds the JVM's mappings, and a
# clean clone's make check, two guests on two loaded cores, once ended a
# 4 s run of 21 before that (all 4,431 walks no-proc). The verify run is
# 17's. Up to three recordings and the JVM's start, under TCG:
# vm-timeout: 300
. "${0%/*}/lib.sh"

require_module
require_pprof
[ -f "$PROGS/java/JavaSplit.class" ] || die "no $PROGS/java/JavaSplit.class: run tests/vm/build-progs (it needs javac)"
command -v java >/dev/null || die "no java: scripts/deps installs openjdk-17-jdk-headless"
load_module

# check_jdk SECONDS JAVA [PREFIX...]: the first recording's checks, with
# that JVM running JavaSplit SECONDS (run by PREFIX: chroot ROOT, where
# the class is at /mnt).
check_jdk() {
	local secs=$1 java=$2 name=default cp=$PROGS/java
	shift 2
	if [ $# -gt 0 ]; then
		name=$(basename "$(dirname "$(dirname "$java")")")
		cp=/mnt
	fi
	say "taprootctl record -- $name JavaSplit $secs"
	expect_ok "taprootctl record" "$CTL" record --freq 199 --output "$TEST_TMP/rec-$name" \
		--stats-json "$TEST_TMP/rec-$name.json" -- "$@" "$java" -cp "$cp" JavaSplit "$secs"
	assert_contains "record summary" "$OUT" "command:  exited with status 0"
	line=$(grep -o 'javasplit: alpha=[0-9]* beta=[0-9]*' <<<"$OUT") ||
		die "the program's line is not in record's output: $OUT"
	expect_ok "pprof -raw" "$PPROF" -raw -symbolize=none "$TEST_TMP/rec-$name/cpu.pb.gz"
	printf '%s\n' "$OUT" >"$TEST_TMP/cpu.raw"

	python3 -S - "$REPO/tests/vm" "$TEST_TMP/cpu.raw" "$line" "$TEST_TMP/rec-$name.json" <<'PY'
import json, math, os, re, sys

sys.path.insert(0, sys.argv[1])
import pprofraw

prof = pprofraw.parse(open(sys.argv[2], errors="replace").read())
alpha_ns, beta_ns = map(int, re.match(r"javasplit: alpha=(\d+) beta=(\d+)", sys.argv[3]).groups())
kind = [t for t in prof.types if t.startswith("samples/")][0]
mine = [s for s in prof.samples if s.labels.get("exe", "").endswith("/bin/java")]
pids = {s.labels.get("pid") for s in mine}
leaves = {"JavaSplit.hotAlpha": 0, "JavaSplit.hotBeta": 0}
jit = named = chained = java = java_named = 0
bad = {}
for s in mine:
    if not s.frames:
        continue
    n = s.values[kind]
    # Code the JVM made: named in [java], or left an address in [anon].
    if s.mappings[0] == "[java]" or (s.mappings[0] == "[anon]" and s.frames[0] == "?"):
        jit += n
        named += n if s.mappings[0] == "[java]" and s.frames[0] != "?" else 0
    ours = [f for f, m in zip(s.frames, s.mappings) if m == "[java]"]
    if ours:
        java += n
        if all(f != "?" and not f.startswith("[") for f in ours):
            java_named += n
    if s.frames[0] not in leaves or s.mappings[0] != "[java]":
        continue
    leaves[s.frames[0]] += n
    # Methods (a name with a dot) of the Java part, then what is below it.
    methods = [f for f in ours if "." in f]
    last = max(i for i, m in enumerate(s.mappings) if m == "[java]")
    outer = "JavaSplit.outer" + s.frames[0][len("JavaSplit.hot"):]
    below = s.frames[last + 1:]
    whole = (methods == [s.frames[0], outer, "JavaSplit.main"] and
             s.frames[last].startswith("StubRoutines (") and below and
             below[0].startswith("JavaCalls::call_helper") and not s.frames[-1].startswith("["))
    if whole:
        chained += n
    else:
        key = " <- ".join(s.frames[:8]) + (" ... " + s.frames[-1] if len(s.frames) > 8 else "")
        bad[key] = bad.get(key, 0) + n
total = sum(s.values[kind] for s in mine)
both = sum(leaves.values())
share = 100.0 * leaves["JavaSplit.hotAlpha"] / both if both else 0.0
theirs = 100.0 * alpha_ns / (alpha_ns + beta_ns)
print(f"# {total} samples of the JVM (pid {', '.join(sorted(p for p in pids if p))}), {jit} in "
      f"its code cache, {named} of them named; hotAlpha {leaves['JavaSplit.hotAlpha']}, "
      f"hotBeta {leaves['JavaSplit.hotBeta']}: hotAlpha {share:.1f}%, the program measured "
      f"{theirs:.1f}% ({(alpha_ns + beta_ns) / 1e9:.2f} s of CPU); {chained} of them with the whole chain; {java_named} of {java} "
      f"with Java frames have them all named")
for k, v in sorted(bad.items(), key=lambda kv: -kv[1])[:5]:
    print(f"# not whole: {v} {k}")
failed = []
maps = [p for p in pids if p and os.path.exists(f"/tmp/perf-{p}.map")]
if maps:
    failed.append(f"the JVM wrote a perf map (/tmp/perf-{maps[0]}.map): the names may be its")
# Against the leaves' CPU time the program measured, not the JVM's
# total: its start and JIT threads take 60-80% of it under TCG, more
# as the host is slower.
st = json.load(open(sys.argv[4]))
expected = (alpha_ns + beta_ns) / 1e9 * st["freq"]
if both < 300 or both < 0.5 * expected:
    failed.append(f"{both} samples in hotAlpha or hotBeta, of {total}; their CPU time "
                  f"makes {expected:.0f}, want half")
if jit < both or named < 0.95 * jit:
    failed.append(f"{named} of the {jit} samples in the code cache named, need 95%")
if chained < 0.95 * both:
    failed.append(f"{chained} of the {both} samples in hotAlpha or hotBeta with the whole chain, "
                  f"need 95%")
if java_named < 0.95 * java:
    failed.append(f"{java_named} of the {java} samples with Java frames have them all named, "
                  f"need 95%")
print(f"# the module: {st['kernel_uploads']['jvm_procs']} JVM described, "
      f"{st['java_frames_kernel']} Java frames walked; walks {st['kunwind']}")
if st["kernel_uploads"]["jvm_procs"] < 1:
    failed.append("the JVM was not described to the module; uploads: " +
                  json.dumps(st["kernel_uploads"], sort_keys=True))
if st["java_frames_kernel"] < 20:
    failed.append(f"{st['java_frames_kernel']} Java frames walked in the module, want 20")
# Sampling's own error: 4 standard errors of a share of `both` samples,
# 5 points at least. Where the host stalls the guest, the stall counts in
# the thread's CPU time (TCG has no steal clock) but makes one sample:
# two runs on 7.2 beside guests sampling at 1000 Hz were 5.1 and 7.1
# points off, in opposite directions (the second with a third of the
# samples its CPU time makes missing; 1.9 points a standard error); one
# with 95% of them, 0.1.
p = theirs / 100.0
tolerance = max(5.0, 400.0 * math.sqrt(p * (1.0 - p) / both)) if both else 5.0
if abs(share - theirs) > tolerance:
    failed.append(f"hotAlpha's share {share:.1f}% is {abs(share - theirs):.1f} points from the "
                  f"program's own {theirs:.1f}% (> {tolerance:.1f}: 4 standard errors of "
                  f"{both} samples, 5 at least)")
for f in failed:
    print("FAIL:", f)
sys.exit(1 if failed else 0)
PY
}

check_jdk 4 java

# The JVM of this kernel's Debian release, when the kernel came from a
# release root (build/roots/SUITE, whose /boot has it; scripts/deps
# installs bullseye's 11 and sid's 21 there), run in that root: its
# /proc, /dev and the class mounted in this guest's namespace.
root=
for r in "$REPO"/build/roots/*; do
	[ -e "$r/boot/vmlinuz-$(uname -r)" ] && root=$r
done
if [ -n "$root" ]; then
	# Not sid's 25, which taproot refuses (test_hotspot names its code so).
	rjava=
	for v in 11 21; do
		[ -x "$root/usr/lib/jvm/java-$v-openjdk-amd64/bin/java" ] &&
			rjava=$root/usr/lib/jvm/java-$v-openjdk-amd64/bin/java
	done
	[ -n "$rjava" ] || die "no JVM in $root: scripts/deps installs one"
	mount -t proc proc "$root/proc" && mount --bind /dev "$root/dev" &&
		mount --bind "$PROGS/java" "$root/mnt" || die "mounting into $root"
	trap 'umount "$root/mnt" "$root/dev" "$root/proc" 2>/dev/null' EXIT
	check_jdk 8 "${rjava#"$root"}" chroot "$root"
fi

say "taprootctl record --unwind verify -- java JavaSplit 3"
expect_ok "taprootctl record --unwind verify" "$CTL" record --freq 199 --unwind verify \
	--ustack 65536 --ring-pages 1024 --output "$TEST_TMP/verify" \
	--stats-json "$TEST_TMP/verify.json" -- java -cp "$PROGS/java" JavaSplit 3
python3 -S - "$TEST_TMP/verify.json" <<'PY'
import json, sys

st = json.load(open(sys.argv[1]))
v = st["verify"]
print(f"# verify: {v}; {st['java_frames_kernel']} Java frames walked in the module")
failed = []
compared = v["identical"] + v["differing"]
if compared < 200:
    failed.append(f"only {compared} samples compared")
if v["identical"] < 0.95 * compared:
    failed.append(f"{v['identical']} of {compared} identical: below 95%")
if st["java_frames_kernel"] < v["identical"]:
    failed.append(f"{st['java_frames_kernel']} Java frames for {v['identical']} identical walks")
for f in failed:
    print("FAIL:", f)
sys.exit(1 if failed else 0)
PY
