#!/bin/bash
# Two recordings of 6 and 12 s and their start-up under TCG:
# vm-timeout: 420
#
# taprootctl record --events cpu,offcpu profiles where threads block, and who
# woke them, against what the threads measured themselves
# (tests/vm/progs/tapblock.c: a sleeper in clock_nanosleep, a reader of a
# pipe, a writer that computes then writes to that pipe, a thread waiting
# on a vfork child; each sums its own blocked time with CLOCK_MONOTONIC).
# Read with the real pprof (-raw: every value exact):
#   - offcpu.pb.gz: the off-CPU time whose stack holds the sleeper's and the
#     reader's function is within 10% of what they measured; state S for
#     both where they wait (do_nanosleep, pipe_read), D for the vfork parent
#     where it waits for the child (the completion's wait under vfork: before
#     that wait, a preemptible kernel often lets the new child preempt its
#     parent in kernel_clone, which is R+, rightly; in the wait itself, R+
#     when the child's wakeup came before the switch), never S, its
#     vfork() unwound up to vfork_wait;
#   - offwake.pb.gz: more than half of the reader's blocked time has the
#     writer's function, then `--`, then the reader's function, with the
#     label waker=writer; the sleeper's wakeups (a timer) have waker
#     [hardirq] or [softirq], never a task;
#   - schedlat.pb.gz: run-queue delay over the woken threads' stacks;
# then again with --sched-one-in 4 (one interval in 4 recorded, scaled by
# 4): the same checks, the off-CPU totals within 10% plus four standard
# deviations of that sampling, computed from the lengths of the threads'
# own blocked calls. With a few hundred intervals whose lengths vary a lot
# under TCG on a busy host, that bound came to 50-80% of the measured time:
# it catches an estimate not scaled, or scaled twice, not a small bias. The
# count of the sleeper's intervals (switches/count: each of its calls blocks
# once) is checked against its calls too, which does not depend on the
# lengths: within 5% plus four standard deviations (about 40% here).
. "${0%/*}/lib.sh"

require_module
require_pprof
[ -x "$PROGS/tapblock" ] || die "no $PROGS/tapblock: run tests/vm/build-progs"
secs=${TAPROOT_TAPBLOCK_SECONDS:-6}
load_module
expect_ok "config before" "$CTL" config
before=$OUT

# record_tapblock NAME RECORD-OPTIONS... -- TAPBLOCK-ARGS...: records
# tapblock into $TEST_TMP/NAME/, keeps record's output (tapblock's lines
# with it) in NAME.txt and `pprof -raw` of each profile in NAME-KIND.raw.
record_tapblock() {
	local name=$1 dir=$TEST_TMP/$1 kind
	shift
	local -a ropts=()
	while [ "$1" != -- ]; do
		ropts+=("$1")
		shift
	done
	shift
	say "taprootctl record --events cpu,offcpu ${ropts[*]} -- tapblock $*"
	expect_ok "taprootctl record ($name)" "$CTL" record --events cpu,offcpu "${ropts[@]}" \
		--ring-pages 4096 --output "$dir" --stats-json "$TEST_TMP/$name-stats.json" \
		-- "$PROGS/tapblock" "$@"
	printf '%s\n' "$OUT" >"$TEST_TMP/$name.txt"
	echo "$OUT"
	assert_contains "record summary ($name)" "$OUT" "command:  exited with status 0"
	for kind in cpu offcpu offwake schedlat; do
		[ -s "$dir/$kind.pb.gz" ] || die "record ($name): no $kind.pb.gz in $dir: $(ls "$dir")"
		expect_ok "pprof -raw $kind.pb.gz ($name)" "$PPROF" -raw -symbolize=none "$dir/$kind.pb.gz"
		printf '%s\n' "$OUT" >"$TEST_TMP/$name-$kind.raw"
	done
}

record_tapblock all -- "$secs" --vfork
expect_ok "config after" "$CTL" config
assert_eq "configuration restored" "$before" "$OUT"
# Twice as long, for twice the intervals: the estimate's error shrinks with
# their square root. Shorter intervals would give more of them, but then
# the time a thread spends on CPU inside its blocking call (syscall paths
# and stack captures, slow under TCG), which it counts and the off-CPU
# profile does not, is no longer small beside them: 10-25% at 2 ms.
record_tapblock one-in-4 --sched-one-in 4 -- "$((secs * 2))"

python3 -S - "$REPO/tests/vm" "$TEST_TMP" <<'PY' || exit 1
import json, math, re, sys
sys.path.insert(0, sys.argv[1])
import pprofraw

tmp = sys.argv[2]
INTERRUPT = ("[hardirq]", "[softirq]")
THREADS = ("sleeper", "reader", "writer", "vforker", "tapblock")
# Kernel functions of a nanosleep, out of line on every kernel of the matrix.
NANOSLEEP = ("do_nanosleep", "hrtimer_nanosleep")
failed = []

def fail(msg):
    print(f"FAIL: {msg}")
    failed.append(msg)

def load(name, kind):
    return pprofraw.parse(open(f"{tmp}/{name}-{kind}.raw", errors="replace").read())

def value_type(prof, unit):
    for t in prof.types:
        if t.endswith("/" + unit):
            return t
    sys.exit(f"FAIL: no sample type in {unit} among {prof.types}")

def roles(name):
    """tapblock's own lines: role -> {fn, calls, blocked_ns, ...}."""
    r = {}
    for line in open(f"{tmp}/{name}.txt"):
        if line.startswith("tapblock: role="):
            kv = dict(w.split("=", 1) for w in line.split()[1:])
            r[kv["role"]] = kv
    if not {"sleeper", "reader", "writer"} <= set(r):
        sys.exit(f"FAIL: tapblock's report is missing from record's output ({name})")
    return r

def blocked(prof, fn, side=None):
    """Samples whose stack holds fn (with side, only on that side of --)."""
    out = []
    for s in prof.samples:
        fr = s.frames
        if side is not None:
            if "--" not in fr:
                continue
            i = fr.index("--")
            fr = fr[:i] if side == "waker" else fr[i + 1:]
        if fn in fr:
            out.append(s)
    return out

# The kernel function where each role waits: it calls schedule(). (6.15
# split the pipe's read into anon_pipe_read and fifo_pipe_read.)
WAIT_FN = {"sleeper": ("do_nanosleep",), "reader": ("pipe_read", "anon_pipe_read")}

def after_schedule(frames):
    """The callers of schedule in a stack (leaf first), one per call."""
    return [frames[i + 1] for i in range(len(frames) - 1) if frames[i] == "schedule"]

def check_count(name, off, wait, calls, one_in):
    """Every call of sleeper_nap blocks once: the count of its intervals
    (switches/count, scaled by N) estimates its calls. Each selected
    interval counts N, so the variance is (N - 1) * calls, whatever the
    intervals' lengths: a tighter check of the scaling than the times."""
    cnt = value_type(off, "count")
    got = sum(s.values[cnt] for s in wait if s.labels.get("state") == "S")
    bound = 0.05 * calls + 4 * math.sqrt((one_in - 1) * calls)
    print(f"# {name}: sleeper's blocked intervals in do_nanosleep: {got}, calls {calls}"
          f" (bound +-{bound:.0f})")
    if abs(got - calls) > bound:
        fail(f"{name}: {got} intervals of the sleeper in do_nanosleep, not within"
             f" {bound:.0f} of its {calls} calls")

VFORK_WAIT = ("__wait_for_common", "wait_for_completion_state", "wait_for_completion_killable",
              "wait_for_vfork_done")

def check_vfork(name, off, ns, want):
    """The vfork parent waits for its child in state D, found by its thread
    name and the kernel's vfork frame, and its wait for the child's
    completion (VFORK_WAIT: __wait_for_common, inlined on the rt kernels
    into wait_for_completion_state, 5.10's _killable). Before that wait, on a preemptible kernel (7.2's), the
    child often preempts its parent at wake_up_new_task: that time is R+,
    and how much of it there is depends on how busy the host is. glibc's
    __vfork keeps its return address in %rdi during the call (its CFI says
    so, with CFA == rsp): the unwinder must follow it up to vfork_wait."""
    mine = [s for s in off.samples if s.labels.get("thread_comm") == "vforker"
            and "__do_sys_vfork" in s.frames]
    got = sum(s.values[ns] for s in mine)
    wait = [s for s in mine if any(f in VFORK_WAIT for f in s.frames)]
    waited = sum(s.values[ns] for s in wait)
    d = sum(s.values[ns] for s in wait if s.labels.get("state") == "D")
    full = sum(s.values[ns] for s in mine if "vfork_wait" in s.frames)
    print(f"# {name}: vforker in vfork(): offcpu {got / 1e6:.1f} ms, of it waiting for the child"
          f" {waited / 1e6:.1f} ms, {d / 1e6:.1f} ms in state D; {full / 1e6:.1f} ms unwound to"
          f" vfork_wait; measured {want / 1e6:.1f} ms")
    if got < 0.5 * want:
        fail(f"{name}: the vfork parent's wait has {got / 1e6:.1f} ms off CPU,"
             f" less than half the {want / 1e6:.1f} ms it measured")
    if waited < 0.1 * got:
        fail(f"{name}: the vfork parent's wait for its child ({'/'.join(VFORK_WAIT)}) is"
             f" {waited / 1e6:.1f} ms of its {got / 1e6:.1f} ms in vfork(): not found")
    # A wakeup can come between the state's change and the switch: the
    # parent then leaves the CPU runnable, R+ (more often on a busy host).
    # Never S: the wait is uninterruptible.
    other = sum(s.values[ns] for s in wait if s.labels.get("state") not in ("D", "R", "R+"))
    if d < 0.5 * waited or other:
        fail(f"{name}: the vfork parent's wait for its child is not mostly state D:"
             f" {d / 1e6:.1f} of {waited / 1e6:.1f} ms, {other / 1e6:.1f} ms neither D nor R")
    if full < 0.9 * got:
        fail(f"{name}: the vfork parent's wait unwinds to vfork_wait for only"
             f" {full / 1e6:.1f} of {got / 1e6:.1f} ms (the return address in %rdi)")

def check_run(name, one_in):
    r = roles(name)
    off, wake, lat = load(name, "offcpu"), load(name, "offwake"), load(name, "schedlat")
    ns = value_type(off, "nanoseconds")
    stats = json.load(open(f"{tmp}/{name}-stats.json"))
    print(f"# {name}: record lost {stats.get('lost')} records; offcpu types {off.types},"
          f" offwake {wake.types}, schedlat {lat.types}")

    # offcpu: the blocked time of each role, and its states.
    for role in ("sleeper", "reader") + (("vforker",) if "vforker" in r else ()):
        fn = r[role]["fn"]
        want = int(r[role]["blocked_ns"])
        if role == "vforker":
            check_vfork(name, off, ns, want)
            continue
        mine = blocked(off, fn)
        got = sum(s.values[ns] for s in mine)
        n = int(r[role]["calls"])
        states = {}
        for s in mine:
            st = s.labels.get("state", "?")
            states[st] = states.get(st, 0) + s.values[ns]
        comms = {s.labels.get("thread_comm") for s in mine}
        # One interval in N, each counted N times: the estimate's variance
        # is (N - 1) * sum of the squared interval lengths.
        sd = math.sqrt((one_in - 1) * float(r[role]["blocked_sq_us2"])) * 1e3
        bound = 0.10 * want + 4 * sd
        print(f"# {name}: {role} in {fn}: offcpu {got / 1e6:.1f} ms, measured"
              f" {want / 1e6:.1f} ms in {n} calls (bound +-{bound / 1e6:.1f} ms);"
              f" states {({k: round(v / 1e6, 1) for k, v in states.items()})};"
              f" thread_comm {comms}")
        if abs(got - want) > bound:
            fail(f"{name}: {role}'s off-CPU time in {fn} is {got / 1e6:.1f} ms,"
                 f" not within {bound / 1e6:.1f} ms of the {want / 1e6:.1f} ms it measured")
        # The state of the wait itself (the kernel function that called
        # schedule: do_nanosleep, pipe_read) is S. Around it the thread may
        # also be preempted (R+) or, on PREEMPT_RT, wait for a sleeping
        # spinlock (shown as D): those are other waits, with other stacks.
        # A thread woken between its last check and its switch-out leaves
        # runnable (R+) from there too; blocked, it must be S, not D.
        wait = [s for s in mine if set(WAIT_FN[role]) & set(after_schedule(s.frames))]
        wait_ns = sum(s.values[ns] for s in wait)
        wait_blocked = sum(s.values[ns] for s in wait if s.labels.get("state") != "R+")
        wait_s = sum(s.values[ns] for s in wait if s.labels.get("state") == "S")
        where = "/".join(WAIT_FN[role])
        print(f"# {name}: {role} waits in {where}: {wait_ns / 1e6:.1f} ms,"
              f" blocked {wait_blocked / 1e6:.1f} ms, {wait_s / 1e6:.1f} ms of it in state S")
        if role == "sleeper":
            check_count(name, off, wait, int(r[role]["calls"]), one_in)
        if wait_ns < 0.5 * got:
            fail(f"{name}: {role}'s wait in {where} is {wait_ns / 1e6:.1f} ms,"
                 f" not most of its {got / 1e6:.1f} ms off CPU in {fn}")
        if wait_s < 0.99 * wait_blocked:
            fail(f"{name}: {role}'s wait in {where} is not in state S:"
                 f" {wait_s / 1e6:.1f} of {wait_blocked / 1e6:.1f} ms blocked")
        if comms != {role}:
            fail(f"{name}: {fn}'s samples have thread_comm {comms}, not {{'{role}'}}")

    # offwake: who woke the reader and the sleeper.
    wns = value_type(wake, "nanoseconds")
    rd = blocked(wake, r["reader"]["fn"], "blocked")
    total = sum(s.values[wns] for s in rd)
    by_writer = sum(s.values[wns] for s in rd
                    if r["writer"]["fn"] in s.frames[:s.frames.index("--")]
                    and s.labels.get("waker") == "writer")
    wakers = {}
    for s in rd:
        w = s.labels.get("waker", "?")
        wakers[w] = wakers.get(w, 0) + s.values[wns]
    print(f"# {name}: reader's waits in offwake {total / 1e6:.1f} ms, of which"
          f" {by_writer / 1e6:.1f} ms writer_send -- reader_wait with waker=writer;"
          f" wakers {({k: round(v / 1e6, 1) for k, v in wakers.items()})}")
    if total == 0 or by_writer <= 0.5 * total:
        fail(f"{name}: writer's function, --, reader's function cover"
             f" {by_writer / 1e6:.1f} ms of the reader's {total / 1e6:.1f} ms in offwake")
    # The sleeper's nanosleeps are woken by the timer interrupt. Rarely it
    # blocks elsewhere in sleeper_nap (a page fault waiting on the mm's lock
    # that the exiting vfork child holds, say): a task may rightly wake that,
    # so only waits inside the nanosleep are held to the interrupt.
    sl = blocked(wake, r["sleeper"]["fn"], "blocked")
    total = sum(s.values[wns] for s in sl)
    naps = [s for s in sl if any(f in NANOSLEEP for f in s.frames[s.frames.index("--") + 1:])]
    nap_total = sum(s.values[wns] for s in naps)
    wakers = {}
    for s in naps:
        w = s.labels.get("waker", "?")
        wakers[w] = wakers.get(w, 0) + s.values[wns]
    irq = sum(v for w, v in wakers.items() if w in INTERRUPT)
    print(f"# {name}: sleeper's waits in offwake {total / 1e6:.1f} ms, in nanosleep"
          f" {nap_total / 1e6:.1f} ms, wakers {({k: round(v / 1e6, 1) for k, v in wakers.items()})}")
    for s in sl:
        if s not in naps:
            print(f"#   elsewhere: {s.values[wns] / 1e6:.2f} ms waker={s.labels.get('waker')}"
                  f" blocked in {s.frames[s.frames.index('--') + 1:][:6]}")
    if total == 0 or nap_total < 0.9 * total:
        fail(f"{name}: the sleeper's nanosleeps are {nap_total / 1e6:.1f} ms of its"
             f" {total / 1e6:.1f} ms of waits")
    if nap_total == 0 or irq < 0.95 * nap_total:
        fail(f"{name}: the sleeper's wakeups are not attributed to the interrupt: {wakers}")
    if any(w in THREADS for w in wakers):
        fail(f"{name}: a task of tapblock is named as the sleeper's waker: {wakers}")
    # The interrupt's snapshot is its kernel stack only: no user frames of
    # whatever task it interrupted.
    for s in sl:
        i = s.frames.index("--")
        if s.labels.get("waker") in INTERRUPT and any(
                m.endswith("/tapblock") for m in s.mappings[:i]):
            fail(f"{name}: an interrupt waker carries a task's user frames: {s.frames}")
            break

    # schedlat: run-queue delay over the woken threads' stacks.
    lns = value_type(lat, "nanoseconds")
    for role in ("sleeper", "reader"):
        fn = r[role]["fn"]
        got = sum(s.values[lns] for s in blocked(lat, fn))
        print(f"# {name}: schedlat of {role} in {fn}: {got / 1e6:.2f} ms")
        if got <= 0:
            fail(f"{name}: schedlat has no run-queue delay over {fn}")
        if got >= int(r[role]["blocked_ns"]) * 1.1:
            fail(f"{name}: schedlat of {role} ({got / 1e6:.1f} ms) exceeds its blocked time")

check_run("all", 1)
check_run("one-in-4", 4)
sys.exit(1 if failed else 0)
PY
