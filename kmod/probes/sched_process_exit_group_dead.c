// SPDX-License-Identifier: GPL-2.0
/*
 * HAS_SCHED_PROCESS_EXIT_GROUP_DEAD: the sched_process_exit probe prototype
 * is (void *data, struct task_struct *p, bool group_dead) (6.16); before,
 * (void *data, struct task_struct *p).
 */
#include <trace/events/sched.h>

static void fn(void *data, struct task_struct *p, bool group_dead)
{
}

void probe(void);
void probe(void)
{
	check_trace_callback_type_sched_process_exit(fn);
}
