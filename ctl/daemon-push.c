// SPDX-License-Identifier: GPL-2.0
/*
 * taprootd --push: a thread that uploads the spool (ctl/daemon-spool.c)
 * to a Pyroscope-compatible store or an OpenTelemetry collector, oldest
 * first, one file a request. To a store (--push http(s)://URL):
 *
 *   POST URL/ingest?name=SERVICE{hostname=..,kernel_release=..,kind=..,LABELS}
 *        &from=FROM&until=UNTIL&format=pprof&spyName=taproot
 *   multipart/form-data: "profile" (the gzipped pprof), and for the
 *   off-CPU kinds "sample_type_config" (JSON: units, aggregation, and the
 *   names the store shows)
 *   X-Taproot-Upload-Id: HOSTNAME/FILE, the same for every attempt
 *
 * To a collector (--push otlp+http(s)://URL), OTLP/HTTP in protobuf:
 *
 *   POST URL/v1development/profiles
 *   Content-Type: application/x-protobuf, Content-Encoding: gzip
 *   the file: an ExportProfilesServiceRequest (lib/profile/otlp.c)
 *   X-Taproot-Upload-Id as above
 *
 * A collector's 2xx answer may still say that it rejected some profiles
 * (ExportProfilesPartialSuccess): that is logged, the file is done. A
 * file of the other format (left by a taprootd pushing elsewhere) cannot
 * be sent: it is dropped, and counted.
 *
 * A file is deleted once the store answered 2xx, and only then. 408, 429,
 * other statuses below 400 or above 499 and transport errors are retried,
 * the wait doubling from 1 s to PUSH_BACKOFF_MAX_S; other 4xx are the
 * store refusing the upload for good: it is dropped and counted. The spool
 * is bounded (--push-spool-mb): beyond it the oldest files go unsent, and
 * are counted.
 *
 * Delivery: every file is sent until the store accepted it, so nothing is
 * lost short of the bound; one is sent twice only when taprootd is killed
 * (or the connection fails) after the store took it but before the answer
 * was read, and the store then sees the same X-Taproot-Upload-Id twice.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "daemon.h"
#include "taproot.h"

#define PUSH_BACKOFF_MAX_S	60
#define PUSH_CONNECT_MAX_S	10
#define SECRET_MAX		4096	/* bytes of a token or USER:PASSWORD */
#define REPLY_KEPT		200	/* bytes of a reply quoted in the log */
/* The series' labels, before URL-encoding: hostname, kernel release and
 * DAEMON_LABELS_MAX labels of 64 + 256 bytes fit. */
#define NAME_MAX_LEN		4096

enum upload_result { UPLOAD_OK, UPLOAD_RETRY, UPLOAD_REJECTED, UPLOAD_GONE, UPLOAD_FOREIGN };

struct daemon_push {
	enum spool_format format;
	char *endpoint;			/* URL/ingest, URL/v1development/profiles */
	char *auth_header;		/* "Authorization: Bearer ...", or NULL */
	char *userpwd;			/* basic: USER:PASSWORD, or NULL */
	char *tenant_header;		/* "X-Scope-OrgID: ...", or NULL */
	char *output;
	char *name_labels;		/* ",hostname=..,kernel_release=..,LABELS" */
	char *hostname;
	long timeout_s;
	uint64_t spool_bytes;

	pthread_t thread;
	bool started;
	CURL *curl;			/* the thread's, reused: connections are kept */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	atomic_bool stop;
	bool kicked;
	char inflight[512];		/* the file being uploaded, "" none */
	bool failing;			/* the last attempt failed: logged once */

	/* Under lock. */
	uint64_t uploaded, failures, rejected, dropped, queued, queued_bytes;
	uint64_t partial_rejected;	/* profiles refused in accepted uploads */
	int64_t last_success;
};

/* --------------------------------------------------------- settings */

/* Free a secret, its bytes overwritten first. */
static void secret_free(char *s)
{
	if (s)
		explicit_bzero(s, strlen(s));
	free(s);
}

/*
 * The first line of @path into a malloc'ed *@out: a secret, so nothing
 * of its content is ever logged.
 */
static int read_secret(const char *path, const char *what, char **out)
{
	char *buf = calloc(1, SECRET_MAX + 2);
	struct stat st;
	size_t n;
	FILE *f;

	if (!buf)
		return -1;
	f = fopen(path, "re");
	if (!f) {
		log_msg(LOG_ERR, "%s %s: %s", what, path, strerror(errno));
		free(buf);
		return -1;
	}
	if (!fstat(fileno(f), &st) && (st.st_mode & 0077))
		log_msg(LOG_WARNING, "%s %s: open to others than its owner (mode %03o)",
			what, path, (unsigned int)(st.st_mode & 0777));
	if (!fread(buf, 1, SECRET_MAX + 1, f))
		buf[0] = '\0';
	fclose(f);
	n = strcspn(buf, "\r\n");
	/* Only the first line is kept: the rest of the file is not the secret's. */
	explicit_bzero(buf + n, SECRET_MAX + 2 - n);
	for (size_t i = 0; i < n; i++) {
		if ((unsigned char)buf[i] < 0x20 || buf[i] == 0x7f)
			n = 0;
	}
	if (!n || n > SECRET_MAX) {
		log_msg(LOG_ERR, "%s %s: the first line must hold 1 to %d printable bytes",
			what, path, SECRET_MAX);
		explicit_bzero(buf, SECRET_MAX + 2);
		free(buf);
		return -1;
	}
	*out = buf;
	return 0;
}

/* Control and non-ASCII bytes of @s as '?'. */
static void printable(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
			*s = '?';
}

/* A label value or service name as the series name may hold it. */
static void name_safe(char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      strchr("_.:/@+-", c)))
			*s = '_';
	}
}

/* ",KEY=VALUE" appended to @buf (@len), VALUE made name_safe(). */
static void add_name_label(char *buf, size_t len, const char *key, const char *value)
{
	size_t off = strlen(buf), value_off = off + 1 + strlen(key) + 1;

	snprintf(buf + off, len - off, ",%s=%s", key, value);
	if (value_off < len)
		name_safe(buf + value_off);
}

static int make_names(struct daemon_push *p, const struct daemon_push_config *c)
{
	char *labels = calloc(1, NAME_MAX_LEN);
	const char *url;

	if (!labels)
		return -1;
	add_name_label(labels, NAME_MAX_LEN, "hostname", c->hostname);
	add_name_label(labels, NAME_MAX_LEN, "kernel_release", c->kernel_release);
	for (size_t i = 0; c->labels && i < c->labels->nr; i++) {
		const char *kv = c->labels->v[i];
		size_t k = strcspn(kv, "=");
		char key[80];

		snprintf(key, sizeof(key), "%.*s", (int)k, kv);
		add_name_label(labels, NAME_MAX_LEN, key, kv + k + 1);
	}
	p->name_labels = labels;
	p->hostname = strdup(c->hostname);
	p->format = spool_format_of(c->url);
	url = c->url + (p->format == SPOOL_OTLP ? strlen(PUSH_OTLP_PREFIX) : 0);
	if (asprintf(&p->endpoint, "%s%s%s", url, url[strlen(url) - 1] == '/' ? "" : "/",
		     p->format == SPOOL_OTLP ? "v1development/profiles" : "ingest") < 0)
		p->endpoint = NULL;
	return p->hostname && p->endpoint ? 0 : -1;
}

static int read_auth(struct daemon_push *p, const struct daemon_push_config *c)
{
	char *token = NULL;

	if (c->bearer_file && c->basic_file) {
		log_msg(LOG_ERR, "--push-bearer-file and --push-basic-file: one or the other");
		return -1;
	}
	if (c->bearer_file) {
		if (read_secret(c->bearer_file, "--push-bearer-file", &token) < 0)
			return -1;
		if (asprintf(&p->auth_header, "Authorization: Bearer %s", token) < 0)
			p->auth_header = NULL;
		secret_free(token);
		if (!p->auth_header) {
			log_msg(LOG_ERR, "out of memory");
			return -1;
		}
	}
	if (c->basic_file) {
		if (read_secret(c->basic_file, "--push-basic-file", &p->userpwd) < 0)
			return -1;
		if (!strchr(p->userpwd, ':')) {
			log_msg(LOG_ERR, "--push-basic-file %s: the first line must be "
				"USER:PASSWORD", c->basic_file);
			return -1;
		}
	}
	if (c->tenant && asprintf(&p->tenant_header, "X-Scope-OrgID: %s", c->tenant) < 0) {
		p->tenant_header = NULL;
		log_msg(LOG_ERR, "out of memory");
		return -1;
	}
	return 0;
}

static void push_free(struct daemon_push *p)
{
	free(p->endpoint);
	secret_free(p->auth_header);
	secret_free(p->userpwd);
	free(p->tenant_header);
	free(p->output);
	free(p->name_labels);
	free(p->hostname);
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

int daemon_push_new(const struct daemon_push_config *c, struct daemon_push **pp)
{
	struct daemon_push *p = calloc(1, sizeof(*p));
	struct spool_entry *v;
	uint64_t bytes;
	bool named;
	long n;

	*pp = NULL;
	if (!p) {
		log_msg(LOG_ERR, "out of memory");
		return -1;
	}
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	p->timeout_s = (long)c->timeout_s;
	p->spool_bytes = c->spool_bytes;
	p->output = strdup(c->output);
	named = p->output && make_names(p, c) == 0;
	if (!named)
		log_msg(LOG_ERR, "out of memory");
	if (!named || read_auth(p, c) < 0) {
		push_free(p);
		return -1;
	}
	if (curl_global_init(CURL_GLOBAL_DEFAULT)) {
		log_msg(LOG_ERR, "--push: libcurl could not be initialized");
		push_free(p);
		return -1;
	}
	/* The spool exists and is ours; what a killed writer left goes. */
	n = spool_list(p->output, &v, &bytes, true);
	if (n < 0) {
		curl_global_cleanup();
		push_free(p);
		return -1;
	}
	free(v);
	p->queued = (uint64_t)n;
	p->queued_bytes = bytes;
	if (n)
		log_msg(LOG_INFO, "push: %ld profiles (%" PRIu64 " bytes) wait in %s/"
			DAEMON_SPOOL_DIR, n, bytes, p->output);
	*pp = p;
	return 0;
}

/* ---------------------------------------------------------- the spool */

static void unlink_spooled(struct daemon_push *p, const char *name)
{
	char path[4800];

	snprintf(path, sizeof(path), "%s/" DAEMON_SPOOL_DIR "/%s", p->output, name);
	if (unlink(path) < 0 && errno != ENOENT)
		log_msg(LOG_ERR, "push: cannot delete %s: %s", path, strerror(errno));
}

/*
 * List the spool (under lock): the counters, and the bound enforced
 * (oldest first, never the file in flight). Returns how many files are
 * left, oldest first in *@vp (malloc'ed; NULL @vp: not wanted), or -1.
 */
static long survey(struct daemon_push *p, struct spool_entry **vp)
{
	struct spool_entry *v;
	uint64_t bytes;
	long n = spool_list(p->output, &v, &bytes, false), kept = 0;

	if (vp)
		*vp = NULL;
	if (n < 0)
		return -1;
	for (long i = 0; i < n; i++) {
		if (bytes > p->spool_bytes && strcmp(v[i].name, p->inflight)) {
			unlink_spooled(p, v[i].name);
			bytes -= v[i].bytes;
			p->dropped++;
			log_msg(LOG_WARNING, "push: the spool is over %" PRIu64 " MiB: %s dropped "
				"unsent", p->spool_bytes >> 20, v[i].name);
			continue;
		}
		v[kept++] = v[i];
	}
	p->queued = (uint64_t)kept;
	p->queued_bytes = bytes;
	if (vp)
		*vp = v;
	else
		free(v);
	return kept;
}

void daemon_push_kick(struct daemon_push *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	survey(p, NULL);
	p->kicked = true;
	pthread_cond_signal(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

void daemon_push_stats(struct daemon_push *p, struct daemon_state *st)
{
	st->push = p != NULL;
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	st->push_uploaded = p->uploaded;
	st->push_failures = p->failures;
	st->push_rejected = p->rejected;
	st->push_partial_rejected = p->partial_rejected;
	st->push_dropped = p->dropped;
	st->push_queued = p->queued;
	st->push_queued_bytes = p->queued_bytes;
	st->push_last_success = p->last_success;
	pthread_mutex_unlock(&p->lock);
}

/* ---------------------------------------------------------- an upload */

/* What the store answered, its first REPLY_KEPT bytes. */
struct reply {
	char text[REPLY_KEPT + 1];
	size_t len;
};

static size_t keep_reply(char *data, size_t size, size_t nmemb, void *arg)
{
	struct reply *r = arg;
	size_t n = size * nmemb, room = REPLY_KEPT - r->len;

	memcpy(r->text + r->len, data, n < room ? n : room);
	r->len += n < room ? n : room;
	r->text[r->len] = '\0';
	return n;
}

/* A running upload ends early when taprootd stops. */
static int check_stop(void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		      curl_off_t ulnow)
{
	struct daemon_push *p = arg;

	return atomic_load(&p->stop);
}

/* How the store shows the sample types of the off-CPU kinds; NULL: as they are. */
static const char *sample_type_config(const char *kind)
{
	if (!strcmp(kind, "offcpu"))
		return "{\"off_cpu\":{\"units\":\"nanoseconds\",\"aggregation\":\"sum\","
		       "\"display-name\":\"off_cpu\"},\"switches\":{\"units\":\"count\","
		       "\"aggregation\":\"sum\",\"display-name\":\"off_cpu_switches\"}}";
	if (!strcmp(kind, "offwake"))
		return "{\"off_cpu\":{\"units\":\"nanoseconds\",\"aggregation\":\"sum\","
		       "\"display-name\":\"off_wake\"},\"switches\":{\"units\":\"count\","
		       "\"aggregation\":\"sum\",\"display-name\":\"off_wake_switches\"}}";
	if (!strcmp(kind, "schedlat"))
		return "{\"runqueue\":{\"units\":\"nanoseconds\",\"aggregation\":\"sum\","
		       "\"display-name\":\"runqueue\"},\"switches\":{\"units\":\"count\","
		       "\"aggregation\":\"sum\",\"display-name\":\"runqueue_switches\"}}";
	return NULL;
}

/*
 * The file @e of the spool, read whole into a malloc'ed *@buf. 0, or
 * -ENOENT when it is gone (the bound dropped it), another -errno when it
 * cannot be read (tried again later).
 */
static int read_spooled(struct daemon_push *p, const struct spool_entry *e, void **buf,
			size_t *len)
{
	char path[4800];
	struct stat st;
	ssize_t n = -1;
	int fd, err = 0;

	*buf = NULL;
	snprintf(path, sizeof(path), "%s/" DAEMON_SPOOL_DIR "/%s", p->output, e->name);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		err = -errno;
	else if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size > p->spool_bytes)
		err = -EFBIG;
	else if (!(*buf = malloc((size_t)st.st_size + 1)))
		err = -ENOMEM;
	else if ((n = pread(fd, *buf, (size_t)st.st_size, 0)) != st.st_size)
		err = n < 0 ? -errno : -EIO;
	close(fd);
	if (err) {
		free(*buf);
		*buf = NULL;
		return err;
	}
	*len = (size_t)st.st_size;
	return 0;
}

/* The request's URL for @e: URL/ingest?name=...&from=...&until=..., or OTLP's endpoint. */
static char *request_url(struct daemon_push *p, CURL *c, const struct spool_entry *e)
{
	char name[NAME_MAX_LEN + 512], *esc, *url;

	if (p->format == SPOOL_OTLP)
		return strdup(p->endpoint);

	snprintf(name, sizeof(name), "%s", e->service);
	name_safe(name);
	snprintf(name + strlen(name), sizeof(name) - strlen(name), "{%s,kind=%s}",
		 p->name_labels + 1, e->kind);
	esc = curl_easy_escape(c, name, 0);
	if (!esc)
		return NULL;
	if (asprintf(&url, "%s?name=%s&from=%" PRId64 "&until=%" PRId64
		     "&format=pprof&spyName=taproot", p->endpoint, esc, e->from, e->until) < 0)
		url = NULL;
	curl_free(esc);
	return url;
}

static struct curl_slist *request_headers(struct daemon_push *p, const struct spool_entry *e)
{
	struct curl_slist *h = NULL, *t;
	char id[1024];
	size_t n = strlen(e->name) - strlen(p->format == SPOOL_OTLP ? ".otlp.gz" : ".pb.gz");
	bool otlp = p->format == SPOOL_OTLP;
	/* No "Expect: 100-continue" round trip: the bodies are small. */
	const char *lines[] = {
		id, "Expect:", p->auth_header, p->tenant_header,
		otlp ? "Content-Type: application/x-protobuf" : NULL,
		otlp ? "Content-Encoding: gzip" : NULL,
	};

	snprintf(id, sizeof(id), "X-Taproot-Upload-Id: %s/%.*s", p->hostname, (int)n, e->name);
	printable(id);		/* a host name may hold any byte but '\0' */
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		if (!lines[i])
			continue;
		t = curl_slist_append(h, lines[i]);
		if (!t) {
			curl_slist_free_all(h);
			return NULL;
		}
		h = t;
	}
	return h;
}

static curl_mime *request_body(CURL *c, const struct spool_entry *e, const void *buf,
			       size_t len)
{
	curl_mime *m = curl_mime_init(c);
	curl_mimepart *part;
	const char *cfg = sample_type_config(e->kind);

	if (!m || !(part = curl_mime_addpart(m)) || curl_mime_name(part, "profile") ||
	    curl_mime_filename(part, "profile.pb.gz") ||
	    curl_mime_type(part, "application/octet-stream") ||
	    curl_mime_data(part, buf, len))
		goto fail;
	if (cfg && (!(part = curl_mime_addpart(m)) || curl_mime_name(part, "sample_type_config") ||
		    curl_mime_type(part, "application/json") ||
		    curl_mime_data(part, cfg, CURL_ZERO_TERMINATED)))
		goto fail;
	return m;
fail:
	curl_mime_free(m);
	return NULL;
}

/* Log a failed attempt: the first of a run of them, then nothing until it recovers. */
static void log_failure(struct daemon_push *p, const struct spool_entry *e, const char *why)
{
	if (!p->failing)
		log_msg(LOG_WARNING, "push: %s to %s: %s; retrying", e->name, p->endpoint, why);
	p->failing = true;
}

/* What the answer to the upload of @e makes of it (under lock). */
static enum upload_result classify(struct daemon_push *p, const struct spool_entry *e,
				   CURLcode rc, long status, const char *curl_err,
				   const struct reply *r)
{
	char why[CURL_ERROR_SIZE + REPLY_KEPT + 64];

	if (rc == CURLE_ABORTED_BY_CALLBACK)
		return UPLOAD_RETRY;
	if (rc != CURLE_OK) {
		snprintf(why, sizeof(why), "%s", curl_err[0] ? curl_err : curl_easy_strerror(rc));
		log_failure(p, e, why);
		return UPLOAD_RETRY;
	}
	if (status >= 200 && status < 300) {
		int64_t rejected;
		char msg[REPLY_KEPT + 1];

		if (p->failing)
			log_msg(LOG_INFO, "push: %s accepted: the store answers again", e->name);
		p->failing = false;
		if (p->format == SPOOL_OTLP &&
		    !taproot_otlp_read_response(r->text, r->len, &rejected, msg, sizeof(msg)) &&
		    (rejected || msg[0])) {
			log_msg(LOG_WARNING, "push: %s: the collector rejected %" PRId64
				" of its profiles: %s", e->name, rejected, msg[0] ? msg : "(no reason)");
			p->partial_rejected += rejected > 0 ? (uint64_t)rejected : 0;
		}
		return UPLOAD_OK;
	}
	snprintf(why, sizeof(why), "HTTP %ld: %s", status, r->text);
	printable(why);		/* the store's words go to our log */
	if (status >= 400 && status < 500 && status != 408 && status != 429) {
		log_msg(LOG_ERR, "push: %s refused by %s (%s): dropped", e->name, p->endpoint,
			why);
		return UPLOAD_REJECTED;
	}
	log_failure(p, e, why);
	return UPLOAD_RETRY;
}

static enum upload_result upload(struct daemon_push *p, const struct spool_entry *e)
{
	enum upload_result res = UPLOAD_RETRY;
	char curl_err[CURL_ERROR_SIZE] = "";
	struct curl_slist *headers = NULL;
	struct reply reply = { .len = 0 };
	curl_mime *body = NULL;
	char *url = NULL;
	size_t len = 0;
	void *buf;
	CURL *c = p->curl;
	long status = 0;
	CURLcode rc;
	bool otlp = p->format == SPOOL_OTLP;
	int err;

	if (e->format != p->format)
		return UPLOAD_FOREIGN;
	err = read_spooled(p, e, &buf, &len);
	if (err == -ENOENT)
		return UPLOAD_GONE;
	curl_easy_reset(c);
	if (!err && (!(url = request_url(p, c, e)) || !(headers = request_headers(p, e)) ||
		     (!otlp && !(body = request_body(c, e, buf, len)))))
		err = -ENOMEM;
	if (err) {
		pthread_mutex_lock(&p->lock);
		log_failure(p, e, strerror(-err));
		pthread_mutex_unlock(&p->lock);
		goto out;
	}
	curl_easy_setopt(c, CURLOPT_URL, url);
#if LIBCURL_VERSION_NUM >= 0x075500
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
#else
	curl_easy_setopt(c, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
	if (otlp) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, buf);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	} else {
		curl_easy_setopt(c, CURLOPT_MIMEPOST, body);
	}
	if (p->userpwd) {
		curl_easy_setopt(c, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		curl_easy_setopt(c, CURLOPT_USERPWD, p->userpwd);
	}
	curl_easy_setopt(c, CURLOPT_TIMEOUT, p->timeout_s);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT,
			 p->timeout_s < PUSH_CONNECT_MAX_S ? p->timeout_s : (long)PUSH_CONNECT_MAX_S);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, curl_err);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, keep_reply);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &reply);
	curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, check_stop);
	curl_easy_setopt(c, CURLOPT_XFERINFODATA, p);
	curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "taprootd/" TAPROOT_VERSION);
	rc = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	pthread_mutex_lock(&p->lock);
	res = classify(p, e, rc, status, curl_err, &reply);
	pthread_mutex_unlock(&p->lock);
out:
	curl_mime_free(body);
	curl_slist_free_all(headers);
	free(url);
	free(buf);
	return res;
}

/* ---------------------------------------------------------- the thread */

/* Wait (under lock) @s seconds, or until taprootd stops. */
static void backoff_wait(struct daemon_push *p, unsigned int s)
{
	struct timespec until;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += s;
	while (!atomic_load(&p->stop) &&
	       pthread_cond_timedwait(&p->cond, &p->lock, &until) != ETIMEDOUT)
		;
}

/* Account for the upload of @e (under lock); after a failure, wait. */
static void settle(struct daemon_push *p, const struct spool_entry *e, enum upload_result res,
		   unsigned int *backoff)
{
	if (res == UPLOAD_OK || res == UPLOAD_REJECTED || res == UPLOAD_FOREIGN) {
		unlink_spooled(p, e->name);
		p->queued -= p->queued > 0;
		p->queued_bytes -= p->queued_bytes >= e->bytes ? e->bytes : p->queued_bytes;
	}
	switch (res) {
	case UPLOAD_OK:
		p->uploaded++;
		p->last_success = (int64_t)time(NULL);
		*backoff = 0;
		break;
	case UPLOAD_REJECTED:
		p->rejected++;
		break;
	case UPLOAD_FOREIGN:
		p->dropped++;
		log_msg(LOG_WARNING, "push: %s is of the other push format (a taprootd that "
			"pushed elsewhere left it): dropped unsent", e->name);
		break;
	case UPLOAD_RETRY:
		if (atomic_load(&p->stop))
			break;
		p->failures++;
		*backoff = *backoff ? 2 * *backoff : 1;
		if (*backoff > PUSH_BACKOFF_MAX_S)
			*backoff = PUSH_BACKOFF_MAX_S;
		backoff_wait(p, *backoff);
		break;
	case UPLOAD_GONE:		/* dropped by the bound meanwhile */
		break;
	}
}

/*
 * The spool is listed once per round, then uploaded in order: a backlog
 * of N files costs N uploads, not N listings. A failure ends the round
 * (after the backoff the spool is listed again, what the bound dropped
 * meanwhile gone).
 */
static void *push_thread(void *arg)
{
	struct daemon_push *p = arg;
	unsigned int backoff = 0;

	pthread_mutex_lock(&p->lock);
	while (!atomic_load(&p->stop)) {
		struct spool_entry *v;
		long n = survey(p, &v);

		if (n <= 0) {
			free(v);
			while (!p->kicked && !atomic_load(&p->stop))
				pthread_cond_wait(&p->cond, &p->lock);
			p->kicked = false;
			continue;
		}
		for (long i = 0; i < n && !atomic_load(&p->stop); i++) {
			enum upload_result res;

			snprintf(p->inflight, sizeof(p->inflight), "%s", v[i].name);
			pthread_mutex_unlock(&p->lock);
			res = upload(p, &v[i]);
			pthread_mutex_lock(&p->lock);
			p->inflight[0] = '\0';
			settle(p, &v[i], res, &backoff);
			if (res == UPLOAD_RETRY)
				break;
		}
		free(v);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

int daemon_push_start(struct daemon_push *p)
{
	pthread_condattr_t ca;
	int err;

	/* backoff_wait() counts in CLOCK_MONOTONIC: a clock step is no wait. */
	pthread_cond_destroy(&p->cond);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&p->cond, &ca);
	pthread_condattr_destroy(&ca);
	p->curl = curl_easy_init();
	if (!p->curl) {
		log_msg(LOG_ERR, "push: libcurl: cannot make a handle");
		return -1;
	}
	err = pthread_create(&p->thread, NULL, push_thread, p);
	if (err) {
		log_msg(LOG_ERR, "push: cannot start its thread: %s", strerror(err));
		return -1;
	}
	p->started = true;
	log_msg(LOG_INFO, "push: uploading to %s", p->endpoint);
	return 0;
}

void daemon_push_stop(struct daemon_push *p)
{
	if (!p)
		return;
	if (p->started) {
		pthread_mutex_lock(&p->lock);
		atomic_store(&p->stop, true);
		pthread_cond_signal(&p->cond);
		pthread_mutex_unlock(&p->lock);
		pthread_join(p->thread, NULL);
	}
	if (p->curl)
		curl_easy_cleanup(p->curl);
	curl_global_cleanup();
	push_free(p);
}
