// SPDX-License-Identifier: GPL-2.0
/*
 * What a process belongs to, from /proc/PID/cgroup: its control group, the
 * systemd unit it runs in and the container it is part of, and from those
 * the service name profiles are stored under.
 *
 * /proc/PID/cgroup has a line per hierarchy, "ID:CONTROLLERS:PATH": on
 * cgroup v2 one line "0::PATH"; on v1 one per mounted hierarchy
 * ("4:pids:PATH", "1:name=systemd:PATH"); in systemd's hybrid mode both.
 * Container runtimes name the cgroup of a container after its 64-hex-digit
 * id: a directory of its own ("/docker/ID", "/kubepods/.../ID" with the
 * cgroupfs driver) or a systemd scope ("docker-ID.scope",
 * "cri-containerd-ID.scope", "crio-ID.scope", "libpod-ID.scope"; podman's
 * --cgroups=split puts "libpod-payload-ID" in the unit that ran it).
 *
 * The process model reads both files of a process with its maps, once and
 * again after an exec (tp_proc_read_labels()): a process that moves to
 * another cgroup keeps the labels it had. A container's Kubernetes pod
 * comes from its runtime's files (k8s.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "process/process-private.h"
#include "util/clock.h"
#include "util/util.h"

#define TP_CONTAINER_ID_LEN	64

/* Scope prefixes of container runtimes under systemd (and podman's v1 one). */
static const char *const tp_container_prefixes[] = {
	"docker-", "cri-containerd-", "crio-", "libpod-", "libpod-payload-",
};

static bool tp_is_hex_id(const char *s, size_t n)
{
	size_t i;

	if (n != TP_CONTAINER_ID_LEN)
		return false;
	for (i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

static bool tp_has_suffix(const char *s, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);

	return n >= k && !memcmp(s + n - k, suffix, k);
}

/*
 * The container id that names the path component @c (@n bytes), or NULL.
 * cri-o's "crio-conmon-ID.scope" is its monitor, not the container: it has
 * no id of this form after the prefix.
 */
static const char *tp_component_container(const char *c, size_t n)
{
	size_t i, k;

	if (tp_has_suffix(c, n, ".scope"))
		n -= strlen(".scope");
	if (tp_is_hex_id(c, n))
		return c;
	for (i = 0; i < sizeof(tp_container_prefixes) / sizeof(tp_container_prefixes[0]); i++) {
		k = strlen(tp_container_prefixes[i]);
		if (n > k && !memcmp(c, tp_container_prefixes[i], k) && tp_is_hex_id(c + k, n - k))
			return c + k;
	}
	return NULL;
}

/* A systemd unit that processes run in: a service or a scope. */
static bool tp_component_unit(const char *c, size_t n)
{
	return tp_has_suffix(c, n, ".service") || tp_has_suffix(c, n, ".scope");
}

/* The deepest container id in @path (@n bytes), when @cg has none yet. */
static void tp_cgroup_find_container(const char *path, size_t n, struct taproot_cgroup *cg)
{
	const char *c = path, *end = path + n, *id, *found = NULL;
	size_t len;

	while (c < end) {
		const char *slash = memchr(c, '/', (size_t)(end - c));

		len = (size_t)((slash ? slash : end) - c);
		id = tp_component_container(c, len);
		if (id)
			found = id;
		c += len + 1;
	}
	if (found && !cg->container_id[0])
		memcpy(cg->container_id, found, TP_CONTAINER_ID_LEN);
}

/* The deepest unit of @cg->path that is not a container's scope. */
static void tp_cgroup_find_unit(struct taproot_cgroup *cg)
{
	const char *c = cg->path, *end = c + strlen(c), *unit = NULL;
	size_t len, unit_len = 0;

	while (c < end) {
		const char *slash = memchr(c, '/', (size_t)(end - c));

		len = (size_t)((slash ? slash : end) - c);
		if (tp_component_unit(c, len) && !tp_component_container(c, len))
			unit = c, unit_len = len;
		c += len + 1;
	}
	if (unit && unit_len < sizeof(cg->unit))
		memcpy(cg->unit, unit, unit_len);
}

/*
 * Split the line @s (@n bytes, no newline) into its hierarchy id's
 * emptiness, controllers and path. False when it is not of the form.
 */
static bool tp_cgroup_line(const char *s, size_t n, bool *v2, const char **ctl,
			   size_t *ctl_len, const char **path, size_t *path_len)
{
	const char *c1 = memchr(s, ':', n), *c2;

	if (!c1 || c1 == s)
		return false;
	c2 = memchr(c1 + 1, ':', (size_t)(s + n - c1 - 1));
	if (!c2 || c2 + 1 == s + n || c2[1] != '/')
		return false;
	*v2 = c1 - s == 1 && s[0] == '0' && c2 == c1 + 1;
	*ctl = c1 + 1;
	*ctl_len = (size_t)(c2 - c1 - 1);
	*path = c2 + 1;
	*path_len = (size_t)(s + n - c2 - 1);
	return true;
}

static void tp_cgroup_set_path(struct taproot_cgroup *cg, const char *path, size_t n)
{
	snprintf(cg->path, sizeof(cg->path), "%.*s", (int)n, path);
}

int taproot_cgroup_parse(const char *text, size_t len, struct taproot_cgroup *cg)
{
	const char *s = text, *end = text + len, *ctl, *path;
	size_t ctl_len, path_len, lines = 0;
	int rank = 0;	/* of the path kept: 3 v2, 2 name=systemd, 1 another */
	bool v2;

	memset(cg, 0, sizeof(*cg));
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t n = (size_t)((nl ? nl : end) - s);

		lines++;
		if (!tp_cgroup_line(s, n, &v2, &ctl, &ctl_len, &path, &path_len))
			return tp_err(-TAPROOT_EPROTO, "cgroup line %zu is not ID:CONTROLLERS:/PATH",
				      lines);
		if (v2 && rank < 3)
			rank = 3, tp_cgroup_set_path(cg, path, path_len);
		else if (ctl_len == 12 && !memcmp(ctl, "name=systemd", 12) && rank < 2)
			rank = 2, tp_cgroup_set_path(cg, path, path_len);
		else if (!rank)
			rank = 1, tp_cgroup_set_path(cg, path, path_len);
		/* Every hierarchy: a v1 container may show its id in some only. */
		tp_cgroup_find_container(path, path_len, cg);
		s += n + 1;
	}
	if (!lines)
		return tp_err(-TAPROOT_EPROTO, "cgroup: empty");
	tp_cgroup_find_unit(cg);
	return 0;
}

/* systemd's per-user manager: it holds a user's units, it is none of them. */
static bool tp_unit_is_user_manager(const char *unit)
{
	return !strncmp(unit, "user@", 5);
}

size_t taproot_service_name(const struct taproot_cgroup *cg, const char *exe,
			    char *buf, size_t len)
{
	const char *base = exe ? strrchr(exe, '/') : NULL;
	size_t n = strlen(cg->unit);
	/*
	 * A container seen only in v1 hierarchies while the unified one
	 * shows a service is not in that service: in systemd's hybrid mode,
	 * docker's cgroupfs driver leaves it in containerd.service there.
	 */
	bool in_unit = !cg->container_id[0] || strstr(cg->path, cg->container_id);

	if (tp_has_suffix(cg->unit, n, ".service") && !tp_unit_is_user_manager(cg->unit) &&
	    in_unit)
		return (size_t)snprintf(buf, len, "%.*s", (int)(n - strlen(".service")), cg->unit);
	if (cg->container_id[0])
		return (size_t)snprintf(buf, len, "%.12s", cg->container_id);
	return (size_t)snprintf(buf, len, "%s", base ? base + 1 : exe ? exe : "");
}

/* ------------------------------------------------- labels of a process */

struct tp_labels *taproot_proc_labels(const struct taproot_proc *proc)
{
	return proc->labels;
}

void tp_proc_free_labels(struct taproot_proc *p)
{
	tp_labels_put(p->labels);
	p->labels = NULL;
	p->labels_read = false;
}

/* /proc/PID/exe's target into @buf (@len bytes), without " (deleted)"; "" unknown. */
static void tp_read_exe(struct taproot_proc *p, int dirfd, char *buf, size_t len)
{
	static const char deleted[] = " (deleted)";
	ssize_t n = readlinkat(dirfd, "exe", buf, len - 1);
	int err = n < 0 ? -errno : 0;

	tp_observe(p->procs, p->pid, TAPROOT_PROC_EXE, err, buf, n < 0 ? 0 : (size_t)n);
	if (n < 0 || (size_t)n == len - 1)
		n = 0;		/* unknown, or cut */
	buf[n] = '\0';
	if ((size_t)n > strlen(deleted) && !strcmp(buf + n - strlen(deleted), deleted))
		buf[n - strlen(deleted)] = '\0';
}

/* /proc/PID/cgroup into @cg; all "" when unread or not understood. */
static void tp_read_cgroup(struct taproot_proc *p, int dirfd, struct taproot_cgroup *cg)
{
	char text[TAPROOT_CGROUP_TEXT_MAX];
	ssize_t n = tp_read_at(dirfd, "cgroup", text, sizeof(text));

	tp_observe(p->procs, p->pid, TAPROOT_PROC_CGROUP, n < 0 ? (int)n : 0, text,
		   n < 0 ? 0 : (size_t)n);
	if (n <= 0 || taproot_cgroup_parse(text, (size_t)n, cg) < 0)
		memset(cg, 0, sizeof(*cg));
}

/* The cgroup's and exe's five, then the k8s_* ones in enum tp_k8s_field's order. */
#define NR_OWN	(TAPROOT_PROC_NR_LABEL_KEYS - TP_K8S_NR_FIELDS)

const char *const taproot_proc_label_keys[TAPROOT_PROC_NR_LABEL_KEYS] = {
	"service_name", "systemd_unit", "container_id", "cgroup", "exe",
	[NR_OWN + TP_K8S_POD_NAME] = "k8s_pod_name",
	[NR_OWN + TP_K8S_NAMESPACE] = "k8s_namespace",
	[NR_OWN + TP_K8S_CONTAINER_NAME] = "k8s_container_name",
	[NR_OWN + TP_K8S_POD_UID] = "k8s_pod_uid",
};

int tp_proc_read_labels(struct taproot_proc *p, int dirfd)
{
	const char *const *keys = taproot_proc_label_keys;
	const struct tp_k8s_meta *k8s = NULL;
	struct taproot_cgroup cg;
	char exe[PATH_MAX], service[TAPROOT_UNIT_NAME_MAX];
	const char *v[NR_OWN], *known_keys[TAPROOT_PROC_NR_LABEL_KEYS];
	const char *known[TAPROOT_PROC_NR_LABEL_KEYS];
	struct tp_labels *l = NULL;
	size_t n = 0, i;

	tp_read_cgroup(p, dirfd, &cg);
	tp_read_exe(p, dirfd, exe, sizeof(exe));
	taproot_service_name(&cg, exe, service, sizeof(service));
	v[0] = service, v[1] = cg.unit, v[2] = cg.container_id, v[3] = cg.path, v[4] = exe;
	for (i = 0; i < NR_OWN; i++) {
		if (v[i][0]) {
			known_keys[n] = keys[i];
			known[n++] = v[i];
		}
	}
	/* Without memory for the cache, the process goes without these only. */
	if (cg.container_id[0])
		k8s = tp_k8s_lookup(&p->procs->k8s, cg.container_id,
				    tp_clock_ms(CLOCK_MONOTONIC_COARSE));
	for (i = 0; k8s && i < TP_K8S_NR_FIELDS; i++) {
		if (k8s->value[i][0]) {
			known_keys[n] = keys[NR_OWN + i];
			known[n++] = k8s->value[i];
		}
	}
	if (n && !(l = tp_labels_new(known_keys, known, n)))
		return -ENOMEM;
	tp_proc_free_labels(p);
	p->labels = l;
	p->labels_read = true;
	return 0;
}
