/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libtaproot: the userspace side of taproot, shared by taprootctl and
 * taprootd. Public interface.
 *
 * Conventions, for every function below unless its contract says otherwise:
 *
 *  - A function that can fail returns an int: 0 (or a documented positive
 *    value) on success, a negative value on failure. The negative value is
 *    either -errno, for an error the system or the kernel reported, or
 *    -TAPROOT_E*, for a condition of taproot's own (the codes start above
 *    the last errno, so the two never collide).
 *  - A failure is never silent: the failing call records a message for this
 *    thread, with the details only it knows (the kernel's extended-ACK text,
 *    the two ABI versions, the paths it tried). taproot_errmsg() returns it.
 *  - Types are opaque; the library allocates them and the caller gives them
 *    back to the matching _close/_free function. Strings passed in are
 *    borrowed for the duration of the call only. Strings returned through an
 *    out-parameter (char **) are allocated with malloc and owned by the
 *    caller, who frees them with free().
 *  - Nothing here is safe to call on one handle from two threads at once;
 *    distinct handles are independent.
 */
#ifndef TAPROOT_H
#define TAPROOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define TAPROOT_VERSION	"0.1.0"

#include "util/error.h"
#include "kernel/kernel.h"
#include "runtime/runtime.h"
#include "process/process.h"
#include "unwind/unwind.h"
#include "profile/profile.h"
#include "profile/timeline.h"
#include "pipeline/pipeline.h"
#include "raw/raw.h"

#endif /* TAPROOT_H */
