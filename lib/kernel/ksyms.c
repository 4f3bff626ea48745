// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's text symbols from /proc/kallsyms, sorted by address, for
 * turning kernel stack addresses into "name+0xoff".
 *
 * A kallsyms line is "ADDR TYPE NAME" with ADDR in hex (16 digits on
 * 64-bit), TYPE one letter, and for a module "\t[MODULE]" after NAME.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kernel/kernel-private.h"

#define TP_KSYMS_PATH		"/proc/kallsyms"
#define TP_KSYMS_MAX		(8u << 20)	/* symbols kept: far above any kernel's */
#define TP_KSYM_NAME_MAX	511		/* KSYM_NAME_LEN 512, NUL included */
#define TP_KSYM_MOD_MAX		63		/* MODULE_NAME_LEN 64 */
#define TP_KSYMS_LINES_MAX	(64u << 20)	/* lines read at most */
/* How far the last symbol of the kernel or of a module may extend. */
#define TP_KSYM_LAST_SPAN	(64u << 10)

struct tp_ksym {
	uint64_t addr;
	uint32_t name;		/* offset into strings */
	uint32_t module;	/* offset into strings, 0: the core kernel */
};

struct taproot_ksyms {
	struct tp_ksym *syms;
	size_t nr, alloc;
	char *strings;		/* "\0" then NUL-terminated names */
	size_t len, cap;
};

void taproot_ksyms_free(struct taproot_ksyms *k)
{
	if (!k)
		return;
	free(k->syms);
	free(k->strings);
	free(k);
}

size_t taproot_ksyms_count(const struct taproot_ksyms *k)
{
	return k->nr;
}

/* Intern @s of @n bytes; returns its offset, or 0 without memory. */
static uint32_t tp_ksyms_str(struct taproot_ksyms *k, const char *s, size_t n)
{
	int64_t off = tp_strpool_add(&k->strings, &k->len, &k->cap, s, n);

	return off < 0 ? 0 : (uint32_t)off;
}

static bool tp_ksym_name_ok(const char *s, size_t n, size_t max)
{
	size_t i;

	if (!n || n > max)
		return false;
	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] <= ' ' || (unsigned char)s[i] >= 0x7f)
			return false;
	return true;
}

/*
 * One line, without its newline. Returns 1 when it is a text symbol
 * (*@addr, name and module set), 0 for another symbol, -1 when malformed.
 */
static int tp_ksyms_line(char *line, uint64_t *addr, char **name, size_t *name_len,
			 char **mod, size_t *mod_len)
{
	char *p = line, *end;
	char type;
	size_t n;

	n = strspn(p, "0123456789abcdefABCDEF");
	if (n == 0 || n > 16 || p[n] != ' ')
		return -1;
	*addr = strtoull(p, &end, 16);
	p += n + 1;
	type = *p;
	/* A letter; '?' for a module's symbol of no known section (7.x: .modinfo). */
	if (!((type >= 'a' && type <= 'z') || (type >= 'A' && type <= 'Z') || type == '?') ||
	    p[1] != ' ')
		return -1;
	p += 2;
	n = strcspn(p, "\t");
	if (!tp_ksym_name_ok(p, n, TP_KSYM_NAME_MAX))
		return -1;
	*name = p;
	*name_len = n;
	*mod = NULL;
	*mod_len = 0;
	p += n;
	if (*p == '\t') {
		p++;
		n = strlen(p);
		if (n < 3 || p[0] != '[' || p[n - 1] != ']' ||
		    !tp_ksym_name_ok(p + 1, n - 2, TP_KSYM_MOD_MAX))
			return -1;
		*mod = p + 1;
		*mod_len = n - 2;
	} else if (*p) {
		return -1;
	}
	return type == 't' || type == 'T' || type == 'w' || type == 'W';
}

static int tp_ksym_cmp(const void *a, const void *b)
{
	const struct tp_ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* Same address: the core kernel first, then in reading order. */
	if ((x->module == 0) != (y->module == 0))
		return x->module == 0 ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
}

/*
 * Append the text symbol @name (@name_len bytes) at @addr, of module @mod
 * (@mod_len bytes; NULL: the kernel's) to @k. *@last_mod is the offset of
 * the last module name stored: a module's lines come together, so one copy
 * of its name serves them all. 0, -E2BIG or -ENOMEM.
 */
static int tp_ksyms_add(struct taproot_ksyms *k, uint64_t addr, const char *name,
			size_t name_len, const char *mod, size_t mod_len, uint32_t *last_mod)
{
	struct tp_ksym *sym;

	if (k->nr == TP_KSYMS_MAX)
		return tp_err(-E2BIG, "kallsyms: more than %u text symbols", TP_KSYMS_MAX);
	if (tp_grow((void **)&k->syms, &k->alloc, k->nr + 1, sizeof(*k->syms)))
		return tp_err(-ENOMEM, NULL);
	sym = &k->syms[k->nr];
	sym->addr = addr;
	sym->name = tp_ksyms_str(k, name, name_len);
	if (mod && !(*last_mod && strlen(k->strings + *last_mod) == mod_len &&
		     !memcmp(k->strings + *last_mod, mod, mod_len)))
		*last_mod = tp_ksyms_str(k, mod, mod_len);
	sym->module = mod ? *last_mod : 0;
	if (!sym->name || (mod && !*last_mod))
		return tp_err(-ENOMEM, "kallsyms: no memory for the names");
	k->nr++;
	return 0;
}

/*
 * Read line number @nr of @f into @line of @size bytes, without its
 * newline. 1 with a line, 0 at the end, or a recorded error.
 */
static int tp_ksyms_next(FILE *f, char *line, size_t size, size_t nr)
{
	size_t n;

	if (!fgets(line, (int)size, f))
		return 0;
	n = strlen(line);
	if (n && line[n - 1] == '\n')
		line[--n] = '\0';
	else if (!feof(f))
		return tp_err(-TAPROOT_EPROTO, "kallsyms line %zu: longer than %zu bytes",
			      nr, size - 2);
	if (nr > TP_KSYMS_LINES_MAX)
		return tp_err(-E2BIG, "kallsyms: more than %u lines", TP_KSYMS_LINES_MAX);
	return 1;
}

/* After the last of @lines lines, @nonzero of them with an address. */
static int tp_ksyms_finish(struct taproot_ksyms *k, FILE *f, size_t lines, size_t nonzero)
{
	if (ferror(f))
		return tp_err(-EIO, "reading kallsyms: %s", strerror(errno));
	if (lines && !nonzero)
		return tp_err(-TAPROOT_EKPTR,
			      "kernel addresses are hidden from this process (kernel.kptr_restrict); "
			      "kernel stacks stay unsymbolized: run as root with CAP_SYSLOG or set "
			      "kernel.kptr_restrict=0");
	if (!k->nr)
		return tp_err(-TAPROOT_EPROTO, "kallsyms: no text symbols");
	qsort(k->syms, k->nr, sizeof(*k->syms), tp_ksym_cmp);
	return 0;
}

int taproot_ksyms_read(FILE *f, struct taproot_ksyms **kp)
{
	/* A line: address, type, name, module and slack. */
	char line[24 + TP_KSYM_NAME_MAX + TP_KSYM_MOD_MAX + 16];
	size_t name_len, mod_len, lines = 0, nonzero = 0;
	struct taproot_ksyms *k;
	uint32_t last_mod = 0;
	char *name, *mod;
	uint64_t addr;
	int kind, err;

	*kp = NULL;
	k = calloc(1, sizeof(*k));
	if (!k)
		return tp_err(-ENOMEM, NULL);
	/* Offset 0 of the strings: no module. */
	err = tp_strpool_add(&k->strings, &k->len, &k->cap, "", 0) < 0 ? tp_err(-ENOMEM, NULL) : 0;
	while (!err && (err = tp_ksyms_next(f, line, sizeof(line), ++lines)) == 1) {
		err = 0;
		kind = tp_ksyms_line(line, &addr, &name, &name_len, &mod, &mod_len);
		if (kind < 0)
			err = tp_err(-TAPROOT_EPROTO, "kallsyms line %zu: malformed: '%.80s'",
				     lines, line);
		else if (kind)
			err = tp_ksyms_add(k, addr, name, name_len, mod, mod_len, &last_mod);
		if (kind >= 0 && addr)
			nonzero++;
	}
	if (!err)
		err = tp_ksyms_finish(k, f, lines - 1, nonzero);
	if (err) {
		taproot_ksyms_free(k);
		return err;
	}
	*kp = k;
	return 0;
}

int taproot_ksyms_load(const char *path, struct taproot_ksyms **kp)
{
	FILE *f;
	int err;

	*kp = NULL;
	if (!path)
		path = TP_KSYMS_PATH;
	f = fopen(path, "re");
	if (!f)
		return tp_err(-errno, "opening %s: %s", path, strerror(errno));
	err = taproot_ksyms_read(f, kp);
	fclose(f);
	return err;
}

int taproot_ksyms_load_text(const char *path, size_t max, struct taproot_ksyms **kp,
			    char **textp, size_t *lenp)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	int fd, err;

	*kp = NULL;
	*textp = NULL;
	*lenp = 0;
	if (!path)
		path = TP_KSYMS_PATH;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return tp_err(-errno, "opening %s: %s", path, strerror(errno));
	err = tp_read_fd(fd, max, &buf, &len);
	close(fd);
	if (err)
		return tp_err(err, "reading %s: %s", path, strerror(-err));
	if (len == max) {
		free(buf);
		return tp_err(-EFBIG, "%s: more than %zu bytes", path, max);
	}
	f = fmemopen(len ? buf : (char *)"", len, "r");
	if (!f) {
		err = tp_err(-errno, "%s: %s", path, strerror(errno));
		free(buf);
		return err;
	}
	err = taproot_ksyms_read(f, kp);
	fclose(f);
	if (err) {
		free(buf);
		return err;
	}
	*textp = buf;
	*lenp = len;
	return 0;
}

const char *taproot_ksyms_lookup(const struct taproot_ksyms *k, uint64_t addr,
				 uint64_t *off, const char **module)
{
	const struct tp_ksym *s, *next;
	size_t lo = 0, hi = k->nr, mid;
	uint64_t end;

	/* The last symbol at or below @addr. */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (k->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	s = &k->syms[lo - 1];
	/* Of several at one address, the first (sorted core kernel first). */
	while (s > k->syms && s[-1].addr == s->addr)
		s--;

	/* It ends where the next symbol starts, or a span after, at most. */
	next = &k->syms[lo];
	if (lo < k->nr && next->module == s->module) {
		end = next->addr;
	} else {
		end = s->addr + TP_KSYM_LAST_SPAN;
		if (end < s->addr)
			end = UINT64_MAX;
		if (lo < k->nr && next->addr < end)
			end = next->addr;
	}
	if (addr >= end)
		return NULL;
	if (off)
		*off = addr - s->addr;
	if (module)
		*module = s->module ? k->strings + s->module : NULL;
	return k->strings + s->name;
}

bool taproot_ksyms_format(const struct taproot_ksyms *k, uint64_t addr,
			  char *buf, size_t len)
{
	const char *name, *mod;
	uint64_t off;

	name = k ? taproot_ksyms_lookup(k, addr, &off, &mod) : NULL;
	if (!name) {
		if (len)
			buf[0] = '\0';
		return false;
	}
	snprintf(buf, len, "%s+0x%llx%s%s%s", name, (unsigned long long)off,
		 mod ? " [" : "", mod ? mod : "", mod ? "]" : "");
	return true;
}
