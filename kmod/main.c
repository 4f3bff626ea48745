// SPDX-License-Identifier: GPL-2.0
/*
 * taproot.ko: load and unload.
 *
 * Load order follows what depends on what: the parts that hold data first,
 * the device that exposes them next, and control (netlink) last, so that
 * no command can reach something not yet set up. Unload is the mirror
 * image: control goes first, so nothing new starts while the rest is torn
 * down.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/init.h>
#include <linux/log2.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/stringify.h>

#include "events.h"
#include "count.h"
#include "intern.h"
#include "taproot.h"
#include "ring.h"
#include "stack.h"
#include "version.h"	/* TAP_MODULE_VERSION, written by scripts/kbuild */

/*
 * ring_pages: data pages of each per-CPU ring at load, a power of two in
 * [TAPROOT_RING_PAGES_MIN, TAPROOT_RING_PAGES_MAX] (the load is refused
 * otherwise). Read-only once loaded: resizing the rings at run time is a
 * netlink command (TAPROOT_A_CFG_RING_PAGES), not a write to
 * /sys/module/taproot/parameters.
 */
static unsigned int tap_ring_pages __ro_after_init = TAPROOT_RING_PAGES_DEFAULT;
module_param_named(ring_pages, tap_ring_pages, uint, 0444);
MODULE_PARM_DESC(ring_pages,
		 "data pages per CPU ring, a power of two in ["
		 __stringify(TAPROOT_RING_PAGES_MIN) ", "
		 __stringify(TAPROOT_RING_PAGES_MAX) "] (default "
		 __stringify(TAPROOT_RING_PAGES_DEFAULT) ")");

static int __init tap_check_params(void)
{
	/* The ring indexes its data with "position & (size - 1)". */
	if (!is_power_of_2(tap_ring_pages) ||
	    tap_ring_pages < TAPROOT_RING_PAGES_MIN ||
	    tap_ring_pages > TAPROOT_RING_PAGES_MAX) {
		pr_err("ring_pages=%u: must be a power of two in [%u, %u]\n",
		       tap_ring_pages, TAPROOT_RING_PAGES_MIN,
		       TAPROOT_RING_PAGES_MAX);
		return -EINVAL;
	}
	return 0;
}

static int __init tap_init(void)
{
	int err;

	err = tap_check_params();
	if (err)
		return err;

	err = tap_rings_init(tap_ring_pages);
	if (err)
		return err;

	err = tap_config_init(tap_ring_pages);
	if (err)
		goto err_rings;

	err = tap_intern_init();
	if (err)
		goto err_config;

	err = tap_stack_init();
	if (err)
		goto err_intern;

	err = tap_sample_init();
	if (err)
		goto err_stack;

	tap_events_init();

	err = tap_genl_init();
	if (err)
		goto err_sample;

	/*
	 * Last: once /dev/taproot appears a consumer may open it (udev
	 * starts taprootd) and at once configure over netlink.
	 */
	err = tap_dev_init();
	if (err)
		goto err_genl;

	pr_info("loaded: ABI %u, ring_pages=%u\n", TAPROOT_ABI_VERSION,
		tap_ring_pages);
	return 0;

err_genl:
	tap_genl_exit();
err_sample:
	tap_sample_exit();
err_stack:
	tap_stack_exit();
err_intern:
	tap_intern_exit();
err_config:
	tap_config_exit();
err_rings:
	tap_rings_exit();
	return err;
}

static void __exit tap_exit(void)
{
	tap_dev_exit();		/* no open file holds the module: no consumer */
	tap_sample_exit();	/* no handler runs after it */
	tap_events_exit();	/* nor a probe after this */
	tap_count_exit();
	tap_genl_exit();
	tap_stack_exit();	/* after the last walk (sample, probe) */
	tap_intern_exit();
	tap_config_exit();
	tap_rings_exit();	/* last: every producer and reader is gone */
}

module_init(tap_init);
module_exit(tap_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("taproot: continuous sampling profiler");
MODULE_VERSION(TAP_MODULE_VERSION);
