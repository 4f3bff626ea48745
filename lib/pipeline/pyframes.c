// SPDX-License-Identifier: GPL-2.0
/*
 * Python frames named from their code objects (pyframes.h): a hash of
 * (pid, start time, execs, code object, cookie) to what tp_pycode_read()
 * found, a failed read included, so that a code object is read once (and
 * not taken for one of the program an exec put in its place).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/pyframes.h"
#include "runtime/runtime.h"
#include "util/hash.h"
#include "util/util.h"

struct pf_entry {
	struct pf_entry *next;
	int pid;
	uint32_t execs;
	uint64_t start_time;
	uint64_t code;
	uint32_t cookie;
	bool ok;			/* c was read and matches the cookie */
	struct tp_pycode c;
	char *function;			/* MODULE.QUALNAME, or c.name */
};

struct tp_pyframes {
	struct pf_entry **buckets;
	size_t nbuckets, count, max;
};

int tp_pyframes_new(size_t max, struct tp_pyframes **cp)
{
	struct tp_pyframes *c = calloc(1, sizeof(*c));

	*cp = NULL;
	if (!c)
		return tp_err(-ENOMEM, NULL);
	c->max = max ? max : 1;
	c->nbuckets = 1;
	while (c->nbuckets < c->max)
		c->nbuckets <<= 1;
	c->buckets = calloc(c->nbuckets, sizeof(c->buckets[0]));
	if (!c->buckets) {
		free(c);
		return tp_err(-ENOMEM, NULL);
	}
	*cp = c;
	return 0;
}

void tp_pyframes_clear(struct tp_pyframes *c)
{
	if (!c->count)
		return;
	for (size_t b = 0; b < c->nbuckets; b++) {
		struct pf_entry *e = c->buckets[b], *next;

		for (; e; e = next) {
			next = e->next;
			if (e->function != e->c.name)
				free(e->function);
			tp_pycode_free(&e->c);
			free(e);
		}
		c->buckets[b] = NULL;
	}
	c->count = 0;
}

void tp_pyframes_free(struct tp_pyframes *c)
{
	if (!c)
		return;
	tp_pyframes_clear(c);
	free(c->buckets);
	free(c);
}

bool tp_pyframes_full(const struct tp_pyframes *c, size_t n)
{
	return c->count + n > c->max;
}

void tp_pyframes_module(const char *file, char *out, size_t len)
{
	const char *b = strrchr(file, '/'), *end;
	size_t n;

	out[0] = '\0';
	if (!strncmp(file, "<frozen ", 8)) {
		b = file + 8;
		end = strchr(b, '>');
	} else if (file[0] == '<') {
		return;
	} else {
		b = b ? b + 1 : file;
		end = b + strlen(b);
		if (end - b > 3 && !strcmp(end - 3, ".py"))
			end -= 3;
		if (end - b == 8 && !strncmp(b, "__init__", 8) && b > file + 1) {
			/* the package's directory */
			end = b - 1;
			for (b = end; b > file && b[-1] != '/'; b--)
				;
		}
	}
	n = end && end > b ? (size_t)(end - b) : 0;
	if (n >= len)
		n = len - 1;
	memcpy(out, b, n);
	out[n] = '\0';
}

static int pf_read(void *proc, uint64_t addr, void *dst, size_t len)
{
	return taproot_proc_read_mem(proc, addr, dst, len);
}

/* The entry of @f in @proc: found, or read and added (never past max: see full()). */
static struct pf_entry *pf_get(struct tp_pyframes *c, struct taproot_proc *proc,
			       const struct taproot_pyproc *py, const struct taproot_pyframe *f)
{
	int pid = taproot_proc_pid(proc);
	uint32_t execs = taproot_proc_execs(proc);
	uint64_t st = taproot_proc_start_time(proc);
	uint64_t h = tp_hash_fin(tp_hash_mix(tp_hash_mix(tp_hash_mix(0, (uint32_t)pid), f->code),
					     f->cookie));
	struct pf_entry **head = &c->buckets[h & (c->nbuckets - 1)], *e;
	int err;

	for (e = *head; e; e = e->next)
		if (e->pid == pid && e->start_time == st && e->execs == execs &&
		    e->code == f->code && e->cookie == f->cookie)
			return e;
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	err = tp_pycode_read(&py->elf, py->bias, pf_read, proc, f->code, f->cookie, &e->c);
	if (err == -ENOMEM) {
		free(e);
		return NULL;
	}
	e->ok = !err;
	e->function = e->c.name;
	if (e->ok) {
		char module[256];

		tp_pyframes_module(e->c.file, module, sizeof(module));
		if (module[0] && asprintf(&e->function, "%s.%s", module, e->c.name) < 0) {
			tp_pycode_free(&e->c);
			free(e);
			return NULL;
		}
	}
	e->pid = pid;
	e->execs = execs;
	e->start_time = st;
	e->code = f->code;
	e->cookie = f->cookie;
	e->next = *head;
	*head = e;
	c->count++;
	return e;
}

int tp_pyframes_frame(struct tp_pyframes *c, struct taproot_proc *proc,
		      const struct taproot_pyproc *py, const struct taproot_pyframe *f,
		      struct taproot_profile_frame *out)
{
	struct pf_entry *e = pf_get(c, proc, py, f);

	if (!e)
		return tp_err(-ENOMEM, NULL);
	memset(out, 0, sizeof(*out));
	if (!e->ok) {
		out->function = "[python: code object gone]";
		return 1;
	}
	out->function = e->function;
	out->file = e->c.file;
	out->line = tp_pycode_line(&py->elf, &e->c, f->pos & TAPROOT_PYFRAME_POS_MASK);
	return 0;
}
