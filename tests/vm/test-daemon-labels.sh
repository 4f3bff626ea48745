#!/bin/bash
# Labels that say which service a sample is of, with the real taprootd,
# module and cgroup v2 in the guest: three copies of tapwork, each in a
# cgroup of its own (system.slice/web.service, system.slice/db.service, a
# docker scope), profiled by taprootd with --label team=payments and
# --relabel 'drop service_name db'. In the profiles, as the real pprof
# decodes them:
#   - web's samples say service_name web, systemd_unit web.service, its
#     cgroup and exe; the container's say its short id as service_name,
#     its whole id as container_id and no unit;
#   - db's samples are not there at all (the rule dropped them), and the
#     state file counts them;
#   - every sample says hostname and kernel_release as the guest does, and
#     team payments.
# Each start of taprootd (kallsyms, netlink) and of pprof takes seconds under TCG:
# vm-scope: userspace
# vm-timeout: 300
. "${0%/*}/lib.sh"
. "${0%/*}/lib-sampling.sh"

require_module
require_taprootd
require_pprof
require_prog tapwork

ID=3f4e5a6b7c8d9e0f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f7081
out=$TEST_TMP/profiles
mkdir -p "$out"
trap units_remove EXIT
units_make web.service db.service "docker-$ID.scope"
load_module
expect_ok "config set freq" "$CTL" config set freq 199
for u in "${UNITS[@]}"; do
	work_in "$u" "$PROGS/tapwork" 60
	say "tapwork $PID in $(cat "/proc/$PID/cgroup")"
done
pids=("${WORK_PIDS[@]}")

# Four profiles of the workload: a second each, after taprootd's start-up.
daemon_profiles 4 "$out" --label team=payments --relabel 'drop service_name db'
[[ $STATE =~ \"relabel_dropped\":\ [1-9] ]] ||
	die "the state file counts no sample dropped: $STATE"

python3 -S - "$REPO/tests/vm" "$TEST_TMP/all.raw" "$(hostname)" "$(uname -r)" "$ID" \
	"${pids[@]}" <<'PY' || exit 1
import sys
sys.path.insert(0, sys.argv[1])
import pprofraw

text = open(sys.argv[2]).read()
host, release, cid = sys.argv[3], sys.argv[4], sys.argv[5]
web, db, box = (int(p) for p in sys.argv[6:9])
profiles = ["Samples:" + part for part in text.split("Samples:")[1:]]
by_pid, failed = {}, []
for t in profiles:
    for s in pprofraw.parse(t).samples:
        by_pid.setdefault(int(s.labels.get("pid", 0)), []).append(s.labels)
        for k, want in (("hostname", host), ("kernel_release", release), ("team", "payments")):
            if s.labels.get(k) != want:
                failed.append(f"a sample of pid {s.labels.get('pid')} has {k}={s.labels.get(k)!r}, not {want!r}")
                break

want = {
    web: {"service_name": "web", "systemd_unit": "web.service",
          "cgroup": "/system.slice/web.service", "container_id": None},
    box: {"service_name": cid[:12], "systemd_unit": None, "container_id": cid,
          "cgroup": f"/system.slice/docker-{cid}.scope"},
}
for pid, labels in want.items():
    got = by_pid.get(pid, [])
    print(f"# pid {pid}: {len(got)} samples; first: {got[0] if got else None}")
    if len(got) < 5:
        failed.append(f"pid {pid}: {len(got)} samples, want >= 5")
    for l in got:
        for k, v in list(labels.items()) + [("exe", None)]:
            if k == "exe":
                if not l.get("exe", "").endswith("/tapwork"):
                    failed.append(f"pid {pid}: exe {l.get('exe')!r}")
            elif l.get(k) != v:
                failed.append(f"pid {pid}: {k}={l.get(k)!r}, want {v!r}")
        if failed:
            break
if db in by_pid:
    failed.append(f"db's pid {db}: {len(by_pid[db])} samples, but the rule drops service_name db")
if any(l.get("service_name") == "db" for ls in by_pid.values() for l in ls):
    failed.append("a sample says service_name db")
for f in failed[:10]:
    print("FAIL:", f)
sys.exit(1 if failed else 0)
PY
say "web, the container and db labelled as their cgroups say; db dropped by the rule"
