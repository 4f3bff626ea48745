// SPDX-License-Identifier: GPL-2.0
// vm-cflags: -shared -fPIC -fomit-frame-pointer -Wl,-soname,libswapb
/*
 * The other library of progs/libswap (see libswapa.c): its leaf has no
 * frame at all.
 */
#include <stdint.h>

uint64_t swap_entry(uint64_t n, uint64_t x);

__attribute__((noinline)) uint64_t b_leaf(uint64_t n, uint64_t x)
{
	for (uint64_t i = 0; i < n; i++)
		x = x * 2862933555777941757ULL + 3037000493ULL;
	return x;
}

uint64_t swap_entry(uint64_t n, uint64_t x)
{
	return b_leaf(n, x) ^ 0xb;
}
