/* SPDX-License-Identifier: MIT */
/* tsc.c: whether the TSC clock may be used, and its calibration against
 * CLOCK_MONOTONIC (tsc.h). */
#include <stdio.h>
#include <string.h>

#include "util/clock.h"
#include "util/env.h"
#include "util/tsc.h"

#define CLOCKSOURCES \
	"/sys/devices/system/clocksource/clocksource0/available_clocksource"

/* Whether word w is one of the blank-separated words of s. */
static int
has_word(const char *s, const char *w)
{
	size_t n = strlen(w);
	const char *p = s;

	while ((p = strstr(p, w)) != NULL) {
		if ((p == s || p[-1] == ' ' || p[-1] == '\t') &&
		    (p[n] == ' ' || p[n] == '\t' || p[n] == '\n' ||
		    p[n] == '\0'))
			return 1;
		p += n;
	}
	return 0;
}

/* The first "flags" line of cpuinfo into line[sz]; -1 if none. */
static int
cpu_flags(const char *path, char *line, size_t sz)
{
	FILE *f = fopen(path, "r");
	int r = -1;

	if (f == NULL)
		return -1;
	while (fgets(line, (int)sz, f) != NULL)
		if (strncmp(line, "flags", 5) == 0) {
			r = 0;
			break;
		}
	fclose(f);
	return r;
}

int
tsc_usable(char *why, size_t whysz)
{
	const char *path = env_get(ENV_TSC_CPUINFO);
	static char line[8192];
	FILE *f;

	if (path == NULL)
		path = "/proc/cpuinfo";
	if (!TSC_HAVE) {
		snprintf(why, whysz, "not an x86-64 CPU");
		return 0;
	}
	if (cpu_flags(path, line, sizeof line) != 0) {
		snprintf(why, whysz, "no CPU flags in %s", path);
		return 0;
	}
	if (!has_word(line, "constant_tsc") || !has_word(line, "nonstop_tsc")) {
		snprintf(why, whysz, "the CPU flags in %s lack %s", path,
		    !has_word(line, "constant_tsc") ? "constant_tsc" :
		    "nonstop_tsc");
		return 0;
	}
	/* A fake cpuinfo (tests) says nothing of the kernel's view. */
	if (env_get(ENV_TSC_CPUINFO) != NULL)
		return 1;
	f = fopen(CLOCKSOURCES, "r");
	if (f == NULL)
		return 1;	/* not told: the flags decide */
	if (fgets(line, (int)sizeof line, f) == NULL)
		line[0] = '\0';
	fclose(f);
	if (!has_word(line, "tsc")) {
		snprintf(why, whysz, "the kernel does not offer tsc as a "
		    "clocksource (found unstable)");
		return 0;
	}
	return 1;
}

void
tsc_pair(struct tsc_pair *p)
{
	uint64_t a, t, b;
	int i;

	p->half_ns = UINT64_MAX;
	for (i = 0; i < 16; i++) {
		a = clk_mono_ns();
		t = tsc_read();
		b = clk_mono_ns();
		if (b < a || (b - a) / 2 >= p->half_ns)
			continue;
		p->tick = t;
		p->ns = a + (b - a) / 2;
		p->half_ns = (b - a + 1) / 2;
	}
	if (p->half_ns == UINT64_MAX) {	/* cannot happen: a monotonic clock */
		p->tick = tsc_read();
		p->ns = clk_mono_ns();
		p->half_ns = 0;
	}
}

int
tsc_calibrate(const struct tsc_pair *a, const struct tsc_pair *b,
	      struct tsc_cal *c)
{
	uint64_t dn, dt;

	if (b->ns < a->ns + 1000000u || b->tick <= a->tick)
		return -1;
	dn = b->ns - a->ns;
	dt = b->tick - a->tick;
	c->tick0 = a->tick;
	c->ns0 = a->ns;
#ifdef __SIZEOF_INT128__
	c->mult = (uint64_t)((((unsigned __int128)dn << 32) + dt / 2) / dt);
#else
	c->mult = (uint64_t)((long double)dn * 4294967296.0L /
	    (long double)dt + 0.5L);
#endif
	c->err_ns = a->half_ns;
	c->span_ns = dn;
	c->rate_ppb = (uint64_t)(((double)(a->half_ns + b->half_ns) * 1e9 +
	    (double)dn - 1) / (double)dn);
	return 0;
}
