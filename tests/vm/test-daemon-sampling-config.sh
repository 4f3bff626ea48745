#!/bin/bash
# taprootd's sampling settings (freq, pids, kstack, ustack, ring-pages) in
# its --config file, with the real daemon and module:
#   - at start, with sampling stopped, the module takes the file's values
#     (taprootctl config shows them) and the profiles hold samples of the
#     one process of "pids" only;
#   - SIGHUP with a new freq (and pids all): the session taprootd started
#     is stopped and started again at the new rate; the next profiles hold
#     samples of both processes;
#   - SIGHUP with pids and kstack alone changed: applied while sampling
#     runs, no restart;
#   - a key dropped from the file leaves the module's value as it is;
#   - the command line wins (--freq against the file's freq);
#   - a session someone else started is left alone, and taprootd says so.
# vm-scope: userspace
# vm-timeout: 300
. "${0%/*}/lib.sh"
. "${0%/*}/lib-sampling.sh"

require_module
require_pprof
require_prog tapwork
require_taprootd

conf=$TEST_TMP/taprootd.conf out=$TEST_TMP/profiles state=$TEST_TMP/taprootd.json
log=$TMPDIR/taprootd.err
mkdir "$out"

# config_is KEY VALUE: taprootctl config shows KEY: VALUE.
config_is() {
	ctl "config" config
	assert_match "taprootctl config: $1" "$OUT" "^$1: +$2\$"
}

# wait_profiles N: until taprootd has written N profiles since the last
# mark_profiles; NEWEST = the last of them.
_marked=0
mark_profiles() {
	local f
	_marked=0
	for f in "$out"/cpu-*.pb.gz; do
		[ -e "$f" ] && _marked=$((_marked + 1))
	done
	return 0
}
wait_profiles() {
	local f n deadline=$((${EPOCHREALTIME/./} + 60 * 1000000))
	while :; do
		n=0 NEWEST=
		for f in "$out"/cpu-*.pb.gz; do
			[ -e "$f" ] || continue
			n=$((n + 1))
			NEWEST=$f
		done
		[ $((n - _marked)) -lt "$1" ] || return 0
		[ "${EPOCHREALTIME/./}" -lt "$deadline" ] ||
			die "taprootd wrote $((n - _marked)) profiles in 60 s, want $1: $(<"$log")"
		# taprootd writes once a second: nothing to block on.
		nap 0.2
	done
}

# tapwork_pids PROFILE: PIDS = the pids of the profile's samples of tapwork.
tapwork_pids() {
	local line comm= p
	expect_ok "pprof -traces $1" "$PPROF" -traces -symbolize=none "$1"
	PIDS=()
	while IFS= read -r line; do
		if [[ $line =~ ^[[:space:]]+comm:[[:space:]]+(.*)$ ]]; then
			comm=${BASH_REMATCH[1]}
		elif [[ $line =~ ^[[:space:]]+pid:[[:space:]]+([0-9]+)$ && $comm == tapwork ]]; then
			p=${BASH_REMATCH[1]}
			[[ " ${PIDS[*]} " == *" $p "* ]] || PIDS+=("$p")
		fi
	done <<<"$OUT"
}

# count_lines ERE: COUNT = lines of taprootd's log matching ERE.
count_lines() {
	local line
	COUNT=0
	while IFS= read -r line; do
		[[ ! $line =~ $1 ]] || COUNT=$((COUNT + 1))
	done <"$log"
}

module_fresh
spawn one tapwork "$PROGS/tapwork" 300
spawn two tapwork2 "$PROGS/tapwork" 300

say "CONF: freq 49, pids $one, kstack 8, ustack 4096, ring-pages 64"
printf '%s\n' "freq 49" "pids $one" "kstack 8" "ustack 4096" "ring-pages 64" >"$conf"
spawn daemon taprootd "$TAPROOTD" -f -c "$conf" -i 1 -o "$out" --start --state "$state"
wait_line "taprootd reads the rings" "$log" "sampling runs at 49 Hz: reading the rings" 60
assert_contains "taprootd logs the settings it applied" "$(<"$log")" \
	"the module's sampling: freq 49 Hz, pids $one, kstack 8, ustack 4096, ring-pages 64"
config_is freq 49
config_is pids "$one"
config_is kstack 8
config_is ustack 4096
config_is ring-pages 64
mark_profiles
wait_profiles 2
tapwork_pids "$NEWEST"
assert_eq "pids $one: the tapwork processes sampled" "$one" "${PIDS[*]}"

say "SIGHUP, CONF: freq 99, pids all, kstack 8, ustack 4096, ring-pages 64"
printf '%s\n' "freq 99" "pids all" "kstack 8" "ustack 4096" "ring-pages 64" >"$conf"
kill -HUP "$daemon"
wait_line "taprootd restarts its session" "$log" \
	"freq 99 Hz, pids all: restarting the session taprootd started" 60
wait_line "taprootd reads the rings again" "$log" "sampling runs at 99 Hz: reading the rings" 60
config_is freq 99
config_is pids all
ctl "status" status
assert_match "sampling runs after the restart" "$OUT" "^running: +yes$"
# Two profiles from now: the second is all of the new session's.
mark_profiles
wait_profiles 2
tapwork_pids "$NEWEST"
[ "${#PIDS[@]}" -eq 2 ] || die "pids all: samples of tapwork ${PIDS[*]}, want $one and $two"

say "SIGHUP, CONF: freq 99, pids $two, kstack 16: applied while sampling runs"
count_lines "restarting the session"
restarts=$COUNT
printf '%s\n' "freq 99" "pids $two" "kstack 16" >"$conf"
kill -HUP "$daemon"
wait_line "taprootd applies them at once" "$log" \
	"the module's sampling: pids $two, kstack 16\$" 60
config_is pids "$two"
config_is kstack 16
# ustack and ring-pages left the file: the module keeps what it had.
config_is ustack 4096
config_is ring-pages 64
count_lines "restarting the session"
assert_eq "no restart for pids and kstack" "$restarts" "$COUNT"
mark_profiles
wait_profiles 2
tapwork_pids "$NEWEST"
assert_eq "pids $two: the tapwork processes sampled" "$two" "${PIDS[*]}"

kill -TERM "$daemon"
wait_exit "taprootd exits on SIGTERM" "$daemon" 60
assert_eq "taprootd's exit status" 0 "$RC"

say "the command line wins: --freq 29 against the file's freq 99"
printf '%s\n' "freq 99" "pids all" >"$conf"
: >"$log"
spawn daemon taprootd "$TAPROOTD" -f -c "$conf" --freq 29 -i 1 -o "$out" --start \
	--state "$state"
wait_line "taprootd runs at the command line's rate" "$log" \
	"sampling runs at 29 Hz: reading the rings" 60
config_is freq 29
kill -TERM "$daemon"
wait_exit "taprootd exits on SIGTERM" "$daemon" 60

say "a session taprootctl started: left alone"
ctl "start" start
: >"$log"
spawn daemon taprootd "$TAPROOTD" -f -c "$conf" -i 1 -o "$out" --state "$state"
wait_line "taprootd says it leaves it" "$log" \
	"sampling runs in a session taprootd did not start: freq 99 Hz not applied" 60
config_is freq 29
kill -TERM "$daemon"
wait_exit "taprootd exits on SIGTERM" "$daemon" 60
ctl "status" status
assert_match "the session taprootctl started still runs" "$OUT" "^running: +yes$"
ctl "stop" stop
