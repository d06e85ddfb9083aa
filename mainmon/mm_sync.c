/* SPDX-License-Identifier: MIT */
/* mm_sync.c: fitting a host's clock offset and drift to ping-pong samples
 * (doc/clock-sync.md). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mm_sync.h"
#include "util/clock.h"

int
mm_sync_sample_of(uint64_t t1, uint64_t t2, uint64_t t3, uint64_t t4,
		  struct mm_sync_sample *s)
{
	uint64_t rtt, hold, w;

	if (t4 < t1)
		return -1;
	rtt = t4 - t1;
	hold = t3 - t2;
	if (t3 < t2 || hold > rtt)
		hold = 0;
	w = rtt - hold;
	s->m = t1 + rtt / 2;
	/* The middle of [t3 - t4, t3 - t4 + w]. */
	s->o = (int64_t)(t3 - t4) + (int64_t)(w / 2);
	/* The offset moves by up to 500 ppm of the exchange between the
	 * two ends' events and m, and the host's t2 was converted from
	 * its real-time clock over up to the hold (peer_rx_time); and a
	 * ns of rounding. */
	s->rtt = w + (rtt + hold) / 1000 + 2;
	return 0;
}

int64_t
mm_sync_offset(const struct mm_sync_model *md, uint64_t m)
{
	double dm = (double)(int64_t)(m - md->m0);

	return md->off0 + (int64_t)llround(md->drift * dm);
}

int64_t
mm_sync_drift_ppb(const struct mm_sync_model *md)
{
	return (int64_t)llround(md->drift * 1e9);
}

uint64_t
mm_sync_bound(const struct mm_sync_model *md, uint64_t t)
{
	return clk_bound_ns(md->err, md->allow_ppb, md->lo, md->hi, t);
}

int
mm_sync_publish(struct mm_sync_book *b, const struct mm_sync_model *md,
		uint32_t num, uint64_t from)
{
	struct mm_sync_used *v;
	uint32_t cap;

	if (b->n == MM_SYNC_KEPT) {
		memmove(b->v, b->v + 1, (b->n - 1) * sizeof *b->v);
		b->n--;
	}
	if (b->n == b->cap) {
		cap = b->cap == 0 ? 8 : b->cap * 2;
		if (cap > MM_SYNC_KEPT)
			cap = MM_SYNC_KEPT;
		if ((v = realloc(b->v, cap * sizeof *v)) == NULL)
			return -1;
		b->v = v;
		b->cap = cap;
	}
	/* Ranges follow each other. */
	if (b->n > 0 && from < b->v[b->n - 1].from)
		from = b->v[b->n - 1].from;
	b->v[b->n].md = *md;
	b->v[b->n].from = from;
	b->v[b->n].num = num;
	b->n++;
	return 0;
}

uint64_t
mm_sync_conv(struct mm_sync_book *b, const struct mm_sync_model *fallback,
	     uint64_t h, const struct mm_sync_used **u)
{
	uint64_t t = 0;
	uint32_t i;

	if (b->n == 0) {
		if (u != NULL)
			*u = NULL;
		return mm_sync_to_mm(fallback, h);
	}
	/* Newest first: nearly every record is the newest model's. */
	for (i = b->n; i-- > 0;) {
		t = mm_sync_to_mm(&b->v[i].md, h);
		if (t >= b->v[i].from)
			break;
	}
	if (i == UINT32_MAX) {
		i = 0;
		if (b->n == MM_SYNC_KEPT)
			b->stale++;
	}
	if (u != NULL)
		*u = &b->v[i];
	return t;
}

/* An end of the interval: the x nearest y (rounded toward the inside by
 * `in`, +1 or -1) with x's r equal to r, or x0 if it cannot be shown. */
static int64_t
memo_end(const struct mm_sync_model *md, double y, int in, int64_t x0,
	 uint64_t r)
{
	int64_t e;

	/* A margin of a few ns and a relative one: y is inexact. */
	y += in * (4.0 + fabs(y) * 1e-12);
	if (!(y > -9.0e18 && y < 9.0e18))
		return x0;
	e = (int64_t)y;
	if ((in > 0 && e > x0) || (in < 0 && e < x0))
		return x0;
	return mm_sync_memo_r(md, e) == r ? e : x0;
}

void
mm_sync_memo_learn(struct mm_sync_memo *m, int64_t x)
{
	const struct mm_sync_model *md = m->md;
	double a, c, k = md->k;
	uint64_t r;

	r = mm_sync_memo_r(md, x);
	m->r = r;
	if (k == 0.0) {
		/* Integer arithmetic: r is 0 everywhere. */
		m->lo = INT64_MIN;
		m->hi = INT64_MAX;
		return;
	}
	/* r stays while x k stays within half of it. */
	a = ((double)(int64_t)r - 0.5) / k;
	c = ((double)(int64_t)r + 0.5) / k;
	m->lo = memo_end(md, a < c ? a : c, 1, x, r);
	m->hi = memo_end(md, a < c ? c : a, -1, x, r);
}

uint32_t
mm_sync_memo_steps(struct mm_sync_memo *m, struct mm_sync_book *b,
		   const struct mm_sync_model *fallback, uint64_t first,
		   uint64_t last, uint64_t *upto, uint64_t *by, uint32_t max)
{
	const struct mm_sync_used *u;
	uint64_t h = first, t, s;
	int64_t x;
	uint32_t k = 0, tries;

	if (last < first || max == 0)
		return 0;
	/* The memo's intervals stop a few ns short of where r changes
	 * (mm_sync_memo_learn): those in between, of the same shift, join
	 * the step before. */
	for (tries = 0; tries < 16 * max; tries++) {
		t = mm_sync_conv_memo(m, b, fallback, h, &u);
		if (u != m->u || (u != NULL && t < u->from))
			return 0;
		s = t - h;
		if (h == first || s != by[k]) {
			if (h != first && (++k == max ||
			    (int64_t)(s - by[k - 1]) < -1))
				return 0;
			by[k] = s;
		}
		/* The memo's interval now holds h's x: h to its end share
		 * a shift. */
		x = (int64_t)(h - m->md->m0 - (uint64_t)m->md->off0);
		upto[k] = h + ((uint64_t)m->hi - (uint64_t)x);
		if (upto[k] < h || upto[k] >= last) {
			upto[k] = UINT64_MAX;
			return k + 1;
		}
		h = upto[k] + 1;
	}
	return 0;
}

const struct mm_sync_used *
mm_sync_current(const struct mm_sync_book *b)
{
	return b->n > 0 ? &b->v[b->n - 1] : NULL;
}

void
mm_sync_book_free(struct mm_sync_book *b)
{
	free(b->v);
	memset(b, 0, sizeof *b);
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* A line a + b x (ns, x ns from the model's m0), relative to the model's
 * offset off0. */
struct line {
	double	a, b;
};

/* The part of convex polygon in[0..n) where s (a + b x - lim) <= 0, into
 * out; its number of vertices. */
static int
clip(const struct line *in, int n, double x, double lim, double s,
     struct line *out)
{
	int i, k = 0;

	for (i = 0; i < n; i++) {
		const struct line *p = &in[i], *q = &in[(i + 1) % n];
		double fp = s * (p->a + p->b * x - lim);
		double fq = s * (q->a + q->b * x - lim);

		if (fp <= 0)
			out[k++] = *p;
		if ((fp < 0 && fq > 0) || (fp > 0 && fq < 0)) {
			double u = fp / (fp - fq);

			out[k].a = p->a + u * (q->a - p->a);
			out[k].b = p->b + u * (q->b - p->b);
			k++;
		}
	}
	return k;
}

/*
 * The bound of model md from every sample of the window: the true offset
 * at a sample lies within rtt / 2 of its (Cristian), so the true clock,
 * a line of drift at most MM_SYNC_DRIFT_MAX, is one of the lines that
 * pass through every sample's interval: a convex polygon of (offset,
 * drift).  md is at most err from any of them over [lo, hi] (the window's
 * span; the largest difference is at an end).  0, or -1 if no line
 * passes (the true clock was not a line over the window: the caller's
 * bound stands).
 */
static int
polygon_bound(const struct mm_sync *cs, struct mm_sync_model *md)
{
	struct line p[2][4 + 2 * MM_SYNC_WINDOW], *in = p[0], *out = p[1], *t;
	uint64_t lo = 0, hi = 0;
	double e = 0, xl, xh, A = 1e12, B = MM_SYNC_DRIFT_MAX;
	double umin = 0, umax = 0, vmin = 0, vmax = 0, uc, vc;
	struct line c;
	uint32_t i;
	int n = 4, j;

	in[0] = (struct line){ -A, -B };
	in[1] = (struct line){ A, -B };
	in[2] = (struct line){ A, B };
	in[3] = (struct line){ -A, B };
	for (i = 0; i < cs->n && n > 0; i++) {
		const struct mm_sync_sample *s = &cs->s[i];
		/* A ns more: the host's read is not at the midpoint exactly,
		 * and doubles round. */
		double x = (double)(int64_t)(s->m - md->m0);
		double y = (double)(s->o - md->off0);
		double r = (double)s->rtt / 2 + 1.0;

		n = clip(in, n, x, y + r, 1.0, out);
		t = in, in = out, out = t;
		n = clip(in, n, x, y - r, -1.0, out);
		t = in, in = out, out = t;
		if (i == 0 || s->m < lo)
			lo = s->m;
		if (i == 0 || s->m > hi)
			hi = s->m;
	}
	if (n == 0)
		return -1;
	xl = (double)(int64_t)(lo - md->m0);
	xh = (double)(int64_t)(hi - md->m0);
	/* A line is known by its values at lo and at hi, u and v: the line
	 * at the middle of both ranges is the one the farthest is nearest
	 * to (half the larger range; drift 0 with one sample). */
	for (j = 0; j < n; j++) {
		double u = in[j].a + in[j].b * xl, v = in[j].a + in[j].b * xh;

		if (j == 0 || u < umin)
			umin = u;
		if (j == 0 || u > umax)
			umax = u;
		if (j == 0 || v < vmin)
			vmin = v;
		if (j == 0 || v > vmax)
			vmax = v;
	}
	uc = (umin + umax) / 2;
	vc = (vmin + vmax) / 2;
	c.b = xh > xl ? (vc - uc) / (xh - xl) : 0.0;
	c.a = uc - c.b * xl;
	for (j = 0; j < n; j++) {
		double db = in[j].b - c.b, da = in[j].a - c.a;
		double dl = fabs(da + db * xl), dh = fabs(da + db * xh);

		if (dl > e)
			e = dl;
		if (dh > e)
			e = dh;
	}
	md->off0 += (int64_t)llround(c.a);
	md->drift = c.b;
	/* Rounded up, and a ns for the rounding of the conversion and of
	 * off0. */
	md->err = (uint64_t)ceil(e) + 2;
	md->lo = lo;
	md->hi = hi;
	return 0;
}

/* Fits the model to the samples whose round trip is near the best; 0, or
 * -1 if no line passes every sample (the least-squares line and its
 * bound stand). */
static int
refit(struct mm_sync *cs)
{
	struct mm_sync_model md;
	const struct mm_sync_sample *s, *best = NULL;
	uint64_t lim, mmin = 0, mmax = 0, rtts[MM_SYNC_WINDOW], med;
	double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
	uint32_t i, used = 0;
	int r;

	for (i = 0; i < cs->n; i++)
		if (best == NULL || cs->s[i].rtt < best->rtt)
			best = &cs->s[i];
	if (best == NULL)
		return 0;
	/* Never fewer than half of them, however jittery the link. */
	for (i = 0; i < cs->n; i++)
		rtts[i] = cs->s[i].rtt;
	qsort(rtts, cs->n, sizeof *rtts, cmp_u64);
	med = rtts[(cs->n - 1) / 2];
	lim = best->rtt * 2 + MM_SYNC_RTT_SLACK;
	if (lim < med)
		lim = med;
	for (i = 0; i < cs->n; i++) {
		s = &cs->s[i];
		if (s->rtt > lim)
			continue;
		if (used == 0 || s->m < mmin)
			mmin = s->m;
		if (used == 0 || s->m > mmax)
			mmax = s->m;
		used++;
	}
	memset(&md, 0, sizeof md);
	md.best_rtt = best->rtt;
	md.used = used;
	md.m0 = best->m;
	md.off0 = best->o;
	if (used >= 2 && mmax - mmin >= MM_SYNC_DRIFT_SPAN) {
		/* Weighted least squares, x relative to the first sample and
		 * y relative to the best one so doubles keep every ns; a
		 * sample counts in inverse proportion to its uncertainty. */
		for (i = 0; i < cs->n; i++) {
			double w, x, y;

			s = &cs->s[i];
			if (s->rtt > lim)
				continue;
			w = 1.0 / ((double)s->rtt + 1000.0);
			w *= w;
			x = (double)(s->m - mmin);
			y = (double)(s->o - best->o);
			sw += w;
			sx += w * x;
			sy += w * y;
			sxx += w * x * x;
			sxy += w * x * y;
		}
		double xm = sx / sw, ym = sy / sw, den = sxx - sx * xm;

		if (den > 0) {
			md.drift = (sxy - sx * ym) / den;
			if (md.drift > MM_SYNC_DRIFT_MAX)
				md.drift = MM_SYNC_DRIFT_MAX;
			if (md.drift < -MM_SYNC_DRIFT_MAX)
				md.drift = -MM_SYNC_DRIFT_MAX;
			md.m0 = mmin + (uint64_t)llround(xm);
			md.off0 = best->o + (int64_t)llround(ym);
		}
	}
	md.k = md.drift / (1.0 + md.drift);
	md.lo = mmin;
	md.hi = mmax;
	/* The host's offset at a sample lies within rtt / 2 of the
	 * sample's: the model is that far off at most, plus its residual. */
	for (i = 0; i < cs->n; i++) {
		int64_t res;
		uint64_t e;

		s = &cs->s[i];
		if (s->rtt > lim)
			continue;
		res = s->o - mm_sync_offset(&md, s->m);
		e = (uint64_t)(res < 0 ? -res : res) + s->rtt / 2;
		if (e > md.err)
			md.err = e;
	}
	r = polygon_bound(cs, &md);
	/* Outside [lo, hi] nothing says the host kept its rate: the model
	 * and the true clock part at up to the largest drift believed plus
	 * the model's. */
	md.allow_ppb = (uint64_t)ceil((MM_SYNC_DRIFT_MAX + fabs(md.drift)) *
	    1e9);
	md.k = md.drift / (1.0 + md.drift);
	cs->model = md;
	cs->valid = 1;
	return r;
}

uint64_t
mm_sync_err_last(const struct mm_sync *cs, const struct mm_sync_model *md)
{
	const struct mm_sync_sample *s;
	uint64_t d;
	int64_t res;

	if (cs->n == 0)
		return md->err;
	s = &cs->s[(cs->next + MM_SYNC_WINDOW - 1) % MM_SYNC_WINDOW];
	res = s->o - mm_sync_offset(md, s->m);
	d = (uint64_t)(res < 0 ? -res : res) + s->rtt / 2 + 2;
	return d > md->err ? d : md->err;
}

enum mm_sync_change
mm_sync_add(struct mm_sync *cs, const struct mm_sync_sample *s)
{
	struct mm_sync_model old = cs->model;
	enum mm_sync_change what = MM_SYNC_SAME;
	const struct mm_sync_sample *last;
	int64_t d;
	uint64_t ad;
	int had = cs->valid;

	last = cs->n > 0 ? &cs->s[(cs->next + MM_SYNC_WINDOW - 1) %
	    MM_SYNC_WINDOW] : NULL;
	if (last != NULL) {
		cs->step_lo = last->m + (uint64_t)last->o;
		cs->step_hi = s->m + (uint64_t)s->o;
	}
	cs->s[cs->next] = *s;
	cs->next = (cs->next + 1) % MM_SYNC_WINDOW;
	if (cs->n < MM_SYNC_WINDOW)
		cs->n++;
	if (refit(cs) == 0 || !had || cs->n < 2)
		return MM_SYNC_SAME;
	/* No line passes: the clock bent somewhere in the window.  Beyond
	 * what any drift believed allows from the model, it stepped. */
	d = s->o - mm_sync_offset(&old, s->m);
	ad = (uint64_t)(d < 0 ? -d : d);
	what = MM_SYNC_RATE;
	if (ad > mm_sync_bound(&old, s->m) + s->rtt / 2) {
		what = MM_SYNC_STEP;
		cs->steps++;
		cs->step = d;
	} else
		cs->rates++;
	cs->s[0] = *s;
	cs->n = 1;
	cs->next = 1;
	(void)refit(cs);
	/* One sample tells no drift: the model's before stands (its bound
	 * allows for any). */
	cs->model.drift = old.drift;
	cs->model.k = old.drift / (1.0 + old.drift);
	cs->model.allow_ppb = (uint64_t)ceil((MM_SYNC_DRIFT_MAX +
	    fabs(old.drift)) * 1e9);
	return what;
}
