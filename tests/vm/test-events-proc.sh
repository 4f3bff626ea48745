#!/bin/bash
# FORK, EXEC and EXIT records follow a program that creates a thread, forks
# a child that execs and exits, ROUNDS times, then exits itself. With
# 'config set events fork,exec,exit':
#   - a FORK flagged thread for each thread (child pid = the parent's), and
#     an unflagged FORK whose child pid is each child the program reported;
#   - an EXEC of each child, pid = tid = old_tid = the child's pid, comm
#     "evblock", filename the path the program exec'd; through a path longer
#     than TAPROOT_EXEC_FILENAME_MAX, the filename is that path's first
#     bytes, flagged filename_trunc;
#   - an EXIT of each thread (not group_dead), of each child (group_dead,
#     comm "evblock") and of the program itself (group_dead).
. "${0%/*}/lib.sh"
. "${0%/*}/lib-sampling.sh"
. "${0%/*}/lib-events.sh"
require_module
require_prog evblock

rounds=3
fmax=$(uapi_define TAPROOT_EXEC_FILENAME_MAX)
# A path of more than fmax bytes to the program: directories of 60 bytes.
long=$TEST_TMP
while [ ${#long} -le "$fmax" ]; do
	long+=/dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd
done
mkdir -p "$long"
ln -s "$PROGS/evblock" "$long/evblock"
long+=/evblock

module_fresh
ev_spawn p1 short proc "$rounds"
# ev_spawn runs $PROGS/evblock: the long path is run by hand.
mkfifo "$TEST_TMP/long.in"
exec {lfd}<>"$TEST_TMP/long.in"
"$long" proc "$rounds" <"$TEST_TMP/long.in" >"$TMPDIR/long.out" 2>"$TMPDIR/long.err" &
p2=$!
_spawned+=("$p2")
wait_line "evblock by a long path set up" "$TMPDIR/long.out" '^start$'

# The children are other processes: no pid filter, the whole system.
ctl "config set" config set events fork,exec,exit pids all
dump_begin proc
ctl start start
ev_go short
echo go >&"$lfd"
ev_done short
wait_line "evblock by a long path finishes" "$TMPDIR/long.out" '^done$' 90
wait_exit "evblock by a long path exits" "$p2" 30
assert_eq "evblock by a long path: exit status" 0 "$RC"
ctl stop stop
dump_end

ev_check "check the process records" "$DUMP_OUT" "$rounds" "$fmax" "$PROGS/evblock" "$long" \
	"$TMPDIR"/{short,long}.out <<'PY'
import sys
from evcheck import *
dump, rounds, fmax, short, long = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
res = {}
for tag, out, path in (("s", sys.argv[6], short), ("l", sys.argv[7], long)):
	pid = None
	children = []
	for line in open(out):
		w = dict(x.split("=", 1) for x in line.split() if "=" in x)
		if line.startswith("ready "):
			pid = int(w["pid"])
		if line.startswith("child "):
			children.append(int(w["pid"]))
			assert w["status"] == "3", line
	forks = [r for r in records(dump, "fork") if r["parent_pid"] == pid]
	threads = [r for r in forks if "thread" in r["flags"]]
	procs = [r for r in forks if "thread" not in r["flags"]]
	res[tag + "threads"] = sum(r["child_pid"] == pid and r["child_tid"] != pid and
				   r["parent_tid"] == pid and r["comm"] == "evblock" for r in threads)
	res[tag + "procs"] = sum(r["child_pid"] == r["child_tid"] and r["child_pid"] in children
				 for r in procs)
	ex = [r for r in records(dump, "exec") if r["pid"] in children]
	want = path[:fmax - 1]
	res[tag + "execs"] = sum(r["tid"] == r["pid"] and r["old_tid"] == r["pid"] and
				 r["comm"] == "evblock" and r["filename"] == want for r in ex)
	res[tag + "trunc"] = sum("filename_trunc" in r["flags"] for r in ex)
	exits = records(dump, "exit")
	tids = {r["child_tid"] for r in threads}
	res[tag + "texits"] = sum(r["pid"] == pid and r["tid"] in tids and
				  "group_dead" not in r["flags"] for r in exits)
	res[tag + "cexits"] = sum(r["pid"] in children and r["tid"] == r["pid"] and
				  "group_dead" in r["flags"] and r["comm"] == "evblock" for r in exits)
	res[tag + "self"] = sum(r["pid"] == pid and r["tid"] == pid and "group_dead" in r["flags"]
				for r in exits)
	res[tag + "children"] = len(children)
summary(**res)
PY
say "$OUT"
r=$OUT
for t in s l; do
	what=short
	[ $t = s ] || what=long
	assert_eq "$what path: children reported" "$rounds" "$(kv "$r" ${t}children)"
	assert_eq "$what path: thread forks (flag thread, child pid = parent's)" "$rounds" "$(kv "$r" ${t}threads)"
	assert_eq "$what path: process forks naming each child" "$rounds" "$(kv "$r" ${t}procs)"
	assert_eq "$what path: execs of each child with its filename" "$rounds" "$(kv "$r" ${t}execs)"
	assert_eq "$what path: thread exits (not group_dead)" "$rounds" "$(kv "$r" ${t}texits)"
	assert_eq "$what path: child exits (group_dead)" "$rounds" "$(kv "$r" ${t}cexits)"
	assert_eq "$what path: the program's own exit (group_dead)" 1 "$(kv "$r" ${t}self)"
done
assert_eq "short path: execs flagged filename_trunc" 0 "$(kv "$r" strunc)"
assert_eq "long path: execs flagged filename_trunc" "$rounds" "$(kv "$r" ltrunc)"
