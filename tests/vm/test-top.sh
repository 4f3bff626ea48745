#!/bin/bash
# taprootctl top in a real terminal (tmux: keys sent, the pane read), with
# the real daemon and module:
#   - beside taprootd (which stays the rings' consumer): tapwork's leaves
#     are on screen, leaf_x's and leaf_y's self shares near tapwork's own
#     60/40 split of its time, in its process, within the pane's width;
#   - keys: s sorts by total (the rows' totals then descend), / filters
#     (every row holds the text), g drops the PROCESS column, q quits and
#     leaves taprootd running;
#   - not on a terminal, --count 2 prints two snapshots;
#   - without a taprootd it runs one of its own, and at q that one is gone,
#     with its files, and sampling stopped.
# vm-scope: userspace
# vm-timeout: 300
. "${0%/*}/lib.sh"
. "${0%/*}/lib-sampling.sh"

require_module
require_prog tapwork
require_taprootd
command -v tmux >/dev/null || die "no tmux (scripts/deps installs it)"

state=$TEST_TMP/taprootd.json out=$TEST_TMP/profiles
mkdir "$out"
export TMUX_TMPDIR=$TEST_TMP
tmux_() { tmux -L taproot-test -f /dev/null "$@"; }
trap '_cleanup_spawned; tmux_ kill-server 2>/dev/null || true' EXIT

# pane_wait LABEL ERE [SECONDS]: until the pane shows a line matching ERE;
# PANE = the whole pane, LINE = that line.
pane_wait() {
	local deadline=$((${EPOCHREALTIME/./} + ${3:-60} * 1000000)) line
	while :; do
		PANE=$(tmux_ capture-pane -p -t top 2>/dev/null) || PANE=
		while IFS= read -r line; do
			if [[ $line =~ $2 ]]; then
				LINE=$line
				return 0
			fi
		done <<<"$PANE"
		[ "${EPOCHREALTIME/./}" -lt "$deadline" ] ||
			die "$1: no line /$2/ on screen after ${3:-60} s; the pane:
$PANE"
		# top redraws once a second: nothing to block on.
		nap 0.2
	done
}

# share LINE COLUMN: the percentage in column 1 (SELF) or 2 (TOTAL) of a row.
share() {
	local -a w
	read -r -a w <<<"$1"
	echo "${w[$(($2 - 1))]%\%}"
}

# in_range LABEL VALUE LOW HIGH: LOW <= VALUE <= HIGH (decimals).
in_range() {
	awk -v v="$2" -v lo="$3" -v hi="$4" 'BEGIN { exit !(v >= lo && v <= hi) }' ||
		die "$1: $2 not in [$3, $4]; the pane:
$PANE"
}

module_fresh
ctl "config" config set freq 99
spawn work tapwork "$PROGS/tapwork" 600
spawn daemon taprootd "$TAPROOTD" -f -i 60 -o "$out" --start --state "$state"
wait_line "taprootd reads the rings" "$TMPDIR/taprootd.err" "sampling runs at 99 Hz" 60

say "top beside taprootd, in a 100x30 terminal, a refresh every 3 s"
# 3 s: about 150 samples of the leaves a refresh under TCG, the split's
# standard error 4 points (a second's 50 made it 7: a clean clone's make
# check once read 80/20).
tmux_ new-session -d -s top -x 100 -y 30 "TAPROOTD_STATE=$state $CTL top --refresh 3; sleep 600"
pane_wait "the header" "^taproot top - .* samples in [0-9.]+ s - sort: self"
# A whole refresh that tapwork ran through, then both leaves from one
# screen (two reads may straddle a refresh).
pane_wait "leaf_x on screen" "^ *[0-9.]+% +[0-9.]+% +tapwork +leaf_x"
nap 3.5
for ((i = 0; ; i++)); do
	pane_wait "leaf_x" "^ *[0-9.]+% +[0-9.]+% +tapwork +leaf_x"
	x=$(share "$LINE" 1)
	yline=$(grep -E "^ *[0-9.]+% +[0-9.]+% +tapwork +leaf_y" <<<"$PANE") && break
	[ "$i" -lt 10 ] || die "leaf_y not on a screen with leaf_x; the pane:
$PANE"
	nap 1
done
y=$(share "$yline" 1)
say "self: leaf_x $x%, leaf_y $y% (tapwork splits its time 60/40)"
# tapwork is most of the samples (the idle CPU is not sampled; tmux and
# top redrawing under TCG are the rest), and splits them as it does.
in_range "leaf_x and leaf_y together" "$(awk -v x="$x" -v y="$y" 'BEGIN { print x + y }')" 30 100
in_range "leaf_x's part of the two" "$(awk -v x="$x" -v y="$y" 'BEGIN { print 100 * x / (x + y) }')" 45 75
while IFS= read -r line; do
	[ "${#line}" -le 100 ] || die "a line wider than the terminal (${#line}): $line"
done <<<"$PANE"
[ -d "/proc/$daemon" ] || die "taprootd exited"

say "s: sorted by total"
tmux_ send-keys -t top s
pane_wait "sort: total" "sort: total"
prev= rows=0
while IFS= read -r line; do
	[[ $line =~ ^\ *[0-9.]+%\ +([0-9.]+)% ]] || continue
	t=${BASH_REMATCH[1]}
	[ -z "$prev" ] || awk -v a="$prev" -v b="$t" 'BEGIN { exit !(a >= b) }' ||
		die "total not descending: $prev then $t; the pane:
$PANE"
	prev=$t rows=$((rows + 1))
done <<<"$PANE"
[ "$rows" -ge 5 ] || die "$rows rows sorted by total; the pane:
$PANE"

say "/leaf: only rows holding 'leaf'"
tmux_ send-keys -t top / l e a f Enter
pane_wait "filter: leaf" "filter: leaf"
nap 3.5
PANE=$(tmux_ capture-pane -p -t top)
rows=0
while IFS= read -r line; do
	[[ $line =~ ^\ *[0-9.]+%\ +[0-9.]+% ]] || continue
	[[ ${line,,} == *leaf* ]] || die "a row without 'leaf' after the filter: $line"
	rows=$((rows + 1))
done <<<"$PANE"
[ "$rows" -ge 2 ] || die "$rows rows for 'leaf'; the pane:
$PANE"

say "g: rows by function, no PROCESS column"
tmux_ send-keys -t top g
pane_wait "no process column" "^ +SELF +TOTAL +FUNCTION"

say "q: top quits, taprootd runs on"
tmux_ send-keys -t top q
deadline=$((${EPOCHREALTIME/./} + 10000000))
until ! pgrep -f "^$CTL top" >/dev/null; do
	[ "${EPOCHREALTIME/./}" -lt "$deadline" ] || die "top still runs 10 s after q"
	nap 0.1
done
tmux_ kill-server 2>/dev/null || true
[ -d "/proc/$daemon" ] || die "taprootd exited with top"

say "not on a terminal: --count 2"
TAPROOTD_STATE=$state run "$CTL" top --count 2 --refresh 0.5
[ "$RC" -eq 0 ] || die "top --count 2 exited $RC: $ERR"
n=$(grep -c "^taproot top - " <<<"$OUT") || true
assert_eq "snapshots printed" 2 "$n"
assert_match "tapwork's leaf in the snapshots" "$OUT" "tapwork +leaf_x"

kill -TERM "$daemon"
wait_exit "taprootd exits" "$daemon" 60
ctl "status" status
assert_match "sampling stopped with taprootd" "$OUT" "^running: +no$"

say "no taprootd: top runs one of its own"
tmux_ new-session -d -s top -x 100 -y 30 "TAPROOTD_STATE=$TEST_TMP/none.json $CTL top; sleep 600"
pane_wait "leaf_x, through top's own taprootd" "^ *[0-9.]+% +[0-9.]+% +tapwork +leaf_x" 120
own=$(pgrep -x taprootd) || die "no taprootd runs while top shows samples"
own_dir=$(ls -d /tmp/taprootctl-top-* 2>/dev/null) || die "no directory of top's own taprootd"
tmux_ send-keys -t top q
deadline=$((${EPOCHREALTIME/./} + 30000000))
while [ -d "$own_dir" ] || [ -d "/proc/$own" ]; do
	[ "${EPOCHREALTIME/./}" -lt "$deadline" ] ||
		die "after q: taprootd $own $([ -d "/proc/$own" ] && echo runs) $own_dir $([ -d "$own_dir" ] && echo stays)"
	nap 0.1
done
tmux_ kill-server 2>/dev/null || true
ctl "status" status
assert_match "top's taprootd stopped the sampling it started" "$OUT" "^running: +no$"
