/* SPDX-License-Identifier: MIT */
/* pv_search.c: prove serve's searches of sorted arrays by time: a lower
 * bound, one from a near start (a gallop), and one from a guessed index
 * (a seek), for the views that search a row once per pixel column. */
#include "pv_search.h"

size_t
pv_lb(const void *arg, size_t lo, size_t hi, uint64_t t,
      uint64_t (*at)(const void *, size_t))
{
	size_t mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (at(arg, mid) < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Steps doubling from lo, then a binary search in the last one: a near
 * answer costs a few reads next to each other, not log n far apart. */
size_t
pv_gallop(const void *arg, size_t lo, size_t hi, uint64_t t,
	  uint64_t (*at)(const void *, size_t))
{
	size_t step = 1, prev = lo;

	while (lo + step < hi && at(arg, lo + step - 1) < t) {
		prev = lo + step;
		step *= 2;
	}
	return pv_lb(arg, prev, lo + step < hi ? lo + step : hi, t, at);
}

/* A gallop from g, forward or back: a good guess costs a few reads
 * around it, however many items lie between the last answer and this
 * one (a whole run's columns hold thousands each: a gallop from the last
 * answer read some 24 places far apart per column). */
size_t
pv_seek(const void *arg, size_t lo, size_t hi, double g, uint64_t t,
	uint64_t (*at)(const void *, size_t))
{
	size_t up, step = 1;

	if (!(g > (double)lo) || g >= (double)hi)
		return pv_gallop(arg, lo, hi, t, at);
	up = (size_t)g;
	if (at(arg, up) < t)
		return pv_gallop(arg, up + 1, hi, t, at);
	/* The answer is in [lo, up]: back by doubling steps. */
	while (up - lo > step && at(arg, up - step) >= t) {
		up -= step;
		step *= 2;
	}
	return pv_lb(arg, up - lo > step ? up - step : lo, up, t, at);
}

double
pv_density(size_t a, size_t b, uint64_t ta, uint64_t tb)
{
	return b > a && tb > ta ? (double)(b - a) / (double)(tb - ta) : 0;
}
