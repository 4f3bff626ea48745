// SPDX-License-Identifier: GPL-2.0
/*
 * HAS_HRTIMER_SETUP: hrtimer_setup(timer, fn, clock, mode) (6.13), which
 * replaces hrtimer_init() + timer->function (hrtimer_init is gone in 6.15).
 */
#include <linux/hrtimer.h>

static enum hrtimer_restart fn(struct hrtimer *timer)
{
	return HRTIMER_NORESTART;
}

void probe(struct hrtimer *timer);
void probe(struct hrtimer *timer)
{
	hrtimer_setup(timer, fn, CLOCK_MONOTONIC, HRTIMER_MODE_REL);
}
