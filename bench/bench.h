/* SPDX-License-Identifier: MIT */
/* bench.h: what the benchmarks share: the clock, the figures of a set of
 * per-event costs, and the cost of the clock itself. */
#ifndef GRM_BENCH_H
#define GRM_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "util/clock.h"

/* The clock every record uses (common/util/clock.h). */
static inline uint64_t
now_ns(void)
{
	return clk_mono_ns();
}

static inline int
bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

struct bench_stats {
	double	med, p10, p90;
};

/* Median and 10th/90th percentiles of v[0..n) (n > 0; v is sorted). */
static inline struct bench_stats
bench_stats(double *v, size_t n)
{
	struct bench_stats st;

	qsort(v, n, sizeof *v, bench_cmp_double);
	st.med = v[n / 2];
	st.p10 = v[n / 10];
	st.p90 = v[n * 9 / 10];
	return st;
}

/* ns for one clock_gettime(CLOCK_MONOTONIC), over ten million reads. */
static inline double
bench_clock_cost(void)
{
	volatile uint64_t sink = 0;
	uint64_t t0;
	long i, n = 10000000;

	t0 = now_ns();
	for (i = 0; i < n; i++)
		sink += now_ns();
	return (double)(now_ns() - t0) / (double)n;
}

#endif /* GRM_BENCH_H */
