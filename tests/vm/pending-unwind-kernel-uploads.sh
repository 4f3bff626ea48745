#!/bin/bash
# taprootctl record -- tapwork (built -O2 -fomit-frame-pointer, with a
# shared library: tests/vm/progs/tapwork.c) uploads to the module's
# unwinder what it needs, and frees it all after:
#   - while recording, `taprootctl stats --json` shows the module holding
#     tables and the mappings of at least one process (unwind_tables,
#     unwind_procs, unwind_mem_used > 0);
#   - record's --stats-json counts the uploads (kernel_uploads:
#     tables_uploaded >= 2 for tapwork and libtapwork at least, or found
#     there already; maps_uploaded >= 1; errors 0) and most of tapwork's
#     samples were unwound in the module (kunwind complete > half);
#   - after record exits, the module's unwind memory is back to 0, no
#     table and no process left;
#   - `record --no-unwind` (config unwind off) uploads nothing.
# Pending (not picked by tests/vm/run, whose tests are test-*.sh) until the
# module's walker and the stats and config keys it reads have landed: then
# rename it test-unwind-kernel-uploads.sh.
# vm-timeout: 300
. "${0%/*}/lib.sh"

require_module
for p in tapwork libtapwork; do
	[ -e "$PROGS/$p" ] || die "no $PROGS/$p: run tests/vm/build-progs"
done

secs=${TAPROOT_TAPWORK_SECONDS:-8}
load_module

# A stats leaf of `taprootctl stats --json`: unwind_tables, unwind_procs, ...
module_stat() {
	expect_ok "stats --json" "$CTL" stats --json
	python3 -S -c 'import json, sys; print(json.loads(sys.argv[1]).get(sys.argv[2], -1))' \
		"$OUT" "$1"
}

say "taprootctl record -- tapwork $secs, stats read while it runs"
out=$TEST_TMP/rec
"$CTL" record --freq 199 --output "$out" --stats-json "$TEST_TMP/stats.json" \
	-- "$PROGS/tapwork" "$secs" >"$TEST_TMP/record.out" 2>&1 &
rec=$!
tables=0 procs=0 mem=0
for _ in $(seq 1 $((secs * 2))); do
	sleep 0.5
	tables=$(module_stat unwind_tables)
	procs=$(module_stat unwind_procs)
	mem=$(module_stat unwind_mem_used)
	[ "$tables" -gt 0 ] && [ "$procs" -gt 0 ] && [ "$mem" -gt 0 ] && break
done
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
if k["procs"]:
    sys.exit(f"FAIL: {k['procs']} processes still held after the record")
ku = st.get("kunwind")
if ku is not None:
    done = ku.get("complete", 0) + ku.get("max-frames", 0)
    total = sum(ku.values())
    print(f"module walks: {done} of {total} ended well")
    if total and done * 2 < total:
        sys.exit(f"FAIL: only {done} of {total} samples unwound in the module")
PY

say "after record: the module's unwind memory is freed"
assert_eq "unwind_tables after" "0" "$(module_stat unwind_tables)"
assert_eq "unwind_procs after" "0" "$(module_stat unwind_procs)"
assert_eq "unwind_mem_used after" "0" "$(module_stat unwind_mem_used)"

say "taprootctl record --unwind off: nothing uploaded"
expect_ok "record --unwind off" "$CTL" record --unwind off --freq 199 --output "$TEST_TMP/rec2" \
	--stats-json "$TEST_TMP/stats2.json" -- "$PROGS/tapwork" 2
python3 -S - "$TEST_TMP/stats2.json" <<'PY' || die "record --unwind off --stats-json"
import json, sys
k = json.load(open(sys.argv[1]))["kernel_uploads"]
if k["maps_uploaded"] or k["tables_uploaded"]:
    sys.exit(f"FAIL: uploads with unwinding off: {k}")
PY
echo "PASS"
