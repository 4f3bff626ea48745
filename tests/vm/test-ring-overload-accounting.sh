#!/bin/bash
# When the rings overflow, every sample is accounted for, exactly, per CPU:
# the samples the module counts equal the sample records a reader gets
# plus the records lost, and every loss reaches the reader in band, in
# TAPROOT_REC_LOST records, once a record can be written again.
#
# What the module counts (kmod/sample.c, kmod/ring.c): stats "samples" are
# the timer ticks that passed the filters (SAMPLE events on, not idle, not
# the consumer, TGID filter); each such tick then either writes one sample
# record or fails its reservation, which counts one loss by cause
# (lost_full: no room, or a record larger than a quarter of the ring;
# lost_nested) and makes the loss pending; the next reservation that
# succeeds on that CPU writes a LOST record with the pending counts in
# front of its own record. stats "records" counts LOST records too. So,
# per CPU, with nothing else producing records:
#
#   samples = sample records + lost_full + lost_nested
#   records = sample records + LOST records
#   lost_* = the sum of the LOST records' counts + what is still pending
#
# Losses still pending when sampling stops are only in the counters, so the
# test overflows tiny rings (ring-pages 2, 1000 Hz, 64 KiB user stacks, a
# spinner on every CPU, no reader), stops, drains, then samples slowly with
# a reader (10 Hz, 200-byte records), which flushes every pending loss
# into a LOST record: after that the reader's view alone adds up to the
# module's counters.
. "${0%/*}/lib.sh"
. "${0%/*}/lib-sampling.sh"
require_module
require_prog spinner

mapfile -t cpus <<<"$(cpus_online)"
ncpus=${#cpus[@]}
declare -A online=()
for c in "${cpus[@]}"; do
	online[$c]=1
done

module_fresh
ctl "config set ring-pages 2 freq 1000 ustack 65536" \
	config set ring-pages 2 freq 1000 ustack "$(uapi_define TAPROOT_USTACK_MAX)"
# At the lowest priority: every CPU stays busy, and the test's commands
# still get the CPU when they need it.
spawn load load nice -n 19 "$PROGS/spinner" --threads "$ncpus" --pin
wait_line "a spinner on every CPU" "$TMPDIR/load.out" '^spinning threads='

say "overload: 1000 Hz into 2-page rings, nobody reading"
ctl "start (overload)" start
# The rings fill within milliseconds; the rest of the time only counts
# losses. Long enough for thousands of ticks per CPU.
nap 2
ctl "stop (overload)" stop
stats_json "$TMPDIR/stats1.json"
declare -A samples1=()
# shellcheck disable=SC2034 # read by wait_counters, by name
while read -r c n; do
	samples1[$c]=$n
done <<<"$(stats_field "$OUT" samples)"
say "drain what the rings hold"
dump_begin drain1
dump_end

say "flush: 10 Hz, 200-byte records (no stacks), a reader all along"
ctl "config set freq 10 ustack 0 kstack 0" config set freq 10 ustack 0 kstack 0
dump_begin drain2
ctl "start (flush)" start
# Until every CPU has taken a tick since the overload: its first one
# writes the pending LOST record.
wait_counters "flush" samples samples1
ctl "stop (flush)" stop
dump_end
kill "$load"
stats_json "$TMPDIR/stats2.json"

expect_ok "account for every sample" python3 -S - "$TMPDIR/stats1.json" "$TMPDIR/drain1.out" \
	"$TMPDIR/stats2.json" "$TMPDIR/drain2.out" <<'PY'
import json, sys
stats1, drain1, stats2, drain2 = sys.argv[1:]

def stats(path):
	return {c["cpu"]: c for c in json.load(open(path))["cpus"]}

def seen(path):
	# Per CPU: sample records, LOST records, their counts, and the first
	# record (type, counts) in ring order.
	out = {}
	for line in open(path):
		r = json.loads(line)
		s = out.setdefault(r["cpu"], dict(samples=0, lost_recs=0, full=0, nested=0, other=0,
						  first=None))
		if s["first"] is None:
			s["first"] = (r["type"], r.get("lost", {}).get("full"), r.get("lost", {}).get("nested"))
		if r["type"] == "sample":
			s["samples"] += 1
		elif r["type"] == "lost":
			s["lost_recs"] += 1
			s["full"] += r["lost"]["full"]
			s["nested"] += r["lost"]["nested"]
		else:
			s["other"] += 1
	return out

s1, s2 = stats(stats1), stats(stats2)
z = dict(samples=0, lost_recs=0, full=0, nested=0, other=0, first=None)
d1, d2 = seen(drain1), seen(drain2)
for cpu in sorted(s1):
	a, b = d1.get(cpu, z), d2.get(cpu, z)
	c1, c2 = s1[cpu], s2[cpu]
	pending_full = c1["lost_full"] - a["full"]
	pending_nested = c1["lost_nested"] - a["nested"]
	first = b["first"] or ("none", None, None)
	print(f"cpu{cpu} "
	      f"s1_samples={c1['samples']} s1_records={c1['records']} s1_full={c1['lost_full']} "
	      f"s1_nested={c1['lost_nested']} d1_samples={a['samples']} d1_lost_recs={a['lost_recs']} "
	      f"d1_full={a['full']} d1_nested={a['nested']} pending_full={pending_full} "
	      f"pending_nested={pending_nested} "
	      f"s2_samples={c2['samples']} s2_records={c2['records']} s2_full={c2['lost_full']} "
	      f"s2_nested={c2['lost_nested']} d2_samples={b['samples']} d2_lost_recs={b['lost_recs']} "
	      f"d2_full={b['full']} d2_nested={b['nested']} "
	      f"other={a['other'] + b['other']} "
	      f"first2_type={first[0]} first2_full={first[1]} first2_nested={first[2]}")
PY
# v KEY: KEY's value in the current CPU's line.
v() { kv "$r" "$1"; }
ncpu_seen=0
while read -r cpu r; do
	ncpu_seen=$((ncpu_seen + 1))
	say "$cpu: $r"
	if [ -n "${online[${cpu#cpu}]:-}" ]; then
		# The overload did overload (a spinner ran on every online CPU).
		assert_gt "$cpu: samples taken under overload" "$(v s1_samples)" 0
		assert_gt "$cpu: records lost for lack of room under overload" "$(v s1_full)" 0
		assert_gt "$cpu: samples read during the flush" "$(v d2_samples)" 0
	fi
	assert_eq "$cpu: records of other types" 0 "$(v other)"
	# After the overload, counters against what the reader got.
	assert_eq "$cpu: after overload: samples = sample records read + lost_full + lost_nested" \
		"$(v s1_samples)" $(($(v d1_samples) + $(v s1_full) + $(v s1_nested)))
	assert_eq "$cpu: after overload: records = sample records read + LOST records read" \
		"$(v s1_records)" $(($(v d1_samples) + $(v d1_lost_recs)))
	assert_le "$cpu: after overload: lost_full announced in band <= counted" "$(v d1_full)" "$(v s1_full)"
	assert_le "$cpu: after overload: lost_nested announced in band <= counted" \
		"$(v d1_nested)" "$(v s1_nested)"
	# The flush announced what was pending, first thing.
	if [ $(($(v pending_full) + $(v pending_nested))) -gt 0 ]; then
		assert_eq "$cpu: first record after the flush starts" lost "$(v first2_type)"
		assert_eq "$cpu: its lost_full is what was pending" "$(v pending_full)" "$(v first2_full)"
		assert_eq "$cpu: its lost_nested is what was pending" "$(v pending_nested)" \
			"$(v first2_nested)"
	fi
	# In the end the reader's view alone adds up to the module's counters.
	assert_eq "$cpu: in the end: lost_full = sum of LOST records' full counts" \
		"$(v s2_full)" $(($(v d1_full) + $(v d2_full)))
	assert_eq "$cpu: in the end: lost_nested = sum of LOST records' nested counts" \
		"$(v s2_nested)" $(($(v d1_nested) + $(v d2_nested)))
	assert_eq "$cpu: in the end: samples = sample records read + losses announced in band" \
		"$(v s2_samples)" \
		$(($(v d1_samples) + $(v d2_samples) + $(v d1_full) + $(v d2_full) + $(v d1_nested) + $(v d2_nested)))
	assert_eq "$cpu: in the end: records = sample records read + LOST records read" \
		"$(v s2_records)" $(($(v d1_samples) + $(v d2_samples) + $(v d1_lost_recs) + $(v d2_lost_recs)))
done <<<"$OUT"
assert_eq "CPUs accounted for (one stats entry per possible CPU)" \
	"$(cpulist_count "$(cat /sys/devices/system/cpu/possible)")" "$ncpu_seen"
