/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Python frames of the module's walks, named (lib/pipeline/pyframes.c),
 * pipeline internals: a cache of the code objects they name, read from
 * the live process once per (process, exec, code object, cookie). A code
 * object is freed and its memory reused as a program runs: the cookie
 * the module read with the frame must match the one read here, and
 * entries go when the cache is cleared (with the pipeline's symbol
 * cache, when maps change or it fills), so a name outlives its code
 * object by one cache lifetime at most.
 *
 * Memory: at most @max entries (tp_pyframes_new()), each with its name
 * and file (TP_PY_STR_MAX bytes each at most) and line table
 * (TP_PY_LINES_MAX at most; a few hundred bytes in practice).
 */
#ifndef TAPROOT_PIPELINE_PYFRAMES_H
#define TAPROOT_PIPELINE_PYFRAMES_H

#include <stdbool.h>
#include <stddef.h>

#include <linux/taproot.h>

#include "process/process.h"
#include "profile/profile.h"

struct tp_pyframes;

/* An empty cache of at most @max code objects: 0 or -ENOMEM. */
int tp_pyframes_new(size_t max, struct tp_pyframes **cp);
void tp_pyframes_free(struct tp_pyframes *c);

/* Forget every entry: the frames made from them are not used any more. */
void tp_pyframes_clear(struct tp_pyframes *c);

/* Whether @n more entries may not fit: clear it before making frames. */
bool tp_pyframes_full(const struct tp_pyframes *c, size_t n);

/*
 * Frame @f of a thread of @proc, whose interpreter is @py, into @out: its
 * function (MODULE.QUALNAME, the module named by the code's file:
 * "tokenize._tokenize", "threading.Thread.run"; the qualified name alone
 * for code compiled from a string), file and line (strings the cache's,
 * until it is cleared).
 * Returns 0; 1 when its code object could not be read or is not the one
 * the module saw (@out is then a marker frame); -ENOMEM.
 */
int tp_pyframes_frame(struct tp_pyframes *c, struct taproot_proc *proc,
		      const struct taproot_pyproc *py, const struct taproot_pyframe *f,
		      struct taproot_profile_frame *out);

/*
 * The module a code object's file names, into @out (@len > 0): the file's
 * name without ".py" (its directory's for a package's __init__.py), or
 * the name in "<frozen NAME>"; "" for another "<...>" (code compiled from
 * a string). A file name is what the interpreter compiled the code from,
 * not an import path: a module of a package is named by its file alone
 * ("parser" for email/parser.py).
 */
void tp_pyframes_module(const char *file, char *out, size_t len);

#endif /* TAPROOT_PIPELINE_PYFRAMES_H */
