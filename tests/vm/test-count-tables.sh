#!/bin/bash
# Counted stacks (<linux/taproot.h>, "Counted stacks"), with the real
# module, taprootctl and taprootd:
#   - taprootctl record (which counts by default, draining every second) of
#     a command whose children run for under a second each, so that most
#     of them exit between two drains, while CPU 1 goes offline and online
#     again: every sample the module counted reaches the profile (the
#     module's COUNTED grows by exactly the summary's counted samples,
#     none unresolved), every sample the module took is in the profile
#     (its samples counter against the summary's, no record lost), and
#     the children's stacks are named (work_leaf);
#   - taprootd, draining once an interval (5 s), at 999 Hz, of pathzoo's
#     2048 call paths, two intervals after the module first found a table
#     full: more stacks than a CPU's table holds, so the module
#     writes the samples it has no room for as SAMPLE_REFs (COUNT_FULL
#     grows, and STACK_REFS by as much: no other sample is referenced one
#     by one), and taprootd resolves all of them: none unresolved, and
#     the profile holds more distinct stacks than a table's 1024 entries.
# vm-timeout: 300
. "${0%/*}/lib.sh"
. "${0%/*}/lib-sampling.sh"

require_module
require_pprof
require_taprootd
require_prog fixedwork pathzoo
load_module
[ -w /sys/devices/system/cpu/cpu1/online ] || die "no CPU 1 to take offline"

# module_counters FILE: the module's totals of samples, counted,
# count_full and stack_refs, a line "S C F R".
module_counters() {
	expect_ok "stats --json" "$CTL" stats --json
	python3 -S -c '
import json, sys
t = json.loads(sys.argv[1])["total"]
print(t["samples"], t["counted"], t["count_full"], t["stack_refs"])' "$OUT" >"$1"
}

# module_delta: what the counters of module_counters grew by from
# $TEST_TMP/before to $TEST_TMP/after, into $TEST_TMP/delta.
module_delta() {
	local s0 c0 f0 r0 s1 c1 f1 r1
	read -r s0 c0 f0 r0 <"$TEST_TMP/before"
	read -r s1 c1 f1 r1 <"$TEST_TMP/after"
	echo "$((s1 - s0)) $((c1 - c0)) $((f1 - f0)) $((r1 - r0))" >"$TEST_TMP/delta"
}

say "[$SECONDS s] record: children exiting between drains, CPU 1 offline and online"
module_counters "$TEST_TMP/before"
"$CTL" record --freq 499 --output "$TEST_TMP/rec" --stats-json "$TEST_TMP/rec.json" -- \
	sh -c "for i in 1 2 3 4 5 6 7 8; do '$PROGS/fixedwork' --threads 1 --units 12000; done &
	       '$PROGS/fixedwork' --threads 1 --units 60000; wait" >"$TEST_TMP/rec.out" 2>&1 &
rec=$!
# Polled: the offline must fall while the command runs.
nap 2
echo 0 >/sys/devices/system/cpu/cpu1/online || die "cannot take CPU 1 offline"
nap 1.5
echo 1 >/sys/devices/system/cpu/cpu1/online || die "cannot bring CPU 1 online"
RC=0
wait "$rec" || RC=$?
assert_eq "record's exit status ($(<"$TEST_TMP/rec.out"))" 0 "$RC"
module_counters "$TEST_TMP/after"
module_delta
expect_ok "pprof -raw" "$PPROF" -raw -symbolize=none "$TEST_TMP/rec/cpu.pb.gz"
printf '%s\n' "$OUT" >"$TEST_TMP/rec.raw"
python3 -S - "$REPO/tests/vm" "$TEST_TMP" <<'PY' || die "record's counts"
import json, sys
sys.path.insert(0, sys.argv[1])
import pprofraw
tmp = sys.argv[2]
ds, dc, df, dr = map(int, open(f"{tmp}/delta").read().split())
st = json.load(open(f"{tmp}/rec.json"))
prof = pprofraw.parse(open(f"{tmp}/rec.raw", errors="replace").read())
kind = [t for t in prof.types if t.startswith("samples/")][0]
total = sum(s.values[kind] for s in prof.samples)
named = sum(s.values[kind] for s in prof.samples if "work_leaf" in s.frames)
pids = {s.labels.get("pid") for s in prof.samples if "work_leaf" in s.frames}
print(f"# module: {ds} samples, {dc} counted, {df} without room, "
      f"{dr} stack refs; record: {st['samples']} samples, {st['counted_samples']} "
      f"counted in {st['counts']} counts, {st['counted_unresolved']} unresolved, lost "
      f"{st['lost']}; profile: {total} samples, {named} in work_leaf of {len(pids)} processes")
bad = []
if dc < 300:
    bad.append(f"only {dc} samples counted")
if st["counted_samples"] != dc:
    bad.append(f"the module counted {dc} samples, the drains gave {st['counted_samples']}")
if st["counted_unresolved"] or st["stack_refs_unresolved"] or st["counts_corrupt"]:
    bad.append("unresolved or refused counts")
if st["lost"] == 0 and st["samples"] != ds:
    bad.append(f"the module took {ds} samples, the profile has {st['samples']}")
if total != st["samples"]:
    bad.append(f"pprof reads {total} samples, record wrote {st['samples']}")
if named < 0.8 * total or len(pids) < 8:
    bad.append(f"{named} of {total} in work_leaf, of {len(pids)} fixedwork processes (want 9)")
for b in bad:
    print(f"FAIL: {b}")
sys.exit(1 if bad else 0)
PY

say "[$SECONDS s] taprootd, a 5 s interval: 2048 paths overflow a CPU's table"
expect_ok "config set freq 999" "$CTL" config set freq 999
module_counters "$TEST_TMP/before"
mkdir "$TEST_TMP/d"
"$TAPROOTD" -f -i 5 -o "$TEST_TMP/d" --start --state "$TEST_TMP/state.json" \
	2>"$TEST_TMP/taprootd.log" &
daemon=$!
"$PROGS/pathzoo" 120 >/dev/null &
zoo=$!
# Until the module finds a table full (taprootd's start, its first uploads
# and pathzoo's take seconds under TCG), then two intervals more.
for ((i = 0; i < 200; i++)); do
	module_counters "$TEST_TMP/now"
	read -r _ _ full _ <"$TEST_TMP/now"
	read -r _ _ full0 _ <"$TEST_TMP/before"
	[ "$full" -eq "$full0" ] || break
	kill -0 "$daemon" 2>/dev/null || die "taprootd exited: $(<"$TEST_TMP/taprootd.log")"
	# polled: the module's counter can only be read
	nap 0.5
done
say "[$SECONDS s] a table full after $((i / 2)) s; two intervals more"
nap 10
kill "$zoo"
wait "$zoo" 2>/dev/null || true	# ended by the kill
# The state file goes at a clean exit: its last interval's, kept.
cp "$TEST_TMP/state.json" "$TEST_TMP/state-kept.json" ||
	die "taprootd wrote no state file: $(<"$TEST_TMP/taprootd.log")"
kill -TERM "$daemon"
wait "$daemon" || die "taprootd exited $? after SIGTERM: $(<"$TEST_TMP/taprootd.log")"
module_counters "$TEST_TMP/after"
module_delta
expect_ok "config set freq 99" "$CTL" config set freq 99
set -- "$TEST_TMP"/d/cpu-*.pb.gz
[ -e "$1" ] || die "taprootd wrote no profile: $(<"$TEST_TMP/taprootd.log")"
expect_ok "pprof -raw" "$PPROF" -raw -symbolize=none "$@"
printf '%s\n' "$OUT" >"$TEST_TMP/d.raw"
python3 -S - "$REPO/tests/vm" "$TEST_TMP" <<'PY' || die "taprootd's counts"
import json, sys
sys.path.insert(0, sys.argv[1])
import pprofraw
tmp = sys.argv[2]
ds, dc, df, dr = map(int, open(f"{tmp}/delta").read().split())
st = json.load(open(f"{tmp}/state-kept.json"))
prof = pprofraw.parse(open(f"{tmp}/d.raw", errors="replace").read())
kind = [t for t in prof.types if t.startswith("samples/")][0]
zoo = [s for s in prof.samples if "leaf" in s.frames and "step" in s.frames]
paths = {tuple(s.frames) for s in zoo}
print(f"# module: {ds} samples, {dc} counted, {df} without room, "
      f"{dr} stack refs; taprootd: {st['counted']} counted, {st['stack_refs']} refs, "
      f"unresolved {st['counted_unresolved']} and {st['stack_refs_unresolved']}; "
      f"{sum(s.values[kind] for s in zoo)} samples of pathzoo in {len(paths)} stacks")
bad = []
if df == 0:
    bad.append("no sample found its table full: nothing tested")
if dr != df:
    bad.append(f"{df} samples without room, {dr} SAMPLE_REFs written")
if st["counted_unresolved"] or st["stack_refs_unresolved"]:
    bad.append("unresolved samples")
if not st["stack_refs"] or not st["counted"]:
    bad.append("taprootd saw no reference or no count")
if len(paths) <= 1024:
    bad.append(f"only {len(paths)} distinct stacks of pathzoo")
for b in bad:
    print(f"FAIL: {b}")
sys.exit(1 if bad else 0)
PY
