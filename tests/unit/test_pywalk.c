// SPDX-License-Identifier: GPL-2.0
/*
 * The module's CPython frame walker (kmod/pywalk.c, built here in
 * userspace) on live interpreters of the three versions it walks, Debian's
 * own: bookworm's python3.11 on this host, bullseye's python3.9 and sid's
 * python3.13 in their release roots (scripts/deps installs them; run
 * under chroot, as root), and bookworm's libpython3.11.so in a program
 * that embeds it (build/fixtures/pyembed). Each runs a script whose main thread sleeps in
 * leaf() <- K.meth() <- a lambda sorted() calls <- outer() <- the module,
 * and another thread sleeps in worker(). The walker reads the stopped
 * process's memory (process_vm_readv, as the module reads the sampled
 * task's) with the layout lib/process/pyproc.c makes of the interpreter's
 * ELF and the C library's pthread_getspecific(), and each thread's fs
 * base (ptrace); lib/runtime/python.c then names each frame from its code
 * object. What must come out:
 *   - each thread its own frames: main's five, innermost first, each with
 *     its function's (qualified, 3.11 on) name, "<string>", the line it
 *     is at and the activation marks the version gives (3.9: each frame
 *     its own; 3.11 on: the lambda, called from C, and the module); the
 *     worker's innermost frame worker() at its line;
 *   - leaf()'s code object's cookie and fields: 2 arguments, 1
 *     keyword-only, first line 2;
 *   - a cookie that does not match, or a code address that is no code
 *     object, is refused (-ESTALE);
 *   - a layout whose type of code objects is wrong, or whose back pointer
 *     is not one, ends the walk at the first frame it cannot trust and says
 *     it was cut short; one with offsets out of the walker's reads is
 *     refused.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "pipeline/pyframes.h"
#include "process/process.h"
#include "runtime/runtime.h"
#include "../../kmod/pywalk.h"
#include "../../kmod/uwalk.h"

static const char script[] =
	"import sys, threading, time\n"			/* 1 */
	"def leaf(a, b, *, c):\n"			/* 2 */
	"    sys.stdout.write('ready\\n')\n"		/* 3 */
	"    sys.stdout.flush()\n"			/* 4 */
	"    time.sleep(600)\n"				/* 5 */
	"class K:\n"					/* 6 */
	"    def meth(self):\n"				/* 7 */
	"        return leaf(1, 2, c=3)\n"		/* 8 */
	"def outer():\n"				/* 9 */
	"    return sorted([K()], key=lambda k: k.meth())\n"	/* 10 */
	"def worker(ev):\n"				/* 11 */
	"    ev.set()\n"				/* 12 */
	"    time.sleep(600)\n"				/* 13 */
	"ev = threading.Event()\n"			/* 14 */
	"threading.Thread(target=worker, args=(ev,), daemon=True).start()\n"	/* 15 */
	"ev.wait()\n"					/* 16 */
	"outer()\n";					/* 17 */

struct interp {
	const char *root;		/* chroot into it; NULL: this host */
	const char *python;
	unsigned int minor;
	bool embedded;			/* runs its argument, not "-c" and it */
};

static const struct interp interps[] = {
	{ "build/roots/bullseye", "/usr/bin/python3.9", 9, false },
	{ NULL, "/usr/bin/python3.11", 11, false },
	{ "build/roots/sid", "/usr/bin/python3.13", 13, false },
	{ NULL, "build/fixtures/pyembed", 11, true },
};

/* The process the walker reads, as the module reads the sampled task's. */
static pid_t target;

int tap_uwalk_read(void *dst, __u64 addr, __u32 len)
{
	struct iovec l = { .iov_base = dst, .iov_len = len };
	struct iovec r = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };

	return process_vm_readv(target, &l, 1, &r, 1, 0) == (ssize_t)len ? 0 : -1;
}

static int read_target(void *ctx, uint64_t addr, void *dst, size_t len)
{
	return taproot_proc_read_mem(ctx, addr, dst, len);
}

/* Start @in on the script; returns its pid once its main thread is in leaf(). */
static pid_t start(const struct interp *in)
{
	char root[4096] = "", exe[4200], buf[64];
	struct pollfd pfd;
	size_t got = 0;
	int fds[2];
	pid_t pid;

	if (in->root && !realpath(in->root, root))
		fail_msg("%s: no such root (scripts/deps makes it)", in->root);
	snprintf(exe, sizeof(exe), "%s%s", root, in->python);
	if (access(exe, X_OK))
		fail_msg("%s: not there (scripts/deps installs it)", exe);
	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		dup2(fds[1], 1);
		close(fds[0]);
		if (in->root && (chroot(root) || chdir("/")))
			_exit(126);
		if (in->embedded)
			execl(in->python, in->python, script, (char *)NULL);
		else
			execl(in->python, in->python, "-c", script, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	pfd = (struct pollfd){ .fd = fds[0], .events = POLLIN };
	while (got < 6) {
		ssize_t n;

		/* A slow interpreter start: 60 s at most, a poll wakes at once. */
		if (poll(&pfd, 1, 60000) != 1 || (n = read(fds[0], buf + got, sizeof(buf) - got)) <= 0)
			break;
		got += (size_t)n;
	}
	close(fds[0]);
	if (got < 6 || memcmp(buf, "ready\n", 6)) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		fail_msg("%s did not start the script", in->python);
	}
	/* Ready is written before the sleep: wait until the thread sleeps in it. */
	for (int i = 0; i < 600; i++) {
		char path[64], stat[512], *p;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/stat", pid);
		f = fopen(path, "r");
		assert_non_null(f);
		p = fgets(stat, sizeof(stat), f);
		fclose(f);
		p = p ? strrchr(stat, ')') : NULL;
		if (p && p[2] == 'S')
			break;
		usleep(10000);
	}
	return pid;
}

static void stop(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* The fs base of thread @tid, stopped and let go again. */
static uint64_t fs_base(pid_t tid)
{
	struct user_regs_struct regs;
	int st;

	assert_int_equal(ptrace(PTRACE_SEIZE, tid, NULL, NULL), 0);
	assert_int_equal(ptrace(PTRACE_INTERRUPT, tid, NULL, NULL), 0);
	assert_int_equal(waitpid(tid, &st, __WALL), tid);
	assert_int_equal(ptrace(PTRACE_GETREGS, tid, NULL, &regs), 0);
	assert_int_equal(ptrace(PTRACE_DETACH, tid, NULL, NULL), 0);
	return regs.fs_base;
}

/* The thread ids of @pid, main first; returns how many. */
static int threads(pid_t pid, pid_t *tids, int max)
{
	char path[64];
	struct dirent *de;
	int n = 1;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	assert_non_null(d);
	tids[0] = pid;
	while ((de = readdir(d)) && n < max) {
		pid_t t = atoi(de->d_name);

		if (t > 0 && t != pid)
			tids[n++] = t;
	}
	closedir(d);
	return n;
}

struct frame {
	const char *name;
	uint32_t line;
	bool entry;
};

struct walked {
	struct taproot_pyframe raw[TAPROOT_PY_FRAMES_MAX];
	char *names[TAPROOT_PY_FRAMES_MAX], *files[TAPROOT_PY_FRAMES_MAX];
	uint32_t lines[TAPROOT_PY_FRAMES_MAX];
	uint32_t nr;
	bool cut;
};

static void walk(struct taproot_proc *proc, const struct taproot_pyproc *py, uint64_t fsbase,
		 struct walked *w)
{
	struct tap_pywalk_res res;

	memset(w, 0, sizeof(*w));
	w->nr = tap_pywalk(&py->layout, fsbase, w->raw, TAPROOT_PY_FRAMES_MAX, &res);
	w->cut = res.cut;
	assert_true(res.reads <= 5 + 2 * w->nr + 2 * TAPROOT_PY_FRAMES_MAX);
	for (uint32_t i = 0; i < w->nr; i++) {
		struct tp_pycode c;

		assert_int_equal(tp_pycode_read(&py->elf, py->bias, read_target, proc, w->raw[i].code,
						w->raw[i].cookie, &c), 0);
		w->lines[i] = tp_pycode_line(&py->elf, &c, w->raw[i].pos & TAPROOT_PYFRAME_POS_MASK);
		w->names[i] = strdup(c.name);
		w->files[i] = strdup(c.file);
		tp_pycode_free(&c);
	}
}

static void walked_free(struct walked *w)
{
	for (uint32_t i = 0; i < w->nr; i++) {
		free(w->names[i]);
		free(w->files[i]);
	}
}

static void print(const char *what, const struct walked *w)
{
	fprintf(stderr, "# %s:", what);
	for (uint32_t i = 0; i < w->nr; i++)
		fprintf(stderr, " %s@%u%s", w->names[i], w->lines[i],
			w->raw[i].pos & TAPROOT_PYFRAME_ENTRY ? "*" : "");
	fprintf(stderr, "\n");
}

static void check_interp(const struct interp *in)
{
	const struct frame want311[] = {
		{ "leaf", 5, false }, { "K.meth", 8, false },
		{ "outer.<locals>.<lambda>", 10, true }, { "outer", 10, false },
		{ "<module>", 17, true },
	};
	const struct frame want39[] = {
		{ "leaf", 5, true }, { "meth", 8, true }, { "<lambda>", 10, true },
		{ "outer", 10, true }, { "<module>", 17, true },
	};
	const struct frame *want = in->minor == 9 ? want39 : want311;
	struct taproot_procs *procs;
	struct taproot_proc *proc;
	const struct taproot_pyproc *pyc;
	struct taproot_pyproc py;
	struct walked w;
	struct tp_pycode c;
	pid_t tids[8];
	int nt;

	target = start(in);
	assert_int_equal(taproot_procs_new(NULL, &procs), 0);
	assert_int_equal(taproot_proc_get(procs, target, 0, &proc), 0);
	assert_null(taproot_proc_gone(proc));
	assert_int_equal(taproot_proc_python(proc, &pyc), 0);
	py = *pyc;
	assert_int_equal(py.elf.minor, in->minor);
	/* The embedder's interpreter is the shared library's, mapped where it was loaded. */
	assert_int_equal(py.bias != 0, in->embedded);
	for (unsigned int i = 0; i < py.elf.eval_parts; i++)
		fprintf(stderr, "# %s: evaluation loop part %u: [%#" PRIx64 ", %#" PRIx64 ")\n",
			in->python, i, py.elf.eval[i][0], py.elf.eval[i][1]);
	/* Debian's 3.13 has most of its loop in a .cold part the symbol leaves out. */
	if (in->minor == 13)
		assert_true(py.elf.eval_parts >= 2);
	/* 3.13's offsets come from its _Py_DebugOffsets: those of its headers. */
	assert_int_equal(py.elf.debug_offsets, in->minor == 13);
	if (in->minor == 13) {
		assert_int_equal(py.elf.v.tstate_frame, 72);
		assert_int_equal(py.elf.v.frame_code, 0);
		assert_int_equal(py.elf.v.frame_back, 8);
		assert_int_equal(py.elf.v.frame_pos, 56);
		assert_int_equal(py.elf.v.entry_off, 70);
		assert_int_equal(py.elf.v.code_filename, 112);
		assert_int_equal(py.elf.v.code_qualname, 128);
		assert_int_equal(py.elf.v.code_lines, 136);
		assert_int_equal(py.elf.v.code_firstlineno, 68);
		assert_int_equal(py.elf.v.code_argcount, 52);
		assert_int_equal(py.elf.v.str_ascii, 40);
		assert_int_equal(py.elf.code_insns, 200);
	}
	nt = threads(target, tids, 8);
	assert_int_equal(nt, 2);

	walk(proc, &py, fs_base(tids[0]), &w);
	print(in->python, &w);
	assert_int_equal(w.nr, 5);
	assert_false(w.cut);
	for (int i = 0; i < 5; i++) {
		assert_string_equal(w.names[i], want[i].name);
		assert_string_equal(w.files[i], "<string>");
		assert_int_equal(w.lines[i], want[i].line);
		assert_int_equal(!!(w.raw[i].pos & TAPROOT_PYFRAME_ENTRY), want[i].entry);
	}
	/* leaf(a, b, *, c) at line 2. */
	assert_int_equal(tp_pycode_read(&py.elf, py.bias, read_target, proc, w.raw[0].code,
					w.raw[0].cookie, &c), 0);
	assert_int_equal(c.argcount, 2);
	assert_int_equal(c.kwonly, 1);
	assert_int_equal(c.firstlineno, 2);
	assert_int_equal(tp_pycode_cookie(c.argcount, c.kwonly, c.flags, c.firstlineno),
			 w.raw[0].cookie);
	tp_pycode_free(&c);
	assert_int_equal(tp_pycode_read(&py.elf, py.bias, read_target, proc, w.raw[0].code,
					w.raw[0].cookie + 1, &c), -ESTALE);
	/* A str object (the file name's) is no code object. */
	assert_int_equal(tp_pycode_read(&py.elf, py.bias, read_target, proc, w.raw[1].code + 64,
					w.raw[0].cookie, &c), -ESTALE);
	walked_free(&w);

	walk(proc, &py, fs_base(tids[1]), &w);
	print("worker", &w);
	assert_true(w.nr >= 2);
	assert_string_equal(w.names[0], "worker");
	assert_int_equal(w.lines[0], 13);
	assert_true(w.raw[w.nr - 1].pos & TAPROOT_PYFRAME_ENTRY);
	walked_free(&w);

	/* A wrong type of code objects: the first frame ends the walk, cut short. */
	py.layout.code_type += 8;
	walk(proc, &py, fs_base(tids[0]), &w);
	assert_int_equal(w.nr, 0);
	assert_true(w.cut);
	py.layout.code_type -= 8;
	/* A chain that leads into a code object, not a frame: one frame, cut short. */
	py.layout.frame_back = py.layout.frame_code;
	walk(proc, &py, fs_base(tids[0]), &w);
	assert_int_equal(w.nr, 1);
	assert_true(w.cut);
	walked_free(&w);
	py.layout = pyc->layout;
	/* Offsets past the walker's reads are refused, walked or uploaded. */
	py.layout.frame_back = TAPROOT_PY_READ_MAX - 4;
	assert_false(tap_pylayout_ok(&py.layout));
	walk(proc, &py, fs_base(tids[0]), &w);
	assert_int_equal(w.nr, 0);

	taproot_procs_free(procs);
	stop(target);
}

static void python39(void **state)
{
	(void)state;
	check_interp(&interps[0]);
}

static void python311(void **state)
{
	(void)state;
	check_interp(&interps[1]);
}

static void python313(void **state)
{
	(void)state;
	check_interp(&interps[2]);
}

/*
 * Line tables the library reads from a process: one whose line delta is
 * past 64 bits (fuzz_pywalk found it overflowing), one cut inside a
 * varint, one not at an entry's start: line 0, never undefined behaviour
 * (the sanitizer build checks); a good one gives its lines.
 */
static void malformed_line_tables(void **state)
{
	/* code 13 (no columns): a signed varint line delta of 11 six-bit groups */
	uint8_t huge[] = { 0x80 | 13 << 3, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f,
			   0x7f, 0x7f, 0x3f };
	uint8_t cut[] = { 0x80 | 14 << 3 | 1, 0x7f };
	uint8_t stray[] = { 0x12 };
	/* 2 units at line+1 (code 11, two column bytes), 1 unit at line+3 (code 13, +2) */
	uint8_t good[] = { 0x80 | 11 << 3 | 1, 0, 0, 0x80 | 13 << 3, 4 };
	struct tp_pyelf py = { .code_insns = 200 };
	struct tp_pycode c = { .firstlineno = 10 };

	(void)state;
	py.v.lines = TP_PY_LOCATIONS;
	c.lines = huge, c.lines_len = sizeof(huge);
	assert_int_equal(tp_pycode_line(&py, &c, 200), 0);
	c.lines = cut, c.lines_len = sizeof(cut);
	assert_int_equal(tp_pycode_line(&py, &c, 200), 0);
	c.lines = stray, c.lines_len = sizeof(stray);
	assert_int_equal(tp_pycode_line(&py, &c, 200), 0);
	c.lines = good, c.lines_len = sizeof(good);
	assert_int_equal(tp_pycode_line(&py, &c, 200), 11);
	assert_int_equal(tp_pycode_line(&py, &c, 202), 11);
	assert_int_equal(tp_pycode_line(&py, &c, 204), 13);
	assert_int_equal(tp_pycode_line(&py, &c, 206), 0);	/* past the table */
	assert_int_equal(tp_pycode_line(&py, &c, 100), 10);	/* not started */
	assert_int_equal(tp_pycode_line(&py, &c, TAPROOT_PYFRAME_POS_NONE), 10);
}

/* The module a Python frame's function is prefixed with, from its file. */
static void module_names(void **state)
{
	static const char *const cases[][2] = {
		{ "/usr/lib/python3.11/tokenize.py", "tokenize" },
		{ "/usr/lib/python3.11/email/__init__.py", "email" },
		{ "__init__.py", "__init__" },
		{ "/srv/app/main.py", "main" },
		{ "<frozen posixpath>", "posixpath" },
		{ "<frozen importlib._bootstrap>", "importlib._bootstrap" },
		{ "<string>", "" },
		{ "<frozen broken", "" },
		{ "script", "script" },
		{ "/a/b.pyc", "b.pyc" },
	};
	char out[24];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		tp_pyframes_module(cases[i][0], out, sizeof(out));
		assert_string_equal(out, cases[i][1]);
	}
	tp_pyframes_module("/x/a_very_long_module_name_past_the_room.py", out, sizeof(out));
	assert_string_equal(out, "a_very_long_module_name");
}

static void libpython311(void **state)
{
	(void)state;
	check_interp(&interps[3]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(python39),
		cmocka_unit_test(python311),
		cmocka_unit_test(python313),
		cmocka_unit_test(libpython311),
		cmocka_unit_test(malformed_line_tables),
		cmocka_unit_test(module_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
