// SPDX-License-Identifier: GPL-2.0
/*
 * The netlink transport: a libnl-genl socket on the taproot family, one
 * request at a time, with the kernel's extended-ACK messages carried into
 * the error the caller sees. The commands themselves live in nl-*.c and
 * only describe their attributes and parse their replies.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <netlink/attr.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/handlers.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

#include "kernel/kernel-private.h"

/*
 * How long a request waits for its answer. The module answers from process
 * context without blocking, so only a wedged kernel makes this expire; the
 * margin is for slow emulated guests.
 */
#define TP_NL_TIMEOUT_S		10

/* ------------------------------------------------------------ extack */

int tp_nl_extack_msg(const struct nlmsghdr *nlh, char *buf, size_t len)
{
	static struct nla_policy policy[NLMSGERR_ATTR_MAX + 1] = {
		[NLMSGERR_ATTR_MSG] = { .type = NLA_STRING },
	};
	struct nlattr *tb[NLMSGERR_ATTR_MAX + 1];
	const struct nlmsgerr *e;
	size_t off;
	int err;

	if (len)
		buf[0] = '\0';
	if (nlh->nlmsg_type != NLMSG_ERROR ||
	    nlh->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
		return -TAPROOT_EPROTO;
	if (!(nlh->nlmsg_flags & NLM_F_ACK_TLVS))
		return 0;

	/*
	 * The TLVs follow the nlmsgerr, which the kernel extends with the
	 * payload of the request unless the ack is capped (NLM_F_CAPPED:
	 * NETLINK_CAP_ACK set, or not an error).
	 */
	e = NLMSG_DATA(nlh);
	off = NLMSG_LENGTH(sizeof(*e));
	if (!(nlh->nlmsg_flags & NLM_F_CAPPED)) {
		if (e->msg.nlmsg_len < NLMSG_HDRLEN)
			return -TAPROOT_EPROTO;
		off += e->msg.nlmsg_len - NLMSG_HDRLEN;
	}
	off = NLMSG_ALIGN(off);
	if (off > nlh->nlmsg_len)
		return -TAPROOT_EPROTO;

	/* libnl's API takes the attributes non-const; nla_parse reads only. */
	err = nla_parse(tb, NLMSGERR_ATTR_MAX,
			(struct nlattr *)((char *)nlh + off),
			(int)(nlh->nlmsg_len - off), policy);
	if (err < 0)
		return -TAPROOT_EPROTO;
	if (!tb[NLMSGERR_ATTR_MSG])
		return 0;
	if (len)
		snprintf(buf, len, "%s", (const char *)nla_data(tb[NLMSGERR_ATTR_MSG]));
	return 1;
}

/* ------------------------------------------------------------ callbacks */

static int tp_nl_msg_in(struct nl_msg *msg, void *arg)
{
	return NL_OK;
}

static int tp_nl_valid(struct nl_msg *msg, void *arg)
{
	struct tp_nl_reply *r = arg;
	int err;

	r->nr_replies++;
	if (r->err)
		return NL_SKIP;
	if (!r->parse) {
		r->err = tp_err(-TAPROOT_EPROTO, "%s: unexpected reply",
				r->what);
		return NL_SKIP;
	}
	err = r->parse(nlmsg_hdr(msg), r->arg);
	if (err < 0)
		r->err = err;
	/* Go on to the ACK, so that the socket stays in step. */
	return NL_SKIP;
}

static int tp_nl_ack(struct nl_msg *msg, void *arg)
{
	struct tp_nl_reply *r = arg;

	r->done = true;
	return NL_STOP;
}

/*
 * libnl hands the error handler the nlmsgerr, which is the payload of the
 * NLMSG_ERROR message it received whole: the header is right before it.
 */
static int tp_nl_error(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	const struct nlmsghdr *nlh =
		(const struct nlmsghdr *)((const char *)e - NLMSG_HDRLEN);
	struct tp_nl_reply *r = arg;

	r->done = true;
	if (!r->err) {
		r->err = e->error;
		r->refused = true;
		if (tp_nl_extack_msg(nlh, r->extack, sizeof(r->extack)) < 0)
			snprintf(r->extack, sizeof(r->extack),
				 "(malformed extended ACK)");
	}
	return NL_STOP;
}

/* ------------------------------------------------------------ requests */

int tp_nl_refused(int err, const char *what, const char *extack)
{
	static const char eperm[] = "needs CAP_PERFMON or CAP_SYS_ADMIN";
	/* The kernel's text, unless it only says what eperm says. */
	bool kernel = extack[0] && strcmp(extack, eperm);

	if (err == -EPERM)
		return tp_err(err, "permission denied: %s%s%s%s", eperm,
			      kernel ? " (kernel: " : "", kernel ? extack : "",
			      kernel ? ")" : "");
	if (extack[0])
		return tp_err(err, "%s: %s (%s)", what, extack,
			      taproot_strerror(err));
	return tp_err(err, "%s: %s", what, taproot_strerror(err));
}

int tp_nl_request(struct taproot_nl *nl, uint8_t cmd, const char *what,
		  int (*fill)(struct nl_msg *msg, void *arg),
		  struct tp_nl_reply *reply)
{
	struct nl_msg *msg;
	struct nl_cb *cb;
	int err, n;

	reply->what = what;
	reply->nr_replies = 0;
	reply->err = 0;
	reply->refused = false;
	reply->done = false;
	reply->extack[0] = '\0';

	msg = nlmsg_alloc();
	if (!msg)
		return tp_err(-ENOMEM, "%s: no memory for the request", what);
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, nl->family, 0,
			 NLM_F_ACK, cmd, TAPROOT_GENL_VERSION)) {
		err = tp_err(-ENOMEM, "%s: no room for the request header", what);
		goto out_msg;
	}
	if (fill) {
		err = fill(msg, reply->arg);
		if (err < 0)
			goto out_msg;
	}

	cb = nl_cb_alloc(NL_CB_DEFAULT);
	if (!cb) {
		err = tp_err(-ENOMEM, "%s: no memory for the callbacks", what);
		goto out_msg;
	}
	nl_cb_set(cb, NL_CB_MSG_IN, NL_CB_CUSTOM, tp_nl_msg_in, reply);
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, tp_nl_valid, reply);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, tp_nl_ack, reply);
	nl_cb_err(cb, NL_CB_CUSTOM, tp_nl_error, reply);

	err = nl_send_auto(nl->sk, msg);
	if (err < 0) {
		err = tp_err(tp_nlerr_to_errno(err), "%s: sending the request: %s",
			     what, nl_geterror(err));
		goto out_cb;
	}

	while (!reply->done) {
		n = nl_recvmsgs_report(nl->sk, cb);
		if (reply->done)
			break;
		if (n < 0) {
			err = tp_err(tp_nlerr_to_errno(n), "%s: receiving the reply: %s",
				     what, nl_geterror(n));
			goto out_cb;
		}
		if (n == 0) {
			err = tp_err(-ETIMEDOUT, "%s: no answer from the taproot module in %d s",
				     what, TP_NL_TIMEOUT_S);
			goto out_cb;
		}
	}

	err = reply->err;
	if (err < 0 && reply->refused)
		err = tp_nl_refused(err, what, reply->extack);
out_cb:
	nl_cb_put(cb);
out_msg:
	nlmsg_free(msg);
	return err;
}

/* ------------------------------------------------------------ the socket */

/*
 * The id of the "taproot" family on @sk, or -TAPROOT_ENOMODULE when the
 * module is not loaded, or another recorded error. Used by every socket
 * the library opens (requests and notifications).
 */
int tp_nl_resolve_family(struct nl_sock *sk)
{
	int id = genl_ctrl_resolve(sk, TAPROOT_GENL_NAME);

	if (id == -NLE_OBJ_NOTFOUND)
		return tp_err(-TAPROOT_ENOMODULE, NULL);
	if (id < 0)
		return tp_err(tp_nlerr_to_errno(id),
			      "resolving the generic netlink family '%s': %s",
			      TAPROOT_GENL_NAME, nl_geterror(id));
	return id;
}

int tp_nl_request_one(struct taproot_nl *nl, uint8_t cmd, const char *what,
		      int (*parse)(const struct nlmsghdr *nlh, void *arg), void *arg)
{
	struct tp_nl_reply reply = { .parse = parse, .arg = arg };
	int err;

	err = tp_nl_request(nl, cmd, what, NULL, &reply);
	if (err < 0)
		return err;
	if (reply.nr_replies != 1)
		return tp_err(-TAPROOT_EPROTO, "%s: %d replies instead of one", what,
			      reply.nr_replies);
	return 0;
}

int tp_nl_connect(struct taproot_nl *nl)
{
	struct timeval tv = { .tv_sec = TP_NL_TIMEOUT_S };
	int one = 1;
	int err, fd;

	nl->sk = nl_socket_alloc();
	if (!nl->sk)
		return tp_err(-ENOMEM, "no memory for a netlink socket");
	err = nl_connect(nl->sk, NETLINK_GENERIC);
	if (err < 0) {
		err = tp_err(tp_nlerr_to_errno(err), "connecting to generic netlink: %s",
			     nl_geterror(err));
		goto out_sock;
	}

	fd = nl_socket_get_fd(nl->sk);
	if (setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one)) < 0) {
		err = tp_err(-errno, "enabling netlink extended ACKs: %s",
			     strerror(errno));
		goto out_sock;
	}
	if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0) {
		err = tp_err(-errno, "setting the netlink receive timeout: %s",
			     strerror(errno));
		goto out_sock;
	}

	err = tp_nl_resolve_family(nl->sk);
	if (err < 0)
		goto out_sock;
	nl->family = err;
	return 0;

out_sock:
	nl_socket_free(nl->sk);
	nl->sk = NULL;
	return err;
}

void taproot_nl_close(struct taproot_nl *nl)
{
	if (!nl)
		return;
	nl_socket_free(nl->sk);
	free(nl);
}

/* ------------------------------------------------------------ attributes */

static const char *const tp_attr_names[TAPROOT_A_MAX + 1] = {
	[TAPROOT_A_ABI_VERSION]		= "ABI_VERSION",
	[TAPROOT_A_NR_CPUS]		= "NR_CPUS",
	[TAPROOT_A_KERNEL_RELEASE]	= "KERNEL_RELEASE",
	[TAPROOT_A_FEATURES]		= "FEATURES",
	[TAPROOT_A_RUNNING]		= "RUNNING",
	[TAPROOT_A_PAGE_SIZE]		= "PAGE_SIZE",
	[TAPROOT_A_CFG_FREQ_HZ]		= "CFG_FREQ_HZ",
	[TAPROOT_A_CFG_KSTACK_DEPTH]	= "CFG_KSTACK_DEPTH",
	[TAPROOT_A_CFG_USTACK_BYTES]	= "CFG_USTACK_BYTES",
	[TAPROOT_A_CFG_EVENTS]		= "CFG_EVENTS",
	[TAPROOT_A_CFG_FLAGS]		= "CFG_FLAGS",
	[TAPROOT_A_CFG_RING_PAGES]	= "CFG_RING_PAGES",
	[TAPROOT_A_CFG_WATERMARK]	= "CFG_WATERMARK",
	[TAPROOT_A_CFG_TGIDS]		= "CFG_TGIDS",
	[TAPROOT_A_CFG_TGID]		= "CFG_TGID",
	[TAPROOT_A_STATS_CPU]		= "STATS_CPU",
	[TAPROOT_A_NOTIFY]		= "NOTIFY",
	[TAPROOT_A_PAD]			= "PAD",
	[TAPROOT_A_CFG_SCHED_ONE_IN]	= "CFG_SCHED_ONE_IN",
	[TAPROOT_A_CFG_UNWIND_FRAMES]	= "CFG_UNWIND_FRAMES",
	[TAPROOT_A_CFG_UNWIND_MEM]	= "CFG_UNWIND_MEM",
	[TAPROOT_A_FOLLOWED]		= "FOLLOWED",
	[TAPROOT_A_FOLLOW_FULL]		= "FOLLOW_FULL",
	[TAPROOT_A_UNWIND_MEM_USED]	= "UNWIND_MEM_USED",
	[TAPROOT_A_UNWIND_TABLES]	= "UNWIND_TABLES",
	[TAPROOT_A_UNWIND_PROCS]	= "UNWIND_PROCS",
};

_Static_assert(TAPROOT_A_MAX == TAPROOT_A_UNWIND_PROCS,
	       "a taproot attribute was added: name it in tp_attr_names");

const char *tp_nl_attr_name(int type, char *buf, size_t len)
{
	if (type > 0 && type <= TAPROOT_A_MAX && tp_attr_names[type])
		return tp_attr_names[type];
	snprintf(buf, len, "#%d", type);
	return buf;
}

static const char *const tp_stat_attr_names[TAPROOT_A_STAT_MAX + 1] = {
	[TAPROOT_A_STAT_CPU]		= "STAT_CPU",
	[TAPROOT_A_STAT_SAMPLES]	= "STAT_SAMPLES",
	[TAPROOT_A_STAT_RECORDS]	= "STAT_RECORDS",
	[TAPROOT_A_STAT_BYTES]		= "STAT_BYTES",
	[TAPROOT_A_STAT_LOST_FULL]	= "STAT_LOST_FULL",
	[TAPROOT_A_STAT_LOST_NESTED]	= "STAT_LOST_NESTED",
	[TAPROOT_A_STAT_USTACK_FAULTS]	= "STAT_USTACK_FAULTS",
	[TAPROOT_A_STAT_PAD]		= "STAT_PAD",
	[TAPROOT_A_STAT_SWITCHES]	= "STAT_SWITCHES",
	[TAPROOT_A_STAT_SWITCHES_SELECTED] = "STAT_SWITCHES_SELECTED",
	[TAPROOT_A_STAT_WAKINGS]	= "STAT_WAKINGS",
	[TAPROOT_A_STAT_UNWIND]		= "STAT_UNWIND",
	[TAPROOT_A_STAT_STACKS]		= "STAT_STACKS",
	[TAPROOT_A_STAT_STACK_REFS]	= "STAT_STACK_REFS",
	[TAPROOT_A_STAT_PY_WALKS]	= "STAT_PY_WALKS",
	[TAPROOT_A_STAT_PY_FRAMES]	= "STAT_PY_FRAMES",
	[TAPROOT_A_STAT_PY_CUT]		= "STAT_PY_CUT",
	[TAPROOT_A_STAT_COUNTED]	= "STAT_COUNTED",
	[TAPROOT_A_STAT_COUNT_FULL]	= "STAT_COUNT_FULL",
};

_Static_assert(TAPROOT_A_STAT_MAX == TAPROOT_A_STAT_COUNT_FULL,
	       "a taproot stat attribute was added: name it in tp_stat_attr_names");

const char *tp_nl_stat_attr_name(int type, char *buf, size_t len)
{
	if (type > 0 && type <= TAPROOT_A_STAT_MAX && tp_stat_attr_names[type])
		return tp_stat_attr_names[type];
	snprintf(buf, len, "#%d", type);
	return buf;
}

/* ------------------------------------------------------------ replies */

int tp_genl_attrs(const struct nlmsghdr *nlh, uint8_t cmd, const char *what,
		  struct nlattr **head, int *len)
{
	/* libnl's accessors take non-const pointers; they only read. */
	struct nlmsghdr *hdr = (struct nlmsghdr *)nlh;
	const struct genlmsghdr *gh;

	if (nlh->nlmsg_len < NLMSG_HDRLEN || !genlmsg_valid_hdr(hdr, 0))
		return tp_err(-TAPROOT_EPROTO,
			      "malformed reply to %s: %u bytes, no generic netlink header",
			      what, nlh->nlmsg_len);
	gh = genlmsg_hdr(hdr);
	if (gh->cmd != cmd)
		return tp_err(-TAPROOT_EPROTO, "reply to %s carries command %u",
			      what, gh->cmd);
	*head = genlmsg_attrdata(gh, 0);
	*len = genlmsg_attrlen(gh, 0);
	return 0;
}

int tp_nl_parse(struct nlattr **tb, int maxtype, struct nlattr *head, int len,
		struct nla_policy *policy, const char *what,
		const char *(*name)(int type, char *buf, size_t len))
{
	struct nlattr *a;
	char buf[16];
	int rem, alen;

	/* Attributes are laid end to end; anything after the last is garbage. */
	nla_for_each_attr(a, head, len, rem)
		;
	if (rem == 0 && nla_parse(tb, maxtype, head, len, policy) == 0)
		return 0;

	/* Name the first attribute the policy refuses, alone. */
	nla_for_each_attr(a, head, len, rem) {
		alen = (int)NLA_ALIGN(a->nla_len) < rem ?
		       (int)NLA_ALIGN(a->nla_len) : rem;
		if (nla_parse(tb, maxtype, a, alen, policy) < 0)
			return tp_err(-TAPROOT_EPROTO,
				      "malformed reply to %s: attribute %s of %d bytes",
				      what, name(nla_type(a), buf, sizeof(buf)),
				      nla_len(a));
	}
	return tp_err(-TAPROOT_EPROTO,
		      "malformed reply to %s: %d bytes after the last whole attribute",
		      what, rem);
}
