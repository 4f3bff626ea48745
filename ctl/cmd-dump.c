// SPDX-License-Identifier: GPL-2.0
/*
 * taprootctl dump: be the consumer of /dev/taproot and print every record,
 * merged across CPUs by time, until a count, a duration or a signal:
 * samples, losses and the causal events (switch, waking, fork, exec, exit)
 * decoded, other types by their header.
 * It does not start sampling: 'taprootctl start' does.
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

/* The longest wait between two reads of the rings when nothing wakes us. */
#define DUMP_POLL_MS	500

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
	uint64_t by_type[TAPROOT_REC_EXIT + 1];
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
};
_Static_assert(TAPROOT_SAMPLE_F_USER_REGS == 1 << 0 && TAPROOT_SAMPLE_F_IN_KERNEL == 1 << 1 &&
	       TAPROOT_SAMPLE_F_IDLE == 1 << 2 && TAPROOT_SAMPLE_F_KSTACK_TRUNC == 1 << 3 &&
	       TAPROOT_SAMPLE_F_USTACK_FAULT == 1 << 4 && TAPROOT_SAMPLE_F_KTHREAD == 1 << 5 &&
	       TAPROOT_SAMPLE_F_USTACK_TOP == 1 << 6 && TAPROOT_SAMPLE_F_USTACK_TRUNC == 1 << 7,
	       "sample_flag_names follows the TAPROOT_SAMPLE_F_* bits");

static const char *const reg_names[18] = {
	"ax", "bx", "cx", "dx", "si", "di", "bp", "sp",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
	"ip", "flags",
};
_Static_assert(sizeof(struct taproot_user_regs) == sizeof(reg_names) / sizeof(reg_names[0]) * 8,
	       "reg_names names every user register");

static const char *flag_name(unsigned int bit, char *buf, size_t len)
{
	if (bit < sizeof(sample_flag_names) / sizeof(sample_flag_names[0]))
		return sample_flag_names[bit];
	snprintf(buf, len, "bit%u", bit);
	return buf;
}

static void hex(char *out, const uint8_t *p, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 15];
	}
	out[2 * n] = '\0';
}

static void json_hex_u64(struct taproot_json *j, uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "0x%" PRIx64, v);
	taproot_json_string(j, buf);
}

/* ------------------------------------------------------------ samples */

static void print_sample(struct dump *d, const struct taproot_rec_sample *s,
			 unsigned int cpu)
{
	const uint64_t *kstack = (const uint64_t *)(s + 1);
	const uint8_t *ustack = (const uint8_t *)(kstack + s->kstack_nr);
	const uint64_t *regs = (const uint64_t *)&s->user_regs;
	size_t nu = s->ustack_len < d->ustack_bytes ? s->ustack_len : d->ustack_bytes;
	bool have_regs = s->hdr.flags & TAPROOT_SAMPLE_F_USER_REGS;
	struct taproot_json *j = d->j;
	char comm[sizeof(s->comm) + 1], sym[256], buf[16], *uhex = NULL;
	unsigned int bit, i;
	bool any = false;

	memcpy(comm, s->comm, sizeof(s->comm));
	comm[sizeof(s->comm)] = '\0';
	if (nu) {
		uhex = malloc(2 * nu + 1);
		if (uhex)
			hex(uhex, ustack, nu);
	}

	if (!j) {
		printf("%6" PRIu64 ".%09" PRIu64 " cpu %u sample pid %" PRIu32 " tid %" PRIu32
		       " comm %s flags ", (uint64_t)s->hdr.time_ns / 1000000000,
		       (uint64_t)s->hdr.time_ns % 1000000000,
		       cpu, s->pid, s->tid, comm);
		for (bit = 0; bit < 16; bit++) {
			if (!(s->hdr.flags & (1U << bit)))
				continue;
			printf("%s%s", any ? "," : "", flag_name(bit, buf, sizeof(buf)));
			any = true;
		}
		printf("%s period %" PRIu32 "us", any ? "" : "-", s->period_us);
		if (have_regs)
			printf(" ip 0x%" PRIx64 " sp 0x%" PRIx64, (uint64_t)s->user_regs.ip,
			       (uint64_t)s->user_regs.sp);
		printf(" ustack %" PRIu32 "\n", s->ustack_len);
		for (i = 0; i < s->kstack_nr; i++) {
			taproot_ksyms_format(d->ksyms, kstack[i], sym, sizeof(sym));
			printf("    0x%016" PRIx64 " %s\n", (uint64_t)kstack[i], sym[0] ? sym : "?");
		}
		if (uhex)
			printf("    ustack %s\n", uhex);
		free(uhex);
		return;
	}

	taproot_json_object_begin(j);
	taproot_json_key(j, "type");
	taproot_json_string(j, "sample");
	taproot_json_key(j, "time_ns");
	taproot_json_u64(j, s->hdr.time_ns);
	taproot_json_key(j, "cpu");
	taproot_json_u64(j, cpu);
	taproot_json_key(j, "pid");
	taproot_json_u64(j, s->pid);
	taproot_json_key(j, "tid");
	taproot_json_u64(j, s->tid);
	taproot_json_key(j, "comm");
	taproot_json_string(j, comm);
	taproot_json_key(j, "flags");
	taproot_json_array_begin(j);
	for (bit = 0; bit < 16; bit++)
		if (s->hdr.flags & (1U << bit))
			taproot_json_string(j, flag_name(bit, buf, sizeof(buf)));
	taproot_json_array_end(j);
	taproot_json_key(j, "period_us");
	taproot_json_u64(j, s->period_us);
	taproot_json_key(j, "kstack");
	taproot_json_array_begin(j);
	for (i = 0; i < s->kstack_nr; i++) {
		taproot_json_object_begin(j);
		taproot_json_key(j, "addr");
		json_hex_u64(j, kstack[i]);
		taproot_json_key(j, "sym");
		if (taproot_ksyms_format(d->ksyms, kstack[i], sym, sizeof(sym)))
			taproot_json_string(j, sym);
		else
			taproot_json_null(j);
		taproot_json_object_end(j);
	}
	taproot_json_array_end(j);
	taproot_json_key(j, "user_regs");
	if (have_regs) {
		taproot_json_object_begin(j);
		for (i = 0; i < sizeof(reg_names) / sizeof(reg_names[0]); i++) {
			taproot_json_key(j, reg_names[i]);
			json_hex_u64(j, regs[i]);
		}
		taproot_json_object_end(j);
	} else {
		taproot_json_null(j);
	}
	taproot_json_key(j, "ustack_len");
	taproot_json_u64(j, s->ustack_len);
	if (uhex) {
		taproot_json_key(j, "ustack");
		taproot_json_string(j, uhex);
	}
	taproot_json_object_end(j);
	free(uhex);
}

/* ------------------------------------------------------------ events */

/*
 * The causal event records share one shape of output: a line of KEY VALUE
 * pairs (text) or an object (JSON), then the stack snapshot if any.
 */
static void ev_begin(struct dump *d, const char *type, const struct taproot_rec_header *h,
		     unsigned int cpu)
{
	if (!d->j) {
		printf("%6" PRIu64 ".%09" PRIu64 " cpu %u %s", (uint64_t)h->time_ns / 1000000000,
		       (uint64_t)h->time_ns % 1000000000, cpu, type);
		return;
	}
	taproot_json_object_begin(d->j);
	taproot_json_key(d->j, "type");
	taproot_json_string(d->j, type);
	taproot_json_key(d->j, "time_ns");
	taproot_json_u64(d->j, h->time_ns);
	taproot_json_key(d->j, "cpu");
	taproot_json_u64(d->j, cpu);
}

static void ev_u64(struct dump *d, const char *key, uint64_t v)
{
	if (!d->j) {
		printf(" %s %" PRIu64, key, v);
		return;
	}
	taproot_json_key(d->j, key);
	taproot_json_u64(d->j, v);
}

/* A fixed-size char array that may lack its NUL. */
static void ev_str(struct dump *d, const char *key, const char *s, size_t n)
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
	taproot_json_key(d->j, key);
	taproot_json_string(d->j, buf);
}

/* @flags by the names of its bits; "bitN" for bits without one. */
static void ev_flags(struct dump *d, const char *key, unsigned int flags,
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

static const char *const snap_flag_names[] = {
	"user_regs",	/* TAPROOT_SNAP_F_USER_REGS */
	"kstack_trunc",	/* TAPROOT_SNAP_F_KSTACK_TRUNC */
	"ustack_fault",	/* TAPROOT_SNAP_F_USTACK_FAULT */
	"ustack_trunc",	/* TAPROOT_SNAP_F_USTACK_TRUNC */
	"ustack_top",	/* TAPROOT_SNAP_F_USTACK_TOP */
};
_Static_assert(TAPROOT_SNAP_F_USER_REGS == 1 << 0 && TAPROOT_SNAP_F_KSTACK_TRUNC == 1 << 1 &&
	       TAPROOT_SNAP_F_USTACK_FAULT == 1 << 2 && TAPROOT_SNAP_F_USTACK_TRUNC == 1 << 3 &&
	       TAPROOT_SNAP_F_USTACK_TOP == 1 << 4,
	       "snap_flag_names follows the TAPROOT_SNAP_F_* bits");

/* The snapshot (taproot_rec_check() passed: its arrays are inside the record). */
static void ev_snap(struct dump *d, const struct taproot_stack_snap *sn)
{
	const uint64_t *kstack = (const uint64_t *)(sn + 1);
	const uint8_t *ustack = (const uint8_t *)(kstack + sn->kstack_nr);
	const uint64_t *regs = (const uint64_t *)&sn->user_regs;
	size_t nu = sn->ustack_len < d->ustack_bytes ? sn->ustack_len : d->ustack_bytes;
	bool have_regs = sn->flags & TAPROOT_SNAP_F_USER_REGS;
	struct taproot_json *j = d->j;
	char sym[256], *uhex = NULL;
	unsigned int i;

	if (nu) {
		uhex = malloc(2 * nu + 1);
		if (uhex)
			hex(uhex, ustack, nu);
	}
	if (!j) {
		ev_flags(d, "stack", sn->flags, snap_flag_names,
			 sizeof(snap_flag_names) / sizeof(snap_flag_names[0]));
		if (have_regs)
			printf(" ip 0x%" PRIx64 " sp 0x%" PRIx64, (uint64_t)sn->user_regs.ip,
			       (uint64_t)sn->user_regs.sp);
		printf(" ustack %" PRIu32 "\n", sn->ustack_len);
		for (i = 0; i < sn->kstack_nr; i++) {
			taproot_ksyms_format(d->ksyms, kstack[i], sym, sizeof(sym));
			printf("    0x%016" PRIx64 " %s\n", (uint64_t)kstack[i], sym[0] ? sym : "?");
		}
		if (uhex)
			printf("    ustack %s\n", uhex);
		free(uhex);
		return;
	}
	taproot_json_key(j, "stack");
	taproot_json_object_begin(j);
	ev_flags(d, "flags", sn->flags, snap_flag_names,
		 sizeof(snap_flag_names) / sizeof(snap_flag_names[0]));
	taproot_json_key(j, "kstack");
	taproot_json_array_begin(j);
	for (i = 0; i < sn->kstack_nr; i++) {
		taproot_json_object_begin(j);
		taproot_json_key(j, "addr");
		json_hex_u64(j, kstack[i]);
		taproot_json_key(j, "sym");
		if (taproot_ksyms_format(d->ksyms, kstack[i], sym, sizeof(sym)))
			taproot_json_string(j, sym);
		else
			taproot_json_null(j);
		taproot_json_object_end(j);
	}
	taproot_json_array_end(j);
	taproot_json_key(j, "user_regs");
	if (have_regs) {
		taproot_json_object_begin(j);
		for (i = 0; i < sizeof(reg_names) / sizeof(reg_names[0]); i++) {
			taproot_json_key(j, reg_names[i]);
			json_hex_u64(j, regs[i]);
		}
		taproot_json_object_end(j);
	} else {
		taproot_json_null(j);
	}
	taproot_json_key(j, "ustack_len");
	taproot_json_u64(j, sn->ustack_len);
	if (uhex) {
		taproot_json_key(j, "ustack");
		taproot_json_string(j, uhex);
	}
	taproot_json_object_end(j);
	free(uhex);
}

/* The end of a record without a snapshot, or after it. */
static void ev_end(struct dump *d, const struct taproot_stack_snap *sn)
{
	if (sn)
		ev_snap(d, sn);
	else if (!d->j)
		putchar('\n');
	if (d->j)
		taproot_json_object_end(d->j);
}

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

#define NAMES(a) (a), sizeof(a) / sizeof((a)[0])

/*
 * "S", "D", "R+", ...: as ps shows a task state (TASK_* bits of
 * include/linux/sched.h; 0x80 is TASK_DEAD, 0x402 TASK_IDLE).
 */
static void ev_state(struct dump *d, const struct taproot_rec_switch *r)
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
	ev_str(d, "state", buf, sizeof(buf));
}

static void print_switch(struct dump *d, const struct taproot_rec_switch *r, unsigned int cpu)
{
	ev_begin(d, "switch", &r->hdr, cpu);
	ev_flags(d, "flags", r->hdr.flags, NAMES(switch_flag_names));
	ev_u64(d, "prev_pid", r->prev_pid);
	ev_u64(d, "prev_tid", r->prev_tid);
	ev_str(d, "prev_comm", r->prev_comm, sizeof(r->prev_comm));
	ev_u64(d, "prev_state", r->prev_state);
	ev_state(d, r);
	ev_u64(d, "prev_seq", r->prev_seq);
	ev_u64(d, "next_pid", r->next_pid);
	ev_u64(d, "next_tid", r->next_tid);
	ev_u64(d, "next_seq", r->next_seq);
	ev_u64(d, "sched_one_in", r->sched_one_in);
	ev_end(d, taproot_rec_snap(&r->hdr));
}

static void print_waking(struct dump *d, const struct taproot_rec_waking *r, unsigned int cpu)
{
	ev_begin(d, "waking", &r->hdr, cpu);
	ev_flags(d, "flags", r->hdr.flags, NAMES(waking_flag_names));
	ev_u64(d, "target_pid", r->target_pid);
	ev_u64(d, "target_tid", r->target_tid);
	ev_u64(d, "target_seq", r->target_seq);
	ev_u64(d, "waker_pid", r->waker_pid);
	ev_u64(d, "waker_tid", r->waker_tid);
	ev_str(d, "waker_comm", r->waker_comm, sizeof(r->waker_comm));
	ev_u64(d, "capture_ns", r->capture_ns);
	ev_end(d, taproot_rec_snap(&r->hdr));
}

static void print_fork(struct dump *d, const struct taproot_rec_fork *r, unsigned int cpu)
{
	ev_begin(d, "fork", &r->hdr, cpu);
	ev_flags(d, "flags", r->hdr.flags, NAMES(fork_flag_names));
	ev_u64(d, "parent_pid", r->parent_pid);
	ev_u64(d, "parent_tid", r->parent_tid);
	ev_u64(d, "child_pid", r->child_pid);
	ev_u64(d, "child_tid", r->child_tid);
	ev_str(d, "comm", r->comm, sizeof(r->comm));
	ev_end(d, NULL);
}

static void print_exec(struct dump *d, const struct taproot_rec_exec *r, unsigned int cpu)
{
	ev_begin(d, "exec", &r->hdr, cpu);
	ev_flags(d, "flags", r->hdr.flags, NAMES(exec_flag_names));
	ev_u64(d, "pid", r->pid);
	ev_u64(d, "tid", r->tid);
	ev_u64(d, "old_tid", r->old_tid);
	ev_str(d, "comm", r->comm, sizeof(r->comm));
	/* taproot_rec_check() saw filename_len bytes, the last the NUL. */
	ev_str(d, "filename", (const char *)(r + 1), r->filename_len);
	ev_end(d, NULL);
}

static void print_exit(struct dump *d, const struct taproot_rec_exit *r, unsigned int cpu)
{
	ev_begin(d, "exit", &r->hdr, cpu);
	ev_flags(d, "flags", r->hdr.flags, NAMES(exit_flag_names));
	ev_u64(d, "pid", r->pid);
	ev_u64(d, "tid", r->tid);
	ev_str(d, "comm", r->comm, sizeof(r->comm));
	ev_end(d, NULL);
}

/* With --pid: whether a record concerns that process. */
static bool concerns(const struct taproot_rec_header *h, uint32_t pid)
{
	const struct taproot_rec_switch *sw = (const void *)h;
	const struct taproot_rec_waking *wk = (const void *)h;
	const struct taproot_rec_fork *fk = (const void *)h;
	const struct taproot_rec_exec *ex = (const void *)h;
	const struct taproot_rec_exit *et = (const void *)h;

	switch (h->type) {
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
	struct taproot_json *j = d->j;

	if (!j) {
		printf("%6" PRIu64 ".%09" PRIu64 " cpu %u lost full %" PRIu64 " nested %" PRIu64 "\n",
		       (uint64_t)l->hdr.time_ns / 1000000000,
		       (uint64_t)l->hdr.time_ns % 1000000000, cpu,
		       (uint64_t)l->lost[TAPROOT_LOST_FULL], (uint64_t)l->lost[TAPROOT_LOST_NESTED]);
		return;
	}
	taproot_json_object_begin(j);
	taproot_json_key(j, "type");
	taproot_json_string(j, "lost");
	taproot_json_key(j, "time_ns");
	taproot_json_u64(j, l->hdr.time_ns);
	taproot_json_key(j, "cpu");
	taproot_json_u64(j, cpu);
	taproot_json_key(j, "lost");
	taproot_json_object_begin(j);
	taproot_json_key(j, "full");
	taproot_json_u64(j, l->lost[TAPROOT_LOST_FULL]);
	taproot_json_key(j, "nested");
	taproot_json_u64(j, l->lost[TAPROOT_LOST_NESTED]);
	taproot_json_object_end(j);
	taproot_json_object_end(j);
}

/* A record this program does not decode (yet): its header. */
static void print_other(struct dump *d, const struct taproot_rec_header *h, unsigned int cpu)
{
	const char *name = taproot_rec_type_name(h->type);
	struct taproot_json *j = d->j;
	char buf[16];

	if (!name) {
		snprintf(buf, sizeof(buf), "type%u", h->type);
		name = buf;
	}
	if (!j) {
		printf("%6" PRIu64 ".%09" PRIu64 " cpu %u %s size %" PRIu32 " flags 0x%x\n",
		       (uint64_t)h->time_ns / 1000000000,
		       (uint64_t)h->time_ns % 1000000000, cpu, name,
		       h->size, h->flags);
		return;
	}
	taproot_json_object_begin(j);
	taproot_json_key(j, "type");
	taproot_json_string(j, name);
	taproot_json_key(j, "time_ns");
	taproot_json_u64(j, h->time_ns);
	taproot_json_key(j, "cpu");
	taproot_json_u64(j, cpu);
	taproot_json_key(j, "size");
	taproot_json_u64(j, h->size);
	taproot_json_key(j, "flags");
	taproot_json_u64(j, h->flags);
	taproot_json_object_end(j);
}

static int on_record(const struct taproot_rec_header *h, unsigned int cpu, void *arg)
{
	const struct taproot_rec_sample *s = (const struct taproot_rec_sample *)h;
	const struct taproot_rec_lost *l = (const struct taproot_rec_lost *)h;
	struct dump *d = arg;
	unsigned int i;

	if (h->type < sizeof(d->by_type) / sizeof(d->by_type[0]) && taproot_rec_type_name(h->type))
		d->by_type[h->type]++;
	else
		d->other++;

	switch (h->type) {
	case TAPROOT_REC_SAMPLE:
		if (d->pid_set && s->pid != d->pid)
			return 0;
		print_sample(d, s, cpu);
		break;
	case TAPROOT_REC_LOST:
		for (i = 0; i < TAPROOT_LOST_NR; i++)
			d->lost[i] += l->lost[i];
		/* Loss concerns every process: shown with --pid too. */
		print_lost(d, l, cpu);
		break;
	default:
		if (d->pid_set && !concerns(h, d->pid))
			return 0;
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
		else
			print_other(d, h, cpu);
		break;
	}
	d->printed++;
	if (!d->out_failed && ferror(stdout)) {
		d->out_failed = true;
		d->out_errno = errno;
	}
	return d->out_failed || (d->count && d->printed >= d->count);
}

static void on_corrupt(unsigned int cpu, uint64_t pos, const char *why, void *arg)
{
	struct dump *d = arg;

	d->invalid++;
	fprintf(stderr, "taprootctl: dump: ring of CPU %u corrupt at position %" PRIu64
		": %s; its unread bytes were dropped\n", cpu, pos, why);
}

static void summary(const struct dump *d)
{
	uint64_t total = d->other;
	unsigned int t;

	for (t = 0; t < sizeof(d->by_type) / sizeof(d->by_type[0]); t++)
		total += d->by_type[t];
	fprintf(stderr, "taprootctl: dump: %" PRIu64 " records (", total);
	for (t = 0; t < sizeof(d->by_type) / sizeof(d->by_type[0]); t++)
		if (taproot_rec_type_name(t))
			fprintf(stderr, "%s %" PRIu64 ", ", taproot_rec_type_name(t), d->by_type[t]);
	fprintf(stderr, "other %" PRIu64 "), %" PRIu64 " printed; lost %" PRIu64
		" (full %" PRIu64 ", nested %" PRIu64 "); %" PRIu64 " invalid\n",
		d->other, d->printed, d->lost[TAPROOT_LOST_FULL] + d->lost[TAPROOT_LOST_NESTED],
		d->lost[TAPROOT_LOST_FULL], d->lost[TAPROOT_LOST_NESTED], d->invalid);
}

/* ------------------------------------------------------------ arguments */

static int parse_u64(const char *opt, const char *s, uint64_t min, uint64_t max, uint64_t *v)
{
	unsigned long long n;
	char *end;

	errno = 0;
	n = strtoull(s, &end, 10);
	if (s[0] < '0' || s[0] > '9' || *end || errno || n < min || n > max)
		return p_usage("'dump %s' needs a number in %" PRIu64 "..%" PRIu64 ", not '%s'",
			       opt, min, max, s);
	*v = n;
	return EXIT_OK;
}

static int parse_args(int argc, char **argv, struct dump *d, double *duration)
{
	enum { COUNT, DURATION, PID, USTACK_BYTES, NR_OPTS };
	static const char *const names[NR_OPTS] = {
		"--count", "--duration", "--pid", "--ustack-bytes",
	};
	const char *arg, *val, *eq;
	unsigned int o;
	size_t len;
	uint64_t v;
	char *end;
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
			ret = parse_u64(names[o], val, 1, UINT64_MAX, &d->count);
			break;
		case PID:
			ret = parse_u64(names[o], val, 1, INT32_MAX, &v);
			d->pid = (uint32_t)v;
			d->pid_set = true;
			break;
		case USTACK_BYTES:
			ret = parse_u64(names[o], val, 0, TAPROOT_USTACK_MAX, &v);
			d->ustack_bytes = (uint32_t)v;
			break;
		default: /* DURATION */
			errno = 0;
			*duration = strtod(val, &end);
			if (val[0] < '0' || val[0] > '9' || *end || errno ||
			    !(*duration > 0) || *duration > 1e7)
				return p_usage("'dump --duration' needs a positive number of seconds, not '%s'",
					       val);
			break;
		}
		if (ret != EXIT_OK)
			return ret;
	}
	return EXIT_OK;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ------------------------------------------------------------ dump */

int do_dump(int argc, char **argv)
{
	static const struct taproot_ring_ops ops = {
		.record = on_record,
		.corrupt = on_corrupt,
	};
	struct sigaction sa = { .sa_handler = dump_on_signal };
	struct taproot_ring *ring = NULL;
	struct taproot_info info;
	struct taproot_nl *nl;
	struct dump d = { 0 };
	double duration = 0, end = 0, left;
	int err, n, timeout, ret;

	ret = parse_json_flag(&argc, argv);
	if (ret == EXIT_OK)
		ret = parse_args(argc, argv, &d, &duration);
	if (ret != EXIT_OK)
		return ret;

	/*
	 * First of all, so that a signal that comes while the rings are
	 * mapped or kallsyms loads is not lost: it ends the wait (poll() is
	 * never restarted, whatever SA_RESTART says), then the rings are
	 * drained. SA_RESTART is for the writes: one blocked on a slow
	 * reader of stdout (a pipe) failed with EINTR, stdio kept the error,
	 * and the records being drained were lost with an error exit.
	 */
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* A reader that went away (| head) ends the dump, not the process. */
	signal(SIGPIPE, SIG_IGN);

	err = taproot_nl_open(&nl);
	if (err < 0)
		return p_err("%s", taproot_errmsg(err));
	err = taproot_nl_get_info(nl, &info);
	taproot_nl_close(nl);
	if (err < 0)
		return p_err("%s", taproot_errmsg(err));
	/*
	 * kallsyms before the rings: reading it takes a second of CPU under
	 * TCG, and a dump that has the rings mapped is ready (tests wait for
	 * the mapping before they start what they measure).
	 */
	err = taproot_ksyms_load(NULL, &d.ksyms);
	if (err < 0)
		fprintf(stderr, "taprootctl: dump: kernel stacks stay unsymbolized: %s\n",
			taproot_errmsg(err));
	err = taproot_ring_open(&info, &ring);
	if (err < 0) {
		taproot_ksyms_free(d.ksyms);
		return p_err("%s", taproot_errmsg(err));
	}
	if (!info.running)
		fprintf(stderr, "taprootctl: dump: sampling is not running: showing what the rings "
			"hold ('taprootctl start' samples)\n");
	if (json_output) {
		d.j = json_begin();
		if (!d.j) {
			ret = EXIT_ERR;
			goto out;
		}
	}

	if (duration > 0)
		end = now_s() + duration;

	for (;;) {
		taproot_ring_consume(ring, &ops, &d);
		if (!d.out_failed && (fflush(stdout) == EOF || ferror(stdout))) {
			d.out_failed = true;
			d.out_errno = errno;
		}
		if (d.out_failed || (d.count && d.printed >= d.count))
			break;
		if (dump_signal) {
			/*
			 * The signal may have come while the pass above ran,
			 * after it read the heads: what was published before
			 * the signal is in the rings still.
			 */
			taproot_ring_consume(ring, &ops, &d);
			break;
		}
		timeout = DUMP_POLL_MS;
		if (end) {
			left = end - now_s();
			if (left <= 0) {
				/* Time is up: what was published by now, then stop. */
				taproot_ring_consume(ring, &ops, &d);
				break;
			}
			if (left * 1000 < timeout)
				timeout = (int)(left * 1000) + 1;
		}
		n = taproot_ring_poll(ring, timeout);
		if (n == -EINTR)
			continue;	/* the loop drains, then sees dump_signal */
		if (n < 0) {
			ret = p_err("%s", taproot_errmsg(n));
			goto out;
		}
	}

out:
	fflush(stdout);
	if (d.j && taproot_json_free(d.j) < 0 && !d.out_failed && ret == EXIT_OK)
		ret = EXIT_ERR;
	if (d.out_failed && d.out_errno != EPIPE && ret == EXIT_OK) {
		fprintf(stderr, "taprootctl: dump: writing the records: %s\n",
			strerror(d.out_errno));
		ret = EXIT_ERR;
	}
	summary(&d);
	taproot_ksyms_free(d.ksyms);
	taproot_ring_close(ring);
	return ret;
}
