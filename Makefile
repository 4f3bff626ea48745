# taproot — top-level build.
#
#   make              kmod/taproot.ko (for KDIR) and ctl/taprootctl, ctl/taprootd
#   make KDIR=DIR     build the module against the kernel tree or headers in DIR
#   make kmods        the module for every kernel of the matrix
#                     (scripts/kernels), each with its own compiler, W=1
#                     and through sparse; make kmod-FLAVOR for one
#   make sparse       the module through sparse (C=2), for KDIR
#   make unit         cmocka unit tests, plain and under ASan+UBSan
#   make layering     calls between lib/'s layers and objects, and between
#                     the module's objects, go one way
#   make vm-check     VM tests on every kernel of the matrix (FLAVORS="6.1
#                     5.10" to pick; scripts/kernels lists them)
#   make fuzz-quick   the libFuzzer targets, 15 s each (make fuzz: 10 min)
#   make install      the programs, the module's sources for DKMS, the
#                     systemd unit, config file, flame graph template, man
#                     pages (DESTDIR, PREFIX)
#   make deb          Debian packages taproot and taproot-dkms, lintian-clean
#   make check        everything above, after installing dependencies, and
#                     the benchmarks' quick mode
#   make bench        the benchmarks against perf: BENCHMARKS.md
#   make demo         installs, builds, profiles a workload in a VM
#
# Userspace is C11 and warning-free; the module is built with W=1 and sparse
# and must stay warning-free on every kernel of the matrix.

SHELL := /bin/bash
.DEFAULT_GOAL := all

TOP := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
B := $(TOP)/build

# The kernel to build kmod/taproot.ko for: the running kernel when its headers
# are installed, else the newest installed Debian headers.
ifeq ($(origin KDIR),undefined)
  KDIR := $(firstword $(wildcard /lib/modules/$(shell uname -r)/build) \
	    $(lastword $(sort $(wildcard /lib/modules/*/build))))
endif
KVER = $(shell sed -n 's/^\#define UTS_RELEASE "\(.*\)"/\1/p' \
	  $(KDIR)/include/generated/utsrelease.h 2>/dev/null)

# ------------------------------------------------------------- userspace

CC ?= gcc
PKGS := libnl-genl-3.0 libkmod libelf libdw zlib
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS = $(shell pkg-config --libs $(PKGS) 2>/dev/null) -pthread

WARN := -Wall -Wextra -Werror -Wshadow -Wformat=2 -Wmissing-prototypes \
	-Wstrict-prototypes -Wno-unused-parameter
BASE_CFLAGS := -std=c11 -D_GNU_SOURCE -I$(TOP)/include/uapi -I$(TOP)/lib $(WARN)
CFLAGS ?= -O2 -g
SAN_FLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer \
	-fno-sanitize-recover=all

# lib/ is in layers, one folder each (docs/development.md, "Layout"); scripts/layering
# checks that calls between them go one way.
LIB_SRCS := $(sort $(wildcard lib/*/*.c))
# What the command line uses (JSON writer, command tables, output helpers;
# the live top's file and taprootd's state, which taprootd writes too); the
# unit tests link it.
CTLLIB_SRCS := ctl/json.c ctl/cmd.c ctl/output.c ctl/topfile.c ctl/daemon-state.c \
	ctl/status-taprootd.c
CTL_SRCS := ctl/taprootctl.c ctl/summary.c ctl/timeline-opts.c ctl/flamegraph.c \
	$(sort $(wildcard ctl/cmd-*.c))
D_SRCS := ctl/taprootd.c $(sort $(wildcard ctl/daemon-*.c))
UNIT_SRCS := $(sort $(wildcard tests/unit/test_*.c))
UNIT_NAMES := $(patsubst tests/unit/%.c,%,$(UNIT_SRCS))

# $(call objs,VARIANT,SRCS)
objs = $(patsubst %.c,$(B)/$(1)/%.o,$(2))

# Each object depends on the headers it includes, as the compiler lists
# them in OBJ.d (-MMD; -MP: a header removed does not break the build), and
# on this Makefile, which holds its flags.
DEP_FLAGS := -MMD -MP

$(B)/plain/%.o: %.c Makefile
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(DEP_FLAGS) $(PKG_CFLAGS) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(B)/san/%.o: %.c Makefile
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(DEP_FLAGS) $(PKG_CFLAGS) $(SAN_FLAGS) -c -o $@ $<

$(B)/plain/libtaproot.a: $(call objs,plain,$(LIB_SRCS))
$(B)/san/libtaproot.a: $(call objs,san,$(LIB_SRCS))
$(B)/plain/libctl.a: $(call objs,plain,$(CTLLIB_SRCS))
$(B)/san/libctl.a: $(call objs,san,$(CTLLIB_SRCS))
$(B)/plain/libtaproot.a $(B)/san/libtaproot.a $(B)/plain/libctl.a $(B)/san/libctl.a:
	@rm -f $@
	ar rcs $@ $^

# The unit tests include ctl/'s headers too.
$(B)/plain/tests/unit/%.o $(B)/san/tests/unit/%.o: BASE_CFLAGS += -I$(TOP)/ctl

ctl/taprootctl: $(call objs,plain,$(CTL_SRCS)) $(B)/plain/libctl.a $(B)/plain/libtaproot.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(PKG_LIBS) -lm

# taprootd alone uploads (--push): only it links libcurl.
D_PKG_LIBS = $(shell pkg-config --libs libcurl 2>/dev/null)
ctl/taprootd: $(call objs,plain,$(D_SRCS)) $(B)/plain/libctl.a $(B)/plain/libtaproot.a
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(PKG_LIBS) $(D_PKG_LIBS) -lpthread -lm

$(B)/plain/tests/%: $(B)/plain/tests/unit/%.o $(B)/plain/libctl.a $(B)/plain/libtaproot.a
	$(CC) $(CFLAGS) -o $@ $^ $(PKG_LIBS) -lcmocka -lm

$(B)/san/tests/%: $(B)/san/tests/unit/%.o $(B)/san/libctl.a $(B)/san/libtaproot.a
	$(CC) $(SAN_FLAGS) -o $@ $^ $(PKG_LIBS) -lcmocka -lm

# test_spool: taprootd's push spool, and the logging it calls, before the
# libraries they call.
$(B)/plain/tests/test_spool: $(B)/plain/tests/unit/test_spool.o $(B)/plain/ctl/daemon-spool.o \
		$(B)/plain/ctl/daemon-log.o $(B)/plain/libctl.a $(B)/plain/libtaproot.a
	$(CC) $(CFLAGS) -o $@ $^ $(PKG_LIBS) -lcmocka -lm
$(B)/san/tests/test_spool: $(B)/san/tests/unit/test_spool.o $(B)/san/ctl/daemon-spool.o \
		$(B)/san/ctl/daemon-log.o $(B)/san/libctl.a $(B)/san/libtaproot.a
	$(CC) $(SAN_FLAGS) -o $@ $^ $(PKG_LIBS) -lcmocka -lm

# test_daemon_files: taprootd's profile files, and the spool they consult.
$(B)/plain/tests/test_daemon_files: $(B)/plain/tests/unit/test_daemon_files.o \
		$(B)/plain/ctl/daemon-files.o $(B)/plain/ctl/daemon-spool.o \
		$(B)/plain/ctl/daemon-log.o $(B)/plain/libctl.a $(B)/plain/libtaproot.a
	$(CC) $(CFLAGS) -o $@ $^ $(PKG_LIBS) -lcmocka -lm
$(B)/san/tests/test_daemon_files: $(B)/san/tests/unit/test_daemon_files.o \
		$(B)/san/ctl/daemon-files.o $(B)/san/ctl/daemon-spool.o \
		$(B)/san/ctl/daemon-log.o $(B)/san/libctl.a $(B)/san/libtaproot.a
	$(CC) $(SAN_FLAGS) -o $@ $^ $(PKG_LIBS) -lcmocka -lm

# test_uwalk builds the module's user stack walker, plain C, in userspace.
$(B)/plain/tests/test_uwalk: $(B)/plain/kmod/uwalk.o $(B)/plain/kmod/jvwalk.o
$(B)/san/tests/test_uwalk: $(B)/san/kmod/uwalk.o $(B)/san/kmod/jvwalk.o
# test_hotspot checks its layouts with the module's HotSpot frame step.
$(B)/plain/tests/test_hotspot: $(B)/plain/kmod/jvwalk.o $(B)/plain/kmod/uwalk.o
$(B)/san/tests/test_hotspot: $(B)/san/kmod/jvwalk.o $(B)/san/kmod/uwalk.o
# test_pywalk builds the module's CPython frame walker likewise.
$(B)/plain/tests/test_pywalk: $(B)/plain/kmod/pywalk.o
$(B)/san/tests/test_pywalk: $(B)/san/kmod/pywalk.o

.PHONY: userspace unit vm-progs layering
# The flame graph pages' template too: taprootctl run from this tree reads it.
userspace: ctl/taprootctl ctl/taprootd $(B)/gen/flamegraph-page.html

# Calls between lib/'s layers and between any two objects go one way
# (scripts/layering reads them from the objects with nm).
layering: userspace kmods
	scripts/layering --selftest
	scripts/layering $(B)/plain
	scripts/layering --kmod $(B)/kmod/*/kmod

# Programs the VM tests run as profiling targets: tests/vm/build-progs
# compiles tests/vm/progs/NAME.c to build/vm/progs/NAME (scripts/vm also runs
# it before each boot; this target is for building them by hand).
vm-progs:
	tests/vm/build-progs

# Benchmark helpers (scripts/bench): native programs on the library.
BENCH_TOOLS := $(B)/tools/cfi-compile
$(B)/tools/%: $(B)/plain/tests/bench/%.o $(B)/plain/libtaproot.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $^ $(PKG_LIBS) -lm
# The QEMU plugin of the "insns" series, which QEMU loads (scripts/vm --plugin).
BENCH_TOOLS += $(B)/tools/qemu-insn-count.so
$(B)/tools/qemu-insn-count.so: tests/bench/qemu-insn-count.c
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(CFLAGS) -shared -fPIC -fvisibility=hidden -o $@ $< -pthread
.PHONY: bench-tools
bench-tools: $(BENCH_TOOLS)

# ------------------------------------------ the flame graph page's library
# record and report --flamegraph FILE write one self-contained HTML page:
# ctl/flamegraph/page.html with the library that draws it, d3-flame-graph
# and the d3 modules it needs, inlined by scripts/flamegraph-page into
# build/gen/flamegraph-page.html, the template taprootctl reads when it
# writes a page (ctl/flamegraph.h), installed beside it as a data file:
# the library is not in the program, as its licence (Apache-2.0) does not
# go with taprootctl's (GPL-2.0). The packages are those
# pinned by ctl/flamegraph/package-lock.json, which npm ci installs from
# the registry into build/npm/flamegraph at the first build (beside
# speedscope, which scripts/deps installs there for tests/trace-viewer).
# A tree that has vendor/flamegraph instead, the source package scripts/deb
# makes (its build must not reach the network), reads them from there.
FG_NPM := $(B)/npm/flamegraph
ifneq ($(wildcard vendor/flamegraph/d3-flame-graph/package.json),)
  FG_MODULES := $(TOP)/vendor/flamegraph
  FG_INSTALLED := $(wildcard vendor/flamegraph/*/package.json)
else
  FG_MODULES := $(FG_NPM)/node_modules
  FG_INSTALLED := $(FG_NPM)/installed
endif
.PHONY: flamegraph-lib
flamegraph-lib: $(FG_NPM)/installed
# scripts/deb copies the library into the source package: installed first
# by this make, so that make check's parallel jobs run npm ci only once.
deb: $(FG_NPM)/installed
$(FG_NPM)/installed: ctl/flamegraph/package.json ctl/flamegraph/package-lock.json
	@mkdir -p $(@D)
	cp ctl/flamegraph/package.json ctl/flamegraph/package-lock.json $(@D)/
	npm ci --prefix $(@D) --no-audit --no-fund --ignore-scripts --loglevel=error >/dev/null
	touch $@
$(B)/gen/flamegraph-page.html: ctl/flamegraph/page.html scripts/flamegraph-page $(FG_INSTALLED)
	@mkdir -p $(@D)
	scripts/flamegraph-page ctl/flamegraph/page.html $(FG_MODULES) $@

# ------------------------------------------- the real pprof tool, for tests
# tests/unit/test_pprof.c reads the profiles lib/profile/pprof.c writes with the
# real pprof, found through $TAPROOT_PPROF. Built offline (about 20 s) from
# Debian's golang-go and golang-github-google-pprof-dev (scripts/deps).
PPROF := $(B)/pprof
.PHONY: pprof
pprof: $(PPROF)
$(PPROF):
	@mkdir -p $(@D)
	GOPATH=/usr/share/gocode GO111MODULE=off GOCACHE=$(B)/gocache \
		go build -o $@ github.com/google/pprof
# ------------------------------------------------------------------------

# The VM tests of record/taprootd and the demo read profiles with the real
# pprof. (tests/vm/progs/tapwork.c and its shared library libtapwork.c are
# built by tests/vm/build-progs, from their "// vm-cflags:" lines.)
vm-check: | $(PPROF)

# ------------------------------------ CFI fixtures (tests/unit/test_cfi.c)
# A shared object whose code has .debug_frame and no .eh_frame, read by
# test_cfi from the source tree as build/fixtures/cfi-debug-frame.so.
CFI_FIXTURES := $(B)/fixtures/cfi-debug-frame.so
$(B)/fixtures/cfi-debug-frame.so: tests/unit/fixtures/cfi-debug-frame.c
	@mkdir -p $(@D)
	$(CC) -O2 -g -fPIC -shared -fno-asynchronous-unwind-tables \
		-fno-unwind-tables -o $@ $<
$(B)/plain/tests/test_cfi $(B)/san/tests/test_cfi: | $(CFI_FIXTURES)

# ----------------------------------- Go fixtures (tests/unit/test_gotab.c)
# The VM tests' Go workload, tests/vm/progs/gosplit.go, built by the host's
# Go four ways: an executable and a PIE, each with and without symbols and
# DWARF.
GO_FIXTURES := $(addprefix $(B)/fixtures/go/gosplit-,exe exe-stripped pie pie-stripped)
GO_FLAGS = $(if $(findstring pie,$(1)),-buildmode=pie) \
	$(if $(findstring stripped,$(1)),'-ldflags=-s -w')
$(B)/fixtures/go/gosplit-%: tests/vm/progs/gosplit.go
	@mkdir -p $(@D)
	scripts/go-build host $< $@ $(call GO_FLAGS,$*)
# The same four, built by the Go of each other release of the kernel matrix
# (scripts/deps installs its golang-go in the release's root; the binaries
# are static), in build/fixtures/go/RELEASE/: the layouts other Go
# versions write.
GO_RELEASES := $(shell scripts/kernels --roots 2>/dev/null | awk '$$2 != "/" { print $$1 }')
GO_RELEASE_FIXTURES := $(foreach r,$(GO_RELEASES),$(B)/fixtures/go/$(r)/built)
$(B)/fixtures/go/%/built: tests/vm/progs/gosplit.go
	@mkdir -p $(@D)
	$(foreach k,exe exe-stripped pie pie-stripped,\
		scripts/go-build $* $< $(@D)/gosplit-$(k) $(call GO_FLAGS,$(k)) &&) touch $@
# A cgo program: Go and C code in one binary, linked by gcc.
$(B)/fixtures/go/gocgo: tests/unit/fixtures/gocgo.go
	@mkdir -p $(@D)
	CGO_ENABLED=1 scripts/go-build host $< $@
GO_FIXTURES += $(B)/fixtures/go/gocgo
$(B)/plain/tests/test_gotab $(B)/san/tests/test_gotab \
$(B)/plain/tests/test_symbolize $(B)/san/tests/test_symbolize \
$(B)/plain/tests/test_cfi $(B)/san/tests/test_cfi \
$(B)/plain/tests/test_kupload $(B)/san/tests/test_kupload: | $(GO_FIXTURES) $(GO_RELEASE_FIXTURES)
# ------------------------------- Python fixture (tests/unit/test_pywalk.c)
# A program that embeds Debian's CPython 3.11 through libpython3.11.so
# (Debian's own python3.11 links it statically). Debian's python3.11-config,
# by its path: another one on PATH (pyenv's) is not the system's.
$(B)/fixtures/pyembed: tests/unit/fixtures/pyembed.c
	@mkdir -p $(@D)
	$(CC) -O2 -g $$(/usr/bin/python3.11-config --cflags --embed) -o $@ $< \
		$$(/usr/bin/python3.11-config --ldflags --embed)
$(B)/plain/tests/test_pywalk $(B)/san/tests/test_pywalk: | $(B)/fixtures/pyembed
# ------------------------------------------------------------------------

# Each unit test binary runs from the source tree (tests may read fixtures
# relative to it); both variants must pass. Every run is a target of its
# own, unit-run/VARIANT/tests/NAME, so that `make -j2 unit` builds and runs
# both variants side by side (make check does; the sanitizer runs are the
# slow ones). Each prints its output in one piece, "== VARIANT/tests/NAME"
# first, so parallel runs do not interleave.
UNIT_RUNS := $(addprefix unit-run/san/tests/,$(UNIT_NAMES)) \
	     $(addprefix unit-run/plain/tests/,$(UNIT_NAMES))
.PHONY: $(UNIT_RUNS)
unit: $(UNIT_RUNS)
$(UNIT_RUNS): unit-run/%: $(B)/% | $(PPROF)
	@out=$$(TAPROOT_PPROF=$(PPROF) ASAN_OPTIONS=detect_leaks=1 \
		UBSAN_OPTIONS=print_stacktrace=1 $< 2>&1); rc=$$?; \
	printf '== %s\n%s\n' '$*' "$$out"; \
	if [ $$rc -ne 0 ]; then echo "== $* FAILED (exit $$rc)"; fi; exit $$rc
# test_cli runs the programs themselves.
unit-run/plain/tests/test_cli unit-run/san/tests/test_cli: ctl/taprootctl ctl/taprootd
# test_flamegraph has taprootctl report write pages, which headless Chromium opens.
unit-run/plain/tests/test_flamegraph unit-run/san/tests/test_flamegraph: ctl/taprootctl \
	$(B)/gen/flamegraph-page.html

# ---------------------------------------------------------------- kernel

.PHONY: kmod kmods sparse
kmod: kmod/taproot.ko

# Every kernel of the matrix present (scripts/deps installs them), by
# flavor: scripts/kbuild builds each in its release's root when it is not
# the host's, with that release's compiler and sparse (C=1: the files it
# compiles). Evaluated only when used, after scripts/deps has run.
KMOD_FLAVORS = $(shell scripts/kernels | cut -d' ' -f1)

# The module is built out of tree per kernel under build/kmod/KVER (see
# scripts/kbuild); kmod/taproot.ko links to the build for KDIR.
kmod/taproot.ko: FORCE
	@test -n "$(KVER)" || { echo "no kernel headers found: run scripts/deps or pass KDIR=" >&2; exit 1; }
	scripts/kbuild $(KDIR)
	ln -sf $(B)/kmod/$(KVER)/kmod/taproot.ko $@

kmods: $(addprefix kmod-,$(KMOD_FLAVORS))
# Each kernel's build says which of them it is (scripts/kbuild's
# TAPROOT_KBUILD_OF) when it starts and ends: several run at once.
kmod-%: FORCE
	@TAPROOT_KBUILD_OF="$$(echo '$(KMOD_FLAVORS)' | tr ' ' '\n' | grep -nxF -- '$*' | \
		cut -d: -f1)/$(words $(KMOD_FLAVORS))" scripts/kbuild $* C=1

sparse:
	scripts/kbuild $(KDIR) C=2

# ------------------------------------------------------------ top level

.PHONY: all deps check check-loaded vm-check vm-selftest trace-viewer bench bench-quick demo clean FORCE
all: kmod userspace

deps:
	scripts/deps

# Every kernel of the matrix present but the "manual" ones, the longest
# guests first, so that the last two end close together: those with every
# test (the first also runs the tests of userspace behaviour), then the rt
# subset, then the smoke subsets of the cloud kernels (slower to boot and
# run than rt's). scripts/vm-check runs on each what scripts/kernels says.
FLAVORS ?= $(shell scripts/kernels --long | \
	awk '$$4 == "full" { print 0, $$1 } $$4 == "rt" { print 1, $$1 } \
	     $$4 == "smoke" { print ($$1 ~ /cloud/ ? 2 : 3), $$1 }' | \
	sort -s -k1,1n | cut -d' ' -f2)
# A whole kernel's suite takes minutes under TCG on 2 cores, more when the
# host is busy; scripts/vm's default 600 s is for single tests.
VM_TIMEOUT ?= 1800
export VM_TIMEOUT
# scripts/vm-check: one guest per kernel, as many side by side as the host
# has CPUs (a guest runs its vCPUs on one host thread); every kernel runs
# even when one fails, so one failure does not hide the others' results.
# The tests of userspace behaviour alone ("# vm-scope: userspace") run on
# the first kernel only.
vm-check: kmods userspace vm-progs
	scripts/vm-check $(VM_CHECK_OPTS) $(FLAVORS)

# The VM tests with a CPU hog on every host core (scripts/vm-check --load):
# how a new or changed VM test is checked before it lands (docs/development.md,
# "Tests").
# Dependencies first, as for check.
check-loaded:
	scripts/deps
	$(MAKE) --no-print-directory vm-check VM_CHECK_OPTS=--load

# The trace each kernel's record-critical-path left (scripts/vm-check keeps
# it), opened in a real viewer: speedscope in headless Chromium. One per
# kernel of the matrix, or it fails.
trace-viewer:
	@set -- $(wildcard $(B)/vm-check/*.out/critical-path-trace.json); \
	if [ $$# -ne $(words $(FLAVORS)) ]; then \
		echo "trace-viewer: $$# traces in $(B)/vm-check/*.out for $(words $(FLAVORS)) kernels"; \
		exit 1; \
	fi; \
	tests/trace-viewer "$$@"

# The harness's own tests: it passes exit codes through and fails a run whose
# console shows a crash or a WARNING even when the script succeeded; and
# tests/vm/run recovers the module from a test that leaves it held (the
# module and taprootctl are needed for that case).
vm-selftest: kmods userspace
	tests/vm/selftest

# Dependencies first, in a sub-make, so that pkg-config and the kernel list
# are evaluated after the packages exist. The unit tests, the harness
# selftest, the fuzz targets' quick run, the builds the VM tests need and the
# packages run side by side, CHECK_JOBS jobs at a time (none
# of them is timing-sensitive: the fuzz targets run for a fixed time, the
# selftest's guests mostly boot and wait); the VM tests then run alone, a
# guest per host CPU at most (scripts/vm-check), as their timing checks
# need, and the package test but its upgrade is one more guest of that
# queue (--pkg; make pkg-check runs the whole of it).
# The benchmarks are not tests: make bench-quick is theirs (docs/development.md,
# "Benchmarks").
CHECK_JOBS ?= $(shell nproc)
check:
	scripts/deps
	$(MAKE) --no-print-directory -j$(CHECK_JOBS) unit vm-selftest fuzz-quick kmods userspace deb
	$(MAKE) --no-print-directory layering
	$(MAKE) --no-print-directory vm-check VM_CHECK_OPTS="$(VM_CHECK_OPTS) --pkg 6.1"
	$(MAKE) --no-print-directory trace-viewer

# The benchmarks (scripts/bench): `make bench` writes BENCHMARKS.md and
# docs/bench/*.png (every series: over an hour per kernel; docs/development.md,
# "Benchmarks", says which parts take how long); `make bench-quick` only
# proves that every series runs (build/bench-quick/, about 6 minutes): not
# part of make check, run it after changing scripts/bench*.
bench: | $(PPROF)
	scripts/bench

bench-quick: | $(PPROF)
	scripts/bench --quick

demo:
	scripts/deps
	$(MAKE) --no-print-directory kmods userspace vm-progs $(PPROF)
	scripts/demo

clean:
	rm -rf $(B) kmod/taproot.ko ctl/taprootctl ctl/taprootd demo-out

FORCE:

# Keep objects that only pattern rules name (the unit tests' .o files).
.SECONDARY:

# ---------------------------------------------------------------- install
# make install [DESTDIR=DIR] [PREFIX=/usr]: the programs, the module's
# sources with their dkms.conf (DKMS builds taproot.ko from them for every
# kernel), the systemd unit, the configuration file (every setting at its
# default, taprootd --print-config, but retain: a day of profiles), the
# flame graph pages' template, man pages and bash completion.
# make deb builds the Debian source package and its two binary packages,
# taproot and taproot-dkms, in build/deb/ from what git tracks, and runs
# lintian on them (docs/user-guide.md, "Install").

VERSION := $(shell sed -n 's/^\#define TAPROOT_VERSION[[:space:]]*"\(.*\)"/\1/p' lib/taproot.h)
PREFIX ?= /usr
SBINDIR ?= $(PREFIX)/sbin
MANDIR ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
SYSCONFDIR ?= /etc
UNITDIR ?= /lib/systemd/system
MODULESLOADDIR ?= /usr/lib/modules-load.d
# taprootctl's data, the flame graph pages' template: not under PREFIX, as
# SYSCONFDIR, since taprootctl looks for it there (ctl/flamegraph.h).
PKGDATADIR ?= /usr/share/taproot
DKMSDIR ?= /usr/src/taproot-$(VERSION)
# What DKMS needs to build the module: its sources, the ABI header, the
# probes and the build script.
DKMS_FILES := Kbuild include/uapi/linux/taproot.h scripts/kbuild \
	$(wildcard kmod/*.c kmod/*.h) kmod/Kbuild \
	$(wildcard kmod/probes/*.c) kmod/probes/Kbuild

.PHONY: install install-dkms deb
install: userspace install-dkms
	install -D -m 0755 ctl/taprootctl $(DESTDIR)$(SBINDIR)/taprootctl
	install -D -m 0755 ctl/taprootd $(DESTDIR)$(SBINDIR)/taprootd
	install -D -m 0644 packaging/taprootd.service $(DESTDIR)$(UNITDIR)/taprootd.service
	install -D -m 0644 packaging/taproot-modules-load.conf $(DESTDIR)$(MODULESLOADDIR)/taproot.conf
	install -d -m 0755 $(DESTDIR)$(SYSCONFDIR)/taproot
	ctl/taprootd --print-config >$(DESTDIR)$(SYSCONFDIR)/taproot/taprootd.conf
	printf '%s\n' '' '# Installed: a day of profiles of each kind at the default interval,' \
		'# so that the disk does not fill (0 keeps them all).' 'retain 8640' \
		>>$(DESTDIR)$(SYSCONFDIR)/taproot/taprootd.conf
	chmod 0644 $(DESTDIR)$(SYSCONFDIR)/taproot/taprootd.conf
	install -D -m 0644 man/taprootctl.8 $(DESTDIR)$(MANDIR)/man8/taprootctl.8
	install -D -m 0644 man/taprootd.8 $(DESTDIR)$(MANDIR)/man8/taprootd.8
	install -D -m 0644 man/taprootd.conf.5 $(DESTDIR)$(MANDIR)/man5/taprootd.conf.5
	install -D -m 0644 packaging/taprootctl.bash-completion \
		$(DESTDIR)$(BASHCOMPDIR)/taprootctl
	install -D -m 0644 $(B)/gen/flamegraph-page.html \
		$(DESTDIR)$(PKGDATADIR)/flamegraph-page.html

install-dkms:
	for f in $(DKMS_FILES); do \
		install -D -m 0644 $$f $(DESTDIR)$(DKMSDIR)/$$f || exit 1; \
	done
	chmod 0755 $(DESTDIR)$(DKMSDIR)/scripts/kbuild
	sed 's/#MODULE_VERSION#/$(VERSION)/' packaging/dkms.conf \
		>$(DESTDIR)$(DKMSDIR)/dkms.conf

deb:
	scripts/deb

# The package test (tests/pkg/run): make deb's packages installed, started
# at boot, upgraded and purged in guests booted with systemd as PID 1: on
# 6.1 with the running kernel's headers only, then on 7.2 in sid's root
# with the headers of its three kernels. make check runs it on 6.1 but for
# the upgrade (--no-upgrade: a second module build under TCG), in its VM
# queue (scripts/vm-check --pkg).
.PHONY: pkg-check
pkg-check: vm-progs kmods | $(PPROF)
	tests/pkg/run 6.1
	tests/pkg/run --all-kernels 7.2

# ---------------------------------------------------------------- fuzzing
# libFuzzer targets on the parsers of outside input (tests/fuzz/fuzz_*.c):
# the library is built again with clang, coverage-instrumented, under
# ASan+UBSan, into build/fuzz/. tests/fuzz/run builds the seed corpus from
# real binaries and the library's own writers (build/fuzz/seedgen), runs
# each target and appends its figures to build/reliability/scores.tsv.
#   make fuzz-quick   every target 15 s, two at a time (under a minute)
#   make fuzz         every target 10 minutes (tests/fuzz/run --long)
# clang and libclang-rt-14-dev (libFuzzer's runtime) come from scripts/deps.
FUZZ_CC ?= clang
FUZZ_FLAGS := -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
	-fno-sanitize-recover=all
FUZZ_NAMES := $(patsubst tests/fuzz/%.c,%,$(sort $(wildcard tests/fuzz/fuzz_*.c)))
FUZZ_BINS := $(addprefix $(B)/fuzz/,$(FUZZ_NAMES))

$(B)/fuzz/obj/%.o: %.c Makefile
	@mkdir -p $(@D)
	$(FUZZ_CC) $(BASE_CFLAGS) $(DEP_FLAGS) $(PKG_CFLAGS) $(FUZZ_FLAGS) \
		-fsanitize=fuzzer-no-link -c -o $@ $<

$(B)/fuzz/libtaproot.a: $(call objs,fuzz/obj,$(LIB_SRCS))
	@rm -f $@
	ar rcs $@ $^

$(B)/fuzz/fuzz_%: $(B)/fuzz/obj/tests/fuzz/fuzz_%.o $(B)/fuzz/libtaproot.a
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer -o $@ $^ $(PKG_LIBS) -lm
# fuzz_uwalk drives the module's user stack walker, built here in userspace.
$(B)/fuzz/fuzz_uwalk: $(B)/fuzz/obj/kmod/uwalk.o $(B)/fuzz/obj/kmod/jvwalk.o
# fuzz_pywalk drives its CPython frame walker likewise, fuzz_jvwalk its
# HotSpot frame step (in the walker).
$(B)/fuzz/fuzz_pywalk: $(B)/fuzz/obj/kmod/pywalk.o
$(B)/fuzz/fuzz_jvwalk: $(B)/fuzz/obj/kmod/uwalk.o $(B)/fuzz/obj/kmod/jvwalk.o

# The seed writer: a plain program on the plain library.
$(B)/fuzz/seedgen: $(B)/plain/tests/fuzz/seedgen.o $(B)/plain/libtaproot.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $^ $(PKG_LIBS) -lm

.PHONY: fuzz-build fuzz-quick fuzz
fuzz-build: $(FUZZ_BINS) $(B)/fuzz/seedgen $(CFI_FIXTURES) $(GO_FIXTURES)
fuzz-quick: fuzz-build
	tests/fuzz/run
fuzz: fuzz-build
	tests/fuzz/run --long

# The header dependencies the compiler wrote (none before the first build).
-include $(shell find $(B)/plain $(B)/san $(B)/fuzz/obj -name '*.d' 2>/dev/null)
