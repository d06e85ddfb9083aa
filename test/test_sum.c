/* SPDX-License-Identifier: MIT */
/* test_sum.c: the summary sidecar (trace/tr_sum.c): buckets that widen
 * keep every record, an outermost block's time spread over its buckets,
 * the dominant state of a cell, a sidecar written and loaded back, and
 * refused when stale or not what its header says. */
#include "tape_test.h"
#include "tr_sum.h"

TestSuite(sum, .init = setup, .fini = teardown);

static uint64_t
total(const struct tr_sum *s, size_t row)
{
	uint64_t n = 0;
	uint32_t b;

	for (b = 0; b < s->nb; b++)
		n += sum_cell_of(s, row, b).n;
	return n;
}

Test(sum, widening_keeps_every_record)
{
	struct tr_sum s;
	uint64_t i;

	sum_init(&s);
	/* 1,000,000 records 1 us apart: 1 s, far more than 4096 buckets of
	 * 1024 ns, on two threads. */
	for (i = 0; i < 1000000; i++)
		cr_assert_eq(sum_rec(&s, 5000 + i * 1000, 1, 10, 10 + i % 2, 1,
		    0), 0);
	cr_assert_leq(s.nb, SUM_NB);
	cr_assert_gt(s.shift, SUM_SHIFT0);
	cr_assert_eq(s.nrow, 2);
	cr_assert_eq(s.records, 1000000);
	cr_assert_eq(total(&s, 0) + total(&s, 1), 1000000);
	cr_assert_eq(total(&s, 0), 500000);
	cr_assert_eq(s.off[0], 0);
	sum_free(&s);
}

/* A thread's cells are those of the buckets its records reach: 2,000
 * short threads (three records each, in one bucket) hold a few cells
 * each, not SUM_NB; a thread whose records lie far apart, one of them
 * late (before the others), has each in its bucket and none between. */
Test(sum, a_short_thread_holds_few_cells)
{
	const uint64_t w = UINT64_C(1) << SUM_SHIFT0, t0 = 1000000;
	struct tr_sum s;
	uint32_t i, b, n;
	size_t cells = 0;

	sum_init(&s);
	for (i = 0; i < 2000; i++)
		for (n = 0; n < 3; n++)
			cr_assert_eq(sum_rec(&s, t0 + i + n, 1, 100 + i,
			    100 + i, 1, 0), 0);
	for (i = 0; i < s.nrow; i++)
		cells += s.row[i].cap;
	cr_assert_leq(cells, 8 * 2000, "%zu cells for 2000 short threads",
	    cells);
	cr_assert_eq(sum_rec(&s, t0 + 3000 * w, 1, 7, 7, 1, 0), 0);
	cr_assert_eq(sum_rec(&s, t0 + 2000 * w, 1, 7, 7, 1, 0), 0);
	cr_assert_eq(sum_rec(&s, t0 + 5 * w, 1, 7, 7, 1, 0), 0);
	for (n = 0, b = 0; b < s.nb; b++)
		n += sum_cell_of(&s, 2000, b).n;
	cr_assert_eq(n, 3);
	cr_assert_eq(sum_cell_of(&s, 2000, 5).n, 1);
	cr_assert_eq(sum_cell_of(&s, 2000, 2000).n, 1);
	cr_assert_eq(sum_cell_of(&s, 2000, 3000).n, 1);
	cr_assert_eq(sum_cell_of(&s, 0, 0).n, 3);
	cr_assert_eq(total(&s, 0), 3);
	sum_free(&s);
}

Test(sum, outermost_block_spread_over_buckets)
{
	struct tr_sum s;
	const uint64_t w = UINT64_C(1) << SUM_SHIFT0, t0 = 1000000;

	sum_init(&s);
	/* Block 7 from t0 to t0 + 3w, a nested block 8 inside it (not a
	 * state of the summary), then block 9 for w / 2 in bucket 3. */
	cr_assert_eq(sum_rec(&s, t0, 1, 2, 2, -1, 7), 0);
	cr_assert_eq(sum_rec(&s, t0 + 10, 1, 2, 2, -1, 8), 0);
	cr_assert_eq(sum_rec(&s, t0 + 20, 1, 2, 2, -2, 8), 0);
	cr_assert_eq(sum_rec(&s, t0 + 3 * w, 1, 2, 2, -2, 7), 0);
	cr_assert_eq(sum_rec(&s, t0 + 3 * w + 1, 1, 2, 2, -1, 9), 0);
	cr_assert_eq(sum_rec(&s, t0 + 3 * w + 1 + w / 2, 1, 2, 2, -2, 9), 0);
	cr_assert_eq(s.nstate, 2);
	cr_assert_eq(s.state[0], 7);
	cr_assert_eq(s.state[1], 9);
	cr_assert_eq(sum_cell_of(&s, 0, 0).st, 1);
	cr_assert_eq(sum_cell_of(&s, 0, 0).ns, w);
	cr_assert_eq(sum_cell_of(&s, 0, 2).st, 1);
	cr_assert_eq(sum_cell_of(&s, 0, 2).ns, w);
	cr_assert_eq(sum_cell_of(&s, 0, 3).st, 2);
	cr_assert_eq(sum_cell_of(&s, 0, 3).ns, w / 2);
	cr_assert_eq(sum_cell_of(&s, 0, 0).n, 3);
	cr_assert_eq(s.row[0].depth, 0);
	sum_free(&s);
}

Test(sum, written_loaded_and_refused_when_stale)
{
	struct tr_sum s, l;
	const char *tr = path("t.bin");
	char err[256], idx[PATH_MAX + 80];
	FILE *f;
	int i;

	/* Any bytes stand for the trace: the sidecar hashes its start. */
	cr_assert_not_null(f = fopen(tr, "w"));
	for (i = 0; i < 10000; i++)
		fputc('a' + i % 26, f);
	cr_assert_eq(fclose(f), 0);
	sum_init(&s);
	cr_assert_eq(sum_rec(&s, 100, 1, 2, 3, -1, 4), 0);
	cr_assert_eq(sum_rec(&s, 5000, 1, 2, 3, 1, 0), 0);
	s.foff = 77;
	cr_assert_eq(sum_rec(&s, 9000, 1, 2, 4, 1, 0), 0);
	cr_assert_eq(sum_write(&s, tr, 10000), 0);
	cr_assert_eq(sum_load(&l, tr, err, sizeof err), 0, "%s", err);
	cr_assert_eq(l.nb, s.nb);
	cr_assert_eq(l.nrow, 2);
	cr_assert_eq(l.records, 3);
	cr_assert_eq(l.covers, 10000);
	cr_assert_eq(l.off[(9000 - 100) >> SUM_SHIFT0], 77);
	/* The block still open counts to the last record. */
	cr_assert_eq(l.row[0].c[0].st, 1);
	cr_assert_eq(l.row[0].c[0].ns, 1024);
	sum_free(&l);
	/* Another trace (its start differs): stale. */
	cr_assert_not_null(f = fopen(tr, "r+"));
	fputc('Z', f);
	cr_assert_eq(fclose(f), 0);
	cr_assert_eq(sum_load(&l, tr, err, sizeof err), -1);
	cr_assert_not_null(strstr(err, "stale"), "%s", err);
	cr_assert_eq(l.nrow, 0);
	/* Cut short: not what its header says. */
	snprintf(idx, sizeof idx, "%s.idx", tr);
	cr_assert_eq(truncate(idx, 100), 0);
	cr_assert_eq(sum_load(&l, tr, err, sizeof err), -1);
	cr_assert_not_null(strstr(err, "its header says"), "%s", err);
	unlink(idx);
	cr_assert_eq(sum_load(&l, tr, err, sizeof err), -1);
	cr_assert_eq(errno, ENOENT);
	sum_free(&s);
}

/* Records of three threads, two of them taking turns (the rows of the
 * last two threads are found without a lookup) and the third now and
 * then: each thread's records in its own row. */
Test(sum, threads_taking_turns_each_in_its_row)
{
	static const uint32_t tids[] = { 7, 8, 7, 8, 8, 9, 7, 9, 8, 7 };
	uint64_t want[3] = { 0, 0, 0 }, i;
	struct tr_sum s;
	size_t r;
	uint32_t tid;

	sum_init(&s);
	for (i = 0; i < 100000; i++) {
		tid = tids[i % 10] + (i % 1000 == 999 ? 3 : 0);
		cr_assert_eq(sum_rec(&s, 5000 + i * 10, 1, 10, tid, 1, 0), 0);
		if (tid <= 9)
			want[tid - 7]++;
	}
	cr_assert_eq(s.records, 100000);
	cr_assert_geq(s.nrow, 3);
	for (r = 0; r < s.nrow; r++) {
		cr_assert_eq(s.row[r].pid, 10);
		if (s.row[r].tid <= 9)
			cr_assert_eq(total(&s, r), want[s.row[r].tid - 7]);
	}
	sum_free(&s);
}

/* Records of two threads taking turns, summed one by one (sum_rec) and,
 * as mainmon's merge of two threads does, counted per thread while in
 * the bucket of the last summed and summed in bulk (sum_count): the same
 * summary, as buckets fill, move on and widen. */
Test(sum, counted_in_bulk_as_one_by_one)
{
	struct tr_sum a, b;
	uint64_t ts = 1000, lo, w, tl[2] = { 0, 0 }, x = 12345;
	uint32_t k[2] = { 0, 0 }, t, bulk = 0;
	size_t r;
	unsigned i, bk;

	sum_init(&a);
	sum_init(&b);
	for (i = 0; i < 200000; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		t = (uint32_t)(x >> 40) % 3 == 0;	/* runs of turns */
		ts += x >> 60 == 0 ? (x >> 20) % 50000000 : (x >> 30) % 700;
		cr_assert_eq(sum_rec(&a, ts, 1, 10, 20 + t, 5, 0), 0);
		sum_bucket(&b, &lo, &w);
		if (ts - lo < w) {
			k[t]++;
			tl[t] = ts;
			bulk++;
			continue;
		}
		for (bk = 0; bk < 2; bk++) {
			cr_assert_eq(sum_count(&b, 1, 10, 20 + bk, k[bk],
			    tl[bk]), 0);
			k[bk] = 0;
		}
		cr_assert_eq(sum_rec(&b, ts, 1, 10, 20 + t, 5, 0), 0);
	}
	for (bk = 0; bk < 2; bk++)
		cr_assert_eq(sum_count(&b, 1, 10, 20 + bk, k[bk], tl[bk]), 0);
	cr_assert_gt(bulk, 100000, "most records counted in bulk");
	cr_assert_gt(a.nb, 8, "buckets moved on (and widened)");
	cr_assert_eq(b.records, a.records);
	cr_assert_eq(b.tlast, a.tlast);
	cr_assert_eq(b.nb, a.nb);
	cr_assert_eq(b.shift, a.shift);
	cr_assert_eq(b.nrow, a.nrow);
	for (r = 0; r < a.nrow; r++) {
		cr_assert_eq(b.row[r].tid, a.row[r].tid);
		for (bk = 0; bk < a.nb; bk++)
			cr_assert_eq(sum_cell_of(&b, r, bk).n,
			    sum_cell_of(&a, r, bk).n);
	}
	sum_free(&a);
	sum_free(&b);
}
