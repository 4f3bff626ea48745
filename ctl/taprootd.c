// SPDX-License-Identifier: GPL-2.0
/*
 * taprootd: the taproot daemon.
 *
 * This version checks the loaded module (generic netlink GET_INFO, ABI
 * version), logs one line describing it on stderr, and waits for SIGTERM or
 * SIGINT. The options that will steer profile collection are parsed and
 * validated now, so that a service definition written today keeps working.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/taproot.h>

#include "taproot.h"

#define INTERVAL_DEFAULT	10
#define INTERVAL_MAX		86400
#define RETAIN_MAX		1000000

static const char *prog = "taprootd";

struct options {
	const char *output;
	unsigned long interval;
	unsigned long retain;
	bool foreground;
};

static void log_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void log_msg(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void usage(void)
{
	printf("Usage: %s [OPTIONS]\n"
	       "\n"
	       "Checks that the taproot module is loaded and speaks this program's\n"
	       "ABI version (%d), logs one line describing it on stderr, then runs\n"
	       "until SIGTERM or SIGINT and exits 0. Profiles are not collected yet:\n"
	       "the options below are validated and otherwise unused.\n"
	       "\n"
	       "Options:\n"
	       "  -o, --output DIR    directory for profiles; must be a writable\n"
	       "                      directory (default: the current directory)\n"
	       "  -i, --interval S    seconds per profile, 1..%d (default %d)\n"
	       "  -r, --retain N      profiles to keep, 0 for all, at most %d\n"
	       "                      (default 0)\n"
	       "  -f, --foreground    stay in the foreground; without it, taprootd\n"
	       "                      detaches (new session, cwd and stderr kept)\n"
	       "                      once the module check has passed\n"
	       "  -h, --help          show this help\n"
	       "  -V, --version       show the version and the ABI version\n"
	       "\n"
	       "Exit status: 0 after SIGTERM/SIGINT, 1 error (module not loaded,\n"
	       "other ABI, no permission: needs CAP_PERFMON or CAP_SYS_ADMIN),\n"
	       "2 usage error.\n",
	       prog, TAPROOT_ABI_VERSION, INTERVAL_MAX, INTERVAL_DEFAULT, RETAIN_MAX);
}

/* @arg as a decimal in [@min, @max], or a usage error naming @opt. */
static int parse_ulong(const char *opt, const char *arg, unsigned long min,
		       unsigned long max, unsigned long *v)
{
	char *end;

	errno = 0;
	*v = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || arg[0] == '-' || *v < min || *v > max) {
		log_msg("'%s' needs a number in %lu..%lu, not '%s'", opt, min, max, arg);
		return -1;
	}
	return 0;
}

static int parse_options(int argc, char **argv, struct options *o)
{
	static const struct option options[] = {
		{ "output",	required_argument,	NULL, 'o' },
		{ "interval",	required_argument,	NULL, 'i' },
		{ "retain",	required_argument,	NULL, 'r' },
		{ "foreground",	no_argument,		NULL, 'f' },
		{ "help",	no_argument,		NULL, 'h' },
		{ "version",	no_argument,		NULL, 'V' },
		{ NULL }
	};
	int opt;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":o:i:r:fhV", options, NULL)) != -1) {
		switch (opt) {
		case 'o':
			o->output = optarg;
			break;
		case 'i':
			if (parse_ulong("--interval", optarg, 1, INTERVAL_MAX, &o->interval))
				return 2;
			break;
		case 'r':
			if (parse_ulong("--retain", optarg, 0, RETAIN_MAX, &o->retain))
				return 2;
			break;
		case 'f':
			o->foreground = true;
			break;
		case 'h':
			usage();
			return 0;
		case 'V':
			printf("%s %s (taproot ABI %d)\n", prog, TAPROOT_VERSION,
			       TAPROOT_ABI_VERSION);
			return 0;
		case ':':
			log_msg("'%s' needs an argument", argv[optind - 1]);
			return 2;
		default:
			log_msg("unknown option '%s' (see '%s --help')", argv[optind - 1], prog);
			return 2;
		}
	}
	if (optind < argc) {
		log_msg("unexpected argument '%s' (see '%s --help')", argv[optind], prog);
		return 2;
	}
	return -1;
}

static int check_output(const char *dir)
{
	struct stat st;

	if (stat(dir, &st) < 0) {
		log_msg("--output %s: %s", dir, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		log_msg("--output %s: not a directory", dir);
		return -1;
	}
	if (access(dir, W_OK | X_OK) < 0) {
		log_msg("--output %s: not writable: %s", dir, strerror(errno));
		return -1;
	}
	return 0;
}

static void log_module(const struct taproot_info *info)
{
	char features[256] = "";
	size_t off = 0;
	unsigned int bit;

	for (bit = 0; bit < 64 && off < sizeof(features); bit++) {
		const char *name = taproot_feature_name(bit);

		if (!(info->features & (1ULL << bit)))
			continue;
		if (name)
			off += (size_t)snprintf(features + off, sizeof(features) - off,
						"%s%s", off ? "," : "", name);
		else
			off += (size_t)snprintf(features + off, sizeof(features) - off,
						"%sbit%u", off ? "," : "", bit);
	}
	log_msg("taproot module ABI %" PRIu32 " on %s: %" PRIu32 " CPUs, page size %" PRIu32
		", features %s, sampling %s",
		info->abi_version, info->kernel_release, info->nr_cpus, info->page_size,
		features[0] ? features : "none", info->running ? "running" : "stopped");
}

int main(int argc, char **argv)
{
	struct options o = { .output = ".", .interval = INTERVAL_DEFAULT };
	struct taproot_info info;
	struct taproot_nl *nl;
	sigset_t set;
	int ret, err, sig;

	ret = parse_options(argc, argv, &o);
	if (ret >= 0)
		return ret;
	if (check_output(o.output) < 0)
		return 1;

	/* Block the signals first: one that arrives early still counts. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0) {
		log_msg("blocking SIGTERM and SIGINT: %s", strerror(errno));
		return 1;
	}

	err = taproot_nl_open(&nl);
	if (err == 0)
		err = taproot_nl_get_info(nl, &info);
	if (err < 0) {
		log_msg("%s", taproot_errmsg(err));
		taproot_nl_close(nl);
		return 1;
	}
	log_module(&info);

	if (!o.foreground && daemon(1, 1) < 0) {
		log_msg("detaching: %s", strerror(errno));
		taproot_nl_close(nl);
		return 1;
	}

	for (;;) {
		err = sigwait(&set, &sig);
		if (err == 0)
			break;
		if (err != EINTR) {
			log_msg("waiting for a signal: %s", strerror(err));
			taproot_nl_close(nl);
			return 1;
		}
	}
	log_msg("%s received, exiting", sig == SIGTERM ? "SIGTERM" : "SIGINT");
	taproot_nl_close(nl);
	return 0;
}
