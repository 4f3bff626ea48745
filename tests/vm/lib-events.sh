# shellcheck shell=bash
# Helpers of the causal event tests (test-events-*.sh), on top of lib.sh and
# lib-sampling.sh. A test sources all three.
#
# The targets are tests/vm/progs/evblock in one of its modes. Each is
# started with its stdin a FIFO the test holds open, so that it sets up
# (prints its pid and its threads' tids), then waits for the test's "go"
# (ev_go) while the test configures the module with its pid and starts.

declare -A EV_FD=()

# ev_spawn VAR NAME MODE ROUNDS: evblock MODE ROUNDS in the background,
# output in $TMPDIR/NAME.out; returns once it is set up (its "start" line),
# with VAR = its pid and $TMPDIR/NAME.maps a copy of its /proc/PID/maps.
ev_spawn() {
	local -n _evpid=$1
	local name=$2 fd
	shift 2
	mkfifo "$TEST_TMP/$name.in"
	# Read-write: opening does not wait for a reader, and the FIFO never
	# reads as end of file while the test lives.
	exec {fd}<>"$TEST_TMP/$name.in"
	EV_FD[$name]=$fd
	"$PROGS/evblock" "$@" <"$TEST_TMP/$name.in" >"$TMPDIR/$name.out" 2>"$TMPDIR/$name.err" &
	_evpid=$!
	_spawned+=("$_evpid")
	wait_line "evblock $* set up" "$TMPDIR/$name.out" '^start$'
	printf '%s\n' "$(<"/proc/$_evpid/maps")" >"$TMPDIR/$name.maps"
}

# ev_go NAME: the target NAME does its work now.
ev_go() {
	echo go >&"${EV_FD[$1]}"
}

# ev_done NAME [SECONDS]: waits until the target NAME has done its work
# and exited 0.
ev_done() {
	local name=$1 secs=${2:-90} pid first
	wait_line "evblock $name finishes" "$TMPDIR/$name.out" '^done$' "$secs"
	read -r first <"$TMPDIR/$name.out"
	pid=$(kv "$first" pid)
	wait_exit "evblock $name exits" "$pid" 30
	assert_eq "evblock $name exit status" 0 "$RC"
}

# ev_check LABEL PYTHON-ARGS...: runs the python check on stdin with
# tests/vm/evcheck.py importable; its output lines "KEY=VALUE ..." are in
# OUT for kv.
ev_check() {
	local label=$1
	shift
	expect_ok "$label" env PYTHONPATH="$REPO/tests/vm" python3 -S - "$@"
}
