#!/bin/bash
# CPU hotplug while sampling (issue #7, point 3): at 1000 Hz with every
# event on, a fork/exec/exit storm on every CPU and 'taprootctl dump'
# reading, CPUs go offline and online (/sys/devices/system/cpu/cpuN/online)
# again and again:
#   - while a CPU is offline its counters stand still (its timer went with
#     it) and every online CPU keeps taking samples; once it is back, it
#     samples again (kmod/sample.c makes a new perf event for it);
#   - the reader is stopped (SIGSTOP) while a CPU goes offline, so that the
#     offline CPU's ring still holds unread records: the reader must still
#     get them. At the end, per CPU, the records the reader got equal the
#     records the module wrote (stats "records"): nothing of an offlined
#     CPU's ring was lost to the reader;
#   - stop and start race with hotplug (a background loop toggles CPUs
#     while sampling is stopped and started);
#   - the module stops and unloads afterwards, with the hotpluggable CPUs
#     offline (their rings' wakeups must not be left pending on a dead
#     CPU: the watermark is 8 bytes, so every record wakes the reader); the
#     runner fails the test on any oops, BUG, WARNING or lockdep report.
# Quick mode: the CPUs there are (2 by default: cpu1 goes), 1 cycle and 1
# stop/start race. Long mode (TAPROOT_LONG=1, run with scripts/vm --cpus
# 4): each cycle takes a varying set of CPUs offline, 50 cycles, 20 races.
# vm-timeout: 300
# reliability: lifecycle-stress
# reliability-cpus: 4
. "${0%/*}/lib.sh"
. "${0%/*}/lib-sampling.sh"
require_module
require_prog fork-storm

cycles=$(quick_long 1 50)
races=$(quick_long 1 20)

mapfile -t cpus <<<"$(cpus_online)"
assert_eq "precondition: every possible CPU is online" \
	"$(cat /sys/devices/system/cpu/possible)" "$(cat /sys/devices/system/cpu/online)"
# The CPUs that can go offline (cpu0 usually cannot: it has no 'online').
hot=()
for c in "${cpus[@]}"; do
	[ ! -w "/sys/devices/system/cpu/cpu$c/online" ] || hot+=("$c")
done
[ "${#hot[@]}" -gt 0 ] || die "no CPU can go offline: run with 2 vCPUs or more"
say "CPUs ${cpus[*]}; hotpluggable ${hot[*]}; $cycles cycles, $races stop/start races"

# set_online CPU 0|1: writes the CPU's online file; must succeed.
set_online() {
	echo "$2" >"/sys/devices/system/cpu/cpu$1/online" ||
		die "cannot write $2 to cpu$1/online"
}
# Whatever happens, every CPU comes back before the runner goes on.
all_online() {
	local c
	for c in "${hot[@]}"; do
		echo 1 >"/sys/devices/system/cpu/cpu$c/online" 2>/dev/null || true
	done
}
trap 'all_online; _cleanup_spawned' EXIT

module_fresh
# Watermark 8: every record wakes a reader waiting in poll(), from the
# CPU that wrote it (irq_work), also while that CPU goes offline.
ctl "config: 1000 Hz, all events, small stacks, watermark 8" \
	config set freq 1000 events all kstack 16 ustack 256 watermark 8
spawn storm storm nice -n 19 "$PROGS/fork-storm" --threads "${#cpus[@]}"
wait_line "fork-storm ready" "$TMPDIR/storm.out" '^ready pid='

# The reader: taprootctl dump; its records are counted per CPU by awk as
# they come (the JSON itself would fill the guest's memory in long mode).
mkfifo "$TMPDIR/dump.fifo"
awk '{ i = index($0, "\"cpu\":"); if (i) n[substr($0, i + 6, 6) + 0]++; else bad++ }
     END { for (c in n) print "cpu", c, n[c]; print "unparsed", bad + 0 }' \
	<"$TMPDIR/dump.fifo" >"$TMPDIR/count.out" &
counter=$!
_spawned+=("$counter")
"$CTL" --json dump >"$TMPDIR/dump.fifo" 2>"$TMPDIR/dump.err" </dev/null &
DUMP_PID=$!
_spawned+=("$DUMP_PID")
dump_wait_ready "$TMPDIR/dump.err"

ctl "start" start

# snapshot ARRAY FIELD: ARRAY[cpu] = FIELD of every CPU, from the stats in OUT.
snapshot() {
	local -n _a=$1
	local c v
	_a=()
	while read -r c v; do
		[ -z "$c" ] || _a[$c]=$v
	done <<<"$(stats_field "$OUT" "$2")"
}

declare -A s_off=() r_off=() s_after=() r_after=()
offlined=0
for ((i = 0; i < cycles; i++)); do
	# Which CPUs go: one in quick mode (in turn), a varying set otherwise,
	# never all of them.
	off=("${hot[$((i % ${#hot[@]}))]}")
	if [ "$LONG" = 1 ] && [ "${#hot[@]}" -gt 1 ]; then
		off=()
		for ((k = 0; k < ${#hot[@]}; k++)); do
			(((i + 1) >> k & 1)) && off+=("${hot[$k]}")
		done
		[ "${#off[@]}" -gt 0 ] || off=("${hot[0]}")
	fi
	# Leave unread records in the rings of the CPUs that go.
	kill -STOP "$DUMP_PID"
	for c in "${off[@]}"; do
		set_online "$c" 0
		offlined=$((offlined + 1))
	done
	kill -CONT "$DUMP_PID"
	ctl "cycle $i: stats, ${off[*]} offline" --json stats
	snapshot s_off samples
	snapshot r_off records
	# Every CPU still online samples on.
	wait_counters "cycle $i: samples on the online CPUs with ${off[*]} offline" samples s_off
	snapshot s_after samples
	snapshot r_after records
	for c in "${off[@]}"; do
		assert_eq "cycle $i: cpu$c offline: its samples stand still" \
			"${s_off[$c]}" "${s_after[$c]}"
		assert_eq "cycle $i: cpu$c offline: its records stand still" \
			"${r_off[$c]}" "${r_after[$c]}"
	done
	for c in "${off[@]}"; do
		set_online "$c" 1
	done
	# Every CPU samples again, the ones that came back included.
	wait_counters "cycle $i: samples on every CPU once ${off[*]} came back" samples s_after
done

say "stop and start while CPUs come and go"
(
	for ((i = 0; ; i++)); do
		c=${hot[$((i % ${#hot[@]}))]}
		echo 0 >"/sys/devices/system/cpu/cpu$c/online" 2>/dev/null || true
		echo 1 >"/sys/devices/system/cpu/cpu$c/online" 2>/dev/null || true
	done
) &
toggler=$!
_spawned+=("$toggler")
for ((i = 0; i < races; i++)); do
	ctl "race $i: stop" stop
	ctl "race $i: start" start
done
kill "$toggler"
wait "$toggler" 2>/dev/null || true
all_online
ctl "stats after the races" --json stats
snapshot s_off samples
wait_counters "samples on every CPU after the races" samples s_off

say "the last offline: unload with CPUs offline"
kill -STOP "$DUMP_PID"
for c in "${hot[@]}"; do
	set_online "$c" 0
	offlined=$((offlined + 1))
done
kill -CONT "$DUMP_PID"
# The reader waits in poll() again while the online CPUs write.
ctl "stats with ${hot[*]} offline" --json stats
snapshot s_off samples
wait_counters "samples on the online CPUs" samples s_off
ctl "stop" stop
kill -INT "$DUMP_PID"
wait_exit "taprootctl dump drains and exits on SIGINT" "$DUMP_PID" 120
[ "$RC" -eq 0 ] || die "taprootctl dump exited $RC: $(cat "$TMPDIR/dump.err")"
wait_exit "the record counter ends" "$counter" 60
kill "$storm"
say "dump: $(cat "$TMPDIR/dump.err")"

ctl "final stats" --json stats
declare -A written=() lost=() nread=()
snapshot written records
snapshot lost lost_full
declare -A bytes=()
snapshot bytes bytes
while read -r w c n; do
	case $w in
	cpu) nread[$c]=$n ;;
	unparsed) assert_eq "dump lines without a cpu" 0 "$c" ;;
	esac
done <"$TMPDIR/count.out"
# The rings' own view, for a failure: published data_head and records, the
# reader's data_tail, against the bytes the module counted.
expect_ok "the rings' positions" python3 -S -c '
import mmap, os, struct, sys
fd = os.open("/dev/taproot", os.O_RDWR)
P = mmap.PAGESIZE
for cpu in map(int, sys.argv[1:]):
	c = mmap.mmap(fd, P, mmap.MAP_SHARED, mmap.PROT_READ, offset=cpu << 32)
	p = mmap.mmap(fd, P, mmap.MAP_SHARED, mmap.PROT_READ, offset=(cpu << 32) + P)
	head, = struct.unpack_from("Q", p, 64)
	records, = struct.unpack_from("Q", p, 64 + 8 + 8 * 4)
	tail, = struct.unpack_from("Q", c, 0)
	print(f"cpu{cpu} data_head={head} data_tail={tail} published_records={records}")
' "${cpus[@]}"
positions=$OUT
total=0
for c in "${cpus[@]}"; do
	say "cpu$c: bytes ${bytes[$c]}; $(grep "^cpu$c " <<<"$positions")"
	say "cpu$c: written ${written[$c]}, read ${nread[$c]:-0}, lost_full ${lost[$c]}"
	assert_gt "cpu$c: records written" "${written[$c]}" 0
	assert_eq "cpu$c: records read = records written (offline periods included)" \
		"${written[$c]}" "${nread[$c]:-0}"
	total=$((total + written[$c]))
done
# Freeing the rings waits for their wakeups (irq_work_sync()), those of
# the offline CPUs' rings too.
expect_ok "taprootctl unload, ${hot[*]} offline" "$CTL" unload
! module_loaded || die "the module is still loaded after unload"
all_online

score "cases=$((cycles + races))" failures=0 "cycles=$cycles" "offlines=$offlined" \
	"races=$races" "cpus=${#cpus[@]}" "records=$total"
