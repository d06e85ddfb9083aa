/* SPDX-License-Identifier: MIT */
/* log.c: one-line messages on stderr, prefixed with the program name. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "util/env.h"
#include "util/log.h"

int log_level = GRM_LOG_WARN;
static const char *log_prog = "grm";

void
log_init(const char *prog, int level)
{
	log_prog = prog;
	log_level = level;
	if (env_flag(ENV_DEBUG))
		log_level = GRM_LOG_DEBUG;
}

static void
vlog(const char *fmt, va_list ap)
{
	char line[1024];

	vsnprintf(line, sizeof line, fmt, ap);
	fprintf(stderr, "%s: %s\n", log_prog, line);
}

void
log_msg(int level, const char *fmt, ...)
{
	va_list ap;

	if (level > log_level)
		return;
	va_start(ap, fmt);
	vlog(fmt, ap);
	va_end(ap);
}

void
fatal(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(fmt, ap);
	va_end(ap);
	exit(1);
}
