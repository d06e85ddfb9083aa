/* SPDX-License-Identifier: MIT */
/* tr_sum.h: the summary sidecar of a binary trace (doc/formats.md section
 * 6): per thread and coarse time bucket, the records and the dominant
 * outermost block, and where each bucket's records start in the file.
 * Built as records are written (mainmon's tape writer) or read (prove
 * index, grmtrace_index), with the same code, so both give the same file. */
#ifndef GRM_TR_SUM_H
#define GRM_TR_SUM_H

#include <stddef.h>
#include <stdint.h>

#include "util/hmap.h"

#define SUM_MAGIC	"\x89GRMIDX\n"	/* 8 bytes */
#define SUM_VERSION	1
#define SUM_NB		4096	/* buckets at most */
#define SUM_SHIFT0	10	/* first bucket width: 2^10 ns */
#define SUM_HASHED	4096	/* trace bytes hashed, at most */
#define SUM_NOOFF	UINT64_MAX

/* One thread in one bucket: 16 bytes in memory and in the file. */
struct sum_cell {
	uint32_t	n;	/* records */
	uint32_t	st;	/* dominant outermost block: state + 1, 0 none */
	uint64_t	ns;	/* its time in the bucket */
};

struct sum_row {
	uint32_t	node;
	uint32_t	pid;
	uint32_t	tid;
	uint32_t	depth;	/* blocks open */
	uint32_t	open;	/* the outermost: state + 1 */
	uint64_t	open_t0;
	/* Fed: the cells of buckets lo to lo + cap - 1 (the others are
	 * empty), grown as the thread's records reach new buckets, so
	 * that a short thread costs a few cells, not SUM_NB.  Loaded: nb
	 * + 1 cells from bucket 0. */
	uint32_t	lo;
	uint32_t	cap;
	struct sum_cell	*c;
};

struct tr_sum {
	uint64_t	t0;	/* bucket 0 starts here: the first record */
	unsigned	shift;	/* bucket width 2^shift ns */
	uint32_t	nb;	/* buckets in use */
	uint64_t	records;
	uint64_t	tlast;
	uint64_t	foff;	/* file offset of the frame being fed */
	uint64_t	cur_lo;	/* the last record's bucket cur_b: from */
	uint64_t	cur_w;	/* cur_lo for cur_w ns (0: none) */
	uint32_t	cur_b;
	uint64_t	off[SUM_NB];	/* of each bucket's first record's frame */
	struct sum_row	*row;
	size_t		nrow;
	size_t		crow;
	size_t		last;	/* row of the last record, + 1 */
	size_t		last2;	/* the row used before it, + 1 (two threads'
				 * pieces interleaved: no lookup) */
	struct hmap	rows;	/* (node, pid, tid) -> row + 1 */
	int64_t		*state;	/* block ids */
	size_t		nstate;
	size_t		cstate;
	struct hmap	states;	/* block id -> state + 1 */
	/* Loaded (sum_load): the trace bytes it covers and their hash. */
	uint64_t	covers;
	uint64_t	hash;
};

/* An empty summary.  This cannot fail. */
void sum_init(struct tr_sum *s);
void sum_free(struct tr_sum *s);
/* One record of thread (node, pid, tid), in file order, from the frame at
 * s->foff; arg: the first field of a block begin (eid -1), else ignored.
 * 0, or -1 out of memory (s is then unusable). */
int sum_rec(struct tr_sum *s, uint64_t ts, uint32_t node, uint32_t pid,
	    uint32_t tid, int32_t eid, int64_t arg);
/* The bucket of the last record summed: [*lo, *lo + *w); *w 0: none. */
void sum_bucket(const struct tr_sum *s, uint64_t *lo, uint64_t *w);
/* What k sum_rec calls do for k records of thread (node, pid, tid) that
 * are all in that bucket and none a block's begin or end (eid -1, -2),
 * the latest at tlast.  0, or -1 out of memory. */
int sum_count(struct tr_sum *s, uint32_t node, uint32_t pid, uint32_t tid,
	      uint32_t k, uint64_t tlast);
/* The same for the records of a piece (doc/formats.md section 3: whole
 * in-memory records of one thread, len bytes at recs). */
int sum_piece(struct tr_sum *s, uint32_t node, uint32_t pid, uint32_t tid,
	      const void *recs, size_t len);
/* The same, the records in time order, knowing where stretches of one
 * header begin (struct tape_stretch: at[0..n), base, one): a stretch's
 * records are counted by bisecting their times, not walked. */
int sum_piece_st(struct tr_sum *s, uint32_t node, uint32_t pid, uint32_t tid,
		 const void *recs, size_t len, const uint32_t *at, uint32_t n,
		 uint32_t base, int one);
/* The same for the records of a dense run src[0..slen) (no base, whole
 * records; tape_piece_dense), prev the time in the run of the one
 * before the first, their times moved by sh's steps; told where the
 * run's stretches begin (sg, may be NULL), a stretch's records are
 * counted at once where they all fall in one bucket. */
struct rec_dense_shift;
struct rec_dense_segs;
int sum_dense(struct tr_sum *s, uint32_t node, uint32_t pid, uint32_t tid,
	      const void *src, size_t slen, uint64_t prev,
	      const struct rec_dense_shift *sh,
	      const struct rec_dense_segs *sg);
/* Writes s as the sidecar of trace (trace + ".idx", through a temporary
 * file renamed), covering its first covers bytes (whole frames).  0, or
 * -1 with errno set. */
/* The cell of row's bucket b (empty where the row has none). */
struct sum_cell sum_cell_of(const struct tr_sum *s, size_t row, uint32_t b);
int sum_write(const struct tr_sum *s, const char *trace, uint64_t covers);
/* sum_write in two steps: the file's bytes (*len) made from s, with no
 * I/O (NULL if out of memory; to be freed), then written as the sidecar
 * of trace, its hash taken from trace then (0, or -1 with errno set). */
unsigned char *sum_image(const struct tr_sum *s, uint64_t covers,
			 size_t *len);
int sum_image_put(unsigned char *img, size_t len, const char *trace);
/* The hash of the first min(covers, SUM_HASHED) bytes of trace: 0, or -1
 * with errno set. */
int sum_hash(const char *trace, uint64_t covers, uint64_t *h);
/* Loads the sidecar of trace into s (made empty first) and checks it
 * belongs to trace: 0; -1 with why in err (no sidecar: errno ENOENT;
 * unreadable, malformed, stale).  s is empty after a failure. */
int sum_load(struct tr_sum *s, const char *trace, char *err, size_t errlen);
/* The same from the n bytes at p (the fuzz target's entry): 0 or -1. */
int sum_parse(struct tr_sum *s, const unsigned char *p, size_t n, char *err,
	      size_t errlen);

#endif /* GRM_TR_SUM_H */
