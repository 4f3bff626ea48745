// SPDX-License-Identifier: GPL-2.0
/*
 * taprootctl dump: be the consumer of /dev/taproot and print every record,
 * merged across CPUs by time, until a count, a duration or a signal:
 * samples, losses, the causal events (switch, waking, fork, exec, exit)
 * and the interned stacks (stack, sample_ref) decoded, other types by
 * their header.
 * It does not start sampling: 'taprootctl start' does.
 *
 * Every record is one line of KEY VALUE pairs (text) or one object (JSON
 * Lines) with the same fields in the same order; a record that carries
 * stacks continues with one indented line per kernel frame, one per user pc
 * the module found ("upc"), then one for the user stack bytes asked for.
 * The rec_*() helpers below print one field in whichever of the two forms
 * is on, so that each record type is written once.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <linux/taproot.h>

#include "taprootctl.h"
#include "util/clock.h"

/* The longest wait between two reads of the rings when nothing wakes us. */
#define DUMP_POLL_MS	500

/* An array of names and its length, as rec_flags() takes them. */
#define NAMES(a) (a), sizeof(a) / sizeof((a)[0])

static volatile sig_atomic_t dump_signal;

static void dump_on_signal(int sig)
{
	dump_signal = sig;
}

struct dump {
	struct taproot_json *j;		/* JSON Lines, or NULL */
	struct taproot_ksyms *ksyms;	/* NULL: addresses only */
	uint64_t count;			/* records to print, 0: no limit */
	bool pid_set;
	uint32_t pid;
	uint32_t ustack_bytes;		/* of each sample to print in hex */

	uint64_t printed;
	uint64_t by_type[TAPROOT_REC_SAMPLE_REF + 1];
	uint64_t other;			/* records of types not known here */
	uint64_t lost[TAPROOT_LOST_NR];	/* from LOST records */
	uint64_t invalid;
	bool out_failed;		/* stdout went away (EPIPE) or broke */
	int out_errno;			/* why */
};

static const char *const sample_flag_names[] = {
	"user_regs",	/* TAPROOT_SAMPLE_F_USER_REGS */
	"in_kernel",	/* TAPROOT_SAMPLE_F_IN_KERNEL */
	"idle",		/* TAPROOT_SAMPLE_F_IDLE */
	"kstack_trunc",	/* TAPROOT_SAMPLE_F_KSTACK_TRUNC */
	"ustack_fault",	/* TAPROOT_SAMPLE_F_USTACK_FAULT */
	"kthread",	/* TAPROOT_SAMPLE_F_KTHREAD */
	"ustack_top",	/* TAPROOT_SAMPLE_F_USTACK_TOP */
	"ustack_trunc",	/* TAPROOT_SAMPLE_F_USTACK_TRUNC */
	"upcs",		/* TAPROOT_SAMPLE_F_UPCS */
	"uregs_caller",	/* TAPROOT_SAMPLE_F_UREGS_CALLER */
	"verify",	/* TAPROOT_SAMPLE_F_VERIFY */
	"python",	/* TAPROOT_SAMPLE_F_PYTHON */
};
_Static_assert(TAPROOT_SAMPLE_F_USER_REGS == 1 << 0 && TAPROOT_SAMPLE_F_IN_KERNEL == 1 << 1 &&
	       TAPROOT_SAMPLE_F_IDLE == 1 << 2 && TAPROOT_SAMPLE_F_KSTACK_TRUNC == 1 << 3 &&
	       TAPROOT_SAMPLE_F_USTACK_FAULT == 1 << 4 && TAPROOT_SAMPLE_F_KTHREAD == 1 << 5 &&
	       TAPROOT_SAMPLE_F_USTACK_TOP == 1 << 6 && TAPROOT_SAMPLE_F_USTACK_TRUNC == 1 << 7 &&
	       TAPROOT_SAMPLE_F_UPCS == 1 << 8 && TAPROOT_SAMPLE_F_UREGS_CALLER == 1 << 9 &&
	       TAPROOT_SAMPLE_F_VERIFY == 1 << 10 && TAPROOT_SAMPLE_F_PYTHON == 1 << 11,
	       "sample_flag_names follows the TAPROOT_SAMPLE_F_* bits");

static const char *const snap_flag_names[] = {
	"user_regs",	/* TAPROOT_SNAP_F_USER_REGS */
	"kstack_trunc",	/* TAPROOT_SNAP_F_KSTACK_TRUNC */
	"ustack_fault",	/* TAPROOT_SNAP_F_USTACK_FAULT */
	"ustack_trunc",	/* TAPROOT_SNAP_F_USTACK_TRUNC */
	"ustack_top",	/* TAPROOT_SNAP_F_USTACK_TOP */
	"upcs",		/* TAPROOT_SNAP_F_UPCS */
};
_Static_assert(TAPROOT_SNAP_F_USER_REGS == 1 << 0 && TAPROOT_SNAP_F_KSTACK_TRUNC == 1 << 1 &&
	       TAPROOT_SNAP_F_USTACK_FAULT == 1 << 2 && TAPROOT_SNAP_F_USTACK_TRUNC == 1 << 3 &&
	       TAPROOT_SNAP_F_USTACK_TOP == 1 << 4 && TAPROOT_SNAP_F_UPCS == 1 << 5,
	       "snap_flag_names follows the TAPROOT_SNAP_F_* bits");
/* How the walk ended is printed apart ("unwind"), not as flags. */
_Static_assert((TAPROOT_SNAP_UNWIND_MASK & ((1U << 6) - 1)) == 0 &&
	       TAPROOT_SNAP_UNWIND_MASK >> TAPROOT_SNAP_UNWIND_SHIFT == 0xf,
	       "the snapshot's unwind bits lie above snap_flag_names' bits");

static const char *const switch_flag_names[] = {
	"prev", "next", "preempt", "stacks",	/* TAPROOT_SWITCH_F_* */
};
_Static_assert(TAPROOT_SWITCH_F_PREV == 1 << 0 && TAPROOT_SWITCH_F_NEXT == 1 << 1 &&
	       TAPROOT_SWITCH_F_PREEMPT == 1 << 2 && TAPROOT_SWITCH_F_STACKS == 1 << 3,
	       "switch_flag_names follows the TAPROOT_SWITCH_F_* bits");

static const char *const waking_flag_names[] = {
	"hardirq", "softirq", "nmi", "new", "stacks",	/* TAPROOT_WAKING_F_* */
};
_Static_assert(TAPROOT_WAKING_F_HARDIRQ == 1 << 0 && TAPROOT_WAKING_F_SOFTIRQ == 1 << 1 &&
	       TAPROOT_WAKING_F_NMI == 1 << 2 && TAPROOT_WAKING_F_NEW == 1 << 3 &&
	       TAPROOT_WAKING_F_STACKS == 1 << 4,
	       "waking_flag_names follows the TAPROOT_WAKING_F_* bits");

static const char *const fork_flag_names[] = { "thread" };
static const char *const exec_flag_names[] = { "filename_trunc" };
static const char *const exit_flag_names[] = { "group_dead" };

static const char *const reg_names[18] = {
	"ax", "bx", "cx", "dx", "si", "di", "bp", "sp",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
	"ip", "flags",
};
_Static_assert(sizeof(struct taproot_user_regs) == sizeof(reg_names) / sizeof(reg_names[0]) * 8,
	       "reg_names names every user register");

/* @n bytes at @p as 2 * @n lowercase hex digits and a NUL at @out. */
static void hex_encode(char *out, const uint8_t *p, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 15];
	}
	out[2 * n] = '\0';
}

/* JSON has no hex numbers: addresses and registers are strings "0x...". */
static void json_hex_u64(struct taproot_json *j, uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "0x%" PRIx64, v);
	taproot_json_string(j, buf);
}

/* ------------------------------------------------------------ record fields */

/*
 * The start of a record: its time (seconds.nanoseconds), CPU and @type in
 * text; "type", "time_ns" and "cpu" of a new object in JSON. The record's
 * fields follow, then rec_end() or (after its stacks) rec_close().
 */
static void rec_begin(struct dump *d, const char *type, const struct taproot_rec_header *h,
		      unsigned int cpu)
{
	if (!d->j) {
		printf("%6" PRIu64 ".%09" PRIu64 " cpu %u %s", (uint64_t)h->time_ns / 1000000000,
		       (uint64_t)h->time_ns % 1000000000, cpu, type);
		return;
	}
	taproot_json_object_begin(d->j);
	taproot_json_key_string(d->j, "type", type);
	taproot_json_key_u64(d->j, "time_ns", h->time_ns);
	taproot_json_key_u64(d->j, "cpu", cpu);
}

static void rec_u64(struct dump *d, const char *key, uint64_t v)
{
	if (!d->j) {
		printf(" %s %" PRIu64, key, v);
		return;
	}
	taproot_json_key_u64(d->j, key, v);
}

/* A string field of @n bytes at most; "-" for an empty one in text, never blank. */
static void rec_str(struct dump *d, const char *key, const char *s, size_t n)
{
	char buf[TAPROOT_EXEC_FILENAME_MAX + 1];

	if (n >= sizeof(buf))
		n = sizeof(buf) - 1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	if (!d->j) {
		printf(" %s %s", key, buf[0] ? buf : "-");
		return;
	}
	taproot_json_key_string(d->j, key, buf);
}

/*
 * @flags by the names of its bits (@names, @nr of them); "bitN" for bits
 * without one: comma-separated, "-" for none, in text; an array in JSON.
 */
static void rec_flags(struct dump *d, const char *key, unsigned int flags,
		      const char *const *names, size_t nr)
{
	unsigned int bit;
	bool any = false;
	char buf[16];
	const char *name;

	if (d->j) {
		taproot_json_key(d->j, key);
		taproot_json_array_begin(d->j);
	} else {
		printf(" %s ", key);
	}
	for (bit = 0; bit < 16; bit++) {
		if (!(flags & (1U << bit)))
			continue;
		name = bit < nr && names[bit] ? names[bit] : NULL;
		if (!name) {
			snprintf(buf, sizeof(buf), "bit%u", bit);
			name = buf;
		}
		if (d->j)
			taproot_json_string(d->j, name);
		else
			printf("%s%s", any ? "," : "", name);
		any = true;
	}
	if (d->j)
		taproot_json_array_end(d->j);
	else if (!any)
		putchar('-');
}

/* The end of a record whose text line is over (its stacks ended it). */
static void rec_close(struct dump *d)
{
	if (d->j)
		taproot_json_object_end(d->j);
}

/* ------------------------------------------------------------ stacks */

/*
 * The stacks of a sample, a stack snapshot or a STACK, whose fixed parts
 * differ but are followed alike by kstack_nr u64 kernel addresses, then
 * upc_nr u64 user pcs (a sample with UPCS, a STACK), then ustack_len
 * bytes of user stack (taproot_rec_check() passed: all are inside the
 * record).
 */
struct stacks {
	const uint64_t *kstack;
	unsigned int kstack_nr;
	const uint64_t *upcs;
	unsigned int upc_nr;
	const uint8_t *ustack;
	uint32_t ustack_len;
	const struct taproot_user_regs *regs;	/* NULL: not captured */
	const struct taproot_pyframe *py;	/* the module's CPython frames */
	unsigned int py_nr;
};

/* @arrays: the end of the fixed part, where the kernel addresses start. */
static struct stacks stacks_at(const void *arrays, unsigned int kstack_nr, unsigned int upc_nr,
			       uint32_t ustack_len, const struct taproot_user_regs *regs)
{
	const uint64_t *kstack = arrays;

	return (struct stacks){
		.kstack = kstack,
		.kstack_nr = kstack_nr,
		.upcs = kstack + kstack_nr,
		.upc_nr = upc_nr,
		.ustack = (const uint8_t *)(kstack + kstack_nr + upc_nr),
		.ustack_len = ustack_len,
		.regs = regs,
	};
}

/* Text: a line per kernel frame, then one per user pc ("upc"). */
static void print_pcs_text(struct dump *d, const struct stacks *st)
{
	char sym[256];
	unsigned int i;

	for (i = 0; i < st->kstack_nr; i++) {
		taproot_ksyms_format(d->ksyms, st->kstack[i], sym, sizeof(sym));
		printf("    0x%016" PRIx64 " %s\n", (uint64_t)st->kstack[i], sym[0] ? sym : "?");
	}
	for (i = 0; i < st->upc_nr; i++)
		printf("    upc 0x%016" PRIx64 "\n", (uint64_t)st->upcs[i]);
	for (i = 0; i < st->py_nr; i++)
		printf("    py code 0x%016" PRIx64 " pos %" PRIu32 " cookie 0x%08" PRIx32 "%s\n",
		       (uint64_t)st->py[i].code, st->py[i].pos & TAPROOT_PYFRAME_POS_MASK,
		       st->py[i].cookie, st->py[i].pos & TAPROOT_PYFRAME_ENTRY ? " entry" : "");
}

/*
 * Text: the rest of the record's line (ip and sp, the user stack's length),
 * then the pcs' lines and one for the user stack in hex, if any.
 */
static void print_stacks_text(struct dump *d, const struct stacks *st, const char *uhex)
{
	if (st->regs)
		printf(" ip 0x%" PRIx64 " sp 0x%" PRIx64, (uint64_t)st->regs->ip,
		       (uint64_t)st->regs->sp);
	printf(" ustack %" PRIu32 "\n", st->ustack_len);
	print_pcs_text(d, st);
	if (uhex)
		printf("    ustack %s\n", uhex);
}

/* "kstack": [{"addr": "0x...", "sym": "name+0x12/0x40" or null}, ...] */
static void json_kstack(struct dump *d, const struct stacks *st)
{
	struct taproot_json *j = d->j;
	char sym[256];
	unsigned int i;

	taproot_json_key(j, "kstack");
	taproot_json_array_begin(j);
	for (i = 0; i < st->kstack_nr; i++) {
		taproot_json_object_begin(j);
		taproot_json_key(j, "addr");
		json_hex_u64(j, st->kstack[i]);
		taproot_json_key(j, "sym");
		if (taproot_ksyms_format(d->ksyms, st->kstack[i], sym, sizeof(sym)))
			taproot_json_string(j, sym);
		else
			taproot_json_null(j);
		taproot_json_object_end(j);
	}
	taproot_json_array_end(j);
}

/* "upcs": ["0x...", ...], the user pcs the module found, leaf first. */
static void json_upcs(struct dump *d, const struct stacks *st)
{
	taproot_json_key(d->j, "upcs");
	taproot_json_array_begin(d->j);
	for (unsigned int i = 0; i < st->upc_nr; i++)
		json_hex_u64(d->j, st->upcs[i]);
	taproot_json_array_end(d->j);
}

/*
 * "python": [{"code": "0x...", "pos": N, "cookie": "0x...", "entry": bool}, ...],
 * the CPython frames the module found, innermost first.
 */
static void json_python(struct dump *d, const struct stacks *st)
{
	struct taproot_json *j = d->j;

	taproot_json_key(j, "python");
	taproot_json_array_begin(j);
	for (unsigned int i = 0; i < st->py_nr; i++) {
		taproot_json_object_begin(j);
		taproot_json_key(j, "code");
		json_hex_u64(j, st->py[i].code);
		taproot_json_key_u64(j, "pos", st->py[i].pos & TAPROOT_PYFRAME_POS_MASK);
		taproot_json_key(j, "cookie");
		json_hex_u64(j, st->py[i].cookie);
		taproot_json_key(j, "entry");
		taproot_json_bool(j, st->py[i].pos & TAPROOT_PYFRAME_ENTRY);
		taproot_json_object_end(j);
	}
	taproot_json_array_end(j);
}

/* "user_regs": every register by its name, or null when not captured. */
static void json_user_regs(struct taproot_json *j, const struct taproot_user_regs *user_regs)
{
	const uint64_t *regs = (const uint64_t *)user_regs;
	unsigned int i;

	taproot_json_key(j, "user_regs");
	if (!user_regs) {
		taproot_json_null(j);
		return;
	}
	taproot_json_object_begin(j);
	for (i = 0; i < sizeof(reg_names) / sizeof(reg_names[0]); i++) {
		taproot_json_key(j, reg_names[i]);
		json_hex_u64(j, regs[i]);
	}
	taproot_json_object_end(j);
}

/* JSON: "kstack", "upcs", "user_regs", "ustack_len", and "ustack" (hex) if any. */
static void print_stacks_json(struct dump *d, const struct stacks *st, const char *uhex)
{
	json_kstack(d, st);
	json_upcs(d, st);
	json_python(d, st);
	json_user_regs(d->j, st->regs);
	taproot_json_key_u64(d->j, "ustack_len", st->ustack_len);
	if (uhex)
		taproot_json_key_string(d->j, "ustack", uhex);
}

/*
 * The stacks, the same for a sample and a snapshot, with the first
 * --ustack-bytes of the user stack in hex (none if out of memory: the
 * rest of the record is worth printing still).
 */
static void print_stacks(struct dump *d, const struct stacks *st)
{
	size_t nu = st->ustack_len < d->ustack_bytes ? st->ustack_len : d->ustack_bytes;
	char *uhex = NULL;

	if (nu) {
		uhex = malloc(2 * nu + 1);
		if (uhex)
			hex_encode(uhex, st->ustack, nu);
	}
	if (d->j)
		print_stacks_json(d, st, uhex);
	else
		print_stacks_text(d, st, uhex);
	free(uhex);
}

/* ------------------------------------------------------------ samples */

/* How the module's walk ended: its name, or "?" for a value not known here. */
static void rec_kunwind(struct dump *d, unsigned int end)
{
	const char *name = taproot_kunwind_name(end);

	if (!name)
		name = "?";
	rec_str(d, "unwind", name, strlen(name));
}

static void print_sample(struct dump *d, const struct taproot_rec_sample *s,
			 unsigned int cpu)
{
	struct stacks st = stacks_at(s + 1, s->kstack_nr, s->upc_nr, s->ustack_len,
				     s->hdr.flags & TAPROOT_SAMPLE_F_USER_REGS ? &s->user_regs : NULL);

	st.py_nr = taproot_rec_sample_python(s, &st.py);

	rec_begin(d, "sample", &s->hdr, cpu);
	rec_u64(d, "pid", s->pid);
	rec_u64(d, "tid", s->tid);
	rec_str(d, "comm", s->comm, sizeof(s->comm));
	rec_flags(d, "flags", s->hdr.flags, NAMES(sample_flag_names));
	if (d->j)
		taproot_json_key_u64(d->j, "period_us", s->period_us);
	else
		printf(" period %" PRIu32 "us", s->period_us);
	rec_kunwind(d, s->unwind);
	rec_u64(d, "upc_nr", s->upc_nr);
	print_stacks(d, &st);
	rec_close(d);
}

/* ------------------------------------------------------------ interned stacks */

/* A 64-bit stack id: hex in text; "0x..." in JSON, where no number loses bits. */
static void rec_id(struct dump *d, const char *key, uint64_t id)
{
	if (!d->j) {
		printf(" %s 0x%016" PRIx64, key, id);
		return;
	}
	taproot_json_key(d->j, key);
	json_hex_u64(d->j, id);
}

static void print_stack(struct dump *d, const struct taproot_rec_stack *r, unsigned int cpu)
{
	struct stacks st = stacks_at(r + 1, r->kstack_nr, r->upc_nr, 0, NULL);

	st.py = (const struct taproot_pyframe *)(st.upcs + r->upc_nr);
	st.py_nr = r->py_nr;

	rec_begin(d, "stack", &r->hdr, cpu);
	rec_flags(d, "flags", r->hdr.flags, NAMES(sample_flag_names));
	rec_id(d, "id", r->id);
	rec_u64(d, "epoch", r->epoch);
	rec_u64(d, "pid", r->pid);
	rec_kunwind(d, r->unwind);
	if (d->j) {
		json_kstack(d, &st);
		json_upcs(d, &st);
		json_python(d, &st);
	} else {
		printf(" kstack_nr %u upc_nr %u\n", r->kstack_nr, r->upc_nr);
		print_pcs_text(d, &st);
	}
	rec_close(d);
}

static void print_sample_ref(struct dump *d, const struct taproot_rec_sample_ref *r,
			     unsigned int cpu)
{
	rec_begin(d, "sample_ref", &r->hdr, cpu);
	rec_u64(d, "pid", r->pid);
	rec_u64(d, "tid", r->tid);
	rec_str(d, "comm", r->comm, sizeof(r->comm));
	rec_flags(d, "flags", r->hdr.flags, NAMES(sample_flag_names));
	if (d->j)
		taproot_json_key_u64(d->j, "period_us", r->period_us);
	else
		printf(" period %" PRIu32 "us", r->period_us);
	rec_id(d, "stack_id", r->stack_id);
	rec_u64(d, "epoch", r->epoch);
	if (!d->j)
		putchar('\n');
	rec_close(d);
}

/* ------------------------------------------------------------ events */

/*
 * The stack snapshot a switch or waking record may carry: a "stack" field
 * of its flags, "unwind" (how the module's walk of its user stack ended,
 * named as a sample's), then the stacks as a sample's (text); a "stack"
 * object of "flags", "unwind" and the stacks (JSON). With UPCS its ustack
 * bytes are the module's user pcs: "upc" lines, "upcs", and no stack
 * bytes (ustack 0).
 */
static void print_snap(struct dump *d, const struct taproot_stack_snap *sn)
{
	unsigned int flags = sn->flags & ~TAPROOT_SNAP_UNWIND_MASK;
	bool upcs = sn->flags & TAPROOT_SNAP_F_UPCS;
	const struct stacks st = stacks_at(sn + 1, sn->kstack_nr,
					   upcs ? sn->ustack_len / 8 : 0,
					   upcs ? 0 : sn->ustack_len,
					   sn->flags & TAPROOT_SNAP_F_USER_REGS ?
					   &sn->user_regs : NULL);

	if (!d->j) {
		rec_flags(d, "stack", flags, NAMES(snap_flag_names));
		rec_kunwind(d, TAPROOT_SNAP_UNWIND(sn->flags));
		print_stacks(d, &st);
		return;
	}
	taproot_json_key(d->j, "stack");
	taproot_json_object_begin(d->j);
	rec_flags(d, "flags", flags, NAMES(snap_flag_names));
	rec_kunwind(d, TAPROOT_SNAP_UNWIND(sn->flags));
	print_stacks(d, &st);
	taproot_json_object_end(d->j);
}

/* The end of an event record: its snapshot @sn if any, else of the line. */
static void rec_end(struct dump *d, const struct taproot_stack_snap *sn)
{
	if (sn)
		print_snap(d, sn);
	else if (!d->j)
		putchar('\n');
	rec_close(d);
}

/*
 * "S", "D", "R+", ...: as ps shows a task state (TASK_* bits of
 * include/linux/sched.h; 0x80 is TASK_DEAD, 0x402 TASK_IDLE).
 */
static void rec_prev_state(struct dump *d, const struct taproot_rec_switch *r)
{
	static const char letters[] = "SDTtXZPX";
	uint32_t st = r->prev_state;
	char buf[16];
	unsigned int bit;
	size_t n = 0;

	if (r->hdr.flags & TAPROOT_SWITCH_F_PREEMPT) {
		snprintf(buf, sizeof(buf), "R+");
	} else if (!st) {
		snprintf(buf, sizeof(buf), "R");
	} else if ((st & 0x402) == 0x402) {
		snprintf(buf, sizeof(buf), "I");
	} else {
		for (bit = 0; bit < 8; bit++)
			if ((st & (1U << bit)) && !memchr(buf, letters[bit], n))
				buf[n++] = letters[bit];
		buf[n] = '\0';
		if (!n)
			snprintf(buf, sizeof(buf), "0x%" PRIx32, st);
	}
	rec_str(d, "state", buf, sizeof(buf));
}

static void print_switch(struct dump *d, const struct taproot_rec_switch *r, unsigned int cpu)
{
	rec_begin(d, "switch", &r->hdr, cpu);
	rec_flags(d, "flags", r->hdr.flags, NAMES(switch_flag_names));
	rec_u64(d, "prev_pid", r->prev_pid);
	rec_u64(d, "prev_tid", r->prev_tid);
	rec_str(d, "prev_comm", r->prev_comm, sizeof(r->prev_comm));
	rec_u64(d, "prev_state", r->prev_state);
	rec_prev_state(d, r);
	rec_u64(d, "prev_seq", r->prev_seq);
	rec_u64(d, "next_pid", r->next_pid);
	rec_u64(d, "next_tid", r->next_tid);
	rec_u64(d, "next_seq", r->next_seq);
	rec_u64(d, "sched_one_in", r->sched_one_in);
	rec_end(d, taproot_rec_snap(&r->hdr));
}

static void print_waking(struct dump *d, const struct taproot_rec_waking *r, unsigned int cpu)
{
	rec_begin(d, "waking", &r->hdr, cpu);
	rec_flags(d, "flags", r->hdr.flags, NAMES(waking_flag_names));
	rec_u64(d, "target_pid", r->target_pid);
	rec_u64(d, "target_tid", r->target_tid);
	rec_u64(d, "target_seq", r->target_seq);
	rec_u64(d, "waker_pid", r->waker_pid);
	rec_u64(d, "waker_tid", r->waker_tid);
	rec_str(d, "waker_comm", r->waker_comm, sizeof(r->waker_comm));
	rec_u64(d, "capture_ns", r->capture_ns);
	rec_end(d, taproot_rec_snap(&r->hdr));
}

static void print_fork(struct dump *d, const struct taproot_rec_fork *r, unsigned int cpu)
{
	rec_begin(d, "fork", &r->hdr, cpu);
	rec_flags(d, "flags", r->hdr.flags, NAMES(fork_flag_names));
	rec_u64(d, "parent_pid", r->parent_pid);
	rec_u64(d, "parent_tid", r->parent_tid);
	rec_u64(d, "child_pid", r->child_pid);
	rec_u64(d, "child_tid", r->child_tid);
	rec_str(d, "comm", r->comm, sizeof(r->comm));
	rec_end(d, NULL);
}

static void print_exec(struct dump *d, const struct taproot_rec_exec *r, unsigned int cpu)
{
	rec_begin(d, "exec", &r->hdr, cpu);
	rec_flags(d, "flags", r->hdr.flags, NAMES(exec_flag_names));
	rec_u64(d, "pid", r->pid);
	rec_u64(d, "tid", r->tid);
	rec_u64(d, "old_tid", r->old_tid);
	rec_str(d, "comm", r->comm, sizeof(r->comm));
	/* taproot_rec_check() saw filename_len bytes, the last the NUL. */
	rec_str(d, "filename", (const char *)(r + 1), r->filename_len);
	rec_end(d, NULL);
}

static void print_exit(struct dump *d, const struct taproot_rec_exit *r, unsigned int cpu)
{
	rec_begin(d, "exit", &r->hdr, cpu);
	rec_flags(d, "flags", r->hdr.flags, NAMES(exit_flag_names));
	rec_u64(d, "pid", r->pid);
	rec_u64(d, "tid", r->tid);
	rec_str(d, "comm", r->comm, sizeof(r->comm));
	rec_end(d, NULL);
}

/* With --pid: whether a record concerns that process. */
static bool concerns(const struct taproot_rec_header *h, uint32_t pid)
{
	const struct taproot_rec_switch *sw = (const void *)h;
	const struct taproot_rec_waking *wk = (const void *)h;
	const struct taproot_rec_fork *fk = (const void *)h;
	const struct taproot_rec_exec *ex = (const void *)h;
	const struct taproot_rec_exit *et = (const void *)h;
	const struct taproot_rec_stack *sk = (const void *)h;

	switch (h->type) {
	case TAPROOT_REC_STACK:
		return sk->pid == pid;
	case TAPROOT_REC_SWITCH:
		return sw->prev_pid == pid || sw->next_pid == pid;
	case TAPROOT_REC_WAKING:
		return wk->target_pid == pid || wk->waker_pid == pid;
	case TAPROOT_REC_FORK:
		return fk->parent_pid == pid || fk->child_pid == pid;
	case TAPROOT_REC_EXEC:
		return ex->pid == pid;
	case TAPROOT_REC_EXIT:
		return et->pid == pid;
	default:
		return false;
	}
}

/* ------------------------------------------------------------ others */

static void print_lost(struct dump *d, const struct taproot_rec_lost *l, unsigned int cpu)
{
	rec_begin(d, "lost", &l->hdr, cpu);
	/* Text: "full N nested N" on the line; JSON: a "lost" object of them. */
	if (d->j) {
		taproot_json_key(d->j, "lost");
		taproot_json_object_begin(d->j);
	}
	rec_u64(d, "full", l->lost[TAPROOT_LOST_FULL]);
	rec_u64(d, "nested", l->lost[TAPROOT_LOST_NESTED]);
	if (d->j)
		taproot_json_object_end(d->j);
	rec_end(d, NULL);
}

/* A record this program does not decode (yet): its header. */
static void print_other(struct dump *d, const struct taproot_rec_header *h, unsigned int cpu)
{
	const char *name = taproot_rec_type_name(h->type);
	char buf[16];

	if (!name) {
		snprintf(buf, sizeof(buf), "type%u", h->type);
		name = buf;
	}
	rec_begin(d, name, h, cpu);
	rec_u64(d, "size", h->size);
	if (d->j)
		taproot_json_key_u64(d->j, "flags", h->flags);
	else
		printf(" flags 0x%x", h->flags);
	rec_end(d, NULL);
}

/* ------------------------------------------------------------ consuming */

/*
 * Remembers the first failure of stdout and its errno: a write error stays
 * in the stream (ferror()), @flush also pushes out what stdio buffers.
 */
static void dump_check_stdout(struct dump *d, bool flush)
{
	if (d->out_failed)
		return;
	if ((flush && fflush(stdout) == EOF) || ferror(stdout)) {
		d->out_failed = true;
		d->out_errno = errno;
	}
}

/* Whether to stop: stdout broke, or --count records are printed. */
static bool dump_done(const struct dump *d)
{
	return d->out_failed || (d->count && d->printed >= d->count);
}

/* By type for the summary; types this program has no name for as "other". */
static void count_record(struct dump *d, const struct taproot_rec_header *h)
{
	if (h->type < sizeof(d->by_type) / sizeof(d->by_type[0]) && taproot_rec_type_name(h->type))
		d->by_type[h->type]++;
	else
		d->other++;
}

/* A causal event or an unknown type, if --pid lets it through: whether printed. */
static bool print_event(struct dump *d, const struct taproot_rec_header *h, unsigned int cpu)
{
	if (d->pid_set && !concerns(h, d->pid))
		return false;
	if (h->type == TAPROOT_REC_SWITCH)
		print_switch(d, (const void *)h, cpu);
	else if (h->type == TAPROOT_REC_WAKING)
		print_waking(d, (const void *)h, cpu);
	else if (h->type == TAPROOT_REC_FORK)
		print_fork(d, (const void *)h, cpu);
	else if (h->type == TAPROOT_REC_EXEC)
		print_exec(d, (const void *)h, cpu);
	else if (h->type == TAPROOT_REC_EXIT)
		print_exit(d, (const void *)h, cpu);
	else if (h->type == TAPROOT_REC_STACK)
		print_stack(d, (const void *)h, cpu);
	else
		print_other(d, h, cpu);
	return true;
}

/* taproot_ring_ops.record: nonzero stops the pass (see dump_done()). */
static int on_record(const struct taproot_rec_header *h, unsigned int cpu, void *arg)
{
	const struct taproot_rec_sample *s = (const struct taproot_rec_sample *)h;
	const struct taproot_rec_lost *l = (const struct taproot_rec_lost *)h;
	struct dump *d = arg;
	unsigned int i;

	count_record(d, h);
	switch (h->type) {
	case TAPROOT_REC_SAMPLE:
		if (d->pid_set && s->pid != d->pid)
			return 0;
		print_sample(d, s, cpu);
		break;
	case TAPROOT_REC_SAMPLE_REF:
		if (d->pid_set && ((const struct taproot_rec_sample_ref *)h)->pid != d->pid)
			return 0;
		print_sample_ref(d, (const void *)h, cpu);
		break;
	case TAPROOT_REC_LOST:
		for (i = 0; i < TAPROOT_LOST_NR; i++)
			d->lost[i] += l->lost[i];
		/* Loss concerns every process: shown with --pid too. */
		print_lost(d, l, cpu);
		break;
	default:
		if (!print_event(d, h, cpu))
			return 0;
		break;
	}
	d->printed++;
	dump_check_stdout(d, false);
	return dump_done(d);
}

static void on_corrupt(unsigned int cpu, uint64_t pos, const char *why, void *arg)
{
	struct dump *d = arg;

	d->invalid++;
	fprintf(stderr, "taprootctl: dump: ring of CPU %u corrupt at position %" PRIu64
		": %s; its unread bytes were dropped\n", cpu, pos, why);
}

static const struct taproot_ring_ops dump_ring_ops = {
	.record = on_record,
	.corrupt = on_corrupt,
};

/* On stderr, whatever the output format: the records by type, losses, corruption. */
static void summary(const struct dump *d)
{
	uint64_t total = d->other;
	unsigned int t;

	for (t = 0; t < sizeof(d->by_type) / sizeof(d->by_type[0]); t++)
		total += d->by_type[t];
	fprintf(stderr, "taprootctl: dump: %" PRIu64 " records (", total);
	for (t = 0; t < sizeof(d->by_type) / sizeof(d->by_type[0]); t++)
		if (taproot_rec_type_name(t))
			fprintf(stderr, "%s %" PRIu64 ", ", taproot_rec_type_name(t),
				d->by_type[t]);
	fprintf(stderr, "other %" PRIu64 "), %" PRIu64 " printed; lost %" PRIu64
		" (full %" PRIu64 ", nested %" PRIu64 "); %" PRIu64 " invalid\n",
		d->other, d->printed, d->lost[TAPROOT_LOST_FULL] + d->lost[TAPROOT_LOST_NESTED],
		d->lost[TAPROOT_LOST_FULL], d->lost[TAPROOT_LOST_NESTED], d->invalid);
}

/* ------------------------------------------------------------ arguments */

static int parse_args(int argc, char **argv, struct dump *d, double *duration)
{
	enum { COUNT, DURATION, PID, USTACK_BYTES, NR_OPTS };
	static const char *const names[NR_OPTS] = {
		"--count", "--duration", "--pid", "--ustack-bytes",
	};
	const char *arg, *val, *eq;
	unsigned int o;
	size_t len;
	int ret = EXIT_OK;

	for (; argc; argc--, argv++) {
		arg = argv[0];
		eq = strchr(arg, '=');
		len = eq ? (size_t)(eq - arg) : strlen(arg);
		for (o = 0; o < NR_OPTS; o++)
			if (strlen(names[o]) == len && !strncmp(arg, names[o], len))
				break;
		if (o == NR_OPTS)
			return p_usage("'dump': unknown %s '%s'",
				       arg[0] == '-' ? "option" : "argument", arg);
		if (eq) {
			val = eq + 1;
		} else if (argc < 2) {
			return p_usage("'dump %s' needs a value", names[o]);
		} else {
			val = argv[1];
			argc--, argv++;
		}

		switch (o) {
		case COUNT:
			ret = parse_u64_arg("dump", names[o], val, 1, UINT64_MAX, &d->count);
			break;
		case PID:
			ret = parse_u32_arg("dump", names[o], val, 1, INT32_MAX, &d->pid);
			d->pid_set = true;
			break;
		case USTACK_BYTES:
			ret = parse_u32_arg("dump", names[o], val, 0, TAPROOT_USTACK_MAX,
					    &d->ustack_bytes);
			break;
		default: /* DURATION */
			ret = parse_seconds_arg("dump", names[o], val, duration);
			break;
		}
		if (ret != EXIT_OK)
			return ret;
	}
	return EXIT_OK;
}

/* ------------------------------------------------------------ dump */

/*
 * First of all, so that a signal that comes while the rings are mapped or
 * kallsyms loads is not lost: it ends the wait (poll() is never restarted,
 * whatever SA_RESTART says), then the rings are drained. SA_RESTART is for
 * the writes: one blocked on a slow reader of stdout (a pipe) failed with
 * EINTR, stdio kept the error, and the records being drained were lost with
 * an error exit.
 */
static void dump_catch_signals(void)
{
	struct sigaction sa = { .sa_handler = dump_on_signal };

	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* A reader that went away (| head) ends the dump, not the process. */
	signal(SIGPIPE, SIG_IGN);
}

/* The module's info, for the rings' geometry and whether it samples. */
static int dump_get_info(struct taproot_info *info)
{
	int err = taproot_module_info(info);

	if (err < 0)
		return p_err("%s", taproot_errmsg(err));
	return EXIT_OK;
}

/*
 * kallsyms (without it, addresses only), then the rings: *@ring and d->ksyms
 * are set on EXIT_OK, for dump_finish() to free; nothing is held otherwise.
 */
static int dump_open(struct dump *d, struct taproot_ring **ring)
{
	struct taproot_info info;
	int err, ret;

	ret = dump_get_info(&info);
	if (ret != EXIT_OK)
		return ret;
	/*
	 * kallsyms before the rings: reading it takes a second of CPU under
	 * TCG, and a dump that has the rings mapped is ready (tests wait for
	 * the mapping before they start what they measure).
	 */
	err = taproot_ksyms_load(NULL, &d->ksyms);
	if (err < 0)
		fprintf(stderr, "taprootctl: dump: kernel stacks stay unsymbolized: %s\n",
			taproot_errmsg(err));
	err = taproot_ring_open(&info, ring);
	if (err < 0) {
		taproot_ksyms_free(d->ksyms);
		return p_err("%s", taproot_errmsg(err));
	}
	if (!info.running)
		fprintf(stderr, "taprootctl: dump: sampling is not running: showing what the rings "
			"hold ('taprootctl start' samples)\n");
	return EXIT_OK;
}

/*
 * How long the next poll may wait: DUMP_POLL_MS, less when @end (in seconds
 * of CLOCK_MONOTONIC; 0: no --duration) comes sooner, rounded up so as not
 * to wake just before it. 0 once @end has come.
 */
static int dump_poll_timeout_ms(double end)
{
	double left;

	if (!end)
		return DUMP_POLL_MS;
	left = end - tp_clock_s(CLOCK_MONOTONIC);
	if (left <= 0)
		return 0;
	if (left * 1000 < DUMP_POLL_MS)
		return (int)(left * 1000) + 1;
	return DUMP_POLL_MS;
}

/*
 * Read the rings until --count, --duration, a signal or stdout's end. A
 * signal and the end of the duration both leave a last pass: what was
 * published up to then is printed.
 */
static int dump_loop(struct dump *d, struct taproot_ring *ring, double duration)
{
	double end = duration > 0 ? tp_clock_s(CLOCK_MONOTONIC) + duration : 0;
	int timeout, n;

	for (;;) {
		taproot_ring_consume(ring, &dump_ring_ops, d);
		dump_check_stdout(d, true);
		if (dump_done(d))
			return EXIT_OK;
		if (dump_signal) {
			/*
			 * The signal may have come while the pass above ran,
			 * after it read the heads: what was published before
			 * the signal is in the rings still.
			 */
			taproot_ring_consume(ring, &dump_ring_ops, d);
			return EXIT_OK;
		}
		timeout = dump_poll_timeout_ms(end);
		if (!timeout) {
			/* Time is up: what was published by now, then stop. */
			taproot_ring_consume(ring, &dump_ring_ops, d);
			return EXIT_OK;
		}
		n = taproot_ring_poll(ring, timeout);
		if (n == -EINTR)
			continue;	/* the loop drains, then sees dump_signal */
		if (n < 0)
			return p_err("%s", taproot_errmsg(n));
	}
}

/*
 * The end of a dump that has the rings: @ret, or EXIT_ERR instead of EXIT_OK
 * if writing the output failed (not when its reader went away, EPIPE: |
 * head); then the summary on stderr, and everything freed.
 */
static int dump_finish(struct dump *d, struct taproot_ring *ring, int ret)
{
	fflush(stdout);
	if (d->j && taproot_json_free(d->j) < 0 && !d->out_failed && ret == EXIT_OK)
		ret = EXIT_ERR;
	if (d->out_failed && d->out_errno != EPIPE && ret == EXIT_OK) {
		fprintf(stderr, "taprootctl: dump: writing the records: %s\n",
			strerror(d->out_errno));
		ret = EXIT_ERR;
	}
	summary(d);
	taproot_ksyms_free(d->ksyms);
	taproot_ring_close(ring);
	return ret;
}

int do_dump(int argc, char **argv)
{
	struct taproot_ring *ring = NULL;
	struct dump d = { 0 };
	double duration = 0;
	int ret;

	ret = parse_json_flag(&argc, argv);
	if (ret == EXIT_OK)
		ret = parse_args(argc, argv, &d, &duration);
	if (ret != EXIT_OK)
		return ret;

	dump_catch_signals();
	ret = dump_open(&d, &ring);
	if (ret != EXIT_OK)
		return ret;
	if (json_output) {
		d.j = json_begin();
		if (!d.j)
			return dump_finish(&d, ring, EXIT_ERR);
	}
	return dump_finish(&d, ring, dump_loop(&d, ring, duration));
}
