// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: what the daemon does with the bytes of the per-CPU
 * rings: the consumer (lib/kernel/ring.c: head and tail checks, taproot_rec_check()
 * on every record, the merge across CPUs), then the pipeline that decodes
 * the records (lib/pipeline/: samples unwound and symbolized into the
 * CPU profile, LOST counted, FORK/EXEC/EXIT into the process model,
 * SWITCH/WAKING joined into off-CPU intervals by lib/profile/causal.c), as
 * taproot_pipeline_consume() drives them; then the input's last bytes as
 * a drain of counted stacks (taproot_pipeline_add_counts()); optionally
 * the profile encoded to pprof.
 *
 * The input is laid out as tests/fuzz/ring-input.h says. The rings are
 * built in memory as tests/unit/test_ring.c's are (tp_ring_new() without
 * a device, tp_ring_add()), with the data area present twice back to back
 * as the module maps it, in an allocation of exactly the window's size so
 * that AddressSanitizer sees a read past its end. Every input gets a fresh pipeline, so runs do not
 * depend on each other; the process table reads a fake /proc (a temporary
 * directory) in which only FR_PID exists, so nothing depends on the host's
 * processes.
 *
 * Checked after each run: the consumer released at most what the head
 * announced on each CPU and the pipeline's counters add up; a breach aborts.
 * With FUZZ_DEBUG set in the environment the pipeline's counters are printed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <gelf.h>

#include "fuzz.h"
#include "kernel/kernel-private.h"
#include "taproot.h"
#include "ring-input.h"


#define STR_(x)		#x
#define TP_STR(x)	STR_(x)

static char dir[] = "/tmp/fuzz-ring-XXXXXX";
static char proc_root[64];
static struct taproot_ksyms *ksyms;
/* Each ring: consumer page, then the window (producer page, data twice). */
static struct taproot_ring_consumer cons[FR_MAX_CPUS];


static void die(const char *what)
{
	fprintf(stderr, "fuzz_ring: setup: %s: %s\n", what, taproot_errmsg(-errno));
	exit(1);
}

static void write_file(const char *name, const char *text, size_t len)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, text, len) != (ssize_t)len || close(fd) < 0)
		die(path);
}

static void copy_file(const char *from, const char *name)
{
	char buf[8192];
	int fd = open(from, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		die(from);
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n < 0)
		die(from);
	write_file(name, buf, (size_t)n);
}

/* The maps line of FR_EXE's text segment, mapped at FR_EXE_BASE. */
static void write_maps(void)
{
	char line[512];
	struct stat st;
	GElf_Phdr ph;
	size_t phnum = 0;
	Elf *elf;
	int fd, n = 0;

	fd = open(FR_EXE, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0)
		die(FR_EXE);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_getphdrnum(elf, &phnum))
		die(FR_EXE ": not an ELF file");
	for (size_t i = 0; i < phnum; i++) {
		uint64_t lo, hi;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		lo = FR_EXE_BASE + (ph.p_vaddr & ~0xfffULL);
		hi = FR_EXE_BASE + ((ph.p_vaddr + ph.p_memsz + 0xfff) & ~0xfffULL);
		n = snprintf(line, sizeof(line), "%llx-%llx r-xp %08llx %02x:%02x %llu    %s\n",
			     (unsigned long long)lo, (unsigned long long)hi,
			     (unsigned long long)(ph.p_offset & ~0xfffULL), major(st.st_dev),
			     minor(st.st_dev), (unsigned long long)st.st_ino, FR_EXE);
		break;
	}
	elf_end(elf);
	close(fd);
	if (n <= 0)
		die(FR_EXE ": no executable segment");
	write_file("proc/" TP_STR(FR_PID) "/maps", line, (size_t)n);
}

static void cleanup(void)
{
	static const char *const files[] = { "maps", "stat", "status", "comm", "root", "" };
	char path[256];

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s/%s", proc_root, TP_STR(FR_PID), files[i]);
		if (unlink(path) < 0)
			rmdir(path);
	}
	rmdir(proc_root);
	snprintf(path, sizeof(path), "%s/kallsyms", dir);
	unlink(path);
	rmdir(dir);
	taproot_ksyms_free(ksyms);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char path[256], text[FR_NR_KSYMS * 40 + 128];
	size_t len = 0;

	if (!mkdtemp(dir))
		die("mkdtemp");
	atexit(cleanup);
	snprintf(path, sizeof(path), "%s/proc/" TP_STR(FR_PID), dir);
	snprintf(proc_root, sizeof(proc_root), "%s/proc", dir);
	if (mkdir(proc_root, 0700) < 0 || mkdir(path, 0700) < 0)
		die(path);
	copy_file("/proc/self/stat", "proc/" TP_STR(FR_PID) "/stat");
	copy_file("/proc/self/status", "proc/" TP_STR(FR_PID) "/status");
	write_file("proc/" TP_STR(FR_PID) "/comm", "fuzzed\n", 7);
	snprintf(path, sizeof(path), "%s/proc/" TP_STR(FR_PID) "/root", dir);
	if (symlink("/", path) < 0)
		die(path);
	write_maps();

	len += (size_t)snprintf(text + len, sizeof(text) - len, "%016llx T _stext\n",
				(unsigned long long)FR_KBASE);
	for (int i = 0; i < FR_NR_KSYMS; i++)
		len += (size_t)snprintf(text + len, sizeof(text) - len, "%016llx T kfn%d\n",
					(unsigned long long)(FR_KBASE + (uint64_t)i * FR_KSYM_SIZE), i);
	len += (size_t)snprintf(text + len, sizeof(text) - len, "%016llx T _etext\n",
				(unsigned long long)(FR_KBASE + FR_NR_KSYMS * FR_KSYM_SIZE));
	write_file("kallsyms", text, len);
	snprintf(path, sizeof(path), "%s/kallsyms", dir);
	if (taproot_ksyms_load(path, &ksyms)) {
		fprintf(stderr, "fuzz_ring: %s\n", taproot_errmsg(-1));
		exit(1);
	}
	return 0;
}

static void on_corrupt(unsigned int cpu, uint64_t pos, const char *why, void *arg)
{
	check(why && strlen(why) > 0);
	++*(unsigned int *)arg;
}

/*
 * The input's last bytes, up to FR_COUNTS entries, as a drain of the
 * module's counted stacks (taproot_pipeline_add_counts()), resolved
 * against the STACK records the rings held: the samples it adds are those
 * of the entries the checks pass, whole.
 */
#define FR_COUNTS	16
static void add_counts(struct taproot_pipeline *p, const uint8_t *in, size_t size,
		       unsigned int nr_cpus)
{
	static struct taproot_count e[FR_COUNTS];
	size_t n = size / sizeof(e[0]) < FR_COUNTS ? size / sizeof(e[0]) : FR_COUNTS;
	struct taproot_pipeline_stats before, after;
	uint64_t want = 0;
	const char *why;

	memcpy(e, in + size - n * sizeof(e[0]), n * sizeof(e[0]));
	for (size_t i = 0; i < n; i++)
		if (taproot_count_check(&e[i], nr_cpus, &why) == 0)
			want += e[i].count;
	taproot_pipeline_stats(p, &before);
	taproot_pipeline_counts_begin(p);
	check(taproot_pipeline_add_counts(p, e, n, nr_cpus) >= 0);
	taproot_pipeline_stats(p, &after);
	check(after.counted_samples - before.counted_samples == want);
}

int LLVMFuzzerTestOneInput(const uint8_t *in, size_t size)
{
	struct taproot_procs_opts po;
	struct taproot_pipeline_opts o;
	struct taproot_pipeline_stats st;
	struct taproot_pipeline *p = NULL;
	struct taproot_ring *r = NULL;
	uint8_t *windows[FR_MAX_CPUS] = { NULL };
	uint64_t tail[FR_MAX_CPUS], head[FR_MAX_CPUS], d;
	unsigned int flags, nr, corrupt = 0;
	size_t share;
	int n;

	if (size < 1)
		return 0;
	flags = in[0];
	nr = FR_F_CPUS(flags);
	d = (uint64_t)FR_F_PAGES(flags) * FR_PAGE;
	if (size < 1 + (size_t)nr * FR_CPU_HDR)
		return 0;
	share = (size - 1 - nr * FR_CPU_HDR) / nr;

	check(tp_ring_new(-1, FR_PAGE, &r) == 0);
	for (unsigned int i = 0; i < nr; i++) {
		const uint8_t *h = in + 1 + i * FR_CPU_HDR;
		const uint8_t *src = in + 1 + nr * FR_CPU_HDR + i * share;
		struct taproot_ring_producer *prod;
		size_t len = share < d ? share : (size_t)d;
		uint8_t *data;
		size_t at;

		windows[i] = aligned_alloc(FR_PAGE, FR_PAGE + 2 * d);
		if (!windows[i])
			abort();
		data = windows[i] + FR_PAGE;
		tail[i] = fr_get64(h);
		head[i] = tail[i] + fr_get32(h + 8);
		memset(windows[i], 0, FR_PAGE + d);
		prod = (void *)windows[i];
		*prod = (struct taproot_ring_producer){
			.abi_version = TAPROOT_ABI_VERSION, .cpu = i, .page_size = FR_PAGE,
			.data_offset = 2 * FR_PAGE, .data_size = d, .data_head = head[i],
		};
		at = (size_t)(tail[i] & (d - 1));
		for (size_t k = 0; k < len; k++)
			data[(at + k) & (d - 1)] = src[k];
		memcpy(data + d, data, d);	/* the second mapping */
		cons[i].data_tail = tail[i];
		check(tp_ring_add(r, i, &cons[i], FR_PAGE, windows[i], FR_PAGE + 2 * d,
				  false) == 0);
	}

	taproot_procs_opts_default(&po);
	po.proc_root = proc_root;
	po.max_procs = 4;
	po.max_elfs = 4;
	taproot_pipeline_opts_default(&o);
	o.freq_hz = 99;
	o.ksyms = ksyms;
	o.procs = &po;
	o.max_stacks = 16;		/* the folding of a full table is reached */
	o.max_intervals = 16;
	o.offcpu = flags & FR_F_OFFCPU;
	o.label_tid = o.label_cpu = flags & FR_F_LABELS;
	o.unwind_cache_bytes = 1 << 20;
	o.sym_cache_entries = 256;
	o.max_user_frames = 32;
	o.counted = true;		/* replaced STACKs kept for add_counts() */
	if (taproot_pipeline_new(&o, &p))
		goto out;

	n = taproot_pipeline_consume(p, r, on_corrupt, &corrupt);
	check(n >= 0);
	for (unsigned int i = 0; i < nr; i++)
		check(cons[i].data_tail - tail[i] <= head[i] - tail[i]);
	if (flags & FR_F_TWICE)
		check(taproot_pipeline_consume(p, r, on_corrupt, &corrupt) == 0);
	add_counts(p, in, size, nr);
	taproot_pipeline_flush(p, true);
	taproot_pipeline_stats(p, &st);
	check(st.samples <= st.records + st.counted_samples &&
	      st.dropped <= st.records + st.counted_samples);
	check(st.counted_unresolved <= st.counted_samples);
	if (getenv("FUZZ_DEBUG"))
		fprintf(stderr, "fuzz_ring: %d records, %u corrupt; samples %llu dropped %llu "
			"lost %llu proc_events %llu user_stacks %llu frames %llu unsymbolized %llu "
			"offcpu joined %llu woken %llu bad %llu\n", n, corrupt,
			(unsigned long long)st.samples, (unsigned long long)st.dropped,
			(unsigned long long)st.lost, (unsigned long long)st.proc_events,
			(unsigned long long)st.user_stacks, (unsigned long long)st.frames,
			(unsigned long long)st.frames_unsymbolized,
			(unsigned long long)st.causal.joined, (unsigned long long)st.causal.woken,
			(unsigned long long)st.causal.bad_records);
	if (flags & FR_F_ENCODE) {
		void *buf = NULL;
		size_t len = 0;

		if (taproot_pprof_encode(taproot_pipeline_profile(p), false, &buf, &len) == 0)
			check(buf && len > 0);
		free(buf);
	}
	taproot_pipeline_free(p);
out:
	taproot_ring_close(r);
	for (unsigned int i = 0; i < nr; i++)
		free(windows[i]);
	return 0;
}
