#!/bin/bash
# The output directory full (issue #7, daemon faults). taprootd (-i 1,
# --start) writes its profiles into a small tmpfs; a filler file takes all
# of its space: each interval's profile then fails with a clear error in
# taprootd's log, naming the directory and ENOSPC ("No space left on
# device"), and counted (write_errors in the state file); taprootd keeps
# running; no file appears under a final name (cpu-STAMP.pb.gz) while the
# space is gone and no temporary file stays; once the filler is removed
# it writes profiles again. Every final-named file decodes with the real
# pprof. Quick mode: one fill and release; long mode (TAPROOT_LONG=1): 20.
# Then 'taprootctl record' into the full tmpfs: a clear error naming the
# file and ENOSPC, exit status nonzero, neither cpu.pb.gz nor the --raw
# file nor a temporary file left; the same record succeeds once there is
# space.
# Each start of taprootd, record and pprof takes seconds under TCG:
# vm-scope: userspace
# vm-timeout: 300
# reliability: daemon-faults
. "${0%/*}/lib.sh"
. "${0%/*}/lib-sampling.sh"

require_module
require_prog tapwork
require_pprof
require_taprootd

cycles=$(quick_long 1 20)
[ "$LONG" != 1 ] || [ "${TAPROOT_TEST_TIMEOUT:-0}" -ge 900 ] ||
	die "long mode needs TAPROOT_TEST_TIMEOUT >= 900"
mnt=$TEST_TMP/small
out=$mnt/profiles
state=$TEST_TMP/taprootd.json
mkdir -p "$mnt"
# Room for record's raw file once the filler is gone: it holds kallsyms.
mount -t tmpfs -o size=8m tmpfs "$mnt" || die "cannot mount a tmpfs on $mnt"
cleanup() {
	_cleanup_spawned
	umount -l "$mnt" 2>/dev/null || true
}
trap cleanup EXIT
mkdir "$out"
load_module
ctl "config set freq" config set freq 199
work=
spawn work tapwork "$PROGS/tapwork" 600

# fill: the filler takes every free block of the tmpfs.
fill() {
	dd if=/dev/zero of="$mnt/filler" bs=64k 2>/dev/null && die "dd filled 8 MiB without ENOSPC"
	[ -s "$mnt/filler" ] || die "the filler file is empty"
}

# state_field KEY: a number of taprootd's state file.
state_field() {
	local line
	while IFS= read -r line; do
		if [[ $line =~ ^\"$1\":\ ([0-9]+), ]]; then
			echo "${BASH_REMATCH[1]}"
			return 0
		fi
	done <"$state"
	die "no $1 in the state file"
}

# wait_errors N: until the state file counts N write errors.
wait_errors() {
	local deadline=$((${EPOCHREALTIME/./} + 60000000))
	until [ -e "$state" ] && [ "$(state_field write_errors)" -ge "$1" ]; do
		[ -e "/proc/$daemon/stat" ] || die "taprootd died: $(cat "$TMPDIR/taprootd.err")"
		[ "${EPOCHREALTIME/./}" -lt "$deadline" ] ||
			die "taprootd counted no write error $1 in 60 s: $(cat "$TMPDIR/taprootd.err")"
		# taprootd writes once a second: nothing to block on.
		nap 0.2
	done
}

# finals: the final-named profiles in $out, one per line.
finals() {
	local f
	for f in "$out"/cpu-*.pb.gz; do
		[ -e "$f" ] && echo "${f##*/}"
	done
	return 0
}

daemon=
spawn daemon taprootd "$TAPROOTD" -f -i 1 -o "$out" --start --state "$state"
deadline=$((${EPOCHREALTIME/./} + 60000000))
until [ -n "$(finals)" ]; do
	[ -e "/proc/$daemon/stat" ] || die "taprootd exited: $(cat "$TMPDIR/taprootd.err")"
	[ "${EPOCHREALTIME/./}" -lt "$deadline" ] || die "taprootd wrote no profile in 60 s"
	# taprootd is starting, then writes once a second: nothing to block on.
	nap 0.2
done

seen=$TEST_TMP/seen
mkdir -p "$seen"
errors=0
for ((c = 1; c <= cycles; c++)); do
	fill
	# A write that began before the filler completed may still succeed:
	# from the first failure on, every write fails.
	wait_errors $((errors + 1))
	before=$(finals)
	wait_errors $((errors + 3))
	after=$(finals)
	[ "$before" = "$after" ] ||
		die "cycle $c: a profile was written into a full directory: before: $before; after: $after"
	for f in "$out"/*.tmp.*; do
		[ -e "$f" ] && die "cycle $c: a temporary file stays: ${f##*/}"
	done
	errors=$(state_field write_errors)
	cp -p "$out"/cpu-*.pb.gz "$seen/" 2>/dev/null || true
	rm -f "$out"/cpu-*.pb.gz	# room for the next ones whatever their size
	rm "$mnt/filler"
	deadline=$((${EPOCHREALTIME/./} + 60000000))
	until [ -n "$(finals)" ]; do
		[ -e "/proc/$daemon/stat" ] || die "taprootd died: $(cat "$TMPDIR/taprootd.err")"
		[ "${EPOCHREALTIME/./}" -lt "$deadline" ] ||
			die "cycle $c: taprootd wrote no profile in 60 s once space returned"
		# taprootd writes once a second: nothing to block on.
		nap 0.2
	done
	say "cycle $c: $errors write errors so far; writing again: $(finals | head -1)"
done
cp -p "$out"/cpu-*.pb.gz "$seen/" 2>/dev/null || true
re="writing $(ere_quote "$out")/cpu-[0-9T]+Z\.pb\.gz: .*No space left on device"
text_matches "$(cat "$TMPDIR/taprootd.err")" "$re" ||
	die "taprootd's log has no error /$re/: $(head -5 "$TMPDIR/taprootd.err")"
grep -m1 'No space left' "$TMPDIR/taprootd.err" | sed 's/^/# log: /'
kill -TERM "$daemon"
wait_exit "taprootd exits on SIGTERM" "$daemon" 60
assert_eq "taprootd's exit status after SIGTERM" 0 "$RC"
cp -p "$out"/cpu-*.pb.gz "$seen/" 2>/dev/null || true
run "$PPROF" -raw -symbolize=none "$seen"/*.pb.gz
[ "$RC" -eq 0 ] || die "a profile does not decode: $ERR"
decoded=$(ls "$seen" | wc -l)

say "taprootctl record into the full tmpfs"
rm -f "$out"/*
fill
rec=$mnt/rec
run "$CTL" record --pid "$work" --duration 2 --raw "$mnt/rec.raw" --output "$rec"
[ "$RC" -ne 0 ] || die "record into a full directory exited 0: $OUT"
say "record: exit $RC: $ERR"
assert_match "record's error names cpu.pb.gz and ENOSPC" "$ERR" \
	"$(ere_quote "$rec/cpu.pb.gz"): .*No space left on device"
assert_match "record's error names the raw file and ENOSPC" "$ERR" \
	"^taprootctl: --raw $(ere_quote "$mnt/rec.raw"): raw: .*$(ere_quote "$mnt/rec.raw.tmp.").*No space left on device"
for f in "$rec"/* "$mnt"/rec.raw*; do
	[ -e "$f" ] && die "record left ${f#"$mnt"/} in the full tmpfs"
done
rm "$mnt/filler"
expect_ok "record once there is space" "$CTL" record --pid "$work" --duration 2 \
	--raw "$mnt/rec.raw" --output "$rec"
expect_ok "pprof reads record's profile" "$PPROF" -raw -symbolize=none "$rec/cpu.pb.gz"
score cases=2 failures=0 cycles="$cycles" write_errors="$errors" profiles_decoded="$decoded"
