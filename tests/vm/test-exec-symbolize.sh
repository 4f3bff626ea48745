#!/bin/bash
# A process that execs a new binary is symbolized against the new binary
# from then on: tapexec-a computes in exec_a_spin until told (SIGUSR1), then
# execs tapexec-b in the same process, which computes in exec_b_spin (at
# addresses where tapexec-a has exec_a_padding: symbolized against the old
# binary, they would get that name). taprootctl record --pid follows the
# process, running before the recording started; in cpu.pb.gz, read with
# the real pprof (-raw), the binaries loaded at the same address:
#   - samples of the process before the exec (thread_comm tapexec-a) are in
#     exec_a_spin, of the mapping tapexec-a;
#   - samples after it (thread_comm tapexec-b) are in exec_b_spin, of the
#     mapping tapexec-b (at least half: the rest is ld.so starting it),
#     and none of their frames is in a mapping of tapexec-a (a stale one),
#     in one of its functions, or unmapped.
# record's start-up under TCG, then 3 s before and 4 s after the exec:
# vm-timeout: 240
. "${0%/*}/lib.sh"
. "${0%/*}/lib-sampling.sh"

require_module
require_prog tapexec-a tapexec-b
require_pprof
load_module

pid= rec=	# set by spawn
# Without address space randomization (setarch -R, kept across exec) both
# programs load at the same address, so that tapexec-b's pcs fall in
# tapexec-a's code; setarch execs tapexec-a in its own process.
spawn pid tapexec setarch -R "$PROGS/tapexec-a" 200 "$PROGS/tapexec-b" 4
out=$TEST_TMP/rec
say "taprootctl record --pid $pid --freq 199 while tapexec-a computes"
spawn rec record "$CTL" record --pid "$pid" --freq 199 --duration 200 --output "$out"
deadline=$((${EPOCHREALTIME/./} + 120000000))
while :; do
	expect_ok "taprootctl status" "$CTL" status
	[[ $OUT != *"running:        yes"* ]] || break
	[ -e "/proc/$rec/stat" ] || die "record exited before sampling: $(cat "$TMPDIR/record.err")"
	[ "${EPOCHREALTIME/./}" -lt "$deadline" ] || die "record did not start sampling in 120 s"
	# Waiting for record to start the module: nothing to block on.
	nap 0.2
done
# record consumes the first records, and reads the process's maps, after
# the start: give it time to do so and tapexec-a time to be sampled.
nap 3
say "SIGUSR1: tapexec-a execs tapexec-b, which computes for 4 s"
kill -USR1 "$pid"
wait_exit "tapexec-b finishes" "$pid" 60
assert_eq "tapexec-b's exit status" 0 "$RC"
assert_contains "tapexec-b ran in the same process" "$(cat "$TMPDIR/tapexec.out")" \
	"tapexec-b: pid $pid done"
kill -INT "$rec"
wait_exit "record writes the profile and exits on SIGINT" "$rec" 60
[ "$RC" -eq 0 ] || die "record exited $RC: $(cat "$TMPDIR/record.err" "$TMPDIR/record.out")"
cat "$TMPDIR/record.out"
[ -s "$out/cpu.pb.gz" ] || die "record: no $out/cpu.pb.gz"
expect_ok "pprof -raw" "$PPROF" -raw -symbolize=none "$out/cpu.pb.gz"
printf '%s\n' "$OUT" >"$TEST_TMP/cpu.raw"

python3 -S - "$REPO/tests/vm" "$TEST_TMP/cpu.raw" "$pid" <<'PY' || exit 1
import sys
sys.path.insert(0, sys.argv[1])
import pprofraw

prof = pprofraw.parse(open(sys.argv[2], errors="replace").read())
pid = sys.argv[3]
n = "samples/count"
mine = [s for s in prof.samples if s.labels.get("pid") == pid]
fails = []

def side(comm):
    return [s for s in mine if s.labels.get("thread_comm") == comm]

def in_fn(samples, fn, binary):
    return sum(s.values[n] for s in samples
               if any(f == fn and m.endswith("/" + binary)
                      for f, m in zip(s.frames, s.mappings)))

a, b = side("tapexec-a"), side("tapexec-b")
na, nb = sum(s.values[n] for s in a), sum(s.values[n] for s in b)
a_ok, b_ok = in_fn(a, "exec_a_spin", "tapexec-a"), in_fn(b, "exec_b_spin", "tapexec-b")
# A sample inside execve itself, once the comm has changed, still has the
# old program's user registers: its user frames are the old program's.
b = [s for s in b if "__x64_sys_execve" not in s.frames]
stale = [s for s in b if any(m.endswith("/tapexec-a") for m in s.mappings)
         or "exec_a_padding" in s.frames or "exec_a_spin" in s.frames]
lost = [s for s in b if any(f == "[no mapping]" or f.startswith("[unknown")
                            for f in s.frames)]
print(f"# pid {pid}: before the exec {na} samples ({a_ok} in exec_a_spin of tapexec-a),"
      f" after it {nb} ({b_ok} in exec_b_spin of tapexec-b),"
      f" {sum(s.values[n] for s in stale)} with a frame of the old binary,"
      f" {sum(s.values[n] for s in lost)} with an unmapped frame")
other = sorted((s for s in b if "exec_b_spin" not in s.frames),
               key=lambda s: -s.values[n])
for s in other[:8]:
    print(f"#   after the exec, not in exec_b_spin ({s.values[n]}): "
          + " <- ".join(f"{f} [{m.rsplit('/', 1)[-1]}]" for f, m in zip(s.frames, s.mappings)))
if na < 50:
    fails.append(f"too few samples before the exec: {na}")
if a_ok < 0.9 * na:
    fails.append(f"only {a_ok} of {na} samples before the exec are in exec_a_spin")
# After the exec, ld.so and libc start the new program first: slow under
# TCG on a busy host (up to 0.5 s seen), the rest is exec_b_spin.
if b_ok < 100 or b_ok < 0.5 * nb:
    fails.append(f"only {b_ok} of {nb} samples after the exec are in exec_b_spin of tapexec-b")
if stale:
    fails.append(f"{len(stale)} stacks after the exec have frames of tapexec-a")
if lost:
    fails.append(f"{len(lost)} stacks after the exec have unmapped frames")
others = sum(s.values[n] for s in mine) - na - nb
if others > 0.05 * (na + nb):
    fails.append(f"{others} samples of pid {pid} have a thread_comm of neither binary")
for f in fails:
    print(f"FAIL: {f}")
sys.exit(1 if fails else 0)
PY
