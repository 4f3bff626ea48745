#!/bin/bash
# The control commands and the rings are refused to whoever lacks
# CAP_PERFMON and CAP_SYS_ADMIN, by the module itself, and a refused
# command changes nothing: as nobody, and as root without those two
# capabilities (but with CAP_NET_ADMIN and DAC override), netlink START,
# STOP, SET_CONFIG, GET_CONFIG and GET_STATS answer EPERM, opening
# /dev/taproot read-write (to map the rings) fails, and taprootctl start,
# stop, config set, config show and stats fail naming the privilege, with
# the sampling state and the configuration left as they were.
#
# And a consumer pins the module: while a process has the rings mapped
# (even with its file closed), 'taprootctl unload' fails saying the module
# is in use and the module stays; once the process is gone the module's
# reference count is back to 0 and unload works.
# reliability: privilege
. "${0%/*}/lib.sh"
. "${0%/*}/lib-sampling.sh"
require_module
require_prog ring-abi

module_fresh
freq_default=$(uapi_define TAPROOT_FREQ_DEFAULT)

# One python for every netlink command and the open (python starts slowly
# under TCG): one result line each, the reply's JSON or "ERRNO: message".
cmds=(GET_CONFIG GET_STATS SET_CONFIG START STOP)
probe=(python3 -S "$PROBE")
for c in "${cmds[@]}"; do
	probe+=(genl "$c" +)
done
probe+=(open /dev/taproot rw)

say "with every privilege the probes succeed (so the refusals below mean something)"
expect_ok "probes as root" "${probe[@]}"
mapfile -t res <<<"$OUT"
for i in "${!cmds[@]}"; do
	assert_match "${cmds[i]} as root" "${res[i]}" '^\{'
done
assert_eq "open /dev/taproot rw as root" ok "${res[${#cmds[@]}]}"

# refused WHO: the probes and the CLI as WHO (as_nobody,
# as_root_without_perfmon) are refused and change nothing.
refused() {
	local who=$1 i
	say "$who: netlink and the device"
	expect_fail "probes $who" "$who" "${probe[@]}"
	mapfile -t res <<<"$OUT"
	for i in "${!cmds[@]}"; do
		assert_match "${cmds[i]} $who: the module refuses" "${res[i]}" '^EPERM:'
	done
	if [ "$who" = as_nobody ]; then
		# The 0600 node refuses before the module is asked: either is right.
		assert_match "open /dev/taproot rw $who" "${res[${#cmds[@]}]}" '^(EACCES|EPERM)$'
	else
		assert_eq "open /dev/taproot rw $who: the module refuses" EPERM "${res[${#cmds[@]}]}"
	fi

	say "$who: taprootctl, sampling stopped"
	expect_fail "taprootctl start $who" "$who" "$CTL" start
	assert_match "taprootctl start $who: names the privilege" "$ERR" 'CAP_PERFMON|CAP_SYS_ADMIN'
	expect_fail "taprootctl config set freq 99 $who" "$who" "$CTL" config set freq 99
	assert_match "taprootctl config set $who: names the privilege" "$ERR" 'CAP_PERFMON|CAP_SYS_ADMIN'
	expect_fail "taprootctl config show $who" "$who" "$CTL" config show
	assert_match "taprootctl config show $who: names the privilege" "$ERR" 'CAP_PERFMON|CAP_SYS_ADMIN'
	expect_fail "taprootctl stats $who" "$who" "$CTL" stats
	assert_match "taprootctl stats $who: names the privilege" "$ERR" 'CAP_PERFMON|CAP_SYS_ADMIN'
	ctl "config show as root" --json config show
	assert_match "the refused config set changed nothing: freq" "$OUT" "\"freq\":${freq_default}[,}]"
	ctl "stats as root" --json stats
	assert_match "the refused start changed nothing: still stopped" "$OUT" '"running":false'

	say "$who: taprootctl, sampling started by root"
	ctl "start as root" start
	expect_fail "taprootctl stop $who" "$who" "$CTL" stop
	assert_match "taprootctl stop $who: names the privilege" "$ERR" 'CAP_PERFMON|CAP_SYS_ADMIN'
	ctl "stats as root" --json stats
	assert_match "the refused stop changed nothing: still running" "$OUT" '"running":true'
	ctl "stop as root" stop
}
refused as_nobody
refused as_root_without_perfmon

say "a consumer with the rings mapped and its file closed pins the module"
spawn holder holder "$PROGS/ring-abi" hold
wait_line "the consumer maps the rings" "$TMPDIR/holder.out" '^held pid='
assert_gt "module references while the rings are mapped" "$(refcnt)" 0
expect_fail "taprootctl unload while the rings are mapped" "$CTL" unload
assert_match "taprootctl unload while mapped: says the module is in use" "$ERR" 'in use'
module_loaded || die "taprootctl unload while mapped: the module went away"
[ -c /dev/taproot ] || die "taprootctl unload while mapped: /dev/taproot went away"

kill "$holder"
wait_exit "the consumer exits when killed" "$holder"
assert_eq "module references once the consumer is gone" 0 "$(refcnt)"
ctl "unload once the consumer is gone" unload
! module_loaded || die "unload once the consumer is gone: /sys/module/taproot is still there"
[ ! -e /dev/taproot ] || die "unload once the consumer is gone: /dev/taproot is still there"
