#!/bin/bash
# taprootd profiling a storm of short-lived processes that exec and exit
# while their samples wait to be unwound (issue #7, daemon faults): the
# exec-storm program forks children, two at a time, that run tapexec-a,
# which computes and execs tapexec-b in the same process, which computes
# and exits; every third child is killed at a moment that moves through
# its life. Both binaries load at the same address (no randomization), so
# a sample symbolized against the other program's maps would get that
# program's names. taprootd (-i 1, --start) must keep running and exit 0
# on SIGTERM; every profile it wrote decodes with the real pprof; no
# sample of tapexec-b (thread_comm, which the kernel set at the exec) has a
# frame of tapexec-a's mapping or functions and none of tapexec-a one of
# tapexec-b's: what could not be unwound or symbolized is a marker frame
# ("[unknown: ...]", "[no mapping]"), counted in the state file
# (proc_unknown, user_stale, elf_errors, unwind_*), never a wrong name.
# Quick mode: an 8 s storm; long mode (TAPROOT_LONG=1): 300 s. The storm
# is run again (up to three times) while no sample of it has been
# symbolized in exec_a_spin or exec_b_spin: a child lives 0.1 s, and on a
# busy host taprootd may read its samples only after it has exited
# (proc_unknown) for a whole storm, which would leave the check of wrong
# names with nothing to check.
# taprootd's and pprof's start-up take seconds each under TCG:
# vm-timeout: 420
# reliability: daemon-faults
. "${0%/*}/lib.sh"
. "${0%/*}/lib-sampling.sh"

require_module
require_prog exec-storm tapexec-a tapexec-b
require_pprof
require_taprootd

secs=$(quick_long 8 300)
[ "$LONG" != 1 ] || [ "${TAPROOT_TEST_TIMEOUT:-0}" -ge $((secs + 200)) ] ||
	die "long mode needs TAPROOT_TEST_TIMEOUT >= $((secs + 200))"
out=$TEST_TMP/profiles
state=$TEST_TMP/taprootd.json
mkdir -p "$out"
load_module
ctl "config set freq" config set freq 199

daemon_begin "$out" "$state"
daemon=$DAEMON_PID

children=0 killed=0
for round in 1 2 3; do
	say "exec-storm for $secs s: tapexec-a execs tapexec-b, one child in three killed"
	storm=
	spawn storm "storm$round" "$PROGS/exec-storm" "$secs" "$PROGS/tapexec-a" \
		"$PROGS/tapexec-b" 0.05
	wait_exit "exec-storm" "$storm" $((secs + 60))
	assert_eq "exec-storm's exit status" 0 "$RC"
	wait_line "exec-storm's count" "$TMPDIR/storm$round.out" '^exec-storm: children='
	storm_line=$LINE
	say "$storm_line"
	assert_eq "children that failed" 0 "$(kv "$storm_line" failed)"
	children=$((children + $(kv "$storm_line" children)))
	killed=$((killed + $(kv "$storm_line" killed)))
	[ -e "/proc/$daemon/stat" ] || die "taprootd died in the storm: $(cat "$TMPDIR/taprootd.err")"
	nap 1.5	# one more interval, written with the storm's last samples
	[ "$LONG" != 1 ] || break
	run "$PPROF" -raw -symbolize=none "$out"/cpu-*.pb.gz
	[ "$RC" -eq 0 ] || die "a profile does not decode: $ERR"
	! [[ $OUT == *" exec_a_spin "* || $OUT == *" exec_b_spin "* ]] || break
	say "no sample symbolized in exec_a_spin or exec_b_spin yet: another storm"
done
# The state file of the last interval: the counters, before the exit.
cp "$state" "$TEST_TMP/state.json"
kill -TERM "$daemon"
wait_exit "taprootd exits on SIGTERM" "$daemon" 60
assert_eq "taprootd's exit status after SIGTERM" 0 "$RC"
if grep -E 'corrupt|BUG|assert' "$TMPDIR/taprootd.err"; then
	die "taprootd complained of a corrupt ring"
fi

files=("$out"/cpu-*.pb.gz)
[ -e "${files[0]}" ] || die "taprootd wrote no profile: $(cat "$TMPDIR/taprootd.err")"
say "${#files[@]} profiles: pprof -raw (all at once)"
run "$PPROF" -raw -symbolize=none "${files[@]}"
[ "$RC" -eq 0 ] || die "a profile does not decode: $ERR"
printf '%s\n' "$OUT" >"$TEST_TMP/cpu.raw"

python3 -S - "$REPO/tests/vm" "$TEST_TMP/cpu.raw" "$TEST_TMP/state.json" \
	>"$TEST_TMP/check.out" <<'PY' || { cat "$TEST_TMP/check.out"; exit 1; }
import json, sys
sys.path.insert(0, sys.argv[1])
import pprofraw

prof = pprofraw.parse(open(sys.argv[2], errors="replace").read())
st = json.load(open(sys.argv[3]))
n = "samples/count"
fails = []

def of(comm):
    return [s for s in prof.samples if s.labels.get("thread_comm") == comm]

def count(samples):
    return sum(s.values[n] for s in samples)

def has(s, prog):
    other = "tapexec-b" if prog == "tapexec-a" else "tapexec-a"
    fn = "exec_a_" if prog == "tapexec-a" else "exec_b_"
    return any(m.endswith("/" + prog) or f.startswith(fn)
               for f, m in zip(s.frames, s.mappings))

a, b = of("tapexec-a"), of("tapexec-b")
# A sample inside execve, once the comm changed, still has the old
# program's user registers: its frames are rightly the old program's.
b = [s for s in b if "__x64_sys_execve" not in s.frames]
bad = [("tapexec-a", s) for s in a if has(s, "tapexec-b")] + \
      [("tapexec-b", s) for s in b if has(s, "tapexec-a")]
markers = [s for s in a + b
           if any(f.startswith("[unknown") or f in ("[no mapping]", "[no cfi]", "[bad frame]")
                  for f in s.frames)]
a_ok = count([s for s in a if "exec_a_spin" in s.frames])
b_ok = count([s for s in b if "exec_b_spin" in s.frames])
print(f"samples: tapexec-a {count(a)} ({a_ok} in exec_a_spin), tapexec-b {count(b)} "
      f"({b_ok} in exec_b_spin), {count(markers)} with a marker frame, "
      f"{count([s for _, s in bad])} with the other program's frames")
for comm, s in bad[:8]:
    print(f"  WRONG {comm} ({s.values[n]}): "
          + " <- ".join(f"{f} [{m.rsplit('/', 1)[-1]}]" for f, m in zip(s.frames, s.mappings)))
if bad:
    fails.append(f"{len(bad)} stacks symbolized against the other program")
# Under TCG most of a child's life can be exec and ld.so, and its samples
# wait behind others until it has exited (proc_unknown): some must be in
# the programs' own work, to show the storm was profiled at all.
if a_ok + b_ok == 0:
    fails.append("no sample in exec_a_spin or exec_b_spin: the storm was not profiled")
ends = {k: v for k, v in st.items() if k.startswith("unwind_") and k != "unwind_complete_permille"}
if sum(ends.values()) != st["user_stacks"]:
    fails.append(f"unwind ends {ends} do not add up to user_stacks {st['user_stacks']}")
keys = ["samples", "dropped", "proc_unknown", "user_stale", "elf_errors", "user_stacks",
        "frames", "frames_unsymbolized"]
print("counters: " + " ".join(f"{k}={st[k]}" for k in keys)
      + " " + " ".join(f"{k}={v}" for k, v in ends.items()))
print("score: " + " ".join(f"{k}={st[k]}" for k in ["proc_unknown", "user_stale", "elf_errors"])
      + f" no_mapping={st['unwind_no-mapping']} samples_a={count(a)} samples_b={count(b)}"
      + f" wrong={len(bad)}")
for f in fails:
    print(f"FAIL: {f}")
sys.exit(1 if fails else 0)
PY
sed 's/^/# /' "$TEST_TMP/check.out"
scores=$(sed -n 's/^score: //p' "$TEST_TMP/check.out")
# shellcheck disable=SC2086 # KEY=VALUE words
score cases=1 failures=0 seconds="$secs" children="$children" killed="$killed" \
	profiles=${#files[@]} $scores
