#!/bin/bash
# The module exposes no kernel address and nothing about any process to
# the unprivileged, through whatever it creates:
#
#   - /dev/taproot is a character device, mode 0600, owned by root:root;
#   - every file under /sys/module/taproot and the misc device's sysfs
#     directory that nobody can read holds no kernel address, and none
#     is writable by anyone but root (module parameters included);
#   - the module creates nothing else: no debugfs, tracefs or procfs entry
#     named after it;
#   - the multicast group "session", which anyone may join (by design: it
#     says started, stopped, configuration changed), carries only
#     TAPROOT_A_NOTIFY and TAPROOT_A_RUNNING: nobody listening while root
#     sets a TGID filter, starts and stops learns no TGID or anything else;
#   - what the module prints to the kernel log over a load, a start, a stop
#     and an unload holds no kernel address (the log may be readable by
#     anyone: kernel.dmesg_restrict);
#   - GET_INFO, GET_CONFIG and GET_STATS, even to root, carry no value in
#     the kernel's address range.
# (/proc/kallsyms is the kernel's business, not ours. The rings carry
# kernel stacks, to their privileged consumer only: test-privilege-userns.)
# reliability: privilege
. "${0%/*}/lib.sh"
. "${0%/*}/lib-sampling.sh"
require_module
module_fresh

checks=0
# A kernel address as printed in hex: 0xffff..., or 16 digits from ffff.
kaddr='(0x)?ffff[89a-f][0-9a-f]{11}\b'

say "/dev/taproot"
expect_ok "stat /dev/taproot" stat -c '%F %a %U:%G' /dev/taproot
assert_eq "/dev/taproot: a 0600 character device of root" "character special file 600 root:root" "$OUT"
checks=$((checks + 1))

say "sysfs: what nobody can read holds no kernel address; nothing is writable but by root"
expect_ok "find sysfs files" find /sys/module/taproot /sys/class/misc/taproot/ -type f
mapfile -t files <<<"$OUT"
[ "${#files[@]}" -gt 3 ] || die "sysfs: too few files found under /sys/module/taproot: ${files[*]}"
# One process as nobody reads them all: "PATH<TAB>ERRNO", or "PATH<TAB>ok<TAB>
# TEXT<TAB>WORDS", TEXT the bytes with the unprintable as ".", WORDS the
# little-endian 64-bit words in hex, for binary files (notes).
expect_ok "read sysfs as nobody" as_nobody python3 -S -c '
import sys, errno, struct
for p in sys.argv[1:]:
	try:
		with open(p, "rb") as f:
			d = f.read(65536)
	except OSError as e:
		print(p, errno.errorcode.get(e.errno, e.errno), sep="\t")
		continue
	text = "".join(chr(c) if 32 <= c < 127 else "." for c in d)
	words = ",".join("%016x" % w for (w,) in struct.iter_unpack("<Q", d[:len(d) // 8 * 8]))
	print(p, "ok", text, words, sep="\t")
' "${files[@]}"
readable=0 unreadable=0
while IFS=$'\t' read -r path res text words; do
	checks=$((checks + 1))
	if [ "$res" != ok ]; then
		unreadable=$((unreadable + 1))
		continue
	fi
	readable=$((readable + 1))
	if text_matches "$text" "$kaddr"; then
		die "sysfs: $path, readable by nobody, holds a kernel address: $text"
	fi
	if text_matches "${words//,/$'\n'}" '^ffff[89a-f][0-9a-f]{11}$'; then
		die "sysfs: $path, readable by nobody, holds a kernel address in binary: $words"
	fi
done <<<"$OUT"
say "sysfs: ${#files[@]} files, $readable readable by nobody (no kernel address in any), $unreadable not"
expect_ok "sysfs modes" stat -c '%a %U %n' "${files[@]}"
while read -r mode owner path; do
	[ "$owner" = root ] || die "sysfs: $path is owned by $owner"
	# group and others: no write bit
	(((8#$mode & 8#022) == 0)) || die "sysfs: $path is writable by group or others (mode $mode)"
done <<<"$OUT"
for p in /sys/module/taproot/parameters/*; do
	[ -e "$p" ] || continue
	say "module parameter ${p##*/}: mode $(stat -c %a "$p"), value $(cat "$p")"
done

say "nothing else: no debugfs, tracefs or procfs entry of ours"
mountpoint -q /sys/kernel/debug || mount -t debugfs debugfs /sys/kernel/debug
mountpoint -q /sys/kernel/tracing || mount -t tracefs tracefs /sys/kernel/tracing
for p in /sys/kernel/debug/taproot /sys/kernel/tracing/events/taproot /proc/taproot \
	/proc/net/taproot /proc/sys/taproot; do
	[ ! -e "$p" ] || die "the module created $p"
	checks=$((checks + 1))
done

say "the session group: nobody listens while root sets a TGID filter, starts and stops"
spawn listener listener as_nobody python3 -S "$PROBE" listen 3 120
wait_line "nobody joined the session group" "$TMPDIR/listener.out" '^listening' 60
ctl "config set pids" config set pids "$$"
ctl "start" start
ctl "stop" stop
wait_exit "nobody got three notifications" "$listener" 120
[ "$RC" -eq 0 ] || die "nobody's listener exited $RC: $(cat "$TMPDIR/listener.out" "$TMPDIR/listener.err")"
n=0
while IFS= read -r line; do
	[ "$line" != listening ] || continue
	n=$((n + 1))
	# exactly {"cmd": N, "notify": N, "running": N}
	[[ $line =~ ^\{\"cmd\":\ [0-9]+,\ \"notify\":\ [0-9]+,\ \"running\":\ [01]\}$ ]] ||
		die "a notification carries more than NOTIFY and RUNNING: $line"
	assert_not_contains "no TGID in a notification" "$line" "$$"
	checks=$((checks + 1))
done <"$TMPDIR/listener.out"
assert_eq "notifications nobody got" 3 "$n"

say "GET_INFO, GET_CONFIG, GET_STATS hold no value in the kernel's address range"
ctl "config set pids" config set pids "$$"
expect_ok "GET_* as root" python3 -S "$PROBE" genl GET_INFO + genl GET_CONFIG + genl GET_STATS
# decimal numbers of 2^63 or more (the kernel half on x86-64), or hex
if text_matches "$OUT" '(^|[^0-9])(9[2-9][0-9]{17}|1[0-9]{19})([^0-9]|$)' ||
	text_matches "$OUT" "$kaddr"; then
	die "a reply holds a value in the kernel's address range: $OUT"
fi
checks=$((checks + 3))

say "the kernel log of a load, start, stop and unload holds no kernel address of ours"
ctl "start" start
ctl "stop" stop
ctl "unload" unload
load_module
ctl "unload" unload
expect_ok "dmesg" dmesg
ours=
while IFS= read -r line; do
	[[ $line == *taproot* ]] || continue
	ours+=$line$'\n'
	if text_matches "$line" "$kaddr"; then
		die "the module logged a kernel address: $line"
	fi
done <<<"$OUT"
# ("taproot: loaded: ..." at each load: tests/vm/run clears the log before the test)
[ -n "$ours" ] || die "no line of taproot in the kernel log, not even its load"
checks=$((checks + 1))
read -r restrict </proc/sys/kernel/dmesg_restrict
say "kernel log: $(grep -c . <<<"$ours") lines of taproot, none with an address (dmesg_restrict=$restrict)"

score cases="$checks" failures=0 sysfs_files="${#files[@]}" sysfs_readable_by_nobody="$readable" \
	notifications="$n"
