#!/bin/bash
# taprootd --sched-budget bounds a burst that follows a lull: a program
# that switches tens of thousands of times a second (pingpong), paused for
# a few seconds and resumed, is recorded at about the budget right away,
# not in full until taprootd looks again. The budget follows the switch
# rate's recent peak; a taprootd that followed the last second's rate alone
# went back to one in 1 during the lull and recorded the first second of
# the burst in full (tens of thousands of intervals, the rings overflowing).
#
# Intervals recorded over the 2 s after the resume: at most twice what the
# budget allows in that time (taprootd may halve N on the peak's decay,
# and a look at the rate is 100 ms apart).
# vm-timeout: 180
# vm-scope: userspace
. "${0%/*}/lib.sh"
. "${0%/*}/lib-sampling.sh"

require_module
require_prog pingpong
require_taprootd
budget=200

# total FIELD: the module's counter FIELD summed over the CPUs.
total() {
	expect_ok "taprootctl --json stats" "$CTL" --json stats
	[[ $OUT =~ \"total\":\{[^}]*\"$1\":([0-9]+) ]] || die "no total $1 in: $OUT"
	TOTAL=${BASH_REMATCH[1]}
}

load_module
spawn daemon taprootd "$TAPROOTD" -f -e cpu,offcpu --sched-budget "$budget" --start \
	-i 3600 -o "$TEST_TMP" --state "$TEST_TMP/state.json"
log=$TMPDIR/taprootd.err
wait_line "taprootd reads the rings" "$log" "reading the rings" 60

spawn pp pingpong taskset -c 0 "$PROGS/pingpong" 100000000 120
deadline=$((SECONDS + 30))
sched_one_in
while [ "$ONE_IN" -lt 8 ]; do
	[ $SECONDS -lt $deadline ] || die "sched-one-in still $ONE_IN after 30 s of pingpong: $(cat "$log")"
	nap 0.5
	sched_one_in
done
raised=$ONE_IN
say "under pingpong: one in $raised"

# The lull: pingpong stopped, its two threads off CPU.
kill -STOP "$pp"
# What a lull of a few seconds is: three of them, three times the last
# second that the old taprootd adapted to.
nap 3
total switches_selected
sel0=$TOTAL
total switches
sw0=$TOTAL
t0=$EPOCHREALTIME
kill -CONT "$pp"
# The burst.
nap 2
total switches_selected
sel1=$TOTAL
total switches
sw1=$TOTAL
t1=$EPOCHREALTIME
kill -STOP "$pp"
sched_one_in
secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
sel=$((sel1 - sel0))
say "after a 3 s lull: $((sw1 - sw0)) switches in $secs s, $sel intervals recorded" \
	"(one in $raised before, one in $ONE_IN after)"
assert_gt "pingpong switched after its resume" $((sw1 - sw0)) $((budget * 4))
allowed=$(awk -v s="$secs" -v b="$budget" 'BEGIN { printf "%d", 2 * b * s }')
assert_le "intervals recorded in the burst, at most twice the budget ($allowed)" "$sel" "$allowed"

kill -KILL "$pp"
kill -TERM "$daemon"
wait "$daemon" || die "taprootd exited with status $?: $(cat "$log")"
