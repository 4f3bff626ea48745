// SPDX-License-Identifier: GPL-2.0
/*
 * taprootctl start | stop: switch sampling on and off on every CPU.
 */
#include <stdio.h>

#include "taprootctl.h"

static int session(int argc, char **argv, const char *name,
		   int (*fn)(struct taproot_nl *nl))
{
	struct taproot_nl *nl;
	int err;

	err = parse_json_flag(&argc, argv);
	if (err != EXIT_OK)
		return err;
	if (argc)
		return p_usage("'%s' takes no arguments, not '%s'", name, argv[0]);
	err = taproot_nl_open(&nl);
	if (err < 0)
		return p_err("%s", taproot_errmsg(err));
	err = fn(nl);
	taproot_nl_close(nl);
	if (err < 0)
		return p_err("%s", taproot_errmsg(err));
	return p_ok();
}

int do_start(int argc, char **argv)
{
	return session(argc, argv, "start", taproot_nl_start);
}

int do_stop(int argc, char **argv)
{
	return session(argc, argv, "stop", taproot_nl_stop);
}
