/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libtaproot, utilities layer: reading clocks (lib/util/clock.c). For
 * lib/ and ctl/, not for programs.
 */
#ifndef TAPROOT_UTIL_CLOCK_H
#define TAPROOT_UTIL_CLOCK_H

#include <stdint.h>
#include <time.h>

/*
 * Clock @id (CLOCK_MONOTONIC, CLOCK_REALTIME, ...) in nanoseconds, or 0
 * when @id is not a clock this system has.
 *
 * CLOCK_MONOTONIC_COARSE (the last tick's time) is the one for what is
 * read per frame or per record and measures a second or so: the precise
 * clocks cost a system call where the clocksource has no vDSO read (hpet
 * and acpi_pm, common in VMs and emulators).
 */
uint64_t tp_clock_ns(clockid_t id);

/* The same in milliseconds and in (fractional) seconds. */
static inline uint64_t tp_clock_ms(clockid_t id)
{
	return tp_clock_ns(id) / 1000000;
}

static inline double tp_clock_s(clockid_t id)
{
	return (double)tp_clock_ns(id) / 1e9;
}

#endif /* TAPROOT_UTIL_CLOCK_H */
