/* mm_causal.c: the causality check: a message received before it was sent,
 * once both ends are on mainmon's clock, says the clock correction is
 * wrong by at least that much.  Records come here in time order. */
#include <stdlib.h>
#include <string.h>

#include "mm.h"

struct mm_rank {
	uint32_t	node;
	uint32_t	pid;
	int64_t		rank;
	struct mm_rank	*next;
};

/* Sends without their receive yet, or receives without their send (never
 * both), of one (sender rank, receiver rank, tag): the k-th send matches
 * the k-th receive, as prove matches them (doc/formats.md 1.9). */
struct mm_causal_q {
	int64_t		src;
	int64_t		dst;
	int64_t		tag;
	int		sends;		/* what waits: 1 sends, 0 receives */
	uint32_t	head;
	uint32_t	n;
	uint32_t	cap;		/* power of two */
	uint64_t	*ts;
};

static uint32_t
rank_hash(uint32_t node, uint32_t pid)
{
	return (node * 31u + pid) * 2654435761u >> 24;
}

static struct mm_rank *
rank_of(struct mm_causal *g, uint32_t node, uint32_t pid, int create)
{
	struct mm_rank *r;
	uint32_t b = rank_hash(node, pid) & (MM_RANK_BUCKETS - 1);

	if (g->ranks == NULL) {
		if (!create || (g->ranks = calloc(MM_RANK_BUCKETS,
		    sizeof *g->ranks)) == NULL)
			return NULL;
	}
	for (r = g->ranks[b]; r != NULL; r = r->next)
		if (r->node == node && r->pid == pid)
			return r;
	if (!create || (r = calloc(1, sizeof *r)) == NULL)
		return NULL;
	r->node = node;
	r->pid = pid;
	r->next = g->ranks[b];
	g->ranks[b] = r;
	return r;
}

static uint32_t
q_hash(int64_t src, int64_t dst, int64_t tag, uint32_t cap)
{
	uint64_t h = (uint64_t)src * 0x9e3779b97f4a7c15u ^
	    (uint64_t)dst * 0xc2b2ae3d27d4eb4fu ^ (uint64_t)tag * 0x165667b1u;

	return (uint32_t)(h ^ h >> 29) & (cap - 1);
}

/* The queue of a key, new if absent; NULL if out of memory. */
static struct mm_causal_q *
q_get(struct mm_causal *g, int64_t src, int64_t dst, int64_t tag)
{
	struct mm_causal_q *q, **nv;
	uint32_t i, j;

	if (g->n + 1 > g->cap / 2) {
		uint32_t cap = g->cap ? g->cap * 2 : 256;

		if ((nv = calloc(cap, sizeof *nv)) == NULL)
			return NULL;
		for (i = 0; i < g->cap; i++) {
			if ((q = g->v[i]) == NULL)
				continue;
			for (j = q_hash(q->src, q->dst, q->tag, cap);
			    nv[j] != NULL; j = (j + 1) & (cap - 1))
				continue;
			nv[j] = q;
		}
		free(g->v);
		g->v = nv;
		g->cap = cap;
	}
	for (i = q_hash(src, dst, tag, g->cap); (q = g->v[i]) != NULL;
	    i = (i + 1) & (g->cap - 1))
		if (q->src == src && q->dst == dst && q->tag == tag)
			return q;
	if ((q = calloc(1, sizeof *q)) == NULL)
		return NULL;
	q->src = src;
	q->dst = dst;
	q->tag = tag;
	g->v[i] = q;
	g->n++;
	return q;
}

static int
q_push(struct mm_causal_q *q, uint64_t ts)
{
	if (q->n == q->cap) {
		uint32_t cap = q->cap ? q->cap * 2 : 8, i;
		uint64_t *nts = malloc(cap * sizeof *nts);

		if (nts == NULL)
			return -1;
		for (i = 0; i < q->n; i++)
			nts[i] = q->ts[(q->head + i) & (q->cap - 1)];
		free(q->ts);
		q->ts = nts;
		q->cap = cap;
		q->head = 0;
	}
	q->ts[(q->head + q->n++) & (q->cap - 1)] = ts;
	return 0;
}

static uint64_t
q_pop(struct mm_causal_q *q)
{
	uint64_t ts = q->ts[q->head];

	q->head = (q->head + 1) & (q->cap - 1);
	q->n--;
	return ts;
}

/* A send (send = 1) or receive at ts of key (src, dst, tag). */
static void
message(struct mm_causal *g, int send, int64_t src, int64_t dst, int64_t tag,
	uint64_t ts)
{
	struct mm_causal_q *q = q_get(g, src, dst, tag);
	uint64_t sent, got;

	if (q == NULL) {
		g->unchecked++;
		return;
	}
	if (q->n > 0 && q->sends != send) {
		sent = send ? ts : q_pop(q);
		got = send ? q_pop(q) : ts;
		g->waiting--;
		g->checked++;
		if (got < sent) {
			g->violations++;
			if (sent - got > g->worst)
				g->worst = sent - got;
		}
		return;
	}
	if (g->waiting >= MM_CAUSAL_MAX || q_push(q, ts) != 0) {
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
	struct mm_rank *r;

	if (n < 2 || f[0].kind != REC_K_INT)
		return;
	if (eid == REC_EID_PROC_NAME) {
		if ((r = rank_of(g, node, pid, 1)) != NULL)
			r->rank = f[0].v.i;
		return;
	}
	if ((eid != REC_EID_MSG_SEND && eid != REC_EID_MSG_RECV) ||
	    f[1].kind != REC_K_INT)
		return;
	if ((r = rank_of(g, node, pid, 0)) == NULL) {
		g->unchecked++;	/* a process without a rank */
		return;
	}
	if (eid == REC_EID_MSG_SEND)
		message(g, 1, r->rank, f[0].v.i, f[1].v.i, ts);
	else
		message(g, 0, f[0].v.i, r->rank, f[1].v.i, ts);
}

void
mm_causal_free(struct mm *mm)
{
	struct mm_causal *g = &mm->causal;
	struct mm_rank *r, *rn;
	uint32_t i;

	for (i = 0; i < g->cap; i++)
		if (g->v[i] != NULL) {
			free(g->v[i]->ts);
			free(g->v[i]);
		}
	free(g->v);
	for (i = 0; g->ranks != NULL && i < MM_RANK_BUCKETS; i++)
		for (r = g->ranks[i]; r != NULL; r = rn) {
			rn = r->next;
			free(r);
		}
	free(g->ranks);
	memset(g, 0, sizeof *g);
}
