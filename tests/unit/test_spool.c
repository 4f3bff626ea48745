// SPDX-License-Identifier: GPL-2.0
/*
 * taprootd's push spool (ctl/daemon-spool.c) in a temporary directory:
 *  - two intervals of a kind begun within one second (a write that came
 *    late, then one on time) get two files: the second's UNTIL moves up,
 *    FROM stays the second its profile began in;
 *  - the names parse back to what was written, service by service;
 *  - spool_holds() keeps a local profile whose stamp lies in a spooled
 *    interval of its kind, even a stamp later than the interval's FROM;
 *  - the OTLP format's files end .otlp.gz, pprof's .pb.gz, and each name
 *    parses back to its format and service, even a service whose name
 *    ends as the other format's file does; an OTLP file is a request the
 *    real protoc decodes (tests/otlp/decode), its resource the service's;
 *    a killed writer's temporary files of either format are removed.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon.h"
#include "taproot.h"
#include "runcmd.h"

static const struct taproot_profile_frame f_main[] = {
	{ .function = "main", .mapping_path = "/bin/app", .address = 0x401000 },
};

/* A cpu profile with one sample of each of @nr services. */
static struct taproot_profile *profile(const char *const *services, size_t nr)
{
	struct taproot_profile_desc d;
	struct taproot_profile *p;

	taproot_profile_desc_cpu(&d, 99);
	assert_int_equal(taproot_profile_new(&d, &p), 0);
	for (size_t i = 0; i < nr; i++) {
		const struct taproot_profile_label l[] = {
			TAPROOT_LABEL_STR("service_name", services[i]),
		};
		const int64_t v[2] = { 1, 10000000 };

		assert_int_equal(taproot_profile_add(p, f_main, 1, l, 1, v), 0);
	}
	return p;
}

static void spool_same_second(void **state)
{
	static const char *const services[] = { "api", "db" };
	char tmpl[] = "/tmp/test_spool.XXXXXX", *dir = mkdtemp(tmpl);
	struct taproot_profile *p = profile(services, 2);
	struct spool_entry *v;
	uint64_t bytes;
	int count[2][2] = { { 0 } };	/* [cpu?][until - 1795732334], within 0..1 */
	long n;

	(void)state;
	assert_non_null(dir);
	assert_int_equal(spool_write(dir, p, "cpu", 1795732333, 1795732334, SPOOL_PPROF, "h"), 2);
	/* Begun in the same second, ended in the next: not the same files. */
	assert_int_equal(spool_write(dir, p, "cpu", 1795732333, 1795732334, SPOOL_PPROF, "h"), 2);
	assert_int_equal(spool_write(dir, p, "offcpu", 1795732333, 1795732334, SPOOL_PPROF, "h"), 2);
	n = spool_list(dir, &v, &bytes, true);
	assert_int_equal(n, 6);
	assert_true(bytes > 0);
	/* Of each (kind, until): a file per service. */
	for (long i = 0; i < n; i++) {
		int cpu = !strcmp(v[i].kind, "cpu");

		assert_int_equal(v[i].from, 1795732333);
		assert_true(!strcmp(v[i].service, "api") || !strcmp(v[i].service, "db"));
		assert_true(cpu || !strcmp(v[i].kind, "offcpu"));
		assert_true(v[i].until == 1795732334 || v[i].until == 1795732335);
		count[cpu][v[i].until - 1795732334]++;
	}
	assert_int_equal(count[1][0], 2);	/* cpu, until 334 */
	assert_int_equal(count[1][1], 2);	/* cpu, until 335: the second interval */
	assert_int_equal(count[0][0], 2);	/* offcpu, until 334: its kind's first */
	assert_int_equal(count[0][1], 0);
	/* Stamps: 333 for the first, 334 (the next second) for the second. */
	assert_true(spool_holds(v, (size_t)n, 1795732333, "cpu"));
	assert_true(spool_holds(v, (size_t)n, 1795732334, "cpu"));
	assert_false(spool_holds(v, (size_t)n, 1795732336, "cpu"));
	assert_false(spool_holds(v, (size_t)n, 1795732332, "offcpu"));
	assert_false(spool_holds(v, (size_t)n, 1795732333, "schedlat"));
	for (long i = 0; i < n; i++) {
		char path[1024];

		snprintf(path, sizeof(path), "%s/" DAEMON_SPOOL_DIR "/%s", dir, v[i].name);
		assert_int_equal(unlink(path), 0);
	}
	free(v);
	{
		char sp[1024];

		snprintf(sp, sizeof(sp), "%s/" DAEMON_SPOOL_DIR, dir);
		assert_int_equal(rmdir(sp), 0);
	}
	assert_int_equal(rmdir(dir), 0);
	taproot_profile_free(p);
}

/* The spool's files of @dir, listed, each removed; then the spool and @dir. */
static void spool_clear(const char *dir)
{
	struct spool_entry *v;
	uint64_t bytes;
	long n = spool_list(dir, &v, &bytes, false);
	char path[1024];

	assert_true(n >= 0);
	for (long i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/" DAEMON_SPOOL_DIR "/%s", dir, v[i].name);
		assert_int_equal(unlink(path), 0);
	}
	free(v);
	snprintf(path, sizeof(path), "%s/" DAEMON_SPOOL_DIR, dir);
	assert_int_equal(rmdir(path), 0);
	assert_int_equal(rmdir(dir), 0);
}

static void spool_formats(void **state)
{
	static const char *const services[] = { "api", "db.otlp", "web.pb" };
	char tmpl[] = "/tmp/test_spool.XXXXXX", *dir = mkdtemp(tmpl), path[1024];
	struct taproot_profile *p = profile(services, 3);
	struct spool_entry *v, e;
	int seen[2] = { 0 }, status, fd;
	uint64_t bytes;
	char *out;
	long n;

	(void)state;
	assert_non_null(dir);
	assert_int_equal(spool_format_of("otlp+http://c:4318"), SPOOL_OTLP);
	assert_int_equal(spool_format_of("https://store"), SPOOL_PPROF);
	assert_int_equal(spool_write(dir, p, "cpu", 1795732333, 1795732334, SPOOL_OTLP, "node-1"),
			 3);
	assert_int_equal(spool_write(dir, p, "cpu", 1795732340, 1795732341, SPOOL_PPROF, "node-1"),
			 3);
	/* A killed writer's temporary files: removed, of either format. */
	snprintf(path, sizeof(path), "%s/" DAEMON_SPOOL_DIR "/1795732350-1795732351.cpu.api"
		 ".otlp.gz.tmp.Ab12Cd", dir);
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	assert_true(fd >= 0);
	close(fd);
	n = spool_list(dir, &v, &bytes, true);
	assert_int_equal(n, 6);
	assert_int_equal(access(path, F_OK), -1);
	for (long i = 0; i < n; i++) {
		const char *end = v[i].format == SPOOL_OTLP ? ".otlp.gz" : ".pb.gz";
		size_t len = strlen(v[i].name);

		assert_string_equal(v[i].name + len - strlen(end), end);
		assert_int_equal(v[i].from, v[i].format == SPOOL_OTLP ? 1795732333 : 1795732340);
		seen[v[i].format]++;
		assert_true(spool_parse_name(v[i].name, &e));
		assert_string_equal(e.service, v[i].service);
		assert_int_equal(e.format, v[i].format);
		if (v[i].format != SPOOL_OTLP)
			continue;
		/* A request protoc decodes, whose resource is the service's. */
		out = run(&status, "tests/otlp/decode %s/" DAEMON_SPOOL_DIR "/%s 2>&1", dir,
			  v[i].name);
		assert_int_equal(status, 0);
		assert_non_null(strstr(out, "key: \"service.name\""));
		snprintf(path, sizeof(path), "string_value: \"%s\"", v[i].service);
		assert_non_null(strstr(out, path));
		assert_non_null(strstr(out, "string_value: \"node-1\""));
		assert_non_null(strstr(out, "string_value: \"linux\""));
		free(out);
	}
	assert_int_equal(seen[SPOOL_OTLP], 3);
	assert_int_equal(seen[SPOOL_PPROF], 3);
	/* Each service once per format, the names whose end is the other's too. */
	for (size_t s = 0; s < 3; s++) {
		int found = 0;

		for (long i = 0; i < n; i++)
			found += !strcmp(v[i].service, services[s]);
		assert_int_equal(found, 2);
	}
	assert_false(spool_parse_name("1795732333-1795732334.cpu.api.gz", &e));
	assert_false(spool_parse_name("1795732333-1795732334.cpu.otlp.gz", &e));
	free(v);
	spool_clear(dir);
	taproot_profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(spool_same_second),
		cmocka_unit_test(spool_formats),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
