/* SPDX-License-Identifier: MIT */
/* pv_sum.h: a trace's summary sidecar in prove (pv_sum.c): prove index,
 * and prove serve's answers from it while the full index is built. */
#ifndef GRM_PV_SUM_H
#define GRM_PV_SUM_H

#include <stddef.h>
#include <stdint.h>

#include "pv_idx.h"

struct evbuffer;

struct pv_sum {
	struct grmtrace_sum	*g;
	struct grmtrace_sum_info in;
	size_t		*row;	/* the view's rows: summary rows of
				   processes (pid not 0), sorted */
	size_t		nrow;
	size_t		procs;
	struct pv_host	*host;	/* named before the first record */
	size_t		nhost;
};

/* prove index FILE...: writes each FILE.idx.  Exit status. */
int pv_index_cmd(int argc, char **argv);

/* Loads path's sidecar: 0; 1 if there is none, or it was refused (said
 * on stderr: stale, malformed); -1 out of memory (said).  s is empty
 * unless 0. */
int pv_sum_load(struct pv_sum *s, const char *path);
void pv_sum_free(struct pv_sum *s);

/* prove serve's /api/meta, /api/stats and /api/view from the summary,
 * with "approximate":true and how far the full index is (progress, 0 to
 * 1).  0, or -1 out of memory. */
int pv_sum_meta(const struct pv_sum *s, const char *path, double progress,
		struct evbuffer *out);
int pv_sum_stats(const struct pv_sum *s, struct evbuffer *out);
int pv_sum_view(const struct pv_sum *s, const struct pv_q *q,
		double progress, struct evbuffer *out);
/* A view finer than the summary's buckets: the records of its time range
 * read from the file (from the frame the summary gives for its first
 * bucket, at most 2^15 of them) into an index of their own, answered as
 * the index answers (states begun before the range left out), with
 * "approximate":true and "from_file":true.  0; 1 if it cannot be (too
 * many records, none, the rows in another order, a reader's error: then
 * pv_sum_view answers); -1 out of memory. */
int pv_sum_range(const struct pv_sum *s, const char *path,
		 const struct pv_q *q, double progress, struct evbuffer *out);

#endif /* GRM_PV_SUM_H */
