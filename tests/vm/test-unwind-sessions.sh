#!/bin/bash
# Recording sessions one after another on the same loaded module, as a
# user runs them: each one's command is uploaded and walked in the module.
# (Issue 35: on 7.2 the later sessions' commands were walked late or
# never; the recorder spent its upload budget on its own libraries, woken
# as it was by its release of the command, and on the stale samples of
# its backlog.) Three times, taprootctl record --events cpu,offcpu of
# progs/evblock pipe, held before its work (stdin a FIFO) until:
#   - the module holds the mappings of one process and a table for each
#     executable file evblock maps (wait_uploaded): evblock alone, the
#     recorder's own process never;
# then released:
#   - at least 100 of evblock's off-CPU events (its reader's switch-outs,
#     its writer's wakings: 300 in all) carry the module's walk, whole
#     (record's causal_upcs), and none of the module's walks of samples
#     from then on ends for want of the process's or a mapping's upload
#     (no-proc, no-mapping). A walk may still end stale: 6.1 counts
#     mapping changes by a hash of the mm, which another process's may
#     share (kmod/utab.c), and the recorder then uploads again (seen on
#     6.1-rt: 10 such walks in a session);
#   - the session ends well and what it uploaded is freed.
# vm-timeout: 300
. "${0%/*}/lib.sh"
. "${0%/*}/lib-sampling.sh"
require_module
require_prog evblock
load_module

for i in 1 2 3; do
	say "session $i: taprootctl record --events cpu,offcpu -- evblock pipe 150, held"
	record_held "s$i" --events cpu,offcpu --output "$TEST_TMP/s$i" \
		--stats-json "$TEST_TMP/s$i.json" -- "$PROGS/evblock" pipe 150
	wait_line "session $i: evblock is ready" "$TEST_TMP/s$i.out" '^start$' 60
	target=$(sed -n 's/^ready pid=\([0-9]*\).*/\1/p' "$TEST_TMP/s$i.out" | head -n1)
	[ -n "$target" ] || die "session $i: no 'ready pid=' from evblock: $(cat "$TEST_TMP/s$i.out")"
	wait_uploaded "session $i: evblock ($target) uploaded" "$target" 120
	assert_eq "session $i: processes uploaded (evblock alone, not the recorder)" 1 \
		"${MSTAT[unwind_procs]}"
	missing0=$((MSTAT[walks:no-proc] + MSTAT[walks:no-mapping]))
	stale0=${MSTAT[walks:stale]}

	release_held
	wait_exit "session $i: record ends with evblock" "$REC" 120
	[ "$RC" -eq 0 ] || die "session $i: record exited $RC: $(cat "$TEST_TMP/s$i.out")"
	assert_contains "session $i: summary" "$(cat "$TEST_TMP/s$i.out")" \
		"command:  exited with status 0"
	module_stats
	missing=$((MSTAT[walks:no-proc] + MSTAT[walks:no-mapping] - missing0))
	stale=$((MSTAT[walks:stale] - stale0))
	[[ $(<"$TEST_TMP/s$i.json") =~ \"causal_upcs\":\ *([0-9]+) ]] ||
		die "session $i: no causal_upcs in record's --stats-json"
	upcs=${BASH_REMATCH[1]}
	say "session $i: $upcs off-CPU stacks walked whole by the module;" \
		"$missing samples' walks after the release ended for want of uploads, $stale stale"
	assert_gt "session $i: evblock's off-CPU stacks walked by the module" "$upcs" 99
	assert_eq "session $i: samples' walks for want of uploads after evblock's" 0 "$missing"
	assert_eq "session $i: uploads freed with the session" 0 "${MSTAT[unwind_mem_used]}"
done
unload_module
