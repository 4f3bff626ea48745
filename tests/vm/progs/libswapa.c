// SPDX-License-Identifier: GPL-2.0
// vm-cflags: -shared -fPIC -fomit-frame-pointer -Wl,-soname,libswapa
/*
 * One of the two libraries progs/libswap loads in turn at the same address
 * (libswapb.c is the other). Their swap_entry() calls a leaf whose frame
 * differs: here a 4 KiB frame (CFA = rsp + 4 KiB and more), in libswapb
 * none (CFA = rsp + 8), so that either's unwind table applied to the
 * other's code finds a wrong return address.
 */
#include <stdint.h>
#include <string.h>

uint64_t swap_entry(uint64_t n, uint64_t x);

__attribute__((noinline)) uint64_t a_leaf(uint64_t n, uint64_t x)
{
	volatile uint64_t frame[512];

	memset((void *)frame, 0, sizeof(frame));
	for (uint64_t i = 0; i < n; i++) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		frame[i & 511] = x;
	}
	return x + frame[7];
}

uint64_t swap_entry(uint64_t n, uint64_t x)
{
	return a_leaf(n, x) ^ 0xa;
}
