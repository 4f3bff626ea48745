#!/bin/bash
# taprootd --metrics with the real daemon and module in the guest:
#   - GET /metrics answers in the Prometheus text format, which the real
#     promtool (Debian's prometheus package) accepts;
#   - its counters are the daemon's: samples of a running workload,
#     sampling 1, profiles written, a start time, CPU and memory;
#   - another path is 404, another method 405;
#   - a client that connects and sends nothing is dropped after 2 s and
#     holds up neither the next client nor the profiles.
# Each start of taprootd (kallsyms, netlink) takes seconds under TCG:
# vm-scope: userspace
# vm-timeout: 240
. "${0%/*}/lib.sh"
. "${0%/*}/lib-sampling.sh"

require_module
require_taprootd
PROMTOOL=$REPO/build/tools/promtool
[ -x "$PROMTOOL" ] || die "no ${PROMTOOL#"$REPO"/}: run scripts/deps"
require_prog tapwork

out=$TEST_TMP/profiles state=$TEST_TMP/taprootd.json
mkdir -p "$out"
load_module
expect_ok "config set freq" "$CTL" config set freq 199
"$PROGS/tapwork" 60 >/dev/null &
work=$!
"$TAPROOTD" -f -i 1 -o "$out" --start --state "$state" --metrics 127.0.0.1:9464 \
	2>"$TEST_TMP/taprootd.log" &
daemon=$!
trap 'kill "$daemon" "$work" 2>/dev/null; wait 2>/dev/null' EXIT
deadline=$((SECONDS + 90))
until [ "$(find "$out" -name 'cpu-*.pb.gz' | wc -l)" -ge 2 ]; do
	[ $SECONDS -lt $deadline ] || die "taprootd wrote < 2 profiles in 90 s: $(<"$TEST_TMP/taprootd.log")"
	kill -0 "$daemon" 2>/dev/null || die "taprootd exited: $(<"$TEST_TMP/taprootd.log")"
	# taprootd writes once a second: nothing to block on.
	nap 0.5
done

python3 -S - "$TEST_TMP" <<'PY' || die "the metrics endpoint misbehaved"
import socket, sys, time, urllib.request, urllib.error

tmp = sys.argv[1]
url = "http://127.0.0.1:9464"

def get(path, method="GET"):
    req = urllib.request.Request(url + path, method=method)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.headers.get("Content-Type"), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, None, ""

# A silent client first: the server must drop it and answer the next.
idle = socket.create_connection(("127.0.0.1", 9464))
t0 = time.monotonic()
status, ctype, body = get("/metrics")
took = time.monotonic() - t0
print(f"# GET /metrics behind a silent client: {status} in {took:.1f} s")
assert status == 200, status
assert took < 6, f"{took:.1f} s behind a silent client"
assert ctype.startswith("text/plain; version=0.0.4"), ctype
open(f"{tmp}/metrics.txt", "w").write(body)
idle.close()
values = {}
for line in body.splitlines():
    if line and not line.startswith("#"):
        name, v = line.rsplit(" ", 1)
        values[name] = float(v)
print("# " + ", ".join(f"{k} {v:g}" for k, v in values.items() if "unwinds" not in k))
assert values["taprootd_samples_total"] > 0, values
assert values["taprootd_sampling"] == 1, values
assert values["taprootd_profiles_written_total"] >= 1, values
assert values["taprootd_start_time_seconds"] > 1.6e9, values
assert values["taprootd_resident_memory_bytes"] > 1e6, values
assert values['taprootd_unwinds_total{result="complete"}'] > 0, values
assert get("/")[0] == 404
assert get("/metrics", "POST")[0] == 405
PY
expect_ok "promtool check metrics" sh -c "'$PROMTOOL' check metrics <'$TEST_TMP/metrics.txt'"
say "promtool: ${OUT:-no complaint}"
kill -0 "$daemon" 2>/dev/null || die "taprootd exited: $(<"$TEST_TMP/taprootd.log")"
