// SPDX-License-Identifier: GPL-2.0
/*
 * HAS_SCHED_SWITCH_NO_PREV_STATE: the sched_switch probe prototype is
 * (void *data, bool preempt, struct task_struct *prev,
 *  struct task_struct *next), as before 5.18, which added prev_state: the
 * probe then reads prev's state itself (HAS_TASK_STRUCT___STATE says from
 * which field).
 */
#include <trace/events/sched.h>

static void fn(void *data, bool preempt, struct task_struct *prev,
	       struct task_struct *next)
{
}

void probe(void);
void probe(void)
{
	check_trace_callback_type_sched_switch(fn);
}
