/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The address binutils' nm gives a symbol: the independent answer the ELF
 * tests compare the library's symbol tables with. Include after <cmocka.h>.
 */
#ifndef TAPROOT_TESTS_NM_H
#define TAPROOT_TESTS_NM_H

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* nm's address of @sym in @path, 0 when not there. */
static inline uint64_t nm_address(const char *path, const char *sym)
{
	char cmd[PATH_MAX + 64], line[512], name[256], type[8];
	unsigned long long addr, found = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "nm '%s' 2>/dev/null", path);
	f = popen(cmd, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %7s %255s", &addr, type, name) == 3 && !strcmp(name, sym))
			found = addr;
	pclose(f);
	return found;
}

#endif /* TAPROOT_TESTS_NM_H */
