// SPDX-License-Identifier: GPL-2.0
/*
 * A HotSpot JVM's own description of its structures (runtime.h): the
 * exported vmStructs tables, its code heaps, and the name of the code at
 * a pc. Amd64, 8-byte pointers; what is read comes from the profiled
 * process and is bounded here.
 */
#include <errno.h>
#include <gelf.h>
#include <string.h>

#include "runtime/runtime.h"

static const char *const jvm_sym_names[TP_JVM_NR_SYMS] = {
	[TP_JVM_STRUCTS] = "gHotSpotVMStructs",
	[TP_JVM_STRUCT_STRIDE] = "gHotSpotVMStructEntryArrayStride",
	[TP_JVM_STRUCT_TYPE_NAME] = "gHotSpotVMStructEntryTypeNameOffset",
	[TP_JVM_STRUCT_FIELD_NAME] = "gHotSpotVMStructEntryFieldNameOffset",
	[TP_JVM_STRUCT_IS_STATIC] = "gHotSpotVMStructEntryIsStaticOffset",
	[TP_JVM_STRUCT_OFFSET] = "gHotSpotVMStructEntryOffsetOffset",
	[TP_JVM_STRUCT_ADDRESS] = "gHotSpotVMStructEntryAddressOffset",
	[TP_JVM_TYPES] = "gHotSpotVMTypes",
	[TP_JVM_TYPE_STRIDE] = "gHotSpotVMTypeEntryArrayStride",
	[TP_JVM_TYPE_TYPE_NAME] = "gHotSpotVMTypeEntryTypeNameOffset",
	[TP_JVM_TYPE_SIZE] = "gHotSpotVMTypeEntrySizeOffset",
};

/*
 * Type and field of each enum tp_jvm_field, as vmStructs names them, and
 * as an older or newer JDK does where it differs (alt_type, alt_field);
 * static fields give their address.
 */
#define JVM_FIELD(t, f)			{ .type = t, .field = f }
#define JVM_FIELD_ALT(t, f, at, af)	{ .type = t, .field = f, .alt_type = at, .alt_field = af }
#define JVM_STATIC(t, f)		{ .type = t, .field = f, .is_static = true }
static const struct {
	const char *type, *field, *alt_type, *alt_field;
	bool is_static;
} jvm_fields[TP_JVM_NR_FIELDS] = {
	[TP_JVMF_HEAPS] = JVM_STATIC("CodeCache", "_heaps"),
	[TP_JVMF_VM_MAJOR] = JVM_STATIC("Abstract_VM_Version", "_vm_major_version"),
	/* JDK 11's is GenericGrowableArray. */
	[TP_JVMF_GA_LEN] = JVM_FIELD_ALT("GrowableArrayBase", "_len",
					 "GenericGrowableArray", "_len"),
	[TP_JVMF_GA_DATA] = JVM_FIELD("GrowableArray<int>", "_data"),
	[TP_JVMF_HEAP_MEMORY] = JVM_FIELD("CodeHeap", "_memory"),
	[TP_JVMF_HEAP_SEGMAP] = JVM_FIELD("CodeHeap", "_segmap"),
	[TP_JVMF_HEAP_LOG2] = JVM_FIELD("CodeHeap", "_log2_segment_size"),
	[TP_JVMF_VS_LOW] = JVM_FIELD("VirtualSpace", "_low_boundary"),
	[TP_JVMF_VS_HIGH] = JVM_FIELD("VirtualSpace", "_high_boundary"),
	[TP_JVMF_BLOB_NAME] = JVM_FIELD("CodeBlob", "_name"),
	[TP_JVMF_NM_METHOD] = JVM_FIELD("CompiledMethod", "_method"),
	[TP_JVMF_CONST_METHOD] = JVM_FIELD("Method", "_constMethod"),
	[TP_JVMF_CM_CONSTANTS] = JVM_FIELD("ConstMethod", "_constants"),
	[TP_JVMF_CM_NAME_INDEX] = JVM_FIELD("ConstMethod", "_name_index"),
	[TP_JVMF_CP_HOLDER] = JVM_FIELD("ConstantPool", "_pool_holder"),
	[TP_JVMF_KLASS_NAME] = JVM_FIELD("Klass", "_name"),
	/* Debian's JDK 21 names Symbol "S" in its table. */
	[TP_JVMF_SYM_LENGTH] = JVM_FIELD_ALT("Symbol", "_length", "S", "_length"),
	[TP_JVMF_SYM_BODY] = JVM_FIELD_ALT("Symbol", "_body", "S", "_body"),
	[TP_JVMF_CODE_BEGIN] = JVM_FIELD("CodeBlob", "_code_begin"),
	[TP_JVMF_SCOPES_DATA] = JVM_FIELD("CompiledMethod", "_scopes_data_begin"),
	[TP_JVMF_NM_METADATA] = JVM_FIELD("nmethod", "_metadata_offset"),
	[TP_JVMF_NM_SCOPES_PCS] = JVM_FIELD("nmethod", "_scopes_pcs_offset"),
	[TP_JVMF_NM_DEPENDENCIES] = JVM_FIELD("nmethod", "_dependencies_offset"),
	/* 21: ConstMethodFlags, a u4 (bit 0 read, as of the u2 before). */
	[TP_JVMF_CM_FLAGS] = JVM_FIELD_ALT("ConstMethod", "_flags",
					   "ConstMethod", "_flags._flags"),
	[TP_JVMF_CM_CODE_SIZE] = JVM_FIELD("ConstMethod", "_code_size"),
	/* Up to JDK 13 the class kept it: an index into its constant pool all the same. */
	[TP_JVMF_CP_SOURCE_FILE] = JVM_FIELD_ALT("ConstantPool", "_source_file_name_index",
						 "InstanceKlass", "_source_file_name_index"),
	[TP_JVMF_FRAME_SIZE] = JVM_FIELD("CodeBlob", "_frame_size"),
	/* 21: _frame_complete. */
	[TP_JVMF_FRAME_COMPLETE] = JVM_FIELD_ALT("CodeBlob", "_frame_complete_offset",
						 "CodeBlob", "_frame_complete"),
	[TP_JVMF_DEOPT_HANDLER] = JVM_FIELD("CompiledMethod", "_deopt_handler_begin"),
	[TP_JVMF_ORIG_PC] = JVM_FIELD("nmethod", "_orig_pc_offset"),
	[TP_JVMF_COMPILE_ID] = JVM_FIELD("nmethod", "_compile_id"),
};

/* Bounds on what the process's tables may say. */
#define JVM_MAX_ENTRIES		65536	/* vmStructs or vmTypes entries (17: ~2,000) */
#define JVM_MAX_STRIDE		1024	/* an entry's size */
#define JVM_MAX_OFFSET		4096	/* a field's offset in its object */
#define JVM_NAME_MAX		64	/* a type or field name we look for */
#define JVM_MAX_HOPS		1024	/* segment map steps back to a blob's start */
#define JVM_SYMBOL_MAX		1024	/* a class or method name's bytes read */
#define JVM_MAX_PCDESCS		65536	/* an nmethod's PcDescs */
#define JVM_PCDESC_SIZE		16	/* {pc_offset, scope, obj, flags}: 4 ints */
#define JVM_MAX_SCOPE_OFFSET	(16U << 20)	/* into an nmethod's scopes data */
#define JVM_MAX_METADATA	65536	/* an nmethod's metadata slots */
#define JVM_LINES_READ		512	/* bytes of a line number table read */
#define JVM_HAS_LINES		0x1	/* ConstMethod::_flags: a line number table */
/* The releases whose layouts this reads: 11 to 21 (22 moved nmethod's fields). */
#define JVM_MIN_MAJOR		11
#define JVM_MAX_MAJOR		21
#define JVM_MAX_BCI		0xfffe	/* a method's bytecodes are shorter; 0xffff: none */

int tp_jvm_elf_syms(Elf *elf, uint64_t vaddr[TP_JVM_NR_SYMS])
{
	Elf_Scn *scn = NULL;
	unsigned int found = 0;

	memset(vaddr, 0, TP_JVM_NR_SYMS * sizeof(vaddr[0]));
	/* One pass over .dynsym, where libjvm exports them. */
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < d->d_size / sh.sh_entsize; i++) {
			const char *nm;
			GElf_Sym s;

			if (!gelf_getsym(d, (int)i, &s) || s.st_shndx == SHN_UNDEF || !s.st_value ||
			    !(nm = elf_strptr(elf, sh.sh_link, s.st_name)) ||
			    strncmp(nm, "gHotSpotVM", 10))
				continue;
			for (int k = 0; k < TP_JVM_NR_SYMS; k++)
				if (!vaddr[k] && !strcmp(nm, jvm_sym_names[k])) {
					vaddr[k] = s.st_value;
					found++;
				}
		}
	}
	return found == TP_JVM_NR_SYMS ? 0 : -ENOENT;
}

static int jvm_u64(tp_memread_fn rd, void *ctx, uint64_t addr, uint64_t *v)
{
	return rd(ctx, addr, v, sizeof(*v)) < 0 ? -EFAULT : 0;
}

/* The string at @addr into @buf (@len bytes, NUL-terminated; longer: cut). */
static int jvm_str(tp_memread_fn rd, void *ctx, uint64_t addr, char *buf, size_t len)
{
	/* A read may not cross into an unmapped page: to the page's end first. */
	size_t n = len - 1, page = 4096 - (addr & 4095);

	buf[0] = '\0';
	if (!addr)
		return -EFAULT;
	if (n > page)
		n = page;
	if (rd(ctx, addr, buf, n) < 0) {
		buf[0] = '\0';
		return -EFAULT;
	}
	buf[n] = '\0';
	return 0;
}

/*
 * Every entry of the vmStructs table: the fields of jvm_fields[] taken,
 * -ENOTSUP when one is missing or out of bounds.
 */
static int jvm_read_structs(struct tp_jvm *j, const uint64_t v[TP_JVM_NR_SYMS],
			    tp_memread_fn rd, void *ctx)
{
	uint64_t table = v[TP_JVM_STRUCTS], stride = v[TP_JVM_STRUCT_STRIDE];
	bool seen[TP_JVM_NR_FIELDS] = { false };

	if (stride < 8 || stride > JVM_MAX_STRIDE)
		return -ENOTSUP;
	for (int k = TP_JVM_STRUCT_TYPE_NAME; k <= TP_JVM_STRUCT_ADDRESS; k++)
		if (v[k] + 8 > stride)
			return -ENOTSUP;
	for (uint64_t i = 0; i < JVM_MAX_ENTRIES; i++) {
		uint64_t e = table + i * stride, tname, fname, off, addr;
		char type[JVM_NAME_MAX], field[JVM_NAME_MAX];
		int32_t is_static;

		if (jvm_u64(rd, ctx, e + v[TP_JVM_STRUCT_TYPE_NAME], &tname) ||
		    jvm_u64(rd, ctx, e + v[TP_JVM_STRUCT_FIELD_NAME], &fname))
			return -EFAULT;
		if (!tname && !fname)	/* the table's end */
			break;
		if (!tname || !fname || jvm_str(rd, ctx, tname, type, sizeof(type)))
			continue;
		field[0] = '\0';
		for (int f = 0; f < TP_JVM_NR_FIELDS; f++) {
			bool main_type = !strcmp(type, jvm_fields[f].type);
			bool alt_type = jvm_fields[f].alt_type && !strcmp(type, jvm_fields[f].alt_type);

			if (seen[f] || (!main_type && !alt_type))
				continue;
			if (!field[0] && jvm_str(rd, ctx, fname, field, sizeof(field)) < 0)
				return -EFAULT;
			if (!(main_type && !strcmp(field, jvm_fields[f].field)) &&
			    !(alt_type && !strcmp(field, jvm_fields[f].alt_field)))
				continue;
			if (rd(ctx, e + v[TP_JVM_STRUCT_IS_STATIC], &is_static, 4) < 0 ||
			    jvm_u64(rd, ctx, e + v[TP_JVM_STRUCT_OFFSET], &off) ||
			    jvm_u64(rd, ctx, e + v[TP_JVM_STRUCT_ADDRESS], &addr))
				return -EFAULT;
			if (jvm_fields[f].is_static != (is_static != 0) ||
			    (is_static ? !addr : off >= JVM_MAX_OFFSET))
				return -ENOTSUP;
			j->field[f] = is_static ? addr : off;
			seen[f] = true;
			if (f == TP_JVMF_CP_SOURCE_FILE)
				j->source_in_klass = !main_type;
		}
	}
	for (int f = 0; f < TP_JVM_NR_FIELDS; f++)
		if (!seen[f])
			return -ENOTSUP;
	return 0;
}

/* The sizes of HeapBlock, ConstantPool and ConstMethod from the vmTypes table. */
static int jvm_read_types(struct tp_jvm *j, const uint64_t v[TP_JVM_NR_SYMS],
			  tp_memread_fn rd, void *ctx)
{
	uint64_t table = v[TP_JVM_TYPES], stride = v[TP_JVM_TYPE_STRIDE];

	if (stride < 8 || stride > JVM_MAX_STRIDE || v[TP_JVM_TYPE_TYPE_NAME] + 8 > stride ||
	    v[TP_JVM_TYPE_SIZE] + 8 > stride)
		return -ENOTSUP;
	j->heap_block_size = j->cp_size = j->const_method_size = 0;
	for (uint64_t i = 0; i < JVM_MAX_ENTRIES; i++) {
		uint64_t e = table + i * stride, tname, size;
		char type[JVM_NAME_MAX];
		uint64_t *dst;

		if (jvm_u64(rd, ctx, e + v[TP_JVM_TYPE_TYPE_NAME], &tname))
			return -EFAULT;
		if (!tname)
			break;
		if (jvm_str(rd, ctx, tname, type, sizeof(type)) < 0)
			continue;
		dst = !strcmp(type, "HeapBlock") ? &j->heap_block_size :
		      !strcmp(type, "ConstantPool") ? &j->cp_size :
		      !strcmp(type, "ConstMethod") ? &j->const_method_size : NULL;
		if (!dst)
			continue;
		if (jvm_u64(rd, ctx, e + v[TP_JVM_TYPE_SIZE], &size))
			return -EFAULT;
		if (!size || size >= JVM_MAX_OFFSET)
			return -ENOTSUP;
		*dst = size;
	}
	return j->heap_block_size && j->cp_size && j->const_method_size ? 0 : -ENOTSUP;
}

int tp_jvm_read_heaps(struct tp_jvm *j, tp_memread_fn rd, void *ctx)
{
	const uint64_t *f = j->field;
	uint64_t ga, data;
	int32_t len;

	j->nr_heaps = 0;
	/* CodeCache::_heaps: a GrowableArray<CodeHeap *> *, NULL before start-up. */
	if (jvm_u64(rd, ctx, f[TP_JVMF_HEAPS], &ga))
		return -EFAULT;
	if (!ga)
		return 0;
	if (rd(ctx, ga + f[TP_JVMF_GA_LEN], &len, sizeof(len)) < 0 ||
	    jvm_u64(rd, ctx, ga + f[TP_JVMF_GA_DATA], &data))
		return -EFAULT;
	if (len < 0 || len > TP_JVM_MAX_HEAPS)
		return -EFAULT;
	for (int32_t i = 0; i < len; i++) {
		struct tp_jvm_heap *h = &j->heap[j->nr_heaps];
		uint64_t heap;
		int32_t log2;

		if (jvm_u64(rd, ctx, data + 8 * (uint64_t)i, &heap) ||
		    jvm_u64(rd, ctx, heap + f[TP_JVMF_HEAP_MEMORY] + f[TP_JVMF_VS_LOW], &h->low) ||
		    jvm_u64(rd, ctx, heap + f[TP_JVMF_HEAP_MEMORY] + f[TP_JVMF_VS_HIGH], &h->high) ||
		    jvm_u64(rd, ctx, heap + f[TP_JVMF_HEAP_SEGMAP] + f[TP_JVMF_VS_LOW], &h->segmap) ||
		    rd(ctx, heap + f[TP_JVMF_HEAP_LOG2], &log2, sizeof(log2)) < 0)
			return -EFAULT;
		/* Segments of 16 bytes to 64 KiB; an empty heap is left out. */
		if (log2 < 4 || log2 > 16 || h->high <= h->low || !h->segmap)
			continue;
		h->log2_segment = (uint32_t)log2;
		j->nr_heaps++;
	}
	return 0;
}

int tp_jvm_read(struct tp_jvm *j, const uint64_t addr[TP_JVM_NR_SYMS], tp_memread_fn rd,
		void *ctx)
{
	uint64_t v[TP_JVM_NR_SYMS];
	int32_t major;
	int err;

	memset(j, 0, sizeof(*j));
	/* The table is a pointer, the stride and offsets numbers: all read. */
	for (int k = 0; k < TP_JVM_NR_SYMS; k++)
		if (jvm_u64(rd, ctx, addr[k], &v[k]))
			return -EFAULT;
	err = jvm_read_structs(j, v, rd, ctx);
	if (!err)
		err = jvm_read_types(j, v, rd, ctx);
	/*
	 * The feature release (11, 17, 21): JDK 20 changed the compressed
	 * streams. Read from tables refused too, when they have it, to say
	 * which release is not read.
	 */
	if (err != -EFAULT && j->field[TP_JVMF_VM_MAJOR] &&
	    rd(ctx, j->field[TP_JVMF_VM_MAJOR], &major, sizeof(major)) == 0)
		j->major = major > 0 && major < 1000 ? (unsigned int)major : 0;
	else if (!err)
		err = -EFAULT;
	if (err)
		return err;
	/* Set as the VM initializes: read earlier, the JVM is still starting. */
	if (!major)
		return -EAGAIN;
	if (major < JVM_MIN_MAJOR || major > JVM_MAX_MAJOR)
		return -ENOTSUP;
	j->u5_excluded = major >= 20;
	return tp_jvm_read_heaps(j, rd, ctx);
}

static const struct tp_jvm_heap *jvm_heap(const struct tp_jvm *j, uint64_t pc)
{
	for (unsigned int i = 0; i < j->nr_heaps; i++)
		if (pc >= j->heap[i].low && pc < j->heap[i].high)
			return &j->heap[i];
	return NULL;
}

bool tp_jvm_in_code(const struct tp_jvm *j, uint64_t pc)
{
	return jvm_heap(j, pc) != NULL;
}

/*
 * The code blob holding @pc in heap @h: the segment map has a byte a
 * segment, 0 at a block's first segment, 0xff in free space, else how
 * far back to step (a block's later segments count up to 0xfe and start
 * again). The blob follows the block's header.
 */
static int jvm_blob(const struct tp_jvm *j, const struct tp_jvm_heap *h, uint64_t pc,
		    tp_memread_fn rd, void *ctx, uint64_t *blob)
{
	uint64_t seg = (pc - h->low) >> h->log2_segment;
	uint8_t tag;

	for (unsigned int hop = 0;; hop++) {
		if (hop == JVM_MAX_HOPS)
			return -EINVAL;
		if (rd(ctx, h->segmap + seg, &tag, 1) < 0)
			return -EFAULT;
		if (tag == 0xff)
			return -ENOENT;
		if (!tag)
			break;
		if (tag > seg)
			return -EINVAL;
		seg -= tag;
	}
	*blob = h->low + (seg << h->log2_segment) + j->heap_block_size;
	return 0;
}

/*
 * A blob's header, read in one go: every field of it taproot reads lies
 * in its first bytes, and a JVM's blobs are read per frame, so one read
 * in place of one per field. Read field by field when the fields reach
 * past JVM_BLOB_HDR_MAX, or when the one read fails (a blob at the end of
 * what the heap has committed).
 */
#define JVM_BLOB_HDR_MAX	512

struct jvm_hdr {
	uint64_t blob;
	size_t len;			/* bytes of b read: 0, field by field */
	uint8_t b[JVM_BLOB_HDR_MAX];
};

static const struct {
	enum tp_jvm_field f;
	unsigned int size;
} jvm_hdr_fields[] = {
	{ TP_JVMF_BLOB_NAME, 8 },	{ TP_JVMF_CODE_BEGIN, 8 },
	{ TP_JVMF_FRAME_SIZE, 4 },	{ TP_JVMF_FRAME_COMPLETE, 4 },
	{ TP_JVMF_DEOPT_HANDLER, 8 },	{ TP_JVMF_ORIG_PC, 4 },
	{ TP_JVMF_COMPILE_ID, 4 },	{ TP_JVMF_NM_METHOD, 8 },
	{ TP_JVMF_SCOPES_DATA, 8 },	{ TP_JVMF_NM_METADATA, 4 },
	{ TP_JVMF_NM_SCOPES_PCS, 4 },	{ TP_JVMF_NM_DEPENDENCIES, 4 },
};

static void jvm_hdr_read(const struct tp_jvm *j, uint64_t blob, tp_memread_fn rd, void *ctx,
			 struct jvm_hdr *h)
{
	uint64_t end = 0;

	/* Offsets are below JVM_MAX_OFFSET (jvm_read_structs()): no overflow. */
	for (size_t i = 0; i < sizeof(jvm_hdr_fields) / sizeof(jvm_hdr_fields[0]); i++)
		if (j->field[jvm_hdr_fields[i].f] + jvm_hdr_fields[i].size > end)
			end = j->field[jvm_hdr_fields[i].f] + jvm_hdr_fields[i].size;
	h->blob = blob;
	h->len = 0;
	if (end <= sizeof(h->b) && rd(ctx, blob, h->b, end) == 0)
		h->len = end;
}

/* Field @f (@size bytes) of @h's blob into @dst: 0 or -EFAULT. */
static int jvm_hdr_get(const struct tp_jvm *j, const struct jvm_hdr *h, enum tp_jvm_field f,
		       void *dst, size_t size, tp_memread_fn rd, void *ctx)
{
	uint64_t off = j->field[f];

	if (off + size <= h->len) {
		memcpy(dst, h->b + off, size);
		return 0;
	}
	return rd(ctx, h->blob + off, dst, size) < 0 ? -EFAULT : 0;
}

/* The text of Symbol @sym into @buf at @pos (@len bytes in all): the new end. */
static int jvm_symbol(const struct tp_jvm *j, uint64_t sym, tp_memread_fn rd, void *ctx,
		      char *buf, size_t pos, size_t len)
{
	uint16_t n;

	if (!sym || rd(ctx, sym + j->field[TP_JVMF_SYM_LENGTH], &n, sizeof(n)) < 0)
		return -EFAULT;
	if (n > JVM_SYMBOL_MAX || pos + n >= len)
		return -EINVAL;
	if (n && rd(ctx, sym + j->field[TP_JVMF_SYM_BODY], buf + pos, n) < 0)
		return -EFAULT;
	buf[pos + n] = '\0';
	/* A name is text: a byte below space means the memory was not a Symbol. */
	for (size_t i = pos; i < pos + n; i++)
		if ((unsigned char)buf[i] < ' ')
			return -EFAULT;
	return (int)(pos + n);
}

/*
 * The class name @name (@end bytes) as Java writes it: "java.util.HashMap"
 * for "java/util/HashMap", and a hidden class (a lambda's) without the
 * address HotSpot appends, "Foo$$Lambda$12+0x00007f0012345678", which
 * differs from one process to the next. Its new end.
 */
static int jvm_class_name(char *name, int end)
{
	char *plus = strstr(name, "+0x");

	if (plus && strspn(plus + 3, "0123456789abcdef") == strlen(plus + 3)) {
		*plus = '\0';
		end = (int)(plus - name);
	}
	for (int i = 0; i < end; i++)
		if (name[i] == '/')
			name[i] = '.';
	return end;
}

/* "package.Class.method" of Method @m into @name; its ConstMethod and pool. */
static int jvm_method_name(const struct tp_jvm *j, uint64_t m, tp_memread_fn rd, void *ctx,
			   char *name, size_t len, uint64_t *cm, uint64_t *cp)
{
	const uint64_t *f = j->field;
	uint64_t holder, klass_sym, method_sym;
	uint16_t index;
	int end;

	if (jvm_u64(rd, ctx, m + f[TP_JVMF_CONST_METHOD], cm) ||
	    jvm_u64(rd, ctx, *cm + f[TP_JVMF_CM_CONSTANTS], cp) ||
	    rd(ctx, *cm + f[TP_JVMF_CM_NAME_INDEX], &index, sizeof(index)) < 0 ||
	    jvm_u64(rd, ctx, *cp + f[TP_JVMF_CP_HOLDER], &holder) ||
	    jvm_u64(rd, ctx, holder + f[TP_JVMF_KLASS_NAME], &klass_sym) ||
	    /* The constant pool's entries follow it, a word each. */
	    jvm_u64(rd, ctx, *cp + j->cp_size + 8 * (uint64_t)index, &method_sym))
		return -EFAULT;
	end = jvm_symbol(j, klass_sym, rd, ctx, name, 0, len);
	if (end < 0)
		return end;
	end = jvm_class_name(name, end);
	if ((size_t)end + 1 >= len)
		return -EINVAL;
	name[end++] = '.';
	/* A resolved entry's Symbol * may carry a tag in its low bit. */
	end = jvm_symbol(j, method_sym & ~1ULL, rd, ctx, name, (size_t)end, len);
	return end < 0 ? end : 0;
}

/*
 * An UNSIGNED5 number of HotSpot's compressed streams: a byte below 192
 * ends it, as does the fifth; each byte adds its value, less @x, shifted
 * by 6 bits more than the one before. @x is the byte value the encoding
 * excludes: none before JDK 20 (0), 0 since (1: each byte is one more).
 * Advances *@i within @len.
 */
static bool jvm_unsigned5(unsigned int x, const uint8_t *b, size_t len, size_t *i, uint32_t *v)
{
	uint64_t sum = 0;

	for (unsigned int k = 0; k < 5; k++) {
		if (*i >= len || b[*i] < x)
			return false;
		sum += (uint64_t)(b[*i] - x) << (6 * k);
		if (b[(*i)++] < 192 || k == 4) {
			*v = (uint32_t)sum;
			return sum <= UINT32_MAX;
		}
	}
	return false;
}

/* A signed number of a compressed stream: its UNSIGNED5 with the sign in bit 0. */
static bool jvm_signed5(unsigned int x, const uint8_t *b, size_t len, size_t *i, int64_t *v)
{
	uint32_t u;

	if (!jvm_unsigned5(x, b, len, i, &u))
		return false;
	*v = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
	return true;
}

/*
 * The line of @bci in ConstMethod @cm's line number table, which follows
 * its bytecodes: pairs of (bci, line) deltas, a byte each (bci in its top
 * 5 bits, line in its low 3), or 0xff and both as signed numbers; 0 ends
 * it. The line of the last pair at or before @bci; 0 when there is none.
 * Only its first JVM_LINES_READ bytes, within one page, are read.
 */
static uint32_t jvm_line(const struct tp_jvm *j, uint64_t cm, int64_t bci, tp_memread_fn rd,
			 void *ctx)
{
	uint8_t b[JVM_LINES_READ];
	uint16_t flags, code_size;
	int64_t at = 0, line = 0, best = 0;
	uint64_t table;
	size_t n = sizeof(b), i = 0;

	if (rd(ctx, cm + j->field[TP_JVMF_CM_FLAGS], &flags, 2) < 0 || !(flags & JVM_HAS_LINES) ||
	    rd(ctx, cm + j->field[TP_JVMF_CM_CODE_SIZE], &code_size, 2) < 0)
		return 0;
	table = cm + j->const_method_size + code_size;
	if (n > 4096 - (table & 4095))
		n = 4096 - (table & 4095);
	if (rd(ctx, table, b, n) < 0)
		return 0;
	while (i < n && b[i]) {
		int64_t dbci, dline;

		if (b[i] == 0xff) {
			i++;
			if (!jvm_signed5(j->u5_excluded, b, n, &i, &dbci) ||
			    !jvm_signed5(j->u5_excluded, b, n, &i, &dline))
				break;
		} else {
			dbci = b[i] >> 3;
			dline = b[i++] & 7;
		}
		at += dbci;
		line += dline;
		if (at > bci)
			break;
		best = line;
	}
	return best > 0 && best <= UINT32_MAX ? (uint32_t)best : 0;
}

/*
 * Frame @fr of Method @m at @bci (-1: unknown): its name, its class's
 * source file, the line of @bci.
 */
static int jvm_method(const struct tp_jvm *j, uint64_t m, int64_t bci, tp_memread_fn rd,
		      void *ctx, struct tp_jvm_frame *fr)
{
	uint64_t cm, cp, file_sym, holder = 0;
	uint16_t file;
	int err;

	fr->file[0] = '\0';
	fr->line = 0;
	if ((err = jvm_method_name(j, m, rd, ctx, fr->name, sizeof(fr->name), &cm, &cp)) < 0)
		return err;
	/* The source file, where the class file kept it: an index into the pool. */
	if (!j->source_in_klass)
		holder = cp;
	else if (jvm_u64(rd, ctx, cp + j->field[TP_JVMF_CP_HOLDER], &holder))
		holder = 0;
	if (holder &&
	    rd(ctx, holder + j->field[TP_JVMF_CP_SOURCE_FILE], &file, 2) == 0 && file &&
	    jvm_u64(rd, ctx, cp + j->cp_size + 8 * (uint64_t)file, &file_sym) == 0 &&
	    jvm_symbol(j, file_sym & ~1ULL, rd, ctx, fr->file, 0, sizeof(fr->file)) < 0)
		fr->file[0] = '\0';
	if (bci >= 0)
		fr->line = jvm_line(j, cm, bci, rd, ctx);
	return 0;
}

/*
 * The scope decode offset of nmethod @nm's first PcDesc at or after @pc
 * (its pcs count from the code's start): 0 when none or no scope.
 */
static int jvm_pc_scope(const struct tp_jvm *j, const struct jvm_hdr *nm, uint64_t pc,
			tp_memread_fn rd, void *ctx, uint32_t *scope)
{
	int32_t pcs_off, deps_off, desc[64 * 4];
	uint64_t code, n;

	*scope = 0;
	if (jvm_hdr_get(j, nm, TP_JVMF_CODE_BEGIN, &code, 8, rd, ctx) ||
	    jvm_hdr_get(j, nm, TP_JVMF_NM_SCOPES_PCS, &pcs_off, 4, rd, ctx) ||
	    jvm_hdr_get(j, nm, TP_JVMF_NM_DEPENDENCIES, &deps_off, 4, rd, ctx))
		return -EFAULT;
	if (pc < code || pcs_off <= 0 || deps_off < pcs_off)
		return 0;
	n = (uint64_t)(deps_off - pcs_off) / JVM_PCDESC_SIZE;
	if (n > JVM_MAX_PCDESCS)
		return -EINVAL;
	/* Sorted by pc: the first at or after @pc's offset. */
	for (uint64_t i = 0; i < n; i += 64) {
		uint64_t chunk = n - i < 64 ? n - i : 64;

		if (rd(ctx, nm->blob + (uint64_t)pcs_off + i * JVM_PCDESC_SIZE, desc,
		       chunk * JVM_PCDESC_SIZE) < 0)
			return -EFAULT;
		for (uint64_t k = 0; k < chunk; k++)
			if (desc[4 * k] >= 0 && (uint64_t)desc[4 * k] >= pc - code) {
				*scope = desc[4 * k + 1] > 0 ? (uint32_t)desc[4 * k + 1] : 0;
				return 0;
			}
	}
	return 0;
}

/*
 * The methods of the scope chain at @scope of nmethod @nm into @fr,
 * innermost first (each scope: the sender's offset, a 1-based index into
 * the nmethod's metadata, the bci + 1): their number, at most @max.
 */
static int jvm_scopes(const struct tp_jvm *j, const struct jvm_hdr *nm, uint32_t scope,
		      tp_memread_fn rd, void *ctx, struct tp_jvm_frame *fr, int max)
{
	uint64_t data, method;
	int32_t meta_off;
	int nr = 0, err;

	if (jvm_hdr_get(j, nm, TP_JVMF_SCOPES_DATA, &data, 8, rd, ctx) ||
	    jvm_hdr_get(j, nm, TP_JVMF_NM_METADATA, &meta_off, 4, rd, ctx))
		return -EFAULT;
	while (scope && nr < max) {
		uint8_t b[16];
		uint32_t sender, index, bci1;
		size_t i = 0;

		if (scope > JVM_MAX_SCOPE_OFFSET || meta_off < 0)
			return -EINVAL;
		if (rd(ctx, data + scope, b, sizeof(b)) < 0)
			return -EFAULT;
		if (!jvm_unsigned5(j->u5_excluded, b, sizeof(b), &i, &sender) ||
		    !jvm_unsigned5(j->u5_excluded, b, sizeof(b), &i, &index) ||
		    !jvm_unsigned5(j->u5_excluded, b, sizeof(b), &i, &bci1) || !index ||
		    index > JVM_MAX_METADATA)
			return -EINVAL;
		if (jvm_u64(rd, ctx, nm->blob + (uint64_t)meta_off + 8 * (uint64_t)(index - 1),
			    &method) ||
		    !method)
			return -EFAULT;
		if ((err = jvm_method(j, method, (int64_t)bci1 - 1, rd, ctx, &fr[nr])) < 0)
			return err;
		nr++;
		/* Forged memory may loop: @max bounds the chain. */
		scope = sender;
	}
	return nr;
}

static int jvm_frames(const struct tp_jvm *j, uint64_t pc, tp_memread_fn rd, void *ctx,
		      struct tp_jvm_frame *fr, int max)
{
	const struct tp_jvm_heap *h = jvm_heap(j, pc);
	uint64_t blob, bname, method;
	struct jvm_hdr hdr;
	uint32_t scope;
	int err, nr;

	if (!h)
		return -ENOENT;
	fr[0].file[0] = '\0';
	fr[0].line = 0;
	if ((err = jvm_blob(j, h, pc, rd, ctx, &blob)))
		return err;
	jvm_hdr_read(j, blob, rd, ctx, &hdr);
	if (jvm_hdr_get(j, &hdr, TP_JVMF_BLOB_NAME, &bname, 8, rd, ctx) ||
	    jvm_str(rd, ctx, bname, fr[0].name, sizeof(fr[0].name)) < 0)
		return -EFAULT;
	/* An nmethod ("native nmethod": a JNI method's wrapper) names its methods. */
	if (strcmp(fr[0].name, "nmethod") && strcmp(fr[0].name, "native nmethod"))
		return 1;
	/* Its debug information first: the chain ends in the method compiled. */
	if ((err = jvm_pc_scope(j, &hdr, pc, rd, ctx, &scope)) < 0)
		return err;
	nr = scope ? jvm_scopes(j, &hdr, scope, rd, ctx, fr, max) : 0;
	if (nr != 0)
		return nr;
	if (jvm_hdr_get(j, &hdr, TP_JVMF_NM_METHOD, &method, 8, rd, ctx) || !method)
		return -EFAULT;
	err = jvm_method(j, method, -1, rd, ctx, &fr[0]);
	return err < 0 ? err : 1;
}

int tp_jvm_frames(const struct tp_jvm *j, uint64_t pc, tp_memread_fn rd, void *ctx,
		  struct tp_jvm_frame *fr, int max)
{
	int nr;

	if (max < 1)
		return -EINVAL;
	fr[0].name[0] = '\0';
	nr = jvm_frames(j, pc, rd, ctx, fr, max);
	/* Nothing of a name read halfway. */
	if (nr < 0)
		fr[0].name[0] = '\0';
	return nr;
}

int tp_jvm_blob(const struct tp_jvm *j, uint64_t pc, tp_memread_fn rd, void *ctx,
		struct tp_jvm_blob *b)
{
	const struct tp_jvm_heap *h = jvm_heap(j, pc);
	int32_t words, complete;
	uint64_t blob, bname;
	struct jvm_hdr hdr;
	char name[32];
	int err;

	if (!h)
		return -ENOENT;
	memset(b, 0, sizeof(*b));
	if ((err = jvm_blob(j, h, pc, rd, ctx, &blob)))
		return err;
	jvm_hdr_read(j, blob, rd, ctx, &hdr);
	if (jvm_hdr_get(j, &hdr, TP_JVMF_BLOB_NAME, &bname, 8, rd, ctx) ||
	    jvm_str(rd, ctx, bname, name, sizeof(name)) < 0 ||
	    jvm_hdr_get(j, &hdr, TP_JVMF_CODE_BEGIN, &b->code_begin, 8, rd, ctx) ||
	    jvm_hdr_get(j, &hdr, TP_JVMF_FRAME_SIZE, &words, 4, rd, ctx) ||
	    jvm_hdr_get(j, &hdr, TP_JVMF_FRAME_COMPLETE, &complete, 4, rd, ctx))
		return -EFAULT;
	/* A frame size in words, or negative: none (-1 before it is known). */
	if (words < 0)
		words = 0;
	if ((uint64_t)words * 8 > TP_JVM_FRAME_MAX || pc < b->code_begin ||
	    (complete > 0 && (uint64_t)complete > TP_JVM_FRAME_MAX))
		return -EINVAL;
	b->frame_size = (uint32_t)words * 8;
	b->frame_complete = complete > 0 ? (uint32_t)complete : 0;
	b->orig_pc_offset = -1;
	b->compile_id = -1;
	if (!strcmp(name, "nmethod") || !strcmp(name, "native nmethod")) {
		b->kind = !strcmp(name, "nmethod") ? TP_JVM_BLOB_NMETHOD : TP_JVM_BLOB_NATIVE;
		if (jvm_hdr_get(j, &hdr, TP_JVMF_DEOPT_HANDLER, &b->deopt_handler, 8, rd, ctx) ||
		    jvm_hdr_get(j, &hdr, TP_JVMF_ORIG_PC, &b->orig_pc_offset, 4, rd, ctx) ||
		    jvm_hdr_get(j, &hdr, TP_JVMF_COMPILE_ID, &b->compile_id, 4, rd, ctx))
			return -EFAULT;
		if (b->orig_pc_offset < 0 || (uint64_t)b->orig_pc_offset + 8 > b->frame_size)
			b->orig_pc_offset = -1;
	} else if (!strcmp(name, "Interpreter")) {
		b->kind = TP_JVM_BLOB_INTERPRETER;
	} else if (!strcmp(name, "vtable chunks")) {
		b->kind = TP_JVM_BLOB_VTABLE;
	} else {
		b->kind = TP_JVM_BLOB_STUB;
	}
	return 0;
}

/* Offset @off of a field of @size bytes into *@dst when it ends by @max. */
static bool jvm_layout_off(uint64_t off, unsigned int size, unsigned int max, uint16_t *dst)
{
	if (off + size > max)
		return false;
	*dst = (uint16_t)off;
	return true;
}

int tp_jvm_layout(const struct tp_jvm *j, struct taproot_jvm_layout *l)
{
	const uint64_t *f = j->field;
	uint64_t lo = UINT64_MAX;

	memset(l, 0, sizeof(*l));
	if (!j->nr_heaps)
		return -ENOENT;
	if (j->nr_heaps > TAPROOT_JVM_HEAPS_MAX)
		return -ENOTSUP;
	for (unsigned int i = 0; i < j->nr_heaps; i++) {
		l->heap[i].low = j->heap[i].low;
		l->heap[i].high = j->heap[i].high;
		l->heap[i].segmap = j->heap[i].segmap;
		l->heap[i].log2_segment = j->heap[i].log2_segment;
		if (j->heap[i].low < lo)
			lo = j->heap[i].low;
	}
	for (unsigned int i = 0; i < j->nr_heaps; i++)
		if (j->heap[i].high - lo > TAPROOT_UPC_JVM_PC_MASK + 1)
			return -ENOTSUP;
	l->nr_heaps = j->nr_heaps;
	if (j->heap_block_size > UINT16_MAX || j->const_method_size > TAPROOT_JVM_FIELD_MAX)
		return -ENOTSUP;
	l->block_size = (uint16_t)j->heap_block_size;
	l->const_size = (uint16_t)j->const_method_size;
	return jvm_layout_off(f[TP_JVMF_BLOB_NAME], 8, TAPROOT_JVM_READ_MAX, &l->blob_name) &&
	       jvm_layout_off(f[TP_JVMF_CODE_BEGIN], 8, TAPROOT_JVM_READ_MAX,
			      &l->blob_code_begin) &&
	       jvm_layout_off(f[TP_JVMF_FRAME_SIZE], 4, TAPROOT_JVM_READ_MAX,
			      &l->blob_frame_size) &&
	       jvm_layout_off(f[TP_JVMF_FRAME_COMPLETE], 4, TAPROOT_JVM_READ_MAX,
			      &l->blob_frame_complete) &&
	       jvm_layout_off(f[TP_JVMF_COMPILE_ID], 4, TAPROOT_JVM_READ_MAX,
			      &l->nm_compile_id) &&
	       jvm_layout_off(f[TP_JVMF_DEOPT_HANDLER], 8, TAPROOT_JVM_READ_MAX,
			      &l->nm_deopt_handler) &&
	       jvm_layout_off(f[TP_JVMF_ORIG_PC], 4, TAPROOT_JVM_READ_MAX, &l->nm_orig_pc) &&
	       jvm_layout_off(f[TP_JVMF_CONST_METHOD], 8, TAPROOT_JVM_FIELD_MAX,
			      &l->method_const) &&
	       jvm_layout_off(f[TP_JVMF_CM_CODE_SIZE], 2, TAPROOT_JVM_FIELD_MAX,
			      &l->const_code_size) ? 0 : -ENOTSUP;
}

int tp_jvm_bci(const struct tp_jvm *j, uint64_t method, uint64_t bcp, tp_memread_fn rd,
	       void *ctx, uint32_t *bci)
{
	uint64_t cm, code;
	uint16_t size;

	if (!method || jvm_u64(rd, ctx, method + j->field[TP_JVMF_CONST_METHOD], &cm) || !cm ||
	    rd(ctx, cm + j->field[TP_JVMF_CM_CODE_SIZE], &size, sizeof(size)) < 0)
		return -EFAULT;
	code = cm + j->const_method_size;
	/* A bcp at the end: a frame returning from its last bytecode's call. */
	if (bcp < code || bcp - code > size || bcp - code > JVM_MAX_BCI)
		return -EINVAL;
	*bci = (uint32_t)(bcp - code);
	return 0;
}

int tp_jvm_method_frame(const struct tp_jvm *j, uint64_t method, uint32_t bci,
			tp_memread_fn rd, void *ctx, struct tp_jvm_frame *fr)
{
	int err = -EINVAL;

	if (bci <= JVM_MAX_BCI || bci == TP_JVM_BCI_NONE)
		err = jvm_method(j, method, bci == TP_JVM_BCI_NONE ? -1 : (int64_t)bci, rd, ctx,
				 fr);
	if (err < 0)
		fr->name[0] = '\0';
	return err < 0 ? err : 0;
}

uint32_t tp_jvm_epilogue(const uint8_t c[TP_JVM_EPILOGUE_BYTES])
{
	if (c[0] == 0x5d)				/* pop rbp */
		return 16;
	if (c[0] == 0xc3)				/* ret */
		return 8;
	/* cmp rsp, [r15 + d32]; ja slow; ret */
	if (!memcmp(c, "\x49\x3b\xa7", 3) && !memcmp(c + 7, "\x0f\x87", 2) && c[13] == 0xc3)
		return 8;
	/* ja slow; ret */
	if (!memcmp(c, "\x0f\x87", 2) && c[6] == 0xc3)
		return 8;
	/* mov r10, [r15 + d32]; test [r10], eax; ret */
	if (!memcmp(c, "\x4d\x8b\x97", 3) && !memcmp(c + 7, "\x41\x85\x02\xc3", 4))
		return 8;
	/* test [r10], eax; ret */
	if (!memcmp(c, "\x41\x85\x02\xc3", 4))
		return 8;
	return 0;
}
