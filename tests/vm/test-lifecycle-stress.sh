#!/bin/bash
# The module survives its whole life cycle, over and over, under a
# fork-heavy multi-threaded load: loaded, configured (frequency, stack
# sizes, ring size, TGID filter, causal events and their selection),
# started, reconfigured while sampling (every other round; causal kinds are
# dropped), read by a consumer (every third round), stopped and unloaded,
# or unloaded while still sampling, tracepoint probes attached (every third
# round). Every
# round takes samples; a consumer's reading finds no corrupt record; the
# module holds no reference once its users are gone (refcnt 0 before every
# unload) and every unload removes it. That the kernel stayed quiet (no
# oops, WARNING, lockdep report) is checked by tests/vm/run and scripts/vm
# on the console.
#
# The load is tests/vm/progs/fork-storm: a spinning thread per CPU, and
# children that exit at once, exit under a live thread of their own, or
# exec and then exit; every child must exit 0.
#
# Quick mode: six rounds of six to eight taprootctl runs, 15 to 60 s under
# TCG depending on the host's load. Long mode (TAPROOT_LONG=1, issue #7):
# 200 rounds, every one at 1000 Hz with every event kind on (the stack
# sizes, ring sizes, one-in-N and the other variations still rotate),
# 20-40 min under TCG.
# vm-timeout: 240
# reliability: lifecycle-stress
. "${0%/*}/lib.sh"
. "${0%/*}/lib-sampling.sh"
require_module
require_prog fork-storm

rounds=$(quick_long 6 200)
freqs=(97 1000 199 499)
ustacks=(8192 0 65536 1024)
kstacks=(127 2 0 16)
ring_pages=(256 2 64 16)
# Every set keeps samples (the rounds check them); each round's causal
# kinds have their tracepoints attached at start.
events=(all sample,switch,waking sample,fork,exec,exit sample,switch,exit)
one_in=(1 4 1 64)
if [ "$LONG" = 1 ]; then
	freqs=(1000 1000 1000 1000)
	events=(all all all all)
fi

unload_module
# At the lowest priority: the load takes whatever CPU time the test leaves,
# and the test's own commands are not slowed down by it.
spawn storm storm nice -n 19 "$PROGS/fork-storm"
wait_line "fork-storm ready" "$TMPDIR/storm.out" '^ready pid='
say "fork-storm: $LINE"

for ((i = 0; i < rounds; i++)); do
	k=$((i % 4))
	consumer=$((i % 3 == 1))
	# Unloading while sampling: the module stops itself on the way out.
	unload_running=$((i % 3 == 2))
	pids=$storm
	[ $((i % 2)) -eq 0 ] || pids=all
	say "round $i ($((${EPOCHREALTIME/./} / 1000000)) s): freq ${freqs[k]} ustack ${ustacks[k]} kstack ${kstacks[k]} ring-pages ${ring_pages[k]} events ${events[k]} sched-one-in ${one_in[k]} pids $pids consumer $consumer unload-while-running $unload_running"

	load_module
	assert_eq "round $i: references after load" 0 "$(refcnt)"
	ctl "round $i: config set" config set freq "${freqs[k]}" ustack "${ustacks[k]}" \
		kstack "${kstacks[k]}" ring-pages "${ring_pages[k]}" pids "$pids" \
		events "${events[k]}" sched-one-in "${one_in[k]}"
	if [ "$consumer" -eq 1 ]; then
		dump_begin "dump$i"
		assert_gt "round $i: references while a consumer has the rings" "$(refcnt)" 0
	fi
	ctl "round $i: start" start
	# Sample the load for a moment (before changing what is sampled).
	nap 0.2
	if [ $((i % 2)) -eq 1 ]; then
		ctl "round $i: config set while sampling" config set \
			ustack "${ustacks[(k + 1) % 4]}" kstack "${kstacks[(k + 1) % 4]}" pids "$storm" \
			events sample sched-one-in "${one_in[(k + 1) % 4]}"
		# And sample a moment more with the new configuration.
		nap 0.2
	fi
	if [ "$unload_running" -eq 1 ]; then
		ctl "round $i: stats while sampling" --json stats
		assert_match "round $i: still running before the unload" "$OUT" '"running":true'
	else
		ctl "round $i: stop" stop
		ctl "round $i: stats" --json stats
	fi
	samples=0
	if [[ $OUT =~ \"total\":\{\"samples\":([0-9]+) ]]; then
		samples=${BASH_REMATCH[1]}
	fi
	assert_gt "round $i: samples taken" "$samples" 0
	if [ "$consumer" -eq 1 ]; then
		dump_end
		_lib_slurp summary "$TMPDIR/dump$i.err"
		assert_match "round $i: the consumer found no corrupt record" "$summary" '; 0 invalid$'
	fi
	assert_eq "round $i: references before unload (no consumer left)" 0 "$(refcnt)"
	ctl "round $i: unload" unload
	! module_loaded || die "round $i: /sys/module/taproot is still there after unload"
	[ ! -e /dev/taproot ] || die "round $i: /dev/taproot is still there after unload"
done

[ -e "/proc/$storm/stat" ] || die "fork-storm died during the test: $(cat "$TMPDIR/storm.err")"
wait_line "fork-storm counts its forks" "$TMPDIR/storm.out" '^forks=[1-9]'
kill "$storm"
last=$(tail -n 1 "$TMPDIR/storm.out")
say "fork-storm: $last"
[[ $last =~ ^forks=([0-9]+)\ execs=([0-9]+)\ failed=([0-9]+)$ ]] ||
	die "fork-storm's last line is not its counters: '$last'"
assert_gt "fork-storm's children exec'd" "${BASH_REMATCH[2]}" 0
assert_eq "fork-storm's children that did not exit 0" 0 "${BASH_REMATCH[3]}"
score cycles="$rounds" failures=0 forks="${BASH_REMATCH[1]}" execs="${BASH_REMATCH[2]}" \
	freqs="$(IFS=,; echo "${freqs[*]}")" cpus="$(nproc)"
