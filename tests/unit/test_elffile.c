// SPDX-License-Identifier: GPL-2.0
/*
 * The ELF file cache on real files: build IDs of system binaries against
 * what readelf -n prints, one entry per file, the LRU cap, the bias of this
 * binary's own mapping against nm's address of a function, the vDSO, and
 * truncated or corrupted copies of a real binary (errors, never crashes).
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "pipeline/unwindmap.h"
#include "process/process-private.h"
#include "nm.h"

__attribute__((noinline)) int elffile_local_function(int x);
__attribute__((noinline)) int elffile_local_function(int x)
{
	return x * 5 + 3;
}

/* The build ID readelf -n prints for @path, as hex; "" when none. */
static void readelf_build_id(const char *path, char *hex, size_t len)
{
	char cmd[PATH_MAX + 64], line[512];
	FILE *f;

	hex[0] = '\0';
	snprintf(cmd, sizeof(cmd), "readelf -n '%s' 2>/dev/null", path);
	f = popen(cmd, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, "Build ID: ");

		if (p && sscanf(p + 10, "%255s", hex) == 1)
			break;
	}
	pclose(f);
	(void)len;
}

static void to_hex(const uint8_t *b, size_t n, char *hex)
{
	size_t i;

	for (i = 0; i < n; i++)
		sprintf(hex + 2 * i, "%02x", b[i]);
	hex[2 * n] = '\0';
}

static const char *system_files[] = {
	"/usr/bin/ls", "/usr/bin/cat", "/lib/x86_64-linux-gnu/libc.so.6",
	"/lib/x86_64-linux-gnu/libelf.so.1", "this test",
};

static void build_ids_match_readelf(void **state)
{
	struct taproot_procs *procs;
	size_t i, n, checked = 0;
	char exe[PATH_MAX];
	ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	assert_true(len > 0);
	exe[len] = '\0';
	system_files[4] = exe;
	assert_int_equal(taproot_procs_new(NULL, &procs), 0);
	for (i = 0; i < sizeof(system_files) / sizeof(*system_files); i++) {
		struct taproot_elf *e;
		char want[256], got[256];
		const uint8_t *id;

		if (access(system_files[i], R_OK))
			continue;
		readelf_build_id(system_files[i], want, sizeof(want));
		assert_int_equal(taproot_elf_open(procs, system_files[i], &e), 0);
		assert_non_null(taproot_elf_handle(e));
		id = taproot_elf_build_id(e, &n);
		if (!want[0]) {
			assert_null(id);
			continue;
		}
		assert_non_null(id);
		to_hex(id, n, got);
		assert_string_equal(got, want);
		/* The unwinder's key is the build ID. */
		assert_int_equal(e->key_len, n);
		assert_memory_equal(e->key, id, n);
		checked++;
	}
	assert_true(checked >= 2);
	taproot_procs_free(procs);
}

static void one_entry_per_file_and_lru(void **state)
{
	struct taproot_procs_opts o;
	struct taproot_procs *procs;
	struct taproot_procs_stats st;
	struct taproot_elf *a, *b;

	taproot_procs_opts_default(&o);
	o.max_elfs = 2;
	assert_int_equal(taproot_procs_new(&o, &procs), 0);
	assert_int_equal(taproot_elf_open(procs, "/usr/bin/ls", &a), 0);
	assert_int_equal(taproot_elf_open(procs, "/bin/ls", &b), 0);	/* same file */
	assert_ptr_equal(a, b);
	assert_int_equal(taproot_elf_open(procs, "/usr/bin/cat", &b), 0);
	assert_ptr_not_equal(a, b);
	taproot_procs_get_stats(procs, &st);
	assert_int_equal(st.elfs_opened, 2);
	assert_int_equal(st.elfs_evicted, 0);
	assert_int_equal(taproot_elf_open(procs, "/lib/x86_64-linux-gnu/libc.so.6", &b), 0);
	taproot_procs_get_stats(procs, &st);
	assert_int_equal(st.elfs_opened, 3);
	assert_int_equal(st.elfs_evicted, 1);
	assert_int_equal(procs->elfs.nr, 2);
	/* ls was the least recently used: opened again. */
	assert_int_equal(taproot_elf_open(procs, "/usr/bin/ls", &a), 0);
	taproot_procs_get_stats(procs, &st);
	assert_int_equal(st.elfs_opened, 4);
	taproot_procs_free(procs);
}

static void bias_of_own_mapping(void **state)
{
	struct taproot_procs *procs;
	struct taproot_proc *p;
	const struct taproot_map *m;
	struct taproot_unwind_map um;
	uint64_t pc = (uint64_t)(uintptr_t)elffile_local_function, want, bias;
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	assert_true(n > 0);
	exe[n] = '\0';
	want = nm_address(exe, "elffile_local_function");
	assert_true(want != 0);

	assert_int_equal(taproot_procs_new(NULL, &procs), 0);
	assert_int_equal(taproot_proc_get(procs, getpid(), 0, &p), 0);
	assert_int_equal(taproot_proc_find_map(p, pc, &m), 0);
	assert_non_null(m->elf);
	assert_int_equal(pc - m->bias, want);
	assert_int_equal(taproot_elf_bias(m->elf, m->start, m->end, m->pgoff, &bias), 0);
	assert_int_equal(bias, m->bias);

	assert_int_equal(taproot_proc_unwind_map(p, pc, &um), 0);
	assert_ptr_equal(um.elf, taproot_elf_handle(m->elf));
	assert_int_equal(um.bias, m->bias);
	assert_int_equal(um.start, m->start);
	assert_int_equal(um.end, m->end);
	assert_true(um.key_len > 0);
	taproot_procs_free(procs);
}

static void vdso_image(void **state)
{
	struct taproot_procs *procs;
	struct taproot_elf *e, *again;

	assert_int_equal(taproot_procs_new(NULL, &procs), 0);
	assert_int_equal(tp_elfs_vdso(&procs->elfs, &e), 0);
	assert_true(e->nr_segs >= 1);
	assert_int_equal(tp_elfs_vdso(&procs->elfs, &again), 0);
	assert_ptr_equal(e, again);
	taproot_procs_free(procs);
}

/* ---------------------------------------------------- corrupt inputs */

static char *copy_prefix(const char *src, size_t len, const char *dst)
{
	FILE *in = fopen(src, "rb"), *out = fopen(dst, "wb");
	char *buf = malloc(len ? len : 1);

	assert_non_null(in);
	assert_non_null(out);
	assert_non_null(buf);
	len = fread(buf, 1, len, in);
	assert_int_equal(fwrite(buf, 1, len, out), len);
	fclose(in);
	assert_int_equal(fclose(out), 0);
	return buf;
}

static long file_size(const char *path)
{
	FILE *f = fopen(path, "rb");
	long n;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fclose(f);
	return n;
}

static void truncated_copies_fail(void **state)
{
	const char *src = "/usr/bin/ls";
	char dst[] = "/tmp/taproot-elf-XXXXXX";
	long size = file_size(src);
	size_t cuts[] = { 0, 4, 16, 63, 64, 200, 1000, 4096, 0, 0, 0 };
	size_t i;
	int fd = mkstemp(dst);

	assert_true(fd >= 0);
	close(fd);
	cuts[8] = (size_t)size / 2;
	cuts[9] = (size_t)size - 1;
	cuts[10] = (size_t)size - 64;
	for (i = 0; i < sizeof(cuts) / sizeof(*cuts); i++) {
		struct taproot_elf *e = NULL;
		int err;

		free(copy_prefix(src, cuts[i], dst));
		err = tp_elf_open(dst, true, &e);
		if (err != -ENOEXEC)
			fail_msg("%zu bytes of %s: %d (%s)", cuts[i], src, err,
				 err ? taproot_errmsg(err) : "accepted");
		assert_null(e);
		assert_true(strlen(taproot_errmsg(err)) > 0);
	}
	unlink(dst);
}

/* Flip bytes of a real binary at random (fixed seed); opening never crashes. */
static void corrupted_copies_do_not_crash(void **state)
{
	const char *src = "/usr/bin/true";
	char dst[] = "/tmp/taproot-elf-XXXXXX";
	long size = file_size(src);
	unsigned int seed = 12345;
	int fd = mkstemp(dst), round, ok = 0, bad = 0;
	char *orig;

	assert_true(fd >= 0);
	close(fd);
	orig = copy_prefix(src, (size_t)size, dst);
	for (round = 0; round < 300; round++) {
		char *buf = malloc((size_t)size);
		struct taproot_elf *e = NULL;
		FILE *f;
		int flips, err;

		assert_non_null(buf);
		memcpy(buf, orig, (size_t)size);
		for (flips = 0; flips < 1 + round % 8; flips++) {
			size_t at;

			/* The headers at the front and the section table at the end. */
			if (rand_r(&seed) % 2)
				at = (size_t)rand_r(&seed) % 1024;
			else
				at = (size_t)size - 1 - (size_t)rand_r(&seed) % 2048;
			buf[at] = (char)rand_r(&seed);
		}
		f = fopen(dst, "wb");
		assert_non_null(f);
		assert_int_equal(fwrite(buf, 1, (size_t)size, f), (size_t)size);
		assert_int_equal(fclose(f), 0);
		free(buf);
		err = tp_elf_open(dst, true, &e);
		if (err) {
			assert_null(e);
			bad++;
			continue;
		}
		ok++;
		{
			uint8_t id[TP_BUILD_ID_MAX];
			uint64_t bias;

			tp_elf_read_build_id(e->elf, id, sizeof(id));
			taproot_elf_bias(e, 0x400000, 0x500000, 0, &bias);
		}
		tp_elf_free(e);
	}
	assert_int_equal(ok + bad, 300);
	free(orig);
	unlink(dst);
}

static void not_elf_files(void **state)
{
	struct taproot_elf *e;

	assert_int_equal(tp_elf_open("/etc/passwd", true, &e), -ENOEXEC);
	assert_int_equal(tp_elf_open("/tmp", true, &e), -ENOEXEC);
	/* A device node is refused before it is opened (O_PATH, fstat). */
	assert_int_equal(tp_elf_open("/dev/null", true, &e), -ENOEXEC);
	assert_int_equal(tp_elf_open("/nonexistent/file", true, &e), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(build_ids_match_readelf),
		cmocka_unit_test(one_entry_per_file_and_lru),
		cmocka_unit_test(bias_of_own_mapping),
		cmocka_unit_test(vdso_image),
		cmocka_unit_test(truncated_copies_fail),
		cmocka_unit_test(corrupted_copies_do_not_crash),
		cmocka_unit_test(not_elf_files),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
