/* SPDX-License-Identifier: MIT */
/* test_tsc.c: the TSC clock's pieces (common/util/tsc.c): the rule that
 * decides whether it may be used, read from a cpuinfo file; the
 * calibration from two readings; ticks to ns and back, before the anchor
 * too. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/tsc.h"

/* A cpuinfo file whose flags line is flags; its path in path. */
static void
cpuinfo(char *path, const char *flags)
{
	FILE *f;
	int fd;

	strcpy(path, "/tmp/grm-test-cpuinfo.XXXXXX");
	cr_assert_neq(fd = mkstemp(path), -1);
	cr_assert_not_null(f = fdopen(fd, "w"));
	fprintf(f, "processor\t: 0\nvendor_id\t: x\nflags\t\t: %s\n\n"
	    "processor\t: 1\nflags\t\t: fpu\n", flags);
	fclose(f);
	setenv("GRM_TSC_CPUINFO", path, 1);
}

Test(tsc, the_rule_on_the_cpu_flags)
{
	char path[64], why[256];

	cpuinfo(path, "fpu tsc constant_tsc nonstop_tsc rdtscp");
	cr_assert_eq(tsc_usable(why, sizeof why), TSC_HAVE);
	unlink(path);
	cpuinfo(path, "fpu tsc constant_tsc rdtscp");
	cr_assert_eq(tsc_usable(why, sizeof why), 0);
	if (TSC_HAVE)
		cr_assert(strstr(why, "lack nonstop_tsc") != NULL, "%s", why);
	unlink(path);
	/* A word that only contains the flag is not the flag. */
	cpuinfo(path, "fpu xconstant_tsc nonstop_tsc_x");
	cr_assert_eq(tsc_usable(why, sizeof why), 0);
	if (TSC_HAVE)
		cr_assert(strstr(why, "lack constant_tsc") != NULL, "%s", why);
	unlink(path);
	setenv("GRM_TSC_CPUINFO", "/nonexistent/cpuinfo", 1);
	cr_assert_eq(tsc_usable(why, sizeof why), 0);
	if (TSC_HAVE)
		cr_assert(strstr(why, "no CPU flags") != NULL, "%s", why);
	unsetenv("GRM_TSC_CPUINFO");
}

Test(tsc, calibration_and_conversion)
{
	/* 2.5 ticks per ns: 250,000,000 ticks in 100 ms, reads 20 and 30
	 * ns wide. */
	struct tsc_pair a = { 1000000000u, 5000000000u, 10 };
	struct tsc_pair b = { 1250000000u, 5100000000u, 15 };
	struct tsc_pair near = { 1000001000u, 5000000400u, 10 };
	struct tsc_cal c;
	uint64_t v, d;

	cr_assert_eq(tsc_calibrate(&a, &near, &c), -1);
	cr_assert_eq(tsc_calibrate(&b, &a, &c), -1);
	cr_assert_eq(tsc_calibrate(&a, &b, &c), 0);
	cr_assert(c.tick0 == a.tick && c.ns0 == a.ns && c.err_ns == 10 &&
	    c.span_ns == 100000000u);
	/* (10 + 15) ns over 100 ms: 250 ppb. */
	cr_assert_eq(c.rate_ppb, 250);
	cr_assert_eq(c.mult, 1717986918u);	/* 0.4 × 2^32, rounded */
	cr_assert_eq(tsc_to_ns(&c, a.tick), a.ns);
	cr_assert_eq(tsc_to_ns(&c, b.tick), b.ns);
	cr_assert_eq(tsc_to_ns(&c, a.tick + 25), a.ns + 10);
	/* Before the anchor (a spill of an earlier LM): signed. */
	cr_assert_eq(tsc_to_ns(&c, a.tick - 2500000000u), a.ns - 1000000000u);
	/* A day of ticks: off by mult's rounding alone, 2^-33 ns per tick
	 * at most (0.58 ppb at 2.5 GHz, 50 us a day). */
	v = tsc_to_ns(&c, a.tick + 86400ull * 2500000000u);
	d = a.ns + 86400ull * 1000000000u;
	cr_assert_lt(v > d ? v - d : d - v, 50000u, "off by %lld ns",
	    (long long)(v - d));
	cr_assert_eq(tsc_ticks(&c, 5000000u), 12500000u);
	c.mult = 0;
	cr_assert_eq(tsc_ticks(&c, 5000000u), 0);
}

Test(tsc, a_real_reading)
{
	struct tsc_pair a, b;

	if (!TSC_HAVE)
		return;
	tsc_pair(&a);
	tsc_pair(&b);
	cr_assert(b.ns >= a.ns && b.tick > a.tick);
	cr_assert_lt(a.half_ns, 1000000u, "clock reads %llu ns apart",
	    (unsigned long long)a.half_ns * 2);
}
