#!/bin/bash
# taprootd --push otlp+http:// with the real daemon, module, pprof and protoc
# in the guest, against tests/vm/otlp-receiver.py: an OpenTelemetry
# collector's profiles endpoint that decodes every request with the real
# protoc and the official .proto files of opentelemetry-proto v1.11.0
# (tests/otlp/proto), checks it to the letter and answers 4xx to anything
# off it, which fails this test. The workload is in two services, tapwork
# in otlpweb.service and tapblock (which blocks, wakes and waits) in
# "otlp db.service"; a --relabel rule keeps only their samples.
#   - the collector answers 503 to the first two requests: they are sent
#     again, and counted as failures in the state file;
#   - its first two answers that accept say, as an OTLP partial success,
#     that one profile was rejected: taprootd logs the reason and counts
#     2 in the state file's push_partial_rejected;
#   - every request carries the bearer token, gzip, the upload id
#     HOSTNAME/FROM-UNTIL.KIND.SERVICE of its spool file, one resource
#     whose service.name is the service the id names, host.name the
#     guest's, os.type linux, and, since each service here is one process,
#     process.pid and process.executable.path; its samples the label --label gave
#     ("team" "pay ments") and process.pid as attributes;
#   - what arrives is what taprootd wrote, as the real pprof decodes its
#     full profiles (KIND-STAMP.pb.gz): for each kind, service and sample
#     type, the values of all the requests add up to the service's values
#     in all the full profiles, and so do they stack by stack (frames by
#     name, an unnamed one as "?"); no upload id arrives twice;
#   - then with --symbolize none: tapwork's frames arrive as addresses in
#     its mapping, which carries tapwork's build ID, and none of its
#     functions is named, while the kernel's frames of tapblock's off-CPU
#     stacks are; the real pprof, given tapwork under its build ID in
#     PPROF_BINARY_PATH, names main and leaf_x in the full cpu profile.
# Two starts of taprootd and a protoc per request under TCG:
# vm-scope: userspace
# vm-timeout: 600
. "${0%/*}/lib.sh"
. "${0%/*}/lib-sampling.sh"

require_module
require_taprootd
require_pprof
require_prog tapwork tapblock
command -v protoc >/dev/null || die "no protoc: scripts/deps installs protobuf-compiler"

PORT=9473
TOKEN=otlp-t0ken FREQ=199
out=$TEST_TMP/profiles store=$TEST_TMP/collector state=$TEST_TMP/taprootd.json
spool=$out/push
mkdir -p "$out" "$store"
printf '%s\n' "$TOKEN" >"$TEST_TMP/bearer"
chmod 600 "$TEST_TMP/bearer"
host=$(hostname)
trap units_remove EXIT
units_make otlpweb.service "otlp db.service"

# daemon_run NAME ARGS...: taprootd pushing to the collector, as spawned
# job DAEMON; returns once its state file names it.
DAEMON=
daemon_run() {
	local name=$1 deadline=$((SECONDS + 90))
	shift
	rm -f "$state"
	spawn DAEMON "$name" "$TAPROOTD" -f -i 1 -o "$out" --start --state "$state" \
		-e cpu,offcpu --label "team=pay ments" --relabel 'keep service_name otlpweb|otlp.db' \
		--push "otlp+http://127.0.0.1:$PORT" --push-bearer-file "$TEST_TMP/bearer" "$@"
	until [ -e "$state" ] && grep -q "^\"pid\": $DAEMON," "$state"; do
		[ -e "/proc/$DAEMON/stat" ] || die "$name exited: $(cat "$TMPDIR/$name.err")"
		[ $SECONDS -lt $deadline ] || die "$name wrote no state in 90 s: $(cat "$TMPDIR/$name.err")"
		# taprootd is starting: nothing to block on.
		nap 0.2
	done
}

# written_of KIND SERVICE: N = the profiles of them taprootd wrote for the
# collector: the requests it logged, and the spool files still waiting.
# The runs are as long as that takes, not as long as the collector takes
# to get them: a collector seconds behind (protoc under TCG) would keep
# taprootd writing eight files a second, to be drained after (270
# requests once, 409 s).
written_of() {
	local spooled
	N=0
	[ ! -e "$store/log.jsonl" ] ||
		N=$(grep -c "\"id\": \"$host/[0-9]*-[0-9]*\.$1\.$2\"" "$store/log.jsonl") || true
	spooled=$(compgen -G "$spool/*.$1.$2.otlp.gz" | wc -l)
	N=$((N + spooled))
}

# daemon_finish NAME: sampling stopped, the spool drained, taprootd gone.
daemon_finish() {
	local name=$1 deadline left files
	expect_ok "taprootctl stop" "$CTL" stop
	# Draining, not how fast: the collector runs protoc on each request,
	# seconds apiece in a TCG guest its host starves (a clean clone's
	# make check once had 36 files left after 120 s). It fails when no
	# upload went in 60 s.
	deadline=$((SECONDS + 60)) left=-1
	while files=$(compgen -G "$spool/*.otlp.gz"); do
		[ -e "/proc/$DAEMON/stat" ] || die "$name exited: $(cat "$TMPDIR/$name.err")"
		[ ! -s "$store/rejected.jsonl" ] ||
			die "the collector refused requests: $(<"$store/rejected.jsonl")"
		if [ "$(wc -l <<<"$files")" != "$left" ]; then
			left=$(wc -l <<<"$files") deadline=$((SECONDS + 60))
		fi
		[ $SECONDS -lt $deadline ] ||
			die "the spool stopped draining: $left files left, none sent in 60 s: $(ls "$spool"); $(tail -5 "$TMPDIR/$name.err")"
		# taprootd uploads with a backoff: nothing to block on.
		nap 0.5
	done
	# The state file, rewritten each second, counts the drained spool
	# (taprootd removes it at exit).
	deadline=$((SECONDS + 30))
	until grep -q '"push_queued": 0,' "$state"; do
		[ $SECONDS -lt $deadline ] || die "the state file counts uploads waiting: $(<"$state")"
		# rewritten once a second: nothing to block on.
		nap 0.5
	done
	cp "$state" "$TEST_TMP/$name.json"
	kill -TERM "$DAEMON"
	wait_exit "$name on SIGTERM" "$DAEMON" 60
	assert_eq "$name's exit status" 0 "$RC"
}

load_module
expect_ok "config set freq" "$CTL" config set freq "$FREQ"
work_in otlpweb.service "$PROGS/tapwork" 400
work_in "otlp db.service" "$PROGS/tapblock" 400
spawn RECV collector python3 -S "$REPO/tests/vm/otlp-receiver.py" "$PORT" "$store" \
	"$REPO/tests/otlp/proto" --require-bearer "$TOKEN" --fail-first 2 --partial-first 2
wait_line "the collector listens" "$TMPDIR/collector.out" "^listening $PORT\$" 60

say "taprootd --push otlp+http://: three intervals of each service's cpu profile"
daemon_run taprootd1
deadline=$((SECONDS + 90))
while written_of cpu otlpweb; [ "$N" -lt 3 ]; do
	[ ! -s "$store/rejected.jsonl" ] ||
		die "the collector refused requests: $(<"$store/rejected.jsonl")"
	[ -e "/proc/$DAEMON/stat" ] || die "taprootd exited: $(cat "$TMPDIR/taprootd1.err")"
	[ $SECONDS -lt $deadline ] ||
		die "$N cpu profiles of otlpweb in 90 s, want 3: $(tail -5 "$TMPDIR/taprootd1.err")"
	# a profile a second: nothing to block on.
	nap 0.5
done
daemon_finish taprootd1
st=$(<"$TEST_TMP/taprootd1.json")
failures=$(grep -o '"push_failures": [0-9]*' <<<"$st") || die "no push_failures in $st"
assert_gt "failed attempts counted (the collector's two 503s)" "${failures##* }" 1
assert_match "the state file" "$st" '^"push_dropped": 0,?$'
assert_match "the state file" "$st" '^"push_rejected": 0,?$'
# The collector's first two answers said it rejected one profile of each.
assert_match "the state file" "$st" '^"push_partial_rejected": 2,?$'
assert_match "taprootd's log" "$(<"$TMPDIR/taprootd1.err")" \
	'the collector rejected 1 of its profiles: one profile rejected \(--partial-first\)'

# Each kind's full profiles merged by one pprof (a run costs seconds under TCG).
for kind in cpu offcpu offwake schedlat; do
	compgen -G "$out/$kind-*.pb.gz" >/dev/null || die "no full $kind profile in $out"
	expect_ok "pprof -raw of the $kind profiles" "$PPROF" -raw -symbolize=none "$out/$kind"-*.pb.gz
	printf '%s\n' "$OUT" >"$out/$kind.raw"
done
python3 -S - "$REPO/tests/vm" "$out" "$store/log.jsonl" "$host" "$TOKEN" <<'PY' || die "the requests are not the profiles"
import glob, json, os, re, sys, urllib.parse
sys.path.insert(0, sys.argv[1])
import pprofraw

out, log, host, token = sys.argv[2:6]
SERVICES = {"otlpweb", "otlp db"}
failed = []
# {(kind, service, type): {stack: value}} of the full profiles and of the requests.
local, sent = {}, {}
for path in glob.glob(f"{out}/*.raw"):
    kind = os.path.basename(path)[:-len(".raw")]
    prof = pprofraw.parse(open(path, errors="replace").read())
    for s in prof.samples:
        svc = s.labels.get("service_name")
        for t, v in s.values.items():
            if v:
                d = local.setdefault((kind, svc, t.split("/")[0]), {})
                key = ";".join(s.frames)
                d[key] = d.get(key, 0) + v
ids = set()
for line in open(log):
    e = json.loads(line)
    m = re.fullmatch(re.escape(host) + r"/(\d{10})-(\d{10})\.(\w+)\.(.+)", e["id"])
    if not m:
        failed.append(f"upload id {e['id']!r} is not {host}/FROM-UNTIL.KIND.SERVICE")
        continue
    kind, svc = m[3], urllib.parse.unquote(m[4])
    if e["id"] in ids or e["dup"]:
        failed.append(f"{e['id']} arrived twice")
    ids.add(e["id"])
    r = e["resource"]
    # One process a service here: its pid and executable are the resource's too.
    if r.get("service.name") != svc or r.get("host.name") != host or r.get("os.type") != "linux" \
            or not isinstance(r.get("process.pid"), int) or not r.get("process.executable.path"):
        failed.append(f"{e['id']}: resource {r}")
    if e["encoding"] != "gzip" or e["authorization"] != f"Bearer {token}":
        failed.append(f"{e['id']}: encoding {e['encoding']!r}, authorization {e['authorization']!r}")
    for p in e["profiles"]:
        a = p["sample_attributes"]
        if a.get("team") != ["pay ments"] or not all(isinstance(x, int) for x in a.get("process.pid", [None])):
            failed.append(f"{e['id']}: sample attributes {a}")
        d = sent.setdefault((kind, svc, p["type"]), {})
        for k, v in p["stacks"].items():
            k = ";".join("?" if re.match(r"0x[0-9a-f]+@", f) else f for f in k.split(";")) if k else k
            d[k] = d.get(k, 0) + v
kinds = {k[0] for k in sent}
print(f"# {len(ids)} requests: kinds {sorted(kinds)}, services {sorted({k[1] for k in sent})}")
for key in sorted(set(local) | set(sent), key=str):
    if key[1] not in SERVICES:
        failed.append(f"samples of service {key[1]!r}: the relabel rule keeps two")
        continue
    lt, st = sum(local.get(key, {}).values()), sum(sent.get(key, {}).values())
    print(f"# {key}: full profiles {lt}, requests {st}")
    if lt != st:
        failed.append(f"{key}: the full profiles hold {lt}, the requests {st}")
    elif local.get(key) != sent.get(key):
        diff = {k for k in set(local.get(key, {})) | set(sent.get(key, {}))
                if local.get(key, {}).get(k) != sent.get(key, {}).get(k)}
        failed.append(f"{key}: stacks differ, e.g. {sorted(diff)[:2]}")
for want in ("cpu", "offcpu", "offwake", "schedlat"):
    if want not in kinds:
        failed.append(f"no {want} request")
for f in failed:
    print("FAIL:", f)
sys.exit(1 if failed else 0)
PY

say "--symbolize none: addresses for the collector to name, the kernel's frames named"
rm -f "$out"/*.pb.gz "$out"/*.raw "$store/log.jsonl"
daemon_run taprootd2 --symbolize none
deadline=$((SECONDS + 90))
while written_of cpu otlpweb; [ "$N" -lt 2 ] || { written_of offcpu otlp%20db; [ "$N" -lt 1 ]; }; do
	[ -e "/proc/$DAEMON/stat" ] || die "taprootd exited: $(cat "$TMPDIR/taprootd2.err")"
	[ $SECONDS -lt $deadline ] || die "no profiles with --symbolize none in 90 s"
	# a profile a second: nothing to block on.
	nap 0.5
done
daemon_finish taprootd2
bid=$(readelf -n "$PROGS/tapwork" | sed -n 's/.*Build ID: *//p')
[ -n "$bid" ] || die "tapwork has no build ID"
python3 -S - "$store/log.jsonl" "$PROGS/tapwork" "$bid" <<'PY' || die "--symbolize none: requests"
import json, sys
log, exe, bid = sys.argv[1:]
failed, cpu_addr, off_named = [], 0, 0
for line in open(log):
    e = json.loads(line)
    for fn in ("main", "leaf_x", "leaf_y", "run", "libfunc"):
        if fn in e["functions"]:
            failed.append(f"{e['id']}: tapwork's {fn} named")
    if ".otlpweb" in e["id"]:
        if not any(m["file"] == exe and m["build_id"] == bid for m in e["mappings"]):
            failed.append(f"{e['id']}: no mapping of {exe} with build ID {bid}: {e['mappings']}")
        for p in e["profiles"]:
            cpu_addr += sum(v for k, v in p["stacks"].items() if f"@{exe}" in k)
    if ".offcpu." in e["id"]:
        off_named += sum(1 for f in e["functions"] if "schedule" in f)
print(f"# cpu values with tapwork's frames as addresses: {cpu_addr}; off-CPU kernel functions named: {off_named}")
if not cpu_addr:
    failed.append("no sample of otlpweb with tapwork's frames as addresses")
if not off_named:
    failed.append("no kernel function (schedule) named in the off-CPU requests")
for f in failed:
    print("FAIL:", f)
sys.exit(1 if failed else 0)
PY
cpus=("$out"/cpu-*.pb.gz)
cpu=${cpus[0]}
[ -e "$cpu" ] || die "no full cpu profile written with --symbolize none"
mkdir -p "$TEST_TMP/bin/$bid"
cp "$PROGS/tapwork" "$TEST_TMP/bin/$bid/"
expect_ok "pprof names tapwork from its build ID" env PPROF_BINARY_PATH="$TEST_TMP/bin" \
	HOME="$TEST_TMP" "$PPROF" -traces -symbolize=local "$cpu"
assert_contains "pprof -traces, symbolized from PPROF_BINARY_PATH" "$OUT" "leaf_x"
assert_contains "pprof -traces, symbolized from PPROF_BINARY_PATH" "$OUT" "main"
expect_ok "pprof -raw, as written" "$PPROF" -raw -symbolize=none "$cpu"
assert_not_contains "the full profile as written" "$OUT" "leaf_x"
say "the requests are the profiles; with --symbolize none, named by pprof from the binary"
