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
# The target (progs/ustack-pattern) prints the runtime addresses of its
# buffer, its %rsp, its spin loop and its stack top, so the expectations
# come from the process itself, not from the binary.
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

expect_ok "check the samples" python3 -S - "$ready" "$TMPDIR/default.out" "$default_ustack" \
	"$TMPDIR/small.out" 1024 <<'PY'
import json, sys
ready = dict(w.split("=", 1) for w in sys.argv[1].split()[1:])
tid = int(ready["tid"])
sp, buf, top = (int(ready[k], 16) for k in ("sp", "buf", "stack_top"))
lo, hi = int(ready["spin_begin"], 16), int(ready["spin_end"], 16)
pattern = ready["pattern"]
for name, ustack in zip(sys.argv[2::2], sys.argv[3::2]):
	ustack = int(ustack)
	want_len = min(ustack, top - sp)
	bad = dict(tid=0, no_regs=0, sp=0, ip=0, len=0, fault_flag=0, hexlen=0, pattern=0)
	n = 0
	first = {}
	def miss(k, what):
		bad[k] += 1
		first.setdefault(k, what)
	for line in open(name):
		r = json.loads(line)
		if r["type"] != "sample":
			continue
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
		if ("ustack_fault" in r["flags"]) != (want_len < ustack):
			miss("fault_flag", r["flags"])
		data = r.get("ustack", "")
		if len(data) != 2 * r["ustack_len"]:
			miss("hexlen", len(data))
		off = 2 * (buf - rsp)
		if data[off:off + len(pattern)] != pattern:
			miss("pattern", data[off:off + 32] + "...")
	print(f"{name.rsplit('/', 1)[1][:-4]} n={n} want_len={want_len} "
	      + " ".join(f"{k}={v}" for k, v in bad.items())
	      + "".join(f" first_{k}={str(v).replace(' ', '')}" for k, v in first.items()))
PY
phases=0
while read -r phase rest; do
	phases=$((phases + 1))
	say "$phase: $rest"
	n=$(kv "$rest" n)
	want=$(kv "$rest" want_len)
	assert_gt "$phase: samples of the target" "$n" 0
	assert_eq "$phase: samples of another thread" 0 "$(kv "$rest" tid)"
	assert_eq "$phase: samples without user_regs" 0 "$(kv "$rest" no_regs)"
	assert_eq "$phase: samples whose user_regs.sp is not the thread's %rsp $sp" 0 "$(kv "$rest" sp)"
	assert_eq "$phase: samples whose user_regs.ip is outside the spin loop" 0 "$(kv "$rest" ip)"
	assert_eq "$phase: samples whose ustack_len is not min(ustack, stack top - sp) = $want" \
		0 "$(kv "$rest" len)"
	assert_eq "$phase: samples whose ustack_fault flag disagrees with a copy cut at the stack top" \
		0 "$(kv "$rest" fault_flag)"
	assert_eq "$phase: samples whose dumped bytes are not ustack_len long" 0 "$(kv "$rest" hexlen)"
	assert_eq "$phase: samples without the pattern at offset buffer - sp" 0 "$(kv "$rest" pattern)"
done <<<"$OUT"
assert_eq "phases checked (default, small)" 2 "$phases"
