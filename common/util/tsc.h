/* SPDX-License-Identifier: MIT */
/* tsc.h: the optional TSC clock (GRM_CLOCK=tsc): whether this host may use
 * it, reading it, and its calibration against CLOCK_MONOTONIC, which the
 * Local Monitor measures and mainmon applies (doc/clock-sync.md, "The TSC
 * clock"). */
#ifndef GRM_TSC_H
#define GRM_TSC_H

#include <stddef.h>
#include <stdint.h>

#if defined(__x86_64__)
#include <x86intrin.h>
#define TSC_HAVE	1
#else
#define TSC_HAVE	0
#endif

/* The time-stamp counter, ticks.  Not serialising (rdtsc, not rdtscp): a
 * record's time may be read a few cycles early, far less than the order's
 * grace (doc/clock-sync.md).  0 where there is none (never used there:
 * tsc_usable refuses). */
static inline uint64_t
tsc_read(void)
{
#if TSC_HAVE
	return __rdtsc();
#else
	return 0;
#endif
}

/* The same, with rdtscp: waits for the instructions before it (bench only). */
static inline uint64_t
tsc_read_p(void)
{
#if TSC_HAVE
	unsigned aux;

	return __rdtscp(&aux);
#else
	return 0;
#endif
}

/*
 * A calibration: host CLOCK_MONOTONIC ns = ns0 + (ticks - tick0) * mult /
 * 2^32, ticks before tick0 too.  err_ns bounds the error of ns0 (half the
 * width of the clock reads that bracket tick0); span_ns is the time between
 * the two pairs of reads the rate comes from, rate_ppb that rate's
 * uncertainty (both pairs' widths over the span).
 */
struct tsc_cal {
	uint64_t	tick0;
	uint64_t	ns0;
	uint64_t	mult;		/* ns per tick, times 2^32 */
	uint64_t	err_ns;
	uint64_t	span_ns;
	uint64_t	rate_ppb;
};

/* One reading of both clocks: the TSC at tick, CLOCK_MONOTONIC ns within
 * half_ns of ns (the best of a few tries). */
struct tsc_pair {
	uint64_t	tick;
	uint64_t	ns;
	uint64_t	half_ns;
};

/* Ticks of c as host CLOCK_MONOTONIC ns, rounded to the nearest (an
 * exact product: mult's 2^-32 ns per tick is the only rounding). */
static inline uint64_t
tsc_to_ns(const struct tsc_cal *c, uint64_t ticks)
{
	int64_t d = (int64_t)(ticks - c->tick0);
#ifdef __SIZEOF_INT128__
	__int128 v = (__int128)d * (__int128)c->mult;

	return c->ns0 + (uint64_t)(int64_t)((v + ((__int128)1 << 31)) >> 32);
#else	/* 32-bit hosts: to a long double's precision */
	return c->ns0 + (uint64_t)(int64_t)((long double)d *
	    (long double)c->mult / 4294967296.0L + 0.5L);
#endif
}

/* A duration of ns as ticks of c (rounded down; 0 if mult is 0). */
static inline uint64_t
tsc_ticks(const struct tsc_cal *c, uint64_t ns)
{
	if (c->mult == 0)
		return 0;
#ifdef __SIZEOF_INT128__
	return (uint64_t)(((unsigned __int128)ns << 32) / c->mult);
#else
	return (uint64_t)((long double)ns * 4294967296.0L /
	    (long double)c->mult);
#endif
}

/*
 * Whether GRM_CLOCK=tsc may be used here: an x86-64 CPU whose flags in
 * cpuinfo (GRM_TSC_CPUINFO, else /proc/cpuinfo) include constant_tsc
 * (the rate does not follow the CPU's frequency) and nonstop_tsc (it runs
 * in deep sleep states), and a kernel that still offers tsc as a
 * clocksource (it withdraws it when its checks find the TSC unstable or
 * unsynchronised between CPUs).  Returns 1, or 0 with the reason in
 * why[whysz].
 */
int tsc_usable(char *why, size_t whysz);

/* Reads both clocks (the best of 16 tries). */
void tsc_pair(struct tsc_pair *p);

/* The calibration from pairs a and b (b at least 1 ms after a), anchored
 * at a.  -1 if they are too close or the TSC did not advance. */
int tsc_calibrate(const struct tsc_pair *a, const struct tsc_pair *b,
		  struct tsc_cal *c);

#endif /* GRM_TSC_H */
