#!/bin/bash
# The mmap ABI of /dev/taproot (<linux/taproot.h>, "The rings"), asserted
# by a real consumer (progs/ring-abi), from the failing side too:
#   - one consumer: a second open fails with EBUSY, also while the first
#     file is closed but still mapped, and succeeds once every mapping is
#     gone;
#   - only the consumer page may be writable: a writable mapping of the
#     producer page, of data pages, or of a range that reaches past the
#     consumer page fails with EPERM, and mprotect(PROT_WRITE) of the
#     read-only mappings fails with EACCES;
#   - mappings stay inside [0, 2P+2D) of a possible CPU's window and are
#     MAP_SHARED (else EINVAL), cannot grow by mremap, and a forked child
#     does not inherit them;
#   - the producer page says abi_version, cpu, page_size, data_offset = 2P,
#     data_size = ring-pages * P, a power of two;
#   - the data is mapped twice: data[i] == data[D + i] for every i < D on
#     full rings, and a record that crosses the end of the data area reads
#     contiguously through the second copy.
# The rings are filled first with 200-byte records (kstack 0, ustack 0) at
# 1000 Hz with a spinner on every CPU and nobody reading, so every ring is
# full; ring-abi then releases them and the test samples a little more, so
# that the next records (a LOST record, then samples) start within 200
# bytes of the end of the data area and one of them crosses it.
. "${0%/*}/lib.sh"
. "${0%/*}/lib-sampling.sh"
require_module
require_prog ring-abi spinner

pages=8
page=$(getconf PAGESIZE)
mapfile -t cpus <<<"$(cpus_online)"
# ring-abi maps every possible CPU's ring and expects each filled.
assert_eq "precondition: every possible CPU is online" \
	"$(cat /sys/devices/system/cpu/possible)" "$(cat /sys/devices/system/cpu/online)"

module_fresh
ctl "config set ring-pages $pages freq 1000 kstack 0 ustack 0" \
	config set ring-pages "$pages" freq 1000 kstack 0 ustack 0
# At the lowest priority: every CPU stays busy, and the test's commands
# still get the CPU when they need it.
spawn load load nice -n 19 "$PROGS/spinner" --threads "${#cpus[@]}" --pin
wait_line "a spinner on every CPU" "$TMPDIR/load.out" '^spinning threads='

say "fill every ring: $pages pages of 200-byte records, nobody reading"
ctl "start (fill)" start
# Until a record was lost for lack of room on every CPU: the ring is full.
# shellcheck disable=SC2034 # read by wait_counters, by name
declare -A zero=()
wait_counters "fill" lost_full zero
ctl "stop (fill)" stop

spawn abi abi "$PROGS/ring-abi" check $((pages * page))
wait_line "ring-abi checked the full rings and released them" "$TMPDIR/abi.out" '^released$' 60
say "sample a little more into the released rings"
ctl "records before" --json stats
declare -A records=()
# shellcheck disable=SC2034 # read by wait_counters, by name
while read -r c n; do
	records[$c]=$n
done <<<"$(stats_field "$OUT" records)"
ctl "start (after release)" start
# Until every CPU wrote records after the release: its first reservation
# (the pending LOST record and a sample) crosses the end of the data area.
wait_counters "after release" records records
ctl "stop (after release)" stop
kill -USR1 "$abi"
wait_exit "ring-abi finishes its checks" "$abi" 60
abi_rc=$RC
kill "$load"
_lib_slurp res "$TMPDIR/abi.out"

expected=(
	"open O_RDWR as root"
	"second open in the same process fails with EBUSY"
	"open by another process fails with EBUSY"
	"writable mapping of the producer page: EPERM"
	"writable mapping of a data page: EPERM"
	"write-only mapping of a data page: EPERM"
	"writable mapping of consumer+producer pages: EPERM"
	"writable mapping of the whole window: EPERM"
	"mapping one page longer than the window: EINVAL"
	"mapping the page right after the window: EINVAL"
	"mapping that starts inside and ends past the window: EINVAL"
	"private mapping: EINVAL"
	"ring of CPU nr_cpu_ids (no such CPU): EINVAL"
	"ring of CPU 2^20: EINVAL"
	"mprotect(PROT_WRITE) of the read-only producer page: EACCES"
	"mprotect(PROT_WRITE) of a read-only data page: EACCES"
	"consumer page is writable"
	"mremap cannot grow a ring mapping"
	"a forked child does not inherit the mapping (SIGSEGV)"
	"with the file closed but mapped, another open fails with EBUSY"
	"once every mapping is gone, open succeeds again"
)
for c in "${cpus[@]}"; do
	expected+=(
		"cpu $c: map consumer page rw and [P, 2P+2D) ro"
		"cpu $c: producer abi_version"
		"cpu $c: producer cpu"
		"cpu $c: producer page_size"
		"cpu $c: producer data_offset is 2P"
		"cpu $c: producer data_size is a power of two"
		"cpu $c: producer data_size is ring-pages * P"
		"cpu $c: reserved fields are zero"
		"cpu $c: the test filled the ring (tail 0, head > D - 200)"
		"cpu $c: the data area holds records (over 1/8 nonzero bytes)"
		"cpu $c: data[i] == data[D + i] for all i < D"
		"cpu $c: every record of the filled ring is valid"
		"cpu $c: new records after the release"
		"cpu $c: the first record after the overflow is LOST"
		"cpu $c: every record after the release is valid"
		"cpu $c: a record crosses the end of the data area"
		"cpu $c: the crossing record's tail is the start of the data area"
	)
done

# Every failed check of ring-abi, with what it saw, then every expected one.
declare -A passed=()
while IFS= read -r line; do
	case $line in
	"not ok "*) die "ring-abi: ${line#not ok }" ;;
	"ok "*) passed[${line#ok }]=1 ;;
	*) say "ring-abi: $line" ;;
	esac
done <<<"$res"
for label in "${expected[@]}"; do
	[ -n "${passed[$label]:-}" ] || die "ring-abi: no 'ok' for: $label; its output: $res"
done
assert_eq "ring-abi exit status" 0 "$abi_rc"
assert_match "ring-abi: summary" "$res" "^checks ${#expected[@]} failed 0\$"
