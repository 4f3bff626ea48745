// SPDX-License-Identifier: GPL-2.0
/*
 * The user stack unwinder: a sample's registers and stack copy, and the CFI
 * of the ELF files mapped at each pc, give the call chain.
 *
 * Per frame: the caller's map callback names the ELF at pc; its compiled
 * table (lib/unwind/cfi.c) comes from a cache keyed by the ELF's identity, bounded
 * in bytes with LRU eviction; the rule for the pc comes from a small
 * direct-mapped cache in front of the table's binary search; the rule gives
 * the CFA, the return address and the caller's rbp (tp_step_fast()). Rules
 * the table cannot express go to libdw (tp_step_slow(), which is also the
 * oracle the unit tests compare the table with); pcs without CFI follow the
 * rbp chain when it validates.
 */
#include <dwarf.h>
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/unwind-private.h"
#include "util/hash.h"
#include "util/lru.h"

const char *taproot_unwind_end_name(enum taproot_unwind_end end)
{
	static const char *const names[] = {
		[TAPROOT_UNWIND_COMPLETE] = "complete",
		[TAPROOT_UNWIND_TRUNCATED] = "truncated",
		[TAPROOT_UNWIND_NO_MAPPING] = "no-mapping",
		[TAPROOT_UNWIND_NO_CFI] = "no-cfi",
		[TAPROOT_UNWIND_BAD_FRAME] = "bad-frame",
		[TAPROOT_UNWIND_MAX_DEPTH] = "max-depth",
	};

	return (unsigned int)end < TAPROOT_UNWIND_NR_ENDS ? names[end] : "?";
}

/* ------------------------------------------------------------- memory */

/* The word at @addr of the snapshot: TP_STEP_OK or an end. */
static inline int mem_read(const struct tp_mem *m, uint64_t addr, uint64_t *v)
{
	uint64_t off = addr - m->base;

	if (addr < m->base)
		return TAPROOT_UNWIND_BAD_FRAME;	/* below the sampled sp */
	if (off > m->len || m->len - off < 8)
		return TAPROOT_UNWIND_TRUNCATED;
	memcpy(v, m->buf + off, 8);
	return TP_STEP_OK;
}

#define BIT(r) (1U << (r))

/* ------------------------------------------------------------ fast step */

/* struct ucontext_t's gregs, REG_R8 .. REG_RIP, as DWARF registers */
static const uint8_t greg_dwarf[17] = {
	8, 9, 10, 11, 12, 13, 14, 15,	/* r8 .. r15 */
	5, 4, 6, 3, 1, 0, 2, 7, 16,	/* rdi rsi rbp rbx rdx rax rcx rsp rip */
};

#define UC_GREGS_OFF 40		/* uc_flags, uc_link, uc_stack */

int tp_step_fast(const struct tp_cfi_rule *r, const struct tp_regs *in,
		 const struct tp_mem *mem, struct tp_regs *out)
{
	uint64_t cfa, ra, bp;
	int ret;

	switch (r->kind) {
	case TP_CFI_SP:
		if (!(in->valid & BIT(TP_REG_RSP)))
			return TAPROOT_UNWIND_BAD_FRAME;
		cfa = in->r[TP_REG_RSP] + (uint64_t)(int64_t)r->cfa_off;
		break;
	case TP_CFI_FP:
		if (!(in->valid & BIT(TP_REG_RBP)))
			return TAPROOT_UNWIND_BAD_FRAME;
		cfa = in->r[TP_REG_RBP] + (uint64_t)(int64_t)r->cfa_off;
		break;
	case TP_CFI_PLT:
		if ((in->valid & (BIT(TP_REG_RSP) | BIT(TP_REG_RIP))) !=
		    (BIT(TP_REG_RSP) | BIT(TP_REG_RIP)))
			return TAPROOT_UNWIND_BAD_FRAME;
		cfa = in->r[TP_REG_RSP] + (uint64_t)(int64_t)r->cfa_off;
		if ((in->r[TP_REG_RIP] & 15) >= r->plt_thr)
			cfa += 8;
		break;
	case TP_CFI_SIGNAL:
		if (!(in->valid & BIT(TP_REG_RSP)))
			return TAPROOT_UNWIND_BAD_FRAME;
		for (unsigned int i = 0; i < 17; i++) {
			ret = mem_read(mem, in->r[TP_REG_RSP] + UC_GREGS_OFF + 8 * i,
				       &out->r[greg_dwarf[i]]);
			if (ret != TP_STEP_OK)
				return ret;
		}
		out->valid = BIT(TP_NR_REGS) - 1;
		return TP_STEP_OK;
	case TP_CFI_END:
		return TAPROOT_UNWIND_COMPLETE;
	default:
		return TAPROOT_UNWIND_BAD_FRAME;
	}

	ret = mem_read(mem, cfa + (uint64_t)(int64_t)r->ra_off, &ra);
	if (ret != TP_STEP_OK)
		return ret;
	out->valid = BIT(TP_REG_RSP) | BIT(TP_REG_RIP);
	switch (r->rbp) {
	case TP_RBP_SAME:
		out->r[TP_REG_RBP] = in->r[TP_REG_RBP];
		out->valid |= in->valid & BIT(TP_REG_RBP);
		break;
	case TP_RBP_CFA:
		/*
		 * Outside the copy (an epilogue past "pop %rbp" still says CFA-16,
		 * below sp): the caller's rbp is unknown, the unwind goes on.
		 */
		if (mem_read(mem, cfa + (uint64_t)(int64_t)r->rbp_off, &bp) == TP_STEP_OK) {
			out->r[TP_REG_RBP] = bp;
			out->valid |= BIT(TP_REG_RBP);
		}
		break;
	default:
		break;
	}
	out->r[TP_REG_RSP] = cfa;
	out->r[TP_REG_RIP] = ra;
	return TP_STEP_OK;
}

/* ------------------------------------------------------------ slow step */

/* Find the op at byte offset @target (DW_OP_skip, DW_OP_bra). */
static size_t op_at(const Dwarf_Op *ops, size_t n, Dwarf_Word target)
{
	for (size_t i = 0; i < n; i++)
		if (ops[i].offset == target)
			return i;
	return n + 1;
}

/*
 * Evaluate the DWARF expression @ops: *@out is the location, or the value
 * when *@value (DW_OP_stack_value). @cfa is pushed by DW_OP_call_frame_cfa
 * when @have_cfa.
 */
static int eval(const Dwarf_Op *ops, size_t n, const struct tp_regs *in,
		const struct tp_mem *mem, uint64_t cfa, bool have_cfa,
		uint64_t *out, bool *value)
{
	uint64_t st[32], a, b;
	size_t sp = 0, steps = 0;
	int ret;

	*value = false;
#define NEED(k) do { if (sp < (k)) return TAPROOT_UNWIND_BAD_FRAME; } while (0)
#define PUSH(v) do { uint64_t v_ = (v); if (sp == 32) return TAPROOT_UNWIND_BAD_FRAME; st[sp] = v_; sp++; } while (0)
	for (size_t i = 0; i < n; i++) {
		const Dwarf_Op *op = &ops[i];
		unsigned int atom = op->atom;

		if (++steps > 1000)
			return TAPROOT_UNWIND_BAD_FRAME;
		if (atom >= DW_OP_lit0 && atom <= DW_OP_lit31) {
			PUSH(atom - DW_OP_lit0);
			continue;
		}
		if (atom >= DW_OP_breg0 && atom <= DW_OP_breg31) {
			unsigned int reg = atom - DW_OP_breg0;

			if (reg >= TP_NR_REGS || !(in->valid & BIT(reg)))
				return TAPROOT_UNWIND_BAD_FRAME;
			PUSH(in->r[reg] + op->number);
			continue;
		}
		if ((atom >= DW_OP_reg0 && atom <= DW_OP_reg31) || atom == DW_OP_regx) {
			/* in a register (DW_CFA_register): its value, nothing to read */
			Dwarf_Word reg = atom == DW_OP_regx ? op->number : atom - DW_OP_reg0;

			if (reg >= TP_NR_REGS || !(in->valid & BIT(reg)))
				return TAPROOT_UNWIND_BAD_FRAME;
			PUSH(in->r[reg]);
			*value = true;
			break;
		}
		switch (atom) {
		case DW_OP_bregx:
			if (op->number >= TP_NR_REGS || !(in->valid & BIT(op->number)))
				return TAPROOT_UNWIND_BAD_FRAME;
			PUSH(in->r[op->number] + op->number2);
			break;
		case DW_OP_call_frame_cfa:
			if (!have_cfa)
				return TAPROOT_UNWIND_BAD_FRAME;
			PUSH(cfa);
			break;
		case DW_OP_addr:
		case DW_OP_const1u: case DW_OP_const1s:
		case DW_OP_const2u: case DW_OP_const2s:
		case DW_OP_const4u: case DW_OP_const4s:
		case DW_OP_const8u: case DW_OP_const8s:
		case DW_OP_constu: case DW_OP_consts:
			PUSH(op->number);
			break;
		case DW_OP_dup:		NEED(1); PUSH(st[sp - 1]); break;
		case DW_OP_drop:	NEED(1); sp--; break;
		case DW_OP_over:	NEED(2); PUSH(st[sp - 2]); break;
		case DW_OP_pick:
			NEED(op->number + 1);
			PUSH(st[sp - 1 - op->number]);
			break;
		case DW_OP_swap:
			NEED(2);
			a = st[sp - 1]; st[sp - 1] = st[sp - 2]; st[sp - 2] = a;
			break;
		case DW_OP_rot:
			NEED(3);
			a = st[sp - 1]; st[sp - 1] = st[sp - 2];
			st[sp - 2] = st[sp - 3]; st[sp - 3] = a;
			break;
		case DW_OP_deref:
			NEED(1);
			ret = mem_read(mem, st[sp - 1], &st[sp - 1]);
			if (ret != TP_STEP_OK)
				return ret;
			break;
		case DW_OP_deref_size:
			NEED(1);
			if (op->number == 0 || op->number > 8)
				return TAPROOT_UNWIND_BAD_FRAME;
			ret = mem_read(mem, st[sp - 1], &a);
			if (ret != TP_STEP_OK)
				return ret;
			if (op->number < 8)
				a &= (1ULL << (8 * op->number)) - 1;
			st[sp - 1] = a;
			break;
		case DW_OP_plus_uconst:	NEED(1); st[sp - 1] += op->number; break;
		case DW_OP_neg:		NEED(1); st[sp - 1] = -st[sp - 1]; break;
		case DW_OP_not:		NEED(1); st[sp - 1] = ~st[sp - 1]; break;
		case DW_OP_abs:
			NEED(1);
			if ((int64_t)st[sp - 1] < 0)
				st[sp - 1] = -st[sp - 1];
			break;
		case DW_OP_and: case DW_OP_or: case DW_OP_xor: case DW_OP_plus:
		case DW_OP_minus: case DW_OP_mul: case DW_OP_shl: case DW_OP_shr:
		case DW_OP_shra: case DW_OP_div: case DW_OP_mod:
		case DW_OP_eq: case DW_OP_ne: case DW_OP_lt: case DW_OP_le:
		case DW_OP_gt: case DW_OP_ge:
			NEED(2);
			b = st[--sp];
			a = st[sp - 1];
			switch (atom) {
			case DW_OP_and:	a &= b; break;
			case DW_OP_or:	a |= b; break;
			case DW_OP_xor:	a ^= b; break;
			case DW_OP_plus: a += b; break;
			case DW_OP_minus: a -= b; break;
			case DW_OP_mul:	a *= b; break;
			case DW_OP_shl:	a = b < 64 ? a << b : 0; break;
			case DW_OP_shr:	a = b < 64 ? a >> b : 0; break;
			case DW_OP_shra:
				a = b < 64 ? (uint64_t)((int64_t)a >> b)
					   : ((int64_t)a < 0 ? ~0ULL : 0);
				break;
			case DW_OP_div:
				if (!b || ((int64_t)a == INT64_MIN && (int64_t)b == -1))
					return TAPROOT_UNWIND_BAD_FRAME;
				a = (uint64_t)((int64_t)a / (int64_t)b);
				break;
			case DW_OP_mod:
				if (!b)
					return TAPROOT_UNWIND_BAD_FRAME;
				a %= b;
				break;
			case DW_OP_eq:	a = (int64_t)a == (int64_t)b; break;
			case DW_OP_ne:	a = (int64_t)a != (int64_t)b; break;
			case DW_OP_lt:	a = (int64_t)a < (int64_t)b; break;
			case DW_OP_le:	a = (int64_t)a <= (int64_t)b; break;
			case DW_OP_gt:	a = (int64_t)a > (int64_t)b; break;
			case DW_OP_ge:	a = (int64_t)a >= (int64_t)b; break;
			}
			st[sp - 1] = a;
			break;
		case DW_OP_skip:
		case DW_OP_bra: {
			size_t j;

			if (atom == DW_OP_bra) {
				NEED(1);
				if (!st[--sp])
					break;
			}
			j = op_at(ops, n, op->offset + 3 + (Dwarf_Word)(int16_t)op->number);
			if (j > n)
				return TAPROOT_UNWIND_BAD_FRAME;
			i = j - 1;	/* the loop's i++ lands on j */
			break;
		}
		case DW_OP_nop:
			break;
		case DW_OP_stack_value:
			*value = true;
			i = n;
			break;
		default:
			return TAPROOT_UNWIND_BAD_FRAME;
		}
	}
#undef NEED
#undef PUSH
	if (!sp)
		return TAPROOT_UNWIND_BAD_FRAME;
	*out = st[sp - 1];
	return TP_STEP_OK;
}

int tp_step_slow(Dwarf_CFI *cfi, uint64_t vaddr, const struct tp_regs *in,
		 const struct tp_mem *mem, struct tp_regs *out, bool *signal)
{
	Dwarf_Frame *f;
	Dwarf_Op mem_ops[3], *ops;
	Dwarf_Addr start, end;
	size_t nops;
	uint64_t cfa, v;
	bool sig = false, value, rsp_ruled = false;
	int ret;

	if (signal)
		*signal = false;
	if (!cfi || dwarf_cfi_addrframe(cfi, vaddr, &f) != 0)
		return TAPROOT_UNWIND_NO_CFI;
	if (dwarf_frame_info(f, &start, &end, &sig) != TP_REG_RIP ||
	    dwarf_frame_cfa(f, &ops, &nops) != 0 || nops == 0) {
		ret = TAPROOT_UNWIND_BAD_FRAME;
		goto out;
	}
	ret = eval(ops, nops, in, mem, 0, false, &cfa, &value);
	if (ret != TP_STEP_OK)
		goto out;

	out->valid = 0;
	for (int reg = 0; reg < TP_NR_REGS; reg++) {
		if (dwarf_frame_register(f, reg, mem_ops, &ops, &nops) != 0) {
			ret = TAPROOT_UNWIND_BAD_FRAME;
			goto out;
		}
		if (nops == 0 && !ops) {		/* same value */
			out->r[reg] = in->r[reg];
			out->valid |= in->valid & BIT(reg);
			continue;
		}
		if (nops == 0)				/* undefined */
			continue;
		/*
		 * Only rip and rsp are needed to go on: another register that
		 * cannot be recovered (its rule needs an unknown register, its
		 * slot is outside the copy) becomes unknown.
		 */
		ret = eval(ops, nops, in, mem, cfa, true, &v, &value);
		if (ret == TP_STEP_OK && !value)
			ret = mem_read(mem, v, &v);
		if (ret != TP_STEP_OK) {
			if (reg == TP_REG_RIP || reg == TP_REG_RSP)
				goto out;
			continue;
		}
		out->r[reg] = v;
		out->valid |= BIT(reg);
		if (reg == TP_REG_RSP)
			rsp_ruled = true;
	}
	ret = TP_STEP_OK;
	if (!(out->valid & BIT(TP_REG_RIP))) {
		ret = TAPROOT_UNWIND_COMPLETE;
		goto out;
	}
	/* The CFA is the caller's sp unless CFI says otherwise. */
	if (!rsp_ruled) {
		out->r[TP_REG_RSP] = cfa;
		out->valid |= BIT(TP_REG_RSP);
	}
	if (signal)
		*signal = sig;
out:
	free(f);
	return ret;
}

/* ------------------------------------------------------- the table cache */

#define RULE_CACHE_SIZE 4096	/* direct-mapped pc -> rule slots */
#define SLOW_CFIS 4		/* ELFs with libdw state per unwind call */

struct tp_table_ent {
	struct tp_table_ent *hnext;		/* hash chain */
	struct tp_lru_node lru;			/* in the unwinder's lru */
	struct tp_cfi_table *t;
	uint64_t id;				/* never 0, never reused */
	uint64_t hash;
	size_t bytes;				/* table + entry */
	size_t key_len;
	uint8_t key[];
};

struct rule_slot {
	uint64_t vaddr;
	uint64_t id;		/* table id; 0: empty */
	uint32_t rule;
};

/* libdw's view of one ELF, for the slow path, for one unwind call */
struct slow_cfi {
	Elf *elf;
	Dwarf_CFI *eh;
	Dwarf *dbg;
	Dwarf_CFI *dcfi;
	bool tried_eh, tried_dbg;
};

struct taproot_unwinder {
	struct taproot_unwind_ops ops;
	size_t limit;
	size_t bytes;
	struct tp_table_ent **buckets;
	size_t nr_buckets, nr_tables;
	struct tp_lru lru;			/* every table, most recently used first */
	struct tp_table_ent *last;		/* the last table looked up */
	uint64_t next_id;
	struct slow_cfi slow[SLOW_CFIS];
	unsigned int nr_slow;
	struct taproot_unwind_stats st;
	/* taproot_unwind_table_export()'s rules, valid until the next call */
	struct taproot_unwind_rule *xrules;
	size_t xrules_alloc;
	struct rule_slot rules[RULE_CACHE_SIZE];
};

int taproot_unwinder_new(const struct taproot_unwind_ops *ops, size_t cache_bytes,
			 struct taproot_unwinder **up)
{
	struct taproot_unwinder *u;

	*up = NULL;
	if (!ops || !ops->map)
		return tp_err(-EINVAL, "unwinder: no map callback");
	u = calloc(1, sizeof(*u));
	if (!u)
		return tp_err(-ENOMEM, NULL);
	u->nr_buckets = 64;
	u->buckets = calloc(u->nr_buckets, sizeof(*u->buckets));
	if (!u->buckets) {
		free(u);
		return tp_err(-ENOMEM, NULL);
	}
	u->ops = *ops;
	u->limit = cache_bytes ? cache_bytes : TAPROOT_UNWIND_CACHE_DEFAULT;
	u->next_id = 1;
	*up = u;
	return 0;
}

static void evict(struct taproot_unwinder *u, struct tp_table_ent *e)
{
	struct tp_table_ent **pp = &u->buckets[e->hash & (u->nr_buckets - 1)];

	while (*pp != e)
		pp = &(*pp)->hnext;
	*pp = e->hnext;
	tp_lru_unlink(&u->lru, &e->lru);
	if (u->last == e)
		u->last = NULL;
	u->bytes -= e->bytes;
	u->nr_tables--;
	u->st.evictions++;
	tp_cfi_table_free(e->t);
	free(e);
}

void taproot_unwinder_free(struct taproot_unwinder *u)
{
	if (!u)
		return;
	while (u->lru.head)
		evict(u, tp_lru_entry(u->lru.head, struct tp_table_ent, lru));
	free(u->buckets);
	free(u->xrules);
	free(u);
}

static uint64_t key_hash(const uint8_t *k, size_t n)
{
	return tp_hash_fin(tp_hash_bytes(k, n));
}

static int grow_buckets(struct taproot_unwinder *u)
{
	size_t n = u->nr_buckets * 2;
	struct tp_table_ent **b = calloc(n, sizeof(*b));

	if (!b)
		return -ENOMEM;
	for (size_t i = 0; i < u->nr_buckets; i++) {
		struct tp_table_ent *e = u->buckets[i], *next;

		for (; e; e = next) {
			next = e->hnext;
			e->hnext = b[e->hash & (n - 1)];
			b[e->hash & (n - 1)] = e;
		}
	}
	free(u->buckets);
	u->buckets = b;
	u->nr_buckets = n;
	return 0;
}

/* The cached table of key @key (@h its hash), made the most recent; NULL if none. */
static struct tp_table_ent *find_table(struct taproot_unwinder *u, const uint8_t *key,
				       size_t key_len, uint64_t h)
{
	struct tp_table_ent *e;

	for (e = u->buckets[h & (u->nr_buckets - 1)]; e; e = e->hnext) {
		if (e->hash == h && e->key_len == key_len && !memcmp(e->key, key, key_len)) {
			tp_lru_touch(&u->lru, &e->lru);
			u->last = e;
			return e;
		}
	}
	return NULL;
}

/* The table of the ELF @m names, compiled now when not cached. */
static int get_table(struct taproot_unwinder *u, const struct taproot_unwind_map *m,
		     struct tp_table_ent **ep)
{
	const uint8_t *key = m->key;
	struct tp_table_ent *e = u->last;
	struct tp_cfi_table *t = NULL;
	uint64_t h;
	int err;

	if (e && e->key_len == m->key_len && !memcmp(e->key, key, m->key_len)) {
		*ep = e;
		return 0;
	}
	h = key_hash(key, m->key_len);
	e = find_table(u, key, m->key_len, h);
	if (e) {
		*ep = e;
		return 0;
	}

	err = m->elf ? tp_cfi_compile(m->elf, &t) : -EINVAL;
	if (err == -ENOMEM)
		return err;
	if (err) {
		/* no usable CFI: an empty table, so as not to try again */
		t = calloc(1, sizeof(*t));
		if (t)
			t->rules = calloc(1, sizeof(*t->rules));	/* NONE */
		if (!t || !t->rules) {
			tp_cfi_table_free(t);
			return tp_err(-ENOMEM, NULL);
		}
		t->nr_rules = 1;
		t->bytes = sizeof(*t) + sizeof(*t->rules);
	}
	e = malloc(sizeof(*e) + m->key_len);
	if (!e || (u->nr_tables + 1 > u->nr_buckets && grow_buckets(u))) {
		free(e);
		tp_cfi_table_free(t);
		return tp_err(-ENOMEM, NULL);
	}
	memcpy(e->key, key, m->key_len);
	e->key_len = m->key_len;
	e->hash = h;
	e->t = t;
	e->id = u->next_id++;
	e->bytes = t->bytes + sizeof(*e) + m->key_len;
	e->hnext = u->buckets[h & (u->nr_buckets - 1)];
	u->buckets[h & (u->nr_buckets - 1)] = e;
	tp_lru_push(&u->lru, &e->lru);
	u->nr_tables++;
	u->bytes += e->bytes;
	u->st.compiles++;
	u->st.compile_ns += t->compile_ns;
	while (u->bytes > u->limit && u->lru.tail != &e->lru)
		evict(u, tp_lru_entry(u->lru.tail, struct tp_table_ent, lru));
	u->last = e;
	*ep = e;
	return 0;
}

static inline const struct tp_cfi_rule *lookup_rule(struct taproot_unwinder *u,
						    const struct tp_table_ent *e,
						    uint64_t vaddr)
{
	uint64_t h = (vaddr ^ (e->id * 0x9e3779b97f4a7c15ULL)) * 0xff51afd7ed558ccdULL;
	struct rule_slot *s = &u->rules[h >> (64 - 12)];

	if (s->vaddr == vaddr && s->id == e->id) {
		u->st.rule_cache_hits++;
		return &e->t->rules[s->rule];
	}
	u->st.rule_cache_misses++;
	s->vaddr = vaddr;
	s->id = e->id;
	s->rule = e->t->nr ? tp_cfi_lookup(e->t, vaddr) : 0;
	return &e->t->rules[s->rule];
}

_Static_assert(RULE_CACHE_SIZE == 1 << 12, "lookup_rule() shifts by 64 - 12");

/* ---------------------------------------------------------- slow path */

static struct slow_cfi *slow_cfi(struct taproot_unwinder *u, Elf *elf)
{
	struct slow_cfi *s;

	for (unsigned int i = 0; i < u->nr_slow; i++)
		if (u->slow[i].elf == elf)
			return &u->slow[i];
	if (u->nr_slow == SLOW_CFIS) {
		/* rare: more ELFs with slow rules in one stack than slots */
		s = &u->slow[SLOW_CFIS - 1];
		if (s->eh)
			dwarf_cfi_end(s->eh);
		if (s->dbg)
			dwarf_end(s->dbg);
	} else {
		s = &u->slow[u->nr_slow++];
	}
	memset(s, 0, sizeof(*s));
	s->elf = elf;
	return s;
}

static void slow_release(struct taproot_unwinder *u)
{
	for (unsigned int i = 0; i < u->nr_slow; i++) {
		if (u->slow[i].eh)
			dwarf_cfi_end(u->slow[i].eh);
		if (u->slow[i].dbg)
			dwarf_end(u->slow[i].dbg);
	}
	u->nr_slow = 0;
}

static Dwarf_CFI *slow_get(struct taproot_unwinder *u, Elf *elf, uint8_t src)
{
	struct slow_cfi *s = slow_cfi(u, elf);

	if (src == TP_CFI_SRC_EH) {
		if (!s->tried_eh) {
			s->tried_eh = true;
			s->eh = dwarf_getcfi_elf(elf);
		}
		return s->eh;
	}
	if (!s->tried_dbg) {
		s->tried_dbg = true;
		s->dbg = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
		s->dcfi = s->dbg ? dwarf_getcfi(s->dbg) : NULL;
	}
	return s->dcfi;
}

/* ----------------------------------------------------- without CFI */

/* mov $0xf,%rax; syscall: rt_sigreturn, as glibc's and musl's __restore_rt */
static const uint8_t sigreturn_code[] = {
	0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05
};

/* Whether the code at ELF vaddr @vaddr of @elf is the sigreturn trampoline. */
static bool is_sigreturn(Elf *elf, uint64_t vaddr)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	if (!elf)
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *d;
		uint64_t off;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR) || vaddr < sh.sh_addr ||
		    vaddr - sh.sh_addr >= sh.sh_size)
			continue;
		off = vaddr - sh.sh_addr;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || off > d->d_size ||
		    d->d_size - off < sizeof(sigreturn_code))
			return false;
		return !memcmp((const uint8_t *)d->d_buf + off, sigreturn_code,
			       sizeof(sigreturn_code));
	}
	return false;
}

/*
 * The rbp chain: rbp points at {saved rbp, return address}. Accepted when
 * rbp is 8-aligned, at or above sp, and the saved rbp is 0 or above it.
 */
static int step_fp(const struct tp_regs *in, const struct tp_mem *mem,
		   struct tp_regs *out)
{
	uint64_t bp = in->r[TP_REG_RBP], saved, ra;

	if (!(in->valid & BIT(TP_REG_RBP)) || (bp & 7) || bp < in->r[TP_REG_RSP] ||
	    bp < mem->base)
		return TAPROOT_UNWIND_NO_CFI;
	if (mem_read(mem, bp, &saved) != TP_STEP_OK ||
	    mem_read(mem, bp + 8, &ra) != TP_STEP_OK)
		return TAPROOT_UNWIND_TRUNCATED;
	if (saved != 0 && saved <= bp)
		return TAPROOT_UNWIND_NO_CFI;
	out->valid = BIT(TP_REG_RSP) | BIT(TP_REG_RIP) | BIT(TP_REG_RBP);
	out->r[TP_REG_RSP] = bp + 16;
	out->r[TP_REG_RBP] = saved;
	out->r[TP_REG_RIP] = ra;
	return TP_STEP_OK;
}

/* ------------------------------------------------------------ JIT code */

int taproot_unwind_at_read(const struct taproot_unwind_at *at, uint64_t addr, uint64_t *v)
{
	return mem_read(at->mem, addr, v) == TP_STEP_OK ? 0 : -EFAULT;
}

/*
 * The caller of a JIT frame by @f: as step_fp() for the rbp chain; the
 * interpreter's caller sp must lie above its rbp's pair, as the caller's
 * frame does.
 */
static int step_jit(const struct taproot_unwind_jit *f, const struct tp_regs *in,
		    const struct tp_mem *mem, struct tp_regs *out)
{
	uint64_t sp = in->r[TP_REG_RSP], bp = in->r[TP_REG_RBP], cfa, v;
	bool have_bp = in->valid & BIT(TP_REG_RBP);
	int ret;

	switch (f->kind) {
	case TAPROOT_JIT_SP:
		if (f->size < 8 || (f->size & 7))
			return TAPROOT_UNWIND_BAD_FRAME;
		cfa = sp + f->size;
		*out = *in;
		out->valid = BIT(TP_REG_RSP) | BIT(TP_REG_RIP) | (in->valid & BIT(TP_REG_RBP));
		out->r[TP_REG_RSP] = cfa;
		if ((ret = mem_read(mem, cfa - 8, &out->r[TP_REG_RIP])) != TP_STEP_OK)
			return ret;
		if (f->size >= 16) {
			if ((ret = mem_read(mem, cfa - 16, &out->r[TP_REG_RBP])) != TP_STEP_OK)
				return ret;
			out->valid |= BIT(TP_REG_RBP);
		}
		return TP_STEP_OK;
	case TAPROOT_JIT_FP:
		return step_fp(in, mem, out);
	case TAPROOT_JIT_INTERP:
		if (!have_bp || (bp & 7) || bp < sp)
			return TAPROOT_UNWIND_BAD_FRAME;
		if ((ret = mem_read(mem, bp, &out->r[TP_REG_RBP])) != TP_STEP_OK ||
		    (ret = mem_read(mem, bp + 8, &out->r[TP_REG_RIP])) != TP_STEP_OK ||
		    (ret = mem_read(mem, bp - 8, &v)) != TP_STEP_OK)
			return ret;
		if (v < bp + 16 || (v & 7))
			return TAPROOT_UNWIND_BAD_FRAME;
		out->r[TP_REG_RSP] = v;
		out->valid = BIT(TP_REG_RSP) | BIT(TP_REG_RIP) | BIT(TP_REG_RBP);
		return TP_STEP_OK;
	}
	return TAPROOT_UNWIND_BAD_FRAME;
}

/*
 * The frame at @regs in code no ELF holds, as ops.jit describes it:
 * TP_STEP_OK with the caller in @next (and in *@pc the frame's own pc, a
 * deoptimized frame's), or TAPROOT_UNWIND_NO_MAPPING when it does not.
 */
static int unwind_jit(struct taproot_unwinder *u, void *arg, const struct tp_regs *regs,
		      const struct tp_mem *mem, bool exact, unsigned int index,
		      struct tp_regs *next, uint64_t *pc)
{
	struct taproot_unwind_at at = {
		.pc = regs->r[TP_REG_RIP],
		.sp = regs->r[TP_REG_RSP],
		.bp = regs->valid & BIT(TP_REG_RBP) ? regs->r[TP_REG_RBP] : 0,
		.r13 = regs->valid & BIT(TP_REG_R13) ? regs->r[TP_REG_R13] : 0,
		.index = index,
		.exact = exact,
		.mem = mem,
	};
	struct taproot_unwind_jit f = { .orig_pc_off = -1 };
	uint64_t orig;

	if (!u->ops.jit || u->ops.jit(&at, &f, arg) != 1)
		return TAPROOT_UNWIND_NO_MAPPING;
	if (f.orig_pc_off >= 0 &&
	    mem_read(mem, at.sp + (uint64_t)f.orig_pc_off, &orig) == TP_STEP_OK && orig)
		*pc = orig;
	return step_jit(&f, regs, mem, next);
}

/* ------------------------------------------------------------ unwind */

static void regs_from_user(struct tp_regs *r, const struct taproot_user_regs *u)
{
	r->r[0] = u->ax;  r->r[1] = u->dx;  r->r[2] = u->cx;  r->r[3] = u->bx;
	r->r[4] = u->si;  r->r[5] = u->di;  r->r[6] = u->bp;  r->r[7] = u->sp;
	r->r[8] = u->r8;  r->r[9] = u->r9;  r->r[10] = u->r10; r->r[11] = u->r11;
	r->r[12] = u->r12; r->r[13] = u->r13; r->r[14] = u->r14; r->r[15] = u->r15;
	r->r[16] = u->ip;
	r->valid = BIT(TP_NR_REGS) - 1;
}

/*
 * One step up from the frame at @regs, whose pc is exact (the interrupted
 * instruction, or after a signal) or a return address: the caller's
 * registers into @next; *@fl says how they were found (TAPROOT_FRAME_FP,
 * _SLOW or 0), *@sig whether @regs was a signal frame. Returns TP_STEP_OK
 * or the end of the walk; 0 from *@err unless the table could not be had
 * (then the return value means nothing).
 */
static int unwind_frame(struct taproot_unwinder *u, void *arg, const struct tp_regs *regs,
			const struct tp_mem *mem, bool exact, unsigned int index,
			struct tp_regs *next, uint64_t *pc_out, uint8_t *fl, bool *sig, int *err)
{
	static const struct tp_cfi_rule sigrule = { .kind = TP_CFI_SIGNAL };
	uint64_t pc = regs->r[TP_REG_RIP], lookup = exact ? pc : pc - 1;
	struct taproot_unwind_map m = { 0 };
	struct tp_table_ent *e = NULL;
	const struct tp_cfi_rule *r;

	*fl = 0;
	*sig = false;
	if (u->ops.map(lookup, &m, arg) != 1 || lookup < m.start ||
	    lookup >= m.end || !m.key || !m.key_len) {
		*fl = TAPROOT_FRAME_JIT;
		return unwind_jit(u, arg, regs, mem, exact, index, next, pc_out);
	}
	*err = get_table(u, &m, &e);
	if (*err)
		return TAPROOT_UNWIND_MAX_DEPTH;
	r = lookup_rule(u, e, lookup - m.bias);

	switch (r->kind) {
	case TP_CFI_NONE:
		if (is_sigreturn(m.elf, pc - m.bias)) {
			*sig = true;
			return tp_step_fast(&sigrule, regs, mem, next);
		}
		*fl = TAPROOT_FRAME_FP;
		return step_fp(regs, mem, next);
	case TP_CFI_SLOW:
		*fl = TAPROOT_FRAME_SLOW;
		return tp_step_slow(slow_get(u, m.elf, r->src), lookup - m.bias,
				    regs, mem, next, sig);
	case TP_CFI_SIGNAL:
		*sig = true;
		/* fall through */
	default:
		return tp_step_fast(r, regs, mem, next);
	}
}

/*
 * The registers a walk starts from: all of them at the leaf; of a caller
 * frame another walker reached, ip and sp, and bp unless 0 (lost).
 */
static void regs_start(struct tp_regs *r, const struct taproot_user_regs *u,
		       unsigned int start)
{
	if (!(start & TAPROOT_UNWIND_START_CALLER)) {
		regs_from_user(r, u);
		return;
	}
	memset(r, 0, sizeof(*r));
	r->r[TP_REG_RIP] = u->ip;
	r->r[TP_REG_RSP] = u->sp;
	r->valid = BIT(TP_REG_RIP) | BIT(TP_REG_RSP);
	if (u->bp) {
		r->r[TP_REG_RBP] = u->bp;
		r->valid |= BIT(TP_REG_RBP);
	}
}

int taproot_unwind(struct taproot_unwinder *u, void *arg,
		   const struct taproot_user_regs *uregs,
		   const void *stack, size_t stack_len,
		   uint64_t *pcs, uint8_t *flags, unsigned int max,
		   struct taproot_unwind_result *res)
{
	return taproot_unwind_from(u, arg, uregs, 0, stack, stack_len, pcs, flags, max, res);
}

int taproot_unwind_from(struct taproot_unwinder *u, void *arg,
			const struct taproot_user_regs *uregs, unsigned int start,
			const void *stack, size_t stack_len,
			uint64_t *pcs, uint8_t *flags, unsigned int max,
			struct taproot_unwind_result *res)
{
	struct tp_mem mem = { stack, uregs->sp, stack ? stack_len : 0 };
	struct tp_regs regs, next;
	/* Only a leaf may share its caller's CFA (see below). */
	bool exact = !(start & TAPROOT_UNWIND_START_CALLER), leaf = exact;
	int ret = 0;

	memset(res, 0, sizeof(*res));
	regs_start(&regs, uregs, start);
	res->end = TAPROOT_UNWIND_MAX_DEPTH;

	while (res->nr < max) {
		uint8_t fl;
		bool sig;
		int step;

		pcs[res->nr] = regs.r[TP_REG_RIP];
		if (flags)
			flags[res->nr] = exact ? TAPROOT_FRAME_EXACT : 0;
		res->nr++;

		step = unwind_frame(u, arg, &regs, &mem, exact, res->nr - 1, &next,
				    &pcs[res->nr - 1], &fl, &sig, &ret);
		if (ret)
			break;
		if (step != TP_STEP_OK) {
			res->end = (enum taproot_unwind_end)step;
			break;
		}
		/*
		 * A caller's frame is above its callee's, but for a signal. In
		 * the innermost frame only, it may be the same frame: a leaf
		 * that keeps its return address in a register (glibc's __vfork
		 * pops it into rdi around the syscall) has CFA == rsp, and
		 * only there are the registers the rule names known for sure.
		 */
		if (!sig && (next.r[TP_REG_RSP] < regs.r[TP_REG_RSP] ||
			     (next.r[TP_REG_RSP] == regs.r[TP_REG_RSP] &&
			      (res->nr > 1 || !leaf)))) {
			res->end = TAPROOT_UNWIND_BAD_FRAME;
			break;
		}
		if (fl == TAPROOT_FRAME_JIT)
			res->jit_frames++;
		else if (fl == TAPROOT_FRAME_FP)
			res->fp_frames++;
		else if (fl == TAPROOT_FRAME_SLOW)
			res->slow_frames++;
		if (flags)
			flags[res->nr - 1] |= fl;
		if (next.r[TP_REG_RIP] == 0) {
			res->end = TAPROOT_UNWIND_COMPLETE;
			break;
		}
		regs = next;
		exact = sig;
	}
	if (u->nr_slow)
		slow_release(u);

	u->st.unwinds++;
	u->st.frames += res->nr;
	u->st.ends[res->end]++;
	u->st.slow_frames += res->slow_frames;
	u->st.fp_frames += res->fp_frames;
	u->st.jit_frames += res->jit_frames;
	return ret ? ret : (int)res->nr;
}

void taproot_unwinder_stats(const struct taproot_unwinder *u,
			    struct taproot_unwind_stats *st)
{
	*st = u->st;
	st->tables = u->nr_tables;
	st->table_bytes = u->bytes;
}

/* ------------------------------------------------- the module's form */

/* The compiler's kinds and rbp rules are numbered as the ABI's (compared as ints). */
#define SAME_NR(a, b) ((int)(a) == (int)(b))
_Static_assert(SAME_NR(TP_CFI_NONE, TAPROOT_RULE_NONE) && SAME_NR(TP_CFI_SP, TAPROOT_RULE_SP) &&
	       SAME_NR(TP_CFI_FP, TAPROOT_RULE_FP) && SAME_NR(TP_CFI_PLT, TAPROOT_RULE_PLT) &&
	       SAME_NR(TP_CFI_SIGNAL, TAPROOT_RULE_SIGNAL) &&
	       SAME_NR(TP_CFI_END, TAPROOT_RULE_END) && SAME_NR(TP_CFI_SLOW, TAPROOT_RULE_SLOW),
	       "rule kinds are numbered as the ABI's");
_Static_assert(SAME_NR(TP_RBP_SAME, TAPROOT_RBP_SAME) && SAME_NR(TP_RBP_UNDEF, TAPROOT_RBP_UNDEF) &&
	       SAME_NR(TP_RBP_CFA, TAPROOT_RBP_CFA), "rbp rules are numbered as the ABI's");
#undef SAME_NR

static bool off_fits(int32_t off)
{
	return off >= -TAPROOT_RULE_OFF_MAX && off <= TAPROOT_RULE_OFF_MAX;
}

/*
 * Rule @r as the module takes it: the fields its kind uses, the others 0
 * (the ABI wants them so; src is the slow path's business, not the
 * module's). What the ABI cannot hold becomes SLOW: the module falls back.
 */
static void export_rule(const struct tp_cfi_rule *r, struct taproot_unwind_rule *x)
{
	memset(x, 0, sizeof(*x));
	x->kind = r->kind;
	switch (r->kind) {
	case TP_CFI_SP:
	case TP_CFI_FP:
	case TP_CFI_PLT:
		if (!off_fits(r->cfa_off) || !off_fits(r->ra_off) ||
		    (r->rbp == TP_RBP_CFA && !off_fits(r->rbp_off)) ||
		    r->rbp >= TAPROOT_RBP_NR || r->plt_thr > 15) {
			x->kind = TAPROOT_RULE_SLOW;
			return;
		}
		x->cfa_off = r->cfa_off;
		x->ra_off = r->ra_off;
		x->rbp = r->rbp;
		if (r->rbp == TP_RBP_CFA)
			x->rbp_off = r->rbp_off;
		if (r->kind == TP_CFI_PLT)
			x->plt_thr = r->plt_thr;
		return;
	case TP_CFI_NONE:
	case TP_CFI_SIGNAL:
	case TP_CFI_END:
	case TP_CFI_SLOW:
		return;
	default:
		x->kind = TAPROOT_RULE_SLOW;	/* never made by the compiler */
		return;
	}
}

/* Whether @t's rows are what TAPROOT_IOC_TABLE_ADD takes, bounds aside. */
static bool export_rows_ok(const struct tp_cfi_table *t)
{
	for (uint32_t i = 0; i < t->nr; i++)
		if (t->row_rule[i] >= t->nr_rules || (i && t->pcs[i] <= t->pcs[i - 1]))
			return false;
	return true;
}

int taproot_unwind_table_export(struct taproot_unwinder *u, const struct taproot_unwind_map *m,
				unsigned int flags, struct taproot_table_add *t)
{
	const struct tp_cfi_table *ct;
	struct tp_table_ent *e;
	int err;

	if (!m->key || !m->key_len)
		return tp_err(-EINVAL, "unwind: exporting a table without a key");
	if (flags & TAPROOT_EXPORT_CACHED) {
		e = find_table(u, m->key, m->key_len, key_hash(m->key, m->key_len));
		if (!e)
			return -EAGAIN;
	} else {
		err = get_table(u, m, &e);
		if (err)
			return err;
	}
	ct = e->t;
	/* An empty table (no CFI, or CFI that did not compile) or one of NONE rows only. */
	if (!ct->nr || !ct->covered)
		return -ENODATA;
	if (ct->nr > TAPROOT_TABLE_ROWS_MAX || ct->nr_rules > TAPROOT_TABLE_RULES_MAX)
		return tp_err(-E2BIG, "unwind: a table of %u rows, %u rules: more than the "
			      "module takes", ct->nr, ct->nr_rules);
	if (!export_rows_ok(ct))
		return tp_err(-EINVAL, "unwind: a table whose rows are out of order");
	if (tp_grow((void **)&u->xrules, &u->xrules_alloc, ct->nr_rules, sizeof(*u->xrules)))
		return tp_err(-ENOMEM, NULL);
	for (uint32_t i = 0; i < ct->nr_rules; i++)
		export_rule(&ct->rules[i], &u->xrules[i]);
	t->pcs = (uint64_t)(uintptr_t)ct->pcs;
	t->row_rules = (uint64_t)(uintptr_t)ct->row_rule;
	t->rules = (uint64_t)(uintptr_t)u->xrules;
	t->base = ct->base;
	t->nr_rows = ct->nr;
	t->nr_rules = ct->nr_rules;
	return 0;
}
