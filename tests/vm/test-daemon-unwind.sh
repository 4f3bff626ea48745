#!/bin/bash
# taprootd and the module's unwinder, with the real daemon and module:
#   - with its defaults (unwind on) on tapwork (-O2, no frame pointers, a
#     shared library), taprootd uploads tables and mappings (the module
#     holds them: stats unwind_tables, unwind_procs > 0) and most samples
#     are walked in the module: its state file counts the uploads
#     (kupload_*), walks that ended well (kunwind_complete, _max-frames:
#     most of the walks) and samples of interned stacks, references
#     (stack_refs) or counted in the module (counted, its default): most of
#     the samples, none unresolved; taprootctl status (plain and --json)
#     and the metrics say the same;
#   - when taprootd stops, the module's unwind memory is released (no
#     table, no process, 0 bytes);
#   - with "unwind off" in its --config file it turns the module's unwind
#     flag off and uploads nothing: the samples are snapshots (no stack
#     ref, no walk in the module's counters nor taprootd's), unwound in
#     taprootd all the same.
# The module samples tapwork alone. Every exec costs under TCG: one
# python3 per step reads everything.
# What this checks is taprootd's: the module's side of it (walks, uploads,
# their release) is checked on every kernel by unwind-agreement,
# unwind-races and unwind-upload-abuse.
# vm-scope: userspace
# vm-timeout: 180
. "${0%/*}/lib.sh"
. "${0%/*}/lib-sampling.sh"

require_module
require_taprootd
require_prog tapwork

state=$TEST_TMP/taprootd.json conf=$TEST_TMP/taprootd.conf
load_module
expect_ok "config set freq" "$CTL" config set freq 99
"$PROGS/tapwork" 120 >/dev/null &
work=$!
# tapwork alone: the test's own short-lived processes are never uploaded.
expect_ok "config set pids" "$CTL" config set pids "$work"
daemon=
trap 'kill $daemon "$work" 2>/dev/null; wait 2>/dev/null' EXIT

# load_state: from taprootd's state file (one member a line), with shell
# builtins only: P profiles, S samples, R stack_refs and counted samples,
# U user_stacks, K kupload_procs (0 while there is no file).
load_state() {
	local line key
	P=0 S=0 R=0 U=0 K=0
	[ -f "$state" ] || return 0
	while IFS= read -r line; do
		key=${line%%\":*}
		line=${line#*\": }
		line=${line%,}
		case $key in
		'"profiles') P=$line ;;
		'"samples') S=$line ;;
		'"stack_refs' | '"counted') R=$((R + line)) ;;
		'"user_stacks') U=$line ;;
		'"kupload_procs') K=$line ;;
		esac
	done <"$state"
}

# daemon_until COND: taprootd running until its state file has 2 profiles
# or more and COND (arithmetic of P, S, R, U, K) holds.
daemon_until() {
	local deadline=$((SECONDS + 60))
	until load_state && ((P >= 2 && ($1))); do
		[ $SECONDS -lt $deadline ] ||
			die "taprootd: no 2 profiles with $1 in 60 s ($P profiles, $S samples, $R stack refs, $U user stacks, $K processes uploaded): $(<"$TEST_TMP/taprootd.log")"
		kill -0 "$daemon" 2>/dev/null || die "taprootd exited: $(<"$TEST_TMP/taprootd.log")"
		nap 0.5
	done
}

# ctl_json NAME ARGS...: taprootctl ARGS, its output into $TEST_TMP/NAME.json.
ctl_json() {
	local name=$1
	shift
	expect_ok "taprootctl $*" "$CTL" "$@"
	printf '%s\n' "$OUT" >"$TEST_TMP/$name.json"
}

stop_daemon() {
	kill -TERM "$daemon"
	wait "$daemon" || die "taprootd exited $? after SIGTERM: $(<"$TEST_TMP/taprootd.log")"
	daemon=
}

say "[$SECONDS s] taprootd with its defaults: the module unwinds"
mkdir "$TEST_TMP/on"
"$TAPROOTD" -f -i 1 -o "$TEST_TMP/on" --start --state "$state" \
	--metrics 127.0.0.1:9465 2>"$TEST_TMP/taprootd.log" &
daemon=$!
# Once tapwork's tables are up, its samples are references: most of them.
daemon_until 'K > 0 && R * 2 > S'
ctl_json stats stats --json
export TAPROOTD_STATE=$state
ctl_json status status --json
expect_ok "status" "$CTL" status
assert_match "status: kernel walks line" "$OUT" \
	"kernel walks: +[0-9.]+% of [0-9]+ ended well \(complete [0-9]+"
assert_match "status: uploads line" "$OUT" "uploads: +[0-9]+ tables .*process mapping sets"
python3 -S - "$TEST_TMP" "$state" <<'PY' || die "unwind on"
import json, sys, urllib.request
tmp, state = sys.argv[1], sys.argv[2]
mod = json.load(open(f"{tmp}/stats.json"))
print(f"# the module holds {mod['unwind_tables']} tables, {mod['unwind_procs']} processes, "
      f"{mod['unwind_mem_used']} bytes; {mod['total']['stack_refs']} stack refs, "
      f"{mod['total']['counted']} samples counted")
assert mod["unwind_tables"] > 0 and mod["unwind_procs"] > 0, "nothing held while taprootd runs"
assert mod["total"]["stack_refs"] + mod["total"]["counted"] > 0, mod["total"]
assert mod["total"]["unwind"]["complete"] > 0, mod["total"]

st = json.load(open(state))
walks = {k[8:]: v for k, v in st.items() if k.startswith("kunwind_")}
kup = {k[8:]: v for k, v in st.items() if k.startswith("kupload_")}
print(f"# samples {st['samples']}, stack_refs {st['stack_refs']}, counted {st['counted']}, "
      f"walks {walks}")
print(f"# uploads {kup}")
assert st["module_unwind"] is True, st["module_unwind"]
good = walks["complete"] + walks["max-frames"]
done = sum(v for k, v in walks.items() if k != "none")
assert done and good * 2 > done, f"{good} of {done} walks ended well"
# Until tapwork's tables are up its samples fall back; then they are
# counted (references when a table is full).
interned = st["stack_refs"] + st["counted"]
assert interned * 2 > st["samples"], f"{interned} interned of {st['samples']} samples"
assert st["counted"] > 0, st["counted"]
assert st["stack_refs_unresolved"] == 0, st["stack_refs_unresolved"]
assert st["counted_unresolved"] == 0, st["counted_unresolved"]
assert kup["tables_uploaded"] + kup["tables_existed"] >= 2, kup
assert kup["maps_uploaded"] >= 1 and kup["errors"] == 0, kup

td = json.load(open(f"{tmp}/status.json"))["taprootd"]
assert td["module_unwind"] is True, td
assert td["counted"] > 0 and td["kunwind"]["complete"] > 0, td
assert td["kernel_uploads"]["maps_uploaded"] > 0, td["kernel_uploads"]

body = urllib.request.urlopen("http://127.0.0.1:9465/metrics", timeout=10).read().decode()
values = {}
for line in body.splitlines():
    if line and not line.startswith("#"):
        name, v = line.rsplit(" ", 1)
        values[name] = float(v)
for m in ('taprootd_kernel_walks_total{result="complete"}', "taprootd_counted_samples_total",
          "taprootd_kernel_upload_maps_total", "taprootd_kernel_upload_tables_total",
          "taprootd_module_unwind"):
    print(f"# {m} {values.get(m)}")
    assert values.get(m, 0) > 0, m
# Counted from zero: present, whatever their value.
for m in ("taprootd_kernel_upload_maps_current_total", "taprootd_kernel_upload_deferred_total",
          "taprootd_stack_refs_total"):
    print(f"# {m} {values.get(m)}")
    assert m in values, f"{m} not served"
PY

say "[$SECONDS s] taprootd stopped: the module's unwind memory is released"
stop_daemon
ctl_json stats stats --json
python3 -S - "$TEST_TMP/stats.json" >"$TEST_TMP/before" <<'PY' || die "after taprootd"
import json, sys
mod = json.load(open(sys.argv[1]))
held = (mod["unwind_tables"], mod["unwind_procs"], mod["unwind_mem_used"])
if held != (0, 0, 0):
    sys.exit(f"FAIL: after taprootd: {held[0]} tables, {held[1]} processes, {held[2]} bytes held")
print(mod["total"]["stack_refs"] + mod["total"]["counted"], mod["total"]["unwind"]["complete"])
PY
read -r refs_before walked_before <"$TEST_TMP/before"

say "[$SECONDS s] unwind off in its config file: snapshots, nothing uploaded"
mkdir "$TEST_TMP/off"
printf 'unwind off\n' >"$conf"
rm -f "$state"
"$TAPROOTD" -f -i 1 -o "$TEST_TMP/off" -c "$conf" --start --state "$state" \
	2>"$TEST_TMP/taprootd.log" &
daemon=$!
daemon_until 'U > 100'
ctl_json config config show --json
ctl_json stats stats --json
expect_ok "status, unwind off" "$CTL" status
assert_contains "status says the module does not walk" "$OUT" "off (unwind off)"
python3 -S - "$TEST_TMP" "$state" "$refs_before" "$walked_before" <<'PY' || die "unwind off"
import json, sys
tmp, state, refs_before, walked_before = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
cfg = json.load(open(f"{tmp}/config.json"))
assert cfg["unwind"] is False, f"the module's unwind flag: {cfg['unwind']}"
mod = json.load(open(f"{tmp}/stats.json"))
assert mod["unwind_tables"] == 0 and mod["unwind_procs"] == 0, "uploads with unwind off"
assert mod["total"]["stack_refs"] + mod["total"]["counted"] == refs_before, \
    (mod["total"]["stack_refs"], mod["total"]["counted"], refs_before)
assert mod["total"]["unwind"]["complete"] == walked_before, mod["total"]["unwind"]
st = json.load(open(state))
walks = {k[8:]: v for k, v in st.items() if k.startswith("kunwind_")}
kup = {k[8:]: v for k, v in st.items() if k.startswith("kupload_")}
print(f"# samples {st['samples']}, stack_refs {st['stack_refs']}, walks {walks}, "
      f"user stacks {st['user_stacks']}, {st['unwind_complete']} complete")
assert st["module_unwind"] is False, st["module_unwind"]
assert st["stack_refs"] == 0 and st["counted"] == 0, (st["stack_refs"], st["counted"])
assert sum(v for k, v in walks.items() if k != "none") == 0, walks
assert walks["none"] > 0, walks
assert kup["tables_uploaded"] == 0 and kup["maps_uploaded"] == 0, kup
# Unwound here from the snapshots: tapwork's completely.
assert st["unwind_complete"] * 2 > st["user_stacks"], st["unwind_complete"]
PY
stop_daemon
echo "PASS"
