// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/taproot: the file the per-CPU rings are mapped from and polled on
 * (<linux/taproot.h>, "The rings"). For now it only opens and closes.
 *
 * Privilege: the rings carry raw user stack bytes of every process, so the
 * node is 0600 and open() also wants CAP_PERFMON or CAP_SYS_ADMIN, the test
 * perf_event_open() applies to system-wide events. It is made once, at
 * open, as perf does for its fd: mmap and poll trust the open file.
 *
 * Lifetime: .owner pins the module while a file is open, and a mapping
 * holds its file, so the module never unloads under a mapped ring.
 *
 * file->private_data: misc_open() points it at tap_misc; open() clears it.
 * Per-open reader state, when mmap and poll need some, is allocated in
 * open() into private_data and freed in a .release. State of a mapping
 * belongs to the VMA instead (vm_private_data): a mapping outlives close().
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>

#include "taproot.h"

static int tap_dev_open(struct inode *inode, struct file *file)
{
	if (!perfmon_capable())
		return -EPERM;

	file->private_data = NULL;
	/* Offsets select rings (TAPROOT_MMAP_OFFSET); there is no stream. */
	return nonseekable_open(inode, file);
}

static const struct file_operations tap_dev_fops = {
	.owner = THIS_MODULE,
	.open = tap_dev_open,
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
