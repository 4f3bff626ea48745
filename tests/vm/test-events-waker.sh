#!/bin/bash
# WAKING records name who ended a blocked thread's sleep, joined to the
# sleep by (tid, seq). With 'config set events switch,waking sched-one-in 1':
#   - a thread sleeping in clock_nanosleep is woken by the timer interrupt:
#     its wakings are flagged hardirq or softirq, with waker pid, tid and
#     comm empty, and a kernel stack of the interrupt only (no user part);
#   - a thread reading a pipe is woken by the thread that writes it: the
#     waking names the writer (pid, tid, comm "evwriter") and carries its
#     stacks: pipe_write in the kernel frames (or, on PREEMPT_RT, the
#     release of a sleeping spinlock the reader waited for), user
#     registers in the process's code (none when that release is in the
#     writer's own exit: its user state is gone);
#   - each waking's target_seq is the seq of the target's switch-out that
#     started the sleep (same tid, earlier), in state S.
. "${0%/*}/lib.sh"
. "${0%/*}/lib-sampling.sh"
. "${0%/*}/lib-events.sh"
require_module
require_prog evblock

rounds=40
module_fresh
ev_spawn sl sleep sleep "$rounds"
ev_spawn pp pipe pipe "$rounds"

ctl "config set" config set events switch,waking sched-one-in 1 pids "$sl,$pp"
dump_begin wk
ctl start start
ev_go sleep
ev_go pipe
ev_done sleep
ev_done pipe
ctl stop stop
dump_end

ev_check "check the waking records" "$DUMP_OUT" "$TMPDIR"/{sleep,pipe}.{out,maps} <<'PY'
import sys
from evcheck import *
dump = sys.argv[1]
spid, sroles = target(sys.argv[2])
ppid, proles = target(sys.argv[4])
code = exec_ranges(sys.argv[5])
sleeper = sroles["evsleep"][0]
rd, wr = proles["evreader"][0], proles["evwriter"][0]

outs = {}
for r in records(dump, "switch"):
	if "prev" in r["flags"]:
		outs[(r["prev_tid"], r["prev_seq"])] = r
wk = records(dump, "waking")

def joined(r, fns):
	"""The waking ends a sleep in S whose switch-out has one of FNS in its
	stack."""
	o = outs.get((r["target_tid"], r["target_seq"]))
	return (o is not None and o["time_ns"] <= r["time_ns"] and o["state"] == "S" and
		any(f in knames(o["stack"]) for f in fns))

# 6.15 split the pipe's read and write into anon_ and fifo_ variants.
PIPE_READ = ("pipe_read", "anon_pipe_read")
PIPE_WRITE = ("pipe_write", "anon_pipe_write")

# The sleeper's wakings that end a nanosleep.
naps = [r for r in wk if r["target_tid"] == sleeper and joined(r, ("do_nanosleep",))]
irq = sum(bool({"hardirq", "softirq"} & set(r["flags"])) and "nmi" not in r["flags"] for r in naps)
anon = sum(r["waker_pid"] == 0 and r["waker_tid"] == 0 and r["waker_comm"] == "" for r in naps)
konly = sum("stacks" in r["flags"] and r["stack"]["user_regs"] is None and
	    "user_regs" not in r["stack"]["flags"] and len(r["stack"]["kstack"]) > 0 and
	    "try_to_wake_up" in knames(r["stack"]) for r in naps)
# Frames of the interrupted task would come after the interrupt's entry.
no_task = sum(not any(n.startswith(("__x64_sys", "do_syscall")) for n in knames(r["stack"]))
	      for r in naps)

# The reader's wakings that end a pipe read.
reads = [r for r in wk if r["target_tid"] == rd and joined(r, PIPE_READ)]
by_wr = sum(r["waker_tid"] == wr and r["waker_pid"] == ppid and r["waker_comm"] == "evwriter"
	    and not {"hardirq", "softirq", "nmi"} & set(r["flags"]) for r in reads)
def writer_stack(r, fns=PIPE_WRITE):
	return ("stacks" in r["flags"] and any(f in knames(r["stack"]) for f in fns) and
		"user_regs" in r["stack"]["flags"] and
		inside(int(r["stack"]["user_regs"]["ip"], 16), code))
# On PREEMPT_RT the two threads (one mm) also meet on sleeping spinlocks:
# the reader, between setting S in pipe_read and sleeping, may block on
# one the writer holds (in a page fault, say), and the writer's unlock
# wakes it: a true waking by the writer, through rt_spin_unlock.
rt_lock = ("rt_spin_unlock", "rt_mutex_slowunlock")
# Such an unlock can be the writer's last act, in its exit (do_exit ->
# release_task -> rt_spin_unlock): a waking by the writer still, but its
# user state is gone by then (exit_mm came before), so its stacks are the
# kernel's alone, and rightly carry no user registers.
def writer_exiting(r):
	k = knames(r["stack"]) if "stacks" in r["flags"] else []
	return (any(f in k for f in rt_lock) and "do_exit" in k and
		r["stack"]["user_regs"] is None and "user_regs" not in r["stack"]["flags"])
def writer_waking(r):
	return writer_stack(r, PIPE_WRITE + rt_lock) or writer_exiting(r)
wr_stack = sum(writer_waking(r) for r in reads)
wr_pipe = sum(writer_stack(r) for r in reads)
# The first one without them, for the log: what it has instead.
odd = next(({"flags": r["flags"], "kstack": knames(r["stack"])[:10] if "stacks" in r["flags"] else None,
	     "user_regs": r["stack"].get("user_regs") if "stacks" in r["flags"] else None}
	    for r in reads if not writer_waking(r)), "-")
tpid = sum(r["target_pid"] == (spid if r["target_tid"] == sleeper else ppid) for r in naps + reads)
example = next(("<".join(knames(r["stack"])[:8]) for r in naps), "-")
summary(naps=len(naps), irq=irq, anon=anon, konly=konly, no_task=no_task, reads=len(reads),
	by_wr=by_wr, wr_stack=wr_stack, wr_pipe=wr_pipe, tpid=tpid, example=example)
print(f"# a pipe waking without the writer's stacks: {odd}")
PY
say "$OUT"
r=$OUT
need=$((rounds * 3 / 4))
naps=$(kv "$r" naps) reads=$(kv "$r" reads)
assert_gt "wakings that end a nanosleep (S, do_nanosleep) of the sleeper, of $rounds" "$naps" "$need"
assert_eq "nanosleep wakings from an interrupt (hardirq or softirq)" "$naps" "$(kv "$r" irq)"
assert_eq "nanosleep wakings with waker pid 0, tid 0, comm empty" "$naps" "$(kv "$r" anon)"
assert_eq "nanosleep wakings with a kernel-only stack through try_to_wake_up (e.g. $(kv "$r" example))" \
	"$naps" "$(kv "$r" konly)"
assert_eq "nanosleep waking stacks that stop at the interrupt's entry" "$naps" "$(kv "$r" no_task)"
assert_gt "wakings that end a pipe read (S, pipe_read) of the reader, of $rounds" "$reads" "$need"
assert_eq "pipe wakings naming the writer thread" "$reads" "$(kv "$r" by_wr)"
assert_eq "pipe wakings with the writer's stacks (pipe_write, or an rt lock's release; user ip in the process, unless in the writer's exit)" \
	"$reads" "$(kv "$r" wr_stack)"
assert_gt "pipe wakings through pipe_write, of $rounds writes" "$(kv "$r" wr_pipe)" "$need"
assert_eq "wakings with the target's pid" $((naps + reads)) "$(kv "$r" tpid)"
