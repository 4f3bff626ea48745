// SPDX-License-Identifier: GPL-2.0
/*
 * HAS_SCHED_SWITCH_PREV_STATE_LAST: the sched_switch probe prototype is
 * (void *data, bool preempt, struct task_struct *prev,
 *  struct task_struct *next, unsigned int prev_state), as since 5.19
 * (5.18 passed prev_state second). A tracepoint probe must match exactly:
 * kCFI kernels trap on a mismatch.
 */
#include <trace/events/sched.h>

static void fn(void *data, bool preempt, struct task_struct *prev,
	       struct task_struct *next, unsigned int prev_state)
{
}

void probe(void);
void probe(void)
{
	check_trace_callback_type_sched_switch(fn);
}
