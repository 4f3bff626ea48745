#!/bin/bash
# 'config set sched-one-in N' selects one off-CPU interval in N, by (tid,
# seq): with N = 8, the SWITCH records that start an interval (flag prev)
# are about 1/8 of the switch-outs the module counted (TAPROOT_A_STAT_
# SWITCHES), within a generous binomial bound, and exactly the number it
# counted as selected; every record says sched_one_in 8; and the switch-out,
# the waking and the switch-in of a selected interval agree: a waking names
# a (tid, seq) whose switch-out was recorded, and a switch-out's (tid, seq)
# comes back in a switch-in. Intervals that were not selected leave no
# record at all: no waking or switch-in for a seq without a switch-out
# (among the intervals that began after the recording did).
. "${0%/*}/lib.sh"
. "${0%/*}/lib-sampling.sh"
. "${0%/*}/lib-events.sh"
require_module
require_prog evblock

n=8
module_fresh
ev_spawn sl sleep sleep 300
ev_spawn pp pipe pipe 300

# Rings of 4 MiB and user stacks of 1 KiB: no loss while a starved
# consumer (TCG on a loaded host) lags.
ctl "config set" config set events switch,waking sched-one-in "$n" pids "$sl,$pp" \
	ring-pages 1024 ustack 1024
stats_json "$TMPDIR/before.json"
dump_begin sel
ctl start start
ev_go sleep
ev_go pipe
ev_done sleep 120
ev_done pipe 120
ctl stop stop
stats_json "$TMPDIR/after.json"
dump_end

ev_check "check the selection" "$DUMP_OUT" "$n" "$TMPDIR"/{before,after}.json \
	"$TMPDIR"/{sleep,pipe}.out <<'PY'
import json, math, sys
from evcheck import *
dump, n = sys.argv[1], int(sys.argv[2])
def total(path, key):
	return json.load(open(path))["total"][key]
switches = total(sys.argv[4], "switches") - total(sys.argv[3], "switches")
selected = total(sys.argv[4], "switches_selected") - total(sys.argv[3], "switches_selected")
lost = "%d+%d" % (total(sys.argv[4], "lost_full"), total(sys.argv[4], "lost_nested"))
tids = set()
for path in sys.argv[5:]:
	for ts in target(path)[1].values():
		tids.update(ts)
sw = records(dump, "switch")
prev = [r for r in sw if "prev" in r["flags"]]
outs = {(r["prev_tid"], r["prev_seq"]): r["time_ns"] for r in prev}
ins = {(r["next_tid"], r["next_seq"]): r["time_ns"] for r in sw if "next" in r["flags"]}
wk = records(dump, "waking")
one_in = sum(r["sched_one_in"] != n for r in sw)
# Threads of the targets only: their main threads leave the CPU too, but
# they wait in pthread_join while the work runs.
mine = [k for k in outs if k[0] in tids]
back = sum(k in ins and ins[k] >= outs[k] for k in mine)
# Intervals that began after the recording did: a switch-out of the same
# thread with a smaller seq was recorded (the go barrier's began before).
first = {}
for t, s in outs:
	first[t] = min(first.get(t, s), s)
def later(t, s):
	return t in tids and t in first and s > first[t]
wk_mine = [r for r in wk if later(r["target_tid"], r["target_seq"])]
wk_joined = sum((r["target_tid"], r["target_seq"]) in outs for r in wk_mine)
in_mine = [k for k in ins if later(*k)]
in_joined = sum(k in outs for k in in_mine)
expect = switches / n
sd = math.sqrt(switches * (1 / n) * (1 - 1 / n))
summary(switches=switches, selected=selected, lost=lost, prev=len(prev),
	lo=max(0, int(expect - 5 * sd - 2)), hi=int(expect + 5 * sd + 2) + 1, one_in=one_in,
	mine=len(mine), back=back, wk=len(wk_mine), wk_joined=wk_joined, ins=len(in_mine),
	in_joined=in_joined)
PY
say "$OUT"
r=$OUT
prev=$(kv "$r" prev)
assert_eq "records lost, full+nested (the test needs them all)" 0+0 "$(kv "$r" lost)"
assert_gt "switch-outs counted (of 300 naps and 300 pipe reads)" "$(kv "$r" switches)" 600
assert_eq "switch records with flag prev = switches_selected" "$(kv "$r" selected)" "$prev"
assert_le "switch records with flag prev, at least $(kv "$r" lo) (1/$n of $(kv "$r" switches), 5 sd)" \
	"$(kv "$r" lo)" "$prev"
assert_le "switch records with flag prev, at most $(kv "$r" hi)" "$prev" "$(kv "$r" hi)"
assert_eq "records whose sched_one_in is not $n" 0 "$(kv "$r" one_in)"
assert_gt "selected intervals of the target threads" "$(kv "$r" mine)" 0
# A thread's last interval may end after the dump, when it exits.
assert_gt "selected switch-outs whose (tid, seq) a later switch-in carries (of $(kv "$r" mine))" \
	$((10 * $(kv "$r" back))) $((9 * $(kv "$r" mine)))
assert_gt "wakings of the target threads" "$(kv "$r" wk)" 0
assert_eq "wakings of a selected interval whose switch-out is recorded" "$(kv "$r" wk)" "$(kv "$r" wk_joined)"
assert_eq "switch-ins of a selected interval whose switch-out is recorded" "$(kv "$r" ins)" "$(kv "$r" in_joined)"
