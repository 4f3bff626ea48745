#!/bin/bash
# taprootctl record follows a command's children and ends cleanly on SIGINT:
#   - record -- sh -c 'tapwork & tapwork; wait': the shell's two children are
#     added to the module's TGID filter as they appear, so the profile holds
#     samples of two tapwork processes besides the shell; the command's exit
#     status is record's; --flamegraph writes the page of that profile;
#   - record --all --duration 600, SIGINT after a few seconds: the profile is
#     still written (and decodes), sampling is stopped, the module's
#     configuration is what it was, and record exits 0;
#   - record -- a command that cannot run (missing, not executable): exit
#     127 as a shell's, an error naming it once, no profile (nor --raw
#     capture) written, the configuration restored.
# vm-scope: userspace
# vm-timeout: 240
. "${0%/*}/lib.sh"

require_module
require_pprof
[ -x "$PROGS/tapwork" ] || die "no $PROGS/tapwork: run tests/vm/build-progs"

load_module
expect_ok "config set" "$CTL" config set freq 29 ustack 4096
expect_ok "config before" "$CTL" config
before=$OUT

say "record -- sh -c 'tapwork 3 & tapwork 3; wait; exit 7'"
run "$CTL" record --freq 199 --ring-pages 1024 --output "$TEST_TMP/kids" \
	--stats-json "$TEST_TMP/kids.json" --flamegraph "$TEST_TMP/kids/flame.html" -- \
	sh -c "'$PROGS/tapwork' 3 & '$PROGS/tapwork' 3; wait; exit 7"
[ "$RC" -eq 7 ] || die "record exited $RC, not the command's 7; stderr: $ERR; stdout: $OUT"
assert_contains "summary: the command's status" "$OUT" "command:  exited with status 7"
assert_match "summary: children followed" "$OUT" "children: +[2-9][0-9]* child processes followed"
# -symbolize=none: pprof shows what the file holds, names included, instead
# of symbolizing again with binutils (which takes seconds under TCG, and
# would hide a name our symbolizer failed to give).
expect_ok "pprof -traces" "$PPROF" -traces -symbolize=none -sample_index=samples "$TEST_TMP/kids/cpu.pb.gz"
# The pids of the samples whose process is tapwork (labels: comm, then pid).
pids=() comm= line=
while IFS= read -r line; do
	if [[ $line =~ ^[[:space:]]+comm:[[:space:]]+(.*)$ ]]; then
		comm=${BASH_REMATCH[1]}
	elif [[ $line =~ ^[[:space:]]+pid:[[:space:]]+([0-9]+)$ && $comm == tapwork ]]; then
		p=${BASH_REMATCH[1]}
		[[ " ${pids[*]} " == *" $p "* ]] || pids+=("$p")
	fi
done <<<"$OUT"
assert_contains "profile: tapwork's leaf" "$OUT" "leaf_x"
# The flame graph page of the same profile: private, with tapwork's chain in its data.
[ "$(stat -c %a "$TEST_TMP/kids/flame.html")" = 600 ] ||
	die "flame.html is mode $(stat -c %a "$TEST_TMP/kids/flame.html"), not 600"
_lib_slurp page "$TEST_TMP/kids/flame.html"
for f in leaf_x leaf_y libfunc main; do
	[[ $page == *"\"$f\""* ]] || die "flame.html has no frame \"$f\""
done
[ "${#pids[@]}" -eq 2 ] ||
	die "samples of ${#pids[@]} tapwork processes (${pids[*]}), want both children of the shell"
expect_ok "config after the command" "$CTL" config
assert_eq "configuration restored after the command" "$before" "$OUT"

say "record --all --duration 600, SIGINT after the first progress"
"$CTL" record --all --duration 600 --freq 99 --output "$TEST_TMP/int" \
	>"$TEST_TMP/int.out" 2>"$TEST_TMP/int.err" &
rec=$!
for ((i = 0; i < 300; i++)); do
	_lib_slurp ERRTXT "$TEST_TMP/int.err"
	[[ $ERRTXT == *" samples, "* ]] && break
	kill -0 "$rec" 2>/dev/null || break
	sleep 0.1
done
kill -INT "$rec"
rc=0
wait "$rec" || rc=$?
_lib_slurp OUTTXT "$TEST_TMP/int.out"
_lib_slurp ERRTXT "$TEST_TMP/int.err"
assert_eq "record's exit status after SIGINT (stderr: $ERRTXT)" 0 "$rc"
assert_contains "summary after SIGINT" "$OUTTXT" "taprootctl record: wrote $TEST_TMP/int/cpu.pb.gz"
expect_ok "pprof -raw after SIGINT" "$PPROF" -raw -symbolize=none "$TEST_TMP/int/cpu.pb.gz"
assert_contains "a CPU profile" "$OUT" "PeriodType: cpu nanoseconds"
expect_ok "status after SIGINT" "$CTL" status
assert_contains "sampling stopped" "$OUT" "running:        no"
expect_ok "config after SIGINT" "$CTL" config
assert_eq "configuration restored after SIGINT" "$before" "$OUT"

for cmd in "$TEST_TMP/missing-cmd" "$TEST_TMP/not-executable"; do
	say "record -- ${cmd##*/}: it cannot run"
	: >"$TEST_TMP/not-executable"
	chmod 0644 "$TEST_TMP/not-executable"
	run "$CTL" record --output "$TEST_TMP/none" --raw "$TEST_TMP/none.raw" -- "$cmd" arg
	[ "$RC" -eq 127 ] || die "record of ${cmd##*/} exited $RC, not 127; stderr: $ERR"
	assert_contains "the error names the command" "$ERR" "record: cannot run '$cmd': "
	[ "$(grep -c "cannot run" <<<"$ERR")" -eq 1 ] || die "said more than once: $ERR"
	[ ! -e "$TEST_TMP/none/cpu.pb.gz" ] || die "a profile was written for ${cmd##*/}"
	[ ! -e "$TEST_TMP/none.raw" ] || die "a raw capture was written for ${cmd##*/}"
	[ -z "$(ls -A "$TEST_TMP/none" 2>/dev/null)" ] || die "files left: $(ls "$TEST_TMP/none")"
	expect_ok "config after ${cmd##*/}" "$CTL" config
	assert_eq "configuration restored after ${cmd##*/}" "$before" "$OUT"
done
