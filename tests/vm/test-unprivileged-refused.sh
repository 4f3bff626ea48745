#!/bin/bash
# Only CAP_PERFMON or CAP_SYS_ADMIN may use taproot, and the module enforces
# it itself: an unprivileged user is refused by the CLI, netlink and the
# device; root without those two capabilities (but with CAP_NET_ADMIN, which
# genl's own GENL_ADMIN_PERM would accept, and with DAC override, so the
# 0600 root-owned node lets it through) gets EPERM from netlink GET_INFO and
# from opening /dev/taproot: refusals only the module can have made.
# reliability: privilege
. "${0%/*}/lib.sh"
require_module
load_module

# probe.py runs GET_INFO and the open in one process and prints one result
# line for each: the reply's JSON or the errno name.
probe=(python3 -S "$PROBE" genl GET_INFO + open /dev/taproot r)

say "with every privilege the probes succeed (so the refusals below mean something)"
expect_ok "probes as root" "${probe[@]}"
mapfile -t res <<<"$OUT"
assert_contains "GET_INFO as root" "${res[0]}" "\"abi_version\": $(uapi_define TAPROOT_ABI_VERSION)"
assert_eq "open /dev/taproot as root" ok "${res[1]}"

say "as nobody"
expect_fail "probes as nobody" as_nobody "${probe[@]}"
mapfile -t res <<<"$OUT"
assert_match "GET_INFO as nobody" "${res[0]}" '^EPERM:'
assert_match "open /dev/taproot as nobody" "${res[1]}" '^(EACCES|EPERM)$'
expect_fail "taprootctl status as nobody" as_nobody "$CTL" status
assert_match "taprootctl status as nobody: names the privilege" "$ERR" \
	'CAP_PERFMON|CAP_SYS_ADMIN|permission|not permitted'

say "as root without CAP_SYS_ADMIN and CAP_PERFMON"
expect_ok "capabilities under setpriv" as_root_without_perfmon \
	sed -n 's/^Uid:[[:space:]]*\([0-9]*\).*/\1/p; s/^CapEff:[[:space:]]*//p' /proc/self/status
mapfile -t res <<<"$OUT"
assert_eq "uid under setpriv" 0 "${res[0]}"
assert_eq "CAP_SYS_ADMIN (21) dropped" 0 "$(cap_bit "${res[1]}" 21)"
assert_eq "CAP_PERFMON (38) dropped" 0 "$(cap_bit "${res[1]}" 38)"
assert_eq "CAP_NET_ADMIN (12) kept" 1 "$(cap_bit "${res[1]}" 12)"
assert_eq "CAP_DAC_OVERRIDE (1) kept" 1 "$(cap_bit "${res[1]}" 1)"

expect_fail "probes without CAP_PERFMON" as_root_without_perfmon "${probe[@]}"
mapfile -t res <<<"$OUT"
assert_match "GET_INFO without CAP_PERFMON: the module refuses" "${res[0]}" '^EPERM:'
assert_eq "open /dev/taproot without CAP_PERFMON: the module refuses" EPERM "${res[1]}"
expect_fail "taprootctl status without CAP_PERFMON" as_root_without_perfmon "$CTL" status
assert_match "taprootctl status without CAP_PERFMON: names the privilege" "$ERR" \
	'CAP_PERFMON|CAP_SYS_ADMIN|permission|not permitted'
