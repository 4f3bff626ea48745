#!/bin/bash
# taprootctl status reports what the loaded module says about itself: ABI
# version, CPU count (the possible CPUs: one ring each) and the kernel
# release, in human form and as JSON (--json before or after the command,
# or -j). Without the module it fails and says how to load it.
. "${0%/*}/lib.sh"
require_module

abi=$(uapi_define TAPROOT_ABI_VERSION)
ncpus=$(cpulist_count "$(cat /sys/devices/system/cpu/possible)")
krel=$KVER
say "expecting ABI $abi, $ncpus possible CPUs, kernel $krel"

say "status without the module"
unload_module
expect_fail "status without the module" "$CTL" status
assert_match "status without the module: error prefix" "$ERR" '^taprootctl: '
assert_match "status without the module: says it is not loaded" "$ERR" 'not loaded'
assert_match "status without the module: says how to load it" "$ERR" 'taprootctl load|modprobe|insmod'

load_module

say "human form"
expect_ok "status" "$CTL" status
human=$OUT
assert_match "status: ABI version $abi" "$human" "abi[^0-9]*\\b$abi\\b"
assert_match "status: $ncpus CPUs" "$human" "(cpu[^0-9]*\\b$ncpus\\b|\\b$ncpus\\b[^0-9]*cpu)"
assert_contains "status: kernel release" "$human" "$krel"

say "JSON: taprootctl --json status, status --json, -j status"

forms=("--json status" "status --json" "-j status")
for i in "${!forms[@]}"; do
	# shellcheck disable=SC2086 # the form is words on purpose
	expect_ok "${forms[i]}" "$CTL" ${forms[i]}
	printf '%s\n' "$OUT" >"$TEST_TMP/json.$i"
done
leaves=$(json_leaves "$TEST_TMP"/json.*) || die "taprootctl ${forms[*]}: output is not JSON"
for i in "${!forms[@]}"; do
	f="${forms[i]}" p="^$(ere_quote "$TEST_TMP/json.$i"):"
	assert_match "$f: ABI version $abi" "$leaves" "${p}[^=]*abi[^=]*=$abi\$"
	assert_match "$f: $ncpus CPUs" "$leaves" "${p}[^=]*cpu[^=]*=$ncpus\$"
	assert_match "$f: kernel release" "$leaves" "${p}[^=]*=$(ere_quote "$krel")\$"
done
