/* SPDX-License-Identifier: MIT */
/* ex_otf2.c: prove export --to otf2: the trace as an OTF2 archive, written
 * with the OTF2 library (Vampir, Scalasca, ViTE read it). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <otf2/otf2.h>

#include "pv.h"
#include "pv_export.h"

/*
 * Two passes over the trace.  Pass 1 learns the threads (one OTF2
 * location each), processes (location groups), hosts (system tree nodes),
 * processes' ranks, the first time stamp and the wall-clock epoch, and
 * matches message sends with receives (pv_msgs).  Pass 2 writes the
 * events; definitions met on the way (regions, metric classes) are kept
 * and written with the others at the end, as the global definitions may
 * come after the events.
 *
 * Memory grows with threads, processes, hosts, definitions (regions,
 * metric classes, strings) and open blocks, and with the number of
 * message records (pv_msgs keeps each send and receive to match them, as
 * prove stats and svg do); never with the other records.  The OTF2 library
 * buffers at most two chunks (2 MiB) per location (chunk_alloc).
 *
 * Mapping (doc/formats.md, "OTF2"): locations are numbered 0 .. n-1: first
 * the first thread of each ranked process, in rank order (so that the
 * communicator's rank i is location i, which ViTE needs), then the other
 * threads, process by process.  Blocks, BEE ranges, functions and
 * collection phases are regions (enter and leave); a matched message
 * between ranked processes is an MPI send and receive on one communicator
 * of the ranked processes, with its tag and length; every other record is
 * a metric of a class per event type (its numeric fields; string fields
 * are left out and counted); #LOSS lines are an "events lost" metric and
 * process ends (#PROC exit, killed, gone) a metric too, written last.  Time stamps are
 * nanoseconds from the trace's first record; the clock properties carry
 * its wall-clock time (realtimeTimestamp), also in the GRM::EPOCH_NS
 * property.  A time stamp earlier than the previous one of its location
 * (clock corrections, late records) is raised to it and counted.
 */

#define REGION_PHASE	2	/* a collection phase, in frame.range */

struct frame {
	int64_t		id;
	int		range;
	uint32_t	region;
};

struct thr {
	uint32_t	node;
	uint32_t	pid;
	uint32_t	tid;
	uint64_t	loc;		/* location id */
	uint64_t	last;		/* last time stamp written */
	int		any;		/* an event was written */
	OTF2_EvtWriter	*w;
	struct frame	*st;
	size_t		depth;
	size_t		cap;
};

struct proc {
	uint32_t	node;
	uint32_t	pid;
	size_t		first;		/* its first thread, index + 1 */
	size_t		host;		/* system tree node */
	int		holder;		/* holds its rank in the comm */
	int64_t		rank;
	int		has_mtid;	/* its messages' thread: the first */
	uint32_t	mtid;		/* with one (its rank's location) */
	uint64_t	mseq;
};

/* A region: a block id, a range's name id, or a phase. */
struct region {
	int64_t		id;
	int		range;
	uint32_t	ref;
	uint64_t	name;		/* string id, 0 until known */
};

/* A metric class: an event type (eid, scope and format) or one of ours. */
struct mclass {
	uint32_t	ref;
	uint8_t		n;
	uint32_t	member0;	/* its members: member0 .. + n */
	OTF2_Type	type[GRMTRACE_FIELDS_MAX];
	uint8_t		field[GRMTRACE_FIELDS_MAX];	/* record field */
	uint32_t	name;		/* string ref */
	uint32_t	mname[GRMTRACE_FIELDS_MAX];	/* members' */
};

struct ox {
	const struct pv_export *x;
	struct pv_strs	strs;		/* every OTF2 string: id - 1 */
	struct pv_strs	names;		/* pv_mark's range names */
	struct pv_sym	sym;
	struct pv_msgs	msgs;
	struct pv_map	thx;		/* (node << 32 | pid, tid) -> thr */
	struct thr	**th;		/* by location */
	size_t		nth;
	struct pv_map	px;		/* (node, pid) -> struct proc */
	struct proc	**pr;
	size_t		npr;
	struct pv_map	hx;		/* (node, 0) -> host index + 1 */
	uint32_t	*hosts;		/* node of each */
	size_t		nhost;
	size_t		chost;
	struct pv_map	bnames;		/* (block id, 0) -> string id */
	struct pv_map	rx;		/* (id, range) -> struct region */
	uint32_t	nreg;
	struct pv_map	mx;		/* (key) -> struct mclass */
	uint32_t	nmclass;
	uint32_t	nmember;
	int64_t		*ranks;		/* distinct ranks, sorted */
	size_t		nranks;
	uint8_t		*sok;		/* per send, per receive: as MPI */
	uint8_t		*rok;
	size_t		isnd;		/* sends and receives seen, pass 2 */
	size_t		ircv;
	struct pv_xrun	run;		/* progress, #CLOCK */
	uint64_t	t0;
	uint64_t	tmax;
	uint64_t	epoch;		/* wall-clock ns of t0, 0 if unknown */
	/* what could not be expressed */
	uint64_t	clamped;
	uint64_t	unmatched_end;	/* no block of its id open */
	uint64_t	closed_by;	/* closed by an enclosing one's end */
	uint64_t	unclosed;
	uint64_t	strfields;
	uint64_t	msg_metric;
	uint64_t	noloc;
	uint64_t	losses;
	OTF2_Archive	*ar;
};

static int
oom(void)
{
	fprintf(stderr, "prove: export: otf2: out of memory\n");
	return -1;
}

/* The OTF2 string ref of s[0..n) (ids start at 1, refs at 0). */
static int
sref(struct ox *o, const char *s, size_t n, uint32_t *ref)
{
	uint64_t id = pv_str_id(&o->strs, s, n);

	if (id == 0)
		return oom();
	*ref = (uint32_t)(id - 1);
	return 0;
}

static int
sref_f(struct ox *o, uint32_t *ref, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int
sref_f(struct ox *o, uint32_t *ref, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	return sref(o, buf, (size_t)n < sizeof buf ? (size_t)n :
	    sizeof buf - 1, ref);
}

/* ---- pass 1 ---- */

static struct proc *
proc_get(struct ox *o, uint32_t node, uint32_t pid)
{
	struct proc *p, **np;

	if ((p = pv_map_find(&o->px, node, pid)) != NULL)
		return p;
	if ((p = pv_map_get(&o->px, node, pid, sizeof *p)) == NULL)
		return NULL;
	p->node = node;
	p->pid = pid;
	if ((np = realloc(o->pr, (o->npr + 1) * sizeof *np)) == NULL)
		return NULL;
	o->pr = np;
	o->pr[o->npr++] = p;
	return p;
}

static struct thr *
thr_get(struct ox *o, uint32_t node, uint32_t pid, uint32_t tid)
{
	struct thr *t, **nt;
	struct proc *p;
	size_t *hv;
	uint32_t *nh;

	if ((t = pv_map_find(&o->thx, (uint64_t)node << 32 | pid, tid)) !=
	    NULL)
		return t;
	if ((p = proc_get(o, node, pid)) == NULL ||
	    (t = pv_map_get(&o->thx, (uint64_t)node << 32 | pid, tid,
	    sizeof *t)) == NULL ||
	    (nt = realloc(o->th, (o->nth + 1) * sizeof *nt)) == NULL)
		return NULL;
	o->th = nt;
	t->node = node;
	t->pid = pid;
	t->tid = tid;
	o->th[o->nth++] = t;
	if ((hv = pv_map_find(&o->hx, node, 0)) == NULL) {
		if ((nh = pv_grow(o->hosts, &o->chost, o->nhost,
		    sizeof *nh)) == NULL ||
		    (hv = pv_map_get(&o->hx, node, 0, sizeof *hv)) == NULL)
			return NULL;
		o->hosts = nh;
		o->hosts[o->nhost++] = node;
		*hv = o->nhost;
	}
	p->host = *hv;
	return t;
}

static int
survey(struct ox *o, struct grmtrace *r)
{
	const struct grmtrace_ev *ev;
	struct pv_mark m;
	int rc;

	while ((rc = grmtrace_next(r, &ev)) == 1) {
		if (ev->kind == GRMTRACE_CLOCK) {
			pv_xrun_clock(&o->run, ev);
			continue;
		}
		if (ev->kind == GRMTRACE_LOSS) {
			if (thr_get(o, ev->node, ev->pid, ev->tid) == NULL)
				return -2;
			continue;
		}
		if (ev->kind != GRMTRACE_RECORD) {
			if (pv_sym_ev(&o->sym, ev) != 0 ||
			    pv_msgs_ev(&o->msgs, ev, NULL) != 0)
				return -2;
			continue;
		}
		if (o->run.total == 0 || ev->ts < o->t0)
			o->t0 = ev->ts;
		if (o->run.total == 0 || ev->ts > o->tmax)
			o->tmax = ev->ts;
		o->run.total++;
		if (thr_get(o, ev->node, ev->pid, ev->tid) == NULL ||
		    pv_mark(&o->names, &o->sym, ev, &m) != 0 ||
		    pv_msgs_ev(&o->msgs, ev, &m) != 0)
			return -2;
	}
	return rc;
}

static int
by_rank(const void *a, const void *b)
{
	const struct proc *x = *(const struct proc *const *)a;
	const struct proc *y = *(const struct proc *const *)b;

	if (x->holder != y->holder)
		return y->holder - x->holder;
	if (x->holder && x->rank != y->rank)
		return pv_cmp(x->rank, y->rank);
	return 0;
}

static int
cmp_i64(const void *a, const void *b)
{
	return pv_cmp(*(const int64_t *)a, *(const int64_t *)b);
}

/* The comm index of rank, or -1. */
static int64_t
rank_ix(const struct ox *o, int64_t rank)
{
	const int64_t *p = bsearch(&rank, o->ranks, o->nranks,
	    sizeof *o->ranks, cmp_i64);

	return p == NULL ? -1 : p - o->ranks;
}

static int
msg_ok(const struct ox *o, const struct pv_msg *s, const struct pv_msg *r)
{
	const struct proc *ps = pv_map_find(&o->px, s->node, s->pid);
	const struct proc *pr = pv_map_find(&o->px, r->node, r->pid);

	return ps != NULL && pr != NULL && ps->holder && pr->holder &&
	    s->tid == ps->mtid && r->tid == pr->mtid &&
	    s->tag >= 0 && s->tag <= (int64_t)UINT32_MAX;
}

/* Each process's first thread with a message: its rank's location. */
static void
msg_threads(struct ox *o, const struct pv_msg *v, size_t n)
{
	struct proc *p;
	size_t i;

	for (i = 0; i < n; i++)
		if ((p = pv_map_find(&o->px, v[i].node, v[i].pid)) != NULL &&
		    (!p->has_mtid || v[i].seq < p->mseq)) {
			p->has_mtid = 1;
			p->mtid = v[i].tid;
			p->mseq = v[i].seq;
		}
}

/* Ranks, the order of the locations, the messages written as MPI ones. */
static int
plan(struct ox *o)
{
	const struct pv_proc *pp;
	struct proc **ord;
	struct thr *t;
	uint64_t loc = 0;
	size_t i, j;

	if ((o->ranks = malloc((o->npr + 1) * sizeof *o->ranks)) == NULL ||
	    (ord = malloc((o->npr + 1) * sizeof *ord)) == NULL)
		return oom();
	/* The first process seen with a rank holds it. */
	for (i = 0; i < o->npr; i++) {
		pp = pv_proc(&o->msgs, o->pr[i]->node, o->pr[i]->pid);
		if (pp == NULL || !pp->has_rank || o->pr[i]->pid == 0)
			continue;
		o->pr[i]->rank = pp->rank;
		for (j = 0; j < o->nranks && o->ranks[j] != pp->rank; j++)
			continue;
		if (j < o->nranks)
			continue;
		o->ranks[o->nranks++] = pp->rank;
		o->pr[i]->holder = 1;
	}
	qsort(o->ranks, o->nranks, sizeof *o->ranks, cmp_i64);
	memcpy(ord, o->pr, o->npr * sizeof *ord);
	/* Stable enough: ties keep first-seen order by index below. */
	for (i = 0; i < o->npr; i++)
		ord[i]->first = i;	/* scratch: first-seen order */
	qsort(ord, o->npr, sizeof *ord, by_rank);
	/* qsort is not stable: order the unranked by first-seen again. */
	for (i = 0; i < o->npr && ord[i]->holder; i++)
		continue;
	for (j = i + 1; j < o->npr; j++) {
		struct proc *p = ord[j];
		size_t k = j;

		while (k > i && ord[k - 1]->first > p->first) {
			ord[k] = ord[k - 1];
			k--;
		}
		ord[k] = p;
	}
	for (i = 0; i < o->npr; i++)
		ord[i]->first = 0;
	/* Location ids: the holders' message threads (else their first),
	 * then the others.  ViTE takes rank i for location i, and draws a
	 * message from any other location of a rank wrong (or crashes). */
	msg_threads(o, o->msgs.snd, o->msgs.nsnd);
	msg_threads(o, o->msgs.rcv, o->msgs.nrcv);
	for (i = 0; i < o->nth; i++)
		o->th[i]->loc = UINT64_MAX;
	for (i = 0; i < o->npr && ord[i]->holder; i++)
		for (j = 0; j < o->nth; j++) {
			t = o->th[j];
			if (t->node == ord[i]->node && t->pid == ord[i]->pid &&
			    (!ord[i]->has_mtid || t->tid == ord[i]->mtid)) {
				t->loc = loc++;
				ord[i]->first = j + 1;
				break;
			}
		}
	for (i = 0; i < o->npr; i++)
		for (j = 0; j < o->nth; j++) {
			t = o->th[j];
			if (t->node != ord[i]->node || t->pid != ord[i]->pid)
				continue;
			if (ord[i]->first == 0)
				ord[i]->first = j + 1;
			if (t->loc == UINT64_MAX)
				t->loc = loc++;
		}
	free(ord);
	/* Threads by location id. */
	{
		struct thr **byloc = malloc((o->nth + 1) * sizeof *byloc);

		if (byloc == NULL)
			return oom();
		for (i = 0; i < o->nth; i++)
			byloc[o->th[i]->loc] = o->th[i];
		free(o->th);
		o->th = byloc;
	}
	if (pv_msgs_match(&o->msgs) != 0 ||
	    (o->sok = calloc(o->msgs.nsnd + 1, 1)) == NULL ||
	    (o->rok = calloc(o->msgs.nrcv + 1, 1)) == NULL)
		return oom();
	for (i = 0; i < o->msgs.nsnd; i++) {
		const struct pv_msg *s = &o->msgs.snd[i];

		if (s->match == 0 ||
		    !msg_ok(o, s, &o->msgs.rcv[s->match - 1]))
			continue;
		o->sok[i] = 1;
		o->rok[s->match - 1] = 1;
	}
	/* What pass 2 needs of the messages: sok, rok, and the peers. */
	o->epoch = pv_xrun_epoch(&o->run, o->t0);
	return 0;
}

/* ---- pass 2 ---- */

static OTF2_FlushType
pre_flush(void *ud, OTF2_FileType ft, OTF2_LocationRef loc, void *cd,
	  bool final)
{
	(void)ud;
	(void)ft;
	(void)loc;
	(void)cd;
	(void)final;
	return OTF2_FLUSH;
}

static const OTF2_FlushCallbacks flush_cb = { pre_flush, NULL };

/*
 * The chunks of one OTF2 buffer.  Left to itself the library keeps every
 * chunk of a location's events until the end; refusing a third chunk of
 * events makes it flush the buffer to its file and free its chunks, so
 * each location holds at most two (2 MiB).  Definitions are not bounded
 * (they grow with definitions).
 */
#define EVT_CHUNKS	2

struct chunks {
	void		**v;
	size_t		n;
	size_t		cap;
};

static void *
chunk_alloc(void *ud, OTF2_FileType ft, OTF2_LocationRef loc, void **pbd,
	    uint64_t size)
{
	struct chunks *c = *pbd;
	void **nv, *m;

	(void)ud;
	(void)loc;
	if (c == NULL && (c = *pbd = calloc(1, sizeof *c)) == NULL)
		return NULL;
	if (ft == OTF2_FILETYPE_EVENTS && c->n >= EVT_CHUNKS)
		return NULL;
	if ((nv = pv_grow(c->v, &c->cap, c->n, sizeof *nv)) == NULL)
		return NULL;
	c->v = nv;
	if ((m = malloc(size)) == NULL)
		return NULL;
	c->v[c->n++] = m;
	return m;
}

static void
chunk_free_all(void *ud, OTF2_FileType ft, OTF2_LocationRef loc, void **pbd,
	       bool final)
{
	struct chunks *c = *pbd;

	(void)ud;
	(void)ft;
	(void)loc;
	if (c == NULL)
		return;
	while (c->n > 0)
		free(c->v[--c->n]);
	if (final) {
		free(c->v);
		free(c);
		*pbd = NULL;
	}
}

static const OTF2_MemoryCallbacks memory_cb = { chunk_alloc,
    chunk_free_all };

static int
otf2_fail(const char *what, OTF2_ErrorCode e)
{
	fprintf(stderr, "prove: export: otf2: %s: %s\n", what,
	    OTF2_Error_GetDescription(e));
	return -1;
}

/* The time stamp of ev on t: from t0, not before t's previous one. */
static uint64_t
stamp(struct ox *o, struct thr *t, uint64_t ts)
{
	uint64_t v = ts >= o->t0 ? ts - o->t0 : 0;

	if (t->any && v < t->last) {
		o->clamped++;
		v = t->last;
	}
	t->any = 1;
	t->last = v;
	if (v > o->tmax)
		o->tmax = v;
	return v;
}

static int
writer(struct ox *o, struct thr *t)
{
	if (t->w != NULL)
		return 0;
	if ((t->w = OTF2_Archive_GetEvtWriter(o->ar, t->loc)) == NULL) {
		fprintf(stderr, "prove: export: otf2: no event writer for "
		    "location %" PRIu64 "\n", t->loc);
		return -1;
	}
	return 0;
}

static struct region *
region(struct ox *o, int64_t id, int range)
{
	struct region *g = pv_map_find(&o->rx, (uint64_t)id, (uint64_t)range);

	if (g != NULL)
		return g;
	if ((g = pv_map_get(&o->rx, (uint64_t)id, (uint64_t)range,
	    sizeof *g)) == NULL)
		return NULL;
	g->id = id;
	g->range = range;
	g->ref = o->nreg++;
	return g;
}

static int
enter(struct ox *o, struct thr *t, const struct pv_mark *m, uint64_t ts)
{
	struct region *g;
	struct frame *f;
	OTF2_ErrorCode e;

	if ((g = region(o, m->id, m->range)) == NULL)
		return oom();
	if (t->depth == t->cap) {
		if ((f = realloc(t->st, (t->cap + 16) * 2 * sizeof *f)) ==
		    NULL)
			return oom();
		t->st = f;
		t->cap = (t->cap + 16) * 2;
	}
	t->st[t->depth++] = (struct frame){ m->id, m->range, g->ref };
	if ((e = OTF2_EvtWriter_Enter(t->w, NULL, stamp(o, t, ts),
	    g->ref)) != OTF2_SUCCESS)
		return otf2_fail("enter", e);
	return 0;
}

static int
leave_top(struct thr *t, uint64_t v)
{
	OTF2_ErrorCode e;

	t->depth--;
	if ((e = OTF2_EvtWriter_Leave(t->w, NULL, v,
	    t->st[t->depth].region)) != OTF2_SUCCESS)
		return otf2_fail("leave", e);
	return 0;
}

/* As prove stats: an end closes the innermost open block of its id and
 * those above it (counted); with none open it is counted and left out. */
static int
leave(struct ox *o, struct thr *t, const struct pv_mark *m, uint64_t ts)
{
	size_t i;
	uint64_t v;

	for (i = t->depth; i > 0 && (t->st[i - 1].id != m->id ||
	    t->st[i - 1].range != m->range); i--)
		continue;
	if (i == 0) {
		o->unmatched_end++;
		return 0;
	}
	v = stamp(o, t, ts);
	while (t->depth >= i) {
		if (t->depth > i)
			o->closed_by++;
		if (leave_top(t, v) != 0)
			return -1;
	}
	return 0;
}

/* The metric class of record type (eid, def), or of one of ours (def NULL,
 * name, n members of type ty named by mnames). */
static struct mclass *
mclass(struct ox *o, const struct grmtrace_ev *ev, const char *name,
       uint8_t n, const OTF2_Type *ty)
{
	const struct grmtrace_def *d = ev != NULL ? ev->def : NULL;
	struct mclass *c;
	uint64_t k1, k2, fid;
	const char *nm;
	uint32_t ref;
	unsigned i;

	if (d != NULL) {
		if ((fid = pv_str_id(&o->strs, d->format,
		    strlen(d->format))) == 0)
			return NULL;
		k1 = (uint64_t)(uint32_t)ev->eid << 32 | fid;
		k2 = (uint64_t)d->node << 32 | d->pid;
	} else {
		if ((fid = pv_str_id(&o->strs, name, strlen(name))) == 0)
			return NULL;
		k1 = fid;
		k2 = UINT64_MAX;
	}
	if ((c = pv_map_find(&o->mx, k1, k2)) != NULL)
		return c;
	if ((c = pv_map_get(&o->mx, k1, k2, sizeof *c)) == NULL)
		return NULL;
	c->ref = o->nmclass++;
	if (d != NULL) {
		for (i = 0; i < ev->n && i < GRMTRACE_FIELDS_MAX; i++) {
			switch (d->type[i]) {
			case GRMTRACE_INT:
				c->type[c->n] = OTF2_TYPE_INT64;
				break;
			case GRMTRACE_UINT:
				c->type[c->n] = OTF2_TYPE_UINT64;
				break;
			case GRMTRACE_DOUBLE:
				c->type[c->n] = OTF2_TYPE_DOUBLE;
				break;
			default:
				continue;
			}
			c->field[c->n++] = (uint8_t)i;
		}
		nm = d->description[0] != '\0' ? d->description : d->format;
		if (sref_f(o, &ref, "%s (eid %" PRId32 ")", nm, ev->eid) != 0)
			return NULL;
	} else {
		for (i = 0; i < n; i++) {
			c->type[i] = ty[i];
			c->field[i] = (uint8_t)i;
		}
		c->n = n;
		if (sref(o, name, strlen(name), &ref) != 0)
			return NULL;
	}
	c->name = ref;
	if (c->n <= 1)
		c->mname[0] = ref;
	else
		for (i = 0; i < c->n; i++)
			if (sref_f(o, &c->mname[i], "%s: field %u",
			    o->strs.v[ref].s, (unsigned)c->field[i] + 1) != 0)
				return NULL;
	c->member0 = o->nmember;
	o->nmember += c->n == 0 ? 1 : c->n;
	return c;
}

static int
metric(struct ox *o, struct thr *t, uint64_t ts, struct mclass *c,
       const OTF2_MetricValue *val)
{
	static const OTF2_Type one_t = OTF2_TYPE_UINT64;
	static const OTF2_MetricValue one_v = { .unsigned_int = 1 };
	OTF2_ErrorCode e;

	if (c->n == 0)
		e = OTF2_EvtWriter_Metric(t->w, NULL, stamp(o, t, ts), c->ref,
		    1, &one_t, &one_v);
	else
		e = OTF2_EvtWriter_Metric(t->w, NULL, stamp(o, t, ts), c->ref,
		    c->n, c->type, val);
	return e == OTF2_SUCCESS ? 0 : otf2_fail("metric", e);
}

/* A record that is no block, range, phase or MPI message. */
static int
user_event(struct ox *o, struct thr *t, const struct grmtrace_ev *ev)
{
	OTF2_MetricValue val[GRMTRACE_FIELDS_MAX];
	const struct grmtrace_field *f;
	struct mclass *c;
	unsigned i;
	int strs = 0;

	if (ev->def == NULL)
		return 0;
	if ((c = mclass(o, ev, NULL, 0, NULL)) == NULL)
		return oom();
	for (i = 0; i < ev->n; i++)
		strs |= ev->f[i].type == GRMTRACE_STRING;
	o->strfields += strs;
	for (i = 0; i < c->n; i++) {
		val[i].unsigned_int = 0;
		if (c->field[i] >= ev->n)
			continue;
		f = &ev->f[c->field[i]];
		switch (c->type[i]) {
		case OTF2_TYPE_INT64:
			val[i].signed_int = f->type == GRMTRACE_DOUBLE ?
			    (int64_t)f->v.d : f->v.i;
			break;
		case OTF2_TYPE_UINT64:
			val[i].unsigned_int = f->type == GRMTRACE_DOUBLE ?
			    (uint64_t)f->v.d : f->v.u;
			break;
		default:
			val[i].floating_point = f->type == GRMTRACE_DOUBLE ?
			    f->v.d : f->type == GRMTRACE_INT ?
			    (double)f->v.i : (double)f->v.u;
		}
	}
	return metric(o, t, ev->ts, c, val);
}

static int
message(struct ox *o, struct thr *t, const struct grmtrace_ev *ev,
	const struct pv_mark *m)
{
	int send = m->kind == PV_SEND;
	size_t i = send ? o->isnd++ : o->ircv++;
	const uint8_t *ok = send ? o->sok : o->rok;
	OTF2_ErrorCode e;
	uint64_t len = m->bytes > 0 ? (uint64_t)m->bytes : 0;
	int64_t peer;

	if (i >= (send ? o->msgs.nsnd : o->msgs.nrcv) || !ok[i] ||
	    (peer = rank_ix(o, m->id)) < 0) {
		o->msg_metric++;
		return user_event(o, t, ev);
	}
	if (send)
		e = OTF2_EvtWriter_MpiSend(t->w, NULL, stamp(o, t, ev->ts),
		    (uint32_t)peer, 0, (uint32_t)m->tag, len);
	else
		e = OTF2_EvtWriter_MpiRecv(t->w, NULL, stamp(o, t, ev->ts),
		    (uint32_t)peer, 0, (uint32_t)m->tag, len);
	return e == OTF2_SUCCESS ? 0 : otf2_fail("message", e);
}

static int
block_name(struct ox *o, const struct pv_mark *m)
{
	uint64_t *v, id;

	if ((id = pv_str_id(&o->strs, m->s, m->len)) == 0 ||
	    (v = pv_map_get(&o->bnames, (uint64_t)m->id, 0, sizeof *v)) ==
	    NULL)
		return oom();
	*v = id;
	return 0;
}

/* The thread (node, pid, tid), else the first of process (node, pid), else
 * NULL. */
static struct thr *
proc_thr(struct ox *o, uint32_t node, uint32_t pid, uint32_t tid)
{
	struct thr *t = pv_map_find(&o->thx, (uint64_t)node << 32 | pid, tid);
	size_t i;

	for (i = 0; t == NULL && i < o->nth; i++)
		if (o->th[i]->node == node && o->th[i]->pid == pid)
			t = o->th[i];
	return t;
}

static int
meta(struct ox *o, const struct grmtrace_ev *ev)
{
	static const OTF2_Type u1[1] = { OTF2_TYPE_UINT64 };
	OTF2_MetricValue v;
	struct mclass *c;
	struct thr *t;

	if (ev->kind == GRMTRACE_PROC && pv_sym_ev(&o->sym, ev) != 0)
		return oom();
	if (ev->kind == GRMTRACE_LOSS) {
		o->losses += ev->count;
		if ((t = proc_thr(o, ev->node, ev->pid, ev->tid)) == NULL) {
			o->noloc++;
			return 0;
		}
		if (writer(o, t) != 0)
			return -1;
		if ((c = mclass(o, NULL, "events lost (#LOSS)", 1, u1)) ==
		    NULL)
			return oom();
		v.unsigned_int = ev->count;
		return metric(o, t, ev->ts, c, &v);
	}
	return 0;
}

/*
 * How each process ended (#PROC exit, killed, gone), as a metric on its
 * first thread, once its records are written: a #PROC line may come
 * before records of earlier times (the Local Monitor learns of an end
 * before it collects the last records), so these are written last, each
 * at its time or its thread's last, whichever is later (not counted as
 * raised).
 */
static int
proc_ends(struct ox *o, const struct grmtrace *r)
{
	static const OTF2_Type i1[1] = { OTF2_TYPE_INT64 };
	const struct grmtrace_proc *gp;
	OTF2_MetricValue v;
	struct mclass *c;
	struct thr *t;
	uint64_t ts;
	size_t i;

	for (i = 0; i < o->npr; i++) {
		gp = grmtrace_proc(r, o->pr[i]->node, o->pr[i]->pid);
		if (gp == NULL || !gp->ended || gp->how == GRMTRACE_PROC_EXEC ||
		    o->pr[i]->first == 0)
			continue;
		t = pv_map_find(&o->thx, (uint64_t)o->pr[i]->node << 32 |
		    o->pr[i]->pid, o->pr[i]->pid);
		if (t == NULL)
			t = proc_thr(o, o->pr[i]->node, o->pr[i]->pid, 0);
		if (t == NULL || writer(o, t) != 0)
			return -1;
		c = mclass(o, NULL, gp->how == GRMTRACE_PROC_EXIT ?
		    "process exit status (#PROC exit)" :
		    gp->how == GRMTRACE_PROC_KILLED ?
		    "process killed by signal (#PROC killed)" :
		    "process gone (#PROC gone)", 1, i1);
		if (c == NULL)
			return oom();
		v.signed_int = gp->status;
		ts = gp->end_ts;
		if (t->any && ts - o->t0 < t->last)
			ts = t->last + o->t0;
		if (ts < o->t0)
			ts = o->t0;
		if (metric(o, t, ts, c, &v) != 0)
			return -1;
	}
	return 0;
}

static int
write_events(struct ox *o, struct grmtrace *r)
{
	const struct grmtrace_ev *ev;
	struct pv_mark m;
	struct thr *t;
	int rc;

	while ((rc = grmtrace_next(r, &ev)) == 1) {
		if (ev->kind != GRMTRACE_RECORD) {
			if (meta(o, ev) != 0)
				return -2;
			continue;
		}
		pv_xrun_record(&o->run);
		if ((t = pv_map_find(&o->thx, (uint64_t)ev->node << 32 |
		    ev->pid, ev->tid)) == NULL || writer(o, t) != 0 ||
		    pv_mark(&o->names, &o->sym, ev, &m) != 0)
			return -2;
		switch (m.kind) {
		case PV_BEGIN:
		case PV_CBEGIN:
			if (m.kind == PV_CBEGIN) {
				m.range = REGION_PHASE;
				m.id = 0;
			}
			rc = enter(o, t, &m, ev->ts);
			break;
		case PV_END:
		case PV_CEND:
			if (m.kind == PV_CEND) {
				m.range = REGION_PHASE;
				m.id = 0;
			}
			rc = leave(o, t, &m, ev->ts);
			break;
		case PV_BNAME:
			rc = block_name(o, &m);
			break;
		case PV_PNAME:
			rc = 0;
			break;
		case PV_SEND:
		case PV_RECV:
			rc = message(o, t, ev, &m);
			break;
		default:
			rc = user_event(o, t, ev);
		}
		if (rc != 0)
			return -2;
	}
	return rc;
}

/* Closes the blocks still open at the end, at their thread's last time. */
static int
close_open(struct ox *o)
{
	struct thr *t;
	size_t i;

	for (i = 0; i < o->nth; i++) {
		t = o->th[i];
		o->unclosed += t->depth;
		while (t->depth > 0)
			if (leave_top(t, t->last) != 0)
				return -1;
	}
	return 0;
}

/* ---- definitions ---- */

static int
region_name(struct ox *o, const struct region *g, uint32_t *ref)
{
	const uint64_t *bn;
	const char *s;
	size_t len;

	switch (g->range) {
	case REGION_PHASE:
		return sref_f(o, ref, "collection phase (processes stopped)");
	case 1:
		if ((s = pv_str(&o->names, (uint64_t)g->id, &len)) != NULL)
			return sref(o, s, len, ref);
		return sref_f(o, ref, "range %" PRId64, g->id);
	default:
		if ((bn = pv_map_find(&o->bnames, (uint64_t)g->id, 0)) !=
		    NULL) {
			*ref = (uint32_t)(*bn - 1);
			return 0;
		}
		return sref_f(o, ref, "block %" PRId64, g->id);
	}
}

static int
group_name(struct ox *o, const struct proc *p, uint32_t *ref)
{
	const struct pv_proc *pp = pv_proc(&o->msgs, p->node, p->pid);

	if (p->pid == 0)
		return sref_f(o, ref, "local monitor node %" PRIu32, p->node);
	if (pp != NULL && pp->has_rank)
		return sref_f(o, ref, "%.*s rank %" PRId64 " (node %" PRIu32
		    " pid %" PRIu32 ")", pp->name != NULL ? (int)pp->name_len :
		    0, pp->name != NULL ? pp->name : "", pp->rank, p->node,
		    p->pid);
	if (pp != NULL && pp->prog != NULL)
		return sref_f(o, ref, "%.*s (node %" PRIu32 " pid %" PRIu32
		    ")", (int)pp->prog_len, pp->prog, p->node, p->pid);
	return sref_f(o, ref, "node %" PRIu32 " pid %" PRIu32, p->node,
	    p->pid);
}

static int
by_ref(const void *a, const void *b)
{
	const struct mclass *x = *(const struct mclass *const *)a;
	const struct mclass *y = *(const struct mclass *const *)b;

	return (x->ref > y->ref) - (x->ref < y->ref);
}

#define CK(call)	do { if ((e = (call)) != OTF2_SUCCESS) \
	return otf2_fail(#call, e); } while (0)

static int
write_defs(struct ox *o, const struct grmtrace *r)
{
	OTF2_GlobalDefWriter *gw;
	OTF2_ErrorCode e;
	const struct grmtrace_host *h;
	struct region **gv = NULL;
	struct mclass **cv = NULL;
	uint64_t *mem = NULL, nev;
	uint32_t s1, s2, s3, s4, empty;
	size_t i, j, n;
	int rc = -1;

	if ((gw = OTF2_Archive_GetGlobalDefWriter(o->ar)) == NULL) {
		fprintf(stderr, "prove: export: otf2: no definition writer\n");
		return -1;
	}
	/* Names first: every string is interned before any is written. */
	if (sref(o, "", 0, &empty) != 0 ||
	    sref_f(o, &s1, "grm trace") != 0 || sref_f(o, &s2, "machine") != 0 ||
	    sref_f(o, &s3, "node") != 0)
		return -1;
	{
		uint32_t *hn = malloc((o->nhost + 1) * sizeof *hn);
		uint32_t *pn = malloc((o->npr + 1) * sizeof *pn);
		uint32_t *ln = malloc((o->nth + 1) * sizeof *ln);
		uint32_t *rn = malloc((o->nreg + 1) * sizeof *rn);
		uint32_t cw, gl, gg, mpi;

		if (hn == NULL || pn == NULL || ln == NULL || rn == NULL ||
		    (gv = (struct region **)pv_map_values(&o->rx)) == NULL ||
		    (cv = (struct mclass **)pv_map_values(&o->mx)) == NULL ||
		    (mem = malloc((o->nth + o->nranks + 1) *
		    sizeof *mem)) == NULL) {
			oom();
			goto names_out;
		}
		for (i = 0; i < o->nhost; i++) {
			h = grmtrace_host(r, o->hosts[i]);
			if ((h != NULL && h->hostname != NULL ?
			    sref_f(o, &hn[i], "%s (node %" PRIu32 ")",
			    h->hostname, o->hosts[i]) :
			    sref_f(o, &hn[i], "node %" PRIu32, o->hosts[i])) !=
			    0)
				goto names_out;
		}
		for (i = 0; i < o->npr; i++)
			if (group_name(o, o->pr[i], &pn[i]) != 0)
				goto names_out;
		for (i = 0; i < o->nth; i++)
			if (sref_f(o, &ln[i], "thread %" PRIu32,
			    o->th[i]->tid) != 0)
				goto names_out;
		for (i = 0; i < o->nreg; i++)
			if (region_name(o, gv[i], &rn[gv[i]->ref]) != 0)
				goto names_out;
		if (sref_f(o, &cw, "grm ranks") != 0 ||
		    sref_f(o, &gl, "grm ranks' locations") != 0 ||
		    sref_f(o, &gg, "grm ranks' group") != 0 ||
		    sref_f(o, &mpi, "MPI") != 0 ||
		    sref_f(o, &s4, "prove export") != 0)
			goto names_out;
		/* Strings. */
		for (i = 0; i < o->strs.n; i++)
			CK(OTF2_GlobalDefWriter_WriteString(gw, (uint32_t)i,
			    o->strs.v[i].s));
		CK(OTF2_GlobalDefWriter_WriteClockProperties(gw,
		    1000000000ull, 0, o->tmax + 1, o->epoch));
		CK(OTF2_GlobalDefWriter_WriteParadigm(gw, OTF2_PARADIGM_MPI,
		    mpi, OTF2_PARADIGM_CLASS_PROCESS));
		/* System tree: the trace, its hosts. */
		CK(OTF2_GlobalDefWriter_WriteSystemTreeNode(gw, 0, s1, s2,
		    OTF2_UNDEFINED_SYSTEM_TREE_NODE));
		for (i = 0; i < o->nhost; i++)
			CK(OTF2_GlobalDefWriter_WriteSystemTreeNode(gw,
			    (uint32_t)(i + 1), hn[i], s3, 0));
		for (i = 0; i < o->npr; i++)
			CK(OTF2_GlobalDefWriter_WriteLocationGroup(gw,
			    (uint32_t)i, pn[i],
			    OTF2_LOCATION_GROUP_TYPE_PROCESS,
			    (uint32_t)o->pr[i]->host,
			    OTF2_UNDEFINED_LOCATION_GROUP));
		for (i = 0; i < o->nth; i++) {
			const struct thr *t = o->th[i];

			for (j = 0; j < o->npr; j++)
				if (o->pr[j]->node == t->node &&
				    o->pr[j]->pid == t->pid)
					break;
			nev = 0;
			if (t->w != NULL)
				OTF2_EvtWriter_GetNumberOfEvents(t->w, &nev);
			CK(OTF2_GlobalDefWriter_WriteLocation(gw, t->loc,
			    ln[i], OTF2_LOCATION_TYPE_CPU_THREAD, nev,
			    (uint32_t)j));
		}
		for (i = 0; i < o->nreg; i++)
			CK(OTF2_GlobalDefWriter_WriteRegion(gw, (uint32_t)i,
			    rn[i], rn[i], empty, OTF2_REGION_ROLE_CODE,
			    OTF2_PARADIGM_USER, OTF2_REGION_FLAG_NONE, empty,
			    0, 0));
		/* Metric classes, each with its own members, in order. */
		n = pv_map_n(&o->mx);
		qsort(cv, n, sizeof *cv, by_ref);
		for (i = 0; i < n; i++) {
			const struct mclass *c = cv[i];
			OTF2_MetricMemberRef mr[GRMTRACE_FIELDS_MAX];
			uint8_t k, nm = c->n == 0 ? 1 : c->n;

			for (k = 0; k < nm; k++) {
				mr[k] = c->member0 + k;
				CK(OTF2_GlobalDefWriter_WriteMetricMember(gw,
				    mr[k], c->mname[k], empty,
				    OTF2_METRIC_TYPE_USER,
				    OTF2_METRIC_ABSOLUTE_POINT,
				    c->n == 0 ? OTF2_TYPE_UINT64 : c->type[k],
				    OTF2_BASE_DECIMAL, 0, empty));
			}
			CK(OTF2_GlobalDefWriter_WriteMetricClass(gw, c->ref,
			    nm, mr, OTF2_METRIC_ASYNCHRONOUS,
			    OTF2_RECORDER_KIND_ABSTRACT));
		}
		/* The ranked processes' communicator: rank i is location i. */
		if (o->nranks > 0) {
			for (i = 0; i < o->nranks; i++)
				mem[i] = i;
			CK(OTF2_GlobalDefWriter_WriteGroup(gw, 0, gl,
			    OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI,
			    OTF2_GROUP_FLAG_NONE, (uint32_t)o->nranks, mem));
			CK(OTF2_GlobalDefWriter_WriteGroup(gw, 1, gg,
			    OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
			    OTF2_GROUP_FLAG_NONE, (uint32_t)o->nranks, mem));
			CK(OTF2_GlobalDefWriter_WriteComm(gw, 0, cw, 1,
			    OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE));
		}
		rc = 0;
names_out:
		free(hn);
		free(pn);
		free(ln);
		free(rn);
	}
	free(gv);
	free(cv);
	free(mem);
	return rc;
}

/* ---- the command ---- */

static void
say_lost(const struct ox *o)
{
	const char *p = "prove: export: otf2:";

	if (o->clamped > 0)
		fprintf(stderr, "%s %" PRIu64 " time stamps earlier than the "
		    "previous one of their thread raised to it\n", p,
		    o->clamped);
	if (o->unmatched_end > 0)
		fprintf(stderr, "%s %" PRIu64 " block ends with no block of "
		    "their id open left out\n", p, o->unmatched_end);
	if (o->closed_by > 0)
		fprintf(stderr, "%s %" PRIu64 " blocks not ended closed by the "
		    "end of one enclosing them\n", p, o->closed_by);
	if (o->unclosed > 0)
		fprintf(stderr, "%s %" PRIu64 " blocks still open at the end "
		    "closed at their thread's last event\n", p, o->unclosed);
	if (o->msg_metric > 0)
		fprintf(stderr, "%s %" PRIu64 " message records written as "
		    "metrics (not matched, not between ranked processes, not of "
		    "the rank's messages' thread, or a tag out of 0 .. 2^32-1)"
		    "\n", p,
		    o->msg_metric);
	if (o->strfields > 0)
		fprintf(stderr, "%s %" PRIu64 " user events with string fields "
		    "written as metrics without them\n", p, o->strfields);
	if (o->noloc > 0)
		fprintf(stderr, "%s %" PRIu64 " #LOSS lines of threads "
		    "and processes with no records left out\n", p, o->noloc);
	if (o->losses > 0)
		fprintf(stderr, "%s the trace lost %" PRIu64 " events (#LOSS, "
		    "written as \"events lost\" metrics)\n", p, o->losses);
}

static void
thr_free(void *v)
{
	free(((struct thr *)v)->st);
}

static void
ox_free(struct ox *o)
{
	pv_strs_free(&o->strs);
	pv_strs_free(&o->names);
	pv_sym_free(&o->sym);
	pv_msgs_free(&o->msgs);
	pv_map_free(&o->thx, thr_free);
	pv_map_free(&o->px, NULL);
	pv_map_free(&o->hx, NULL);
	pv_map_free(&o->bnames, NULL);
	pv_map_free(&o->rx, NULL);
	pv_map_free(&o->mx, NULL);
	free(o->th);
	free(o->pr);
	free(o->hosts);
	free(o->ranks);
	free(o->sok);
	free(o->rok);
}

/* Pass 2 and the archive's files, into folder dir. */
static int
write_archive(struct ox *o, const char *dir)
{
	struct grmtrace *r;
	OTF2_ErrorCode e;
	char epoch[32];
	size_t i;
	int rc;

	if ((o->ar = OTF2_Archive_Open(dir, "traces", OTF2_FILEMODE_WRITE,
	    1 << 20, 4 << 20, OTF2_SUBSTRATE_POSIX,
	    OTF2_COMPRESSION_NONE)) == NULL) {
		fprintf(stderr, "prove: export: otf2: %s: cannot create the "
		    "archive\n", dir);
		return -1;
	}
	CK(OTF2_Archive_SetFlushCallbacks(o->ar, &flush_cb, NULL));
	CK(OTF2_Archive_SetMemoryCallbacks(o->ar, &memory_cb, NULL));
	CK(OTF2_Archive_SetSerialCollectiveCallbacks(o->ar));
	CK(OTF2_Archive_SetCreator(o->ar, "grm prove export"));
	CK(OTF2_Archive_SetDescription(o->ar, o->x->in));
	snprintf(epoch, sizeof epoch, "%" PRIu64, o->epoch);
	CK(OTF2_Archive_SetProperty(o->ar, "GRM::EPOCH_NS", epoch, true));
	CK(OTF2_Archive_OpenEvtFiles(o->ar));
	if ((r = pv_open(o->x->in)) == NULL)
		return -1;
	grmtrace_select(r, GRMTRACE_WANT(GRMTRACE_PROC) |
	    GRMTRACE_WANT(GRMTRACE_LOSS));
	o->tmax = 0;
	pv_xrun_start(&o->run);
	rc = write_events(o, r);
	if (rc == -1) {
		pv_fail(o->x->in, r);
		return -1;
	}
	if (rc == 0 && (close_open(o) != 0 || proc_ends(o, r) != 0))
		rc = -2;
	/* Every location gets an event writer (and its local definitions),
	 * even one with no event left. */
	for (i = 0; rc == 0 && i < o->nth; i++)
		if (writer(o, o->th[i]) != 0)
			rc = -2;
	/* The definitions name hosts from r. */
	if (rc == 0 && write_defs(o, r) != 0)
		rc = -2;
	pv_close(o->x->in, r);
	if (rc != 0)
		return -1;
	pv_xrun_done(&o->run);
	for (i = 0; i < o->nth; i++)
		CK(OTF2_Archive_CloseEvtWriter(o->ar, o->th[i]->w));
	CK(OTF2_Archive_CloseEvtFiles(o->ar));
	CK(OTF2_Archive_OpenDefFiles(o->ar));
	for (i = 0; i < o->nth; i++) {
		OTF2_DefWriter *dw = OTF2_Archive_GetDefWriter(o->ar,
		    o->th[i]->loc);

		if (dw == NULL) {
			fprintf(stderr, "prove: export: otf2: no local "
			    "definition writer\n");
			return -1;
		}
		CK(OTF2_Archive_CloseDefWriter(o->ar, dw));
	}
	CK(OTF2_Archive_CloseDefFiles(o->ar));
	e = OTF2_Archive_Close(o->ar);
	o->ar = NULL;
	if (e != OTF2_SUCCESS)
		return otf2_fail("closing the archive", e);
	return 0;
}

int
ex_otf2(const struct pv_export *x)
{
	struct ox o;
	struct grmtrace *r;
	char tmp[4096];
	int rc;

	if (strcmp(x->in, "-") == 0) {
		fprintf(stderr, "prove: export: otf2 reads the trace twice: "
		    "give its file name, not standard input\n");
		return 2;
	}
	memset(&o, 0, sizeof o);
	o.x = x;
	o.run.name = "otf2";
	o.run.quiet = x->quiet;
	if ((r = pv_open(x->in)) == NULL)
		return 1;
	grmtrace_select(r, GRMTRACE_WANT(GRMTRACE_PROC) |
	    GRMTRACE_WANT(GRMTRACE_LOSS) | GRMTRACE_WANT(GRMTRACE_CLOCK));
	rc = survey(&o, r);
	if (rc == -1) {
		ox_free(&o);
		return pv_fail(x->in, r);
	}
	grmtrace_close(r);
	if (rc != 0) {
		oom();
		ox_free(&o);
		return 1;
	}
	/* Pass 2 reads the load map again from the start. */
	pv_sym_free(&o.sym);
	pv_strs_free(&o.names);
	if (plan(&o) != 0 || pv_export_dir_open(x, tmp, sizeof tmp) != 0) {
		ox_free(&o);
		return 1;
	}
	if (write_archive(&o, tmp) != 0) {
		if (o.ar != NULL)
			OTF2_Archive_Close(o.ar);
		pv_export_dir_abort(tmp);
		ox_free(&o);
		return 1;
	}
	say_lost(&o);
	ox_free(&o);
	return pv_export_dir_commit(x, tmp) == 0 ? 0 : 1;
}
