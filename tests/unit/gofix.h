/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The Go fixtures of the unit tests (tests/vm/progs/gosplit.go, built
 * by the Makefile four ways) and the stack-pointer deltas Go's own
 * disassembler implies for their code: the independent answer test_gotab
 * (the table reader) and test_cfi (the rows compiled from it) check
 * against, and the Go toolchains that built them. Include after
 * <cmocka.h> and runcmd.h.
 */
#ifndef TAPROOT_TESTS_GOFIX_H
#define TAPROOT_TESTS_GOFIX_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Executable, PIE, each with and without symbols and DWARF. */
static const char *const go_fixtures[] = {
	"build/fixtures/go/gosplit-exe",
	"build/fixtures/go/gosplit-exe-stripped",
	"build/fixtures/go/gosplit-pie",
	"build/fixtures/go/gosplit-pie-stripped",
};
#define NR_GO_FIXTURES (sizeof(go_fixtures) / sizeof(go_fixtures[0]))

/*
 * The Go toolchains whose builds of gosplit.go the tests read: the host's
 * (go_fixtures[]) and each other release's of the kernel matrix
 * (scripts/kernels --roots), which the Makefile runs from the release's
 * root into build/fixtures/go/RELEASE/.
 */
struct go_toolchain {
	char name[32];			/* "host" or the release */
	char dir[64];			/* where its builds are */
	char go[512];			/* the command that runs its go */
};
#define GO_TOOLCHAINS_MAX 8

/* The toolchains into @tc: how many. Fails when a release's builds are missing. */
static inline size_t go_toolchains(struct go_toolchain *tc)
{
	char *out, *line, *save = NULL;
	size_t n = 1;
	int st;

	snprintf(tc[0].name, sizeof(tc[0].name), "host");
	snprintf(tc[0].dir, sizeof(tc[0].dir), "build/fixtures/go");
	snprintf(tc[0].go, sizeof(tc[0].go), "go");
	out = run(&st, "scripts/kernels --roots");
	assert_int_equal(st, 0);
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char suite[32], root[160], exe[128];

		if (sscanf(line, "%31s %159s", suite, root) != 2 || !strcmp(root, "/"))
			continue;
		assert_true(n < GO_TOOLCHAINS_MAX);
		snprintf(tc[n].name, sizeof(tc[n].name), "%s", suite);
		snprintf(tc[n].dir, sizeof(tc[n].dir), "build/fixtures/go/%s", suite);
		snprintf(tc[n].go, sizeof(tc[n].go),
			 "GOROOT=%s/usr/lib/go GOTOOLCHAIN=local GOENV=off %s/usr/lib/go/bin/go",
			 root, root);
		snprintf(exe, sizeof(exe), "%s/gosplit-exe", tc[n].dir);
		if (access(exe, R_OK) != 0)
			fail_msg("%s: missing (make builds it with %s's Go)", exe, suite);
		n++;
	}
	free(out);
	return n;
}

/* The build @kind ("exe", "exe-stripped", "pie", "pie-stripped") of @tc, in @buf. */
static inline const char *go_fixture(const struct go_toolchain *tc, const char *kind,
				     char *buf, size_t size)
{
	snprintf(buf, size, "%s/gosplit-%s", tc->dir, kind);
	return buf;
}

/* The minor version of @tc's Go: 19 for go1.19. */
static inline int go_minor(const struct go_toolchain *tc)
{
	int st, minor = 0;
	char *out = run(&st, "%s version", tc->go);

	assert_int_equal(st, 0);
	assert_int_equal(sscanf(out, "go version go1.%d", &minor), 1);
	free(out);
	return minor;
}

/*
 * What the instruction @asm_text (Go assembler syntax) does to SP: *@d
 * changes by it; false for a RET, where a straight-line walk stops.
 */
static inline bool go_sp_effect(const char *asm_text, int32_t *d)
{
	unsigned int imm;

	if (!strncmp(asm_text, "RET", 3))
		return false;
	/* Go 1.15 allocates a frame of 0x80 as ADDQ $-0x80 (an 8-bit immediate). */
	if (sscanf(asm_text, "SUBQ $0x%x, SP", &imm) == 1 ||
	    sscanf(asm_text, "ADDQ $-0x%x, SP", &imm) == 1)
		*d += (int32_t)imm;
	else if (sscanf(asm_text, "ADDQ $0x%x, SP", &imm) == 1 ||
		 sscanf(asm_text, "SUBQ $-0x%x, SP", &imm) == 1)
		*d -= (int32_t)imm;
	else if (!strncmp(asm_text, "PUSHQ ", 6) || !strncmp(asm_text, "PUSHFQ", 6))
		*d += 8;
	else if (!strncmp(asm_text, "POPQ ", 5) || !strncmp(asm_text, "POPFQ", 5))
		*d -= 8;
	return true;
}

/*
 * Calls @fn(@ctx, pc, instruction, delta) for each instruction of the
 * functions of package main in @exe (which has symbols: `@go tool objdump`
 * needs them), from each entry up to its first RET, with the SP delta
 * before the instruction. Returns the number of functions.
 */
static inline size_t go_main_deltas(const char *go, const char *exe,
				    void (*fn)(void *ctx, uint64_t pc, const char *asm_text,
					       int32_t delta),
				    void *ctx)
{
	char *out, *line, *save = NULL;
	bool walking = false;
	size_t funcs = 0;
	int32_t d = 0;
	int st;

	out = run(&st, "%s tool objdump -s '^main\\.' %s", go, exe);
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
