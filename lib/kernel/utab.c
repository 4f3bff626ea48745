// SPDX-License-Identifier: GPL-2.0
/*
 * Uploads of unwind tables and process mappings to the module, and the
 * drain of its counted stacks: the ioctls of an open /dev/taproot
 * (<linux/taproot.h>, "Unwinding in the module", "Counted stacks").
 * Each call is one ioctl; the module validates everything, and each of its
 * refusals gets a message that says what it means.
 */
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>

#include "kernel/kernel-private.h"

/* An ioctl, retried when a signal interrupted it before it did anything. */
static int tp_utab_ioctl(struct taproot_ring *r, unsigned long cmd, void *arg)
{
	int ret;

	if (!r || r->fd < 0)
		return -EBADF;
	do
		ret = ioctl(r->fd, cmd, arg);
	while (ret < 0 && errno == EINTR);
	return ret < 0 ? -errno : 0;
}

/* The message of an error that any of the calls may get. */
static int tp_utab_err(int err, const char *what)
{
	switch (err) {
	case -ENOTTY:
		return tp_err(err, "%s: this taproot module takes no unwind uploads", what);
	case -ENOSPC:
		return tp_err(err, "%s: beyond the module's unwind memory (config unwind-mem)",
			      what);
	case -EFAULT:
		return tp_err(err, "%s: the module could not read the upload", what);
	case -EOPNOTSUPP:
		return tp_err(err, "%s: this kernel gives the module no way to tell "
			      "when mappings change", what);
	default:
		return tp_err(err, "%s: %s", what, strerror(-err));
	}
}

/* The message of a refusal the uploads of a process share: ESTALE, ESRCH. */
static int tp_utab_proc_err(int err, uint32_t pid)
{
	if (err == -ESTALE)
		return tp_err(err, "process %u: its address space changed since the token",
			      pid);
	return tp_err(err, "process %u: no such process", pid);
}

int taproot_ring_table_add(struct taproot_ring *r, const struct taproot_table_add *t,
			   uint32_t *table_id)
{
	struct taproot_table_add a = *t;
	int err;

	a.table_id = 0;
	err = tp_utab_ioctl(r, TAPROOT_IOC_TABLE_ADD, &a);
	if (err == -EEXIST) {
		*table_id = a.table_id;
		return 1;
	}
	if (err == -EINVAL)
		return tp_err(err, "unwind table upload: the module refused the table "
			      "(%u rows, %u rules) as malformed", t->nr_rows, t->nr_rules);
	if (err < 0)
		return tp_utab_err(err, "unwind table upload");
	*table_id = a.table_id;
	return 0;
}

int taproot_ring_table_del(struct taproot_ring *r, uint32_t table_id)
{
	int err = tp_utab_ioctl(r, TAPROOT_IOC_TABLE_DEL, &table_id);

	if (err == -ENOENT)
		return tp_err(err, "unwind table %u: not uploaded", table_id);
	return err < 0 ? tp_utab_err(err, "unwind table delete") : 0;
}

int taproot_ring_proc_token(struct taproot_ring *r, uint32_t pid, uint64_t *token)
{
	struct taproot_proc_token a = { .pid = pid };
	int err = tp_utab_ioctl(r, TAPROOT_IOC_PROC_TOKEN, &a);

	if (err == -ESRCH)
		return tp_utab_proc_err(err, pid);
	if (err == -EINVAL)
		return tp_err(err, "process %u: a kernel thread has no mappings", pid);
	if (err < 0)
		return tp_utab_err(err, "address space token");
	*token = a.token;
	return 0;
}

int taproot_ring_maps_set(struct taproot_ring *r, uint32_t pid, uint64_t token,
			  const struct taproot_proc_map *maps, uint32_t nr)
{
	struct taproot_maps_set a = {
		.pid = pid,
		.nr = nr,
		.maps = (uint64_t)(uintptr_t)maps,
		.token = token,
	};
	int err = tp_utab_ioctl(r, TAPROOT_IOC_MAPS_SET, &a);

	switch (err) {
	case 0:
		return 0;
	case -ESTALE:
	case -ESRCH:
		return tp_utab_proc_err(err, pid);
	case -ENOENT:
		return tp_err(err, "process %u: a mapping names a table not uploaded", pid);
	case -EINVAL:
		return tp_err(err, "process %u: the module refused its %u mappings as "
			      "malformed (sorted, disjoint, start < end, known flags)",
			      pid, nr);
	default:
		return tp_utab_err(err, "mappings upload");
	}
}

/* A runtime's layout set (@cmd, @a): 0 or why not, for @what ("interpreter", "JVM"). */
static int tp_utab_runtime_set(struct taproot_ring *r, unsigned long cmd, void *a, uint32_t pid,
			       const char *what)
{
	int err = tp_utab_ioctl(r, cmd, a);

	switch (err) {
	case 0:
		return 0;
	case -ESTALE:
	case -ESRCH:
		return tp_utab_proc_err(err, pid);
	case -ENOENT:
		return tp_err(err, "process %u: no mappings uploaded for its %s", pid, what);
	case -EPERM:
		return tp_err(err, "process %u: describing its %s takes CAP_PERFMON "
			      "or CAP_SYS_ADMIN, now", pid, what);
	case -EINVAL:
		return tp_err(err, "process %u: the module refused its %s's layout", pid, what);
	case -ENOTTY:
		return tp_err(err, "process %u: this taproot module does not walk its %s",
			      pid, what);
	default:
		return tp_utab_err(err, "runtime layout upload");
	}
}

int taproot_ring_python_set(struct taproot_ring *r, uint32_t pid, uint64_t token,
			    const struct taproot_python_layout *layout)
{
	struct taproot_python_set a = { .pid = pid, .token = token };

	if (layout)
		a.layout = *layout;
	else
		a.forget = 1;
	return tp_utab_runtime_set(r, TAPROOT_IOC_PYTHON_SET, &a, pid, "interpreter");
}

int taproot_ring_jvm_set(struct taproot_ring *r, uint32_t pid, uint64_t token,
			 const struct taproot_jvm_layout *layout)
{
	struct taproot_jvm_set a = { .pid = pid, .token = token };

	if (layout)
		a.layout = *layout;
	else
		a.forget = 1;
	return tp_utab_runtime_set(r, TAPROOT_IOC_JVM_SET, &a, pid, "JVM");
}

int taproot_ring_counts_drain(struct taproot_ring *r, struct taproot_count *entries,
			      uint32_t max, uint32_t *nr)
{
	struct taproot_counts_drain a = { .entries = (uintptr_t)entries, .max = max };
	int err = tp_utab_ioctl(r, TAPROOT_IOC_COUNTS_DRAIN, &a);

	*nr = 0;
	switch (err) {
	case 0:
		if (a.nr > max)
			return tp_err(-TAPROOT_EPROTO, "counts drain: %u entries into room for %u",
				      a.nr, max);
		*nr = a.nr;
		return 0;
	case -ENOSPC:
		return tp_err(err, "counts drain: room for %u entries is too little for the "
			      "module's tables", max);
	case -ENOTTY:
		return tp_err(err, "this taproot module counts no stacks");
	default:
		return tp_utab_err(err, "counts drain");
	}
}
