#!/bin/bash
# One recording of critchain (about 1.2 s of its own, 10-40 s under TCG):
# vm-timeout: 300
#
# taprootctl record --events cpu,offcpu --trace FILE --critical-path command
# on tests/vm/progs/critchain.c, whose chain is known: main waits for the
# worker, which computes (worker_compute), then waits for a mutex that the
# holder keeps while it computes (holder_compute); a sleeper naps on timers
# beside them. critchain measures each step with CLOCK_MONOTONIC.
#   - critpath.pb.gz, read with the real pprof: the time on holder_compute
#     is within 10% of the worker's wait for the mutex, the time on
#     worker_compute within 10% of its compute, with label thread=holder and
#     thread=worker; sleeper_nap gets nothing (nor the sleeper, but for a
#     kernel lock's handoff at its start on PREEMPT_RT); the total is
#     the main thread's span, as the stats say;
#   - the trace passes tests/vm/tracecheck.py (every event of the format,
#     slices that never overlap, flows with both ends in slices, times in
#     order per thread), names the four threads, has a flow from the holder
#     to the worker and from the worker to main, and the worker's blocked
#     slices add up to its measured wait within 10%; under make check the
#     host then opens it in speedscope (tests/trace-viewer).
. "${0%/*}/lib.sh"

require_module
require_pprof
[ -x "$PROGS/critchain" ] || die "no $PROGS/critchain: run tests/vm/build-progs"
load_module

dir=$TEST_TMP/out
say "taprootctl record --events cpu,offcpu --trace --critical-path command -- critchain 800 300"
expect_ok "taprootctl record" "$CTL" record --events cpu,offcpu --freq 499 --ring-pages 4096 \
	--trace "$TEST_TMP/trace.json" --critical-path command --output "$dir" \
	--stats-json "$TEST_TMP/stats.json" -- "$PROGS/critchain" 800 300
printf '%s\n' "$OUT" >"$TEST_TMP/record.txt"
echo "$OUT"
assert_contains "record summary" "$OUT" "command:  exited with status 0"
assert_contains "record summary names the critical path" "$OUT" "critical: $dir/critpath.pb.gz"
[ "$(stat -c %a "$TEST_TMP/trace.json")" = 600 ] || die "the trace is not mode 0600"
expect_ok "pprof -raw critpath.pb.gz" "$PPROF" -raw -symbolize=none "$dir/critpath.pb.gz"
printf '%s\n' "$OUT" >"$TEST_TMP/critpath.raw"
expect_ok "tracecheck.py" python3 "$REPO/tests/vm/tracecheck.py" "$TEST_TMP/trace.json" --summary
printf '%s\n' "$OUT" >"$TEST_TMP/trace-summary.json"
# make check opens it in a real viewer on the host (tests/trace-viewer).
[ -z "${TAPROOT_VM_OUT:-}" ] || cp "$TEST_TMP/trace.json" "$TAPROOT_VM_OUT/critical-path-trace.json"

python3 -S - "$REPO/tests/vm" "$TEST_TMP" <<'PY' || exit 1
import json, re, sys
sys.path.insert(0, sys.argv[1])
import pprofraw

tmp = sys.argv[2]
failed = []

def check(ok, msg):
    print(("ok: " if ok else "FAIL: ") + msg)
    if not ok:
        failed.append(msg)

def near(got, want, tol=0.10):
    return abs(got - want) <= tol * want

m = re.search(r"critchain: (.*)", open(f"{tmp}/record.txt").read())
if not m:
    sys.exit("FAIL: critchain's line is missing from record's output")
meas = {k: int(v) for k, v in (w.split("=") for w in m.group(1).split())}
print(f"critchain measured: {meas}")

prof = pprofraw.parse(open(f"{tmp}/critpath.raw", errors="replace").read())
check(prof.types == ["critical/nanoseconds"], f"sample types {prof.types}")
vt = prof.types[0]

def on(fn=None, thread=None):
    return sum(s.values[vt] for s in prof.samples
               if (fn is None or fn in s.frames) and
               (thread is None or s.labels.get("thread") == thread))

total = on()
stats = json.load(open(f"{tmp}/stats.json"))["critical_path"]
print(f"critical path: total {total} ns, stats {stats}")
for fn in ("holder_compute", "worker_compute", "mutex_wait", "[run queue]", "[unknown]"):
    print(f"  {fn}: {on(fn)} ns")
check(total == stats["total_ns"], "the profile's total is the walk's span")
check(near(on("holder_compute"), meas["mutex_wait_ns"]),
      f"holder_compute {on('holder_compute')} ns on the path, the worker waited "
      f"{meas['mutex_wait_ns']} ns for the mutex (10%)")
check(near(on("holder_compute", "holder"), on("holder_compute")),
      "holder_compute is the holder's (label thread)")
check(near(on("worker_compute"), meas["worker_compute_ns"]),
      f"worker_compute {on('worker_compute')} ns on the path, it computed "
      f"{meas['worker_compute_ns']} ns (10%)")
check(near(on("worker_compute", "worker"), on("worker_compute")),
      "worker_compute is the worker's (label thread)")
# Its naps never; on PREEMPT_RT its start-up may hand a kernel lock (an
# rtmutex: mm, signal) to a thread on the path, microseconds at most.
check(on("sleeper_nap") == 0 and on(thread="sleeper") <= 1000000,
      f"the sleeper is never on the path ({on(thread='sleeper')} ns, sleeper_nap "
      f"{on('sleeper_nap')} ns)")
check(stats["threads"] >= 3, f"{stats['threads']} threads on the path")
check(total >= meas["main_wait_ns"], "the path spans at least main's wait for the worker")

doc = json.load(open(f"{tmp}/trace.json"))
summ = json.load(open(f"{tmp}/trace-summary.json"))
names = {v.split()[0]: k for k, v in summ["threads"].items()}
check({"critchain", "worker", "holder", "sleeper"} <= set(names),
      f"thread names {sorted(names)}")
ev = doc["traceEvents"]
tid_of = {n: int(k.split("/")[1]) for n, k in names.items()}
flows = {}
for e in ev:
    if e["ph"] in "sf":
        flows.setdefault(e["id"], {})[e["ph"]] = e["tid"]
pairs = {(f["s"], f["f"]) for f in flows.values()}
check((tid_of.get("holder"), tid_of.get("worker")) in pairs, "a flow from the holder to the worker")
check((tid_of.get("worker"), tid_of.get("critchain")) in pairs, "a flow from the worker to main")
wk = summ["slice_ns"].get(names.get("worker", "?"), {})
blocked = wk.get("blocked S", 0) + wk.get("blocked D", 0) + wk.get("runnable", 0)
check(blocked >= meas["mutex_wait_ns"] * 0.9,
      f"the worker's off-CPU slices ({blocked} ns) hold its wait for the mutex")
samples = sum(1 for e in ev if e["ph"] == "i" and e["tid"] == tid_of.get("worker") and
              "worker_compute" in e["args"].get("stack", []))
check(samples > 0, f"{samples} samples of the worker in worker_compute, with their stacks")
sys.exit(1 if failed else 0)
PY
