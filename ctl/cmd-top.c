// SPDX-License-Identifier: GPL-2.0
/*
 * taprootctl top: the hottest functions of the host, live, in the
 * terminal: their self and total share of the CPU samples of the last
 * refresh, and the process or service they ran in.
 *
 * It asks taprootd (SIGUSR1; taprootd.c, live_request()) for its live
 * top, which taprootd writes beside its state file (topfile.h), once a
 * refresh; so it runs beside the service, which stays the rings' one
 * consumer. Without a taprootd it runs one of its own (--start, its
 * files in a private directory, gone at exit) and asks that one.
 *
 * On a terminal: the alternate screen, redrawn each refresh in the
 * terminal's size, keys read without echo. Elsewhere (a pipe): --count
 * snapshots, as plain text.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "daemon.h"
#include "taprootctl.h"
#include "topfile.h"
#include "util/clock.h"

#define TOP_ANSWER_S	3.0	/* taprootd's answer to a request, at most */
#define TOP_START_S	120.0	/* an own taprootd's start (kallsyms under TCG) */
#define TOP_GROUP_W	20	/* columns of the process or service */
#define TOP_FILTER_MAX	64

struct top_opts {
	double refresh_s;
	bool sort_total;		/* else by self */
	bool groups;			/* a row per function and process */
	char filter[TOP_FILTER_MAX];	/* substring of function or process */
	uint64_t count;			/* snapshots when not on a terminal; 0: on */
};

struct top {
	struct top_opts o;
	pid_t daemon;			/* the taprootd asked */
	pid_t own;			/* the one we run, 0: none */
	char *own_dir;			/* its files */
	char *path;			/* its live top's file */
	struct topfile last;		/* the last answer */
	bool have;
	bool tty, paused;
	bool editing;			/* typing a filter after '/' */
	char edit[TOP_FILTER_MAX];
	struct termios saved;
	bool raw;
};

static volatile sig_atomic_t top_stop, top_resized;

static void top_signal(int sig)
{
	if (sig == SIGWINCH)
		top_resized = 1;
	else
		top_stop = 1;
}

/* ------------------------------------------------------------ taprootd */

/* Start a taprootd of our own, its files in a private directory. */
static int own_daemon(struct top *t, char **state)
{
	char exe[PATH_MAX], daemon_path[PATH_MAX + 16], dir[] = "/tmp/taprootctl-top-XXXXXX";
	char *log;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	pid_t pid;

	if (!mkdtemp(dir))
		return p_err("top: a directory for taprootd: %s", strerror(errno));
	t->own_dir = strdup(dir);
	if (!t->own_dir || asprintf(state, "%s/taprootd.json", dir) < 0 ||
	    asprintf(&log, "%s/taprootd.log", dir) < 0)
		return p_err("out of memory");
	/* The taprootd beside this program, else the one on $PATH. */
	snprintf(daemon_path, sizeof(daemon_path), "taprootd");
	if (n > 0) {
		exe[n] = '\0';
		*strrchr(exe, '/') = '\0';
		snprintf(daemon_path, sizeof(daemon_path), "%s/taprootd", exe);
		if (access(daemon_path, X_OK) < 0)
			snprintf(daemon_path, sizeof(daemon_path), "taprootd");
	}
	pid = fork();
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

		if (fd >= 0) {
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
		}
		execlp(daemon_path, "taprootd", "-f", "--start", "-i", "86400", "-o", dir,
		       "--state", *state, (char *)NULL);
		fprintf(stderr, "taprootctl top: cannot run %s: %s\n", daemon_path,
			strerror(errno));
		_exit(127);
	}
	free(log);
	if (pid < 0)
		return p_err("top: fork: %s", strerror(errno));
	t->own = pid;
	return EXIT_OK;
}

/* What our own taprootd said, for an error: the last line of its log. */
static void own_log_tail(const struct top *t, char *out, size_t len)
{
	char path[PATH_MAX], line[512];
	FILE *f;

	out[0] = '\0';
	snprintf(path, sizeof(path), "%s/taprootd.log", t->own_dir);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (line[0] != '\n')
			snprintf(out, len, "%.*s", (int)strcspn(line, "\n"), line);
	fclose(f);
}

/* The taprootd to ask: the running one, else one of our own. */
static int find_daemon(struct top *t)
{
	struct daemon_state st;
	const char *path;
	char *state = NULL;
	double deadline;
	bool stale;

	if (daemon_find(&st, &stale, &path)) {
		t->daemon = (pid_t)st.pid;
		t->path = topfile_path(path);
		return t->path ? EXIT_OK : p_err("out of memory");
	}
	if (own_daemon(t, &state) != EXIT_OK) {
		free(state);
		return EXIT_ERR;
	}
	if (t->tty)
		fprintf(stderr, "taprootctl top: no taprootd runs: starting one of its own...\n");
	deadline = tp_clock_s(CLOCK_MONOTONIC) + TOP_START_S;
	/* Its state file names it once it reads the rings. */
	while (daemon_state_read(state, &st) < 0 || st.pid != t->own) {
		int status;
		char why[512];

		if (waitpid(t->own, &status, WNOHANG) == t->own || top_stop ||
		    tp_clock_s(CLOCK_MONOTONIC) > deadline) {
			if (!top_stop && tp_clock_s(CLOCK_MONOTONIC) <= deadline)
				t->own = 0;	/* reaped */
			own_log_tail(t, why, sizeof(why));
			free(state);
			return p_err("top: the taprootd it started %s%s%s",
				     top_stop ? "was interrupted" :
				     t->own ? "did not start in time" : "exited",
				     why[0] ? ": " : "", why);
		}
		usleep(100 * 1000);
	}
	t->daemon = t->own;
	t->path = topfile_path(state);
	free(state);
	return t->path ? EXIT_OK : p_err("out of memory");
}

/*
 * Ask taprootd for its live top and wait for the file to change: 1 with
 * t->last the answer, 0 when none came in time, -1 when taprootd is gone.
 */
static int ask(struct top *t)
{
	uint64_t before = t->have ? t->last.time_ns : 0;
	double deadline = tp_clock_s(CLOCK_MONOTONIC) + TOP_ANSWER_S;
	struct topfile f;

	/* A file an earlier top left is no answer to this one's first request. */
	if (!t->have && topfile_read(t->path, &f) == 0) {
		before = f.time_ns;
		topfile_free(&f);
	}

	if (kill(t->daemon, SIGUSR1) < 0)
		return -1;
	do {
		if (topfile_read(t->path, &f) == 0) {
			if (f.time_ns != before) {
				topfile_free(&t->last);
				t->last = f;
				t->have = true;
				return 1;
			}
			topfile_free(&f);
		}
		usleep(20 * 1000);
	} while (tp_clock_s(CLOCK_MONOTONIC) < deadline && !top_stop);
	return 0;
}

/* ------------------------------------------------------------ the rows */

struct top_row {
	const char *name, *group;	/* group NULL: every process */
	uint64_t self, total;
};

static int row_by_self(const void *a, const void *b)
{
	const struct top_row *x = a, *y = b;

	if (x->self != y->self)
		return x->self < y->self ? 1 : -1;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return strcmp(x->name, y->name);
}

static int row_by_total(const void *a, const void *b)
{
	const struct top_row *x = a, *y = b;

	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return row_by_self(a, b);
}

static bool matches(const struct top *t, const struct topfile_fn *fn)
{
	return !t->o.filter[0] || strcasestr(fn->name, t->o.filter) ||
	       strcasestr(fn->group, t->o.filter);
}

/*
 * The rows of the last answer, filtered, merged by function when groups
 * are off, sorted; *@n of them (malloc'ed). The total of a function over
 * several processes is the sum: a sample is in one process.
 */
static struct top_row *rows(const struct top *t, size_t *n)
{
	const struct topfile *f = &t->last;
	struct top_row *r = calloc(f->n ? f->n : 1, sizeof(*r));
	size_t k = 0;

	*n = 0;
	if (!r)
		return NULL;
	for (size_t i = 0; i < f->n; i++) {
		const struct topfile_fn *fn = &f->fns[i];
		size_t j = k;

		if (!matches(t, fn))
			continue;
		if (!t->o.groups)
			for (j = 0; j < k && strcmp(r[j].name, fn->name); j++)
				;
		if (j == k)
			r[k++] = (struct top_row){ .name = fn->name,
						   .group = t->o.groups ? fn->group : NULL };
		r[j].self += fn->self;
		r[j].total += fn->total;
	}
	qsort(r, k, sizeof(*r), t->o.sort_total ? row_by_total : row_by_self);
	*n = k;
	return r;
}

/* ------------------------------------------------------------ drawing */

static void term_size(int *rows_out, int *cols)
{
	struct winsize ws;

	*rows_out = 24;
	*cols = 80;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row && ws.ws_col) {
		*rows_out = ws.ws_row;
		*cols = ws.ws_col;
	}
}

/* @s cut to @w columns (bytes: names are ASCII but for rare UTF-8), padded. */
static void put_cell(const char *s, int w, bool pad)
{
	int n = (int)strlen(s);

	if (n > w && w > 1)
		printf("%.*s+", w - 1, s);
	else
		printf("%.*s", w, s);
	if (pad && n < w)
		printf("%*s", w - n, "");
}

/*
 * End the current line (on the screen, what is left of it cleared first)
 * and count it in @lines. draw() never ends the screen's last line: a
 * newline there would scroll the screen by one.
 */
static void line_end(bool screen, int *lines)
{
	if (screen)
		printf("\033[K");
	(*lines)++;
	printf("\n");
}

/* One snapshot: its header, the column titles, then the rows that fit. */
static void draw(struct top *t, int height, int width, bool screen)
{
	const struct topfile *f = &t->last;
	double secs = f->window_ns / 1e9;
	struct top_row *r;
	char head[512];
	size_t n = 0;
	int lines = 0, fnw;

	if (screen)
		printf("\033[H");
	snprintf(head, sizeof(head), "taproot top - %s - %" PRIu64 " samples%s%.1f s - sort: %s%s%s%s",
		 f->host[0] ? f->host : "?", f->samples, secs > 0 ? " in " : "",
		 secs > 0 ? secs : 0.0, t->o.sort_total ? "total" : "self",
		 t->o.filter[0] || t->editing ? " - filter: " : "",
		 t->editing ? t->edit : t->o.filter, t->paused ? " - paused" : "");
	if (t->editing)
		snprintf(head + strlen(head), sizeof(head) - strlen(head), "_");
	put_cell(head, width, false);
	line_end(screen, &lines);
	if (screen) {
		put_cell("q quit  s sort self/total  / filter  c clear  g by process  p pause  "
			 "space refresh", width, false);
		line_end(screen, &lines);
	}
	if (!f->sampling || !f->samples) {
		put_cell(!f->sampling ? "sampling is stopped ('taprootctl start', or taprootd --start)" :
			 f->window_ns ? "no samples in this refresh" : "collecting...", width, false);
		line_end(screen, &lines);
	}
	fnw = width - 16 - (t->o.groups ? TOP_GROUP_W + 1 : 0);
	if (fnw < 10)
		fnw = 10;
	printf("%7s %7s  ", "SELF", "TOTAL");
	if (t->o.groups) {
		put_cell("PROCESS", TOP_GROUP_W, true);
		printf(" ");
	}
	put_cell("FUNCTION", fnw, false);
	r = rows(t, &n);
	for (size_t i = 0; r && i < n && (!screen || lines + 1 < height); i++) {
		double den = f->samples ? (double)f->samples : 1;

		line_end(screen, &lines);
		printf("%6.2f%% %6.2f%%  ", 100.0 * r[i].self / den, 100.0 * r[i].total / den);
		if (t->o.groups) {
			put_cell(r[i].group, TOP_GROUP_W, true);
			printf(" ");
		}
		put_cell(r[i].name, fnw, false);
	}
	free(r);
	/* The rest of the screen cleared; the cursor stays on its last line. */
	if (screen)
		printf("\033[K\033[J");
	else
		printf("\n");
	fflush(stdout);
}

/* ------------------------------------------------------------ keys */

static void term_raw(struct top *t)
{
	struct termios raw;

	if (tcgetattr(STDIN_FILENO, &t->saved) < 0)
		return;
	raw = t->saved;
	raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	raw.c_cc[VMIN] = 0;
	raw.c_cc[VTIME] = 0;
	if (tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0)
		t->raw = true;
	/* The alternate screen, the cursor hidden. */
	printf("\033[?1049h\033[?25l\033[2J");
	fflush(stdout);
}

static void term_restore(struct top *t)
{
	if (!t->tty)
		return;
	printf("\033[?25h\033[?1049l");
	fflush(stdout);
	if (t->raw)
		tcsetattr(STDIN_FILENO, TCSANOW, &t->saved);
	t->raw = false;
}

/* A key typed: 1 to redraw, 2 to ask again now, 0 for nothing, -1 to quit. */
static int key(struct top *t, char c)
{
	size_t n = strlen(t->edit);

	if (t->editing) {
		if (c == '\n' || c == '\r') {
			snprintf(t->o.filter, sizeof(t->o.filter), "%s", t->edit);
			t->editing = false;
		} else if (c == 27) {
			t->editing = false;
		} else if ((c == 127 || c == 8) && n) {
			t->edit[n - 1] = '\0';
		} else if (c >= ' ' && c < 127 && n + 1 < sizeof(t->edit)) {
			t->edit[n] = c;
			t->edit[n + 1] = '\0';
		}
		return 1;
	}
	switch (c) {
	case 'q':
	case 'Q':
	case 3:		/* ^C, should ISIG be off */
		return -1;
	case 's':
		t->o.sort_total = !t->o.sort_total;
		return 1;
	case 'g':
		t->o.groups = !t->o.groups;
		return 1;
	case '/':
		t->editing = true;
		snprintf(t->edit, sizeof(t->edit), "%s", t->o.filter);
		return 1;
	case 'c':
		t->o.filter[0] = '\0';
		return 1;
	case 'p':
		t->paused = !t->paused;
		return 1;
	case ' ':
		return 2;
	default:
		return 0;
	}
}

/* ------------------------------------------------------------ the loop */

static int run_screen(struct top *t)
{
	double next = 0;
	int height, width;

	term_raw(t);
	for (;;) {
		double now = tp_clock_s(CLOCK_MONOTONIC);
		struct pollfd p = { .fd = STDIN_FILENO, .events = POLLIN };
		int redraw = 0, wait_ms;
		char c;

		if (top_stop)
			return EXIT_OK;
		if (!t->paused && now >= next) {
			if (ask(t) < 0) {
				term_restore(t);
				return p_err("top: taprootd (pid %d) is gone", (int)t->daemon);
			}
			next = now + t->o.refresh_s;
			redraw = 1;
		}
		if (top_resized) {
			top_resized = 0;
			printf("\033[2J");
			redraw = 1;
		}
		if (redraw && t->have) {
			term_size(&height, &width);
			draw(t, height, width, true);
		}
		wait_ms = t->paused ? 1000 : (int)((next - tp_clock_s(CLOCK_MONOTONIC)) * 1000) + 1;
		if (wait_ms < 0)
			wait_ms = 0;
		if (poll(&p, 1, wait_ms) > 0 && read(STDIN_FILENO, &c, 1) == 1) {
			int k = key(t, c);

			if (k < 0)
				return EXIT_OK;
			if (k == 2)
				next = 0;
			if (k && t->have) {
				term_size(&height, &width);
				draw(t, height, width, true);
			}
		}
	}
}

/* Not on a terminal: --count snapshots, each after a refresh with samples. */
static int run_plain(struct top *t)
{
	uint64_t shown = 0;

	/* The first answer only turns taprootd's live top on. */
	if (ask(t) < 0)
		return p_err("top: taprootd (pid %d) is gone", (int)t->daemon);
	while (shown < t->o.count && !top_stop) {
		int got;

		usleep((useconds_t)(t->o.refresh_s * 1e6));
		got = ask(t);
		if (got < 0)
			return p_err("top: taprootd (pid %d) is gone", (int)t->daemon);
		if (!got)
			continue;	/* no answer in time: ask again */
		if (shown)
			printf("\n");
		draw(t, 0, 200, false);
		shown++;
	}
	return EXIT_OK;
}

/* Our own taprootd's directory and the files it left (flat): none is kept. */
static void remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			unlinkat(dirfd(d), e->d_name, 0);
	if (d)
		closedir(d);
	if (rmdir(dir) < 0)
		fprintf(stderr, "taprootctl top: could not remove %s: %s\n", dir, strerror(errno));
}

static void finish(struct top *t)
{
	term_restore(t);
	if (t->own) {
		kill(t->own, SIGTERM);
		waitpid(t->own, NULL, 0);
	}
	if (t->own_dir) {
		remove_dir(t->own_dir);
		free(t->own_dir);
	}
	topfile_free(&t->last);
	free(t->path);
}

/* ------------------------------------------------------------ options */

static int parse(int argc, char **argv, struct top_opts *o)
{
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		uint64_t n;
		int ret;

		if (!strcmp(a, "--total")) {
			o->sort_total = true;
			continue;
		}
		if (!strcmp(a, "--by-function")) {
			o->groups = false;
			continue;
		}
		if (strcmp(a, "--refresh") && strcmp(a, "--filter") && strcmp(a, "--count"))
			return a[0] == '-' ? p_usage("'top': unknown option '%s'", a) :
					     p_usage("'top': unexpected argument '%s'", a);
		if (!v)
			return p_usage("'top %s' needs a value", a);
		i++;
		if (!strcmp(a, "--refresh")) {
			ret = parse_seconds_arg("top", a, v, &o->refresh_s);
			if (ret != EXIT_OK)
				return ret;
			if (o->refresh_s < 0.2)
				return p_usage("'top --refresh' needs 0.2 seconds at least, not '%s'", v);
		} else if (!strcmp(a, "--filter")) {
			if (strlen(v) >= sizeof(o->filter))
				return p_usage("'top --filter': %zu bytes at most",
					       sizeof(o->filter) - 1);
			snprintf(o->filter, sizeof(o->filter), "%s", v);
		} else {
			ret = parse_u64_arg("top", a, v, 1, 1000000, &n);
			if (ret != EXIT_OK)
				return ret;
			o->count = n;
		}
	}
	return EXIT_OK;
}

int do_top(int argc, char **argv)
{
	struct top t = { .o = { .refresh_s = 1, .groups = true } };
	struct sigaction sa = { .sa_handler = top_signal };
	int ret;

	ret = parse(argc, argv, &t.o);
	if (ret != EXIT_OK)
		return ret;
	t.tty = isatty(STDOUT_FILENO) && isatty(STDIN_FILENO) && !t.o.count;
	if (!t.tty && !t.o.count)
		t.o.count = 1;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGWINCH, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	ret = find_daemon(&t);
	if (ret == EXIT_OK)
		ret = t.tty ? run_screen(&t) : run_plain(&t);
	finish(&t);
	return ret;
}
