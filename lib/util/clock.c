// SPDX-License-Identifier: GPL-2.0
/* Reading clocks (clock.h). */

#include "util/clock.h"

uint64_t tp_clock_ns(clockid_t id)
{
	struct timespec ts;

	if (clock_gettime(id, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}
