// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the reader of a HotSpot JVM's own tables
 * (lib/runtime/hotspot.c) over whatever memory. It reads a process that
 * may have forged every byte of it: the vmStructs tables, the code heaps,
 * the segment maps, blobs, methods and symbols.
 *
 * The input is the process's memory at IMAGE_BASE (nothing else is
 * mapped); the globals libjvm.so exports (enum tp_jvm_sym) are its first
 * TP_JVM_NR_SYMS words. seedgen's seed (DIR/hotspot/) is a whole JVM
 * image: tables, one code heap, an nmethod of java.util.HashMap.get (and
 * HashMap.hash inlined in it at a pc), an
 * interpreter blob, free space.
 *
 * Checked: tp_jvm_read(), tp_jvm_frames(), tp_jvm_blob(), tp_jvm_bci()
 * and tp_jvm_method_frame() end (their walks are bounded) with a
 * documented result; a blob's frame within TP_JVM_FRAME_MAX, its real
 * pc's slot inside it; a bytecode index below TP_JVM_BCI_NONE; at most
 * TP_JVM_MAX_HEAPS heaps, each of code [low, high) with a segment size of
 * 16 bytes to 64 KiB; a name is a NUL-terminated string within its
 * buffer, empty on an error; a method's frame of an inline chain has a
 * '.' between class and method.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "fuzz.h"
#include "runtime/runtime.h"

#define IMAGE_BASE	0x7f0000000000ULL

static int image_read(void *ctx, uint64_t addr, void *dst, size_t len)
{
	const struct fuzz_input *img = ctx;
	uint64_t off = addr - IMAGE_BASE;

	if (addr < IMAGE_BASE || off > img->left || img->left - off < len)
		return -EFAULT;
	memcpy(dst, img->p + off, len);
	return 0;
}

static void name_at(const struct tp_jvm *j, const struct fuzz_input *img, uint64_t pc)
{
	static struct tp_jvm_frame fr[4];
	int r;

	memset(fr, 0x5a, sizeof(fr));
	r = tp_jvm_frames(j, pc, image_read, (void *)img, fr, 4);
	check((r >= 1 && r <= 4) || r == -ENOENT || r == -EFAULT || r == -EINVAL);
	if (r < 0)
		check(fr[0].name[0] == '\0');
	for (int i = 0; i < r; i++)
		check(memchr(fr[i].name, '\0', sizeof(fr[i].name)) != NULL &&
		      memchr(fr[i].file, '\0', sizeof(fr[i].file)) != NULL);
	/* Inlined frames are methods: "Class.method". */
	for (int i = 0; i + 1 < r; i++)
		check(strchr(fr[i].name, '.') != NULL);
}

/* The blob at @pc as the unwinder takes it: a frame within bounds. */
static void blob_at(const struct tp_jvm *j, const struct fuzz_input *img, uint64_t pc)
{
	struct tp_jvm_blob b;
	int r = tp_jvm_blob(j, pc, image_read, (void *)img, &b);

	check(r == 0 || r == -ENOENT || r == -EFAULT || r == -EINVAL);
	if (r)
		return;
	check(b.kind <= TP_JVM_BLOB_STUB && b.code_begin <= pc);
	check(b.frame_size % 8 == 0 && b.frame_size <= TP_JVM_FRAME_MAX &&
	      b.frame_complete <= TP_JVM_FRAME_MAX);
	check(b.orig_pc_offset == -1 ||
	      (b.orig_pc_offset >= 0 && (uint64_t)b.orig_pc_offset + 8 <= b.frame_size));
}

/* An interpreted frame's Method* and bcp of the input's choosing. */
static void method_at(const struct tp_jvm *j, const struct fuzz_input *img, uint64_t method,
		      uint64_t bcp)
{
	static struct tp_jvm_frame fr;
	uint32_t bci = 0;
	int r = tp_jvm_bci(j, method, bcp, image_read, (void *)img, &bci);

	check(r == 0 || r == -EFAULT || r == -EINVAL);
	check(r || bci < TP_JVM_BCI_NONE);
	memset(&fr, 0x5a, sizeof(fr));
	r = tp_jvm_method_frame(j, method, r ? TP_JVM_BCI_NONE : bci, image_read, (void *)img,
				&fr);
	check(r == 0 || r == -EFAULT || r == -EINVAL);
	check(memchr(fr.name, '\0', sizeof(fr.name)) != NULL);
	if (r)
		check(fr.name[0] == '\0');
	else
		check(memchr(fr.file, '\0', sizeof(fr.file)) != NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_input img = { data, size };
	uint64_t addr[TP_JVM_NR_SYMS];
	struct tp_jvm j;
	int r;

	for (int k = 0; k < TP_JVM_NR_SYMS; k++)
		addr[k] = IMAGE_BASE + 8 * (uint64_t)k;
	r = tp_jvm_read(&j, addr, image_read, &img);
	check(r == 0 || r == -EFAULT || r == -ENOTSUP || r == -EAGAIN);
	if (r)
		return 0;
	check(j.nr_heaps <= TP_JVM_MAX_HEAPS);
	for (unsigned int h = 0; h < j.nr_heaps; h++) {
		const struct tp_jvm_heap *hp = &j.heap[h];

		check(hp->low < hp->high && hp->log2_segment >= 4 && hp->log2_segment <= 16);
		/* The first segments, the middle, the last byte, and past the end. */
		for (uint64_t s = 0; s < 8; s++) {
			name_at(&j, &img, hp->low + (s << hp->log2_segment) + s);
			blob_at(&j, &img, hp->low + (s << hp->log2_segment) + s);
		}
		name_at(&j, &img, hp->low + (hp->high - hp->low) / 2);
		name_at(&j, &img, hp->high - 1);
		name_at(&j, &img, hp->high);
	}
	/* A pc of the input's choosing: its last word. */
	if (size >= 8) {
		uint64_t pc;

		memcpy(&pc, data + size - 8, 8);
		name_at(&j, &img, pc);
		blob_at(&j, &img, pc);
	}
	/* A Method* and a bcp: the two words before it. */
	if (size >= 24) {
		uint64_t method, bcp;

		memcpy(&method, data + size - 16, 8);
		memcpy(&bcp, data + size - 24, 8);
		method_at(&j, &img, method, bcp);
		method_at(&j, &img, IMAGE_BASE + 0x2000, bcp);
	}
	return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}
