#!/bin/bash
# The module's unwinder under the races of a real host, at 999 Hz: while
# taprootctl record profiles the whole system (uploading every process's
# tables and mappings), exec-storm execs and kills short-lived processes,
# libswap swaps libraries at one address, unwindzoo walks deep stacks and
# signal frames, and a CPU goes offline and online again and again; then
# the recorder is killed with -9 in the middle of it all.
#   - while it runs, the module walks stacks from the uploads (complete
#     walks and stale ones counted, memory held): the CPU goes offline and
#     online at least three times, and on until the module has walked as
#     many stacks as this test wants (a loaded host starts the recorder
#     and uploads at its own pace), within a deadline;
#   - after the kill, the store of the dead file is gone: no table, no
#     process, no byte held, and no vmalloc'd allocation of utab left;
#   - a new recorder (of unwindzoo alone) then gets interned stacks again
#     and resolves every reference (a new epoch: none of the dead one's
#     stacks is reused, though its rings start with the dead one's
#     unread records);
#   - the module unloads. No oops, WARNING or lockdep report (tests/vm/run
#     and scripts/vm check the kernel log).
# vm-timeout: 300
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

# The module's walks this test wants before the kill, and how long it
# waits for them.
want_complete=100
deadline_s=150

load_module
# Longer than the test: killed at its end.
spawn zoo zoo "$PROGS/unwindzoo" 600
spawn swap swap "$PROGS/libswap" 600 50
spawn storm storm "$PROGS/exec-storm" 600 "$PROGS/tapexec-a" "$PROGS/tapexec-b" 0.05

say "record --all --freq 999, CPU $hot offline and online, then kill -9"
# Longer than the test: killed below.
"$CTL" record --all --freq 999 --duration 600 --output "$TEST_TMP/dead" \
	>"$TEST_TMP/dead.out" 2>&1 &
rec=$!
_spawned+=("$rec")
cycles=0
t0=${EPOCHREALTIME/./}
while :; do
	# A CPU's life in the middle of sampling and uploads: what it is
	# offline and online for is the sampling of this second.
	nap 1
	echo 0 >"/sys/devices/system/cpu/cpu$hot/online" || die "cpu$hot would not go offline"
	nap 1
	echo 1 >"/sys/devices/system/cpu/cpu$hot/online" || die "cpu$hot would not come back"
	cycles=$((cycles + 1))
	module_stats
	complete=${MSTAT[walks:complete]} stale=${MSTAT[walks:stale]} mem=${MSTAT[unwind_mem_used]}
	[ "$cycles" -lt 3 ] || [ "$complete" -le "$want_complete" ] || [ "$stale" -eq 0 ] ||
		[ "$mem" -eq 0 ] || break
	[ $((${EPOCHREALTIME/./} - t0)) -lt $((deadline_s * 1000000)) ] || break
done
say "before the kill, after $cycles offline/online cycles in $(((${EPOCHREALTIME/./} - t0) / 1000000)) s:" \
	"$complete complete walks, $stale stale, $mem bytes uploaded"
assert_gt "the module walked stacks from the uploads" "$complete" "$want_complete"
assert_gt "the module saw mappings change (libswap, exec-storm)" "$stale" 0
assert_gt "the recorder's uploads are held" "$mem" 0

kill -0 "$rec" 2>/dev/null || die "the recorder ended before the kill: $(cat "$TEST_TMP/dead.out")"
kill -9 "$rec"
wait "$rec" 2>/dev/null || true
# The file is released once the dead process's descriptors and mappings
# are gone: wait for the consumer slot to free (a new open would be EBUSY).
t0=${EPOCHREALTIME/./}
while :; do
	module_stats
	mem=${MSTAT[unwind_mem_used]} tables=${MSTAT[unwind_tables]} procs=${MSTAT[unwind_procs]}
	[ "$mem" != 0 ] || break
	[ $((${EPOCHREALTIME/./} - t0)) -lt 30000000 ] || break
	# The release runs in the kernel after the last descendant closes.
	nap 0.2
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
print(f"# after: stack refs {st['stack_refs']}, unresolved {st['stack_refs_unresolved']}, "
      f"counted {st['counted_samples']}, unresolved {st['counted_unresolved']}, "
      f"walks {st['kunwind']}")
if st["stack_refs_unresolved"] or st["counted_unresolved"]:
    sys.exit(f"FAIL: {st['stack_refs_unresolved']} stack references and "
             f"{st['counted_unresolved']} counted samples unresolved")
# Interned: referenced one by one, or counted in the module (the default).
if st["stack_refs"] + st["counted_samples"] < 100:
    sys.exit(f"FAIL: only {st['stack_refs'] + st['counted_samples']} interned samples "
             f"after the kill")
PY
[ $? -eq 0 ] || die "the recorder after the kill is not as expected"
module_stats
assert_eq "the second recorder's uploads are gone too" 0 "${MSTAT[unwind_mem_used]}"
unload_module
