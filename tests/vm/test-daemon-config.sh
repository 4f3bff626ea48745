#!/bin/bash
# taprootd's configuration, logging, retention and status, with the real
# daemon, module and syslogd in the guest:
#   - --config FILE is read at start, and options on the command line win
#     over it (-i 1 against the file's "interval 30": a profile a second);
#   - --syslog: every line goes to syslog (busybox syslogd on /dev/log) as
#     taprootd[PID] with the daemon facility, and nothing to stderr;
#   - SIGHUP re-reads the file: the new output directory and retain apply
#     from then on, the interval stays the command line's; a file that does
#     not parse is not applied and says so;
#   - --retain 2 keeps exactly the two newest profiles of its pattern and
#     touches nothing else in the directory (nor the old directory);
#   - 'taprootctl status' reports taprootd's CPU time and resident memory as
#     /proc sees them;
#   - the module unloaded under it (sampling stopped, so taprootd has let go
#     of /dev/taproot): it logs that once, keeps running, and follows the
#     session of the module loaded again (with --start, starting it again):
#     profiles are written again, and it stops that session at exit;
#   - it follows a session that taprootctl starts and stops;
#   - SIGINT writes the partial profile of the interval and exits 0;
#   - with --start, it stops at exit only the session it started, not a
#     later one somebody else started after stopping that one.
# Each taprootd start reads kallsyms (seconds under TCG):
# vm-scope: userspace
# vm-timeout: 300
. "${0%/*}/lib.sh"
. "${0%/*}/lib-sampling.sh"

require_module
require_prog tapwork
require_taprootd
[ -x /bin/busybox ] || die "no /bin/busybox (busybox-static: scripts/deps)"

A=$TEST_TMP/a B=$TEST_TMP/b conf=$TEST_TMP/taprootd.conf
syslog=$TEST_TMP/syslog state=$TEST_TMP/taprootd.json
mkdir "$A" "$B"
# Not taprootd's: retention must leave them alone.
: >"$B/notes.txt"
: >"$B/cpu-latest.pb.gz"

# profiles DIR: PROFILES = the names of taprootd's profiles in DIR, sorted.
profiles() {
	local f
	PROFILES=()
	for f in "$1"/cpu-*.pb.gz; do
		[[ ${f##*/} =~ ^cpu-[0-9]{8}T[0-9]{6}Z\.pb\.gz$ ]] && PROFILES+=("${f##*/}")
	done
	return 0
}

# written DIR: WRITTEN = the profiles taprootd logged as written to DIR, in order.
written() {
	local line re="taprootd\[$daemon\]: [a-zA-Z ]+: $1/(cpu-[^:]+\.pb\.gz): [0-9]+ samples"
	WRITTEN=()
	while IFS= read -r line; do
		[[ $line =~ $re ]] && WRITTEN+=("${BASH_REMATCH[1]}")
	done <"$syslog"
	return 0
}

# wait_written DIR N: until taprootd has logged N profiles written to DIR.
wait_written() {
	local deadline=$((${EPOCHREALTIME/./} + 60 * 1000000))
	while written "$1" && [ ${#WRITTEN[@]} -lt "$2" ]; do
		[ "${EPOCHREALTIME/./}" -lt "$deadline" ] ||
			die "taprootd logged ${#WRITTEN[@]} profiles written to ${1##*/}, not $2, in 60 s: $(<"$syslog")"
		# taprootd writes once a second: nothing to block on.
		nap 0.2
	done
}

# log_line LABEL ERE: waits for a line of taprootd in the syslog matching ERE.
log_line() {
	wait_line "$1" "$syslog" "taprootd\[$daemon\]: $2" 60
}

# wait_count LABEL ERE N: waits until N lines of taprootd in the syslog match
# ERE; COUNT = how many do.
wait_count() {
	local line deadline=$((${EPOCHREALTIME/./} + 30 * 1000000))
	while :; do
		COUNT=0
		while IFS= read -r line; do
			[[ ! $line =~ taprootd\[$daemon\]:\ $2 ]] || COUNT=$((COUNT + 1))
		done <"$syslog"
		[ "$COUNT" -lt "$3" ] || return 0
		[ "${EPOCHREALTIME/./}" -lt "$deadline" ] ||
			die "$1: $COUNT lines /$2/ of taprootd in the syslog after 30 s, want $3: $(<"$syslog")"
		# Polling the log: nothing to block on.
		nap 0.2
	done
}

load_module
ctl "config set" config set freq 99

say "busybox syslogd on /dev/log"
rm -f /dev/log
spawn syslogd syslogd /bin/busybox syslogd -n -O "$syslog"
for ((i = 0; i < 200; i++)); do
	[ -S /dev/log ] && break
	# Waiting for syslogd to bind /dev/log: nothing to block on.
	nap 0.05
done
[ -S /dev/log ] || die "busybox syslogd made no /dev/log in 10 s: $(<"$TMPDIR/syslogd.err")"

spawn work tapwork "$PROGS/tapwork" 300
printf '%s\n' "# taprootd test configuration" "output $A" "interval 30" "retain 0" >"$conf"
say "taprootd -f --syslog -c CONF -i 1 --start (CONF: output a, interval 30, retain 0)"
spawn daemon taprootd "$TAPROOTD" -f --syslog -c "$conf" -i 1 --start --state "$state"
log_line "taprootd reads the rings" "sampling runs at 99 Hz: reading the rings"
assert_match "syslog: daemon facility, pid" "$LINE" "daemon\.info taprootd\[$daemon\]: "
wait_written "$A" 3
profiles "$A"
[ ${#PROFILES[@]} -ge 3 ] || die "--config output: ${#PROFILES[@]} profiles in a/, want >= 3"
# -i 1 beats the file's 30: three files within the wait above, a second apart.
# Names are cpu-YYYYMMDDTHHMMSSZ.pb.gz: compare seconds of the day, as
# HHMMSS read as one number jumps by 41 at a minute's end.
day_seconds() {
	local t=${1#cpu-}
	t=${t:9:6}
	echo $((10#${t:0:2} * 3600 + 10#${t:2:2} * 60 + 10#${t:4:2}))
}
t0=$(day_seconds "${WRITTEN[0]}") t2=$(day_seconds "${WRITTEN[2]}")
[ $((t2 - t0)) -le 10 ] || [ "${WRITTEN[0]:4:8}" != "${WRITTEN[2]:4:8}" ] ||
	die "interval: ${WRITTEN[0]} .. ${WRITTEN[2]}, not a second apart (-i 1 lost to the file's 30?)"

say "SIGHUP with CONF: output b, interval 30, retain 2"
printf '%s\n' "output $B" "interval 30" "retain 2" >"$conf"
kill -HUP "$daemon"
log_line "SIGHUP applied" "SIGHUP: .* re-read: output $B, interval 1 s, retain 2"
written "$A"
in_a=${#WRITTEN[@]}
wait_written "$B" 3
written "$A"
assert_eq "profiles written to a/ after the SIGHUP" "$in_a" "${#WRITTEN[@]}"

say "SIGHUP with a CONF that does not parse"
printf '%s\n' "output $A" "interval soon" >"$conf"
kill -HUP "$daemon"
log_line "bad file refused" "SIGHUP: .* not applied"
written "$B"
n=${#WRITTEN[@]}
wait_written "$B" $((n + 1))
written "$A"
assert_eq "profiles written to a/ after the refused SIGHUP" "$in_a" "${#WRITTEN[@]}"

say "sampling stopped: the last profiles, then --retain 2 in b/"
ctl "stop" stop
log_line "rings released" "sampling stopped: rings released"
# The interval under way when sampling stopped is written at its end.
nap 2.5
written "$B"
profiles "$B"
assert_eq "--retain 2: the two newest profiles" \
	"${WRITTEN[-2]} ${WRITTEN[-1]}" "${PROFILES[*]}"
[ -e "$B/notes.txt" ] && [ -e "$B/cpu-latest.pb.gz" ] ||
	die "retention deleted a file that is not taprootd's: $(ls "$B")"
profiles "$A"
[ ${#PROFILES[@]} -eq "$in_a" ] ||
	die "a/ has ${#PROFILES[@]} profiles, taprootd wrote $in_a there: retention touched it"
[ ! -s "$TMPDIR/taprootd.err" ] || die "--syslog, yet taprootd wrote to stderr: $(<"$TMPDIR/taprootd.err")"

say "taprootctl status: taprootd's CPU time and memory (it is idle now)"
# Idle, taprootd's CPU time and RSS barely move; its state file is rewritten
# every interval: one more interval, then compare with /proc read before
# and after each status. The state's CPU time is at most /proc's after
# (two fields of 10 ms ticks) and at most 250 ms below /proc's before
# (taprootd takes some 30 ms of CPU a second idle under TCG, the state
# file is up to a second old and two taprootctl runs take a second).
proc_cpu() {
	local stat f
	read -r stat <"/proc/$daemon/stat"
	read -r -a f <<<"${stat##*) }"
	echo $(((f[11] + f[12]) * 1000 / $(getconf CLK_TCK)))
}
# cpu_bracket WHAT CPU_MS BEFORE: CPU_MS between BEFORE - 250 and /proc's now.
cpu_bracket() {
	local after
	after=$(proc_cpu)
	[ "$2" -ge $(($3 - 250)) ] && [ "$2" -le $((after + 20)) ] ||
		die "$1: $2 ms of CPU, /proc/$daemon/stat says $3 before and $after after"
}
nap 1.5
proc_cpu_ms=$(proc_cpu)
proc_rss=
while read -r k v _; do
	[ "$k" != VmRSS: ] || proc_rss=$((v * 1024))
done <"/proc/$daemon/status"
TAPROOTD_STATE=$state expect_ok "status --json" "$CTL" --json status
re='"taprootd": *\{ *"pid": *([0-9]+),.*"cpu_ms": *([0-9]+), *"rss_bytes": *([0-9]+)'
[[ ${OUT//$'\n'/ } =~ $re ]] || die "status --json: no taprootd pid, cpu_ms, rss_bytes in: $OUT"
assert_eq "status: taprootd's pid" "$daemon" "${BASH_REMATCH[1]}"
cpu_ms=${BASH_REMATCH[2]} rss=${BASH_REMATCH[3]}
say "status: cpu_ms $cpu_ms, rss $rss; /proc: $proc_cpu_ms ms, VmRSS $proc_rss"
assert_gt "status: CPU time (kallsyms alone takes more)" "$cpu_ms" 100
cpu_bracket "status --json" "$cpu_ms" "$proc_cpu_ms"
assert_within "status: resident memory vs VmRSS" "$proc_rss" "$rss" 10
proc_cpu_ms=$(proc_cpu)
TAPROOTD_STATE=$state expect_ok "status" "$CTL" status
re='^  usage: +([0-9]+)\.([0-9]{2}) s CPU .*, ([0-9]+)\.([0-9]) MiB resident'
text_matches "$OUT" "$re" || die "status: no taprootd CPU and memory line in: $OUT"
cpu_ms=$((10#${BASH_REMATCH[1]} * 1000 + 10#${BASH_REMATCH[2]} * 10))
rss=$(((10#${BASH_REMATCH[3]} * 10 + 10#${BASH_REMATCH[4]}) * 104858))
# status prints hundredths of a second: 10 ms more below.
cpu_bracket "status" "$cpu_ms" "$((proc_cpu_ms - 10))"
assert_within "status: MiB resident vs VmRSS" "$proc_rss" "$rss" 10

say "a session taprootctl starts and stops: taprootd follows it"
ctl "start" start
wait_count "taprootd follows taprootctl start" "sampling runs at 99 Hz: reading the rings" 2
ctl "stop" stop
wait_count "taprootd follows taprootctl stop" "sampling stopped: rings released" 2

say "the module unloaded under taprootd, then loaded again"
expect_ok "rmmod with taprootd running, sampling stopped" rmmod taproot
log_line "taprootd sees the module go" "the taproot module is gone"
# It asks once a second: two more seconds, and still one line about it.
nap 2
wait_count "the module's absence logged once" "the taproot module is gone" 1
[ "$COUNT" -eq 1 ] || die "taprootd logged the module's absence $COUNT times, want once: $(<"$syslog")"
[ -e "/proc/$daemon/stat" ] || die "taprootd exited when the module went away: $(<"$syslog")"
written "$B"
n=${#WRITTEN[@]}
load_module
# With --start it starts the new module's sampling itself (at its default
# rate), reads the rings, writes profiles, and stops it at exit.
wait_count "taprootd sees the module back" "the taproot module is loaded again" 1
wait_count "taprootd follows the reloaded module" "sampling runs at [0-9]+ Hz: reading the rings" 3
wait_written "$B" $((n + 1))
# SIGINT 0.3 to 0.6 s into an interval (1 s here), by the newest
# profile's mtime, which is when the last one ended: at 19 Hz with
# tapwork running, the partial profile then has samples. A SIGINT just
# after an interval's end finds it empty, and taprootd writes no empty
# profile (seen twice in CI: a fixed nap after the file was seen landed
# there when the guest ran late).
for ((i = 0; ; i++)); do
	newest=
	for f in "$B"/cpu-*.pb.gz; do
		[[ -n $newest && ! $f -nt $newest ]] || newest=$f
	done
	# Retention (--retain 2) may delete it meanwhile, if the guest
	# stalled over two intervals (seen once in CI): look again.
	if mtime=$(stat -c %.6Y "$newest" 2>/dev/null); then
		age=$((${EPOCHREALTIME/./} - ${mtime/./}))
		[ "$age" -lt 300000 ] || [ "$age" -ge 600000 ] || break
	fi
	[ "$i" -lt 500 ] || die "no moment 0.3 to 0.6 s after a profile in 500 looks (last: ${age:-no file} us)"
	# Polling the profiles' times: nothing to block on.
	nap 0.02
done
say "SIGINT: the partial profile of the interval, exit 0 ($((age / 1000)) ms into it)"
kill -INT "$daemon"
wait_exit "taprootd exits on SIGINT" "$daemon" 60
assert_eq "taprootd's exit status after SIGINT" 0 "$RC"
log_line "the last profile, at exit" "exit: $B/(cpu-[^:]+\.pb\.gz): [0-9]+ samples"
last=$B/${BASH_REMATCH[1]}
[ -s "$last" ] || die "the profile taprootd wrote at exit is not there: $last"
[ ! -e "$state" ] || die "the state file stays after a clean exit"
ctl "status after taprootd's exit" status
assert_match "taprootd stopped the sampling it started" "$OUT" "^running: +no$"

say "--start, then somebody stops and starts a session: exit leaves that one running"
spawn daemon taprootd "$TAPROOTD" -f --syslog -i 1 -o "$B" --start --state "$state"
wait_count "taprootd starts sampling" "sampling runs at [0-9]+ Hz: reading the rings" 1
ctl "stop" stop
wait_count "taprootd follows taprootctl stop" "sampling stopped: rings released" 1
ctl "start" start
wait_count "taprootd follows taprootctl start" "sampling runs at [0-9]+ Hz: reading the rings" 2
kill -TERM "$daemon"
wait_exit "taprootd exits on SIGTERM" "$daemon" 60
assert_eq "taprootd's exit status after SIGTERM" 0 "$RC"
ctl "status after taprootd's exit" status
assert_match "taprootd left running the session it did not start" "$OUT" "^running: +yes$"
ctl "stop" stop

say "syslog:"
sed 's/^/#   /' "$syslog"
