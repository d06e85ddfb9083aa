/* SPDX-License-Identifier: MIT */
/* pv_idx.c: prove serve's index of a trace, built once through the public
 * reader: rows, states by depth with their mipmaps, marks, messages
 * matched, collection phases, losses, process starts and ends. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pv_idx.h"

/* The first mipmap level's buckets are 2^PV_SHIFT0 ns; each next level
 * kept has buckets 4 times wider and at most half the entries. */
#define PV_SHIFT0	4

static struct pv_row *
row_get(struct pv_idx *x, uint32_t node, uint32_t pid, uint32_t tid)
{
	size_t *ix, cap;
	struct pv_row *r;

	/* Records come in runs of one thread: the last row first. */
	if (x->lastrow > 0) {
		r = &x->row[x->lastrow - 1];
		if (r->tid == tid && r->pid == pid && r->node == node)
			return r;
	}
	if ((ix = pv_map_get(&x->rows, (uint64_t)node << 32 | pid, tid,
	    sizeof *ix)) == NULL)
		return NULL;
	x->lastrow = *ix;
	if (*ix != 0)
		return &x->row[*ix - 1];
	cap = x->nrow;
	if ((r = pv_grow(x->row, &cap, x->nrow, sizeof *r)) == NULL)
		return NULL;
	x->row = r;
	r = &x->row[x->nrow++];
	memset(r, 0, sizeof *r);
	r->node = node;
	r->pid = pid;
	r->tid = tid;
	if ((r->coll = pv_map_get(&x->coll, node, 0, sizeof *r->coll)) ==
	    NULL)
		return NULL;
	*ix = x->nrow;
	x->lastrow = x->nrow;
	return r;
}

static uint32_t
state_of(struct pv_idx *x, int64_t id, int range, const char *s, size_t n)
{
	struct pv_state *st;
	size_t *ix;

	if ((ix = pv_map_get(&x->stix, (uint64_t)id, (uint64_t)range,
	    sizeof *ix)) == NULL)
		return UINT32_MAX;
	if (*ix == 0) {
		if ((st = pv_grow(x->states, &x->cstates, x->nstates,
		    sizeof *st)) == NULL)
			return UINT32_MAX;
		x->states = st;
		st = &x->states[x->nstates++];
		memset(st, 0, sizeof *st);
		st->id = id;
		st->range = range;
		*ix = x->nstates;
	}
	st = &x->states[*ix - 1];
	if (s != NULL && (st->name == NULL || !range)) {
		free(st->name);
		if ((st->name = malloc(n + 1)) == NULL)
			return UINT32_MAX;
		memcpy(st->name, s, n);
		st->name[n] = '\0';
		st->len = n;
	}
	return (uint32_t)(*ix - 1);
}

/* A span of o closed at t1 (open: PV_SPAN_ flags), its exclusive time
 * excl, its end record's eid eeid. */
static int
span_add(struct pv_row *r, size_t depth, const struct pv_open *o,
	 uint64_t t1, unsigned open, uint64_t excl, int32_t eeid)
{
	struct pv_depth *d;
	struct pv_span *s;
	size_t cap;

	while (depth >= r->nd) {	/* an inner span may close first */
		cap = r->nd;
		if ((d = pv_grow(r->d, &cap, r->nd, sizeof *d)) == NULL)
			return -1;
		r->d = d;
		memset(&r->d[r->nd], 0, sizeof *d);
		r->nd++;
	}
	d = &r->d[depth];
	if ((s = pv_grow(d->s, &d->cap, d->n, sizeof *s)) == NULL)
		return -1;
	d->s = s;
	if (d->n < d->low)
		d->low = d->n;
	d->s[d->n++] = (struct pv_span){ o->t0, t1 > o->t0 ? t1 : o->t0,
	    o->name, open, excl, o->beid, eeid };
	return 0;
}

static int
push(struct pv_idx *x, struct pv_row *r, const struct pv_mark *m,
     const struct grmtrace_ev *ev)
{
	struct pv_open *o;
	uint32_t name;

	if ((name = state_of(x, m->id, m->range, m->range ? m->s : NULL,
	    m->len)) == UINT32_MAX ||
	    (o = pv_grow(r->st, &r->cst, r->depth, sizeof *o)) == NULL)
		return -1;
	if (!x->states[name].begun) {
		x->states[name].begun = 1;
		x->states[name].eid = ev->eid;
	}
	r->st = o;
	r->st[r->depth++] = (struct pv_open){ ev->ts, m->id, m->range, name,
	    ev->eid, 0, r->coll->t1 };
	return 0;
}

/* Closes the innermost open span of r at ts, its exclusive time as prove
 * stats counts it: its duration less the collection phases of its node
 * meanwhile, less its children's. */
static int
close_top(struct pv_row *r, uint64_t ts, unsigned own, int32_t eeid)
{
	struct pv_open *f = &r->st[--r->depth];
	uint64_t dur, stopped, excl;

	dur = ts > f->t0 ? ts - f->t0 : 0;
	stopped = r->coll->t1 - f->stopped;
	dur = dur > stopped ? dur - stopped : 0;
	excl = dur > f->child ? dur - f->child : 0;
	if (r->depth > 0)
		f[-1].child = dur > UINT64_MAX - f[-1].child ? UINT64_MAX :
		    f[-1].child + dur;
	return span_add(r, r->depth, f, ts, own, excl, eeid);
}

/* Ends the innermost open state matching m and those above it (as prove
 * stats does); an end with none open is counted. */
static int pt_add(struct pv_row *r, const struct grmtrace_ev *ev,
		  enum pv_kind k);

static int
pop(struct pv_idx *x, struct pv_row *r, const struct pv_mark *m,
    const struct grmtrace_ev *ev)
{
	size_t i;

	for (i = r->depth; i > 0 && (r->st[i - 1].id != m->id ||
	    r->st[i - 1].range != m->range); i--)
		continue;
	if (i == 0) {
		/* Kept as a mark: BEE's views count it. */
		x->unmatched++;
		return pt_add(r, ev, PV_END);
	}
	while (r->depth >= i)
		if (close_top(r, ev->ts, r->depth == i ? PV_SPAN_OWN : 0,
		    ev->eid) != 0)
			return -1;
	return 0;
}

static int
pt_add(struct pv_row *r, const struct grmtrace_ev *ev, enum pv_kind k)
{
	struct pv_pt *p;

	if ((p = pv_grow(r->pt, &r->cpt, r->npt, sizeof *p)) == NULL)
		return -1;
	r->pt = p;
	if (r->npt < r->ptlow)
		r->ptlow = r->npt;
	r->pt[r->npt++] = (struct pv_pt){ ev->ts, ev->eid, (uint32_t)k };
	return 0;
}

static int
when_add(struct pv_when **a, size_t *n, size_t *cap, struct pv_when w)
{
	struct pv_when *na;

	if ((na = pv_grow(*a, cap, *n, sizeof *na)) == NULL)
		return -1;
	*a = na;
	(*a)[(*n)++] = w;
	return 0;
}

/* A collection phase of node begins or ends (the first begin to the last
 * end, should the node have several Local Monitors). */
static int
coll(struct pv_idx *x, const struct grmtrace_ev *ev, enum pv_kind k)
{
	struct pv_when *w;

	if ((w = pv_map_get(&x->coll, ev->node, 0, sizeof *w)) == NULL)
		return -1;
	if (k == PV_CBEGIN) {
		if (w->v++ == 0)
			w->t0 = ev->ts;
		return 0;
	}
	if (w->v == 0 || --w->v > 0)
		return 0;
	/* t1 of the map's entry: the node's stopped time so far. */
	w->t1 += ev->ts > w->t0 ? ev->ts - w->t0 : 0;
	return when_add(&x->phase, &x->nphase, &x->cphase,
	    (struct pv_when){ .t0 = w->t0, .t1 = ev->ts, .node = ev->node });
}

static int
record(struct pv_idx *x, const struct grmtrace_ev *ev)
{
	struct pv_mark m;
	struct pv_row *r;
	struct pv_evc *c;
	struct pv_oth *o;

	if (x->records == 0 || ev->ts < x->first)
		x->first = ev->ts;
	if (x->records == 0 || ev->ts > x->last)
		x->last = ev->ts;
	x->records++;
	/* The counts of the types most traces use, by eid, without a
	 * lookup; the others in the map. */
	if (ev->eid >= PV_EID_LO && ev->eid < PV_EID_HI)
		c = x->evq[ev->eid - PV_EID_LO];
	else
		c = NULL;
	if (c == NULL) {
		if ((c = pv_map_get(&x->evc, (uint32_t)ev->eid, 0,
		    sizeof *c)) == NULL)
			return -1;
		c->eid = ev->eid;
		if (ev->eid >= PV_EID_LO && ev->eid < PV_EID_HI)
			x->evq[ev->eid - PV_EID_LO] = c;
	}
	c->count++;
	if (pv_mark(&x->names, &x->sym, ev, &m) != 0)
		return -1;
	if (m.kind == PV_CBEGIN || m.kind == PV_CEND || ev->pid == 0) {
		/* In no row (pid 0: the host's Local Monitor). */
		if ((o = pv_grow(x->oth, &x->coth, x->noth, sizeof *o)) ==
		    NULL)
			return -1;
		x->oth = o;
		x->oth[x->noth++] = (struct pv_oth){ ev->ts, ev->eid,
		    ev->node, ev->pid, ev->tid };
		if (m.kind == PV_CBEGIN || m.kind == PV_CEND)
			return coll(x, ev, m.kind);
		return 0;
	}
	if ((r = row_get(x, ev->node, ev->pid, ev->tid)) == NULL)
		return -1;
	switch (m.kind) {
	case PV_BEGIN:
		return push(x, r, &m, ev);
	case PV_END:
		return pop(x, r, &m, ev);
	case PV_BNAME:
		if (state_of(x, m.id, 0, m.s, m.len) == UINT32_MAX)
			return -1;
		return pt_add(r, ev, m.kind);
	default:
		if (pv_msgs_ev(&x->msgs, ev, &m) != 0)
			return -1;
		return pt_add(r, ev, m.kind);
	}
}

static int
take(struct pv_idx *x, const struct grmtrace_ev *ev)
{
	switch (ev->kind) {
	case GRMTRACE_RECORD:
		return record(x, ev);
	case GRMTRACE_PROC:
		if (ev->ts > x->tend)	/* an end after the last record */
			x->tend = ev->ts;
		if (pv_sym_ev(&x->sym, ev) != 0 ||
		    pv_msgs_ev(&x->msgs, ev, NULL) != 0)
			return -1;
		return when_add(&x->proc, &x->nproc, &x->cproc,
		    (struct pv_when){ .t0 = ev->ts, .node = ev->node,
		    .pid = ev->pid, .how = ev->how == GRMTRACE_PROC_START ?
		    -1 : ev->how, .v = ev->status });
	case GRMTRACE_LOSS:
		if (ev->ts > x->tend)
			x->tend = ev->ts;
		return when_add(&x->loss, &x->nloss, &x->closs,
		    (struct pv_when){ .t0 = ev->ts, .node = ev->node,
		    .pid = ev->pid, .tid = ev->tid, .v = (int64_t)ev->count });
	default:
		return 0;
	}
}

static int
by_span(const void *a, const void *b)
{
	const struct pv_span *x = a, *y = b;

	return x->t0 != y->t0 ? (x->t0 > y->t0) - (x->t0 < y->t0) :
	    (x->t1 > y->t1) - (x->t1 < y->t1);
}

static int
by_pt(const void *a, const void *b)
{
	const struct pv_pt *x = a, *y = b;

	return (x->ts > y->ts) - (x->ts < y->ts);
}

static int
by_when(const void *a, const void *b)
{
	const struct pv_when *x = a, *y = b;

	return (x->t0 > y->t0) - (x->t0 < y->t0);
}

/* Whether a[0..n) is in order already (records mostly are: a sort
 * would cost more than the rest of the index). */
static int
sorted(const void *a, size_t n, size_t size, int (*cmp)(const void *,
       const void *))
{
	const char *p = a;
	size_t i;

	for (i = 1; i < n; i++)
		if (cmp(p + (i - 1) * size, p + i * size) > 0)
			return 0;
	return 1;
}

/* qsort, unless a is in order already (an empty array may be NULL):
 * whether it was sorted (its items moved). */
static int
sort(void *a, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	if (sorted(a, n, size, cmp))
		return 0;
	qsort(a, n, size, cmp);
	return 1;
}

/* Rows by node, then process (its rank if it has one, ranked first),
 * then pid, then thread. */
static const struct pv_msgs *sort_msgs;

static int
by_row(const void *a, const void *b)
{
	const struct pv_row *x = a, *y = b;
	const struct pv_proc *px, *py;
	int rx, ry;

	if (x->node != y->node)
		return x->node < y->node ? -1 : 1;
	px = pv_proc(sort_msgs, x->node, x->pid);
	py = pv_proc(sort_msgs, y->node, y->pid);
	rx = px != NULL && px->has_rank;
	ry = py != NULL && py->has_rank;
	if (rx != ry)
		return ry - rx;
	if (rx && px->rank != py->rank)
		return pv_cmp(px->rank, py->rank);
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

/* The mipmap of d: level after level, for each bucket the longest span
 * starting in it, from the level before (buckets nest).  A level is kept
 * only if it has at most half the entries of the last kept. */
static int
mipmap(struct pv_depth *d, size_t *bytes)
{
	uint32_t *cur = NULL, *nx;
	size_t n = d->n, kept = d->n, i, m;
	unsigned shift;
	uint64_t b, lb;
	uint64_t len, best;

	if (d->n < 64)
		return 0;
	if ((cur = malloc(n * sizeof *cur)) == NULL)
		return -1;
	for (i = 0; i < n; i++)
		cur[i] = (uint32_t)i;
	for (shift = PV_SHIFT0; shift < 64 && n > 1 && d->nlv < PV_NLVL;
	    shift += 2) {
		m = 0;
		for (i = 0; i < n; i++) {
			b = d->s[cur[i]].t0 >> shift;
			len = d->s[cur[i]].t1 - d->s[cur[i]].t0;
			if (m > 0) {
				lb = d->s[cur[m - 1]].t0 >> shift;
				best = d->s[cur[m - 1]].t1 -
				    d->s[cur[m - 1]].t0;
				if (lb == b) {
					if (len > best)
						cur[m - 1] = cur[i];
					continue;
				}
			}
			cur[m++] = cur[i];
		}
		n = m;
		if (n * 2 > kept)
			continue;
		if ((nx = malloc(n * sizeof *nx)) == NULL) {
			free(cur);
			return -1;
		}
		memcpy(nx, cur, n * sizeof *nx);
		d->lv[d->nlv++] = (struct pv_lvl){ nx, n, shift };
		*bytes += n * sizeof *nx;
		kept = n;
	}
	free(cur);
	return 0;
}

/* The bytes a depth holds, its mipmap too. */
static size_t
depth_bytes(const struct pv_depth *d)
{
	size_t b = d->cap * sizeof *d->s;
	unsigned k;

	for (k = 0; k < d->nlv; k++)
		b += d->lv[k].n * sizeof *d->lv[k].ix;
	return b;
}

/* The mipmap of d made again (its spans changed). */
static int
remap(struct pv_depth *d)
{
	unsigned k;

	for (k = 0; k < d->nlv; k++)
		free(d->lv[k].ix);
	d->nlv = 0;
	d->mapped = d->n;
	return mipmap(d, &(size_t){ 0 });
}

/* Takes back the spans still open that the last pv_idx_finish showed
 * (at most one a depth: the one open there). */
static void
unshow_open(struct pv_row *r)
{
	struct pv_depth *d;
	size_t j, k;

	for (j = 0; j < r->nd; j++) {
		d = &r->d[j];
		if (!d->prov)
			continue;
		for (k = d->n; k > 0 && !(d->s[k - 1].open & PV_SPAN_OPEN);
		    k--)
			continue;
		if (k > 0) {
			memmove(&d->s[k - 1], &d->s[k], (d->n - k) *
			    sizeof *d->s);
			d->n--;
			if (k - 1 < d->low)
				d->low = k - 1;
		}
		d->prov = 0;
	}
}

static int
finish_rows(struct pv_idx *x)
{
	struct pv_row *r;
	struct pv_depth *d;
	size_t i, j, *ix;

	for (i = 0; i < x->nrow; i++) {
		r = &x->row[i];
		/* The spans still open, shown to the latest record (and
		 * taken back when more records come). */
		for (j = 0; j < r->depth; j++) {
			if (span_add(r, j, &r->st[j], x->last, PV_SPAN_OPEN,
			    0, 0) != 0)
				return -1;
			r->d[j].prov = 1;
		}
		if (sort(r->pt, r->npt, sizeof *r->pt, by_pt))
			r->ptlow = 0;
		x->bytes += sizeof *r + r->cpt * sizeof *r->pt +
		    r->nd * sizeof *r->d + r->cst * sizeof *r->st;
		for (j = 0; j < r->nd; j++) {
			d = &r->d[j];
			if (sort(d->s, d->n, sizeof *d->s, by_span))
				d->low = 0;
			if ((d->n != d->mapped || d->prov || d->nlv == 0) &&
			    remap(d) != 0)
				return -1;
			x->bytes += depth_bytes(d);
		}
	}
	for (i = 0; i < x->nrow; i++)
		if (pv_map_get(&x->procs, (uint64_t)x->row[i].node << 32 |
		    x->row[i].pid, 0, 1) == NULL)
			return -1;
	sort_msgs = &x->msgs;
	sort(x->row, x->nrow, sizeof *x->row, by_row);
	x->lastrow = 0;
	for (i = 0; i < x->nrow; i++) {
		r = &x->row[i];
		if ((ix = pv_map_find(&x->rows, (uint64_t)r->node << 32 |
		    r->pid, r->tid)) == NULL)
			return -1;
		*ix = i + 1;
	}
	return 0;
}

/* The row of (node, pid, tid), or UINT32_MAX. */
static uint32_t
row_ix(const struct pv_idx *x, uint32_t node, uint32_t pid, uint32_t tid)
{
	const size_t *ix = pv_map_find(&x->rows, (uint64_t)node << 32 | pid,
	    tid);

	return ix == NULL ? UINT32_MAX : (uint32_t)(*ix - 1);
}

static const struct pv_arrow *recv_sort;

static int
by_recv(const void *a, const void *b)
{
	uint64_t x = recv_sort[*(const uint32_t *)a].tr;
	uint64_t y = recv_sort[*(const uint32_t *)b].tr;

	return (x > y) - (x < y);
}

static int
by_send(const void *a, const void *b)
{
	const struct pv_arrow *x = a, *y = b;

	return (x->ts > y->ts) - (x->ts < y->ts);
}

static int
finish_arrows(struct pv_idx *x)
{
	const struct pv_msg *s, *r;
	struct pv_arrow *a;
	size_t i;

	if (pv_msgs_match(&x->msgs) != 0)
		return -1;
	free(x->arrow);
	free(x->arecv);
	x->arecv = NULL;
	x->narrow = 0;
	x->maxlat = 0;
	if ((x->arrow = calloc(x->msgs.matched + 1, sizeof *a)) == NULL ||
	    (x->arecv = calloc(x->msgs.matched + 1, sizeof *x->arecv)) == NULL)
		return -1;
	for (i = 0; i < x->msgs.nsnd; i++) {
		s = &x->msgs.snd[i];
		if (s->match == 0)
			continue;
		r = &x->msgs.rcv[s->match - 1];
		a = &x->arrow[x->narrow];
		*a = (struct pv_arrow){ s->ts, r->ts,
		    row_ix(x, s->node, s->pid, s->tid),
		    row_ix(x, r->node, r->pid, r->tid), s->bytes,
		    s->bound + r->bound };
		if (a->rs == UINT32_MAX || a->rr == UINT32_MAX ||
		    (a->ts < x->cut && a->tr < x->cut))
			continue;
		if (a->tr > a->ts && a->tr - a->ts > x->maxlat)
			x->maxlat = a->tr - a->ts;
		if (a->ts > a->tr && a->ts - a->tr > x->maxlat)
			x->maxlat = a->ts - a->tr;
		x->narrow++;
	}
	sort(x->arrow, x->narrow, sizeof *x->arrow, by_send);
	for (i = 0; i < x->narrow; i++)
		x->arecv[i] = (uint32_t)i;
	recv_sort = x->arrow;
	sort(x->arecv, x->narrow, sizeof *x->arecv, by_recv);
	x->bytes += x->narrow * (sizeof *x->arrow + sizeof *x->arecv) +
	    (x->msgs.csnd + x->msgs.crcv) * sizeof(struct pv_msg);
	return 0;
}

/* Keeps what the reader knows that the answers name: event types, hosts. */
static int
names(struct pv_idx *x, struct grmtrace *t)
{
	const struct grmtrace_def *def;
	struct pv_evc *c;
	const char *s;
	uint32_t it = 0;

	while ((c = pv_map_next(&x->evc, &it)) != NULL) {
		if (c->name != NULL)
			continue;
		if ((def = grmtrace_def(t, c->eid)) == NULL)
			def = grmtrace_predef(c->eid);
		s = def == NULL ? "" : def->description[0] != '\0' ?
		    def->description : def->format;
		if ((c->name = strdup(s)) == NULL)
			return -1;
	}
	pv_hosts_free(x->host, x->nhost);
	x->host = NULL;
	x->nhost = 0;
	return pv_hosts_get(t, &x->host, &x->nhost);
}

int
pv_hosts_get(struct grmtrace *t, struct pv_host **hp, size_t *np)
{
	const struct grmtrace_host *h;
	size_t i, n = grmtrace_nhosts(t);

	if ((*hp = calloc(n + 1, sizeof **hp)) == NULL)
		return -1;
	*np = n;
	for (i = 0; i < n; i++) {
		h = grmtrace_host_at(t, i);
		(*hp)[i].node = h->node;
		if (((*hp)[i].name = strdup(h->hostname)) == NULL)
			return -1;
	}
	return 0;
}

void
pv_hosts_free(struct pv_host *h, size_t n)
{
	size_t i;

	for (i = 0; h != NULL && i < n; i++)
		free(h[i].name);
	free(h);
}

static void
evc_free(void *v)
{
	free(((struct pv_evc *)v)->name);
}

int
pv_idx_add_row(struct pv_idx *x, uint32_t node, uint32_t pid, uint32_t tid)
{
	return row_get(x, node, pid, tid) == NULL ? -1 : 0;
}

int
pv_idx_add_block(struct pv_idx *x, int64_t id)
{
	return state_of(x, id, 0, NULL, 0) == UINT32_MAX ? -1 : 0;
}

int
pv_idx_begin(struct pv_idx *x, const char *path)
{
	memset(x, 0, sizeof *x);
	if ((x->path = strdup(path)) == NULL) {
		fprintf(stderr, "prove: out of memory\n");
		return -1;
	}
	return 0;
}

int
pv_idx_add_file(struct pv_idx *x, const char *path, struct grmtrace *t)
{
	char **f, *p;
	size_t n = x->nfiles == 0 ? 1 : x->nfiles;

	if ((f = realloc(x->files, (n + 1) * sizeof *f)) == NULL)
		return -1;
	x->files = f;
	if ((p = strdup(path)) == NULL)
		return -1;
	f[0] = x->path;
	f[n] = p;
	x->nfiles = n + 1;
	x->losses0 += grmtrace_losses(t);
	return 0;
}

struct grmtrace *
pv_idx_open(const struct pv_idx *x, size_t i, char *err, size_t errlen)
{
	struct pv_files fs = pv_idx_files(x);
	struct grmtrace *t;

	if ((t = pv_topen(fs.path[i], err, errlen)) != NULL &&
	    i + 1 == fs.n)
		grmtrace_limit(t, fs.limit);
	return t;
}

int
pv_idx_feed(struct pv_idx *x, struct grmtrace *t)
{
	const struct grmtrace_ev *ev;
	size_t i;
	int rc;

	for (i = 0; i < x->nrow; i++)
		unshow_open(&x->row[i]);
	grmtrace_select(t, GRMTRACE_WANT(GRMTRACE_PROC) |
	    GRMTRACE_WANT(GRMTRACE_LOSS));
	while ((rc = grmtrace_next(t, &ev)) == 1) {
		if (x->until != 0 && ev->kind == GRMTRACE_RECORD &&
		    ev->ts >= x->until)
			return 0;
		if (x->max != 0 && x->records >= x->max)
			return -4;
		if (take(x, ev) != 0)
			return -2;
		if (ev->kind == GRMTRACE_RECORD &&
		    ev->ts - ev->raw_ts > x->maxmove)
			x->maxmove = ev->ts - ev->raw_ts;
		if (x->progress != NULL && (x->records & 0xffff) == 0) {
			__atomic_store_n(x->progress, x->records,
			    __ATOMIC_RELAXED);
			if (x->stop != NULL && __atomic_load_n(x->stop,
			    __ATOMIC_RELAXED))
				return -3;
		}
	}
	return rc;
}

int
pv_idx_finish(struct pv_idx *x, struct grmtrace *t)
{
	x->bytes = 0;
	if (finish_rows(x) != 0 || finish_arrows(x) != 0 || names(x, t) != 0)
		return -1;
	if (x->tend < x->last || x->records == 0)
		x->tend = x->last;
	x->losses = x->losses0 + grmtrace_losses(t);
	x->ended = grmtrace_ended(t, &x->end_records);
	sort(x->phase, x->nphase, sizeof *x->phase, by_when);
	sort(x->loss, x->nloss, sizeof *x->loss, by_when);
	sort(x->proc, x->nproc, sizeof *x->proc, by_when);
	x->bytes += (x->cphase + x->closs + x->cproc) *
	    sizeof(struct pv_when) + x->cstates * sizeof *x->states +
	    x->coth * sizeof *x->oth;
	return 0;
}

int
pv_idx_build(struct pv_idx *x, const char *path)
{
	return pv_idx_build_bg(x, path, NULL, NULL);
}

int
pv_idx_build_bg(struct pv_idx *x, const char *path, uint64_t *progress,
		const int *stop)
{
	struct grmtrace *t;
	struct timespec a, b;
	int rc;

	clock_gettime(CLOCK_MONOTONIC, &a);
	if (pv_idx_begin(x, path) != 0)
		return -1;
	x->progress = progress;
	x->stop = stop;
	if ((t = pv_open(path)) == NULL) {
		pv_idx_free(x);
		return -1;
	}
	if ((rc = pv_idx_feed(x, t)) == -1) {
		pv_fail(path, t);
		pv_idx_free(x);
		return -1;
	}
	if (rc == 0 && stop != NULL && __atomic_load_n(stop, __ATOMIC_RELAXED))
		rc = -3;
	if (rc == 0 && pv_idx_finish(x, t) != 0)
		rc = -2;
	pv_close(path, t);
	if (rc == -3) {
		fprintf(stderr, "prove: %s: index not finished (stopped)\n",
		    path);
		pv_idx_free(x);
		return -1;
	}
	if (rc != 0) {
		fprintf(stderr, "prove: %s: out of memory\n", path);
		pv_idx_free(x);
		return -1;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	x->build_s = (double)(b.tv_sec - a.tv_sec) +
	    (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	return 0;
}

void
pv_idx_free(struct pv_idx *x)
{
	struct pv_row *r;
	size_t i, j, k;

	pv_bee_free(x);
	for (i = 0; i < x->nrow; i++) {
		r = &x->row[i];
		for (j = 0; j < r->nd; j++) {
			for (k = 0; k < r->d[j].nlv; k++)
				free(r->d[j].lv[k].ix);
			free(r->d[j].s);
		}
		free(r->d);
		free(r->pt);
		free(r->st);
	}
	for (i = 0; i < x->nstates; i++)
		free(x->states[i].name);
	free(x->row);
	free(x->states);
	free(x->arrow);
	free(x->arecv);
	free(x->phase);
	free(x->loss);
	free(x->proc);
	free(x->oth);
	for (i = 1; i < x->nfiles; i++)
		free(x->files[i]);
	free(x->files);
	free(x->path);
	free(x->stats);
	pv_map_free(&x->rows, NULL);
	pv_map_free(&x->stix, NULL);
	pv_map_free(&x->evc, evc_free);
	pv_hosts_free(x->host, x->nhost);
	pv_map_free(&x->procs, NULL);
	pv_map_free(&x->coll, NULL);
	pv_strs_free(&x->names);
	pv_sym_free(&x->sym);
	pv_msgs_free(&x->msgs);
	memset(x, 0, sizeof *x);
}

/* ---- following a job: a bounded window in memory ---- */

/* Drops the messages whose send and receive are both before cut (pairs
 * matched: the first of their key, so the pairs left match as before). */
static int
trim_msgs(struct pv_msgs *g, uint64_t cut)
{
	size_t *ns, *nr, i, k;
	const struct pv_msg *m;

	if ((ns = calloc(g->nsnd + 1, sizeof *ns)) == NULL ||
	    (nr = calloc(g->nrcv + 1, sizeof *nr)) == NULL) {
		free(ns);
		return -1;
	}
	for (i = 0, k = 0; i < g->nsnd; i++) {
		m = &g->snd[i];
		if (!(m->match != 0 && m->ts < cut &&
		    g->rcv[m->match - 1].ts < cut))
			ns[i] = ++k;
	}
	for (i = 0, k = 0; i < g->nrcv; i++) {
		m = &g->rcv[i];
		if (!(m->match != 0 && m->ts < cut &&
		    g->snd[m->match - 1].ts < cut))
			nr[i] = ++k;
	}
	for (i = 0, k = 0; i < g->nsnd; i++)
		if (ns[i] != 0) {
			g->snd[k] = g->snd[i];
			if (g->snd[k].match != 0)
				g->snd[k].match = nr[g->snd[k].match - 1];
			k++;
		}
	g->nsnd = k;
	for (i = 0, k = 0; i < g->nrcv; i++)
		if (nr[i] != 0) {
			g->rcv[k] = g->rcv[i];
			if (g->rcv[k].match != 0)
				g->rcv[k].match = ns[g->rcv[k].match - 1];
			k++;
		}
	g->nrcv = k;
	free(ns);
	free(nr);
	return 0;
}

/* The first i of a[0..n) (in order) whose end is at or after cut. */
#define TRIM(a, n, endf)	do {					\
	size_t k_ = 0;							\
	while (k_ < (n) && (a)[k_].endf < cut)				\
		k_++;							\
	if (k_ > 0) {							\
		memmove((a), (a) + k_, ((n) - k_) * sizeof *(a));	\
		(n) -= k_;						\
	}								\
} while (0)

int
pv_idx_trim(struct pv_idx *x, uint64_t cut)
{
	struct pv_row *r;
	struct pv_depth *d;
	size_t i, j, n0;

	if (cut <= x->cut)
		return 0;
	x->cut = cut;
	if (x->first < cut)
		x->first = cut;
	for (i = 0; i < x->nrow; i++) {
		r = &x->row[i];
		sort(r->pt, r->npt, sizeof *r->pt, by_pt);
		TRIM(r->pt, r->npt, ts);
		for (j = 0; j < r->nd; j++) {
			d = &r->d[j];
			sort(d->s, d->n, sizeof *d->s, by_span);
			n0 = d->n;
			TRIM(d->s, d->n, t1);
			if (d->n != n0)
				d->mapped = SIZE_MAX;	/* made again */
		}
	}
	sort(x->phase, x->nphase, sizeof *x->phase, by_when);
	sort(x->loss, x->nloss, sizeof *x->loss, by_when);
	sort(x->proc, x->nproc, sizeof *x->proc, by_when);
	TRIM(x->phase, x->nphase, t1);
	TRIM(x->loss, x->nloss, t0);
	TRIM(x->proc, x->nproc, t0);
	TRIM(x->oth, x->noth, ts);
	/* Matched afresh first: the pairs dropped are known. */
	if (pv_msgs_match(&x->msgs) != 0)
		return -1;
	return trim_msgs(&x->msgs, cut);
}
