// SPDX-License-Identifier: GPL-2.0
/*
 * The Kubernetes pod a container belongs to, from the container runtime's
 * own files on the node, without asking the API server: the kubelet hands
 * every runtime the pod's name, namespace and uid and the container's name
 * through CRI, and each runtime keeps them with the container, under its
 * 64-hex-digit id (the one cgroup.c reads from /proc/PID/cgroup):
 *
 *   containerd (CRI plugin, namespace k8s.io): the OCI bundle's spec,
 *     /run/containerd/io.containerd.runtime.v2.task/k8s.io/ID/config.json,
 *     "annotations": io.kubernetes.cri.sandbox-name, -sandbox-namespace,
 *     -sandbox-uid, -container-name (none for the sandbox, the pause
 *     container, whose io.kubernetes.cri.container-type is "sandbox");
 *     k3s (and RKE2) embed containerd with its state under /run/k3s:
 *     /run/k3s/containerd/io.containerd.runtime.v2.task/k8s.io/ID/...;
 *   CRI-O: /run/containers/storage/overlay-containers/ID/userdata/config.json,
 *     "annotations": io.kubernetes.pod.name, .pod.namespace, .pod.uid,
 *     .container.name;
 *   Docker through cri-dockerd (or the old dockershim):
 *     /var/lib/docker/containers/ID/config.v2.json, "Config": {"Labels":
 *     ...} with the same four keys as CRI-O's (the sandbox's container
 *     name is "POD").
 *
 * The files are root's, but what they hold came from whoever created the
 * pod: each is read bounded (TP_K8S_FILE_MAX), not through a symbolic
 * link at its last component, only when it is a regular file, and its
 * JSON validated whole (lib/util/json.c); a value that is too long or
 * holds a control character is left out.
 *
 * What a container's file says does not change in its life (the runtime
 * writes it before the container's first process starts), and ids are not
 * reused, so an answer is kept until the cache evicts it (least recently
 * used, TP_K8S_CACHE_MAX containers). A miss (no runtime has the file, or
 * it could not be read) is kept TP_K8S_MISS_MS only: many processes of a
 * container that is not Kubernetes' then cost a read every so often, and a
 * file that appears later (or a runtime that finishes writing it) is seen
 * by the container's next new process.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "process/process-private.h"
#include "util/hash.h"
#include "util/json.h"
#include "util/util.h"

#define TP_K8S_PREFIX_MAX	2	/* keys above the fields: "Config", "Labels" */

/* containerd's CRI plugin, its state directory under ROOT @state. */
#define TP_K8S_CRI_PLUGIN(state)						\
	{									\
		state "/io.containerd.runtime.v2.task/k8s.io", "config.json",	\
		{ "annotations" }, 1, {						\
			[TP_K8S_POD_NAME] = "io.kubernetes.cri.sandbox-name",	\
			[TP_K8S_NAMESPACE] = "io.kubernetes.cri.sandbox-namespace", \
			[TP_K8S_CONTAINER_NAME] = "io.kubernetes.cri.container-name", \
			[TP_K8S_POD_UID] = "io.kubernetes.cri.sandbox-uid",	\
		},								\
	}

/* Where a runtime keeps a container: ROOT/dir/ID/file, the keys under @prefix. */
static const struct tp_k8s_runtime {
	const char *dir, *file;
	const char *prefix[TP_K8S_PREFIX_MAX];
	size_t prefix_len;
	const char *keys[TP_K8S_NR_FIELDS];
} tp_k8s_runtimes[TP_K8S_NR_RUNTIMES] = {
	[TP_K8S_CONTAINERD] = TP_K8S_CRI_PLUGIN("run/containerd"),
	[TP_K8S_K3S] = TP_K8S_CRI_PLUGIN("run/k3s/containerd"),
	[TP_K8S_CRIO] = {
		"run/containers/storage/overlay-containers", "userdata/config.json",
		{ "annotations" }, 1, {
			[TP_K8S_POD_NAME] = "io.kubernetes.pod.name",
			[TP_K8S_NAMESPACE] = "io.kubernetes.pod.namespace",
			[TP_K8S_CONTAINER_NAME] = "io.kubernetes.container.name",
			[TP_K8S_POD_UID] = "io.kubernetes.pod.uid",
		},
	},
	[TP_K8S_DOCKER] = {
		"var/lib/docker/containers", "config.v2.json",
		{ "Config", "Labels" }, 2, {
			[TP_K8S_POD_NAME] = "io.kubernetes.pod.name",
			[TP_K8S_NAMESPACE] = "io.kubernetes.pod.namespace",
			[TP_K8S_CONTAINER_NAME] = "io.kubernetes.container.name",
			[TP_K8S_POD_UID] = "io.kubernetes.pod.uid",
		},
	},
};

int tp_k8s_parse(enum tp_k8s_runtime_id rt, const char *doc, size_t len, struct tp_k8s_meta *m)
{
	const struct tp_k8s_runtime *r = &tp_k8s_runtimes[rt];
	const char *paths[TP_K8S_NR_FIELDS][TP_K8S_PREFIX_MAX + 1];
	struct tp_json_query q[TP_K8S_NR_FIELDS];
	int err;

	memset(m, 0, sizeof(*m));
	for (int f = 0; f < TP_K8S_NR_FIELDS; f++) {
		memcpy(paths[f], r->prefix, r->prefix_len * sizeof(r->prefix[0]));
		paths[f][r->prefix_len] = r->keys[f];
		q[f] = (struct tp_json_query){
			.path = paths[f], .path_len = r->prefix_len + 1,
			.out = m->value[f], .size = sizeof(m->value[f]),
		};
	}
	err = tp_json_lookup(doc, len, q, TP_K8S_NR_FIELDS);
	if (err) {
		memset(m, 0, sizeof(*m));
		return err;
	}
	/* tp_json_lookup() leaves "" where a value is missing or refused. */
	return 0;
}

/*
 * The file at @path into *@bufp (malloc'ed) and *@lenp: a regular file, not
 * a symbolic link, of at most TP_K8S_FILE_MAX bytes. 0 or -errno: -ENOENT
 * none, -ELOOP a link, -EINVAL not a regular file, -EFBIG too large.
 */
static int tp_k8s_read_file(const char *path, char **bufp, size_t *lenp)
{
	/* O_NONBLOCK: a FIFO put there must not stall the pipeline. */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	struct stat st;
	int err;

	*bufp = NULL;
	*lenp = 0;
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		err = -errno;
	else if (!S_ISREG(st.st_mode))
		err = -EINVAL;
	else if (st.st_size > TP_K8S_FILE_MAX)
		err = -EFBIG;
	else
		err = tp_read_fd(fd, TP_K8S_FILE_MAX + 1, bufp, lenp);
	close(fd);
	/* It grew past the bound while read. */
	if (!err && *lenp > TP_K8S_FILE_MAX)
		err = -EFBIG;
	if (err) {
		free(*bufp);
		*bufp = NULL;
		*lenp = 0;
	}
	return err;
}

/* The id goes into a path: 64 lower-case hex digits, nothing else. */
static bool tp_k8s_id_ok(const char *id)
{
	return strlen(id) == 64 && strspn(id, "0123456789abcdef") == 64;
}

int tp_k8s_read(const char *root, const char *id, struct tp_k8s_meta *m)
{
	size_t rlen = strlen(root);
	char path[4096], *buf;
	size_t len;
	int err;

	memset(m, 0, sizeof(*m));
	if (!tp_k8s_id_ok(id))
		return -EINVAL;
	while (rlen && root[rlen - 1] == '/')
		rlen--;
	for (int rt = 0; rt < TP_K8S_NR_RUNTIMES; rt++) {
		const struct tp_k8s_runtime *r = &tp_k8s_runtimes[rt];

		if ((size_t)snprintf(path, sizeof(path), "%.*s/%s/%s/%s", (int)rlen, root,
				     r->dir, id, r->file) >= sizeof(path))
			return -ENAMETOOLONG;
		err = tp_k8s_read_file(path, &buf, &len);
		if (err == -ENOENT || err == -ENOTDIR)
			continue;	/* not this runtime's */
		if (err)
			return err;
		err = tp_k8s_parse(rt, buf, len, m);
		free(buf);
		return err;
	}
	return -ENOENT;
}

/* ------------------------------------------------------------- the cache */

struct tp_k8s_entry {
	struct tp_lru_node lru;			/* in tp_k8s_cache.lru */
	uint64_t hash;				/* of id */
	uint64_t expires_ms;			/* a miss's end; 0: an answer, kept */
	char id[65];
	struct tp_k8s_meta meta;		/* all "" for a miss */
};

int tp_k8s_cache_init(struct tp_k8s_cache *c, const char *root, size_t max)
{
	memset(c, 0, sizeof(*c));
	if (!max)
		return tp_err(-EINVAL, "kubernetes metadata: the cache needs room for one");
	c->root = strdup(root);
	if (!c->root)
		return tp_err(-ENOMEM, NULL);
	c->max = max;
	return 0;
}

void tp_k8s_cache_fini(struct tp_k8s_cache *c)
{
	while (c->lru.head) {
		struct tp_k8s_entry *e = tp_lru_entry(c->lru.head, struct tp_k8s_entry, lru);

		tp_lru_unlink(&c->lru, &e->lru);
		free(e);
	}
	free(c->root);
	memset(c, 0, sizeof(*c));
}

/*
 * The entry of @id, or NULL. A list scan: the cache is asked once per
 * process read (its first, and after an exec), beside a handful of
 * system calls on /proc/PID, and holds at most TP_K8S_CACHE_MAX entries,
 * most recently used first; the hash spares the string compares.
 */
static struct tp_k8s_entry *tp_k8s_find(struct tp_k8s_cache *c, const char *id, uint64_t hash)
{
	for (struct tp_lru_node *n = c->lru.head; n; n = n->next) {
		struct tp_k8s_entry *e = tp_lru_entry(n, struct tp_k8s_entry, lru);

		if (e->hash == hash && !strcmp(e->id, id))
			return e;
	}
	return NULL;
}

const struct tp_k8s_meta *tp_k8s_lookup(struct tp_k8s_cache *c, const char *id,
					uint64_t now_ms)
{
	uint64_t hash;
	struct tp_k8s_entry *e;
	int err;

	if (!tp_k8s_id_ok(id))
		return NULL;
	hash = tp_hash_bytes(id, strlen(id));
	e = tp_k8s_find(c, id, hash);
	if (e && (!e->expires_ms || now_ms < e->expires_ms)) {
		tp_lru_touch(&c->lru, &e->lru);
		c->stats.hits++;
		return &e->meta;
	}
	if (!e && c->nr < c->max) {
		e = malloc(sizeof(*e));
		if (!e)
			return NULL;
		c->nr++;
	} else if (!e) {
		/* Full: the least recently used one makes room. */
		e = tp_lru_entry(c->lru.tail, struct tp_k8s_entry, lru);
		tp_lru_unlink(&c->lru, &e->lru);
		c->stats.evicted++;
	} else {
		tp_lru_unlink(&c->lru, &e->lru);	/* a miss that expired: ask again */
	}
	e->hash = hash;
	snprintf(e->id, sizeof(e->id), "%s", id);
	err = tp_k8s_read(c->root, id, &e->meta);
	c->stats.reads++;
	e->expires_ms = err ? now_ms + TP_K8S_MISS_MS : 0;
	if (err && err != -ENOENT)
		c->stats.refused++;
	tp_lru_push(&c->lru, &e->lru);
	return &e->meta;
}
