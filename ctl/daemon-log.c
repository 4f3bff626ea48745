// SPDX-License-Identifier: GPL-2.0
/*
 * taprootd's log: stderr, or syslog (daemon facility) once asked. Below
 * the rest of taprootd, which all logs through it.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <syslog.h>

#include "daemon.h"

static const char *log_prog = "taprootd";
static bool use_syslog;

void log_to_syslog(const char *prog)
{
	log_prog = prog;
	use_syslog = true;
	openlog(prog, LOG_PID, LOG_DAEMON);
}

void log_close(void)
{
	if (use_syslog)
		closelog();
}

void log_msg(int prio, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (use_syslog) {
		vsyslog(prio, fmt, ap);
	} else {
		fprintf(stderr, "%s: ", log_prog);
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
	}
	va_end(ap);
}
