#!/bin/bash
# The configuration of causal events is validated by the module itself,
# not only by taprootctl: over raw generic netlink, SET_CONFIG refuses
# SCHED_ONE_IN 0 and TAPROOT_SCHED_ONE_IN_MAX + 1 (ERANGE, with an extended
# ACK message) and takes 1 and the maximum; while running, an EVENTS mask
# that turns on a causal kind that was off at START is refused (EBUSY,
# saying why) and changes nothing, while dropping kinds, and taking back a
# kind that was on at START, are applied. taprootctl says the same, and
# GET_INFO announces the sched and proc event features.
. "${0%/*}/lib.sh"
. "${0%/*}/lib-sampling.sh"
require_module

max=$(uapi_define TAPROOT_SCHED_ONE_IN_MAX)
module_fresh

# set_config ATTR=VALUE...: one SET_CONFIG with those u32 attributes
# (names of enum taproot_attr without TAPROOT_A_), through probe.py's
# netlink code; prints "0" or "ERRNO: extack message".
set_config() {
	run env PYTHONPATH="$REPO/tests/vm" python3 -S - "$@" <<'PY'
import errno, struct, sys
import probe
attrs = probe.enum("taproot_attr")
cmds = probe.enum("taproot_cmd")
g = probe.Genl()
fam, text = g.family("taproot")
payload = b""
for a in sys.argv[1:]:
	k, v = a.split("=")
	payload += probe.nla(attrs["TAPROOT_A_" + k][0], struct.pack("=I", int(v)))
err, text, _ = g.request(fam, cmds["TAPROOT_CMD_SET_CONFIG"][0], payload)
print(f"{errno.errorcode.get(err, err)}: {text}" if err else "0")
PY
	[ "$RC" -eq 0 ] || die "set_config $*: python failed: $ERR"
}

say "sched_one_in bounds, at the kernel"
set_config CFG_SCHED_ONE_IN=0
assert_match "SCHED_ONE_IN 0 refused" "$OUT" '^ERANGE: .*range'
set_config CFG_SCHED_ONE_IN=$((max + 1))
assert_match "SCHED_ONE_IN max+1 refused" "$OUT" '^ERANGE: .*range'
ctl "config" --json config
assert_contains "refusals changed nothing" "$OUT" '"sched_one_in":1'
set_config CFG_SCHED_ONE_IN="$max"
assert_eq "SCHED_ONE_IN max taken" 0 "$OUT"
ctl "config" --json config
assert_contains "SCHED_ONE_IN max applied" "$OUT" "\"sched_one_in\":$max"
set_config CFG_SCHED_ONE_IN=1
assert_eq "SCHED_ONE_IN 1 taken" 0 "$OUT"

say "sched-one-in bounds, at taprootctl"
expect_fail "config set sched-one-in 0" "$CTL" config set sched-one-in 0
assert_contains "config set sched-one-in 0: why" "$ERR" "not in 1..$max"
expect_fail "config set sched-one-in $((max + 1))" "$CTL" config set sched-one-in $((max + 1))
assert_contains "config set sched-one-in max+1: why" "$ERR" "not in 1..$max"

say "features"
ctl "status" --json status
assert_contains "GET_INFO announces sched events" "$OUT" '"sched-events"'
assert_contains "GET_INFO announces proc events" "$OUT" '"proc-events"'

say "turning causal kinds on while running"
ctl "config set events sample,switch" config set events sample,switch
ctl start start
set_config CFG_EVENTS=$((1 | 2 | 4))	# sample, switch, waking
assert_match "EVENTS adding waking while running refused" "$OUT" '^EBUSY: .*(attach|start)'
expect_fail "config set events all while running" "$CTL" config set events all
assert_contains "taprootctl says why" "$ERR" "start"
ctl "config" --json config
assert_contains "refusal changed nothing" "$OUT" '"events":["sample","switch"]'
ctl "config set events sample (drop switch) while running" config set events sample
ctl "config set events sample,switch (back) while running" config set events sample,switch
ctl "config" --json config
assert_contains "switch taken back while running" "$OUT" '"events":["sample","switch"]'
ctl stop stop
# Stopped, anything goes; the next START attaches what is on.
ctl "config set events all while stopped" config set events all
ctl start start
ctl "config set events all while running (all attached)" config set events all
ctl stop stop
