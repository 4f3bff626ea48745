#!/bin/bash
# /dev/taproot used wrongly (issue #7, point 2): every case gets a clean
# error or the defined behaviour, asserted by progs/dev-abuse, which prints
# one "ok LABEL" per case (the mmap ABI cases of test-ring-mmap-abi.sh are
# not repeated):
#   - offsets: unaligned, negative, a CPU number of all ones, ranges that
#     run from one CPU's offsets into the next one's: EINVAL; lengths 0 and
#     2^40: EINVAL; partial mappings (one byte, one page of the second data
#     copy, P+1 bytes) are defined and read as the whole mapping does;
#   - protections: PROT_EXEC on any page: EPERM at mmap, EACCES at
#     mprotect; an O_RDONLY file cannot map (EINVAL: without FMODE_WRITE the
#     kernel makes MAP_SHARED private) nor map the consumer page writable
#     (EACCES); an O_WRONLY file cannot map (EACCES);
#   - writes to data and producer pages are impossible: a store is SIGSEGV,
#     /proc/self/mem (FOLL_FORCE) is EIO, process_vm_writev() is EFAULT,
#     and the bytes stay as they were;
#   - mremap: a move reads the same at the new address, a shrink keeps the
#     first page, MREMAP_DONTUNMAP is EINVAL, a hole punched by munmap
#     leaves both halves readable; MADV_DONTNEED makes a later read SIGBUS
#     (the pages are not refaulted, as a BPF ring buffer's);
#   - fork after MADV_DOFORK: the child inherits mapping and file; with the
#     parent's file closed and unmapped the device stays busy (EBUSY) until
#     the child, which still reads the ring, exits; a consumer killed with
#     SIGKILL while mapped frees the device;
#   - close() of the descriptor during another thread's blocked poll() on
#     empty rings: the poll() returns POLLNVAL and the file is released;
#   - read()/write(): EINVAL, pread()/lseek(): ESPIPE, ioctl(): ENOTTY.
# Afterwards nothing leaked: the module's reference count is 0, the ring
# size can change (refused with EBUSY while any mapping is counted), the
# rings still sample and are read, and the module unloads.
# Quick mode: dev-abuse once; long mode (TAPROOT_LONG=1): 50 rounds, the
# reference count checked after each.
# vm-timeout: 900
# reliability: device-abuse
. "${0%/*}/lib.sh"
. "${0%/*}/lib-sampling.sh"
require_module
require_prog dev-abuse spinner

module_fresh
ctl "config set ring-pages 8" config set ring-pages 8

rounds=$(quick_long 1 50)
cases=0
for ((round = 0; round < rounds; round++)); do
	say "dev-abuse round $round, sampling stopped, rings empty"
	run "$PROGS/dev-abuse"
	if [ "$round" -eq 0 ]; then
		assert_cases "dev-abuse round $round"
	else
		assert_cases "dev-abuse round $round" quiet
	fi
	assert_eq "module reference count after dev-abuse round $round" 0 "$(refcnt)"
	cases=$((cases + NCASES))
done
per_round=$((cases / rounds))
assert_gt "dev-abuse cases per round" "$per_round" 30

say "nothing leaked"
# A resize is refused while the module counts a mapping of the rings.
ctl "ring-pages can change: no mapping is counted any more" config set ring-pages 16
spawn load load nice -n 19 "$PROGS/spinner" --threads 1
wait_line "a spinner" "$TMPDIR/load.out" '^spinning threads='
ctl "config set freq 1000" config set freq 1000
dump_begin dump
ctl "start" start
declare -A zero=()
# shellcheck disable=SC2034 # read by wait_counters, by name
zero=()
wait_counters "records after the abuse" records zero
ctl "stop" stop
dump_end
kill "$load"
nrec=0
while IFS= read -r line; do
	[[ $line != *'"type":"sample"'* ]] || nrec=$((nrec + 1))
done <"$DUMP_OUT"
assert_gt "samples read after the abuse" "$nrec" 0
assert_eq "module reference count after the dump" 0 "$(refcnt)"
expect_ok "taprootctl unload" "$CTL" unload
! module_loaded || die "the module is still loaded after unload"

score "cases=$((cases + 4))" failures=0 "rounds=$rounds" "cases_per_round=$per_round"
