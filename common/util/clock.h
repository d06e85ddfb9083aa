/* SPDX-License-Identifier: MIT */
/* clock.h: nanosecond clock reads shared by the client and the daemons. */
#ifndef GRM_CLOCK_H
#define GRM_CLOCK_H

#include <stdint.h>
#include <time.h>

/* The host's monotonic clock, ns: every record's timestamp. */
static inline uint64_t
clk_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Wall-clock time, ns since the epoch (trace headers only). */
static inline uint64_t
clk_real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * The error bound of a clock model (doc/clock-sync.md, doc/formats.md
 * #SYNC) at time t: err within its samples' span [lo, hi], growing by
 * allow_ppb parts per 10^9 of the distance outside it (rounded up,
 * saturating; allow_ppb is taken as at most 10^9).  mainmon and the trace
 * reader both compute it so, to the nanosecond.
 */
static inline uint64_t
clk_bound_ns(uint64_t err, uint64_t allow_ppb, uint64_t lo, uint64_t hi,
	     uint64_t t)
{
	uint64_t d = t < lo ? lo - t : t > hi ? t - hi : 0, q, r, g;

	if (allow_ppb > 1000000000u)
		allow_ppb = 1000000000u;
	q = d / 1000000000u;
	r = d % 1000000000u;
	if (allow_ppb != 0 && q > (UINT64_MAX / 2) / allow_ppb)
		return UINT64_MAX;
	g = q * allow_ppb + (r * allow_ppb + 999999999u) / 1000000000u;
	return g > UINT64_MAX - err ? UINT64_MAX : err + g;
}

/*
 * A step of a host's clock (doc/formats.md #CLOCKSTEP): found by a sample
 * at mainmon time ts, step ns (the new offset less the old), between the
 * host's times host_lo and host_hi.  A record the host stamped in between
 * lies, on mainmon's clock, in [*lo, *hi] by either model (or after a
 * move that kept its thread's order), and may be off by up to *add = |step|
 * beyond its model's bound there: [ts - S - max(step, 0) - m,
 * ts + max(-step, 0) + m], S = host_hi - host_lo, m = S / 2000 + 1 ms
 * for the models' drift (500 ppm) and error.  Saturating; host_lo must
 * not exceed host_hi.  mainmon and the trace reader both use it.
 */
static inline void
clk_step_window(uint64_t ts, int64_t step, uint64_t host_lo, uint64_t host_hi,
		uint64_t *lo, uint64_t *hi, uint64_t *add)
{
	uint64_t s = host_hi - host_lo, a, up, down, m;

	a = step < 0 ? (uint64_t)0 - (uint64_t)step : (uint64_t)step;
	m = s / 2000 + 1000000;
	up = step < 0 ? a : 0;
	down = step > 0 ? a : 0;
	down = down > UINT64_MAX - s ? UINT64_MAX : down + s;
	down = down > UINT64_MAX - m ? UINT64_MAX : down + m;
	up = up > UINT64_MAX - m ? UINT64_MAX : up + m;
	*lo = ts > down ? ts - down : 0;
	*hi = ts > UINT64_MAX - up ? UINT64_MAX : ts + up;
	*add = a;
}

#endif /* GRM_CLOCK_H */
