/* SPDX-License-Identifier: MIT */
/* pv_idx.h: prove serve's index of a trace: rows, states with their
 * mipmaps, marks, messages, phases, losses and process ends, built once
 * through the public reader, and the level-of-detail queries on it. */
#ifndef GRM_PV_IDX_H
#define GRM_PV_IDX_H

#include <stddef.h>
#include <stdint.h>

#include "pv.h"
#include "pv_search.h"

struct evbuffer;

/* A state: a block or range open on a thread from t0 to t1 (the end of
 * the trace if never closed).  40 bytes. */
struct pv_span {
	uint64_t	t0;
	uint64_t	t1;
	uint32_t	name;	/* state id: index in pv_idx.states */
	uint32_t	open;	/* 1: not closed before the end */
	/* BEE's views (pv_bee.c): its exclusive time as prove stats has it
	 * (ns: its duration less its node's collection phases and its
	 * children's), the eids of its begin and end records, and whether
	 * it was closed by an end of its own (PV_SPAN_OWN) or by the end of
	 * one it is nested in (an unmatched end, none). */
	uint64_t	excl;
	int32_t		beid;
	int32_t		eeid;
};

/* A mipmap level of one depth: for each bucket of 2^shift ns that holds
 * a span's start, the index of its longest span (sorted by start). */
struct pv_lvl {
	uint32_t	*ix;
	size_t		n;
	unsigned	shift;
};

#define PV_NLVL	32

/* The spans of one nesting depth of a row: none overlap (a depth holds
 * one open span at a time), so sorted by start they are sorted by end. */
struct pv_depth {
	struct pv_span	*s;
	size_t		n;
	size_t		cap;
	struct pv_lvl	lv[PV_NLVL];	/* finest first */
	unsigned	nlv;
	/* Following a job (pv_idx_finish again): spans when the mipmap was
	 * made, and whether the last span is one still open, to be taken
	 * back before more records come. */
	size_t		mapped;
	int		prov;
	/* BEE's tables (pv_bee_update): the least index of a span added,
	 * taken back or moved since they were made (SIZE_MAX: none). */
	size_t		low;
};

/* A mark: one record that is no block or range boundary.  16 bytes. */
struct pv_pt {
	uint64_t	ts;
	int32_t		eid;
	uint32_t	kind;	/* enum pv_kind */
};

struct pv_open {
	uint64_t	t0;
	int64_t		id;
	int		range;
	uint32_t	name;
	int32_t		beid;		/* of its begin record */
	uint64_t	child;		/* inclusive time of closed children */
	uint64_t	stopped;	/* its node's stopped time at t0 */
};

/* pv_span.open: bit 0 not closed; bit 1 closed by an end of its own. */
#define PV_SPAN_OPEN	1u
#define PV_SPAN_OWN	2u

/* A row: one thread (node, pid, tid) with records. */
struct pv_row {
	uint32_t	node;
	uint32_t	pid;
	uint32_t	tid;
	struct pv_depth	*d;	/* by depth, 0 the outermost */
	size_t		nd;
	struct pv_pt	*pt;	/* by ts */
	size_t		npt;
	size_t		cpt;
	struct pv_open	*st;	/* while building: the open spans */
	size_t		depth;
	size_t		cst;
	/* BEE's views: the node's collection phases so far (in
	 * pv_idx.coll, while building), and the tables (pv_bee.c). */
	struct pv_when	*coll;
	struct pv_bee_row *bee;
	size_t		ptlow;	/* as pv_depth.low, of pt */
};

/* A message matched: an arrow from its send to its receive.  32 bytes. */
struct pv_arrow {
	uint64_t	ts;	/* send */
	uint64_t	tr;	/* receive */
	uint32_t	rs;	/* rows */
	uint32_t	rr;
	int64_t		bytes;
	uint64_t	bound;	/* the two ends' error bounds together: a
				   latency below it, the order is not
				   certain (pv_arrow_unsure) */
};

/* Whether a's receive may, for all the clocks can say, have come before
 * its send: its latency is less than the two ends' bounds together. */
static inline int
pv_arrow_unsure(const struct pv_arrow *a)
{
	return a->tr < a->ts || a->tr - a->ts < a->bound;
}

/* An event in time of a row, a node or a process: a collection phase
 * (t0..t1 of a node), a loss (count events lost at t0), a process's
 * start or end (how, status). */
struct pv_when {
	uint64_t	t0;
	uint64_t	t1;
	uint32_t	node;
	uint32_t	pid;
	uint32_t	tid;
	int32_t		how;	/* PROC: enum grmtrace_how; -1 start */
	int64_t		v;	/* LOSS: count; PROC end: status */
};

/* A state's name, as shown: "block 3", a block's name, a range's. */
struct pv_state {
	int64_t		id;
	int		range;
	char		*name;
	size_t		len;
	int32_t		eid;	/* of its first begin record */
	int		begun;
};

/* A record of no row: 24 bytes. */
struct pv_oth {
	uint64_t	ts;
	int32_t		eid;
	uint32_t	node;
	uint32_t	pid;
	uint32_t	tid;
};

struct pv_bee_row;

/* Records of an event type, and its name (description or format). */
struct pv_evc {
	int32_t		eid;
	uint64_t	count;
	char		*name;
};

struct pv_host {
	uint32_t	node;
	char		*name;
};

struct pv_idx {
	char		*path;
	struct pv_row	*row;	/* sorted by host, process, thread */
	size_t		nrow;
	struct pv_map	rows;	/* (node << 32 | pid, tid) -> row index+1 */
	struct pv_state	*states;
	size_t		nstates;
	size_t		cstates;
	struct pv_map	stix;	/* (id, range) -> state index + 1 */
	struct pv_strs	names;	/* of ranges */
	struct pv_sym	sym;
	struct pv_msgs	msgs;
	struct pv_arrow	*arrow;	/* by send time */
	size_t		narrow;
	uint32_t	*arecv;	/* arrow indexes by receive time */
	uint64_t	maxlat;	/* the longest arrow, ns */
	uint64_t	maxmove;	/* the most a record was moved by the
					   reader's causality correction */
	struct pv_when	*phase;	/* by t0 */
	size_t		nphase;
	size_t		cphase;
	struct pv_when	*loss;	/* by t0 */
	size_t		nloss;
	size_t		closs;
	struct pv_when	*proc;	/* starts and ends, by t0 */
	size_t		nproc;
	size_t		cproc;
	struct pv_map	evc;	/* (eid, 0) -> struct pv_evc */
#define PV_EID_LO	(-64)
#define PV_EID_HI	1024
	struct pv_evc	*evq[PV_EID_HI - PV_EID_LO];	/* in evc, by eid */
	size_t		lastrow;	/* while building: index + 1 */
	struct pv_host	*host;	/* the reader's, at the end */
	size_t		nhost;
	struct pv_map	procs;	/* (node << 32 | pid, 0): processes with
				   records (not the LMs, pid 0) */
	struct pv_map	coll;	/* (node, 0) -> struct pv_when open phase */
	uint64_t	records;
	uint64_t	first;	/* of the records (prove stats' span) */
	uint64_t	last;
	uint64_t	tend;	/* the last time of anything: records,
				   process ends, losses (the view's end) */
	uint64_t	losses;
	int		ended;
	uint64_t	end_records;
	uint64_t	unmatched;	/* ends with no begin */
	size_t		bytes;		/* memory held, about */
	double		build_s;	/* seconds the build took */
	char		*stats;		/* prove stats' text, or NULL */
	size_t		stats_len;
	/* Following a job: what is older than cut (ns) was dropped
	 * (pv_idx_trim); 0: nothing. */
	uint64_t	cut;
	/* Following a job that went on in new files (grmctl file): the
	 * files read, files[0] path, the others added by pv_idx_add_file
	 * (nfiles 0: path alone); the last read up to limit bytes (0: to its
	 * end); the losses of those before the last. */
	char		**files;
	size_t		nfiles;
	uint64_t	limit;
	uint64_t	losses0;
	/* Built in another thread (prove serve with a summary sidecar):
	 * the records read so far are stored in *progress every 2^16
	 * (atomically), and the build stops when *stop is set; NULL: not. */
	uint64_t	*progress;
	const int	*stop;
	/* A time range read from the middle of a file (pv_sum.c): feeding
	 * stops at the first record at or after until (0: none), and fails
	 * (-4) past max records (0: none). */
	uint64_t	until;
	uint64_t	max;
	/* BEE's views from the index (pv_bee.c): the records of no row (of
	 * the Local Monitors, pid 0, and collection phase marks) by time;
	 * bee set once the tables are made (pv_bee_build, a file's index;
	 * pv_bee_update after every collection of a followed job); the cut
	 * they were made at, how often they were made whole (not grown). */
	struct pv_oth	*oth;
	size_t		noth;
	size_t		coth;
	int		bee;
	size_t		bee_bytes;
	uint64_t	bee_cut;
	uint64_t	bee_full;
};

/* Builds the index of path (read once through the public reader; its
 * hosts and processes kept from the reader).  Returns 0, or -1 after
 * saying on stderr why (unreadable, malformed, out of memory); x is then
 * freed. */
int pv_idx_build(struct pv_idx *x, const char *path);
/* The same, its progress and stop as above (a stop fails it, said). */
int pv_idx_build_bg(struct pv_idx *x, const char *path, uint64_t *progress,
		    const int *stop);
void pv_idx_free(struct pv_idx *x);

/* Appending (prove serve ID, pv_live.c): pv_idx_begin makes x empty, of
 * path; pv_idx_feed takes what t gives until grmtrace_next returns 0 (at
 * the end or its limit), -1 if it failed (x as it was before the event
 * that failed; pv_fail says why) or -2 out of memory; pv_idx_finish
 * makes what the answers use of what was added (spans still open shown
 * to the latest record, taken back by the next feed), again after every
 * feed: 0, or -1 out of memory.  pv_idx_trim drops from memory what ends
 * before cut (ns), the counts kept: 0, or -1 out of memory. */
int pv_idx_begin(struct pv_idx *x, const char *path);
int pv_idx_feed(struct pv_idx *x, struct grmtrace *t);
int pv_idx_finish(struct pv_idx *x, struct grmtrace *t);
int pv_idx_trim(struct pv_idx *x, uint64_t cut);
/* Following a job: path, the file the records fed next come from (after
 * those before it); the reader of the one before, read to its end, is
 * t (its losses kept).  0, or -1 out of memory. */
int pv_idx_add_file(struct pv_idx *x, const char *path, struct grmtrace *t);
/* The files of x as one trace, for reading them again (BEE's views, the
 * tracer, a record's details). */
static inline struct pv_files
pv_idx_files(const struct pv_idx *x)
{
	if (x->nfiles == 0)
		return (struct pv_files){ (const char *const *)&x->path, 1,
		    x->limit };
	return (struct pv_files){ (const char *const *)x->files, x->nfiles,
	    x->limit };
}
/* Opens file i of pv_idx_files(x) for reading again, limited as it is
 * there.  The reader, or NULL with why in err. */
struct grmtrace *pv_idx_open(const struct pv_idx *x, size_t i, char *err,
			     size_t errlen);
/* Before feeding: the row of (node, pid, tid) and the state of block id
 * made now (the next index), so that an index of part of a file numbers
 * them as another one does.  0, or -1 out of memory. */
int pv_idx_add_row(struct pv_idx *x, uint32_t node, uint32_t pid,
		   uint32_t tid);
int pv_idx_add_block(struct pv_idx *x, int64_t id);

/* The JSON answers of the API, appended to out.  Each returns 0, or -1
 * with a message for the client in err (a request that cannot be
 * answered); out of memory is -1 too. */
struct pv_q {
	uint64_t	from;	/* ns, absolute */
	uint64_t	to;
	unsigned	width;	/* pixels */
	size_t		r0;	/* rows r0 .. r1 - 1 */
	size_t		r1;
};
int pv_idx_meta(const struct pv_idx *x, struct evbuffer *out);
/* A bundle of arrows: those from row rs at column xs to row rr at column
 * xr of a view (-1 and width + 1: beyond its edges), n of them; first:
 * the index in x->arrow of the first. */
struct pv_bundle {
	uint32_t	rs;
	uint32_t	rr;
	long		xs;
	long		xr;
	uint64_t	n;
	size_t		first;
};
/* The level of detail of the view q's messages (prove serve's, prove
 * svg's): arrows that would overlap bundled, at most 16 looked at per
 * pixel of width unless all (one in every *stride beyond, counted stride
 * times), at most 2^14 bundles (*trunc set if more).  *b: a new array of
 * *n bundles, in no order.  Returns 0, or -1 if out of memory. */
int pv_idx_arrows(const struct pv_idx *x, const struct pv_q *q, int all,
		  struct pv_bundle **b, size_t *n, size_t *stride,
		  int *trunc);
int pv_idx_view(const struct pv_idx *x, const struct pv_q *q,
		struct evbuffer *out);
int pv_idx_record(const struct pv_idx *x, size_t row, uint64_t ts,
		  int32_t eid, int has_eid, struct evbuffer *out,
		  char *err, size_t errlen);
int pv_idx_stats(const struct pv_idx *x, struct evbuffer *out);

/* The page's files, built into the program (pv_web.c, made from
 * prove/web/ at build time); the last has path NULL. */
struct pv_web {
	const char		*path;	/* "/", "/app.js", ... */
	const char		*type;	/* Content-Type */
	const unsigned char	*data;
	size_t			len;
};
extern const struct pv_web pv_web[];

/* JSON: the field f as the text format has it, a string (pv_detail.c);
 * 0, or -1 if out of memory. */
int pv_field_json(const struct grmtrace_field *f, struct evbuffer *out);

/* ---- BEE's views from the index (pv_bee.c) ---- */

/* Makes the tables of BEE's views of x, a file's index just built:
 * for each row, its marks, its spans by depth and its messages with
 * the sums of every 2^k of them (counts by event type, exclusive time
 * by state, messages by peer), so that a selection is answered in
 * O(rows x log n).  Returns 0, or -1 if out of memory (x then has
 * none: x->bee 0). */
int pv_bee_build(struct pv_idx *x);
/* (Both fail too when x->stop is set, seen every 2^16 items.)
 * The same for an index that grew (pv_idx_feed and pv_idx_finish, a
 * followed job): the sums of each sequence are made again only from its
 * first item added, taken back or moved (pv_depth.low, pv_row.ptlow; the
 * rows' messages are gathered again and compared), the tables made
 * whole when rows were added or reordered or old data dropped
 * (pv_idx_trim).  0, or -1 if out of memory (x then has none). */
int pv_bee_update(struct pv_idx *x);
void pv_bee_free(struct pv_idx *x);
/* The numbers of pv_stats_json (prove stats' on sel) from the tables of
 * x (x->bee set), as the same JSON appended to out; load_n buckets of
 * the load meter.  Returns 0, or -1 if out of memory. */
int pv_bee_json(const struct pv_idx *x, const struct pv_sel *sel,
		unsigned load_n, struct evbuffer *out);

/* The pieces of BEE's views' JSON (pv_stats.c), the same from the file
 * and from the index: the head {"records":...; a count, a block (mean
 * ns, variance ns^2, sum: of all blocks' totals, for the percent), a pair
 * of ranks (lat: the sum of the latencies of the matched, ns) and a load
 * meter's process (its c[0..nc), n buckets), each after a comma unless
 * the first (i, j 0); ,"lathist":[...] of hist[PV_LAT_BUCKETS]. */
#define PV_LAT_BUCKETS	64	/* k: [2^k, 2^(k+1)) ns; 0 holds 0 and 1 */
unsigned pv_lat_bucket(uint64_t lat);
void pv_bee_head(struct evbuffer *out, uint64_t records, uint64_t first,
		 uint64_t last, size_t procs, size_t threads, uint64_t losses);
void pv_bee_count(struct evbuffer *out, size_t i, int32_t eid,
		  uint64_t count, const char *name);
void pv_bee_block(struct evbuffer *out, size_t i, const char *id,
		  uint64_t count, double mean, double var, uint64_t total,
		  double sum, const char *name, size_t len);
void pv_bee_pair(struct evbuffer *out, size_t i, int64_t from, int64_t to,
		 uint64_t sends, int64_t bytes, uint64_t recvs,
		 uint64_t matched, double lat);
void pv_bee_lathist(struct evbuffer *out, const uint64_t *hist);
void pv_bee_lproc(struct evbuffer *out, size_t j, const struct pv_msgs *g,
		  uint32_t node, uint32_t pid, const uint64_t *c, size_t nc,
		  unsigned n);

/* ---- BEE's tracer (pv_tracer.c) ---- */

/* At most this many records a page. */
#define PV_TRACER_MAX	1000

/*
 * The tracer's page of x's records: those sel keeps whose event type's
 * eid, name or format holds match (no case; NULL or "": all), after the
 * first skip of them, n at most, as JSON appended to out:
 * {"records":[[row, "ts", node, pid, tid, eid, [fields]],...],
 * "more":true|false}.  Reads the files again (each of a followed job, in
 * order) from sel->from.  Returns 0,
 * or -1 with why in err.
 */
struct pv_sel;
int pv_tracer(const struct pv_idx *x, const struct pv_sel *sel,
	      const char *match, uint64_t skip, unsigned n,
	      struct evbuffer *out, char *err, size_t errlen);

/* JSON: s[0..n) as a quoted string with escapes. */
void pv_json_str(struct evbuffer *out, const char *s, size_t n);
/* The name of host node among h[0..n), or "". */
const char *pv_host_name(const struct pv_host *h, size_t n, uint32_t node);
/* JSON: ,"hosts":[{"node":N,"name":"..."},...] of h[0..n). */
void pv_hosts_json(const struct pv_host *h, size_t n, struct evbuffer *out);
/* The reader's hosts so far, into a new array *h of *n (NULL and 0 before
 * the call; freed with pv_hosts_free): 0, or -1 out of memory. */
int pv_hosts_get(struct grmtrace *t, struct pv_host **h, size_t *n);
void pv_hosts_free(struct pv_host *h, size_t n);

#endif /* GRM_PV_IDX_H */
