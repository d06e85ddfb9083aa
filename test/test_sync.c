/* SPDX-License-Identifier: MIT */
/* test_sync.c: the clock model against simulated hosts whose offset and
 * drift are known exactly. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "mm_sync.h"

/* A host: its clock = M + off + drift (M - ref). */
struct host {
	int64_t		off;
	double		drift;
	uint64_t	ref;
};

static uint64_t
host_clock(const struct host *h, uint64_t m)
{
	return m + (uint64_t)h->off +
	    (uint64_t)(int64_t)llround(h->drift * (double)(int64_t)(m - h->ref));
}

static int64_t
true_offset(const struct host *h, uint64_t m)
{
	return (int64_t)(host_clock(h, m) - m);
}

/* One exchange sent at MM time t1, taking d1 there and d2 back. */
static void
exchange(struct mm_sync *cs, const struct host *h, uint64_t t1, uint64_t d1,
	 uint64_t d2)
{
	struct mm_sync_sample s;

	cr_assert_eq(mm_sync_sample_of(t1, host_clock(h, t1 + d1),
	    host_clock(h, t1 + d1), t1 + d1 + d2, &s), 0);
	mm_sync_add(cs, &s);
}

static uint64_t
absdiff(int64_t a, int64_t b)
{
	return a > b ? (uint64_t)(a - b) : (uint64_t)(b - a);
}

Test(sync, symmetric_offset_is_exact)
{
	struct mm_sync cs = { .n = 0 };
	struct host h = { 1000000000000LL, 0.0, 0 };
	uint64_t t = 5000000000u;
	int i;

	for (i = 0; i < 10; i++, t += 100000000u)
		exchange(&cs, &h, t, 25000, 25000);
	cr_assert(cs.valid);
	cr_assert_eq(mm_sync_offset(&cs.model, t), 1000000000000LL);
	/* The round trip, and its margin (mm_sync_sample_of). */
	cr_assert_eq(cs.model.best_rtt, 50000u + 50 + 2);
	/* The offset exact, the drift as likely either way. */
	cr_assert_lt(fabs(cs.model.drift), 1e-9);
	/* Half the round trip, and a few ns for rounding. */
	cr_assert(cs.model.err >= 25000u && cs.model.err <= 25031u, "%llu",
	    (unsigned long long)cs.model.err);
	cr_assert_eq(mm_sync_to_mm(&cs.model, host_clock(&h, t)), t);
}

Test(sync, negative_offset_and_asymmetry_within_bound)
{
	struct mm_sync cs = { .n = 0 };
	struct host h = { -1000000000000LL, 0.0, 0 };
	uint64_t t = 2000000000000u;
	int i;

	/* All the delay one way: the midpoint is wrong by half of it, which
	 * the bound (half the round trip) must cover. */
	for (i = 0; i < 5; i++, t += 500000000u)
		exchange(&cs, &h, t, 5000000, 30000);
	cr_assert_leq(absdiff(mm_sync_offset(&cs.model, t),
	    true_offset(&h, t)), cs.model.err);
	cr_assert_geq(cs.model.err, 2485000u);
}

Test(sync, drift_is_recovered)
{
	struct mm_sync cs = { .n = 0 };
	struct host h = { -3000000000LL, 50e-6, 1000000000u };
	uint64_t t = 1000000000u, m, lo = 0, hi = 0, first = t;
	int i;

	srand(7);
	for (i = 0; i < 60; i++, t += 1000000000u)
		/* Each way 10 to 100 us, at random. */
		exchange(&cs, &h, t, 10000 + (uint64_t)(rand() % 90000),
		    10000 + (uint64_t)(rand() % 90000));
	cr_assert(fabs(cs.model.drift - 50e-6) < 1e-6, "drift %g",
	    cs.model.drift);
	cr_assert_eq(mm_sync_drift_ppb(&cs.model),
	    (int64_t)llround(cs.model.drift * 1e9));
	cr_assert_leq(cs.model.err, 100000u);
	cr_assert_geq(cs.model.used, 30u);
	/* Between the samples the fit surely used (round trip no more than
	 * the best's twice), the truth is within the bound everywhere. */
	for (i = 0; i < 60; i++)
		if (cs.s[i].rtt <= cs.model.best_rtt * 2) {
			if (lo == 0 || cs.s[i].m < lo)
				lo = cs.s[i].m;
			if (cs.s[i].m > hi)
				hi = cs.s[i].m;
		}
	cr_assert_gt(hi - lo, 30000000000u);
	for (m = lo; m <= hi; m += (hi - lo) / 97)
		cr_assert_leq(absdiff(mm_sync_offset(&cs.model, m),
		    true_offset(&h, m)), cs.model.err,
		    "at %llu: model %lld, truth %lld, bound %llu",
		    (unsigned long long)(m - first),
		    (long long)mm_sync_offset(&cs.model, m),
		    (long long)true_offset(&h, m),
		    (unsigned long long)cs.model.err);
	/* A host timestamp back on the MM's clock. */
	m = (lo + hi) / 2;
	cr_assert_leq(absdiff((int64_t)mm_sync_to_mm(&cs.model, host_clock(&h, m)),
	    (int64_t)m), cs.model.err);
}

Test(sync, congested_exchanges_are_left_out)
{
	struct mm_sync cs = { .n = 0 };
	struct host h = { 123456789, 0.0, 0 };
	uint64_t t = 1000000000u;
	int i;

	for (i = 0; i < 20; i++, t += 250000000u) {
		if (i % 4 == 3)	/* queued 40 ms one way */
			exchange(&cs, &h, t, 40000000, 20000);
		else
			exchange(&cs, &h, t, 20000, 20000);
	}
	cr_assert_eq(cs.model.used, 15u);
	cr_assert_leq(absdiff(mm_sync_offset(&cs.model, t), 123456789),
	    20000u);
	cr_assert_leq(cs.model.err, 40000u);
}

Test(sync, window_slides)
{
	struct mm_sync cs = { .n = 0 };
	struct host h = { 0, 0.0, 0 };
	uint64_t t = 1000000000u;
	int i;

	for (i = 0; i < MM_SYNC_WINDOW + 10; i++, t += 1000000u)
		exchange(&cs, &h, t, 1000 + (uint64_t)i, 1000);
	cr_assert_eq(cs.n, (uint32_t)MM_SYNC_WINDOW);
	/* The first ten, with the smallest round trips, are gone. */
	cr_assert_eq(cs.model.best_rtt, 2000u + 10 + 2 + 2);
}

Test(sync, inverse_conversion)
{
	struct mm_sync_model md = { .m0 = 7000000000u, .off0 = -42,
	    .drift = -20e-6 };
	uint64_t m;

	md.k = md.drift / (1 + md.drift);
	for (m = 1000000000u; m < 100000000000u; m += 3333333333u) {
		uint64_t host = m + (uint64_t)mm_sync_offset(&md, m);

		cr_assert_leq(absdiff((int64_t)mm_sync_to_mm(&md, host),
		    (int64_t)m), 1u);
	}
}

Test(sync, answer_before_question_is_refused)
{
	struct mm_sync_sample s;

	cr_assert_eq(mm_sync_sample_of(100, 5, 5, 99, &s), -1);
	cr_assert_eq(mm_sync_sample_of(100, 5, 5, 100, &s), 0);
	cr_assert_eq(s.rtt, 2u);
}

/* The host's hold between the ping's arrival and its answer is not
 * uncertainty: the sample is as wide as the links' two ways (and its
 * margin), and the truth within it. */
Test(sync, hold_is_taken_out)
{
	struct mm_sync_sample s;
	uint64_t t1 = 5000000000u, off = 1000000000000u;

	/* 7 us there, 40 us held, 3 us back. */
	cr_assert_eq(mm_sync_sample_of(t1, t1 + 7000 + off,
	    t1 + 47000 + off, t1 + 50000, &s), 0);
	cr_assert_eq(s.rtt, 10000u + (50000 + 40000) / 1000 + 2);
	cr_assert_leq(absdiff(s.o, (int64_t)off), s.rtt / 2);
	/* A hold longer than the round trip is not believed. */
	cr_assert_eq(mm_sync_sample_of(t1, t1 + off, t1 + 60000 + off,
	    t1 + 50000, &s), 0);
	cr_assert_eq(s.rtt, 50000u + 50 + 2);
}

/*
 * The four times of an exchange from the kernels (the ping's departure
 * t1 and the answer's t3 from transmit stamps, arrivals t2 and t4 from
 * receive stamps) against those read in user space (t1 and t3 before the
 * sends, earlier): each is on its right side of the wire (t1, t3 not
 * after the departure, t2, t4 not before the arrival), so the truth is
 * within half the sample's width either way; the kernel's make it
 * narrower by what the two sends took, and so does each alone (the next
 * PONG brings t3 for the exchange before it: mm_peer.c).  Any leg may be
 * the longer one: the truth stays inside.
 */
Test(sync, kernel_departures_narrow_the_sample)
{
	struct mm_sync_sample u, k, k1, k3;
	struct host h = { -2000000000000LL, 0.0, 0 };
	uint64_t t1 = 7000000000u, send1 = 6000, send3 = 4000, d;
	int leg;

	for (leg = 0; leg < 4; leg++) {
		/* From the departures: there d1, held, back d2. */
		uint64_t d1 = leg & 1 ? 300 : 1900, d2 = leg & 2 ? 250 : 2100;
		uint64_t dep1 = t1 + send1, arr2 = dep1 + d1;
		uint64_t dep3 = arr2 + 30000, arr4 = dep3 + d2;
		uint64_t t2 = host_clock(&h, arr2);

		d = t1 + send1 + d1 + 30000 + d2;
		/* User space: t1 and t3 read before their sends. */
		cr_assert_eq(mm_sync_sample_of(t1, t2,
		    host_clock(&h, dep3 - send3), arr4, &u), 0);
		cr_assert_eq(mm_sync_sample_of(dep1, t2, host_clock(&h, dep3),
		    arr4, &k), 0);
		cr_assert_eq(mm_sync_sample_of(dep1, t2,
		    host_clock(&h, dep3 - send3), arr4, &k1), 0);
		cr_assert_eq(mm_sync_sample_of(t1, t2, host_clock(&h, dep3),
		    arr4, &k3), 0);
		cr_assert_eq(arr4, d);
		/* Narrower by what the sends took; the width is the legs',
		 * and the margin. */
		cr_assert_eq(u.rtt - k.rtt, send1 + send3 +
		    ((d - t1) + (dep3 - send3 - arr2)) / 1000 -
		    ((d - dep1) + (dep3 - arr2)) / 1000);
		cr_assert_eq(k.rtt, d1 + d2 + ((d - dep1) + (dep3 - arr2)) /
		    1000 + 2);
		cr_assert_lt(k1.rtt, u.rtt);
		cr_assert_lt(k3.rtt, u.rtt);
		cr_assert_lt(k.rtt, k1.rtt);
		cr_assert_lt(k.rtt, k3.rtt);
		/* The truth within each. */
		cr_assert_leq(absdiff(u.o, true_offset(&h, u.m)), u.rtt / 2);
		cr_assert_leq(absdiff(k.o, true_offset(&h, k.m)), k.rtt / 2);
		cr_assert_leq(absdiff(k1.o, true_offset(&h, k1.m)),
		    k1.rtt / 2);
		cr_assert_leq(absdiff(k3.o, true_offset(&h, k3.m)),
		    k3.rtt / 2);
		t1 += 1000000;
	}
	/* A departure time on the wrong side (the answer's stamp taken
	 * for a later send's: after the answer left) can put the truth
	 * outside: why only a stamp of its own last byte, or an earlier
	 * one, is taken. */
	cr_assert_eq(mm_sync_sample_of(t1, host_clock(&h, t1 + 2000),
	    host_clock(&h, t1 + 2000 + 30000 + 800), t1 + 2000 + 30000 + 300,
	    &k), 0);
	cr_assert_gt(absdiff(k.o, true_offset(&h, k.m)), k.rtt / 2);
}

/* The host time of MM time m is converted back to within the bound the
 * model states at m, whatever the distance from its samples. */
static void
assert_within_bound(const struct mm_sync_model *md, const struct host *h,
		    uint64_t m)
{
	uint64_t t = mm_sync_to_mm(md, host_clock(h, m));

	cr_assert_leq(absdiff((int64_t)t, (int64_t)m), mm_sync_bound(md, m),
	    "at %llu: error %llu, bound %llu", (unsigned long long)m,
	    (unsigned long long)absdiff((int64_t)t, (int64_t)m),
	    (unsigned long long)mm_sync_bound(md, m));
}

Test(sync, offset_only_model_allows_the_largest_drift)
{
	struct mm_sync cs = { .n = 0 };
	struct host h = { 5000, 400e-6, 10000000000u };
	uint64_t t = 10000000000u;

	exchange(&cs, &h, t, 20000, 20000);
	cr_assert(cs.valid);
	cr_assert_eq(cs.model.drift, 0.0);
	cr_assert_eq(cs.model.allow_ppb, 500000u);
	cr_assert_eq(cs.model.lo, t + 20000);
	cr_assert_eq(cs.model.hi, t + 20000);
	/* One second on: the bound has grown by 500 us. */
	cr_assert_eq(mm_sync_bound(&cs.model, t + 20000 + 1000000000u),
	    cs.model.err + 500000u);
	assert_within_bound(&cs.model, &h, t + 2000000000u);
	assert_within_bound(&cs.model, &h, t - 500000000u);
}

Test(sync, fitted_model_bound_grows_outside_its_samples)
{
	struct mm_sync cs = { .n = 0 };
	struct host h = { -7000000, 100e-6, 3000000000u };
	uint64_t t = 3000000000u, lo;
	int i;

	srand(19);
	/* Two seconds of samples, with delays up to 60 us either way. */
	for (i = 0; i < 9; i++, t += 250000000u)
		exchange(&cs, &h, t, 20000 + (uint64_t)(rand() % 40000),
		    20000 + (uint64_t)(rand() % 40000));
	cr_assert(cs.model.drift != 0.0);
	lo = cs.model.lo;
	cr_assert(cs.model.hi - lo >= MM_SYNC_DRIFT_SPAN);
	cr_assert_gt(cs.model.allow_ppb, 0u);
	cr_assert_leq(cs.model.allow_ppb, 1000000u);
	for (i = -20; i <= 40; i++)
		assert_within_bound(&cs.model, &h,
		    lo + (uint64_t)((int64_t)i * 500000000));
}

Test(sync, book_converts_by_range)
{
	struct mm_sync_model a = { .m0 = 1000, .off0 = 100, .err = 10,
		.lo = 1000, .hi = 1000, .allow_ppb = 500000 };
	struct mm_sync_model b = a;
	struct mm_sync_book bk = { .n = 0 };
	const struct mm_sync_used *u;

	b.off0 = 150;
	cr_assert_eq(mm_sync_conv(&bk, &a, 5100, &u), 5000u);
	cr_assert_null(u);
	cr_assert_eq(mm_sync_publish(&bk, &a, 1, 1), 0);
	cr_assert_eq(mm_sync_publish(&bk, &b, 2, 6000), 0);
	/* From 6000 on, model 2 converts; before, model 1. */
	cr_assert_eq(mm_sync_conv(&bk, &a, 6150, &u), 6000u);
	cr_assert_eq(u->num, 2u);
	cr_assert_eq(mm_sync_conv(&bk, &a, 6149, &u), 6049u);
	cr_assert_eq(u->num, 1u);
	cr_assert_eq(mm_sync_conv(&bk, &a, 2000, &u), 1900u);
	cr_assert_eq(u->num, 1u);
	/* A later model never starts before an earlier one. */
	cr_assert_eq(mm_sync_publish(&bk, &b, 3, 10), 0);
	cr_assert_eq(mm_sync_current(&bk)->from, 6000u);
	mm_sync_book_free(&bk);
}

/* A sample of host h at MM time t1: 2 us there, 2 us back. */
static enum mm_sync_change
exchange_one(struct mm_sync *cs, const struct host *h, uint64_t t1)
{
	struct mm_sync_sample s;

	cr_assert_eq(mm_sync_sample_of(t1, host_clock(h, t1 + 2000),
	    host_clock(h, t1 + 2000), t1 + 4000, &s), 0);
	return mm_sync_add(cs, &s);
}

/* A host whose rate goes from 0 to +200 ppm: no line passes through the
 * samples any more, the window starts again from the newest, and the
 * truth stays within the bound. */
Test(sync, rate_change_restarts_the_window)
{
	struct mm_sync cs = { .n = 0 };
	struct host h = { 5000000, 0.0, 0 };
	uint64_t t = 10000000000u, t_change;
	enum mm_sync_change w = MM_SYNC_SAME;
	int i;

	for (i = 0; i < 20; i++, t += 100000000u)
		cr_assert_eq(exchange_one(&cs, &h, t), MM_SYNC_SAME);
	/* From t_change on, 200 ppm fast (continuous there). */
	t_change = t - 50000000u;
	h.off += (int64_t)llround(-200e-6 * (double)t_change);
	h.drift = 200e-6;
	for (i = 0; i < 5 && w == MM_SYNC_SAME; i++, t += 100000000u) {
		/* Inside the bound before it is found, from the change on. */
		cr_assert_leq(absdiff(mm_sync_offset(&cs.model, t_change),
		    true_offset(&h, t_change)), mm_sync_bound(&cs.model,
		    t_change) + 1);
		w = exchange_one(&cs, &h, t);
	}
	cr_assert_eq(w, MM_SYNC_RATE);
	cr_assert_eq(cs.n, 1u);
	cr_assert_eq(cs.rates, 1u);
	cr_assert_eq(cs.steps, 0u);
	/* A second later the new rate is fitted. */
	for (i = 0; i < 11; i++, t += 100000000u)
		cr_assert_eq(exchange_one(&cs, &h, t), MM_SYNC_SAME);
	cr_assert_lt(fabs(cs.model.drift - 200e-6), 1e-6);
	cr_assert_leq(absdiff(mm_sync_offset(&cs.model, t),
	    true_offset(&h, t)), mm_sync_bound(&cs.model, t));
}

/* A host whose clock stood still for 0.3 s (a paused machine): a step,
 * of about -0.3 s, between the two samples' host times. */
Test(sync, paused_clock_is_a_step)
{
	struct mm_sync cs = { .n = 0 };
	struct host h = { 5000000, 50e-6, 0 };
	uint64_t t = 10000000000u, before;
	int i;

	for (i = 0; i < 20; i++, t += 100000000u)
		cr_assert_eq(exchange_one(&cs, &h, t), MM_SYNC_SAME);
	before = host_clock(&h, t - 100000000u);
	h.off -= 300000000;
	cr_assert_eq(exchange_one(&cs, &h, t), MM_SYNC_STEP);
	cr_assert_eq(cs.steps, 1u);
	cr_assert_leq(absdiff(cs.step, -300000000), 10000u);
	cr_assert_leq(absdiff((int64_t)cs.step_lo, (int64_t)before), 10000u);
	cr_assert_eq(cs.n, 1u);
	/* The drift is kept. */
	cr_assert_lt(fabs(cs.model.drift - 50e-6), 1e-6);
}

/* The memo answers as mm_sync_conv does, model and time, for every
 * timestamp of a run: in order, out of order, scribbled, either drift,
 * across two models' ranges, and with no model published. */
Test(sync, memo_converts_as_the_book)
{
	static const double drifts[] = { 0.0, 3.7e-6, -2.9e-5, 1e-3 };
	struct mm_sync_model a = { .m0 = 5000000000u, .off0 = -123456789,
		.err = 10, .lo = 1000, .hi = 1000, .allow_ppb = 500000 };
	struct mm_sync_model b;
	const struct mm_sync_used *u1, *u2;
	struct mm_sync_memo memo;
	uint64_t h, t1, t2;
	unsigned d, i, pass;

	srand(7);
	for (d = 0; d < sizeof drifts / sizeof drifts[0]; d++)
		for (pass = 0; pass < 2; pass++) {
			struct mm_sync_book bk = { .n = 0 };

			a.drift = drifts[d];
			a.k = a.drift / (1 + a.drift);
			b = a;
			b.off0 += 777;
			if (pass == 1) {
				cr_assert_eq(mm_sync_publish(&bk, &a, 1, 1), 0);
				cr_assert_eq(mm_sync_publish(&bk, &b, 2,
				    a.m0 + 2000000u), 0);
			}
			mm_sync_memo_init(&memo, &bk, &a);
			h = a.m0 + (uint64_t)a.off0 - 1000000u;
			for (i = 0; i < 200000; i++) {
				if (i % 1000 == 999)	/* scribbled */
					h ^= (uint64_t)rand() << 20;
				else if (i % 7 == 3)	/* back a little */
					h -= (uint64_t)(rand() % 5000);
				else
					h += (uint64_t)(rand() % 300);
				t1 = mm_sync_conv(&bk, &a, h, &u1);
				t2 = mm_sync_conv_memo(&memo, &bk, &a, h,
				    &u2);
				cr_assert_eq(t2, t1, "drift %g, h %llu", a.drift,
				    (unsigned long long)h);
				cr_assert_eq(u2, u1);
			}
			mm_sync_book_free(&bk);
		}
}

/* Records in order convert by the memo: it learns again only when x k
 * crosses a half (10 ms of records at 100 ns each: 10 ms times the drift
 * learnings, a few more near the ends, and one to start). */
Test(sync, memo_learns_rarely)
{
	static const double drifts[] = { 0.0, 3.7e-6, -2.9e-5, 1e-3 };
	struct mm_sync_model a = { .m0 = 5000000000u, .off0 = -123456789,
		.err = 10, .lo = 1000, .hi = 1000, .allow_ppb = 500000 };
	struct mm_sync_book bk = { .n = 0 };
	const struct mm_sync_used *u;
	struct mm_sync_memo memo;
	uint64_t h;
	int64_t lo, hi;
	unsigned d, i, learnt;

	for (d = 0; d < sizeof drifts / sizeof drifts[0]; d++) {
		a.drift = drifts[d];
		a.k = a.drift / (1 + a.drift);
		mm_sync_memo_init(&memo, &bk, &a);
		lo = memo.lo;
		hi = memo.hi;
		learnt = 0;
		h = a.m0 + (uint64_t)a.off0 + 3000000000u;
		for (i = 0; i < 100000; i++, h += 100) {
			cr_assert_eq(mm_sync_conv_memo(&memo, &bk, &a, h, &u),
			    mm_sync_to_mm(&a, h));
			if (memo.lo != lo || memo.hi != hi) {
				learnt++;
				lo = memo.lo;
				hi = memo.hi;
			}
		}
		cr_assert_leq(learnt, 4 + (unsigned)(1.1e7 * fabs(a.k)),
		    "drift %g: learnt %u times", a.drift, learnt);
	}
}

/* A run converted as a few shifts (mainmon admits such a run whole, its
 * times moved as it is decoded) converts as the book does, time by time:
 * every drift, runs of a microsecond to a second, and none where the
 * book has another model for part of it. */
Test(sync, memo_steps_convert_as_the_book)
{
	static const double drifts[] = { 0.0, 1e-9, 3.7e-6, -2.9e-5, 1e-3 };
	struct mm_sync_model a = { .m0 = 5000000000u, .off0 = -123456789,
		.err = 10, .lo = 1000, .hi = 1000, .allow_ppb = 500000 };
	struct mm_sync_model b;
	const struct mm_sync_used *u;
	struct mm_sync_memo memo;
	uint64_t upto[64], by[64], first, last, span, h;
	unsigned d, i, j, k, n, pass, found = 0;

	srand(11);
	for (d = 0; d < sizeof drifts / sizeof drifts[0]; d++)
		for (pass = 0; pass < 3; pass++)
			for (i = 0; i < 300; i++) {
				struct mm_sync_book bk = { .n = 0 };

				a.drift = drifts[d];
				a.k = a.drift / (1 + a.drift);
				b = a;
				b.off0 += 777;
				span = (uint64_t)1000 << (rand() % 21);
				first = a.m0 + (uint64_t)a.off0 +
				    (uint64_t)rand() * 1000u;
				last = first + (uint64_t)rand() % span;
				if (pass > 0) {
					cr_assert_eq(mm_sync_publish(&bk, &a, 1,
					    1), 0);
					/* pass 2: b from within the run. */
					cr_assert_eq(mm_sync_publish(&bk, &b, 2,
					    pass == 1 ? 2 : first - (uint64_t)
					    a.off0 + (last - first) / 2 + 1),
					    0);
				}
				mm_sync_memo_init(&memo, &bk, &a);
				n = mm_sync_memo_steps(&memo, &bk, &a, first,
				    last, upto, by, 64);
				if (pass == 2 && last - first > 2000 &&
				    drifts[d] == 0.0)
					cr_assert_eq(n, 0);
				/* A step a 1/k ns: a few in a run are few. */
				if (pass < 2 && (double)(last - first) *
				    fabs(a.k) < 20.0)
					cr_assert_gt(n, 0, "drift %g pass %u: "
					    "%llu ns", drifts[d], pass,
					    (unsigned long long)(last - first));
				if (n == 0) {
					mm_sync_book_free(&bk);
					continue;
				}
				found++;
				cr_assert_eq(upto[n - 1], UINT64_MAX);
				for (j = 0; j < 200; j++) {
					h = j == 0 ? first : j == 1 ? last :
					    j < 2 + 2 * n ? upto[(j - 2) / 2] +
					    (j % 2) : first + (uint64_t)rand() %
					    (last - first + 1);
					if (h < first || h > last)
						continue;
					for (k = 0; k + 1 < n && h > upto[k];)
						k++;
					cr_assert_eq(mm_sync_conv(&bk, &a, h,
					    &u) - h, by[k], "drift %g h %llu",
					    drifts[d], (unsigned long long)h);
					if (k > 0)
						cr_assert_geq((int64_t)(by[k] -
						    by[k - 1]), -1);
				}
				mm_sync_book_free(&bk);
			}
	cr_assert_gt(found, 2000);
}
