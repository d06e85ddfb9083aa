/* SPDX-License-Identifier: MIT */
/* mm_causal.c: the causality check: a message received before it was sent,
 * once both ends are on mainmon's clock, says the clock correction is
 * wrong by at least that much.  Records come here in time order. */
#include <stdlib.h>
#include <string.h>

#include "mm.h"

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
	uint32_t	head;
	uint32_t	n;
	uint32_t	cap;		/* power of two */
	uint64_t	*ts;
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
	if (eid == REC_EID_MSG_SEND)
		message(g, 1, *r, f[0].v.i, f[1].v.i, ts);
	else
		message(g, 0, f[0].v.i, *r, f[1].v.i, ts);
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
	struct mm_causal_q *q;
	uint32_t it = 0;

	while ((q = hmap_next(&g->queues, &it, NULL)) != NULL)
		free(q->ts);
	hmap_free(&g->queues);
	hmap_free(&g->ranks);
	memset(g, 0, sizeof *g);
}
