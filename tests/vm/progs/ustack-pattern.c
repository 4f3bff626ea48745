// SPDX-License-Identifier: GPL-2.0
// vm-cflags: -fomit-frame-pointer -mno-red-zone
/*
 * ustack-pattern: a thread that spins in a leaf function with a known
 * pattern in a local stack buffer, for the user-stack tests.
 *
 * usage: ustack-pattern [--main]
 *
 * The spinning thread runs on a stack this program maps itself, every page
 * of it written beforehand and a PROT_NONE page right above its top, so the
 * readable bytes above any stack pointer in it end exactly at stack_top.
 * With --main the main thread spins instead, on the stack the process
 * started on, and a second thread prints the line below with start_stack
 * (field 28 of /proc/self/stat: where exec left argc, below argv and the
 * environment) and secret_at, the address of the value of the environment
 * variable TAPROOT_USTACK_SECRET (0 when unset) in place of stack_top.
 * Its leaf function fills BUF_LEN bytes of a local buffer with a pattern
 * seeded by the process ID, stores %rsp (read in the same asm statement
 * that holds the loop, so nothing moves it in between) and the buffer's
 * address, and spins in an asm loop between the global labels
 * ustack_spin_begin and ustack_spin_end. The main thread then prints one
 * line, with runtime addresses (no PIE guessing needed):
 *
 *   ready pid=P tid=T sp=0x.. buf=0x.. buf_len=N stack_top=0x..
 *         leaf=0x.. spin_begin=0x.. spin_end=0x.. pattern=HEX
 *
 * and sleeps until killed.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define BUF_LEN		256
#define STACK_SIZE	(64 * 1024)

extern const char ustack_spin_begin[], ustack_spin_end[];

static volatile int ready;
static uintptr_t leaf_sp, leaf_buf;
static pid_t leaf_tid;
static unsigned char pattern[BUF_LEN];

static void make_pattern(unsigned int seed)
{
	unsigned int x = seed * 2654435761u + 1;
	int i;

	for (i = 0; i < BUF_LEN; i++) {
		x = x * 1103515245u + 12345u;
		pattern[i] = (unsigned char)(x >> 16);
	}
}

/*
 * The leaf: calls nothing. Built with -mno-red-zone (see vm-cflags above):
 * a leaf may otherwise keep locals in the 128 bytes below %rsp, and the
 * buffer must lie in [sp, sp + frame size), where a copy of the user
 * stack from sp up finds it.
 */
__attribute__((noinline, noclone)) static void leaf(void)
{
	unsigned char buf[BUF_LEN];
	uintptr_t sp;
	int i;

	for (i = 0; i < BUF_LEN; i++)
		buf[i] = pattern[i];
	leaf_buf = (uintptr_t)buf;
	/*
	 * One asm statement: publish %rsp and the ready flag, then spin.
	 * The "memory" clobber and the buffer operand keep the pattern's
	 * stores before the loop; the loop never returns.
	 */
	__asm__ volatile(
		"mov %%rsp, %[sp]\n\t"
		"mov %%rsp, %[gsp]\n\t"
		"movl $1, %[rdy]\n\t"
		".globl ustack_spin_begin\n"
		"ustack_spin_begin:\n\t"
		"add $1, %%rax\n\t"
		"add %%rax, %%rdx\n\t"
		"jmp ustack_spin_begin\n"
		".globl ustack_spin_end\n"
		"ustack_spin_end:\n\t"
		: [sp] "=&r"(sp), [gsp] "=m"(leaf_sp), [rdy] "=m"(ready)
		: "r"(buf)
		: "rax", "rdx", "memory", "cc");
	(void)sp;
	__builtin_unreachable();
}

static void *thread_main(void *arg)
{
	(void)arg;
	leaf_tid = gettid();
	leaf();
	return NULL;
}

static void print_ready(const char *where)
{
	int i;

	printf("ready pid=%d tid=%d sp=0x%lx buf=0x%lx buf_len=%d %s leaf=0x%lx "
	       "spin_begin=0x%lx spin_end=0x%lx pattern=",
	       getpid(), leaf_tid, (unsigned long)leaf_sp, (unsigned long)leaf_buf, BUF_LEN,
	       where, (unsigned long)(uintptr_t)leaf,
	       (unsigned long)(uintptr_t)ustack_spin_begin, (unsigned long)(uintptr_t)ustack_spin_end);
	for (i = 0; i < BUF_LEN; i++)
		printf("%02x", pattern[i]);
	printf("\n");
}

/* Field 28 of /proc/self/stat, startstack; 0 when it cannot be read. */
static unsigned long start_stack(void)
{
	char buf[1024], *p;
	unsigned long v = 0;
	FILE *f = fopen("/proc/self/stat", "r");
	int field;

	if (!f)
		return 0;
	p = fgets(buf, sizeof(buf), f);
	fclose(f);
	if (!p || !(p = strrchr(buf, ')')))
		return 0;
	/* Fields from 3 on follow the comm's closing parenthesis. */
	for (field = 2; field < 28 && p; field++)
		p = strchr(p + 1, ' ');
	if (p)
		v = strtoul(p + 1, NULL, 10);
	return v;
}

/* With --main: waits until the main thread spins, then prints. */
static void *printer_main(void *arg)
{
	struct timespec nap = { 0, 1000000 };
	const char *secret = getenv("TAPROOT_USTACK_SECRET");
	char where[128];

	(void)arg;
	while (!ready)
		nanosleep(&nap, NULL);
	snprintf(where, sizeof(where), "start_stack=0x%lx secret_at=0x%lx", start_stack(),
		 (unsigned long)(uintptr_t)secret);
	print_ready(where);
	return NULL;
}

int main(int argc, char **argv)
{
	long page = sysconf(_SC_PAGESIZE);
	struct timespec nap = { 0, 1000000 };
	pthread_attr_t attr;
	pthread_t t;
	uint8_t *map;
	char where[64];
	uintptr_t top;
	int err;

	setvbuf(stdout, NULL, _IOLBF, 0);
	make_pattern((unsigned int)getpid());

	if (argc == 2 && !strcmp(argv[1], "--main")) {
		err = pthread_create(&t, NULL, printer_main, NULL);
		if (err) {
			fprintf(stderr, "ustack-pattern: pthread_create: %s\n", strerror(err));
			return 1;
		}
		leaf_tid = getpid();
		leaf();
	}
	if (argc != 1) {
		fprintf(stderr, "usage: ustack-pattern [--main]\n");
		return 2;
	}

	/* guard page | stack | guard page, the stack written through. */
	map = mmap(NULL, STACK_SIZE + 2 * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED) {
		perror("ustack-pattern: mmap");
		return 1;
	}
	if (mprotect(map + page, STACK_SIZE, PROT_READ | PROT_WRITE)) {
		perror("ustack-pattern: mprotect");
		return 1;
	}
	memset(map + page, 0xa5, STACK_SIZE);
	top = (uintptr_t)(map + page + STACK_SIZE);

	pthread_attr_init(&attr);
	pthread_attr_setstack(&attr, map + page, STACK_SIZE);
	err = pthread_create(&t, &attr, thread_main, NULL);
	if (err) {
		fprintf(stderr, "ustack-pattern: pthread_create: %s\n", strerror(err));
		return 1;
	}
	while (!ready)
		nanosleep(&nap, NULL);

	snprintf(where, sizeof(where), "stack_top=0x%lx", (unsigned long)top);
	print_ready(where);
	for (;;)
		pause();
}
