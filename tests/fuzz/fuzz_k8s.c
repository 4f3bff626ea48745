// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: a container runtime's file for a container through
 * what the process model makes of it: the JSON reader (tp_json_lookup())
 * and the Kubernetes fields of each runtime's layout (tp_k8s_parse()).
 * Seeds: the unit test's fixtures of each runtime (tests/fuzz/run);
 * dictionary: tests/fuzz/k8s.dict.
 *
 * What a success promises is checked: a value answered is NUL-terminated
 * at its length, within its buffer, valid UTF-8 without control
 * characters (what a label may carry); a query not answered has "" and
 * one of the reasons json.h lists; the runtimes' fields likewise, "" or
 * such a value. The same input read twice answers the same. A breach
 * aborts.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "process/process-private.h"
#include "util/error.h"
#include "util/json.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	return 0;
}

/* @s (@n bytes) is UTF-8 as RFC 3629 allows, without C0 controls or DEL. */
static bool label_text(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;

	for (size_t i = 0; i < n;) {
		int k = p[i] < 0x80 ? 1 : tp_utf8_len(p + i, n - i);

		if (!k || p[i] < 0x20 || p[i] == 0x7f)
			return false;
		i += (size_t)k;
	}
	return true;
}

static void check_answer(const char *out, size_t size, int result)
{
	check(memchr(out, '\0', size) != NULL);
	if (result >= 0) {
		check((size_t)result < size && strlen(out) == (size_t)result);
		check(label_text(out, (size_t)result));
	} else {
		check(!out[0]);
		check(result == -ENOENT || result == -EINVAL || result == -E2BIG ||
		      result == -EILSEQ);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const pa[] = { "a" }, *const pab[] = { "a", "b" };
	static const char *const pann[] = { "annotations", "io.kubernetes.pod.name" };
	static const char *const plab[] = { "Config", "Labels", "io.kubernetes.pod.uid" };
	/* Not NUL-terminated: the reader must keep to @size. */
	const char *doc = (const char *)data;
	char out[5][16], again[16];
	struct tp_json_query q[] = {
		{ pa, 1, out[0], sizeof(out[0]), 0 }, { pab, 2, out[1], sizeof(out[1]), 0 },
		{ pann, 2, out[2], sizeof(out[2]), 0 }, { plab, 3, out[3], sizeof(out[3]), 0 },
		{ pa, 1, out[4], 4, 0 },	/* the same path, less room */
	};
	struct tp_json_query q2 = { pa, 1, again, sizeof(again), 0 };
	struct tp_k8s_meta m;
	int err;

	err = tp_json_lookup(doc, size, q, sizeof(q) / sizeof(q[0]));
	check(!err || err == -TAPROOT_EPROTO);
	check((tp_json_lookup(doc, size, &q2, 1) == 0) == !err);
	if (!err) {
		for (size_t i = 0; i < sizeof(q) / sizeof(q[0]); i++)
			check_answer(q[i].out, q[i].size, q[i].result);
		check(q2.result == q[0].result && !strcmp(again, out[0]));
		check(q[4].result == q[0].result ||
		      (q[4].result == -E2BIG && q[0].result >= (int)q[4].size));
	}
	for (int rt = 0; rt < TP_K8S_NR_RUNTIMES; rt++) {
		int perr = tp_k8s_parse(rt, doc, size, &m);

		/* The same document: valid for every layout, or for none. */
		check(perr == err);
		for (int f = 0; f < TP_K8S_NR_FIELDS; f++) {
			size_t n = strnlen(m.value[f], sizeof(m.value[f]));

			check(n < sizeof(m.value[f]) && label_text(m.value[f], n));
			check(!perr || !n);
		}
	}
	return 0;
}
