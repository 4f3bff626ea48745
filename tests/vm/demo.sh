#!/bin/bash
# The guest half of scripts/demo: load taproot, profile a demo workload with
# `taprootctl record`, leave the profile in $TAPROOT_VM_OUT (the host's
# demo-out/, shared by scripts/vm --out), unload.
#
# The workload (tests/vm/progs/tapwork.c, built -O2 -fomit-frame-pointer
# like Debian's binaries) has two call chains, one through a shared library:
#	main -> run -> a -> leaf_x                 60% of the work
#	main -> run -> b -> libfunc -> leaf_y      40% (libfunc, leaf_y in libtapwork)
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
step "unloading it: taprootctl unload"
ctl/taprootctl unload
