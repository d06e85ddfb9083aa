/* SPDX-License-Identifier: MIT */
/* mm_causal.c: the causality check: a message received before it was sent,
 * once both ends are on mainmon's clock, says the clock correction is
 * wrong by at least that much; by more than the two records' bounds
 * together, that a bound was wrong (counted, and said in the log).
 * Records come here in time order. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mm.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/ring.h"

/* A send or receive waiting for its other end: its time, its node and
 * the bound of its time (UINT64_MAX: not known). */
struct end {
	uint64_t	ts;
	uint64_t	bound;
	uint32_t	node;
};

/* A process: what its rank is kept by (no padding). */
struct rank_key {
	uint32_t	node;
	uint32_t	pid;
};

/* Messages of one key: what their queue is kept by. */
struct q_key {
	int64_t		src;
	int64_t		dst;
	int64_t		tag;
};

/* Sends without their receive yet, or receives without their send (never
 * both), of one (sender rank, receiver rank, tag): the k-th send matches
 * the k-th receive, as prove matches them (doc/formats.md 1.9). */
struct mm_causal_q {
	int		sends;		/* what waits: 1 sends, 0 receives */
	struct ring	ends;		/* of struct end */
};

/* A model a node published: it converted the node's records from `from`
 * on, up to the next one's `from` (doc/formats.md #SYNC); its bound. */
struct clk_m {
	uint64_t	from;
	uint64_t	err, allow_ppb, lo, hi;
};

/* A node's models, oldest first, and the windows of its latest clock
 * steps (mm_causal_step). */
#define MM_CAUSAL_STEPS	4
struct mm_causal_clk {
	struct clk_m	*v;
	uint32_t	n, cap;
	struct {
		uint64_t	lo, hi, add;
	}		st[MM_CAUSAL_STEPS];
	uint32_t	nst;		/* steps seen: the latest kept */
};

/* A pair of hosts (sending node, receiving node). */
struct pair_key {
	uint32_t	snode;
	uint32_t	rnode;
};

/* The warnings of a pair of hosts: the latest said, and those since. */
struct mm_causal_warn {
	uint64_t	at;		/* clk_mono_ns; 0: none yet */
	uint64_t	since;		/* beyond the bounds, not said */
};

static uint32_t
rank_hash(const void *key)
{
	struct rank_key k;

	memcpy(&k, key, sizeof k);
	return (k.node * 31u + k.pid) * 2654435761u;
}

static uint32_t
q_hash(const void *key)
{
	struct q_key k;
	uint64_t h;

	memcpy(&k, key, sizeof k);
	h = (uint64_t)k.src * 0x9e3779b97f4a7c15u ^
	    (uint64_t)k.dst * 0xc2b2ae3d27d4eb4fu ^
	    (uint64_t)k.tag * 0x165667b1u;
	return (uint32_t)(h ^ h >> 29);
}

static const struct hmap_type ranks_type = {
	sizeof(struct rank_key), sizeof(int64_t), 256, rank_hash
};
static const struct hmap_type queues_type = {
	sizeof(struct q_key), sizeof(struct mm_causal_q), 256, q_hash
};
static const struct hmap_type clocks_type = {
	sizeof(uint32_t), sizeof(struct mm_causal_clk), 16, NULL
};
static const struct hmap_type warned_type = {
	sizeof(struct pair_key), sizeof(struct mm_causal_warn), 16, NULL
};

/* The rank of a process, NULL if it has none (create: a new one, 0; NULL
 * if out of memory). */
static int64_t *
rank_of(struct mm_causal *g, uint32_t node, uint32_t pid, int create)
{
	struct rank_key k = { node, pid };

	if (!create)
		return hmap_find(&g->ranks, &k);
	if (g->ranks.type == NULL)
		hmap_init(&g->ranks, &ranks_type);
	return hmap_put(&g->ranks, &k, NULL);
}

/* The queue of a key, new if absent; NULL if out of memory.  Valid until
 * the next q_get. */
static struct mm_causal_q *
q_get(struct mm_causal *g, int64_t src, int64_t dst, int64_t tag)
{
	struct q_key k = { src, dst, tag };

	if (g->queues.type == NULL)
		hmap_init(&g->queues, &queues_type);
	return hmap_put(&g->queues, &k, NULL);
}

/* The bound of node's record at ts: that of the model whose range it
 * falls in (or the oldest kept, for one before them all); UINT64_MAX if
 * the node published none. */
static uint64_t
bound_at(struct mm_causal *g, uint32_t node, uint64_t ts)
{
	const struct mm_causal_clk *k = g->clocks.type != NULL ?
	    hmap_find(&g->clocks, &node) : NULL;
	uint64_t b, add = 0;
	uint32_t i;

	if (k == NULL || k->n == 0)
		return UINT64_MAX;
	for (i = k->n - 1; i > 0 && k->v[i].from > ts; i--)
		;
	b = clk_bound_ns(k->v[i].err, k->v[i].allow_ppb, k->v[i].lo,
	    k->v[i].hi, ts);
	for (i = 0; i < k->nst && i < MM_CAUSAL_STEPS; i++)
		if (ts >= k->st[i].lo && ts <= k->st[i].hi &&
		    k->st[i].add > add)
			add = k->st[i].add;
	return b > UINT64_MAX - add ? UINT64_MAX : b + add;
}

static const char *
host_of(const struct mm *mm, uint32_t node, char *buf, size_t cap)
{
	const struct mm_node *n;

	for (n = mm->nodes; n != NULL; n = n->next)
		if (n->id == node)
			return n->host;
	snprintf(buf, cap, "node %u", node);
	return buf;
}

/* A receive r before its send s by more than their bounds together:
 * counted; said once per pair of hosts every MM_CAUSAL_LOG_NS. */
static void
beyond(struct mm *mm, const struct end *s, const struct end *r)
{
	struct mm_causal *g = &mm->causal;
	struct pair_key k = { s->node, r->node };
	struct mm_causal_warn *w;
	char sb[32], rb[32];
	uint64_t now = clk_mono_ns();

	g->beyond++;
	if (g->warned.type == NULL)
		hmap_init(&g->warned, &warned_type);
	w = hmap_put(&g->warned, &k, NULL);
	if (w != NULL && w->at != 0 && now - w->at < MM_CAUSAL_LOG_NS) {
		w->since++;
		return;
	}
	log_warn("causality: a message from %s to %s received %llu ns before "
	    "it was sent, beyond the clock bounds (%llu + %llu ns): a bound "
	    "is wrong (%llu more between these hosts since the last warning)",
	    host_of(mm, s->node, sb, sizeof sb),
	    host_of(mm, r->node, rb, sizeof rb),
	    (unsigned long long)(s->ts - r->ts),
	    (unsigned long long)s->bound, (unsigned long long)r->bound,
	    (unsigned long long)(w != NULL ? w->since : 0));
	if (w != NULL) {
		w->at = now;
		w->since = 0;
	}
}

/* A send (send = 1) or receive e of key (src, dst, tag). */
static void
message(struct mm *mm, int send, int64_t src, int64_t dst, int64_t tag,
	const struct end *e)
{
	struct mm_causal *g = &mm->causal;
	struct mm_causal_q *q = q_get(g, src, dst, tag);
	struct end other;
	uint64_t gap;
	const struct end *sent, *got;

	if (q == NULL) {
		g->unchecked++;
		return;
	}
	if (q->ends.n > 0 && q->sends != send) {
		ring_pop(&q->ends, &other, sizeof other);
		/* An empty queue goes: a key per message (tags that never
		 * repeat) must not grow the map. */
		if (q->ends.n == 0) {
			ring_free(&q->ends);
			hmap_del_value(&g->queues, q);
		}
		sent = send ? e : &other;
		got = send ? &other : e;
		g->waiting--;
		g->checked++;
		if (got->ts < sent->ts) {
			gap = sent->ts - got->ts;
			g->violations++;
			if (gap > g->worst)
				g->worst = gap;
			if (sent->bound <= UINT64_MAX - got->bound &&
			    gap > sent->bound + got->bound)
				beyond(mm, sent, got);
		}
		return;
	}
	if (g->waiting >= MM_CAUSAL_MAX ||
	    ring_push(&q->ends, e, sizeof *e) != 0) {
		g->unchecked++;
		return;
	}
	q->sends = send;
	g->waiting++;
}

void
mm_causal_record(struct mm *mm, uint32_t node, uint32_t pid, uint64_t ts,
		 int32_t eid, const struct rec_field *f, unsigned n)
{
	struct mm_causal *g = &mm->causal;
	struct end e;
	int64_t *r;

	if (n < 2 || f[0].kind != REC_K_INT)
		return;
	if (eid == REC_EID_PROC_NAME) {
		if ((r = rank_of(g, node, pid, 1)) != NULL)
			*r = f[0].v.i;
		return;
	}
	if ((eid != REC_EID_MSG_SEND && eid != REC_EID_MSG_RECV) ||
	    f[1].kind != REC_K_INT)
		return;
	if ((r = rank_of(g, node, pid, 0)) == NULL) {
		g->unchecked++;	/* a process without a rank */
		return;
	}
	e.ts = ts;
	e.node = node;
	e.bound = bound_at(g, node, ts);
	if (eid == REC_EID_MSG_SEND)
		message(mm, 1, *r, f[0].v.i, f[1].v.i, &e);
	else
		message(mm, 0, f[0].v.i, *r, f[1].v.i, &e);
}

void
mm_causal_step(struct mm *mm, uint32_t node, uint64_t ts, int64_t step,
	       uint64_t host_lo, uint64_t host_hi)
{
	struct mm_causal *g = &mm->causal;
	struct mm_causal_clk *k;
	uint32_t i;

	if (host_lo > host_hi)
		return;
	if (g->clocks.type == NULL)
		hmap_init(&g->clocks, &clocks_type);
	if ((k = hmap_put(&g->clocks, &node, NULL)) == NULL)
		return;		/* out of memory: its bounds are narrower */
	i = k->nst++ % MM_CAUSAL_STEPS;
	clk_step_window(ts, step, host_lo, host_hi, &k->st[i].lo,
	    &k->st[i].hi, &k->st[i].add);
}

int
mm_causal_model(struct mm *mm, uint32_t node, const struct mm_sync_used *u)
{
	struct mm_causal *g = &mm->causal;
	struct mm_causal_clk *k;
	struct clk_m *v;
	uint32_t drop = 0, cap;

	if (g->clocks.type == NULL)
		hmap_init(&g->clocks, &clocks_type);
	if ((k = hmap_put(&g->clocks, &node, NULL)) == NULL)
		return -1;
	/* Records come in time order: a model whose successor starts at
	 * or before the latest written converts none still to come (a
	 * late one takes the oldest kept). */
	while (drop + 1 < k->n && k->v[drop + 1].from <= mm->order.out_ts)
		drop++;
	if (drop == 0 && k->n == MM_SYNC_KEPT)
		drop = 1;
	if (drop > 0) {
		memmove(k->v, k->v + drop, (k->n - drop) * sizeof *k->v);
		k->n -= drop;
	}
	if (k->n == k->cap) {
		cap = k->cap ? k->cap * 2 : 4;
		if ((v = realloc(k->v, cap * sizeof *v)) == NULL) {
			k->n = 0;	/* its bounds are not known now */
			return -1;
		}
		k->v = v;
		k->cap = cap;
	}
	k->v[k->n].from = u->from;
	k->v[k->n].err = u->md.err;
	k->v[k->n].allow_ppb = u->md.allow_ppb;
	k->v[k->n].lo = u->md.lo;
	k->v[k->n].hi = u->md.hi;
	k->n++;
	return 0;
}

int
mm_causal_rank(struct mm *mm, uint32_t node, uint32_t pid, int64_t *rank)
{
	const int64_t *r = mm->causal.ranks.type != NULL ?
	    rank_of(&mm->causal, node, pid, 0) : NULL;

	if (r == NULL)
		return -1;
	*rank = *r;
	return 0;
}

void
mm_causal_free(struct mm *mm)
{
	struct mm_causal *g = &mm->causal;
	struct mm_causal_clk *k;
	struct mm_causal_q *q;
	uint32_t it = 0;

	while ((q = hmap_next(&g->queues, &it, NULL)) != NULL)
		ring_free(&q->ends);
	it = 0;
	while ((k = hmap_next(&g->clocks, &it, NULL)) != NULL)
		free(k->v);
	hmap_free(&g->queues);
	hmap_free(&g->ranks);
	hmap_free(&g->clocks);
	hmap_free(&g->warned);
	memset(g, 0, sizeof *g);
}
