#!/bin/bash
# taprootd --sched-budget bounds the off-CPU intervals recorded with
# stacks, whatever the context-switch rate, and the totals stay unbiased:
#   - under pingpong (two threads on one CPU passing a byte over pipes:
#     tens of thousands of intervals a second, for at most 25 s on a slow
#     host) taprootd raises the module's sched-one-in by powers of two
#     above its floor, and logs why;
#   - once pingpong is over and the switch rate falls, it lowers it again
#     (to an eighth of its highest or less: the background's switches,
#     many on PREEMPT_RT, may keep it above the floor of 1);
#   - the off-CPU time of pingpong's two threads, weighted by the one-in-N
#     of each interval, is not below 75% of what the threads measured
#     themselves (wall time less their CPU time), although most intervals
#     were not recorded and one-in-N changed under open intervals (an
#     interval weighed by the wrong end would be lost or under-weighed).
#     It is above it, by 1.5-3x under TCG: pingpong's intervals last about
#     15 us, and a selected one is lengthened by its own recording (the
#     stack captures' remaining cost on the CPU both threads share), which
#     the unrecorded ones are not. Since the switch and waking probes walk
#     the user stacks in the module (issue 19) it was 2.0x, 4.0x and 6.5x
#     in three runs on 6.1 (at one in 2048, an interval lengthened by a few
#     milliseconds weighs seconds): the bound above is 8x, a sanity check;
#     the one below is the test. Intervals of a millisecond and more are
#     within 10% (offcpu-profiles).
# vm-timeout: 300
. "${0%/*}/lib.sh"
. "${0%/*}/lib-sampling.sh"

require_module
require_prog pingpong
require_taprootd
require_pprof

out=$TEST_TMP/out
mkdir "$out"

load_module
spawn daemon taprootd "$TAPROOTD" -f -e cpu,offcpu --sched-budget 200 --start -i 3600 \
	-o "$out" --state "$TEST_TMP/state.json"
log=$TMPDIR/taprootd.err
wait_line "taprootd reads the rings" "$log" "reading the rings" 60

taskset -c 0 "$PROGS/pingpong" 400000 25 >"$TEST_TMP/pingpong.txt" &
pp=$!
# Raised within a few looks at the rate (100 ms apart), plus TCG's slowness.
max=1 deadline=$((SECONDS + 30))
while kill -0 "$pp" 2>/dev/null && [ $SECONDS -lt $deadline ]; do
	sched_one_in
	[ "$ONE_IN" -gt "$max" ] && max=$ONE_IN
	nap 0.5
done
wait "$pp" || die "pingpong failed: $(cat "$TEST_TMP/pingpong.txt")"
say "pingpong: $(cat "$TEST_TMP/pingpong.txt"); highest sched-one-in seen: $max"
[ "$max" -ge 8 ] || die "sched-one-in stayed at $max under pingpong (budget 200/s): $(cat "$log")"
assert_match "taprootd logs the change" "$(cat "$log")" "intervals/s: recording one in [0-9]+ \(budget 200/s\)"

deadline=$((SECONDS + 30))
sched_one_in
while [ "$ONE_IN" -gt $((max / 8)) ]; do
	[ $SECONDS -lt $deadline ] || die "sched-one-in still $ONE_IN 30 s after pingpong: $(cat "$log")"
	nap 0.5
	sched_one_in
done
say "down to one in $ONE_IN once pingpong ended"

kill -TERM "$daemon"
wait "$daemon" || die "taprootd exited with status $?: $(cat "$log")"
set -- "$out"/offcpu-*.pb.gz
[ -s "$1" ] || die "no offcpu profile in $out: $(ls "$out")"
expect_ok "pprof -raw offcpu" "$PPROF" -raw -symbolize=none "$1"
printf '%s\n' "$OUT" >"$TEST_TMP/offcpu.raw"

python3 -S - "$REPO/tests/vm" "$TEST_TMP" <<'PY' || exit 1
import re, sys
sys.path.insert(0, sys.argv[1])
import pprofraw

tmp = sys.argv[2]
m = re.search(r"offcpu=([0-9.]+)", open(f"{tmp}/pingpong.txt").read())
truth = float(m.group(1))
prof = pprofraw.parse(open(f"{tmp}/offcpu.raw", errors="replace").read())
t = next(t for t in prof.types if t.endswith("/nanoseconds"))
off = sum(s.values[t] for s in prof.samples if s.labels.get("comm") == "pingpong") / 1e9
print(f"pingpong's threads measured {truth:.3f} s off CPU; the profile says {off:.3f} s")
if not 0.75 * truth <= off <= 8 * truth:
    sys.exit(f"FAIL: off-CPU time {off:.3f} s is not within 0.75x..8x of the measured {truth:.3f} s")
PY
