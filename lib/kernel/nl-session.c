// SPDX-License-Identifier: GPL-2.0
/*
 * The sampling session: TAPROOT_CMD_START / _STOP, and the "session"
 * multicast group whose TAPROOT_CMD_NOTIFY events say when it changed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <netlink/attr.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

#include "kernel/kernel-private.h"

/* ------------------------------------------------------------ start/stop */

static int tp_session_request(struct taproot_nl *nl, uint8_t cmd, const char *what,
			      const char *already)
{
	struct tp_nl_reply reply = { 0 };
	int err;

	err = tp_nl_request(nl, cmd, what, NULL, &reply);
	if (err == -EALREADY && reply.refused)
		return tp_err(err, "%s: %s", what, already);
	return err;
}

int taproot_nl_start(struct taproot_nl *nl)
{
	return tp_session_request(nl, TAPROOT_CMD_START, "start",
				  "sampling is already running");
}

int taproot_nl_stop(struct taproot_nl *nl)
{
	return tp_session_request(nl, TAPROOT_CMD_STOP, "stop",
				  "sampling is not running");
}

/* ------------------------------------------------------------ notify */

/*
 * Enough for a burst of notifications (each is 36 bytes); the kernel drops
 * what does not fit the socket's receive buffer and says so with ENOBUFS.
 */
#define TP_SUB_BUF	16384

struct taproot_nl_sub {
	struct nl_sock *sk;
	int family;
	/* Messages of the last datagram not handed out yet. */
	size_t off, len;
	unsigned char buf[TP_SUB_BUF];
};

static struct nla_policy tp_notify_policy[TAPROOT_A_MAX + 1] = {
	[TAPROOT_A_NOTIFY]  = { .type = NLA_U32, .maxlen = sizeof(uint32_t) },
	[TAPROOT_A_RUNNING] = { .type = NLA_U8, .maxlen = sizeof(uint8_t) },
};

int tp_notify_parse(const struct nlmsghdr *nlh, struct taproot_notification *n)
{
	struct nlattr *tb[TAPROOT_A_MAX + 1];
	struct nlattr *head;
	uint8_t running;
	int len, err;

	memset(n, 0, sizeof(*n));
	err = tp_genl_attrs(nlh, TAPROOT_CMD_NOTIFY, "notify", &head, &len);
	if (err < 0)
		return err;
	err = tp_nl_parse(tb, TAPROOT_A_MAX, head, len, tp_notify_policy,
			  "notify", tp_nl_attr_name);
	if (err < 0)
		return err;
	if (!tb[TAPROOT_A_NOTIFY] || !tb[TAPROOT_A_RUNNING])
		return tp_err(-TAPROOT_EPROTO, "notification lacks attribute %s",
			      tb[TAPROOT_A_NOTIFY] ? "RUNNING" : "NOTIFY");
	n->what = nla_get_u32(tb[TAPROOT_A_NOTIFY]);
	if (n->what < TAPROOT_NOTIFY_STARTED || n->what > TAPROOT_NOTIFY_CONFIG)
		return tp_err(-TAPROOT_EPROTO, "notification of unknown kind %u",
			      n->what);
	running = nla_get_u8(tb[TAPROOT_A_RUNNING]);
	if (running > 1)
		return tp_err(-TAPROOT_EPROTO,
			      "notification: RUNNING is %u, not 0 or 1", running);
	n->running = running;
	return 0;
}

int taproot_nl_subscribe(struct taproot_nl_sub **subp)
{
	struct taproot_nl_sub *sub;
	int err, grp;

	*subp = NULL;
	sub = calloc(1, sizeof(*sub));
	if (!sub)
		return tp_err(-ENOMEM, NULL);
	sub->sk = nl_socket_alloc();
	if (!sub->sk) {
		err = tp_err(-ENOMEM, "no memory for a netlink socket");
		goto out_free;
	}
	/* Notifications are not answers: they carry no sequence we chose. */
	nl_socket_disable_seq_check(sub->sk);
	err = nl_connect(sub->sk, NETLINK_GENERIC);
	if (err < 0) {
		err = tp_err(tp_nlerr_to_errno(err), "connecting to generic netlink: %s",
			     nl_geterror(err));
		goto out_sock;
	}
	err = tp_nl_resolve_family(sub->sk);
	if (err < 0)
		goto out_sock;
	sub->family = err;
	grp = genl_ctrl_resolve_grp(sub->sk, TAPROOT_GENL_NAME, TAPROOT_MCGRP_SESSION);
	if (grp < 0) {
		err = tp_err(tp_nlerr_to_errno(grp),
			     "resolving the multicast group '%s' of '%s': %s",
			     TAPROOT_MCGRP_SESSION, TAPROOT_GENL_NAME, nl_geterror(grp));
		goto out_sock;
	}
	err = nl_socket_add_membership(sub->sk, grp);
	if (err < 0) {
		err = tp_nlerr_to_errno(err);
		if (err == -EPERM)
			err = tp_err(err, "permission denied: needs CAP_PERFMON or CAP_SYS_ADMIN");
		else
			err = tp_err(err, "joining the multicast group '%s': %s",
				     TAPROOT_MCGRP_SESSION, taproot_strerror(err));
		goto out_sock;
	}
	err = nl_socket_set_nonblocking(sub->sk);
	if (err < 0) {
		err = tp_err(tp_nlerr_to_errno(err), "making the netlink socket non-blocking: %s",
			     nl_geterror(err));
		goto out_sock;
	}
	*subp = sub;
	return 0;

out_sock:
	nl_socket_free(sub->sk);
out_free:
	free(sub);
	return err;
}

void taproot_nl_sub_close(struct taproot_nl_sub *sub)
{
	if (!sub)
		return;
	nl_socket_free(sub->sk);
	free(sub);
}

int taproot_nl_sub_fd(const struct taproot_nl_sub *sub)
{
	return nl_socket_get_fd(sub->sk);
}

/* Receive the next datagram from the kernel into sub->buf: 1, 0, -errno. */
static int tp_sub_recv(struct taproot_nl_sub *sub)
{
	struct sockaddr_nl from;
	socklen_t fromlen;
	ssize_t n;

	for (;;) {
		fromlen = sizeof(from);
		n = recvfrom(nl_socket_get_fd(sub->sk), sub->buf, sizeof(sub->buf),
			     MSG_DONTWAIT, (struct sockaddr *)&from, &fromlen);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n < 0 && errno == ENOBUFS)
			return tp_err(-ENOBUFS,
				      "notifications were lost: the socket overran (ask 'status' for the state)");
		if (n < 0)
			return tp_err(-errno, "receiving notifications: %s", strerror(errno));
		/* Only the kernel speaks for the module. */
		if (fromlen != sizeof(from) || from.nl_pid != 0)
			continue;
		sub->off = 0;
		sub->len = (size_t)n;
		return 1;
	}
}

int taproot_nl_sub_read(struct taproot_nl_sub *sub, struct taproot_notification *n)
{
	const struct nlmsghdr *nlh;
	size_t left;
	int err;

	for (;;) {
		if (sub->off >= sub->len) {
			err = tp_sub_recv(sub);
			if (err <= 0)
				return err;
		}
		nlh = (const struct nlmsghdr *)(sub->buf + sub->off);
		left = sub->len - sub->off;
		if (left < NLMSG_HDRLEN || nlh->nlmsg_len < NLMSG_HDRLEN ||
		    nlh->nlmsg_len > left) {
			sub->off = sub->len;
			return tp_err(-TAPROOT_EPROTO,
				      "malformed notification: %zu bytes left, message of %u",
				      left, left >= NLMSG_HDRLEN ? nlh->nlmsg_len : 0);
		}
		sub->off += NLMSG_ALIGN(nlh->nlmsg_len);
		if (nlh->nlmsg_type != sub->family)
			continue;
		return tp_notify_parse(nlh, n) < 0 ? -TAPROOT_EPROTO : 1;
	}
}
