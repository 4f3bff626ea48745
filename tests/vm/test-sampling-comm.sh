#!/bin/bash
# A record's comm is the task's name and zeros after it, as the uapi header
# says (NUL padded): never the bytes an earlier, longer name left after
# the NUL, which set_task_comm() does not clear on every kernel (5.10's
# copies with strlcpy). A shell names itself "abcdefghijklmno", then "x",
# and spins; taprootctl record --raw samples it: every SAMPLE and
# SAMPLE_REF of it has comm "x" and 15 zero bytes.
. "${0%/*}/lib.sh"
. "${0%/*}/lib-sampling.sh"

require_module
load_module

# Renamed by /proc (set_task_comm()), then spinning until killed.
(
	printf abcdefghijklmno >"/proc/$BASHPID/comm"
	printf x >"/proc/$BASHPID/comm"
	while :; do :; done
) &
spin=$!
_spawned+=("$spin")
for _ in $(seq 50); do
	[ "$(<"/proc/$spin/comm")" != x ] || break
	nap 0.1	# the renames are the subshell's first work
done
assert_eq "the spinner's name" x "$(<"/proc/$spin/comm")"

expect_ok "record --pid (the spinner)" "$CTL" record --pid "$spin" --freq 499 --duration 2 \
	--raw "$TEST_TMP/rec.raw" --output "$TEST_TMP/rec"
kill "$spin"
python3 -S - "$REPO/tests/vm" "$TEST_TMP/rec.raw" "$spin" <<'PY' ||
import struct, sys
sys.path.insert(0, sys.argv[1])
import rawrecords

pid = int(sys.argv[3])
want = b"x" + bytes(15)
seen = bad = 0
for rtype, rec in rawrecords.read(sys.argv[2]):
    if rtype not in (1, 9) or len(rec) < 56 or struct.unpack_from("<I", rec, 16)[0] != pid:
        continue
    comm = rec[40:56] if rtype == 1 else rec[32:48]
    seen += 1
    if comm != want:
        bad += 1
        if bad <= 3:
            print(f"FAIL: a {'SAMPLE' if rtype == 1 else 'SAMPLE_REF'} with comm {comm!r}")
print(f"# {seen} samples of the spinner, {bad} with other bytes than {want!r}")
if seen < 50 or bad:
    sys.exit(1)
PY
	die "the records' comm is not the name and zeros"
unload_module
