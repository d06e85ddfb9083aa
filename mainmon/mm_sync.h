/* SPDX-License-Identifier: MIT */
/* mm_sync.h: a host's clock as the Main Monitor models it, from ping-pong
 * exchanges: an offset and a drift (a line, refitted as samples come),
 * with an error bound.  doc/clock-sync.md explains the method. */
#ifndef GRM_CLKSYNC_H
#define GRM_CLKSYNC_H

#include <stdint.h>

/* One exchange: the MM sent at t1 (its clock), the host answered with its
 * clock tl, the answer came back at t4.  The host read its clock somewhere
 * in [t1, t4]: its offset is within rtt / 2 of o, at the midpoint m. */
struct mm_sync_sample {
	uint64_t	m;		/* MM ns: (t1 + t4) / 2 */
	int64_t		o;		/* host - MM, ns, at m */
	uint64_t	rtt;		/* t4 - t1 */
};

/* host clock - MM clock = off0 + drift * (MM time - m0), within err. */
struct mm_sync_model {
	uint64_t	m0;
	int64_t		off0;
	double		drift;		/* dimensionless: 1e-6 is 1 ppm */
	double		k;		/* drift / (1 + drift), for mm_sync_to_mm */
	uint64_t	err;		/* ns: the bound on the model's error */
	uint64_t	best_rtt;	/* smallest round trip of the samples */
	uint32_t	used;		/* samples the fit used */
};

#define MM_SYNC_WINDOW	64	/* samples kept (one per exchange burst) */
/* Samples whose round trip exceeds twice the window's best (plus this
 * much) and the median are queueing delay, not the link: left out of the
 * fit. */
#define MM_SYNC_RTT_SLACK	20000u
/* Below this span of samples the drift is not estimated (taken as 0). */
#define MM_SYNC_DRIFT_SPAN	1000000000u
/* A fitted drift beyond this is not believed (a clock that fast is
 * broken, or a sample is bad): capped. */
#define MM_SYNC_DRIFT_MAX	1e-3

struct mm_sync {
	struct mm_sync_sample	s[MM_SYNC_WINDOW];
	uint32_t		n;	/* samples held */
	uint32_t		next;	/* where the next one goes */
	struct mm_sync_model	model;
	int			valid;	/* a model exists */
};

/* Adds one sample (usually the best of a burst) and refits the model. */
void mm_sync_add(struct mm_sync *cs, const struct mm_sync_sample *s);

/* The sample of an exchange (t1, tl, t4); -1 if t4 < t1. */
int mm_sync_sample_of(uint64_t t1, uint64_t tl, uint64_t t4,
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

/* Drift in parts per billion, rounded (for files and status). */
int64_t mm_sync_drift_ppb(const struct mm_sync_model *md);

#endif /* GRM_CLKSYNC_H */
