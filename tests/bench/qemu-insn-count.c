// SPDX-License-Identifier: GPL-2.0
/*
 * qemu-insn-count: a QEMU TCG plugin that counts the guest instructions
 * executed, per translation block, so that the benchmarks can say exactly
 * what an event costs in the guest (scripts/bench-guest, series "insns").
 * Wall-clock ratios under TCG vary by a point or more between identical
 * runs; instruction counts do not, and they can be split by kernel symbol.
 *
 * usage: qemu-system-x86_64 ... -accel tcg,thread=single \
 *            -plugin build/tools/qemu-insn-count.so,dir=DIR
 *
 * thread=single: the counters are plain adds inlined into the translated
 * code (QEMU's "inline op"), exact only when one host thread runs the
 * vCPUs. At install the plugin writes DIR/ready. Whenever a file
 * DIR/NAME.req appears (the guest makes it through a shared directory,
 * under another name first and then renamed, since it is removed at once),
 * the plugin removes it and writes DIR/NAME.tbs (through NAME.tbs.tmp and
 * a rename): one line per block executed since QEMU started,
 * "VADDR_HEX INSNS EXECUTIONS", VADDR the guest virtual address of its
 * first instruction, INSNS its length in instructions. A block cut short
 * by an interrupt counts as executed in full, and a "rep" string
 * instruction counts once per iteration (TCG runs each as a block).
 *
 * Debian packages no qemu-plugin.h: the few entry points of QEMU's plugin
 * API (version 1, QEMU 4.2 to 8.x) used here are declared below, as
 * include/qemu/qemu-plugin.h of those versions documents them.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------- QEMU plugin API, version 1 */

#define QPLUGIN_EXPORT __attribute__((visibility("default")))

typedef uint64_t qemu_plugin_id_t;

typedef struct {
	const char *target_name;
	struct {
		int min, cur;
	} version;
	bool system_emulation;
	union {
		struct {
			int smp_vcpus, max_vcpus;
		} system;
	};
} qemu_info_t;

struct qemu_plugin_tb;

enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };

typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, enum qemu_plugin_op op,
					      void *ptr, uint64_t imm);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
uint64_t qemu_plugin_tb_vaddr(const struct qemu_plugin_tb *tb);

QPLUGIN_EXPORT int qemu_plugin_version = 1;
QPLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc,
				       char **argv);

/* ------------------------------------------------------------ counting */

/*
 * One per distinct (vaddr, length): a block translated again (after a
 * flush, or in another address space at the same address) shares its
 * counter. Never freed or moved: translated code holds its address.
 */
struct block {
	uint64_t vaddr;
	uint64_t insns;
	uint64_t execs;		/* added to by the translated code */
	struct block *next;
};

#define NBUCKETS (1u << 20)
static struct block *buckets[NBUCKETS];
static pthread_mutex_t blocks_lock = PTHREAD_MUTEX_INITIALIZER;
static char *dir;

static unsigned int bucket_of(uint64_t vaddr, uint64_t insns)
{
	return (unsigned int)(((vaddr ^ insns) * 0x9e3779b97f4a7c15ULL) >> 44) & (NBUCKETS - 1);
}

/* Translation time: find or add the block's counter, count its runs. */
static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	uint64_t vaddr = qemu_plugin_tb_vaddr(tb), insns = qemu_plugin_tb_n_insns(tb);
	unsigned int b = bucket_of(vaddr, insns);
	struct block *e;

	(void)id;
	pthread_mutex_lock(&blocks_lock);
	for (e = buckets[b]; e; e = e->next)
		if (e->vaddr == vaddr && e->insns == insns)
			break;
	if (!e) {
		e = calloc(1, sizeof(*e));
		if (!e) {
			/* Nothing to count it in: the block runs uncounted. */
			pthread_mutex_unlock(&blocks_lock);
			fprintf(stderr, "qemu-insn-count: out of memory\n");
			return;
		}
		e->vaddr = vaddr;
		e->insns = insns;
		e->next = buckets[b];
		buckets[b] = e;
	}
	pthread_mutex_unlock(&blocks_lock);
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &e->execs, 1);
}

/* ------------------------------------------------------------ snapshots */

static int write_snapshot(const char *path)
{
	char tmp[4096];
	FILE *f;
	int err = 0;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
		return ENAMETOOLONG;
	f = fopen(tmp, "w");
	if (!f)
		return errno;
	pthread_mutex_lock(&blocks_lock);
	for (unsigned int i = 0; i < NBUCKETS; i++)
		for (struct block *e = buckets[i]; e; e = e->next)
			if (e->execs)
				fprintf(f, "%" PRIx64 " %" PRIu64 " %" PRIu64 "\n", e->vaddr,
					e->insns, e->execs);
	pthread_mutex_unlock(&blocks_lock);
	if (ferror(f))
		err = EIO;
	if (fclose(f) && !err)
		err = errno;
	if (!err && rename(tmp, path))
		err = errno;
	if (err)
		unlink(tmp);
	return err;
}

/* Answers DIR/NAME.req with DIR/NAME.tbs; polls every 5 ms. */
static void *watch(void *arg)
{
	char req[4096], out[4096];

	(void)arg;
	for (;;) {
		DIR *d = opendir(dir);
		struct dirent *de;

		while (d && (de = readdir(d))) {
			size_t len = strlen(de->d_name);
			int err;

			if (len <= 4 || strcmp(de->d_name + len - 4, ".req"))
				continue;
			snprintf(req, sizeof(req), "%s/%s", dir, de->d_name);
			snprintf(out, sizeof(out), "%s/%.*s.tbs", dir, (int)(len - 4), de->d_name);
			unlink(req);
			err = write_snapshot(out);
			if (err)
				fprintf(stderr, "qemu-insn-count: %s: %s\n", out, strerror(err));
		}
		if (d)
			closedir(d);
		usleep(5000);
	}
	return NULL;
}

QPLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc,
				       char **argv)
{
	char ready[4096];
	pthread_t t;
	FILE *f;

	(void)info;
	for (int i = 0; i < argc; i++)
		if (!strncmp(argv[i], "dir=", 4))
			dir = argv[i] + 4;
	if (!dir || !*dir) {
		fprintf(stderr, "qemu-insn-count: needs dir=DIR\n");
		return -1;
	}
	snprintf(ready, sizeof(ready), "%s/ready", dir);
	f = fopen(ready, "w");
	if (!f || fclose(f)) {
		fprintf(stderr, "qemu-insn-count: %s: %s\n", ready, strerror(errno));
		return -1;
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	if (pthread_create(&t, NULL, watch, NULL)) {
		fprintf(stderr, "qemu-insn-count: cannot start its watcher thread\n");
		return -1;
	}
	pthread_detach(t);
	return 0;
}
