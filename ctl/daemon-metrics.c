// SPDX-License-Identifier: GPL-2.0
/*
 * taprootd --metrics ADDR:PORT: its counters in the Prometheus text format
 * (version 0.0.4), over HTTP, for GET /metrics.
 *
 * A thread of its own serves them, from a copy of the counters that the
 * main loop publishes (daemon_metrics_publish()) under a mutex: a slow or
 * hostile client can hold that thread, never the one draining the rings.
 * One connection at a time; a request must arrive whole within
 * METRICS_READ_MS and fit in METRICS_REQUEST_MAX bytes, else the
 * connection is closed.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <syslog.h>
#include <unistd.h>

#include "daemon.h"

#define METRICS_REQUEST_MAX	8192
#define METRICS_READ_MS		2000
#define METRICS_BODY_MAX	16384

struct daemon_metrics {
	int fd;				/* listening */
	int stop[2];			/* a pipe: written to end the thread */
	pthread_t thread;
	bool running;			/* the thread, and the lock, exist */
	pthread_mutex_t lock;
	struct daemon_state st;		/* under lock */
	bool have;			/* st published at least once */
};

/* ------------------------------------------------------------ the text */

struct mtext {
	char *buf;
	size_t len, off;
};

static void mprintf(struct mtext *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void mprintf(struct mtext *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->off >= t->len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(t->buf + t->off, t->len - t->off, fmt, ap);
	va_end(ap);
	t->off += n > 0 ? (size_t)n : 0;
}

size_t daemon_metrics_text(const struct daemon_state *st, char *buf, size_t len)
{
	const struct {
		const char *name, *type, *help;
		double value;
	} m[] = {
		{ "start_time_seconds", "gauge",
		  "When taprootd started, in seconds since the epoch.", (double)st->started },
		{ "cpu_seconds_total", "counter",
		  "User and system CPU time taprootd used.", st->cpu_seconds },
		{ "resident_memory_bytes", "gauge",
		  "taprootd's resident memory.", (double)st->rss_bytes },
		{ "sampling", "gauge",
		  "1 while the module's sampling runs.", (double)st->sampling },
		{ "interval_seconds", "gauge",
		  "Seconds per profile.", (double)st->interval },
		{ "samples_total", "counter",
		  "CPU samples added to profiles.", (double)st->samples },
		{ "lost_records_total", "counter",
		  "Records the module's rings lost.", (double)st->lost },
		{ "profiles_written_total", "counter",
		  "Profiles written.", (double)st->profiles },
		{ "profile_write_errors_total", "counter",
		  "Profiles that could not be written (their samples dropped).",
		  (double)st->write_errors },
		{ "offcpu_intervals_total", "counter",
		  "Off-CPU intervals joined.", (double)st->intervals },
		{ "offcpu_unpaired_total", "counter",
		  "Off-CPU intervals with an end missing.", (double)st->unpaired },
		{ "invalid_records_total", "counter",
		  "Invalid records, samples not added.", (double)st->dropped },
		{ "unknown_process_samples_total", "counter",
		  "Samples of processes gone before their maps were read.",
		  (double)st->proc_unknown },
		{ "stale_user_samples_total", "counter",
		  "Samples whose user part was left out across an execve.",
		  (double)st->user_stale },
		{ "elf_errors_total", "counter",
		  "Mappings whose ELF file could not be used.", (double)st->elf_errors },
		{ "relabel_dropped_total", "counter",
		  "Samples and off-CPU intervals the relabel rules dropped.",
		  (double)st->relabel_dropped },
		{ "relabel_skipped_total", "counter",
		  "Samples kept with a relabel replacement skipped for want of room.",
		  (double)st->relabel_skipped },
		{ "debuginfod_found_total", "counter",
		  "Debug files fetched from debuginfod.", (double)st->debuginfod_found },
		{ "debuginfod_absent_total", "counter",
		  "Debug files debuginfod did not have, or that could not be fetched.",
		  (double)st->debuginfod_absent },
		{ "debuginfod_pending", "gauge",
		  "Debug files waiting to be fetched.", (double)st->debuginfod_pending },
		{ "push_uploads_total", "counter",
		  "Profiles the store accepted (--push).", (double)st->push_uploaded },
		{ "push_failures_total", "counter",
		  "Upload attempts that failed and will be retried.", (double)st->push_failures },
		{ "push_rejected_total", "counter",
		  "Uploads the store refused for good (dropped).", (double)st->push_rejected },
		{ "push_dropped_total", "counter",
		  "Uploads dropped unsent: the spool was over its bound.",
		  (double)st->push_dropped },
		{ "push_queue_files", "gauge",
		  "Profiles waiting in the spool.", (double)st->push_queued },
		{ "push_queue_bytes", "gauge",
		  "Bytes waiting in the spool.", (double)st->push_queued_bytes },
		{ "push_last_success_seconds", "gauge",
		  "When the store last accepted an upload, in seconds since the epoch (0: never).",
		  (double)st->push_last_success },
		{ "user_stacks_total", "counter",
		  "User stacks unwound.", (double)st->user_stacks },
		{ "module_unwind", "gauge",
		  "1 when taprootd has the module unwind user stacks (setting unwind).",
		  (double)st->module_unwind },
		{ "kernel_upload_tables_total", "counter",
		  "Unwind tables uploaded to the module.", (double)st->kupload.tables_uploaded },
		{ "kernel_upload_table_bytes_total", "counter",
		  "Bytes of the unwind tables uploaded to the module.",
		  (double)st->kupload.table_bytes },
		{ "kernel_upload_tables_found_total", "counter",
		  "Unwind tables the module held already (same build ID).",
		  (double)st->kupload.tables_existed },
		{ "kernel_upload_maps_total", "counter",
		  "Sets of a process's mappings uploaded to the module.",
		  (double)st->kupload.maps_uploaded },
		{ "kernel_upload_stale_retries_total", "counter",
		  "Mapping uploads retried: the process changed its mappings meanwhile.",
		  (double)st->kupload.stale_retries },
		{ "kernel_upload_maps_current_total", "counter",
		  "Upload requests the process's token answered: its mappings were current.",
		  (double)st->kupload.maps_current },
		{ "kernel_upload_deferred_total", "counter",
		  "Upload requests put off for the interval or the work budget, served later.",
		  (double)st->kupload.deferred },
		{ "kernel_upload_budget_refusals_total", "counter",
		  "Uploads the module refused: its unwind memory (unwind-mem) was full.",
		  (double)st->kupload.budget_refusals },
		{ "kernel_upload_errors_total", "counter",
		  "Uploads to the module that failed otherwise.", (double)st->kupload.errors },
		{ "kernel_unwind_tables", "gauge",
		  "Unwind tables the module holds for taprootd now.", (double)st->kupload.tables },
		{ "kernel_unwind_processes", "gauge",
		  "Processes whose mappings the module holds for taprootd now.",
		  (double)st->kupload.procs },
		{ "stack_refs_total", "counter",
		  "Samples the module unwound itself, as references to interned stacks.",
		  (double)st->stack_refs },
		{ "stack_refs_unresolved_total", "counter",
		  "Of them, references to a stack taprootd had not seen (dropped).",
		  (double)st->stack_refs_unresolved },
		{ "counted_samples_total", "counter",
		  "Samples the module unwound itself and counted in its tables (setting count).",
		  (double)st->counted },
		{ "counted_unresolved_total", "counter",
		  "Of them, samples of a stack taprootd had not seen (dropped).",
		  (double)st->counted_unresolved },
		{ "frames_total", "counter",
		  "Frames symbolized.", (double)st->frames },
		{ "frames_unsymbolized_total", "counter",
		  "Frames without a function name.", (double)st->frames_unsymbolized },
	};
	struct mtext t = { .buf = buf, .len = len };

	for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++)
		mprintf(&t, "# HELP taprootd_%s %s\n# TYPE taprootd_%s %s\ntaprootd_%s %.17g\n",
			m[i].name, m[i].help, m[i].name, m[i].type, m[i].name, m[i].value);
	mprintf(&t, "# HELP taprootd_unwinds_total User stacks unwound, by how the unwinding "
		"ended.\n# TYPE taprootd_unwinds_total counter\n");
	for (unsigned int e = 0; e < TAPROOT_UNWIND_NR_ENDS; e++)
		mprintf(&t, "taprootd_unwinds_total{result=\"%s\"} %" PRIu64 "\n",
			taproot_unwind_end_name(e), st->unwind[e]);
	mprintf(&t, "# HELP taprootd_kernel_walks_total CPU samples by how the module's walk of "
		"their user stack ended (none: not walked).\n"
		"# TYPE taprootd_kernel_walks_total counter\n");
	for (unsigned int e = 0; e < TAPROOT_PIPELINE_KUNWIND_NR; e++)
		mprintf(&t, "taprootd_kernel_walks_total{result=\"%s\"} %" PRIu64 "\n",
			taproot_kunwind_name(e), st->kunwind[e]);
	return t.off;
}

/* ------------------------------------------------------------ HTTP */

static void send_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

static void respond(int fd, const char *status, const char *type, const char *body, size_t n)
{
	char head[256];
	int h = snprintf(head, sizeof(head), "HTTP/1.1 %s\r\nContent-Type: %s\r\n"
			 "Content-Length: %zu\r\nConnection: close\r\n\r\n", status, type, n);

	send_all(fd, head, (size_t)h);
	send_all(fd, body, n);
}

/*
 * Read a request's head (up to the blank line) into @buf within the time
 * limit. False when it did not come whole (too slow, too long, closed).
 */
static bool read_request(int fd, char *buf, size_t len)
{
	size_t off = 0;

	while (off < len - 1) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, METRICS_READ_MS) <= 0)
			return false;
		n = recv(fd, buf + off, len - 1 - off, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		off += (size_t)n;
		buf[off] = '\0';
		if (strstr(buf, "\r\n\r\n") || strstr(buf, "\n\n"))
			return true;
	}
	return false;
}

/* A short plain-text answer that is not the metrics. */
static void respond_text(int fd, const char *status, const char *text)
{
	respond(fd, status, "text/plain", text, strlen(text));
}

static void serve(struct daemon_metrics *m, int fd)
{
	static const char text[] = "text/plain; version=0.0.4; charset=utf-8";
	char req[METRICS_REQUEST_MAX], body[METRICS_BODY_MAX];
	struct daemon_state st;
	const char *path;
	bool have;
	size_t n;

	if (!read_request(fd, req, sizeof(req)))
		return;
	if (strncmp(req, "GET ", 4) && strncmp(req, "HEAD ", 5)) {
		respond_text(fd, "405 Method Not Allowed", "GET /metrics\n");
		return;
	}
	path = strchr(req, ' ') + 1;
	if (strncmp(path, "/metrics ", 9) && strncmp(path, "/metrics?", 9)) {
		respond_text(fd, "404 Not Found", "GET /metrics\n");
		return;
	}
	pthread_mutex_lock(&m->lock);
	st = m->st;
	have = m->have;
	pthread_mutex_unlock(&m->lock);
	if (!have) {
		respond_text(fd, "503 Service Unavailable", "starting\n");
		return;
	}
	n = daemon_metrics_text(&st, body, sizeof(body));
	if (!strncmp(req, "HEAD ", 5))
		n = 0;
	respond(fd, "200 OK", text, body, n);
}

static void *metrics_thread(void *arg)
{
	struct daemon_metrics *m = arg;

	for (;;) {
		struct pollfd p[2] = {
			{ .fd = m->fd, .events = POLLIN }, { .fd = m->stop[0], .events = POLLIN },
		};
		int c;

		if (poll(p, 2, -1) < 0 && errno != EINTR)
			return NULL;
		if (p[1].revents)
			return NULL;
		if (!(p[0].revents & POLLIN))
			continue;
		c = accept4(m->fd, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0)
			continue;
		serve(m, c);
		close(c);
	}
}

/* ------------------------------------------------------------ the API */

int daemon_metrics_parse_addr(const char *s, char *host, size_t hlen, char *port, size_t plen)
{
	const char *colon = strrchr(s, ':');
	const char *h = s, *he = colon;

	if (!colon || !colon[1] || strspn(colon + 1, "0123456789") != strlen(colon + 1) ||
	    strlen(colon + 1) > 5 || atoi(colon + 1) < 1 || atoi(colon + 1) > 65535)
		return -1;
	if (*h == '[') {
		if (he == h || he[-1] != ']')
			return -1;
		h++;
		he--;
	}
	if ((size_t)(he - h) >= hlen)
		return -1;
	snprintf(host, hlen, "%.*s", (int)(he - h), h);
	snprintf(port, plen, "%s", colon + 1);
	return 0;
}

/* A listening socket on @addr (ADDR:PORT); -1 after logging why not. */
static int listen_on(const char *addr)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICSERV };
	struct addrinfo *ai, *a;
	char host[256], port[8];
	int fd = -1, err, one = 1;

	if (daemon_metrics_parse_addr(addr, host, sizeof(host), port, sizeof(port)) < 0) {
		log_msg(LOG_ERR, "--metrics %s: need ADDR:PORT", addr);
		return -1;
	}
	err = getaddrinfo(host[0] ? host : NULL, port, &hints, &ai);
	if (err) {
		log_msg(LOG_ERR, "--metrics %s: %s", addr, gai_strerror(err));
		return -1;
	}
	for (a = ai; a; a = a->ai_next) {
		fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, 0);
		if (fd < 0)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (!bind(fd, a->ai_addr, a->ai_addrlen) && !listen(fd, 8))
			break;
		err = errno;
		close(fd);
		fd = -1;
		errno = err;
	}
	if (fd < 0)
		log_msg(LOG_ERR, "--metrics %s: %s", addr, strerror(errno));
	freeaddrinfo(ai);
	return fd;
}

int daemon_metrics_listen(const char *addr, struct daemon_metrics **mp)
{
	struct daemon_metrics *m = calloc(1, sizeof(*m));

	*mp = NULL;
	if (!m) {
		log_msg(LOG_ERR, "--metrics: out of memory");
		return -1;
	}
	m->stop[0] = m->stop[1] = -1;
	m->fd = listen_on(addr);
	if (m->fd < 0 || pipe2(m->stop, O_CLOEXEC) < 0) {
		if (m->fd >= 0)
			log_msg(LOG_ERR, "--metrics: %s", strerror(errno));
		daemon_metrics_stop(m);
		return -1;
	}
	*mp = m;
	return 0;
}

int daemon_metrics_run(struct daemon_metrics *m)
{
	pthread_mutex_init(&m->lock, NULL);
	if (pthread_create(&m->thread, NULL, metrics_thread, m)) {
		pthread_mutex_destroy(&m->lock);
		log_msg(LOG_ERR, "--metrics: cannot start its thread");
		return -1;
	}
	m->running = true;
	return 0;
}

void daemon_metrics_publish(struct daemon_metrics *m, const struct daemon_state *st)
{
	if (!m || !m->running)
		return;
	pthread_mutex_lock(&m->lock);
	m->st = *st;
	m->have = true;
	pthread_mutex_unlock(&m->lock);
}

void daemon_metrics_stop(struct daemon_metrics *m)
{
	if (!m)
		return;
	if (m->running) {
		if (write(m->stop[1], "x", 1) < 0)
			log_msg(LOG_WARNING, "--metrics: stopping its thread: %s", strerror(errno));
		pthread_join(m->thread, NULL);
		pthread_mutex_destroy(&m->lock);
	}
	if (m->fd >= 0)
		close(m->fd);
	if (m->stop[0] >= 0)
		close(m->stop[0]);
	if (m->stop[1] >= 0)
		close(m->stop[1]);
	free(m);
}
