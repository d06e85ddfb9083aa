/* SPDX-License-Identifier: MIT */
/* pv_view.c: prove serve's answers as JSON: the trace's rows and names,
 * a view of a time range at a width in pixels (level of detail: what
 * fits the pixels, from the index's mipmaps), and the counts. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "pv_idx.h"

/* Spans looked at per depth and row, marks columns, arrows and bundles
 * per view, at most: a view that would need more says "truncated". */
#define PV_SPANS_PER_PX	4
#define PV_ARROWS_PER_PX	16
#define PV_BUNDLES_MAX	(1u << 14)
#define PV_WHEN_MAX	10000

void
pv_json_str(struct evbuffer *out, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char c;
	char e[6] = { '\\', 'u', '0', '0', 0, 0 };
	size_t i, run = 0;

	evbuffer_add(out, "\"", 1);
	for (i = 0; i < n; i++) {
		c = (unsigned char)s[i];
		if (c >= 0x20 && c < 0x7f && strchr("\"\\<>&", c) == NULL)
			continue;
		evbuffer_add(out, s + run, i - run);
		run = i + 1;
		/* Bytes that are not printable ASCII, quotes and markup as
		 * \u00XX: every byte survives, whatever its encoding, and
		 * no answer holds a '<' (even opened as HTML by mistake). */
		e[4] = hex[c >> 4];
		e[5] = hex[c & 15];
		evbuffer_add(out, e, sizeof e);
	}
	evbuffer_add(out, s + run, n - run);
	evbuffer_add(out, "\"", 1);
}

const char *
pv_host_name(const struct pv_host *h, size_t n, uint32_t node)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (h[i].node == node)
			return h[i].name;
	return "";
}

void
pv_hosts_json(const struct pv_host *h, size_t n, struct evbuffer *out)
{
	size_t i;

	evbuffer_add_printf(out, ",\"hosts\":[");
	for (i = 0; i < n; i++) {
		evbuffer_add_printf(out, "%s{\"node\":%" PRIu32 ",\"name\":",
		    i ? "," : "", h[i].node);
		pv_json_str(out, h[i].name, strlen(h[i].name));
		evbuffer_add(out, "}", 1);
	}
	evbuffer_add(out, "]", 1);
}

static void
row_meta(const struct pv_idx *x, const struct pv_row *r,
	 struct evbuffer *out)
{
	const struct pv_proc *p = pv_proc(&x->msgs, r->node, r->pid);
	const char *h = pv_host_name(x->host, x->nhost, r->node);

	evbuffer_add_printf(out, "{\"node\":%" PRIu32 ",\"host\":", r->node);
	pv_json_str(out, h, strlen(h));
	evbuffer_add_printf(out, ",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32
	    ",\"depth\":%zu,\"marks\":%zu", r->pid, r->tid, r->nd, r->npt);
	if (p != NULL && p->has_rank) {
		evbuffer_add_printf(out, ",\"rank\":%" PRId64 ",\"pname\":",
		    p->rank);
		pv_json_str(out, p->name, p->name_len);
	}
	if (p != NULL && p->prog != NULL) {
		evbuffer_add_printf(out, ",\"prog\":");
		pv_json_str(out, p->prog, p->prog_len);
	}
	evbuffer_add(out, "}", 1);
}

int
pv_idx_meta(const struct pv_idx *x, struct evbuffer *out)
{
	const struct pv_evc *c;
	const struct pv_state *s;
	uint32_t it = 0;
	size_t i;

	evbuffer_add_printf(out, "{\"file\":");
	pv_json_str(out, x->path, strlen(x->path));
	evbuffer_add_printf(out, ",\"first\":\"%" PRIu64 "\",\"last\":\"%"
	    PRIu64 "\",\"records\":%" PRIu64 ",\"ended\":%s,\"losses\":%" PRIu64
	    ",\"messages\":%zu,\"index_bytes\":%zu,\"build_s\":%.3f"
	    ",\"bee_file\":%s",
	    x->first, x->tend, x->records, x->ended ? "true" : "false",
	    x->losses, x->narrow, x->bytes, x->build_s,
	    x->bee ? "false" : "true");
	pv_hosts_json(x->host, x->nhost, out);
	evbuffer_add_printf(out, ",\"rows\":[");
	for (i = 0; i < x->nrow; i++) {
		if (i > 0)
			evbuffer_add(out, ",", 1);
		row_meta(x, &x->row[i], out);
	}
	evbuffer_add_printf(out, "],\"states\":[");
	for (i = 0; i < x->nstates; i++) {
		s = &x->states[i];
		if (i > 0)
			evbuffer_add(out, ",", 1);
		if (s->name != NULL)
			pv_json_str(out, s->name, s->len);
		else
			evbuffer_add_printf(out, "\"block %" PRId64 "\"",
			    s->id);
	}
	evbuffer_add_printf(out, "],\"eids\":{");
	for (i = 0; (c = pv_map_next(&x->evc, &it)) != NULL; i++) {
		evbuffer_add_printf(out, "%s\"%" PRId32 "\":{\"count\":%"
		    PRIu64 ",\"name\":", i ? "," : "", c->eid, c->count);
		pv_json_str(out, c->name, strlen(c->name));
		evbuffer_add(out, "}", 1);
	}
	evbuffer_add_printf(out, "}}\n");
	return 0;
}

/* The column of t (pixels from q->from, may be negative or past the
 * width). */
static double
col(const struct pv_q *q, double px, uint64_t t)
{
	return t >= q->from ? (double)(t - q->from) / px :
	    -((double)(q->from - t) / px);
}

static uint64_t
span_at(const void *d, size_t i)
{
	return ((const struct pv_depth *)d)->s[i].t0;
}

/* The first span of d (by start) starting at or after t. */
static size_t
span_lb(const struct pv_depth *d, uint64_t t)
{
	return pv_lb(d, 0, d->n, t, span_at);
}

struct lvl_arg {
	const struct pv_depth	*d;
	const struct pv_lvl	*l;
};

static uint64_t
lvl_at(const void *arg, size_t i)
{
	const struct lvl_arg *a = arg;

	return a->d->s[a->l->ix[i]].t0;
}

static size_t
lvl_lb(const struct pv_depth *d, const struct pv_lvl *l, uint64_t t)
{
	struct lvl_arg a = { d, l };

	return pv_lb(&a, 0, l->n, t, lvl_at);
}

/* A JSON array of integers, made without printf: a whole run's view
 * prints some 100,000 of them, and printf took a third of its CPU. */
struct tup {
	char	b[256];
	size_t	n;
};

static void
tup_open(struct tup *t, int comma)
{
	t->n = 0;
	if (comma)
		t->b[t->n++] = ',';
	t->b[t->n++] = '[';
}

static void
tup_u(struct tup *t, uint64_t v)
{
	char d[20];
	int k = 0;

	if (t->b[t->n - 1] != '[' && t->b[t->n - 1] != '-')
		t->b[t->n++] = ',';
	do
		d[k++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	while (k > 0)
		t->b[t->n++] = d[--k];
}

static void
tup_i(struct tup *t, int64_t v)
{
	if (v < 0) {
		if (t->b[t->n - 1] != '[')
			t->b[t->n++] = ',';
		t->b[t->n++] = '-';
		tup_u(t, (uint64_t)0 - (uint64_t)v);
	} else
		tup_u(t, (uint64_t)v);
}

static void
tup_close(struct tup *t, struct evbuffer *out)
{
	t->b[t->n++] = ']';
	evbuffer_add(out, t->b, t->n);
}

/* Per pixel column: the state covering most of it, and by how much. */
struct pix {
	double		cov;
	uint32_t	name;
};

static void
paint(struct pix *p, unsigned width, double x0, double x1, uint32_t name)
{
	double a, b, c;
	long i, i0, i1;

	if (x1 <= 0 || x0 >= width)
		return;
	x0 = x0 < 0 ? 0 : x0;
	x1 = x1 > width ? width : x1;
	i0 = (long)floor(x0);
	i1 = (long)ceil(x1) - 1;
	if (i1 < i0)
		i1 = i0;
	for (i = i0; i <= i1 && i < (long)width; i++) {
		a = x0 > (double)i ? x0 : (double)i;
		b = x1 < (double)(i + 1) ? x1 : (double)(i + 1);
		c = b > a ? b - a : 1e-9;	/* a point in time shows */
		if (c > p[i].cov) {
			p[i].cov = c;
			p[i].name = name;
		}
	}
}

/* One depth of a row: runs of pixel columns of one dominant state, with
 * the number of spans starting in them, as [x0, x1, state, n]. */
static int
depth_view(const struct pv_depth *d, const struct pv_q *q, double px,
	   struct pix *p, struct evbuffer *out, int *trunc)
{
	const struct pv_lvl *l = NULL;
	const struct pv_span *s;
	size_t i, k, n, lim = (size_t)q->width * PV_SPANS_PER_PX + 16;
	unsigned w = q->width, c, c0;
	uint64_t t0, t1;
	double rate;
	struct tup tp;
	size_t b0, b1;
	int first = 1;

	for (c = 0; c < w; c++)
		p[c] = (struct pix){ 0, 0 };
	for (k = d->nlv; k > 0; k--)
		if ((double)(UINT64_C(1) << d->lv[k - 1].shift) <= px / 2) {
			l = &d->lv[k - 1];
			break;
		}
	/* The span open at from, if any, then those starting in range. */
	i = span_lb(d, q->from);
	if (i > 0 && d->s[i - 1].t1 > q->from) {
		s = &d->s[i - 1];
		paint(p, w, col(q, px, s->t0), col(q, px, s->t1), s->name);
	}
	k = l == NULL ? i : lvl_lb(d, l, q->from);
	for (n = 0; k < (l == NULL ? d->n : l->n); k++, n++) {
		s = &d->s[l == NULL ? k : l->ix[k]];
		if (s->t0 >= q->to)
			break;
		if (n == lim) {
			*trunc = 1;
			break;
		}
		paint(p, w, col(q, px, s->t0), col(q, px, s->t1), s->name);
	}
	evbuffer_add(out, "[", 1);
	b1 = i;
	rate = pv_density(i, span_lb(d, q->to), q->from, q->to);
	t1 = q->from;
	for (c = 0; c < w; ) {
		if (p[c].cov == 0) {
			c++;
			continue;
		}
		c0 = c;
		while (c < w && p[c].cov > 0 && p[c].name == p[c0].name)
			c++;
		/* Spans starting in the run: its edges found from the last
		 * run's (in order, so each search starts where one ended). */
		t0 = q->from + (uint64_t)((double)c0 * px);
		b0 = pv_seek(d, b1, d->n, (double)b1 + rate * (double)(t0 - t1),
		    t0, span_at);
		t1 = q->from + (uint64_t)((double)c * px);
		b1 = pv_seek(d, b0, d->n, (double)b0 + rate * (double)(t1 - t0),
		    t1, span_at);
		n = b1 - b0;
		tup_open(&tp, !first);
		tup_u(&tp, c0);
		tup_u(&tp, c);
		tup_u(&tp, p[c0].name);
		tup_u(&tp, n);
		tup_close(&tp, out);
		first = 0;
	}
	evbuffer_add(out, "]", 1);
	return 0;
}

static uint64_t
pt_at(const void *r, size_t i)
{
	return ((const struct pv_row *)r)->pt[i].ts;
}

static size_t
pt_lb(const struct pv_row *r, uint64_t t, size_t lo)
{
	return pv_lb(r, lo, r->npt, t, pt_at);
}

/* Marks: per pixel column that has some, [x, count, eid, ts, kind] of
 * its first. */
static void
marks_view(const struct pv_row *r, const struct pv_q *q, double px,
	   uint64_t first_ts, struct evbuffer *out)
{
	size_t i = pt_lb(r, q->from, 0), j;
	uint64_t end;
	unsigned c;
	int first = 1;
	double rate = pv_density(i, pt_lb(r, q->to, i), q->from, q->to);
	struct tup tp;

	evbuffer_add(out, "[", 1);
	for (; i < r->npt && r->pt[i].ts < q->to; i = j) {
		c = (unsigned)col(q, px, r->pt[i].ts);
		if (c >= q->width)
			c = q->width - 1;
		end = q->from + (uint64_t)ceil((double)(c + 1) * px);
		if (end <= r->pt[i].ts)
			end = r->pt[i].ts + 1;
		j = pv_seek(r, i, r->npt, (double)i + rate *
		    (double)(end - r->pt[i].ts), end, pt_at);
		tup_open(&tp, !first);
		tup_u(&tp, c);
		tup_u(&tp, j - i);
		tup_i(&tp, r->pt[i].eid);
		tup_u(&tp, r->pt[i].ts - first_ts);
		tup_u(&tp, r->pt[i].kind);
		tup_close(&tp, out);
		first = 0;
	}
	evbuffer_add(out, "]", 1);
}

/* Arrows whose time span meets the view and which touch its rows,
 * bundled by (rows, columns of both ends): [rs, xs, rr, xr, n, ts, tr]
 * of the first of each bundle. */
struct bundle {
	uint64_t	key[2];
	uint64_t	n;
	size_t		first;
};

static uint64_t
mix(uint64_t a, uint64_t b)
{
	uint64_t h = a * UINT64_C(0x9e3779b97f4a7c15) ^ b;

	h ^= h >> 31;
	h *= UINT64_C(0xbf58476d1ce4e5b9);
	return h ^ h >> 29;
}

static uint64_t
arrow_ts(const void *a, size_t i)
{
	return ((const struct pv_arrow *)a)[i].ts;
}

/* At most PV_ARROWS_PER_PX messages per pixel of width are looked at:
 * with more in the range, one in every *stride (sent in order), each
 * counting for stride in its bundle's number: the time of a view stays
 * bounded whatever the number of messages. */
int
pv_idx_arrows(const struct pv_idx *x, const struct pv_q *q, int all,
	      struct pv_bundle **bp, size_t *nbp, size_t *stride, int *trunc)
{
	const size_t cap = PV_BUNDLES_MAX * 2;
	const size_t visit = all ? SIZE_MAX : (size_t)q->width *
	    PV_ARROWS_PER_PX;
	const double px = (double)(q->to - q->from) / q->width;
	uint64_t lo = q->from > x->maxlat ? q->from - x->maxlat : 0;
	uint64_t hi = q->to > UINT64_MAX - x->maxlat ? UINT64_MAX :
	    q->to + x->maxlat;
	const struct pv_arrow *a;
	struct bundle *b, *e;
	struct pv_bundle *v;
	size_t i, h, nb = 0, l, r;
	long xs, xr;
	uint64_t k0, k1;

	if ((b = calloc(cap, sizeof *b)) == NULL)
		return -1;
	l = pv_lb(x->arrow, 0, x->narrow, lo, arrow_ts);
	r = pv_lb(x->arrow, l, x->narrow, hi, arrow_ts);
	*stride = r - l > visit ? (r - l + visit - 1) / visit : 1;
	for (i = l; i < r; i += *stride) {
		a = &x->arrow[i];
		if ((a->ts < q->from && a->tr < q->from) ||
		    (a->ts >= q->to && a->tr >= q->to))
			continue;
		if ((a->rs < q->r0 || a->rs >= q->r1) &&
		    (a->rr < q->r0 || a->rr >= q->r1))
			continue;
		if (nb >= PV_BUNDLES_MAX) {
			*trunc = 1;
			break;
		}
		xs = lround(fmax(-1, fmin(q->width + 1, col(q, px, a->ts))));
		xr = lround(fmax(-1, fmin(q->width + 1, col(q, px, a->tr))));
		k0 = (uint64_t)a->rs << 32 | (uint32_t)(xs + 1);
		k1 = (uint64_t)a->rr << 32 | (uint32_t)(xr + 1);
		for (h = mix(k0, k1) & (cap - 1); b[h].n > 0 &&
		    (b[h].key[0] != k0 || b[h].key[1] != k1);
		    h = (h + 1) & (cap - 1))
			continue;
		b[h].n += *stride;
		if (b[h].n == *stride) {
			b[h].key[0] = k0;
			b[h].key[1] = k1;
			b[h].first = i;
			nb++;
		}
	}
	if ((v = calloc(nb + 1, sizeof *v)) == NULL) {
		free(b);
		return -1;
	}
	*bp = v;
	*nbp = nb;
	for (e = b; e < b + cap; e++) {
		if (e->n == 0)
			continue;
		a = &x->arrow[e->first];
		*v++ = (struct pv_bundle){ a->rs, a->rr,
		    (long)(e->key[0] & 0xffffffff) - 1,
		    (long)(e->key[1] & 0xffffffff) - 1, e->n, e->first };
	}
	free(b);
	return 0;
}

static int
arrows_view(const struct pv_idx *x, const struct pv_q *q,
	    struct evbuffer *out, int *trunc, size_t *stride)
{
	const struct pv_arrow *a;
	struct pv_bundle *b;
	struct tup tp;
	size_t i, n;

	if (pv_idx_arrows(x, q, 0, &b, &n, stride, trunc) != 0)
		return -1;
	evbuffer_add(out, "[", 1);
	for (i = 0; i < n; i++) {
		a = &x->arrow[b[i].first];
		tup_open(&tp, i > 0);
		tup_u(&tp, b[i].rs);
		tup_i(&tp, b[i].xs);
		tup_u(&tp, b[i].rr);
		tup_i(&tp, b[i].xr);
		tup_u(&tp, b[i].n);
		tup_u(&tp, a->ts - x->first);
		tup_u(&tp, a->tr - x->first);
		tup_u(&tp, (uint64_t)pv_arrow_unsure(a));
		tup_u(&tp, a->bound);
		tup_close(&tp, out);
	}
	evbuffer_add(out, "]", 1);
	free(b);
	return 0;
}

/* The row of (node, pid, tid), or -1. */
static long
row_of(const struct pv_idx *x, uint32_t node, uint32_t pid, uint32_t tid)
{
	const size_t *ix = pv_map_find(&x->rows, (uint64_t)node << 32 | pid,
	    tid);

	return ix == NULL ? -1 : (long)(*ix - 1);
}

/* Phases, losses and process starts and ends in the range. */
static void
whens_view(const struct pv_idx *x, const struct pv_q *q, double px,
	   struct evbuffer *out, int *trunc)
{
	const struct pv_when *w;
	uint64_t t;
	size_t i, n;

	evbuffer_add_printf(out, ",\"phases\":[");
	for (i = n = 0; i < x->nphase && x->phase[i].t0 < q->to; i++) {
		w = &x->phase[i];
		if (w->t1 < q->from)
			continue;
		if (n == PV_WHEN_MAX) {
			*trunc = 1;
			break;
		}
		evbuffer_add_printf(out, "%s[%" PRIu32 ",%.3f,%.3f]",
		    n++ ? "," : "", w->node,
		    fmax(-1, col(q, px, w->t0)),
		    fmin(q->width + 1, col(q, px, w->t1)));
	}
	evbuffer_add_printf(out, "],\"losses\":[");
	for (i = n = 0; i < x->nloss && x->loss[i].t0 < q->to; i++) {
		w = &x->loss[i];
		if (w->t0 < q->from)
			continue;
		if (n == PV_WHEN_MAX) {
			*trunc = 1;
			break;
		}
		evbuffer_add_printf(out, "%s[%ld,%" PRIu32 ",%" PRIu32
		    ",%.3f,%" PRId64 ",%" PRIu64 "]", n++ ? "," : "",
		    row_of(x, w->node, w->pid, w->tid), w->node, w->pid,
		    col(q, px, w->t0), w->v, w->t0 - x->first);
	}
	evbuffer_add_printf(out, "],\"procs\":[");
	for (i = n = 0; i < x->nproc && x->proc[i].t0 < q->to; i++) {
		/* A start before the first record is drawn at it. */
		w = &x->proc[i];
		t = w->t0 > x->first ? w->t0 : x->first;
		if (t < q->from)
			continue;
		if (n == PV_WHEN_MAX) {
			*trunc = 1;
			break;
		}
		evbuffer_add_printf(out, "%s[%" PRIu32 ",%" PRIu32 ",%.3f,%"
		    PRId32 ",%" PRId64 ",%" PRIu64 "]", n++ ? "," : "",
		    w->node, w->pid, col(q, px, t), w->how, w->v,
		    t - x->first);
	}
	evbuffer_add(out, "]", 1);
}

int
pv_idx_view(const struct pv_idx *x, const struct pv_q *q,
	    struct evbuffer *out)
{
	double px = (double)(q->to - q->from) / q->width;
	const struct pv_row *r;
	struct pix *p;
	size_t i, j, stride;
	int trunc = 0;

	if ((p = calloc(q->width, sizeof *p)) == NULL)
		return -1;
	evbuffer_add_printf(out, "{\"from\":%" PRIu64 ",\"to\":%" PRIu64
	    ",\"width\":%u,\"ns_per_px\":%.6g,\"r0\":%zu,\"rows\":[",
	    q->from, q->to, q->width, px, q->r0);
	for (i = q->r0; i < q->r1; i++) {
		r = &x->row[i];
		evbuffer_add_printf(out, "%s{\"d\":[", i > q->r0 ? "," : "");
		for (j = 0; j < r->nd; j++) {
			if (j > 0)
				evbuffer_add(out, ",", 1);
			depth_view(&r->d[j], q, px, p, out, &trunc);
		}
		evbuffer_add_printf(out, "],\"m\":");
		marks_view(r, q, px, x->first, out);
		evbuffer_add(out, "}", 1);
	}
	free(p);
	evbuffer_add_printf(out, "],\"arrows\":");
	if (arrows_view(x, q, out, &trunc, &stride) != 0)
		return -1;
	whens_view(x, q, px, out, &trunc);
	evbuffer_add_printf(out, ",\"arrows_stride\":%zu,\"truncated\":%s}\n",
	    stride, trunc ? "true" : "false");
	return 0;
}
