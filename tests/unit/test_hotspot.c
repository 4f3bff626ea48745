// SPDX-License-Identifier: GPL-2.0
/*
 * A real HotSpot JVM (Debian's OpenJDK, no flag) named from its own
 * tables (lib/runtime/hotspot.c through lib/process/jvmproc.c and the
 * symbolizer): a program of two hot methods runs until the JIT compiled
 * them; then the JVM's own account of its code cache (jcmd PID
 * Compiler.perfmap writes /tmp/perf-PID.map) is set against taproot's
 * name of a pc in the middle of each of its entries: every compiled
 * method named as the JVM names it (without return type and signature),
 * every other blob by its own name ("Interpreter", stubs); the hot
 * methods with their source file and line. A pc out of the code cache is
 * not the JVM's.
 */
#include <errno.h>
#include <stdbool.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "taproot.h"
#include "runcmd.h"

static const char java_src[] =
	"public class HotPair {\n"
	"    static long sink;\n"
	"    static long hotAlpha(long n) { long x = 0; for (long i = 0; i < n; i++) x += i * 31 ^ (x >>> 3); return x; }\n"
	"    static long hotBeta(long n) { long x = 1; for (long i = 0; i < n; i++) x += i * 17 ^ (x >>> 5); return x; }\n"
	"    public static void main(String[] a) throws Exception {\n"
	"        long end = System.nanoTime() + Long.parseLong(a[0]) * 1000000000L;\n"
	"        while (System.nanoTime() < end) { sink += hotAlpha(300000); sink += hotBeta(100000); }\n"
	"        System.out.println(sink);\n"
	"    }\n"
	"}\n";

/* The name the JVM's perf map gives, as taproot names it: "Class.method". */
static bool is_method(const char *entry)
{
	const char *paren = strchr(entry, '(');

	/* "long HotPair.hotAlpha(long)", not "StubRoutines (1)". */
	return paren && paren > entry && paren[-1] != ' ';
}

static void expected_name(const char *entry, char *out, size_t len)
{
	const char *paren = strchr(entry, '('), *start;

	if (!is_method(entry)) {
		snprintf(out, len, "%s", entry);
		return;
	}
	/* "long HotPair.hotAlpha(long)": the word before the parenthesis. */
	for (start = paren; start > entry && start[-1] != ' '; start--)
		;
	snprintf(out, len, "%.*s", (int)(paren - start), start);
}

/* The JVM of the test, killed when it ends, failed or not. */
static pid_t jvm_pid;

static int kill_jvm(void **state)
{
	int status;

	(void)state;
	if (jvm_pid > 0) {
		kill(jvm_pid, SIGKILL);
		waitpid(jvm_pid, &status, 0);
	}
	jvm_pid = 0;
	return 0;
}

static void jvm_code_named(void **state)
{
	char dir[] = "/tmp/test-hotspot-XXXXXX", path[96], map[64], line[1024], *out;
	struct taproot_procs_opts o;
	struct taproot_procs *procs;
	struct taproot_sym *sym;
	struct taproot_proc *proc;
	unsigned int entries = 0, named = 0, methods = 0, hot = 0, chains = 0, lines = 0, blobs = 0;
	struct tp_jvm_blob blob;
	FILE *f;
	pid_t pid;
	int status;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/HotPair.java", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(java_src, f);
	fclose(f);
	out = run(&status, "javac -d %s %s 2>&1", dir, path);
	assert_int_equal(status, 0);
	free(out);

	jvm_pid = pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		execlp("java", "java", "-Xss512k", "-cp", dir, "HotPair", "60", (char *)NULL);
		_exit(127);
	}
	/* Until the JIT compiled both: the JVM's own map names them. */
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", pid);
	for (int tries = 0;; tries++) {
		assert_true(tries < 120);
		usleep(250000);
		out = run(&status, "jcmd %d Compiler.perfmap 2>&1", pid);
		free(out);
		if (status)
			continue;
		out = run(&status, "grep -c 'HotPair.hot' %s 2>/dev/null || true", map);
		hot = (unsigned int)atoi(out);
		free(out);
		if (hot >= 2)
			break;
	}

	taproot_procs_opts_default(&o);
	assert_int_equal(taproot_procs_new(&o, &procs), 0);
	assert_int_equal(taproot_sym_new(procs, NULL, &sym), 0);
	assert_int_equal(taproot_proc_get(procs, pid, 0, &proc), 0);
	/* Read before the map is moved away: the JVM's tables alone name. */
	snprintf(path, sizeof(path), "%s/perf.map", dir);
	assert_int_equal(rename(map, path), 0);
	f = fopen(path, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, size;
		const struct taproot_frame *fr;
		char want[512];
		int pos = 0, n;

		if (sscanf(line, "%llx %llx %n", &start, &size, &pos) < 2 || !pos)
			continue;
		line[strcspn(line, "\n")] = '\0';
		expected_name(line + pos, want, sizeof(want));
		entries++;
		methods += is_method(line + pos);
		n = taproot_sym_user(sym, proc, start + size / 2, 0, &fr);
		assert_true(n >= 1);
		/* What the unwinder gets of the blob: its kind and frame. */
		if (taproot_proc_jvm_blob(proc, start + size / 2, &blob) == 0) {
			bool compiled = blob.kind == TP_JVM_BLOB_NMETHOD ||
					blob.kind == TP_JVM_BLOB_NATIVE;

			assert_int_equal(compiled, is_method(line + pos));
			assert_int_equal(blob.kind == TP_JVM_BLOB_INTERPRETER,
					 !strcmp(want, "Interpreter"));
			assert_true(blob.code_begin <= start + size / 2);
			assert_int_equal(blob.frame_size % 8, 0);
			/* A compiled frame holds at least its return address and rbp. */
			if (compiled) {
				assert_true(blob.frame_size >= 16);
				assert_true(blob.code_begin + blob.frame_complete < start + size);
			}
			assert_true(taproot_proc_jvm_owns(proc, start, start + size));
			blobs++;
		}
		/* Inlined methods first, inlined; the blob's own method last. */
		for (int i = 0; i < n - 1; i++)
			assert_true(fr[i].inlined && fr[i].known && strchr(fr[i].function, '.'));
		chains += n > 1;
		/* The hot methods are one line each of java_src: 3 and 4. */
		if (!strncmp(want, "HotPair.hot", 11) && fr[n - 1].line) {
			assert_string_equal(fr[n - 1].file, "HotPair.java");
			assert_int_equal(fr[n - 1].line, want[11] == 'A' ? 3 : 4);
			lines++;
		}
		if (fr[n - 1].known && !fr[n - 1].inlined && !strcmp(fr[n - 1].function, want) &&
		    !strcmp(fr[n - 1].map_path, "[java]"))
			named++;
		else
			fprintf(stderr, "# %s at %#llx: taproot says %s (%s)\n", line + pos,
				start + size / 2, fr[n - 1].function, fr[n - 1].map_path);
	}
	fclose(f);
	fprintf(stderr, "# %u entries of the JVM's map (%u methods): %u named alike, %u with "
		"inlined methods at the pc looked up, %u hot ones with their line, %u blobs "
		"described\n", entries, methods, named, chains, lines, blobs);
	/* The JIT may free a method between the map and the lookups: a few. */
	assert_true(methods >= 2);
	assert_true(lines >= 1);
	assert_true(named * 100 >= entries * 98);
	assert_true(blobs * 100 >= entries * 98);

	/* Code of no JVM heap: not the JVM's. */
	{
		struct tp_jvm_frame fr2[2];

		assert_int_equal(taproot_proc_jvm_frames(proc, 0x1000, fr2, 2), -ENOENT);
		assert_int_equal(taproot_proc_jvm_blob(proc, 0x1000, &blob), -ENOENT);
		assert_false(taproot_proc_jvm_owns(proc, 0x1000, 0x2000));
	}
	kill_jvm(NULL);
	taproot_sym_free(sym);
	taproot_procs_free(procs);
	unlink(path);
	snprintf(path, sizeof(path), "%s/HotPair.java", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/HotPair.class", dir);
	unlink(path);
	assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(jvm_code_named, kill_jvm),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
