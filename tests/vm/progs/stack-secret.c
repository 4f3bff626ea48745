// SPDX-License-Identifier: GPL-2.0
/*
 * A target for a hostile uploader (upload-abuse --hostile): what its stack
 * holds that the module's walker must never tell.
 *
 *   spin_secret  the leaf, spinning with 64 words of SECRET in its frame:
 *                no code address, what a crafted rule would read as a
 *                return address near sp;
 *   far          its caller, whose 2 MiB frame is filled with the address
 *                of marker (+1, a return address into this program's
 *                code), so that a rule that reads 1 MiB above the leaf's
 *                sp finds a pc that lies in the program's mapping.
 *
 * Prints "stack-secret: ready pid=PID secret=0x... marker=0x..." and spins
 * until killed.
 */
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#define SECRET		0x5ec2e75ec2e75ec2ULL
#define FAR_BYTES	(2U << 20)

static void __attribute__((noinline)) marker(void)
{
	__asm__ volatile("" ::: "memory");
}

static void __attribute__((noinline)) spin_secret(void)
{
	volatile uint64_t keep[64];

	for (unsigned int i = 0; i < 64; i++)
		keep[i] = SECRET;
	for (;;)
		keep[0] = keep[1];
}

static void __attribute__((noinline)) far(void)
{
	volatile uint64_t pad[FAR_BYTES / 8];
	uint64_t ra = (uint64_t)(uintptr_t)marker + 1;

	/* from the top down: the stack grows a page at a time */
	for (unsigned int i = FAR_BYTES / 8; i-- > 0;)
		pad[i] = ra;
	printf("stack-secret: ready pid=%d secret=%#llx marker=%#llx\n", (int)getpid(),
	       (unsigned long long)SECRET, (unsigned long long)ra);
	fflush(stdout);
	spin_secret();
	(void)pad[0];
}

int main(void)
{
	far();
	return 0;
}
