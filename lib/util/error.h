/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libtaproot, utilities layer: error codes and messages (lib/util/error.c).
 * Conventions (errors, ownership, threads): lib/taproot.h.
 */
#ifndef TAPROOT_UTIL_ERROR_H
#define TAPROOT_UTIL_ERROR_H


/* ---------------------------------------------------------------- errors */

/*
 * taproot's own error codes, with the generic message of each. The list
 * generates both the enum and the message table (lib/util/error.c); a failing
 * call usually records a more precise message, see taproot_errmsg().
 */
#define TAPROOT_ERRORS(E)						\
	E(NOMODULE,  "taproot module not loaded (run 'taprootctl load')") \
	E(ABI,       "the taproot module speaks another ABI version: load the matching taproot.ko") \
	E(PROTO,     "malformed message from the taproot module")	\
	E(LOADED,    "taproot module already loaded")			\
	E(NOKO,      "taproot.ko not found")				\
	E(MODPARAM,  "the module refused its parameters; see dmesg")	\
	E(AMBIGUOUS, "ambiguous abbreviation")				\
	E(CORRUPT,   "corrupt record in a taproot ring")		\
	E(KPTR,      "kernel addresses are hidden (kernel.kptr_restrict)")

enum taproot_error {
	TAPROOT_E_FIRST = 4095,		/* MAX_ERRNO: no errno is above */
#define TAPROOT_E_ENUM(name, msg) TAPROOT_E##name,
	TAPROOT_ERRORS(TAPROOT_E_ENUM)
#undef TAPROOT_E_ENUM
	TAPROOT_E_LAST
};

/*
 * The generic message for @err, a negative value returned by this library
 * (-errno or -TAPROOT_E*). Never NULL; the string is static.
 */
const char *taproot_strerror(int err);

/*
 * The message to show a user for @err: the one the last failing call of
 * this thread recorded, when that call returned @err, else
 * taproot_strerror(@err). Never NULL. The string stays valid until the next
 * call into this library from the same thread.
 */
const char *taproot_errmsg(int err);

#endif /* TAPROOT_UTIL_ERROR_H */
