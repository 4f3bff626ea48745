#!/bin/bash
# Only CAP_PERFMON or CAP_SYS_ADMIN may use taproot, and the module enforces
# it itself: an unprivileged user is refused by the CLI, netlink and the
# device; root without those two capabilities (but with CAP_NET_ADMIN, which
# genl's own GENL_ADMIN_PERM would accept, and with DAC override) gets EPERM
# from netlink GET_INFO and from opening /dev/taproot.
. "$(dirname "$0")/lib.sh"
require_module
load_module

say "the helpers work with full privileges (so the refusals below mean something)"
expect_ok "GET_INFO as root" python3 -S "$PROBE" genl GET_INFO
assert_contains "GET_INFO as root: ABI version" "$OUT" "\"abi_version\": $(uapi_define TAPROOT_ABI_VERSION)"
expect_ok "open /dev/taproot as root" python3 -S "$PROBE" open /dev/taproot r
assert_eq "open /dev/taproot as root" ok "$OUT"

say "as nobody"
expect_fail "status as nobody" as_nobody "$CTL" status
assert_match "status as nobody: names the privilege" "$ERR" 'CAP_PERFMON|CAP_SYS_ADMIN|permission|not permitted'
expect_fail "GET_INFO as nobody" as_nobody python3 -S "$PROBE" genl GET_INFO
assert_match "GET_INFO as nobody" "$OUT" '^EPERM:'
expect_fail "open /dev/taproot as nobody" as_nobody python3 -S "$PROBE" open /dev/taproot r
assert_match "open /dev/taproot as nobody" "$OUT" '^(EACCES|EPERM)$'

say "as root without CAP_SYS_ADMIN and CAP_PERFMON"
expect_ok "capabilities under setpriv" as_root_without_perfmon \
	sed -n 's/^CapEff:[[:space:]]*//p' /proc/self/status
caps=$OUT
assert_eq "uid under setpriv" 0 "$(as_root_without_perfmon id -u)"
assert_eq "CAP_SYS_ADMIN (21) dropped" 0 "$(cap_bit "$caps" 21)"
assert_eq "CAP_PERFMON (38) dropped" 0 "$(cap_bit "$caps" 38)"
assert_eq "CAP_NET_ADMIN (12) kept" 1 "$(cap_bit "$caps" 12)"
assert_eq "CAP_DAC_OVERRIDE (1) kept" 1 "$(cap_bit "$caps" 1)"

expect_fail "GET_INFO without CAP_PERFMON" as_root_without_perfmon python3 -S "$PROBE" genl GET_INFO
assert_match "GET_INFO without CAP_PERFMON: the module refuses" "$OUT" '^EPERM:'
expect_fail "open /dev/taproot without CAP_PERFMON" as_root_without_perfmon \
	python3 -S "$PROBE" open /dev/taproot r
assert_eq "open /dev/taproot without CAP_PERFMON: the module refuses" EPERM "$OUT"
expect_fail "status without CAP_PERFMON" as_root_without_perfmon "$CTL" status
assert_match "status without CAP_PERFMON: names the privilege" "$ERR" 'CAP_PERFMON|CAP_SYS_ADMIN|permission|not permitted'
