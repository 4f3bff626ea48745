// SPDX-License-Identifier: GPL-2.0
/*
 * Relabel rules (lib/profile/relabel.c): each action on a sample's labels,
 * anchored expressions, joined sources, group references, rules in order,
 * and every malformed rule refused with a message.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "profile/profile.h"
#include "util/error.h"

#define MAX 12

struct sample {
	struct taproot_profile_label l[MAX];
	size_t n;
	char scratch[256];
};

/* A sample of nginx's: pid 42, comm nginx, service_name nginx, exe. */
static void sample_init(struct sample *s)
{
	memset(s, 0, sizeof(*s));
	s->l[s->n++] = TAPROOT_LABEL_NUM("pid", 42);
	s->l[s->n++] = TAPROOT_LABEL_STR("comm", "nginx");
	s->l[s->n++] = TAPROOT_LABEL_STR("service_name", "nginx");
	s->l[s->n++] = TAPROOT_LABEL_STR("exe", "/usr/sbin/nginx");
}

static const char *value(const struct sample *s, const char *key)
{
	static char num[24];

	for (size_t i = 0; i < s->n; i++) {
		if (strcmp(s->l[i].key, key))
			continue;
		if (s->l[i].str)
			return s->l[i].str;
		snprintf(num, sizeof(num), "%lld", (long long)s->l[i].num);
		return num;
	}
	return NULL;
}

/* Apply the rules @texts (NULL-terminated) to nginx's sample, anew. */
static int apply(struct sample *s, const char *const *texts)
{
	static struct taproot_relabel *r;

	taproot_relabel_free(r);
	r = NULL;
	sample_init(s);
	for (; *texts; texts++)
		assert_int_equal(taproot_relabel_add(&r, *texts), 0);
	return taproot_relabel_apply(r, s->l, &s->n, MAX, s->scratch, sizeof(s->scratch));
}

#define RULES(...) ((const char *const[]){ __VA_ARGS__, NULL })

static void relabel_keep_and_drop_are_anchored(void **state)
{
	struct sample s;

	assert_int_equal(apply(&s, RULES("keep service_name nginx")), 1);
	assert_int_equal(apply(&s, RULES("keep service_name ngin")), 0);	/* not a prefix */
	assert_int_equal(apply(&s, RULES("keep service_name gin")), 0);		/* nor inside */
	assert_int_equal(apply(&s, RULES("keep service_name ngin.*")), 1);
	assert_int_equal(apply(&s, RULES("drop service_name nginx|sshd")), 0);
	assert_int_equal(apply(&s, RULES("drop service_name ssh.*")), 1);
	/* Numbers match as decimal text; an absent label is "". */
	assert_int_equal(apply(&s, RULES("keep pid 4[0-9]")), 1);
	assert_int_equal(apply(&s, RULES("keep container_id .+")), 0);
	assert_int_equal(apply(&s, RULES("drop container_id x?")), 0);
}

static void relabel_sources_are_joined(void **state)
{
	struct sample s;

	assert_int_equal(apply(&s, RULES("keep comm,pid nginx;42")), 1);
	assert_int_equal(apply(&s, RULES("keep comm,container_id,pid nginx;;42")), 1);
	assert_int_equal(apply(&s, RULES("keep pid,comm nginx;42")), 0);
}

static void relabel_replace_sets_adds_and_removes(void **state)
{
	struct sample s;

	/* Groups into a new label; the default replacement is $1. */
	assert_int_equal(apply(&s, RULES("replace exe /usr/(s?bin)/(.*) where $1-${2}")), 1);
	assert_string_equal(value(&s, "where"), "sbin-nginx");
	assert_int_equal(apply(&s, RULES("replace exe .*/(.*) program")), 1);
	assert_string_equal(value(&s, "program"), "nginx");
	/* An existing label, a number turned text; $$ is a dollar. */
	assert_int_equal(apply(&s, RULES("replace comm (.*) pid $$$1")), 1);
	assert_string_equal(value(&s, "pid"), "$nginx");
	assert_int_equal(s.n, 4);
	/* Empty removes; no match changes nothing. */
	assert_int_equal(apply(&s, RULES("replace comm nginx() exe $1")), 1);
	assert_null(value(&s, "exe"));
	assert_int_equal(apply(&s, RULES("replace comm sshd exe x")), 1);
	assert_string_equal(value(&s, "exe"), "/usr/sbin/nginx");
	/* Rules in order: the second sees what the first made. */
	assert_int_equal(apply(&s, RULES("replace exe .*/(.*) service_name svc-$1",
					 "keep service_name svc-nginx")), 1);
	assert_string_equal(value(&s, "service_name"), "svc-nginx");
}

static void relabel_labeldrop_removes_by_name(void **state)
{
	struct sample s;

	assert_int_equal(apply(&s, RULES("labeldrop pid|exe")), 1);
	assert_int_equal(s.n, 2);
	assert_null(value(&s, "pid"));
	assert_null(value(&s, "exe"));
	assert_string_equal(value(&s, "comm"), "nginx");
	assert_int_equal(apply(&s, RULES("labeldrop .*")), 1);
	assert_int_equal(s.n, 0);
}

static void relabel_no_room_is_told(void **state)
{
	struct taproot_relabel *r = NULL;
	struct sample s;
	char tiny[4];

	sample_init(&s);
	assert_int_equal(taproot_relabel_add(&r, "replace exe (.*) copy"), 0);
	assert_int_equal(taproot_relabel_apply(r, s.l, &s.n, MAX, tiny, sizeof(tiny)), -ENOSPC);
	assert_null(value(&s, "copy"));
	assert_int_equal(taproot_relabel_apply(r, s.l, &s.n, s.n, s.scratch, sizeof(s.scratch)),
			 -ENOSPC);
	taproot_relabel_free(r);
	/* No rules: everything kept as it is. */
	sample_init(&s);
	assert_int_equal(taproot_relabel_apply(NULL, s.l, &s.n, MAX, tiny, sizeof(tiny)), 1);
	assert_int_equal(s.n, 4);
}

static void relabel_reads_only(void **state)
{
	static const char *const process[] = { "pid", "service_name", "exe" };
	struct taproot_relabel *r = NULL;

	assert_true(taproot_relabel_reads_only(NULL, process, 3));
	assert_int_equal(taproot_relabel_add(&r, "drop service_name,pid x"), 0);
	assert_int_equal(taproot_relabel_add(&r, "labeldrop tid"), 0);
	assert_true(taproot_relabel_reads_only(r, process, 3));
	assert_int_equal(taproot_relabel_add(&r, "keep state S"), 0);
	assert_false(taproot_relabel_reads_only(r, process, 3));
	taproot_relabel_free(r);
}

static void relabel_malformed_refused(void **state)
{
	static const struct {
		const char *rule, *says;
	} bad[] = {
		{ "", "empty rule" },
		{ "   ", "empty rule" },
		{ "rename a b", "not keep, drop, replace or labeldrop" },
		{ "keep", "needs source labels" },
		{ "keep service_name", "needs a regular expression" },
		{ "keep 9lives x", "not a label name" },
		{ "keep a,,b x", "not a label name" },
		{ "keep a-b x", "not a label name" },
		{ "keep a x extra", "after the rule" },
		{ "keep a (unclosed", "(unclosed" },
		{ "replace a (x)", "target label name" },
		{ "replace a (x) bad-name", "target label name" },
		{ "replace a (x) t $2", "group 2" },
		{ "replace a (x) t $x", "group number" },
		{ "labeldrop", "needs a regular expression" },
		{ "keep a,b,c,d,e,f,g,h,i x", "more than 8 source labels" },
	};
	struct taproot_relabel *r = NULL;
	char longword[300];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int err = taproot_relabel_add(&r, bad[i].rule);

		print_message("'%s': %s\n", bad[i].rule, taproot_errmsg(err));
		assert_int_equal(err, -EINVAL);
		assert_non_null(strstr(taproot_errmsg(err), bad[i].says));
	}
	memset(longword, 'x', sizeof(longword) - 1);
	longword[sizeof(longword) - 1] = '\0';
	memcpy(longword, "keep a ", 7);
	assert_int_equal(taproot_relabel_add(&r, longword), -EINVAL);
	/* The refused rules left the list empty. */
	assert_true(taproot_relabel_reads_only(r, NULL, 0));
	for (int i = 0; i < 64; i++)
		assert_int_equal(taproot_relabel_add(&r, "labeldrop tid"), 0);
	assert_int_equal(taproot_relabel_add(&r, "labeldrop tid"), -E2BIG);
	taproot_relabel_free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(relabel_keep_and_drop_are_anchored),
		cmocka_unit_test(relabel_sources_are_joined),
		cmocka_unit_test(relabel_replace_sets_adds_and_removes),
		cmocka_unit_test(relabel_labeldrop_removes_by_name),
		cmocka_unit_test(relabel_no_room_is_told),
		cmocka_unit_test(relabel_reads_only),
		cmocka_unit_test(relabel_malformed_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
