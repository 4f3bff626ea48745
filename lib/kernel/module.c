// SPDX-License-Identifier: GPL-2.0
/*
 * Loading and unloading taproot.ko with libkmod, and finding the file to
 * load. Every refusal of the kernel becomes a message that says what to do.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <syslog.h>
#include <unistd.h>

#include <libkmod.h>

#include "kernel/kernel-private.h"

#define TP_MODULE_NAME	"taproot"

/* Append "; @what" (or "@what" at the start) to @buf of @len bytes. */
static void tp_append(char *buf, size_t len, const char *what)
{
	size_t off = strnlen(buf, len);

	if (off < len)
		snprintf(buf + off, len - off, "%s%s", off ? "; " : "", what);
}

/* 0 when @path names an existing file, else -errno. */
static int tp_file_exists(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	return 0;
}

static int tp_ko_given(const char *path, const char *from, char **out)
{
	int err = tp_file_exists(path);

	if (err < 0)
		return tp_err(err, "taproot.ko not found: %s%s: %s", path, from,
			      taproot_strerror(err));
	*out = strdup(path);
	return *out ? 0 : tp_err(-ENOMEM, NULL);
}

int tp_ko_resolve(const struct tp_ko_search *s, char **path,
		  char *tried, size_t len)
{
	const char *slash;
	char *p, note[PATH_MAX + 64];
	size_t root;
	int err;

	*path = NULL;
	if (len)
		tried[0] = '\0';
	if (s->ko)
		return tp_ko_given(s->ko, "", path);
	if (s->env && s->env[0])
		return tp_ko_given(s->env, " (from $TAPROOT_KO)", path);

	/*
	 * The build tree: the executable is ROOT/ctl/taprootctl, the module
	 * ROOT/build/kmod/RELEASE/kmod/taproot.ko (see the top Makefile).
	 */
	if (!s->exe || !s->release || !s->release[0])
		return 1;
	slash = strrchr(s->exe, '/');
	if (!slash)
		return 1;
	root = (size_t)(slash - s->exe);
	while (root && s->exe[root - 1] != '/')
		root--;
	if (!root)
		return 1;	/* the executable is in "/": no ROOT above it */
	if (asprintf(&p, "%.*sbuild/kmod/%s/kmod/taproot.ko", (int)root,
		     s->exe, s->release) < 0)
		return tp_err(-ENOMEM, NULL);
	err = tp_file_exists(p);
	if (!err) {
		*path = p;
		return 0;
	}
	snprintf(note, sizeof(note), "%s (%s)", p, taproot_strerror(err));
	tp_append(tried, len, note);
	free(p);
	return 1;
}

/* Step 4 of taproot_module_find(): the installed module, via modules.dep. */
static int tp_ko_installed(struct kmod_ctx *ctx, char **path,
			   char *tried, size_t len)
{
	struct kmod_list *list = NULL, *l;
	char note[PATH_MAX + 64];
	const char *p = NULL;
	int err;

	err = kmod_module_new_from_lookup(ctx, TP_MODULE_NAME, &list);
	kmod_list_foreach(l, list) {
		struct kmod_module *mod = kmod_module_get_module(l);

		if (!p && !strcmp(kmod_module_get_name(mod), TP_MODULE_NAME))
			p = kmod_module_get_path(mod);
		if (p && !*path)
			*path = strdup(p);
		kmod_module_unref(mod);
	}
	kmod_module_unref_list(list);
	if (p)
		return *path ? 0 : tp_err(-ENOMEM, NULL);

	snprintf(note, sizeof(note), "installed module '%s' in %s (%s)",
		 TP_MODULE_NAME, kmod_get_dirname(ctx),
		 err < 0 ? taproot_strerror(err) : "not found");
	tp_append(tried, len, note);
	return tp_err(-TAPROOT_ENOKO,
		      "taproot.ko not found; tried: %s. Install taproot-dkms, build it "
		      "(make kmods), set $TAPROOT_KO or give its path", tried);
}

static int tp_module_find(struct kmod_ctx *ctx, const char *ko, char **path)
{
	char exe[PATH_MAX], tried[2 * PATH_MAX + 256];
	struct tp_ko_search s = { .ko = ko, .env = getenv("TAPROOT_KO") };
	struct utsname uts;
	ssize_t n;
	int err;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		s.exe = exe;
	}
	if (uname(&uts) == 0)
		s.release = uts.release;

	err = tp_ko_resolve(&s, path, tried, sizeof(tried));
	if (err != 1)
		return err;
	if (!s.exe)
		tp_append(tried, sizeof(tried), "no build tree: /proc/self/exe unreadable");
	return tp_ko_installed(ctx, path, tried, sizeof(tried));
}

static int tp_kmod_new(struct kmod_ctx **ctx)
{
	*ctx = kmod_new(NULL, NULL);
	if (!*ctx)
		return tp_err(-ENOMEM, "libkmod: cannot create a context");
	/*
	 * Every libkmod failure comes back to us as a return value, which we
	 * report with what to do about it; libkmod's own log lines would say
	 * the same thing a second time, less usefully. KMOD_LOG=debug (read
	 * by kmod_new) still shows them.
	 */
	if (!getenv("KMOD_LOG"))
		kmod_set_log_priority(*ctx, LOG_CRIT);
	return 0;
}

int taproot_module_find(const char *ko, char **path)
{
	struct kmod_ctx *ctx;
	int err;

	*path = NULL;
	err = tp_kmod_new(&ctx);
	if (err < 0)
		return err;
	err = tp_module_find(ctx, ko, path);
	kmod_unref(ctx);
	return err;
}

/* 1 when the module is in the kernel (live, coming or going), 0 when not. */
static int tp_module_present(struct kmod_ctx *ctx)
{
	struct kmod_module *mod;
	int err, state;

	err = kmod_module_new_from_name(ctx, TP_MODULE_NAME, &mod);
	if (err < 0)
		return tp_err(err, "libkmod: %s", taproot_strerror(err));
	state = kmod_module_get_initstate(mod);
	kmod_module_unref(mod);
	if (state == -ENOENT)
		return 0;
	if (state < 0)
		return tp_err(state, "reading /sys/module/%s: %s", TP_MODULE_NAME,
			      taproot_strerror(state));
	return 1;
}

/* Kernel parameter names treat '-' and '_' alike (kernel/params.c). */
static bool tp_param_eq(const char *a, size_t alen, const char *b, size_t blen)
{
	size_t i;

	if (alen != blen)
		return false;
	for (i = 0; i < alen; i++)
		if (a[i] != b[i] && !(strchr("-_", a[i]) && strchr("-_", b[i])))
			return false;
	return true;
}

/*
 * Refuse a name in @params that @mod does not declare (modinfo "parmtype"):
 * the kernel would only warn about it in dmesg and load the module anyway.
 * "dyndbg" is every module's. When modinfo cannot be read the kernel is
 * left to judge.
 */
static int tp_check_params(struct kmod_module *mod, const char *params)
{
	struct kmod_list *info = NULL, *l;
	char known[512] = "";
	const char *p = params, *name;
	size_t len, off = 0;
	bool quoted, found;

	if (kmod_module_get_info(mod, &info) < 0)
		return 0;
	kmod_list_foreach(l, info) {
		const char *v = kmod_module_info_get_value(l);

		if (strcmp(kmod_module_info_get_key(l), "parmtype") || !v)
			continue;
		if (off < sizeof(known))
			off += (size_t)snprintf(known + off, sizeof(known) - off, "%s%.*s",
						off ? ", " : "", (int)strcspn(v, ":"), v);
	}

	for (;;) {
		while (*p == ' ' || *p == '\t' || *p == '\n')
			p++;
		if (!*p)
			break;
		/* One token: up to a blank outside double quotes. */
		name = p + (*p == '"');
		for (quoted = false; *p && (quoted || !strchr(" \t\n", *p)); p++)
			if (*p == '"')
				quoted = !quoted;
		len = strcspn(name, "=\" \t\n");
		if (name + len > p)
			len = (size_t)(p - name);
		found = tp_param_eq(name, len, "dyndbg", 6);
		kmod_list_foreach(l, info) {
			const char *v = kmod_module_info_get_value(l);

			if (!found && v && !strcmp(kmod_module_info_get_key(l), "parmtype"))
				found = tp_param_eq(name, len, v, strcspn(v, ":"));
		}
		if (!found) {
			int err = tp_err(-TAPROOT_EMODPARAM,
					 "taproot.ko has no parameter '%.*s' (it has: %s)",
					 (int)len, name, known[0] ? known : "none");

			kmod_module_info_free_list(info);
			return err;
		}
	}
	kmod_module_info_free_list(info);
	return 0;
}

/*
 * What to do when the kernel wants signed modules: DKMS signs what it
 * builds with its machine owner key, which the firmware must trust.
 */
#define TP_SIGNING_HINT \
	"DKMS (taproot-dkms) signs the module with its key /var/lib/dkms/mok.pub; " \
	"enrol it once with 'mokutil --import /var/lib/dkms/mok.pub' and reboot " \
	"to confirm it (taprootctl(8), SECURE BOOT)"

/* The message for the kernel's refusal @err to load @path. */
static int tp_load_refused(int err, const char *path, const char *params)
{
	switch (err) {
	case -EEXIST:
		return tp_err(-TAPROOT_ELOADED, NULL);
	case -EPERM:
		return tp_err(err, "permission denied: loading a module needs CAP_SYS_MODULE; "
			      "a kernel in lockdown (Secure Boot) also refuses a module not "
			      "signed by a key it trusts: %s", TP_SIGNING_HINT);
	case -EKEYREJECTED:
	case -ENOKEY:
		return tp_err(err, "the kernel accepts only signed modules (Secure Boot) and "
			      "refused %s (%s): %s", path, taproot_strerror(err),
			      TP_SIGNING_HINT);
	case -EINVAL:
		if (params && params[0])
			return tp_err(-TAPROOT_EMODPARAM,
				      "the module refused its parameters '%s'; see dmesg",
				      params);
		return tp_err(err, "the kernel refused %s (%s); see dmesg", path,
			      taproot_strerror(err));
	case -ENOEXEC:
		return tp_err(err, "%s is not a module for this kernel (built for another "
			      "release?); see dmesg", path);
	case -ENOENT:
		return tp_err(err, "%s needs symbols this kernel lacks (built for another "
			      "kernel?); see dmesg", path);
	case -ENOSYS:
		return tp_err(err, "this kernel has no loadable module support");
	default:
		return tp_err(err, "loading %s: %s; see dmesg", path,
			      taproot_strerror(err));
	}
}

int taproot_module_load(const char *ko, const char *params, char **loaded)
{
	struct kmod_module *mod = NULL;
	struct kmod_ctx *ctx;
	char *path = NULL;
	int err;

	if (loaded)
		*loaded = NULL;
	err = tp_kmod_new(&ctx);
	if (err < 0)
		return err;

	err = tp_module_present(ctx);
	if (err > 0)
		err = tp_err(-TAPROOT_ELOADED, NULL);
	if (err < 0)
		goto out;

	err = tp_module_find(ctx, ko, &path);
	if (err < 0)
		goto out;
	err = kmod_module_new_from_path(ctx, path, &mod);
	if (err < 0) {
		err = tp_err(err, "%s: %s", path, taproot_strerror(err));
		goto out;
	}
	if (params && params[0]) {
		err = tp_check_params(mod, params);
		if (err < 0)
			goto out;
	}
	err = kmod_module_insert_module(mod, 0, params ? params : "");
	if (err < 0) {
		err = tp_load_refused(err, path, params);
		goto out;
	}
	if (loaded) {
		*loaded = path;
		path = NULL;
	}
out:
	kmod_module_unref(mod);
	free(path);
	kmod_unref(ctx);
	return err;
}

int taproot_module_unload(void)
{
	struct kmod_module *mod = NULL;
	struct kmod_ctx *ctx;
	int err;

	err = tp_kmod_new(&ctx);
	if (err < 0)
		return err;
	err = tp_module_present(ctx);
	if (err == 0)
		err = tp_err(-TAPROOT_ENOMODULE, "taproot module not loaded");
	if (err < 0)
		goto out;

	err = kmod_module_new_from_name(ctx, TP_MODULE_NAME, &mod);
	if (err < 0) {
		err = tp_err(err, "libkmod: %s", taproot_strerror(err));
		goto out;
	}
	if (kmod_module_get_initstate(mod) == KMOD_MODULE_BUILTIN) {
		err = tp_err(-EPERM, "taproot is built into this kernel: it cannot be unloaded");
		goto out;
	}

	/* libkmod asks for O_NONBLOCK: a held module fails at once. */
	err = kmod_module_remove_module(mod, 0);
	switch (err) {
	case 0:
		break;
	case -ENOENT:
		err = tp_err(-TAPROOT_ENOMODULE, "taproot module not loaded");
		break;
	case -EBUSY:
	case -EAGAIN:
		err = tp_err(-EBUSY, "taproot module in use (a consumer has /dev/taproot "
			     "open or mapped?)");
		break;
	case -EPERM:
		err = tp_err(err, "permission denied: unloading a module needs CAP_SYS_MODULE");
		break;
	default:
		err = tp_err(err, "unloading taproot: %s", taproot_strerror(err));
		break;
	}
out:
	kmod_module_unref(mod);
	kmod_unref(ctx);
	return err;
}
