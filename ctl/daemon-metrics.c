// SPDX-License-Identifier: GPL-2.0
/*
 * taprootd --metrics ADDR:PORT: its counters in the Prometheus text format
 * (version 0.0.4, daemon_metrics_text() in ctl/daemon-state.c), over HTTP,
 * for GET /metrics.
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
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
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

struct daemon_metrics {
	int fd;				/* listening */
	int stop[2];			/* a pipe: written to end the thread */
	pthread_t thread;
	bool running;			/* the thread, and the lock, exist */
	pthread_mutex_t lock;
	struct daemon_state st;		/* under lock */
	bool have;			/* st published at least once */
};

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
	char req[METRICS_REQUEST_MAX], body[DAEMON_METRICS_MAX];
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
