// SPDX-License-Identifier: GPL-2.0
/*
 * taprootctl stats: the module's per-CPU counters and their totals.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/taproot.h>

#include "taprootctl.h"

static void add(struct taproot_cpu_stats *t, const struct taproot_cpu_stats *c)
{
	t->samples += c->samples;
	t->records += c->records;
	t->bytes += c->bytes;
	t->lost_full += c->lost_full;
	t->lost_nested += c->lost_nested;
	t->ustack_faults += c->ustack_faults;
	t->switches += c->switches;
	t->switches_selected += c->switches_selected;
	t->wakings += c->wakings;
	for (unsigned int e = 0; e < TAPROOT_STATS_KUNWIND_NR; e++)
		t->unwind[e] += c->unwind[e];
	t->stacks += c->stacks;
	t->stack_refs += c->stack_refs;
	t->py_walks += c->py_walks;
	t->py_frames += c->py_frames;
	t->py_cut += c->py_cut;
	t->counted += c->counted;
	t->count_full += c->count_full;
}

static void print_row(const char *cpu, const struct taproot_cpu_stats *c)
{
	printf("%-6s %12" PRIu64 " %12" PRIu64 " %14" PRIu64 " %10" PRIu64
	       " %12" PRIu64 " %14" PRIu64 " %12" PRIu64 " %12" PRIu64
	       " %12" PRIu64 " %12" PRIu64 " %12" PRIu64 "\n", cpu, c->samples,
	       c->records, c->bytes, c->lost_full, c->lost_nested, c->ustack_faults,
	       c->switches, c->switches_selected, c->wakings, c->stacks,
	       c->stack_refs);
}

/*
 * "unwind walks:" the module's walks of user stacks on all CPUs, every
 * end met ("complete", "no-proc", ...; taproot_kunwind_name()), and the
 * samples it did not walk (unwinding off, no user part).
 */
static void print_walks(const struct taproot_cpu_stats *t)
{
	printf("unwind walks: %" PRIu64 " (", kunwind_walks(t->unwind));
	print_kunwind_ends(t->unwind);
	printf("), %" PRIu64 " samples not walked\n", t->unwind[TAPROOT_KUNWIND_NONE]);
	if (t->py_walks)
		printf("python walks: %" PRIu64 " (%" PRIu64 " frames), %" PRIu64
		       " cut short (a read failed or a frame named no code object)\n",
		       t->py_walks, t->py_frames, t->py_cut);
	if (t->counted || t->count_full)
		printf("counted:      %" PRIu64 " samples in the module's tables, %" PRIu64
		       " written one by one for want of room\n", t->counted, t->count_full);
}

static void json_counters(struct taproot_json *j, const struct taproot_cpu_stats *c)
{
	taproot_json_key_u64(j, "samples", c->samples);
	taproot_json_key_u64(j, "records", c->records);
	taproot_json_key_u64(j, "bytes", c->bytes);
	taproot_json_key_u64(j, "lost_full", c->lost_full);
	taproot_json_key_u64(j, "lost_nested", c->lost_nested);
	taproot_json_key_u64(j, "ustack_faults", c->ustack_faults);
	taproot_json_key_u64(j, "switches", c->switches);
	taproot_json_key_u64(j, "switches_selected", c->switches_selected);
	taproot_json_key_u64(j, "wakings", c->wakings);
	taproot_json_key_u64(j, "stacks", c->stacks);
	taproot_json_key_u64(j, "stack_refs", c->stack_refs);
	taproot_json_key_u64(j, "python_walks", c->py_walks);
	taproot_json_key_u64(j, "python_frames", c->py_frames);
	taproot_json_key_u64(j, "python_walks_cut", c->py_cut);
	taproot_json_key_u64(j, "counted", c->counted);
	taproot_json_key_u64(j, "count_full", c->count_full);
	/* Samples by how the module's walk ended; "none": not walked. */
	taproot_json_key(j, "unwind");
	taproot_json_object_begin(j);
	for (unsigned int e = 0; e < TAPROOT_STATS_KUNWIND_NR; e++)
		taproot_json_key_u64(j, taproot_kunwind_name(e), c->unwind[e]);
	taproot_json_object_end(j);
}

int do_stats(int argc, char **argv)
{
	struct taproot_cpu_stats *cpus, total = { 0 };
	struct taproot_module_stats ms;
	struct taproot_json *j;
	struct taproot_nl *nl;
	char name[16];
	bool running;
	size_t nr, i;
	int err, ret = EXIT_OK;

	err = parse_json_flag(&argc, argv);
	if (err != EXIT_OK)
		return err;
	if (argc)
		return p_usage("'stats': unknown argument '%s'", argv[0]);
	err = taproot_nl_open(&nl);
	if (err < 0)
		return p_err("%s", taproot_errmsg(err));
	err = taproot_nl_get_stats_all(nl, &running, &ms, &cpus, &nr);
	taproot_nl_close(nl);
	if (err < 0)
		return p_err("%s", taproot_errmsg(err));
	for (i = 0; i < nr; i++)
		add(&total, &cpus[i]);

	if (!json_output) {
		printf("running: %s\n", running ? "yes" : "no");
		/* Children followed by the module (config flag follow). */
		if (ms.has_follow)
			printf("followed: %" PRIu32 " processes now, %" PRIu64
			       " forks not followed (the set was full)\n",
			       ms.followed, ms.follow_full);
		/* What the consumer uploaded for the module's unwinder. */
		if (ms.has_unwind)
			printf("unwind uploads: %" PRIu32 " tables, %" PRIu32
			       " processes, %" PRIu64 " bytes\n", ms.unwind_tables,
			       ms.unwind_procs, ms.unwind_mem_used);
		print_walks(&total);
		printf("%-6s %12s %12s %14s %10s %12s %14s %12s %12s %12s %12s %12s\n",
		       "cpu", "samples", "records", "bytes", "lost-full",
		       "lost-nested", "ustack-faults", "switches", "sw-selected",
		       "wakings", "stacks", "stack-refs");
		for (i = 0; i < nr; i++) {
			snprintf(name, sizeof(name), "%" PRIu32, cpus[i].cpu);
			print_row(name, &cpus[i]);
		}
		print_row("total", &total);
		goto out;
	}

	j = json_begin();
	if (!j) {
		ret = EXIT_ERR;
		goto out;
	}
	taproot_json_object_begin(j);
	taproot_json_key(j, "running");
	taproot_json_bool(j, running);
	if (ms.has_follow) {
		taproot_json_key_u64(j, "followed", ms.followed);
		taproot_json_key_u64(j, "follow_full", ms.follow_full);
	}
	if (ms.has_unwind) {
		taproot_json_key_u64(j, "unwind_tables", ms.unwind_tables);
		taproot_json_key_u64(j, "unwind_procs", ms.unwind_procs);
		taproot_json_key_u64(j, "unwind_mem_used", ms.unwind_mem_used);
	}
	taproot_json_key(j, "cpus");
	taproot_json_array_begin(j);
	for (i = 0; i < nr; i++) {
		taproot_json_object_begin(j);
		taproot_json_key_u64(j, "cpu", cpus[i].cpu);
		json_counters(j, &cpus[i]);
		taproot_json_object_end(j);
	}
	taproot_json_array_end(j);
	taproot_json_key(j, "total");
	taproot_json_object_begin(j);
	json_counters(j, &total);
	taproot_json_object_end(j);
	taproot_json_object_end(j);
	ret = json_end(j);
out:
	free(cpus);
	return ret;
}
