// SPDX-License-Identifier: GPL-2.0
// vm-cflags: -Iinclude/uapi
/*
 * The unwind upload ioctls of /dev/taproot used wrongly and rightly
 * (tests/vm/test-unwind-upload-abuse.sh): prints "ok LABEL" or
 * "not ok LABEL: why" per case, then "cases N failed M"; exits 1 if any
 * failed. Talks generic netlink itself (SET_CONFIG of UNWIND_MEM,
 * GET_STATS) so that it needs nothing but the ABI header.
 *
 *   upload-abuse           every case, in one process
 *   upload-abuse --hold    open, upload a big table and mappings, print
 *                          "holding", sleep until killed (the kill -9 case)
 *   upload-abuse --freed   nothing is held any more, the device opens
 *   upload-abuse --hostile near|far PID VALUE SECONDS
 *                          the consumer as an attacker: uploads for process
 *                          PID (tests/vm/progs/stack-secret.c) a table whose
 *                          one rule reads the return address 64 bytes
 *                          (near) or 1 MiB (far) above sp, over its
 *                          program's code; tries mappings that are not its
 *                          code; samples it SECONDS with the module's
 *                          unwinding and ustack-private, and checks what
 *                          the rings tell of it: no user pc but the leaf's
 *                          outside its code, never VALUE, no stack bytes
 *   upload-abuse --chain SECONDS TARGET PID...
 *                          uploads the code mapping of TARGET, then of each
 *                          PID (the processes of a long chain of the
 *                          module's process hash: scripts/bench-guest,
 *                          insns part "uprocs"), prints "uploaded N", waits
 *                          for a line on its standard input, samples TARGET
 *                          alone SECONDS at 999 Hz, unwound in the module,
 *                          and prints "sampled N" (its samples read)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/taproot.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "abuse.h"

#define DEV "/dev/" TAPROOT_DEVICE_NAME

static const char *ename(int e)
{
	static char buf[32];

	switch (e) {
	case 0: return "success";
	case EINVAL: return "EINVAL";
	case EFAULT: return "EFAULT";
	case ENOENT: return "ENOENT";
	case EEXIST: return "EEXIST";
	case ENOSPC: return "ENOSPC";
	case ESTALE: return "ESTALE";
	case ESRCH: return "ESRCH";
	case ENOTTY: return "ENOTTY";
	case EBUSY: return "EBUSY";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	}
	snprintf(buf, sizeof(buf), "errno %d", e);
	return buf;
}

/* ioctl: 0 or the errno. */
/* The device, opened for reading and writing; exits if it cannot be. */
static int dev_open(void)
{
	int fd = open(DEV, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		die("open " DEV);
	return fd;
}

static int xioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? errno : 0;
}

static void expect(int got, int want, const char *label)
{
	check(got == want, label, "%s, expected %s", ename(got), ename(want));
}

/* ------------------------------------------------------------ netlink */

#ifndef NLA_OK
#define NLA_OK(nla, len) ((len) >= (int)sizeof(struct nlattr) && \
			  (nla)->nla_len >= sizeof(struct nlattr) && \
			  (nla)->nla_len <= (len))
#define NLA_NEXT(nla, attrlen) ((attrlen) -= NLA_ALIGN((nla)->nla_len), \
				(struct nlattr *)((char *)(nla) + NLA_ALIGN((nla)->nla_len)))
#endif

static int nl_fd = -1;
static uint16_t nl_family;
static uint32_t nl_seq;

struct nlreq {
	struct nlmsghdr n;
	struct genlmsghdr g;
	char buf[256];
};

static void nl_put(struct nlreq *r, uint16_t type, const void *data, uint16_t len)
{
	struct nlattr *a = (struct nlattr *)((char *)r + NLMSG_ALIGN(r->n.nlmsg_len));

	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	memcpy((char *)a + NLA_HDRLEN, data, len);
	r->n.nlmsg_len = NLMSG_ALIGN(r->n.nlmsg_len) + NLA_ALIGN(a->nla_len);
}

static void nl_init(struct nlreq *r, uint16_t family, uint8_t cmd, uint8_t version)
{
	memset(r, 0, sizeof(*r));
	r->n.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	r->n.nlmsg_type = family;
	r->n.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	r->n.nlmsg_seq = ++nl_seq;
	r->g.cmd = cmd;
	r->g.version = version;
}

static char nl_reply[1 << 17];

/*
 * Send @r; the reply's attributes (a genl message) are left in nl_reply.
 * Returns 0, or the errno of the kernel's NLMSG_ERROR.
 */
static int nl_talk(struct nlreq *r, struct nlattr **attrs, int *alen)
{
	bool got_reply = false;

	if (send(nl_fd, r, r->n.nlmsg_len, 0) < 0)
		die("netlink send");
	for (;;) {
		ssize_t n = recv(nl_fd, nl_reply, sizeof(nl_reply), 0);
		struct nlmsghdr *h = (struct nlmsghdr *)nl_reply;

		if (n < 0)
			die("netlink recv");
		for (; NLMSG_OK(h, n); h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(h);

				return -e->error;
			}
			if (attrs && !got_reply) {
				/* Copy aside: the ack comes in a later recv. */
				static char keep[sizeof(nl_reply)];
				int len = h->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN);

				memcpy(keep, (char *)NLMSG_DATA(h) + GENL_HDRLEN, len);
				*attrs = (struct nlattr *)keep;
				*alen = len;
				got_reply = true;
			}
		}
	}
}

static void nl_open(void)
{
	struct nlreq r;
	struct nlattr *a;
	int len;

	nl_fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (nl_fd < 0)
		die("netlink socket");
	nl_init(&r, GENL_ID_CTRL, CTRL_CMD_GETFAMILY, 1);
	nl_put(&r, CTRL_ATTR_FAMILY_NAME, TAPROOT_GENL_NAME, sizeof(TAPROOT_GENL_NAME));
	if (nl_talk(&r, &a, &len))
		die("resolve the taproot family");
	for (; NLA_OK(a, len); a = NLA_NEXT(a, len))
		if (a->nla_type == CTRL_ATTR_FAMILY_ID)
			nl_family = *(uint16_t *)((char *)a + NLA_HDRLEN);
	if (!nl_family) {
		errno = ENOENT;
		die("no family id");
	}
}

static void set_unwind_mem(uint32_t mib)
{
	struct nlreq r;
	int err;

	nl_init(&r, nl_family, TAPROOT_CMD_SET_CONFIG, TAPROOT_GENL_VERSION);
	nl_put(&r, TAPROOT_A_CFG_UNWIND_MEM, &mib, sizeof(mib));
	err = nl_talk(&r, NULL, NULL);
	if (err) {
		errno = err;
		die("SET_CONFIG UNWIND_MEM");
	}
}

struct ustats {
	uint64_t mem;
	uint32_t tables, procs;
	bool seen;
};

static struct ustats get_stats(void)
{
	struct ustats st = { 0 };
	struct nlattr *a;
	struct nlreq r;
	int len, err;

	nl_init(&r, nl_family, TAPROOT_CMD_GET_STATS, TAPROOT_GENL_VERSION);
	err = nl_talk(&r, &a, &len);
	if (err) {
		errno = err;
		die("GET_STATS");
	}
	for (; NLA_OK(a, len); a = NLA_NEXT(a, len)) {
		void *d = (char *)a + NLA_HDRLEN;

		switch (a->nla_type) {
		case TAPROOT_A_UNWIND_MEM_USED:
			memcpy(&st.mem, d, sizeof(st.mem));
			st.seen = true;
			break;
		case TAPROOT_A_UNWIND_TABLES:
			memcpy(&st.tables, d, sizeof(st.tables));
			break;
		case TAPROOT_A_UNWIND_PROCS:
			memcpy(&st.procs, d, sizeof(st.procs));
			break;
		}
	}
	return st;
}

/* ------------------------------------------------------------ tables */

/* A table of @rows rows; its arrays are malloc'ed and kept for the test. */
struct table {
	struct taproot_table_add a;
	uint32_t *pcs;
	uint16_t *rr;
	struct taproot_unwind_rule *rules;
};

static void table_make(struct table *t, uint32_t rows, uint8_t bid)
{
	uint32_t i;

	memset(t, 0, sizeof(*t));
	t->pcs = malloc(rows * sizeof(*t->pcs));
	t->rr = malloc(rows * sizeof(*t->rr));
	t->rules = calloc(4, sizeof(*t->rules));
	if (!t->pcs || !t->rr || !t->rules)
		die("malloc");
	for (i = 0; i < rows; i++) {
		t->pcs[i] = i * 4;
		t->rr[i] = i % 4;
	}
	t->rules[0].kind = TAPROOT_RULE_NONE;
	t->rules[1] = (struct taproot_unwind_rule){
		.kind = TAPROOT_RULE_SP, .cfa_off = 8, .ra_off = -8,
	};
	t->rules[2] = (struct taproot_unwind_rule){
		.kind = TAPROOT_RULE_FP, .rbp = TAPROOT_RBP_CFA, .cfa_off = 16,
		.ra_off = -8, .rbp_off = -16,
	};
	t->rules[3] = (struct taproot_unwind_rule){
		.kind = TAPROOT_RULE_PLT, .plt_thr = 11, .cfa_off = 8, .ra_off = -8,
	};
	t->a.pcs = (uintptr_t)t->pcs;
	t->a.row_rules = (uintptr_t)t->rr;
	t->a.rules = (uintptr_t)t->rules;
	t->a.base = 0x400000;
	t->a.nr_rows = rows;
	t->a.nr_rules = 4;
	t->a.build_id_len = 20;
	memset(t->a.build_id, bid, 20);
}

static void table_free(struct table *t)
{
	free(t->pcs);
	free(t->rr);
	free(t->rules);
}

/* TABLE_ADD of a copy of @t changed by @fn must fail with @want. */
static void add_fails(int fd, struct table *t, const char *label, int want)
{
	struct taproot_table_add a = t->a;

	expect(xioctl(fd, TAPROOT_IOC_TABLE_ADD, &a), want, label);
}

static void rule_fails(int fd, struct table *t, struct taproot_unwind_rule r, const char *label)
{
	struct taproot_unwind_rule keep = t->rules[1];

	t->rules[1] = r;
	add_fails(fd, t, label, EINVAL);
	t->rules[1] = keep;
}

static void table_cases(int fd, struct table *t)
{
	struct taproot_table_add a;
	struct taproot_unwind_rule sp = t->rules[1];
	void *hole;

	a = t->a, a.reserved = 1;
	expect(xioctl(fd, TAPROOT_IOC_TABLE_ADD, &a), EINVAL, "table: reserved set: EINVAL");
	a = t->a, a.nr_rows = 0;
	expect(xioctl(fd, TAPROOT_IOC_TABLE_ADD, &a), EINVAL, "table: 0 rows: EINVAL");
	a = t->a, a.nr_rows = TAPROOT_TABLE_ROWS_MAX + 1;
	expect(xioctl(fd, TAPROOT_IOC_TABLE_ADD, &a), EINVAL, "table: too many rows: EINVAL");
	a = t->a, a.nr_rows = UINT32_MAX;
	expect(xioctl(fd, TAPROOT_IOC_TABLE_ADD, &a), EINVAL, "table: 2^32-1 rows: EINVAL");
	a = t->a, a.nr_rules = 0;
	expect(xioctl(fd, TAPROOT_IOC_TABLE_ADD, &a), EINVAL, "table: 0 rules: EINVAL");
	a = t->a, a.nr_rules = TAPROOT_TABLE_RULES_MAX + 1;
	expect(xioctl(fd, TAPROOT_IOC_TABLE_ADD, &a), EINVAL, "table: too many rules: EINVAL");
	a = t->a, a.build_id_len = 0;
	expect(xioctl(fd, TAPROOT_IOC_TABLE_ADD, &a), EINVAL, "table: build id empty: EINVAL");
	a = t->a, a.build_id_len = TAPROOT_BUILD_ID_MAX + 1;
	expect(xioctl(fd, TAPROOT_IOC_TABLE_ADD, &a), EINVAL, "table: build id too long: EINVAL");
	a = t->a, a.build_id_len = 8;
	expect(xioctl(fd, TAPROOT_IOC_TABLE_ADD, &a), EINVAL,
	       "table: bytes past build_id_len not 0: EINVAL");

	t->pcs[5] = t->pcs[4];
	add_fails(fd, t, "table: pcs equal: EINVAL", EINVAL);
	t->pcs[5] = t->pcs[4] - 1;
	add_fails(fd, t, "table: pcs descending: EINVAL", EINVAL);
	t->pcs[5] = 5 * 4;
	t->pcs[t->a.nr_rows - 1] = 0;
	add_fails(fd, t, "table: last pc descending: EINVAL", EINVAL);
	t->pcs[t->a.nr_rows - 1] = (t->a.nr_rows - 1) * 4;
	t->rr[7] = 4;
	add_fails(fd, t, "table: row rule = nr_rules: EINVAL", EINVAL);
	t->rr[7] = UINT16_MAX;
	add_fails(fd, t, "table: row rule 65535: EINVAL", EINVAL);
	t->rr[7] = 7 % 4;
	a = t->a, a.base = UINT64_MAX - 10;
	expect(xioctl(fd, TAPROOT_IOC_TABLE_ADD, &a), EINVAL, "table: base + pc overflows: EINVAL");

	rule_fails(fd, t, (struct taproot_unwind_rule){ .kind = TAPROOT_RULE_NR },
		   "rule: unknown kind: EINVAL");
	rule_fails(fd, t, (struct taproot_unwind_rule){ .kind = TAPROOT_RULE_SP, .rbp = TAPROOT_RBP_NR },
		   "rule: unknown rbp: EINVAL");
	rule_fails(fd, t, (struct taproot_unwind_rule){ .kind = TAPROOT_RULE_PLT, .plt_thr = 16 },
		   "rule: plt_thr 16: EINVAL");
	rule_fails(fd, t, (struct taproot_unwind_rule){ .kind = TAPROOT_RULE_SP, .plt_thr = 3 },
		   "rule: plt_thr on SP: EINVAL");
	rule_fails(fd, t, (struct taproot_unwind_rule){ .kind = TAPROOT_RULE_SP, .reserved = 1 },
		   "rule: reserved set: EINVAL");
	rule_fails(fd, t, (struct taproot_unwind_rule){
			.kind = TAPROOT_RULE_SP, .cfa_off = TAPROOT_RULE_OFF_MAX + 1 },
		   "rule: cfa_off too big: EINVAL");
	rule_fails(fd, t, (struct taproot_unwind_rule){
			.kind = TAPROOT_RULE_FP, .ra_off = -TAPROOT_RULE_OFF_MAX - 1 },
		   "rule: ra_off too small: EINVAL");
	rule_fails(fd, t, (struct taproot_unwind_rule){
			.kind = TAPROOT_RULE_SP, .cfa_off = INT32_MIN },
		   "rule: cfa_off INT32_MIN: EINVAL");
	rule_fails(fd, t, (struct taproot_unwind_rule){
			.kind = TAPROOT_RULE_SP, .rbp = TAPROOT_RBP_SAME, .rbp_off = 8 },
		   "rule: rbp_off without RBP_CFA: EINVAL");
	rule_fails(fd, t, (struct taproot_unwind_rule){ .kind = TAPROOT_RULE_END, .cfa_off = 8 },
		   "rule: END with an offset: EINVAL");
	rule_fails(fd, t, (struct taproot_unwind_rule){ .kind = TAPROOT_RULE_SIGNAL, .rbp = 1 },
		   "rule: SIGNAL with rbp: EINVAL");
	t->rules[1] = sp;

	/* Bad pointers: the struct itself, then each array. */
	expect(xioctl(fd, TAPROOT_IOC_TABLE_ADD, (void *)16), EFAULT, "table: struct at 16: EFAULT");
	a = t->a, a.pcs = 0;
	expect(xioctl(fd, TAPROOT_IOC_TABLE_ADD, &a), EFAULT, "table: pcs NULL: EFAULT");
	a = t->a, a.rules = 0xffff880000000000ULL;
	expect(xioctl(fd, TAPROOT_IOC_TABLE_ADD, &a), EFAULT, "table: rules kernel address: EFAULT");
	/* row_rules run into an unmapped page. */
	hole = mmap(NULL, 2 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (hole == MAP_FAILED)
		die("mmap");
	munmap((char *)hole + 4096, 4096);
	a = t->a, a.row_rules = (uintptr_t)hole + 4096 - 64;
	expect(xioctl(fd, TAPROOT_IOC_TABLE_ADD, &a), EFAULT,
	       "table: row_rules into an unmapped page: EFAULT");
	munmap(hole, 4096);
}

/* ------------------------------------------------------------ processes */

/*
 * A child that waits for orders on a pipe: 'u' munmap+mmap, 'f' MAP_FIXED,
 * 'r' read-only then replaced, 'm' mremap, 'n' new mapping, 'a' anonymous
 * data churn, 'e' exec, 'q'.
 */
struct child {
	pid_t pid;
	int cmd, ack;		/* our ends */
};

/* A heap's or a JIT's life in anonymous memory: reserve, commit, free. */
static bool anon_churn(void)
{
	char *r = mmap(NULL, 1 << 20, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		       -1, 0);

	if (r == MAP_FAILED)
		return false;
	if (mmap(r, 65536, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED | MAP_ANONYMOUS, -1,
		 0) != r || mprotect(r + 65536, 4096, PROT_READ | PROT_WRITE))
		return false;
	r[0] = 1;
	return !munmap(r + 4096, 4096) && !munmap(r, 1 << 20);
}

static void child_main(int cmd, int ack)
{
	void *lib, *lib2, *to;
	int fa = open("/bin/true", O_RDONLY), fb = open("/bin/sh", O_RDONLY);
	char c;

	if (fa < 0 || fb < 0)
		_exit(2);
	lib = mmap(NULL, 8192, PROT_READ | PROT_EXEC, MAP_PRIVATE, fa, 0);
	if (lib == MAP_FAILED)
		_exit(3);
	if (write(ack, "r", 1) != 1)
		_exit(4);
	while (read(cmd, &c, 1) == 1) {
		switch (c) {
		case 'u':	/* another file at the same address */
			munmap(lib, 8192);
			lib2 = mmap(lib, 8192, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED,
				    fb, 0);
			c = lib2 == lib ? 'u' : 'x';
			break;
		case 'f':	/* MAP_FIXED over the mapping, no munmap */
			lib2 = mmap(lib, 8192, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED,
				    fa, 0);
			c = lib2 == lib ? 'f' : 'x';
			break;
		case 'r':	/* no longer code, then another file there */
			if (mprotect(lib, 8192, PROT_READ) || munmap(lib, 8192))
				c = 'x';
			lib2 = mmap(lib, 8192, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED,
				    fa, 0);
			c = c == 'r' && lib2 == lib ? 'r' : 'x';
			break;
		case 'm':	/* the code moved, over a reservation */
			to = mmap(NULL, 8192, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			lib2 = to == MAP_FAILED ? MAP_FAILED :
				mremap(lib, 8192, 8192, MREMAP_MAYMOVE | MREMAP_FIXED, to);
			c = lib2 == to ? 'm' : 'x';
			if (lib2 == to)
				lib = lib2;
			break;
		case 'n':	/* a new mapping elsewhere: nothing removed */
			lib2 = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			c = lib2 != MAP_FAILED ? 'n' : 'x';
			break;
		case 'a':
			c = anon_churn() ? 'a' : 'x';
			break;
		case 'e':	/* the ack's end closes on exec */
			execl("/bin/sleep", "sleep", "30", (char *)NULL);
			_exit(5);
		default:
			_exit(0);
		}
		if (write(ack, &c, 1) != 1)
			_exit(6);
	}
	_exit(0);
}

static struct child child_start(void)
{
	int a[2], b[2];
	struct child ch;
	char c;

	if (pipe2(a, O_CLOEXEC) || pipe2(b, O_CLOEXEC))
		die("pipe");
	ch.pid = fork();
	if (ch.pid < 0)
		die("fork");
	if (!ch.pid) {
		close(a[1]);
		close(b[0]);
		child_main(a[0], b[1]);
	}
	close(a[0]);
	close(b[1]);
	ch.cmd = a[1];
	ch.ack = b[0];
	if (read(ch.ack, &c, 1) != 1 || c != 'r')
		die("child start");
	return ch;
}

/* Order @c; true when the child did it. */
static bool child_do(struct child *ch, char c)
{
	char r = 0;

	if (write(ch->cmd, &c, 1) != 1)
		return false;
	if (c == 'e')	/* exec'd: the ack's write end is gone */
		return read(ch->ack, &r, 1) == 0;
	return read(ch->ack, &r, 1) == 1 && r == c;
}

static void child_stop(struct child *ch)
{
	kill(ch->pid, SIGKILL);
	waitpid(ch->pid, NULL, 0);
	close(ch->cmd);
	close(ch->ack);
}

/* What moves a process's generation of mappings, as the module logs it. */
enum gen_kind { GEN_UNKNOWN, GEN_CODE, GEN_REMOVALS, GEN_WRITE_LOCKS };
static const char *const gen_names[] = {
	[GEN_UNKNOWN] = "not logged", [GEN_CODE] = "removals of code or files",
	[GEN_REMOVALS] = "every removal", [GEN_WRITE_LOCKS] = "every mmap write lock",
};

/* The last "mappings' generation" line of the kernel log (made at the store's first ioctl). */
static enum gen_kind gen_kind(void)
{
	static const char key[] = "taproot: mappings' generation: ";
	enum gen_kind g = GEN_UNKNOWN;
	char rec[8192];
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return g;
	while ((n = read(fd, rec, sizeof(rec) - 1)) > 0 || (n < 0 && errno == EPIPE)) {
		const char *at;

		if (n <= 0)
			continue;	/* records overwritten while read */
		rec[n] = 0;
		at = strstr(rec, key);
		if (!at)
			continue;
		at += sizeof(key) - 1;
		for (enum gen_kind k = GEN_CODE; k <= GEN_WRITE_LOCKS; k++)
			if (!strncmp(at, gen_names[k], strlen(gen_names[k])))
				g = k;
	}
	close(fd);
	return g;
}

static int token(int fd, uint32_t pid, uint64_t *tok)
{
	struct taproot_proc_token t = { .pid = pid };
	int e = xioctl(fd, TAPROOT_IOC_PROC_TOKEN, &t);

	*tok = t.token;
	return e;
}

static int maps_set(int fd, uint32_t pid, uint64_t tok, const struct taproot_proc_map *m,
		    uint32_t nr)
{
	struct taproot_maps_set s = {
		.pid = pid, .nr = nr, .maps = (uintptr_t)m, .token = tok,
	};

	return xioctl(fd, TAPROOT_IOC_MAPS_SET, &s);
}

/*
 * Token and set of @pid, retried on ESTALE: on kernels that count changes
 * by a hash of the mm, another process's change may count for this one.
 */
static int set_retry(int fd, uint32_t pid, const struct taproot_proc_map *m, uint32_t nr)
{
	uint64_t tok;
	int e = 0, tries;

	for (tries = 0; tries < 5; tries++) {
		e = token(fd, pid, &tok);
		if (!e)
			e = maps_set(fd, pid, tok, m, nr);
		if (e != ESTALE)
			break;
	}
	return e;
}

static void *thread_fn(void *arg)
{
	*(pid_t *)arg = syscall(SYS_gettid);
	pause();
	return NULL;
}

/*
 * A token then a change by the child then MAPS_SET: @want. A spurious
 * ESTALE (another mm's change counted with this one's on kernels that
 * count by hash) is retried for the control cases.
 */
static void stale_case(int fd, struct child *ch, char what, const struct taproot_proc_map *m,
		       int want, const char *label)
{
	uint64_t tok;
	int e = 0, tries;

	for (tries = 0; tries < 5; tries++) {
		e = token(fd, ch->pid, &tok);
		if (e)
			break;
		if (what && !child_do(ch, what)) {
			check(false, label, "the child could not do '%c'", what);
			return;
		}
		e = maps_set(fd, ch->pid, tok, m, 1);
		if (e != ESTALE || want != 0)
			break;
	}
	if (want < 0)	/* either: the kernel may count any change */
		check(e == 0 || e == ESTALE, label, "%s", ename(e));
	else
		expect(e, want, label);
}

/*
 * 64 KiB of executable memory of this process (and of its children,
 * forked after), then a page that is not: mappings are set only where
 * the process has code (MAPS_SET checks).
 */
static uint64_t xcode;
/* What a layout of this process's "interpreter" points at. */
static int py_key;

/* PYTHON_SET of @pid: 0 or the errno. */
static int python_set(int fd, uint32_t pid, uint64_t tok, const void *l, uint32_t forget)
{
	struct taproot_python_set s = { .pid = pid, .forget = forget, .token = tok };

	if (l)
		s.layout = *(const struct taproot_python_layout *)l;
	return xioctl(fd, TAPROOT_IOC_PYTHON_SET, &s);
}

/* JVM_SET of @pid: 0 or the errno. */
static int jvm_set(int fd, uint32_t pid, uint64_t tok, const void *l, uint32_t forget)
{
	struct taproot_jvm_set s = { .pid = pid, .forget = forget, .token = tok };

	if (l)
		s.layout = *(const struct taproot_jvm_layout *)l;
	return xioctl(fd, TAPROOT_IOC_JVM_SET, &s);
}

/* A runtime's layout upload: PYTHON_SET or JVM_SET, alike but for the layout. */
struct runtime {
	const char *name;
	unsigned long cmd;
	int (*set)(int fd, uint32_t pid, uint64_t tok, const void *l, uint32_t forget);
};

static const struct runtime rt_python = { "python", TAPROOT_IOC_PYTHON_SET, python_set };
static const struct runtime rt_jvm = { "jvm", TAPROOT_IOC_JVM_SET, jvm_set };

/* "@rt's name: @what", for a case's label (valid until the next call). */
static const char *rt_label(const struct runtime *rt, const char *what)
{
	static char buf[256];

	snprintf(buf, sizeof(buf), "%s: %s", rt->name, what);
	return buf;
}

/* Token and set of @pid's layout @l, retried on ESTALE as set_retry(). */
static int rt_retry(int fd, const struct runtime *rt, uint32_t pid, const void *l)
{
	uint64_t tok;
	int e = ESTALE;

	for (int i = 0; i < 50 && e == ESTALE; i++)
		if (!(e = token(fd, pid, &tok)))
			e = rt->set(fd, pid, tok, l, 0);
	return e;
}

/* Give up CAP_SYS_ADMIN and CAP_PERFMON (every effective capability). */
static void drop_caps(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		die("capget");
	d[0].effective = d[1].effective = 0;
	if (syscall(SYS_capset, &h, d))
		die("capset");
}

/*
 * What PYTHON_SET and JVM_SET share, with @ok a valid layout of @rt and
 * @tok self's token: forget past 1, pid 0 EINVAL; the struct at 8 EFAULT;
 * no such pid ESRCH; a wrong token ESTALE; a process without mappings
 * ENOENT; set, kept by a MAPS_SET, forgotten; and a holder of the device
 * that dropped its capabilities after the open refused (EPERM), while
 * its MAPS_SET still goes (a child, which answers by its exit status:
 * the cases are counted here).
 */
static void rt_common_cases(int fd, const struct taproot_proc_map *m, const struct runtime *rt,
			    const void *ok, uint64_t tok)
{
	pid_t self = getpid();
	struct child ch;
	int st;

	expect(rt->set(fd, self, tok, ok, 2), EINVAL, rt_label(rt, "forget 2: EINVAL"));
	expect(rt->set(fd, 0, tok, ok, 0), EINVAL, rt_label(rt, "pid 0: EINVAL"));
	expect(xioctl(fd, rt->cmd, (void *)8), EFAULT, rt_label(rt, "struct at 8: EFAULT"));
	expect(rt->set(fd, 0x7fffffff, tok, ok, 0), ESRCH, rt_label(rt, "no such pid: ESRCH"));
	expect(rt->set(fd, self, tok ^ 1, ok, 0), ESTALE, rt_label(rt, "wrong token: ESTALE"));
	ch = child_start();
	expect(rt_retry(fd, rt, ch.pid, ok), ENOENT,
	       rt_label(rt, "a process without mappings: ENOENT"));
	child_stop(&ch);
	expect(rt_retry(fd, rt, self, ok), 0, rt_label(rt, "valid layout of self"));
	expect(set_retry(fd, self, m, 2), 0, rt_label(rt, "mappings set again over it"));
	expect(rt->set(fd, self, 0, NULL, 1), 0, rt_label(rt, "forget"));

	if (!fork()) {
		drop_caps();
		_exit((rt_retry(fd, rt, self, ok) == EPERM ? 0 : 1) |
		      (set_retry(fd, self, m, 2) == 0 ? 0 : 2));
	}
	if (wait(&st) < 0 || !WIFEXITED(st))
		die("the capability-less child");
	check(!(WEXITSTATUS(st) & 1), rt_label(rt, "a holder that dropped its capabilities: EPERM"),
	      "not refused");
	check(!(WEXITSTATUS(st) & 2), rt_label(rt, "... whose mappings uploads still go"),
	      "MAPS_SET refused");
}

/* PYTHON_SET (self's mappings set): every malformed layout EINVAL; then the common cases. */
static void python_cases(int fd, const struct taproot_proc_map *m)
{
	const struct taproot_python_layout ok = {
		.tss_key = (uintptr_t)&py_key, .code_type = xcode, .tsd_off = 0x318,
		.tstate_cframe = 56, .tstate_frame = 8, .frame_code = 32, .frame_back = 48,
		.frame_pos = 56, .entry_off = 68, .pos_kind = TAPROOT_PY_POS_PTR,
		.entry_kind = TAPROOT_PY_ENTRY_FLAG, .code_argcount = 56, .code_kwonly = 64,
		.code_flags = 48, .code_firstlineno = 72,
	};
	struct taproot_python_layout l;
	pid_t self = getpid();
	uint64_t tok;

	expect(token(fd, self, &tok), 0, "python: token");
#define BAD(field, value, label)						\
	do {									\
		l = ok;								\
		l.field = value;						\
		expect(python_set(fd, self, tok, &l, 0), EINVAL, "python: " label ": EINVAL"); \
	} while (0)
	BAD(frame_back, TAPROOT_PY_READ_MAX - 7, "frame_back past the read");
	BAD(frame_code, 0xffff, "frame_code past the read");
	BAD(frame_pos, TAPROOT_PY_READ_MAX - 4, "a pointer position past the read");
	BAD(code_firstlineno, TAPROOT_PY_READ_MAX - 3, "code_firstlineno past the read");
	BAD(tstate_frame, TAPROOT_PY_READ_MAX, "tstate_frame past the read");
	BAD(entry_off, TAPROOT_PY_READ_MAX, "entry_off past the read");
	BAD(pos_kind, TAPROOT_PY_POS_NR, "unknown pos_kind");
	BAD(entry_kind, TAPROOT_PY_ENTRY_NR, "unknown entry_kind");
	BAD(reserved[1], 1, "reserved set");
	BAD(tsd_off, 1U << 20, "tsd_off beyond the TCB");
	l = ok;
	l.entry_kind = TAPROOT_PY_ENTRY_ALL;
	expect(python_set(fd, self, tok, &l, 0), EINVAL, "python: ENTRY_ALL with an entry_off: EINVAL");
#undef BAD
	rt_common_cases(fd, m, &rt_python, &ok, tok);
}

/* JVM_SET (self's mappings set): every malformed layout EINVAL; then the common cases. */
static void jvm_cases(int fd, const struct taproot_proc_map *m)
{
	const struct taproot_jvm_layout ok = {
		.heap = { { .low = xcode, .high = xcode + 0x10000, .segmap = xcode,
			    .log2_segment = 6 } },
		.nr_heaps = 1, .block_size = 16, .blob_name = 64, .blob_code_begin = 8,
		.blob_frame_size = 88, .blob_frame_complete = 80, .nm_compile_id = 308,
		.nm_deopt_handler = 128, .nm_orig_pc = 304, .method_const = 8, .const_size = 56,
		.const_code_size = 34,
	};
	struct taproot_jvm_layout l;
	pid_t self = getpid();
	uint64_t tok;

	expect(token(fd, self, &tok), 0, "jvm: token");
#define BAD(field, value, label)						\
	do {									\
		l = ok;								\
		l.field = value;						\
		expect(jvm_set(fd, self, tok, &l, 0), EINVAL, "jvm: " label ": EINVAL"); \
	} while (0)
	BAD(nr_heaps, 0, "no heap");
	BAD(nr_heaps, TAPROOT_JVM_HEAPS_MAX + 1, "too many heaps");
	BAD(heap[0].high, xcode, "an empty heap");
	BAD(heap[0].segmap, 0, "no segment map");
	BAD(heap[0].log2_segment, 21, "segments of 2 MiB");
	BAD(heap[0].reserved, 1, "a heap's reserved set");
	BAD(nm_compile_id, TAPROOT_JVM_READ_MAX - 3, "compile_id past the read");
	BAD(blob_code_begin, 0xffff, "code_begin past the read");
	BAD(method_const, TAPROOT_JVM_FIELD_MAX - 7, "method_const past its bound");
	BAD(const_size, TAPROOT_JVM_FIELD_MAX + 1, "const_size past its bound");
	BAD(reserved[2], 1, "reserved set");
	l = ok;
	l.nr_heaps = 2;
	l.heap[1] = ok.heap[0];
	l.heap[1].low += 1ULL << 31;
	l.heap[1].high += 1ULL << 31;
	expect(jvm_set(fd, self, tok, &l, 0), EINVAL, "jvm: heaps 2 GiB apart: EINVAL");
#undef BAD
	rt_common_cases(fd, m, &rt_jvm, &ok, tok);
}

static void xcode_map(void)
{
	void *p = mmap(NULL, 0x11000, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED || mprotect((char *)p + 0x10000, 0x1000, PROT_NONE))
		die("mmap executable memory");
	xcode = (uint64_t)(uintptr_t)p;
}

static void proc_cases(int fd, uint32_t tid)
{
	struct taproot_proc_map m[4] = {
		{ .start = xcode + 0x1000, .end = xcode + 0x2000, .table_id = tid },
		{ .start = xcode + 0x2000, .end = xcode + 0x3000, .flags = TAPROOT_MAP_F_FP },
		{ .start = xcode + 0x5000, .end = xcode + 0x9000, .bias = 0x1000, .table_id = tid },
	};
	struct taproot_proc_map bad[2];
	struct taproot_proc_token pt;
	struct taproot_maps_set ms;
	pid_t self = getpid(), thr = 0;
	enum gen_kind gen;
	struct ustats st;
	struct child ch;
	pthread_t th;
	uint64_t tok;
	int e;

	/* PROC_TOKEN */
	pt = (struct taproot_proc_token){ .pid = self, .reserved = 1 };
	expect(xioctl(fd, TAPROOT_IOC_PROC_TOKEN, &pt), EINVAL, "token: reserved set: EINVAL");
	pt = (struct taproot_proc_token){ .pid = 0 };
	expect(xioctl(fd, TAPROOT_IOC_PROC_TOKEN, &pt), EINVAL, "token: pid 0: EINVAL");
	expect(token(fd, 0x7fffffff, &tok), ESRCH, "token: no such pid: ESRCH");
	expect(token(fd, UINT32_MAX, &tok), ESRCH, "token: pid 2^32-1: ESRCH");
	expect(token(fd, 2, &tok), EINVAL, "token: kthreadd: EINVAL");
	expect(xioctl(fd, TAPROOT_IOC_PROC_TOKEN, (void *)8), EFAULT, "token: struct at 8: EFAULT");
	if (pthread_create(&th, NULL, thread_fn, &thr))
		die("pthread_create");
	while (!__atomic_load_n(&thr, __ATOMIC_SEQ_CST))
		usleep(1000);
	expect(token(fd, thr, &tok), ESRCH, "token: a thread id, not a process: ESRCH");
	e = token(fd, self, &tok);
	expect(e, 0, "token: self");
	if (e == EOPNOTSUPP)
		return;

	/* MAPS_SET, malformed */
	ms = (struct taproot_maps_set){ .pid = self, .nr = TAPROOT_MAPS_MAX + 1,
					.maps = (uintptr_t)m, .token = tok };
	expect(xioctl(fd, TAPROOT_IOC_MAPS_SET, &ms), EINVAL, "maps: nr too big: EINVAL");
	ms.nr = 1, ms.pid = 0;
	expect(xioctl(fd, TAPROOT_IOC_MAPS_SET, &ms), EINVAL, "maps: pid 0: EINVAL");
	expect(xioctl(fd, TAPROOT_IOC_MAPS_SET, (void *)8), EFAULT, "maps: struct at 8: EFAULT");
	expect(maps_set(fd, self, tok, (void *)8, 2), EFAULT, "maps: array at 8: EFAULT");
	bad[0] = m[2], bad[1] = m[0];
	expect(maps_set(fd, self, tok, bad, 2), EINVAL, "maps: not sorted: EINVAL");
	bad[0] = m[0], bad[1] = m[0], bad[1].start = xcode + 0x1800, bad[1].end = xcode + 0x2800;
	expect(maps_set(fd, self, tok, bad, 2), EINVAL, "maps: overlapping: EINVAL");
	bad[0] = m[0], bad[0].end = bad[0].start;
	expect(maps_set(fd, self, tok, bad, 1), EINVAL, "maps: start == end: EINVAL");
	bad[0] = m[0], bad[0].flags = 2;
	expect(maps_set(fd, self, tok, bad, 1), EINVAL, "maps: unknown flag: EINVAL");
	bad[0] = m[1], bad[0].table_id = tid;
	expect(maps_set(fd, self, tok, bad, 1), EINVAL, "maps: FP with a table: EINVAL");
	bad[0] = m[0], bad[0].table_id = 0;
	expect(maps_set(fd, self, tok, bad, 1), EINVAL, "maps: no table, no FP: EINVAL");
	bad[0] = m[0], bad[0].table_id = tid + 1000;
	expect(maps_set(fd, self, tok, bad, 1), ENOENT, "maps: unknown table: ENOENT");
	expect(maps_set(fd, self, tok ^ 1, m, 3), ESTALE, "maps: wrong token: ESTALE");
	bad[0] = m[1], bad[0].end = xcode + 0x11000;
	expect(set_retry(fd, self, bad, 1), ESTALE, "maps: past its executable memory: ESTALE");
	bad[0] = m[1], bad[0].start = 0x1000, bad[0].end = 0x2000;
	expect(set_retry(fd, self, bad, 1), ESTALE, "maps: where it has nothing mapped: ESTALE");
	expect(maps_set(fd, 0x7fffffff, tok, m, 3), ESRCH, "maps: no such pid: ESRCH");

	e = set_retry(fd, self, m, 3);
	expect(e, 0, "maps: valid set of self");
	st = get_stats();
	check(st.procs == 1, "stats: one process", "procs %u", st.procs);
	e = set_retry(fd, self, m, 2);
	expect(e, 0, "maps: replaced");
	st = get_stats();
	check(st.procs == 1, "stats: still one process", "procs %u", st.procs);
	python_cases(fd, m);
	jvm_cases(fd, m);

	/* Changes between the token and the set, by the generation logged. */
	gen = gen_kind();
	check(gen != GEN_UNKNOWN, "the generation of mappings is logged", "no such line in /dev/kmsg");
	printf("# mappings' generation: %s\n", gen_names[gen]);
	ch = child_start();
	stale_case(fd, &ch, 0, m, 0, "child: no change: set");
	stale_case(fd, &ch, 'n', m, gen == GEN_WRITE_LOCKS ? -1 : 0,
		   "child: a new mapping elsewhere: set (or ESTALE: write locks counted)");
	stale_case(fd, &ch, 'a', m, gen == GEN_CODE ? 0 : -1,
		   "child: anonymous data mapped, replaced, unmapped: set "
		   "(or ESTALE: more than code counted)");
	stale_case(fd, &ch, 'u', m, ESTALE, "child: munmap+mmap of another file there: ESTALE");
	stale_case(fd, &ch, 'f', m, ESTALE, "child: MAP_FIXED over the mapping: ESTALE");
	stale_case(fd, &ch, 'r', m, ESTALE,
		   "child: made read-only, unmapped, another mapping there: ESTALE");
	stale_case(fd, &ch, 'm', m, ESTALE, "child: mremap of the mapping: ESTALE");
	stale_case(fd, &ch, 'e', m, ESTALE, "child: exec: ESTALE");
	st = get_stats();
	check(st.procs == 2, "stats: self and child", "procs %u", st.procs);
	expect(maps_set(fd, ch.pid, 0, NULL, 0), 0, "maps: nr 0 forgets the child");
	st = get_stats();
	check(st.procs == 1, "stats: the child forgotten", "procs %u", st.procs);
	/* A process that is gone is forgotten by the number it was set with. */
	child_stop(&ch);
	ch = child_start();
	stale_case(fd, &ch, 0, m, 0, "child 2: set");
	child_stop(&ch);
	expect(maps_set(fd, ch.pid, 0, NULL, 0), 0, "maps: nr 0 forgets a dead child");
	st = get_stats();
	check(st.procs == 1, "stats: the dead child forgotten", "procs %u", st.procs);

	/* A table deleted while a mapping uses it stays until that goes. */
	expect(xioctl(fd, TAPROOT_IOC_TABLE_DEL, &tid), 0, "table del while mapped");
	st = get_stats();
	check(st.tables == 0, "stats: deleted table not counted", "tables %u", st.tables);
	e = token(fd, self, &tok);
	expect(maps_set(fd, self, tok, m, 1), ENOENT, "maps: deleted table: ENOENT");
	expect(xioctl(fd, TAPROOT_IOC_TABLE_DEL, &tid), ENOENT, "table del twice: ENOENT");
	expect(maps_set(fd, self, 0, NULL, 0), 0, "maps: nr 0 forgets self");
}

/* Upload a table of @rows rows with build id byte @bid: 0 or the errno. */
static int upload(int fd, uint32_t rows, uint8_t bid, uint32_t *id)
{
	struct table t;
	int e;

	table_make(&t, rows, bid);
	e = xioctl(fd, TAPROOT_IOC_TABLE_ADD, &t.a);
	*id = t.a.table_id;
	table_free(&t);
	return e;
}

/* Lines of /proc/vmallocinfo allocated by the upload code. */
static int vmalloc_lines(void)
{
	FILE *f = fopen("/proc/vmallocinfo", "r");
	char line[512];
	int n = 0;

	if (!f)
		die("/proc/vmallocinfo");
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "tap_utab"))
			n++;
	fclose(f);
	return n;
}

/* The stats once mem is @mem (what call_rcu() frees uncharged), or after 5 s. */
static struct ustats settled_stats(uint64_t mem)
{
	struct ustats st = get_stats();

	for (int i = 0; i < 50 && st.mem != mem; i++) {
		usleep(100000);
		st = get_stats();
	}
	return st;
}

/* Poll the stats until nothing is held (release frees synchronously). */
static void expect_freed(const char *label)
{
	struct ustats st;
	int i, v = 0;

	for (i = 0; i < 50; i++) {
		st = get_stats();
		v = vmalloc_lines();
		if (!st.mem && !st.tables && !st.procs && !v)
			break;
		usleep(100000);
	}
	check(!st.mem && !st.tables && !st.procs, label,
	      "mem %llu tables %u procs %u", (unsigned long long)st.mem, st.tables, st.procs);
	check(!v, "vmallocinfo: nothing of the uploads", "%d lines name tap_utab", v);
}

/* Big table + self mappings, then wait to be killed. */
static __attribute__((noreturn)) void hold(void)
{
	struct taproot_proc_map m = { .start = xcode, .end = xcode + 0x1000 };
	int fd = dev_open();
	uint64_t tok;
	uint32_t id;

	if (upload(fd, 1U << 20, 0x55, &id))
		die("upload");
	m.table_id = id;
	if (token(fd, getpid(), &tok) || maps_set(fd, getpid(), tok, &m, 1))
		die("maps");
	printf("holding\n");
	fflush(stdout);
	for (;;)
		pause();
}


/* ------------------------------------------------------------ hostile */

static void nl_simple(uint8_t cmd, const char *what)
{
	struct nlreq r;
	int err;

	nl_init(&r, nl_family, cmd, TAPROOT_GENL_VERSION);
	err = nl_talk(&r, NULL, NULL);
	if (err) {
		errno = err;
		die(what);
	}
}

/* Samples of @pid alone at 999 Hz, configuration flags @flags. */
static void session_config(uint32_t pid, uint32_t flags)
{
	uint32_t freq = 999, events = TAPROOT_EV_SAMPLE;
	struct nlattr *nest;
	struct nlreq r;
	int err;

	nl_init(&r, nl_family, TAPROOT_CMD_SET_CONFIG, TAPROOT_GENL_VERSION);
	nl_put(&r, TAPROOT_A_CFG_FLAGS, &flags, sizeof(flags));
	nl_put(&r, TAPROOT_A_CFG_FREQ_HZ, &freq, sizeof(freq));
	nl_put(&r, TAPROOT_A_CFG_EVENTS, &events, sizeof(events));
	nest = (struct nlattr *)((char *)&r + NLMSG_ALIGN(r.n.nlmsg_len));
	nl_put(&r, TAPROOT_A_CFG_TGIDS | NLA_F_NESTED, NULL, 0);
	nl_put(&r, TAPROOT_A_CFG_TGID, &pid, sizeof(pid));
	nest->nla_len = (uint16_t)((char *)&r + r.n.nlmsg_len - (char *)nest);
	err = nl_talk(&r, NULL, NULL);
	if (err) {
		errno = err;
		die("SET_CONFIG of the session");
	}
}

/* The executable mapping of @pid's program (its first), from its maps. */
static void code_of(uint32_t pid, uint64_t *start, uint64_t *end)
{
	char path[64], exe[512], line[1024], file[512];
	unsigned long long a, b;
	ssize_t n;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/exe", pid);
	n = readlink(path, exe, sizeof(exe) - 1);
	if (n <= 0)
		die("readlink of the target's exe");
	exe[n] = 0;
	snprintf(path, sizeof(path), "/proc/%u/maps", pid);
	f = fopen(path, "r");
	if (!f)
		die("the target's maps");
	*start = *end = 0;
	while (!*end && fgets(line, sizeof(line), f)) {
		char perms[8];

		file[0] = 0;
		if (sscanf(line, "%llx-%llx %7s %*s %*s %*s %511s", &a, &b, perms, file) >= 3 &&
		    perms[2] == 'x' && !strcmp(file, exe))
			*start = a, *end = b;
	}
	fclose(f);
	if (!*end) {
		errno = ENOENT;
		die("no executable mapping of the target's program");
	}
}

struct ring {
	struct taproot_ring_consumer *cons;
	const struct taproot_ring_producer *prod;
	const uint8_t *data;
	uint64_t d;
};

/* Ring @cpu as a reader maps it (uapi "The rings"); false if not possible. */
static bool ring_map(int fd, unsigned int cpu, struct ring *r)
{
	long P = sysconf(_SC_PAGESIZE);
	off_t off = (off_t)TAPROOT_MMAP_OFFSET(cpu);
	const struct taproot_ring_producer *prod;
	uint8_t *win;

	r->cons = mmap(NULL, P, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off);
	if (r->cons == MAP_FAILED)
		return false;
	prod = mmap(NULL, P, PROT_READ, MAP_SHARED, fd, off + P);
	if (prod == MAP_FAILED)
		die("mmap a ring's producer page");
	r->d = prod->data_size;
	munmap((void *)prod, P);
	win = mmap(NULL, P + 2 * r->d, PROT_READ, MAP_SHARED, fd, off + P);
	if (win == MAP_FAILED)
		die("mmap a ring's data");
	r->prod = (const void *)win;
	r->data = win + P;
	return true;
}

struct told {
	uint64_t start, end, value;
	unsigned long samples, walked, pcs, strays, values, bytes;
	uint64_t stray;
};

/* User pcs @pcs[0..@nr) of the target: the leaf's from its registers, the rest its code. */
static void told_pcs(struct told *t, const uint64_t *pcs, unsigned int nr)
{
	t->walked += nr > 1;
	for (unsigned int i = 0; i < nr; i++) {
		t->pcs++;
		t->values += pcs[i] == t->value;
		if (i && (pcs[i] <= t->start || pcs[i] > t->end)) {
			t->strays++;
			t->stray = pcs[i];
		}
	}
}

/* The records of ring @r since its tail, about process @pid, into @t. */
static void ring_read(struct ring *r, uint32_t pid, struct told *t)
{
	uint64_t head = __atomic_load_n(&r->prod->data_head, __ATOMIC_ACQUIRE);
	uint64_t pos = r->cons->data_tail;

	while (pos < head) {
		const struct taproot_rec_header *h = (const void *)(r->data + (pos & (r->d - 1)));
		uint64_t pcs[TAPROOT_UNWIND_FRAMES_MAX];

		if (h->size < sizeof(*h) || h->size % 8 || h->size > head - pos)
			die("a record of impossible size");
		if (h->type == TAPROOT_REC_SAMPLE && h->size >= sizeof(struct taproot_rec_sample)) {
			const struct taproot_rec_sample *s = (const void *)h;
			size_t at = sizeof(*s) + (size_t)s->kstack_nr * 8;
			unsigned int nr = s->hdr.flags & TAPROOT_SAMPLE_F_UPCS ? s->upc_nr : 0;

			if (s->pid == pid && at + nr * 8 + s->ustack_len <= h->size) {
				t->samples++;
				t->bytes += s->ustack_len;
				memcpy(pcs, (const uint8_t *)h + at, nr * 8);
				told_pcs(t, pcs, nr);
			}
		} else if (h->type == TAPROOT_REC_STACK &&
			   h->size >= sizeof(struct taproot_rec_stack)) {
			const struct taproot_rec_stack *k = (const void *)h;
			size_t at = sizeof(*k) + (size_t)k->kstack_nr * 8;

			if (k->pid == pid && at + k->upc_nr * 8 <= h->size) {
				memcpy(pcs, (const uint8_t *)h + at, k->upc_nr * 8);
				told_pcs(t, pcs, k->upc_nr);
			}
		} else if (h->type == TAPROOT_REC_SAMPLE_REF &&
			   h->size >= sizeof(struct taproot_rec_sample_ref)) {
			/* of a STACK record counted above */
			t->samples += ((const struct taproot_rec_sample_ref *)h)->pid == pid;
		}
		pos += h->size;
	}
	__atomic_store_n(&r->cons->data_tail, pos, __ATOMIC_RELEASE);
}

/* Every ring of @fd mapped into @rings (room for 1024); how many. */
static unsigned int rings_map(int fd, struct ring *rings)
{
	unsigned int nr = 0;

	for (unsigned int cpu = 0; cpu < 1024 && nr < 1024; cpu++)
		if (ring_map(fd, cpu, &rings[nr]))
			nr++;
	if (!nr)
		die("no ring to read");
	return nr;
}

/* A session of @pid's samples: START, @secs of reading @rings into @t, STOP. */
static void sample_for(struct ring *rings, unsigned int nr, uint32_t pid, unsigned int secs,
		       struct told *t)
{
	struct timespec end, now;

	nl_simple(TAPROOT_CMD_START, "START");
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += secs;
	do {
		usleep(20000);
		for (unsigned int i = 0; i < nr; i++)
			ring_read(&rings[i], pid, t);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (now.tv_sec < end.tv_sec || (now.tv_sec == end.tv_sec && now.tv_nsec < end.tv_nsec));
	nl_simple(TAPROOT_CMD_STOP, "STOP");
	for (unsigned int i = 0; i < nr; i++)
		ring_read(&rings[i], pid, t);
}

/*
 * --chain: TARGET's mapping set first, so that the PIDs' come before it
 * in its chain (a set goes to the head), then the PIDs'; a process gone
 * or refused (ENOSPC: a chain full) is counted out, not fatal.
 */
static int chain(int argc, char **argv)
{
	static struct ring rings[1024];
	unsigned int secs = argc > 2 ? (unsigned int)atoi(argv[2]) : 0, nr, set = 0;
	uint32_t target = argc > 3 ? (uint32_t)strtoul(argv[3], NULL, 0) : 0;
	struct told t = { 0 };
	char line[16];
	int fd;

	if (argc < 4 || !secs || !target) {
		fprintf(stderr, "usage: upload-abuse --chain SECONDS TARGET PID...\n");
		return 2;
	}
	nl_open();
	fd = dev_open();
	for (int i = 3; i < argc; i++) {
		uint32_t pid = (uint32_t)strtoul(argv[i], NULL, 0);
		uint64_t start, end;
		struct taproot_proc_map m;
		int e;

		code_of(pid, &start, &end);
		m = (struct taproot_proc_map){ .start = start, .end = end,
					       .flags = TAPROOT_MAP_F_FP };
		e = set_retry(fd, pid, &m, 1);
		if (!e)
			set++;
		else if (i == 3)
			die("the target's mapping");
	}
	printf("uploaded %u\n", set);
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		die("no go on stdin");
	session_config(target, TAPROOT_CFG_F_UNWIND);
	nr = rings_map(fd, rings);
	sample_for(rings, nr, target, secs, &t);
	printf("sampled %lu\n", t.samples);
	close(fd);
	return 0;
}

static int hostile(int argc, char **argv)
{
	static struct ring rings[1024];
	bool far = argc > 2 && !strcmp(argv[2], "far");
	uint32_t pid = argc > 3 ? (uint32_t)strtoul(argv[3], NULL, 0) : 0;
	struct told t = { .value = argc > 4 ? strtoull(argv[4], NULL, 0) : 0 };
	unsigned int secs = argc > 5 ? (unsigned int)atoi(argv[5]) : 0, nr;
	struct taproot_proc_map m = { 0 }, bad;
	uint64_t stack_word;
	struct table tb;
	int fd;

	if (argc != 6 || !pid || !secs) {
		fprintf(stderr, "usage: upload-abuse --hostile near|far PID VALUE SECONDS\n");
		return 2;
	}
	nl_open();
	fd = dev_open();
	code_of(pid, &t.start, &t.end);

	/* One rule over all the code: the return address at CFA - 8. */
	table_make(&tb, 1, 0x66);
	tb.a.base = 0;
	tb.pcs[0] = 0;
	tb.rr[0] = 1;
	tb.rules[1] = (struct taproot_unwind_rule){
		.kind = TAPROOT_RULE_SP, .rbp = TAPROOT_RBP_SAME,
		.cfa_off = far ? TAPROOT_RULE_OFF_MAX : 72, .ra_off = -8,
	};
	expect(xioctl(fd, TAPROOT_IOC_TABLE_ADD, &tb.a), 0, "hostile: the table uploads");

	/* Mappings that are not the target's code: refused. */
	bad = (struct taproot_proc_map){ .start = 0x10000, .end = 0x7ffffffff000ULL,
					 .flags = TAPROOT_MAP_F_FP };
	expect(set_retry(fd, pid, &bad, 1), ESTALE, "hostile: the whole address space: ESTALE");
	bad.start = ((uint64_t)(uintptr_t)&stack_word & ~0xfffULL);	/* ours, not its */
	bad.end = bad.start + 0x1000;
	expect(set_retry(fd, pid, &bad, 1), ESTALE, "hostile: a stack page: ESTALE");
	bad = (struct taproot_proc_map){ .start = t.start, .end = t.end + 0x1000,
					 .bias = t.start, .table_id = tb.a.table_id };
	expect(set_retry(fd, pid, &bad, 1), ESTALE, "hostile: its code and a page past it: ESTALE");
	m = (struct taproot_proc_map){ .start = t.start, .end = t.end, .bias = t.start,
				       .table_id = tb.a.table_id };
	expect(set_retry(fd, pid, &m, 1), 0, "hostile: its code, with the crafted rule: set");

	session_config(pid, TAPROOT_CFG_F_UNWIND | TAPROOT_CFG_F_USTACK_PRIVATE);
	nr = rings_map(fd, rings);
	sample_for(rings, nr, pid, secs, &t);

	printf("# %s: %lu samples of pid %u, %lu pcs, %lu with callers; code %#llx-%#llx\n",
	       far ? "far" : "near", t.samples, pid, t.pcs, t.walked,
	       (unsigned long long)t.start, (unsigned long long)t.end);
	check(t.samples >= 50, "hostile: the target was sampled", "%lu samples", t.samples);
	check(!t.values, "hostile: the value planted on its stack is never told",
	      "%lu pcs are %#llx", t.values, (unsigned long long)t.value);
	check(!t.strays, "hostile: no user pc but the leaf's outside its code",
	      "%lu, the last %#llx", t.strays, (unsigned long long)t.stray);
	check(!t.bytes, "hostile: ustack-private: no stack bytes", "%lu bytes", t.bytes);
	table_free(&tb);
	close(fd);
	return cases_done();
}

int main(int argc, char **argv)
{
	struct table t;
	struct ustats st, st0;
	uint64_t store_mem;
	uint32_t id, id2, big, small;
	int fd, e;

	xcode_map();
	if (argc > 1 && !strcmp(argv[1], "--hold")) {
		nl_open();
		hold();
	}
	if (argc > 1 && !strcmp(argv[1], "--hostile"))
		return hostile(argc, argv);
	if (argc > 1 && !strcmp(argv[1], "--chain"))
		return chain(argc, argv);
	if (argc > 1 && !strcmp(argv[1], "--freed")) {
		nl_open();
		expect_freed("after the holder's death: everything freed");
		fd = open(DEV, O_RDWR | O_CLOEXEC);
		check(fd >= 0, "the device opens again", "%s", strerror(errno));
		return cases_done();
	}
	nl_open();
	set_unwind_mem(TAPROOT_UNWIND_MEM_DEFAULT);
	st0 = get_stats();
	check(st0.seen, "stats: UNWIND_MEM_USED reported", "not in GET_STATS");
	check(!st0.mem && !st0.tables && !st0.procs, "stats: nothing uploaded before",
	      "mem %llu tables %u procs %u", (unsigned long long)st0.mem, st0.tables, st0.procs);

	fd = dev_open();
	expect(xioctl(fd, _IO(TAPROOT_IOC_MAGIC, 99), NULL), ENOTTY, "unknown ioctl: ENOTTY");
	expect(xioctl(fd, _IOW(TAPROOT_IOC_MAGIC, 1, uint32_t), NULL), ENOTTY,
	       "TABLE_ADD number, wrong size: ENOTTY");

	table_make(&t, 4096, 0x11);
	table_cases(fd, &t);
	st = get_stats();
	check(!st.tables, "stats: no table after the refusals", "tables %u", st.tables);
	store_mem = st.mem;	/* the store alone, made by the first upload's ioctl */

	e = xioctl(fd, TAPROOT_IOC_TABLE_ADD, &t.a);
	id = t.a.table_id;
	expect(e, 0, "table: valid upload");
	check(id > 0, "table: id > 0", "id %u", id);
	t.a.table_id = 0;
	e = xioctl(fd, TAPROOT_IOC_TABLE_ADD, &t.a);
	expect(e, EEXIST, "table: same build id: EEXIST");
	check(t.a.table_id == id, "table: EEXIST gives the id", "id %u, expected %u",
	      t.a.table_id, id);
	st = get_stats();
	check(st.tables == 1 && st.mem >= 4096 * 6, "stats: one table counted",
	      "tables %u mem %llu", st.tables, (unsigned long long)st.mem);
	id2 = 0;
	expect(xioctl(fd, TAPROOT_IOC_TABLE_DEL, &id2), ENOENT, "table del id 0: ENOENT");
	id2 = id + 77;
	expect(xioctl(fd, TAPROOT_IOC_TABLE_DEL, &id2), ENOENT, "table del unknown: ENOENT");
	expect(xioctl(fd, TAPROOT_IOC_TABLE_DEL, (void *)8), EFAULT, "table del at 8: EFAULT");

	proc_cases(fd, id);
	/*
	 * Forgotten mappings, and the table their last reference held, are
	 * freed and uncharged after a grace period (call_rcu()): wait for
	 * the store's bytes alone, so that the budget's cases below see no
	 * late uncharge.
	 */
	st = settled_stats(store_mem);
	check(st.tables == 0 && st.procs == 0 && st.mem == store_mem,
	      "stats: all deleted and forgotten, their bytes uncharged",
	      "tables %u procs %u mem %llu, the store's %llu", st.tables, st.procs,
	      (unsigned long long)st.mem, (unsigned long long)store_mem);

	/* A big table (vmalloc'ed), seen in vmallocinfo. */
	e = upload(fd, 1U << 20, 0x22, &big);
	expect(e, 0, "table: 1 Mi rows");
	check(vmalloc_lines() > 0, "vmallocinfo: the big table is there", "no tap_utab line");

	/* The budget: 8 MiB holds the big table (~6 MiB), not two more. */
	st = get_stats();
	set_unwind_mem(8);
	e = upload(fd, 1U << 19, 0x33, &small);
	expect(e, ENOSPC, "budget: a 3 MiB table beyond 8 MiB: ENOSPC");
	check(get_stats().mem == st.mem, "budget: a refusal charges nothing", "mem changed");
	e = upload(fd, 1U << 16, 0x44, &small);
	expect(e, 0, "budget: a small table still fits");
	set_unwind_mem(1);
	e = upload(fd, 16, 0x45, &small);
	expect(e, ENOSPC, "budget: lowered below use: ENOSPC");
	{
		struct taproot_proc_map m = { .start = xcode, .end = xcode + 0x1000,
					      .flags = TAPROOT_MAP_F_FP };
		uint64_t tok;

		if (!token(fd, getpid(), &tok))
			expect(maps_set(fd, getpid(), tok, &m, 1), ENOSPC,
			       "budget: mappings beyond it: ENOSPC");
	}
	set_unwind_mem(TAPROOT_UNWIND_MEM_DEFAULT);

	e = open(DEV, O_RDWR | O_CLOEXEC);
	check(e < 0 && errno == EBUSY, "second open: EBUSY", "open: %d", e);
	close(fd);
	expect_freed("close: everything freed");

	table_free(&t);
	return cases_done();
}
