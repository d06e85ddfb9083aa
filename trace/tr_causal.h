/* SPDX-License-Identifier: MIT */
/* tr_causal.h: the reader's causality correction (grmtrace.c,
 * doc/clock-sync.md "Correcting what the bounds allow"): a second reader
 * of the same file, ahead of the consumer's, matches message sends with
 * receives and finds the receives stamped before their send; each thread
 * keeps the shifts of its receives, from which any of its records' shift
 * follows.  Memory grows with the receives moved, and with messages
 * waiting for their other end (at most TR_CAUSAL_MAX). */
#ifndef GRM_TR_CAUSAL_H
#define GRM_TR_CAUSAL_H

#include <grm/trace.h>

#include "util/hmap.h"
#include "tr_read.h"
#include "tr_tables.h"

#define TR_CAUSAL_MAX	(1u << 20)	/* ends waiting for their match */
#define TR_CAUSAL_DECAY	1000		/* a shift lessens by 1 ns per
					   1000 ns of its thread's time */

/* The statistics of one pair of hosts, with what the median needs. */
struct tr_cpair {
	struct grmtrace_causal pub;
	uint64_t	*shifts;	/* of the receives moved */
	size_t		ns, caps;
};

struct tr_causal {
	char		*path;		/* NULL: off (raw times, or a pipe) */
	struct tape_r	*r;		/* the reader ahead; NULL before */
	int		at_end;		/* it read to the end or the limit */
	int		failed;		/* it failed: no more reading */
	uint64_t	limit;
	struct tape_ev	ev;
	struct tr_tables tab;		/* its hosts' models, ranks */
	uint64_t	last;		/* ts of the latest record it read */
	uint64_t	maxb;		/* largest bound of a message end */
	struct hmap	thr;		/* thread -> struct tr_cthr */
	struct hmap	q;		/* (src, dst, tag) -> struct tr_cq */
	uint64_t	waiting;
	struct hmap	pix;		/* (send node, recv node) -> index */
	struct tr_cpair	*pairs;		/* [0]: the totals */
	size_t		np, capp;
	uint64_t	rec_moved;	/* records handed out moved */
	uint64_t	rec_max;
};

/* Starts the correction of the file at path, before it is opened ("-":
 * only if standard input is a regular file at its start; a pipe cannot be
 * read twice, and is not corrected).  0, or -1 (ENOMEM). */
int tr_causal_init(struct tr_causal *c, const char *path);
/* Stops correcting (raw times): frees what it holds, keeps the totals
 * of records moved.  Idempotent. */
void tr_causal_off(struct tr_causal *c);
void tr_causal_free(struct tr_causal *c);
/* The limit of grmtrace_limit: the reader ahead reads no further. */
void tr_causal_limit(struct tr_causal *c, uint64_t off);
/*
 * How far (ns) a record of thread (node, pid, tid) at ts in the file,
 * with error bound bound, is to be moved: the reader ahead first reads
 * what can still move it.  Never more than bound (0 if bound is 0).
 * A failure of the reader ahead stops the correction there (the
 * consumer's own reader meets the same error).
 */
uint64_t tr_causal_shift(struct tr_causal *c, uint32_t node, uint32_t pid,
			 uint32_t tid, uint64_t ts, uint64_t bound);
/* Pair i - 1's statistics, or the totals for i 0; NULL past the end. */
const struct grmtrace_causal *tr_causal_at(struct tr_causal *c, size_t i);

#endif /* GRM_TR_CAUSAL_H */
