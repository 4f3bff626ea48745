// SPDX-License-Identifier: GPL-2.0
/* Reference-counted lists of label pairs: lib/util/labels.h. */
#include <stdlib.h>
#include <string.h>

#include "util/labels.h"
#include "util/util.h"

struct tp_labels *tp_labels_new(const char *const *keys, const char *const *values, size_t nr)
{
	struct tp_labels *l;
	size_t room = sizeof(*l), i;
	char *pos;

	if (nr > TP_LABELS_MAX)
		return NULL;
	for (i = 0; i < nr; i++)
		room += tp_strsize(keys[i]) + tp_strsize(values[i]);
	l = malloc(room);
	if (!l)
		return NULL;
	memset(l, 0, sizeof(*l));
	l->refs = 1;
	l->nr = (unsigned int)nr;
	pos = (char *)(l + 1);
	for (i = 0; i < nr; i++) {
		l->key[i] = tp_strcopy(&pos, keys[i]);
		l->value[i] = tp_strcopy(&pos, values[i]);
	}
	return l;
}

struct tp_labels *tp_labels_get(struct tp_labels *l)
{
	if (l)
		l->refs++;
	return l;
}

void tp_labels_put(struct tp_labels *l)
{
	if (l && !--l->refs)
		free(l);
}

const char *tp_labels_value(const struct tp_labels *l, const char *key)
{
	for (unsigned int i = 0; l && i < l->nr; i++)
		if (!strcmp(l->key[i], key))
			return l->value[i];
	return "";
}
