/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The calling thread's own user registers and stack, captured as the
 * module copies them into a record, for the unit tests that unwind real
 * stacks: through the pipeline (test_pipeline, test_causal, test_rawfile),
 * with lib/unwind alone (test_unwind) and against the module's walker
 * (test_uwalk). Include after <cmocka.h>; call ownstack_init() once first.
 *
 * OWNSTACK_MAX, the most bytes copied from sp up, is 16 KiB unless the
 * includer defines it first: a test that walks deeper stacks copies more.
 *
 * OWNSTACK_CAPTURE(c) is a macro so that the captured ip is in the test's
 * own noinline function: the tests check the unwound stacks by name.
 */
#ifndef TAPROOT_TESTS_OWNSTACK_H
#define TAPROOT_TESTS_OWNSTACK_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/taproot.h>

#ifndef OWNSTACK_MAX
#define OWNSTACK_MAX	(16 * 1024)
#endif

struct ownstack {
	struct taproot_user_regs regs;
	uint8_t stack[OWNSTACK_MAX];
	size_t len;
};

static uint64_t ownstack_top;		/* end of [stack] */

/* A plain copy ASan does not check: it reads other frames' redzones. */
__attribute__((noinline, no_sanitize_address))
static void ownstack_copy(uint8_t *dst, const volatile uint8_t *src, size_t len)
{
	for (size_t i = 0; i < len; i++)
		dst[i] = src[i];
}

static inline void ownstack_fill(struct ownstack *c, uint64_t ip, uint64_t sp, uint64_t bp)
{
	memset(&c->regs, 0, sizeof(c->regs));
	c->regs.ip = ip;
	c->regs.sp = sp;
	c->regs.bp = bp;
	c->len = ownstack_top - sp;
	if (c->len > OWNSTACK_MAX)
		c->len = OWNSTACK_MAX;
	ownstack_copy(c->stack, (const volatile uint8_t *)(uintptr_t)sp, c->len);
}

/* ip: the address where sp and bp were read, in the caller's function. */
#define OWNSTACK_CAPTURE(c)						\
	do {								\
		uint64_t sp_, bp_, ip_;					\
									\
		__asm__ volatile("lea 0f(%%rip), %0\n"			\
				 "0:\n\t"				\
				 "mov %%rsp, %1\n\t"			\
				 "mov %%rbp, %2\n"			\
				 : "=&r"(ip_), "=&r"(sp_), "=&r"(bp_));	\
		ownstack_fill((c), ip_, sp_, bp_);			\
	} while (0)

static void ownstack_init(void)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long start, end;

		if (strstr(line, "[stack]") && sscanf(line, "%lx-%lx", &start, &end) == 2)
			ownstack_top = end;
	}
	fclose(f);
	assert_true(ownstack_top != 0);
}

/*
 * A SAMPLE record (malloc'ed) of thread @tid of process @pid with @nk
 * kernel addresses and, with @c, @c's user registers and stack; without
 * @c, a kernel thread's.
 */
static inline struct taproot_rec_header *ownstack_sample(const struct ownstack *c, uint32_t pid,
							 uint32_t tid, const uint64_t *kstack,
							 unsigned int nk, const char *comm)
{
	size_t size = sizeof(struct taproot_rec_sample) + nk * 8 + (c ? c->len : 0);
	struct taproot_rec_sample *s;

	size = (size + 7) & ~(size_t)7;
	s = calloc(1, size);
	assert_non_null(s);
	s->hdr.size = (uint32_t)size;
	s->hdr.type = TAPROOT_REC_SAMPLE;
	s->hdr.flags = c ? TAPROOT_SAMPLE_F_USER_REGS : TAPROOT_SAMPLE_F_KTHREAD;
	if (nk && c)
		s->hdr.flags |= TAPROOT_SAMPLE_F_IN_KERNEL;
	s->pid = pid;
	s->tid = tid;
	s->cpu = 1;
	s->kstack_nr = (uint16_t)nk;
	s->ustack_len = c ? (uint32_t)c->len : 0;
	s->period_us = 10000;
	/* Cut to the field, NUL-terminated (calloc zeroed it), as the kernel's. */
	memcpy(s->comm, comm, strnlen(comm, sizeof(s->comm) - 1));
	if (c)
		s->user_regs = c->regs;
	if (nk)
		memcpy(s + 1, kstack, nk * 8);
	if (c)
		memcpy((uint8_t *)(s + 1) + nk * 8, c->stack, c->len);
	return &s->hdr;
}

#endif /* TAPROOT_TESTS_OWNSTACK_H */
