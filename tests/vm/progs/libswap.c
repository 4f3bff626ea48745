// SPDX-License-Identifier: GPL-2.0
// vm-cflags: -fomit-frame-pointer -Wl,-rpath,$ORIGIN
/*
 * Loads libswapa and libswapb in turn (dlopen, dlclose), so that the one
 * is unmapped and the other mapped at the same address, over and over,
 * and spins in each for a few milliseconds: run_a() -> swap_entry() ->
 * a_leaf() while libswapa is mapped, run_b() -> swap_entry() -> b_leaf()
 * while libswapb is. A profiler that keeps the first library's unwind
 * table for the second finds wrong callers above the leaf.
 *
 * usage: libswap [SECONDS [MS]]   (default 3 s, 15 ms in each library)
 * Prints "libswap: main 0x..." (where main is) first, "libswap: base
 * 0x..." for each address a library was loaded at that the one before
 * did not have, and "libswap: swaps N same-address M" at the end: M of
 * the N loads found the library at the address the previous one had.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef uint64_t (*entry_fn)(uint64_t n, uint64_t x);

static volatile sig_atomic_t stop;
static volatile uint64_t sink;

static void on_alarm(int sig)
{
	(void)sig;
	stop = 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Spin in @f for @ms milliseconds. */
static __attribute__((noinline, noclone)) uint64_t run_a(entry_fn f, unsigned int ms)
{
	uint64_t end = now_ns() + ms * 1000000ULL, x = 1;

	while (now_ns() < end)
		x += f(20000, x);
	return x;
}

static __attribute__((noinline, noclone)) uint64_t run_b(entry_fn f, unsigned int ms)
{
	uint64_t end = now_ns() + ms * 1000000ULL, x = 2;

	while (now_ns() < end)
		x += f(20000, x);
	return x;
}

/* Load @name beside this program; its swap_entry in *@f, its base in *@base. */
static void *load(const char *dir, const char *name, entry_fn *f, uintptr_t *base)
{
	char path[4200];
	Dl_info info;
	void *h;

	snprintf(path, sizeof(path), "%.4095s/%s", dir, name);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "libswap: %s\n", dlerror());
		exit(1);
	}
	*f = (entry_fn)(uintptr_t)dlsym(h, "swap_entry");
	if (!*f || !dladdr((void *)(uintptr_t)*f, &info)) {
		fprintf(stderr, "libswap: no swap_entry in %s\n", path);
		exit(1);
	}
	*base = (uintptr_t)info.dli_fbase;
	return h;
}

int main(int argc, char **argv)
{
	unsigned int seconds = argc > 1 ? (unsigned int)atoi(argv[1]) : 3;
	unsigned int ms = argc > 2 ? (unsigned int)atoi(argv[2]) : 15;
	uintptr_t base, last = 0;
	uint64_t swaps = 0, same = 0;
	char dir[4096];
	ssize_t n;
	entry_fn f;

	n = readlink("/proc/self/exe", dir, sizeof(dir) - 1);
	if (n <= 0)
		return 1;
	dir[n] = '\0';
	*strrchr(dir, '/') = '\0';
	printf("libswap: main %p\n", (void *)(uintptr_t)main);
	fflush(stdout);
	signal(SIGALRM, on_alarm);
	alarm(seconds ? seconds : 1);
	while (!stop) {
		int b = swaps & 1;
		void *h = load(dir, b ? "libswapb" : "libswapa", &f, &base);

		same += swaps && base == last;
		if (!swaps || base != last) {
			printf("libswap: base %p\n", (void *)base);
			fflush(stdout);
		}
		last = base;
		sink += b ? run_b(f, ms) : run_a(f, ms);
		dlclose(h);
		swaps++;
	}
	printf("libswap: swaps %llu same-address %llu\n", (unsigned long long)swaps,
	       (unsigned long long)same);
	return 0;
}
