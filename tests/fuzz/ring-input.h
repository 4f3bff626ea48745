/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The input layout of tests/fuzz/fuzz_ring.c, shared with the seed writer
 * tests/fuzz/seedgen.c so that both read it the same way.
 *
 *   byte 0       flags (FR_F_*): CPUs, data pages, pipeline options
 *   then         per CPU: u64 tail, u32 unread bytes (head = tail + unread),
 *                little-endian, FR_CPU_HDR bytes each
 *   then         the data: split evenly between the CPUs; CPU i's share is
 *                written into its data area from tail mod D on, wrapping,
 *                at most D bytes; the rest of the area is zero
 *
 * The rings then hold what a module would have left in them, the producer
 * page valid (ABI version, CPU, page size, data offset, size) so that the
 * consumer reads the records; the records and the head are the fuzzer's.
 *
 * The process FR_PID exists in the fake /proc the target sets up: one
 * executable mapping of FR_EXE at FR_EXE_BASE (as the loader would map its
 * text segment), so that user stacks are unwound through real CFI. The
 * kernel's symbols are FR_NR_KSYMS functions of FR_KSYM_SIZE bytes from
 * FR_KBASE, named "kfn0".. .
 */
#ifndef FUZZ_RING_INPUT_H
#define FUZZ_RING_INPUT_H

#include <stdint.h>

#define FR_PAGE			4096
#define FR_MAX_CPUS		4
#define FR_MAX_PAGES		8
#define FR_CPU_HDR		12

#define FR_F_CPUS(f)		(((f) & 3u) + 1)		/* 1..4 rings */
#define FR_F_PAGES(f)		(1u << (((f) >> 2) & 3u))	/* 1..8 data pages */
#define FR_F_OFFCPU		(1u << 4)	/* build the off-CPU profiles */
#define FR_F_LABELS		(1u << 5)	/* tid and cpu labels */
#define FR_F_ENCODE		(1u << 6)	/* encode the CPU profile to pprof */
#define FR_F_TWICE		(1u << 7)	/* consume a second time (nothing new) */

#define FR_PID			4242
#define FR_EXE			"/usr/bin/true"
#define FR_EXE_BASE		0x555555554000ULL
#define FR_KBASE		0xffffffff81000000ULL
#define FR_KSYM_SIZE		0x100
#define FR_NR_KSYMS		8

static inline void fr_put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline void fr_put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint32_t fr_get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static inline uint64_t fr_get64(const uint8_t *p)
{
	return fr_get32(p) | (uint64_t)fr_get32(p + 4) << 32;
}

#endif /* FUZZ_RING_INPUT_H */
