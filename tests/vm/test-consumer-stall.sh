#!/bin/bash
# A consumer that stops reading (issue #7, point 3): 'taprootctl dump' has
# the rings mapped and is stopped with SIGSTOP for STALL seconds while the
# module samples at 1000 Hz with every event on, into small rings:
#   - the system is unaffected: a workload (progs/rate-loop, a counting
#     thread per CPU) keeps its rate during the stall within a generous
#     bound of its rate before it (>= 1/2 of the median; only ratios inside
#     one guest run mean anything under TCG), and netlink answers;
#   - losses are counted: lost_full grows on every CPU during the stall,
#     samples (timer ticks that passed the filters) keep being counted,
#     and no more than the data size is written while nothing is released
#     (the kernel never writes over unread bytes);
#   - when the consumer resumes it reads valid records (dump: 0 invalid,
#     exit 0), and the accounting adds up exactly, per CPU: every record
#     the module wrote is read (taken = read + lost + still in the ring,
#     the ring drained at the end), and the losses announced in band (the
#     LOST records' counts) equal the lost counters; sample records read
#     plus all losses cover the samples taken. A last slow phase (10 Hz,
#     samples only, a reader all along) makes every pending loss reach the
#     ring in a LOST record before the final count, as in
#     test-ring-overload-accounting.sh.
# Quick mode: a 5 s stall; long mode (TAPROOT_LONG=1): one minute.
# vm-timeout: 240
# reliability: lifecycle-stress
. "${0%/*}/lib.sh"
. "${0%/*}/lib-sampling.sh"
require_module
require_prog rate-loop

stall=$(quick_long 5 60)
mapfile -t cpus <<<"$(cpus_online)"

module_fresh
ctl "config: 1000 Hz, all events, 4-page rings" \
	config set freq 1000 events all ring-pages 4 kstack 32 ustack 1024
spawn work work "$PROGS/rate-loop" --threads "${#cpus[@]}" --interval-ms 500
wait_line "rate-loop ready" "$TMPDIR/work.out" '^ready pid='

# The reader: taprootctl dump, its records counted per CPU by awk as they
# come: records, and the losses LOST records announce.
mkfifo "$TMPDIR/dump.fifo"
awk '{ i = index($0, "\"cpu\":"); if (!i) { bad++; next }
       c = substr($0, i + 6, 6) + 0; n[c]++
       if (index($0, "{\"type\":\"lost\"") == 1) {
         f[c] += substr($0, index($0, "\"full\":") + 7, 20) + 0
         m[c] += substr($0, index($0, "\"nested\":") + 9, 20) + 0
       } else if (index($0, "{\"type\":\"sample\"") == 1) s[c]++ }
     END { for (c in n) print "cpu", c, n[c], s[c] + 0, f[c] + 0, m[c] + 0
           print "unparsed", bad + 0 }' \
	<"$TMPDIR/dump.fifo" >"$TMPDIR/count.out" &
counter=$!
_spawned+=("$counter")
"$CTL" --json dump >"$TMPDIR/dump.fifo" 2>"$TMPDIR/dump.err" </dev/null &
DUMP_PID=$!
_spawned+=("$DUMP_PID")
dump_wait_ready "$TMPDIR/dump.err"

# snapshot ARRAY FIELD: ARRAY[cpu] = FIELD of every CPU, from the stats in OUT.
snapshot() {
	local -n _a=$1
	local c v
	_a=()
	while read -r c v; do
		[ -z "$c" ] || _a[$c]=$v
	done <<<"$(stats_field "$OUT" "$2")"
}
# now_ms: CLOCK_REALTIME in ms, as rate-loop prints it.
now_ms() {
	local t=${EPOCHREALTIME/./}
	echo $((t / 1000))
}

ctl "start" start
t_before=$(now_ms)
say "reading: the workload's rate with a consumer that keeps up"
nap 3	# the window in which the workload's rate is measured
t_stall=$(now_ms)

say "stall: the consumer stopped for $stall s"
kill -STOP "$DUMP_PID"
for ((i = 0; i < 600; i++)); do
	[ "$(_proc_field "$DUMP_PID" 3)" != T ] || break
	# SIGSTOP takes effect when the dump next leaves the kernel.
	nap 0.05
done
assert_eq "the dump is stopped" T "$(_proc_field "$DUMP_PID" 3)"
ctl "stats at the stall" --json stats
declare -A lost0=() samples0=() bytes0=()
snapshot lost0 lost_full
snapshot samples0 samples
snapshot bytes0 bytes
# The rings fill within milliseconds; then every record that does not fit
# is a loss. The length of the stall is the point of the test.
nap "$stall"
ctl "stats at the end of the stall" --json stats
declare -A lost1=() samples1=() bytes1=() rec2=()
snapshot lost1 lost_full
snapshot samples1 samples
snapshot bytes1 bytes
snapshot rec2 records
t_resume=$(now_ms)
data_size=$((4 * $(getconf PAGESIZE)))
for c in "${cpus[@]}"; do
	assert_gt "cpu$c: lost_full grew during the stall" "${lost1[$c]}" "${lost0[$c]}"
	assert_gt "cpu$c: samples were taken during the stall" "${samples1[$c]}" "${samples0[$c]}"
	# Nothing is released while the reader is stopped: the kernel never
	# writes over what it has not read.
	assert_le "cpu$c: bytes written during the stall <= the data size" \
		$((bytes1[$c] - bytes0[$c])) "$data_size"
done
kill -CONT "$DUMP_PID"
say "resumed"

# The records after the resume: the reader frees the rings, so a record
# can be written again on every CPU.
wait_counters "records written after the resume" records rec2
ctl "stop" stop
say "flush pending losses: 10 Hz, samples only, a reader all along"
ctl "config set freq 10 events sample kstack 0 ustack 0" \
	config set freq 10 events sample kstack 0 ustack 0
ctl "stats before the flush" --json stats
declare -A samples2=()
# shellcheck disable=SC2034 # read by wait_counters, by name
snapshot samples2 samples
ctl "start (flush)" start
wait_counters "flush: a sample on every CPU" samples samples2
ctl "stop (flush)" stop
kill -INT "$DUMP_PID"
wait_exit "taprootctl dump drains and exits on SIGINT" "$DUMP_PID" 120
dump_rc=$RC
wait_exit "the record counter ends" "$counter" 60
kill "$work"
_lib_slurp dumperr "$TMPDIR/dump.err"
say "dump: $dumperr"
assert_eq "taprootctl dump exit status" 0 "$dump_rc"
assert_match "the dump found no invalid record" "$dumperr" '; 0 invalid'

say "accounting"
ctl "final stats" --json stats
declare -A written=() samples=() lfull=() lnested=()
snapshot written records
snapshot samples samples
snapshot lfull lost_full
snapshot lnested lost_nested
declare -A nread=() nsample=() afull=() anested=()
while read -r w c n s f m; do
	case $w in
	cpu) nread[$c]=$n nsample[$c]=$s afull[$c]=$f anested[$c]=$m ;;
	unparsed) assert_eq "dump lines without a cpu" 0 "$c" ;;
	esac
done <"$TMPDIR/count.out"
tot_lost=0 tot_read=0
for c in "${cpus[@]}"; do
	say "cpu$c: samples ${samples[$c]}, written ${written[$c]}, read ${nread[$c]:-0}" \
		"(samples ${nsample[$c]:-0}), lost_full ${lfull[$c]} (announced ${afull[$c]:-0})," \
		"lost_nested ${lnested[$c]} (announced ${anested[$c]:-0})"
	assert_eq "cpu$c: records read = records written (the ring drained)" \
		"${written[$c]}" "${nread[$c]:-0}"
	assert_eq "cpu$c: lost_full = the LOST records' full counts" \
		"${lfull[$c]}" "${afull[$c]:-0}"
	assert_eq "cpu$c: lost_nested = the LOST records' nested counts" \
		"${lnested[$c]}" "${anested[$c]:-0}"
	assert_le "cpu$c: sample records read <= samples taken" \
		"${nsample[$c]:-0}" "${samples[$c]}"
	assert_le "cpu$c: samples taken <= sample records read + every loss" \
		"${samples[$c]}" $((${nsample[$c]:-0} + lfull[$c] + lnested[$c]))
	tot_lost=$((tot_lost + lfull[$c] + lnested[$c]))
	tot_read=$((tot_read + ${nread[$c]:-0}))
done

say "the workload's progress"
before=() during=()
while read -r w t r; do
	[ "$w" = rate ] || continue
	t=${t#t_ms=} r=${r#per_s=}
	# Intervals wholly inside a window (each ends at t, 500 ms long).
	if [ "$t" -gt $((t_before + 500)) ] && [ "$t" -le "$t_stall" ]; then
		before+=("$r")
	elif [ "$t" -gt $((t_stall + 500)) ] && [ "$t" -le "$t_resume" ]; then
		during+=("$r")
	fi
done <"$TMPDIR/work.out"
median() {
	local -a v
	mapfile -t v <<<"$(printf '%s\n' "$@" | sort -n)"
	echo "${v[$((${#v[@]} / 2))]}"
}
[ "${#before[@]}" -ge 2 ] || die "fewer than 2 rate intervals before the stall: ${before[*]}"
[ "${#during[@]}" -ge 4 ] || die "fewer than 4 rate intervals during the stall: ${during[*]}"
mb=$(median "${before[@]}")
md=$(median "${during[@]}")
say "rate: median $mb/s before (${#before[@]} intervals), $md/s during the stall (${#during[@]})"
assert_gt "the workload's rate during the stall is over half its rate before" \
	$((md * 2)) "$mb"

expect_ok "taprootctl unload" "$CTL" unload
! module_loaded || die "the module is still loaded after unload"

score "cases=${#cpus[@]}" failures=0 "stall_s=$stall" "lost=$tot_lost" "read=$tot_read" \
	"rate_ratio_pct=$((md * 100 / mb))"
