// SPDX-License-Identifier: GPL-2.0
/*
 * The CFI table compiler: an ELF's .eh_frame and .debug_frame, read through
 * libdw, become a sorted array of {pc -> rule id} rows over a small set of
 * interned rules (struct tp_cfi_rule).
 *
 * The FDEs are enumerated with dwarf_next_cfi() (their addresses decoded
 * here, per the CIE's 'R' encoding); each FDE is then walked row by row:
 * dwarf_cfi_addrframe() at the row's first address gives the row's state
 * and its [start, end), and the next row starts at that end. A row's state
 * is reduced to a rule by tp_cfi_classify(); what the table cannot express
 * becomes TP_CFI_SLOW, left to libdw at unwind time.
 */
#include <dwarf.h>
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/runtime.h"
#include "unwind/unwind-private.h"
#include "util/clock.h"
#include "util/hash.h"

const char *tp_cfi_kind_name(unsigned int kind)
{
	static const char *const names[] = {
		[TP_CFI_NONE] = "none", [TP_CFI_SP] = "sp", [TP_CFI_FP] = "fp",
		[TP_CFI_PLT] = "plt", [TP_CFI_SIGNAL] = "signal",
		[TP_CFI_END] = "end", [TP_CFI_SLOW] = "slow",
	};

	return kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "?";
}

/* ------------------------------------------------------------ classify */

static bool fits_s32(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

/*
 * A register saved at CFA + off: "call_frame_cfa" or "call_frame_cfa;
 * plus_uconst off" (libdw's form of DW_CFA_offset and friends).
 */
static bool cfa_plus(const Dwarf_Op *ops, size_t nops, int32_t *off)
{
	if (nops < 1 || nops > 2 || ops[0].atom != DW_OP_call_frame_cfa)
		return false;
	if (nops == 1) {
		*off = 0;
		return true;
	}
	if (ops[1].atom != DW_OP_plus_uconst || !fits_s32((int64_t)ops[1].number))
		return false;
	*off = (int32_t)(int64_t)ops[1].number;
	return true;
}

/* lit0..lit31 with value @v */
static bool is_lit(const Dwarf_Op *op, unsigned int *v)
{
	if (op->atom < DW_OP_lit0 || op->atom > DW_OP_lit31)
		return false;
	*v = op->atom - DW_OP_lit0;
	return true;
}

/* breg7 A; breg16 0; lit15; and; litK; ge; lit3; shl; plus */
static bool plt_expr(const Dwarf_Op *ops, size_t nops, struct tp_cfi_rule *r)
{
	unsigned int mask, thr, shift;

	if (nops != 9 || ops[0].atom != DW_OP_breg7 || ops[1].atom != DW_OP_breg16 ||
	    ops[1].number != 0 || !is_lit(&ops[2], &mask) || mask != 15 ||
	    ops[3].atom != DW_OP_and || !is_lit(&ops[4], &thr) || thr > 15 ||
	    ops[5].atom != DW_OP_ge || !is_lit(&ops[6], &shift) || shift != 3 ||
	    ops[7].atom != DW_OP_shl || ops[8].atom != DW_OP_plus ||
	    !fits_s32((int64_t)ops[0].number))
		return false;
	r->cfa_off = (int32_t)(int64_t)ops[0].number;
	r->plt_thr = (uint8_t)thr;
	return true;
}

/*
 * glibc's __restore_rt on x86-64: CFA "breg7 160; deref" (uc_mcontext.rsp),
 * RA at rsp + 168 (uc_mcontext.rip): the layout TP_CFI_SIGNAL restores.
 */
static bool signal_frame(Dwarf_Frame *f, const Dwarf_Op *cfa, size_t ncfa)
{
	Dwarf_Op mem[3], *ops;
	size_t nops;

	if (ncfa != 2 || cfa[0].atom != DW_OP_breg7 || cfa[0].number != 160 ||
	    cfa[1].atom != DW_OP_deref)
		return false;
	if (dwarf_frame_register(f, TP_REG_RIP, mem, &ops, &nops) != 0 ||
	    nops != 2 || ops[0].atom != DW_OP_call_frame_cfa ||
	    ops[1].atom != DW_OP_breg7 || ops[1].number != 168)
		return false;
	return true;
}

void tp_cfi_classify(Dwarf_Frame *f, uint8_t src, struct tp_cfi_rule *r)
{
	Dwarf_Op mem[3], *ops, *cfa;
	size_t nops, ncfa;
	Dwarf_Addr start, end;
	bool signal = false;
	int32_t off;

	memset(r, 0, sizeof(*r));
	r->src = src;
	r->kind = TP_CFI_SLOW;
	if (dwarf_frame_info(f, &start, &end, &signal) != TP_REG_RIP)
		return;

	/* The return address first: undefined marks the outermost frame. */
	if (dwarf_frame_register(f, TP_REG_RIP, mem, &ops, &nops) != 0)
		return;
	if (nops == 0 && ops == mem) {
		r->kind = TP_CFI_END;
		return;
	}

	if (dwarf_frame_cfa(f, &cfa, &ncfa) != 0 || ncfa == 0)
		return;
	if (signal) {
		if (signal_frame(f, cfa, ncfa))
			r->kind = TP_CFI_SIGNAL;
		return;
	}
	if (nops == 0 || !cfa_plus(ops, nops, &r->ra_off))
		return;

	if (ncfa == 1 && cfa[0].atom == DW_OP_bregx &&
	    (cfa[0].number == TP_REG_RSP || cfa[0].number == TP_REG_RBP) &&
	    fits_s32((int64_t)cfa[0].number2)) {
		r->kind = cfa[0].number == TP_REG_RSP ? TP_CFI_SP : TP_CFI_FP;
		r->cfa_off = (int32_t)(int64_t)cfa[0].number2;
	} else if (plt_expr(cfa, ncfa, r)) {
		r->kind = TP_CFI_PLT;
	} else {
		r->kind = TP_CFI_SLOW;
		r->ra_off = 0;
		return;
	}

	if (dwarf_frame_register(f, TP_REG_RBP, mem, &ops, &nops) != 0)
		goto slow;
	if (nops == 0)
		r->rbp = ops ? TP_RBP_UNDEF : TP_RBP_SAME;
	else if (cfa_plus(ops, nops, &off))
		r->rbp = TP_RBP_CFA, r->rbp_off = off;
	else
		goto slow;
	return;
slow:
	memset(r, 0, sizeof(*r));
	r->src = src;
	r->kind = TP_CFI_SLOW;
}

/* ---------------------------------------------------------- FDE list */

struct fde {
	uint64_t lo, hi;
	uint64_t cost;		/* of walking it row by row: see program_ok() */
	uint8_t src;
};

struct cie {
	Dwarf_Off off;
	uint8_t fde_enc;	/* DW_EH_PE_* of FDE addresses */
	bool ok;		/* the augmentation was understood, the program sane */
	bool z;			/* FDEs carry sized augmentation data */
	size_t insns;		/* bytes of initial instructions */
};

/* One CFI section being enumerated. */
struct cfi_sec {
	Elf_Data *data;
	uint64_t vaddr;		/* sh_addr */
	bool eh;
	uint8_t src;
	struct cie *cies;
	size_t nr_cies, alloc_cies;
};

struct compile {
	Elf *elf;
	const unsigned char *ident;
	/* libdw's view of .eh_frame and .debug_frame; NULL when absent */
	Dwarf_CFI *eh_cfi, *dbg_cfi;
	Dwarf *dbg;
	struct fde *fdes;
	size_t nr_fdes, alloc_fdes;
	uint32_t skipped;
	uint64_t budget;	/* row-by-row walking left, in program bytes run */
	/* executable PT_LOAD ranges */
	uint64_t text_lo[16], text_hi[16];
	unsigned int nr_text;
	/* rows */
	uint64_t *pcs;
	uint16_t *rr;
	size_t nr, alloc;
	/* rules, interned by open addressing */
	struct tp_cfi_rule *rules;
	size_t nr_rules, alloc_rules;
	struct tp_index rule_index;
	/* Go's function table, when the file has one */
	struct tp_gotab go;
	bool has_go;
};

static uint64_t uleb(const uint8_t **pp, const uint8_t *end, bool *ok)
{
	uint64_t v = 0;
	unsigned int shift = 0;

	while (*pp < end) {
		uint8_t b = *(*pp)++;

		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			return v;
	}
	*ok = false;
	return 0;
}

static int64_t sleb(const uint8_t **pp, const uint8_t *end, bool *ok)
{
	uint64_t v = 0;
	unsigned int shift = 0;
	uint8_t b = 0;

	while (*pp < end) {
		b = *(*pp)++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80)) {
			if (shift < 64 && (b & 0x40))
				v |= ~(uint64_t)0 << shift;
			return (int64_t)v;
		}
	}
	*ok = false;
	return 0;
}

static uint64_t fixed(const uint8_t **pp, const uint8_t *end, unsigned int n,
		      bool sign, bool *ok)
{
	uint64_t v = 0;

	if ((size_t)(end - *pp) < n) {
		*ok = false;
		return 0;
	}
	memcpy(&v, *pp, n);	/* x86-64: little endian, as the ELF */
	*pp += n;
	if (sign && n < 8 && (v & (1ULL << (8 * n - 1))))
		v |= ~0ULL << (8 * n);
	return v;
}

/*
 * Read a DW_EH_PE_* encoded pointer at *@pp (@vaddr its address, for
 * pcrel); @value_only ignores the application (an FDE's address_range).
 */
static bool read_encoded(uint8_t enc, const uint8_t **pp, const uint8_t *end,
			 uint64_t vaddr, bool value_only, uint64_t *out)
{
	bool ok = true;
	uint64_t v;

	if (enc == DW_EH_PE_omit)
		return false;
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:	v = fixed(pp, end, 8, false, &ok); break;
	case DW_EH_PE_uleb128:	v = uleb(pp, end, &ok); break;
	case DW_EH_PE_udata2:	v = fixed(pp, end, 2, false, &ok); break;
	case DW_EH_PE_udata4:	v = fixed(pp, end, 4, false, &ok); break;
	case DW_EH_PE_udata8:	v = fixed(pp, end, 8, false, &ok); break;
	case DW_EH_PE_sleb128:	v = (uint64_t)sleb(pp, end, &ok); break;
	case DW_EH_PE_sdata2:	v = fixed(pp, end, 2, true, &ok); break;
	case DW_EH_PE_sdata4:	v = fixed(pp, end, 4, true, &ok); break;
	case DW_EH_PE_sdata8:	v = fixed(pp, end, 8, true, &ok); break;
	default:		return false;
	}
	if (!ok)
		return false;
	if (!value_only) {
		switch (enc & 0x70) {
		case DW_EH_PE_absptr:	break;
		case DW_EH_PE_pcrel:	v += vaddr; break;
		default:		return false;
		}
	}
	*out = v;
	return true;
}

/*
 * A CFA program is outside input, and libdw's cost of running it is not
 * bounded by its size: a row's state holds every register up to the
 * highest one the program names (so one corrupt register number costs
 * gigabytes), and dwarf_cfi_addrframe() runs the FDE's program again from
 * its start for each row, so that walking an FDE of R rows and B bytes
 * costs R * B.
 *
 * So each program is read first without running it (program_ok()): one
 * that names a register above TP_CFI_MAX_REG (x86-64's psABI numbers end
 * at 125, k7) or is malformed is not used, as libdw would fail on it
 * anyway; and an FDE whose walk would cost more than TP_CFI_WALK_FDE, or
 * more than what is left of TP_CFI_WALK_BUDGET for the whole file,
 * becomes one TP_CFI_SLOW row: libdw runs it once per unwound frame
 * instead, which costs its size. The cost is counted as (rows + 1) *
 * (CIE + FDE program bytes), about twice what libdw runs. The bounds are
 * set so that the largest real libraries compile whole and a hostile file
 * costs seconds at most (BENCHMARKS.md, "Bounds of the CFI compiler").
 */
#define TP_CFI_MAX_REG		127
#define TP_CFI_WALK_FDE		(1ULL << 26)
#define TP_CFI_WALK_BUDGET	(1ULL << 30)
/* A Go frame larger is nonsense: the module's bound on a rule's offsets */
#define TP_GO_FRAME_MAX		(TAPROOT_RULE_OFF_MAX - 8)

/* Skip a ULEB128 register operand; false when it is past TP_CFI_MAX_REG. */
static bool reg_ok(const uint8_t **pp, const uint8_t *end, bool *ok)
{
	return uleb(pp, end, ok) <= TP_CFI_MAX_REG;
}

/*
 * Read the CFA program [@p, @end) (@addr_enc: how DW_CFA_set_loc's
 * operand is encoded, DW_EH_PE_absptr in .debug_frame): false when it is
 * malformed or names a register above TP_CFI_MAX_REG; *@rows counts the
 * ops that start a row.
 */
static bool program_ok(const uint8_t *p, const uint8_t *end, uint8_t addr_enc,
		       uint64_t *rows)
{
	bool ok = true;
	uint64_t v;

	*rows = 0;
	while (ok && p < end) {
		uint8_t op = *p++;

		switch (op & 0xc0) {
		case DW_CFA_advance_loc:
			++*rows;
			continue;
		case DW_CFA_offset:
			if ((op & 0x3f) > TP_CFI_MAX_REG)
				return false;
			uleb(&p, end, &ok);
			continue;
		case DW_CFA_restore:
			continue;
		}
		switch (op) {
		case DW_CFA_nop:
		case DW_CFA_remember_state:
		case DW_CFA_restore_state:
		case DW_CFA_GNU_window_save:
			break;
		case DW_CFA_set_loc:
			if (!read_encoded(addr_enc, &p, end, 0, true, &v))
				return false;
			++*rows;
			break;
		case DW_CFA_advance_loc1:
		case DW_CFA_advance_loc2:
		case DW_CFA_advance_loc4:
			fixed(&p, end, op == DW_CFA_advance_loc1 ? 1 :
				       op == DW_CFA_advance_loc2 ? 2 : 4, false, &ok);
			++*rows;
			break;
		case DW_CFA_offset_extended:
		case DW_CFA_def_cfa:
		case DW_CFA_val_offset:
		case DW_CFA_GNU_negative_offset_extended:
			if (!reg_ok(&p, end, &ok))
				return false;
			uleb(&p, end, &ok);
			break;
		case DW_CFA_offset_extended_sf:
		case DW_CFA_def_cfa_sf:
		case DW_CFA_val_offset_sf:
			if (!reg_ok(&p, end, &ok))
				return false;
			sleb(&p, end, &ok);
			break;
		case DW_CFA_restore_extended:
		case DW_CFA_undefined:
		case DW_CFA_same_value:
		case DW_CFA_def_cfa_register:
			if (!reg_ok(&p, end, &ok))
				return false;
			break;
		case DW_CFA_register:
			if (!reg_ok(&p, end, &ok) || !reg_ok(&p, end, &ok))
				return false;
			break;
		case DW_CFA_def_cfa_offset:
		case DW_CFA_GNU_args_size:
			uleb(&p, end, &ok);
			break;
		case DW_CFA_def_cfa_offset_sf:
			sleb(&p, end, &ok);
			break;
		case DW_CFA_expression:
		case DW_CFA_val_expression:
		case DW_CFA_def_cfa_expression:
			if (op != DW_CFA_def_cfa_expression && !reg_ok(&p, end, &ok))
				return false;
			v = uleb(&p, end, &ok);	/* the block */
			if (ok && v > (uint64_t)(end - p))
				return false;
			if (ok)
				p += v;
			break;
		default:
			return false;	/* libdw does not know it either */
		}
	}
	return ok;
}

/* Parse the CIE at section offset @off of @s into @c. */
static void parse_cie(struct compile *cc, struct cfi_sec *s, Dwarf_Off off,
		      struct cie *c)
{
	Dwarf_CFI_Entry e;
	Dwarf_Off next;
	const uint8_t *p, *end;
	const char *aug;
	uint64_t rows;

	c->off = off;
	c->ok = false;
	c->z = false;
	c->fde_enc = DW_EH_PE_absptr;
	if (dwarf_next_cfi(cc->ident, s->data, s->eh, off, &next, &e) != 0 ||
	    !dwarf_cfi_cie_p(&e))
		return;
	c->insns = (size_t)(e.cie.initial_instructions_end - e.cie.initial_instructions);
	if (!program_ok(e.cie.initial_instructions, e.cie.initial_instructions_end,
			DW_EH_PE_absptr, &rows))
		return;
	aug = e.cie.augmentation;
	if (!aug || !aug[0]) {
		c->ok = true;
		return;
	}
	if (aug[0] != 'z')
		return;
	c->z = true;
	p = e.cie.augmentation_data;
	end = p + e.cie.augmentation_data_size;
	for (aug++; *aug; aug++) {
		uint64_t ignored;

		switch (*aug) {
		case 'R':
			if (p >= end)
				return;
			c->fde_enc = *p++;
			break;
		case 'L':
			if (p >= end)
				return;
			p++;
			break;
		case 'P':
			if (p >= end)
				return;
			{
				uint8_t enc = *p++;

				/* aligned or indirect: the size still follows the format */
				if (!read_encoded(enc & 0x0f, &p, end, 0, true, &ignored))
					return;
			}
			break;
		case 'S':
		case 'B':
			break;
		default:
			/* 'z' sizes the data: what follows is still usable */
			c->ok = true;
			return;
		}
	}
	c->ok = true;
}

static const struct cie *find_cie(struct compile *cc, struct cfi_sec *s,
				  Dwarf_Off off)
{
	size_t lo = 0, hi = s->nr_cies;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->cies[mid].off == off)
			return &s->cies[mid];
		if (s->cies[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (tp_grow((void **)&s->cies, &s->alloc_cies, s->nr_cies + 1, sizeof(*s->cies)))
		return NULL;
	memmove(&s->cies[lo + 1], &s->cies[lo], (s->nr_cies - lo) * sizeof(*s->cies));
	s->nr_cies++;
	parse_cie(cc, s, off, &s->cies[lo]);
	return &s->cies[lo];
}

static bool in_text(const struct compile *cc, uint64_t lo, uint64_t hi)
{
	for (unsigned int i = 0; i < cc->nr_text; i++)
		if (lo >= cc->text_lo[i] && hi <= cc->text_hi[i])
			return true;
	return false;
}

/* Add the FDEs of section @s to cc->fdes. */
static int enumerate(struct compile *cc, struct cfi_sec *s)
{
	Dwarf_Off off = 0, next;
	Dwarf_CFI_Entry e;
	int ret = 0;

	for (;;) {
		const struct cie *c;
		const uint8_t *p, *end;
		uint64_t lo, len, rows;
		int r = dwarf_next_cfi(cc->ident, s->data, s->eh, off, &next, &e);

		if (r != 0)
			break;		/* end, or garbage: keep what we have */
		off = next;
		if (dwarf_cfi_cie_p(&e))
			continue;
		c = find_cie(cc, s, e.fde.CIE_pointer);
		if (!c) {
			ret = -ENOMEM;
			break;
		}
		p = e.fde.start;
		end = e.fde.end;
		if (!c->ok ||
		    !read_encoded(c->fde_enc, &p, end,
				  s->vaddr + (uint64_t)(p - (const uint8_t *)s->data->d_buf),
				  false, &lo) ||
		    !read_encoded(c->fde_enc, &p, end, 0, true, &len)) {
			cc->skipped++;
			continue;
		}
		if (len == 0)
			continue;
		if (lo + len < lo || !in_text(cc, lo, lo + len)) {
			cc->skipped++;
			continue;
		}
		/* The program follows the augmentation data, sized with 'z'. */
		if (c->z) {
			bool ok = true;
			uint64_t n = uleb(&p, end, &ok);

			if (!ok || n > (uint64_t)(end - p)) {
				cc->skipped++;
				continue;
			}
			p += n;
		}
		if (!program_ok(p, end, s->eh ? c->fde_enc : DW_EH_PE_absptr, &rows)) {
			cc->skipped++;
			continue;
		}
		if (tp_grow((void **)&cc->fdes, &cc->alloc_fdes, cc->nr_fdes + 1,
			 sizeof(*cc->fdes))) {
			ret = -ENOMEM;
			break;
		}
		cc->fdes[cc->nr_fdes++] = (struct fde){
			lo, lo + len, (rows + 1) * (c->insns + (uint64_t)(end - p)), s->src,
		};
	}
	free(s->cies);
	s->cies = NULL;
	s->nr_cies = s->alloc_cies = 0;
	return ret;
}

/*
 * Which of two FDEs at one address is compiled (the other overlaps it):
 * .eh_frame's, then Go's table, then .debug_frame's, whose FDEs in a Go
 * binary say nothing of rbp (Go's table says where it is saved), so that
 * a Go binary unwinds the same stripped or not.
 */
static int src_rank(uint8_t src)
{
	return src == TP_CFI_SRC_EH ? 0 : src == TP_CFI_SRC_GO ? 1 : 2;
}

static int fde_cmp(const void *a, const void *b)
{
	const struct fde *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->src != y->src)
		return src_rank(x->src) < src_rank(y->src) ? -1 : 1;
	return x->hi < y->hi ? -1 : x->hi > y->hi;
}

/* ---------------------------------------------------------- rules, rows */

static uint32_t rule_hash(const struct tp_cfi_rule *r)
{
	uint64_t h = tp_hash_mix(0, (uint64_t)r->kind | (uint64_t)r->rbp << 8 |
				 (uint64_t)r->src << 16 | (uint64_t)r->plt_thr << 24 |
				 (uint64_t)(uint32_t)r->cfa_off << 32);

	h = tp_hash_mix(h, (uint64_t)(uint32_t)r->ra_off << 32 | (uint32_t)r->rbp_off);
	return (uint32_t)tp_hash_fin(h);
}

/* Whether rule @idx of the compile @ctx is @key (tp_index_eq). */
static bool rule_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct tp_cfi_rule *a = &((const struct compile *)ctx)->rules[idx], *b = key;

	return a->kind == b->kind && a->rbp == b->rbp && a->src == b->src &&
	       a->plt_thr == b->plt_thr && a->cfa_off == b->cfa_off &&
	       a->ra_off == b->ra_off && a->rbp_off == b->rbp_off;
}

/* The index of rule @r, interned. -ENOMEM, -E2BIG. */
static int intern(struct compile *cc, const struct tp_cfi_rule *r)
{
	uint32_t hash = rule_hash(r);
	struct tp_index_slot *slot;

	/* slow rules differ only by section: the slow path re-reads the FDE */
	if (tp_index_reserve(&cc->rule_index))
		return -ENOMEM;
	slot = tp_index_probe(&cc->rule_index, hash, rule_eq, cc, r);
	if (slot->idx1)
		return (int)slot->idx1 - 1;
	if (cc->nr_rules > UINT16_MAX)
		return tp_err(-E2BIG, "CFI: more than %u distinct rules", UINT16_MAX + 1);
	if (tp_grow((void **)&cc->rules, &cc->alloc_rules, cc->nr_rules + 1,
		    sizeof(*cc->rules)))
		return -ENOMEM;
	cc->rules[cc->nr_rules] = *r;
	tp_index_set(&cc->rule_index, slot, hash, cc->nr_rules);
	return (int)cc->nr_rules++;
}

/* Rule @rule from @pc on; a row at the same pc as the last replaces it. */
static int add_row(struct compile *cc, uint64_t pc, unsigned int rule)
{
	if (cc->nr && cc->pcs[cc->nr - 1] == pc) {
		cc->nr--;
	}
	if (cc->nr && cc->rr[cc->nr - 1] == rule)
		return 0;
	if (cc->nr + 1 > cc->alloc) {
		size_t a = cc->alloc;

		if (tp_grow((void **)&cc->pcs, &a, cc->nr + 1, sizeof(*cc->pcs)))
			return -ENOMEM;
		a = cc->alloc;
		if (tp_grow((void **)&cc->rr, &a, cc->nr + 1, sizeof(*cc->rr)))
			return -ENOMEM;
		cc->alloc = a;
	}
	cc->pcs[cc->nr] = pc;
	cc->rr[cc->nr] = (uint16_t)rule;
	cc->nr++;
	return 0;
}

/* Rule @r, interned, from @pc on. */
static int add_rule_row(struct compile *cc, uint64_t pc, const struct tp_cfi_rule *r)
{
	int id = intern(cc, r);

	return id < 0 ? id : add_row(cc, pc, (unsigned int)id);
}

/* Walk the rows of FDE @f. */
static int compile_fde(struct compile *cc, Dwarf_CFI *cfi, const struct fde *f,
		       struct tp_cfi_table *t)
{
	uint64_t pc = f->lo;
	int ret;

	/* Too costly to walk (see program_ok()): libdw's at unwind time. */
	if (f->cost > TP_CFI_WALK_FDE || f->cost > cc->budget) {
		struct tp_cfi_rule r = { .kind = TP_CFI_SLOW, .src = f->src };

		t->covered += f->hi - f->lo;
		t->slow += f->hi - f->lo;
		return add_rule_row(cc, f->lo, &r);
	}
	cc->budget -= f->cost;
	while (pc < f->hi) {
		Dwarf_Frame *frame;
		Dwarf_Addr start, end;
		struct tp_cfi_rule r;
		bool signal;

		if (dwarf_cfi_addrframe(cfi, pc, &frame) != 0) {
			/* libdw finds no FDE here after all: no CFI */
			return add_row(cc, pc, 0);
		}
		tp_cfi_classify(frame, f->src, &r);
		dwarf_frame_info(frame, &start, &end, &signal);
		free(frame);
		if (end <= pc || end > f->hi)
			end = f->hi;
		ret = add_rule_row(cc, pc, &r);
		if (ret)
			return ret;
		if (r.kind != TP_CFI_NONE)
			t->covered += end - pc;
		if (r.kind == TP_CFI_SLOW)
			t->slow += end - pc;
		pc = end;
	}
	return 0;
}

static Elf_Scn *find_section(Elf *elf, const char *name, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, sh) || sh->sh_type == SHT_NOBITS)
			continue;
		n = elf_strptr(elf, shstrndx, sh->sh_name);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

void tp_cfi_table_free(struct tp_cfi_table *t)
{
	if (!t)
		return;
	free(t->pcs);
	free(t->row_rule);
	free(t->rules);
	free(t);
}

/* The executable PT_LOAD ranges of cc->elf (the first 16). */
static void compile_text_ranges(struct compile *cc)
{
	size_t nphdr;

	if (elf_getphdrnum(cc->elf, &nphdr) != 0)
		return;
	for (size_t i = 0; i < nphdr && cc->nr_text < 16; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(cc->elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    !(ph.p_flags & PF_X))
			continue;
		cc->text_lo[cc->nr_text] = ph.p_vaddr;
		cc->text_hi[cc->nr_text++] = ph.p_vaddr + ph.p_memsz;
	}
}

/* Each Go function in the text, as an FDE of its own (TP_CFI_SRC_GO). */
static int enumerate_go(struct compile *cc)
{
	for (uint32_t i = 0; i < cc->go.nfunc; i++) {
		struct tp_gofunc f;

		if (tp_gotab_nth(&cc->go, i, &f) != 0 || f.entry == f.end ||
		    !in_text(cc, f.entry, f.end))
			continue;
		if (tp_grow((void **)&cc->fdes, &cc->alloc_fdes, cc->nr_fdes + 1,
			    sizeof(*cc->fdes)))
			return -ENOMEM;
		cc->fdes[cc->nr_fdes++] = (struct fde){ f.entry, f.end, 0, TP_CFI_SRC_GO };
	}
	return 0;
}

/*
 * Go functions where a walk ends: a goroutine's first frame (goexit), a
 * thread's (mstart, rt0_go), and those that switch stacks without a frame
 * that leads back (mcall, morestack).
 */
static bool go_outermost(const char *name)
{
	static const char *const names[] = {
		"runtime.goexit", "runtime.mstart", "runtime.rt0_go",
		"runtime.mcall", "runtime.morestack",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i]))
			return true;
	return false;
}

/*
 * The rows of the Go function of pseudo-FDE @f: from each run of pcs with
 * one stack-pointer delta D (bytes below the entry's sp), CFA = rsp + D +
 * 8 and the return address at CFA - 8, as for any frame. Go saves the
 * caller's rbp at the top of a frame that has one (MOVQ BP, size-8(SP)):
 * CFA - 16 once D >= 16, else rbp is untouched.
 */
static int compile_go(struct compile *cc, const struct fde *f, struct tp_cfi_table *t)
{
	struct tp_gofunc fn;
	uint64_t pc = f->lo;

	if (tp_gotab_func(&cc->go, f->lo, &fn) != 0 || fn.entry != f->lo)
		return 0;
	if (go_outermost(fn.name)) {
		struct tp_cfi_rule r = { .kind = TP_CFI_END, .src = TP_CFI_SRC_GO };

		t->covered += f->hi - f->lo;
		return add_rule_row(cc, f->lo, &r);
	}
	while (pc < f->hi) {
		struct tp_cfi_rule r = {
			.kind = TP_CFI_SP, .src = TP_CFI_SRC_GO, .ra_off = -8,
		};
		uint64_t until;
		int32_t d;
		int ret;

		/* A table that says nothing here, or nonsense: no rule. */
		if (tp_gotab_spdelta(&cc->go, &fn, pc, &d, &until) != 0 || d < 0 ||
		    d > TP_GO_FRAME_MAX)
			return add_row(cc, pc, 0);
		r.cfa_off = d + 8;
		if (d >= 16) {
			r.rbp = TP_RBP_CFA;
			r.rbp_off = -16;
		}
		ret = add_rule_row(cc, pc, &r);
		if (ret)
			return ret;
		t->covered += until - pc;
		pc = until;
	}
	return 0;
}

/*
 * Collect the FDEs of .eh_frame, then of .debug_frame, then Go's functions
 * (which have neither), into cc->fdes.
 */
static int compile_enumerate(struct compile *cc)
{
	GElf_Shdr sh;
	Elf_Scn *scn;
	int ret = 0;

	scn = find_section(cc->elf, ".eh_frame", &sh);
	if (scn) {
		struct cfi_sec s = { .data = elf_getdata(scn, NULL), .vaddr = sh.sh_addr,
				     .eh = true, .src = TP_CFI_SRC_EH };

		cc->eh_cfi = dwarf_getcfi_elf(cc->elf);
		if (s.data && cc->eh_cfi)
			ret = enumerate(cc, &s);
		if (ret)
			return ret;
	}
	cc->has_go = tp_gotab_elf(cc->elf, -1, &cc->go, NULL) == 0;
	if (cc->has_go) {
		ret = enumerate_go(cc);
		if (ret)
			return ret;
	}
	if (!find_section(cc->elf, ".debug_frame", &sh))
		return 0;
	/* libdw first: it decompresses the section in place */
	cc->dbg = dwarf_begin_elf(cc->elf, DWARF_C_READ, NULL);
	cc->dbg_cfi = cc->dbg ? dwarf_getcfi(cc->dbg) : NULL;
	scn = find_section(cc->elf, ".debug_frame", &sh);
	if (cc->dbg_cfi && scn) {
		struct cfi_sec s = { .data = elf_getdata(scn, NULL),
				     .vaddr = sh.sh_addr, .eh = false,
				     .src = TP_CFI_SRC_DEBUG };

		if (s.data)
			ret = enumerate(cc, &s);
	}
	return ret;
}

/*
 * The rows of every FDE, by address; an FDE that overlaps one before it
 * is skipped (counted), so that rows stay sorted.
 */
static int compile_fdes(struct compile *cc, struct tp_cfi_table *t)
{
	uint64_t covered_hi = 0;
	int ret;

	/* No FDE leaves cc->fdes NULL, which qsort() must not be given. */
	if (cc->nr_fdes)
		qsort(cc->fdes, cc->nr_fdes, sizeof(*cc->fdes), fde_cmp);
	for (size_t i = 0; i < cc->nr_fdes; i++) {
		const struct fde *f = &cc->fdes[i];

		if (f->lo < covered_hi) {
			cc->skipped++;
			continue;
		}
		if (f->src == TP_CFI_SRC_GO)
			ret = compile_go(cc, f, t);
		else
			ret = compile_fde(cc, f->src == TP_CFI_SRC_EH ? cc->eh_cfi : cc->dbg_cfi,
					  f, t);
		if (!ret)
			ret = add_row(cc, f->hi, 0);
		if (ret)
			return ret;
		covered_hi = f->hi;
		t->nr_fdes++;
	}
	return 0;
}

/* Copy the rows and rules of @cc into the compact table @t. */
static int compile_pack(struct compile *cc, struct tp_cfi_table *t)
{
	if (cc->nr && cc->pcs[cc->nr - 1] - cc->pcs[0] > UINT32_MAX)
		return tp_err(-E2BIG, "CFI: text spans more than 4 GiB");
	t->nr = (uint32_t)cc->nr;
	t->base = cc->nr ? cc->pcs[0] : 0;
	t->pcs = malloc((cc->nr ? cc->nr : 1) * sizeof(*t->pcs));
	t->row_rule = malloc((cc->nr ? cc->nr : 1) * sizeof(*t->row_rule));
	t->rules = malloc(cc->nr_rules * sizeof(*t->rules));
	if (!t->pcs || !t->row_rule || !t->rules)
		return -ENOMEM;
	for (size_t i = 0; i < cc->nr; i++) {
		t->pcs[i] = (uint32_t)(cc->pcs[i] - t->base);
		t->row_rule[i] = cc->rr[i];
	}
	memcpy(t->rules, cc->rules, cc->nr_rules * sizeof(*t->rules));
	t->nr_rules = (uint32_t)cc->nr_rules;
	t->fdes_skipped = cc->skipped;
	t->bytes = sizeof(*t) + cc->nr * (sizeof(*t->pcs) + sizeof(*t->row_rule)) +
		   cc->nr_rules * sizeof(*t->rules);
	return 0;
}

static void compile_fini(struct compile *cc)
{
	if (cc->eh_cfi)
		dwarf_cfi_end(cc->eh_cfi);
	if (cc->dbg)
		dwarf_end(cc->dbg);
	free(cc->fdes);
	free(cc->pcs);
	free(cc->rr);
	free(cc->rules);
	tp_index_free(&cc->rule_index);
}

int tp_cfi_compile(Elf *elf, struct tp_cfi_table **tp)
{
	struct compile cc = { .elf = elf, .budget = TP_CFI_WALK_BUDGET };
	uint64_t t0 = tp_clock_ns(CLOCK_MONOTONIC);
	struct tp_cfi_rule none = { 0 };
	struct tp_cfi_table *t;
	GElf_Ehdr eh;
	int ret;

	*tp = NULL;
	if (!gelf_getehdr(elf, &eh) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_machine != EM_X86_64)
		return tp_err(-EINVAL, "CFI: not an x86-64 ELF64 file");
	cc.ident = (const unsigned char *)eh.e_ident;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;

	compile_text_ranges(&cc);
	ret = intern(&cc, &none);	/* rule 0 */
	if (ret >= 0)
		ret = compile_enumerate(&cc);
	if (!ret)
		ret = compile_fdes(&cc, t);
	if (!ret)
		ret = compile_pack(&cc, t);
	if (ret == -ENOMEM)
		tp_err(ret, "CFI: out of memory compiling a table");
	compile_fini(&cc);
	if (ret) {
		tp_cfi_table_free(t);
		return ret;
	}
	t->compile_ns = tp_clock_ns(CLOCK_MONOTONIC) - t0;
	*tp = t;
	return 0;
}
