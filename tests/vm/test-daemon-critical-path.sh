#!/bin/bash
# taprootd --trace on --critical-path critchain, on the known chain of
# tests/vm/progs/critchain.c (as test-record-critical-path.sh):
#   - it records every off-CPU interval: the module's sched-one-in is 1
#     though --sched-one-in 4 is given, and the log says why;
#   - once critchain has run and taprootd is stopped (SIGTERM writes the
#     interval), DIR holds trace-STAMP.json and critpath-STAMP.pb.gz with
#     the stamp of the interval's cpu profile, mode 0600;
#   - the trace passes tests/vm/tracecheck.py and names critchain's threads;
#   - the critical path, read with the real pprof, has holder_compute and
#     worker_compute within 10% of the wait and the compute critchain
#     measured, labelled comm=critchain (other processes may be on the
#     path: the kernel thread that ended an I/O wait), and none of the
#     sleeper's naps;
#   - without offcpu, --trace is refused at start.
# vm-scope: userspace
# vm-timeout: 240
. "${0%/*}/lib.sh"
. "${0%/*}/lib-sampling.sh"

require_module
require_taprootd
require_pprof
require_prog critchain
load_module
expect_ok "config set freq" "$CTL" config set freq 499

expect_fail "taprootd --trace on without offcpu" "$TAPROOTD" -f -o "$TEST_TMP" --trace on
assert_contains "refusal" "$ERR" "trace and critical-path need events offcpu"

dir=$TEST_TMP/out
mkdir -p "$dir"
log=$TEST_TMP/taprootd.log
"$TAPROOTD" -f --start -o "$dir" -i 600 -e cpu,offcpu --sched-one-in 4 --trace on \
	--critical-path critchain >"$log" 2>&1 &
daemon=$!
trap 'kill $daemon 2>/dev/null; wait 2>/dev/null' EXIT
# Until taprootd has started the session (and warmed its pipeline up).
deadline=$((SECONDS + 60))
until grep -q 'off-CPU: switch and waking records on' "$log" &&
	"$CTL" stats 2>/dev/null | grep -q '^running: *yes'; do
	[ $SECONDS -lt $deadline ] || die "taprootd did not start sampling in 60 s: $(<"$log")"
	kill -0 "$daemon" 2>/dev/null || die "taprootd exited: $(<"$log")"
	nap 0.5
done
assert_contains "taprootd says why every interval" "$(<"$log")" \
	"one interval in 1 (trace, critical-path: every interval, no sched-budget)"
expect_ok "taprootctl config" "$CTL" config
assert_match "the module records every interval" "$OUT" "^sched-one-in: +1$"

say "critchain 800 300, profiled by taprootd"
"$PROGS/critchain" 800 300 >"$TEST_TMP/critchain.txt" ||
	die "critchain failed: $(<"$TEST_TMP/critchain.txt")"
cat "$TEST_TMP/critchain.txt"
kill -TERM "$daemon"
wait "$daemon" || die "taprootd exited $? on SIGTERM: $(<"$log")"
trap - EXIT
ls -l "$dir"

shopt -s nullglob
traces=("$dir"/trace-*.json) crits=("$dir"/critpath-*.pb.gz) cpus=("$dir"/cpu-*.pb.gz)
[ ${#traces[@]} -eq 1 ] && [ ${#crits[@]} -eq 1 ] && [ ${#cpus[@]} -eq 1 ] ||
	die "want one trace, critpath and cpu file: $(ls "$dir"); log: $(<"$log")"
stamp=${cpus[0]#"$dir"/cpu-}
stamp=${stamp%.pb.gz}
assert_eq "the trace's stamp" "$dir/trace-$stamp.json" "${traces[0]}"
assert_eq "the critical path's stamp" "$dir/critpath-$stamp.pb.gz" "${crits[0]}"
for f in "${traces[0]}" "${crits[0]}"; do
	assert_eq "mode of $f" 600 "$(stat -c %a "$f")"
done
expect_ok "tracecheck.py" python3 "$REPO/tests/vm/tracecheck.py" "${traces[0]}" --summary
printf '%s\n' "$OUT" >"$TEST_TMP/trace-summary.json"
expect_ok "pprof -raw critpath" "$PPROF" -raw -symbolize=none "${crits[0]}"
printf '%s\n' "$OUT" >"$TEST_TMP/critpath.raw"

python3 -S - "$REPO/tests/vm" "$TEST_TMP" <<'PY' || exit 1
import json, sys
sys.path.insert(0, sys.argv[1])
from critcheck import Checks, CriticalPath, measured, near

tmp = sys.argv[2]
check = Checks()
meas = measured(open(f"{tmp}/critchain.txt").read())
path = CriticalPath(open(f"{tmp}/critpath.raw", errors="replace").read())
vt = path.vt
check(vt == "critical/nanoseconds", f"sample type {vt}")
on = path.on

for fn, want in (("holder_compute", meas["mutex_wait_ns"]),
                 ("worker_compute", meas["worker_compute_ns"])):
    check(near(on(fn), want), f"{fn}: {on(fn)} ns on the path, {want} measured")
check(on("sleeper_nap") == 0, "no nap of the sleeper on the path")
by_comm = {}
for s in path.samples:
    by_comm[s.labels.get("comm")] = by_comm.get(s.labels.get("comm"), 0) + s.values[vt]
print(f"on the path, by comm: {by_comm}")
# Other processes may be on it (a kworker that finished main's I/O at its
# exec), the computing threads only as critchain's.
check(all(s.labels.get("comm") == "critchain" and {"thread", "tid", "pid"} <= set(s.labels)
          for s in path.samples if "holder_compute" in s.frames or "worker_compute" in s.frames),
      "the computing is critchain's, labelled with its thread, tid and pid")
names = {v.split()[0] for v in json.load(open(f"{tmp}/trace-summary.json"))["threads"].values()}
check({"critchain", "worker", "holder", "sleeper"} <= names, f"the trace's threads {sorted(names)}")
check.exit()
PY
