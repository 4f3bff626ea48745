// SPDX-License-Identifier: GPL-2.0
/*
 * Command tables in bpftool's style: a word selects a row by its name or by
 * an unambiguous prefix of it.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "util/util.h"

int taproot_cmd_find(const struct taproot_command *table, const char *word,
		     const struct taproot_command **row)
{
	const struct taproot_command *c, *match = NULL;
	size_t n = strlen(word);
	char names[256] = "";
	size_t off = 0;
	bool ambiguous = false;

	*row = NULL;
	for (c = table; c->name; c++) {
		if (!strcmp(c->name, word)) {
			*row = c;
			return 0;
		}
	}
	if (!n)
		return tp_err(-ENOENT, "unknown command ''");

	for (c = table; c->name; c++) {
		if (strncmp(c->name, word, n))
			continue;
		/* Aliases of one command (same handler) are one choice. */
		if (match && match->fn != c->fn)
			ambiguous = true;
		if (!match)
			match = c;
		if (off < sizeof(names))
			off += (size_t)snprintf(names + off, sizeof(names) - off,
						"%s%s", off ? ", " : "", c->name);
	}
	if (!match)
		return tp_err(-ENOENT, "unknown command '%s'", word);
	if (ambiguous)
		return tp_err(-TAPROOT_EAMBIGUOUS,
			      "ambiguous command '%s': could be %s", word, names);
	*row = match;
	return 0;
}
