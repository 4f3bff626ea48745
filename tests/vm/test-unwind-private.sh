#!/bin/bash
# With the privacy setting (record --ustack-private, the module's
# USTACK_PRIVATE), no byte of a user stack reaches the ring: every SAMPLE
# record of the target has ustack_len 0 and, of its user registers, at
# most ip, sp and bp; and the pattern the target keeps in a buffer on its
# stack (progs/ustack-pattern) appears nowhere in the raw capture, which
# holds every record as the ring gave it. The control, --unwind user on
# the same target, finds the pattern in the raw capture: the check can
# fail.
. "${0%/*}/lib.sh"
. "${0%/*}/lib-sampling.sh"
require_module
require_prog ustack-pattern

load_module
spawn target target "$PROGS/ustack-pattern"
wait_line "target ready" "$TMPDIR/target.out" '^ready pid='
pattern=$(kv "$LINE" pattern)
assert_gt "the pattern is long enough to be unmistakable" "${#pattern}" 63

# check_raw FILE MODE: the target's samples in raw capture FILE, and the
# pattern in it, as MODE (private or user) expects.
check_raw() {
	python3 -S - "$1" "$target" "$pattern" "$2" <<'PY'
import gzip, struct, sys

path, pid, pattern, mode = sys.argv[1], int(sys.argv[2]), bytes.fromhex(sys.argv[3]), sys.argv[4]
data = gzip.open(path).read()
# The first 32 bytes of the 256-byte pattern are enough to be unmistakable.
found = pattern[:32] in data
samples = private = refs = 0
off = 0
while off + 8 <= len(data):
    typ, ln = struct.unpack_from("<II", data, off)
    payload = data[off + 8:off + 8 + ln]
    off += 8 + ln
    if typ != 5 or len(payload) < 8 + 16:
        continue
    rec = payload[8:]
    size, rtype, flags = struct.unpack_from("<IHH", rec, 0)
    if rtype == 9 and struct.unpack_from("<I", rec, 16)[0] == pid:
        refs += 1
    if rtype != 1 or struct.unpack_from("<I", rec, 16)[0] != pid:
        continue
    samples += 1
    ustack_len = struct.unpack_from("<I", rec, 32)[0]
    regs = struct.unpack_from("<18Q", rec, 56)
    # ax bx cx dx si di bp sp r8..r15 ip flags: all but bp (6), sp (7), ip (16) zero
    others = [r for i, r in enumerate(regs) if i not in (6, 7, 16)]
    if ustack_len == 0 and not any(others):
        private += 1
print(f"# {mode}: {samples} samples of the target ({private} without stack bytes or "
      f"registers), {refs} interned; pattern {'found' if found else 'absent'}")
if mode == "private":
    if samples + refs < 20:
        sys.exit(f"FAIL: only {samples + refs} samples of the target")
    if private != samples:
        sys.exit(f"FAIL: {samples - private} samples carry stack bytes or registers")
    if found:
        sys.exit("FAIL: the target's stack pattern is in the raw capture")
else:
    if not found:
        sys.exit("FAIL: --unwind user: the pattern should be in the raw capture")
PY
	[ $? -eq 0 ] || die "raw capture of --$2 not as expected"
}

say "record --ustack-private --pid $target"
expect_ok "record --ustack-private" "$CTL" record --freq 199 --duration 3 --pid "$target" \
	--ustack-private --raw "$TEST_TMP/private.raw" --output "$TEST_TMP/private"
echo "$OUT"
check_raw "$TEST_TMP/private.raw" private

say "record --unwind user --pid $target (the control)"
expect_ok "record --unwind user" "$CTL" record --freq 199 --duration 2 --pid "$target" \
	--unwind user --raw "$TEST_TMP/user.raw" --output "$TEST_TMP/user"
check_raw "$TEST_TMP/user.raw" user
