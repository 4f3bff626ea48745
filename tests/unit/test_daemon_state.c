// SPDX-License-Identifier: GPL-2.0
/*
 * taprootd's state (ctl/daemon-state.c, ctl/status-taprootd.c): the one
 * table, daemon_stats[], drives the state file, its reader, taprootctl
 * status (text and --json) and the metrics. Every row is written to the
 * file and read back to the same value, is a metric with its HELP and
 * TYPE, and is shown where it says; status's text is byte for byte what
 * it was before the table.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "daemon.h"
#include "json.h"
#include "util/util.h"

#define NOW	INT64_C(1795842782)

/* Each row's member in @st set to a value no other has (strings: ones that need escaping). */
static void fill_every_row(struct daemon_state *st)
{
	uint64_t k = 1;

	memset(st, 0, sizeof(*st));
	for (const struct daemon_stat *r = daemon_stats; r->key; r++) {
		void *p = (char *)st + r->field;

		switch (r->type) {
		case DS_I64:
			*(int64_t *)p = NOW - (int64_t)k++;
			break;
		case DS_U64:
			/* Beyond 2^53 too: a double would not hold them exactly. */
			*(uint64_t *)p = k & 1 ? k : (UINT64_C(1) << 60) + k;
			k++;
			break;
		case DS_SECONDS:
			*(double *)p = 12.346;	/* what the file's milliseconds hold */
			break;
		case DS_BOOL:
			*(bool *)p = true;
			break;
		case DS_STR:
			snprintf(p, r->size, "/x\"y\\z\n\t\x01\x7f "
				 "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80 %s", r->key);
			break;
		case DS_ENDS:
			for (unsigned int i = 0; i < daemon_stat_nr(r); i++)
				((uint64_t *)p)[i] = 1000000 + k++;
			break;
		}
	}
}

/* What is left to read of @fd, as a string (malloc'ed). */
static char *read_rest(int fd)
{
	char *buf, *str;
	size_t len;

	assert_int_equal(tp_read_fd(fd, 1 << 20, &buf, &len), 0);
	str = calloc(1, len + 1);
	assert_non_null(str);
	memcpy(str, buf, len);
	free(buf);
	return str;
}

/* @st written to a state file and read back into @back; the file's text. */
static char *write_and_read(const struct daemon_state *st, struct daemon_state *back)
{
	char dir[] = "/tmp/test_daemon_state.XXXXXX", path[64];
	char *text;
	int fd;

	assert_non_null(mkdtemp(dir));
	/* A directory that does not exist yet: the writer makes it. */
	snprintf(path, sizeof(path), "%s/run/taprootd.json", dir);
	assert_int_equal(daemon_state_write(path, st), 0);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(fd >= 0);
	text = read_rest(fd);
	close(fd);
	assert_int_equal(daemon_state_read(path, back), 0);
	assert_int_equal(unlink(path), 0);
	snprintf(path, sizeof(path), "%s/run", dir);
	assert_int_equal(rmdir(path), 0);
	assert_int_equal(rmdir(dir), 0);
	return text;
}

/* What taprootctl status prints of @st at NOW (malloc'ed). */
static char *status_text(const struct daemon_state *st)
{
	FILE *tmp = tmpfile();
	int saved = dup(STDOUT_FILENO);
	char *text;

	assert_non_null(tmp);
	fflush(stdout);
	assert_true(dup2(fileno(tmp), STDOUT_FILENO) >= 0);
	daemon_state_print(st, NOW);
	fflush(stdout);
	assert_true(dup2(saved, STDOUT_FILENO) >= 0);
	close(saved);
	assert_int_equal(lseek(fileno(tmp), 0, SEEK_SET), 0);
	text = read_rest(fileno(tmp));
	fclose(tmp);
	return text;
}

/* What taprootctl status --json writes of @st (malloc'ed). */
static char *status_json(const struct daemon_state *st)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct taproot_json *j;

	assert_non_null(f);
	assert_int_equal(taproot_json_new(f, &j), 0);
	daemon_state_json(st, j);
	assert_int_equal(taproot_json_free(j), 0);
	fclose(f);
	return buf;
}

/* ------------------------------------------------------------ the table */

static int by_field(const void *a, const void *b)
{
	const struct daemon_stat *x = *(const struct daemon_stat *const *)a,
				 *y = *(const struct daemon_stat *const *)b;

	return (x->field > y->field) - (x->field < y->field);
}

static void table_rows_are_well_formed(void **state)
{
	const struct daemon_stat *rows[256];
	size_t nr = 0, end = 0;

	for (const struct daemon_stat *r = daemon_stats; r->key; r++) {
		const char *m = r->metric.name;

		/* The type fits the member's size. */
		switch (r->type) {
		case DS_I64:
		case DS_U64:
			assert_int_equal(r->size, sizeof(uint64_t));
			break;
		case DS_SECONDS:
			assert_int_equal(r->size, sizeof(double));
			break;
		case DS_BOOL:
			assert_int_equal(r->size, sizeof(bool));
			break;
		case DS_STR:
			assert_true(r->size > 1);
			assert_int_equal(r->metric.type, DM_NONE);
			break;
		case DS_ENDS:
			assert_true(r->size && r->size % sizeof(uint64_t) == 0);
			assert_non_null(r->name);
			for (unsigned int i = 0; i < daemon_stat_nr(r); i++)
				assert_non_null(r->name(i));
			break;
		}
		assert_true(r->field + r->size <= sizeof(struct daemon_state));
		assert_true(nr < sizeof(rows) / sizeof(rows[0]));
		rows[nr++] = r;
		/* Keys, --json names and metrics: one row each. */
		assert_ptr_equal(daemon_stat_find(r->key), r);
		for (const struct daemon_stat *o = daemon_stats; o < r; o++) {
			assert_true(o->field + o->size <= r->field ||
				    r->field + r->size <= o->field);
			assert_false(r->json && o->json && !strcmp(r->json, o->json));
			assert_false(m && o->metric.name && !strcmp(m, o->metric.name));
		}
		if (r->metric.type != DM_NONE) {
			assert_non_null(m);
			assert_int_equal(strspn(m, "abcdefghijklmnopqrstuvwxyz0123456789_"),
					 strlen(m));
			assert_non_null(r->metric.help);
			assert_null(strchr(r->metric.help, '\n'));
		}
		if (r->text.line != DSL_NONE) {
			assert_true(r->text.line < DSL_NR);
			assert_non_null(r->text.before);
			assert_non_null(r->text.after);
			if (r->text.shown == DSH_CHOICE)
				assert_non_null(strchr(r->text.after, '|'));
		}
	}
	/*
	 * Every member has its row: what no row covers is padding, less
	 * than a uint64_t at each place (a counter added without its row
	 * is not).
	 */
	qsort(rows, nr, sizeof(rows[0]), by_field);
	for (size_t i = 0; i < nr; i++) {
		if (rows[i]->field - end >= sizeof(uint64_t))
			fail_msg("no row for the bytes %zu..%zu", end, rows[i]->field);
		end = rows[i]->field + rows[i]->size;
	}
	assert_true(sizeof(struct daemon_state) - end < sizeof(uint64_t));
	for (int l = DSL_NONE + 1; l < DSL_NR; l++) {
		const char *when = daemon_status_lines[l].when;

		assert_non_null(daemon_status_lines[l].label);
		if (!when)
			continue;
		assert_non_null(daemon_stat_find(when));
		assert_int_equal(daemon_stat_find(when)->type, DS_BOOL);
	}
}

/* The library's upload counters: a new one fails here until it has its row. */
static void table_has_every_upload_counter(void **state)
{
	const struct daemon_stat *r;

#define X(f)								\
	r = daemon_stat_find("kupload_" #f);				\
	assert_non_null(r);						\
	assert_int_equal(r->field, offsetof(struct daemon_state, kupload.f));
	TAPROOT_KUPLOAD_FIELDS(X)
#undef X
	(void)r;
}

/* ------------------------------------------------------------ state file */

static void state_file_round_trips_every_row(void **state)
{
	struct daemon_state st, back;
	char key[128], *text = NULL, *line, *save;
	size_t lines = 0, members = 0;

	fill_every_row(&st);
	text = write_and_read(&st, &back);
	for (const struct daemon_stat *r = daemon_stats; r->key; r++) {
		unsigned int nr = r->type == DS_ENDS ? daemon_stat_nr(r) : 1;

		for (unsigned int i = 0; i < nr; i++) {
			if (r->type == DS_ENDS)
				snprintf(key, sizeof(key), "\n\"%s_%s\": ", r->key, r->name(i));
			else
				snprintf(key, sizeof(key), "\n\"%s\": ", r->key);
			if (!strstr(text, key))
				fail_msg("no %s in the state file", key + 1);
			members++;
		}
		if (memcmp((char *)&st + r->field, (char *)&back + r->field, r->size))
			fail_msg("%s: read back as another value", r->key);
	}
	assert_memory_equal(&st, &back, sizeof(st));
	/* A flat object, one member a line, the last without a comma. */
	assert_true(!strncmp(text, "{\n", 2));
	for (line = strtok_r(text + 2, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		bool last = ++lines == members;

		if (lines > members) {
			assert_string_equal(line, "}");
			continue;
		}
		assert_true(line[0] == '"' && strstr(line, "\": "));
		assert_int_equal(line[strlen(line) - 1] == ',', !last);
	}
	assert_int_equal(lines, members + 1);
	free(text);
}

static void state_file_strings_are_json(void **state)
{
	struct daemon_state st = { .pid = 1 }, back;
	char *text;

	/* Control characters escaped, bytes that are not UTF-8 as U+FFFD. */
	snprintf(st.output, sizeof(st.output), "a\"b\\c\nd\x01\x7f\xff\xc3\xa9");
	text = write_and_read(&st, &back);
	assert_non_null(strstr(text, "\"output\": "
			       "\"a\\\"b\\\\c\\nd\\u0001\\u007f\\ufffd\xc3\xa9\",\n"));
	assert_string_equal(back.output, "a\"b\\c\nd\x01\x7f\xef\xbf\xbd\xc3\xa9");
	free(text);
}

static void state_read_refuses_a_file_without_pid(void **state)
{
	struct daemon_state st;
	char path[] = "/tmp/test_daemon_state.XXXXXX";
	int fd = mkstemp(path);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, "{\n\"samples\": 3\n}\n", 17), 17);
	close(fd);
	assert_int_equal(daemon_state_read(path, &st), -EINVAL);
	assert_int_equal(st.samples, 3);
	unlink(path);
	assert_int_equal(daemon_state_read(path, &st), -ENOENT);
}

/* ------------------------------------------------------------ metrics */

static void metrics_have_every_metric_row(void **state)
{
	struct daemon_state st;
	char buf[DAEMON_METRICS_MAX], want[512];
	size_t n, helps = 0, rows = 0;
	const char *p;

	fill_every_row(&st);
	n = daemon_metrics_text(&st, buf, sizeof(buf));
	assert_true(n < sizeof(buf));
	for (const struct daemon_stat *r = daemon_stats; r->key; r++) {
		const char *m = r->metric.name;
		const void *v = (const char *)&st + r->field;
		char *at;

		if (r->metric.type == DM_NONE)
			continue;
		rows++;
		snprintf(want, sizeof(want), "# HELP taprootd_%s %s\n# TYPE taprootd_%s %s\n", m,
			 r->metric.help, m, r->metric.type == DM_COUNTER ? "counter" : "gauge");
		at = strstr(buf, want);
		if (!at)
			fail_msg("no HELP and TYPE of taprootd_%s", m);
		at += strlen(want);
		switch (r->type) {
		case DS_I64:
			snprintf(want, sizeof(want), "taprootd_%s %" PRId64 "\n", m,
				 *(const int64_t *)v);
			break;
		case DS_U64:
			snprintf(want, sizeof(want), "taprootd_%s %" PRIu64 "\n", m,
				 *(const uint64_t *)v);
			break;
		case DS_SECONDS:
			snprintf(want, sizeof(want), "taprootd_%s %.17g\n", m, *(const double *)v);
			break;
		case DS_BOOL:
			snprintf(want, sizeof(want), "taprootd_%s 1\n", m);
			break;
		case DS_ENDS:
			for (unsigned int i = 0; i < daemon_stat_nr(r); i++) {
				snprintf(want, sizeof(want),
					 "taprootd_%s{result=\"%s\"} %" PRIu64 "\n", m, r->name(i),
					 ((const uint64_t *)v)[i]);
				assert_true(!strncmp(at, want, strlen(want)));
				at += strlen(want);
			}
			continue;
		default:
			fail_msg("taprootd_%s: a string", m);
		}
		/* The sample right after its HELP and TYPE. */
		if (strncmp(at, want, strlen(want)))
			fail_msg("taprootd_%s: want %s", m, want);
	}
	for (p = buf; (p = strstr(p, "# HELP ")); p++)
		helps++;
	assert_int_equal(helps, rows);
}

/* The largest values still fit the room the metrics have. */
static void metrics_fit_their_room(void **state)
{
	struct daemon_state st;
	char buf[DAEMON_METRICS_MAX];

	memset(&st, 0xff, sizeof(st));
	for (const struct daemon_stat *r = daemon_stats; r->key; r++) {
		if (r->type == DS_SECONDS)
			*(double *)((char *)&st + r->field) = -1.2345678901234567e300;
		else if (r->type == DS_BOOL)
			*(bool *)((char *)&st + r->field) = true;
		else if (r->type == DS_STR)
			*((char *)&st + r->field) = '\0';
	}
	assert_true(daemon_metrics_text(&st, buf, sizeof(buf)) < sizeof(buf) - 1);
}

/* ------------------------------------------------------------ status */

/* A taprootd an hour up, its counters as status shows them; @on: every line on. */
static void fill_status(struct daemon_state *st, bool on)
{
	static const uint64_t kunwind[TAPROOT_PIPELINE_KUNWIND_NR] = {
		1042, 1043, 1044, 1045, 1046, 1047, 1048, 1049, 1050, 1051,
	};

	memset(st, 0, sizeof(*st));
	*st = (struct daemon_state){
		.pid = 4242, .started = NOW - 3600, .updated = NOW - 2, .cpu_seconds = 12.346,
		.rss_bytes = 123456789, .sampling = !on, .samples = 1000, .lost = 1001,
		.unwind_permille = 987, .profiles = 1002, .interval = 10, .offcpu = on,
		.intervals = 1003, .unpaired = 1004, .module_unwind = on,
		.kupload = { .tables_uploaded = 101024, .table_bytes = 201025,
			     .maps_uploaded = 501028, .budget_refusals = 1001033,
			     .errors = 1301036, .tables = 1501038, .procs = 1601039 },
		.stack_refs = 1052, .stack_refs_unresolved = 1053, .counted = 1054,
		.counted_unresolved = 1055, .push = on, .push_uploaded = 1056,
		.push_failures = 1057, .push_rejected = 1058, .push_dropped = 1059,
		.push_queued = 1060, .push_queued_bytes = 1061, .push_partial_rejected = 1062,
		.push_last_success = on ? NOW - 5 : 0,
	};
	memcpy(st->kunwind, kunwind, sizeof(kunwind));
	snprintf(st->output, sizeof(st->output), "/var/lib/taproot");
	if (on)
		snprintf(st->last_profile, sizeof(st->last_profile),
			 "/var/lib/taproot/cpu-20240101T000000Z.pb.gz");
}

/* As taprootctl status printed them before daemon_stats[] (ctl/cmd-daemon.c). */
static void status_text_as_before(void **state)
{
	struct daemon_state st;
	char *text;

	fill_status(&st, true);
	text = status_text(&st);
	assert_string_equal(text,
		"taprootd:       pid 4242, up 3600 s, waiting for sampling\n"
		"  usage:        12.35 s CPU (0.34% of one CPU), 117.7 MiB resident (at 2 s ago)\n"
		"  samples:      1000 samples, 1001 lost, 98.7% unwound completely\n"
		"  off-cpu:      1003 intervals joined, 1004 unpaired\n"
		"  kernel walks: 22.1% of 9423 ended well (complete 1043, max-frames 1044, "
		"no-proc 1045, stale 1046, no-mapping 1047, no-cfi 1048, slow-rule 1049, "
		"fault 1050, bad-frame 1051); 1052 stack refs, 1053 unresolved; 1054 samples "
		"counted in the module, 1055 unresolved\n"
		"  uploads:      101024 tables (196 KiB), 501028 process mapping sets; held now: "
		"1501038 tables, 1601039 processes; 1001033 refused for room, 1301036 errors\n"
		"  profiles:     1002 written every 10 s to /var/lib/taproot, last "
		"/var/lib/taproot/cpu-20240101T000000Z.pb.gz\n"
		"  push:         1056 uploaded (last 5 s ago), 1060 waiting (1061 bytes), "
		"1057 failed attempts, 1058 refused, 1062 profiles refused in accepted uploads, "
		"1059 dropped by the spool's bound\n");
	free(text);

	/* Unwinding in the module, push and off-CPU off; nothing yet. */
	fill_status(&st, false);
	st.updated = st.started;
	st.cpu_seconds = 0;
	memset(st.kunwind, 0, sizeof(st.kunwind));
	text = status_text(&st);
	assert_string_equal(text,
		"taprootd:       pid 4242, up 3600 s, reading the rings\n"
		"  usage:        0.00 s CPU (0.00% of one CPU), 117.7 MiB resident "
		"(at 3600 s ago)\n"
		"  samples:      1000 samples, 1001 lost, 98.7% unwound completely\n"
		"  kernel walks: off (unwind off): user stacks unwound from snapshots\n"
		"  profiles:     1002 written every 10 s to /var/lib/taproot\n");
	free(text);
	st.module_unwind = true;
	text = status_text(&st);
	assert_non_null(strstr(text, "  kernel walks: 0.0% of 0 ended well (none); 1052 stack"));
	free(text);
}

static void status_json_has_every_json_row(void **state)
{
	struct daemon_state st;
	char *json, want[256];

	fill_status(&st, true);
	json = status_json(&st);
	assert_string_equal(json,
		"{\"pid\":4242,\"started\":1795839182,\"cpu_ms\":12346,\"rss_bytes\":123456789,"
		"\"updated\":1795842780,\"sampling\":false,\"samples\":1000,\"lost\":1001,"
		"\"unwind_complete_permille\":987,\"profiles\":1002,\"interval\":10,"
		"\"offcpu\":true,\"intervals\":1003,\"unpaired\":1004,\"module_unwind\":true,"
		"\"kernel_uploads\":{\"tables_uploaded\":101024,\"table_bytes\":201025,"
		"\"tables_existed\":0,\"tables_deleted\":0,\"maps_uploaded\":501028,"
		"\"maps_forgotten\":0,\"maps_fp\":0,\"maps_left_out\":0,\"stale_retries\":0,"
		"\"deferred\":0,\"maps_current\":0,\"work_ns\":0,\"tables\":1501038,"
		"\"procs\":1601039,\"budget_refusals\":1001033,\"errors\":1301036,"
		"\"python_procs\":0,\"python_unwalked\":0,\"jvm_procs\":0,\"jvm_unwalked\":0},"
		"\"kunwind\":{\"none\":1042,\"complete\":1043,\"max-frames\":1044,\"no-proc\":1045,"
		"\"stale\":1046,\"no-mapping\":1047,\"no-cfi\":1048,\"slow-rule\":1049,"
		"\"fault\":1050,\"bad-frame\":1051},"
		"\"stack_refs\":1052,\"stack_refs_unresolved\":1053,\"counted\":1054,"
		"\"counted_unresolved\":1055,\"output\":\"/var/lib/taproot\","
		"\"last_profile\":\"/var/lib/taproot/cpu-20240101T000000Z.pb.gz\","
		"\"push\":{\"uploaded\":1056,\"last_success\":1795842777,\"queued\":1060,"
		"\"queued_bytes\":1061,\"failures\":1057,\"rejected\":1058,\"partial_rejected\":1062,\"dropped\":1059}}\n");
	free(json);

	/* Every row named, whatever its group: "NAME": with its group's value. */
	fill_every_row(&st);
	json = status_json(&st);
	for (const struct daemon_stat *r = daemon_stats; r->key; r++) {
		const char *dot = r->json ? strchr(r->json, '.') : NULL;

		if (!r->json)
			continue;
		snprintf(want, sizeof(want), "\"%s\":", dot ? dot + 1 : r->json);
		if (!strstr(json, want))
			fail_msg("no %s in %s", want, json);
	}
	free(json);

	/* A group whose bool is false is null, its rows left out. */
	fill_status(&st, false);
	json = status_json(&st);
	assert_non_null(strstr(json, ",\"push\":null}\n"));
	assert_null(strstr(json, "\"uploaded\""));
	free(json);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(table_rows_are_well_formed),
		cmocka_unit_test(table_has_every_upload_counter),
		cmocka_unit_test(state_file_round_trips_every_row),
		cmocka_unit_test(state_file_strings_are_json),
		cmocka_unit_test(state_read_refuses_a_file_without_pid),
		cmocka_unit_test(metrics_have_every_metric_row),
		cmocka_unit_test(metrics_fit_their_room),
		cmocka_unit_test(status_text_as_before),
		cmocka_unit_test(status_json_has_every_json_row),
	};

	return cmocka_run_group_tests_name("daemon_state", tests, NULL, NULL);
}
