/* SPDX-License-Identifier: MIT */
/* ex_msg.c: the matching of message sends with receives for the exports,
 * as they stream: counts per channel in pass 1, the messages in flight in
 * pass 2 (ex_walk.h, "Messages"). */
#include <stdlib.h>
#include <string.h>

#include "ex_walk.h"

/* The sends (or receives) of one process to one (peer, tag), pass 1. */
struct src {
	uint32_t	node;
	uint32_t	pid;
	int		send;
	int64_t		peer;
	int64_t		tag;
	uint64_t	n;
	uint64_t	last;		/* the latest time */
	int		backwards;	/* a time before an earlier one's */
};

/* The id of (a, b): pairs of 64-bit words that would need a third word
 * of key are first given a 32-bit id in m. */
static uint64_t
pair_id(struct pv_map *m, uint64_t a, uint64_t b)
{
	uint64_t *v;

	if ((v = pv_map_get(m, a, b, sizeof *v)) == NULL)
		return 0;
	if (*v == 0)
		*v = pv_map_n(m);
	return *v;
}

int
ex_msgs_ev(struct ex_msgs *c, const struct grmtrace_ev *ev,
	   const struct pv_mark *m)
{
	int send = m->kind == PV_SEND;
	struct src *s;
	uint64_t pt;

	if ((pt = pair_id(&c->pt, (uint64_t)m->id, (uint64_t)m->tag)) == 0 ||
	    (s = pv_map_get(&c->src, (uint64_t)ev->node << 32 | ev->pid,
	    pt << 1 | (uint64_t)send, sizeof *s)) == NULL)
		return -1;
	if (s->n == 0)
		*s = (struct src){ .node = ev->node, .pid = ev->pid,
		    .send = send, .peer = m->id, .tag = m->tag };
	else if (ev->ts < s->last)
		s->backwards = 1;
	s->last = ev->ts;
	s->n++;
	if (send)
		c->nsnd++;
	else
		c->nrcv++;
	return 0;
}

/* The channel (sender rank a, receiver rank b, tag), created if new and
 * make; NULL if not there or out of memory. */
static struct ex_chan *
chan(struct ex_msgs *c, int64_t a, int64_t b, int64_t tag, int make)
{
	uint64_t *rt;

	if (!make) {
		rt = pv_map_find(&c->rt, (uint64_t)b, (uint64_t)tag);
		return rt == NULL ? NULL : pv_map_find(&c->chan, (uint64_t)a,
		    *rt);
	}
	if ((rt = pv_map_get(&c->rt, (uint64_t)b, (uint64_t)tag,
	    sizeof *rt)) == NULL)
		return NULL;
	if (*rt == 0)
		*rt = pv_map_n(&c->rt);
	return pv_map_get(&c->chan, (uint64_t)a, *rt, sizeof(struct ex_chan));
}

int
ex_msgs_plan(struct ex_msgs *c, const struct pv_msgs *g)
{
	const struct pv_proc *p;
	struct ex_chan *ch;
	struct src *s;
	uint32_t it = 0;
	uint64_t k;

	while ((s = pv_map_next(&c->src, &it)) != NULL) {
		p = pv_proc(g, s->node, s->pid);
		if (p == NULL || !p->has_rank) {
			c->norank += s->n;
			continue;
		}
		if ((ch = s->send ? chan(c, p->rank, s->peer, s->tag, 1) :
		    chan(c, s->peer, p->rank, s->tag, 1)) == NULL)
			return -1;
		if (s->send) {
			ch->nsnd += s->n;
			ch->ssrc++;
		} else {
			ch->nrcv += s->n;
			ch->rsrc++;
		}
		ch->backwards |= s->backwards;
	}
	it = 0;
	while ((ch = pv_map_next(&c->chan, &it)) != NULL) {
		k = ch->nsnd < ch->nrcv ? ch->nsnd : ch->nrcv;
		c->matched += k;
		/* The k-th send meets the k-th receive in time order; in the
		 * file's order if each end is one process's, in time order
		 * in the file. */
		if (k > 0 && (ch->ssrc > 1 || ch->rsrc > 1 || ch->backwards))
			c->keep = 1;
	}
	pv_map_free(&c->src, NULL);
	pv_map_free(&c->pt, NULL);
	return 0;
}

static int
q_push(struct ex_chan *ch, uint64_t id)
{
	uint64_t *q;
	size_t i, n;

	if (ch->qn == ch->qcap) {
		n = ch->qcap == 0 ? 4 : 2 * ch->qcap;
		if ((q = malloc(n * sizeof *q)) == NULL)
			return -1;
		for (i = 0; i < ch->qn; i++)
			q[i] = ch->q[(ch->qhead + i) % ch->qcap];
		free(ch->q);
		ch->q = q;
		ch->qcap = n;
		ch->qhead = 0;
	}
	ch->q[(ch->qhead + ch->qn++) % ch->qcap] = id;
	return 0;
}

static uint64_t
q_pop(struct ex_chan *ch)
{
	uint64_t id = ch->q[ch->qhead];

	ch->qhead = (ch->qhead + 1) % ch->qcap;
	ch->qn--;
	return id;
}

int
ex_msgs_at(struct ex_msgs *c, const struct pv_msgs *g,
	   const struct grmtrace_ev *ev, const struct pv_mark *m, uint64_t *id)
{
	int send = m->kind == PV_SEND;
	uint64_t i = send ? c->ksnd++ : c->krcv++, k, other;
	const struct pv_proc *p = pv_proc(g, ev->node, ev->pid);
	struct ex_chan *ch;

	if (p == NULL || !p->has_rank)
		return 0;
	ch = send ? chan(c, p->rank, m->id, m->tag, 0) :
	    chan(c, m->id, p->rank, m->tag, 0);
	if (ch == NULL)
		return 0;	/* not seen by the survey */
	if (send) {
		k = ch->ksnd++;
		if (k >= ch->nrcv)
			return 0;
		other = ch->krcv < ch->nsnd ? ch->krcv : ch->nsnd;
	} else {
		k = ch->krcv++;
		if (k >= ch->nsnd)
			return 0;
		other = ch->ksnd < ch->nrcv ? ch->ksnd : ch->nrcv;
	}
	/* The other end came first: its id waits in the queue. */
	if (other > k) {
		*id = q_pop(ch);
		return 1;
	}
	*id = send ? i : c->nsnd + c->fresh++;
	return q_push(ch, *id) == 0 ? 1 : -1;
}

static void
chan_free(void *v)
{
	free(((struct ex_chan *)v)->q);
}

void
ex_msgs_free(struct ex_msgs *c)
{
	pv_map_free(&c->pt, NULL);
	pv_map_free(&c->src, NULL);
	pv_map_free(&c->rt, NULL);
	pv_map_free(&c->chan, chan_free);
	memset(c, 0, sizeof *c);
}
