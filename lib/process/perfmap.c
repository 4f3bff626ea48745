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

int tp_perfmap_read(FILE *f, struct tp_perfmap **pmp)
{
	char line[TP_PERFMAP_LINE_MAX + 2];
	struct tp_perfmap *pm;
	size_t alloc = 0, cap = 0, total = 0, i, o;
	bool skipping = false;
	int err;

	*pmp = NULL;
	pm = calloc(1, sizeof(*pm));
	if (!pm)
		return tp_err(-ENOMEM, NULL);
	while (fgets(line, sizeof(line), f)) {
		size_t n = strlen(line), nlen;
		const char *p = line, *name;
		uint64_t start, size;
		bool ok = true;

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
		if (!tp_perfmap_hex(&p, &start) || !tp_perfmap_hex(&p, &size) || !size ||
		    start + size < start)
			ok = false;
		name = p;
		nlen = ok ? strlen(name) : 0;
		if (ok && !nlen)
			ok = false;
		for (i = 0; ok && i < nlen; i++)
			if ((unsigned char)name[i] < ' ' || name[i] == 0x7f)
				ok = false;
		if (!ok) {
			pm->bad_lines++;
			continue;
		}
		if (pm->nr == TP_PERFMAP_MAX) {
			err = tp_err(-E2BIG, "perf map: more than %u entries", TP_PERFMAP_MAX);
			goto fail;
		}
		if (pm->nr == alloc) {
			size_t a = alloc ? alloc * 2 : 256;
			struct tp_perfsym *s = realloc(pm->syms, a * sizeof(*s));

			if (!s)
				goto nomem;
			pm->syms = s;
			alloc = a;
		}
		if (pm->len + nlen + 1 > cap) {
			size_t c = cap ? cap * 2 : 4096;
			char *s;

			while (c < pm->len + nlen + 1)
				c *= 2;
			if (c > UINT32_MAX)
				goto nomem;
			s = realloc(pm->strings, c);
			if (!s)
				goto nomem;
			pm->strings = s;
			cap = c;
		}
		memcpy(pm->strings + pm->len, name, nlen + 1);
		pm->syms[pm->nr++] = (struct tp_perfsym){
			.start = start, .size = size, .name = (uint32_t)pm->len,
		};
		pm->len += nlen + 1;
	}
	if (ferror(f)) {
		err = tp_err(-EIO, "reading a perf map: %s", strerror(errno));
		goto fail;
	}
	if (pm->nr)
		qsort(pm->syms, pm->nr, sizeof(*pm->syms), tp_perfsym_cmp);
	/* Of several at one start, keep the first (the latest written). */
	for (i = 0, o = 0; i < pm->nr; i++)
		if (!o || pm->syms[o - 1].start != pm->syms[i].start)
			pm->syms[o++] = pm->syms[i];
	pm->nr = o;
	*pmp = pm;
	return 0;
nomem:
	err = tp_err(-ENOMEM, NULL);
fail:
	tp_perfmap_free(pm);
	return err;
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
