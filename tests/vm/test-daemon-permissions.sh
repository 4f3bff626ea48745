#!/bin/bash
# Profiles name the code paths of every process profiled: what taprootd
# and 'taprootctl record' write is not readable by other users (issue #7,
# point 6), whatever the umask (the test runs them under umask 000).
#   - taprootd: its profiles (cpu-STAMP.pb.gz) are mode 0600, owned by root,
#     also in an output directory that others can read (0755);
#   - record: the output directory it creates is 0700 (the parents it
#     creates 0755, as mkdir -p), cpu.pb.gz, the --raw file and the
#     --stats-json file are 0600; an existing output directory keeps its
#     mode; a profile written again over an old one is 0600 too;
#   - 'nobody' (uid 65534) can read none of these files, nor list the
#     directory record created.
# Each start of taprootd and record takes seconds under TCG:
# vm-scope: userspace
# vm-timeout: 180
# reliability: privilege
. "${0%/*}/lib.sh"
. "${0%/*}/lib-sampling.sh"

require_module
require_prog tapwork
require_taprootd

# Nobody must reach the files, to prove that their modes refuse it (not a
# directory on the way): the test's files are under a directory of its
# own at the root, and a control file there is readable.
top=$(mktemp -d /taproot-perm.XXXXXX)
chmod 0755 "$top"
trap '_cleanup_spawned; rm -rf "$top"' EXIT
TEST_TMP=$top
echo control >"$top/control"
chmod 0644 "$top/control"
expect_ok "nobody reads a 0644 file next to the profiles" as_nobody cat "$top/control"
load_module
ctl "config set freq" config set freq 199
work=
spawn work tapwork "$PROGS/tapwork" 600
umask 000
checked=0

# assert_private FILE MODE: FILE has MODE, is root's, and nobody cannot
# read it (or list it, for a directory).
assert_private() {
	local st
	st=$(stat -c '%a %u' "$1") || die "no $1"
	assert_eq "mode and owner of ${1#"$TEST_TMP"/}" "$2 0" "$st"
	if [ -d "$1" ]; then
		run as_nobody ls "$1"
	else
		run as_nobody cat "$1"
	fi
	[ "$RC" -ne 0 ] || die "nobody can read ${1#"$TEST_TMP"/} (mode $2)"
	assert_contains "nobody is refused ${1#"$TEST_TMP"/}" "$ERR" "Permission denied"
	checked=$((checked + 1))
}

say "taprootd -i 1 into a 0755 directory, under umask 000"
out=$TEST_TMP/daemon
mkdir -m 0755 "$out"
state=$TEST_TMP/taprootd.json
daemon=
spawn daemon taprootd "$TAPROOTD" -f -i 1 -o "$out" --start --state "$state"
deadline=$((${EPOCHREALTIME/./} + 60000000))
files=()
until [ ${#files[@]} -ge 2 ]; do
	[ -e "/proc/$daemon/stat" ] || die "taprootd exited: $(cat "$TMPDIR/taprootd.err")"
	[ "${EPOCHREALTIME/./}" -lt "$deadline" ] || die "taprootd wrote no 2 profiles in 60 s"
	# taprootd is starting, then writes once a second: nothing to block on.
	nap 0.2
	files=()
	for f in "$out"/cpu-*.pb.gz; do
		[ -e "$f" ] && files+=("$f")
	done
done
kill -TERM "$daemon"
wait_exit "taprootd exits on SIGTERM" "$daemon" 60
assert_eq "taprootd's exit status" 0 "$RC"
for f in "$out"/cpu-*.pb.gz; do
	assert_private "$f" 600
done
assert_eq "taprootd left its directory's mode alone" 755 "$(stat -c %a "$out")"

say "taprootctl record into a directory it creates, under umask 000"
rec=$TEST_TMP/rec/parent/profiles
expect_ok "record" "$CTL" record --pid "$work" --duration 2 --raw "$TEST_TMP/rec/parent/cap.raw" \
	--stats-json "$TEST_TMP/rec/parent/stats.json" --output "$rec"
assert_eq "mode of a parent record created" 755 "$(stat -c %a "$TEST_TMP/rec/parent")"
assert_private "$rec" 700
assert_private "$rec/cpu.pb.gz" 600
assert_private "$TEST_TMP/rec/parent/cap.raw" 600
assert_private "$TEST_TMP/rec/parent/stats.json" 600

say "record again over the same files, into a 0755 directory that exists"
chmod 0644 "$rec/cpu.pb.gz"
chmod 0755 "$rec"
expect_ok "record again" "$CTL" record --pid "$work" --duration 2 --output "$rec"
assert_eq "record left an existing directory's mode alone" 755 "$(stat -c %a "$rec")"
assert_private "$rec/cpu.pb.gz" 600
score cases=3 failures=0 files_checked="$checked"
