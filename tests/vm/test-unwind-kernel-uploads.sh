#!/bin/bash
# taprootctl record -- tapwork (built -O2 -fomit-frame-pointer, with a
# shared library: tests/vm/progs/tapwork.c) uploads to the module's
# unwinder what it needs, and frees it all after:
#   - while recording, `taprootctl stats` shows the module holding tables
#     and the mappings of at least one process (unwind_tables,
#     unwind_procs, unwind_mem_used > 0): tapwork runs until it does, and
#     until the module has walked 200 samples whole, most of its walks (or
#     for 90 s), then is stopped;
#   - record's --stats-json counts the uploads (kernel_uploads:
#     tables_uploaded + tables_existed >= 2, tapwork's and libtapwork's at
#     least; maps_uploaded >= 1; errors 0) and most of the module's walks
#     ended well (kunwind complete + max-frames > half of the walks), as
#     references to interned stacks (stack_refs > 0, none unresolved);
#   - the module's own counters agree (`stats --json` total: unwind
#     complete > 0, stacks > 0, stack_refs > 0);
#   - after record exits, the module's unwind memory is back to 0, no
#     table and no process left;
#   - `record --unwind user` (the module's unwind flag off) has the module
#     walk nothing: no walk ended, no stack ref, in its counters or
#     record's.
# What this checks is record's part: the module's (walks, interned
# stacks, the release of the uploads, the unwind flag) is checked on
# every kernel by unwind-agreement, unwind-races and unwind-private.
# vm-scope: userspace
# vm-timeout: 240
. "${0%/*}/lib.sh"
. "${0%/*}/lib-sampling.sh"

require_module
for p in tapwork libtapwork; do
	[ -e "$PROGS/$p" ] || die "no $PROGS/$p: run tests/vm/build-progs"
done

load_module

# A leaf of `taprootctl stats --json`: unwind_tables, total.stack_refs,
# total.unwind.complete, ... (-1 when absent).
module_stat() {
	expect_ok "stats --json" "$CTL" stats --json
	python3 -S -c '
import json, sys
v = json.loads(sys.argv[1])
for k in sys.argv[2].split("."):
    v = v.get(k, -1) if isinstance(v, dict) else -1
print(v)' "$OUT" "$1"
}

say "taprootctl record -- tapwork, stats read while it runs, until the uploads are held"
out=$TEST_TMP/rec
# Longer than any wait below: tapwork is stopped (SIGALRM, its own end)
# once the module holds what record uploaded.
"$CTL" record --freq 199 --output "$out" --stats-json "$TEST_TMP/stats.json" \
	-- "$PROGS/tapwork" 600 >"$TEST_TMP/record.out" 2>&1 &
rec=$!
_spawned+=("$rec")
deadline=$((${EPOCHREALTIME/./} + 90000000))
while :; do
	module_stats
	tables=${MSTAT[unwind_tables]} procs=${MSTAT[unwind_procs]} mem=${MSTAT[unwind_mem_used]}
	whole=$((MSTAT[walks:complete] + MSTAT[walks:max-frames]))
	walks=$((whole + MSTAT[walks:no-proc] + MSTAT[walks:stale] + MSTAT[walks:no-mapping] +
		MSTAT[walks:no-cfi] + MSTAT[walks:slow-rule] + MSTAT[walks:fault] + MSTAT[walks:bad-frame]))
	[ "$tables" -eq 0 ] || [ "$procs" -eq 0 ] || [ "$mem" -eq 0 ] || [ "$whole" -lt 200 ] ||
		[ $((whole * 2)) -le "$walks" ] || break
	kill -0 "$rec" 2>/dev/null || break
	[ "${EPOCHREALTIME/./}" -lt "$deadline" ] || break
	# The uploads are record's work, paced by its budget.
	nap 0.2
done
# tapwork ends its work on SIGALRM, as when its time is up.
# (The file has no newline at its end: read's status is 1 though it read.)
work=
read -r work _ <"/proc/$rec/task/$rec/children" 2>/dev/null || true
[ -z "$work" ] || kill -ALRM "$work"
wait "$rec" || { cat "$TEST_TMP/record.out"; die "record exited $?"; }
cat "$TEST_TMP/record.out"
say "while recording: $tables tables, $procs processes, $mem bytes in the module"
[ "$tables" -gt 0 ] || die "the module never held a table (unwind_tables $tables)"
[ "$procs" -gt 0 ] || die "the module never held a process's mappings (unwind_procs $procs)"
[ "$mem" -gt 0 ] || die "the module's unwind memory stayed 0 (unwind_mem_used $mem)"

python3 -S - "$TEST_TMP/stats.json" <<'PY' || die "record --stats-json"
import json, sys
st = json.load(open(sys.argv[1]))
k = st["kernel_uploads"]
print("kernel_uploads:", k)
new_or_found = k["tables_uploaded"] + k["tables_existed"]
if new_or_found < 2:
    sys.exit(f"FAIL: {new_or_found} tables uploaded or found, need tapwork's and libtapwork's")
if k["maps_uploaded"] < 1:
    sys.exit("FAIL: no mappings uploaded")
if k["errors"]:
    sys.exit(f"FAIL: {k['errors']} upload errors")
ku = st["kunwind"]
done = ku["complete"] + ku["max-frames"]
walks = sum(v for e, v in ku.items() if e != "none")
print(f"module walks: {done} of {walks} ended well: {ku}; stack_refs {st['stack_refs']}, "
      f"unresolved {st['stack_refs_unresolved']}; counted {st['counted_samples']}, "
      f"unresolved {st['counted_unresolved']}")
if not walks or done * 2 < walks:
    sys.exit(f"FAIL: only {done} of {walks} samples unwound in the module")
if not st["stack_refs"] + st["counted_samples"]:
    sys.exit("FAIL: no sample came as a reference to an interned stack or counted")
if st["stack_refs_unresolved"] or st["counted_unresolved"]:
    sys.exit(f"FAIL: {st['stack_refs_unresolved']} stack refs and "
             f"{st['counted_unresolved']} counted samples unresolved")
PY

say "the module's own counters: its walks, STACK records, samples referenced or counted"
complete=$(module_stat total.unwind.complete)
stacks=$(module_stat total.stacks)
refs=$(module_stat total.stack_refs)
counted=$(module_stat total.counted)
say "module: $complete walks complete, $stacks stacks, $refs stack refs, $counted counted"
[ "$complete" -gt 0 ] || die "stats --json: total.unwind.complete is $complete"
[ "$stacks" -gt 0 ] || die "stats --json: total.stacks is $stacks"
[ $((refs + counted)) -gt 0 ] || die "stats --json: total.stack_refs $refs, total.counted $counted"

say "after record: the module's unwind memory is freed"
assert_eq "unwind_tables after" "0" "$(module_stat unwind_tables)"
assert_eq "unwind_procs after" "0" "$(module_stat unwind_procs)"
assert_eq "unwind_mem_used after" "0" "$(module_stat unwind_mem_used)"

say "taprootctl record --unwind user: the module walks nothing"
none_before=$(module_stat total.unwind.none)
expect_ok "record --unwind user" "$CTL" record --unwind user --freq 199 \
	--output "$TEST_TMP/rec2" --stats-json "$TEST_TMP/stats2.json" -- "$PROGS/tapwork" 2
assert_eq "module walks complete, --unwind user" "$complete" "$(module_stat total.unwind.complete)"
assert_eq "module stack refs, --unwind user" "$refs" "$(module_stat total.stack_refs)"
none_after=$(module_stat total.unwind.none)
[ "$none_after" -gt "$none_before" ] ||
	die "--unwind user: no sample counted as not walked ($none_before, then $none_after)"
python3 -S - "$TEST_TMP/stats2.json" <<'PY' || die "record --unwind user --stats-json"
import json, sys
st = json.load(open(sys.argv[1]))
walked = sum(v for e, v in st["kunwind"].items() if e != "none")
if walked or st["stack_refs"]:
    sys.exit(f"FAIL: --unwind user: {walked} module walks, {st['stack_refs']} stack refs")
if not st["samples"]:
    sys.exit("FAIL: --unwind user: no samples")
PY
echo "PASS"
