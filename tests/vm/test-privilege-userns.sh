#!/bin/bash
# Every netlink command and every device operation is refused to whoever
# lacks CAP_PERFMON and CAP_SYS_ADMIN in the initial user namespace, and
# the module makes that check itself, against init_user_ns (capable(),
# netlink_capable()), not against the caller's own namespace:
#
#   - the commands are every member of enum taproot_cmd in the uapi header
#     (probe.py genl-all), so a new command is covered without a change
#     here; those root may run must answer EPERM, the others (UNSPEC,
#     NOTIFY: no handler) must fail as they fail for root;
#   - the device operations (probe.py dev): open O_RDONLY, O_WRONLY and
#     O_RDWR must fail, so mmap, poll, ioctl, read and write are out of
#     reach; on an O_PATH descriptor, which no open() method sees, every
#     one of them fails with EBADF. Besides /dev/taproot (0600 root: the
#     mode may refuse first), a 0666 node of the same device proves the
#     module refuses by itself (EPERM);
#   - who: nobody; root without CAP_PERFMON and CAP_SYS_ADMIN; root inside
#     a new user namespace (unshare -U -r: uid 0, every capability, in a
#     namespace where root's own uid is mapped, so the 0600 node lets it
#     through); the same with a new network namespace too (-n: the family
#     is netnsok, so it is visible there, and the refusal must still
#     hold); nobody in a user namespace of its own, if the kernel allows
#     one.
#
# And the other way round: real root in a new network namespace (unshare
# -n) may use every command, as netnsok promises. Nothing refused changed
# the configuration or started sampling.
# reliability: privilege
. "${0%/*}/lib.sh"
. "${0%/*}/lib-sampling.sh"
require_module
module_fresh

freq_default=$(uapi_define TAPROOT_FREQ_DEFAULT)

# A 0666 node of /dev/taproot, in a directory anyone may cross.
read -r devnum </sys/class/misc/taproot/dev
node=/dev/taproot-privtest-0666
rm -f "$node"
mknod -m 0666 "$node" c "${devnum%:*}" "${devnum#*:}"
trap '_cleanup_spawned; rm -f "$node"' EXIT

probe=(python3 -S "$PROBE" genl-all + dev /dev/taproot + dev "$node")
ncmds=0

say "root, every privilege: the baseline (each command and operation works)"
run "${probe[@]}"
mapfile -t base <<<"$OUT"
declare -A root_res=()
for line in "${base[@]}"; do
	case $line in
	"open_r="*) ;;
	*" "*) root_res[${line%% *}]=${line#* }; ncmds=$((ncmds + 1)) ;;
	esac
done
assert_eq "GET_INFO as root" ok "${root_res[GET_INFO]:-missing}"
assert_eq "START as root" ok "${root_res[START]:-missing}"
assert_eq "STOP as root" ok "${root_res[STOP]:-missing}"
devline=${base[ncmds]}
for w in open_r=ok open_w=ok open_rw=ok mmap_cons_rw=ok mmap_prod_ro=ok poll=ok \
	ioctl=ENOTTY read=EINVAL write=EINVAL opath_mmap_cons_rw=EBADF opath_poll=EBADF \
	opath_ioctl=EBADF opath_read=EBADF opath_write=EBADF; do
	assert_contains "/dev/taproot as root" " $devline " " $w "
done
say "root: $ncmds commands (${!root_res[*]}); /dev/taproot: $devline"

# refused LABEL UID CAPS CMD...: the probes run by CMD... are all refused;
# CMD... runs as uid UID with capabilities CAPS inside ("all": CAP_SYS_ADMIN
# and CAP_PERFMON held in its user namespace, which must be one of its own;
# "none": neither). IDS = what probe.py ids printed.
cases=0
refused() {
	local label=$1 uid=$2 caps=$3 line name res i capeff
	shift 3
	run "$@" python3 -S "$PROBE" ids + "${probe[@]:3}"
	mapfile -t got <<<"$OUT"
	[ "${#got[@]}" -eq $((ncmds + 3)) ] ||
		die "$label: expected $((ncmds + 3)) result lines, got: $OUT${ERR:+; stderr: $ERR}"
	IDS=${got[0]}
	got=("${got[@]:1}")
	assert_contains "$label: uid" "$IDS " "uid=$uid "
	capeff=${IDS#*capeff=}
	capeff=${capeff%% *}
	if [ "$caps" = all ]; then
		assert_eq "$label: CAP_SYS_ADMIN (21) held in its namespace" 1 "$(cap_bit "$capeff" 21)"
		assert_eq "$label: CAP_PERFMON (38) held in its namespace" 1 "$(cap_bit "$capeff" 38)"
		assert_match "$label: a user namespace of its own (one id mapped)" "$IDS" 'uid_map=[0-9]+,[0-9]+,1$'
	else
		assert_eq "$label: no CAP_SYS_ADMIN (21)" 0 "$(cap_bit "$capeff" 21)"
		assert_eq "$label: no CAP_PERFMON (38)" 0 "$(cap_bit "$capeff" 38)"
	fi
	for ((i = 0; i < ncmds; i++)); do
		line=${got[i]}
		name=${line%% *} res=${line#* }
		[ -n "${root_res[$name]:-}" ] || die "$label: unexpected line '$line'"
		if [ "${root_res[$name]}" = ok ]; then
			assert_eq "$label: netlink $name refused by the module" EPERM "$res"
		else
			assert_ne "$label: netlink $name (no handler) refused" ok "$res"
		fi
		cases=$((cases + 1))
	done
	# /dev/taproot: the 0600 mode or the module; the 0666 node: the module.
	for i in 1 2; do
		line=" ${got[ncmds + i - 1]} "
		for name in open_r open_w open_rw; do
			if [ "$i" = 1 ]; then
				assert_match "$label: /dev/taproot $name refused" "$line" " $name=(EPERM|EACCES) "
			else
				assert_contains "$label: 0666 node $name refused by the module" "$line" " $name=EPERM "
			fi
			cases=$((cases + 1))
		done
		for name in mmap_cons_rw mmap_prod_ro poll ioctl read write; do
			assert_not_contains "$label: no fd, so no $name" "$line" " $name="
			assert_contains "$label: $name on an O_PATH fd" "$line" " opath_$name=EBADF "
			cases=$((cases + 1))
		done
	done
}

say "nobody"
refused nobody 65534 none as_nobody

say "root without CAP_PERFMON and CAP_SYS_ADMIN"
refused "root without perfmon" 0 none as_root_without_perfmon

contexts=("unshare -U -r" "unshare -U -r -n")
for ctx in "${contexts[@]}"; do
	say "root in a new user namespace: $ctx"
	# shellcheck disable=SC2086 # the context is words
	refused "$ctx" 0 all $ctx
	assert_contains "$ctx: root's own uid is mapped (the 0600 node opens to DAC)" "$IDS" "uid_map=0,0,1"
done

say "nobody in a user namespace of its own"
run as_nobody unshare -U -r true
if [ "$RC" -eq 0 ]; then
	refused "nobody's unshare -U -r" 0 all as_nobody unshare -U -r
	assert_contains "nobody's userns: nobody's uid is mapped" "$IDS" "uid_map=0,65534,1"
	nobody_userns=1
else
	say "this kernel refuses user namespaces to nobody ($ERR): that case cannot arise"
	nobody_userns=0
fi

say "real root in a new network namespace: netnsok lets it use every command"
# (UNSPEC and NOTIFY fail, as for root: the status says nothing)
run unshare -n "${probe[@]:0:4}"
mapfile -t got <<<"$OUT"
for line in "${got[@]}"; do
	name=${line%% *}
	[ -n "$name" ] && [ -n "${root_res[$name]:-}" ] ||
		die "unshare -n: unexpected line '$line' in: $OUT"
	assert_eq "unshare -n: $name as for root" "${root_res[$name]}" "${line#* }"
done
assert_eq "unshare -n: every command probed" "$ncmds" "${#got[@]}"

say "nothing refused changed anything"
ctl "config show" --json config show
assert_match "the configuration is untouched: freq" "$OUT" "\"freq\":${freq_default}[,}]"
ctl "stats" --json stats
assert_match "sampling was not started" "$OUT" '"running":false'

score cases="$cases" failures=0 commands="$ncmds" contexts=$((2 + ${#contexts[@]} + nobody_userns)) \
	nobody_userns="$nobody_userns"
