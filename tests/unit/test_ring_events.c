// SPDX-License-Identifier: GPL-2.0
/*
 * Validation of the causal event records (SWITCH, WAKING, FORK, EXEC,
 * EXIT) by taproot_rec_check(): records built as the module builds them
 * pass; wrong sizes, snapshot lengths that point outside the record,
 * filenames without their NUL, and a snapshot's walk end (its
 * TAPROOT_SNAP_UNWIND bits) past the last or at odds with its flags in a
 * way the module never writes are refused with the reason.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "kernel/kernel-private.h"

#define BUF_WORDS	2048

static void assert_ok(const void *rec, size_t avail)
{
	const char *why = "unset";

	assert_int_equal(taproot_rec_check(rec, avail, &why), 0);
	assert_null(why);
}

static void assert_corrupt(const void *rec, size_t avail, const char *want)
{
	const char *why = NULL;

	assert_int_equal(taproot_rec_check(rec, avail, &why), -TAPROOT_ECORRUPT);
	assert_non_null(why);
	assert_string_equal(why, want);
}

static size_t pad8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/*
 * A record of @type with a fixed part of @fixed bytes, followed by a
 * snapshot of @nk kernel frames and @ulen user stack bytes when @flags
 * holds @stacks_flag. Returns its size.
 */
static size_t snapped_build(uint64_t *buf, uint16_t type, size_t fixed,
			    uint16_t flags, uint16_t stacks_flag, uint16_t nk,
			    uint32_t ulen)
{
	struct taproot_rec_header *h = (void *)buf;
	struct taproot_stack_snap *sn;
	size_t size = fixed;

	memset(buf, 0, BUF_WORDS * sizeof(*buf));
	if (flags & stacks_flag) {
		sn = (void *)((char *)buf + fixed);
		sn->kstack_nr = nk;
		sn->ustack_len = ulen;
		sn->flags = TAPROOT_SNAP_F_USER_REGS;
		size = pad8(fixed + sizeof(*sn) + nk * sizeof(uint64_t) + ulen);
	}
	h->size = (uint32_t)size;
	h->type = type;
	h->flags = flags;
	return size;
}

static size_t switch_build(uint64_t *buf, uint16_t flags, uint16_t nk, uint32_t ulen)
{
	return snapped_build(buf, TAPROOT_REC_SWITCH, sizeof(struct taproot_rec_switch),
			     flags, TAPROOT_SWITCH_F_STACKS, nk, ulen);
}

static size_t waking_build(uint64_t *buf, uint16_t flags, uint16_t nk, uint32_t ulen)
{
	return snapped_build(buf, TAPROOT_REC_WAKING, sizeof(struct taproot_rec_waking),
			     flags, TAPROOT_WAKING_F_STACKS, nk, ulen);
}

static size_t exec_build(uint64_t *buf, const char *filename)
{
	struct taproot_rec_exec *e = (void *)buf;
	size_t len = strlen(filename) + 1;

	memset(buf, 0, BUF_WORDS * sizeof(*buf));
	e->filename_len = (uint32_t)len;
	memcpy(e + 1, filename, len);
	e->hdr.type = TAPROOT_REC_EXEC;
	e->hdr.size = (uint32_t)pad8(sizeof(*e) + len);
	return e->hdr.size;
}

static void switch_valid_pass(void **state)
{
	uint64_t buf[BUF_WORDS];
	struct taproot_rec_header *h = (void *)buf;
	size_t size;

	size = switch_build(buf, TAPROOT_SWITCH_F_NEXT, 0, 0);
	assert_int_equal(size, 80);
	assert_ok(buf, size);
	assert_null(taproot_rec_snap(h));

	size = switch_build(buf, TAPROOT_SWITCH_F_PREV | TAPROOT_SWITCH_F_STACKS, 3, 13);
	assert_int_equal(size, pad8(80 + 152 + 24 + 13));
	assert_ok(buf, size + 100);
	assert_ptr_equal(taproot_rec_snap(h), (char *)buf + 80);
	assert_int_equal(taproot_rec_snap(h)->kstack_nr, 3);

	/* The most the ABI allows, and padding after it (a nested commit). */
	size = switch_build(buf, TAPROOT_SWITCH_F_PREV | TAPROOT_SWITCH_F_STACKS,
			    TAPROOT_KSTACK_MAX, 8192);
	h->size += 64;
	assert_ok(buf, size + 64);
}

static void switch_sizes_refused(void **state)
{
	uint64_t buf[BUF_WORDS];
	struct taproot_rec_header *h = (void *)buf;
	size_t size;

	size = switch_build(buf, TAPROOT_SWITCH_F_NEXT, 0, 0);
	h->size = 72;
	assert_corrupt(buf, size, "record without snapshot of the wrong size");
	h->size = 88;
	assert_corrupt(buf, 88, "record without snapshot of the wrong size");

	/* F_STACKS but no room for the snapshot itself. */
	size = switch_build(buf, TAPROOT_SWITCH_F_NEXT, 0, 0);
	h->flags |= TAPROOT_SWITCH_F_STACKS;
	assert_corrupt(buf, size, "stack snapshot beyond the record");
	h->size = 80 + 144;
	assert_corrupt(buf, 1024, "stack snapshot beyond the record");
}

static void snapshot_lengths_refused(void **state)
{
	uint64_t buf[BUF_WORDS];
	struct taproot_stack_snap *sn = (void *)((char *)buf + 80);
	const uint16_t f = TAPROOT_SWITCH_F_PREV | TAPROOT_SWITCH_F_STACKS;
	size_t size;

	size = switch_build(buf, f, 2, 16);
	sn->kstack_nr = 3;
	assert_corrupt(buf, size, "snapshot kstack and ustack overflow the record");

	size = switch_build(buf, f, 2, 16);
	sn->ustack_len = 17;
	assert_corrupt(buf, size, "snapshot kstack and ustack overflow the record");

	size = switch_build(buf, f, 2, 16);
	sn->kstack_nr = TAPROOT_KSTACK_MAX + 1;
	assert_corrupt(buf, size, "snapshot kstack_nr above TAPROOT_KSTACK_MAX");

	size = switch_build(buf, f, 2, 16);
	sn->ustack_len = TAPROOT_USTACK_MAX + 1;
	assert_corrupt(buf, size, "snapshot ustack_len above TAPROOT_USTACK_MAX");

	/* Both at their maxima in a small record: no arithmetic wraps. */
	size = switch_build(buf, f, 0, 0);
	sn->kstack_nr = TAPROOT_KSTACK_MAX;
	sn->ustack_len = TAPROOT_USTACK_MAX;
	assert_corrupt(buf, size, "snapshot kstack and ustack overflow the record");

	/* The same rules in a WAKING, whose snapshot starts at 64. */
	sn = (void *)((char *)buf + 64);
	size = waking_build(buf, TAPROOT_WAKING_F_STACKS | TAPROOT_WAKING_F_HARDIRQ, 4, 0);
	assert_ok(buf, size);
	sn->kstack_nr = 5;
	assert_corrupt(buf, size, "snapshot kstack and ustack overflow the record");
}

/* The bits of a snapshot's flags that say its walk ended @end. */
static uint16_t unwind_bits(unsigned int end)
{
	return (uint16_t)(end << TAPROOT_SNAP_UNWIND_SHIFT);
}

/*
 * Snapshots with the module's user pcs (TAPROOT_SNAP_F_UPCS): ustack_len
 * whole pcs, 1..TAPROOT_UNWIND_FRAMES_MAX, with USER_REGS; USTACK_TRUNC
 * (the frame cap) or USTACK_FAULT (a private fallback), not both, and
 * never USTACK_TOP.
 */
static void snapshot_upcs_checked(void **state)
{
	uint64_t buf[BUF_WORDS];
	struct taproot_rec_header *h = (void *)buf;
	struct taproot_stack_snap *sn = (void *)((char *)buf + 80);
	const uint16_t f = TAPROOT_SWITCH_F_PREV | TAPROOT_SWITCH_F_STACKS;
	const uint16_t upcs = TAPROOT_SNAP_F_USER_REGS | TAPROOT_SNAP_F_UPCS |
			      unwind_bits(TAPROOT_KUNWIND_COMPLETE);
	size_t size;

	size = switch_build(buf, f, 3, 5 * 8);
	sn->flags = upcs;
	assert_ok(buf, size);
	assert_ptr_equal(taproot_rec_snap(h), sn);
	assert_int_equal(TAPROOT_SNAP_UNWIND(taproot_rec_snap(h)->flags),
			 TAPROOT_KUNWIND_COMPLETE);
	sn->flags = TAPROOT_SNAP_F_USER_REGS | TAPROOT_SNAP_F_UPCS |
		    unwind_bits(TAPROOT_KUNWIND_MAX_FRAMES) |
		    TAPROOT_SNAP_F_USTACK_TRUNC | TAPROOT_SNAP_F_KSTACK_TRUNC;
	assert_ok(buf, size);
	sn->flags = TAPROOT_SNAP_F_USER_REGS | TAPROOT_SNAP_F_UPCS |
		    unwind_bits(TAPROOT_KUNWIND_NO_CFI) | TAPROOT_SNAP_F_USTACK_FAULT;
	assert_ok(buf, size);

	/* The most pcs a walk has, in a WAKING whose snapshot starts at 64. */
	size = waking_build(buf, TAPROOT_WAKING_F_STACKS, 0, TAPROOT_UNWIND_FRAMES_MAX * 8);
	((struct taproot_stack_snap *)((char *)buf + 64))->flags = upcs;
	assert_ok(buf, size);
	size = waking_build(buf, TAPROOT_WAKING_F_STACKS, 0, (TAPROOT_UNWIND_FRAMES_MAX + 1) * 8);
	((struct taproot_stack_snap *)((char *)buf + 64))->flags = upcs;
	assert_corrupt(buf, size,
		       "snapshot UPCS ustack_len not 8..8*TAPROOT_UNWIND_FRAMES_MAX by 8");

	size = switch_build(buf, f, 3, 12);
	sn->flags = upcs;
	assert_corrupt(buf, size,
		       "snapshot UPCS ustack_len not 8..8*TAPROOT_UNWIND_FRAMES_MAX by 8");
	size = switch_build(buf, f, 3, 0);
	sn->flags = upcs;
	assert_corrupt(buf, size,
		       "snapshot UPCS ustack_len not 8..8*TAPROOT_UNWIND_FRAMES_MAX by 8");

	size = switch_build(buf, f, 3, 16);
	sn->flags = TAPROOT_SNAP_F_UPCS;
	assert_corrupt(buf, size, "snapshot UPCS without USER_REGS");
	sn->flags = upcs | TAPROOT_SNAP_F_USTACK_TOP;
	assert_corrupt(buf, size, "snapshot UPCS with USTACK_TOP");
	sn->flags = TAPROOT_SNAP_F_USER_REGS | TAPROOT_SNAP_F_UPCS |
		    unwind_bits(TAPROOT_KUNWIND_MAX_FRAMES) |
		    TAPROOT_SNAP_F_USTACK_TRUNC | TAPROOT_SNAP_F_USTACK_FAULT;
	assert_corrupt(buf, size, "snapshot UPCS with USTACK_TRUNC and USTACK_FAULT");

	/* The pcs still inside the record. */
	sn->flags = upcs;
	sn->ustack_len = 24;
	assert_corrupt(buf, size, "snapshot kstack and ustack overflow the record");
}

/*
 * How a snapshot's walk ended (TAPROOT_SNAP_UNWIND()), as kmod/events.c
 * writes it: every end with the copy of a user part (NONE: no walk; a
 * fallback: the copy from the leaf), none but NONE without one; under
 * UPCS, COMPLETE alone, MAX_FRAMES with USTACK_TRUNC, the fallbacks and
 * NONE (USTACK_PRIVATE) with USTACK_FAULT. Every other combination, and
 * an end past the last, is refused.
 */
static void snapshot_unwind_checked(void **state)
{
	uint64_t buf[BUF_WORDS];
	struct taproot_rec_header *h = (void *)buf;
	struct taproot_stack_snap *sn = (void *)((char *)buf + 80);
	const uint16_t f = TAPROOT_SWITCH_F_PREV | TAPROOT_SWITCH_F_STACKS;
	const uint16_t regs = TAPROOT_SNAP_F_USER_REGS, upcs = regs | TAPROOT_SNAP_F_UPCS;
	const uint16_t trunc = TAPROOT_SNAP_F_USTACK_TRUNC, fault = TAPROOT_SNAP_F_USTACK_FAULT;
	size_t size;
	unsigned int end;

	for (end = 0; end < 16; end++) {
		bool whole = end == TAPROOT_KUNWIND_COMPLETE ||
			     end == TAPROOT_KUNWIND_MAX_FRAMES;

		/* A copy of the user stack: no walk, or one that fell back. */
		size = switch_build(buf, f, 2, 64);
		sn->flags = regs | unwind_bits(end) | TAPROOT_SNAP_F_USTACK_TOP;
		if (end >= TAPROOT_KUNWIND_NR)
			assert_corrupt(buf, size, "snapshot unwind not a TAPROOT_KUNWIND_*");
		else if (whole)
			assert_corrupt(buf, size,
				       "snapshot unwind COMPLETE or MAX_FRAMES without UPCS");
		else
			assert_ok(buf, size);
		if (end < TAPROOT_KUNWIND_NR)
			assert_int_equal(TAPROOT_SNAP_UNWIND(taproot_rec_snap(h)->flags), end);

		/* No user part: no walk. */
		sn->flags = unwind_bits(end);
		sn->ustack_len = 0;
		if (end >= TAPROOT_KUNWIND_NR)
			assert_corrupt(buf, size, "snapshot unwind not a TAPROOT_KUNWIND_*");
		else if (end != TAPROOT_KUNWIND_NONE)
			assert_corrupt(buf, size, "snapshot unwind not NONE without USER_REGS");
		else
			assert_ok(buf, size);

		/* The module's pcs, flagged as its walk ended, and every other way. */
		size = switch_build(buf, f, 2, 3 * 8);
		sn->flags = upcs | unwind_bits(end);
		if (end >= TAPROOT_KUNWIND_NR) {
			assert_corrupt(buf, size, "snapshot unwind not a TAPROOT_KUNWIND_*");
			continue;
		}
		if (end == TAPROOT_KUNWIND_COMPLETE)
			assert_ok(buf, size);
		else if (end == TAPROOT_KUNWIND_MAX_FRAMES)
			assert_corrupt(buf, size,
				       "snapshot UPCS: USTACK_TRUNC is not unwind MAX_FRAMES");
		else
			assert_corrupt(buf, size,
				       "snapshot UPCS: USTACK_FAULT is not a walk that stopped");

		sn->flags = upcs | unwind_bits(end) | trunc;
		if (end == TAPROOT_KUNWIND_MAX_FRAMES)
			assert_ok(buf, size);
		else
			assert_corrupt(buf, size,
				       "snapshot UPCS: USTACK_TRUNC is not unwind MAX_FRAMES");

		sn->flags = upcs | unwind_bits(end) | fault;
		if (end == TAPROOT_KUNWIND_MAX_FRAMES)
			assert_corrupt(buf, size,
				       "snapshot UPCS: USTACK_TRUNC is not unwind MAX_FRAMES");
		else if (whole)
			assert_corrupt(buf, size,
				       "snapshot UPCS: USTACK_FAULT is not a walk that stopped");
		else
			assert_ok(buf, size);

		sn->flags = upcs | unwind_bits(end) | trunc | fault;
		assert_corrupt(buf, size, "snapshot UPCS with USTACK_TRUNC and USTACK_FAULT");
	}

	/* The same in a WAKING, whose snapshot starts at 64: the waker's. */
	sn = (void *)((char *)buf + 64);
	size = waking_build(buf, TAPROOT_WAKING_F_STACKS, 0, 8);
	sn->flags = upcs | unwind_bits(TAPROOT_KUNWIND_NONE) | fault;	/* private, no walk */
	assert_ok(buf, size);
	sn->flags = upcs | unwind_bits(TAPROOT_KUNWIND_NO_PROC);
	assert_corrupt(buf, size, "snapshot UPCS: USTACK_FAULT is not a walk that stopped");
	/* An interrupt's wakeup: its kernel stack alone. */
	size = waking_build(buf, TAPROOT_WAKING_F_STACKS | TAPROOT_WAKING_F_HARDIRQ, 4, 0);
	sn->flags = 0;
	assert_ok(buf, size);
	sn->flags = unwind_bits(TAPROOT_KUNWIND_STALE);
	assert_corrupt(buf, size, "snapshot unwind not NONE without USER_REGS");
}

static void waking_sizes_refused(void **state)
{
	uint64_t buf[BUF_WORDS];
	struct taproot_rec_header *h = (void *)buf;
	size_t size;

	size = waking_build(buf, TAPROOT_WAKING_F_NEW, 0, 0);
	assert_int_equal(size, 64);
	assert_ok(buf, size);
	h->size = 56;
	assert_corrupt(buf, 64, "record without snapshot of the wrong size");
	h->size = 64;
	h->flags = TAPROOT_WAKING_F_STACKS;
	assert_corrupt(buf, 64, "stack snapshot beyond the record");
}

static void fork_exit_sizes_fixed(void **state)
{
	uint64_t buf[16] = { 0 };
	struct taproot_rec_header *h = (void *)buf;

	h->type = TAPROOT_REC_FORK;
	h->size = sizeof(struct taproot_rec_fork);
	assert_ok(buf, sizeof(buf));
	h->size += 8;
	assert_corrupt(buf, sizeof(buf), "fork record of the wrong size");
	h->size -= 16;
	assert_corrupt(buf, sizeof(buf), "fork record of the wrong size");

	h->type = TAPROOT_REC_EXIT;
	h->size = sizeof(struct taproot_rec_exit);
	assert_ok(buf, sizeof(buf));
	h->size = 56;
	assert_corrupt(buf, sizeof(buf), "exit record of the wrong size");
	h->size = 40;
	assert_corrupt(buf, sizeof(buf), "exit record of the wrong size");
	/* Nothing in the record speaks for a snapshot. */
	assert_null(taproot_rec_snap(h));
}

static void exec_valid_pass(void **state)
{
	uint64_t buf[BUF_WORDS];
	char name[TAPROOT_EXEC_FILENAME_MAX];
	size_t size;

	size = exec_build(buf, "/bin/true");
	assert_int_equal(size, 56 + 16);
	assert_ok(buf, size);
	size = exec_build(buf, "");
	assert_ok(buf, size);
	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	size = exec_build(buf, name);
	assert_ok(buf, size);
}

static void exec_filename_refused(void **state)
{
	uint64_t buf[BUF_WORDS];
	struct taproot_rec_exec *e = (void *)buf;
	char *name = (char *)(e + 1);
	size_t size;

	size = exec_build(buf, "/bin/true");
	name[9] = 'X';		/* the NUL is gone, padding has one later */
	assert_corrupt(buf, size, "exec filename not ended by its only NUL");

	size = exec_build(buf, "/bin/true");
	name[4] = '\0';		/* an early NUL */
	assert_corrupt(buf, size, "exec filename not ended by its only NUL");

	size = exec_build(buf, "/bin/true");
	e->filename_len = 0;
	assert_corrupt(buf, size, "exec filename_len not in 1..TAPROOT_EXEC_FILENAME_MAX");
	e->filename_len = TAPROOT_EXEC_FILENAME_MAX + 1;
	assert_corrupt(buf, size, "exec filename_len not in 1..TAPROOT_EXEC_FILENAME_MAX");
	e->filename_len = 17;	/* one byte past the record */
	assert_corrupt(buf, size, "exec filename overflows the record");

	size = exec_build(buf, "/bin/true");
	e->hdr.size = 48;
	assert_corrupt(buf, size, "exec smaller than its fixed part");
}

static void event_type_names(void **state)
{
	assert_string_equal(taproot_rec_type_name(TAPROOT_REC_SWITCH), "switch");
	assert_string_equal(taproot_rec_type_name(TAPROOT_REC_WAKING), "waking");
	assert_string_equal(taproot_rec_type_name(TAPROOT_REC_FORK), "fork");
	assert_string_equal(taproot_rec_type_name(TAPROOT_REC_EXEC), "exec");
	assert_string_equal(taproot_rec_type_name(TAPROOT_REC_EXIT), "exit");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(switch_valid_pass),
		cmocka_unit_test(switch_sizes_refused),
		cmocka_unit_test(snapshot_lengths_refused),
		cmocka_unit_test(snapshot_upcs_checked),
		cmocka_unit_test(snapshot_unwind_checked),
		cmocka_unit_test(waking_sizes_refused),
		cmocka_unit_test(fork_exit_sizes_fixed),
		cmocka_unit_test(exec_valid_pass),
		cmocka_unit_test(exec_filename_refused),
		cmocka_unit_test(event_type_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
