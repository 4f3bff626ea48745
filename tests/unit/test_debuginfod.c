// SPDX-License-Identifier: GPL-2.0
/*
 * The debuginfod fetcher (lib/process/debuginfod.c) with the real
 * libdebuginfod, against servers on this host's loopback that refuse or
 * never answer (a real server is the VM test record-debuginfod's): no
 * URLs is an error; a look-up never blocks; a failed fetch becomes a
 * negative entry, not asked again; bad build IDs are refused; freeing it
 * cancels a fetch that hangs.
 */
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "process/process.h"
#include "util/clock.h"

static const uint8_t id[20] = { 0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9 };

static int setup(void **state)
{
	static char cache[] = "/tmp/test-debuginfod-XXXXXX";

	assert_non_null(mkdtemp(cache));
	setenv("DEBUGINFOD_CACHE_PATH", cache, 1);
	unsetenv("DEBUGINFOD_URLS");
	*state = cache;
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", (char *)*state);
	assert_int_equal(system(cmd), 0);
	return 0;
}

/* A loopback port that refuses (nothing listens), or one that never answers. */
static int loopback_port(bool listening, int *fd)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int s = socket(AF_INET, SOCK_STREAM, 0);

	assert_true(s >= 0);
	assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(getsockname(s, (struct sockaddr *)&a, &len), 0);
	if (listening)
		assert_int_equal(listen(s, 16), 0);	/* connects, never accepted */
	else
		close(s);
	*fd = listening ? s : -1;
	return ntohs(a.sin_port);
}

static void debuginfod_needs_urls(void **state)
{
	struct taproot_debuginfod *d = (void *)1;

	assert_int_equal(taproot_debuginfod_new(NULL, &d), -EINVAL);
	assert_null(d);
	assert_int_equal(taproot_debuginfod_find(NULL, id, sizeof(id), NULL, 0), -ENOENT);
	assert_int_equal(taproot_debuginfod_generation(NULL), 0);
}

static void debuginfod_failed_fetch_is_remembered(void **state)
{
	struct taproot_debuginfod_opts o;
	struct taproot_debuginfod_stats st;
	struct taproot_debuginfod *d;
	char urls[64], path[256];
	uint64_t t0;
	int fd, rc;

	snprintf(urls, sizeof(urls), "http://127.0.0.1:%d", loopback_port(false, &fd));
	taproot_debuginfod_opts_default(&o);
	o.urls = urls;
	o.timeout_s = 5;
	assert_int_equal(taproot_debuginfod_new(&o, &d), 0);
	/* Asking queues it and does not wait. */
	assert_int_equal(taproot_debuginfod_find(d, id, sizeof(id), path, sizeof(path)), -EAGAIN);
	t0 = tp_clock_ms(CLOCK_MONOTONIC);
	while ((rc = taproot_debuginfod_find(d, id, sizeof(id), path, sizeof(path))) == -EAGAIN) {
		assert_true(tp_clock_ms(CLOCK_MONOTONIC) - t0 < 10000);
		/* The thread fetches: nothing to wait on but its result. */
		usleep(20000);
	}
	assert_int_equal(rc, -ENOENT);
	taproot_debuginfod_get_stats(d, &st);
	assert_int_equal(st.asked, 1);
	assert_int_equal(st.absent, 1);
	assert_int_equal(st.found, 0);
	assert_int_equal(st.pending, 0);
	assert_true(st.last_error < 0);
	/* Absent: not asked again (the negative cache), nothing new arrived. */
	assert_int_equal(taproot_debuginfod_find(d, id, sizeof(id), path, sizeof(path)), -ENOENT);
	taproot_debuginfod_get_stats(d, &st);
	assert_int_equal(st.asked, 1);
	assert_int_equal(taproot_debuginfod_generation(d), 0);
	/* No build ID, or a longer one than any: refused. */
	assert_int_equal(taproot_debuginfod_find(d, id, 0, path, sizeof(path)), -ENOENT);
	assert_int_equal(taproot_debuginfod_find(d, id, 65, path, sizeof(path)), -ENOENT);
	taproot_debuginfod_free(d);
}

static void debuginfod_free_cancels_a_hung_fetch(void **state)
{
	struct taproot_debuginfod_opts o;
	struct taproot_debuginfod *d;
	char urls[64], path[256];
	uint64_t t0;
	int fd;

	snprintf(urls, sizeof(urls), "http://127.0.0.1:%d", loopback_port(true, &fd));
	taproot_debuginfod_opts_default(&o);
	o.urls = urls;
	o.timeout_s = 60;
	assert_int_equal(taproot_debuginfod_new(&o, &d), 0);
	assert_int_equal(taproot_debuginfod_find(d, id, sizeof(id), path, sizeof(path)), -EAGAIN);
	/* Let the fetch start and hang on the server that never answers. */
	usleep(300000);
	assert_int_equal(taproot_debuginfod_find(d, id, sizeof(id), path, sizeof(path)), -EAGAIN);
	t0 = tp_clock_ms(CLOCK_MONOTONIC);
	taproot_debuginfod_free(d);
	print_message("freed in %llu ms\n", (unsigned long long)(tp_clock_ms(CLOCK_MONOTONIC) - t0));
	assert_true(tp_clock_ms(CLOCK_MONOTONIC) - t0 < 5000);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(debuginfod_needs_urls),
		cmocka_unit_test(debuginfod_failed_fetch_is_remembered),
		cmocka_unit_test(debuginfod_free_cancels_a_hung_fetch),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
