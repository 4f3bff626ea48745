// SPDX-License-Identifier: GPL-2.0
/*
 * The ELF file cache: each file a process maps is opened once, whatever
 * number of processes map it, and keeps its fd, its libelf handle, its
 * build ID and its PT_LOAD segments (to turn a pc into an ELF vaddr).
 *
 * ELF files are outside input: everything read from them is checked
 * (segments inside the file, notes inside their segment, counts bounded),
 * and libelf reads them with ELF_C_READ, not mmap, so a file truncated
 * under us gives read errors instead of SIGBUS.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <elf.h>
#include <gelf.h>
#include <libelf.h>

#include "process/process-private.h"
#include "util/clock.h"
#include "util/hash.h"

#ifndef NT_GNU_BUILD_ID
#define NT_GNU_BUILD_ID 3
#endif

/* Special maps key of the vDSO image. */
#define TP_VDSO_DEV	UINT64_MAX
#define TP_VDSO_INO	UINT64_MAX
/* A cached file is fstat'ed again after this long. */
#define TP_ELF_RECHECK_MS 1000

static bool tp_libelf_ready(void)
{
	static int ready;	/* 0 unknown, 1 ok, -1 failed */

	if (!ready)
		ready = elf_version(EV_CURRENT) != EV_NONE ? 1 : -1;
	return ready > 0;
}

void tp_elf_free(struct taproot_elf *e)
{
	if (!e)
		return;
	if (e->sym)
		e->sym_free(e->sym);
	if (e->elf)
		elf_end(e->elf);
	if (e->fd >= 0)
		close(e->fd);
	free(e->image);
	free(e->segs);
	free(e->path);
	free(e->root);
	free(e->name);
	free(e);
}

size_t tp_elf_read_build_id(Elf *elf, uint8_t *buf, size_t len)
{
	size_t phnum, i, shstrndx;
	Elf_Scn *scn = NULL;

	(void)shstrndx;
	/* Notes of PT_NOTE segments, then of SHT_NOTE sections (debug files). */
	for (int pass = 0; pass < 2; pass++) {
		size_t count = 0;

		if (pass == 0 && elf_getphdrnum(elf, &phnum) != 0)
			continue;
		for (i = 0;; i++) {
			Elf_Data *data;
			GElf_Nhdr nhdr;
			size_t off = 0, name_off, desc_off, next;

			if (pass == 0) {
				GElf_Phdr ph;

				if (i >= phnum || i >= TP_ELF_PHDRS_MAX)
					break;
				if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE)
					continue;
				if (ph.p_filesz == 0 || ph.p_filesz > (1u << 20))
					continue;
				data = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz,
							    ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
			} else {
				GElf_Shdr sh;

				scn = elf_nextscn(elf, scn);
				if (!scn || ++count > 65536)
					break;
				if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
					continue;
				data = elf_getdata(scn, NULL);
			}
			if (!data || !data->d_buf)
				continue;
			while (off < data->d_size &&
			       (next = gelf_getnote(data, off, &nhdr, &name_off, &desc_off)) > 0) {
				if (nhdr.n_type == NT_GNU_BUILD_ID && nhdr.n_namesz == 4 &&
				    !memcmp((const char *)data->d_buf + name_off, "GNU", 4) &&
				    nhdr.n_descsz > 0 && nhdr.n_descsz <= len &&
				    desc_off + nhdr.n_descsz <= data->d_size) {
					memcpy(buf, (const char *)data->d_buf + desc_off,
					       nhdr.n_descsz);
					return nhdr.n_descsz;
				}
				off = next;
			}
		}
	}
	return 0;
}

/* Read and check the PT_LOAD segments of @e (file of @size bytes). */
static int tp_elf_read_segs(struct taproot_elf *e, uint64_t size)
{
	size_t phnum, i;

	if (elf_getphdrnum(e->elf, &phnum) != 0)
		return tp_err(-ENOEXEC, "%s: bad program headers: %s", e->path, elf_errmsg(-1));
	if (phnum > TP_ELF_PHDRS_MAX)
		return tp_err(-ENOEXEC, "%s: %zu program headers, more than %u",
			      e->path, phnum, TP_ELF_PHDRS_MAX);
	e->segs = calloc(phnum ? phnum : 1, sizeof(*e->segs));
	if (!e->segs)
		return tp_err(-ENOMEM, NULL);
	for (i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e->elf, (int)i, &ph))
			return tp_err(-ENOEXEC, "%s: program header %zu: %s",
				      e->path, i, elf_errmsg(-1));
		if (ph.p_type != PT_LOAD)
			continue;
		if (ph.p_offset > size || ph.p_filesz > size - ph.p_offset)
			return tp_err(-ENOEXEC, "%s: segment %zu (offset 0x%llx, %llu bytes) "
				      "is past the end of the file (%llu bytes): truncated?",
				      e->path, i, (unsigned long long)ph.p_offset,
				      (unsigned long long)ph.p_filesz, (unsigned long long)size);
		if (ph.p_memsz < ph.p_filesz || ph.p_vaddr + ph.p_memsz < ph.p_vaddr)
			return tp_err(-ENOEXEC, "%s: segment %zu: bad sizes", e->path, i);
		e->segs[e->nr_segs++] = (struct tp_seg){
			.vaddr = ph.p_vaddr, .memsz = ph.p_memsz,
			.offset = ph.p_offset, .filesz = ph.p_filesz, .flags = ph.p_flags,
		};
	}
	if (!e->nr_segs)
		return tp_err(-ENOEXEC, "%s: no PT_LOAD segment", e->path);
	return 0;
}

/* The fixed part: header, type, segments, build ID, key. */
static int tp_elf_setup(struct taproot_elf *e, uint64_t size, bool loadable)
{
	GElf_Ehdr eh;
	int err;

	if (elf_kind(e->elf) != ELF_K_ELF)
		return tp_err(-ENOEXEC, "%s: not an ELF file", e->path);
	if (!gelf_getehdr(e->elf, &eh))
		return tp_err(-ENOEXEC, "%s: bad ELF header: %s", e->path, elf_errmsg(-1));
	e->type = eh.e_type;
	/* libelf reads the section table when first asked: check it fits now. */
	if (eh.e_shoff) {
		size_t shnum;

		if (elf_getshdrnum(e->elf, &shnum) != 0)
			return tp_err(-ENOEXEC, "%s: bad section count: %s", e->path,
				      elf_errmsg(-1));
		/* libelf counts 0 sections when their table does not fit. */
		if (shnum < eh.e_shnum)
			shnum = eh.e_shnum;
		if (eh.e_shoff > size || eh.e_shentsize == 0 ||
		    shnum > (size - eh.e_shoff) / eh.e_shentsize)
			return tp_err(-ENOEXEC, "%s: the section headers (%zu at 0x%llx) are past "
				      "the end of the file (%llu bytes): truncated?", e->path, shnum,
				      (unsigned long long)eh.e_shoff, (unsigned long long)size);
	}
	if (loadable) {
		if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)
			return tp_err(-ENOEXEC, "%s: ELF type %u is neither executable nor shared object",
				      e->path, eh.e_type);
		err = tp_elf_read_segs(e, size);
		if (err)
			return err;
	}
	e->build_id_len = tp_elf_read_build_id(e->elf, e->build_id, sizeof(e->build_id));
	if (e->build_id_len) {
		memcpy(e->key, e->build_id, e->build_id_len);
		e->key_len = e->build_id_len;
	} else {
		uint64_t k[4] = { e->dev, e->ino, e->size, (uint64_t)e->mtime_ns };

		memcpy(e->key, k, sizeof(k));
		e->key_len = sizeof(k);
	}
	return 0;
}

/*
 * Open PATH for reading only if it is a regular file, without opening
 * anything else: the path comes from outside (a process's maps, a raw
 * capture file), and opening a device node can act (a watchdog arms, a
 * tape rewinds) whatever we do next. O_PATH opens nothing; the file it
 * found is then opened through /proc/self/fd, so what is checked is what
 * is read.
 */
static int tp_open_regular(const char *path, int *fdp, struct stat *st)
{
	char proc[32];
	int pfd, fd, err;

	pfd = open(path, O_PATH | O_CLOEXEC);
	if (pfd < 0)
		return tp_err(-errno, "opening %s: %s", path, strerror(errno));
	if (fstat(pfd, st) < 0) {
		err = tp_err(-errno, "%s: %s", path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st->st_mode)) {
		err = tp_err(-ENOEXEC, "%s: not a regular file", path);
		goto out;
	}
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
	fd = open(proc, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		err = tp_err(-errno, "opening %s: %s", path, strerror(errno));
		goto out;
	}
	*fdp = fd;
	err = 0;
out:
	close(pfd);
	return err;
}

int tp_elf_open(const char *path, bool loadable, struct taproot_elf **ep)
{
	struct taproot_elf *e;
	struct stat st;
	int err;

	*ep = NULL;
	if (!tp_libelf_ready())
		return tp_err(-ENOSYS, "libelf: %s", elf_errmsg(-1));
	e = calloc(1, sizeof(*e));
	if (!e)
		return tp_err(-ENOMEM, NULL);
	e->fd = -1;
	e->path = strdup(path);
	if (!e->path) {
		err = tp_err(-ENOMEM, NULL);
		goto fail;
	}
	err = tp_open_regular(path, &e->fd, &st);
	if (err < 0)
		goto fail;
	e->dev = st.st_dev;
	e->ino = st.st_ino;
	e->size = (uint64_t)st.st_size;
	e->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	if (e->size < sizeof(Elf32_Ehdr)) {
		err = tp_err(-ENOEXEC, "%s: %llu bytes, too short for an ELF file", path,
			     (unsigned long long)e->size);
		goto fail;
	}
	e->elf = elf_begin(e->fd, ELF_C_READ, NULL);
	if (!e->elf) {
		err = tp_err(-ENOEXEC, "%s: %s", path, elf_errmsg(-1));
		goto fail;
	}
	err = tp_elf_setup(e, e->size, loadable);
	if (err)
		goto fail;
	*ep = e;
	return 0;
fail:
	tp_elf_free(e);
	return err;
}

const struct tp_seg *tp_elf_seg_at_offset(const struct taproot_elf *e, uint64_t off)
{
	const struct tp_seg *best = NULL;
	size_t i;

	for (i = 0; i < e->nr_segs; i++) {
		const struct tp_seg *s = &e->segs[i];
		/* A mapping starts at the page holding p_offset. */
		uint64_t lo = s->offset & ~(uint64_t)0xfff;
		uint64_t hi = s->offset + (s->filesz ? s->filesz : 1);

		if (off < lo || off >= hi)
			continue;
		if (!best || ((s->flags & PF_X) && !(best->flags & PF_X)))
			best = s;
	}
	return best;
}

/* ---------------------------------------------------------- the cache */

static size_t tp_elfs_bucket(const struct tp_elfs *c, uint64_t dev, uint64_t ino)
{
	return (size_t)(tp_hash_fin(tp_hash_mix(tp_hash_mix(0, dev), ino)) & (c->nr_buckets - 1));
}

int tp_elfs_init(struct tp_elfs *c, size_t max)
{
	memset(c, 0, sizeof(*c));
	c->max = max;
	c->nr_buckets = 64;
	while (c->nr_buckets < max * 2 && c->nr_buckets < (1u << 20))
		c->nr_buckets *= 2;
	c->hash = calloc(c->nr_buckets, sizeof(*c->hash));
	if (!c->hash)
		return tp_err(-ENOMEM, NULL);
	c->next_serial = 1;
	return 0;
}

static void tp_elfs_unlink(struct tp_elfs *c, struct taproot_elf *e)
{
	struct taproot_elf **pp = &c->hash[tp_elfs_bucket(c, e->map_dev, e->map_ino)];

	while (*pp && *pp != e)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = e->hnext;
	tp_lru_unlink(&c->lru, &e->lru);
	e->hnext = NULL;
	c->nr--;
}

void tp_elfs_fini(struct tp_elfs *c)
{
	while (c->lru.head) {
		struct taproot_elf *e = tp_lru_entry(c->lru.head, struct taproot_elf, lru);

		tp_elfs_unlink(c, e);
		tp_elf_free(e);
	}
	free(c->hash);
	c->hash = NULL;
}

static void tp_elfs_touch(struct tp_elfs *c, struct taproot_elf *e)
{
	tp_lru_touch(&c->lru, &e->lru);
}

static void tp_elfs_insert(struct tp_elfs *c, struct taproot_elf *e,
			   uint64_t map_dev, uint64_t map_ino)
{
	size_t b;

	while (c->nr >= c->max && c->lru.tail) {
		struct taproot_elf *old = tp_lru_entry(c->lru.tail, struct taproot_elf, lru);

		tp_elfs_unlink(c, old);
		tp_elf_free(old);
		c->evicted++;
	}
	e->map_dev = map_dev;
	e->map_ino = map_ino;
	e->serial = c->next_serial++;
	b = tp_elfs_bucket(c, map_dev, map_ino);
	e->hnext = c->hash[b];
	c->hash[b] = e;
	tp_lru_push(&c->lru, &e->lru);
	c->nr++;
	c->opened++;
}

static struct taproot_elf *tp_elfs_find(struct tp_elfs *c, uint64_t dev, uint64_t ino)
{
	struct taproot_elf *e;

	for (e = c->hash[tp_elfs_bucket(c, dev, ino)]; e; e = e->hnext)
		if (e->map_dev == dev && e->map_ino == ino)
			return e;
	return NULL;
}

/* Is the cached @e still the file it was (same size and mtime)? */
static bool tp_elf_still_valid(struct taproot_elf *e, uint64_t now)
{
	struct stat st;

	if (e->fd < 0 || now - e->checked_ms < TP_ELF_RECHECK_MS)
		return true;
	e->checked_ms = now;
	if (fstat(e->fd, &st) < 0)
		return false;
	return (uint64_t)st.st_size == e->size &&
	       (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec == e->mtime_ns;
}

/*
 * Is @e the file maps showed as (@map_dev, @map_ino)? The inode number
 * must agree; the device may not, as overlayfs shows the real file's device
 * in maps while stat() through the path gives the overlay's.
 */
static bool tp_elf_matches_map(const struct taproot_elf *e, uint64_t map_dev, uint64_t map_ino)
{
	(void)map_dev;
	return e->ino == map_ino;
}

static int tp_elfs_try(const char *path, uint64_t map_dev, uint64_t map_ino,
		       struct taproot_elf **ep)
{
	int err = tp_elf_open(path, true, ep);

	if (err)
		return err;
	if (map_ino && !tp_elf_matches_map(*ep, map_dev, map_ino)) {
		err = tp_err(-ESTALE, "%s: inode %llu, but the mapping is of inode %llu: "
			     "the file was replaced since it was mapped", path,
			     (unsigned long long)(*ep)->ino, (unsigned long long)map_ino);
		tp_elf_free(*ep);
		*ep = NULL;
	}
	return err;
}

int tp_elfs_get(struct tp_elfs *c, uint64_t map_dev, uint64_t map_ino,
		const char *root, const char *name, const char *alt,
		struct taproot_elf **ep)
{
	struct taproot_elf *e = tp_elfs_find(c, map_dev, map_ino);
	char path[PATH_MAX + 64];
	int err = -ENOENT;

	*ep = NULL;
	if (e) {
		if (tp_elf_still_valid(e, tp_clock_ms(CLOCK_MONOTONIC_COARSE))) {
			tp_elfs_touch(c, e);
			*ep = e;
			return 0;
		}
		tp_elfs_unlink(c, e);
		tp_elf_free(e);
		e = NULL;
	}
	/*
	 * @alt, /proc/PID/map_files/..., is the mapped file by definition:
	 * no identity to check (an overlayfs file opened there reports the
	 * overlay's inode, not the real one maps shows).
	 */
	if (alt)
		err = tp_elfs_try(alt, 0, 0, &e);
	if (err && root && root[0]) {
		if ((size_t)snprintf(path, sizeof(path), "%s%s", root, name) >= sizeof(path))
			return tp_err(-ENAMETOOLONG, "%s%s: path too long", root, name);
		err = tp_elfs_try(path, map_dev, map_ino, &e);
	}
	/* Our own view of the path: the same file when outside containers. */
	if (err && err != -ENOEXEC)
		err = tp_elfs_try(name, map_dev, map_ino, &e);
	if (err)
		return err;
	e->root = strdup(root ? root : "");
	e->name = strdup(name);
	if (!e->root || !e->name) {
		tp_elf_free(e);
		return tp_err(-ENOMEM, NULL);
	}
	e->checked_ms = tp_clock_ms(CLOCK_MONOTONIC_COARSE);
	tp_elfs_insert(c, e, map_dev, map_ino);
	*ep = e;
	return 0;
}

int tp_elfs_open_path(struct tp_elfs *c, const char *path, struct taproot_elf **ep)
{
	struct stat st;

	*ep = NULL;
	if (stat(path, &st) < 0)
		return tp_err(-errno, "%s: %s", path, strerror(errno));
	return tp_elfs_get(c, st.st_dev, st.st_ino, "", path, NULL, ep);
}

/* The [vdso] range of this process, from /proc/self/maps. */
static int tp_self_vdso(uint64_t *start, uint64_t *end)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "re");
	int err = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long s, e;
		size_t n = strlen(line);

		if (n < 7 || strcmp(line + n - 7, "[vdso]\n") ||
		    sscanf(line, "%llx-%llx", &s, &e) != 2 || e <= s || e - s > (64u << 20))
			continue;
		*start = s;
		*end = e;
		err = 0;
		break;
	}
	fclose(f);
	return err;
}

int tp_elfs_vdso(struct tp_elfs *c, struct taproot_elf **ep)
{
	struct taproot_elf *e = tp_elfs_find(c, TP_VDSO_DEV, TP_VDSO_INO);
	uint64_t start, end;
	int err;

	*ep = NULL;
	if (e) {
		tp_elfs_touch(c, e);
		*ep = e;
		return 0;
	}
	if (!tp_libelf_ready())
		return tp_err(-ENOSYS, "libelf: %s", elf_errmsg(-1));
	err = tp_self_vdso(&start, &end);
	if (err)
		return tp_err(err, "this process has no [vdso] to read");
	e = calloc(1, sizeof(*e));
	if (!e)
		return tp_err(-ENOMEM, NULL);
	e->fd = -1;
	e->size = end - start;
	e->image = malloc(e->size);
	e->path = strdup("[vdso]");
	e->root = strdup("");
	e->name = strdup("[vdso]");
	if (!e->image || !e->path || !e->root || !e->name) {
		tp_elf_free(e);
		return tp_err(-ENOMEM, NULL);
	}
	memcpy(e->image, (const void *)(uintptr_t)start, e->size);
	e->elf = elf_memory(e->image, e->size);
	if (!e->elf) {
		tp_elf_free(e);
		return tp_err(-ENOEXEC, "[vdso]: %s", elf_errmsg(-1));
	}
	err = tp_elf_setup(e, e->size, true);
	if (err) {
		tp_elf_free(e);
		return err;
	}
	tp_elfs_insert(c, e, TP_VDSO_DEV, TP_VDSO_INO);
	*ep = e;
	return 0;
}

/* -------------------------------------------------------- public API */

int taproot_elf_open(struct taproot_procs *procs, const char *path,
		     struct taproot_elf **ep)
{
	return tp_elfs_open_path(&procs->elfs, path, ep);
}

struct Elf *taproot_elf_handle(const struct taproot_elf *e)
{
	return e->elf;
}

const uint8_t *taproot_elf_build_id(const struct taproot_elf *e, size_t *len)
{
	*len = e->build_id_len;
	return e->build_id_len ? e->build_id : NULL;
}

const uint8_t *taproot_elf_key(const struct taproot_elf *e, size_t *len)
{
	*len = e->key_len;
	return e->key;
}

const char *taproot_elf_path(const struct taproot_elf *e)
{
	return e->path;
}

int taproot_elf_bias(const struct taproot_elf *e, uint64_t start, uint64_t end,
		     uint64_t pgoff, uint64_t *bias)
{
	const struct tp_seg *s = tp_elf_seg_at_offset(e, pgoff);

	(void)end;
	if (!s)
		return tp_err(-ENOENT, "%s: no segment holds file offset 0x%llx", e->path,
			      (unsigned long long)pgoff);
	/* vaddr = pc - start + pgoff - p_offset + p_vaddr = pc - bias */
	*bias = start - pgoff + s->offset - s->vaddr;
	return 0;
}
