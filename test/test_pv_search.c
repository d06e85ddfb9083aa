/* SPDX-License-Identifier: MIT */
/* test_pv_search.c: prove serve's searches (prove/pv_search.c): the
 * gallop and the seek give the binary search's answer for every range,
 * time and guess (right, wrong, outside the range, not a number), on
 * arrays with runs of equal times, and read nothing outside [lo, hi). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "pv_search.h"

struct arr {
	const uint64_t	*t;
	size_t		lo, hi;	/* where a read is allowed */
	int		bad;	/* a read outside it */
	size_t		reads;
};

static uint64_t
at(const void *arg, size_t i)
{
	struct arr *a = (struct arr *)(uintptr_t)arg;

	a->reads++;
	if (i < a->lo || i >= a->hi) {
		a->bad = 1;
		return 0;
	}
	return a->t[i];
}

/* The answer by a walk, the reference. */
static size_t
walk(const uint64_t *t, size_t lo, size_t hi, uint64_t v)
{
	while (lo < hi && t[lo] < v)
		lo++;
	return lo;
}

static uint64_t rng = 88172645463325252u;
static uint64_t
next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

Test(search, every_search_gives_the_walks_answer)
{
	enum { N = 2000 };
	static uint64_t t[N];
	struct arr a = { t, 0, 0, 0, 0 };
	size_t i, lo, hi, want, got, n;
	uint64_t v;
	double g;
	int k;

	for (n = 1; n <= N; n = n * 3 + 1) {
		/* Times in order, with runs of equal ones and gaps. */
		t[0] = next() % 10;
		for (i = 1; i < n; i++)
			t[i] = t[i - 1] + (next() % 4 == 0 ? 0 : next() % 50);
		for (k = 0; k < 3000; k++) {
			lo = next() % (n + 1);
			hi = lo + next() % (n - lo + 1);
			v = next() % (t[n - 1] + 60);
			want = walk(t, lo, hi, v);
			a.lo = lo;
			a.hi = hi;
			got = pv_lb(&a, lo, hi, v, at);
			cr_assert_eq(got, want, "pv_lb [%zu,%zu) %llu", lo, hi,
			    (unsigned long long)v);
			got = pv_gallop(&a, lo, hi, v, at);
			cr_assert_eq(got, want, "pv_gallop [%zu,%zu) %llu", lo,
			    hi, (unsigned long long)v);
			/* Guesses: right, near, far, outside, not a number. */
			switch (k % 6) {
			case 0: g = (double)want; break;
			case 1: g = (double)want + (double)(next() % 9) - 4;
				break;
			case 2: g = (double)(next() % (n + 1)); break;
			case 3: g = -1e300; break;
			case 4: g = (double)hi + 0.5; break;
			default: g = NAN; break;
			}
			got = pv_seek(&a, lo, hi, g, v, at);
			cr_assert_eq(got, want, "pv_seek [%zu,%zu) %llu from %g",
			    lo, hi, (unsigned long long)v, g);
			cr_assert_eq(a.bad, 0, "a read outside [%zu,%zu)", lo,
			    hi);
		}
	}
}

Test(search, a_right_guess_reads_little)
{
	enum { N = 1 << 20 };
	uint64_t *t = malloc(N * sizeof *t), v;
	struct arr a;
	size_t i, want, lb = 0, guessed = 0, dens = 0;

	cr_assert_not_null(t);
	for (i = 0; i < N; i++)
		t[i] = 10 * i;
	a = (struct arr){ t, 0, N, 0, 0 };
	/* Exact guesses, and the guess the views make from the density
	 * (exact to a place here), against the binary search's reads. */
	for (i = 0; i < 1000; i++) {
		v = next() % (10 * (uint64_t)N);
		want = (v + 9) / 10;
		a.reads = 0;
		cr_assert_eq(pv_lb(&a, 0, N, v, at), want);
		lb += a.reads;
		a.reads = 0;
		cr_assert_eq(pv_seek(&a, 0, N, (double)want, v, at), want);
		guessed += a.reads;
		a.reads = 0;
		cr_assert_eq(pv_seek(&a, 0, N, pv_density(0, N, 0,
		    10 * (uint64_t)N) * (double)v, v, at), want);
		dens += a.reads;
	}
	cr_assert_eq(lb, 1000 * 20, "pv_lb: %zu reads", lb);
	cr_assert_leq(guessed, 1000 * 3, "right guesses: %zu reads", guessed);
	cr_assert_leq(dens, 1000 * 3, "the density's: %zu reads", dens);
	cr_assert_eq(pv_density(5, 5, 0, 10), 0);
	cr_assert_eq(pv_density(0, 10, 7, 7), 0);
	free(t);
}
