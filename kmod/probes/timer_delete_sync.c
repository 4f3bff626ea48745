// SPDX-License-Identifier: GPL-2.0
/*
 * HAS_TIMER_DELETE_SYNC: timer_delete_sync() (6.2; Debian's 6.1 has it by
 * a stable backport, which is why this is probed and not version-checked).
 * del_timer_sync() is the older name.
 */
#include <linux/timer.h>

int probe(struct timer_list *timer);
int probe(struct timer_list *timer)
{
	return timer_delete_sync(timer);
}
