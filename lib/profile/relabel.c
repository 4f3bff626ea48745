// SPDX-License-Identifier: GPL-2.0
/*
 * Relabeling: rules that keep, drop or rewrite samples by their labels, a
 * subset of Prometheus's relabel_config (docs/profiles-and-labels.md). A
 * rule is one line of words:
 *
 *   keep SOURCES REGEX       the sample stays only if the value matches
 *   drop SOURCES REGEX       the sample goes if the value matches
 *   replace SOURCES REGEX TARGET [REPLACEMENT]
 *                            if the value matches, label TARGET becomes
 *                            REPLACEMENT ($1..$9, ${1}..${9} the groups,
 *                            $$ a dollar; default "$1"); empty removes it
 *   labeldrop REGEX          labels whose names match are removed
 *
 * SOURCES is one or more label names joined by commas; the value matched is
 * theirs joined by ';' (an absent label is ""). REGEX is a POSIX extended
 * expression, anchored at both ends as Prometheus's are. Rules apply in
 * order, each to what the ones before left.
 */
#include <errno.h>
#include <inttypes.h>
#include <regex.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile/profile.h"
#include "util/util.h"

#define RL_RULES_MAX	64
#define RL_SOURCES_MAX	8
#define RL_WORD_MAX	256
#define RL_GROUPS	10	/* $0..$9 */

enum rl_action { RL_KEEP, RL_DROP, RL_REPLACE, RL_LABELDROP };

struct rl_rule {
	enum rl_action action;
	unsigned int nr_sources;
	char sources[RL_SOURCES_MAX][RL_WORD_MAX];
	char target[RL_WORD_MAX];
	char replacement[RL_WORD_MAX];
	regex_t re;
};

struct taproot_relabel {
	unsigned int nr;
	struct rl_rule rule[RL_RULES_MAX];
};

static const char *const rl_action_names[] = {
	[RL_KEEP] = "keep", [RL_DROP] = "drop", [RL_REPLACE] = "replace",
	[RL_LABELDROP] = "labeldrop",
};

/* ------------------------------------------------------------ parsing */

static bool rl_label_name_ok(const char *s)
{
	if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_'))
		return false;
	for (s++; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_' ||
		      (*s >= '0' && *s <= '9')))
			return false;
	return true;
}

/* The next word of *@pp (blanks separate words) into @w; false at the end. */
static bool rl_word(const char **pp, char *w, size_t len, bool *too_long)
{
	const char *p = *pp + strspn(*pp, " \t");
	size_t n = strcspn(p, " \t");

	*pp = p + n;
	*too_long = n >= len;
	if (!n || *too_long)
		return false;
	memcpy(w, p, n);
	w[n] = '\0';
	return true;
}

static int rl_parse_sources(struct rl_rule *r, const char *word)
{
	const char *s = word;

	for (;;) {
		size_t n = strcspn(s, ",");

		if (r->nr_sources == RL_SOURCES_MAX)
			return tp_err(-EINVAL, "relabel: more than %d source labels",
				      RL_SOURCES_MAX);
		memcpy(r->sources[r->nr_sources], s, n);
		r->sources[r->nr_sources][n] = '\0';
		if (!rl_label_name_ok(r->sources[r->nr_sources]))
			return tp_err(-EINVAL, "relabel: '%s' is not a label name", word);
		r->nr_sources++;
		if (!s[n])
			return 0;
		s += n + 1;
	}
}

/* Every $N of @r's replacement names a group of its regex. */
static int rl_check_replacement(const struct rl_rule *r)
{
	for (const char *p = r->replacement; *p; p++) {
		unsigned int g;

		if (*p != '$')
			continue;
		if (p[1] == '$') {
			p++;
			continue;
		}
		if (p[1] >= '0' && p[1] <= '9')
			g = (unsigned int)(p[1] - '0');
		else if (p[1] == '{' && p[2] >= '0' && p[2] <= '9' && p[3] == '}')
			g = (unsigned int)(p[2] - '0');
		else
			return tp_err(-EINVAL, "relabel: '%s': '$' must be followed by a group "
				      "number 0-9, {N} or '$'", r->replacement);
		if (g > r->re.re_nsub)
			return tp_err(-EINVAL, "relabel: '%s' uses group %u, the expression has %zu",
				      r->replacement, g, r->re.re_nsub);
	}
	return 0;
}

static int rl_parse(struct rl_rule *r, const char *text)
{
	char action[RL_WORD_MAX], word[RL_WORD_MAX], regex[RL_WORD_MAX], extra[RL_WORD_MAX];
	const char *p = text;
	bool long_word = false;
	int err;

	if (!rl_word(&p, action, sizeof(action), &long_word))
		return tp_err(-EINVAL, "relabel: an empty rule");
	for (r->action = RL_KEEP; r->action <= RL_LABELDROP; r->action++)
		if (!strcmp(action, rl_action_names[r->action]))
			break;
	if (r->action > RL_LABELDROP)
		return tp_err(-EINVAL, "relabel: '%s' is not keep, drop, replace or labeldrop",
			      action);
	if (r->action != RL_LABELDROP) {
		if (!rl_word(&p, word, sizeof(word), &long_word))
			return tp_err(-EINVAL, "relabel: '%s' needs source labels and a regular "
				      "expression", action);
		err = rl_parse_sources(r, word);
		if (err)
			return err;
	}
	if (!rl_word(&p, regex, sizeof(regex), &long_word))
		return tp_err(-EINVAL, "relabel: '%s' needs a regular expression%s", action,
			      long_word ? " shorter than 256 bytes" : "");
	if (r->action == RL_REPLACE) {
		if (!rl_word(&p, r->target, sizeof(r->target), &long_word) ||
		    !rl_label_name_ok(r->target))
			return tp_err(-EINVAL, "relabel: replace needs a target label name");
		if (!rl_word(&p, r->replacement, sizeof(r->replacement), &long_word) &&
		    !long_word)
			strcpy(r->replacement, "$1");
		if (long_word)
			return tp_err(-EINVAL, "relabel: a replacement of 256 bytes or more");
	}
	if (rl_word(&p, extra, sizeof(extra), &long_word) || long_word)
		return tp_err(-EINVAL, "relabel: '%s' after the rule", long_word ? "a word" : extra);
	err = regcomp(&r->re, regex, REG_EXTENDED);
	if (err) {
		regerror(err, &r->re, word, sizeof(word));
		return tp_err(-EINVAL, "relabel: '%s': %s", regex, word);
	}
	if (r->action == RL_REPLACE && (err = rl_check_replacement(r))) {
		regfree(&r->re);
		return err;
	}
	return 0;
}

int taproot_relabel_add(struct taproot_relabel **rules, const char *text)
{
	struct taproot_relabel *rl = *rules;
	int err;

	if (!rl) {
		rl = calloc(1, sizeof(*rl));
		if (!rl)
			return tp_err(-ENOMEM, NULL);
		*rules = rl;
	}
	if (rl->nr == RL_RULES_MAX)
		return tp_err(-E2BIG, "relabel: more than %d rules", RL_RULES_MAX);
	memset(&rl->rule[rl->nr], 0, sizeof(rl->rule[0]));
	err = rl_parse(&rl->rule[rl->nr], text);
	if (!err)
		rl->nr++;
	return err;
}

void taproot_relabel_free(struct taproot_relabel *rules)
{
	if (!rules)
		return;
	for (unsigned int i = 0; i < rules->nr; i++)
		regfree(&rules->rule[i].re);
	free(rules);
}

bool taproot_relabel_reads_only(const struct taproot_relabel *rules, const char *const *keys,
				size_t nr)
{
	for (unsigned int i = 0; rules && i < rules->nr; i++) {
		const struct rl_rule *r = &rules->rule[i];

		for (unsigned int s = 0; s < r->nr_sources; s++) {
			size_t k;

			for (k = 0; k < nr && strcmp(keys[k], r->sources[s]); k++)
				;
			if (k == nr)
				return false;
		}
	}
	return true;
}

/* ------------------------------------------------------------ applying */

/* Room for values the rules make, and for numbers written as text. */
struct rl_scratch {
	char *buf;
	size_t len, used;
};

static const char *rl_value(const struct taproot_profile_label *l, char *num, size_t len)
{
	if (l->str)
		return l->str;
	snprintf(num, len, "%" PRId64, l->num);
	return num;
}

static struct taproot_profile_label *rl_find(struct taproot_profile_label *l, size_t n,
					     const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(l[i].key, key))
			return &l[i];
	return NULL;
}

/* The sources of @r joined by ';' into @out (@len bytes; cut when longer). */
static void rl_join(const struct rl_rule *r, struct taproot_profile_label *l, size_t n,
		    char *out, size_t len)
{
	size_t o = 0;
	char num[24];

	out[0] = '\0';
	for (unsigned int s = 0; s < r->nr_sources && o < len; s++) {
		const struct taproot_profile_label *x = rl_find(l, n, r->sources[s]);

		o += (size_t)snprintf(out + o, len - o, "%s%s", s ? ";" : "",
				      x ? rl_value(x, num, sizeof(num)) : "");
	}
}

/* Whether @re matches the whole of @s, its groups in @m. */
static bool rl_match(const regex_t *re, const char *s, regmatch_t *m)
{
	return !regexec(re, s, RL_GROUPS, m, 0) && m[0].rm_so == 0 &&
	       (size_t)m[0].rm_eo == strlen(s);
}

/* @r's replacement with the groups @m of @s, into the scratch; NULL if full. */
static const char *rl_expand(const struct rl_rule *r, const char *s, const regmatch_t *m,
			     struct rl_scratch *sc)
{
	char *out = sc->buf + sc->used;
	size_t room = sc->len - sc->used, o = 0;

	for (const char *p = r->replacement; *p; p++) {
		const char *add = p;
		size_t n = 1;

		if (*p == '$' && p[1] == '$') {
			p++;
		} else if (*p == '$') {
			unsigned int g = (unsigned int)(p[1] == '{' ? p[2] - '0' : p[1] - '0');

			p += p[1] == '{' ? 3 : 1;
			add = s + m[g].rm_so;
			n = m[g].rm_so < 0 ? 0 : (size_t)(m[g].rm_eo - m[g].rm_so);
		}
		if (o + n >= room)
			return NULL;
		memcpy(out + o, add, n);
		o += n;
	}
	out[o] = '\0';
	sc->used += o + 1;
	return out;
}

static void rl_remove(struct taproot_profile_label *l, size_t *n, size_t i)
{
	memmove(&l[i], &l[i + 1], (*n - i - 1) * sizeof(l[0]));
	(*n)--;
}

/* Apply the replace rule @r; false when the scratch or the labels are full. */
static bool rl_replace(const struct rl_rule *r, struct taproot_profile_label *l, size_t *n,
		       size_t max, const char *joined, const regmatch_t *m, struct rl_scratch *sc)
{
	struct taproot_profile_label *t = rl_find(l, *n, r->target);
	const char *v = rl_expand(r, joined, m, sc);

	if (!v)
		return false;
	if (!*v) {
		if (t)
			rl_remove(l, n, (size_t)(t - l));
		return true;
	}
	if (!t) {
		if (*n == max)
			return false;
		t = &l[(*n)++];
	}
	*t = TAPROOT_LABEL_STR(r->target, v);
	return true;
}

int taproot_relabel_apply(const struct taproot_relabel *rules, struct taproot_profile_label *l,
			  size_t *n, size_t max, char *scratch, size_t scratch_len)
{
	struct rl_scratch sc = { .buf = scratch, .len = scratch_len };
	char joined[RL_SOURCES_MAX * RL_WORD_MAX];
	regmatch_t m[RL_GROUPS];
	int ret = 1;

	for (unsigned int i = 0; rules && i < rules->nr; i++) {
		const struct rl_rule *r = &rules->rule[i];

		if (r->action == RL_LABELDROP) {
			for (size_t k = *n; k-- > 0;)
				if (rl_match(&r->re, l[k].key, m))
					rl_remove(l, n, k);
			continue;
		}
		rl_join(r, l, *n, joined, sizeof(joined));
		if (r->action == RL_KEEP && !rl_match(&r->re, joined, m))
			return 0;
		if (r->action == RL_DROP && rl_match(&r->re, joined, m))
			return 0;
		if (r->action == RL_REPLACE && rl_match(&r->re, joined, m) &&
		    !rl_replace(r, l, n, max, joined, m, &sc))
			ret = -ENOSPC;
	}
	return ret;
}

bool taproot_labeling_finish(struct taproot_labeling *lb, const struct tp_labels *proc,
			     struct taproot_profile_label *l, size_t *n, size_t max,
			     uint64_t *dropped, uint64_t *skipped)
{
	int kept;

	for (unsigned int i = 0; proc && i < proc->nr && *n < max; i++)
		l[(*n)++] = TAPROOT_LABEL_STR(proc->key[i], proc->value[i]);
	for (size_t i = 0; i < lb->nr_statics && *n < max; i++)
		l[(*n)++] = lb->statics[i];
	if (!lb->rules)
		return true;
	kept = taproot_relabel_apply(lb->rules, l, n, max, lb->scratch, sizeof(lb->scratch));
	if (kept < 0)
		(*skipped)++;
	if (!kept)
		(*dropped)++;
	return kept != 0;
}
