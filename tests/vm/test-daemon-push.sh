#!/bin/bash
# taprootd --push with the real daemon, module and pprof in the guest, against
# tests/vm/push-receiver.py: a profile store that checks every request to the
# letter and answers 4xx to anything off it, which fails this test. The
# workload is in two services, tapwork in pushweb.service and tapblock
# (which blocks, wakes and waits) in "push db.service", a name with a
# space; a --relabel rule keeps only their samples, so that what must
# arrive is known.
#   - each interval's profiles arrive split by service, one upload per
#     (interval, kind, service), for cpu, offcpu, offwake and schedlat. Its
#     name is the service ("push_db": what the name syntax cannot hold is
#     "_") with the kind, hostname and kernel_release as the guest says and
#     --label's value, its space made "_"; its id is HOSTNAME/ and its spool
#     file's name, FROM-UNTIL.KIND.SERVICE (SERVICE percent-encoded; .pb.gz
#     or not); cpu's sampleRate, when sent, is the module's frequency (the
#     pprof's period says it anyway); the off-CPU kinds' sample_type_config names
#     the profile's sample types; the bearer token is the first line of
#     --push-bearer-file, the tenant --push-tenant's;
#   - what arrives is what taprootd wrote, as the real pprof decodes it:
#     every sample of an upload is of its service; every upload's
#     [from, until] holds the stamp of a full profile (KIND-STAMP.pb.gz)
#     of its kind, each interval's its own (a stamp is later than its
#     interval's start when an earlier interval took that second); no
#     (interval, kind, service) is stored twice; for each kind and service
#     the samples of all the uploads add up, value by value, to the
#     service's samples in all the full profiles of the kind, so none is
#     missing; pprof's Time and Duration of the uploads of the first
#     interval, of one spooled while the store was down and of the one
#     whose answer was held (below) lie within [from, until], a second at
#     most from each end;
#   - the store down for 3 intervals: their uploads wait in OUT/push/ as
#     FROM-UNTIL.KIND.SERVICE.pb.gz, the state file and 'taprootctl status'
#     count failures and what waits; once it is back each arrives, once;
#   - taprootd killed with kill -9 while the store holds its answer to an
#     upload it stored, just as taprootd writes an interval: the next
#     taprootd, on the same directory, sends that upload again under the
#     same id (the store answers 200 to the duplicate and keeps one copy)
#     and the rest, and every full profile on disk arrives (an interval the
#     kill cut short may arrive for the kinds taprootd had spooled);
#   - once sampling stops, OUT/push/ drains and the state file counts every
#     upload the store answered as push_uploaded, none queued, dropped or
#     rejected.
# Two starts of taprootd (kallsyms, netlink), three of the python store and
# twenty runs of pprof take seconds each under TCG:
# vm-scope: userspace
# vm-timeout: 480
. "${0%/*}/lib.sh"
. "${0%/*}/lib-sampling.sh"

require_module
require_taprootd
require_pprof
require_prog tapwork tapblock

PORT=9471
TOKEN=s3cret-t0ken TENANT=acme FREQ=199
out=$TEST_TMP/profiles store=$TEST_TMP/store state=$TEST_TMP/taprootd.json
export TAPROOTD_STATE=$state	# for 'taprootctl status'
spool=$out/push
mkdir -p "$out" "$store"
# Only the first line is the token: the second must not reach the store.
printf '%s\nnot-the-token\n' "$TOKEN" >"$TEST_TMP/bearer"
chmod 600 "$TEST_TMP/bearer"	# a secret: taprootd warns otherwise
host=$(hostname)
# The workload at nice 19 (work_in) leaves the CPU to taprootd and the
# store, which must keep up with an upload per kind and service every
# second under TCG.
trap units_remove EXIT
units_make pushweb.service "push db.service"

# work_stop: the workload killed, its CPU free for pprof.
work_stop() {
	kill -KILL "${WORK_PIDS[@]}"
	wait "${WORK_PIDS[@]}" 2>/dev/null || true
	WORK_PIDS=()
}

# receiver NAME [OPTIONS...]: push-receiver.py on PORT storing into $store
# (the same for all: a restarted one knows what was stored), as spawned job
# RECV; returns once it listens.
RECV=
receiver() {
	local name=$1
	shift
	spawn RECV "$name" python3 -S "$REPO/tests/vm/push-receiver.py" "$PORT" "$store" \
		--require-bearer "$TOKEN" --require-tenant "$TENANT" "$@"
	wait_line "$name listens" "$TMPDIR/$name.out" "^listening $PORT\$" 60
}

receiver_stop() {
	kill -TERM "$RECV"
	wait_exit "the receiver exits on SIGTERM" "$RECV" 30
	assert_eq "the receiver's exit status after SIGTERM" 0 "$RC"
}

# daemon_start NAME: taprootd pushing to the receiver, as spawned job DAEMON,
# stderr in $TMPDIR/NAME.err; returns once its state file names it (it
# reads the rings).
DAEMON=
daemon_start() {
	local name=$1 deadline=$((SECONDS + 90))
	spawn DAEMON "$name" "$TAPROOTD" -f -i 1 -o "$out" --start --state "$state" \
		-e cpu,offcpu --label "team=pay ments" --relabel 'keep service_name pushweb|push.db' \
		--push "http://127.0.0.1:$PORT" --push-bearer-file "$TEST_TMP/bearer" \
		--push-tenant "$TENANT"
	until [ -e "$state" ] && grep -q "^\"pid\": $DAEMON," "$state"; do
		[ -e "/proc/$DAEMON/stat" ] || die "$name exited: $(cat "$TMPDIR/$name.err")"
		[ $SECONDS -lt $deadline ] || die "$name wrote no state in 90 s: $(cat "$TMPDIR/$name.err")"
		# taprootd is starting: nothing to block on.
		nap 0.2
	done
}

# state_read: ST[member] = each number (and true/false) of the state file.
declare -A ST
state_read() {
	local line re='^"([a-z_]+)": ([0-9.]+|true|false),?$'
	ST=()
	while IFS= read -r line; do
		[[ $line =~ $re ]] && ST[${BASH_REMATCH[1]}]=${BASH_REMATCH[2]}
	done <"$state"
	local k
	for k in push_uploaded push_failures push_queued push_queued_bytes push_dropped \
		push_rejected; do
		[ -n "${ST[$k]:-}" ] || die "the state file has no $k: $(<"$state")"
	done
}

# log_scan: what the store's log says. LOGGED: its lines; FROMS[from] = 1
# for each interval stored; IDS[id] = times it came; STORED[id] = 1 if it
# was stored (not a duplicate).
declare -A FROMS IDS STORED
log_scan() {
	local line id id_re='"id": "([^"]*)"' from_re='"from": ([0-9]+)'
	LOGGED=0 FROMS=() IDS=() STORED=()
	[ -e "$store/log.jsonl" ] || return 0
	while IFS= read -r line; do
		LOGGED=$((LOGGED + 1))
		[[ $line =~ $id_re ]] || die "no id in the store's log line: $line"
		id=${BASH_REMATCH[1]}
		IDS[$id]=$((${IDS[$id]:-0} + 1))
		if [[ $line == *'"dup": false'* ]]; then
			STORED[$id]=1
			[[ $line =~ $from_re ]] && FROMS[${BASH_REMATCH[1]}]=1
		fi
	done <"$store/log.jsonl"
}

# rejected_none: the store answered no request with a 4xx.
rejected_none() {
	[ ! -s "$store/rejected.jsonl" ] ||
		die "the store refused requests of taprootd: $(<"$store/rejected.jsonl")"
}

# spool_list: SPOOL = the names of the files in OUT/push/.
spool_list() {
	local f
	SPOOL=()
	for f in "$spool"/*; do
		[ -e "$f" ] && SPOOL+=("${f##*/}")
	done
	return 0
}

# profiles_count: NPROF = the full profiles in OUT.
profiles_count() {
	local f
	NPROF=0
	for f in "$out"/*.pb.gz; do
		[ -e "$f" ] && NPROF=$((NPROF + 1))
	done
	return 0
}

# daemon_alive NAME: the spawned taprootd DAEMON (NAME) still runs.
daemon_alive() {
	[ -e "/proc/$DAEMON/stat" ] || die "$1 exited: $(cat "$TMPDIR/$1.err")"
}

load_module
expect_ok "config set freq" "$CTL" config set freq "$FREQ"
work_in pushweb.service "$PROGS/tapwork" 400
work_in "push db.service" "$PROGS/tapblock" 400
receiver recv1
daemon_start taprootd1

say "uploads arrive, an interval at a time"
deadline=$((SECONDS + 60))
while log_scan && [ ${#FROMS[@]} -lt 3 ]; do
	rejected_none
	daemon_alive taprootd1
	[ $SECONDS -lt $deadline ] ||
		die "uploads of ${#FROMS[@]} intervals in 60 s, want 3; taprootd: $(cat "$TMPDIR/taprootd1.err")"
	# taprootd uploads once a second: nothing to block on.
	nap 0.5
done
say "$LOGGED uploads of ${#FROMS[@]} intervals"

say "the store down: uploads wait in ${spool#"$TEST_TMP"/}"
receiver_stop
deadline=$((SECONDS + 60))
declare -A down_froms=()
while :; do
	spool_list
	down_froms=()
	for f in "${SPOOL[@]}"; do
		if [[ $f =~ ^([0-9]{10})-[0-9]{10}\.(cpu|offcpu|offwake|schedlat)\..+\.pb\.gz$ ]]; then
			down_froms[${BASH_REMATCH[1]}]=1
		fi
	done
	[ ${#down_froms[@]} -lt 3 ] || break
	daemon_alive taprootd1
	[ $SECONDS -lt $deadline ] ||
		die "${#down_froms[@]} intervals queued in 60 s with the store down, want 3: ${SPOOL[*]}"
	# taprootd writes an interval a second: nothing to block on.
	nap 0.5
done
spooled=()
for f in "${SPOOL[@]}"; do
	if [[ $f =~ ^[0-9]{10}-[0-9]{10}\.(cpu|offcpu|offwake|schedlat)\.(.+)\.pb\.gz$ ]]; then
		case ${BASH_REMATCH[2]} in
		pushweb | push%20db) spooled+=("$f") ;;
		*) die "queued upload $f: its service is neither pushweb nor 'push db' percent-encoded" ;;
		esac
	else
		say "not an upload's name in ${spool##*/}/ (a temporary file?): $f"
	fi
done
printf '%s\n' "${spooled[@]}" >"$TEST_TMP/spooled.txt"
say "${#spooled[@]} uploads queued, of ${#down_froms[@]} intervals"
# The state file, rewritten every interval, counts them.
deadline=$((SECONDS + 10))
while state_read; [ "${ST[push_failures]}" -eq 0 ] || [ "${ST[push_queued]}" -eq 0 ] ||
	[ "${ST[push_queued_bytes]}" -eq 0 ]; do
	[ $SECONDS -lt $deadline ] ||
		die "the state file counts no failure or nothing queued with the store down: $(<"$state")"
	# the state file is rewritten every second: nothing to block on.
	nap 0.5
done
expect_ok "taprootctl status" "$CTL" status
# Something waits while the store is down.
assert_match "taprootctl status shows the uploads" "$OUT" "^ +push: +[0-9]+ uploaded.* [1-9][0-9]* waiting"
say "state: failures ${ST[push_failures]}, queued ${ST[push_queued]} (${ST[push_queued_bytes]} bytes)"
say "status: $(grep -E '^ +push:' <<<"$OUT")"

say "the store back: what was queued arrives, once"
receiver recv2
deadline=$((SECONDS + 90))
while :; do
	log_scan
	rejected_none
	missing=()
	for f in "${spooled[@]}"; do
		[ -n "${STORED[$host/$f]:-}${STORED[$host/${f%.pb.gz}]:-}" ] || missing+=("$f")
	done
	[ ${#missing[@]} -gt 0 ] || break
	daemon_alive taprootd1
	[ $SECONDS -lt $deadline ] ||
		die "90 s after the store came back, ${#missing[@]} of ${#spooled[@]} queued uploads did not arrive under the id $host/FILE: ${missing[*]}; taprootd: $(tail -20 "$TMPDIR/taprootd1.err")"
	# taprootd retries with a backoff: nothing to block on.
	nap 0.5
done
state_read
log_scan
[ "${ST[push_uploaded]}" -le "$LOGGED" ] ||
	die "the state file counts ${ST[push_uploaded]} uploads, the store answered $LOGGED"
assert_gt "push_uploaded after the outage" "${ST[push_uploaded]}" 0
assert_eq "push_rejected after the outage" 0 "${ST[push_rejected]}"
assert_eq "push_dropped after the outage" 0 "${ST[push_dropped]}"

say "kill -9 while the store holds its answer, as an interval is written; started again"
receiver_stop
receiver recv3 --delay-first 10
wait_line "an upload's answer is held" "$TMPDIR/recv3.out" "^holding " 60
held=${LINE#holding }
# The kill is aimed at an interval being written, as soon as a full
# profile appears: taprootd may then be writing the interval's other
# profiles or splitting them into the spool (it mostly has done so by the
# time this sees the file). Whatever it had done, every full profile on
# disk must arrive in the end.
profiles_count
n0=$NPROF deadline=$((SECONDS + 8))
while profiles_count; [ "$NPROF" -eq "$n0" ]; do
	[ $SECONDS -lt $deadline ] || die "taprootd wrote no profile in 8 s: $(tail -20 "$TMPDIR/taprootd1.err")"
	# taprootd writes once a second; polled often, to kill it mid-write.
	nap 0.01
done
kill -KILL "$DAEMON"
killed_at=$EPOCHSECONDS
wait_exit "taprootd after kill -9" "$DAEMON" 30
# A SIGKILL is immediate; the hold lasts 10 s.
[[ $(<"$TMPDIR/recv3.out") != *"held "* ]] ||
	die "the held answer went out before taprootd was killed"
log_scan
base=$LOGGED
[ "${STORED[$held]:-}" = 1 ] || die "the held upload $held is not in the store's log"
say "held $held; the store has $LOGGED uploads"
daemon_start taprootd2
started=$(date +%s)
deadline=$((SECONDS + 90))
while :; do
	log_scan
	rejected_none
	n=0
	for f in "${!FROMS[@]}"; do
		[ "$f" -lt "$started" ] || n=$((n + 1))
	done
	[ "${IDS[$held]}" -lt 2 ] || [ "$n" -lt 2 ] || break
	daemon_alive taprootd2
	[ $SECONDS -lt $deadline ] ||
		die "90 s after the restart: the held upload came ${IDS[$held]} times (want 2), $n intervals of the new taprootd arrived (want 2); taprootd: $(tail -20 "$TMPDIR/taprootd2.err")"
	# taprootd uploads once a second: nothing to block on.
	nap 0.5
done

say "sampling stopped: OUT/push/ drains"
ctl "taprootctl stop" stop
deadline=$((SECONDS + 60)) prev=-1
while :; do
	state_read
	spool_list
	profiles_count
	# Quiet: no more sampling, the last profiles written (none for a
	# second), nothing queued, the state file written since.
	if [ "${ST[sampling]}" = false ] && [ "$NPROF" -eq "$prev" ] && [ ${#SPOOL[@]} -eq 0 ] &&
		[ "${ST[push_queued]}" -eq 0 ]; then
		break
	fi
	prev=$NPROF
	daemon_alive taprootd2
	[ $SECONDS -lt $deadline ] ||
		die "60 s after sampling stopped, still queued: ${SPOOL[*]:-nothing in push/}; state: $(<"$state")"
	# taprootd writes the last interval and uploads it: nothing to block on.
	nap 1
done
log_scan
rejected_none
deadline=$((SECONDS + 10))
while state_read; [ "${ST[push_uploaded]}" -ne $((LOGGED - base)) ]; do
	[ $SECONDS -lt $deadline ] ||
		die "the restarted taprootd counts ${ST[push_uploaded]} uploads, the store answered it $((LOGGED - base))"
	# the state file is rewritten every second: nothing to block on.
	nap 0.5
done
for k in push_queued push_queued_bytes push_dropped push_rejected; do
	assert_eq "$k at the end" 0 "${ST[$k]}"
done
say "state: uploaded ${ST[push_uploaded]}, failures ${ST[push_failures]}"
kill -TERM "$DAEMON"
wait_exit "taprootd exits on SIGTERM" "$DAEMON" 30
assert_eq "taprootd's exit status after SIGTERM" 0 "$RC"
spool_list
[ ${#SPOOL[@]} -eq 0 ] || die "left in ${spool##*/}/ after a clean exit: ${SPOOL[*]}"
receiver_stop
rejected_none
work_stop

say "what arrived, against the full profiles, as pprof decodes them"
python3 -S - "$REPO/tests/vm" "$PPROF" "$out" "$store" "$TEST_TMP/spooled.txt" "$host" \
	"$KVER" "$FREQ" "$held" "$TOKEN" "$TENANT" "$killed_at" <<'PY' || exit 1
import calendar, collections, concurrent.futures, json, os, re, subprocess, sys, time, urllib.parse
sys.path.insert(0, sys.argv[1])
import pprofraw

pprof, out, store, spooled_file, host, release, freq, held, token, tenant, killed_at = sys.argv[2:]
SERVICES = {"pushweb", "push_db"}
# The series name holds the service with what the name syntax cannot as "_".
SAFE = lambda s: s and re.sub(r"[^A-Za-z0-9_.:/@+-]", "_", s)
KINDS = ("cpu", "offcpu", "offwake", "schedlat")
failed = []

def fail(msg):
    failed.append(msg)

def decode(files):
    r = subprocess.run([pprof, "-raw", "-symbolize=none", *files], capture_output=True, text=True,
                       errors="replace")
    # Given several files, pprof leaves out those it cannot read, says
    # "Fetched N source profiles out of M" and exits 0.
    m = re.search(r"Fetched (\d+) source profiles out of (\d+)", r.stderr)
    if r.returncode or (m and m[1] != m[2]):
        names = " ".join(os.path.basename(f) for f in files[:5]) + (" ..." if files[5:] else "")
        sys.exit(f"FAIL: pprof -raw does not decode all of {len(files)} files ({names}): "
                 f"{r.stderr.strip()}")
    return r.stdout

def decode_all(jobs):
    """{key: pprof -raw text} for {key: [files]}, a pprof per CPU at a time."""
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as ex:
        futs = {k: ex.submit(decode, files) for k, files in jobs.items()}
        return {k: f.result() for k, f in futs.items()}

def totals(text):
    """{service: {type: sum}} of the samples of a pprof -raw text."""
    t = collections.defaultdict(collections.Counter)
    for s in pprofraw.parse(text).samples:
        t[SAFE(s.labels.get("service_name"))].update(s.values)
    return t

def header(text):
    """(Time in seconds, Duration in seconds, the Duration as printed)."""
    m = re.search(r"^Time: (\d+)-(\d+)-(\d+) (\d+):(\d+):(\d+)(\.\d+)? ([-+])(\d\d)(\d\d)", text, re.M)
    d = re.search(r"^Duration: (\S+)", text, re.M)
    if not m or not d:
        return None, None, None
    y, mo, da, h, mi, s = (int(x) for x in m.groups()[:6])
    t = calendar.timegm((y, mo, da, h, mi, s)) + float(m.group(7) or 0)
    t -= (1 if m.group(8) == "+" else -1) * (int(m.group(9)) * 3600 + int(m.group(10)) * 60)
    # pprof prints the Duration cut to 4 characters (%.4v): "1.00" for
    # 1.0012s, "999." for 999.8ms, "500m" for 500ms, "2s". Intervals here
    # last about a second: a bare number of 60 or more is milliseconds.
    dm = re.fullmatch(r"(\d+(?:\.\d*)?)(s|ms|m)?", d.group(1))
    if not dm:
        return t, None, d.group(1)
    v = float(dm.group(1).rstrip("."))
    if dm.group(2) in ("ms", "m") or (dm.group(2) is None and v >= 60):
        v /= 1000
    return t, v, d.group(1)

log = [json.loads(l) for l in open(f"{store}/log.jsonl")]
stored = [e for e in log if not e["dup"]]
spooled = open(spooled_file).read().split()

# Every upload, as the store took it.
ID = re.compile(r"(\d{10})-(\d{10})\.([a-z]+)\.(.+?)(?:\.pb\.gz)?")
for e in log:
    where = f"upload {e['id']} ({e['name']})"
    want = {"hostname": host, "kernel_release": release, "kind": e["kind"], "team": "pay_ments"}
    got = {k: e["labels"].get(k) for k in want}
    if got != want:
        fail(f"{where}: labels {got}, want {want}")
    if e["service"] not in SERVICES:
        fail(f"{where}: service {e['service']!r}, want one of {sorted(SERVICES)}")
    host_part, _, file = e["id"].partition("/")
    m = ID.fullmatch(file)
    if host_part != host or not m or (int(m[1]), int(m[2]), m[3], SAFE(urllib.parse.unquote(m[4]))) != \
            (e["from"], e["until"], e["kind"], e["service"]):
        fail(f"{where}: id is not {host}/FROM-UNTIL.KIND.SERVICE[.pb.gz] of from {e['from']}, "
             f"until {e['until']}, kind {e['kind']}, service {e['service']!r}")
    if not 1 <= e["until"] - e["from"] <= 10:
        fail(f"{where}: from {e['from']} until {e['until']}: not an interval of about a second")
    if e["kind"] == "cpu" and e["sample_rate"] not in (None, int(freq)):
        fail(f"{where}: sampleRate {e['sample_rate']}, the module samples at {freq} Hz")
    if (e["authorization"], e["tenant"]) != (f"Bearer {token}", tenant):
        fail(f"{where}: Authorization {e['authorization']!r}, X-Scope-OrgID {e['tenant']!r}")

# Each (interval, kind, service) stored once; the duplicates are resends.
keys = collections.defaultdict(list)
for e in stored:
    keys[(e["from"], e["until"], e["kind"], e["service"])].append(e["id"])
for k, ids in keys.items():
    if len(ids) > 1:
        fail(f"interval {k[0]}-{k[1]}, {k[2]}, {k[3]!r} stored {len(ids)} times, as {ids}")
dups = [e["id"] for e in log if e["dup"]]
print(f"# {len(log)} uploads answered, {len(stored)} stored, {len(dups)} resent: {dups}")
if held not in dups:
    fail(f"the upload held when taprootd was killed ({held}) was not sent again under that id "
         f"(resends: {dups})")
others = [d for d in dups if d != held]
if others:
    print(f"# resends besides the held one (a store that honours the id absorbs them): {others}")
stored_ids = {e["id"] for e in stored}
for f in spooled:
    if not {f"{host}/{f}", f"{host}/{f[:-len('.pb.gz')]}"} & stored_ids:
        fail(f"{f}, queued while the store was down, never stored under the id {host}/{f}")

# The full profiles on disk: every upload is of one of them, but for the
# interval the kill cut short: a kind of it spooled before its full profile
# was written has none, and rightly arrives all the same. An upload is a
# part of the full profile of its kind with the same time_nanos (the
# interval's start, to the nanosecond): its STAMP may lie past the
# upload's [FROM, UNTIL] when intervals ran ahead of their seconds, and
# a stamp within it may be another interval's.
full = collections.defaultdict(dict)	# kind -> {stamp seconds: path}
full_at = {}				# (kind, time_nanos) -> stamp
for name in os.listdir(out):
    m = re.fullmatch(r"(cpu|offcpu|offwake|schedlat)-(\d{8}T\d{6}Z)\.pb\.gz", name)
    if m:
        t = calendar.timegm(time.strptime(m[2], "%Y%m%dT%H%M%SZ"))
        full[m[1]][t] = f"{out}/{name}"
        full_at[(m[1], pprofraw.time_nanos(f"{out}/{name}"))] = t
nanos = {e["file"]: pprofraw.time_nanos(f"{store}/{e['file']}") for e in stored}
stamp_of = {}					# upload file -> stamp of its full profile
interval_of = {}				# (kind, stamp) -> (from, until)
for e in stored:
    t = full_at.get((e["kind"], nanos[e["file"]]))
    if t is None:
        continue
    stamp_of[e["file"]] = t
    iv = interval_of.setdefault((e["kind"], t), (e["from"], e["until"]))
    if iv != (e["from"], e["until"]):
        fail(f"upload {e['id']} is a part of {e['kind']} profile {t}, as is an upload of "
             f"another interval, {iv[0]}-{iv[1]}")
orphans = [e for e in stored if e["file"] not in stamp_of]
# The interval the kill cut short holds the kill's second (or the next:
# taprootd was polled for a new profile, then killed).
cut = {(e["from"], e["until"]) for e in orphans}
if orphans and len(cut) == 1 and min(cut)[0] <= int(killed_at) <= min(cut)[1] + 1:
    print(f"# uploads of the interval cut short by the kill, of profiles it did not write: "
          f"{[e['id'] for e in orphans]}")
else:
    for e in orphans:
        near = sorted(full[e["kind"]], key=lambda t: abs(t - e["from"]))[:3]
        fail(f"upload {e['id']}: no full {e['kind']} profile of its time_nanos "
             f"{nanos[e['file']]} (stamps near its from {e['from']}: {near}; taprootd was "
             f"killed at {killed_at})")
uploaded = {(e["kind"], stamp_of[e["file"]]) for e in stored if e["file"] in stamp_of}
lonely = {(k, t): p for k in full for t, p in full[k].items() if (k, t) not in uploaded}

by_group = collections.defaultdict(list)	# what adds up to the full profiles
for e in stored:
    if e not in orphans:
        by_group[(e["kind"], e["service"])].append(e)
first = min(e["from"] for e in stored)
single = {e["file"]: e for e in stored
          if e["from"] == first or e["id"] == held or
          (spooled and e["id"] in (f"{host}/{spooled[0]}", f"{host}/{spooled[0][:-6]}"))}
jobs = {("full", k): sorted(full[k].values()) for k in full}
jobs.update({("group",) + g: [f"{store}/{e['file']}" for e in es] for g, es in by_group.items()})
jobs.update({("one", f): [f"{store}/{f}"] for f in single})
jobs.update({("lonely",) + k: [p] for k, p in lonely.items()})
jobs.update({("orphan", e["file"]): [f"{store}/{e['file']}"] for e in orphans})
texts = decode_all(jobs)
print(f"# pprof: {len(jobs)} runs over {sum(len(v) for v in jobs.values())} files")

# A full profile no upload is of has no samples of the services.
for (_, kind, t), text in ((k, v) for k, v in texts.items() if k[0] == "lonely"):
    tot = totals(text)
    if tot:
        fail(f"{os.path.basename(lonely[(kind, t)])} has samples of {dict(tot)} but no upload "
             f"of {kind} from {t} arrived")

for e in orphans:
    got = set(totals(texts[("orphan", e["file"])]))
    if got != {e["service"]}:
        fail(f"upload {e['id']} holds samples of {sorted(got, key=str)}, not only {e['service']!r}")

# Per kind and service: the uploads add up to the full profiles.
for kind in KINDS:
    want = totals(texts[("full", kind)]) if kind in full else {}
    got_services = {s for (k, s) in by_group if k == kind}
    if set(want) != got_services:
        fail(f"{kind}: the full profiles have samples of {sorted(want, key=str)}, uploads came "
             f"for {sorted(got_services)}")
    for service in sorted(got_services):
        text = texts[("group", kind, service)]
        prof = pprofraw.parse(text)
        wrong = collections.Counter(s.labels.get("service_name") for s in prof.samples
                                    if SAFE(s.labels.get("service_name")) != service)
        if wrong:
            fail(f"{kind} uploads of {service!r} hold samples of other services: {dict(wrong)}")
        got = totals(text).get(service, {})
        if dict(got) != dict(want.get(service, {})):
            fail(f"{kind}, {service!r}: the uploads add up to {dict(got)}, the full profiles "
                 f"to {dict(want.get(service, {}))}")
        types = {t.split("/")[0]: t.split("/")[1] for t in prof.types}
        if kind != "cpu":
            cfgs = {json.dumps({t: c["units"] for t, c in e["config"].items()}, sort_keys=True)
                    for e in by_group[(kind, service)]}
            if cfgs != {json.dumps(types, sort_keys=True)}:
                fail(f"{kind}: sample_type_config says {cfgs}, the profiles' types are {types}")
        else:
            m = re.search(r"^Period: (\d+)$", text, re.M)
            if not m or abs(int(m[1]) - 1e9 / int(freq)) >= 1:
                fail(f"cpu uploads of {service!r}: {m[0] if m else 'no Period'}, not the "
                     f"{1e9 / int(freq):.0f} ns of {freq} Hz")
        print(f"# {kind}, {service!r}: {len(by_group[(kind, service)])} uploads, {dict(got)}")

# Time and Duration of single uploads: from and until.
for f, e in sorted(single.items()):
    t, d, shown = header(texts[("one", f)])
    if t is None or d is None:
        fail(f"upload {e['id']}: pprof shows no Time or a Duration of {shown!r}")
    # [from, until] holds the profile's time, each end within a second of
    # it (pprof shows the Duration to 10 ms).
    elif not (0 <= t - e["from"] <= 1 and -0.01 <= e["until"] - (t + d) <= 1):
        fail(f"upload {e['id']}: pprof's Time {t:.3f} and Duration {shown} ({d} s) are not "
             f"within from {e['from']} and until {e['until']}, a second at most from each")
    elif abs(t - nanos[f] / 1e9) > 1e-6:
        fail(f"upload {e['id']}: pprof's Time {t:.9f} is not its time_nanos {nanos[f]}, "
             f"which matched it to its full profile")
print(f"# Time and Duration checked on {len(single)} uploads")

# Enough was exercised: every kind, both services' CPU time, the blocking one off-CPU.
seen = set(by_group)
for k in KINDS:
    for s in (SERVICES if k == "cpu" else {"push_db"}):
        if (k, s) not in seen:
            fail(f"no {k} upload of {s!r} at all")
for msg in failed[:15]:
    print("FAIL:", msg)
sys.exit(1 if failed else 0)
PY
say "every interval arrived once, split by service; the held one resent under its id"
