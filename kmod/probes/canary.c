// SPDX-License-Identifier: GPL-2.0
/* Not a feature: proves the headers build at all (see Kbuild). */
#include <linux/module.h>

int canary(void);
int canary(void)
{
	return 0;
}
