#!/bin/bash
# The module's unwinder under the races of a real host, at 999 Hz: while
# taprootctl record profiles the whole system (uploading every process's
# tables and mappings), exec-storm execs and kills short-lived processes,
# libswap swaps libraries at one address, unwindzoo walks deep stacks and
# signal frames, and a CPU goes offline and online again and again; then
# the recorder is killed with -9 in the middle of it all.
#   - while it runs, the module walks stacks from the uploads (complete
#     walks and stale ones counted, memory held);
#   - after the kill, the store of the dead file is gone: no table, no
#     process, no byte held, and no vmalloc'd allocation of utab left;
#   - a new recorder (of unwindzoo alone) then gets interned stacks again
#     and resolves every reference (a new epoch: none of the dead one's
#     stacks is reused, though its rings start with the dead one's
#     unread records);
#   - the module unloads. No oops, WARNING or lockdep report (tests/vm/run
#     and scripts/vm check the kernel log).
# vm-timeout: 240
. "${0%/*}/lib.sh"
. "${0%/*}/lib-sampling.sh"
require_module
for p in unwindzoo libswap exec-storm tapexec-a tapexec-b; do
	require_prog "$p"
done

hot=
for c in $(cpus_online); do
	[ ! -w "/sys/devices/system/cpu/cpu$c/online" ] || hot=$c
done
[ -n "$hot" ] || die "no CPU can go offline: run with 2 vCPUs or more"
trap 'echo 1 >"/sys/devices/system/cpu/cpu$hot/online" 2>/dev/null; _cleanup_spawned' EXIT

# module_stats NAME...: a line of the values of NAME... from one
# 'taprootctl --json stats' (each a call under TCG and this load: seconds):
# a module-wide counter, or "walks:END", the walks that ended END on all
# CPUs.
module_stats() {
	ctl "stats" --json stats
	python3 -S -c 'import json, sys
s = json.loads(sys.argv[1])
print(*(sum(c["unwind"][n[6:]] for c in s["cpus"]) if n.startswith("walks:") else s[n]
        for n in sys.argv[2:]))' "$OUT" "$@"
}

load_module
# Longer than the test: killed at its end.
spawn zoo zoo "$PROGS/unwindzoo" 600
spawn swap swap "$PROGS/libswap" 600 50
spawn storm storm "$PROGS/exec-storm" 600 "$PROGS/tapexec-a" "$PROGS/tapexec-b" 0.05

say "record --all --freq 999, CPU $hot offline and online, then kill -9"
"$CTL" record --all --freq 999 --duration 60 --output "$TEST_TMP/dead" \
	>"$TEST_TMP/dead.out" 2>&1 &
rec=$!
_spawned+=("$rec")
complete0=0
for i in 1 2 3; do
	sleep 1.5
	echo 0 >"/sys/devices/system/cpu/cpu$hot/online" || die "cpu$hot would not go offline"
	sleep 1
	echo 1 >"/sys/devices/system/cpu/cpu$hot/online" || die "cpu$hot would not come back"
done
read -r complete stale mem <<<"$(module_stats walks:complete walks:stale unwind_mem_used)"
say "before the kill: $complete complete walks, $stale stale, $mem bytes uploaded"
assert_gt "the module walked stacks from the uploads" "$complete" 100
assert_gt "the module saw mappings change (libswap, exec-storm)" "$stale" 0
assert_gt "the recorder's uploads are held" "$mem" 0

kill -0 "$rec" 2>/dev/null || die "the recorder ended before the kill: $(cat "$TEST_TMP/dead.out")"
kill -9 "$rec"
wait "$rec" 2>/dev/null || true
# The file is released once the dead process's descriptors and mappings
# are gone: wait for the consumer slot to free (a new open would be EBUSY).
t0=${EPOCHREALTIME/./}
for _ in $(seq 50); do
	read -r mem tables procs <<<"$(module_stats unwind_mem_used unwind_tables unwind_procs)"
	[ "$mem" = 0 ] && break
	sleep 0.2
done
say "the store was freed $(((${EPOCHREALTIME/./} - t0) / 1000)) ms after the kill"
assert_eq "no byte held after the kill" 0 "$mem"
assert_eq "no table held after the kill" 0 "$tables"
assert_eq "no process held after the kill" 0 "$procs"
if grep -q tap_utab /proc/vmallocinfo; then
	die "vmalloc'd allocations of utab left: $(grep tap_utab /proc/vmallocinfo)"
fi

ctl "stop what the dead recorder left running" stop
# A quieter host for the new recorder, so that its uploads settle: the
# deep stacks of unwindzoo alone.
kill "$swap" "$storm"
expect_ok "record after the kill" "$CTL" record --pid "$zoo" --freq 999 --duration 3 \
	--output "$TEST_TMP/after" --stats-json "$TEST_TMP/after.json"
echo "$OUT"
python3 -S - "$TEST_TMP/after.json" <<'PY'
import json, sys
st = json.load(open(sys.argv[1]))
print(f"# after: stack refs {st['stack_refs']}, unresolved {st['stack_refs_unresolved']}, walks {st['kunwind']}")
if st["stack_refs_unresolved"]:
    sys.exit(f"FAIL: {st['stack_refs_unresolved']} stack references unresolved")
if st["stack_refs"] < 100:
    sys.exit(f"FAIL: only {st['stack_refs']} interned samples after the kill")
PY
[ $? -eq 0 ] || die "the recorder after the kill is not as expected"
assert_eq "the second recorder's uploads are gone too" 0 "$(module_stats unwind_mem_used)"
unload_module
