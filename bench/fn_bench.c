/* SPDX-License-Identifier: MIT */
/* fn_bench.c: the cost of an instrumented call (bench/functions.sh): built
 * with -finstrument-functions, it calls a leaf function N times and prints
 * the mean time per call in ns, the loop alone timed. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long __attribute__((noinline))
leaf(long i)
{
	__asm__ volatile("" ::: "memory");
	return i + 1;
}

static double
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int
main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000, i, s = 0;
	double t0, t1;

	if (n <= 0)
		return 2;
	t0 = now_ns();
	for (i = 0; i < n; i++)
		s += leaf(i);
	t1 = now_ns();
	printf("%.1f ns per call (%ld calls, sum %ld)\n", (t1 - t0) / n, n, s);
	return 0;
}
