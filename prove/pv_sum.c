/* SPDX-License-Identifier: MIT */
/* pv_sum.c: a trace's summary sidecar in prove: `prove index` writes it,
 * and prove serve answers from it (pixels coarser or finer than its
 * buckets alike, marked approximate) until the full index is built. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/buffer.h>

#include "pv_idx.h"
#include "pv_sum.h"

static double
now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int
pv_index_cmd(int argc, char **argv)
{
	struct grmtrace_sum_info in;
	struct grmtrace_sum *g;
	char err[512];
	double t0;
	int i, rc = 0;

	if (argc < 2 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "--help") == 0) {
		fprintf(argc < 2 ? stderr : stdout, "usage: prove index "
		    "FILE...\n  writes FILE.idx, the summary prove serve "
		    "opens a binary trace with at once\n");
		return argc < 2 ? 2 : 0;
	}
	for (i = 1; i < argc; i++) {
		t0 = now_s();
		if (grmtrace_index(argv[i], err, sizeof err) != 0 ||
		    (g = grmtrace_sum_open(argv[i], err, sizeof err)) == NULL) {
			fprintf(stderr, "prove index: %s\n", err);
			rc = 1;
			continue;
		}
		grmtrace_sum_get_info(g, &in);
		printf("%s.idx: %" PRIu64 " records, %" PRIu32 " rows, %" PRIu32
		    " buckets of %" PRIu64 " ns, written in %.3f s\n", argv[i],
		    in.records, in.nrows, in.nbuckets, in.width_ns,
		    now_s() - t0);
		grmtrace_sum_close(g);
	}
	return pv_flush() != 0 ? 1 : rc;
}

static int
by_row(const void *a, const void *b, void *arg)
{
	const struct grmtrace_sum *g = arg;
	uint32_t n[2], p[2], t[2];

	grmtrace_sum_row(g, *(const size_t *)a, &n[0], &p[0], &t[0]);
	grmtrace_sum_row(g, *(const size_t *)b, &n[1], &p[1], &t[1]);
	if (n[0] != n[1])
		return n[0] < n[1] ? -1 : 1;
	if (p[0] != p[1])
		return p[0] < p[1] ? -1 : 1;
	return (t[0] > t[1]) - (t[0] < t[1]);
}

/* The hosts named before the first record (the trace's start); none if
 * the trace cannot be opened.  0, or -1 out of memory. */
static int
hosts(struct pv_sum *s, const char *path)
{
	const struct grmtrace_ev *ev;
	struct grmtrace *t;
	char err[256];
	int rc;

	if ((t = pv_topen(path, err, sizeof err)) == NULL)
		return 0;
	while (grmtrace_next(t, &ev) == 1 && ev->kind != GRMTRACE_RECORD)
		continue;
	rc = pv_hosts_get(t, &s->host, &s->nhost);
	grmtrace_close(t);
	return rc;
}

int
pv_sum_load(struct pv_sum *s, const char *path)
{
	uint32_t node, pid, tid, n0 = 0, p0 = 0, t0;
	char err[512];
	size_t i;

	memset(s, 0, sizeof *s);
	if ((s->g = grmtrace_sum_open(path, err, sizeof err)) == NULL) {
		if (errno == ENOENT)
			return 1;
		fprintf(stderr, "prove serve: %s; ignored: the index is built "
		    "first\n", err);
		return 1;
	}
	grmtrace_sum_get_info(s->g, &s->in);
	if ((s->row = calloc(s->in.nrows + 1, sizeof *s->row)) == NULL)
		goto nomem;
	/* As the index's rows: threads of processes, not the Local
	 * Monitors' (pid 0); by host, process, thread. */
	for (i = 0; i < s->in.nrows; i++) {
		grmtrace_sum_row(s->g, i, &node, &pid, &tid);
		if (pid != 0)
			s->row[s->nrow++] = i;
	}
	qsort_r(s->row, s->nrow, sizeof *s->row, by_row, s->g);
	for (i = 0; i < s->nrow; i++) {
		grmtrace_sum_row(s->g, s->row[i], &node, &pid, &tid);
		if (i > 0)
			grmtrace_sum_row(s->g, s->row[i - 1], &n0, &p0, &t0);
		if (i == 0 || n0 != node || p0 != pid)
			s->procs++;
	}
	if (hosts(s, path) != 0)
		goto nomem;
	return 0;
nomem:
	fprintf(stderr, "prove serve: %s: out of memory\n", path);
	pv_sum_free(s);
	return -1;
}

void
pv_sum_free(struct pv_sum *s)
{
	grmtrace_sum_close(s->g);
	free(s->row);
	pv_hosts_free(s->host, s->nhost);
	memset(s, 0, sizeof *s);
}

int
pv_sum_meta(const struct pv_sum *s, const char *path, double progress,
	    struct evbuffer *out)
{
	const struct grmtrace_sum_cell *c;
	uint32_t node, pid, tid, b;
	uint64_t n;
	size_t i;
	const char *h;

	evbuffer_add_printf(out, "{\"file\":");
	pv_json_str(out, path, strlen(path));
	evbuffer_add_printf(out, ",\"first\":\"%" PRIu64 "\",\"last\":\"%"
	    PRIu64 "\",\"records\":%" PRIu64 ",\"ended\":false,\"losses\":0"
	    ",\"messages\":0,\"index_bytes\":0,\"build_s\":0"
	    ",\"approximate\":true,\"progress\":%.3f,\"bucket_ns\":%" PRIu64,
	    s->in.first, s->in.last, s->in.records, progress,
	    s->in.width_ns);
	pv_hosts_json(s->host, s->nhost, out);
	evbuffer_add_printf(out, ",\"rows\":[");
	for (i = 0; i < s->nrow; i++) {
		grmtrace_sum_row(s->g, s->row[i], &node, &pid, &tid);
		c = grmtrace_sum_cells(s->g, s->row[i]);
		for (b = 0, n = 0; b < s->in.nbuckets; b++)
			n += c[b].records;
		h = pv_host_name(s->host, s->nhost, node);
		evbuffer_add_printf(out, "%s{\"node\":%" PRIu32 ",\"host\":",
		    i ? "," : "", node);
		pv_json_str(out, h, strlen(h));
		evbuffer_add_printf(out, ",\"pid\":%" PRIu32 ",\"tid\":%"
		    PRIu32 ",\"depth\":1,\"marks\":%" PRIu64 "}", pid, tid, n);
	}
	evbuffer_add_printf(out, "],\"states\":[");
	for (i = 0; i < s->in.nstates; i++)
		evbuffer_add_printf(out, "%s\"block %" PRId64 "\"", i ? "," : "",
		    grmtrace_sum_state(s->g, i));
	evbuffer_add_printf(out, "],\"eids\":{}}\n");
	return 0;
}

int
pv_sum_stats(const struct pv_sum *s, struct evbuffer *out)
{
	char span[32];

	evbuffer_add_printf(out, "{\"records\":%" PRIu64 ",\"span\":\"%s\","
	    "\"processes\":%zu,\"threads\":%zu,\"losses\":0,\"matched\":0"
	    ",\"sends\":0,\"receives\":0,\"ended\":false,\"approximate\":true"
	    ",\"counts\":[],\"text\":\"\"}\n", s->in.records,
	    pv_secs(span, sizeof span, s->in.last - s->in.first), s->procs,
	    s->nrow);
	return 0;
}

/*
 * One row: per pixel column, the buckets it overlaps (in part: weighted by
 * the part), their records and the state of the one whose dominant state
 * has the most time there; then runs of columns of one state as the
 * index's [x0, x1, state, n] (n: records), and columns with records as
 * marks [x, n, 0, ts, 0].  Work: the columns plus the buckets.
 */
static void
row_view(const struct pv_sum *s, const struct grmtrace_sum_cell *c,
	 const struct pv_q *q, uint32_t *st, double *n, struct evbuffer *out)
{
	const double w = (double)s->in.width_ns;
	const double px = (double)(q->to - q->from) / q->width;
	double a, z, lo, hi, f, best;
	long b, b0, b1;
	unsigned x, x0;
	double sum;
	int first = 1;

	for (x = 0; x < q->width; x++) {
		a = (double)q->from + x * px - (double)s->in.first;
		z = a + px;
		st[x] = 0;
		n[x] = 0;
		if (z <= 0 || a >= (double)s->in.nbuckets * w)
			continue;
		b0 = a < 0 ? 0 : (long)floor(a / w);
		b1 = (long)ceil(z / w) - 1;
		if (b1 >= (long)s->in.nbuckets)
			b1 = (long)s->in.nbuckets - 1;
		for (b = b0, best = 0; b <= b1; b++) {
			lo = (double)b * w;
			hi = lo + w;
			f = ((z < hi ? z : hi) - (a > lo ? a : lo)) / w;
			if (f <= 0)
				continue;
			n[x] += c[b].records * f;
			if (c[b].state != 0 && c[b].ns * f > best) {
				best = c[b].ns * f;
				st[x] = c[b].state;
			}
		}
	}
	evbuffer_add(out, "{\"d\":[[", 7);
	for (x = 0; x < q->width; ) {
		if (st[x] == 0) {
			x++;
			continue;
		}
		for (x0 = x, sum = 0; x < q->width && st[x] == st[x0]; x++)
			sum += n[x];
		evbuffer_add_printf(out, "%s[%u,%u,%" PRIu32 ",%" PRIu64 "]",
		    first ? "" : ",", x0, x, st[x0] - 1, (uint64_t)llround(sum));
		first = 0;
	}
	evbuffer_add(out, "]],\"m\":[", 8);
	for (x = 0, first = 1; x < q->width; x++) {
		if (n[x] < 0.5)
			continue;
		/* Integers: printf's %f costs more than the rest. */
		evbuffer_add_printf(out, "%s[%u,%" PRIu64 ",0,%" PRIu64 ",0]",
		    first ? "" : ",", x, (uint64_t)llround(n[x]),
		    (uint64_t)llround(fmax(0, (double)q->from + x * px -
		    (double)s->in.first)));
		first = 0;
	}
	evbuffer_add(out, "]}", 2);
}

int
pv_sum_view(const struct pv_sum *s, const struct pv_q *q, double progress,
	    struct evbuffer *out)
{
	double px = (double)(q->to - q->from) / q->width;
	uint32_t *st;
	double *n;
	size_t i;

	if ((st = calloc(q->width, sizeof *st)) == NULL ||
	    (n = calloc(q->width, sizeof *n)) == NULL) {
		free(st);
		return -1;
	}
	evbuffer_add_printf(out, "{\"from\":%" PRIu64 ",\"to\":%" PRIu64
	    ",\"width\":%u,\"ns_per_px\":%.6g,\"r0\":%zu,\"rows\":[",
	    q->from, q->to, q->width, px, q->r0);
	for (i = q->r0; i < q->r1; i++) {
		if (i > q->r0)
			evbuffer_add(out, ",", 1);
		row_view(s, grmtrace_sum_cells(s->g, s->row[i]), q, st, n, out);
	}
	free(st);
	free(n);
	/* Finer than a bucket: each bucket spread over its columns. */
	evbuffer_add_printf(out, "],\"arrows\":[],\"phases\":[],\"losses\":[]"
	    ",\"procs\":[],\"arrows_stride\":1,\"truncated\":false"
	    ",\"approximate\":true,\"coarse\":%s,\"progress\":%.3f}\n",
	    px < (double)s->in.width_ns ? "true" : "false", progress);
	return 0;
}

/* At most this many records are read for a view finer than a bucket
 * (each about 0.3 to 0.9 us of reading, indexing and answering: tens of
 * ms at most). */
#define PV_RANGE_MAX	(1u << 15)

/* The records of the buckets [b0, b1] of every row, as the summary
 * counts them. */
static uint64_t
range_records(const struct pv_sum *s, uint32_t b0, uint32_t b1)
{
	const struct grmtrace_sum_cell *c;
	uint64_t n = 0;
	uint32_t b;
	size_t i;

	for (i = 0; i < s->in.nrows; i++)
		for (c = grmtrace_sum_cells(s->g, i), b = b0; b <= b1; b++)
			n += c[b].records;
	return n;
}

/* Whether x's rows are the summary's, in its order (the view's row
 * numbers are the summary's). */
static int
same_rows(const struct pv_sum *s, const struct pv_idx *x)
{
	uint32_t node, pid, tid;
	size_t i;

	if (x->nrow != s->nrow)
		return 0;
	for (i = 0; i < s->nrow; i++) {
		grmtrace_sum_row(s->g, s->row[i], &node, &pid, &tid);
		if (x->row[i].node != node || x->row[i].pid != pid ||
		    x->row[i].tid != tid)
			return 0;
	}
	return 1;
}

/* x: an index of the records of [q->from, q->to), read from the frame the
 * summary says the first bucket's records start in.  0; 1 if it cannot
 * be (too many records, none, a reader's error); -1 out of memory. */
static int
range_index(const struct pv_sum *s, const char *path, const struct pv_q *q,
	    struct pv_idx *x)
{
	const struct grmtrace_ev *ev;
	const uint64_t w = s->in.width_ns;
	struct grmtrace *t;
	uint64_t off = UINT64_MAX;
	uint32_t b0, b1, b, node, pid, tid;
	char err[256];
	size_t i;
	int rc;

	if (s->in.nbuckets == 0 || q->to <= s->in.first ||
	    q->from > s->in.last)
		return 1;
	b0 = q->from <= s->in.first ? 0 : (uint32_t)((q->from -
	    s->in.first) / w);
	b1 = (q->to - 1 - s->in.first) / w >= s->in.nbuckets ?
	    s->in.nbuckets - 1 : (uint32_t)((q->to - 1 - s->in.first) / w);
	if (b0 > b1 || range_records(s, b0, b1) > PV_RANGE_MAX)
		return 1;
	for (b = b0; b <= b1 && off == UINT64_MAX; b++)
		off = grmtrace_sum_offset(s->g, b);
	if (off == UINT64_MAX ||
	    (t = pv_topen(path, err, sizeof err)) == NULL)
		return 1;
	/* The definitions mainmon writes before the first record. */
	while ((rc = grmtrace_next(t, &ev)) == 1 &&
	    ev->kind != GRMTRACE_RECORD)
		continue;
	if (rc != 1 || grmtrace_seek_offset(t, off) != 0 ||
	    pv_idx_begin(x, path) != 0) {
		grmtrace_close(t);
		return 1;
	}
	rc = 0;
	for (i = 0; i < s->nrow && rc == 0; i++) {
		grmtrace_sum_row(s->g, s->row[i], &node, &pid, &tid);
		rc = pv_idx_add_row(x, node, pid, tid);
	}
	for (i = 0; i < s->in.nstates && rc == 0; i++)
		rc = pv_idx_add_block(x, grmtrace_sum_state(s->g, i));
	x->until = q->to;
	x->max = 2 * PV_RANGE_MAX;
	if (rc == 0) {		/* -2 out of memory; -1, -4: not here */
		rc = pv_idx_feed(x, t);
		rc = rc == -2 ? -1 : rc != 0 ? 1 : 0;
	}
	if (rc == 0)
		rc = pv_idx_finish(x, t);
	if (rc == 0 && !same_rows(s, x))
		rc = 1;
	grmtrace_close(t);
	if (rc != 0) {
		pv_idx_free(x);
		return rc;
	}
	x->first = s->in.first;	/* times in the answer from the trace's */
	return 0;
}

int
pv_sum_range(const struct pv_sum *s, const char *path, const struct pv_q *q,
	     double progress, struct evbuffer *out)
{
	struct evbuffer *v;
	struct pv_idx x;
	size_t n;
	int rc;

	if ((rc = range_index(s, path, q, &x)) != 0)
		return rc;
	if ((v = evbuffer_new()) == NULL || pv_idx_view(&x, q, v) != 0 ||
	    (n = evbuffer_get_length(v)) < 2) {
		if (v != NULL)
			evbuffer_free(v);
		pv_idx_free(&x);
		return -1;
	}
	/* Its last "}\n" after two more members. */
	evbuffer_remove_buffer(v, out, n - 2);
	evbuffer_add_printf(out, ",\"approximate\":true,\"from_file\":true"
	    ",\"progress\":%.3f}\n", progress);
	evbuffer_free(v);
	pv_idx_free(&x);
	return 0;
}
