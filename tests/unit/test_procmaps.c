// SPDX-License-Identifier: GPL-2.0
/*
 * The process model: this process's own /proc/self/maps; a synthetic
 * /proc tree (a temporary directory passed as proc_root) with odd maps
 * lines, malformed lines, a reused pid, refreshes, stale ranges, exec,
 * labels and eviction; a real child that exits.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "process/process-private.h"

#define FIXTURES "tests/unit/fixtures/"

/* A function of this binary to look up. */
__attribute__((noinline)) int procmaps_local_function(int x);
__attribute__((noinline)) int procmaps_local_function(int x)
{
	return x * 7 + 1;
}

/* ---------------------------------------------- a fake /proc directory */

struct fake {
	char root[64];
};

static void fake_write(struct fake *fk, int pid, const char *name, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d", fk->root, pid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%d/%s", fk->root, pid, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static void fake_stat(struct fake *fk, int pid, uint64_t start)
{
	char buf[512];

	snprintf(buf, sizeof(buf),
		 "%d (fake) S 1 %d %d 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 1 0 %llu "
		 "10000000 200 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n",
		 pid, pid, pid, (unsigned long long)start);
	fake_write(fk, pid, "stat", buf);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = calloc(1, (size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	return buf;
}

static int fake_setup(void **state)
{
	struct fake *fk = calloc(1, sizeof(*fk));

	assert_non_null(fk);
	strcpy(fk->root, "/tmp/taproot-procs-XXXXXX");
	assert_non_null(mkdtemp(fk->root));
	*state = fk;
	return 0;
}

static int fake_teardown(void **state)
{
	struct fake *fk = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fk->root);
	assert_int_equal(system(cmd), 0);
	free(fk);
	return 0;
}

static struct taproot_procs *fake_procs_quick(struct fake *fk, unsigned int refresh_ms,
					      unsigned int max_procs, unsigned int quick_reads)
{
	struct taproot_procs_opts o;
	struct taproot_procs *procs;

	taproot_procs_opts_default(&o);
	o.proc_root = fk->root;
	o.refresh_ms = refresh_ms;
	o.quick_reads = quick_reads;
	o.max_procs = max_procs;
	assert_int_equal(taproot_procs_new(&o, &procs), 0);
	return procs;
}

/* Without quick re-reads: what a test of the refresh interval sees does not depend on time. */
static struct taproot_procs *fake_procs(struct fake *fk, unsigned int refresh_ms,
					unsigned int max_procs)
{
	return fake_procs_quick(fk, refresh_ms, max_procs, 0);
}

/* ------------------------------------------------------------ tests */

static void stat_start_time_odd_comm(void **state)
{
	char *text = slurp(FIXTURES "stat-odd.txt");
	uint64_t start = 0;

	assert_int_equal(tp_stat_start_time(text, strlen(text), &start), 0);
	assert_int_equal(start, 987654);
	/* Cut short, no comm, a letter in the start time. */
	assert_int_equal(tp_stat_start_time(text, 40, &start), -TAPROOT_EPROTO);
	assert_int_equal(tp_stat_start_time("12 S 1 2", 8, &start), -TAPROOT_EPROTO);
	free(text);
	text = "1 (a) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 12x 1";
	assert_int_equal(tp_stat_start_time(text, strlen(text), &start), -TAPROOT_EPROTO);
	text = "1 (a) S 1 1 1 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 12 1";
	assert_int_equal(tp_stat_start_time(text, strlen(text), &start), 0);
	assert_int_equal(start, 12);
}

static void self_maps(void **state)
{
	struct taproot_procs *procs;
	struct taproot_proc *p;
	const struct taproot_map *m;
	char exe[PATH_MAX];
	/* libc's own, not a sanitizer's interceptor */
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	void *printf_addr = libc ? dlsym(libc, "printf") : NULL;
	int local = 0;
	ssize_t n;

	assert_int_equal(taproot_procs_new(NULL, &procs), 0);
	assert_int_equal(taproot_proc_get(procs, getpid(), 0, &p), 0);
	assert_null(taproot_proc_gone(p));
	assert_true(taproot_proc_map_count(p) >= 3);
	assert_true(taproot_proc_start_time(p) > 0);

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = '\0';
	assert_int_equal(taproot_proc_find_map(p, (uint64_t)(uintptr_t)procmaps_local_function,
					       &m), 0);
	assert_string_equal(m->path, exe);
	assert_non_null(m->elf);
	assert_true(m->start <= (uintptr_t)procmaps_local_function &&
		    (uintptr_t)procmaps_local_function < m->end);

	assert_non_null(printf_addr);
	assert_int_equal(taproot_proc_find_map(p, (uint64_t)(uintptr_t)printf_addr, &m), 0);
	assert_non_null(strstr(m->path, "libc.so"));
	assert_non_null(m->elf);
	dlclose(libc);

	/* The stack is not executable. */
	assert_int_equal(taproot_proc_find_map(p, (uint64_t)(uintptr_t)&local, &m), -ENOENT);
	taproot_procs_free(procs);
}

static void fixture_odd_lines(void **state)
{
	struct fake *fk = *state;
	struct taproot_procs *procs = fake_procs(fk, 0, 16);
	struct taproot_proc *p;
	const struct taproot_map *m;
	char *maps = slurp(FIXTURES "maps-odd.txt");

	fake_stat(fk, 4242, 1000);
	fake_write(fk, 4242, "maps", maps);
	free(maps);
	assert_int_equal(taproot_proc_get(procs, 4242, 0, &p), 0);
	assert_null(taproot_proc_gone(p));
	assert_int_equal(taproot_proc_start_time(p), 1000);
	assert_int_equal(taproot_proc_map_count(p), 9);

	m = taproot_proc_map(p, 0);
	assert_string_equal(m->path, "/opt/odd app/bin/my prog");
	assert_int_equal(m->start, 0x401000);
	assert_int_equal(m->end, 0x402000);
	assert_int_equal(m->pgoff, 0x1000);
	assert_int_equal(m->dev, makedev(8, 1));
	assert_int_equal(m->ino, 131074);
	assert_int_equal(m->flags, 0);

	m = taproot_proc_map(p, 1);		/* rwxp, no path, a trailing space */
	assert_string_equal(m->path, "");
	assert_int_equal(m->flags, TAPROOT_MAP_ANON);

	m = taproot_proc_map(p, 2);
	assert_string_equal(m->path, "/memfd:jit");
	assert_int_equal(m->flags, TAPROOT_MAP_DELETED);

	m = taproot_proc_map(p, 3);
	assert_string_equal(m->path, "/usr/lib/x86_64-linux-gnu/libgone.so.1");
	assert_int_equal(m->flags, TAPROOT_MAP_DELETED);
	assert_int_equal(m->dev, makedev(0xfd, 2));

	m = taproot_proc_map(p, 4);
	assert_string_equal(m->path, "/tmp/new\nline.so");
	assert_int_equal(m->dev, makedev(0x103, 0xa));

	m = taproot_proc_map(p, 5);
	assert_string_equal(m->path, "[anon:v8 code]");
	assert_int_equal(m->flags, TAPROOT_MAP_ANON | TAPROOT_MAP_SPECIAL);

	m = taproot_proc_map(p, 6);
	assert_int_equal(m->start, 0x7f3000000000);
	assert_int_equal(m->flags, TAPROOT_MAP_ANON);

	m = taproot_proc_map(p, 7);
	assert_string_equal(m->path, "[vdso]");
	assert_int_equal(m->flags, TAPROOT_MAP_VDSO);

	m = taproot_proc_map(p, 8);
	assert_string_equal(m->path, "[vsyscall]");
	assert_int_equal(m->flags, TAPROOT_MAP_VSYSCALL);
	assert_null(taproot_proc_map(p, 9));

	/* Lookups: file missing -> no ELF with the error; vDSO -> ours. */
	assert_int_equal(taproot_proc_find_map(p, 0x401800, &m), 0);
	assert_null(m->elf);
	assert_int_equal(m->elf_err, -ENOENT);
	assert_int_equal(taproot_proc_find_map(p, 0x7f0000000010, &m), 0);
	assert_null(m->elf);
	assert_int_equal(m->elf_err, 0);
	assert_int_equal(taproot_proc_find_map(p, 0x7ffc00100400, &m), 0);
	if (!m->elf)
		fail_msg("vdso: %s", taproot_errmsg(m->elf_err));
	assert_int_equal(m->bias, 0x7ffc00100000);
	assert_int_equal(taproot_proc_find_map(p, 0x402000, &m), -ENOENT);
	assert_int_equal(taproot_proc_find_map(p, 0x3fffff, &m), -ENOENT);
	taproot_procs_free(procs);
}

static void fixture_malformed_lines(void **state)
{
	static const char *const bad[] = {
		"00400000-00401000 r-xp 00000000 08:01",		/* no inode */
		"00400000-00401000 r-xp 00000000 08:01 12x /a",		/* bad inode */
		"0040000g-00401000 r-xp 00000000 08:01 1 /a",		/* bad hex */
		"00400000 00401000 r-xp 00000000 08:01 1 /a",		/* no dash */
		"00401000-00400000 r-xp 00000000 08:01 1 /a",		/* end < start */
		"00400000-00400000 r-xp 00000000 08:01 1 /a",		/* empty */
		"00400100-00401000 r-xp 00000000 08:01 1 /a",		/* unaligned */
		"00400000-00401000 rxxp 00000000 08:01 1 /a",		/* perms */
		"00400000-00401000 r-xq 00000000 08:01 1 /a",		/* perms */
		"00400000-00401000 r-x 00000000 08:01 1 /a",		/* perms */
		"00400000-00401000 r-xp 00000000 0801 1 /a",		/* dev */
		"00400000-00401000 r-xp 00000000 08:01:1 1 /a",		/* dev */
		"00400000-00401000 r-xp 00000000 08:01  1 /a",		/* two spaces */
		"00400000-00401000 r-xp 10000000000000000 08:01 1 /a",	/* 17 digits */
		"00000000-00001000 r-xp 00000000 08:01 1 /a",		/* before line 1 */
		"",							/* empty line */
		"garbage",
	};
	struct fake *fk = *state;
	char text[512], *big;
	size_t i;

	fake_stat(fk, 7, 1);
	for (i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		struct taproot_procs *procs = fake_procs(fk, 0, 16);
		struct taproot_proc *p;
		const char *why;

		snprintf(text, sizeof(text),
			 "00100000-00101000 r-xp 00000000 08:01 5 /bin/x\n%s\n", bad[i]);
		fake_write(fk, 7, "maps", text);
		assert_int_equal(taproot_proc_get(procs, 7, 0, &p), 0);
		why = taproot_proc_gone(p);
		if (!why)
			fail_msg("line accepted: '%s'", bad[i]);
		assert_non_null(strstr(why, "line 2"));
		taproot_procs_free(procs);
	}

	/* A line longer than the cap. */
	big = malloc(TP_MAPS_LINE_MAX + 200);
	assert_non_null(big);
	i = (size_t)snprintf(big, 100, "00100000-00101000 r-xp 00000000 08:01 5 /");
	memset(big + i, 'a', TP_MAPS_LINE_MAX);
	strcpy(big + i + TP_MAPS_LINE_MAX, "\n");
	fake_write(fk, 7, "maps", big);
	free(big);
	{
		struct taproot_procs *procs = fake_procs(fk, 0, 16);
		struct taproot_proc *p;

		assert_int_equal(taproot_proc_get(procs, 7, 0, &p), 0);
		assert_non_null(taproot_proc_gone(p));
		assert_non_null(strstr(taproot_proc_gone(p), "longer than"));
		taproot_procs_free(procs);
	}
}

static void fixture_pid_reuse(void **state)
{
	struct fake *fk = *state;
	struct taproot_procs *procs = fake_procs(fk, 0, 16);
	struct taproot_procs_stats st;
	struct taproot_proc *p;
	const struct taproot_map *m;

	fake_stat(fk, 77, 100);
	fake_write(fk, 77, "maps", "00100000-00101000 r-xp 00000000 08:01 5 /bin/first\n");
	assert_int_equal(taproot_proc_get(procs, 77, 0, &p), 0);
	assert_int_equal(taproot_proc_start_time(p), 100);
	assert_string_equal(taproot_proc_map(p, 0)->path, "/bin/first");

	/* The pid now belongs to another process. */
	fake_stat(fk, 77, 200);
	fake_write(fk, 77, "maps", "00200000-00201000 r-xp 00000000 08:01 6 /bin/second\n");
	assert_int_equal(taproot_proc_get(procs, 77, 200, &p), 0);
	assert_null(taproot_proc_gone(p));
	assert_int_equal(taproot_proc_start_time(p), 200);
	assert_int_equal(taproot_proc_map_count(p), 1);
	assert_string_equal(taproot_proc_map(p, 0)->path, "/bin/second");
	assert_int_equal(taproot_proc_find_map(p, 0x100000, &m), -ENOENT);

	/* A late sample of the first one: it is gone, and says so. */
	assert_int_equal(taproot_proc_get(procs, 77, 100, &p), 0);
	assert_non_null(taproot_proc_gone(p));
	assert_string_equal(taproot_proc_gone(p), "process exited (pid reused)");
	assert_int_equal(taproot_proc_find_map(p, 0x100000, &m), -ESRCH);

	/* Without a start time: whatever has the pid now. */
	assert_int_equal(taproot_proc_get(procs, 77, 0, &p), 0);
	assert_null(taproot_proc_gone(p));
	assert_int_equal(taproot_proc_start_time(p), 200);
	taproot_procs_get_stats(procs, &st);
	assert_true(st.pid_reused >= 2);
	taproot_procs_free(procs);
}

/* Maps of one program, then with a library mapped since (dlopen). */
static const char one[] = "00100000-00101000 r-xp 00000000 08:01 5 /bin/x\n";
static const char two[] = "00100000-00101000 r-xp 00000000 08:01 5 /bin/x\n"
			  "00300000-00301000 r-xp 00000000 08:01 6 /lib/new.so\n";

static void fixture_refresh_and_exec(void **state)
{
	struct fake *fk = *state;
	struct taproot_procs *procs;
	struct taproot_procs_stats st;
	struct taproot_proc *p;
	const struct taproot_map *m;

	/* Refreshes limited to once a minute: a new mapping is not seen. */
	fake_stat(fk, 88, 5);
	fake_write(fk, 88, "maps", one);
	procs = fake_procs(fk, 60000, 16);
	assert_int_equal(taproot_proc_get(procs, 88, 0, &p), 0);
	fake_write(fk, 88, "maps", two);
	assert_int_equal(taproot_proc_find_map(p, 0x300010, &m), -ENOENT);
	taproot_procs_get_stats(procs, &st);
	assert_int_equal(st.refreshes, 0);
	/* exec invalidates at once. */
	taproot_proc_exec(procs, 88, 1000);
	assert_int_equal(taproot_proc_get(procs, 88, 0, &p), 0);
	assert_int_equal(taproot_proc_find_map(p, 0x300010, &m), 0);
	assert_string_equal(m->path, "/lib/new.so");
	taproot_procs_free(procs);

	/* Without the limit, the pc outside the maps re-reads them. */
	fake_write(fk, 88, "maps", one);
	procs = fake_procs(fk, 0, 16);
	assert_int_equal(taproot_proc_get(procs, 88, 0, &p), 0);
	assert_int_equal(taproot_proc_maps_generation(p), 0);
	fake_write(fk, 88, "maps", two);
	assert_int_equal(taproot_proc_find_map(p, 0x300010, &m), 0);
	assert_string_equal(m->path, "/lib/new.so");
	taproot_procs_get_stats(procs, &st);
	assert_int_equal(st.refreshes, 1);
	assert_int_equal(st.procs_read, 2);
	/* A generation per re-read: what was derived from the old maps misses. */
	assert_int_equal(taproot_proc_maps_generation(p), 1);
	/* A re-read that finds the same maps keeps the generation. */
	assert_int_equal(taproot_proc_reread(p), 0);
	assert_int_equal(taproot_proc_maps_generation(p), 1);
	fake_write(fk, 88, "maps", one);
	assert_int_equal(taproot_proc_reread(p), 0);
	assert_int_equal(taproot_proc_maps_generation(p), 2);
	taproot_procs_free(procs);
}

/* @ms milliseconds: the quick re-reads come TP_REFRESH_QUICK_MS apart at least. */
static void sleep_ms(long ms)
{
	struct timespec ts = { 0, ms * 1000000 };

	nanosleep(&ts, NULL);
}

/*
 * A process read before its loader mapped a library: its first re-reads
 * come soon (two here), then once per refresh interval (a minute here).
 */
static void fixture_quick_rereads(void **state)
{
	struct fake *fk = *state;
	struct taproot_procs *procs;
	struct taproot_procs_stats st;
	struct taproot_proc *p;
	const struct taproot_map *m;
	static const char *const maps[] = {
		"00100000-00101000 r-xp 00000000 08:01 5 /bin/x\n",
		"00100000-00101000 r-xp 00000000 08:01 5 /bin/x\n"
		"00300000-00301000 r-xp 00000000 08:01 6 /lib/a.so\n",
		"00100000-00101000 r-xp 00000000 08:01 5 /bin/x\n"
		"00300000-00301000 r-xp 00000000 08:01 6 /lib/a.so\n"
		"00500000-00501000 r-xp 00000000 08:01 7 /lib/b.so\n",
		"00100000-00101000 r-xp 00000000 08:01 5 /bin/x\n"
		"00300000-00301000 r-xp 00000000 08:01 6 /lib/a.so\n"
		"00500000-00501000 r-xp 00000000 08:01 7 /lib/b.so\n"
		"00700000-00701000 r-xp 00000000 08:01 8 /lib/c.so\n",
	};

	fake_stat(fk, 89, 5);
	fake_write(fk, 89, "maps", maps[0]);
	procs = fake_procs_quick(fk, 60000, 16, 2);
	assert_int_equal(taproot_proc_get(procs, 89, 0, &p), 0);
	fake_write(fk, 89, "maps", maps[1]);
	sleep_ms(20);	/* past TP_REFRESH_QUICK_MS, and a coarse clock's tick */
	assert_int_equal(taproot_proc_find_map(p, 0x300010, &m), 0);
	assert_string_equal(m->path, "/lib/a.so");
	fake_write(fk, 89, "maps", maps[2]);
	sleep_ms(20);
	assert_int_equal(taproot_proc_find_map(p, 0x500010, &m), 0);
	/* The two quick ones used: now once a minute. */
	fake_write(fk, 89, "maps", maps[3]);
	sleep_ms(20);
	assert_int_equal(taproot_proc_find_map(p, 0x700010, &m), -ENOENT);
	taproot_procs_get_stats(procs, &st);
	assert_int_equal(st.refreshes, 2);
	taproot_procs_free(procs);
}

/*
 * The lifecycle records: an exec changes the identity (execs) and the
 * maps at once, even at the same addresses and start time; a FORK of a
 * new process with a pid still known (and live, within the exit grace)
 * drops the old one at once; an exit keeps the maps for the grace period.
 */
static void fixture_lifecycle(void **state)
{
	struct fake *fk = *state;
	struct taproot_procs *procs = fake_procs(fk, 60000, 16);
	struct taproot_procs_stats st;
	struct taproot_proc *p;
	const struct taproot_map *m;

	fake_stat(fk, 99, 7);
	fake_write(fk, 99, "maps", "00100000-00101000 r-xp 00000000 08:01 5 /bin/old\n");
	assert_int_equal(taproot_proc_get(procs, 99, 0, &p), 0);
	assert_int_equal(taproot_proc_execs(p), 0);
	assert_string_equal(taproot_proc_map(p, 0)->path, "/bin/old");

	/* exec: the same range, another file, the same start time. */
	fake_write(fk, 99, "maps", "00100000-00101000 r-xp 00000000 08:01 6 /bin/new\n");
	taproot_proc_exec(procs, 99, 1000);
	assert_int_equal(taproot_proc_get(procs, 99, 0, &p), 0);
	assert_int_equal(taproot_proc_execs(p), 1);
	assert_int_equal(taproot_proc_start_time(p), 7);
	assert_int_equal(taproot_proc_find_map(p, 0x100010, &m), 0);
	assert_string_equal(m->path, "/bin/new");

	/* exit of the process: its maps stay for late records. */
	taproot_proc_forget(procs, 99);
	fake_write(fk, 99, "maps", "00400000-00401000 r-xp 00000000 08:01 8 /bin/third\n");
	assert_int_equal(taproot_proc_get(procs, 99, 0, &p), 0);
	assert_int_equal(taproot_proc_find_map(p, 0x100010, &m), 0);
	assert_string_equal(m->path, "/bin/new");

	/* A new process with that pid (FORK): nothing of the old one is kept. */
	taproot_proc_new(procs, 99);
	assert_int_equal(taproot_proc_get(procs, 99, 0, &p), 0);
	assert_int_equal(taproot_proc_execs(p), 0);
	assert_int_equal(taproot_proc_find_map(p, 0x400010, &m), 0);
	assert_string_equal(m->path, "/bin/third");
	taproot_procs_get_stats(procs, &st);
	assert_int_equal(st.pid_reused, 1);
	taproot_proc_new(procs, 12345);		/* unknown: nothing to drop */
	taproot_procs_get_stats(procs, &st);
	assert_int_equal(st.pid_reused, 1);
	taproot_procs_free(procs);
}

static void fixture_lru_eviction(void **state)
{
	struct fake *fk = *state;
	struct taproot_procs *procs = fake_procs(fk, 0, 2);
	struct taproot_procs_stats st;
	struct taproot_proc *p;
	int pid;

	for (pid = 100; pid < 103; pid++) {
		fake_stat(fk, pid, (uint64_t)pid);
		fake_write(fk, pid, "maps", "00100000-00101000 r-xp 00000000 08:01 5 /bin/x\n");
	}
	assert_int_equal(taproot_proc_get(procs, 100, 0, &p), 0);
	assert_int_equal(taproot_proc_get(procs, 101, 0, &p), 0);
	assert_int_equal(taproot_proc_get(procs, 100, 0, &p), 0);	/* 101 is now LRU */
	assert_int_equal(taproot_proc_get(procs, 102, 0, &p), 0);
	taproot_procs_get_stats(procs, &st);
	assert_int_equal(st.procs_evicted, 1);
	assert_int_equal(st.procs_read, 3);
	assert_int_equal(taproot_proc_get(procs, 100, 0, &p), 0);	/* still there */
	taproot_procs_get_stats(procs, &st);
	assert_int_equal(st.procs_read, 3);
	assert_int_equal(taproot_proc_get(procs, 101, 0, &p), 0);	/* read again */
	taproot_procs_get_stats(procs, &st);
	assert_int_equal(st.procs_read, 4);
	assert_int_equal(st.procs_evicted, 2);
	assert_int_equal(taproot_proc_get(procs, 0, 0, &p), -EINVAL);
	taproot_procs_free(procs);
}

/*
 * taproot_proc_get_current(): the maps read by the call, once, whether the
 * process was known or not; gone and invalid pids refused.
 */
static void fixture_get_current(void **state)
{
	struct fake *fk = *state;
	struct taproot_procs *procs = fake_procs(fk, 60000, 16);
	struct taproot_procs_stats st;
	struct taproot_proc *p;
	const struct taproot_map *m;

	fake_stat(fk, 120, 7);
	fake_write(fk, 120, "maps", one);
	/* Unknown: read once, not once by the get and again. */
	assert_int_equal(taproot_proc_get_current(procs, 120, &p), 0);
	taproot_procs_get_stats(procs, &st);
	assert_int_equal(st.procs_read, 1);
	assert_int_equal(taproot_proc_find_map(p, 0x100010, &m), 0);
	/* Known: read again now, whatever the refresh interval (a minute). */
	fake_write(fk, 120, "maps", two);
	assert_int_equal(taproot_proc_get_current(procs, 120, &p), 0);
	taproot_procs_get_stats(procs, &st);
	assert_int_equal(st.procs_read, 2);
	assert_int_equal(taproot_proc_maps_generation(p), 1);
	assert_int_equal(taproot_proc_find_map(p, 0x300010, &m), 0);
	assert_string_equal(m->path, "/lib/new.so");
	/* No such process; no such pid. */
	assert_int_equal(taproot_proc_get_current(procs, 121, &p), -ESRCH);
	assert_non_null(taproot_proc_gone(p));
	assert_int_equal(taproot_proc_get_current(procs, 0, &p), -EINVAL);
	taproot_procs_free(procs);
}

/*
 * Maps read while they changed (ld.so replacing a library's whole-file
 * mapping by its segments): the range has no map_files entry, and its
 * path now leads to another inode (the library was replaced since).
 * That error is not remembered: once the maps show the real range, its
 * map_files entry opens the file.
 */
static void fixture_stale_range_read_again(void **state)
{
	struct fake *fk = *state;
	struct taproot_procs *procs = fake_procs(fk, 0, 16);
	struct taproot_procs_stats st;
	struct taproot_proc *p;
	const struct taproot_map *m;
	char exe[PATH_MAX], maps[PATH_MAX + 128], link[PATH_MAX];
	struct stat sb;
	ssize_t n;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = '\0';
	assert_int_equal(stat(exe, &sb), 0);
	fake_stat(fk, 77, 9);
	/* Another inode than the path's: "replaced since it was mapped". */
	snprintf(maps, sizeof(maps), "7f0000000000-7f0000010000 r-xp 00000000 08:01 %llu %s\n",
		 (unsigned long long)sb.st_ino + 1, exe);
	fake_write(fk, 77, "maps", maps);
	snprintf(link, sizeof(link), "%s/77/map_files", fk->root);
	assert_int_equal(mkdir(link, 0755), 0);
	assert_int_equal(taproot_proc_get(procs, 77, 0, &p), 0);
	assert_int_equal(taproot_proc_find_map(p, 0x7f0000002000, &m), 0);
	assert_null(m->elf);
	assert_int_equal(m->elf_err, -ESTALE);

	/* The real layout, and its map_files entry (only the stale range had none). */
	snprintf(maps, sizeof(maps), "7f0000001000-7f0000005000 r-xp 00000000 08:01 %llu %s\n",
		 (unsigned long long)sb.st_ino + 1, exe);
	fake_write(fk, 77, "maps", maps);
	snprintf(link, sizeof(link), "%s/77/map_files/7f0000001000-7f0000005000", fk->root);
	assert_int_equal(symlink(exe, link), 0);
	assert_int_equal(taproot_proc_find_map(p, 0x7f0000002000, &m), 0);
	assert_int_equal(m->start, 0x7f0000001000);
	assert_non_null(m->elf);
	assert_int_equal(m->elf_err, 0);
	taproot_procs_get_stats(procs, &st);
	assert_int_equal(st.elf_errors, 0);
	assert_true(st.refreshes >= 2);
	taproot_procs_free(procs);
}

/*
 * Labels: the service, unit, container and cgroup from the cgroup file and
 * the executable from the exe link, read with the maps; read again after
 * an exec; "" for what cannot be read or understood.
 */
static void fixture_labels(void **state)
{
	struct fake *fk = *state;
	struct taproot_procs *procs = fake_procs(fk, 60000, 16);
	const struct tp_labels *l;
	struct taproot_proc *p;
	char link[PATH_MAX];

	fake_stat(fk, 55, 3);
	fake_write(fk, 55, "maps", "00100000-00101000 r-xp 00000000 08:01 5 /usr/sbin/nginx\n");
	fake_write(fk, 55, "cgroup", "0::/system.slice/nginx.service\n");
	snprintf(link, sizeof(link), "%s/55/exe", fk->root);
	assert_int_equal(symlink("/usr/sbin/nginx (deleted)", link), 0);
	assert_int_equal(taproot_proc_get(procs, 55, 0, &p), 0);
	l = taproot_proc_labels(p);
	assert_string_equal(tp_labels_value(l, "service_name"), "nginx");
	assert_string_equal(tp_labels_value(l, "systemd_unit"), "nginx.service");
	assert_string_equal(tp_labels_value(l, "container_id"), "");
	assert_string_equal(tp_labels_value(l, "cgroup"), "/system.slice/nginx.service");
	assert_string_equal(tp_labels_value(l, "exe"), "/usr/sbin/nginx");

	/* Moved to another cgroup: kept until an exec. */
	fake_write(fk, 55, "cgroup", "0::/user.slice/user-1000.slice/session-1.scope\n");
	fake_write(fk, 55, "maps", "00100000-00101000 r-xp 00000000 08:01 6 /usr/bin/worker\n");
	assert_int_equal(taproot_proc_get(procs, 55, 0, &p), 0);
	assert_string_equal(tp_labels_value(taproot_proc_labels(p), "service_name"), "nginx");
	unlink(link);
	assert_int_equal(symlink("/usr/bin/worker", link), 0);
	taproot_proc_exec(procs, 55, 1000);
	assert_int_equal(taproot_proc_get(procs, 55, 0, &p), 0);
	l = taproot_proc_labels(p);
	assert_string_equal(tp_labels_value(l, "service_name"), "worker");
	assert_string_equal(tp_labels_value(l, "systemd_unit"), "session-1.scope");
	assert_string_equal(tp_labels_value(l, "exe"), "/usr/bin/worker");

	/* Neither file: no labels, the process still read. */
	fake_stat(fk, 56, 4);
	fake_write(fk, 56, "maps", "00100000-00101000 r-xp 00000000 08:01 5 /bin/x\n");
	assert_int_equal(taproot_proc_get(procs, 56, 0, &p), 0);
	assert_null(taproot_proc_gone(p));
	assert_null(taproot_proc_labels(p));
	/* A cgroup file not understood: the exe names the service. */
	fake_stat(fk, 57, 5);
	fake_write(fk, 57, "maps", "00100000-00101000 r-xp 00000000 08:01 5 /bin/x\n");
	fake_write(fk, 57, "cgroup", "not a cgroup file\n");
	snprintf(link, sizeof(link), "%s/57/exe", fk->root);
	assert_int_equal(symlink("/bin/x", link), 0);
	assert_int_equal(taproot_proc_get(procs, 57, 0, &p), 0);
	l = taproot_proc_labels(p);
	assert_int_equal(l->nr, 2);
	assert_string_equal(tp_labels_value(l, "service_name"), "x");
	assert_string_equal(tp_labels_value(l, "exe"), "/bin/x");
	taproot_procs_free(procs);
}

/*
 * A process in a Kubernetes container: its pod's labels from the runtime's
 * files under runtime_root (tests/unit/fixtures/k8s/, containerd's), after
 * those of its cgroup; none for a container no runtime there knows.
 */
static void fixture_labels_k8s(void **state)
{
	static const char cri[] = "0123456789abcdef0123456789abcdef0123456789abcdef"
				  "0123456789abcdef";
	struct fake *fk = *state;
	struct taproot_procs_stats st;
	struct taproot_procs_opts o;
	struct taproot_procs *procs;
	const struct tp_labels *l;
	struct taproot_proc *p;
	char cgroup[512];

	taproot_procs_opts_default(&o);
	assert_string_equal(o.runtime_root, "/");
	o.proc_root = fk->root;
	o.runtime_root = FIXTURES "k8s";
	assert_int_equal(taproot_procs_new(&o, &procs), 0);
	snprintf(cgroup, sizeof(cgroup), "0::/kubepods.slice/kubepods-burstable.slice/"
		 "kubepods-burstable-pod6b3e0c1a_2f4d_4e5a_9b8c_7d6e5f4a3b2c.slice/"
		 "cri-containerd-%s.scope\n", cri);
	for (int pid = 60; pid < 62; pid++) {
		fake_stat(fk, pid, 3);
		fake_write(fk, pid, "maps", "00100000-00101000 r-xp 00000000 08:01 5 /bin/x\n");
		fake_write(fk, pid, "cgroup", cgroup);
		assert_int_equal(taproot_proc_get(procs, pid, 0, &p), 0);
		l = taproot_proc_labels(p);
		assert_string_equal(tp_labels_value(l, "container_id"), cri);
		assert_string_equal(tp_labels_value(l, "k8s_pod_name"), "checkout-7d9f8b6c5-x2k4q");
		assert_string_equal(tp_labels_value(l, "k8s_namespace"), "shop");
		assert_string_equal(tp_labels_value(l, "k8s_container_name"), "checkout");
		assert_string_equal(tp_labels_value(l, "k8s_pod_uid"),
				    "6b3e0c1a-2f4d-4e5a-9b8c-7d6e5f4a3b2c");
	}
	/* Two processes of one container: its file read once, and said so. */
	assert_int_equal(procs->k8s.stats.reads, 1);
	assert_int_equal(procs->k8s.stats.hits, 1);
	taproot_procs_get_stats(procs, &st);
	assert_int_equal(st.k8s_reads, 1);
	assert_int_equal(st.k8s_hits, 1);
	assert_int_equal(st.k8s_refused, 0);

	/* A container no runtime knows: no k8s_* label, the others there. */
	fake_stat(fk, 62, 3);
	fake_write(fk, 62, "maps", "00100000-00101000 r-xp 00000000 08:01 5 /bin/x\n");
	fake_write(fk, 62, "cgroup", "0::/system.slice/docker-00000000000000000000000000000000"
		   "000000000000000000000000000000aa.scope\n");
	assert_int_equal(taproot_proc_get(procs, 62, 0, &p), 0);
	l = taproot_proc_labels(p);
	assert_string_equal(tp_labels_value(l, "service_name"), "000000000000");
	assert_string_equal(tp_labels_value(l, "k8s_pod_name"), "");
	assert_string_equal(tp_labels_value(l, "k8s_namespace"), "");
	assert_int_equal(l->nr, 3);
	taproot_procs_get_stats(procs, &st);
	assert_int_equal(st.k8s_reads, 2);
	assert_int_equal(st.k8s_refused, 0);	/* no file: not refused */
	taproot_procs_free(procs);
}

/*
 * A fork starts with its parent's maps and labels (taproot_proc_fork()):
 * read from /proc when it can be, kept when it has exited by then; never
 * across an exec, never from a parent not read; taken before the child's
 * entry evicts the parent.
 */
static void fixture_fork_inherits(void **state)
{
	struct fake *fk = *state;
	struct taproot_procs *procs = fake_procs(fk, 60000, 16);
	struct taproot_procs_stats st;
	struct taproot_proc *p;
	const struct taproot_map *m;

	fake_stat(fk, 70, 3);
	fake_write(fk, 70, "maps", "00100000-00101000 r-xp 00000000 08:01 5 /usr/sbin/parent\n");
	fake_write(fk, 70, "cgroup", "0::/system.slice/parent.service\n");
	assert_int_equal(taproot_proc_get(procs, 70, 0, &p), 0);

	/* Exited before it was read: the parent's maps and labels. */
	taproot_proc_fork(procs, 70, 71);
	assert_int_equal(taproot_proc_get(procs, 71, 0, &p), 0);
	assert_null(taproot_proc_gone(p));
	assert_int_equal(taproot_proc_find_map(p, 0x100010, &m), 0);
	assert_string_equal(m->path, "/usr/sbin/parent");
	assert_string_equal(tp_labels_value(taproot_proc_labels(p), "systemd_unit"),
			    "parent.service");
	/* The parent's own are untouched by the child's. */
	taproot_proc_forget(procs, 71);
	assert_int_equal(taproot_proc_get(procs, 70, 0, &p), 0);
	assert_int_equal(taproot_proc_find_map(p, 0x100010, &m), 0);
	assert_string_equal(m->path, "/usr/sbin/parent");

	/* Alive: its own maps, read from /proc. */
	fake_stat(fk, 72, 4);
	fake_write(fk, 72, "maps", "00200000-00201000 r-xp 00000000 08:01 6 /bin/own\n");
	taproot_proc_fork(procs, 70, 72);
	assert_int_equal(taproot_proc_get(procs, 72, 0, &p), 0);
	assert_int_equal(taproot_proc_find_map(p, 0x200010, &m), 0);
	assert_string_equal(m->path, "/bin/own");
	assert_int_equal(taproot_proc_find_map(p, 0x100010, &m), -ENOENT);

	/* Exec'd, then exited unread: not the old program's maps. */
	taproot_proc_fork(procs, 70, 73);
	taproot_proc_exec(procs, 73, 1000);
	assert_int_equal(taproot_proc_get(procs, 73, 0, &p), 0);
	assert_int_equal(taproot_proc_find_map(p, 0x100010, &m), -ESRCH);
	/* Nor those of a read process that exec'd. */
	taproot_proc_exec(procs, 72, 2000);
	fake_write(fk, 72, "maps", "");
	assert_int_equal(taproot_proc_get(procs, 72, 0, &p), 0);
	assert_int_equal(taproot_proc_find_map(p, 0x200010, &m), -ESRCH);

	/* A parent never read: nothing to inherit. */
	taproot_proc_fork(procs, 80, 74);
	assert_int_equal(taproot_proc_get(procs, 74, 0, &p), 0);
	assert_int_equal(taproot_proc_find_map(p, 0x100010, &m), -ESRCH);
	taproot_procs_get_stats(procs, &st);
	assert_int_equal(st.maps_inherited, 3);
	taproot_procs_free(procs);

	/* Room for one: the child's entry evicts the parent it copied. */
	procs = fake_procs(fk, 60000, 1);
	assert_int_equal(taproot_proc_get(procs, 70, 0, &p), 0);
	taproot_proc_fork(procs, 70, 75);
	assert_int_equal(taproot_proc_get(procs, 75, 0, &p), 0);
	assert_int_equal(taproot_proc_find_map(p, 0x100010, &m), 0);
	assert_string_equal(m->path, "/usr/sbin/parent");
	taproot_procs_get_stats(procs, &st);
	assert_int_equal(st.procs_evicted, 1);
	taproot_procs_free(procs);

	/* Room for three: a fork not used yet goes before processes that were. */
	procs = fake_procs(fk, 60000, 3);
	fake_stat(fk, 76, 5);
	fake_write(fk, 76, "maps", "00300000-00301000 r-xp 00000000 08:01 7 /bin/busy\n");
	assert_int_equal(taproot_proc_get(procs, 76, 0, &p), 0);
	assert_int_equal(taproot_proc_get(procs, 70, 0, &p), 0);
	taproot_proc_fork(procs, 70, 77);
	taproot_proc_fork(procs, 70, 78);	/* evicts 77, not 76 */
	assert_int_equal(taproot_proc_find(procs, 76, 0, &p), 0);
	assert_int_equal(taproot_proc_find(procs, 77, 0, &p), -ESRCH);
	assert_int_equal(taproot_proc_get(procs, 78, 0, &p), 0);	/* used: to the head */
	taproot_proc_fork(procs, 78, 79);	/* evicts 76, the least recently used */
	assert_int_equal(taproot_proc_find(procs, 78, 0, &p), 0);
	assert_int_equal(taproot_proc_find(procs, 76, 0, &p), -ESRCH);
	assert_int_equal(taproot_proc_get(procs, 79, 0, &p), 0);
	assert_int_equal(taproot_proc_find_map(p, 0x100010, &m), 0);
	assert_string_equal(m->path, "/usr/sbin/parent");
	taproot_procs_free(procs);
}

static void fixture_no_such_process(void **state)
{
	struct fake *fk = *state;
	struct taproot_procs *procs = fake_procs(fk, 0, 16);
	struct taproot_proc *p;
	const struct taproot_map *m;

	assert_int_equal(taproot_proc_get(procs, 999, 0, &p), 0);
	assert_string_equal(taproot_proc_gone(p), "process exited");
	assert_int_equal(taproot_proc_find_map(p, 0x1000, &m), -ESRCH);

	/* A zombie: stat but empty maps. */
	fake_stat(fk, 998, 3);
	fake_write(fk, 998, "maps", "");
	assert_int_equal(taproot_proc_get(procs, 998, 0, &p), 0);
	assert_non_null(strstr(taproot_proc_gone(p), "process exited"));
	taproot_procs_free(procs);
}

static void real_child_exits(void **state)
{
	struct taproot_procs_opts o;
	struct taproot_procs *procs;
	struct taproot_proc *p;
	const struct taproot_map *m;
	uint64_t pc = (uint64_t)(uintptr_t)procmaps_local_function, start;
	int status;
	pid_t child;

	taproot_procs_opts_default(&o);
	o.exit_grace_ms = 60000;
	assert_int_equal(taproot_procs_new(&o, &procs), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		pause();
		_exit(0);
	}
	assert_int_equal(taproot_proc_get(procs, child, 0, &p), 0);
	assert_null(taproot_proc_gone(p));
	start = taproot_proc_start_time(p);
	assert_true(start > 0);
	assert_int_equal(taproot_proc_find_map(p, pc, &m), 0);	/* forked: same layout */

	kill(child, SIGKILL);
	assert_int_equal(waitpid(child, &status, 0), child);
	taproot_proc_forget(procs, child);

	/* Late samples of it still find its maps, by start time or not. */
	assert_int_equal(taproot_proc_get(procs, child, start, &p), 0);
	assert_null(taproot_proc_gone(p));
	assert_int_equal(taproot_proc_find_map(p, pc, &m), 0);
	assert_non_null(m->elf);
	assert_int_equal(taproot_proc_get(procs, child, 0, &p), 0);
	assert_int_equal(taproot_proc_find_map(p, pc, &m), 0);
	taproot_procs_free(procs);

	/* Without the grace: read afresh, it is gone, with the reason. */
	o.exit_grace_ms = 0;
	assert_int_equal(taproot_procs_new(&o, &procs), 0);
	assert_int_equal(taproot_proc_get(procs, child, start, &p), 0);
	assert_non_null(taproot_proc_gone(p));
	assert_non_null(strstr(taproot_proc_gone(p), "process exited"));
	assert_int_equal(taproot_proc_find_map(p, pc, &m), -ESRCH);
	taproot_procs_free(procs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(stat_start_time_odd_comm),
		cmocka_unit_test(self_maps),
		cmocka_unit_test_setup_teardown(fixture_odd_lines, fake_setup, fake_teardown),
		cmocka_unit_test_setup_teardown(fixture_malformed_lines, fake_setup, fake_teardown),
		cmocka_unit_test_setup_teardown(fixture_pid_reuse, fake_setup, fake_teardown),
		cmocka_unit_test_setup_teardown(fixture_refresh_and_exec, fake_setup, fake_teardown),
		cmocka_unit_test_setup_teardown(fixture_quick_rereads, fake_setup, fake_teardown),
		cmocka_unit_test_setup_teardown(fixture_lifecycle, fake_setup, fake_teardown),
		cmocka_unit_test_setup_teardown(fixture_lru_eviction, fake_setup, fake_teardown),
		cmocka_unit_test_setup_teardown(fixture_get_current, fake_setup, fake_teardown),
		cmocka_unit_test_setup_teardown(fixture_stale_range_read_again, fake_setup,
						fake_teardown),
		cmocka_unit_test_setup_teardown(fixture_labels, fake_setup, fake_teardown),
		cmocka_unit_test_setup_teardown(fixture_labels_k8s, fake_setup, fake_teardown),
		cmocka_unit_test_setup_teardown(fixture_fork_inherits, fake_setup, fake_teardown),
		cmocka_unit_test_setup_teardown(fixture_no_such_process, fake_setup, fake_teardown),
		cmocka_unit_test(real_child_exits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
