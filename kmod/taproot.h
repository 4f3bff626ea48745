/* SPDX-License-Identifier: GPL-2.0 */
/*
 * taproot.ko: what the files of the module share.
 *
 * One concern per file:
 *   main.c   load and unload order, module parameters
 *   genl.c   the "taproot" generic netlink family: control
 *   dev.c    /dev/taproot: the file the per-CPU rings are mapped from
 *   ring.c   the per-CPU rings (ring.h): producer, wakeups, mmap, resize
 *   config.c the configuration (config.h) and the control lock
 *   sample.c timer sampling: per-CPU perf events, TAPROOT_REC_SAMPLE,
 *            _STACK and _SAMPLE_REF
 *   intern.c interned stacks: per-CPU slots of stack ids, the epoch
 *   events.c tracepoint probes: SWITCH, WAKING, FORK, EXEC, EXIT records
 *   follow.c the processes a TGID filter follows into (follow.h)
 *   stack.c  stacks of the current task, for samples and events
 *   uwalk.c  the user stack walker on uploaded tables (uwalk.h; plain C,
 *            also built in userspace by its fuzz target and test)
 *   ucopy.c  reads of user memory in atomic context (ucopy.h), for the
 *            stack copy and the walker, never checked by hardened usercopy
 *   utab.c   uploaded unwind tables and process mappings (utab.h): the
 *            ioctls of /dev/taproot, and their lookup by the sampler
 *
 * The ABI is <linux/taproot.h> (include/uapi/linux/taproot.h), the only
 * definition of everything userspace sees. features.h is generated per
 * kernel by scripts/kbuild from kmod/probes/: test HAS_* there rather than
 * LINUX_VERSION_CODE, since Debian backports move APIs between versions.
 *
 * Kernel symbols of the module are prefixed tap_.
 */
#ifndef _TAPROOT_KMOD_H
#define _TAPROOT_KMOD_H

#include <linux/compiler.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/types.h>
#include <linux/taproot.h>

#include "features.h"

/*
 * Each part registers itself with an init that returns 0 or -errno (and
 * logs why) and leaves nothing behind on failure; its exit undoes a
 * successful init. main.c calls them in dependency order.
 */
int tap_dev_init(void);
void tap_dev_exit(void);
/*
 * The consumer's process, which the producers leave out; 0: none. Any
 * context: a plain load, inline because every context switch asks.
 */
extern pid_t tap_dev_tgid;
static inline pid_t tap_dev_consumer_tgid(void)
{
	return READ_ONCE(tap_dev_tgid);
}

int tap_genl_init(void);
void tap_genl_exit(void);

/*
 * @t's comm into @dst, a record's TASK_COMM_LEN bytes: the name, then
 * zeros. Not the bytes after its NUL, which set_task_comm() does not clear
 * on every kernel: an earlier, longer name of the task (a thread named
 * after what it did before) would reach the consumer. @t's name may change
 * meanwhile: each byte is read once, and the copy ends at the first NUL.
 * Any context.
 */
static inline void tap_copy_comm(char *dst, const struct task_struct *t)
{
	unsigned int i;
	char c;

	BUILD_BUG_ON(TASK_COMM_LEN != 16);
	for (i = 0; i < TASK_COMM_LEN - 1 && (c = READ_ONCE(t->comm[i])); i++)
		dst[i] = c;
	memset(dst + i, 0, TASK_COMM_LEN - i);
}

/* The configuration at load, with rings of @ring_pages. */
int tap_config_init(unsigned int ring_pages);
void tap_config_exit(void);
int tap_sample_init(void);
void tap_sample_exit(void);	/* stops sampling for good, frees */

#endif /* _TAPROOT_KMOD_H */
