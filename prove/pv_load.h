/* SPDX-License-Identifier: MIT */
/* pv_load.h: BEE's load meter (seed 001 section 7.4.3) on a trace: how
 * many events each process recorded in each interval of time, the numbers
 * prove load prints and a web view can draw. */
#ifndef GRM_PV_LOAD_H
#define GRM_PV_LOAD_H

#include <stddef.h>
#include <stdint.h>

#include "pv.h"

/* One process's counts, interval by interval. */
struct pv_load_proc {
	uint32_t	node;
	uint32_t	pid;
	uint64_t	*count;		/* [nbuckets of the load] */
	uint64_t	total;
};

/*
 * Bucket b covers [t0 + b * interval, t0 + (b + 1) * interval), t0 the
 * time of the first record added; a record before t0 (a late one) counts
 * in bucket 0.  Processes are in the order their first record came.
 * Memory: processes times buckets (the trace's span over the interval).
 */
struct pv_load {
	uint64_t		interval;	/* ns, not 0 */
	uint64_t		t0;
	int			started;
	size_t			nbuckets;	/* up to the latest record */
	struct pv_load_proc	*procs;
	size_t			nprocs;
	size_t			cprocs;
	size_t			cbuckets;	/* room in each count array */
	struct pv_map		ix;		/* (node, pid) -> index + 1 */
	uint64_t		records;
	size_t			max;		/* pv_load_cap: at most max
						   buckets, 0: no cap */
};

/* Most buckets a load holds (pv_load_add fails past it). */
#define PV_LOAD_MAX_BUCKETS	(1u << 24)

/* An empty load of interval ns (not 0). */
void pv_load_init(struct pv_load *l, uint64_t interval);
/*
 * Caps an empty load at max buckets (not 0) from t0: whenever a record lies
 * past the last bucket, the interval doubles and neighbouring buckets are
 * added up, so that max buckets always cover what was added (the load
 * meter of a range whose end is not known: prove serve's views, prove
 * report).  Memory: processes times max.
 */
void pv_load_cap(struct pv_load *l, uint64_t t0, size_t max);
/*
 * Counts one event of process (node, pid) at ts.  Returns 0, or -1 if out
 * of memory or ts is more than PV_LOAD_MAX_BUCKETS intervals after t0.
 */
int pv_load_add(struct pv_load *l, uint32_t node, uint32_t pid,
		uint64_t ts);
/* Events per second of process i in bucket b: its count over the
 * interval (the last bucket too, which may be cut by the trace's end). */
double pv_load_rate(const struct pv_load *l, size_t i, size_t b);
void pv_load_free(struct pv_load *l);

#endif /* GRM_PV_LOAD_H */
