// SPDX-License-Identifier: GPL-2.0
/*
 * HAS_TASK_STRUCT___STATE: a task's state is task_struct.__state, as since
 * 5.14; before, it was task_struct.state.
 */
#include <linux/sched.h>

unsigned int probe(struct task_struct *p);
unsigned int probe(struct task_struct *p)
{
	return READ_ONCE(p->__state);
}
