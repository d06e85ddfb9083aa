/* SPDX-License-Identifier: MIT */
/*
 * pv_replay.c: prove replay, BEE's event filer played back (seed 001
 * section 7.4.4): a trace's records sent into a running mainmon as if the
 * job were live, by one Local Monitor connection for each host of the
 * trace (doc/protocol.md section 1.12).
 *
 * A pre-pass reads the trace once for its hosts and its span.  Then each
 * host gets a connection that authenticates and synchronises as an LM
 * does; once all are ready, the records are read again and sent at the
 * original pace (--speed 1), X times faster, or at once (--speed 0),
 * each stamped with the time it is sent at (its original spacing divided
 * by the speed; at speed 0 the original spacing, ending now).  Every
 * 50 ms each connection ends a collection (DONE) whose "sent below" time
 * is that of the next record not yet sent; reading waits while a
 * connection has much unwritten or unacknowledged.  At the end each
 * connection waits for its ACKs and says BYE.
 *
 * Failure: a connection lost or refused, or a trace that does not read,
 * ends the replay with status 1 (what mainmon acknowledged is in its
 * trace); a final collection (mainmon stopping) too, once acknowledged.
 */
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "pv.h"
#include "net/auth.h"
#include "net/mmid.h"
#include "net/peer.h"
#include "net/wire.h"
#include "rec/rec.h"
#include "util/clock.h"
#include "util/num.h"

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

static void rp_finish(struct rp *rp);
static int connect_node(struct rp *rp, struct rp_node *n);

static void
usage(FILE *f)
{
	fprintf(f, "usage: prove replay FILE --to ID [--speed X]\n");
}

static void
help(void)
{
	usage(stdout);
	printf("\nSends the trace's records into the running mainmon ID "
	    "(HOST:PORT:TOKEN, or\n@FILE holding it) as if the job were live: "
	    "one Local Monitor connection\nfor each host of the trace, "
	    "authenticated with the token, its processes,\nthreads, "
	    "definitions, records and losses.\n\n"
	    "  --to ID     the main monitor\n"
	    "  --speed X   1: the original pace (default); 10: ten times "
	    "faster; 0: as\n              fast as possible (times keep their "
	    "original spacing)\n\n"
	    "mainmon's own lines (#SYNC, #ORDER, #CONTROL, #STATS, ...) and "
	    "records\n(collection phases) are not sent: the receiving mainmon "
	    "writes its own.\nFILE must be a file (read twice), not standard "
	    "input.\n");
}

static void
fail(struct rp *rp, const char *fmt, const char *a, const char *b)
{
	if (!rp->failed) {
		fflush(stdout);
		fprintf(stderr, "prove replay: ");
		fprintf(stderr, fmt, a, b);
		fputc('\n', stderr);
	}
	rp->failed = 1;
	event_base_loopbreak(rp->base);
}

/* Our clock's time for trace time ts. */
static uint64_t
at(const struct rp *rp, uint64_t ts)
{
	double d = ts > rp->t0 ? (double)(ts - rp->t0) : 0;

	if (rp->speed > 0)
		d /= rp->speed;
	return rp->start + (uint64_t)d;
}

static struct rp_node *
node_of(struct rp *rp, uint32_t node)
{
	size_t i;

	for (i = 0; i < rp->nnodes; i++)
		if (rp->nodes[i].node == node)
			return &rp->nodes[i];
	return NULL;
}

/* ---- sending ---- */

static int
send_msg(struct rp_node *n, uint16_t type, const struct wire_wr *w)
{
	if (w->err || peer_send(n->peer, type, w->p, w->len, NULL, 0) != 0) {
		fail(n->rp, "%s: cannot queue a message to mainmon", n->host,
		    NULL);
		return -1;
	}
	return 0;
}

static struct rp_proc *
proc_of(struct rp_node *n, uint32_t pid)
{
	struct rp_proc *p = pv_map_get(&n->procs, pid, 0, sizeof *p);

	if (p != NULL && p->session == 0)
		p->session = p->rsession = 1;
	return p;
}

/* Sends thread t's piece as a DATA message (the collection's DONE comes
 * with the next flush). */
static int
send_piece(struct rp_node *n, struct rp_thr *t)
{
	struct rp_proc *p;
	struct wire_wr w;

	if (t->buf == NULL || t->len <= 24)
		return 0;
	if ((p = proc_of(n, t->pid)) == NULL)
		return -1;
	wire_wr_init(&w, t->buf, 24);
	wire_put_u32(&w, t->pid);
	wire_put_u32(&w, t->tid);
	/* The LM's own loss records come from no chunk. */
	wire_put_u64(&w, t->pid == 0 && t->tid == 0 ? 0 : ++p->seq);
	wire_put_u32(&w, t->pid == 0 && t->tid == 0 ? 0 : t->session);
	wire_put_u32(&w, 0);
	if (peer_send(n->peer, WIRE_DATA, t->buf, t->len, NULL, 0) != 0) {
		fail(n->rp, "%s: cannot queue a message to mainmon", n->host,
		    NULL);
		return -1;
	}
	/* Memory for the threads that have records now only. */
	free(t->buf);
	t->buf = NULL;
	t->len = t->cap = 0;
	return 0;
}

/* Every piece of n's threads sent. */
static int
send_pieces(struct rp_node *n)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < n->ndirty; i++) {
		if (send_piece(n, n->dirty[i]) != 0)
			rc = -1;
		n->dirty[i]->dirty = 0;
	}
	n->ndirty = 0;
	return rc;
}

/* Ends a collection: the pieces, then DONE(round, below). */
static int
flush_node(struct rp_node *n, uint32_t round, uint64_t below)
{
	unsigned char buf[20];
	struct wire_wr w;

	if (n->state != RP_READY || send_pieces(n) != 0)
		return -1;
	wire_wr_init(&w, buf, sizeof buf);
	wire_put_u32(&w, round);
	wire_put_u64(&w, 0);
	wire_put_u64(&w, below);
	if (send_msg(n, WIRE_DONE, &w) != 0)
		return -1;
	n->unacked++;
	return 0;
}

/* "Sent below": the time of the next line not sent, at most now; before
 * the replay starts, nothing known (at speed 0 records older than now
 * follow). */
static uint64_t
below(const struct rp *rp, uint64_t now)
{
	uint64_t b = now;

	if (!rp->started)
		return WIRE_BELOW_NONE;
	if (rp->has_next && at(rp, rp->next.ts) < b)
		b = at(rp, rp->next.ts);
	return b;
}

static void
flush_all(struct rp *rp, uint64_t now)
{
	size_t i;

	for (i = 0; i < rp->nnodes; i++)
		if (rp->nodes[i].state == RP_READY)
			flush_node(&rp->nodes[i], WIRE_ROUND_PUSH,
			    below(rp, now));
	rp->last_flush = now;
}

/* The thread piece of (node, pid, tid), made if new. */
static struct rp_thr *
thr_of(struct rp *rp, struct rp_node *n, uint32_t pid, uint32_t tid)
{
	struct rp_thr *t;

	t = pv_map_get(&rp->threads, n->node, (uint64_t)pid << 32 | tid,
	    sizeof *t);
	if (t == NULL)
		return NULL;
	if (t->buf == NULL) {
		if ((t->buf = malloc(4096)) == NULL)
			return NULL;
		t->cap = 4096;
		t->len = 24;
		t->pid = pid;
		t->tid = tid;
	}
	return t;
}

/* Appends rec[len] to the piece of (pid, tid). */
static int
append(struct rp *rp, struct rp_node *n, uint32_t pid, uint32_t tid,
       uint32_t session, const void *rec, size_t len)
{
	struct rp_thr *t;
	unsigned char *b;
	size_t cap;

	if ((t = thr_of(rp, n, pid, tid)) == NULL)
		goto oom;
	if ((t->len - 24 + len > RP_PIECE_MAX || t->session != session) &&
	    send_piece(n, t) != 0)
		return -1;
	if (t->buf == NULL && thr_of(rp, n, pid, tid) == NULL)
		goto oom;	/* sent: a new buffer */
	t->session = session;
	if (t->len + len > t->cap) {
		cap = t->cap;
		while (cap < t->len + len)
			cap *= 2;
		if ((b = realloc(t->buf, cap)) == NULL)
			goto oom;
		t->buf = b;
		t->cap = cap;
	}
	memcpy(t->buf + t->len, rec, len);
	t->len += len;
	if (!t->dirty) {
		if (n->ndirty == n->cdirty && (n->dirty = pv_grow(n->dirty,
		    &n->cdirty, n->ndirty, sizeof *n->dirty)) == NULL)
			goto oom;
		n->dirty[n->ndirty++] = t;
		t->dirty = 1;
	}
	return 0;
oom:
	fail(rp, "out of memory%s%s", "", "");
	return -1;
}

/* A record: its definition first, if this image has not had it. */
static int
send_record(struct rp *rp, struct rp_node *n, struct rp_item *it,
	    uint64_t ts)
{
	unsigned char d[REC_MAX];
	struct rp_proc *p;
	struct rp_def *k;
	size_t len;

	if ((p = proc_of(n, it->pid)) == NULL)
		goto oom;
	while (p->nstarts > 0 && it->ts >= p->starts[0].ts) {
		p->rsession = p->starts[0].session;
		memmove(p->starts, p->starts + 1,
		    --p->nstarts * sizeof *p->starts);
	}
	if (it->def->eid < 0 && it->def->eid >= REC_EID_PREDEF_MIN)
		goto rec;	/* predefined: mainmon knows it */
	if ((k = pv_map_get(&p->defs, (uint64_t)(int64_t)it->def->eid,
	    p->rsession, sizeof *k)) == NULL)
		goto oom;
	if (k->def != it->def) {
		len = rec_build_define(d, it->def->eid, it->def->cls,
		    it->def->attr, it->def->format, it->def->description, ts);
		if (len == 0 || append(rp, n, it->pid, it->tid, p->rsession, d,
		    len) != 0)
			goto bad;
		k->def = it->def;
	}
rec:
	memcpy(it->rec + offsetof(struct rec_hdr, ts), &ts, sizeof ts);
	if (append(rp, n, it->pid, it->tid, p->rsession, it->rec,
	    it->len) != 0)
		return -1;
	rp->records++;
	return 0;
bad:
	if (!rp->failed)
		fail(rp, "%s: event %s: its definition cannot be sent",
		    n->host, it->def->description);
	return -1;
oom:
	fail(rp, "out of memory%s%s", "", "");
	return -1;
}

static int
send_proc(struct rp *rp, struct rp_node *n, struct rp_item *it, uint64_t ts)
{
	unsigned char buf[128];
	struct rp_proc *p;
	struct wire_wr w;

	if ((p = proc_of(n, it->pid)) == NULL) {
		fail(rp, "out of memory%s%s", "", "");
		return -1;
	}
	if (it->what == WIRE_PROC_START && p->ended) {
		/* A new image, from its start's time on. */
		if (p->nstarts == p->cstarts && (p->starts = pv_grow(
		    p->starts, &p->cstarts, p->nstarts, sizeof *p->starts)) ==
		    NULL) {
			fail(rp, "out of memory%s%s", "", "");
			return -1;
		}
		p->session++;
		p->starts[p->nstarts].ts = it->ts;
		p->starts[p->nstarts++].session = p->session;
		p->ended = 0;
	} else if (it->what != WIRE_PROC_START)
		p->ended = 1;
	wire_wr_init(&w, buf, sizeof buf);
	wire_put_u32(&w, it->pid);
	wire_put_u32(&w, it->ppid);
	wire_put_u32(&w, it->what);
	wire_put_u32(&w, it->status);
	wire_put_u64(&w, ts);
	wire_put_str(&w, it->name);
	wire_put_u32(&w, p->session);
	if (send_msg(n, WIRE_PROC, &w) != 0)
		return -1;
	rp->procs++;
	return 0;
}

static int
send_loss(struct rp *rp, struct rp_node *n, struct rp_item *it, uint64_t ts)
{
	unsigned char rec[32];
	struct rp_proc *p;
	uint64_t zero = 0;

	rec_put_hdr(rec, sizeof rec, REC_CLASS_META, REC_ATTR_LOSS, 0, ts);
	memcpy(rec + 16, &it->count, 8);
	memcpy(rec + 24, &zero, 8);
	if ((p = proc_of(n, it->pid)) == NULL ||
	    append(rp, n, it->pid, it->tid, p->rsession, rec, sizeof rec) != 0)
		return -1;
	rp->losses++;
	rp->lost += it->count;
	return 0;
}

static int
send_item(struct rp *rp, struct rp_item *it)
{
	struct rp_node *n = node_of(rp, it->node);
	uint64_t ts = at(rp, it->ts);

	if (n == NULL || n->state != RP_READY) {
		fail(rp, "%s: host not connected%s", n != NULL ? n->host :
		    "?", "");
		return -1;
	}
	if (it->kind == GRMTRACE_PROC)
		return send_proc(rp, n, it, ts);
	if (it->kind == GRMTRACE_LOSS)
		return send_loss(rp, n, it, ts);
	return send_record(rp, n, it, ts);
}

/* ---- reading ---- */

/* A record's bytes, stamp left for later; -1 if it does not fit. */
static int
encode(struct rp_item *it, const struct grmtrace_ev *ev)
{
	size_t len = sizeof(struct rec_hdr), sl;
	uint32_t l32;
	unsigned i;

	for (i = 0; i < ev->n; i++) {
		if (ev->f[i].type != GRMTRACE_STRING) {
			if (len + 8 > REC_MAX)
				return -1;
			memcpy(it->rec + len, &ev->f[i].v, 8);
			len += 8;
			continue;
		}
		sl = ev->f[i].v.s.len;
		if (sl > REC_STR_MAX || len + rec_str_size(sl) > REC_MAX)
			return -1;
		l32 = (uint32_t)sl;
		memcpy(it->rec + len, &l32, 4);
		memcpy(it->rec + len + 4, ev->f[i].v.s.p, sl);
		memset(it->rec + len + 4 + sl, 0, rec_str_size(sl) - 4 - sl);
		len += rec_str_size(sl);
	}
	rec_put_hdr(it->rec, len, ev->def->cls, ev->def->attr, ev->eid, 0);
	it->len = len;
	return 0;
}

/* Reads the next line to send into rp->next.  1, 0 at the end, -1. */
static int
read_next(struct rp *rp)
{
	static const uint32_t what[] = {
		[GRMTRACE_PROC_START] = WIRE_PROC_START,
		[GRMTRACE_PROC_EXIT] = WIRE_PROC_EXIT,
		[GRMTRACE_PROC_KILLED] = WIRE_PROC_KILLED,
		[GRMTRACE_PROC_EXEC] = WIRE_PROC_EXEC,
		[GRMTRACE_PROC_GONE] = WIRE_PROC_GONE
	};
	const struct grmtrace_ev *ev;
	struct rp_item *it = &rp->next;
	int rc;

	while ((rc = grmtrace_next(rp->r, &ev)) == 1) {
		it->kind = ev->kind;
		it->node = ev->node;
		it->pid = ev->pid;
		it->tid = ev->tid;
		it->ts = ev->ts;
		it->def = ev->def;
		switch (ev->kind) {
		case GRMTRACE_RECORD:
			if (ev->pid == 0) {
				rp->skipped++;
				continue;
			}
			if (encode(it, ev) != 0) {
				rp->skipped++;
				continue;
			}
			return 1;
		case GRMTRACE_PROC:
			if (ev->how < 0 || ev->how > GRMTRACE_PROC_GONE)
				continue;	/* no such line is read */
			it->what = what[ev->how];
			it->ppid = ev->ppid;
			it->status = (uint32_t)ev->status;
			snprintf(it->name, sizeof it->name, "%.*s",
			    (int)ev->str_len, ev->str != NULL ? ev->str : "");
			return 1;
		case GRMTRACE_LOSS:
			it->count = ev->count;
			return 1;
		case GRMTRACE_STATS_COUNT:
		case GRMTRACE_STATS_RANGE:
			rp->stats++;
			continue;
		default:
			rp->control++;
			continue;
		}
	}
	if (rc < 0) {
		fail(rp, "%s: %s", rp->path, grmtrace_error(rp->r));
		return -1;
	}
	return 0;
}

static int
congested(const struct rp *rp)
{
	size_t i;

	for (i = 0; i < rp->nnodes; i++)
		if (rp->nodes[i].state == RP_READY &&
		    (peer_pending(rp->nodes[i].peer) > RP_PENDING_MAX ||
		    rp->nodes[i].unacked > RP_UNACKED_MAX))
			return 1;
	return 0;
}

static void
tick_cb(evutil_socket_t fd, short what, void *arg)
{
	struct rp *rp = arg;
	uint64_t now = clk_mono_ns();
	unsigned n = 0;
	int rc;

	(void)fd;
	(void)what;
	if (rp->eof || rp->stopped)
		return;
	while (!congested(rp) && n < 100000) {
		if (!rp->has_next) {
			if ((rc = read_next(rp)) < 0)
				return;
			if (rc == 0) {
				rp->eof = 1;
				break;
			}
			rp->has_next = 1;
		}
		if (at(rp, rp->next.ts) > now)
			break;
		rp->has_next = 0;
		if (send_item(rp, &rp->next) != 0)
			return;
		n++;
	}
	if (rp->eof) {
		flush_all(rp, clk_mono_ns());
		rp_finish(rp);
		return;
	}
	if (now - rp->last_flush >= RP_FLUSH_NS || n >= 100000)
		flush_all(rp, now);
	event_add(rp->tick, &(struct timeval){ 0,
	    n >= 100000 ? 0 : RP_TICK_US });
}

/* ---- the connections ---- */

static void
start(struct rp *rp)
{
	uint64_t now = clk_mono_ns();

	rp->started = 1;
	rp->began = now;
	/* At speed 0, the original spacing, ending now. */
	rp->start = rp->speed > 0 ? now : now - (rp->t1 - rp->t0) - 1;
	if (rp->speed == 0 && rp->t1 - rp->t0 >= now - 1)
		rp->start = 2;	/* spans more than our clock has run */
	rp->last_flush = now;
	event_add(rp->tick, &(struct timeval){ 0, 0 });
}

static void
bye_flushed(struct peer *p, void *arg)
{
	struct rp_node *n = arg;
	struct rp *rp = n->rp;
	size_t i;

	(void)p;
	peer_free(n->peer);
	n->peer = NULL;
	n->state = RP_GONE;
	for (i = 0; i < rp->nnodes; i++)
		if (rp->nodes[i].state != RP_GONE)
			return;
	event_base_loopbreak(rp->base);
}

/* Once everything is acknowledged: BYE on every connection. */
static void
rp_finish(struct rp *rp)
{
	struct rp_node *n;
	size_t i;

	if (!rp->eof && !rp->stopped)
		return;
	for (i = 0; i < rp->nnodes; i++)
		if (rp->nodes[i].state == RP_READY &&
		    rp->nodes[i].unacked > 0)
			return;
	for (i = 0; i < rp->nnodes; i++) {
		n = &rp->nodes[i];
		if (n->state != RP_READY)
			continue;
		n->state = RP_BYE;
		if (peer_send(n->peer, WIRE_BYE, NULL, 0, NULL, 0) != 0) {
			fail(rp, "%s: cannot queue a message to mainmon",
			    n->host, NULL);
			return;
		}
		peer_on_flushed(n->peer, bye_flushed);
	}
}

static void
handshake(struct rp_node *n, uint16_t type, struct wire_rd *msg)
{
	char text[160];
	uint32_t node;

	switch (peer_auth(n->peer, &n->auth, type, msg, &node, text,
	    sizeof text)) {
	case AUTH_MORE:
		return;
	case AUTH_OK:
		n->state = RP_SYNC;
		/* One after the other: a new mainmon numbers the hosts
		 * (nodes) in the trace's order. */
		if (n + 1 < n->rp->nodes + n->rp->nnodes &&
		    connect_node(n->rp, n + 1) != 0)
			fail(n->rp, "%s: cannot connect%s", n[1].host, "");
		return;
	case AUTH_REFUSED:
	case AUTH_DENIED:
		fail(n->rp, "mainmon at %s refused: %s", n->rp->id.hostport,
		    text);
		return;
	case AUTH_IMPOSTOR:
		fail(n->rp, "%s is not the main monitor we were given: it "
		    "did not prove the token%s", n->rp->id.hostport, "");
		return;
	case AUTH_BAD:
		fail(n->rp, "%s: %s out of place during authentication",
		    n->host, wire_type_name(type));
		return;
	}
}

/* Answers what mainmon asks of an LM. */
static void
dispatch(struct peer *p, uint16_t type, struct wire_rd *msg,
	 const char *why, void *arg)
{
	struct rp_node *n = arg;
	struct rp *rp = n->rp;
	unsigned char buf[160];
	char bad[160];
	struct wire_wr w;
	uint32_t round, flags;
	size_t i;

	(void)p;
	wire_wr_init(&w, buf, sizeof buf);
	if (msg == NULL) {
		/* After BYE, or a final collection: mainmon is done. */
		if (n->state == RP_BYE || (rp->stopped && n->unacked == 0)) {
			bye_flushed(n->peer, n);
			return;
		}
		fail(rp, "%s: connection to mainmon lost: %s", n->host, why);
		return;
	}
	if (wire_check(type, WIRE_BY_MM, WIRE_BY_LM,
	    n->state == RP_CONNECTING ? WIRE_ST_AUTH :
	    n->state == RP_SYNC ? WIRE_ST_SYNC : WIRE_ST_READY,
	    wire_rd_left(msg), bad, sizeof bad) != 0) {
		fail(rp, "%s: %s", n->host, bad);
		return;
	}
	if (n->state == RP_CONNECTING) {
		handshake(n, type, msg);
		return;
	}
	switch (type) {
	case WIRE_PING:
		wire_put_u64(&w, wire_get_u64(msg));
		wire_put_u64(&w, clk_mono_ns());
		send_msg(n, WIRE_PONG, &w);
		break;
	case WIRE_READY:
		(void)wire_get_u32(msg);	/* both schemes are answered */
		n->state = RP_READY;
		for (i = 0; i < rp->nnodes; i++)
			if (rp->nodes[i].state != RP_READY)
				break;
		if (i == rp->nnodes && !rp->started)
			start(rp);
		break;
	case WIRE_COLLECT:
		round = wire_get_u32(msg);
		flags = wire_get_u32(msg);
		if (flags & WIRE_COLLECT_STOP) {
			if (!rp->eof && !rp->stopped) {
				fflush(stdout);
				fprintf(stderr, "prove replay: mainmon "
				    "stopped: the replay ends early\n");
			}
			rp->stopped = 1;
		}
		flush_node(n, round, below(rp, clk_mono_ns()));
		/* The other hosts' pieces too: all that was read is sent. */
		if (rp->stopped)
			flush_all(rp, clk_mono_ns());
		break;
	case WIRE_CONTROL:
		/* Replayed records are not filtered: acknowledged as
		 * applied. */
		wire_put_u32(&w, wire_get_u32(msg));
		wire_put_u64(&w, clk_mono_ns());
		msg->off = msg->len;
		send_msg(n, WIRE_CONTROL_ACK, &w);
		break;
	case WIRE_STATUS:
		wire_put_u32(&w, wire_get_u32(msg));
		wire_put_u64(&w, (uint64_t)getpid());
		for (i = 1; i < WIRE_STATUS_FIELDS; i++)
			wire_put_u64(&w, 0);
		send_msg(n, WIRE_STATUS_REPLY, &w);
		break;
	case WIRE_ACK:
		(void)wire_get_u32(msg);
		if (n->unacked > 0)
			n->unacked--;
		rp_finish(rp);
		break;
	case WIRE_WRITTEN:
		msg->off = msg->len;	/* pieces are not kept: nothing to
					   free early */
		break;
	case WIRE_PAUSE:
		/* No process to stop: all stopped at once. */
		wire_put_u32(&w, wire_get_u32(msg));
		(void)wire_get_u32(msg);
		wire_put_u32(&w, 0);
		wire_put_u32(&w, 0);
		wire_put_u64(&w, clk_mono_ns());
		wire_put_u64(&w, 0);
		send_msg(n, WIRE_PAUSED, &w);
		break;
	case WIRE_RESUME:
		wire_put_u32(&w, wire_get_u32(msg));
		wire_put_u32(&w, 0);
		wire_put_u32(&w, REC_COLL_END_ASKED);
		wire_put_u64(&w, clk_mono_ns());
		send_msg(n, WIRE_RESUMED, &w);
		break;
	default:
		fail(rp, "%s: unexpected %s from mainmon", n->host,
		    wire_type_name(type));
		return;
	}
	if (!wire_rd_ok(msg))
		fail(rp, "%s: malformed %s from mainmon", n->host,
		    wire_type_name(type));
}

static int
connect_node(struct rp *rp, struct rp_node *n)
{
	unsigned char rnd[WIRE_NONCE];
	const char *why;

	n->rp = rp;
	if (auth_nonce(rnd) != 0)
		return -1;
	memcpy(&n->seg_id, rnd, sizeof n->seg_id);
	n->seg_id |= 1;		/* never 0: 0 is no segment */
	n->peer = peer_connect(rp->base, rp->id.hostport, dispatch, n, &why);
	if (n->peer == NULL) {
		fprintf(stderr, "prove replay: %s: %s\n", rp->id.hostport,
		    why);
		return -1;
	}
	if (peer_send_hello_as(n->peer, &n->auth, rp->id.token,
	    WIRE_ROLE_LM, n->seg_id, n->host) != 0) {
		fprintf(stderr, "prove replay: cannot start the handshake\n");
		return -1;
	}
	return 0;
}

static int
node_cmp(const void *a, const void *b)
{
	const struct rp_node *x = a, *y = b;

	return pv_cmp(x->node, y->node);
}

/* The pre-pass: hosts, first and last record. */
static int
prepass(struct rp *rp)
{
	const struct grmtrace_host *h;
	const struct grmtrace_ev *ev;
	struct rp_node *n;
	int rc, any = 0;
	size_t i;

	if ((rp->r = pv_open(rp->path)) == NULL)
		return -1;
	grmtrace_select(rp->r, GRMTRACE_WANT(GRMTRACE_PROC) |
	    GRMTRACE_WANT(GRMTRACE_LOSS));
	while ((rc = grmtrace_next(rp->r, &ev)) == 1) {
		if (ev->kind == GRMTRACE_RECORD && ev->pid == 0)
			continue;
		if (!any || ev->ts < rp->t0)
			rp->t0 = ev->ts;
		if (!any || ev->ts > rp->t1)
			rp->t1 = ev->ts;
		any = 1;
		if (node_of(rp, ev->node) != NULL)
			continue;
		if ((n = realloc(rp->nodes, (rp->nnodes + 1) * sizeof *n)) ==
		    NULL) {
			fprintf(stderr, "prove replay: out of memory\n");
			return -1;
		}
		rp->nodes = n;
		n = &rp->nodes[rp->nnodes++];
		memset(n, 0, sizeof *n);
		n->node = ev->node;
	}
	if (rc < 0) {
		pv_fail(rp->path, rp->r);
		rp->r = NULL;
		return -1;
	}
	qsort(rp->nodes, rp->nnodes, sizeof *rp->nodes, node_cmp);
	for (i = 0; i < rp->nnodes; i++) {
		n = &rp->nodes[i];
		n->rp = rp;
		h = grmtrace_host(rp->r, n->node);
		if (h != NULL && h->hostname != NULL && h->hostname[0] != '\0')
			snprintf(n->host, sizeof n->host, "%s", h->hostname);
		else
			snprintf(n->host, sizeof n->host, "node%" PRIu32,
			    n->node);
	}
	grmtrace_close(rp->r);
	/* Read again, meta lines too, for the replay. */
	if ((rp->r = pv_open(rp->path)) == NULL)
		return -1;
	grmtrace_select(rp->r, GRMTRACE_WANT(GRMTRACE_PROC) |
	    GRMTRACE_WANT(GRMTRACE_LOSS) | GRMTRACE_WANT(GRMTRACE_STATS_COUNT) |
	    GRMTRACE_WANT(GRMTRACE_STATS_RANGE) |
	    GRMTRACE_WANT(GRMTRACE_CONTROL));
	return any ? 0 : 1;
}

static void
ready_timeout(evutil_socket_t fd, short what, void *arg)
{
	struct rp *rp = arg;

	(void)fd;
	(void)what;
	if (!rp->started)
		fail(rp, "%s: not every host connected and synchronised "
		    "within %s s", rp->id.hostport, "30");
}

static void
rp_free(struct rp *rp)
{
	struct rp_thr *t;
	struct rp_proc *p;
	uint32_t it = 0, jt;
	size_t i;

	for (i = 0; i < rp->nnodes; i++) {
		if (rp->nodes[i].peer != NULL)
			peer_free(rp->nodes[i].peer);
		free(rp->nodes[i].dirty);
		jt = 0;
		while ((p = pv_map_next(&rp->nodes[i].procs, &jt)) != NULL) {
			pv_map_free(&p->defs, NULL);
			free(p->starts);
		}
		pv_map_free(&rp->nodes[i].procs, NULL);
	}
	while ((t = pv_map_next(&rp->threads, &it)) != NULL)
		free(t->buf);
	pv_map_free(&rp->threads, NULL);
	free(rp->nodes);
	if (rp->tick != NULL)
		event_free(rp->tick);
	grmtrace_close(rp->r);
}

int
pv_replay(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "to", required_argument, NULL, 't' },
		{ "speed", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	char idbuf[MMID_MAX], msgbuf[NUM_MSG_MAX];
	const char *to = NULL, *why;
	struct event *timeout = NULL;
	struct rp rp;
	double secs;
	int c, rc, status = 2;

	memset(&rp, 0, sizeof rp);
	rp.speed = 1;
	signal(SIGPIPE, SIG_IGN);
	while ((rc = pv_getopt(argc, argv, "replay", ":h", longopts, &c)) >
	    0) {
		switch (c) {
		case 'h':
			help();
			return pv_flush();
		case 't':
			to = optarg;
			break;
		case 's':
			if (num_parse_double(optarg, 0, 1e9, &rp.speed) != 0) {
				fprintf(stderr, "prove replay: %s\n",
				    num_msg(msgbuf, sizeof msgbuf, "--speed",
				    optarg, "a speed (0: as fast as "
				    "possible, 1: the original pace)"));
				return 2;
			}
			break;
		}
	}
	if (rc < 0 || optind != argc - 1 || to == NULL) {
		if (rc >= 0 && to == NULL)
			fprintf(stderr, "prove replay: --to ID is needed\n");
		usage(stderr);
		return 2;
	}
	rp.path = argv[optind];
	if (strcmp(rp.path, "-") == 0) {
		fprintf(stderr, "prove replay: the trace is read twice: give "
		    "a file, not standard input\n");
		return 2;
	}
	if (mmid_read(to, idbuf, sizeof idbuf, &why) != 0 ||
	    mmid_parse(idbuf, &rp.id, &why) != 0) {
		fprintf(stderr, "prove replay: --to %s: %s\n",
		    to[0] == '@' ? to : "ID", why);
		return 2;
	}
	status = 1;
	if ((rc = prepass(&rp)) != 0) {
		if (rc > 0) {
			printf("prove replay: %s: no record to replay\n",
			    rp.path);
			status = pv_flush();
		}
		goto out;
	}
	if ((rp.base = event_base_new()) == NULL ||
	    (rp.tick = evtimer_new(rp.base, tick_cb, &rp)) == NULL ||
	    (timeout = evtimer_new(rp.base, ready_timeout, &rp)) == NULL) {
		fprintf(stderr, "prove replay: cannot make the event loop\n");
		goto out;
	}
	if (connect_node(&rp, &rp.nodes[0]) != 0)
		goto out;
	event_add(timeout, &(struct timeval){ RP_READY_S, 0 });
	event_base_dispatch(rp.base);
	if (rp.failed)
		goto out;
	secs = (double)(clk_mono_ns() - rp.began) / 1e9;
	printf("prove replay: %" PRIu64 " records, %" PRIu64 " process "
	    "lines, %" PRIu64 " loss lines (%" PRIu64 " events) from %zu "
	    "hosts in %.3f s\n", rp.records, rp.procs, rp.losses, rp.lost,
	    rp.nnodes, secs);
	if (rp.skipped + rp.stats + rp.control > 0)
		printf("prove replay: not replayed: %" PRIu64 " records of "
		    "mainmon's own or too long, %" PRIu64 " #STATS lines, %"
		    PRIu64 " #CONTROL lines\n", rp.skipped, rp.stats,
		    rp.control);
	status = rp.stopped && !rp.eof ? 1 : pv_flush();
out:
	if (timeout != NULL)
		event_free(timeout);
	rp_free(&rp);
	if (rp.base != NULL)
		event_base_free(rp.base);
	return status;
}
