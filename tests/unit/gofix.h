/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The Go fixtures of the unit tests (tests/vm/progs/gosplit.go, built
 * by the Makefile four ways) and the stack-pointer deltas Go's own
 * disassembler implies for their code: the independent answer test_gotab
 * (the table reader) and test_cfi (the rows compiled from it) check
 * against. Include after <cmocka.h> and runcmd.h.
 */
#ifndef TAPROOT_TESTS_GOFIX_H
#define TAPROOT_TESTS_GOFIX_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Executable, PIE, each with and without symbols and DWARF. */
static const char *const go_fixtures[] = {
	"build/fixtures/go/gosplit-exe",
	"build/fixtures/go/gosplit-exe-stripped",
	"build/fixtures/go/gosplit-pie",
	"build/fixtures/go/gosplit-pie-stripped",
};
#define NR_GO_FIXTURES (sizeof(go_fixtures) / sizeof(go_fixtures[0]))

/*
 * What the instruction @asm_text (Go assembler syntax) does to SP: *@d
 * changes by it; false for a RET, where a straight-line walk stops.
 */
static inline bool go_sp_effect(const char *asm_text, int32_t *d)
{
	unsigned int imm;

	if (!strncmp(asm_text, "RET", 3))
		return false;
	if (sscanf(asm_text, "SUBQ $0x%x, SP", &imm) == 1)
		*d += (int32_t)imm;
	else if (sscanf(asm_text, "ADDQ $0x%x, SP", &imm) == 1)
		*d -= (int32_t)imm;
	else if (!strncmp(asm_text, "PUSHQ ", 6) || !strncmp(asm_text, "PUSHFQ", 6))
		*d += 8;
	else if (!strncmp(asm_text, "POPQ ", 5) || !strncmp(asm_text, "POPFQ", 5))
		*d -= 8;
	return true;
}

/*
 * Calls @fn(@ctx, pc, instruction, delta) for each instruction of the
 * functions of package main in @exe (which has symbols: `go tool objdump`
 * needs them), from each entry up to its first RET, with the SP delta
 * before the instruction. Returns the number of functions.
 */
static inline size_t go_main_deltas(const char *exe,
				    void (*fn)(void *ctx, uint64_t pc, const char *asm_text,
					       int32_t delta),
				    void *ctx)
{
	char *out, *line, *save = NULL;
	bool walking = false;
	size_t funcs = 0;
	int32_t d = 0;
	int st;

	out = run(&st, "go tool objdump -s '^main\\.' %s", exe);
	assert_int_equal(st, 0);
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *field[4], *in = NULL;
		unsigned long long pc;
		int nf = 0;

		if (!strncmp(line, "TEXT ", 5)) {
			walking = true;
			d = 0;
			funcs++;
			continue;
		}
		/* "  file:line<TAB><TAB>0xADDR<TAB><TAB>BYTES<TAB><TAB>ASM" */
		for (char *w = strtok_r(line, "\t", &in); w && nf < 4; w = strtok_r(NULL, "\t", &in))
			field[nf++] = w;
		if (!walking || nf < 4 || sscanf(field[1], "0x%llx", &pc) != 1)
			continue;
		fn(ctx, pc, field[3], d);
		walking = go_sp_effect(field[3], &d);
	}
	free(out);
	return funcs;
}

#endif /* TAPROOT_TESTS_GOFIX_H */
