# shellcheck shell=bash
# Helpers of the sampling and ring tests (test-sampling-*.sh, test-ring-*.sh,
# test-lifecycle-*.sh), on top of lib.sh. A test sources both:
#
#	. "${0%/*}/lib.sh"
#	. "${0%/*}/lib-sampling.sh"
#
# Conventions added here:
#   - background processes are started with spawn and killed when the test
#     exits, whatever way it exits;
#   - a wait for something that takes time (a process to print a line, to
#     exit) has a deadline and fails the test, saying what did not happen,
#     when the deadline passes; nap is the only fixed wait, and every call
#     says why it waits;
#   - records are read with 'taprootctl dump --json' (dump_begin/dump_end)
#     and counters with 'taprootctl stats --json', and checked by one python
#     per test (python starts slowly under TCG).

# The programs of tests/vm/progs (built by tests/vm/build-progs into $PROGS).
require_prog() {
	local p
	for p in "$@"; do
		[ -x "$PROGS/$p" ] ||
			die "no $PROGS/$p: run tests/vm/build-progs (scripts/vm does before booting)"
	done
}

# require_taprootd: TAPROOTD = the daemon built by 'make userspace'.
require_taprootd() {
	TAPROOTD=$REPO/ctl/taprootd
	[ -x "$TAPROOTD" ] || die "no ${TAPROOTD#"$REPO"/}: run 'make userspace'"
}

# nap SECONDS: sleep without an exec (read times out on a FIFO that nobody
# writes; the guest has no /dev/fd for a process substitution). Callers say
# why they wait.
_nap_fd=
nap() {
	if [ -z "$_nap_fd" ]; then
		mkfifo "$TMPDIR/.nap"
		exec {_nap_fd}<>"$TMPDIR/.nap"
	fi
	read -r -t "$1" -u "$_nap_fd" _ || true
}

_spawned=()
_cleanup_spawned() {
	local p
	for p in "${_spawned[@]}"; do
		kill -KILL "$p" 2>/dev/null || true
	done
}
trap _cleanup_spawned EXIT

# spawn VAR NAME CMD [ARGS...]: CMD in the background, stdout in
# $TMPDIR/NAME.out, stderr in $TMPDIR/NAME.err; VAR = its PID (CMD is
# exec'ed by the subshell, so it is CMD's own PID). Killed at exit.
spawn() {
	local -n _pid=$1
	local name=$2
	shift 2
	"$@" >"$TMPDIR/$name.out" 2>"$TMPDIR/$name.err" </dev/null &
	_pid=$!
	_spawned+=("$_pid")
}

# wait_line LABEL FILE ERE [SECONDS]: waits until a line of FILE matches ERE
# (default deadline 30 s); LINE = that line.
# shellcheck disable=SC2034 # LINE is for the caller
wait_line() {
	local label=$1 file=$2 ere=$3 secs=${4:-30} line
	local deadline=$((${EPOCHREALTIME/./} + secs * 1000000))
	while :; do
		if [ -f "$file" ]; then
			while IFS= read -r line; do
				if [[ $line =~ $ere ]]; then
					LINE=$line
					return 0
				fi
			done <"$file"
		fi
		[ "${EPOCHREALTIME/./}" -lt "$deadline" ] ||
			die "$label: no line /$ere/ in ${file##*/} after $secs s: $(cat "$file" "${file%.out}.err" 2>/dev/null)"
		# Polling a file the process writes: it has nothing to wait on.
		nap 0.05
	done
}

# proc_state PID: what a process is doing, for a failure message.
proc_state() {
	local s w k
	s=$(grep -E '^(Name|State|SigIgn|SigCgt):' "/proc/$1/status" 2>/dev/null | tr '\n\t' '  ') || true
	w=$(cat "/proc/$1/wchan" 2>/dev/null) || true
	k=$(tr '\n' ' ' <"/proc/$1/stack" 2>/dev/null) || true
	echo "pid $1: $s wchan $w; stack: $k"
}

# wait_exit LABEL PID [SECONDS]: waits until the spawned PID exits (default
# deadline 30 s); RC = its exit status.
wait_exit() {
	local label=$1 pid=$2 secs=${3:-30}
	local deadline=$((${EPOCHREALTIME/./} + secs * 1000000))
	while [ -e "/proc/$pid/stat" ] && [ "$(_proc_field "$pid" 3)" != Z ]; do
		[ "${EPOCHREALTIME/./}" -lt "$deadline" ] ||
			die "$label: still running after $secs s: $(proc_state "$pid")"
		# The process was told to finish; nothing to block on but time.
		nap 0.05
	done
	RC=0
	wait "$pid" || RC=$?
}

# _proc_field PID N: field N of /proc/PID/stat (N >= 3, after the comm).
_proc_field() {
	local stat rest
	read -r stat 2>/dev/null <"/proc/$1/stat" || return 0
	rest=${stat##*) }
	local -a f
	read -r -a f <<<"$rest"
	echo "${f[$(($2 - 3))]}"
}

# kv LINE KEY: the value of KEY=VALUE in LINE (words separated by blanks).
kv() {
	local w
	for w in $1; do
		if [ "${w%%=*}" = "$2" ]; then
			echo "${w#*=}"
			return 0
		fi
	done
	die "no $2= in: $1"
}

# ctl LABEL ARGS...: taprootctl ARGS must succeed (OUT, ERR, RC as run).
ctl() {
	local label=$1
	shift
	expect_ok "$label" "$CTL" "$@"
}

# module_fresh [PARAM=VALUE...]: the module loaded anew, so its counters and
# ring positions start from zero.
module_fresh() {
	if module_loaded; then
		unload_module
		! module_loaded || die "taproot could not be unloaded before the test"
	fi
	load_module "$@"
}

# mapped_by PID: the process has /dev/taproot mapped.
mapped_by() {
	local line
	while IFS= read -r line; do
		[[ $line != *" /dev/taproot" ]] || return 0
	done 2>/dev/null <"/proc/$1/maps"
	return 1
}

# catches_sigint PID: the process has a handler for SIGINT (SigCgt bit 1).
catches_sigint() {
	local k v
	while read -r k v; do
		if [ "$k" = SigCgt: ]; then
			(((0x$v >> 1) & 1)) && return 0
			return 1
		fi
	done 2>/dev/null <"/proc/$1/status"
	return 1
}

# dump_begin NAME [DUMP ARGS...]: 'taprootctl --json dump ARGS' in the
# background, records in $TMPDIR/NAME.out (JSON Lines), its summary in
# NAME.err. Returns once the dump is ready: it has the rings mapped, so it
# is the consumer (which the module never samples) before anything is
# sampled, and it has set up its SIGINT handler, which comes after reading
# /proc/kallsyms: a second or more of CPU time under TCG, which would
# otherwise be taken from what the test samples.
DUMP_PID=
dump_begin() {
	local name=$1
	shift
	spawn DUMP_PID "$name" "$CTL" --json dump "$@"
	DUMP_NAME=$name
	dump_wait_ready "$TMPDIR/$name.err"
}

# dump_wait_ready ERRFILE: waits until the dump DUMP_PID (started by
# dump_begin, or by a test that sends its output elsewhere, a FIFO say)
# has mapped the rings and catches SIGINT; fails with ERRFILE, its stderr,
# if it exits first.
dump_wait_ready() {
	local i
	for ((i = 0; i < 1200; i++)); do
		if mapped_by "$DUMP_PID" && catches_sigint "$DUMP_PID"; then
			return 0
		fi
		[ -e "/proc/$DUMP_PID/stat" ] ||
			die "taprootctl dump: exited before it was ready: $(cat "$1")"
		# Waiting for the dump to map the rings and install its SIGINT
		# handler: nothing to block on.
		nap 0.05
	done
	die "taprootctl dump: not ready (rings mapped, SIGINT caught) after 60 s: $(proc_state "$DUMP_PID")"
}

# dump_end: SIGINT to the dump started by dump_begin, which then drains the
# rings and exits; it must exit 0. Sampling must be stopped first, or the
# rings keep filling after the drain. DUMP_OUT = the file of the records.
# (A background job of a script starts
# with SIGINT ignored, and the dump installs its handler late: dump_begin
# waited for it, so the SIGINT is not lost.)
# shellcheck disable=SC2034 # DUMP_OUT is for the caller
dump_end() {
	kill -INT "$DUMP_PID"
	wait_exit "taprootctl dump drains and exits on SIGINT" "$DUMP_PID" 60
	[ "$RC" -eq 0 ] ||
		die "taprootctl dump exited $RC: $(cat "$TMPDIR/$DUMP_NAME.err")"
	DUMP_OUT=$TMPDIR/$DUMP_NAME.out
}

# stats_json FILE: 'taprootctl --json stats' into FILE.
stats_json() {
	ctl "taprootctl --json stats" --json stats
	printf '%s\n' "$OUT" >"$1"
}

# stats_field JSON FIELD: "CPU VALUE" for each CPU of 'taprootctl --json
# stats' output JSON, VALUE being that CPU's counter FIELD.
stats_field() {
	local s=$1 re="\"cpu\":([0-9]+),[^}]*\"$2\":([0-9]+)"
	while [[ $s =~ $re ]]; do
		echo "${BASH_REMATCH[1]} ${BASH_REMATCH[2]}"
		s=${s#*"${BASH_REMATCH[0]}"}
	done
}

# module_stats: one plain 'taprootctl stats' (no python: it starts slowly
# under TCG, and with --all it is sampled too) into the associative array
# MSTAT: running (yes|no), unwind_tables, unwind_procs, unwind_mem_used
# (0 without uploads) and walks:END, the module's walks on all CPUs that
# ended END (walks:complete, walks:no-proc, ... as taprootctl names them;
# 0 when none did).
declare -A MSTAT=()
module_stats() {
	local line re_up='^unwind uploads: ([0-9]+) tables, ([0-9]+) processes, ([0-9]+) bytes'
	local re_end='([a-z-]+) ([0-9]+)(, )?'
	local ends e
	ctl "taprootctl stats" stats
	MSTAT=([running]=no [unwind_tables]=0 [unwind_procs]=0 [unwind_mem_used]=0)
	for e in complete max-frames no-proc stale no-mapping no-cfi slow-rule fault bad-frame; do
		MSTAT[walks:$e]=0
	done
	while IFS= read -r line; do
		if [[ $line =~ ^running:\ (yes|no) ]]; then
			MSTAT[running]=${BASH_REMATCH[1]}
		elif [[ $line =~ $re_up ]]; then
			MSTAT[unwind_tables]=${BASH_REMATCH[1]}
			MSTAT[unwind_procs]=${BASH_REMATCH[2]}
			MSTAT[unwind_mem_used]=${BASH_REMATCH[3]}
		elif [[ $line =~ ^unwind\ walks:\ [0-9]+\ \(([^\)]*)\) ]]; then
			ends=${BASH_REMATCH[1]}
			while [[ $ends =~ ^$re_end ]]; do
				MSTAT[walks:${BASH_REMATCH[1]}]=${BASH_REMATCH[2]}
				ends=${ends#"${BASH_REMATCH[0]}"}
			done
		fi
	done <<<"$OUT"
}

# wait_uploaded LABEL PID [SECONDS]: waits (default deadline 60 s) until
# the module holds mappings of a process and a table for each executable
# file PID maps: what the uploads of a recording of PID alone give once its
# tables are compiled (the consumer's own process is never uploaded).
# Seen twice in a row: a process's mappings are set right after its last
# table, in the same upload.
wait_uploaded() {
	local label=$1 pid=$2 secs=${3:-60} files seen=0
	local perms path
	local deadline=$((${EPOCHREALTIME/./} + secs * 1000000))
	local -A exe=()
	while read -r _ perms _ _ _ path; do
		[[ $perms != *x* || $path != /* ]] || exe[$path]=1
	done <"/proc/$pid/maps" || die "$label: no /proc/$pid/maps"
	files=${#exe[@]}
	while :; do
		module_stats
		if [ "${MSTAT[unwind_procs]}" -ge 1 ] && [ "${MSTAT[unwind_tables]}" -ge "$files" ]; then
			seen=$((seen + 1))
			[ "$seen" -lt 2 ] || return 0
		else
			seen=0
		fi
		[ "${EPOCHREALTIME/./}" -lt "$deadline" ] ||
			die "$label: after $secs s the module holds ${MSTAT[unwind_procs]} processes'" \
				"mappings and ${MSTAT[unwind_tables]} tables; pid $pid maps $files" \
				"executable files (${!exe[*]})"
		# The uploads are the recorder's work, paced by its budget.
		nap 0.2
	done
}

# wait_walks_current LABEL [SECONDS]: waits (default deadline 60 s) until
# the module's walks go on whole: between two reads of its stats, walks
# ended complete and none ended for want of an upload (no-proc, stale,
# no-mapping). With one process recorded, whose maps no longer change:
# its uploads are current. MSTAT holds the last read.
wait_walks_current() {
	local label=$1 secs=${2:-60} done0 miss0 done1 miss1
	local deadline=$((${EPOCHREALTIME/./} + secs * 1000000))
	module_stats
	done0=${MSTAT[walks:complete]}
	miss0=$((${MSTAT[walks:no-proc]} + ${MSTAT[walks:stale]} + ${MSTAT[walks:no-mapping]}))
	while :; do
		# The walks are the sampled threads' to make, at their pace.
		nap 0.5
		module_stats
		done1=${MSTAT[walks:complete]}
		miss1=$((${MSTAT[walks:no-proc]} + ${MSTAT[walks:stale]} + ${MSTAT[walks:no-mapping]}))
		[ "$done1" -le "$done0" ] || [ "$miss1" -ne "$miss0" ] || return 0
		[ "${EPOCHREALTIME/./}" -lt "$deadline" ] ||
			die "$label: after $secs s the module's walks still end for want of" \
				"uploads ($((miss1 - miss0)) in the last 0.5 s, $((done1 - done0)) complete)"
		done0=$done1 miss0=$miss1
	done
}

# record_held NAME RECORD-OPTIONS... -- CMD [ARGS...]: taprootctl record
# of CMD in the background, CMD's stdin a FIFO this shell holds open, so
# that CMD waits for a line (release_held) as long as the test needs;
# record's output (CMD's with it) in $TEST_TMP/NAME.out. REC = its pid.
record_held() {
	local name=$1
	shift
	rm -f "$TEST_TMP/$name.fifo"
	mkfifo "$TEST_TMP/$name.fifo"
	exec {HELD_FD}<>"$TEST_TMP/$name.fifo"
	"$CTL" record "$@" <"$TEST_TMP/$name.fifo" >"$TEST_TMP/$name.out" 2>&1 &
	REC=$!
	_spawned+=("$REC")
}

# release_held: the line the held command waits for ("go"), then its stdin
# at end of file.
release_held() {
	echo go >&"$HELD_FD"
	exec {HELD_FD}>&-
}

# sched_one_in: ONE_IN = the module's sched-one-in now ('taprootctl config').
sched_one_in() {
	ctl "taprootctl config" config
	[[ $OUT =~ sched-one-in:\ *([0-9]+) ]] || die "no sched-one-in in: $OUT"
	# shellcheck disable=SC2034 # the tests that call it read ONE_IN
	ONE_IN=${BASH_REMATCH[1]}
}

# wait_counters LABEL FIELD BASE [SECONDS]: polls 'taprootctl stats' until
# counter FIELD of every online CPU is above BASE[cpu] (BASE: the name of
# an associative array; missing entries are 0), default deadline 60 s.
wait_counters() {
	local label=$1 field=$2 secs=${4:-60} c v ok
	local -n _base=$3
	local deadline=$((${EPOCHREALTIME/./} + secs * 1000000))
	local -A now
	while :; do
		ctl "$label: taprootctl --json stats" --json stats
		now=()
		while read -r c v; do
			[ -z "$c" ] || now[$c]=$v
		done <<<"$(stats_field "$OUT" "$field")"
		ok=1
		for c in $(cpus_online); do
			[ "${now[$c]:-0}" -gt "${_base[$c]:-0}" ] || ok=0
		done
		[ "$ok" -eq 0 ] || return 0
		[ "${EPOCHREALTIME/./}" -lt "$deadline" ] ||
			die "$label: $field did not grow on every CPU within $secs s: $OUT"
		# The counters grow with the timer ticks: nothing to block on.
		nap 0.2
	done
}

# assert_within LABEL EXPECTED ACTUAL PERCENT: |ACTUAL - EXPECTED| is at
# most PERCENT % of EXPECTED (integers).
assert_within() {
	local label=$1 exp=$2 act=$3 pct=$4 diff
	diff=$((act - exp))
	diff=${diff#-}
	[ $((diff * 100)) -le $((exp * pct)) ] ||
		die "$label: $act is not within $pct % of $exp"
}

# assert_le LABEL A B: A <= B (integers). assert_gt LABEL A B: A > B.
assert_le() {
	[ "$2" -le "$3" ] || die "$1: $2 is not <= $3"
}
assert_gt() {
	[ "$2" -gt "$3" ] || die "$1: $2 is not > $3"
}

# refcnt: /sys/module/taproot/refcnt.
refcnt() {
	local r
	read -r r </sys/module/taproot/refcnt
	echo "$r"
}

# cpus_online: the online CPUs, one per line.
cpus_online() {
	local list part lo hi c
	read -r list </sys/devices/system/cpu/online
	local IFS=,
	for part in $list; do
		lo=${part%-*} hi=${part#*-}
		for ((c = lo; c <= hi; c++)); do
			echo "$c"
		done
	done
}

# daemon_begin OUTDIR STATE [ARGS...]: taprootd writing a profile every
# second into OUTDIR (-f -i 1 --start ARGS), as a spawned job: DAEMON_PID.
# Returns once its state file STATE names it, which it writes once it reads
# the rings; fails if it exits first or takes over 60 s.
DAEMON_PID=
daemon_begin() {
	local out=$1 state=$2 deadline
	shift 2
	spawn DAEMON_PID taprootd "$REPO/ctl/taprootd" -f -i 1 -o "$out" --start \
		--state "$state" "$@"
	deadline=$((${EPOCHREALTIME/./} + 60000000))
	until [ -e "$state" ] && grep -q "\"pid\": $DAEMON_PID," "$state"; do
		[ -e "/proc/$DAEMON_PID/stat" ] ||
			die "taprootd exited: $(cat "$TMPDIR/taprootd.err")"
		[ "${EPOCHREALTIME/./}" -lt "$deadline" ] || die "taprootd wrote no state in 60 s"
		# taprootd is starting: nothing to block on.
		nap 0.1
	done
}

# in_cgroup DIR CMD [ARGS...]: CMD in the background in the cgroup
# (v2) DIR, moved there before it execs so that all of it is that
# cgroup's, its stdout dropped; its pid in PID, returned once
# /proc/PID/cgroup names DIR.
in_cgroup() {
	local dir=$1 rel line i
	shift
	rel=${dir#/sys/fs/cgroup}
	sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$dir" "$@" >/dev/null &
	PID=$!
	for ((i = 0; i < 100; i++)); do
		while IFS= read -r line; do
			[[ $line != "0::$rel" ]] || return 0
		done <"/proc/$PID/cgroup"
		# the shell moves itself at once: nothing to block on.
		nap 0.05
	done
	die "$1 ($PID) did not reach $dir: $(cat "/proc/$PID/cgroup")"
}

# cgroup2_mounted: the unified hierarchy at /sys/fs/cgroup (a guest's init
# mounts none).
cgroup2_mounted() {
	grep -q " /sys/fs/cgroup cgroup2 " /proc/mounts ||
		mount -t cgroup2 cgroup2 /sys/fs/cgroup || die "cannot mount cgroup2 on /sys/fs/cgroup"
}

# Services and their workloads, for the tests of taprootd's service labels:
# units_make UNIT... makes a cgroup under system.slice for each systemd
# UNIT, as systemd would; work_in UNIT PROG ARGS... runs PROG there (moved
# before it execs, so that every sample of it is that service's) at nice
# 19, which leaves the CPU to taprootd while it is sampled all the same;
# units_remove kills what spawn started and the workloads, and removes the
# cgroups (a test's trap on EXIT).
UNITS=() WORK_PIDS=()
units_make() {
	local u
	cgroup2_mounted
	for u in "$@"; do
		mkdir -p "/sys/fs/cgroup/system.slice/$u" || die "cannot make the cgroup of $u"
		UNITS+=("$u")
	done
}

work_in() {
	local unit=$1
	shift
	in_cgroup "/sys/fs/cgroup/system.slice/$unit" nice -n 19 "$@"
	WORK_PIDS+=("$PID")
}

units_remove() {
	local u
	_cleanup_spawned
	kill -KILL "${WORK_PIDS[@]}" 2>/dev/null || true
	wait "${WORK_PIDS[@]}" 2>/dev/null || true
	WORK_PIDS=()
	for u in "${UNITS[@]}"; do
		rmdir "/sys/fs/cgroup/system.slice/$u" 2>/dev/null || true
	done
	rmdir /sys/fs/cgroup/system.slice 2>/dev/null || true
}

# daemon_profiles N OUT ARGS...: taprootd -f -i 1 -o OUT --start ARGS
# until it has written N cpu profiles (two minutes at most), then stopped
# with SIGTERM, which must end it with status 0. STATE = its state file as
# it last wrote it (it removes the file at exit); $TEST_TMP/all.raw the
# real pprof's -raw text of each cpu profile.
daemon_profiles() {
	local n=$1 out=$2 deadline=$((SECONDS + 120)) daemon f st=$TEST_TMP/taprootd.json
	local log=$TMPDIR/taprootd.err
	shift 2
	spawn daemon taprootd "$TAPROOTD" -f -i 1 -o "$out" --start --state "$st" "$@"
	until [ "$(find "$out" -name 'cpu-*.pb.gz' | wc -l)" -ge "$n" ]; do
		[ $SECONDS -lt $deadline ] || die "taprootd wrote < $n profiles in 120 s: $(<"$log")"
		kill -0 "$daemon" 2>/dev/null || die "taprootd exited: $(<"$log")"
		# taprootd writes once a second: nothing to block on.
		nap 0.5
	done
	# shellcheck disable=SC2034 # the tests that call it read STATE
	STATE=$(<"$st")
	kill -TERM "$daemon"
	wait "$daemon" || die "taprootd exited with $?: $(<"$log")"
	for f in "$out"/cpu-*.pb.gz; do
		expect_ok "pprof -raw ${f##*/}" "$PPROF" -raw -symbolize=none "$f"
		printf '%s\n' "$OUT" >>"$TEST_TMP/all.raw"
	done
}
