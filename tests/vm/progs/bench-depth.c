// SPDX-License-Identifier: GPL-2.0
// vm-cflags: -fomit-frame-pointer
/*
 * bench-depth: CPU-bound work at a chosen user stack depth, on command,
 * for the per-sample cost by stack depth (scripts/bench-guest, series
 * insns). Built like Debian's binaries (-O2, no frame pointers), so that
 * every stack is unwound from DWARF CFI.
 *
 * It reads lines from stdin, each a number U of work units; for each it
 * runs U units, each a descent to the leaf and a short loop there, and
 * prints "done U\n" (flushed). At end of input it exits. Between commands
 * it sleeps in read(): only the units themselves are sampled, so a
 * window around one command sees this process's samples alone.
 *
 * The user stack at the leaf is FRAMES frames deep, counted as an
 * unwinder sees them: descend() FRAMES - 4 times (the last is the leaf,
 * which loops), then main, __libc_start_call_main, __libc_start_main and
 * _start (glibc 2.34 and later; older glibc has one frame fewer).
 *
 * usage: bench-depth FRAMES     (5..1000)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UNIT_ITERS 20000

static volatile uint64_t sink;

__attribute__((noipa)) static uint64_t descend(unsigned long level, uint64_t seed)
{
	if (level == 0) {
		uint64_t x = seed;

		for (int i = 0; i < UNIT_ITERS; i++)
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		return x;
	}
	/* Not a tail call: the frame stays on the stack. */
	return descend(level - 1, seed + level) ^ level;
}

int main(int argc, char **argv)
{
	unsigned long frames, units;
	char line[64], *end;

	frames = argc == 2 ? strtoul(argv[1], &end, 10) : 0;
	if (argc != 2 || *end || frames < 5 || frames > 1000) {
		fprintf(stderr, "usage: bench-depth FRAMES   (5..1000)\n");
		return 2;
	}
	while (fgets(line, sizeof(line), stdin)) {
		units = strtoul(line, &end, 10);
		if (end == line || (*end && *end != '\n')) {
			fprintf(stderr, "bench-depth: not a number of units: %s", line);
			return 2;
		}
		uint64_t acc = 0;

		for (unsigned long u = 0; u < units; u++)
			acc += descend(frames - 5, u);
		sink = acc;
		printf("done %lu\n", units);
		fflush(stdout);
	}
	return 0;
}
