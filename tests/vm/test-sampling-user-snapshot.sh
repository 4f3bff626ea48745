#!/bin/bash
# A sample of a thread spinning in user space snapshots its user state
# exactly: user_regs.sp is the thread's own %rsp, user_regs.ip lies in its
# spin loop, and the user stack bytes, copied from sp up, hold the pattern
# the thread wrote into its local buffer at offset (buffer - sp). The copy
# is as long as the configured ustack size, or stops at the end of the
# readable stack (ustack_fault) when that comes first: with the default
# 8192 bytes it stops at the top of the thread's stack, with
# 'config set ustack 1024' it is exactly 1024 bytes.
#
# On the stack the process started on, the copy stops at its top:
# TAPROOT_USTACK_TOP_SLACK bytes above mm->start_stack, where argv and the
# environment begin (ustack_top, no ustack_fault), so that no byte of the
# environment reaches the ring. Checked for samples of a main thread that
# spins, and for the snapshots of its switch-out records when a second
# spinner on its CPU preempts it; a secret in its environment, within the
# default copy's reach above sp, is in none of them.
#
# The target (progs/ustack-pattern) prints the runtime addresses of its
# buffer, its %rsp, its spin loop and its stack top (with --main, its
# start_stack and where the secret lies), so the expectations come from
# the process itself, not from the binary.
. "${0%/*}/lib.sh"
. "${0%/*}/lib-sampling.sh"
require_module
require_prog ustack-pattern

freq=97
default_ustack=$(uapi_define TAPROOT_USTACK_DEFAULT)

module_fresh
spawn target target "$PROGS/ustack-pattern"
wait_line "target ready" "$TMPDIR/target.out" '^ready pid='
ready=$LINE
assert_eq "target PID" "$target" "$(kv "$ready" pid)"
tid=$(kv "$ready" tid)
sp=$(kv "$ready" sp)
buf=$(kv "$ready" buf)
top=$(kv "$ready" stack_top)
say "target thread $tid: sp $sp, buffer $buf ($(kv "$ready" buf_len) bytes), stack top $top, spin loop $(kv "$ready" spin_begin)..$(kv "$ready" spin_end)"
assert_le "the buffer lies at or above sp" $((sp)) $((buf))
assert_le "the buffer lies within 512 bytes of sp" $((buf - sp)) 512
# So that both ends of the copy are exercised: cut by the end of the stack,
# and cut by the configured size.
assert_gt "precondition: the default ustack is larger than the stack above sp" \
	"$default_ustack" $((top - sp))
assert_gt "precondition: the stack above sp is larger than 1024 bytes" $((top - sp)) 1024

# sample_phase NAME USTACK: samples of the target with 'config set ustack
# USTACK', dumped with every copied byte in hex.
sample_phase() {
	ctl "config set pids $target freq $freq ustack $2" \
		config set pids "$target" freq "$freq" ustack "$2"
	dump_begin "$1" --pid "$target" --ustack-bytes "$(uapi_define TAPROOT_USTACK_MAX)"
	ctl "start ($1)" start
	# Let the target be sampled for a while: half a second, plus the time
	# taprootctl takes to start and to stop (as long again under TCG).
	nap 0.5
	ctl "stop ($1)" stop
	dump_end
}

say "ustack $default_ustack (the default: more than the thread's stack holds above sp)"
sample_phase default "$default_ustack"
say "ustack 1024"
sample_phase small 1024
kill -KILL "$target"

# The main thread, pinned with a spinner to one CPU for the switch phase.
slack=$(uapi_define TAPROOT_USTACK_TOP_SLACK)
secret=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
# Its environment is the secret alone, so that the secret lies just above
# the stack's top, whatever the environment this test runs in (a large one
# would push it beyond the default copy's reach and the check would prove
# nothing). Without address randomisation (setarch -R), because the ELF
# loader otherwise moves the stack's top down by up to 8 KiB below the
# strings (arch_align_stack), which would as well.
spawn target main-target taskset -c 0 setarch -R \
	env -i TAPROOT_USTACK_SECRET="$secret" "$PROGS/ustack-pattern" --main
wait_line "main target ready" "$TMPDIR/main-target.out" '^ready pid='
main_ready=$LINE
assert_eq "main target PID" "$target" "$(kv "$main_ready" pid)"
assert_eq "the main target spins on its main thread" "$target" "$(kv "$main_ready" tid)"
msp=$(kv "$main_ready" sp)
mstart=$(kv "$main_ready" start_stack)
msecret=$(kv "$main_ready" secret_at)
say "main thread $target: sp $msp, start_stack $mstart, secret at $msecret"
assert_gt "start_stack read from /proc" $((mstart)) 0
assert_le "the main thread's sp lies below start_stack" $((msp)) $((mstart))
# So that a copy that ignored the stack's top would take the secret.
assert_gt "precondition: the secret lies above the stack's top" $((msecret)) $((mstart + slack))
assert_gt "precondition: the default copy from sp would reach the secret" \
	"$default_ustack" $((msecret + ${#secret} - msp))
say "ustack $default_ustack on the main thread"
sample_phase main "$default_ustack"

say "switch records of the main thread, preempted by a spinner on its CPU"
spawn rival rival taskset -c 0 "$PROGS/spinner"
ctl "config set events (main-switch)" config set pids "$target" freq "$freq" \
	ustack "$default_ustack" events sample,switch sched-one-in 1
dump_begin main-switch --pid "$target" --ustack-bytes "$(uapi_define TAPROOT_USTACK_MAX)"
ctl "start (main-switch)" start
# Long enough for several scheduler slices of the two spinners, plus
# taprootctl's own start and stop.
nap 1
ctl "stop (main-switch)" stop
dump_end
kill -KILL "$rival"

expect_ok "check the samples" python3 -S - "$slack" "$secret" \
	"$ready" "$TMPDIR/default.out" "$default_ustack" sample \
	"$ready" "$TMPDIR/small.out" 1024 sample \
	"$main_ready" "$TMPDIR/main.out" "$default_ustack" sample \
	"$main_ready" "$TMPDIR/main-switch.out" "$default_ustack" switch <<'PY'
import json, sys
# The secret as the dump shows the bytes of the environment: hex of ASCII.
slack, secret = int(sys.argv[1]), sys.argv[2].encode().hex()
args = sys.argv[3:]
for i in range(0, len(args), 4):
	ready, name, ustack, kind = args[i:i + 4]
	ready = dict(w.split("=", 1) for w in ready.split()[1:])
	tid = int(ready["tid"])
	sp, buf = int(ready["sp"], 16), int(ready["buf"], 16)
	lo, hi = int(ready["spin_begin"], 16), int(ready["spin_end"], 16)
	pattern = ready["pattern"]
	ustack = int(ustack)
	if "start_stack" in ready:
		# The stack the process started on: the copy stops at its top.
		want_len = min(ustack, int(ready["start_stack"], 16) + slack - sp)
		want_top, want_fault = want_len < ustack, False
	else:
		want_len = min(ustack, int(ready["stack_top"], 16) - sp)
		want_top, want_fault = False, want_len < ustack
	bad = dict(tid=0, no_regs=0, sp=0, ip=0, len=0, fault_flag=0, top_flag=0, hexlen=0,
		   pattern=0, secret=0)
	n = 0
	first = {}
	def miss(k, what):
		bad[k] += 1
		first.setdefault(k, what)
	for line in open(name):
		r = json.loads(line)
		if r["type"] != kind:
			continue
		if kind == "switch":
			# The snapshot of the target's switch-out, not its switch-in.
			if r["prev_tid"] != tid or "stack" not in r:
				continue
			r = dict(r["stack"], tid=r["prev_tid"])
		n += 1
		if r["tid"] != tid:
			miss("tid", r["tid"])
		regs = r["user_regs"]
		if "user_regs" not in r["flags"] or regs is None:
			miss("no_regs", r["flags"])
			continue
		rsp, rip = int(regs["sp"], 16), int(regs["ip"], 16)
		if rsp != sp:
			miss("sp", hex(rsp))
		if not lo <= rip < hi:
			miss("ip", hex(rip))
		if r["ustack_len"] != want_len:
			miss("len", r["ustack_len"])
		if ("ustack_fault" in r["flags"]) != want_fault:
			miss("fault_flag", r["flags"])
		if ("ustack_top" in r["flags"]) != want_top:
			miss("top_flag", r["flags"])
		data = r.get("ustack", "")
		if len(data) != 2 * r["ustack_len"]:
			miss("hexlen", len(data))
		off = 2 * (buf - rsp)
		if data[off:off + len(pattern)] != pattern:
			miss("pattern", data[off:off + 32] + "...")
		if secret in data:
			miss("secret", data.index(secret) // 2)
	print(f"{name.rsplit('/', 1)[1][:-4]} n={n} want_len={want_len} want_top={int(want_top)} "
	      + " ".join(f"{k}={v}" for k, v in bad.items())
	      + "".join(f" first_{k}={str(v).replace(' ', '')}" for k, v in first.items()))
PY
phases=0
while read -r phase rest; do
	phases=$((phases + 1))
	say "$phase: $rest"
	n=$(kv "$rest" n)
	want=$(kv "$rest" want_len)
	assert_gt "$phase: records of the target" "$n" 0
	assert_eq "$phase: records of another thread" 0 "$(kv "$rest" tid)"
	assert_eq "$phase: records without user_regs" 0 "$(kv "$rest" no_regs)"
	assert_eq "$phase: records whose user_regs.sp is not the thread's %rsp" 0 "$(kv "$rest" sp)"
	assert_eq "$phase: records whose user_regs.ip is outside the spin loop" 0 "$(kv "$rest" ip)"
	assert_eq "$phase: records whose ustack_len is not min(ustack, stack top - sp) = $want" \
		0 "$(kv "$rest" len)"
	assert_eq "$phase: records whose ustack_fault flag disagrees with a copy cut at the stack's end" \
		0 "$(kv "$rest" fault_flag)"
	assert_eq "$phase: records whose ustack_top flag disagrees with a copy cut at start_stack" \
		0 "$(kv "$rest" top_flag)"
	assert_eq "$phase: records whose dumped bytes are not ustack_len long" 0 "$(kv "$rest" hexlen)"
	assert_eq "$phase: records without the pattern at offset buffer - sp" 0 "$(kv "$rest" pattern)"
	assert_eq "$phase: records holding the secret of the environment" 0 "$(kv "$rest" secret)"
done <<<"$OUT"
assert_eq "phases checked (default, small, main, main-switch)" 4 "$phases"
assert_eq "main: the copy stops at the stack's top (want_top)" 1 \
	"$(kv "$(grep '^main ' <<<"$OUT")" want_top)"
