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
 *
 * Then OpenJDK 11, 17 and 21, each in its Debian release's root
 * (scripts/deps), its main kept interpreted (a test flag: the profiler
 * needs none): every compiled method Compiler.codelist lists named, by
 * its pc and by the pc the module's walker writes with its compile id
 * (another id: "[java: code freed]"), and described for the unwinder;
 * epilogues told apart; and the module's walker itself (kmod/uwalk.c,
 * jvwalk.c, built here) on the main thread stopped by ptrace, by the
 * layout taprootd would upload: a hot method's code, main's Method*
 * (named, its ConstMethod read as the cache's cookie), the call stub.
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
#include <sched.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>
#include <dirent.h>

#include <cmocka.h>

#include "taproot.h"
#include "runcmd.h"
#include "runtime/runtime.h"
#include "../../kmod/jvwalk.h"
#include "../../kmod/uwalk.h"

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

/* The module's walker reads the JVM under test (linked for its layout check). */
int tap_uwalk_read(void *dst, __u64 addr, __u32 len)
{
	struct iovec local = { dst, len }, remote = { (void *)(uintptr_t)addr, len };

	return process_vm_readv(jvm_pid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -1;
}

__u32 tap_uwalk_read_part(void *dst, __u64 addr, __u32 len)
{
	return tap_uwalk_read(dst, addr, len) ? 0 : len;
}

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

/* ------------------------------------------- the other releases: 11, 21 */

/* A JDK of a release root (scripts/deps installs them), run under chroot. */
struct jdk {
	const char *root, *home;
	unsigned int major;
};

static const struct jdk jdks[] = {
	{ "build/roots/bullseye", "/usr/lib/jvm/java-11-openjdk-amd64", 11 },
	{ "/", "/usr/lib/jvm/java-17-openjdk-amd64", 17 },
	{ "build/roots/sid", "/usr/lib/jvm/java-21-openjdk-amd64", 21 },
	/* A release whose layout taproot does not know: refused, and said. */
	{ "build/roots/sid", "/usr/lib/jvm/java-25-openjdk-amd64", 25 },
};

/*
 * The returns of the compiled code [@code, @end) of @proc, as the JIT
 * wrote them (add rsp, N; pop rbp; its safepoint poll; ret), told apart
 * by tp_jvm_epilogue(): not yet at the add, 16 bytes at the pop, 8 after
 * it. Returns how many were checked.
 */
static unsigned int epilogues_checked(struct taproot_proc *proc, uint64_t code, uint64_t end)
{
	static uint8_t buf[65536 + TP_JVM_EPILOGUE_BYTES];
	size_t len = end - code < 65536 ? end - code : 65536;
	unsigned int n = 0;

	memset(buf, 0, sizeof(buf));
	if (taproot_proc_read_mem(proc, code, buf, len) < 0)
		return 0;
	for (size_t i = 0; i + 8 < len; i++) {
		/* add rsp, imm8 (48 83 c4 ib) or imm32 (48 81 c4 id), then pop rbp */
		size_t pop = buf[i + 1] == 0x83 ? i + 4 : i + 7;

		if (buf[i] != 0x48 || (buf[i + 1] != 0x83 && buf[i + 1] != 0x81) ||
		    buf[i + 2] != 0xc4 || pop >= len || buf[pop] != 0x5d)
			continue;
		assert_int_equal(tp_jvm_epilogue(buf + i), 0);
		assert_int_equal(tp_jvm_epilogue(buf + pop), 16);
		/* A tail jump (jmp rel32: an exception's path) leaves as well: not told. */
		if (buf[pop + 1] == 0xe9)
			continue;
		assert_int_equal(tp_jvm_epilogue(buf + pop + 1), 8);
		n++;
	}
	return n;
}

/* "jcmd PID Compiler.codelist" of @jdk, in its root (with /proc). */
/*
 * Walk thread @tid of the JVM with the module's walker (kmod/uwalk.c and
 * jvwalk.c, reading through tap_uwalk_read() above) by @l alone, stopped
 * with ptrace: the pcs into @pcs; how many.
 */
static unsigned int module_walk(pid_t tid, const struct taproot_jvm_layout *l, __u64 *pcs,
				unsigned int max)
{
	struct tap_umaps maps = { .jvm = l };
	struct taproot_user_regs start = { 0 };
	struct user_regs_struct regs;
	struct tap_uwalk w = { 0 };
	int st;

	if (ptrace(PTRACE_SEIZE, tid, NULL, NULL))
		return 0;
	if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) || waitpid(tid, &st, __WALL) != tid ||
	    ptrace(PTRACE_GETREGS, tid, NULL, &regs)) {
		ptrace(PTRACE_DETACH, tid, NULL, NULL);
		return 0;
	}
	start.ip = regs.rip;
	start.sp = regs.rsp;
	start.bp = regs.rbp;
	start.r13 = regs.r13;
	w.maps = &maps;
	w.max_frames = max;
	w.stack_hi = start.sp + TAPROOT_USTACK_MAX;
	tap_uwalk(&w, &start, pcs);
	ptrace(PTRACE_DETACH, tid, NULL, NULL);
	return w.nr;
}

static int jvm_read_mem(void *proc, uint64_t addr, void *dst, size_t len)
{
	return taproot_proc_read_mem(proc, addr, dst, len);
}

/* A reader of @proc's memory that counts its reads outside @j's segment maps. */
struct counted_reads {
	struct taproot_proc *proc;
	const struct tp_jvm *j;
	unsigned int reads;
};

static int read_counted(void *ctx, uint64_t addr, void *dst, size_t len)
{
	struct counted_reads *c = ctx;
	bool segmap = false;

	for (unsigned int i = 0; i < c->j->nr_heaps; i++) {
		const struct tp_jvm_heap *h = &c->j->heap[i];

		segmap |= addr >= h->segmap &&
			  addr < h->segmap + ((h->high - h->low) >> h->log2_segment);
	}
	c->reads += !segmap;
	return taproot_proc_read_mem(c->proc, addr, dst, len);
}

/* A reader of @proc's memory that shows the JVM's release as not set yet. */
struct unset_release {
	const struct taproot_proc *proc;
	uint64_t at;			/* Abstract_VM_Version::_vm_major_version */
};

static int read_release_unset(void *ctx, uint64_t addr, void *dst, size_t len)
{
	const struct unset_release *u = ctx;
	int err = taproot_proc_read_mem(u->proc, addr, dst, len);

	for (uint64_t a = addr; !err && a < addr + len; a++)
		if (a >= u->at && a < u->at + 4)
			((uint8_t *)dst)[a - addr] = 0;
	return err;
}

/*
 * The JVM's tables as they are while it starts: its release (set as the
 * VM initializes) still 0 is told apart from a release taproot does not
 * read, -EAGAIN, so that the process is looked at again.
 */
/* The run-time addresses of the JVM's globals in @proc into @addr. */
static void jvm_globals(struct taproot_proc *proc, uint64_t addr[TP_JVM_NR_SYMS])
{
	const struct taproot_map *m = NULL;

	for (size_t i = 0; i < taproot_proc_map_count(proc) && !m; i++) {
		const char *path = taproot_proc_map(proc, i)->path;
		const char *b = strrchr(path, '/');

		if (b && !strcmp(b, "/libjvm.so"))
			assert_int_equal(taproot_proc_find_map(proc, taproot_proc_map(proc, i)->start,
							       &m), 0);
	}
	assert_non_null(m);
	assert_non_null(m->elf);
	assert_int_equal(tp_jvm_elf_syms(taproot_elf_handle(m->elf), addr), 0);
	for (int k = 0; k < TP_JVM_NR_SYMS; k++)
		addr[k] += m->bias;
}

static void release_unset_is_not_yet(struct taproot_proc *proc)
{
	uint64_t addr[TP_JVM_NR_SYMS];
	struct unset_release u = { proc, 0 };
	struct tp_jvm j;

	jvm_globals(proc, addr);
	assert_int_equal(tp_jvm_read(&j, addr, read_release_unset, &u), 0);
	u.at = j.field[TP_JVMF_VM_MAJOR];
	assert_int_equal(tp_jvm_read(&j, addr, read_release_unset, &u), -EAGAIN);
}

/*
 * The module's walker on the live JVM: the threads sampled by ptrace until
 * three walks from a hot method (its code, with its compile id) reach
 * main (its Method*, interpreted: excluded from compiling) and the call
 * stub. The method's cookie is its ConstMethod, read.
 */
static void module_walks(const struct jdk *jdk, pid_t pid, struct taproot_proc *proc,
			 struct taproot_sym *sym)
{
	struct taproot_jvm_layout l;
	unsigned int whole = 0, tries;
	__u64 pcs[8];

	assert_int_equal(taproot_proc_jvm_layout(proc, &l), 0);
	assert_true(tap_jvlayout_ok(&l));
	for (tries = 0; tries < 400 && whole < 3; tries++) {
		char path[64];
		struct dirent *de;
		DIR *d;

		snprintf(path, sizeof(path), "/proc/%d/task", pid);
		assert_non_null(d = opendir(path));
		while ((de = readdir(d)) && whole < 3) {
			const struct taproot_frame *fr;
			/* A name lasts until the next symbolization: copied. */
			char names[3][TP_JVM_NAME_MAX] = { "", "", "" };
			unsigned int nr;
			int n;

			nr = atoi(de->d_name) > 0 ? module_walk(atoi(de->d_name), &l, pcs, 8) : 0;
			if (nr != 3 ||
			    pcs[0] >> 60 != TAPROOT_UPC_JVM_CODE >> 60 ||
			    !taproot_pc_is_jvm_interp(pcs[1]))
				continue;
			for (unsigned int i = 0; i < 3; i++) {
				n = taproot_sym_user(sym, proc, pcs[i], 0, &fr);
				assert_true(n >= 1);
				snprintf(names[i], sizeof(names[i]), "%s", fr[n - 1].function);
				if (!strcmp(names[i], "HotPair.main"))
					assert_int_not_equal(taproot_proc_jvm_method_cookie(proc, pcs[i]),
							     0);
				if (strncmp(names[i], "HotPair.", 8) &&
				    strncmp(names[i], "StubRoutines (", 14))
					break;
			}
			if ((!strcmp(names[0], "HotPair.hotAlpha") ||
				       !strcmp(names[0], "HotPair.hotBeta")) &&
			    !strcmp(names[1], "HotPair.main") &&
			    !strncmp(names[2], "StubRoutines (", 14))
				whole++;
			else
				fprintf(stderr, "# %u: the module's walk: %s <- %s <- %s\n", jdk->major,
					names[0], names[1], names[2]);
		}
		closedir(d);
	}
	fprintf(stderr, "# OpenJDK %u: %u walks of the module's walker whole, of %u rounds\n",
		jdk->major, whole, tries);
	assert_int_equal(whole, 3);
}

static char *codelist(const struct jdk *jdk, const char *root, pid_t pid)
{
	int status;

	return run(&status, "unshare -m -- sh -c 'mount -t proc proc %s/proc && "
		   "exec chroot %s %s/bin/jcmd %d Compiler.codelist' 2>&1", root, root, jdk->home,
		   (int)pid);
}

#define JDK_ROOT_LEN	4096
#define JDK_DIR_LEN	4200

/* A JDK's JVM running HotPair, and taproot's view of it. */
struct jvm_run {
	char root[JDK_ROOT_LEN], dir[JDK_DIR_LEN];
	char *codelist;			/* its Compiler.codelist once both are compiled */
	pid_t pid;
	struct taproot_procs *procs;
	struct taproot_sym *sym;
	struct taproot_proc *proc;
};

/* An entry of a Compiler.codelist: "ID LEVEL STATE Class.method(SIG) [BLOB, CODE - END]". */
struct code_entry {
	unsigned int id, level, state;
	unsigned long long blob, code, end;
	char method[512];		/* without its signature */
};

/* Whether @line is an entry of compiled code in use, into @e. */
static bool code_entry_read(const char *line, struct code_entry *e)
{
	if (sscanf(line, "%u %u %u %511s [%llx, %llx - %llx]", &e->id, &e->level, &e->state,
		   e->method, &e->blob, &e->code, &e->end) != 7 || e->state != 0 || e->end <= e->code)
		return false;
	e->method[strcspn(e->method, "(")] = '\0';
	return true;
}

/*
 * HotPair run by @jdk in its root (@root, its real path) from class files
 * in @dir (made under it), until C2 compiled both hot methods: the JVM's
 * pid, its Compiler.codelist then into *@out.
 */
static pid_t jdk_start(const struct jdk *jdk, char *root, char *dir, char **out)
{
	char path[4300], *javac;
	int status;
	pid_t pid;

	*out = NULL;
	if (!realpath(jdk->root, root))
		fail_msg("%s: no such root (scripts/deps makes it)", jdk->root);
	snprintf(path, sizeof(path), "%s%s/bin/java", root, jdk->home);
	if (access(path, X_OK))
		fail_msg("%s: not there (scripts/deps installs it)", path);
	snprintf(dir, JDK_DIR_LEN, "%s/tmp/test-hotspot-XXXXXX", root);
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/HotPair.java", dir);
	{
		FILE *f = fopen(path, "w");

		assert_non_null(f);
		fputs(java_src, f);
		fclose(f);
	}
	javac = run(&status, "javac --release 11 -d %s %s 2>&1", dir, path);
	assert_int_equal(status, 0);
	free(javac);

	jvm_pid = pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		const char *cp = dir + strlen(root);

		snprintf(path, sizeof(path), "%s/proc", root);
		if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
		    mount("proc", path, "proc", 0, NULL) || chroot(root) || chdir("/"))
			_exit(126);
		snprintf(path, sizeof(path), "%s/bin/java", jdk->home);
		/* main stays interpreted: the module's walk has a method to name. */
		execl(path, "java", "-Xss512k", "-XX:CompileCommand=quiet",
		      "-XX:CompileCommand=exclude,HotPair::main", "-cp", cp, "HotPair", "60",
		      (char *)NULL);
		_exit(127);
	}
	for (int tries = 0;; tries++) {
		assert_true(tries < 120);
		usleep(250000);
		free(*out);
		*out = codelist(jdk, root, pid);
		/* C2's (level 4) of both, in use (state 0). */
		if (strstr(*out, " 4 0 HotPair.hotAlpha(") && strstr(*out, " 4 0 HotPair.hotBeta("))
			return pid;
	}
}

/* @jdk's JVM started into @r, and the process table that reads it. */
static void jvm_run_start(const struct jdk *jdk, struct jvm_run *r)
{
	struct taproot_procs_opts o;

	r->pid = jdk_start(jdk, r->root, r->dir, &r->codelist);
	taproot_procs_opts_default(&o);
	assert_int_equal(taproot_procs_new(&o, &r->procs), 0);
	assert_int_equal(taproot_sym_new(r->procs, NULL, &r->sym), 0);
	assert_int_equal(taproot_proc_get(r->procs, r->pid, 0, &r->proc), 0);
}

static void jvm_run_end(struct jvm_run *r)
{
	int status;
	char *out;

	free(r->codelist);
	kill_jvm(NULL);
	taproot_sym_free(r->sym);
	taproot_procs_free(r->procs);
	out = run(&status, "rm -rf %s", r->dir);
	free(out);
}

/*
 * One release's JVM in its root, HotPair run until C2 compiled both hot
 * methods; then each method in use of the JVM's own list of its compiled
 * code is named and described at the middle of its code.
 */
static void jdk_named(const struct jdk *jdk)
{
	unsigned int entries = 0, named = 0, described = 0, lines = 0, epilogues = 0, by_id = 0;
	unsigned int blob_reads = 0;
	uint64_t globals[TP_JVM_NR_SYMS];
	struct counted_reads counted;
	struct taproot_proc *proc;
	struct tp_jvm j;
	struct taproot_sym *sym;
	struct code_entry e;
	struct jvm_run r;
	char *line, *save;

	jvm_run_start(jdk, &r);
	proc = r.proc;
	sym = r.sym;
	/*
	 * Its tables read, then its maps read again (as when they change):
	 * what follows names the code from the tables kept, as libjvm.so
	 * stayed where it was.
	 */
	assert_false(taproot_proc_jvm_owns(proc, 0x1000, 0x2000));
	assert_int_equal(taproot_proc_reread(proc), 0);
	jvm_globals(proc, globals);
	assert_int_equal(tp_jvm_read(&j, globals, jvm_read_mem, proc), 0);
	counted = (struct counted_reads){ proc, &j, 0 };
	for (line = strtok_r(r.codelist, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const struct taproot_frame *fr;
		unsigned long long code, end;
		struct tp_jvm_blob blob;
		const char *method;
		unsigned int id;
		int n;

		if (!code_entry_read(line, &e))
			continue;
		code = e.code;
		end = e.end;
		id = e.id;
		method = e.method;
		entries++;
		n = taproot_sym_user(sym, proc, code + (end - code) / 2, 0, &fr);
		assert_true(n >= 1);
		for (int i = 0; i < n - 1; i++)
			assert_true(fr[i].inlined && fr[i].known && strchr(fr[i].function, '.'));
		if (fr[n - 1].known && !strcmp(fr[n - 1].function, method) &&
		    !strcmp(fr[n - 1].map_path, "[java]"))
			named++;
		else
			fprintf(stderr, "# %u: %s at %#llx: taproot says %s (%s)\n", jdk->major, method,
				code + (end - code) / 2, fr[n - 1].function, fr[n - 1].map_path);
		if (!strncmp(method, "HotPair.hot", 11) && fr[n - 1].line) {
			assert_string_equal(fr[n - 1].file, "HotPair.java");
			assert_int_equal(fr[n - 1].line, method[11] == 'A' ? 3 : 4);
			lines++;
		}
		epilogues += epilogues_checked(proc, code, end);
		if (taproot_proc_jvm_blob(proc, code + (end - code) / 2, &blob) == 0 &&
		    (blob.kind == TP_JVM_BLOB_NMETHOD || blob.kind == TP_JVM_BLOB_NATIVE) &&
		    blob.code_begin == code && blob.frame_size >= 16 && blob.frame_size % 8 == 0 &&
		    blob.compile_id == (int32_t)id)
			described++;
		/* Its header in one read, its name in another: no read a field. */
		counted.reads = 0;
		if (tp_jvm_blob(&j, code + (end - code) / 2, read_counted, &counted, &blob) == 0 &&
		    blob.kind == TP_JVM_BLOB_NMETHOD && counted.reads > blob_reads)
			blob_reads = counted.reads;
		/* As the module's walker gives it: named while its compile id is the blob's. */
		n = taproot_sym_user(sym, proc, taproot_jvm_code_pc(code, (int32_t)id), 0, &fr);
		assert_true(n >= 1);
		if (strcmp(fr[n - 1].function, method))
			fprintf(stderr, "# %u: %s (%u) by its compile id: taproot says %s\n",
				jdk->major, method, id, fr[n - 1].function);
		else
			by_id++;
		n = taproot_sym_user(sym, proc, taproot_jvm_code_pc(code, (int32_t)id + 1), 0, &fr);
		assert_int_equal(n, 1);
		assert_string_equal(fr[0].function, "[java: code freed]");
	}
	module_walks(jdk, r.pid, proc, sym);
	release_unset_is_not_yet(proc);
	fprintf(stderr, "# OpenJDK %u: %u compiled methods in use: %u named alike, %u described, "
		"%u hot ones with their line; %u epilogues told apart\n", jdk->major, entries, named,
		described, lines, epilogues);
	/* The JIT may free a method between the list and the lookups: a few. */
	assert_true(entries >= 2);
	assert_true(lines >= 1);
	assert_true(named * 100 >= entries * 98);
	assert_true(described * 100 >= entries * 98);
	assert_true(by_id * 100 >= entries * 98);
	assert_true(epilogues >= 2);
	assert_int_equal(blob_reads, 2);
	jvm_run_end(&r);
}

/*
 * A release taproot does not read (25): refused for its release, and its
 * compiled code named as such, not left an address; the walk ends there.
 */
static void jdk_refused(const struct jdk *jdk)
{
	char want[64], buf[64], *line, *save;
	struct tp_jvm_frame jf[4];
	struct tp_jvm_blob blob;
	unsigned int named = 0;
	struct code_entry e;
	struct jvm_run r;

	jvm_run_start(jdk, &r);
	snprintf(want, sizeof(want), "[java: JDK %u not supported]", jdk->major);
	assert_non_null(taproot_proc_jvm_refused(r.proc, buf, sizeof(buf)));
	assert_string_equal(buf, want);
	for (line = strtok_r(r.codelist, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const struct taproot_frame *fr;

		if (!code_entry_read(line, &e) || strncmp(e.method, "HotPair.hot", 11))
			continue;
		assert_int_equal(taproot_sym_user(r.sym, r.proc, e.code + (e.end - e.code) / 2, 0,
						  &fr), 1);
		assert_string_equal(fr[0].function, want);
		assert_false(fr[0].known);
		assert_int_equal(taproot_proc_jvm_frames(r.proc, e.code, jf, 4), -ENOENT);
		assert_int_equal(taproot_proc_jvm_blob(r.proc, e.code, &blob), -ENOENT);
		named++;
	}
	fprintf(stderr, "# OpenJDK %u: refused; %u hot methods' code named %s\n", jdk->major,
		named, want);
	assert_true(named >= 2);
	jvm_run_end(&r);
}

static void jdk11_named(void **state)
{
	(void)state;
	jdk_named(&jdks[0]);
}

static void jdk17_named(void **state)
{
	(void)state;
	jdk_named(&jdks[1]);
}

static void jdk21_named(void **state)
{
	(void)state;
	jdk_named(&jdks[2]);
}

static void jdk25_refused(void **state)
{
	(void)state;
	jdk_refused(&jdks[3]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(jvm_code_named, kill_jvm),
		cmocka_unit_test_teardown(jdk11_named, kill_jvm),
		cmocka_unit_test_teardown(jdk17_named, kill_jvm),
		cmocka_unit_test_teardown(jdk21_named, kill_jvm),
		cmocka_unit_test_teardown(jdk25_refused, kill_jvm),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
