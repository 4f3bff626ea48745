#!/bin/bash
# A program whose files were copied up in an overlayfs is still unwound.
# The guest's root is the host's over 9p with a tmpfs overlay on top (as a
# container's is): touching a file copies it up. On 6.1, /proc/PID/maps
# then shows the upper file's device and inode, while every open of the
# path (and of map_files) reports the overlay's, so an identity check by
# path alone calls the file replaced and unwinding stops at the first
# frame ("no-mapping"). taproot opens such a mapping through map_files.
# tapwork and its library are touched, then recorded at 999 Hz: at least
# 90% of its user stacks unwind completely (the bar of the other record
# tests), and the leaf functions are named.
# vm-timeout: 180
. "${0%/*}/lib.sh"
. "${0%/*}/lib-sampling.sh"

require_module
require_prog tapwork
load_module

# Copies in the overlay's upper layer (a metadata change copies the data
# too: metacopy is off by default).
touch "$PROGS/tapwork" "$PROGS/libtapwork"
stats=$TEST_TMP/stats.json
expect_ok "record tapwork" "$CTL" record --freq 999 --output "$TEST_TMP/out" \
	--stats-json "$stats" -- "$PROGS/tapwork" 2
json=$(<"$stats")
[[ $json =~ \"unwind_complete_permille\":\ *([0-9]+) ]] ||
	die "no unwind_complete_permille in $stats: $json"
permille=${BASH_REMATCH[1]}
[[ $json =~ \"no-mapping\":\ *([0-9]+) ]] || die "no no-mapping count in $stats: $json"
say "complete unwinds: $permille permille; no-mapping: ${BASH_REMATCH[1]}"
[ "$permille" -ge 900 ] || die "only $permille permille of tapwork's stacks unwound completely: $json"
assert_match "leaf functions named" "$OUT" "leaf_x"
