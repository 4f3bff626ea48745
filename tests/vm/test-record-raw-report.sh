#!/bin/bash
# taprootctl record --raw FILE keeps what the profiles were built from, and
# taprootctl report FILE rebuilds them (tests/vm/progs/tapwork.c for the CPU
# profile, tapblock.c with --events cpu,offcpu for the off-CPU ones):
#   - FILE is mode 0600 and record says where it is;
#   - report's cpu.pb.gz holds the same samples and the same stacks (pprof
#     -traces, labels included, the header with its times left out) as
#     record's; with --events cpu,offcpu the same for offcpu.pb.gz and
#     offwake.pb.gz;
#   - report --repeat 2 --stats-json gives two passes of as many samples,
#     with frames unwound and timings;
#   - a truncated FILE (a copy cut in half) is refused with "corrupt raw
#     capture" and nothing written.
# With scripts/vm --out DIR, the raw files (and record's cpu and offcpu
# profiles) are also left in DIR, for a native `taprootctl report` on the
# host.
# vm-scope: userspace
# vm-timeout: 300
. "${0%/*}/lib.sh"

require_module
require_pprof
for p in tapwork libtapwork tapblock; do
	[ -e "$PROGS/$p" ] || die "no $PROGS/$p: run tests/vm/build-progs"
done

secs=${TAPROOT_TAPWORK_SECONDS:-3}
load_module

# traces FILE.pb.gz INDEX: pprof -traces without the header (file, times).
traces() {
	expect_ok "pprof -traces $1" "$PPROF" -traces -symbolize=none -sample_index="$2" "$1"
	printf '%s\n' "$OUT" | sed -n '/^-----------+/,$p'
}

# same_traces NAME RECORDED REPLAYED INDEX: the two profiles hold the same stacks.
same_traces() {
	local a b
	a=$(traces "$2" "$4")
	b=$(traces "$3" "$4")
	[ -n "$a" ] || die "$1: no traces in $2"
	if [ "$a" != "$b" ]; then
		diff <(printf '%s\n' "$a") <(printf '%s\n' "$b") | head -40
		die "$1: report's traces differ from record's (diff above: < record, > report)"
	fi
	say "$1: the same $(printf '%s\n' "$a" | grep -c '^-----------+') traces"
}

say "taprootctl record --raw -- tapwork $secs"
raw=$TEST_TMP/tapwork.raw
expect_ok "taprootctl record --raw" "$CTL" record --freq 499 --ring-pages 2048 --ustack 16384 \
	--raw "$raw" --output "$TEST_TMP/rec" -- "$PROGS/tapwork" "$secs"
echo "$OUT"
assert_contains "record summary" "$OUT" "command:  exited with status 0"
assert_contains "record names the raw file" "$OUT" "raw:      $raw"
[ -s "$raw" ] || die "record: no $raw"
assert_eq "raw file mode" "600" "$(stat -c %a "$raw")"
ls "$TEST_TMP"/tapwork.raw.tmp.* >/dev/null 2>&1 && die "record left its temporary file"

say "taprootctl report"
expect_ok "taprootctl report" "$CTL" report "$raw" --output "$TEST_TMP/rep" --repeat 2 \
	--stats-json "$TEST_TMP/rep.json"
echo "$OUT"
assert_contains "report summary" "$OUT" "taprootctl report: wrote $TEST_TMP/rep/cpu.pb.gz"
assert_not_contains "report: files matched" "$OUT" "not the recorded one"
same_traces "cpu.pb.gz" "$TEST_TMP/rec/cpu.pb.gz" "$TEST_TMP/rep/cpu.pb.gz" samples
python3 -S - "$TEST_TMP/rep.json" <<'PY' || die "report --stats-json"
import json, sys
st = json.load(open(sys.argv[1]))
p = st["passes"]
if len(p) != 2:
    sys.exit(f"FAIL: {len(p)} passes, not 2")
if p[0]["samples"] != st["samples"] or p[1]["samples"] != p[0]["samples"] or p[0]["samples"] < 100:
    sys.exit(f"FAIL: samples {st['samples']}, passes {p[0]['samples']} and {p[1]['samples']}")
for k in ("user_frames", "kernel_frames", "cpu_ns", "pipeline_ns", "unwind_ns",
          "samples_per_s", "unwind_ns_per_frame", "pipeline_ns_per_frame"):
    if not p[0][k] or p[1][k] is None:
        sys.exit(f"FAIL: pass 1 {k} = {p[0][k]}")
if p[1]["user_frames"] != p[0]["user_frames"]:
    sys.exit(f"FAIL: user frames {p[0]['user_frames']} then {p[1]['user_frames']}")
print(f"# report: {st['samples']} samples, {p[0]['user_frames']} user frames; pass 1"
      f" {p[0]['unwind_ns_per_frame']} ns/frame unwinding, {p[0]['samples_per_s']} samples/s;"
      f" pass 2 {p[1]['unwind_ns_per_frame']} ns/frame, {p[1]['samples_per_s']} samples/s")
PY

say "a truncated raw file is refused"
cut=$TEST_TMP/cut.raw
head -c "$(($(stat -c %s "$raw") / 2))" "$raw" >"$cut"
expect_fail "report of a truncated file" "$CTL" report "$cut" --output "$TEST_TMP/cut"
assert_contains "truncated: the error" "$ERR" "corrupt raw capture"
[ -e "$TEST_TMP/cut/cpu.pb.gz" ] && die "report of a truncated file wrote a profile"

say "taprootctl record --events cpu,offcpu --raw -- tapblock $secs"
raw2=$TEST_TMP/tapblock.raw
expect_ok "taprootctl record --events cpu,offcpu --raw" "$CTL" record --events cpu,offcpu \
	--ring-pages 2048 --raw "$raw2" --output "$TEST_TMP/rec2" -- "$PROGS/tapblock" "$secs"
assert_contains "record summary (offcpu)" "$OUT" "command:  exited with status 0"
expect_ok "taprootctl report (offcpu)" "$CTL" report "$raw2" --output "$TEST_TMP/rep2"
echo "$OUT"
for k in offcpu offwake schedlat; do
	[ -s "$TEST_TMP/rep2/$k.pb.gz" ] || die "report: no $k.pb.gz"
done
same_traces "cpu.pb.gz (offcpu session)" "$TEST_TMP/rec2/cpu.pb.gz" "$TEST_TMP/rep2/cpu.pb.gz" samples
same_traces "offcpu.pb.gz" "$TEST_TMP/rec2/offcpu.pb.gz" "$TEST_TMP/rep2/offcpu.pb.gz" 0
same_traces "offwake.pb.gz" "$TEST_TMP/rec2/offwake.pb.gz" "$TEST_TMP/rep2/offwake.pb.gz" 0

if [ -n "${TAPROOT_VM_OUT:-}" ]; then
	cp "$raw" "$raw2" "$TAPROOT_VM_OUT/"
	cp "$TEST_TMP/rec/cpu.pb.gz" "$TAPROOT_VM_OUT/tapwork.cpu.pb.gz"
	cp "$TEST_TMP/rec2/offcpu.pb.gz" "$TAPROOT_VM_OUT/tapblock.offcpu.pb.gz"
	say "raw files and record's profiles left in $TAPROOT_VM_OUT"
fi
