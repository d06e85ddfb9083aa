/* SPDX-License-Identifier: MIT */
/* test_causal.c: unit tests of the reader's causality correction
 * (trace/tr_causal.c through <grm/trace.h>): receives before their send
 * inside the bounds moved, with what follows them on their thread; moves
 * capped by the bound; a violation beyond both bounds left and counted;
 * a moved send moving its receive; the counts per pair of hosts. */
#include "tape_test.h"

TestSuite(causal, .init = setup, .fini = teardown);

/* Host 1's records have a bound of 100 ns, host 2's 50 (allow 0 over a
 * span that covers them all); rank 0 is (1, 11), rank 1 (2, 22). */
#define HEAD \
	"#GRM-TRACE 2\n" \
	"#HOST 1 0 7 a\n" \
	"#SYNC 1 1000 0 0 100 200 1 1 1 0 100000000 0\n" \
	"#HOST 2 0 8 b\n" \
	"#SYNC 2 1000 0 0 50 200 1 1 1 0 100000000 0\n" \
	"#DEF -4 3 0 \"%d %d %ld\" \"message send\"\n" \
	"#DEF -5 3 1 \"%d %d %ld\" \"message receive\"\n" \
	"#DEF -6 1 4 \"%d %s\" \"process name\"\n" \
	"#DEF 10 8 2 \"%d\" \"e\"\n" \
	"10000 1 11 11 -6 0 \"a\"\n" \
	"10000 2 22 22 -6 1 \"b\"\n"

static const char text[] = HEAD
	/* tag 1: received 40 ns before it was sent (bound 50): moved by
	 * 40, the thread's next records by 40 less 1 per µs after it. */
	"20000 2 22 22 -5 0 1 8\n"
	"20040 1 11 11 -4 1 1 8\n"
	"21000 2 22 22 10 1\n"
	"30000 2 22 22 10 2\n"
	"80000 2 22 22 10 3\n"
	/* tag 2: 120 ns before (bounds 50 + 100): moved by 50 only. */
	"100000 2 22 22 -5 0 2 8\n"
	"100120 1 11 11 -4 1 2 8\n"
	"101000 2 22 22 10 4\n"
	/* tag 3: 200 ns before, beyond the bounds (150): left. */
	"200000 2 22 22 -5 0 3 8\n"
	"200200 1 11 11 -4 1 3 8\n"
	/* tag 4, from rank 1 to rank 0: 80 ns before (bound 100): moved;
	 * the send of tag 6 moves with it, and moves its receive (tag 6 is
	 * in order in the file: 50 ns after its send). */
	"300000 1 11 11 -5 1 4 8\n"
	"300080 2 22 22 -4 0 4 8\n"
	"300100 1 11 11 -4 1 6 8\n"
	"300150 2 22 22 -5 0 6 8\n"
	"300500 1 11 11 10 5\n"
	/* tag 5: in order, nothing moves. */
	"400000 1 11 11 -4 1 5 8\n"
	"400010 2 22 22 -5 0 5 8\n";

/* The move (corrected - file time) of each record, in file order. */
static const struct {
	uint64_t	ts;
	uint64_t	shift;
} want[] = {
	{ 10000, 0 }, { 10000, 0 },
	{ 20000, 40 }, { 20040, 0 }, { 21000, 39 }, { 30000, 30 },
	{ 80000, 0 },
	{ 100000, 50 }, { 100120, 0 }, { 101000, 49 },
	{ 200000, 0 }, { 200200, 0 },
	{ 300000, 80 }, { 300080, 0 }, { 300100, 80 }, { 300150, 30 },
	{ 300500, 80 },
	{ 400000, 0 }, { 400010, 0 },
};
#define NWANT	(sizeof want / sizeof want[0])

static void
check_counts(const struct grmtrace_causal *c, uint64_t matched,
	     uint64_t violations, uint64_t worst, uint64_t moved,
	     uint64_t capped, uint64_t beyond, uint64_t beyond_ns,
	     uint64_t max, uint64_t median)
{
	cr_assert_not_null(c);
	cr_assert(c->matched == matched && c->violations == violations &&
	    c->worst_ns == worst && c->moved == moved &&
	    c->capped == capped && c->beyond == beyond &&
	    c->beyond_ns == beyond_ns && c->max_shift_ns == max &&
	    c->median_shift_ns == median,
	    "pair %u -> %u: matched %llu violations %llu worst %llu moved "
	    "%llu capped %llu beyond %llu by %llu max %llu median %llu",
	    c->send_node, c->recv_node, (unsigned long long)c->matched,
	    (unsigned long long)c->violations,
	    (unsigned long long)c->worst_ns, (unsigned long long)c->moved,
	    (unsigned long long)c->capped, (unsigned long long)c->beyond,
	    (unsigned long long)c->beyond_ns,
	    (unsigned long long)c->max_shift_ns,
	    (unsigned long long)c->median_shift_ns);
}

Test(causal, moves_within_bounds_and_counts_exactly)
{
	const struct grmtrace_ev *ev;
	const struct grmtrace_causal *c;
	struct grmtrace *t;
	uint64_t last22 = 0;
	size_t i;

	cr_assert_not_null(t = grmtrace_open(put_file(text, sizeof text - 1),
	    NULL, 0));
	cr_assert_eq(grmtrace_select(t, 0), 0);
	for (i = 0; i < NWANT; i++) {
		cr_assert_eq(grmtrace_next(t, &ev), 1, "%s",
		    grmtrace_error(t));
		cr_assert(ev->raw_ts == want[i].ts &&
		    ev->ts - ev->raw_ts == want[i].shift,
		    "record %zu at %llu: moved by %lld, want %llu", i,
		    (unsigned long long)ev->raw_ts,
		    (long long)(ev->ts - ev->raw_ts),
		    (unsigned long long)want[i].shift);
		cr_assert_leq(ev->ts - ev->raw_ts, ev->bound_ns);
		if (ev->tid == 22) {
			cr_assert_geq(ev->ts, last22, "thread order kept");
			last22 = ev->ts;
		}
	}
	cr_assert_eq(grmtrace_next(t, &ev), 0);
	c = grmtrace_causal(t, 0);
	cr_assert(c->send_node == 0 && c->recv_node == 0);
	check_counts(c, 6, 4, 200, 4, 1, 1, 50, 80, 40);
	cr_assert(c->corrected && c->complete && c->unchecked == 0);
	cr_assert_eq(c->records_moved, 9);
	cr_assert_eq(c->records_max_ns, 80);
	c = grmtrace_causal(t, 1);
	cr_assert(c->send_node == 1 && c->recv_node == 2);
	check_counts(c, 5, 3, 200, 3, 1, 1, 50, 50, 40);
	c = grmtrace_causal(t, 2);
	cr_assert(c->send_node == 2 && c->recv_node == 1);
	check_counts(c, 1, 1, 80, 1, 0, 0, 0, 80, 80);
	cr_assert_null(grmtrace_causal(t, 3));
	grmtrace_close(t);
}

/* Raw times: the file's, nothing counted, nothing read twice. */
Test(causal, raw_times)
{
	const struct grmtrace_ev *ev;
	const struct grmtrace_causal *c;
	struct grmtrace *t;
	size_t n = 0;

	cr_assert_not_null(t = grmtrace_open(put_file(text, sizeof text - 1),
	    NULL, 0));
	cr_assert_eq(grmtrace_raw_times(t, 1), 0);
	cr_assert_eq(grmtrace_raw_times(t, 0), -1);
	cr_assert_eq(errno, EINVAL);
	cr_assert_eq(grmtrace_select(t, 0), 0);
	while (grmtrace_next(t, &ev) == 1) {
		cr_assert_eq(ev->ts, ev->raw_ts);
		cr_assert_eq(ev->ts, want[n].ts);
		n++;
	}
	cr_assert_eq(n, NWANT);
	c = grmtrace_causal(t, 0);
	cr_assert(!c->corrected && c->matched == 0 && c->records_moved == 0);
	cr_assert_null(grmtrace_causal(t, 1));
	cr_assert_eq(grmtrace_raw_times(NULL, 1), -1);
	cr_assert_null(grmtrace_causal(NULL, 0));
	grmtrace_close(t);
}

/* A receive whose send comes much later in the file than the largest
 * bound is not waited for: the reader ahead stops at the bound, and the
 * violation is counted (beyond) when it is read. */
Test(causal, reads_ahead_by_the_bound_only)
{
	static const char late[] = HEAD
	    "20000 2 22 22 -5 0 1 8\n"
	    "20030 2 22 22 10 1\n"
	    "20060 2 22 22 10 2\n"
	    "90000 2 22 22 10 3\n"
	    "90000000 1 11 11 -4 1 1 8\n";
	const struct grmtrace_ev *ev;
	const struct grmtrace_causal *c;
	struct grmtrace *t;
	int i;

	cr_assert_not_null(t = grmtrace_open(put_file(late, sizeof late - 1),
	    NULL, 0));
	cr_assert_eq(grmtrace_select(t, 0), 0);
	for (i = 0; i < 3; i++)
		cr_assert_eq(grmtrace_next(t, &ev), 1);
	cr_assert_eq(ev->raw_ts, 20000);
	c = grmtrace_causal(t, 0);
	cr_assert(c->matched == 0 && !c->complete, "read ahead too far");
	while (grmtrace_next(t, &ev) == 1)
		cr_assert_eq(ev->ts, ev->raw_ts);
	c = grmtrace_causal(t, 0);
	check_counts(c, 1, 1, 90000000 - 20000, 0, 0, 1,
	    90000000 - 20000 - 150, 0, 0);
	cr_assert(c->complete);
	grmtrace_close(t);
}

/* A seek back reads the corrected times again (the reader ahead keeps
 * what it found); standard input is read as it is. */
Test(causal, seek_back)
{
	const struct grmtrace_ev *ev;
	struct grmtrace *t;

	cr_assert_not_null(t = grmtrace_open(put_file(text, sizeof text - 1),
	    NULL, 0));
	cr_assert_eq(grmtrace_select(t, 0), 0);
	while (grmtrace_next(t, &ev) == 1)
		;
	cr_assert_eq(grmtrace_seek(t, 300000), 1);
	cr_assert_eq(grmtrace_next(t, &ev), 1);
	cr_assert(ev->raw_ts == 300000 && ev->ts == 300080);
	cr_assert_eq(grmtrace_seek(t, 20000), 1);
	cr_assert_eq(grmtrace_next(t, &ev), 1);
	cr_assert(ev->raw_ts == 20000 && ev->ts == 20040);
	grmtrace_close(t);
}

/* Standard input is corrected when it is a regular file (read again
 * through another open of it), not when it is a pipe. */
Test(causal, standard_input)
{
	const struct grmtrace_ev *ev;
	struct grmtrace *t;
	int fd[2];

	cr_assert_not_null(freopen(put_file(text, sizeof text - 1), "r",
	    stdin));
	cr_assert_not_null(t = grmtrace_open("-", NULL, 0));
	cr_assert_eq(grmtrace_select(t, 0), 0);
	while (grmtrace_next(t, &ev) == 1 && ev->raw_ts != 20000)
		;
	cr_assert_eq(ev->ts, 20040);
	cr_assert(grmtrace_causal(t, 0)->corrected);
	grmtrace_close(t);
	cr_assert_eq(pipe(fd), 0);
	cr_assert_eq(write(fd[1], text, sizeof text - 1),
	    (ssize_t)sizeof text - 1);
	close(fd[1]);
	cr_assert_eq(dup2(fd[0], 0), 0);
	close(fd[0]);
	cr_assert_not_null(t = grmtrace_open("-", NULL, 0));
	cr_assert_eq(grmtrace_raw_times(t, 0), -1);
	cr_assert_eq(grmtrace_select(t, 0), 0);
	while (grmtrace_next(t, &ev) == 1)
		cr_assert_eq(ev->ts, ev->raw_ts);
	cr_assert(!grmtrace_causal(t, 0)->corrected);
	grmtrace_close(t);
}

/* Opens trace tr and reads its n records, each moved by shift[i]; the
 * handle, at their end. */
static struct grmtrace *
read_shifts(const char *tr, size_t len, const uint64_t *shift, size_t n)
{
	const struct grmtrace_ev *ev;
	struct grmtrace *t;
	size_t i;

	cr_assert_not_null(t = grmtrace_open(put_file(tr, len), NULL, 0));
	cr_assert_eq(grmtrace_select(t, 0), 0);
	for (i = 0; i < n; i++) {
		cr_assert_eq(grmtrace_next(t, &ev), 1);
		cr_assert_eq(ev->ts - ev->raw_ts, shift[i], "record %zu: %llu",
		    i, (unsigned long long)(ev->ts - ev->raw_ts));
	}
	return t;
}

/* A receive soon after a moved one is moved with it (its thread's move,
 * lessening 1 ns per µs) and counted moved, though it needs less; one
 * that needs more gets its own move. */
Test(causal, carried_moves_count)
{
	static const char carried[] = HEAD
	    "20000 2 22 22 -5 0 1 8\n"
	    "20040 1 11 11 -4 1 1 8\n"
	    "22000 2 22 22 -5 0 2 8\n"
	    "22010 1 11 11 -4 1 2 8\n"
	    "24000 2 22 22 -5 0 3 8\n"
	    "24045 1 11 11 -4 1 3 8\n";
	static const uint64_t shift[] = { 0, 0, 40, 0, 38, 0, 45, 0 };
	struct grmtrace *t;

	t = read_shifts(carried, sizeof carried - 1, shift, 8);
	check_counts(grmtrace_causal(t, 0), 3, 3, 45, 3, 0, 0, 0, 45, 40);
	grmtrace_close(t);
}

/* A send later than its receive by more than the receive's bound (but
 * within the two bounds: capped) is read before the receive is returned,
 * though other records lie between: the receive moves by its bound, as
 * the records after it. */
Test(causal, capped_send_read_in_time)
{
	static const char capped[] = HEAD
	    "100000 2 22 22 -5 0 2 8\n"
	    "100060 1 12 12 10 1\n"
	    "100070 1 12 12 10 2\n"
	    "100120 1 11 11 -4 1 2 8\n"
	    "101000 2 22 22 10 3\n";
	static const uint64_t shift[] = { 0, 0, 50, 0, 0, 0, 49 };
	struct grmtrace *t;

	t = read_shifts(capped, sizeof capped - 1, shift, 7);
	check_counts(grmtrace_causal(t, 0), 1, 1, 120, 1, 1, 0, 0, 50, 50);
	grmtrace_close(t);
}
