#!/bin/bash
# Samples of a process that lives in a system call carry its kernel stack:
# they are flagged in_kernel, their kernel frames (symbolized by taprootctl
# dump from /proc/kallsyms) name the read path the process is in,
# read_zero < vfs_read < ksys_read < do_syscall_64, in a majority of its
# in-kernel samples, and they still carry the task's user registers; its
# samples in user mode carry no kernel frame. The configured kernel stack
# depth is honoured: with 'config set kstack 2' no sample has more than 2
# frames, and the truncation flag says when frames were cut.
#
# The target (progs/read-zero) reads /dev/zero into a 1 MiB buffer in a
# loop: read_zero clears user memory page by page, a long in-kernel path.
. "${0%/*}/lib.sh"
. "${0%/*}/lib-sampling.sh"
require_module
require_prog read-zero

freq=199
module_fresh
spawn target target "$PROGS/read-zero"
wait_line "target ready" "$TMPDIR/target.out" '^ready pid='
assert_eq "target PID" "$target" "$(kv "$LINE" pid)"

# sample_phase NAME KSTACK: the target's samples with 'config set kstack
# KSTACK'.
sample_phase() {
	ctl "config set pids $target freq $freq kstack $2" \
		config set pids "$target" freq "$freq" kstack "$2"
	dump_begin "$1" --pid "$target"
	ctl "start ($1)" start
	# Let the target be sampled for a while: half a second, plus the time
	# taprootctl takes to start and to stop (as long again under TCG).
	nap 0.5
	ctl "stop ($1)" stop
	dump_end
}

say "kstack $(uapi_define TAPROOT_KSTACK_DEFAULT) (the default)"
sample_phase full "$(uapi_define TAPROOT_KSTACK_DEFAULT)"
say "kstack 2"
sample_phase two 2
kill "$target"

expect_ok "check the samples" python3 -S - "$TMPDIR/full.out" "$TMPDIR/two.out" <<'PY'
import json, sys
KERNEL = 0xffff800000000000
CHAIN = ["read_zero", "vfs_read", "ksys_read", "do_syscall_64"]

def samples(path):
	for line in open(path):
		r = json.loads(line)
		if r["type"] == "sample":
			yield r

def name(frame):
	return (frame["sym"] or "?").split("+", 1)[0]

def has_chain(names):
	# CHAIN in this order, each the caller of the previous one.
	try:
		i = names.index(CHAIN[0])
	except ValueError:
		return False
	return names[i:i + len(CHAIN)] == CHAIN

for path in sys.argv[1:]:
	st = dict(n=0, kernel=0, chain=0, deeper2=0, trunc=0, over2=0, trunc_short=0,
		  no_regs=0, kernel_no_frames=0, kernel_ip_not_kernel=0, user_frames=0,
		  user_trunc=0, user_ip_kernel=0, unsymbolized=0)
	example = None
	for r in samples(path):
		st["n"] += 1
		frames = r["kstack"]
		flags = r["flags"]
		if r["user_regs"] is None or "user_regs" not in flags:
			st["no_regs"] += 1
		elif int(r["user_regs"]["ip"], 16) >= KERNEL:
			st["user_ip_kernel"] += 1
		if "in_kernel" not in flags:
			st["user_frames"] += len(frames) > 0
			st["user_trunc"] += "kstack_trunc" in flags
			continue
		st["kernel"] += 1
		if not frames:
			st["kernel_no_frames"] += 1
			continue
		if int(frames[0]["addr"], 16) < KERNEL:
			st["kernel_ip_not_kernel"] += 1
		st["unsymbolized"] += any(f["sym"] is None for f in frames)
		names = [name(f) for f in frames]
		if has_chain(names):
			st["chain"] += 1
		elif example is None:
			example = "<".join(names)
		st["deeper2"] += len(frames) > 2
		st["over2"] += len(frames) > 2
		if "kstack_trunc" in flags:
			st["trunc"] += 1
			st["trunc_short"] += len(frames) != 2
	print(path.rsplit("/", 1)[1][:-4], " ".join(f"{k}={v}" for k, v in st.items()),
	      f"not_chain_example={example}")
PY
declare -A res=()
while read -r phase rest; do
	res[$phase]=$rest
	say "$phase: $rest"
done <<<"$OUT"

r=${res[full]:?no result for the default depth}
n=$(kv "$r" n) k=$(kv "$r" kernel)
assert_gt "default depth: samples of the target" "$n" 0
assert_gt "default depth: most samples are in the kernel (in_kernel)" $((2 * k)) "$n"
assert_gt "default depth: read_zero<vfs_read<ksys_read<do_syscall_64 in most in-kernel samples" \
	$((2 * $(kv "$r" chain))) "$k"
assert_eq "default depth: samples without user_regs" 0 "$(kv "$r" no_regs)"
assert_eq "default depth: user_regs.ip in kernel space" 0 "$(kv "$r" user_ip_kernel)"
assert_eq "default depth: in-kernel samples without a kernel frame" 0 "$(kv "$r" kernel_no_frames)"
assert_eq "default depth: in-kernel samples whose first frame is not a kernel address" \
	0 "$(kv "$r" kernel_ip_not_kernel)"
assert_eq "default depth: in-kernel samples with an unsymbolized frame" 0 "$(kv "$r" unsymbolized)"
assert_eq "default depth: user-mode samples with kernel frames" 0 "$(kv "$r" user_frames)"
assert_eq "default depth: user-mode samples flagged kstack_trunc" 0 "$(kv "$r" user_trunc)"
assert_eq "default depth: samples flagged kstack_trunc (the stack is far below 127 frames)" \
	0 "$(kv "$r" trunc)"
# What makes the next phase meaningful: there are more than 2 frames to cut.
assert_gt "default depth: most in-kernel samples have more than 2 frames" \
	$((2 * $(kv "$r" deeper2))) "$k"

r=${res[two]:?no result for kstack 2}
n=$(kv "$r" n) k=$(kv "$r" kernel)
assert_gt "kstack 2: samples of the target" "$n" 0
assert_gt "kstack 2: most samples are in the kernel" $((2 * k)) "$n"
assert_eq "kstack 2: samples with more than 2 kernel frames" 0 "$(kv "$r" over2)"
assert_eq "kstack 2: in-kernel samples without a kernel frame" 0 "$(kv "$r" kernel_no_frames)"
assert_eq "kstack 2: truncated samples with other than 2 frames" 0 "$(kv "$r" trunc_short)"
assert_gt "kstack 2: most in-kernel samples are flagged kstack_trunc" \
	$((2 * $(kv "$r" trunc))) "$k"
assert_eq "kstack 2: user-mode samples flagged kstack_trunc" 0 "$(kv "$r" user_trunc)"
