// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: an ELF file's bytes through what the daemon does with
 * each file a process maps: the ELF cache's open and checks
 * (tp_elf_open(), loadable, as tp_elfs_get() calls it), the CFI table
 * compiler (tp_cfi_compile(), as the unwinder calls it) and the
 * symbolizer (taproot_sym_elf(): symbol tables, DWARF lines and inline
 * chains) at the table's row addresses and the entry point.
 *
 * The input is written to a memfd and opened through /proc/self/fd/N, so
 * the library reads it with its own open/fstat/libelf path, unchanged.
 * No separate debug file is looked for: tp_elf_open() leaves the file's
 * process path unset, which is what tp_find_debug() keys on.
 *
 * The table's invariants are checked (rows strictly ascending, rule ids
 * within the rules, rule 0 "none"); a breach aborts.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <gelf.h>

#include "fuzz.h"
#include "process/process-private.h"
#include "unwind/unwind-private.h"


#define SYM_LOOKUPS	32	/* addresses symbolized per input */


int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_input_init("fuzz-elf");
	return 0;
}

static void check_table(const struct tp_cfi_table *t)
{
	check(t->nr_rules >= 1 && t->rules[0].kind == TP_CFI_NONE);
	for (uint32_t i = 0; i < t->nr; i++) {
		check(t->row_rule[i] < t->nr_rules);
		check(i == 0 || t->pcs[i - 1] < t->pcs[i]);
		check(tp_cfi_lookup(t, t->base + t->pcs[i]) == t->row_rule[i]);
	}
	for (uint32_t i = 0; i < t->nr_rules; i++)
		check(t->rules[i].kind <= TP_CFI_SLOW);
}

static void symbolize(struct taproot_sym *s, struct taproot_elf *e, uint64_t vaddr)
{
	const struct taproot_frame *f;
	int nr;

	nr = taproot_sym_elf(s, e, vaddr, TAPROOT_SYM_RETADDR, &f);
	check(nr >= 1);
	for (int i = 0; i < nr; i++) {
		check(f[i].function && f[i].map_path);
		/* Every string is read to its end, as the profile writer does. */
		check(strlen(f[i].function) < SIZE_MAX);
		if (f[i].file)
			check(strlen(f[i].file) < SIZE_MAX);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tp_cfi_table *t = NULL;
	struct taproot_elf *e = NULL;
	struct taproot_sym *s = NULL;
	const uint8_t *id;
	size_t id_len;
	uint64_t bias;
	GElf_Ehdr eh;
	int err;

	fuzz_input_write(data, size);
	err = tp_elf_open(fuzz_path, true, &e);
	if (err) {
		check(err < 0 && !e);
		return 0;
	}
	id = taproot_elf_build_id(e, &id_len);
	check(id_len <= TP_BUILD_ID_MAX && (!id_len || id));
	for (size_t i = 0; i < e->nr_segs; i++)
		taproot_elf_bias(e, 0x400000, 0x500000, e->segs[i].offset, &bias);

	err = tp_cfi_compile(e->elf, &t);
	if (!err)
		check_table(t);
	else
		check(err < 0 && !t);

	if (taproot_sym_new(NULL, NULL, &s) == 0) {
		if (gelf_getehdr(e->elf, &eh))
			symbolize(s, e, eh.e_entry + 1);
		for (uint32_t i = 0; t && i < t->nr && i < SYM_LOOKUPS; i++)
			symbolize(s, e, t->base + t->pcs[i] + 1);
		for (size_t i = 0; i < e->nr_segs && i < 4; i++)
			symbolize(s, e, e->segs[i].vaddr + 1);
		taproot_sym_free(s);
	}
	tp_cfi_table_free(t);
	tp_elf_free(e);
	return 0;
}
