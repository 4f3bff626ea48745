/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libtaproot internals of the kernel interface layer: struct bodies and
 * the functions its files share with each other and with the unit tests.
 * Not for programs.
 */
#ifndef TAPROOT_KERNEL_PRIVATE_H
#define TAPROOT_KERNEL_PRIVATE_H

#include <linux/netlink.h>
#include <linux/taproot.h>

#include "kernel/kernel.h"
#include "util/util.h"

/* ---------------------------------------------------------------- netlink */

struct nl_sock;
struct nl_msg;
struct nlattr;
struct nla_policy;

struct taproot_nl {
	struct nl_sock *sk;
	int family;			/* resolved id of TAPROOT_GENL_NAME */
};

/*
 * The name of taproot attribute @type for messages: "ABI_VERSION" for
 * TAPROOT_A_ABI_VERSION; "#N", written into @buf of @len bytes, for a type
 * without a name.
 */
const char *tp_nl_attr_name(int type, char *buf, size_t len);

/*
 * What a request is waiting for and what came back; lives on the stack of
 * tp_nl_request() and is what the libnl callbacks see as their argument.
 */
struct tp_nl_reply {
	/* Called for each reply message (not for ACKs or errors). */
	int (*parse)(const struct nlmsghdr *nlh, void *arg);
	void *arg;
	const char *what;		/* the request, for messages */
	int nr_replies;
	int err;			/* first error: parse's or kernel's */
	bool refused;			/* err is the kernel's NLMSG_ERROR */
	bool done;			/* the ACK or the error arrived */
	char extack[256];		/* NLMSGERR_ATTR_MSG, "" if none */
};

/* The "taproot" family's id on @sk, or -TAPROOT_ENOMODULE / a recorded error. */
int tp_nl_resolve_family(struct nl_sock *sk);

/*
 * Give @nl a socket connected to the taproot family, with extended ACKs
 * and a receive timeout. Returns 0 or a recorded error (nl->sk NULL).
 */
int tp_nl_connect(struct taproot_nl *nl);

/*
 * Send command @cmd of the taproot family, with the attributes @fill adds
 * to the message (NULL: none), and wait for its ACK. Each reply message
 * goes to @parse (NULL: replies are a protocol error). Returns 0, the first
 * negative error of @parse, or the kernel's -errno; in the last case
 * @reply->extack holds the kernel's message, if it sent one. @what names
 * the request in messages ("get info").
 */
int tp_nl_request(struct taproot_nl *nl, uint8_t cmd, const char *what,
		  int (*fill)(struct nl_msg *msg, void *arg),
		  struct tp_nl_reply *reply);

/*
 * tp_nl_request() of @cmd with no attributes, whose answer must be exactly
 * one reply message, given to @parse with @arg. 0, the first error of
 * @parse, the kernel's -errno, or -TAPROOT_EPROTO for another count.
 */
int tp_nl_request_one(struct taproot_nl *nl, uint8_t cmd, const char *what,
		      int (*parse)(const struct nlmsghdr *nlh, void *arg), void *arg);

/* The name of TAPROOT_A_STAT_* attribute @type, as tp_nl_attr_name(). */
const char *tp_nl_stat_attr_name(int type, char *buf, size_t len);

/*
 * Find the attributes of the generic netlink message @nlh, which must be a
 * reply of command @cmd: *@head and *@len. Returns 0 or -TAPROOT_EPROTO
 * ("malformed reply to WHAT: ...", @what naming the request).
 */
int tp_genl_attrs(const struct nlmsghdr *nlh, uint8_t cmd, const char *what,
		  struct nlattr **head, int *len);

/*
 * nla_parse() of [@head, @head + @len) into @tb (maxtype @maxtype) under
 * @policy, after checking that the attributes are laid end to end with no
 * bytes after the last. On failure, -TAPROOT_EPROTO with a message naming
 * the first attribute @policy refuses (by @name) or the trailing garbage:
 * "malformed reply to WHAT: attribute NAME of N bytes".
 */
int tp_nl_parse(struct nlattr **tb, int maxtype, struct nlattr *head, int len,
		struct nla_policy *policy, const char *what,
		const char *(*name)(int type, char *buf, size_t len));

/*
 * Record the message for the kernel's refusal @err (-errno) of request
 * @what, with its extended-ACK text @extack ("" if none), and return @err.
 * -EPERM says which capabilities are needed.
 */
int tp_nl_refused(int err, const char *what, const char *extack);

/*
 * Copy the extended-ACK message (NLMSGERR_ATTR_MSG) of the NLMSG_ERROR
 * message @nlh into @buf of @len bytes, NUL terminated. Returns 1 when
 * there was one, 0 when there was none, -TAPROOT_EPROTO when @nlh is not a
 * well-formed NLMSG_ERROR or its attributes are malformed. Handles both
 * capped and uncapped acknowledgements.
 */
int tp_nl_extack_msg(const struct nlmsghdr *nlh, char *buf, size_t len);

/*
 * Parse a TAPROOT_CMD_GET_INFO reply @nlh into @info.
 *
 * Validation: the message must be a generic netlink message of command
 * GET_INFO; TAPROOT_A_ABI_VERSION is read and checked first (so a module of
 * another ABI is reported as such, whatever else changed in its reply);
 * then the attributes are validated by an nla_policy with exact lengths for
 * integers and a NUL within 65 bytes for KERNEL_RELEASE; all six attributes
 * are required; RUNNING must be 0 or 1, NR_CPUS at least 1, PAGE_SIZE a
 * power of two.
 *
 * Attributes this parser does not use (newer ones above TAPROOT_A_MAX, or
 * known ones that do not belong to this reply) are ignored: a module may add
 * reply attributes without changing its ABI version, and an older tool must
 * keep working with it. Requests are the other way round: the kernel refuses
 * what it does not know.
 *
 * Returns 0, -TAPROOT_EABI (info->abi_version is set), or -TAPROOT_EPROTO
 * with a message naming the attribute.
 */
int tp_info_parse(const struct nlmsghdr *nlh, struct taproot_info *info);

/*
 * Parse a TAPROOT_CMD_GET_CONFIG reply @nlh into @cfg (cfg->set becomes
 * TAPROOT_CONFIG_ALL).
 *
 * Validation: a generic netlink message of command GET_CONFIG; attributes
 * end to end, checked by an nla_policy with exact lengths; all eleven
 * TAPROOT_A_CFG_* attributes required; each value within the ABI's limits
 * (tp_config_check()), except that unknown EVENTS and FLAGS bits are
 * kept, not refused; the TGIDS nest holds only TGID u32 attributes of
 * exactly 4 bytes, at most TAPROOT_MAX_TGIDS of them. Unknown attributes
 * outside the nest are ignored, as in tp_info_parse(). Returns 0 or
 * -TAPROOT_EPROTO with a message naming the attribute.
 */
int tp_config_parse(const struct nlmsghdr *nlh, struct taproot_config *cfg);

/*
 * Check the fields of @cfg named by cfg->set against the ABI's limits.
 * Returns 0 or @err with a message "FIELD VALUE: why" prefixed by @what.
 */
int tp_config_check(const struct taproot_config *cfg, int err, const char *what);

/* Add the attributes of the fields @cfg->set names to @msg (SET_CONFIG). */
int tp_config_fill(struct nl_msg *msg, const struct taproot_config *cfg);

/* Where tp_stats_parse() collects CPUs; zeroed before the first reply. */
struct tp_stats {
	bool running;
	bool seen_running;
	struct taproot_module_stats module;	/* FOLLOWED, FOLLOW_FULL, UNWIND_* */
	struct taproot_cpu_stats *cpus;	/* malloc'ed, grows */
	size_t nr, alloc;
};

/*
 * Parse a TAPROOT_CMD_GET_STATS reply @nlh, appending its CPUs to @st (a
 * module may split a long reply over several messages).
 *
 * Validation: command GET_STATS; attributes end to end; RUNNING a u8 of 0
 * or 1; FOLLOWED a u32 and FOLLOW_FULL a u64, both or neither;
 * UNWIND_MEM_USED a u64, UNWIND_TABLES and UNWIND_PROCS u32s, all or
 * none; each STATS_CPU nest end to end with exact lengths, every
 * TAPROOT_A_STAT_* counter and CPU present; its STAT_UNWIND nest end to
 * end, a u64 for every taproot_kunwind (type = value + 1; type 0 is
 * padding); at most 65536 CPUs in all, no CPU twice. Unknown attributes
 * are ignored, in the nests too. Returns 0 or -TAPROOT_EPROTO
 * (st keeps what it had; the caller frees st->cpus either way).
 */
int tp_stats_parse(const struct nlmsghdr *nlh, struct tp_stats *st);

/*
 * After the last reply: RUNNING was seen, at least one CPU; sorts
 * st->cpus by CPU number. Returns 0 or -TAPROOT_EPROTO.
 */
int tp_stats_finish(struct tp_stats *st);

/*
 * Parse a TAPROOT_CMD_NOTIFY message @nlh: NOTIFY (u32, a known
 * TAPROOT_NOTIFY_*) and RUNNING (u8, 0 or 1) required. Returns 0 or
 * -TAPROOT_EPROTO.
 */
int tp_notify_parse(const struct nlmsghdr *nlh, struct taproot_notification *n);

/* ---------------------------------------------------------------- rings */

/*
 * A buffer in this process that the reader thread copies one CPU's records
 * into (taproot_ring_start_reader()): the same layout as the kernel's data
 * area, a power of two mapped twice, with its own head and tail.
 * Single producer (the filler, under taproot_ring.fill_lock), single
 * consumer (taproot_ring_consume()).
 */
struct tp_ring_buf {
	uint8_t *data;			/* mapped twice: 2 * size bytes */
	uint64_t size;			/* a power of two, >= the ring's D */
	__u64 head;			/* written by the filler (release) */
	__u64 tail;			/* written by the consumer (release) */
	uint64_t peak;			/* most bytes held at once */
	uint64_t freed;			/* consumer's: pages before it given back */
};

/* One CPU's ring, as the reader sees it. */
struct tp_ring_cpu {
	unsigned int cpu;
	struct taproot_ring_consumer *cons;		/* rw page */
	const struct taproot_ring_producer *prod;	/* ro page */
	const uint8_t *data;		/* the data area, mapped twice */
	uint64_t size;			/* D */
	void *cons_map, *prod_map;	/* to munmap; NULL when not ours */
	size_t cons_len, prod_len;
	/*
	 * What taproot_ring_consume() reads: the kernel's ring itself, or,
	 * once a reader thread runs, buf. src_head and src_tail point at
	 * the head and tail of that source.
	 */
	const uint8_t *src;		/* data, or buf.data */
	uint64_t src_size;
	const __u64 *src_head;		/* the ABI's type, as data_head's */
	__u64 *src_tail;
	uint64_t tail;			/* what we have released */
	uint64_t head;			/* head read by this consume call */
	uint64_t pos;			/* next record to deliver */
	uint64_t invalid;		/* corrupt records met */
	/* The reader thread's side (under fill_lock). */
	struct tp_ring_buf buf;
	uint64_t ktail;			/* kernel bytes copied to buf and released */
	const char *corrupt_why;	/* met by the filler, for the next consume */
	uint64_t corrupt_pos;
};

struct tp_ring_reader;

struct taproot_ring {
	int fd;				/* /dev/taproot, -1 in tests */
	size_t page_size;
	unsigned int nr, alloc;
	struct tp_ring_cpu *cpus;	/* sorted by CPU number */
	unsigned int *heap;		/* merge: indexes into cpus */
	struct tp_ring_reader *reader;	/* NULL: consume reads the kernel's rings */
};

/* An empty reader of rings laid out with pages of @page_size, over @fd. */
int tp_ring_new(int fd, size_t page_size, struct taproot_ring **rp);

/*
 * Add ring @cpu to @r: @cons is its consumer page (rw), @window its
 * producer page followed by the data area mapped twice (ro). The producer
 * page is checked against the layout first. When @owned, the two mappings
 * (of @cons_len and @window_len bytes) are unmapped by
 * taproot_ring_close(). Returns 0, -TAPROOT_EABI or -TAPROOT_EPROTO.
 */
int tp_ring_add(struct taproot_ring *r, unsigned int cpu, void *cons,
		size_t cons_len, const void *window, size_t window_len,
		bool owned);

/*
 * taproot_ring_consume() reads @c's kernel ring itself (no reader thread).
 * Inline: ring.c and ring-reader.c both set it, and neither calls up.
 */
static inline void tp_ring_read_kernel(struct tp_ring_cpu *c)
{
	c->src = c->data;
	c->src_size = c->size;
	c->src_head = &c->prod->data_head;
	c->src_tail = &c->cons->data_tail;
}

/*
 * Check a producer page against the layout for ring @cpu with pages of
 * @page_size: ABI version, CPU, page size, data_offset == 2P, data size a
 * power of two, at least a page, at most TAPROOT_RING_PAGES_MAX pages.
 */
int tp_ring_check_producer(const struct taproot_ring_producer *prod,
			   unsigned int cpu, size_t page_size);

/*
 * Parse a CPU list as /sys/devices/system/cpu/possible writes it ("0-3,5"
 * and a newline) into @mask of @n entries: mask[c] is true for each CPU c
 * listed below @n. Returns 0 or -EINVAL for malformed text.
 */
int tp_cpulist_parse(const char *s, bool *mask, size_t n);

/*
 * With a reader thread (lib/kernel/ring-reader.c): copy what the kernel's
 * rings hold into the buffers, as room allows, and report corruption the
 * thread met through @ops. Called by taproot_ring_consume() before it
 * reads, so that one call still delivers everything written before it.
 */
void tp_ring_reader_fill(struct taproot_ring *r, const struct taproot_ring_ops *ops, void *arg);

/* 0, or the reader thread's poll() error (-errno): it stopped. */
int tp_ring_reader_error(const struct taproot_ring *r);

/*
 * The consumer is about to release @c's buffer up to @tail: its whole
 * pages before @tail go back to the system, in batches. The filler writes
 * each byte of the buffer once a lap, so a buffer whose pages were kept
 * would grow to its whole size however little it holds at once.
 */
void tp_ring_reader_release(struct tp_ring_cpu *c, uint64_t tail);

/* The bytes of @c's buffer resident now (mincore()), 0 on error. */
uint64_t tp_ring_reader_resident(const struct tp_ring_cpu *c);

/*
 * Stop the reader thread and free its buffers, with what they still hold
 * (for taproot_ring_close(); no reader: nothing).
 */
void tp_ring_reader_stop(struct taproot_ring *r);

/* ----------------------------------------------------------- the module */

/* Where tp_ko_resolve() looks; each field may be NULL. */
struct tp_ko_search {
	const char *ko;		/* --ko PATH */
	const char *env;	/* $TAPROOT_KO */
	const char *exe;	/* the running program, absolute */
	const char *release;	/* uname -r */
};

/*
 * Steps 1-3 of taproot_module_find(), without side effects beyond stat(2):
 * returns 0 with *@path set (caller frees) when a file was chosen, 1 when
 * the installed module must be looked up (*@path NULL; @tried of @len bytes
 * then lists the paths tried, "; " separated), or -ENOENT (message set)
 * when an explicitly given file does not exist.
 */
int tp_ko_resolve(const struct tp_ko_search *s, char **path,
		  char *tried, size_t len);

#endif /* TAPROOT_KERNEL_PRIVATE_H */
