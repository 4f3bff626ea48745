// SPDX-License-Identifier: GPL-2.0
/*
 * JIT symbols from /tmp/perf-PID.map, the file JITs (V8, the JVM with
 * perf-map-agent, LuaJIT, .NET, Python 3.12 -X perf) append to: one
 * "START SIZE NAME" line per function, START and SIZE in hex.
 *
 * The file is written by the profiled process while we read it: malformed
 * lines are skipped and counted, not fatal. Bounded: TP_PERFMAP_MAX
 * entries, lines of TP_PERFMAP_LINE_MAX bytes, TP_PERFMAP_BYTES_MAX read.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "process/process-private.h"
#include "util/clock.h"
#include "util/parse.h"

void tp_perfmap_free(struct tp_perfmap *pm)
{
	if (!pm)
		return;
	free(pm->syms);
	free(pm->strings);
	free(pm);
}

/* Hex number with an optional 0x, then a space; advances *@pp. */
static bool tp_perfmap_hex(const char **pp, uint64_t *v)
{
	const char *p = *pp;

	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	if (!tp_parse_hex(&p, ' ', v))
		return false;
	*pp = p;
	return true;
}

static int tp_perfsym_cmp(const void *a, const void *b)
{
	const struct tp_perfsym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	/* Same start: the later line (larger string offset) first. */
	return x->name > y->name ? -1 : x->name < y->name;
}

/*
 * Parse a perf map line "START SIZE NAME" (hex, optional 0x; NAME printable
 * and not empty) into @sym; *@name points into @line. False if malformed.
 */
static bool tp_perfmap_parse(const char *line, struct tp_perfsym *sym, const char **name,
			     size_t *nlen)
{
	const char *p = line;
	uint64_t start, size;

	if (!tp_perfmap_hex(&p, &start) || !tp_perfmap_hex(&p, &size) || !size ||
	    start + size < start)
		return false;
	*nlen = strlen(p);
	if (!*nlen)
		return false;
	for (size_t i = 0; i < *nlen; i++)
		if ((unsigned char)p[i] < ' ' || p[i] == 0x7f)
			return false;
	*name = p;
	sym->start = start;
	sym->size = size;
	return true;
}

/* Append @sym named @name (@nlen bytes) to @pm. 0, -E2BIG or -ENOMEM. */
static int tp_perfmap_add(struct tp_perfmap *pm, size_t *alloc, size_t *cap,
			  struct tp_perfsym sym, const char *name, size_t nlen)
{
	int64_t off;

	if (pm->nr == TP_PERFMAP_MAX)
		return tp_err(-E2BIG, "perf map: more than %u entries", TP_PERFMAP_MAX);
	if (tp_grow((void **)&pm->syms, alloc, pm->nr + 1, sizeof(*pm->syms)))
		return tp_err(-ENOMEM, NULL);
	off = tp_strpool_add(&pm->strings, &pm->len, cap, name, nlen);
	if (off < 0)
		return tp_err(-ENOMEM, NULL);
	sym.name = (uint32_t)off;
	pm->syms[pm->nr++] = sym;
	return 0;
}

/* Sort @pm's symbols; of several at one start, keep the latest written. */
static void tp_perfmap_sort(struct tp_perfmap *pm)
{
	size_t i, o;

	if (pm->nr)
		qsort(pm->syms, pm->nr, sizeof(*pm->syms), tp_perfsym_cmp);
	for (i = 0, o = 0; i < pm->nr; i++)
		if (!o || pm->syms[o - 1].start != pm->syms[i].start)
			pm->syms[o++] = pm->syms[i];
	pm->nr = o;
}

int tp_perfmap_read(FILE *f, struct tp_perfmap **pmp)
{
	char line[TP_PERFMAP_LINE_MAX + 2];
	size_t alloc = 0, cap = 0, total = 0;
	struct tp_perfmap *pm;
	bool skipping = false;
	int err = 0;

	*pmp = NULL;
	pm = calloc(1, sizeof(*pm));
	if (!pm)
		return tp_err(-ENOMEM, NULL);
	while (!err && fgets(line, sizeof(line), f)) {
		struct tp_perfsym sym = { 0 };
		size_t n = strlen(line), nlen;
		const char *name;

		total += n;
		if (total > TP_PERFMAP_BYTES_MAX)
			break;
		if (n && line[n - 1] == '\n') {
			line[--n] = '\0';
			if (skipping) {		/* the tail of an overlong line */
				skipping = false;
				continue;
			}
		} else if (!feof(f)) {
			pm->bad_lines++;
			skipping = true;
			continue;
		} else {
			/* A last line without newline: being written; skip it. */
			if (n)
				pm->bad_lines++;
			break;
		}
		if (!n)
			continue;
		if (!tp_perfmap_parse(line, &sym, &name, &nlen))
			pm->bad_lines++;
		else
			err = tp_perfmap_add(pm, &alloc, &cap, sym, name, nlen);
	}
	if (!err && ferror(f))
		err = tp_err(-EIO, "reading a perf map: %s", strerror(errno));
	if (err) {
		tp_perfmap_free(pm);
		return err;
	}
	tp_perfmap_sort(pm);
	*pmp = pm;
	return 0;
}

const struct tp_perfsym *tp_perfmap_lookup(const struct tp_perfmap *pm, uint64_t addr)
{
	size_t lo = 0, hi, mid, back;

	if (!pm)
		return NULL;
	hi = pm->nr;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (pm->syms[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Entries may overlap (regenerated code): look back a little. */
	for (back = 0; lo > 0 && back < 8; lo--, back++) {
		const struct tp_perfsym *s = &pm->syms[lo - 1];

		if (addr - s->start < s->size)
			return s;
	}
	return NULL;
}

/* The pid of @p in its own pid namespace (last of NSpid), or its pid. */
static int tp_proc_nspid(struct taproot_proc *p)
{
	char path[PATH_MAX], line[256];
	FILE *f;
	int nspid = p->pid;

	snprintf(path, sizeof(path), "%s/%d/status", p->procs->proc_root, p->pid);
	f = fopen(path, "re");
	if (!f)
		return nspid;
	while (fgets(line, sizeof(line), f)) {
		char *s, *end;
		long v;

		if (strncmp(line, "NSpid:", 6))
			continue;
		for (s = line + 6;;) {
			v = strtol(s, &end, 10);
			if (end == s)
				break;
			if (v > 0 && v <= INT32_MAX)
				nspid = (int)v;
			s = end;
		}
		break;
	}
	fclose(f);
	return nspid;
}

static int tp_perfmap_load(const char *path, struct tp_perfmap *old,
			   struct tp_perfmap **pmp)
{
	struct stat st;
	FILE *f;
	int fd, err;

	*pmp = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -ENOENT;
	}
	if (old && old->size == (uint64_t)st.st_size &&
	    old->mtime_ns == (uint64_t)st.st_mtim.tv_sec * 1000000000 + (uint64_t)st.st_mtim.tv_nsec) {
		close(fd);
		return 1;	/* unchanged */
	}
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return -ENOMEM;
	}
	err = tp_perfmap_read(f, pmp);
	fclose(f);
	if (!err) {
		(*pmp)->size = (uint64_t)st.st_size;
		(*pmp)->mtime_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000 +
				   (uint64_t)st.st_mtim.tv_nsec;
	}
	return err;
}

int tp_proc_perfmap(struct taproot_proc *p)
{
	struct tp_perfmap *pm = NULL;
	char path[PATH_MAX];
	uint64_t now = tp_clock_ms(CLOCK_MONOTONIC_COARSE);
	int err;

	if (p->perfmap_ms && now - p->perfmap_ms < p->procs->opts.refresh_ms)
		return 0;
	p->perfmap_ms = now ? now : 1;
	if (!p->nspid)
		p->nspid = tp_proc_nspid(p);
	snprintf(path, sizeof(path), "%s/tmp/perf-%d.map", p->root, p->nspid);
	err = tp_perfmap_load(path, p->perfmap, &pm);
	if (err < 0 && err != -ENOMEM) {
		snprintf(path, sizeof(path), "/tmp/perf-%d.map", p->pid);
		err = tp_perfmap_load(path, p->perfmap, &pm);
	}
	if (err == 1)
		return 0;
	if (err == -ENOMEM)
		return err;
	if (err < 0)
		return 0;	/* no perf map: fine */
	tp_perfmap_free(p->perfmap);
	p->perfmap = pm;
	return 0;
}

int taproot_proc_reload_perfmap(struct taproot_proc *p)
{
	if (p->state != TP_PROC_LIVE && p->state != TP_PROC_EXITED)
		return 0;
	p->perfmap_ms = 0;
	return tp_proc_perfmap(p);
}
