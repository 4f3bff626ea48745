/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Unwinding internals shared by lib/unwind/cfi.c (the CFI table compiler), lib/unwind/unwind.c
 * (the unwinder, its slow path and its table cache) and their unit tests.
 * Not for programs: the public API is the "user stack unwinding" section of
 * taproot.h.
 *
 * Registers are numbered as DWARF numbers them on x86-64: 0 rax, 1 rdx,
 * 2 rcx, 3 rbx, 4 rsi, 5 rdi, 6 rbp, 7 rsp, 8-15 r8-r15, 16 the return
 * address column (rip).
 */
#ifndef TAPROOT_UNWIND_PRIVATE_H
#define TAPROOT_UNWIND_PRIVATE_H

#include <elfutils/libdw.h>
#include <libelf.h>

#include <linux/taproot.h>

#include "unwind/unwind.h"
#include "util/util.h"

enum {
	TP_REG_RBP = 6,
	TP_REG_RSP = 7,
	TP_REG_R13 = 13,
	TP_REG_RIP = 16,
	TP_NR_REGS = 17,
};

/* ---------------------------------------------------------- CFI rules */

/* How the caller's frame is found from a pc's frame. */
enum tp_cfi_kind {
	TP_CFI_NONE = 0,	/* no CFI covers the pc (rules[0] of every table) */
	TP_CFI_SP,		/* CFA = rsp + cfa_off */
	TP_CFI_FP,		/* CFA = rbp + cfa_off */
	/*
	 * A lazy-binding PLT entry: CFA = rsp + cfa_off, plus 8 once the entry
	 * pushed its index: when (rip & 15) >= plt_thr. The expression
	 * binutils writes for .plt ("breg7 A; breg16 0; lit15; and; litK; ge;
	 * lit3; shl; plus").
	 */
	TP_CFI_PLT,
	/*
	 * A sigreturn trampoline (__restore_rt): the interrupted registers are
	 * in the ucontext at rsp (x86-64 rt_sigframe after pretcode, gregs at
	 * rsp + 40, in REG_R8..REG_RIP order). The FDE has the 'S'
	 * augmentation and the CFA expression "breg7 160; deref".
	 */
	TP_CFI_SIGNAL,
	TP_CFI_END,		/* RA undefined: the outermost frame */
	TP_CFI_SLOW,		/* only libdw can evaluate it (tp_step_slow()) */
};

/* Where the caller's rbp is. */
enum tp_cfi_reg {
	TP_RBP_SAME = 0,	/* unchanged (same value, or never saved) */
	TP_RBP_UNDEF,		/* lost */
	TP_RBP_CFA,		/* saved at CFA + rbp_off */
};

/* One interned rule; the fields a kind does not use are 0. */
struct tp_cfi_rule {
	uint8_t kind;		/* enum tp_cfi_kind */
	uint8_t rbp;		/* enum tp_cfi_reg */
	uint8_t src;		/* TP_CFI_SRC_*: the section of the FDE (slow path) */
	uint8_t plt_thr;	/* TP_CFI_PLT */
	int32_t cfa_off;
	int32_t ra_off;		/* RA saved at CFA + ra_off (-8 on x86-64) */
	int32_t rbp_off;
};

/* Where a table's rows came from: CFI sections, or Go's own table. */
enum { TP_CFI_SRC_EH = 0, TP_CFI_SRC_DEBUG = 1, TP_CFI_SRC_GO = 2 };

/*
 * The compiled CFI of one ELF: rows sorted by vaddr; row i covers
 * [base + pcs[i], base + pcs[i + 1]) with rules[row_rule[i]]. The last row
 * is a TP_CFI_NONE row at the end of the last FDE.
 */
struct tp_cfi_table {
	uint64_t base;
	uint32_t nr;			/* rows */
	uint32_t nr_rules;
	uint32_t *pcs;
	uint16_t *row_rule;
	struct tp_cfi_rule *rules;	/* rules[0] is TP_CFI_NONE */
	size_t bytes;			/* memory held, struct included */
	/* What compiling saw */
	uint32_t nr_fdes;		/* FDEs compiled */
	uint32_t fdes_skipped;		/* overlapping, outside text, undecodable */
	uint64_t covered;		/* bytes of text with a rule other than NONE */
	uint64_t slow;			/* bytes of text with TP_CFI_SLOW */
	uint64_t compile_ns;
};

/*
 * Compile the CFI of @elf (.eh_frame, then .debug_frame for the text that
 * .eh_frame does not cover, then Go's function table for the Go functions
 * neither covers: a rule per run of equal stack-pointer deltas, the saved
 * rbp at CFA - 16 in a frame of 16 bytes or more, the goroutine's and the
 * thread's first frames outermost) into *@tp, which the caller frees with
 * tp_cfi_table_free(). An ELF without CFI gives an empty table (nr 0), not
 * an error. FDEs that overlap one already compiled, that lie outside the
 * executable PT_LOAD segments or whose addresses cannot be decoded are
 * skipped and counted. Errors: -ENOMEM; -E2BIG for text spanning 4 GiB or
 * more than 65535 distinct rules; -EINVAL when @elf is not a 64-bit x86-64
 * ELF; each with a message.
 */
int tp_cfi_compile(Elf *elf, struct tp_cfi_table **tp);

void tp_cfi_table_free(struct tp_cfi_table *t);

/* The index of the rule for ELF vaddr @vaddr in @t->rules (0: no CFI). */
static inline unsigned int tp_cfi_lookup(const struct tp_cfi_table *t, uint64_t vaddr)
{
	uint64_t off = vaddr - t->base;
	uint32_t lo = 0, hi = t->nr;

	if (vaddr < t->base || off > UINT32_MAX || !t->nr || off < t->pcs[0])
		return 0;
	/* the last row with pcs[row] <= off */
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (t->pcs[mid] <= off)
			lo = mid;
		else
			hi = mid;
	}
	return t->row_rule[lo];
}

/*
 * The rule libdw's frame @f describes, interned by nobody: the classifier
 * tp_cfi_compile() applies to each row. @src is TP_CFI_SRC_*.
 */
void tp_cfi_classify(Dwarf_Frame *f, uint8_t src, struct tp_cfi_rule *r);

/* "sp", "fp", "plt", "signal", "end", "slow", "none" */
const char *tp_cfi_kind_name(unsigned int kind);

/* ---------------------------------------------------------- one step */

/* A frame's registers; a register whose bit is clear in @valid is unknown. */
struct tp_regs {
	uint64_t r[TP_NR_REGS];
	uint32_t valid;
};

/* The stack snapshot: @len bytes copied from the address @base. */
struct tp_mem {
	const uint8_t *buf;
	uint64_t base;
	size_t len;
};

/* Outcome of one step, also an enum taproot_unwind_end for the ends. */
enum tp_step {
	TP_STEP_OK = -1,	/* @out is the caller's frame */
	/* otherwise an enum taproot_unwind_end */
};

/*
 * Unwind one frame by rule @r: from the registers @in of a frame whose pc
 * (rip, unadjusted) is in @in, compute the caller's registers @out: rsp,
 * rbp and rip for the table's kinds (the other registers become unknown),
 * every register restored from the ucontext for TP_CFI_SIGNAL. Returns
 * TP_STEP_OK or an end: TAPROOT_UNWIND_TRUNCATED (a word beyond the end of
 * @mem), TAPROOT_UNWIND_BAD_FRAME (a word below @mem, or a register the rule
 * needs is unknown), TAPROOT_UNWIND_COMPLETE (TP_CFI_END). Not for
 * TP_CFI_NONE or TP_CFI_SLOW.
 */
int tp_step_fast(const struct tp_cfi_rule *r, const struct tp_regs *in,
		 const struct tp_mem *mem, struct tp_regs *out);

/*
 * The same step by libdw: the frame of @cfi at ELF vaddr @vaddr (the pc,
 * minus 1 for a return address, minus the load bias), with every register
 * rule evaluated from the DWARF expressions libdw gives (dwarf_frame_cfa(),
 * dwarf_frame_register()). Registers a rule leaves "same value" keep @in's;
 * "undefined" ones become unknown. *@signal (when not NULL) tells whether
 * the FDE is a signal frame ('S'). Returns as tp_step_fast(), plus
 * TAPROOT_UNWIND_NO_CFI when @cfi has no FDE for @vaddr, and
 * TAPROOT_UNWIND_BAD_FRAME for expressions this evaluator does not know.
 */
int tp_step_slow(Dwarf_CFI *cfi, uint64_t vaddr, const struct tp_regs *in,
		 const struct tp_mem *mem, struct tp_regs *out, bool *signal);

#endif /* TAPROOT_UNWIND_PRIVATE_H */
