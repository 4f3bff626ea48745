#!/bin/bash
# Binaries deleted, replaced or damaged on disk while their processes run,
# and corrupt ELF and CFI data (issue #7, daemon faults). taprootd (-i 1,
# --start) profiles replwork processes, each started from its own copy of
# replwork and of its library libtapwork (loaded through $ORIGIN); while a
# process waits, mapped and idle, or once it computes (the "seen-" cases:
# taprootd has opened its files), its files are changed:
#   exe-deleted       rm of the executable
#   exe-replaced      another program (tapexec-b) renamed over it, the old
#                     file kept under another name (maps shows the path)
#   lib-replaced      another library (libz) renamed over libtapwork, the
#                     same way
#   lib-truncated     libtapwork truncated in place after its last PT_LOAD
#                     (section headers, symbol tables gone)
#   lib-garbage       the same tail overwritten in place with random bytes
#   seen-replaced     exe and library renamed over while it computes (maps
#                     then says "(deleted)")
#   seen-garbage      the library's tail overwritten while it computes
# and before it starts, copies with corrupt unwinding data:
#   eh-frame-hdr, eh-frame  libtapwork's, random bytes
#   debug-frame       a libtapwork with CFI in .debug_frame only, random
#   shdrs             libtapwork's section header table, random bytes
#   ehdr-wild         libtapwork's e_shoff/e_shnum/e_shstrndx out of range
#   exe-eh-frame      replwork's own .eh_frame and .eh_frame_hdr, random
# taprootd must keep running and exit 0 on SIGTERM; every profile decodes
# with the real pprof; in every sample of these processes, a frame of the
# replwork or libtapwork mapping has a name of the original file (nm) or
# a marker ("[unknown]", "[no cfi]"...): never a name of the file put in
# its place or read from garbage. Files still mapped stay readable through
# /proc/PID/map_files: the exe-deleted, exe-replaced and lib-replaced
# cases keep their names (repl_leaf, leaf_y). Misses are counted in the state file (elf_errors,
# unwind_*). Random bytes come from a seed, printed; quick mode: one
# round, long mode (TAPROOT_LONG=1): 10 rounds of new seeds.
# Each start of taprootd and of pprof takes seconds under TCG:
# vm-scope: userspace
# vm-timeout: 300
# reliability: daemon-faults
. "${0%/*}/lib.sh"
. "${0%/*}/lib-sampling.sh"

require_module
require_prog replwork libtapwork libtapdf tapexec-b
require_pprof
require_taprootd
LIBZ=$(readlink -f /lib/x86_64-linux-gnu/libz.so.1) || die "no libz to put in place"

rounds=$(quick_long 1 10)
[ "$LONG" != 1 ] || [ "${TAPROOT_TEST_TIMEOUT:-0}" -ge 1200 ] ||
	die "long mode needs TAPROOT_TEST_TIMEOUT >= 1200"
seed=${TAPROOT_SEED:-$((${EPOCHREALTIME/./} % 1000000))}
say "seed $seed (TAPROOT_SEED=$seed repeats it)"
before=(exe-deleted exe-replaced lib-replaced lib-truncated lib-garbage
	eh-frame-hdr eh-frame debug-frame shdrs ehdr-wild exe-eh-frame)
seen=(seen-replaced seen-garbage)
out=$TEST_TMP/profiles
state=$TEST_TMP/taprootd.json
mkdir -p "$out"
load_module
ctl "config set freq" config set freq 199

# nm_names FILE: every name FILE has: symbols, imports (PLT stubs are
# named after them), DWARF names (inlined functions, such as atoi).
nm_names() {
	nm -D "$1" 2>/dev/null | awk '{ print $NF }' | sed 's/@.*//'
	nm "$1" 2>/dev/null | awk '{ print $NF }' | sed 's/@.*//'
	readelf -wi "$1" 2>/dev/null | awk -F': ' '/DW_AT_name/ { print $NF }'
}
nm_names "$PROGS/replwork" >"$TEST_TMP/names.replwork"
{ nm_names "$PROGS/libtapwork"; nm_names "$PROGS/libtapdf"; } >"$TEST_TMP/names.libtapwork"

# corrupt SEED CASE=DIR...: damage the copies in each DIR as CASE says
# (python: one start for all of them, it is slow under TCG).
corrupt() {
	python3 -S - "$@" <<'PY'
import os, random, struct, sys

seed, jobs = int(sys.argv[1]), [a.split("=", 1) for a in sys.argv[2:]]

def elf(path):
    b = open(path, "rb").read()
    phoff, shoff = struct.unpack_from("<QQ", b, 0x20)
    phentsize, phnum, shentsize, shnum, shstrndx = struct.unpack_from("<HHHHH", b, 0x36)
    load_end = 0
    for i in range(phnum):
        p_type, _, p_offset, _, _, p_filesz = struct.unpack_from("<IIQQQQ", b, phoff + i * phentsize)
        if p_type == 1:
            load_end = max(load_end, p_offset + p_filesz)
    secs = {}
    sh = [struct.unpack_from("<IIQQQQ", b, shoff + i * shentsize) for i in range(shnum)]
    stroff = sh[shstrndx][4]
    for name, _, _, _, off, size in sh:
        n = b[stroff + name:b.index(b"\0", stroff + name)].decode()
        secs[n] = (off, size)
    return b, load_end, shoff, shnum * shentsize, secs

def scribble(path, off, size, rnd):
    with open(path, "r+b") as f:
        f.seek(off)
        f.write(bytes(rnd.randrange(256) for _ in range(size)))

for k, (case, d) in enumerate(jobs):
    rnd = random.Random(seed * 1000 + k)
    lib, exe = os.path.join(d, "libtapwork"), os.path.join(d, "replwork")
    try:
        b, load_end, shoff, shlen, secs = elf(lib)
    except ValueError as e:
        sys.exit(f"corrupt {case}: {lib} ({os.path.getsize(lib)} bytes) does not parse: {e}")
    if case == "lib-truncated":
        os.truncate(lib, load_end)
    elif case in ("lib-garbage", "seen-garbage"):
        scribble(lib, load_end, len(b) - load_end, rnd)
    elif case in ("eh-frame-hdr", "eh-frame", "debug-frame"):
        off, size = secs["." + case.replace("-", "_")]
        scribble(lib, off, size, rnd)
    elif case == "shdrs":
        scribble(lib, shoff, shlen, rnd)
    elif case == "ehdr-wild":
        with open(lib, "r+b") as f:
            f.seek(0x28)
            f.write(struct.pack("<Q", len(b) - 8))
            f.seek(0x3c)
            f.write(struct.pack("<HH", 0xffff, 0xfffe))
    elif case == "exe-eh-frame":
        _, _, _, _, esecs = elf(exe)
        for s in (".eh_frame", ".eh_frame_hdr"):
            scribble(exe, *esecs[s], rnd)
    else:
        sys.exit(f"corrupt: unknown case {case}")
PY
}

daemon_begin "$out" "$state"
daemon=$DAEMON_PID

# copy CASE DIR: a copy of replwork and libtapwork in DIR (libtapdf for
# debug-frame).
copy() {
	local lib=libtapwork
	mkdir -p "$2"
	[ "$1" != debug-frame ] || lib=libtapdf
	cp "$PROGS/replwork" "$2/replwork"
	cp "$PROGS/$lib" "$2/libtapwork"
}

# start CASE DIR: replwork of DIR, which waits.
pids=() cases=() jobs=()
start() {
	local c=$1 d=$2 p
	spawn p "repl.$c" "$d/replwork" "$secs"
	pids+=("$p")
	cases+=("$c")
}

# change CASE DIR: what happens to the files of a running replwork (the
# damage in place is queued in jobs, for one corrupt).
change() {
	local d=$2
	case $1 in
	exe-deleted) rm "$d/replwork" ;;
	# The old file keeps a name: maps shows the path, not "(deleted)", and
	# only the inode tells the file at the path is another one.
	exe-replaced)
		ln "$d/replwork" "$d/old"
		cp "$PROGS/tapexec-b" "$d/new" && mv "$d/new" "$d/replwork" ;;
	lib-replaced)
		ln "$d/libtapwork" "$d/old"
		cp "$LIBZ" "$d/new" && mv "$d/new" "$d/libtapwork" ;;
	seen-replaced)
		cp "$PROGS/tapexec-b" "$d/new" && mv "$d/new" "$d/replwork"
		cp "$LIBZ" "$d/new" && mv "$d/new" "$d/libtapwork" ;;
	lib-truncated | lib-garbage | seen-garbage) jobs+=("$1=$d") ;;
	esac
}

secs=$(quick_long 4 8)
: >"$TEST_TMP/pids"
for ((r = 1; r <= rounds; r++)); do
	say "round $r, seed $seed: ${#before[@]} cases changed before they compute, ${#seen[@]} after"
	pids=() cases=() jobs=()
	for c in eh-frame-hdr eh-frame debug-frame shdrs ehdr-wild exe-eh-frame; do
		jobs+=("$c=$TEST_TMP/r$r/$c")
		copy "$c" "$TEST_TMP/r$r/$c"
	done
	corrupt "$seed" "${jobs[@]}"
	jobs=()
	for c in "${before[@]}" "${seen[@]}"; do
		[ -e "$TEST_TMP/r$r/$c" ] || copy "$c" "$TEST_TMP/r$r/$c"
		start "$c" "$TEST_TMP/r$r/$c"
	done
	for i in "${!pids[@]}"; do
		wait_line "replwork ${cases[i]} ready" "$TMPDIR/repl.${cases[i]}.out" '^replwork: ready'
		[[ ${cases[i]} == seen-* ]] || change "${cases[i]}" "$TEST_TMP/r$r/${cases[i]}"
	done
	[ ${#jobs[@]} -eq 0 ] || corrupt "$seed" "${jobs[@]}"
	jobs=()
	for i in "${!pids[@]}"; do
		kill -USR1 "${pids[i]}"
		echo "${pids[i]} ${cases[i]}" >>"$TEST_TMP/pids"
	done
	# Computing, each seen by taprootd, before their files change under
	# them (the check holds whatever taprootd saw first).
	nap 2
	for c in "${seen[@]}"; do
		change "$c" "$TEST_TMP/r$r/$c"
	done
	[ ${#jobs[@]} -eq 0 ] || corrupt "$seed" "${jobs[@]}"
	for i in "${!pids[@]}"; do
		wait_exit "replwork ${cases[i]}" "${pids[i]}" $((secs + 60))
		assert_eq "replwork ${cases[i]}'s exit status" 0 "$RC"
	done
	[ -e "/proc/$daemon/stat" ] || die "taprootd died: $(cat "$TMPDIR/taprootd.err")"
	seed=$((seed + 1))
done
nap 1.5	# one more interval: the last samples in a profile, counters in the state
cp "$state" "$TEST_TMP/state.json"
kill -TERM "$daemon"
wait_exit "taprootd exits on SIGTERM" "$daemon" 60
assert_eq "taprootd's exit status after SIGTERM" 0 "$RC"
files=("$out"/cpu-*.pb.gz)
[ -e "${files[0]}" ] || die "taprootd wrote no profile: $(cat "$TMPDIR/taprootd.err")"
run "$PPROF" -raw -symbolize=none "${files[@]}"
[ "$RC" -eq 0 ] || die "a profile does not decode: $ERR"
printf '%s\n' "$OUT" >"$TEST_TMP/cpu.raw"

python3 -S - "$REPO/tests/vm" "$TEST_TMP" >"$TEST_TMP/check.out" <<'PY' ||
import json, sys
sys.path.insert(0, sys.argv[1])
import pprofraw

t = sys.argv[2]
prof = pprofraw.parse(open(t + "/cpu.raw", errors="replace").read())
st = json.load(open(t + "/state.json"))
names = {m: set(open(f"{t}/names.{m}").read().split()) for m in ("replwork", "libtapwork")}
pids = dict(line.split() for line in open(t + "/pids"))
n = "samples/count"
fails = []
per = {}
for s in prof.samples:
    case = pids.get(s.labels.get("pid"))
    if not case:
        continue
    c = per.setdefault(case, {"samples": 0, "named": 0, "markers": 0, "wrong": []})
    c["samples"] += s.values[n]
    if (case.startswith("exe-") and "repl_leaf" in s.frames or
            case.startswith("lib-") and "leaf_y" in s.frames):
        c["named"] += s.values[n]
    if any(f.startswith("[") for f in s.frames):
        c["markers"] += s.values[n]
    for f, m in zip(s.frames, s.mappings):
        base = m.rsplit("/", 1)[-1].split(" ")[0]
        # "?": a frame without a name (pprof -raw prints no function).
        if base in names and not f.startswith("[") and f not in ("?", "??") \
                and f not in names[base]:
            c["wrong"].append(f"{f} [{base}]")
for case in sorted(set(pids.values())):
    c = per.get(case, {"samples": 0, "named": 0, "markers": 0, "wrong": []})
    print(f"{case}: {c['samples']} samples, {c['named']} in the function of the changed file, "
          f"{c['markers']} with a marker frame, {len(c['wrong'])} frames wrongly named "
          + " ".join(sorted(set(c["wrong"]))[:6]))
    if c["wrong"]:
        fails.append(f"{case}: frames named from another file or garbage")
    if c["samples"] == 0:
        fails.append(f"{case}: no sample at all")
    elif case in ("exe-deleted", "exe-replaced", "lib-replaced") and c["named"] == 0:
        fails.append(f"{case}: no sample named from the mapped file (map_files)")
ends = {k: v for k, v in st.items() if k.startswith("unwind_") and k != "unwind_complete_permille"}
print("counters: " + " ".join(f"{k}={st[k]}" for k in
      ("samples", "elf_errors", "user_stacks", "frames", "frames_unsymbolized"))
      + " " + " ".join(f"{k}={v}" for k, v in ends.items()))
degraded = sum(v for k, v in ends.items() if k != "unwind_complete")
print(f"score: elf_errors={st['elf_errors']} unwind_degraded={degraded} "
      f"frames_unsymbolized={st['frames_unsymbolized']} "
      f"wrong={sum(len(c['wrong']) for c in per.values())}")
if degraded == 0:
    fails.append("no unwind ended early, with CFI corrupt: were they profiled?")
for f in fails:
    print(f"FAIL: {f}")
sys.exit(1 if fails else 0)
PY
	{ cat "$TEST_TMP/check.out"; die "profile check failed (seed $((seed - rounds)))"; }
sed 's/^/# /' "$TEST_TMP/check.out"
{ grep -E 'warning|error' "$TMPDIR/taprootd.err" || true; } | sort | uniq -c | sed 's/^/# log: /' |
	head -20
scores=$(sed -n 's/^score: //p' "$TEST_TMP/check.out")
# shellcheck disable=SC2086 # KEY=VALUE words
score cases=$((${#before[@]} + ${#seen[@]})) failures=0 rounds="$rounds" $scores
