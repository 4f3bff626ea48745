// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: /proc/PID/cgroup text through what the process model
 * makes of it (taproot_cgroup_parse(), taproot_service_name()). Seeds:
 * the unit test's fixtures of each runtime (tests/fuzz/run).
 *
 * What a success promises is checked: a path that starts with '/', cut to
 * its field; a container id of 64 lower-case hex digits or none; a unit
 * that is a service or a scope, or none; a service name within its buffer,
 * the length returned being the whole name's. A breach aborts.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "process/process.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	return 0;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && !strcmp(s + n - k, suffix);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct taproot_cgroup cg;
	char name[16], whole[TAPROOT_UNIT_NAME_MAX + 64];
	size_t n;

	/* Not NUL-terminated: the parser must keep to @size. */
	if (taproot_cgroup_parse((const char *)data, size, &cg) < 0)
		return 0;
	check(memchr(cg.path, '\0', sizeof(cg.path)) && cg.path[0] == '/');
	n = strlen(cg.container_id);
	check(n == 0 || (n == 64 && strspn(cg.container_id, "0123456789abcdef") == 64));
	check(memchr(cg.unit, '\0', sizeof(cg.unit)) &&
	      (!cg.unit[0] || ends_with(cg.unit, ".service") || ends_with(cg.unit, ".scope")));
	n = taproot_service_name(&cg, "/usr/bin/x", name, sizeof(name));
	check(strlen(name) == (n < sizeof(name) ? n : sizeof(name) - 1));
	check(taproot_service_name(&cg, NULL, whole, sizeof(whole)) == strlen(whole));
	return 0;
}
