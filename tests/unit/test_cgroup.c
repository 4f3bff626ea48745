// SPDX-License-Identifier: GPL-2.0
/*
 * What a process belongs to: /proc/PID/cgroup as each container runtime
 * and systemd write it, on cgroup v1, v2 and systemd's hybrid mode
 * (tests/unit/fixtures/cgroup/), its unit, container and service name;
 * malformed text refused; this process's own file parsed.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "process/process.h"
#include "util/error.h"

#define FIXTURES "tests/unit/fixtures/cgroup/"
#define DOCKER "3f4e5a6b7c8d9e0f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f7081"
#define CRI "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define CRIO "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"
#define PODMAN "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90"

struct expect {
	const char *file;
	const char *path, *unit, *container_id, *service;
};

/* The executable every case is named after when nothing else names it. */
#define EXE "/usr/bin/worker"

static const struct expect cases[] = {
	{ "v2-service.txt", "/system.slice/nginx.service", "nginx.service", "", "nginx" },
	{ "v2-session.txt", "/user.slice/user-1000.slice/session-2.scope", "session-2.scope",
	  "", "worker" },
	{ "v2-user-service.txt",
	  "/user.slice/user-1000.slice/user@1000.service/app.slice/pipewire.service",
	  "pipewire.service", "", "pipewire" },
	{ "v2-docker.txt", "/system.slice/docker-" DOCKER ".scope", "", DOCKER, "3f4e5a6b7c8d" },
	{ "v2-containerd-cri.txt",
	  "/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod6b3e0c1a_2f4d_4e5a_9b8c_"
	  "7d6e5f4a3b2c.slice/cri-containerd-" CRI ".scope", "", CRI, "0123456789ab" },
	{ "v2-crio.txt",
	  "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod1a2b3c4d_5e6f_7a8b_"
	  "9c0d_1e2f3a4b5c6d.slice/crio-" CRIO ".scope", "", CRIO, "fedcba987654" },
	/* cri-o's monitor is not the container. */
	{ "v2-crio-conmon.txt",
	  "/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod1a2b3c4d_5e6f_7a8b_"
	  "9c0d_1e2f3a4b5c6d.slice/crio-conmon-" CRIO ".scope", "crio-conmon-" CRIO ".scope", "",
	  "worker" },
	/* Rootless podman: the user's manager is no service of its own. */
	{ "v2-podman-rootless.txt",
	  "/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" PODMAN
	  ".scope/container", "user@1000.service", PODMAN, "a1b2c3d4e5f6" },
	/* Hybrid: the container is docker's, whatever the unified tree shows. */
	{ "v1-docker-hybrid.txt", "/system.slice/containerd.service", "containerd.service",
	  DOCKER, "3f4e5a6b7c8d" },
	{ "v1-containerd-cri.txt",
	  "/kubepods/burstable/pod6b3e0c1a-2f4d-4e5a-9b8c-7d6e5f4a3b2c/" CRI, "", CRI,
	  "0123456789ab" },
	{ "v1-podman.txt", "/machine.slice/libpod-" PODMAN ".scope", "", PODMAN, "a1b2c3d4e5f6" },
	{ "v1-service-hybrid.txt", "/system.slice/ssh.service", "ssh.service", "", "ssh" },
	/* v1 without systemd's hierarchy: the first line's path. */
	{ "v1-docker-no-systemd.txt", "/docker/" DOCKER, "", DOCKER, "3f4e5a6b7c8d" },
};

/* The whole of @path (a /proc file too: read to its end, not by its size). */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 65536);
	size_t n;

	assert_non_null(f);
	assert_non_null(buf);
	n = fread(buf, 1, 65535, f);
	assert_true(feof(f));
	fclose(f);
	*len = n;
	return buf;
}

static void cgroup_fixtures_of_each_runtime(void **state)
{
	struct taproot_cgroup cg;
	char path[256], name[64];
	size_t i, len;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct expect *e = &cases[i];
		char *text;

		snprintf(path, sizeof(path), FIXTURES "%s", e->file);
		text = slurp(path, &len);
		print_message("%s\n", e->file);
		assert_int_equal(taproot_cgroup_parse(text, len, &cg), 0);
		assert_string_equal(cg.path, e->path);
		assert_string_equal(cg.unit, e->unit);
		assert_string_equal(cg.container_id, e->container_id);
		assert_int_equal(taproot_service_name(&cg, EXE, name, sizeof(name)),
				 strlen(e->service));
		assert_string_equal(name, e->service);
		free(text);
	}
}

/* A service that runs a container (podman --cgroups=split) names it. */
static void cgroup_service_running_a_container(void **state)
{
	static const char text[] = "0::/system.slice/myapp.service/libpod-payload-" PODMAN "\n";
	struct taproot_cgroup cg;
	char name[64];

	assert_int_equal(taproot_cgroup_parse(text, strlen(text), &cg), 0);
	assert_string_equal(cg.unit, "myapp.service");
	assert_string_equal(cg.container_id, PODMAN);
	taproot_service_name(&cg, EXE, name, sizeof(name));
	assert_string_equal(name, "myapp");
}

static void cgroup_malformed_refused(void **state)
{
	static const char *const bad[] = {
		"",				/* nothing */
		"garbage\n",			/* no fields */
		"0::relative/path\n",		/* not a path */
		"4:pids\n",			/* no path */
		":pids:/a\n",			/* no hierarchy id */
		"0::/ok\n4:pids:\n",		/* a bad second line */
		"0::\n",			/* empty path */
	};
	struct taproot_cgroup cg;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int err = taproot_cgroup_parse(bad[i], strlen(bad[i]), &cg);

		print_message("'%s' -> %s\n", bad[i], taproot_errmsg(err));
		assert_int_equal(err, -TAPROOT_EPROTO);
	}
	/* Without the trailing newline, and not NUL-terminated. */
	assert_int_equal(taproot_cgroup_parse("0::/a.service/xyz", 13, &cg), 0);
	assert_string_equal(cg.path, "/a.service");
	assert_string_equal(cg.unit, "a.service");
}

/* A path longer than the field is cut; what it names is still found. */
static void cgroup_long_path_cut(void **state)
{
	char text[TAPROOT_CGROUP_PATH_MAX * 2 + 128], name[64];
	struct taproot_cgroup cg;
	size_t n = 0;

	n += (size_t)snprintf(text + n, sizeof(text) - n, "0::");
	while (n < TAPROOT_CGROUP_PATH_MAX + 16)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "/deep.slice");
	n += (size_t)snprintf(text + n, sizeof(text) - n, "/docker-" DOCKER ".scope\n");
	assert_int_equal(taproot_cgroup_parse(text, n, &cg), 0);
	assert_int_equal(strlen(cg.path), TAPROOT_CGROUP_PATH_MAX - 1);
	assert_string_equal(cg.container_id, DOCKER);
	taproot_service_name(&cg, NULL, name, sizeof(name));
	assert_string_equal(name, "3f4e5a6b7c8d");
	/* A name cut to the buffer; the whole length returned. */
	assert_int_equal(taproot_service_name(&cg, NULL, name, 5), 12);
	assert_string_equal(name, "3f4e");
}

static void cgroup_of_this_process(void **state)
{
	struct taproot_cgroup cg;
	char *text;
	size_t len;

	text = slurp("/proc/self/cgroup", &len);
	assert_int_equal(taproot_cgroup_parse(text, len, &cg), 0);
	assert_true(cg.path[0] == '/');
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(cgroup_fixtures_of_each_runtime),
		cmocka_unit_test(cgroup_service_running_a_container),
		cmocka_unit_test(cgroup_malformed_refused),
		cmocka_unit_test(cgroup_long_path_cut),
		cmocka_unit_test(cgroup_of_this_process),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
