// SPDX-License-Identifier: GPL-2.0
/*
 * The symbolizer: pc -> frames.
 */
#include <stdlib.h>

#include "proc.h"

void tp_elfsym_free(struct tp_elfsym *s)
{
	(void)s;
}
