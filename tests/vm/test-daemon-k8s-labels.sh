#!/bin/bash
# Kubernetes labels from the container runtimes' own files, with the real
# taprootd, module and cgroup v2 in the guest, and no Kubernetes: for each
# runtime, a copy of tapwork in a cgroup named as that runtime names a
# pod's container, and the runtime's file for the container at its real
# path (the unit test's fixtures, tests/unit/fixtures/k8s/):
#   - containerd (systemd driver): kubepods.slice/.../cri-containerd-ID.scope,
#     /run/containerd/io.containerd.runtime.v2.task/k8s.io/ID/config.json;
#   - CRI-O: kubepods.slice/.../crio-ID.scope,
#     /run/containers/storage/overlay-containers/ID/userdata/config.json;
#   - Docker through cri-dockerd (cgroupfs driver): kubepods/burstable/podUID/ID,
#     /var/lib/docker/containers/ID/config.v2.json;
#   - k3s's containerd (cgroupfs driver): kubepods/besteffort/podUID/ID,
#     /run/k3s/containerd/io.containerd.runtime.v2.task/k8s.io/ID/config.json;
# another in a containerd pod of namespace kube-system, another in a
# plain service, and another in a containerd pod whose config.json is a
# symbolic link to the first's (refused: no k8s_* labels, and counted in
# the state file's k8s_files_refused). taprootd runs with --relabel 'drop k8s_namespace
# kube-system' and a rule that makes a label of namespace and container.
# In the profiles, as the real pprof decodes them, each container's
# samples carry its pod's name, namespace, uid and container name, and the
# rule's label; kube-system's are not there; the service's have no k8s_*.
# Each start of taprootd (kallsyms, netlink) and of pprof takes seconds under TCG:
# vm-scope: userspace
# vm-timeout: 300
. "${0%/*}/lib.sh"
. "${0%/*}/lib-sampling.sh"

require_module
require_taprootd
require_pprof
require_prog tapwork

CG=/sys/fs/cgroup
FIX=$REPO/tests/unit/fixtures/k8s
CRI=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
CRIO=fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210
DOCKER=3f4e5a6b7c8d9e0f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f7081
SYS=b00b5b00b5b00b5b00b5b00b5b00b5b00b5b00b5b00b5b00b5b00b5b00b5b00b
LINKED=11111111222222223333333344444444555555556666666677777777aaaaaaaa
K3S=c3c3c3c3d4d4d4d4e5e5e5e5f6f6f6f60707070718181818292929293a3a3a3a
TASKS=/run/containerd/io.containerd.runtime.v2.task/k8s.io
K3S_TASKS=/run/k3s/containerd/io.containerd.runtime.v2.task/k8s.io
CRIO_DIR=/run/containers/storage/overlay-containers
DOCKER_DIR=/var/lib/docker/containers
out=$TEST_TMP/profiles
mkdir -p "$out"
cgroup2_mounted

pod=kubepods.slice/kubepods-burstable.slice
cg_cri=$pod/kubepods-burstable-pod6b3e0c1a_2f4d_4e5a_9b8c_7d6e5f4a3b2c.slice/cri-containerd-$CRI.scope
cg_crio=kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod1a2b3c4d_5e6f_7a8b_9c0d_1e2f3a4b5c6d.slice/crio-$CRIO.scope
cg_docker=kubepods/burstable/pod0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0/$DOCKER
cg_sys=$pod/kubepods-burstable-pod99999999_8888_7777_6666_555555555555.slice/cri-containerd-$SYS.scope
cg_plain=system.slice/plain.service
cg_linked=$pod/kubepods-burstable-pod12121212_3434_5656_7878_909090909090.slice/cri-containerd-$LINKED.scope
cg_k3s=kubepods/besteffort/poda1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d/$K3S
cgroups=("$cg_cri" "$cg_crio" "$cg_docker" "$cg_sys" "$cg_plain" "$cg_linked" "$cg_k3s")
made=("$TASKS/$CRI" "$TASKS/$SYS" "$TASKS/$LINKED" "$CRIO_DIR/$CRIO" "$DOCKER_DIR/$DOCKER"
	"$K3S_TASKS/$K3S")

pids=()
cleanup() {
	local d
	_cleanup_spawned
	kill "${pids[@]}" 2>/dev/null || true
	wait 2>/dev/null
	for d in "${cgroups[@]}"; do
		while [ "$d" != . ] && rmdir "$CG/$d" 2>/dev/null; do
			d=$(dirname "$d")
		done
	done
	rm -rf "${made[@]}"
}
trap cleanup EXIT

# The runtimes' files, where each runtime writes them, before the
# containers' processes start (as the runtimes do).
mkdir -p "$TASKS/$CRI" "$TASKS/$SYS" "$CRIO_DIR/$CRIO/userdata" "$DOCKER_DIR/$DOCKER" \
	"$K3S_TASKS/$K3S" || die "cannot make the runtimes' directories"
if ! { cp "$FIX$TASKS/$CRI/config.json" "$TASKS/$CRI/" &&
	cp "$FIX$K3S_TASKS/$K3S/config.json" "$K3S_TASKS/$K3S/" &&
	cp "$FIX$CRIO_DIR/$CRIO/userdata/config.json" "$CRIO_DIR/$CRIO/userdata/" &&
	cp "$FIX$DOCKER_DIR/$DOCKER/config.v2.json" "$DOCKER_DIR/$DOCKER/"; }; then
	die "cannot copy the fixtures"
fi
# A pod of kube-system: containerd's file of another pod and container.
sed -e 's/"io.kubernetes.cri.sandbox-namespace":"shop"/"io.kubernetes.cri.sandbox-namespace":"kube-system"/' \
	-e 's/"io.kubernetes.cri.sandbox-name":"checkout-7d9f8b6c5-x2k4q"/"io.kubernetes.cri.sandbox-name":"coredns-0"/' \
	"$FIX$TASKS/$CRI/config.json" >"$TASKS/$SYS/config.json"
grep -q '"kube-system"' "$TASKS/$SYS/config.json" || die "the kube-system bundle was not made"
if ! { mkdir -p "$TASKS/$LINKED" && ln -s "$TASKS/$CRI/config.json" "$TASKS/$LINKED/"; }; then
	die "cannot make the linked bundle"
fi

for d in "${cgroups[@]}"; do
	mkdir -p "$CG/$d" || die "cannot make the cgroup $d"
done
# work CGROUP: tapwork in CGROUP (moved there before it execs).
work() {
	in_cgroup "$CG/$1" "$PROGS/tapwork" 60
	pids+=("$PID")
}
load_module
expect_ok "config set freq" "$CTL" config set freq 199
for d in "${cgroups[@]}"; do
	work "$d"
	say "tapwork $PID in $(cat "/proc/$PID/cgroup")"
done

# Four profiles of the workload: a second each, after taprootd's start-up.
# shellcheck disable=SC2016 # $1/$2 are the rule's groups, not the shell's
daemon_profiles 4 "$out" --relabel 'drop k8s_namespace kube-system' \
	--relabel 'replace k8s_namespace,k8s_container_name (.+);(.+) workload $1/$2'
[[ $STATE =~ \"relabel_dropped\":\ [1-9] ]] ||
	die "the state file counts no sample dropped: $STATE"
# Six containers' files looked for (each once, answers kept), one refused.
[[ $STATE =~ \"k8s_files_read\":\ ([0-9]+) ]] || die "no k8s_files_read in the state file: $STATE"
assert_gt "runtime files read" "${BASH_REMATCH[1]}" 5
[[ $STATE =~ \"k8s_files_refused\":\ ([0-9]+) ]] || die "no k8s_files_refused: $STATE"
assert_gt "runtime files refused (the link)" "${BASH_REMATCH[1]}" 0
[[ $STATE =~ \"k8s_cache_hits\":\ [0-9]+ ]] || die "no k8s_cache_hits in the state file: $STATE"
# Seven containers fit the cache's 1024.
[[ $STATE =~ \"k8s_cache_evicted\":\ ([0-9]+) ]] || die "no k8s_cache_evicted: $STATE"
assert_eq "containers evicted from the cache" 0 "${BASH_REMATCH[1]}"

python3 -S - "$REPO/tests/vm" "$TEST_TMP/all.raw" "${pids[@]}" <<'PY' || exit 1
import sys
sys.path.insert(0, sys.argv[1])
import pprofraw

text = open(sys.argv[2]).read()
cri, crio, docker, system, plain, linked, k3s = (int(p) for p in sys.argv[3:10])
by_pid = {}
for t in ["Samples:" + part for part in text.split("Samples:")[1:]]:
    for s in pprofraw.parse(t).samples:
        by_pid.setdefault(int(s.labels.get("pid", 0)), []).append(s.labels)

K8S = ("k8s_pod_name", "k8s_namespace", "k8s_container_name", "k8s_pod_uid")
want = {
    cri: ("checkout-7d9f8b6c5-x2k4q", "shop", "checkout", "6b3e0c1a-2f4d-4e5a-9b8c-7d6e5f4a3b2c"),
    crio: ("ingest-0", "telemetry", "ingest", "1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d"),
    docker: ("web-5c8f7b9d4-q7zr2", "default", "nginx", "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"),
    k3s: ("sensor-gw-5b7c9d8f6-k3z9p", "edge", "sensor-gw", "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d"),
    plain: (None, None, None, None),
    linked: (None, None, None, None),
}
failed = []
for pid, values in want.items():
    got = by_pid.get(pid, [])
    print(f"# pid {pid}: {len(got)} samples; first: {got[0] if got else None}")
    if len(got) < 5:
        failed.append(f"pid {pid}: {len(got)} samples, want >= 5")
    workload = f"{values[1]}/{values[2]}" if values[0] else None
    for l in got:
        for k, v in list(zip(K8S, values)) + [("workload", workload)]:
            if l.get(k) != v:
                failed.append(f"pid {pid}: {k}={l.get(k)!r}, want {v!r}")
        if failed:
            break
if system in by_pid:
    failed.append(f"kube-system's pid {system}: {len(by_pid[system])} samples, but the rule drops them")
if any(l.get("k8s_namespace") == "kube-system" for ls in by_pid.values() for l in ls):
    failed.append("a sample says k8s_namespace kube-system")
for f in failed[:10]:
    print("FAIL:", f)
sys.exit(1 if failed else 0)
PY
say "each runtime's container labelled with its pod; kube-system dropped by the rule"
