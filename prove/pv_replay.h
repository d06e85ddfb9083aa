/* SPDX-License-Identifier: MIT */
/* pv_replay.h: prove replay's state, shared by its reading and pacing
 * (pv_replay.c), what it sends (pv_rp_send.c) and its connections to
 * mainmon (pv_rp_link.c). */
#ifndef GRM_PV_REPLAY_H
#define GRM_PV_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#include <event2/util.h>

#include "pv.h"
#include "net/auth.h"
#include "net/mmid.h"
#include "net/wire.h"
#include "rec/rec.h"

#define RP_TICK_US	10000		/* the pacing timer */
#define RP_FLUSH_NS	50000000ull	/* a collection at least this often */
#define RP_PIECE_MAX	(WIRE_CHUNK_MAX - REC_MAX)	/* bytes of records */
#define RP_PENDING_MAX	(8u << 20)	/* unwritten bytes: stop reading */
#define RP_UNACKED_MAX	64		/* collections in flight: likewise */
#define RP_READY_S	30		/* every host connected and synced */

enum { RP_CONNECTING, RP_SYNC, RP_READY, RP_BYE, RP_GONE };

/* A thread's piece being made: the 24 bytes of DATA fields, then
 * records. */
struct rp_thr {
	uint32_t	pid;
	uint32_t	tid;
	uint32_t	session;	/* of the records in it */
	unsigned char	*buf;
	size_t		len;
	size_t		cap;
	int		dirty;		/* in its host's list */
};

/*
 * A process (pid) of a host: the LM sessions of its images, chunk numbers,
 * and the definitions sent for each image.  mainmon writes #PROC lines as
 * they come, before the records of the same time, so a start that begins
 * a new image (after an exec or an end) is read before the old image's
 * last records: a record belongs to the image whose start is the latest
 * at or before its time.
 */
struct rp_start {
	uint64_t	ts;
	uint32_t	session;
};

struct rp_proc {
	uint32_t	session;	/* of its #PROC lines so far */
	uint32_t	rsession;	/* of its records so far */
	uint64_t	seq;
	int		ended;		/* an end or exec: a start is new */
	struct rp_start	*starts;	/* new images, records not yet */
	size_t		nstarts;
	size_t		cstarts;
	struct pv_map	defs;		/* (eid, session) -> struct rp_def */
};

struct rp_def {
	const struct grmtrace_def	*def;
};

struct rp;
struct event;
struct event_base;
struct peer;

/* One host of the trace: one LM connection. */
struct rp_node {
	struct rp	*rp;
	uint32_t	node;		/* in the trace */
	char		host[256];
	struct peer	*peer;
	struct auth_client auth;
	int		state;
	uint64_t	seg_id;
	unsigned	unacked;	/* DONEs not acknowledged */
	int		final;		/* its final collection answered:
					   nothing more is sent on it */
	struct rp_thr	**dirty;	/* pieces with records */
	size_t		ndirty;
	size_t		cdirty;
	struct pv_map	procs;		/* (pid, 0) -> struct rp_proc */
};

/* A line read, not yet due. */
struct rp_item {
	int		kind;		/* GRMTRACE_RECORD, _PROC, _LOSS */
	uint32_t	node, pid, tid;
	uint64_t	ts;
	const struct grmtrace_def *def;
	unsigned char	rec[REC_MAX];	/* the record, stamp set when sent */
	size_t		len;
	uint32_t	ppid, what, status;
	uint64_t	count;
	char		name[64];
};

struct rp {
	const char	*path;
	struct grmtrace	*r;
	struct event_base *base;
	struct event	*tick;
	struct mmid	id;
	double		speed;
	struct rp_node	*nodes;
	size_t		nnodes;
	struct pv_map	threads;	/* (node, pid << 32 | tid) -> rp_thr */
	uint64_t	t0, t1;		/* first and last record (pre-pass) */
	uint64_t	start;		/* t0 sent at (our clock) */
	uint64_t	began;		/* when every host was ready */
	uint64_t	last_flush;
	int		started, eof, stopped, failed;
	struct rp_item	next;
	int		has_next;
	/* What was sent, and what not. */
	uint64_t	records, procs, losses, lost;
	uint64_t	skipped;	/* records of process 0 (mainmon's) */
	uint64_t	stats, control;	/* #STATS and #CONTROL lines */
};

/* pv_replay.c */
/* Says "prove replay: " fmt (with a and b) on standard error, the first
 * failure only, and ends the event loop: the replay then exits 1. */
void rp_fail(struct rp *rp, const char *fmt, const char *a, const char *b);
/* Our clock's time for trace time ts. */
uint64_t rp_at(const struct rp *rp, uint64_t ts);
/* The host of trace node node, or NULL. */
struct rp_node *rp_node_of(struct rp *rp, uint32_t node);
/* Every host ready: reading and pacing begin. */
void rp_start(struct rp *rp);

/* pv_rp_send.c: each returns 0, or -1 after rp_fail. */
/* Queues a message of type with payload w to n. */
int rp_send_msg(struct rp_node *n, uint16_t type, const struct wire_wr *w);
/* "Sent below" (DONE) at now: the time of the next line not sent. */
uint64_t rp_below(const struct rp *rp, uint64_t now);
/* Ends a collection on n: its pieces, then DONE(round, below). */
int rp_flush_node(struct rp_node *n, uint32_t round, uint64_t below);
/* Ends one on every ready host (round 0). */
void rp_flush_all(struct rp *rp, uint64_t now);
/* Sends a line read (record, #PROC, #LOSS), stamped rp_at(its time). */
int rp_send_item(struct rp *rp, struct rp_item *it);

/* pv_rp_link.c */
/* Connects host n as an LM (the handshake starts).  0, or -1 (said). */
int rp_connect(struct rp *rp, struct rp_node *n);
/* Once the trace is read (or mainmon stops) and every collection is
 * acknowledged: BYE on every connection; the loop ends when all are
 * written. */
void rp_finish(struct rp *rp);
/* The event of RP_READY_S: not every host ready in time. */
void rp_ready_timeout(evutil_socket_t fd, short what, void *arg);

#endif /* GRM_PV_REPLAY_H */
