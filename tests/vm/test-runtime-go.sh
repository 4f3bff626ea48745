#!/bin/bash
# Go binaries as they ship: taprootctl record of tests/vm/progs/gosplit.go
# built stripped (-ldflags=-s -w: no symbols, no DWARF, no CFI) as an
# executable and as a PIE, and not stripped, by the host's Go (bookworm's
# 1.19), and stripped by bullseye's (1.15, executable) and sid's (1.27,
# PIE), whose two chains, main -> outerA -> hotA and main -> outerB ->
# hotB, end in leaves that set up no frame. Read with the real pprof:
#   - the functions are named from the binary's own table (.gopclntab);
#   - nearly every sample in a leaf has the whole chain up to
#     runtime.main and runtime.goexit, the goroutine's first frame: the
#     leaf's caller comes from the stack-pointer deltas of Go's table, not
#     from a frame pointer the leaf never set;
#   - the share of hotA against hotB is within 5 points of the share of
#     time the program measured for each chain itself;
# with the module walking the stacks (the default), and for the
# executable also with taprootctl unwinding them (--unwind user; a copy
# named gouser, so that one run of pprof reads the three profiles and
# tells them apart by comm).
# Six recordings of 3 s and their start-up under TCG:
# vm-timeout: 400
. "${0%/*}/lib.sh"

require_module
require_pprof
for p in gosplit gosplit-stripped gosplit-pie-stripped gosplit-bullseye-stripped \
	gosplit-sid-pie-stripped; do
	[ -x "$PROGS/$p" ] || die "no $PROGS/$p: run tests/vm/build-progs (it needs go)"
done
secs=${TAPROOT_GOSPLIT_SECONDS:-3}
load_module
cp "$PROGS/gosplit-stripped" "$TEST_TMP/gouser"

# record_go NAME BINARY RECORD-OPTIONS...: records BINARY into
# $TEST_TMP/NAME/ and keeps the program's own line in NAME.out.
record_go() {
	local name=$1 bin=$2
	shift 2
	say "taprootctl record $* -- ${bin##*/} $secs"
	expect_ok "taprootctl record ($name)" "$CTL" record --freq 499 "$@" \
		--output "$TEST_TMP/$name" -- "$bin" "$secs"
	assert_contains "record summary ($name)" "$OUT" "command:  exited with status 0"
	grep -o 'gosplit: a=[0-9]* b=[0-9]*' <<<"$OUT" >"$TEST_TMP/$name.out" ||
		die "record ($name): the program's line is not in record's output: $OUT"
}

record_go exe "$PROGS/gosplit-stripped"
# The same with symbols and DWARF, under another name for pprof to tell.
cp "$PROGS/gosplit" "$TEST_TMP/gosyms"
record_go syms "$TEST_TMP/gosyms"
record_go pie "$PROGS/gosplit-pie-stripped"
record_go user "$TEST_TMP/gouser" --unwind user
record_go go1.15 "$PROGS/gosplit-bullseye-stripped"
record_go go1.27 "$PROGS/gosplit-sid-pie-stripped"
expect_ok "pprof -raw" "$PPROF" -raw -symbolize=none \
	"$TEST_TMP"/{exe,syms,pie,user,go1.15,go1.27}/cpu.pb.gz
printf '%s\n' "$OUT" >"$TEST_TMP/all.raw"

python3 -S - "$REPO/tests/vm" "$TEST_TMP" exe:gosplit-stripped syms:gosyms \
	pie:gosplit-pie-stripped user:gouser go1.15:gosplit-bullseye-stripped go1.27:gosplit-sid-pie-stripped <<'PY'
import re, sys

sys.path.insert(0, sys.argv[1])
import pprofraw

tmp = sys.argv[2]
# name: the program's comm, cut as the kernel cuts it (TASK_COMM_LEN 16)
runs = {n: prog[:15] for n, prog in (a.split(":") for a in sys.argv[3:])}
prof = pprofraw.parse(open(f"{tmp}/all.raw", errors="replace").read())
kind = [t for t in prof.types if t.startswith("samples/")][0]
CHAIN = {leaf: [f"main.{leaf}", f"main.outer{leaf[-1]}", "main.main", "runtime.main",
                "runtime.goexit"] for leaf in ("hotA", "hotB")}
failed = False
for name, comm in runs.items():
    a, b = map(int, re.match(r"gosplit: a=(\d+) b=(\d+)",
                             open(f"{tmp}/{name}.out").read()).groups())
    mine = [s for s in prof.samples if s.labels.get("comm", "") == comm]
    total = sum(s.values[kind] for s in mine)
    leaf = {"hotA": 0, "hotB": 0}
    whole = {"hotA": 0, "hotB": 0}
    bad = []
    for s in mine:
        n = s.values[kind]
        for lf, chain in CHAIN.items():
            if s.frames and s.frames[0] == f"main.{lf}":
                leaf[lf] += n
                if s.frames == chain:
                    whole[lf] += n
                elif len(bad) < 5:
                    bad.append(" <- ".join(s.frames))
    in_leaves = leaf["hotA"] + leaf["hotB"]
    ours = 100.0 * leaf["hotA"] / in_leaves if in_leaves else 0.0
    theirs = 100.0 * a / (a + b)
    complete = 100.0 * (whole["hotA"] + whole["hotB"]) / in_leaves if in_leaves else 0.0
    print(f"# {name}: {total} samples of gosplit, {in_leaves} in the leaves, "
          f"{complete:.1f}% of those with the whole chain to runtime.goexit; "
          f"hotA {ours:.1f}% of the leaves' samples, the program measured {theirs:.1f}%")
    for f in bad:
        print(f"#   not the whole chain: {f}")
    if in_leaves < 300 or in_leaves < 0.5 * total:
        print(f"FAIL: {name}: {in_leaves} samples in main.hotA or main.hotB, of {total}")
        failed = True
    elif complete < 99.0:
        print(f"FAIL: {name}: {complete:.1f}% of the leaves' samples have the whole chain, need 99%")
        failed = True
    if abs(ours - theirs) > 5.0:
        print(f"FAIL: {name}: hotA's share {ours:.1f}% is {abs(ours - theirs):.1f} points "
              f"from the program's own {theirs:.1f}% (> 5)")
        failed = True
sys.exit(1 if failed else 0)
PY
