// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: bytes as a Go function table (.gopclntab) through the
 * reader the symbolizer and the unwinder use (lib/runtime/gopclntab.c):
 * tp_gotab_open(), then every lookup at the entry and middle of its first
 * functions, the inline trees' read from the same bytes (as if they held
 * the segment of the trees too, at the table's address). Seeds: the tables of the unit test's Go fixtures, whole and
 * cut short (tests/fuzz/run).
 *
 * What a success promises is checked: functions in address order, each
 * found again by its own entry; a pc's function holds it; a name and a
 * file that are strings. A breach aborts; a read outside the input is
 * the sanitizer's to catch.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "runtime/runtime.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tp_gofunc f, g;
	struct tp_gotab t;
	uint64_t prev = 0;
	long at;

	at = tp_gotab_find(data, size);
	check(at < 0 || (size_t)at < size);
	if (tp_gotab_open(&t, data, size) != 0)
		return 0;
	t.addr = t.fdata_addr = t.gofunc = 0x400000;
	t.fdata = data;
	t.fdata_size = size;
	for (uint32_t i = 0; i < t.nfunc && i < 512; i++) {
		struct tp_goframe fr[8];
		const char *file;
		uint64_t until;
		int32_t v;
		int n;

		if (tp_gotab_nth(&t, i, &f) != 0)
			continue;
		check(f.entry >= prev && f.entry <= f.end && f.name && strlen(f.name) < 4096);
		prev = f.entry;
		if (f.entry == f.end)
			continue;
		for (uint64_t pc = f.entry; pc < f.end; pc += (f.end - f.entry) / 2 + 1) {
			check(tp_gotab_func(&t, pc, &g) == 0 && g.entry <= pc && pc < g.end);
			if (tp_gotab_line(&t, &f, pc, &file, &v) == 0)
				check(file && strlen(file) < 4096);
			if (tp_gotab_spdelta(&t, &f, pc, &v, &until) == 0)
				check(until > pc && until <= f.end);
			n = tp_gotab_frames(&t, &f, pc, fr, 8);
			check(n >= 1 && n <= 8 && !strcmp(fr[n - 1].name, f.name));
			for (int k = 0; k < n; k++)
				check(fr[k].name && strlen(fr[k].name) < 4096 &&
				      (!fr[k].file || strlen(fr[k].file) < 4096));
		}
	}
	return 0;
}
