// SPDX-License-Identifier: GPL-2.0
/*
 * taprootctl config [show] | config set KEY VALUE...: what the module
 * samples, read and changed in the words of taproot_config_set_kv().
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <linux/taproot.h>

#include "taprootctl.h"

/* "sample,switch", "none", with "bitN" for bits without a name. */
static void events_string(uint32_t events, char *buf, size_t len)
{
	const char *name;
	unsigned int bit;
	size_t off = 0;

	buf[0] = '\0';
	for (bit = 0; bit < 32 && off < len; bit++) {
		if (!(events & (1U << bit)))
			continue;
		name = taproot_event_name(bit);
		if (name)
			off += (size_t)snprintf(buf + off, len - off, "%s%s",
						off ? "," : "", name);
		else
			off += (size_t)snprintf(buf + off, len - off, "%sbit%u",
						off ? "," : "", bit);
	}
	if (!off)
		snprintf(buf, len, "none");
}

/* The flag keys of taproot_config_set_kv(), in the order shown. */
static const struct {
	const char *key;	/* "ustack-private": the plain output's */
	const char *json;	/* "ustack_private" */
	uint32_t flag;
} flag_keys[] = {
	{ "idle", "idle", TAPROOT_CFG_F_SAMPLE_IDLE },
	{ "follow", "follow", TAPROOT_CFG_F_FOLLOW },
	{ "unwind", "unwind", TAPROOT_CFG_F_UNWIND },
	{ "ustack-private", "ustack_private", TAPROOT_CFG_F_USTACK_PRIVATE },
	{ "unwind-verify", "unwind_verify", TAPROOT_CFG_F_UNWIND_VERIFY },
	{ "count", "count", TAPROOT_CFG_F_COUNT },
};
#define NR_FLAG_KEYS (sizeof(flag_keys) / sizeof(flag_keys[0]))

static void print_plain(const struct taproot_config *c)
{
	uint32_t i, known = 0;
	char events[256], key[32];

	events_string(c->events, events, sizeof(events));
	printf("%-16s%" PRIu32 "\n", "freq:", c->freq_hz);
	printf("%-16s%" PRIu32 "\n", "kstack:", c->kstack_depth);
	printf("%-16s%" PRIu32 "\n", "ustack:", c->ustack_bytes);
	printf("%-16s%s\n", "events:", events);
	for (i = 0; i < NR_FLAG_KEYS; i++) {
		snprintf(key, sizeof(key), "%s:", flag_keys[i].key);
		printf("%-16s%s", key, c->flags & flag_keys[i].flag ? "on" : "off");
		known |= flag_keys[i].flag;
		/* Bits of a newer module than this tool, after the last flag key. */
		if (i == NR_FLAG_KEYS - 1 && (c->flags & ~known))
			printf(" (other flags 0x%" PRIx32 ")", c->flags & ~known);
		putchar('\n');
	}
	printf("%-16s%" PRIu32 "\n", "unwind-frames:", c->unwind_frames);
	printf("%-16s%" PRIu32 " MiB\n", "unwind-mem:", c->unwind_mem_mib);
	printf("%-16s%" PRIu32 "\n", "ring-pages:", c->ring_pages);
	printf("%-16s%" PRIu32 "\n", "watermark:", c->watermark);
	printf("%-16s%" PRIu32 "\n", "sched-one-in:", c->sched_one_in);
	printf("%-16s", "pids:");
	if (!c->nr_tgids)
		printf("all");
	for (i = 0; i < c->nr_tgids; i++)
		printf("%s%" PRIu32, i ? "," : "", c->tgids[i]);
	putchar('\n');
}

static int print_json(const struct taproot_config *c)
{
	struct taproot_json *j = json_begin();
	const char *name;
	unsigned int bit;
	char buf[16];
	uint32_t i;

	if (!j)
		return EXIT_ERR;
	taproot_json_object_begin(j);
	taproot_json_key_u64(j, "freq", c->freq_hz);
	taproot_json_key_u64(j, "kstack", c->kstack_depth);
	taproot_json_key_u64(j, "ustack", c->ustack_bytes);
	taproot_json_key(j, "events");
	taproot_json_array_begin(j);
	for (bit = 0; bit < 32; bit++) {
		if (!(c->events & (1U << bit)))
			continue;
		name = taproot_event_name(bit);
		if (!name) {
			snprintf(buf, sizeof(buf), "bit%u", bit);
			name = buf;
		}
		taproot_json_string(j, name);
	}
	taproot_json_array_end(j);
	for (i = 0; i < NR_FLAG_KEYS; i++) {
		taproot_json_key(j, flag_keys[i].json);
		taproot_json_bool(j, c->flags & flag_keys[i].flag);
	}
	taproot_json_key_u64(j, "flags", c->flags);
	taproot_json_key_u64(j, "unwind_frames", c->unwind_frames);
	taproot_json_key_u64(j, "unwind_mem_mib", c->unwind_mem_mib);
	taproot_json_key_u64(j, "ring_pages", c->ring_pages);
	taproot_json_key_u64(j, "watermark", c->watermark);
	taproot_json_key_u64(j, "sched_one_in", c->sched_one_in);
	/* Empty: the whole system. */
	taproot_json_key(j, "pids");
	taproot_json_array_begin(j);
	for (i = 0; i < c->nr_tgids; i++)
		taproot_json_u64(j, c->tgids[i]);
	taproot_json_array_end(j);
	taproot_json_object_end(j);
	return json_end(j);
}

static int do_config_show(int argc, char **argv)
{
	struct taproot_config cfg;
	struct taproot_nl *nl;
	int err;

	if (argc)
		return p_usage("'config show' takes no arguments, not '%s'", argv[0]);
	err = taproot_nl_open(&nl);
	if (err < 0)
		return p_err("%s", taproot_errmsg(err));
	err = taproot_nl_get_config(nl, &cfg);
	taproot_nl_close(nl);
	if (err < 0)
		return p_err("%s", taproot_errmsg(err));
	if (json_output)
		return print_json(&cfg);
	print_plain(&cfg);
	return EXIT_OK;
}

static int do_config_set(int argc, char **argv)
{
	struct taproot_config cfg = { 0 };
	struct taproot_nl *nl;
	int err;

	if (argc < 2)
		return p_usage("'config set' needs at least 2 arguments (KEY VALUE)");
	if (argc % 2)
		return p_usage("'config set': key '%s' has no VALUE", argv[argc - 1]);
	for (; argc; argc -= 2, argv += 2) {
		err = taproot_config_set_kv(&cfg, argv[0], argv[1]);
		if (err < 0)
			return p_usage("'config set': %s", taproot_errmsg(err));
	}

	err = taproot_nl_open(&nl);
	if (err < 0)
		return p_err("%s", taproot_errmsg(err));
	err = taproot_nl_set_config(nl, &cfg);
	taproot_nl_close(nl);
	if (err < 0)
		return p_err("%s", taproot_errmsg(err));
	return p_ok();
}

static const struct taproot_command config_commands[] = {
	{ "show", do_config_show, "", "show the configuration", NULL },
	{ "set", do_config_set, "KEY VALUE [KEY VALUE]...", "change the configuration", NULL },
	{ NULL },
};

int do_config(int argc, char **argv)
{
	const struct taproot_command *c;
	int err;

	err = parse_json_flag(&argc, argv);
	if (err != EXIT_OK)
		return err;
	if (!argc)
		return do_config_show(0, argv);
	err = taproot_cmd_find(config_commands, argv[0], &c);
	if (err < 0)
		return p_usage("'config': %s (show, set)", taproot_errmsg(err));
	return c->fn(argc - 1, argv + 1);
}
