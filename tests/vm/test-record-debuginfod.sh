#!/bin/bash
# Debug files by build ID from a real debuginfod (Debian's package) on the
# guest's loopback (a machine of its own: no other host reaches it):
#   - it serves the debug files of stripped copies of tapwork and
#     libtapwork (objcopy --only-keep-debug, then --strip-all), and libc's
#     from libc6-dbg; /usr/lib/debug is hidden from the profiler (a tmpfs
#     over it in a mount namespace of its own), so libc's must come from
#     the server too;
#   - taprootctl record of the stripped tapwork and of libcwork (which
#     sorts strings with libc's qsort) names tapwork's functions, with
#     tapwork.c:LINE, and libc's internal ones (msort_with_tmp, not in
#     libc's dynamic symbols) with their glibc sources: the real pprof
#     shows them;
#   - with a server that accepts and never answers, nothing stalls:
#     record ends on time (the fetch under way is cancelled) and taprootd
#     writes a profile every second with no records lost.
# Each start of debuginfod (its scan), record and taprootd takes seconds under TCG:
# vm-scope: userspace
# vm-timeout: 400
. "${0%/*}/lib.sh"
. "${0%/*}/lib-sampling.sh"

require_module
require_taprootd
require_pprof
require_prog tapwork libtapwork libcwork
command -v debuginfod >/dev/null || die "no debuginfod (scripts/deps installs it)"
libc=$(ldd "$PROGS/libcwork" | awk '/libc.so.6/ { print $3 }')
libc_id=$(readelf -n "$libc" | awk '/Build ID/ { print $3 }')
libc_debug=/usr/lib/debug/.build-id/${libc_id:0:2}/${libc_id:2}.debug
[ -f "$libc_debug" ] || die "no $libc_debug (libc6-dbg: scripts/deps installs it)"

bin=$TEST_TMP/bin serve=$TEST_TMP/serve
mkdir -p "$bin" "$serve"
for p in tapwork libtapwork libcwork; do
	objcopy --only-keep-debug "$PROGS/$p" "$serve/$p.debug"
	objcopy --strip-all "$PROGS/$p" "$bin/$p"
done
cp "$libc_debug" "$serve/libc.debug"
readelf -S "$bin/tapwork" | grep -q '\.symtab' && die "$bin/tapwork still has a symbol table"

daemons=()
cleanup() {
	kill "${daemons[@]}" 2>/dev/null || true
	wait 2>/dev/null
}
trap cleanup EXIT
env -u DEBUGINFOD_URLS debuginfod -p 8002 -d "$TEST_TMP/db.sqlite" -F -t 0 -g 0 "$serve" \
	>"$TEST_TMP/debuginfod.log" 2>&1 &
daemons+=($!)
# A server that takes the connection and never answers.
python3 -S -c '
import socket, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 8003)); s.listen(16)
held = []
while True:
    c, _ = s.accept(); held.append(c)
' &
daemons+=($!)

# Until debuginfod has scanned the files: it answers for tapwork's build ID.
tap_id=$(readelf -n "$bin/tapwork" | awk '/Build ID/ { print $3 }')
deadline=$((SECONDS + 120))
until python3 -S -c "import urllib.request, sys
urllib.request.urlopen('http://127.0.0.1:8002/buildid/$tap_id/debuginfo', timeout=5)" 2>/dev/null; do
	[ $SECONDS -lt $deadline ] || die "debuginfod served nothing in 120 s: $(<"$TEST_TMP/debuginfod.log")"
	# debuginfod scans in the background: nothing to block on.
	nap 1
done
say "debuginfod serves tapwork's debug file (build ID $tap_id)"

load_module
# record_hidden NAME URLS SECS PROG [ARGS]: record PROG with the servers
# URLS and /usr/lib/debug hidden; its profile in $TEST_TMP/NAME.
record_hidden() {
	local name=$1 urls=$2 secs=$3
	shift 3
	mkdir -p "$TEST_TMP/$name"
	expect_ok "record $name" unshare -m sh -c 'mount -t tmpfs none /usr/lib/debug && exec "$@"' \
		sh env DEBUGINFOD_URLS="$urls" DEBUGINFOD_CACHE_PATH="$TEST_TMP/cache-$name" \
		"$CTL" record -o "$TEST_TMP/$name" --duration "$secs" -- "$@"
}

record_hidden tap http://127.0.0.1:8002 6 "$bin/tapwork" 6
record_hidden libc http://127.0.0.1:8002 6 "$bin/libcwork" 6
for name in tap libc; do
	expect_ok "pprof -raw ($name)" "$PPROF" -raw -symbolize=none "$TEST_TMP/$name/cpu.pb.gz"
	printf '%s\n' "$OUT" >"$TEST_TMP/$name.raw"
done
# Locations: "ID: ADDRESS M=MAPPING FUNCTION FILE:LINE s=START".
for want in ' leaf_x .*tapwork\.c:[0-9]+ ' ' leaf_y .*libtapwork\.c:[0-9]+ '; do
	grep -Eq -- "$want" "$TEST_TMP/tap.raw" ||
		die "tapwork: no location matching '$want': $(grep -E ' M=' "$TEST_TMP/tap.raw" | head -20)"
done
grep -Eq -- ' msort_with_tmp .*msort\.c:[0-9]+ ' "$TEST_TMP/libc.raw" ||
	die "libcwork: libc's msort_with_tmp not named with its source: $(grep -E ' M=' "$TEST_TMP/libc.raw" | head -20)"
say "named through debuginfod: leaf_x (tapwork.c), leaf_y (libtapwork.c), msort_with_tmp (msort.c)"

# The server that never answers: record takes no longer than with the
# one that does (its start-up takes seconds under TCG; a fetch left to
# its 10 s timeout would add as much).
start=$SECONDS
record_hidden base http://127.0.0.1:8002 3 "$bin/tapwork" 3
base=$((SECONDS - start))
start=$SECONDS
record_hidden mute http://127.0.0.1:8003 3 "$bin/tapwork" 3
took=$((SECONDS - start))
say "a 3 s record: ${base} s with the server, ${took} s with a silent one"
[ "$took" -le $((base + 4)) ] ||
	die "record took ${took} s with a silent debuginfod, ${base} s with one that answers"

# And taprootd: a profile a second, nothing lost, while fetches hang.
out=$TEST_TMP/profiles
mkdir -p "$out"
"$bin/tapwork" 30 >/dev/null &
daemons+=($!)
DEBUGINFOD_CACHE_PATH=$TEST_TMP/cache-daemon unshare -m sh -c \
	'mount -t tmpfs none /usr/lib/debug && exec "$@"' sh \
	"$TAPROOTD" -f -i 1 -o "$out" --start --state "$TEST_TMP/taprootd.json" \
	--debuginfod http://127.0.0.1:8003 2>"$TEST_TMP/taprootd.log" &
daemon=$!
daemons+=("$daemon")
deadline=$((SECONDS + 60))
until [ "$(find "$out" -name 'cpu-*.pb.gz' | wc -l)" -ge 5 ]; do
	[ $SECONDS -lt $deadline ] || die "taprootd wrote < 5 profiles in 60 s with a silent debuginfod: $(<"$TEST_TMP/taprootd.log")"
	kill -0 "$daemon" 2>/dev/null || die "taprootd exited: $(<"$TEST_TMP/taprootd.log")"
	# taprootd writes once a second: nothing to block on.
	nap 0.5
done
grep -Eq '"lost": 0,' "$TEST_TMP/taprootd.json" || die "records lost: $(<"$TEST_TMP/taprootd.json")"
grep -Eq '"debuginfod_pending": [1-9]|"debuginfod_absent": [1-9]' "$TEST_TMP/taprootd.json" ||
	die "taprootd asked debuginfod for nothing: $(<"$TEST_TMP/taprootd.json")"
start=$SECONDS
kill -TERM "$daemon"
wait "$daemon" || die "taprootd exited with $?: $(<"$TEST_TMP/taprootd.log")"
say "taprootd with a silent server: 5 profiles, nothing lost, stopped in $((SECONDS - start)) s"
[ $((SECONDS - start)) -lt 6 ] || die "taprootd took $((SECONDS - start)) s to stop"
