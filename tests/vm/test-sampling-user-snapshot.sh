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
# Samples and causal events' snapshots flag their user stacks one way (the
# uapi header's "Stacks"): the switch-out snapshots of the thread, whose
# stack ends below the default copy's length, say ustack_fault as its
# samples do; and with the smallest ring (2 pages: a record takes at most
# a quarter of them), where the default copy does not fit a record,
# samples and snapshots alike are cut to fit and say ustack_trunc, not
# ustack_fault, though the stack goes on and is readable past the cut.
# Every record's length and flags are checked against what the header
# says for its phase's configuration and the target's stack.
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

kstack=$(uapi_define TAPROOT_KSTACK_DEFAULT)
default_pages=$(uapi_define TAPROOT_RING_PAGES_DEFAULT)

# phase NAME READY EVENTS USTACK RING_PAGES SECONDS: the target's records
# with 'config set events EVENTS ustack USTACK ring-pages RING_PAGES', for
# SECONDS of sampling (plus the time taprootctl takes to start and to
# stop, as long again under TCG), dumped with every copied byte in hex.
# READY is the target's ready line. PHASES gets what the check needs.
PHASES=()
phase() {
	local name=$1 ready=$2 events=$3 ustack=$4 pages=$5 secs=$6
	ctl "config set ($name: events $events, ustack $ustack, ring-pages $pages)" \
		config set pids "$target" freq "$freq" events "$events" sched-one-in 1 \
		ustack "$ustack" kstack "$kstack" ring-pages "$pages"
	dump_begin "$name" --pid "$target" --ustack-bytes "$(uapi_define TAPROOT_USTACK_MAX)"
	ctl "start ($name)" start
	# Records of the target accumulate while it runs.
	nap "$secs"
	ctl "stop ($name)" stop
	dump_end
	PHASES+=("$name" "$ready" "$events" "$ustack" "$pages")
}

say "ustack $default_ustack (the default: more than the thread's stack holds above sp)"
phase default "$ready" sample "$default_ustack" "$default_pages" 0.5
say "ustack 1024"
phase small "$ready" sample 1024 "$default_pages" 0.5
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
phase main "$main_ready" sample "$default_ustack" "$default_pages" 0.5

say "switch records of the main thread, preempted by a spinner on its CPU"
spawn rival rival taskset -c 0 "$PROGS/spinner"
# Long enough for several scheduler slices of the two spinners.
phase main-switch "$main_ready" sample,switch "$default_ustack" "$default_pages" 1
kill -KILL "$target"

# A thread on a stack of its own, pinned beside the spinner, for the
# switch-out snapshots of a stack that ends below the default copy.
spawn target thread-target taskset -c 0 "$PROGS/ustack-pattern"
wait_line "pinned target ready" "$TMPDIR/thread-target.out" '^ready pid='
thread_ready=$LINE
assert_eq "pinned target PID" "$target" "$(kv "$thread_ready" pid)"
say "pinned thread $(kv "$thread_ready" tid): sp $(kv "$thread_ready" sp), stack top $(kv "$thread_ready" stack_top)"
say "switch records of a thread whose stack ends within the copy"
phase thread-switch "$thread_ready" sample,switch "$default_ustack" "$default_pages" 1
ring_min=$(uapi_define TAPROOT_RING_PAGES_MIN)
say "the same with $ring_min-page rings: copies cut to fit a record"
phase cut "$thread_ready" sample,switch "$default_ustack" "$ring_min" 1
kill -KILL "$rival"

expect_ok "check the records" python3 -S - "$UAPI" "$TMPDIR" "$slack" "$secret" "$kstack" \
	"${PHASES[@]}" <<'PY'
import json, mmap, re, sys
uapi, tmpdir, slack, secret, kstack = sys.argv[1:6]
slack, kstack = int(slack), int(kstack)
# The secret as the dump shows the bytes of the environment: hex of ASCII.
secret = secret.encode().hex()
hdr = open(uapi).read()
size = {k: int(v) for k, v in re.findall(r"sizeof\(struct (\w+)\) == (\d+)", hdr)}

def names(prefix):
	"""Flag bit -> the name taprootctl dump gives it (the suffix in lower
	case), so that a bit it does not know yet, dumped as bitN, reads the same."""
	return {int(b): n.lower()
		for n, b in re.findall(r"#define " + prefix + r"(\w+)\s+\(1U << (\d+)\)", hdr)}

FLAGS = dict(sample=names("TAPROOT_SAMPLE_F_"), switch=names("TAPROOT_SNAP_F_"))

def flagset(flags, kind):
	return {FLAGS[kind].get(int(f[3:]), f) if re.fullmatch(r"bit\d+", f) else f
		for f in flags}

def expect(kind, ready, ustack, pages, in_kernel):
	"""(length, top, trunc, fault) of a copy from the target's sp, as the
	uapi header's "Stacks" says: planned to the configured size or the
	stack's top, cut to fit a ring record after the kernel frames' room,
	then short of the plan where the stack stops being readable."""
	sp = int(ready["sp"], 16)
	maxrec = pages * mmap.PAGESIZE // 4 // 8 * 8
	if kind == "sample":
		# A sample of user mode has no kernel part; one that hit the
		# spinning thread in the kernel (being preempted) has.
		fixed, kdepth = size["taproot_rec_sample"], kstack if in_kernel else 0
	else:
		fixed = size["taproot_rec_switch"] + size["taproot_stack_snap"]
		kdepth = kstack
	if "start_stack" in ready:
		plan = min(ustack, int(ready["start_stack"], 16) + slack - sp)
		readable = plan		# the environment lies above: readable
	else:
		plan = ustack
		readable = int(ready["stack_top"], 16) - sp
	top, trunc = plan < ustack, False
	room = maxrec - fixed
	if kdepth * 8 + plan > room:
		kdepth = min(kdepth, room // 8)
		cut = min(plan, room - kdepth * 8) // 8 * 8
		trunc, plan = cut < plan, cut
	return min(plan, readable), top, trunc, readable < plan

args = sys.argv[6:]
for i in range(0, len(args), 5):
	phase, ready, events, ustack, pages = args[i:i + 5]
	ustack, pages = int(ustack), int(pages)
	ready = dict(w.split("=", 1) for w in ready.split()[1:])
	tid = int(ready["tid"])
	sp, buf = int(ready["sp"], 16), int(ready["buf"], 16)
	lo, hi = int(ready["spin_begin"], 16), int(ready["spin_end"], 16)
	pattern = ready["pattern"]
	for kind in events.split(","):
		# The summary says what a record of user mode wants.
		want_len, want_top, want_trunc, want_fault = expect(kind, ready, ustack, pages, False)
		bad = dict(tid=0, no_regs=0, sp=0, ip=0, len=0, fault_flag=0, trunc_flag=0,
			   top_flag=0, hexlen=0, pattern=0, secret=0)
		n = 0
		first = {}
		def miss(k, what):
			bad[k] += 1
			first.setdefault(k, what)
		for line in open(f"{tmpdir}/{phase}.out"):
			r = json.loads(line)
			if r["type"] != kind:
				continue
			if kind == "switch":
				# The snapshot of the target's switch-out, not its switch-in.
				if r["prev_tid"] != tid or "stack" not in r:
					continue
				r = dict(r["stack"], tid=r["prev_tid"])
			n += 1
			flags = flagset(r["flags"], kind)
			rlen, rtop, rtrunc, rfault = expect(kind, ready, ustack, pages,
							    "in_kernel" in flags)
			if r["tid"] != tid:
				miss("tid", r["tid"])
			regs = r["user_regs"]
			if "user_regs" not in flags or regs is None:
				miss("no_regs", r["flags"])
				continue
			rsp, rip = int(regs["sp"], 16), int(regs["ip"], 16)
			if rsp != sp:
				miss("sp", hex(rsp))
			if not lo <= rip < hi:
				miss("ip", hex(rip))
			if r["ustack_len"] != rlen:
				miss("len", r["ustack_len"])
			if ("ustack_fault" in flags) != rfault:
				miss("fault_flag", r["flags"])
			if ("ustack_trunc" in flags) != rtrunc:
				miss("trunc_flag", r["flags"])
			if ("ustack_top" in flags) != rtop:
				miss("top_flag", r["flags"])
			data = r.get("ustack", "")
			if len(data) != 2 * r["ustack_len"]:
				miss("hexlen", len(data))
			off = 2 * (buf - rsp)
			if data[off:off + len(pattern)] != pattern:
				miss("pattern", data[off:off + 32] + "...")
			if secret in data:
				miss("secret", data.index(secret) // 2)
		print(f"{phase}/{kind} n={n} want_len={want_len} want_top={int(want_top)} "
		      f"want_trunc={int(want_trunc)} want_fault={int(want_fault)} "
		      + " ".join(f"{k}={v}" for k, v in bad.items())
		      + "".join(f" first_{k}={str(v).replace(' ', '')}" for k, v in first.items()))
PY
checked=0
while read -r phase rest; do
	checked=$((checked + 1))
	say "$phase: $rest"
	n=$(kv "$rest" n)
	want=$(kv "$rest" want_len)
	assert_gt "$phase: records of the target" "$n" 0
	assert_eq "$phase: records of another thread" 0 "$(kv "$rest" tid)"
	assert_eq "$phase: records without user_regs" 0 "$(kv "$rest" no_regs)"
	assert_eq "$phase: records whose user_regs.sp is not the thread's %rsp" 0 "$(kv "$rest" sp)"
	assert_eq "$phase: records whose user_regs.ip is outside the spin loop" 0 "$(kv "$rest" ip)"
	assert_eq "$phase: records whose ustack_len is not $want (the plan, or where the stack stops being readable)" \
		0 "$(kv "$rest" len)"
	assert_eq "$phase: records whose ustack_fault flag disagrees with a copy stopped by unreadable memory" \
		0 "$(kv "$rest" fault_flag)"
	assert_eq "$phase: records whose ustack_trunc flag disagrees with a copy cut to fit the ring" \
		0 "$(kv "$rest" trunc_flag)"
	assert_eq "$phase: records whose ustack_top flag disagrees with a copy cut at start_stack" \
		0 "$(kv "$rest" top_flag)"
	assert_eq "$phase: records whose dumped bytes are not ustack_len long" 0 "$(kv "$rest" hexlen)"
	assert_eq "$phase: records without the pattern at offset buffer - sp" 0 "$(kv "$rest" pattern)"
	assert_eq "$phase: records holding the secret of the environment" 0 "$(kv "$rest" secret)"
done <<<"$OUT"
assert_eq "phases and kinds checked" 9 "$checked"

# What the phases were for: each case must be the one it was set up to be.
# want CASE KEY VALUE: the line of CASE (phase/kind) has KEY=VALUE.
want() {
	assert_eq "$1: $2" "$3" "$(kv "$(grep "^$1 " <<<"$OUT")" "$2")"
}
want main/sample want_top 1
for c in default/sample thread-switch/sample thread-switch/switch; do
	# The thread's stack ends within the default copy: a fault, no cut.
	want "$c" want_fault 1
	want "$c" want_trunc 0
done
for c in cut/sample cut/switch; do
	# Cut to fit the ring, within the readable stack: truncated, no fault.
	want "$c" want_trunc 1
	want "$c" want_fault 0
done
