// SPDX-License-Identifier: GPL-2.0
/*
 * Separate debug files fetched by build ID from debuginfod servers, for
 * binaries that have no symbols or line info where they run.
 *
 * libdebuginfod is loaded at run time (dlopen): without it, or without
 * URLs, nothing is fetched and every look-up says "absent". A thread of
 * its own does the fetching; the symbolizer only looks at what it has and
 * queues what it lacks (taproot_debuginfod_find()), under a mutex held for
 * a table look-up: nothing that drains the rings waits on the network.
 *
 * Each build ID asked for gets an entry: pending (queued or being
 * fetched), found (the file's path in libdebuginfod's cache) or absent
 * until a time (the negative cache). The table and the queue are bounded;
 * a build ID that finds no room is answered "absent" and asked again
 * later. A completed fetch bumps a generation number, which tells the
 * symbolizer to look again at the files it is waiting for.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <elfutils/debuginfod.h>

#include "process/process-private.h"
#include "util/clock.h"
#include "util/hash.h"

#define DI_ENTRIES_MAX		4096
#define DI_QUEUE_MAX		256
#define DI_BUCKETS		1024

enum di_state { DI_PENDING, DI_FOUND, DI_ABSENT };

struct di_entry {
	struct di_entry *next;		/* hash chain */
	struct di_entry *qnext;		/* the queue, when pending */
	uint8_t id[TP_BUILD_ID_MAX];
	size_t len;
	enum di_state state;
	uint64_t retry_ms;		/* absent: asked again from then */
	char *path;			/* found */
};

/* What is taken from libdebuginfod. */
struct di_lib {
	void *handle;
	debuginfod_client *(*begin)(void);
	int (*find)(debuginfod_client *, const unsigned char *, int, char **);
	void (*set_progressfn)(debuginfod_client *, debuginfod_progressfn_t);
	void (*set_user_data)(debuginfod_client *, void *);
	void *(*get_user_data)(debuginfod_client *);
	void (*end)(debuginfod_client *);
};

struct taproot_debuginfod {
	struct taproot_debuginfod_opts o;
	struct di_lib lib;
	pthread_t thread;
	bool running;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	atomic_bool stop;
	atomic_uint_fast64_t generation;
	struct di_entry *buckets[DI_BUCKETS];
	size_t nr;
	struct di_entry *qhead, *qtail;	/* pending, oldest first */
	size_t queued;
	struct taproot_debuginfod_stats st;	/* under lock */
};

/* ------------------------------------------------------------ the table */

static size_t di_bucket(const uint8_t *id, size_t len)
{
	return tp_hash_bytes(id, len) % DI_BUCKETS;
}

static struct di_entry *di_lookup(struct taproot_debuginfod *d, const uint8_t *id, size_t len)
{
	struct di_entry *e = d->buckets[di_bucket(id, len)];

	while (e && (e->len != len || memcmp(e->id, id, len)))
		e = e->next;
	return e;
}

static void di_enqueue(struct taproot_debuginfod *d, struct di_entry *e)
{
	e->state = DI_PENDING;
	e->qnext = NULL;
	if (d->qtail)
		d->qtail->qnext = e;
	else
		d->qhead = e;
	d->qtail = e;
	d->queued++;
	pthread_cond_signal(&d->wake);
}

int taproot_debuginfod_find(struct taproot_debuginfod *d, const uint8_t *id, size_t len,
			    char *path, size_t plen)
{
	uint64_t now = tp_clock_ms(CLOCK_MONOTONIC_COARSE);
	struct di_entry *e;
	int ret = -EAGAIN;

	if (!d || !len || len > TP_BUILD_ID_MAX)
		return -ENOENT;
	pthread_mutex_lock(&d->lock);
	e = di_lookup(d, id, len);
	if (!e && (d->nr >= DI_ENTRIES_MAX || d->queued >= DI_QUEUE_MAX)) {
		d->st.full++;
		ret = -ENOENT;
	} else if (!e && (e = calloc(1, sizeof(*e)))) {
		memcpy(e->id, id, len);
		e->len = len;
		e->next = d->buckets[di_bucket(id, len)];
		d->buckets[di_bucket(id, len)] = e;
		d->nr++;
		d->st.asked++;
		di_enqueue(d, e);
	} else if (!e) {
		ret = -ENOMEM;
	} else if (e->state == DI_FOUND) {
		snprintf(path, plen, "%s", e->path);
		ret = 0;
	} else if (e->state == DI_ABSENT && now < e->retry_ms) {
		ret = -ENOENT;
	} else if (e->state == DI_ABSENT && d->queued < DI_QUEUE_MAX) {
		d->st.asked++;
		di_enqueue(d, e);
	} else if (e->state == DI_ABSENT) {
		ret = -ENOENT;
	}
	pthread_mutex_unlock(&d->lock);
	return ret;
}

uint64_t taproot_debuginfod_generation(const struct taproot_debuginfod *d)
{
	return d ? atomic_load(&d->generation) : 0;
}

void taproot_debuginfod_get_stats(struct taproot_debuginfod *d,
				  struct taproot_debuginfod_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (!d)
		return;
	pthread_mutex_lock(&d->lock);
	*st = d->st;
	st->pending = d->queued;
	pthread_mutex_unlock(&d->lock);
}

/* ------------------------------------------------------------ the thread */

/*
 * The library's progress callback: a fetch under way ends when we stop.
 * It is given the client alone; the library, loaded once a process, gives
 * back our pointer.
 */
static void *(*di_user_data)(debuginfod_client *);

static int di_progress(debuginfod_client *c, long a, long b)
{
	struct taproot_debuginfod *d = di_user_data(c);

	return atomic_load(&d->stop) ? 1 : 0;
}

static void *di_thread(void *arg)
{
	struct taproot_debuginfod *d = arg;
	debuginfod_client *c = d->lib.begin();

	if (c) {
		d->lib.set_user_data(c, d);
		d->lib.set_progressfn(c, di_progress);
	}
	pthread_mutex_lock(&d->lock);
	while (!atomic_load(&d->stop)) {
		struct di_entry *e = d->qhead;
		uint8_t id[TP_BUILD_ID_MAX];
		size_t len;
		char *path = NULL;
		int fd;

		if (!e) {
			pthread_cond_wait(&d->wake, &d->lock);
			continue;
		}
		d->qhead = e->qnext;
		if (!d->qhead)
			d->qtail = NULL;
		d->queued--;
		memcpy(id, e->id, e->len);
		len = e->len;
		/* The entry stays pending while the lock is let go: only we change it. */
		pthread_mutex_unlock(&d->lock);
		fd = c ? d->lib.find(c, id, (int)len, &path) : -ENOSYS;
		if (fd >= 0)
			close(fd);
		pthread_mutex_lock(&d->lock);
		if (fd >= 0 && path) {
			e->state = DI_FOUND;
			e->path = path;
			d->st.found++;
			atomic_fetch_add(&d->generation, 1);
		} else {
			free(path);
			e->state = DI_ABSENT;
			e->retry_ms = tp_clock_ms(CLOCK_MONOTONIC_COARSE) +
				      (uint64_t)d->o.retry_s * 1000;
			d->st.absent++;
			d->st.last_error = fd < 0 ? fd : -ENOENT;
		}
	}
	pthread_mutex_unlock(&d->lock);
	if (c)
		d->lib.end(c);
	return NULL;
}

/* ------------------------------------------------------------ the API */

void taproot_debuginfod_opts_default(struct taproot_debuginfod_opts *o)
{
	o->urls = NULL;
	o->timeout_s = 10;
	o->retry_s = 600;
}

static int di_load(struct di_lib *lib)
{
	/*
	 * Never unloaded: libcurl's global state, made once a process, would
	 * be lost with it (and a later load would make it again).
	 */
	lib->handle = dlopen(DEBUGINFOD_SONAME, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
	if (!lib->handle)
		return tp_err(-ENOSYS, "debuginfod: %s", dlerror());
	*(void **)&lib->begin = dlsym(lib->handle, "debuginfod_begin");
	*(void **)&lib->find = dlsym(lib->handle, "debuginfod_find_debuginfo");
	*(void **)&lib->set_progressfn = dlsym(lib->handle, "debuginfod_set_progressfn");
	*(void **)&lib->set_user_data = dlsym(lib->handle, "debuginfod_set_user_data");
	*(void **)&lib->get_user_data = dlsym(lib->handle, "debuginfod_get_user_data");
	*(void **)&lib->end = dlsym(lib->handle, "debuginfod_end");
	if (!lib->begin || !lib->find || !lib->set_progressfn || !lib->set_user_data ||
	    !lib->get_user_data || !lib->end) {
		dlclose(lib->handle);
		lib->handle = NULL;
		return tp_err(-ENOSYS, "debuginfod: %s lacks its functions", DEBUGINFOD_SONAME);
	}
	di_user_data = lib->get_user_data;
	return 0;
}

/* The environment libdebuginfod reads, set once, before its thread runs. */
static void di_environment(const struct taproot_debuginfod_opts *o)
{
	char s[16];

	if (o->urls)
		setenv(DEBUGINFOD_URLS_ENV_VAR, o->urls, 1);
	snprintf(s, sizeof(s), "%u", o->timeout_s);
	/* A transfer that stalls this long, and one that lasts this long, ends. */
	setenv(DEBUGINFOD_TIMEOUT_ENV_VAR, s, 0);
	setenv(DEBUGINFOD_MAXTIME_ENV_VAR, s, 0);
}

int taproot_debuginfod_new(const struct taproot_debuginfod_opts *opts,
			   struct taproot_debuginfod **dp)
{
	struct taproot_debuginfod *d;
	const char *urls;
	int err;

	*dp = NULL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return tp_err(-ENOMEM, NULL);
	if (opts)
		d->o = *opts;
	else
		taproot_debuginfod_opts_default(&d->o);
	urls = d->o.urls ? d->o.urls : getenv(DEBUGINFOD_URLS_ENV_VAR);
	if (!urls || !urls[0] || !d->o.timeout_s) {
		free(d);
		return tp_err(-EINVAL, "debuginfod: no server URLs (DEBUGINFOD_URLS) or no "
			      "timeout");
	}
	err = di_load(&d->lib);
	if (err) {
		free(d);
		return err;
	}
	di_environment(&d->o);
	pthread_mutex_init(&d->lock, NULL);
	pthread_cond_init(&d->wake, NULL);
	if (pthread_create(&d->thread, NULL, di_thread, d)) {
		taproot_debuginfod_free(d);
		return tp_err(-EAGAIN, "debuginfod: cannot start its thread");
	}
	d->running = true;
	*dp = d;
	return 0;
}

void taproot_debuginfod_free(struct taproot_debuginfod *d)
{
	if (!d)
		return;
	if (d->running) {
		pthread_mutex_lock(&d->lock);
		atomic_store(&d->stop, true);
		pthread_cond_signal(&d->wake);
		pthread_mutex_unlock(&d->lock);
		pthread_join(d->thread, NULL);
	}
	for (size_t i = 0; i < DI_BUCKETS; i++) {
		struct di_entry *e = d->buckets[i], *next;

		for (; e; e = next) {
			next = e->next;
			free(e->path);
			free(e);
		}
	}
	pthread_cond_destroy(&d->wake);
	pthread_mutex_destroy(&d->lock);
	if (d->lib.handle)
		dlclose(d->lib.handle);
	free(d);
}
