/* SPDX-License-Identifier: MIT */
/* ex_msg.c: the matching of message sends with receives for the exports,
 * as they stream: per channel, counts and the receives waiting for their
 * send in pass 1, the messages in flight in pass 2 (ex_walk.h,
 * "Messages"). */
#include <stdlib.h>
#include <string.h>

#include "ex_msg.h"

/* A process with messages: its rank at its first one (pass 1). */
struct mproc {
	uint32_t	node;
	uint32_t	pid;
	int		seen;
	uint32_t	mtid;		/* the thread of its first message */
	int		has_rank;
	int64_t		rank;
	int		changed;	/* another rank (or none) at a later one */
};

/* The channel (sender rank a, receiver rank b, tag), created if new and
 * make; NULL if not there or out of memory.  (receiver rank, tag) is
 * first given a 32-bit id, a map's key being two 64-bit words. */
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

static int
q_push(struct ex_q *q, uint64_t v)
{
	uint64_t *a;
	size_t i, n;

	if (q->n == q->cap) {
		n = q->cap == 0 ? 4 : 2 * q->cap;
		if ((a = malloc(n * sizeof *a)) == NULL)
			return -1;
		for (i = 0; i < q->n; i++)
			a[i] = q->v[(q->head + i) % q->cap];
		free(q->v);
		q->v = a;
		q->cap = n;
		q->head = 0;
	}
	q->v[(q->head + q->n++) % q->cap] = v;
	return 0;
}

static uint64_t
q_pop(struct ex_q *q)
{
	uint64_t v = q->v[q->head];

	q->head = (q->head + 1) % q->cap;
	q->n--;
	return v;
}

static void
q_free(struct ex_q *q)
{
	free(q->v);
	memset(q, 0, sizeof *q);
}

/* One end of ch is process (node, pid): a second process is noted. */
static void
end_of(struct ex_chan *ch, int send, uint32_t node, uint32_t pid)
{
	uint64_t np = (uint64_t)node << 32 | pid;

	if (!(send ? ch->has_s : ch->has_r)) {
		*(send ? &ch->sproc : &ch->rproc) = np;
		*(send ? &ch->has_s : &ch->has_r) = 1;
	} else if ((send ? ch->sproc : ch->rproc) != np)
		ch->several = 1;
}

/* With pairs: the message sent (index i) at sts, received at rts, is not
 * an MPI one if received before sent or an end is not on its process's
 * message thread (sok, rok: they are). */
static int
pair(struct ex_msgs *c, uint64_t i, uint64_t sts, int sok, uint64_t rts,
     int rok)
{
	if (sok && rok && rts >= sts)
		return 0;
	return pv_map_get(&c->bad, i, 0, 1) == NULL ? -1 : 0;
}

int
ex_msgs_bad(const struct ex_msgs *c, uint64_t id)
{
	return pv_map_find(&c->bad, id, 0) != NULL;
}

int
ex_msgs_mtid(const struct ex_msgs *c, uint32_t node, uint32_t pid,
	     uint32_t *tid)
{
	const struct mproc *mp = pv_map_find(&c->procs, node, pid);

	if (mp == NULL)
		return 0;
	*tid = mp->mtid;
	return 1;
}

int
ex_msgs_ev(struct ex_msgs *c, const struct pv_msgs *g,
	   const struct grmtrace_ev *ev, const struct pv_mark *m)
{
	int send = m->kind == PV_SEND;
	uint64_t i = send ? c->nsnd++ : c->nrcv++, *x, x0, rts, rok;
	const struct pv_proc *p = pv_proc(g, ev->node, ev->pid);
	int has = p != NULL && p->has_rank;
	struct ex_chan *ch;
	struct mproc *mp;

	if ((mp = pv_map_get(&c->procs, ev->node, ev->pid, sizeof *mp)) ==
	    NULL)
		return -1;
	/* Its rank now must be its rank at the end (ex_msgs_plan). */
	if (!mp->seen) {
		mp->seen = 1;
		mp->node = ev->node;
		mp->pid = ev->pid;
		mp->mtid = ev->tid;
		mp->has_rank = has;
		mp->rank = has ? p->rank : 0;
	} else if (mp->has_rank != has || (has && mp->rank != p->rank))
		mp->changed = 1;
	if (!has)
		return 0;
	if ((ch = send ? chan(c, p->rank, m->id, m->tag, 1) :
	    chan(c, m->id, p->rank, m->tag, 1)) == NULL)
		return -1;
	end_of(ch, send, ev->node, ev->pid);
	if ((send ? ch->nsnd : ch->nrcv) > 0 &&
	    ev->ts < (send ? ch->slast : ch->rlast))
		ch->backwards = 1;
	*(send ? &ch->slast : &ch->rlast) = ev->ts;
	if (send) {
		ch->nsnd++;
		/* A receive waits for it: it is that one's send. */
		if (ch->wait.n > 0) {
			if ((x = pv_map_get(&c->first, q_pop(&ch->wait), 0,
			    sizeof *x)) == NULL)
				return -1;
			*x = i;
			if (c->pairs) {
				rts = q_pop(&ch->wait);
				rok = q_pop(&ch->wait);
				return pair(c, i, ev->ts, ev->tid == mp->mtid,
				    rts, (int)rok);
			}
			return 0;
		}
		ch->ahead++;
		if (c->pairs && (q_push(&ch->sent, i) != 0 ||
		    q_push(&ch->sent, ev->ts) != 0 ||
		    q_push(&ch->sent, ev->tid == mp->mtid) != 0))
			return -1;
		return 0;
	}
	ch->nrcv++;
	if (ch->ahead > 0) {
		ch->ahead--;
		if (c->pairs) {
			x0 = q_pop(&ch->sent);
			rts = q_pop(&ch->sent);
			rok = q_pop(&ch->sent);
			return pair(c, x0, rts, (int)rok, ev->ts,
			    ev->tid == mp->mtid);
		}
		return 0;
	}
	if (q_push(&ch->wait, i) != 0)
		return -1;
	if (c->pairs && (q_push(&ch->wait, ev->ts) != 0 ||
	    q_push(&ch->wait, ev->tid == mp->mtid) != 0))
		return -1;
	return 0;
}

int
ex_msgs_plan(struct ex_msgs *c, const struct pv_msgs *g)
{
	const struct pv_proc *p;
	struct ex_chan *ch;
	struct mproc *mp;
	uint32_t it = 0;
	uint64_t k;

	while ((mp = pv_map_next(&c->procs, &it)) != NULL) {
		p = pv_proc(g, mp->node, mp->pid);
		if (mp->changed || (p != NULL && p->has_rank) != mp->has_rank ||
		    (mp->has_rank && p->rank != mp->rank))
			c->keep = 1;
	}
	it = 0;
	while ((ch = pv_map_next(&c->chan, &it)) != NULL) {
		k = ch->nsnd < ch->nrcv ? ch->nsnd : ch->nrcv;
		c->matched += k;
		/* The k-th send meets the k-th receive in time order: in the
		 * file's order if each end is one process's and its times
		 * never go back in the file. */
		if (k > 0 && (ch->several || ch->backwards))
			c->keep = 1;
		q_free(&ch->wait);
		q_free(&ch->sent);
	}
	return 0;
}

int
ex_msgs_at(struct ex_msgs *c, const struct pv_msgs *g,
	   const struct grmtrace_ev *ev, const struct pv_mark *m, uint64_t *id,
	   const struct ex_chan **chp)
{
	int send = m->kind == PV_SEND;
	uint64_t i = send ? c->ksnd++ : c->krcv++, k, other, *x;
	const struct pv_proc *p = pv_proc(g, ev->node, ev->pid);
	struct ex_chan *ch;

	if (p == NULL || !p->has_rank)
		return 0;
	ch = send ? chan(c, p->rank, m->id, m->tag, 0) :
	    chan(c, m->id, p->rank, m->tag, 0);
	if (ch == NULL)
		return 0;	/* not seen by the survey */
	if (chp != NULL)
		*chp = ch;
	if (send) {
		k = ch->ksnd++;
		if (k >= ch->nrcv)
			return 0;
		/* Its receive came first (and had its id from pass 1). */
		other = ch->krcv < ch->nsnd ? ch->krcv : ch->nsnd;
		*id = i;
		return other > k ? 1 : q_push(&ch->fly, i) == 0 ? 1 : -1;
	}
	k = ch->krcv++;
	if (k >= ch->nsnd)
		return 0;
	other = ch->ksnd < ch->nrcv ? ch->ksnd : ch->nrcv;
	if (other > k)
		*id = q_pop(&ch->fly);
	else if ((x = pv_map_find(&c->first, i, 0)) != NULL)
		*id = *x;
	else
		return 0;	/* cannot be */
	return 1;
}

int
ex_msgs_keep(struct ex_msgs *c, struct pv_msgs *g, struct pv_strs *names,
	     struct pv_sym *sym, struct grmtrace *r, uint64_t total)
{
	const struct grmtrace_ev *ev;
	struct pv_mark m;
	uint64_t n = 0;
	int rc = 0;

	while (n < total && (rc = grmtrace_next(r, &ev)) == 1) {
		if (ev->kind != GRMTRACE_RECORD)
			continue;
		n++;
		if (pv_mark(names, sym, ev, &m) != 0 ||
		    ((m.kind == PV_SEND || m.kind == PV_RECV) &&
		    pv_msgs_ev(g, ev, &m) != 0))
			return -2;
	}
	if (n < total)
		return rc == -1 ? -1 : -3;
	if (pv_msgs_match(g) != 0)
		return -2;
	c->matched = g->matched;
	return 0;
}

static void
chan_free(void *v)
{
	struct ex_chan *ch = v;

	q_free(&ch->wait);
	q_free(&ch->sent);
	q_free(&ch->fly);
}

void
ex_msgs_free(struct ex_msgs *c)
{
	pv_map_free(&c->procs, NULL);
	pv_map_free(&c->rt, NULL);
	pv_map_free(&c->chan, chan_free);
	pv_map_free(&c->first, NULL);
	pv_map_free(&c->bad, NULL);
	memset(c, 0, sizeof *c);
}
