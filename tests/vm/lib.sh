# shellcheck shell=bash
# Helpers for the VM tests (tests/vm/test-*.sh). A test sources this file:
#
#	. "${0%/*}/lib.sh"
#
# Tests run as root inside a guest booted by scripts/vm, with the repository
# as the working directory; tests/vm/run runs each in its own bash with a
# timeout and unloads the module afterwards. The conventions:
#
#   - one behaviour per test, named after it;
#   - every check goes through an assertion carrying a label that says what
#     was being checked; a failure prints "FAIL: LABEL: ..." and exits 1,
#     and tests/vm/run shows that line as the reason;
#   - "# ..." lines (say) narrate what the test is doing;
#   - any command that fails outside an assertion or an `if` fails the test
#     too, naming the line (set -e with an ERR trap).

set -Eeuo pipefail
trap '_lib_err $LINENO "$BASH_COMMAND" $?' ERR

REPO=$(cd "${BASH_SOURCE[0]%/*}/../.." && pwd)
read -r KVER </proc/sys/kernel/osrelease	# uname -r, without an exec
# The module built for the running kernel, and the command-line tool.
KO=$REPO/build/kmod/$KVER/kmod/taproot.ko
CTL=$REPO/ctl/taprootctl
PROBE=$REPO/tests/vm/probe.py
# The C helpers of tests/vm/progs/NAME.c are at $PROGS/NAME (tests/vm/run
# builds them before the tests run; tests/vm/build-progs says how).
PROGS=$REPO/build/vm/progs
UAPI=$REPO/include/uapi/linux/taproot.h
TEST_NAME=${0##*/}
TEST_NAME=${TEST_NAME%.sh}
TEST_NAME=${TEST_NAME#test-}
# Scratch space of this test, TEST_TMP: tests/vm/run gives each test a fresh
# TMPDIR and says so; run by hand, a test gets a new directory.
if [ -n "${TAPROOT_TEST_FRESH_TMPDIR:-}" ]; then
	TEST_TMP=$TMPDIR
else
	TEST_TMP=$(mktemp -d)
fi

_lib_err() {
	echo "FAIL: line $1: '$2' exited $3" >&2
	exit 1
}

die() {
	echo "FAIL: $*" >&2
	exit 1
}

say() {
	echo "# $*"
}

# run CMD [ARGS...]: runs CMD, never fails; leaves its stdout in OUT, its
# stderr in ERR (trailing newlines removed, as $(...) would) and its exit
# status in RC. Only CMD is executed: under TCG every exec costs tens of ms.
run() {
	RC=0
	"$@" >"$TEST_TMP/.run-out" 2>"$TEST_TMP/.run-err" || RC=$?
	_lib_slurp OUT "$TEST_TMP/.run-out"
	_lib_slurp ERR "$TEST_TMP/.run-err"
}

# _lib_slurp VAR FILE: VAR = contents of FILE without trailing newlines.
_lib_slurp() {
	local -n _v=$1
	_v=	# read leaves it unset on an empty file, fatal under set -u
	IFS= read -r -d '' _v <"$2" || true
	while [[ $_v == *$'\n' ]]; do
		_v=${_v%$'\n'}
	done
}

# expect_ok LABEL CMD [ARGS...]: CMD must exit 0 (OUT, ERR, RC as run).
expect_ok() {
	local label=$1
	shift
	run "$@"
	[ "$RC" -eq 0 ] ||
		die "$label: '$*' exited $RC${ERR:+; stderr: $ERR}${OUT:+; stdout: $OUT}"
}

# expect_fail LABEL CMD [ARGS...]: CMD must exit nonzero (OUT, ERR, RC as run).
expect_fail() {
	local label=$1
	shift
	run "$@"
	[ "$RC" -ne 0 ] ||
		die "$label: '$*' succeeded but must fail${OUT:+; stdout: $OUT}"
}

# assert_eq LABEL EXPECTED ACTUAL
assert_eq() {
	[ "$2" = "$3" ] || die "$1: expected '$2', got '$3'"
}

# assert_ne LABEL UNEXPECTED ACTUAL
assert_ne() {
	[ "$2" != "$3" ] || die "$1: got '$3', which it must not be"
}

# assert_contains LABEL TEXT NEEDLE: TEXT contains the fixed string NEEDLE.
assert_contains() {
	case $2 in
	*"$3"*) ;;
	*) die "$1: '$3' not found in: $2" ;;
	esac
}

# assert_not_contains LABEL TEXT NEEDLE
assert_not_contains() {
	case $2 in
	*"$3"*) die "$1: '$3' must not appear in: $2" ;;
	esac
}

# assert_match LABEL TEXT ERE: some line of TEXT matches the extended
# regular expression ERE (with GNU \b, \w), case-insensitively.
assert_match() {
	text_matches "$2" "$3" || die "$1: nothing matches /$3/ in: $2"
}

# text_matches TEXT ERE: as assert_match, as a condition. Bash's own =~, not
# grep: under TCG every exec costs a lot more than a loop.
text_matches() {
	local line found=1
	shopt -s nocasematch
	while IFS= read -r line; do
		if [[ $line =~ $2 ]]; then
			found=0
			break
		fi
	done <<<"$1"
	shopt -u nocasematch
	return $found
}

# assert_cases NAME [quiet]: OUT, ERR and RC of a run of a program that
# reports case by case as tests/vm/progs/abuse.h writes ("ok LABEL" or
# "not ok LABEL: why" each, then "cases N failed M"): every case passed,
# the summary counts them all, the exit status is 0. NCASES is then their
# number. The program's other lines are said unless quiet (a test running
# it round after round says them once).
assert_cases() {
	local name=$1 quiet=${2:-} line b bad=()
	NCASES=0
	while IFS= read -r line; do
		case $line in
		"not ok "*) bad+=("${line#not ok }") ;;
		"ok "*) NCASES=$((NCASES + 1)) ;;
		*) [ -n "$quiet" ] || say "$name: $line" ;;
		esac
	done <<<"$OUT"
	[ -z "$ERR" ] || say "$name stderr: $ERR"
	for b in "${bad[@]}"; do
		say "$name failed: $b"
	done
	[ "${#bad[@]}" -eq 0 ] || die "$name: ${#bad[@]} cases failed, the first: ${bad[0]}"
	assert_eq "$name exit status" 0 "$RC"
	assert_match "$name: summary" "$OUT" "^cases $NCASES failed 0\$"
}

# as_nobody CMD [ARGS...]: CMD as uid/gid 65534 with no groups or capabilities.
as_nobody() {
	setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"
}

# as_root_without_perfmon CMD [ARGS...]: CMD as uid 0 with CAP_SYS_ADMIN and
# CAP_PERFMON removed from every capability set (the bounding set caps what
# root gains at exec). Every other capability stays, CAP_NET_ADMIN and
# CAP_DAC_OVERRIDE included: whatever is refused then is refused for lack of
# those two.
as_root_without_perfmon() {
	setpriv --inh-caps=-sys_admin,-perfmon --bounding-set=-sys_admin,-perfmon -- "$@"
}

# cap_bit HEXMASK BIT: prints 1 if BIT is set in the capability mask.
cap_bit() {
	echo $(((0x$1 >> $2) & 1))
}

# json_leaves FILE...: fails, naming the file, unless every FILE holds one
# JSON document; else prints every scalar in them as "FILE:path=value",
# path like "a.b[2].c". One python for all: it starts slowly under TCG.
json_leaves() {
	python3 -S - "$@" <<'PY'
import json, sys
def walk(name, path, v):
	if isinstance(v, dict):
		for k, x in v.items():
			walk(name, f"{path}.{k}" if path else k, x)
	elif isinstance(v, list):
		for i, x in enumerate(v):
			walk(name, f"{path}[{i}]", x)
	else:
		s = json.dumps(v) if isinstance(v, bool) or v is None else v
		print(f"{name}:{path}={s}")
for name in sys.argv[1:]:
	try:
		doc = json.load(open(name))
	except ValueError as e:
		sys.exit(f"{name}: not JSON: {e}: {open(name).read()!r}")
	walk(name, "", doc)
PY
}

# cpulist_count LIST: number of CPUs in a kernel CPU list such as "0-3,6".
cpulist_count() {
	local n=0 part lo hi
	local IFS=,
	for part in $1; do
		lo=${part%-*} hi=${part#*-}
		n=$((n + hi - lo + 1))
	done
	echo "$n"
}

# uapi_define NAME: the value of a #define in the ABI header.
uapi_define() {
	local line re="^#define[[:space:]]+$1[[:space:]]+([^[:space:]]+)"
	while IFS= read -r line; do
		if [[ $line =~ $re ]]; then
			echo "${BASH_REMATCH[1]}"
			return 0
		fi
	done <"$UAPI"
	die "no #define $1 in ${UAPI#"$REPO"/}"
}

# ere_quote STRING: STRING with the characters special to an ERE escaped.
ere_quote() {
	local s=$1 c out=
	while [ -n "$s" ]; do
		c=${s:0:1} s=${s:1}
		case $c in
		[.+*?^$\(\)\[\]\{\}\|\\]) out+="\\$c" ;;
		*) out+=$c ;;
		esac
	done
	echo "$out"
}

# require_module: the module for this kernel and the CLI must be built.
# require_pprof: PPROF = the real pprof, built by 'make pprof'.
require_pprof() {
	PPROF=$REPO/build/pprof
	[ -x "$PPROF" ] || die "no ${PPROF#"$REPO"/}: run 'make pprof' (make vm-check does)"
}

require_module() {
	[ -f "$KO" ] || die "no module for $KVER at ${KO#"$REPO"/}: run 'make kmods'"
	[ -x "$CTL" ] || die "no ${CTL#"$REPO"/}: run 'make userspace'"
}

module_loaded() {
	[ -d /sys/module/taproot ]
}

# lsmod_lists MODULE: lsmod shows MODULE (awk reads all of lsmod's output,
# so pipefail sees no SIGPIPE).
lsmod_lists() {
	lsmod | awk -v m="$1" '$1 == m { found = 1 } END { exit !found }'
}

# proc_modules_lists MODULE: /proc/modules, which lsmod formats, lists
# MODULE; shell builtins only, for loops.
proc_modules_lists() {
	local name rest
	while read -r name rest; do
		[ "$name" != "$1" ] || return 0
	done </proc/modules
	return 1
}

# load_module [PARAM=VALUE...]: load through the CLI, which must succeed.
load_module() {
	expect_ok "taprootctl load $*" "$CTL" load --ko "$KO" "$@"
	module_loaded || die "taprootctl load $*: exited 0 but /sys/module/taproot is missing"
}

# unload_module: remove the module if it is loaded, whatever state it is in.
unload_module() {
	rmmod taproot 2>/dev/null || true
}

# --- Reliability suites (issue #7; tests/reliability/run) ---
# A suite test runs a quick mode by default (what make check runs) and a
# long mode when TAPROOT_LONG=1; quick_long QUICK LONG prints the value of
# the mode in force.
LONG=${TAPROOT_LONG:-0}
quick_long() {
	if [ "$LONG" = 1 ]; then echo "$2"; else echo "$1"; fi
}

# score KEY=VALUE...: one line of the reliability scorecard, what this run
# of the test did (cases=N iterations=N failures=N, and anything worth a
# column), appended to $TAPROOT_VM_OUT/scores.tsv when the guest was started
# with --out (tests/reliability/run does); otherwise only narrated. The
# scorecard (RELIABILITY.md) is generated from those lines by
# tests/reliability/scorecard. Call it once, at the end, after the checks
# passed: a test that fails records nothing and the runner records the
# failure.
score() {
	local mode=quick
	[ "$LONG" = 1 ] && mode=long
	say "score: $*"
	[ -n "${TAPROOT_VM_OUT:-}" ] || return 0
	printf '%s\t%s\t%s\t%s\t%s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$KVER" \
		"$TEST_NAME" "$mode" "$*" >>"$TAPROOT_VM_OUT/scores.tsv"
}
