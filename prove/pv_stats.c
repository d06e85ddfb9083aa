/* SPDX-License-Identifier: MIT */
/* pv_stats.c: prove stats, the BEE frequency counter, the time profiler of
 * blocks and BEE ranges, and the message table, of the whole trace or a
 * selection, as text or as JSON (BEE's views in prove serve and report). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "pv.h"
#include "pv_load.h"
#include "pv_idx.h"

struct frame {
	int64_t		id;
	int		range;
	int		in;		/* its begin is in the selection */
	uint64_t	start;
	uint64_t	child;		/* inclusive time of closed children */
	uint64_t	stopped;	/* its node's stopped time at start */
};

/*
 * A node's collection phases (global scheme): its processes were stopped
 * between each begin and end, so no record of it lies inside; a block
 * that spans one is shorter by the whole phase.  `stopped` only grows:
 * a frame's share is its difference between start and end.
 */
struct node {
	uint32_t	id;
	uint64_t	begin;		/* of the phase under way */
	uint64_t	depth;		/* begins not yet ended */
	uint64_t	stopped;	/* ns, phases ended so far */
	uint64_t	phases;
	uint64_t	longest;
};

struct thr {
	struct frame	*st;
	size_t		depth;
	size_t		cap;
	struct node	*node;
};

/* A block id, or a BEE range (by the id of its name). */
struct blk {
	int64_t		id;
	int		range;
	int32_t		eid;		/* of a range: its first begin's */
	int		begun;
	uint64_t	count;
	double		mean;		/* Welford, of exclusive ns */
	double		m2;
	uint64_t	total;		/* exclusive ns */
	char		*name;		/* of a block, from its name record */
	size_t		name_len;
};

struct evc {
	int32_t		eid;
	uint64_t	count;
};

/* Messages between two ranks. */
struct pair {
	int64_t		from;
	int64_t		to;
	uint64_t	sends;
	uint64_t	recvs;
	int64_t		bytes;		/* sent */
	uint64_t	matched;
	double		lat;		/* sum of latencies of matched, ns */
	uint64_t	usend;		/* unmatched */
	uint64_t	urecv;
};

struct stats {
	struct pv_map	nodes;		/* (node, 0) */
	struct pv_map	thrs;		/* (node << 32 | pid, tid) selected */
	struct pv_map	stk;		/* -> struct thr: the blocks open,
					   of every record of the rows */
	struct pv_map	procs;
	struct pv_map	evcs;
	struct pv_map	blks;		/* (id, range) */
	struct pv_strs	names;		/* of ranges */
	struct pv_sym	sym;		/* function names */
	struct pv_msgs	msgs;
	struct pv_stmode sm;
	uint64_t	records;
	uint64_t	first;
	uint64_t	last;
	uint64_t	unmatched;
	uint64_t	unclosed;
	const struct pv_sel *sel;	/* the records taken */
	struct pv_load	load;		/* the load meter (of load_n buckets) */
	unsigned	load_n;		/* 0: no load meter */
};

static void
thr_free(void *v)
{
	free(((struct thr *)v)->st);
}

static void
blk_free(void *v)
{
	free(((struct blk *)v)->name);
}

static struct blk *
blk_get(struct stats *st, int64_t id, int range)
{
	struct blk *b;

	if ((b = pv_map_get(&st->blks, (uint64_t)id, (uint64_t)range,
	    sizeof *b)) != NULL) {
		b->id = id;
		b->range = range;
	}
	return b;
}

static int
push(struct stats *st, struct thr *t, const struct pv_mark *m,
     const struct grmtrace_ev *ev, int in)
{
	struct frame *f;
	struct blk *b;

	if (m->range) {
		if ((b = blk_get(st, m->id, 1)) == NULL)
			return -1;
		if (!b->begun)
			b->eid = ev->eid;
		b->begun = 1;
	}
	if (t->depth == t->cap) {
		if ((f = realloc(t->st, (t->cap + 16) * 2 * sizeof *f)) == NULL)
			return -1;
		t->st = f;
		t->cap = (t->cap + 16) * 2;
	}
	t->st[t->depth++] = (struct frame){ m->id, m->range, in, ev->ts, 0,
	    t->node->stopped };
	return 0;
}

/* Closes the innermost open block or range of t at ts; counted in the
 * profile if count. */
static int
pop(struct stats *st, struct thr *t, uint64_t ts, int count)
{
	struct frame *f = &t->st[--t->depth];
	uint64_t dur, excl, stopped;
	struct blk *b;
	double d;

	dur = ts > f->start ? ts - f->start : 0;
	/* Not the collection phases it spans (the process was stopped). */
	stopped = t->node->stopped - f->stopped;
	dur = dur > stopped ? dur - stopped : 0;
	excl = dur > f->child ? dur - f->child : 0;
	if (t->depth > 0) {
		f[-1].child = dur > UINT64_MAX - f[-1].child ? UINT64_MAX :
		    f[-1].child + dur;
	}
	if (!count)
		return 0;
	if ((b = blk_get(st, f->id, f->range)) == NULL)
		return -1;
	b->count++;
	d = (double)excl - b->mean;
	b->mean += d / (double)b->count;
	b->m2 += d * ((double)excl - b->mean);
	b->total = excl > UINT64_MAX - b->total ? UINT64_MAX : b->total + excl;
	return 0;
}

/*
 * Ends a block or range (the end in the selection if in).  An end that
 * does not match the innermost one closes those above a matching one,
 * each counted as unmatched; with no matching one open it is counted and
 * ignored.  Blocks are matched over the whole trace of the selected
 * threads, so a selection counts a block whose begin and end (its own,
 * or the end of one it was nested in) it holds, with the exclusive time
 * it has in the whole trace: one begun in it and ended after it is
 * unclosed, and an end of one begun before it closes nothing of it (an
 * unmatched end).
 */
static int
block_end(struct stats *st, struct thr *t, const struct pv_mark *m,
	  uint64_t ts, int in)
{
	const struct frame *f;
	size_t i;

	for (i = t->depth; i > 0 && (t->st[i - 1].id != m->id ||
	    t->st[i - 1].range != m->range); i--)
		continue;
	if (i == 0) {
		st->unmatched += (uint64_t)in;
		return 0;
	}
	while (t->depth >= i) {
		f = &t->st[t->depth - 1];
		if (in && (f->in ? t->depth > i : t->depth == i))
			st->unmatched++;
		else if (!in && f->in)
			st->unclosed++;
		if (pop(st, t, ts, in && f->in) != 0)
			return -1;
	}
	return 0;
}

/* A block's begin or end of thread (node, pid, tid) of ev, in the
 * selection or not (in). */
static int
block_ev(struct stats *st, const struct grmtrace_ev *ev,
	 const struct pv_mark *m, int in)
{
	uint64_t pk = (uint64_t)ev->node << 32 | ev->pid;
	struct node *n;
	struct thr *t;

	if ((t = pv_map_get(&st->stk, pk, ev->tid, sizeof *t)) == NULL)
		return -1;
	if (t->node == NULL) {
		if ((n = pv_map_get(&st->nodes, ev->node, 0,
		    sizeof *n)) == NULL)
			return -1;
		n->id = ev->node;
		t->node = n;
	}
	if (m->kind == PV_BEGIN)
		return push(st, t, m, ev, in);
	return block_end(st, t, m, ev->ts, in);
}

static int
block_name(struct stats *st, const struct pv_mark *m)
{
	struct blk *b;
	char *s;

	if ((b = blk_get(st, m->id, 0)) == NULL ||
	    (s = malloc(m->len + 1)) == NULL)
		return -1;
	memcpy(s, m->s, m->len);
	free(b->name);
	b->name = s;
	b->name_len = m->len;
	return 0;
}

static const char *
name_of_block(void *arg, int64_t bid, size_t *len)
{
	const struct blk *b = pv_map_find(&((struct stats *)arg)->blks,
	    (uint64_t)bid, 0);

	if (b == NULL || b->name == NULL)
		return NULL;
	*len = b->name_len;
	return b->name;
}

/*
 * A collection phase of node n begins or ends at ts.  Several LMs of one
 * node (hosts of the same name) each stop their processes: the node's
 * phase runs from the first begin to the last end.
 */
static void
coll_mark(struct node *n, enum pv_kind kind, uint64_t ts)
{
	uint64_t d;

	if (kind == PV_CBEGIN) {
		if (n->depth++ == 0)
			n->begin = ts;
		return;
	}
	if (n->depth == 0 || --n->depth > 0)
		return;		/* an end without its begin, or not the last */
	d = ts > n->begin ? ts - n->begin : 0;
	n->stopped += d;
	n->phases++;
	if (d > n->longest)
		n->longest = d;
}

/*
 * A record not selected is not taken, but what it says of the whole
 * trace is: its host's collection phases (in the time range) are its
 * processes' too; process and block names hold for the whole trace; and
 * messages are matched over the whole trace, a selection's message
 * counted as matched when its other end is selected too.
 */
static int
unselected(struct stats *st, const struct grmtrace_ev *ev,
	   const struct pv_mark *mk)
{
	struct pv_msgs *g = &st->msgs;
	struct pv_mark m = *mk;
	struct node *n;

	switch (m.kind) {
	case PV_CBEGIN:
	case PV_CEND:
		if (ev->pid != 0 || ev->ts < st->sel->from ||
		    ev->ts >= st->sel->to)
			return 0;
		if ((n = pv_map_get(&st->nodes, ev->node, 0,
		    sizeof *n)) == NULL)
			return -1;
		n->id = ev->node;
		coll_mark(n, m.kind, ev->ts);
		return 0;
	case PV_BNAME:
		return ev->pid == 0 ? 0 : block_name(st, &m);
	case PV_BEGIN:
	case PV_END:
		/* Matched over the whole trace of the selected threads. */
		if (ev->pid == 0 || !pv_sel_row(st->sel, ev->node, ev->pid,
		    ev->tid))
			return 0;
		return block_ev(st, ev, &m, 0);
	case PV_PNAME:
		return ev->pid == 0 ? 0 : pv_msgs_ev(g, ev, &m);
	case PV_SEND:
	case PV_RECV:
		if (ev->pid == 0)
			return 0;
		if (pv_msgs_ev(g, ev, &m) != 0)
			return -1;
		if (m.kind == PV_SEND)
			g->snd[g->nsnd - 1].out = 1;
		else
			g->rcv[g->nrcv - 1].out = 1;
		return 0;
	default:
		return 0;
	}
}

static int
account(struct stats *st, const struct grmtrace_ev *ev)
{
	uint64_t pk = (uint64_t)ev->node << 32 | ev->pid;
	struct pv_mark m;
	struct node *n;
	struct evc *e;

	if (ev->kind == GRMTRACE_PROC)
		return pv_sym_ev(&st->sym, ev) != 0 ? -1 :
		    pv_msgs_ev(&st->msgs, ev, NULL);
	if (ev->kind != GRMTRACE_RECORD)
		return pv_stmode_ev(&st->sm, ev);
	if (pv_mark(&st->names, &st->sym, ev, &m) != 0)
		return -1;
	if (!pv_sel_has(st->sel, ev->node, ev->pid, ev->tid, ev->ts))
		return unselected(st, ev, &m);
	if (st->load_n != 0 &&
	    pv_load_add(&st->load, ev->node, ev->pid, ev->ts) != 0)
		return -1;
	if (st->records == 0 || ev->ts < st->first)
		st->first = ev->ts;
	if (st->records == 0 || ev->ts > st->last)
		st->last = ev->ts;
	st->records++;
	if ((e = pv_map_get(&st->evcs, (uint32_t)ev->eid, 0,
	    sizeof *e)) == NULL ||
	    (n = pv_map_get(&st->nodes, ev->node, 0, sizeof *n)) == NULL)
		return -1;
	e->eid = ev->eid;
	e->count++;
	n->id = ev->node;
	if (m.kind == PV_CBEGIN || m.kind == PV_CEND) {
		coll_mark(n, m.kind, ev->ts);
		return 0;
	}
	/* Process 0 is the host's Local Monitor, not a process. */
	if (ev->pid == 0)
		return 0;
	if (pv_map_get(&st->procs, pk, 0, 1) == NULL ||
	    pv_map_get(&st->thrs, pk, ev->tid, 1) == NULL)
		return -1;
	switch (m.kind) {
	case PV_BEGIN:
	case PV_END:
		return block_ev(st, ev, &m, 1);
	case PV_BNAME:
		return block_name(st, &m);
	default:
		return pv_msgs_ev(&st->msgs, ev, &m);
	}
}

static int
by_count(const void *a, const void *b)
{
	const struct evc *x = *(const struct evc *const *)a;
	const struct evc *y = *(const struct evc *const *)b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return (x->eid > y->eid) - (x->eid < y->eid);
}

static int
by_total(const void *a, const void *b)
{
	const struct blk *x = *(const struct blk *const *)a;
	const struct blk *y = *(const struct blk *const *)b;

	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	if (x->range != y->range)
		return x->range - y->range;
	return (x->id > y->id) - (x->id < y->id);
}

static int
print_counts(const struct stats *st, const struct grmtrace *r)
{
	const struct grmtrace_def *def;
	const char *name;
	struct evc **e;
	size_t i;

	if ((e = (struct evc **)pv_map_values(&st->evcs)) == NULL)
		return -1;
	qsort(e, pv_map_n(&st->evcs), sizeof *e, by_count);
	printf("\nevent counts (frequency counter)\n");
	printf("%11s %20s  %s\n", "eid", "count", "name");
	for (i = 0; i < pv_map_n(&st->evcs); i++) {
		def = grmtrace_def(r, e[i]->eid);
		name = def == NULL ? "" : def->description[0] != '\0' ? def->description :
		    def->format;
		printf("%11" PRId32 " %20" PRIu64 "  ", e[i]->eid, e[i]->count);
		pv_put_name(name, strlen(name));
		putchar('\n');
	}
	free(e);
	return 0;
}

/* A block's mean exclusive time, ns: its total over its count. */
static double
blk_mean(const struct blk *b)
{
	return (double)b->total / (double)b->count;
}

/* A block's numbers as prove stats prints them. */
struct blk_txt {
	char	id[32];
	char	mean[32];
	char	var[32];
	char	total[32];
	char	pct[16];
};

static void
blk_text(const struct blk *b, double sum, struct blk_txt *t)
{
	if (b->range)
		snprintf(t->id, sizeof t->id, "eid %" PRId32, b->eid);
	else
		snprintf(t->id, sizeof t->id, "%" PRId64, b->id);
	/* From the total, not Welford's running mean: its last bit can
	 * differ, and prove serve's index divides the same total (a mean
	 * near a half of the ninth decimal then printed two ways). */
	snprintf(t->mean, sizeof t->mean, "%.9f", blk_mean(b) / 1e9);
	snprintf(t->var, sizeof t->var, "%.6e",
	    b->m2 / (double)b->count / 1e18);
	pv_secs(t->total, sizeof t->total, b->total);
	snprintf(t->pct, sizeof t->pct, "%.2f",
	    sum > 0 ? 100 * (double)b->total / sum : 0.0);
}

/* The blocks and ranges closed at least once, by total exclusive time
 * (*n of them, *sum the total of all), in a new array; NULL if out of
 * memory. */
static struct blk **
closed_blocks(const struct stats *st, size_t *n, double *sum)
{
	struct blk **b;
	size_t i;

	*n = 0;
	*sum = 0;
	if ((b = (struct blk **)pv_map_values(&st->blks)) == NULL)
		return NULL;
	for (i = 0; i < pv_map_n(&st->blks); i++) {
		*sum += (double)b[i]->total;
		if (b[i]->count > 0)
			b[(*n)++] = b[i];
	}
	qsort(b, *n, sizeof *b, by_total);
	return b;
}

/* A block's or range's name: of its record, of its range, or "block N",
 * in buf if made. */
static const char *
blk_name(const struct stats *st, const struct blk *b, char *buf,
	 size_t bufsz, size_t *len)
{
	const char *nm;

	if (b->range) {
		nm = pv_str(&st->names, (uint64_t)b->id, len);
		if (nm != NULL)
			return nm;
	} else if (b->name != NULL) {
		*len = b->name_len;
		return b->name;
	}
	snprintf(buf, bufsz, "block %" PRId64, b->id);
	*len = strlen(buf);
	return buf;
}

static int
print_profile(const struct stats *st)
{
	struct blk **b;
	struct blk_txt bt;
	const char *nm;
	char buf[32];
	double sum;
	size_t i, n, len;

	if ((b = closed_blocks(st, &n, &sum)) == NULL)
		return -1;
	printf("\ntime profile (exclusive time of blocks and ranges, "
	    "seconds)\n");
	if (n == 0)
		printf("no closed blocks\n");
	else
		printf("%11s %12s %14s %14s %16s %7s  %s\n", "id",
		    "count", "mean", "variance(s^2)", "total", "%", "name");
	for (i = 0; i < n; i++) {
		blk_text(b[i], sum, &bt);
		printf("%11s %12" PRIu64 " %14s %14s %16s %7s  ", bt.id,
		    b[i]->count, bt.mean, bt.var, bt.total, bt.pct);
		nm = blk_name(st, b[i], buf, sizeof buf, &len);
		pv_put_name(nm, len);
		putchar('\n');
	}
	if (st->unmatched > 0)
		printf("unmatched block events: %" PRIu64 "\n",
		    st->unmatched);
	if (st->unclosed > 0)
		printf("blocks still open at end of trace: %" PRIu64 "\n",
		    st->unclosed);
	free(b);
	return 0;
}

static struct pair *
pair_get(struct pv_map *pairs, int64_t from, int64_t to)
{
	struct pair *p;

	if ((p = pv_map_get(pairs, (uint64_t)from, (uint64_t)to,
	    sizeof *p)) != NULL) {
		p->from = from;
		p->to = to;
	}
	return p;
}

static int
by_ranks(const void *a, const void *b)
{
	const struct pair *x = *(const struct pair *const *)a;
	const struct pair *y = *(const struct pair *const *)b;

	return x->from != y->from ? pv_cmp(x->from, y->from) :
	    pv_cmp(x->to, y->to);
}

/* A selection's messages: sends and receives selected, those matched
 * with their other end selected, those of processes with no rank. */
struct msel {
	uint64_t	sends;
	uint64_t	recvs;
	uint64_t	matched;
	uint64_t	norank;
};

static void
msel(const struct pv_msgs *g, struct msel *c)
{
	size_t i;

	memset(c, 0, sizeof *c);
	for (i = 0; i < g->nsnd; i++) {
		if (g->snd[i].out)
			continue;
		c->sends++;
		c->norank += !g->snd[i].has_rank;
		c->matched += g->snd[i].match != 0 &&
		    !g->rcv[g->snd[i].match - 1].out;
	}
	for (i = 0; i < g->nrcv; i++) {
		c->recvs += !g->rcv[i].out;
		c->norank += !g->rcv[i].out && !g->rcv[i].has_rank;
	}
}

/* The sends and receives of ranked processes, by (sender, receiver): of
 * the selection (a match: both ends in it). */
static int
fill_pairs(const struct pv_msgs *g, struct pv_map *pairs)
{
	const struct pv_msg *s, *r;
	struct pair *p;
	int64_t b;
	size_t i;

	for (i = 0; i < g->nsnd; i++) {
		s = &g->snd[i];
		if (!s->has_rank || s->out)
			continue;
		if ((p = pair_get(pairs, s->rank, s->peer)) == NULL)
			return -1;
		p->sends++;
		b = s->bytes > 0 ? s->bytes : 0;	/* nonsense: none */
		p->bytes = b > INT64_MAX - p->bytes ? INT64_MAX : p->bytes + b;
		if (s->match == 0 || g->rcv[s->match - 1].out) {
			p->usend++;
			continue;
		}
		r = &g->rcv[s->match - 1];
		p->matched++;
		p->lat += r->ts >= s->ts ? (double)(r->ts - s->ts) :
		    -(double)(s->ts - r->ts);
	}
	for (i = 0; i < g->nrcv; i++) {
		r = &g->rcv[i];
		if (!r->has_rank || r->out)
			continue;
		if ((p = pair_get(pairs, r->peer, r->rank)) == NULL)
			return -1;
		p->recvs++;
		p->urecv += r->match == 0 || g->snd[r->match - 1].out;
	}
	return 0;
}

static int
print_messages(const struct pv_msgs *g)
{
	struct pv_map pairs = { { 0 } };
	struct pair **p = NULL;
	struct msel c;
	size_t i;
	int rc = -1;

	printf("\nmessages (sends matched with receives by rank and tag, "
	    "first in, first out)\n");
	msel(g, &c);
	if (c.sends + c.recvs == 0) {
		printf("no message records\n");
		return 0;
	}
	if (fill_pairs(g, &pairs) != 0 ||
	    (p = (struct pair **)pv_map_values(&pairs)) == NULL)
		goto out;
	qsort(p, pv_map_n(&pairs), sizeof *p, by_ranks);
	if (pv_map_n(&pairs) > 0)
		printf("%11s %11s %12s %16s %12s %12s %16s %12s %12s\n",
		    "sender", "receiver", "sends", "bytes", "receives",
		    "matched", "mean latency(s)", "unm.sends", "unm.recvs");
	for (i = 0; i < pv_map_n(&pairs); i++) {
		printf("%11" PRId64 " %11" PRId64 " %12" PRIu64 " %16" PRId64
		    " %12" PRIu64 " %12" PRIu64, p[i]->from, p[i]->to,
		    p[i]->sends, p[i]->bytes, p[i]->recvs, p[i]->matched);
		if (p[i]->matched > 0)
			printf(" %16.9f", p[i]->lat / (double)p[i]->matched /
			    1e9);
		else
			printf(" %16s", "-");
		printf(" %12" PRIu64 " %12" PRIu64 "\n", p[i]->usend,
		    p[i]->urecv);
	}
	printf("matched messages: %" PRIu64 " of %" PRIu64 " sends and %"
	    PRIu64 " receives\n", c.matched, c.sends, c.recvs);
	if (c.norank > 0)
		printf("messages of processes with no rank (not matched): %"
		    PRIu64 "\n", c.norank);
	rc = 0;
out:
	free(p);
	pv_map_free(&pairs, NULL);
	return rc;
}

static int
by_node(const void *a, const void *b)
{
	const struct node *x = *(const struct node *const *)a;
	const struct node *y = *(const struct node *const *)b;

	return (x->id > y->id) - (x->id < y->id);
}

/* The collection phases of the global scheme, per node, if any. */
static int
print_phases(const struct stats *st)
{
	struct node **v;
	size_t i;
	char t1[32], t2[32];
	int any = 0;

	if ((v = (struct node **)pv_map_values(&st->nodes)) == NULL)
		return -1;
	qsort(v, pv_map_n(&st->nodes), sizeof *v, by_node);
	for (i = 0; i < pv_map_n(&st->nodes); i++) {
		if (v[i]->phases == 0 && v[i]->depth == 0)
			continue;
		if (!any)
			printf("\ncollection phases (global scheme: the node's "
			    "processes were stopped; left out of the time "
			    "profile)\n%6s %8s %18s %18s %8s\n", "node",
			    "phases", "stopped(s)", "longest(s)", "unended");
		any = 1;
		printf("%6" PRIu32 " %8" PRIu64 " %18s %18s %8" PRIu64 "\n",
		    v[i]->id, v[i]->phases,
		    pv_secs(t1, sizeof t1, v[i]->stopped),
		    pv_secs(t2, sizeof t2, v[i]->longest),
		    (uint64_t)(v[i]->depth != 0));
	}
	free(v);
	return 0;
}

static void
print_header(const char *path, const struct stats *st,
	     const struct grmtrace *r)
{
	uint64_t end;
	char t[32];

	printf("trace      %s\n", path);
	printf("records    %" PRIu64 "\n", st->records);
	printf("span       %s s\n", pv_secs(t, sizeof t,
	    st->last - st->first));
	printf("processes  %zu\n", pv_map_n(&st->procs));
	printf("threads    %zu\n", pv_map_n(&st->thrs));
	printf("losses     %" PRIu64 "\n", grmtrace_losses(r));
	if (grmtrace_ended(r, &end))
		printf("end        complete (#END %" PRIu64 ")\n", end);
	else
		printf("end        no #END line: the trace may be truncated\n");
}

static int
print_all(const char *path, struct stats *st, struct grmtrace *r)
{
	print_header(path, st, r);
	if (print_counts(st, r) != 0 || print_profile(st) != 0 ||
	    print_phases(st) != 0 || print_messages(&st->msgs) != 0 ||
	    pv_clock_print(r) != 0 ||
	    pv_stmode_print(&st->sm, r, &st->msgs, name_of_block, st) != 0)
		return -1;
	return 0;
}

/* Reads the files of fs into st, in order (sel: the records taken); the
 * reader of the last, at its end, in *rp, the losses of all in
 * *losses.  Returns 0, -1 on a reader's error (*rp then set), -2 out of
 * memory, -3 if a file cannot be opened (said in err, or on stderr if
 * err is NULL). */
static int
collect(const struct pv_files *fs, const struct pv_sel *sel,
	struct stats *st, struct grmtrace **rp, uint64_t *losses, char *err,
	size_t errlen)
{
	const struct grmtrace_ev *ev;
	struct grmtrace *r;
	struct thr *t;
	uint32_t it = 0;
	size_t i;
	int rc = 0;

	*rp = NULL;
	*losses = 0;
	st->sel = sel;
	for (i = 0; i < fs->n; i++) {
		if (*rp != NULL)
			grmtrace_close(*rp);
		if ((r = err != NULL ? pv_topen(fs->path[i], err,
		    errlen) : pv_open(fs->path[i])) == NULL) {
			*rp = NULL;
			return -3;
		}
		*rp = r;
		if (i + 1 == fs->n)
			grmtrace_limit(r, fs->limit);
		grmtrace_select(r, GRMTRACE_WANT(GRMTRACE_PROC) |
		    GRMTRACE_WANT(GRMTRACE_STATS_COUNT) |
		    GRMTRACE_WANT(GRMTRACE_STATS_RANGE) |
		    GRMTRACE_WANT(GRMTRACE_CONTROL));
		while ((rc = grmtrace_next(r, &ev)) == 1) {
			if (account(st, ev) != 0)
				return -2;
		}
		if (rc != 0)
			return rc;
		*losses += grmtrace_losses(r);
	}
	while ((t = pv_map_next(&st->stk, &it)) != NULL)
		for (i = 0; i < t->depth; i++)
			st->unclosed += (uint64_t)t->st[i].in;
	if (pv_msgs_match(&st->msgs) != 0)
		return -2;
	return 0;
}

static void
stats_free(struct stats *st)
{
	pv_map_free(&st->thrs, NULL);
	pv_map_free(&st->stk, thr_free);
	pv_map_free(&st->nodes, NULL);
	pv_map_free(&st->procs, NULL);
	pv_map_free(&st->evcs, NULL);
	pv_map_free(&st->blks, blk_free);
	pv_strs_free(&st->names);
	pv_sym_free(&st->sym);
	pv_msgs_free(&st->msgs);
	pv_stmode_free(&st->sm);
	pv_load_free(&st->load);
}

int
pv_stats(const char *path, const struct pv_sel *sel)
{
	static const struct pv_sel all = PV_SEL_ALL;
	struct stats st;
	const struct pv_files fs = { &path, 1, 0 };
	struct grmtrace *r;
	uint64_t losses;
	int rc;

	memset(&st, 0, sizeof st);
	rc = collect(&fs, sel != NULL ? sel : &all, &st, &r, &losses, NULL,
	    0);
	if (rc == 0 && print_all(path, &st, r) != 0)
		rc = -2;
	stats_free(&st);
	if (rc == -3)
		return 1;
	if (rc == -1)
		return pv_fail(path, r);
	pv_close(path, r);
	if (rc != 0) {
		fprintf(stderr, "prove: out of memory\n");
		return 1;
	}
	return pv_flush();
}

/* ---- the same numbers as JSON, for the BEE views ---- */

static const char *
eid_name(const struct grmtrace *r, int32_t eid)
{
	const struct grmtrace_def *def = grmtrace_def(r, eid);

	return def == NULL ? "" : def->description[0] != '\0' ?
	    def->description : def->format;
}

/* ---- the pieces of that JSON, pv_bee.c's too ---- */

void
pv_bee_head(struct evbuffer *out, uint64_t records, uint64_t first,
	    uint64_t last, size_t procs, size_t threads, uint64_t losses)
{
	char t[32];

	evbuffer_add_printf(out, "{\"records\":%" PRIu64 ",\"first\":%" PRIu64
	    ",\"last\":%" PRIu64 ",\"span\":\"%s\",\"processes\":%zu,"
	    "\"threads\":%zu,\"losses\":%" PRIu64, records, first, last,
	    pv_secs(t, sizeof t, last - first), procs, threads, losses);
}

void
pv_bee_count(struct evbuffer *out, size_t i, int32_t eid, uint64_t count,
	     const char *name)
{
	evbuffer_add_printf(out, "%s[%" PRId32 ",%" PRIu64 ",", i ? "," : "",
	    eid, count);
	pv_json_str(out, name, strlen(name));
	evbuffer_add(out, "]", 1);
}

void
pv_bee_block(struct evbuffer *out, size_t i, const char *id, uint64_t count,
	     double mean, double var, uint64_t total, double sum,
	     const char *name, size_t len)
{
	char t[32];

	evbuffer_add_printf(out, "%s{\"id\":\"%s\",\"count\":%" PRIu64
	    ",\"mean\":\"%.9f\",\"variance\":\"%.6e\",\"total\":\"%s\","
	    "\"pct\":\"%.2f\",\"ns\":%" PRIu64 ",\"name\":", i ? "," : "", id,
	    count, mean / 1e9, var / 1e18, pv_secs(t, sizeof t, total),
	    sum > 0 ? 100 * (double)total / sum : 0.0, total);
	pv_json_str(out, name, len);
	evbuffer_add(out, "}", 1);
}

void
pv_bee_pair(struct evbuffer *out, size_t i, int64_t from, int64_t to,
	    uint64_t sends, int64_t bytes, uint64_t recvs, uint64_t matched,
	    double lat)
{
	evbuffer_add_printf(out, "%s[%" PRId64 ",%" PRId64 ",%" PRIu64 ",%"
	    PRId64 ",%" PRIu64 ",%" PRIu64 ",", i ? "," : "", from, to, sends,
	    bytes, recvs, matched);
	if (matched > 0)
		evbuffer_add_printf(out, "\"%.9f\"]", lat / (double)matched /
		    1e9);
	else
		evbuffer_add_printf(out, "\"-\"]");
}

unsigned
pv_lat_bucket(uint64_t lat)
{
	unsigned k;

	for (k = 0; k + 1 < PV_LAT_BUCKETS && lat >> (k + 1) != 0; k++)
		continue;
	return k;
}

void
pv_bee_lathist(struct evbuffer *out, const uint64_t *hist)
{
	unsigned k;
	int any = 0;

	evbuffer_add_printf(out, ",\"lathist\":[");
	for (k = 0; k < PV_LAT_BUCKETS; k++) {
		if (hist[k] == 0)
			continue;
		evbuffer_add_printf(out, "%s[%u,%" PRIu64 "]", any ? "," : "", k,
		    hist[k]);
		any = 1;
	}
	evbuffer_add(out, "]", 1);
}

void
pv_bee_lproc(struct evbuffer *out, size_t j, const struct pv_msgs *g,
	     uint32_t node, uint32_t pid, const uint64_t *c, size_t nc,
	     unsigned n)
{
	const struct pv_proc *pr;
	size_t i;

	evbuffer_add_printf(out, "%s{\"node\":%" PRIu32 ",\"pid\":%" PRIu32,
	    j ? "," : "", node, pid);
	if ((pr = pv_proc(g, node, pid)) != NULL && pr->has_rank)
		evbuffer_add_printf(out, ",\"rank\":%" PRId64, pr->rank);
	if (pr != NULL && pr->prog != NULL) {
		evbuffer_add_printf(out, ",\"prog\":");
		pv_json_str(out, pr->prog, pr->prog_len);
	}
	evbuffer_add_printf(out, ",\"c\":[");
	for (i = 0; i < n; i++)
		evbuffer_add_printf(out, "%s%" PRIu64, i ? "," : "",
		    i < nc ? c[i] : 0);
	evbuffer_add(out, "]}", 2);
}

static int
json_counts(const struct stats *st, const struct grmtrace *r,
	    struct evbuffer *out)
{
	struct evc **e;
	size_t i;

	if ((e = (struct evc **)pv_map_values(&st->evcs)) == NULL)
		return -1;
	qsort(e, pv_map_n(&st->evcs), sizeof *e, by_count);
	evbuffer_add_printf(out, ",\"counts\":[");
	for (i = 0; i < pv_map_n(&st->evcs); i++)
		pv_bee_count(out, i, e[i]->eid, e[i]->count,
		    eid_name(r, e[i]->eid));
	evbuffer_add(out, "]", 1);
	free(e);
	return 0;
}

static int
json_profile(const struct stats *st, struct evbuffer *out)
{
	struct blk_txt bt;
	struct blk **b;
	const char *nm;
	char buf[32];
	double sum;
	size_t i, n, len;

	if ((b = closed_blocks(st, &n, &sum)) == NULL)
		return -1;
	evbuffer_add_printf(out, ",\"unmatched\":%" PRIu64 ",\"unclosed\":%"
	    PRIu64 ",\"profile\":[", st->unmatched, st->unclosed);
	for (i = 0; i < n; i++) {
		blk_text(b[i], sum, &bt);
		nm = blk_name(st, b[i], buf, sizeof buf, &len);
		pv_bee_block(out, i, bt.id, b[i]->count, blk_mean(b[i]),
		    b[i]->m2 / (double)b[i]->count, b[i]->total, sum, nm, len);
	}
	evbuffer_add(out, "]", 1);
	free(b);
	return 0;
}

static int
json_messages(const struct stats *st, struct evbuffer *out)
{
	const struct pv_msgs *g = &st->msgs;
	struct pv_map pairs = { { 0 } };
	uint64_t hist[PV_LAT_BUCKETS] = { 0 };
	const struct pv_msg *sn, *rv;
	struct pair **p = NULL;
	struct msel c;
	size_t i;
	int rc = -1;

	if (fill_pairs(g, &pairs) != 0 ||
	    (p = (struct pair **)pv_map_values(&pairs)) == NULL)
		goto out;
	qsort(p, pv_map_n(&pairs), sizeof *p, by_ranks);
	msel(g, &c);
	evbuffer_add_printf(out, ",\"sends\":%" PRIu64 ",\"recvs\":%" PRIu64
	    ",\"matched\":%" PRIu64 ",\"norank\":%" PRIu64 ",\"pairs\":[",
	    c.sends, c.recvs, c.matched, c.norank);
	for (i = 0; i < pv_map_n(&pairs); i++)
		pv_bee_pair(out, i, p[i]->from, p[i]->to, p[i]->sends,
		    p[i]->bytes, p[i]->recvs, p[i]->matched, p[i]->lat);
	for (i = 0; i < g->nsnd; i++) {
		sn = &g->snd[i];
		if (!sn->has_rank || sn->out || sn->match == 0 ||
		    g->rcv[sn->match - 1].out)
			continue;
		rv = &g->rcv[sn->match - 1];
		hist[pv_lat_bucket(rv->ts > sn->ts ? rv->ts - sn->ts : 0)]++;
	}
	evbuffer_add(out, "]", 1);
	pv_bee_lathist(out, hist);
	rc = 0;
out:
	free(p);
	pv_map_free(&pairs, NULL);
	return rc;
}

static int
json_load(const struct stats *st, struct evbuffer *out)
{
	const struct pv_load_proc *p;
	size_t j;

	evbuffer_add_printf(out, ",\"load\":{\"origin\":%" PRIu64
	    ",\"width\":%" PRIu64 ",\"n\":%u,\"procs\":[", st->load.t0,
	    st->load.interval, st->load_n);
	for (j = 0; st->load_n != 0 && j < st->load.nprocs; j++) {
		p = &st->load.procs[j];
		pv_bee_lproc(out, j, &st->msgs, p->node, p->pid, p->count,
		    st->load.nbuckets, st->load_n);
	}
	evbuffer_add(out, "]}", 2);
	return 0;
}

int
pv_stats_json(const struct pv_files *fs, const struct pv_sel *sel,
	      unsigned load_n, struct evbuffer *out, char *err, size_t errlen)
{
	static const struct pv_sel all = PV_SEL_ALL;
	struct stats st;
	struct grmtrace *r;
	uint64_t losses;
	int rc;

	memset(&st, 0, sizeof st);
	if (sel == NULL)
		sel = &all;
	st.load_n = load_n;
	if (load_n != 0) {
		uint64_t w = 1;

		/* A range: buckets of it from its start (records cannot lie
		 * beyond); else from the first record, widened as they come. */
		if (sel->from > 0 && sel->to < UINT64_MAX)
			w = (sel->to - sel->from + load_n - 1) / load_n;
		pv_load_init(&st.load, w != 0 ? w : 1);
		if (sel->from > 0 && sel->to < UINT64_MAX)
			pv_load_cap(&st.load, sel->from, load_n);
		else
			st.load.max = load_n;
	}
	rc = collect(fs, sel, &st, &r, &losses, err, errlen);
	if (rc == -1)
		snprintf(err, errlen, "%s", grmtrace_error(r));
	if (rc == 0) {
		pv_bee_head(out, st.records, st.first, st.last,
		    pv_map_n(&st.procs), pv_map_n(&st.thrs), losses);
		if (json_counts(&st, r, out) != 0 ||
		    json_profile(&st, out) != 0 ||
		    json_messages(&st, out) != 0 || json_load(&st, out) != 0)
			rc = -2;
		evbuffer_add(out, "}\n", 2);
	}
	if (rc == -2)
		snprintf(err, errlen, "out of memory");
	stats_free(&st);
	if (r != NULL)
		grmtrace_close(r);
	return rc == 0 ? 0 : -1;
}
