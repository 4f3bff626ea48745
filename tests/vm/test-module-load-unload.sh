#!/bin/bash
# taprootctl load/unload cycles cleanly: after each load /dev/taproot exists
# as a 0600 character device and the module is listed; after each unload
# both are gone, also when the unload comes while sampling runs with every
# causal event's tracepoint probe attached (every fifth cycle). A valid module parameter reaches the module; an invalid one
# makes the load fail and leaves nothing loaded.
. "${0%/*}/lib.sh"
require_module

cycles=20
say "$cycles load/unload cycles with the default module path"
for i in $(seq 1 "$cycles"); do
	expect_ok "load #$i" "$CTL" load
	[ -c /dev/taproot ] || die "load #$i: /dev/taproot is not a character device"
	assert_eq "load #$i: mode and owner of /dev/taproot" "crw------- root:root" \
		"$(stat -c '%A %U:%G' /dev/taproot)"
	module_loaded || die "load #$i: /sys/module/taproot is missing"
	proc_modules_lists taproot || die "load #$i: /proc/modules does not list taproot"
	if [ "$i" -eq 1 ]; then
		lsmod_lists taproot || die "load #$i: lsmod does not list taproot"
	fi

	if [ $((i % 5)) -eq 0 ]; then
		expect_ok "config set events all #$i" "$CTL" config set events all
		expect_ok "start #$i" "$CTL" start
	fi
	expect_ok "unload #$i" "$CTL" unload
	[ ! -e /dev/taproot ] || die "unload #$i: /dev/taproot still exists"
	! module_loaded || die "unload #$i: /sys/module/taproot still exists"
	! proc_modules_lists taproot || die "unload #$i: /proc/modules still lists taproot"
	if [ "$i" -eq 1 ]; then
		! lsmod_lists taproot || die "unload #$i: lsmod still lists taproot"
	fi
done

say "a valid parameter reaches the module"
expect_ok "load --ko KO ring_pages=64" "$CTL" load --ko "$KO" ring_pages=64
assert_eq "ring_pages parameter" 64 "$(cat /sys/module/taproot/parameters/ring_pages)"
expect_ok "unload after ring_pages=64" "$CTL" unload

say "an invalid parameter (not a power of two) is refused"
expect_fail "load ring_pages=3" "$CTL" load --ko "$KO" ring_pages=3
assert_eq "exit status of a refused load" 1 "$RC"
assert_match "error message of a refused load" "$ERR" '^taprootctl: '
! module_loaded || die "a refused load (ring_pages=3) left the module loaded"
[ ! -e /dev/taproot ] || die "a refused load (ring_pages=3) left /dev/taproot behind"
