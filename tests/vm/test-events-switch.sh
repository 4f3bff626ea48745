#!/bin/bash
# SWITCH records describe how threads leave and regain the CPU. With
# 'config set events switch sched-one-in 1' (every off-CPU interval):
#   - a thread sleeping in clock_nanosleep leaves in state S, its kernel
#     stack has schedule under do_nanosleep/hrtimer_nanosleep, its user
#     registers point into the process's code and its user stack copy holds
#     a return address into evblock itself;
#   - a vfork parent leaves in state D, waiting for its child;
#   - two threads pinned to one CPU preempt each other: flagged preempt
#     (R+), prev and next being the two threads;
#   - the identities are right (prev/next pid, tid, comm), and each
#     interval's switch-out and switch-in carry the same (tid, seq), seq
#     growing from one interval of a thread to its next.
. "${0%/*}/lib.sh"
. "${0%/*}/lib-sampling.sh"
. "${0%/*}/lib-events.sh"
require_module
require_prog evblock

rounds=40
module_fresh
ev_spawn sl sleep sleep "$rounds"
ev_spawn vf vfork vfork 20
ev_spawn sp spin spin 500

ctl "config set" config set events switch sched-one-in 1 pids "$sl,$vf,$sp"
dump_begin sw --ustack-bytes 8192
ctl start start
ev_go sleep
ev_go vfork
ev_go spin
ev_done sleep
ev_done vfork
ev_done spin
ctl stop stop
dump_end
# For a failure's message: what the dump says it read and lost.
_lib_slurp dump_summary "$TMPDIR/sw.err"

ev_check "check the switch records" "$DUMP_OUT" "$rounds" \
	"$TMPDIR"/{sleep,vfork,spin}.{out,maps} <<'PY'
import sys
from evcheck import *
dump, rounds = sys.argv[1], int(sys.argv[2])
files = sys.argv[3:]
targets = {}
for name, i in (("sleep", 0), ("vfork", 2), ("spin", 4)):
	pid, roles = target(files[i])
	targets[name] = (pid, roles, files[i + 1])
comm_of = {}
pid_of = {}
for name, (pid, roles, _) in targets.items():
	for role, tids in roles.items():
		for t in tids:
			comm_of[t], pid_of[t] = role, pid
sw = records(dump, "switch")

bad_ident = 0
for r in sw:
	if r["prev_tid"] in comm_of:
		bad_ident += r["prev_pid"] != pid_of[r["prev_tid"]] or r["prev_comm"] != comm_of[r["prev_tid"]]
	if r["next_tid"] in comm_of:
		bad_ident += r["next_pid"] != pid_of[r["next_tid"]]
	bad_ident += r["sched_one_in"] != 1

# The sleeper.
pid, roles, maps = targets["sleep"]
tid = roles["evsleep"][0]
code = exec_ranges(maps)
own = exec_ranges(maps, "/evblock")
# Those that went to sleep there (a thread may also be preempted there).
naps = [r for r in sw if r["prev_tid"] == tid and "prev" in r["flags"] and
	"preempt" not in r["flags"] and "do_nanosleep" in knames(r["stack"])]
nap_s = sum(r["state"] == "S" for r in naps)
nap_sched = sum(knames(r["stack"]).index("do_nanosleep") > knames(r["stack"]).index("schedule")
		if "schedule" in knames(r["stack"]) else False for r in naps)
nap_hr = sum("hrtimer_nanosleep" in knames(r["stack"]) for r in naps)
nap_regs = sum("user_regs" in r["stack"]["flags"] and
	       inside(int(r["stack"]["user_regs"]["ip"], 16), code) for r in naps)
nap_ret = sum(any(inside(w, own) for w in uwords(r["stack"])) for r in naps)
other = next((r["state"] + ":" + ",".join(r["flags"]) + ":" + "<".join(knames(r["stack"])[:5])
	      for r in sw if r["prev_tid"] == tid and "prev" in r["flags"] and r not in naps), "-")

# The vfork parent.
pid, roles, maps = targets["vfork"]
tid = roles["evvfork"][0]
vf = [r for r in sw if r["prev_tid"] == tid and "prev" in r["flags"]]
vf_d = sum(r["state"] == "D" and any("vfork" in n for n in knames(r["stack"])) for r in vf)
example_vf = next((r["state"] + ":" + "<".join(knames(r["stack"])[:6]) for r in vf), None)

# The spinners.
pid, roles, maps = targets["spin"]
spin = set(roles["evspin"])
pre = [r for r in sw if r["prev_tid"] in spin and "prev" in r["flags"] and "preempt" in r["flags"]]
pre_rplus = sum(r["state"] == "R+" for r in pre)
# A spinner preempted, and the next spinner switched in on that CPU is the
# other one (other tasks, ksoftirqd say, may run in between).
pre_pair = 0
by_time = sorted(sw, key=lambda r: r["time_ns"])
for i, r in enumerate(by_time):
	if r["prev_tid"] not in spin or "preempt" not in r["flags"]:
		continue
	nxt = next((x for x in by_time[i:] if x["cpu"] == r["cpu"] and "next" in x["flags"] and
		    x["next_tid"] in spin), None)
	pre_pair += nxt is not None and nxt["next_tid"] != r["prev_tid"]

# Intervals: the switch-out's (tid, seq) comes back in a switch-in.
outs, ins, seq_back = {}, {}, 0
last = {}
for r in sorted(sw, key=lambda r: r["time_ns"]):
	if "prev" in r["flags"] and r["prev_tid"] in comm_of:
		t = r["prev_tid"]
		outs[(t, r["prev_seq"])] = r["time_ns"]
		seq_back += t in last and r["prev_seq"] <= last[t]
		last[t] = r["prev_seq"]
	if "next" in r["flags"] and r["next_tid"] in comm_of:
		ins.setdefault((r["next_tid"], r["next_seq"]), []).append(r["time_ns"])
joined = sum(any(tm >= outs[k] for tm in ins.get(k, ())) for k in outs)
summary(bad_ident=bad_ident, naps=len(naps), nap_s=nap_s, nap_sched=nap_sched, nap_hr=nap_hr,
	nap_regs=nap_regs, nap_ret=nap_ret, vf=len(vf), vf_d=vf_d, pre=len(pre),
	pre_rplus=pre_rplus, pre_pair=pre_pair, outs=len(outs), joined=joined,
	seq_back=seq_back, example_vf=(example_vf or "-").replace(" ", "_"),
	sleep_other=other.replace(" ", "_"))
PY
say "$OUT"
r=$OUT
need=$((rounds * 3 / 4))
assert_eq "records whose pid, comm or sched_one_in is wrong" 0 "$(kv "$r" bad_ident)"
assert_gt "nanosleep switch-outs (of $rounds naps; other switch-outs of the sleeper: e.g. $(kv "$r" sleep_other); $dump_summary)" \
	"$(kv "$r" naps)" "$need"
naps=$(kv "$r" naps)
assert_eq "nanosleep switch-outs (not preempted) in state S" "$naps" "$(kv "$r" nap_s)"
assert_eq "nanosleep stacks with schedule under do_nanosleep" "$naps" "$(kv "$r" nap_sched)"
assert_eq "nanosleep stacks through hrtimer_nanosleep" "$naps" "$(kv "$r" nap_hr)"
assert_eq "nanosleep switch-outs whose user ip is in the process's code" "$naps" "$(kv "$r" nap_regs)"
assert_gt "nanosleep user stack copies holding a return address into evblock" \
	$((2 * $(kv "$r" nap_ret))) "$naps"
assert_gt "vfork parent switch-outs (of 20 vforks)" "$(kv "$r" vf)" 14
assert_gt "vfork parent switch-outs in D under a vfork wait (e.g. $(kv "$r" example_vf))" \
	"$(kv "$r" vf_d)" 14
assert_gt "spinners preempted" "$(kv "$r" pre)" 0
assert_eq "preempted switch-outs shown as R+" "$(kv "$r" pre)" "$(kv "$r" pre_rplus)"
assert_gt "spinner preemptions after which the other spinner is the next switched in" \
	"$(kv "$r" pre_pair)" 0
assert_eq "a thread's seq never goes back" 0 "$(kv "$r" seq_back)"
# A thread's last switch-out may be its exit's, which no switch-in follows.
assert_gt "switch-outs whose (tid, seq) a later switch-in carries (of $(kv "$r" outs))" \
	$((10 * $(kv "$r" joined))) $((9 * $(kv "$r" outs)))
