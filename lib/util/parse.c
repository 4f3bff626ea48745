// SPDX-License-Identifier: GPL-2.0
/* Parsing numbers in the kernel's text files (parse.h). */

#include "util/parse.h"

bool tp_parse_hex(const char **pp, char stop, uint64_t *v)
{
	const char *p = *pp;
	uint64_t x = 0;
	int n = 0;

	for (;; p++, n++) {
		int d;

		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if (*p >= 'a' && *p <= 'f')
			d = *p - 'a' + 10;
		else if (*p >= 'A' && *p <= 'F')
			d = *p - 'A' + 10;
		else
			break;
		if (n == 16)
			return false;
		x = x << 4 | (uint64_t)d;
	}
	if (!n || *p != stop)
		return false;
	*pp = p + 1;
	*v = x;
	return true;
}

static bool tp_is_digit(const char *p, const char *end)
{
	return (!end || p < end) && *p >= '0' && *p <= '9';
}

bool tp_parse_dec(const char **pp, const char *end, uint64_t *v)
{
	const char *p = *pp;
	uint64_t x = 0;

	if (!tp_is_digit(p, end))
		return false;
	for (; tp_is_digit(p, end); p++) {
		uint64_t d = (uint64_t)(*p - '0');

		if (x > UINT64_MAX / 10 || (x == UINT64_MAX / 10 && d > UINT64_MAX % 10))
			return false;
		x = x * 10 + d;
	}
	*pp = p;
	*v = x;
	return true;
}
