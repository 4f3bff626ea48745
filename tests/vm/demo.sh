#!/bin/bash
# The guest half of scripts/demo: load taproot, profile two demo workloads
# with `taprootctl record`, leave the profiles in $TAPROOT_VM_OUT (the
# host's demo-out/, shared by scripts/vm --out), unload.
#
# On CPU: tests/vm/progs/tapwork.c, built -O2 -fomit-frame-pointer like
# Debian's binaries, has two call chains, one through a shared library:
#	main -> run -> a -> leaf_x                 60% of the work
#	main -> run -> b -> libfunc -> leaf_y      40% (libfunc, leaf_y in libtapwork)
# Off CPU: tests/vm/progs/tapblock.c --mutex has threads that wait, each in a
# function of its own: sleeper_nap (clock_nanosleep, woken by the timer
# interrupt), reader_wait (read of a pipe, woken by writer_send), mutex_wait
# (a mutex the writer holds while it computes in writer_compute).
# Critical path: tests/vm/progs/critchain.c, whose main thread waits for a
# worker that computes (worker_compute), then waits for a mutex a holder
# keeps while it computes (holder_compute); a sleeper naps beside them.
set -euo pipefail
cd "$(dirname "$0")/../.."

out=${TAPROOT_VM_OUT:?run through scripts/demo (scripts/vm --out DIR)}

step() {
	echo
	echo "demo: $*"
}

step "loading the module: taprootctl load"
ctl/taprootctl load --ko "build/kmod/$(uname -r)/kmod/taproot.ko"
step "what it reports: taprootctl status"
ctl/taprootctl status
step "profiling a workload: taprootctl record --freq 499 --output DIR -- build/vm/progs/tapwork 5"
ctl/taprootctl record --freq 499 --ring-pages 2048 --output /tmp/demo -- build/vm/progs/tapwork 5
cp /tmp/demo/cpu.pb.gz "$out/cpu.pb.gz"
step "off-CPU profiles: taprootctl record --events cpu,offcpu --output DIR -- build/vm/progs/tapblock 5 --mutex"
ctl/taprootctl record --events cpu,offcpu --ring-pages 2048 --output /tmp/demo-off \
	-- build/vm/progs/tapblock 5 --mutex
for kind in offcpu offwake schedlat; do
	cp "/tmp/demo-off/$kind.pb.gz" "$out/$kind.pb.gz"
done
step "a timeline and a critical path: taprootctl record --events cpu,offcpu --trace DIR/trace.json --critical-path command --output DIR -- build/vm/progs/critchain"
ctl/taprootctl record --events cpu,offcpu --freq 499 --ring-pages 2048 \
	--trace /tmp/demo-crit/trace.json --critical-path command --output /tmp/demo-crit \
	-- build/vm/progs/critchain
cp /tmp/demo-crit/critpath.pb.gz "$out/critpath.pb.gz"
cp /tmp/demo-crit/trace.json "$out/trace.json"
step "unloading it: taprootctl unload"
ctl/taprootctl unload
