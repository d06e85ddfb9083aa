/* SPDX-License-Identifier: MIT */
/* mm_sync.h: a host's clock as the Main Monitor models it, from ping-pong
 * exchanges: an offset and a drift (a line, refitted as samples come),
 * with an error bound.  doc/clock-sync.md explains the method. */
#ifndef GRM_CLKSYNC_H
#define GRM_CLKSYNC_H

#include <stdint.h>

/* One exchange: the MM sent at t1 (its clock), the ping arrived at the
 * host at t2 (the host's clock), the host answered at t3, the answer came
 * back at t4.  Its offset is within rtt / 2 of o, at the midpoint m. */
struct mm_sync_sample {
	uint64_t	m;		/* MM ns: (t1 + t4) / 2 */
	int64_t		o;		/* host - MM, ns, at m */
	uint64_t	rtt;		/* t4 - t1 - (t3 - t2), and a margin */
};

/* host clock - MM clock = off0 + drift * (MM time - m0), within err over
 * the span [lo, hi] of the samples fitted, and within err + allow_ppb
 * per 10^9 of the distance outside it (mm_sync_bound): the largest drift
 * believed and the model's, since the host's rate may have changed since
 * (or before) its samples. */
struct mm_sync_model {
	uint64_t	m0;		/* the (weighted) centre of the samples */
	int64_t		off0;
	double		drift;		/* dimensionless: 1e-6 is 1 ppm */
	double		k;		/* drift / (1 + drift), for mm_sync_to_mm */
	uint64_t	err;		/* ns: the bound on the model's error */
	uint64_t	best_rtt;	/* smallest round trip of the samples */
	uint32_t	used;		/* samples the fit used */
	uint64_t	lo, hi;		/* MM ns: first and last of them */
	uint64_t	allow_ppb;	/* how fast the bound grows outside */
};

#define MM_SYNC_WINDOW	128	/* samples kept (one per exchange burst) */
/* Samples whose round trip exceeds twice the window's best (plus this
 * much) and the median are queueing delay, not the link: left out of the
 * fit. */
#define MM_SYNC_RTT_SLACK	20000u
/* Below this span of samples the drift is not estimated (taken as 0). */
#define MM_SYNC_DRIFT_SPAN	1000000000u
/* Until then, a burst this often (mm_peer.c). */
#define MM_SYNC_START_NS	100000000u
/* The largest drift of a host's clock against mainmon's we accept: Linux
 * refuses a frequency correction beyond 500 ppm (adjtimex, MAXFREQ), and a
 * clock further off is broken.  A fitted drift beyond it is not believed
 * (capped); a model that knows no drift allows for this much. */
#define MM_SYNC_DRIFT_MAX	500e-6

struct mm_sync {
	struct mm_sync_sample	s[MM_SYNC_WINDOW];
	uint32_t		n;	/* samples held */
	uint32_t		next;	/* where the next one goes */
	struct mm_sync_model	model;
	int			valid;	/* a model exists */
	/* Changes found (mm_sync_add), and the latest step's size (new
	 * offset - the old model's, ns) and where it lies on the host's
	 * clock: after step_lo (the last sample before), before step_hi. */
	uint32_t		rates, steps;
	int64_t			step;
	uint64_t		step_lo, step_hi;
};

/* What a sample told of the host's clock (mm_sync_add). */
enum mm_sync_change {
	MM_SYNC_SAME,		/* one line still passes every sample */
	MM_SYNC_RATE,		/* none does: its rate changed */
	MM_SYNC_STEP		/* the sample lies beyond what the largest
				 * drift allows from the model: the clock
				 * stopped (a paused machine) or jumped */
};

/*
 * Adds one sample (usually the best of a burst) and refits the model.
 * If no line passes every sample of the window (MM_SYNC_RATE or
 * MM_SYNC_STEP), the window starts again from this sample, keeping the
 * model's drift: a bent clock is refitted, not smeared.
 */
enum mm_sync_change mm_sync_add(struct mm_sync *cs,
				const struct mm_sync_sample *s);

/*
 * md's bound, raised to cover cs's newest sample without assuming the
 * host's clock is a line: the model's distance from it and its
 * half-width.  The records a model is published for lie before that
 * sample (mm_peer.c); a change of rate between them and it that the
 * sample is too wide to show is within that much of the model (the
 * error is largest at an end, or where the clock bent, which was inside
 * the bound before).
 */
uint64_t mm_sync_err_last(const struct mm_sync *cs,
			  const struct mm_sync_model *md);

/*
 * The sample of an exchange (t1, t2, t3, t4): the host's offset lies in
 * [t3 - t4, t2 - t1], if t1 is read before the ping leaves, t2 not before
 * it arrived, t3 before the answer leaves and t4 not before it arrived;
 * and a margin of 500 ppm of drift over the exchange.  A host time t2
 * after t3, or a hold t3 - t2 longer than t4 - t1, is not believed: then
 * the host read its clock somewhere in [t1, t4] (t3), and that is all.
 * -1 if t4 < t1.
 */
int mm_sync_sample_of(uint64_t t1, uint64_t t2, uint64_t t3, uint64_t t4,
		  struct mm_sync_sample *s);

/* Host clock - MM clock at MM time m, by the model. */
int64_t mm_sync_offset(const struct mm_sync_model *md, uint64_t m);

/*
 * A host timestamp on the MM's clock: host = M + off0 + drift (M - m0),
 * so M - m0 = (host - m0 - off0) / (1 + drift) = x - x k, x k rounded
 * half away from zero (as llround; exact while |x k| < 2^52).  Without
 * drift, integer arithmetic only.  Inline: mainmon converts every record.
 */
static inline uint64_t
mm_sync_to_mm(const struct mm_sync_model *md, uint64_t host_ts)
{
	uint64_t x = host_ts - md->m0 - (uint64_t)md->off0;
	double v, frac;
	int64_t r;

	if (md->k != 0.0) {
		v = (double)(int64_t)x * md->k;
		r = (int64_t)v;
		frac = v - (double)r;
		r += frac >= 0.5 ? 1 : frac <= -0.5 ? -1 : 0;
		/* Unsigned: a scribbled timestamp wraps, and is clamped
		 * by the caller, instead of overflowing. */
		x -= (uint64_t)r;
	}
	return md->m0 + x;
}

/* The model's error bound at MM time t (clk_bound_ns). */
uint64_t mm_sync_bound(const struct mm_sync_model *md, uint64_t t);

/*
 * The models a connection has published (#SYNC) and converts with: each
 * converts the records whose time by it is at least its `from`, up to the
 * next one's `from`, so that a reader knows which model converted a record
 * from the record's time alone (doc/formats.md #SYNC).  At most
 * MM_SYNC_KEPT are kept: a record older than the oldest kept model's
 * range is converted by it (counted in `stale`).
 */
struct mm_sync_used {
	struct mm_sync_model	md;
	uint64_t		from;	/* MM ns */
	uint32_t		num;	/* the #SYNC's number for the node */
};

#define MM_SYNC_KEPT	8192	/* hours at one model per collection */

struct mm_sync_book {
	struct mm_sync_used	*v;	/* oldest first */
	uint32_t		n, cap;
	uint64_t		stale;
};

/* Adds md, number num, converting from MM time `from` on; -1 (ENOMEM)
 * if it cannot be kept (the book is unchanged). */
int mm_sync_publish(struct mm_sync_book *b, const struct mm_sync_model *md,
		    uint32_t num, uint64_t from);
/* Host time h on MM's clock, by the model of b whose range it falls in
 * (*u, if u is not NULL); by fallback if b holds none (*u NULL). */
uint64_t mm_sync_conv(struct mm_sync_book *b,
		      const struct mm_sync_model *fallback, uint64_t h,
		      const struct mm_sync_used **u);
/* The newest model of b, or NULL. */
const struct mm_sync_used *mm_sync_current(const struct mm_sync_book *b);

/*
 * mm_sync_conv for the timestamps of one run, converted one after the
 * other, with the same answers and no floating point for most: the
 * rounding mm_sync_to_mm subtracts (r in m0 + x - r) is monotonic in x
 * (the product x k is, and so is rounding it), so once two x round to
 * the same r, every x between them does.  The memo holds such an
 * interval for the book's newest model (or the fallback), whose range
 * nearly every record falls in (the others go to mm_sync_conv): its ends
 * estimated from k where r changes, then checked by mm_sync_to_mm
 * itself, so that a record of a thread converts by an add until its time
 * crosses the next change of r (1 ms at 1 ppm).  Valid while b is not
 * published to (mm_sync_memo_init again after).
 */
struct mm_sync_memo {
	const struct mm_sync_used	*u;	/* newest model, or NULL */
	const struct mm_sync_model	*md;	/* its model, or fallback */
	int64_t				lo, hi;	/* x in [lo, hi] rounds to r */
	uint64_t			r;	/* (lo > hi: nothing known) */
};

static inline void
mm_sync_memo_init(struct mm_sync_memo *m, const struct mm_sync_book *b,
		  const struct mm_sync_model *fallback)
{
	m->u = b->n > 0 ? &b->v[b->n - 1] : NULL;
	m->md = m->u != NULL ? &m->u->md : fallback;
	m->lo = 1;
	m->hi = 0;
	m->r = 0;
}

/* The r mm_sync_to_mm subtracts for x (memo's use). */
static inline uint64_t
mm_sync_memo_r(const struct mm_sync_model *md, int64_t x)
{
	uint64_t h = (uint64_t)x + md->m0 + (uint64_t)md->off0;

	return md->m0 + (uint64_t)x - mm_sync_to_mm(md, h);
}

/* Learns x's r and the widest interval around x it can prove shares it. */
void mm_sync_memo_learn(struct mm_sync_memo *m, int64_t x);

static inline uint64_t
mm_sync_conv_memo(struct mm_sync_memo *m, struct mm_sync_book *b,
		  const struct mm_sync_model *fallback, uint64_t h,
		  const struct mm_sync_used **u)
{
	const struct mm_sync_model *md = m->md;
	uint64_t x = h - md->m0 - (uint64_t)md->off0, t;
	int64_t sx = (int64_t)x;

	if (!(sx >= m->lo && sx <= m->hi))
		mm_sync_memo_learn(m, sx);
	t = md->m0 + x - m->r;
	if (m->u == NULL) {
		*u = NULL;
		return t;
	}
	if (t >= m->u->from) {
		*u = m->u;
		return t;
	}
	return mm_sync_conv(b, fallback, h, u);
}

/*
 * The host times [first, last] of a run in order as a few shifts: with m
 * and b as for mm_sync_conv_memo, fills upto[0..n) and by[0..n) (n at
 * most max) so that every h in [first, last] converts to h + by[i], i
 * the first with h <= upto[i] (upto[n - 1] is UINT64_MAX), by the
 * memo's model (the book's newest, or fallback if none: every one of
 * them from its start on), each shift at most a nanosecond less than
 * the one before (converted times in order stay in order).  Returns n,
 * or 0 if the run is not so (more than max shifts, another model, a
 * larger step back).
 */
uint32_t mm_sync_memo_steps(struct mm_sync_memo *m, struct mm_sync_book *b,
			    const struct mm_sync_model *fallback,
			    uint64_t first, uint64_t last, uint64_t *upto,
			    uint64_t *by, uint32_t max);

void mm_sync_book_free(struct mm_sync_book *b);

/* Drift in parts per billion, rounded (for files and status). */
int64_t mm_sync_drift_ppb(const struct mm_sync_model *md);

#endif /* GRM_CLKSYNC_H */
