// SPDX-License-Identifier: GPL-2.0
/*
 * Error codes and messages. A failing call records its message here, per
 * thread, through tp_err(); taproot_errmsg() gives it back when asked about
 * the same code.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <netlink/errno.h>

#include "util/util.h"

static const char *const tp_messages[] = {
#define TAPROOT_E_MSG(name, msg) [TAPROOT_E##name - TAPROOT_E_FIRST - 1] = msg,
	TAPROOT_ERRORS(TAPROOT_E_MSG)
#undef TAPROOT_E_MSG
};

static _Thread_local struct {
	int err;
	char msg[1024];
} tp_last;

const char *taproot_strerror(int err)
{
	const char *s;

	if (err == 0)
		return "success";
	if (err > 0)
		return "unknown error";
	err = -err;
	if (err > TAPROOT_E_FIRST && err < TAPROOT_E_LAST)
		return tp_messages[err - TAPROOT_E_FIRST - 1];
	s = strerrordesc_np(err);
	return s ? s : "unknown error";
}

const char *taproot_errmsg(int err)
{
	if (err < 0 && tp_last.err == err && tp_last.msg[0])
		return tp_last.msg;
	return taproot_strerror(err);
}

int tp_err(int err, const char *fmt, ...)
{
	va_list ap;

	tp_last.err = err;
	if (!fmt) {
		snprintf(tp_last.msg, sizeof(tp_last.msg), "%s",
			 taproot_strerror(err));
		return err;
	}
	va_start(ap, fmt);
	vsnprintf(tp_last.msg, sizeof(tp_last.msg), fmt, ap);
	va_end(ap);
	return err;
}

int tp_nlerr_to_errno(int nlerr)
{
	switch (nlerr < 0 ? -nlerr : nlerr) {
	case NLE_SUCCESS:		return 0;
	case NLE_INTR:			return -EINTR;
	case NLE_BAD_SOCK:		return -EBADF;
	case NLE_AGAIN:			return -EAGAIN;
	case NLE_NOMEM:			return -ENOMEM;
	case NLE_EXIST:			return -EEXIST;
	case NLE_INVAL:			return -EINVAL;
	case NLE_RANGE:			return -ERANGE;
	case NLE_MSGSIZE:		return -EMSGSIZE;
	case NLE_OPNOTSUPP:		return -EOPNOTSUPP;
	case NLE_AF_NOSUPPORT:		return -EAFNOSUPPORT;
	case NLE_OBJ_NOTFOUND:		return -ENOENT;
	case NLE_NOATTR:		return -ENODATA;
	case NLE_MISSING_ATTR:		return -ENODATA;
	case NLE_AF_MISMATCH:		return -EPROTO;
	case NLE_SEQ_MISMATCH:		return -EPROTO;
	case NLE_MSG_OVERFLOW:		return -ENOBUFS;
	case NLE_MSG_TRUNC:		return -EMSGSIZE;
	case NLE_NOADDR:		return -EADDRNOTAVAIL;
	case NLE_SRCRT_NOSUPPORT:	return -EOPNOTSUPP;
	case NLE_MSG_TOOSHORT:		return -EPROTO;
	case NLE_MSGTYPE_NOSUPPORT:	return -EOPNOTSUPP;
	case NLE_OBJ_MISMATCH:		return -EINVAL;
	case NLE_NOCACHE:		return -ENOENT;
	case NLE_BUSY:			return -EBUSY;
	case NLE_PROTO_MISMATCH:	return -EPROTONOSUPPORT;
	case NLE_NOACCESS:		return -EACCES;
	case NLE_PERM:			return -EPERM;
	case NLE_PKTLOC_FILE:		return -ENOENT;
	case NLE_PARSE_ERR:		return -EINVAL;
	case NLE_NODEV:			return -ENODEV;
	case NLE_IMMUTABLE:		return -EPERM;
	case NLE_DUMP_INTR:		return -EINTR;
	case NLE_ATTRSIZE:		return -ERANGE;
	default:			return -EIO;
	}
}
