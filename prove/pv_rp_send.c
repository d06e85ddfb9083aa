/* SPDX-License-Identifier: MIT */
/* pv_rp_send.c: what prove replay sends as an LM would: each thread's
 * records in pieces (DATA) with the definitions each process image needs,
 * #PROC lines (PROC), losses as loss records, collections ended by DONE
 * (doc/protocol.md 1.12). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pv_replay.h"
#include "net/peer.h"
#include "net/wire.h"
#include "rec/dense.h"
#include "util/clock.h"

int
rp_send_msg(struct rp_node *n, uint16_t type, const struct wire_wr *w)
{
	if (w->err || peer_send(n->peer, type, w->p, w->len, NULL, 0) != 0) {
		rp_fail(n->rp, "%s: cannot queue a message to mainmon", n->host,
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
	size_t cap = WIRE_DATA_FIELDS + REC_DENSE_MAX(t->len);
	unsigned char *m;
	struct rp_proc *p;
	struct wire_wr w;
	int own, rc;

	if (t->buf == NULL || t->len <= 24)
		return 0;
	if ((p = proc_of(n, t->pid)) == NULL)
		return -1;
	if ((m = malloc(cap)) == NULL) {
		rp_fail(n->rp, "%s: out of memory", n->host, NULL);
		return -1;
	}
	/* The LM's own loss records come from no chunk.  The records go
	 * dense, as an LM sends them. */
	own = t->pid == 0 && t->tid == 0;
	wire_wr_init(&w, m, cap);
	wire_put_data(&w, t->pid, t->tid, own ? 0 : ++p->seq,
	    own ? 0 : t->session, 0, t->buf + 24, t->len - 24);
	rc = rp_send_msg(n, WIRE_DATA, &w);
	free(m);
	if (rc != 0)
		return -1;
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
int
rp_flush_node(struct rp_node *n, uint32_t round, uint64_t below)
{
	unsigned char buf[20];
	struct wire_wr w;

	if (n->final)
		return 0;	/* mainmon is done with this host */
	if (n->state != RP_READY || send_pieces(n) != 0)
		return -1;
	wire_wr_init(&w, buf, sizeof buf);
	wire_put_u32(&w, round);
	wire_put_u64(&w, 0);
	wire_put_u64(&w, below);
	if (rp_send_msg(n, WIRE_DONE, &w) != 0)
		return -1;
	n->unacked++;
	return 0;
}

/* "Sent below": the time of the next line not sent, at most now; before
 * the replay starts, nothing known (at speed 0 records older than now
 * follow). */
uint64_t
rp_below(const struct rp *rp, uint64_t now)
{
	uint64_t b = now;

	if (!rp->started)
		return WIRE_BELOW_NONE;
	if (rp->has_next && rp_at(rp, rp->next.ts) < b)
		b = rp_at(rp, rp->next.ts);
	return b;
}

void
rp_flush_all(struct rp *rp, uint64_t now)
{
	size_t i;

	for (i = 0; i < rp->nnodes; i++)
		if (rp->nodes[i].state == RP_READY)
			rp_flush_node(&rp->nodes[i], WIRE_ROUND_PUSH,
			    rp_below(rp, now));
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
	rp_fail(rp, "out of memory%s%s", "", "");
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
		rp_fail(rp, "%s: event %s: its definition cannot be sent",
		    n->host, it->def->description);
	return -1;
oom:
	rp_fail(rp, "out of memory%s%s", "", "");
	return -1;
}

static int
send_proc(struct rp *rp, struct rp_node *n, struct rp_item *it, uint64_t ts)
{
	unsigned char buf[128];
	struct rp_proc *p;
	struct wire_wr w;

	if ((p = proc_of(n, it->pid)) == NULL) {
		rp_fail(rp, "out of memory%s%s", "", "");
		return -1;
	}
	if (it->what == WIRE_PROC_START && p->ended) {
		/* A new image, from its start's time on. */
		if (p->nstarts == p->cstarts && (p->starts = pv_grow(
		    p->starts, &p->cstarts, p->nstarts, sizeof *p->starts)) ==
		    NULL) {
			rp_fail(rp, "out of memory%s%s", "", "");
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
	if (rp_send_msg(n, WIRE_PROC, &w) != 0)
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

int
rp_send_item(struct rp *rp, struct rp_item *it)
{
	struct rp_node *n = rp_node_of(rp, it->node);
	uint64_t ts = rp_at(rp, it->ts);

	if (n == NULL || n->state != RP_READY) {
		rp_fail(rp, "%s: host not connected%s", n != NULL ? n->host :
		    "?", "");
		return -1;
	}
	if (it->kind == GRMTRACE_PROC)
		return send_proc(rp, n, it, ts);
	if (it->kind == GRMTRACE_LOSS)
		return send_loss(rp, n, it, ts);
	return send_record(rp, n, it, ts);
}
