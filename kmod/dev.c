// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/taproot: the file the per-CPU rings are mapped from and polled on
 * (<linux/taproot.h>, "The rings"); ring.c does the rings, this file the
 * file.
 *
 * Privilege: the rings carry raw user stack bytes of every process, so the
 * node is 0600 and open() also wants CAP_PERFMON or CAP_SYS_ADMIN, the test
 * perf_event_open() applies to system-wide events. It is made once, at
 * open, against the opener's credentials, as perf does for its fd: mmap and
 * poll trust the open file. mmap() does not test perfmon_capable() again:
 * it would test whoever maps, not the file's credentials, so it would break
 * an agent that opens and then drops its capabilities, and it would protect
 * nothing, since a process that receives the fd can equally receive a
 * mapping made before it was passed. Whoever holds the open file holds the
 * right to read the rings.
 *
 * One consumer at a time: a second open() fails with -EBUSY until the
 * first file is released, that is until it is closed and every mapping of
 * it is gone (a mapping holds its file). Two readers would race on each
 * ring's data_tail, each releasing bytes the other has not read. The
 * opener's thread group is the consumer: sample.c leaves it out of the
 * profile (tap_dev_consumer_tgid()).
 *
 * Lifetime: .owner pins the module while a file is open, and a mapping
 * holds its file, so the module never unloads under a mapped ring.
 *
 * Uploads: the ioctls upload unwind tables and process mappings
 * (utab.c). They belong to the file: its release frees them, before the
 * device is free for another opener. TAPROOT_IOC_COUNTS_DRAIN takes the
 * counted stacks out (count.c), which an open empties.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/bits.h>
#include <linux/capability.h>
#include <linux/cpumask.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/poll.h>
#include <linux/sched.h>

#include "count.h"
#include "intern.h"
#include "taproot.h"
#include "ring.h"
#include "utab.h"

static atomic_t tap_dev_open_count = ATOMIC_INIT(0);

/* Of the opener, 0 while none: written here only, read by the producers. */
pid_t tap_dev_tgid;

static int tap_dev_open(struct inode *inode, struct file *file)
{
	/* Privilege first: the unprivileged learn nothing, not even busy. */
	if (!perfmon_capable())
		return -EPERM;
	if (atomic_cmpxchg(&tap_dev_open_count, 0, 1))
		return -EBUSY;

	WRITE_ONCE(tap_dev_tgid, task_tgid_nr(current));
	/* This reader has seen none of the STACK records written so far. */
	tap_intern_new_epoch();
	/* Nor can it name the stacks counted for the last one. */
	tap_count_clear();
	file->private_data = NULL;
	/* Offsets select rings (TAPROOT_MMAP_OFFSET); there is no stream. */
	return nonseekable_open(inode, file);
}

static int tap_dev_release(struct inode *inode, struct file *file)
{
	/* Before the next opener may come: its store is a new one. */
	tap_utab_release(file);
	WRITE_ONCE(tap_dev_tgid, 0);
	atomic_set_release(&tap_dev_open_count, 0);
	return 0;
}

/*
 * Every close() of a descriptor of the file. A thread blocked in poll() on
 * it keeps the file open: without data it would sleep on, perhaps for
 * ever (sampling stopped), and the file would hold the one consumer slot.
 * Woken, its poll() finds the descriptor gone and returns POLLNVAL; the
 * file is released when that poll() lets go of it.
 */
static int tap_dev_flush(struct file *file, fl_owner_t id)
{
	tap_rings_wake_all();
	return 0;
}

/* Pages of the file offset that select a ring; the rest is the window. */
#define TAP_DEV_CPU_PGSHIFT	(TAPROOT_MMAP_CPU_SHIFT - PAGE_SHIFT)

/*
 * Offset TAPROOT_MMAP_OFFSET(cpu) + a page offset within that ring's window
 * (see <linux/taproot.h>). Shared mappings only, as perf and BPF rings: a
 * private copy of the consumer page would swallow the reader's data_tail.
 * A file opened without write access gets no VM_SHARED from the kernel
 * (do_mmap() makes its MAP_SHARED a read-only private mapping): -EINVAL
 * too. A CPU without a ring, or a range outside [0, 2P+2D): -EINVAL. A
 * writable mapping past the consumer page, or an executable one: -EPERM.
 */
static int tap_dev_mmap(struct file *file, struct vm_area_struct *vma)
{
	unsigned long cpu = vma->vm_pgoff >> TAP_DEV_CPU_PGSHIFT;
	unsigned long pgoff = vma->vm_pgoff & (BIT(TAP_DEV_CPU_PGSHIFT) - 1);

	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	if (cpu >= nr_cpu_ids || !cpu_possible(cpu))
		return -EINVAL;
	return tap_ring_mmap(cpu, vma, pgoff);
}

static __poll_t tap_dev_poll(struct file *file, struct poll_table_struct *wait)
{
	return tap_rings_poll(file, wait);
}

/*
 * The uploads of unwind tables and process mappings (utab.c). Their
 * structures have the same layout for 32-bit callers (user pointers are
 * __u64), so a compat caller's argument only needs compat_ptr().
 */
static long tap_dev_ioctl(struct file *file, unsigned int cmd,
			  unsigned long arg)
{
	if (cmd == TAPROOT_IOC_COUNTS_DRAIN)
		return tap_count_drain_ioctl((void __user *)arg);
	return tap_utab_ioctl(file, cmd, arg);
}

static const struct file_operations tap_dev_fops = {
	.owner = THIS_MODULE,
	.open = tap_dev_open,
	.flush = tap_dev_flush,
	.release = tap_dev_release,
	.mmap = tap_dev_mmap,
	.poll = tap_dev_poll,
	.unlocked_ioctl = tap_dev_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};

static struct miscdevice tap_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = TAPROOT_DEVICE_NAME,
	.fops = &tap_dev_fops,
	.mode = 0600,
};

int __init tap_dev_init(void)
{
	int err;

	err = misc_register(&tap_misc);
	if (err)
		pr_err("cannot register /dev/%s: %d\n", TAPROOT_DEVICE_NAME,
		       err);
	return err;
}

void tap_dev_exit(void)
{
	misc_deregister(&tap_misc);
}
