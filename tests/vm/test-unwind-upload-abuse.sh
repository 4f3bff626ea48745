#!/bin/bash
# The unwind uploads of /dev/taproot (issue #19, tables in the module)
# used wrongly and rightly; progs/upload-abuse asserts each case and
# prints one "ok LABEL" per case:
#   - TABLE_ADD: every malformed field (reserved, counts 0 or past the
#     limits, build ID length and padding, pcs not strictly ascending, a
#     row rule past nr_rules, base + pc overflowing, each rule field of an
#     unknown value or set where its kind takes none): EINVAL; bad pointers
#     to the struct or any array, one that runs into an unmapped page:
#     EFAULT; a second upload of a build ID: EEXIST, the id given back;
#   - TABLE_DEL: ids 0 and unknown: ENOENT; a table deleted while mapped
#     stays for its mappings but takes no new ones (ENOENT);
#   - PROC_TOKEN: reserved, pid 0, a kernel thread: EINVAL; no such pid, a
#     thread id: ESRCH;
#   - MAPS_SET: nr past TAPROOT_MAPS_MAX, unsorted, overlapping, empty,
#     unknown flags, FP with a table, no table without FP: EINVAL; an
#     unknown table: ENOENT; a wrong token: ESTALE; and between token and
#     set a child munmap+mmaps another file at the same address, maps over
#     its mapping with MAP_FIXED, makes it read-only and maps another
#     there, mremaps it, or execs: ESTALE each time; maps something new
#     elsewhere: set (but where the module logs that every write lock
#     counts); maps, replaces and unmaps anonymous data (a heap's or a
#     JIT's life): set where it logs that removals of code or files count
#     (its kprobes, on every kernel of the matrix); nr 0 forgets a live
#     or a dead process;
#   - PYTHON_SET (issue 29): each offset past the walker's reads, unknown
#     kinds, reserved fields, forget past 1, pid 0: EINVAL; struct at 8:
#     EFAULT; no such pid: ESRCH; a wrong token: ESTALE; a process without
#     mappings: ENOENT; a layout set, the mappings set again, forgotten;
#     a holder of the device that dropped its capabilities since the open:
#     EPERM, while its MAPS_SET still goes;
#   - JVM_SET (issue 32) alike: no heap or too many, an empty one, none
#     of its segment map, segments past 1 MiB, heaps 2 GiB apart, offsets
#     past the walker's reads, reserved fields, forget past 1, pid 0:
#     EINVAL; and EFAULT, ESRCH, ESTALE, ENOENT, set, kept, forgotten and
#     EPERM as PYTHON_SET's;
#   - the budget (TAPROOT_A_CFG_UNWIND_MEM lowered): ENOSPC for tables and
#     mappings, and a refusal charges nothing;
#   - GET_STATS counts tables, processes and bytes; closing the device
#     frees everything (UNWIND_MEM_USED back to 0, no vmalloc area of the
#     upload code left in /proc/vmallocinfo), and so does kill -9 of the
#     process that holds it with a big table uploaded;
#   - a hostile uploader (issue 28), the consumer of progs/stack-secret,
#     which spins with a value on its stack and a return address into its
#     code 1 MiB up: MAPS_SET of the whole address space, of a stack page,
#     of its code and a page past it: ESTALE; with one rule over its code
#     that reads the return address 64 bytes up (near) or 1 MiB up (far)
#     and ustack-private, 3 s of its samples tell no user pc but the
#     leaf's outside its code, never the value planted for the rule (the
#     walker keeps a pc only in a mapping, reads the stack no higher than
#     a copy would), and no stack bytes.
# vm-timeout: 300
. "${0%/*}/lib.sh"
. "${0%/*}/lib-sampling.sh"
require_module
require_prog upload-abuse

module_fresh

say "malformed and valid uploads, the budget, close"
run "$PROGS/upload-abuse"
assert_cases upload-abuse
CASES=$NCASES
assert_gt "upload-abuse cases" "$CASES" 60

say "kill -9 of the process holding the device with uploads"
spawn holder holder "$PROGS/upload-abuse" --hold
wait_line "the holder uploaded" "$TMPDIR/holder.out" '^holding$'
json=$("$CTL" stats --json)
assert_match "stats while held: a table" "$json" '"unwind_tables": *1[,}]'
assert_match "stats while held: a process" "$json" '"unwind_procs": *1[,}]'
kill -9 "$holder"
wait "$holder" || true
run "$PROGS/upload-abuse" --freed
assert_cases upload-abuse-freed
CASES=$((CASES + NCASES))

say "a hostile uploader: what it can make the walker read and tell, with ustack-private"
spawn target stack-secret "$PROGS/stack-secret"
wait_line "stack-secret is ready" "$TMPDIR/stack-secret.out" '^stack-secret: ready '
[[ $LINE =~ pid=([0-9]+)\ secret=(0x[0-9a-f]+)\ marker=(0x[0-9a-f]+) ]] ||
	die "stack-secret's line: $LINE"
tpid=${BASH_REMATCH[1]} secret=${BASH_REMATCH[2]} marker=${BASH_REMATCH[3]}
run "$PROGS/upload-abuse" --hostile near "$tpid" "$secret" 3
assert_cases upload-abuse-hostile-near
CASES=$((CASES + NCASES))
run "$PROGS/upload-abuse" --hostile far "$tpid" "$marker" 3
assert_cases upload-abuse-hostile-far
CASES=$((CASES + NCASES))
kill "$target"
wait "$target" 2>/dev/null || true

assert_eq "module reference count at the end" 0 "$(refcnt)"
expect_ok "taprootctl unload" "$CTL" unload
! module_loaded || die "the module is still loaded after unload"
score "cases=$CASES" failures=0
