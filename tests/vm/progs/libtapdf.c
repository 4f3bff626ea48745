// SPDX-License-Identifier: GPL-2.0
// vm-cflags: -shared -fPIC -fomit-frame-pointer -fno-asynchronous-unwind-tables -fno-unwind-tables -Wl,-soname,libtapwork
/*
 * libtapwork (tests/vm/progs/libtapwork.c: libfunc() calls leaf_y()) with
 * its CFI in .debug_frame only, no .eh_frame: test-daemon-bad-binaries.sh
 * corrupts that .debug_frame in a copy loaded in libtapwork's place.
 */
#include "libtapwork.c"
