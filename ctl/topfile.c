// SPDX-License-Identifier: GPL-2.0
/*
 * The live top's file, written by taprootd and read by taprootctl top
 * (topfile.h has the format).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "topfile.h"

char *topfile_path(const char *state_path)
{
	const char *slash = strrchr(state_path, '/');
	char *p;

	if (asprintf(&p, "%.*s%s", slash ? (int)(slash - state_path + 1) : 0, state_path,
		     TOPFILE_NAME) < 0)
		return NULL;
	return p;
}

/* @s escaped (topfile.h) onto @f. */
static void put_escaped(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '\t')
			fputs("\\t", f);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\\')
			fputs("\\\\", f);
		else if (c < 0x20 || c == 0x7f)
			fputc('?', f);
		else
			fputc(c, f);
	}
}

int topfile_write(const char *path, const struct topfile *t)
{
	char *tmp;
	FILE *f;
	int fd, err = 0;

	if (asprintf(&tmp, "%s.XXXXXX", path) < 0)
		return -ENOMEM;
	fd = mkstemp(tmp);	/* mode 0600 */
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		err = -errno;
		if (fd >= 0) {
			close(fd);
			unlink(tmp);
		}
		free(tmp);
		return err;
	}
	fprintf(f, "taproot-top 1\nhost\t");
	put_escaped(f, t->host);
	fprintf(f, "\ntime\t%" PRIu64 "\nwindow\t%" PRIu64 "\nsampling\t%d\nsamples\t%" PRIu64
		"\nother\t%" PRIu64 "\n", t->time_ns, t->window_ns, t->sampling ? 1 : 0,
		t->samples, t->other);
	for (size_t i = 0; i < t->n && i < TOPFILE_MAX_FNS; i++) {
		fprintf(f, "fn\t%" PRIu64 "\t%" PRIu64 "\t", t->fns[i].self, t->fns[i].total);
		put_escaped(f, t->fns[i].group);
		fputc('\t', f);
		put_escaped(f, t->fns[i].name);
		fputc('\n', f);
	}
	if (fflush(f) || ferror(f))
		err = -EIO;
	if (fclose(f) && !err)
		err = -errno;
	if (!err && rename(tmp, path) < 0)
		err = -errno;
	if (err)
		unlink(tmp);
	free(tmp);
	return err;
}

/* Field @s (up to a TAB or the end) unescaped into @out; the end of it. */
static const char *get_field(const char *s, char *out, size_t len)
{
	size_t n = 0;

	for (; *s && *s != '\t'; s++) {
		char c = *s;

		if (c == '\\' && s[1]) {
			s++;
			c = *s == 't' ? '\t' : *s == 'n' ? '\n' : *s;
		}
		if (n + 1 < len)
			out[n++] = c;
	}
	out[n] = '\0';
	return s;
}

static bool get_u64(const char *s, const char **end, uint64_t *v)
{
	char *e;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	*v = strtoull(s, &e, 10);
	*end = e;
	return !errno;
}

/* One "fn" line's fields (after "fn\t") into @fn; -EINVAL, -ENOMEM. */
static int get_fn(const char *s, struct topfile_fn *fn)
{
	char group[TOPFILE_MAX_NAME], name[TOPFILE_MAX_NAME];

	if (!get_u64(s, &s, &fn->self) || *s++ != '\t' || !get_u64(s, &s, &fn->total) ||
	    *s++ != '\t' || fn->self > fn->total)
		return -EINVAL;
	s = get_field(s, group, sizeof(group));
	if (*s++ != '\t')
		return -EINVAL;
	s = get_field(s, name, sizeof(name));
	if (*s || !name[0])
		return -EINVAL;
	fn->group = strdup(group);
	fn->name = strdup(name);
	if (!fn->group || !fn->name) {
		free(fn->group);
		free(fn->name);
		return -ENOMEM;
	}
	return 0;
}

int topfile_read(const char *path, struct topfile *t)
{
	char line[4 * TOPFILE_MAX_NAME + 64], key[16];
	bool ok = true;
	FILE *f = fopen(path, "re");
	int err = 0;

	memset(t, 0, sizeof(*t));
	if (!f)
		return -errno;
	if (!fgets(line, sizeof(line), f) || strcmp(line, "taproot-top 1\n")) {
		fclose(f);
		return -EINVAL;
	}
	while (ok && fgets(line, sizeof(line), f)) {
		size_t len = strlen(line);
		const char *v = line + strcspn(line, "\t"), *end;

		ok = len && line[len - 1] == '\n' && *v == '\t';
		if (!ok)
			break;
		line[len - 1] = '\0';
		snprintf(key, sizeof(key), "%.*s", (int)(v - line), line);
		v++;
		if (!strcmp(key, "fn")) {
			struct topfile_fn *fns;

			if (t->n == TOPFILE_MAX_FNS) {
				ok = false;
				break;
			}
			fns = realloc(t->fns, (t->n + 1) * sizeof(*fns));
			if (!fns) {
				err = -ENOMEM;
				break;
			}
			t->fns = fns;
			err = get_fn(v, &t->fns[t->n]);
			ok = !err;
			t->n += ok;
		} else if (!strcmp(key, "host")) {
			get_field(v, t->host, sizeof(t->host));
		} else if (!strcmp(key, "sampling")) {
			ok = (*v == '0' || *v == '1') && !v[1];
			t->sampling = *v == '1';
		} else {
			uint64_t *field = !strcmp(key, "time") ? &t->time_ns :
					  !strcmp(key, "window") ? &t->window_ns :
					  !strcmp(key, "samples") ? &t->samples :
					  !strcmp(key, "other") ? &t->other : NULL;

			/* Keys of a later format are skipped. */
			if (field)
				ok = get_u64(v, &end, field) && !*end;
		}
	}
	fclose(f);
	if (!err && (!ok || !t->time_ns))
		err = -EINVAL;
	if (err)
		topfile_free(t);
	return err;
}

void topfile_free(struct topfile *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->fns[i].group);
		free(t->fns[i].name);
	}
	free(t->fns);
	memset(t, 0, sizeof(*t));
}
