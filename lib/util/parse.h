/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libtaproot, utilities layer: parsing numbers in the text the kernel
 * writes (/proc/PID/maps, stat, perf maps) (lib/util/parse.c). For lib/ and
 * ctl/, not for programs.
 */
#ifndef TAPROOT_UTIL_PARSE_H
#define TAPROOT_UTIL_PARSE_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Parse 1..16 hex digits at *@pp that must be followed by @stop; on success
 * store the value, advance *@pp past @stop and return true. Nothing changes
 * on failure.
 */
bool tp_parse_hex(const char **pp, char stop, uint64_t *v);

/*
 * Parse the decimal digits at *@pp (at least one, no sign), up to @end
 * (NULL: the text is NUL-terminated), into a value that fits 64 bits; on
 * success store it, leave *@pp at the first character after the digits
 * and return true. Nothing changes on failure.
 */
bool tp_parse_dec(const char **pp, const char *end, uint64_t *v);

#endif /* TAPROOT_UTIL_PARSE_H */
