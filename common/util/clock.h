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

#endif /* GRM_CLOCK_H */
