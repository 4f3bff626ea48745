// SPDX-License-Identifier: GPL-2.0
/*
 * Kubernetes metadata from the container runtimes' files: the JSON reader
 * (lib/util/json.c) on valid, malformed and hostile documents, each cut
 * short, and nested too deep; the files of containerd, k3s's containerd,
 * CRI-O and Docker as each lays them out (tests/unit/fixtures/k8s/, a
 * node's root), the pause container, containers that are not
 * Kubernetes', files refused (links, FIFOs, oversized, malformed), and
 * the cache's rule: an answer read once, a miss asked again after
 * TP_K8S_MISS_MS, the least recently used evicted.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "process/process-private.h"
#include "util/error.h"
#include "util/json.h"

#define FIXTURES "tests/unit/fixtures/k8s"
#define CRI "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define SANDBOX "5d0fa1e2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e"
#define CRIO "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"
#define DOCKER "3f4e5a6b7c8d9e0f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f7081"
#define OTHER "00000000000000000000000000000000000000000000000000000000000000aa"
#define K3S "c3c3c3c3d4d4d4d4e5e5e5e5f6f6f6f60707070718181818292929293a3a3a3a"

#define CONTAINERD_DIR "/run/containerd/io.containerd.runtime.v2.task/k8s.io/"
#define K3S_DIR "/run/k3s/containerd/io.containerd.runtime.v2.task/k8s.io/"
#define CRIO_DIR "/run/containers/storage/overlay-containers/"
#define DOCKER_DIR "/var/lib/docker/containers/"

/* ------------------------------------------------------- the JSON reader */

/*
 * Look @key up under "a" in @doc with room for @size bytes: the result,
 * the value in @out. The document is copied to an allocation of exactly
 * its length, so that a read past it is caught under ASan.
 */
static int lookup(const char *doc, size_t len, const char *const *path, size_t path_len,
		  char *out, size_t size)
{
	struct tp_json_query q = { .path = path, .path_len = path_len, .out = out, .size = size };
	char *copy = malloc(len ? len : 1);
	int err;

	assert_non_null(copy);
	memcpy(copy, doc, len);
	err = tp_json_lookup(copy, len, &q, 1);
	free(copy);
	return err ? err : q.result;
}

static int lookup_a(const char *doc, char *out, size_t size)
{
	static const char *const path[] = { "a" };

	return lookup(doc, strlen(doc), path, 1, out, size);
}

static void json_values_by_path(void **state)
{
	static const char doc[] =
		" {\"n\": -12.5e+3, \"t\": true, \"f\": false, \"z\": null,\n"
		"  \"arr\": [1, \"x\", {\"a\": \"in an array\"}, [[]], {}],\n"
		"  \"Config\": {\"Labels\": {\"k\": \"v1\", \"io.kubernetes.pod.name\": \"web-0\"},"
		" \"Other\": {\"k\": \"no\"}},\n"
		"  \"top\": \"level\", \"obj\": {\"x\": 1}} \r\n";
	static const char *const p_top[] = { "top" };
	static const char *const p_name[] = { "Config", "Labels", "io.kubernetes.pod.name" };
	static const char *const p_k[] = { "Config", "Labels", "k" };
	static const char *const p_absent[] = { "Config", "Labels", "absent" };
	static const char *const p_num[] = { "n" };
	static const char *const p_obj[] = { "obj" };
	static const char *const p_through_string[] = { "top", "x" };
	char out[64];

	assert_int_equal(lookup(doc, strlen(doc), p_top, 1, out, sizeof(out)), 5);
	assert_string_equal(out, "level");
	assert_int_equal(lookup(doc, strlen(doc), p_name, 3, out, sizeof(out)), 5);
	assert_string_equal(out, "web-0");
	assert_int_equal(lookup(doc, strlen(doc), p_k, 3, out, sizeof(out)), 2);
	assert_string_equal(out, "v1");
	assert_int_equal(lookup(doc, strlen(doc), p_absent, 3, out, sizeof(out)), -ENOENT);
	assert_string_equal(out, "");
	/* Not a string: no value. */
	assert_int_equal(lookup(doc, strlen(doc), p_num, 1, out, sizeof(out)), -EINVAL);
	assert_int_equal(lookup(doc, strlen(doc), p_obj, 1, out, sizeof(out)), -EINVAL);
	assert_int_equal(lookup(doc, strlen(doc), p_through_string, 2, out, sizeof(out)),
			 -ENOENT);
	/* A member of an object inside an array is not on any path. */
	assert_int_equal(lookup_a(doc, out, sizeof(out)), -ENOENT);
}

static void json_several_queries_one_pass(void **state)
{
	static const char doc[] = "{\"a\":{\"x\":\"1\",\"y\":\"22\"},\"b\":\"333\"}";
	static const char *const px[] = { "a", "x" }, *const py[] = { "a", "y" };
	static const char *const pb[] = { "b" }, *const pz[] = { "a", "z" };
	char o[5][8];
	struct tp_json_query q[] = {
		{ px, 2, o[0], sizeof(o[0]), 0 }, { py, 2, o[1], sizeof(o[1]), 0 },
		{ pb, 1, o[2], sizeof(o[2]), 0 }, { pz, 2, o[3], sizeof(o[3]), 0 },
		{ py, 2, o[4], 2, 0 },	/* the same path, too little room */
	};

	assert_int_equal(tp_json_lookup(doc, strlen(doc), q, 5), 0);
	assert_int_equal(q[0].result, 1);
	assert_string_equal(o[0], "1");
	assert_int_equal(q[1].result, 2);
	assert_string_equal(o[1], "22");
	assert_int_equal(q[2].result, 3);
	assert_string_equal(o[2], "333");
	assert_int_equal(q[3].result, -ENOENT);
	assert_int_equal(q[4].result, -E2BIG);
	assert_string_equal(o[4], "");
}

static void json_escapes_decoded(void **state)
{
	char out[64];

	assert_int_equal(lookup_a("{\"a\":\"q\\\"b\\\\s\\/\"}", out, sizeof(out)), 6);
	assert_string_equal(out, "q\"b\\s/");
	/* U+00E9, U+20AC, U+1F600 as a surrogate pair, each to UTF-8. */
	assert_int_equal(lookup_a("{\"a\":\"\\u00e9\\u20AC\\ud83d\\ude00\"}", out, sizeof(out)),
			 2 + 3 + 4);
	assert_string_equal(out, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
	/* Lone surrogates, high then low, read as U+FFFD, as Go reads them. */
	assert_int_equal(lookup_a("{\"a\":\"\\ud83dx\\ude00\"}", out, sizeof(out)), 7);
	assert_string_equal(out, "\xef\xbf\xbdx\xef\xbf\xbd");
	/* A high surrogate followed by an escape that is not a low one. */
	assert_int_equal(lookup_a("{\"a\":\"\\ud83d\\u0041\"}", out, sizeof(out)), 4);
	assert_string_equal(out, "\xef\xbf\xbd" "A");
	/* Raw UTF-8 as it is; a key spelled with escapes is the same key. */
	assert_int_equal(lookup_a("{\"\\u0061\":\"gr\xc3\xbc\xc3\x9f\"}", out, sizeof(out)), 6);
	assert_string_equal(out, "gr\xc3\xbc\xc3\x9f");
	/* Go's encoder escapes <, > and &. */
	assert_int_equal(lookup_a("{\"a\":\"\\u003cm@x\\u003e \\u0026\"}", out, sizeof(out)), 7);
	assert_string_equal(out, "<m@x> &");
}

/* Control characters never reach a value: escaped or raw DEL, refused. */
static void json_control_characters_refused(void **state)
{
	static const char *const docs[] = {
		"{\"a\":\"x\\ny\"}", "{\"a\":\"\\t\"}", "{\"a\":\"\\u0000\"}",
		"{\"a\":\"\\u001b[31m\"}", "{\"a\":\"\\u007f\"}", "{\"a\":\"del\x7f\"}",
		"{\"a\":\"\\b\"}",
	};
	char out[16];

	for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
		memset(out, 'x', sizeof(out));
		assert_int_equal(lookup_a(docs[i], out, sizeof(out)), -EILSEQ);
		assert_string_equal(out, "");
	}
}

static void json_value_too_long_left_out(void **state)
{
	char out[4];

	assert_int_equal(lookup_a("{\"a\":\"abc\"}", out, sizeof(out)), 3);
	assert_int_equal(lookup_a("{\"a\":\"abcd\"}", out, sizeof(out)), -E2BIG);
	assert_string_equal(out, "");
	/* Counted decoded: "\u00e9" is 2 bytes, "abé" 4. */
	assert_int_equal(lookup_a("{\"a\":\"ab\\u00e9\"}", out, sizeof(out)), -E2BIG);
}

/* A key's duplicate wins, as in Go's encoding/json. */
static void json_duplicate_key_last_wins(void **state)
{
	char out[16];

	assert_int_equal(lookup_a("{\"a\":\"first\",\"a\":\"second\"}", out, sizeof(out)), 6);
	assert_string_equal(out, "second");
	assert_int_equal(lookup_a("{\"a\":\"first\",\"a\":7}", out, sizeof(out)), -EINVAL);
}

static const char *const malformed[] = {
	"", " ", "{", "}", "{\"a\"}", "{\"a\":}", "{\"a\":1,}", "{,}", "[1 2]", "[1,]",
	"{\"a\":1 \"b\":2}", "{\"a\" 1}", "{1:2}", "{a:1}", "{'a':1}", "{\"a\":\"x}",
	"{\"a\":\"\x01\"}", "{\"a\":\"\n\"}", "{\"a\":\"\\x\"}", "{\"a\":\"\\u12\"}",
	"{\"a\":\"\\u12g4\"}", "{\"a\":\"\\", "{\"a\":\"\xff\"}", "{\"a\":\"\xc0\xaf\"}",
	"{\"a\":\"\xed\xa0\x80\"}", "{\"a\":\"\xe2\x82\"}", "{\"a\":\"\xf4\x90\x80\x80\"}",
	"01", "1.", ".5", "1e", "1e+", "-", "+1", "--1", "0x10", "tru", "nul", "True",
	"NaN", "Infinity", "{} x", "{}{}", "\"a\" \"b\"", "{\"a\":1}\0", "[\"a\"\0]",
};

/* Malformed documents refused, whatever the query; and no answer kept. */
static void json_malformed_refused(void **state)
{
	static const char *const path[] = { "a" };

	for (size_t i = 0; i < sizeof(malformed) / sizeof(malformed[0]); i++) {
		const char *d = malformed[i];
		/* The two ending in NUL hold it as their last byte. */
		size_t len = strlen(d) + (i + 2 >= sizeof(malformed) / sizeof(malformed[0]));
		char out[8];

		if (lookup(d, len, path, 1, out, sizeof(out)) != -TAPROOT_EPROTO)
			fail_msg("malformed document %zu accepted: %s", i, d);
	}
}

/* Every proper prefix of a valid document is refused, and none is read past. */
static void json_every_prefix_refused(void **state)
{
	static const char *const fixtures[] = {
		FIXTURES CONTAINERD_DIR CRI "/config.json",
		FIXTURES K3S_DIR K3S "/config.json",
		FIXTURES CRIO_DIR CRIO "/userdata/config.json",
		FIXTURES DOCKER_DIR DOCKER "/config.v2.json",
	};
	static const char *const path[] = { "annotations", "io.kubernetes.pod.name" };

	for (size_t f = 0; f < sizeof(fixtures) / sizeof(fixtures[0]); f++) {
		int fd = open(fixtures[f], O_RDONLY);
		char *doc, out[64];
		size_t len;

		assert_true(fd >= 0);
		assert_int_equal(tp_read_fd(fd, 1 << 20, &doc, &len), 0);
		close(fd);
		/* A document of one value ends with its last non-space byte. */
		while (len && (doc[len - 1] == '\n' || doc[len - 1] == ' '))
			len--;
		assert_true(lookup(doc, len, path, 2, out, sizeof(out)) != -TAPROOT_EPROTO);
		for (size_t n = 0; n < len; n++)
			if (lookup(doc, n, path, 2, out, sizeof(out)) != -TAPROOT_EPROTO)
				fail_msg("%s: its first %zu bytes accepted", fixtures[f], n);
		free(doc);
	}
}

static char *nested(size_t depth)
{
	char *d = malloc(2 * depth + 1);

	assert_non_null(d);
	memset(d, '[', depth);
	memset(d + depth, ']', depth);
	d[2 * depth] = '\0';
	return d;
}

static void json_depth_limited(void **state)
{
	static const char *const path[] = { "a" };
	char *ok = nested(TP_JSON_DEPTH_MAX), *deep = nested(TP_JSON_DEPTH_MAX + 1), out[4];
	char *huge = nested(100000);

	assert_int_equal(lookup(ok, strlen(ok), path, 1, out, sizeof(out)), -ENOENT);
	assert_int_equal(lookup(deep, strlen(deep), path, 1, out, sizeof(out)), -TAPROOT_EPROTO);
	/* Refused before the stack is: no recursion past the limit. */
	assert_int_equal(lookup(huge, strlen(huge), path, 1, out, sizeof(out)), -TAPROOT_EPROTO);
	free(ok);
	free(deep);
	free(huge);
}

static void json_bad_queries_refused(void **state)
{
	static const char *const path[] = { "a" };
	struct tp_json_query q[TP_JSON_QUERIES_MAX + 1];
	char out[4];

	for (size_t i = 0; i < TP_JSON_QUERIES_MAX + 1; i++)
		q[i] = (struct tp_json_query){ path, 1, out, sizeof(out), 0 };
	assert_int_equal(tp_json_lookup("{}", 2, q, TP_JSON_QUERIES_MAX + 1), -EINVAL);
	assert_int_equal(tp_json_lookup("{}", 2, q, TP_JSON_QUERIES_MAX), 0);
	q[0].path_len = 0;
	assert_int_equal(tp_json_lookup("{}", 2, q, 1), -EINVAL);
	q[0].path_len = TP_JSON_PATH_MAX + 1;
	assert_int_equal(tp_json_lookup("{}", 2, q, 1), -EINVAL);
	q[0].path_len = 1;
	q[0].size = 0;
	assert_int_equal(tp_json_lookup("{}", 2, q, 1), -EINVAL);
}

/* ------------------------------------------- the runtimes' files, as laid out */

static void assert_meta(const struct tp_k8s_meta *m, const char *pod, const char *ns,
			const char *container, const char *uid)
{
	assert_string_equal(m->value[TP_K8S_POD_NAME], pod);
	assert_string_equal(m->value[TP_K8S_NAMESPACE], ns);
	assert_string_equal(m->value[TP_K8S_CONTAINER_NAME], container);
	assert_string_equal(m->value[TP_K8S_POD_UID], uid);
}

static void k8s_containerd_bundle(void **state)
{
	struct tp_k8s_meta m;

	assert_int_equal(tp_k8s_read(FIXTURES, CRI, &m), 0);
	assert_meta(&m, "checkout-7d9f8b6c5-x2k4q", "shop", "checkout",
		    "6b3e0c1a-2f4d-4e5a-9b8c-7d6e5f4a3b2c");
	/* The root may end in '/', as "/" does. */
	assert_int_equal(tp_k8s_read(FIXTURES "//", CRI, &m), 0);
	assert_string_equal(m.value[TP_K8S_NAMESPACE], "shop");
}

/* containerd's sandbox (pause) container has a pod, and no container name. */
static void k8s_containerd_sandbox(void **state)
{
	struct tp_k8s_meta m;

	assert_int_equal(tp_k8s_read(FIXTURES, SANDBOX, &m), 0);
	assert_meta(&m, "checkout-7d9f8b6c5-x2k4q", "shop", "",
		    "6b3e0c1a-2f4d-4e5a-9b8c-7d6e5f4a3b2c");
}

/* k3s's embedded containerd keeps its bundles under /run/k3s/containerd. */
static void k8s_k3s_bundle(void **state)
{
	struct tp_k8s_meta m;

	assert_int_equal(tp_k8s_read(FIXTURES, K3S, &m), 0);
	assert_meta(&m, "sensor-gw-5b7c9d8f6-k3z9p", "edge", "sensor-gw",
		    "a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d");
}

static void k8s_crio_userdata(void **state)
{
	struct tp_k8s_meta m;

	assert_int_equal(tp_k8s_read(FIXTURES, CRIO, &m), 0);
	assert_meta(&m, "ingest-0", "telemetry", "ingest", "1a2b3c4d-5e6f-7a8b-9c0d-1e2f3a4b5c6d");
}

static void k8s_docker_labels(void **state)
{
	struct tp_k8s_meta m;

	assert_int_equal(tp_k8s_read(FIXTURES, DOCKER, &m), 0);
	assert_meta(&m, "web-5c8f7b9d4-q7zr2", "default", "nginx",
		    "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0");
}

static void k8s_unknown_container(void **state)
{
	struct tp_k8s_meta m;

	assert_int_equal(tp_k8s_read(FIXTURES, OTHER, &m), -ENOENT);
	assert_meta(&m, "", "", "", "");
	/* An id that is not 64 lower-case hex digits never makes a path. */
	assert_int_equal(tp_k8s_read(FIXTURES, "../../../../etc/passwd", &m), -EINVAL);
	assert_int_equal(tp_k8s_read(FIXTURES, "0123456789ABCDEF0123456789abcdef0123456789abcdef"
					       "0123456789abcdef", &m), -EINVAL);
	assert_int_equal(tp_k8s_read(FIXTURES, CRI "0", &m), -EINVAL);
}

/* A node's root in a temporary directory, for files the tests make. */
struct node {
	char root[64];
};

static int node_setup(void **state)
{
	struct node *n = calloc(1, sizeof(*n));

	assert_non_null(n);
	strcpy(n->root, "/tmp/taproot-k8s-XXXXXX");
	assert_non_null(mkdtemp(n->root));
	*state = n;
	return 0;
}

static int node_teardown(void **state)
{
	struct node *n = *state;
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", n->root);
	assert_int_equal(system(cmd), 0);
	free(n);
	return 0;
}

/* The path of @id's @file in the runtime's @dir under @n, its directories made. */
static void node_path(const struct node *n, const char *dir, const char *id, const char *file,
		      char *path, size_t len)
{
	char cmd[PATH_MAX + 32];

	snprintf(path, len, "%s%s%s/%s", n->root, dir, id, file);
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", path);
	assert_int_equal(system(cmd), 0);
}

static void write_file(const char *path, const char *text, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, len), (ssize_t)len);
	close(fd);
}

static void node_file(const struct node *n, const char *text)
{
	char path[PATH_MAX];

	node_path(n, CONTAINERD_DIR, OTHER, "config.json", path, sizeof(path));
	write_file(path, text, strlen(text));
}

static void k8s_symlink_refused(void **state)
{
	struct node *n = *state;
	char path[PATH_MAX], target[PATH_MAX];
	struct tp_k8s_meta m;

	node_path(n, CONTAINERD_DIR, OTHER, "config.json", path, sizeof(path));
	assert_non_null(realpath(FIXTURES CONTAINERD_DIR CRI "/config.json", target));
	assert_int_equal(symlink(target, path), 0);
	assert_int_equal(tp_k8s_read(n->root, OTHER, &m), -ELOOP);
	assert_meta(&m, "", "", "", "");
}

static void k8s_not_regular_refused(void **state)
{
	struct node *n = *state;
	char path[PATH_MAX];
	struct tp_k8s_meta m;

	node_path(n, CRIO_DIR, OTHER, "userdata/config.json", path, sizeof(path));
	/* A FIFO: opened without blocking, and refused. */
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(tp_k8s_read(n->root, OTHER, &m), -EINVAL);
	unlink(path);
	assert_int_equal(mkdir(path, 0700), 0);
	assert_int_equal(tp_k8s_read(n->root, OTHER, &m), -EINVAL);
}

static void k8s_oversized_refused(void **state)
{
	static const char doc[] = "{\"annotations\":{\"io.kubernetes.cri.sandbox-namespace\":"
				  "\"big\"}}";
	struct node *n = *state;
	char path[PATH_MAX], *text = malloc(TP_K8S_FILE_MAX + 1);
	struct tp_k8s_meta m;

	assert_non_null(text);
	node_path(n, CONTAINERD_DIR, OTHER, "config.json", path, sizeof(path));
	/* Exactly the bound, white space after the document: read. */
	memset(text, ' ', TP_K8S_FILE_MAX + 1);
	memcpy(text, doc, strlen(doc));
	write_file(path, text, TP_K8S_FILE_MAX);
	assert_int_equal(tp_k8s_read(n->root, OTHER, &m), 0);
	assert_string_equal(m.value[TP_K8S_NAMESPACE], "big");
	/* A byte more: refused, not cut. */
	write_file(path, text, TP_K8S_FILE_MAX + 1);
	assert_int_equal(tp_k8s_read(n->root, OTHER, &m), -EFBIG);
	assert_meta(&m, "", "", "", "");
	free(text);
}

static void k8s_malformed_refused(void **state)
{
	struct node *n = *state;
	struct tp_k8s_meta m;

	/* Valid up to a value of a member that is not asked for. */
	node_file(n, "{\"annotations\":{\"io.kubernetes.cri.sandbox-name\":\"web\","
		     "\"x\":[1,2,}}");
	assert_int_equal(tp_k8s_read(n->root, OTHER, &m), -TAPROOT_EPROTO);
	assert_meta(&m, "", "", "", "");
	node_file(n, "");
	assert_int_equal(tp_k8s_read(n->root, OTHER, &m), -TAPROOT_EPROTO);
}

/* Values that may not be labels are left out; the others kept. */
static void k8s_hostile_values_left_out(void **state)
{
	struct node *n = *state;
	char text[1024], longname[TP_K8S_VALUE_MAX + 1];
	struct tp_k8s_meta m;

	memset(longname, 'p', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	snprintf(text, sizeof(text),
		 "{\"annotations\":{\"io.kubernetes.cri.sandbox-name\":\"%s\","
		 "\"io.kubernetes.cri.sandbox-namespace\":\"evil\\nnamespace=\\\"x\\\"\","
		 "\"io.kubernetes.cri.container-name\":[\"app\"],"
		 "\"io.kubernetes.cri.sandbox-uid\":\"\\u00fcid\"}}", longname);
	node_file(n, text);
	assert_int_equal(tp_k8s_read(n->root, OTHER, &m), 0);
	assert_meta(&m, "", "", "", "\xc3\xbcid");
	/* One byte shorter: the longest name kept. */
	longname[TP_K8S_VALUE_MAX - 1] = '\0';
	snprintf(text, sizeof(text),
		 "{\"annotations\":{\"io.kubernetes.cri.sandbox-name\":\"%s\"}}", longname);
	node_file(n, text);
	assert_int_equal(tp_k8s_read(n->root, OTHER, &m), 0);
	assert_string_equal(m.value[TP_K8S_POD_NAME], longname);
}

/* A container that is not Kubernetes': its runtime answers, with nothing. */
static void k8s_plain_container_has_none(void **state)
{
	struct node *n = *state;
	char path[PATH_MAX];
	static const char doc[] =
		"{\"State\":{\"Running\":true,\"Pid\":4242},\"ID\":\"" OTHER "\","
		"\"Config\":{\"Hostname\":\"0000000000aa\",\"Labels\":{\"maintainer\":\"x\"}},"
		"\"Name\":\"/happy_turing\"}";
	struct tp_k8s_meta m;

	node_path(n, DOCKER_DIR, OTHER, "config.v2.json", path, sizeof(path));
	write_file(path, doc, strlen(doc));
	assert_int_equal(tp_k8s_read(n->root, OTHER, &m), 0);
	assert_meta(&m, "", "", "", "");
}

/* ------------------------------------------------------------- the cache */

static void k8s_cache_reads_a_container_once(void **state)
{
	struct tp_k8s_cache c;
	const struct tp_k8s_meta *m;

	assert_int_equal(tp_k8s_cache_init(&c, FIXTURES, 8), 0);
	for (int i = 0; i < 3; i++) {
		m = tp_k8s_lookup(&c, CRIO, 1000 + (uint64_t)i * 100000);
		assert_non_null(m);
		assert_string_equal(m->value[TP_K8S_POD_NAME], "ingest-0");
	}
	assert_int_equal(c.stats.reads, 1);
	assert_int_equal(c.stats.hits, 2);
	/* An id of another form is neither read nor kept. */
	assert_null(tp_k8s_lookup(&c, "../" CRIO, 1000));
	assert_int_equal(c.nr, 1);
	tp_k8s_cache_fini(&c);
}

/* A miss is asked again after TP_K8S_MISS_MS: a file that appears is seen. */
static void k8s_cache_miss_expires(void **state)
{
	struct node *n = *state;
	struct tp_k8s_cache c;
	const struct tp_k8s_meta *m;

	assert_int_equal(tp_k8s_cache_init(&c, n->root, 8), 0);
	m = tp_k8s_lookup(&c, OTHER, 5000);
	assert_string_equal(m->value[TP_K8S_NAMESPACE], "");
	node_file(n, "{\"annotations\":{\"io.kubernetes.cri.sandbox-namespace\":\"late\"}}");
	m = tp_k8s_lookup(&c, OTHER, 5000 + TP_K8S_MISS_MS - 1);
	assert_string_equal(m->value[TP_K8S_NAMESPACE], "");
	assert_int_equal(c.stats.reads, 1);
	m = tp_k8s_lookup(&c, OTHER, 5000 + TP_K8S_MISS_MS);
	assert_string_equal(m->value[TP_K8S_NAMESPACE], "late");
	assert_int_equal(c.stats.reads, 2);
	assert_int_equal(c.nr, 1);
	/* An answer is kept: the file gone, the cache still says it. */
	node_file(n, "{}");
	m = tp_k8s_lookup(&c, OTHER, 5000 + 100 * TP_K8S_MISS_MS);
	assert_string_equal(m->value[TP_K8S_NAMESPACE], "late");
	assert_int_equal(c.stats.reads, 2);
	tp_k8s_cache_fini(&c);
}

static void k8s_cache_evicts_least_recently_used(void **state)
{
	struct tp_k8s_cache c;
	const struct tp_k8s_meta *m;

	assert_int_equal(tp_k8s_cache_init(&c, FIXTURES, 2), 0);
	tp_k8s_lookup(&c, CRI, 1);
	tp_k8s_lookup(&c, CRIO, 2);
	tp_k8s_lookup(&c, CRI, 3);		/* CRIO is now the least recently used */
	m = tp_k8s_lookup(&c, DOCKER, 4);
	assert_string_equal(m->value[TP_K8S_CONTAINER_NAME], "nginx");
	assert_int_equal(c.nr, 2);
	assert_int_equal(c.stats.evicted, 1);
	assert_int_equal(c.stats.reads, 3);
	m = tp_k8s_lookup(&c, CRI, 5);
	assert_string_equal(m->value[TP_K8S_CONTAINER_NAME], "checkout");
	assert_int_equal(c.stats.reads, 3);
	m = tp_k8s_lookup(&c, CRIO, 6);
	assert_string_equal(m->value[TP_K8S_CONTAINER_NAME], "ingest");
	assert_int_equal(c.stats.reads, 4);
	assert_int_equal(c.nr, 2);
	tp_k8s_cache_fini(&c);
	assert_int_equal(tp_k8s_cache_init(&c, FIXTURES, 0), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(json_values_by_path),
		cmocka_unit_test(json_several_queries_one_pass),
		cmocka_unit_test(json_escapes_decoded),
		cmocka_unit_test(json_control_characters_refused),
		cmocka_unit_test(json_value_too_long_left_out),
		cmocka_unit_test(json_duplicate_key_last_wins),
		cmocka_unit_test(json_malformed_refused),
		cmocka_unit_test(json_every_prefix_refused),
		cmocka_unit_test(json_depth_limited),
		cmocka_unit_test(json_bad_queries_refused),
		cmocka_unit_test(k8s_containerd_bundle),
		cmocka_unit_test(k8s_containerd_sandbox),
		cmocka_unit_test(k8s_k3s_bundle),
		cmocka_unit_test(k8s_crio_userdata),
		cmocka_unit_test(k8s_docker_labels),
		cmocka_unit_test(k8s_unknown_container),
		cmocka_unit_test_setup_teardown(k8s_symlink_refused, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(k8s_not_regular_refused, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(k8s_oversized_refused, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(k8s_malformed_refused, node_setup, node_teardown),
		cmocka_unit_test_setup_teardown(k8s_hostile_values_left_out, node_setup,
						node_teardown),
		cmocka_unit_test_setup_teardown(k8s_plain_container_has_none, node_setup,
						node_teardown),
		cmocka_unit_test(k8s_cache_reads_a_container_once),
		cmocka_unit_test_setup_teardown(k8s_cache_miss_expires, node_setup, node_teardown),
		cmocka_unit_test(k8s_cache_evicts_least_recently_used),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
