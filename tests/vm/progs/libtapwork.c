// SPDX-License-Identifier: GPL-2.0
// vm-cflags: -shared -fPIC -fomit-frame-pointer -Wl,-soname,libtapwork
/*
 * The shared library of tests/vm/progs/tapwork.c: libfunc() calls leaf_y(),
 * which burns CPU for a number of work units. Built like a Debian library:
 * -O2, no frame pointers, CFI in .eh_frame only. tests/vm/build-progs
 * builds it as build/vm/progs/libtapwork (its soname), next to tapwork,
 * which finds it through its $ORIGIN rpath.
 */
#include <stdint.h>

uint64_t libfunc(uint64_t units, uint64_t seed);
uint64_t leaf_y(uint64_t units, uint64_t seed);

#define UNIT_ITERS	20000

/* One work unit is the same loop as tapwork's leaf_x. */
__attribute__((noipa)) uint64_t leaf_y(uint64_t units, uint64_t seed)
{
	uint64_t x = seed;

	for (uint64_t i = 0; i < units * UNIT_ITERS; i++)
		x = (x * 6364136223846793005ULL + 1442695040888963407ULL) ^ (x >> 17);
	return x;
}

__attribute__((noipa)) uint64_t libfunc(uint64_t units, uint64_t seed)
{
	uint64_t r = leaf_y(units, seed);

	__asm__ volatile("" : "+r"(r));	/* no tail call: libfunc stays on the stack */
	return r + 1;
}
