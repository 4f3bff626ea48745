// SPDX-License-Identifier: GPL-2.0
/*
 * taprootctl status: what the loaded module says about itself.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "taprootctl.h"

static void print_plain(const struct taproot_info *info)
{
	const char *name;
	unsigned int bit;
	bool any = false;

	printf("%-16s%s\n", "module:", "loaded");
	printf("%-16s%" PRIu32 "\n", "abi version:", info->abi_version);
	printf("%-16s%" PRIu32 "\n", "cpus:", info->nr_cpus);
	printf("%-16s%s\n", "kernel release:", info->kernel_release);
	printf("%-16s", "features:");
	for (bit = 0; bit < 64; bit++) {
		if (!(info->features & (1ULL << bit)))
			continue;
		name = taproot_feature_name(bit);
		if (name)
			printf("%s%s", any ? " " : "", name);
		else
			printf("%sbit%u", any ? " " : "", bit);
		any = true;
	}
	printf("%s\n", any ? "" : "none");
	printf("%-16s%s\n", "running:", info->running ? "yes" : "no");
	printf("%-16s%" PRIu32 "\n", "page size:", info->page_size);
	daemon_status_plain();
}

static int print_json(const struct taproot_info *info)
{
	struct taproot_json *j = json_begin();
	const char *name;
	unsigned int bit;
	char buf[8];

	if (!j)
		return EXIT_ERR;
	taproot_json_object_begin(j);
	taproot_json_key(j, "loaded");
	taproot_json_bool(j, true);
	taproot_json_key_u64(j, "abi_version", info->abi_version);
	taproot_json_key_u64(j, "nr_cpus", info->nr_cpus);
	taproot_json_key_string(j, "kernel_release", info->kernel_release);
	taproot_json_key(j, "features");
	taproot_json_array_begin(j);
	for (bit = 0; bit < 64; bit++) {
		if (!(info->features & (1ULL << bit)))
			continue;
		name = taproot_feature_name(bit);
		if (!name) {
			snprintf(buf, sizeof(buf), "bit%u", bit);
			name = buf;
		}
		taproot_json_string(j, name);
	}
	taproot_json_array_end(j);
	taproot_json_key(j, "running");
	taproot_json_bool(j, info->running);
	taproot_json_key_u64(j, "page_size", info->page_size);
	daemon_status_json(j);
	taproot_json_object_end(j);
	return json_end(j);
}

int do_status(int argc, char **argv)
{
	struct taproot_info info;
	int err;

	for (; argc; argc--, argv++) {
		if (!strcmp(*argv, "--json") || !strcmp(*argv, "-j"))
			json_output = true;
		else
			return p_usage("'status': unknown argument '%s'", *argv);
	}

	err = taproot_module_info(&info);
	if (err < 0)
		return p_err("%s", taproot_errmsg(err));

	if (json_output)
		return print_json(&info);
	print_plain(&info);
	return EXIT_OK;
}
