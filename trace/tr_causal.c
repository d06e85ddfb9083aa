/* SPDX-License-Identifier: MIT */
/* tr_causal.c: the reader's causality correction (tr_causal.h): no
 * message received before it was sent, each receive moved by no more than
 * its error bound, as a controlled logical clock moves it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tr_causal.h"
#include "tr_int.h"
#include "util/ring.h"

/* A receive moved by shift (ns): its thread's records from ts on move by
 * shift, less 1 ns per TR_CAUSAL_DECAY ns after it. */
struct src {
	uint64_t	ts;
	uint64_t	shift;
};

/* A thread's receives moved, by ts. */
struct tr_cthr {
	struct src	*v;
	size_t		n, cap;
	uint64_t	smax;		/* largest shift of v */
};

/* A send or receive waiting for its other end. */
struct end {
	uint64_t	ts;
	uint64_t	bound;
	uint32_t	node, pid, tid;
};

/* Sends waiting, or receives waiting (never both), of one (sender rank,
 * receiver rank, tag): the k-th send meets the k-th receive, as mainmon
 * (mm_causal.c) and prove (pv_msg.c) match them (doc/formats.md 1.9). */
struct tr_cq {
	int		sends;
	struct ring	ends;		/* of struct end */
};

struct thr_key {
	uint32_t	node, pid, tid;
};

struct q_key {
	int64_t		src, dst, tag;
};

struct pair_key {
	uint32_t	snode, rnode;
};

static const struct hmap_type thr_type = {
	sizeof(struct thr_key), sizeof(struct tr_cthr), 64, NULL
};
static const struct hmap_type q_type = {
	sizeof(struct q_key), sizeof(struct tr_cq), 64, NULL
};
static const struct hmap_type pair_type = {
	sizeof(struct pair_key), sizeof(size_t), 16, NULL
};

int
tr_causal_init(struct tr_causal *c, const char *path)
{
	struct stat st;

	memset(c, 0, sizeof *c);
	if ((c->pairs = calloc(1, sizeof *c->pairs)) == NULL)
		return -1;
	c->np = c->capp = 1;
	hmap_init(&c->thr, &thr_type);
	hmap_init(&c->q, &q_type);
	hmap_init(&c->pix, &pair_type);
	/* Standard input can be read twice if it is a regular file read
	 * from its start: through another open file description of it. */
	if (strcmp(path, "-") == 0) {
		if (fstat(0, &st) != 0 || !S_ISREG(st.st_mode) ||
		    lseek(0, 0, SEEK_CUR) != 0)
			return 0;
		path = "/proc/self/fd/0";
	}
	if ((c->path = strdup(path)) == NULL)
		return -1;
	return 0;
}

void
tr_causal_off(struct tr_causal *c)
{
	struct tr_cthr *h;
	struct tr_cq *q;
	uint32_t it = 0;

	while ((h = hmap_next(&c->thr, &it, NULL)) != NULL)
		free(h->v);
	it = 0;
	while ((q = hmap_next(&c->q, &it, NULL)) != NULL)
		ring_free(&q->ends);
	hmap_free(&c->thr);
	hmap_free(&c->q);
	if (c->r != NULL)
		tape_rclose(c->r);
	c->r = NULL;
	tr_tables_free(&c->tab);
	free(c->path);
	c->path = NULL;
}

void
tr_causal_free(struct tr_causal *c)
{
	size_t i;

	tr_causal_off(c);
	for (i = 0; i < c->np; i++)
		free(c->pairs[i].shifts);
	free(c->pairs);
	hmap_free(&c->pix);
	memset(c, 0, sizeof *c);
}

void
tr_causal_limit(struct tr_causal *c, uint64_t off)
{
	c->limit = off;
	if (c->r != NULL)
		tr_limit(c->r, off);
	c->at_end = 0;
}

/* ---- a thread's shifts ---- */

/* The shift its receives give a record of h at ts (not capped). */
static uint64_t
thr_shift(const struct tr_cthr *h, uint64_t ts)
{
	size_t lo = 0, hi, mid;
	uint64_t best = 0, d;

	if (h == NULL || h->n == 0)
		return 0;
	for (hi = h->n; lo < hi;) {
		mid = lo + (hi - lo) / 2;
		if (h->v[mid].ts <= ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo-- > 0) {
		d = (ts - h->v[lo].ts) / TR_CAUSAL_DECAY;
		if (d >= h->smax)
			break;
		if (h->v[lo].shift > d && h->v[lo].shift - d > best)
			best = h->v[lo].shift - d;
	}
	return best;
}

static struct tr_cthr *
thr_find(const struct tr_causal *c, uint32_t node, uint32_t pid,
	 uint32_t tid)
{
	struct thr_key k = { node, pid, tid };

	return hmap_find(&c->thr, &k);
}

/* Adds a receive of a thread at ts moved by shift: 0, or -1 (ENOMEM). */
static int
thr_add(struct tr_causal *c, const struct end *r, uint64_t shift)
{
	struct thr_key k = { r->node, r->pid, r->tid };
	struct tr_cthr *h;
	struct src *nv;
	size_t i;

	if ((h = hmap_put(&c->thr, &k, NULL)) == NULL)
		return -1;
	if (h->n == h->cap) {
		size_t cap = h->cap ? 2 * h->cap : 8;

		if ((nv = realloc(h->v, cap * sizeof *nv)) == NULL)
			return -1;
		h->v = nv;
		h->cap = cap;
	}
	/* Mostly at the end: receives are matched about in time order. */
	for (i = h->n; i > 0 && h->v[i - 1].ts > r->ts; i--)
		h->v[i] = h->v[i - 1];
	h->v[i] = (struct src){ r->ts, shift };
	h->n++;
	if (shift > h->smax)
		h->smax = shift;
	return 0;
}

/* ---- the statistics ---- */

static struct tr_cpair *
pair_get(struct tr_causal *c, uint32_t snode, uint32_t rnode)
{
	struct pair_key k = { snode, rnode };
	struct tr_cpair *np;
	size_t *ix;
	int added;

	if ((ix = hmap_put(&c->pix, &k, &added)) == NULL)
		return NULL;
	if (!added)
		return &c->pairs[*ix];
	if (c->np == c->capp) {
		size_t cap = 2 * c->capp;

		if ((np = realloc(c->pairs, cap * sizeof *np)) == NULL) {
			hmap_del(&c->pix, &k);
			return NULL;
		}
		c->pairs = np;
		c->capp = cap;
	}
	*ix = c->np;
	np = &c->pairs[c->np++];
	memset(np, 0, sizeof *np);
	np->pub.send_node = snode;
	np->pub.recv_node = rnode;
	return np;
}

static void
max_to(uint64_t *m, uint64_t v)
{
	if (v > *m)
		*m = v;
}

/* What one matched pair tells the totals and its pair of hosts. */
static void
count(struct tr_cpair *p, uint64_t gap, int beyond, uint64_t excess,
      int capped, uint64_t shift)
{
	struct grmtrace_causal *g = &p->pub;
	uint64_t *ns;

	g->matched++;
	if (gap > 0) {
		g->violations++;
		max_to(&g->worst_ns, gap);
	}
	if (beyond) {
		g->beyond++;
		max_to(&g->beyond_ns, excess);
	}
	g->capped += capped;
	if (shift == 0)
		return;
	g->moved++;
	max_to(&g->max_shift_ns, shift);
	if (p->ns == p->caps) {
		size_t cap = p->caps ? 2 * p->caps : 16;

		if ((ns = realloc(p->shifts, cap * sizeof *ns)) == NULL)
			return;		/* the median leaves it out */
		p->shifts = ns;
		p->caps = cap;
	}
	p->shifts[p->ns++] = shift;
}

/*
 * Send s met receive r.  A receive stamped before its send (by the send's
 * time as corrected so far) is moved to the send's time, by no more than
 * its bound; one before it by more than the two bounds together says a
 * bound is wrong: it is left where it is.
 */
static void
matched(struct tr_causal *c, const struct end *s, const struct end *r)
{
	struct tr_cpair *p = pair_get(c, s->node, r->node);
	uint64_t gap = s->ts > r->ts ? s->ts - r->ts : 0;
	uint64_t sc, need, shift, excess = 0;
	int beyond = 0, capped = 0;

	/* What the moves of its thread's earlier receives give it. */
	shift = thr_shift(thr_find(c, r->node, r->pid, r->tid), r->ts);
	if (shift > r->bound)
		shift = r->bound;
	if (gap > s->bound + r->bound) {
		beyond = 1;
		excess = gap - s->bound - r->bound;
		goto out;
	}
	sc = thr_shift(thr_find(c, s->node, s->pid, s->tid), s->ts);
	sc = s->ts + (sc < s->bound ? sc : s->bound);
	if (sc <= r->ts)
		goto out;
	need = sc - r->ts;
	if (need > r->bound) {
		capped = 1;
		need = r->bound;
	}
	if (need > shift && thr_add(c, r, need) == 0)
		shift = need;
out:
	count(&c->pairs[0], gap, beyond, excess, capped, shift);
	if (p != NULL)
		count(p, gap, beyond, excess, capped, shift);
}

/* A send (send 1) or receive of key (src, dst, tag). */
static void
message(struct tr_causal *c, int send, int64_t src, int64_t dst, int64_t tag,
	const struct end *e)
{
	struct q_key k = { src, dst, tag };
	struct tr_cq *q = hmap_put(&c->q, &k, NULL);
	struct end o;

	if (q == NULL) {
		c->pairs[0].pub.unchecked++;
		return;
	}
	if (q->ends.n > 0 && q->sends != send) {
		ring_pop(&q->ends, &o, sizeof o);
		c->waiting--;
		/* An empty queue goes: a key per message (tags that never
		 * repeat) must not grow the map. */
		if (q->ends.n == 0) {
			ring_free(&q->ends);
			hmap_del_value(&c->q, q);
		}
		if (send)
			matched(c, e, &o);
		else
			matched(c, &o, e);
		return;
	}
	if (c->waiting >= TR_CAUSAL_MAX ||
	    ring_push(&q->ends, e, sizeof *e) != 0) {
		c->pairs[0].pub.unchecked++;
		return;
	}
	q->sends = send;
	c->waiting++;
}

/* A record the reader ahead read. */
static void
on_record(struct tr_causal *c, const struct tape_ev *e)
{
	const struct grmtrace_proc *p;
	struct end x;
	uint32_t model;

	c->last = e->ts;
	if ((e->eid != GRMTRACE_EID_MSG_SEND &&
	    e->eid != GRMTRACE_EID_MSG_RECV) || e->n < 2 ||
	    e->f[0].kind != REC_K_INT || e->f[1].kind != REC_K_INT)
		return;
	p = tr_table_find(&c->tab.procs, e->node, e->pid);
	if (p == NULL || !p->has_rank) {
		c->pairs[0].pub.unchecked++;
		return;
	}
	x = (struct end){ .ts = e->ts, .node = e->node, .pid = e->pid,
	    .tid = e->tid };
	(void)tr_tables_clock(&c->tab, e->node, e->ts, &model, &x.bound);
	max_to(&c->maxb, x.bound);
	if (e->eid == GRMTRACE_EID_MSG_SEND)
		message(c, 1, p->rank, e->f[0].v.i, e->f[1].v.i, &x);
	else
		message(c, 0, e->f[0].v.i, p->rank, e->f[1].v.i, &x);
}

/* Reads ahead until a record after ts + twice the largest bound of a
 * message end, or the end: a send that can move a receive at ts (by its
 * bound, even if that is not enough: capped) is within the two bounds of
 * it, so nothing read later can move a record at ts. */
static void
ahead(struct tr_causal *c, uint64_t ts)
{
	const char *why;
	int rc;

	if (c->path == NULL || c->failed)
		return;
	if (c->r == NULL) {
		if ((c->r = tape_ropen(c->path, &why)) == NULL) {
			c->failed = 1;
			return;
		}
		tape_rwant(c->r, TAPE_WANT(TAPE_RECORD) | TAPE_WANT(TAPE_HOST) |
		    TAPE_WANT(TAPE_SYNC) | TAPE_WANT(TAPE_PROC));
		tr_limit(c->r, c->limit);
	}
	while (!c->at_end && (c->last < ts || c->last - ts <= 2 * c->maxb)) {
		if ((rc = tape_next(c->r, &c->ev)) <= 0) {
			c->at_end = 1;
			c->failed = rc < 0;
			break;
		}
		if (tr_tables_account(&c->tab, &c->ev) != 0) {
			c->failed = 1;
			break;
		}
		if (c->ev.kind == TAPE_RECORD)
			on_record(c, &c->ev);
	}
}

uint64_t
tr_causal_shift(struct tr_causal *c, uint32_t node, uint32_t pid,
		uint32_t tid, uint64_t ts, uint64_t bound)
{
	uint64_t s;

	if (c->path == NULL)
		return 0;
	ahead(c, ts);
	if (bound == 0)
		return 0;
	s = thr_shift(thr_find(c, node, pid, tid), ts);
	if (s > bound)
		s = bound;
	if (s > 0) {
		c->rec_moved++;
		max_to(&c->rec_max, s);
	}
	return s;
}

static int
cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

const struct grmtrace_causal *
tr_causal_at(struct tr_causal *c, size_t i)
{
	struct tr_cpair *p;

	if (i >= c->np)
		return NULL;
	p = &c->pairs[i];
	p->pub.median_shift_ns = 0;
	if (p->ns > 0) {
		qsort(p->shifts, p->ns, sizeof *p->shifts, cmp_u64);
		p->pub.median_shift_ns = p->shifts[(p->ns - 1) / 2];
	}
	if (i == 0) {
		p->pub.records_moved = c->rec_moved;
		p->pub.records_max_ns = c->rec_max;
		p->pub.corrected = c->path != NULL && !c->failed;
		p->pub.complete = c->at_end && !c->failed;
	}
	return &p->pub;
}
