/* SPDX-License-Identifier: MIT */
/* tr_tables.c: the hosts, processes and threads the public reader keeps
 * (tr_tables.h), from #HOST, #SYNC and #PROC lines and from records. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "tr_tables.h"
#include "util/clock.h"

/* A clock model of a host, as its #SYNC line says (doc/formats.md). */
struct model {
	uint32_t	num;
	uint64_t	from;
	uint64_t	err;
	uint64_t	allow;
	uint64_t	lo, hi;
};

/* Where a #CLOCKSTEP's records may lie, on mainmon's clock, and how much
 * their bound grows there (clk_step_window). */
struct step {
	uint64_t	lo, hi;
	uint64_t	add;
};

/* A host, where its collection phase stands, its clock models and the
 * steps of its clock. */
struct host {
	struct grmtrace_host pub;	/* first: the table hands it out */
	unsigned	depth;		/* phases begun and not ended */
	uint64_t	since;		/* when the outermost began */
	struct model	*m;		/* numbered #SYNC lines, by from */
	size_t		nm, capm;
	struct step	*st;		/* #CLOCKSTEP lines, as read */
	size_t		nst;
};

/* A table's key: two 64-bit words, no padding. */
struct tkey {
	uint64_t	k1;
	uint64_t	k2;
};

static const struct hmap_type tkey_type = {
	sizeof(struct tkey), sizeof(void *), 64, NULL
};

/* The item of (k1, k2), created zeroed with size bytes if new (*made
 * says so); NULL if out of memory. */
static void *
tget(struct tr_table *tb, uint64_t k1, uint64_t k2, size_t size, int *made)
{
	const struct tkey k = { k1, k2 };
	void **slot, **v, *p;
	size_t cap;
	int added;

	*made = 0;
	if ((slot = hmap_find(&tb->ix, &k)) != NULL)
		return *slot;
	if (tb->n == tb->cap) {
		cap = tb->cap == 0 ? 16 : 2 * tb->cap;
		if ((v = realloc(tb->v, cap * sizeof *v)) == NULL)
			return NULL;
		tb->v = v;
		tb->cap = cap;
	}
	if ((p = calloc(1, size)) == NULL)
		return NULL;
	if (tb->ix.type == NULL)
		hmap_init(&tb->ix, &tkey_type);
	if ((slot = hmap_put(&tb->ix, &k, &added)) == NULL) {
		free(p);
		return NULL;
	}
	*slot = p;
	tb->v[tb->n++] = p;
	*made = 1;
	return p;
}

const void *
tr_table_find(const struct tr_table *tb, uint64_t k1, uint64_t k2)
{
	const struct tkey k = { k1, k2 };
	void *const *slot = hmap_find(&tb->ix, &k);

	return slot != NULL ? *slot : NULL;
}

/* Frees the items (and the string at offset off of each, if off is not
 * SIZE_MAX, and at off2 likewise). */
static void
tfree(struct tr_table *tb, size_t off, size_t off2)
{
	size_t i;

	for (i = 0; i < tb->n; i++) {
		if (off != SIZE_MAX)
			free(*(char **)((char *)tb->v[i] + off));
		if (off2 != SIZE_MAX)
			free(*(char **)((char *)tb->v[i] + off2));
		free(tb->v[i]);
	}
	free(tb->v);
	hmap_free(&tb->ix);
	memset(tb, 0, sizeof *tb);
}

void
tr_tables_free(struct tr_tables *t)
{
	size_t i;

	for (i = 0; i < t->hosts.n; i++) {
		free(((struct host *)t->hosts.v[i])->m);
		free(((struct host *)t->hosts.v[i])->st);
	}
	tfree(&t->hosts, offsetof(struct grmtrace_host, hostname), SIZE_MAX);
	tfree(&t->procs, offsetof(struct grmtrace_proc, name),
	    offsetof(struct grmtrace_proc, rank_name));
	tfree(&t->thrs, SIZE_MAX, SIZE_MAX);
}

/* Replaces the string *dst by a copy of s[0..len); 0, or -1. */
static int
setstr(const char **dst, const char *s, size_t len)
{
	char *c;

	if ((c = malloc(len + 1)) == NULL)
		return -1;
	memcpy(c, s, len);
	c[len] = '\0';
	free((char *)*dst);
	*dst = c;
	return 0;
}

static struct grmtrace_proc *
proc_get(struct tr_tables *t, uint32_t node, uint32_t pid)
{
	struct grmtrace_proc *p;
	int made;

	if ((p = tget(&t->procs, node, pid, sizeof *p, &made)) == NULL)
		return NULL;
	if (made) {
		p->node = node;
		p->pid = pid;
		if (setstr(&p->name, "", 0) != 0 ||
		    setstr(&p->rank_name, "", 0) != 0)
			return NULL;
	}
	return p;
}

static int
on_record(struct tr_tables *t, const struct tape_ev *e)
{
	struct grmtrace_thread *th;
	struct grmtrace_proc *p;
	int made;

	if ((p = proc_get(t, e->node, e->pid)) == NULL ||
	    (th = tget(&t->thrs, (uint64_t)e->node << 32 | e->pid, e->tid,
	    sizeof *th, &made)) == NULL)
		return -1;
	if (made) {
		*th = (struct grmtrace_thread){ e->node, e->pid, e->tid,
		    e->ts, e->ts, 0 };
		p->threads++;
	}
	th->last_ts = e->ts;
	th->records++;
	p->records++;
	if (e->eid == GRMTRACE_EID_PROC_NAME && e->n >= 2 &&
	    e->f[0].kind == REC_K_INT && e->f[1].kind == REC_K_STR) {
		p->has_rank = 1;
		p->rank = e->f[0].v.i;
		return setstr(&p->rank_name, e->f[1].v.s.p, e->f[1].v.s.len);
	}
	return 0;
}

static int
on_proc(struct tr_tables *t, const struct tape_ev *e)
{
	struct grmtrace_proc *p;

	if ((p = proc_get(t, e->node, e->pid)) == NULL)
		return -1;
	if (e->ppid != 0)
		p->ppid = e->ppid;
	if (e->is_exit == TAPE_PROC_START) {
		p->started = 1;
		p->start_ts = e->ts;
		p->ended = 0;
		p->how = GRMTRACE_PROC_START;
		return setstr(&p->name, e->str, e->str_len);
	}
	p->ended = 1;
	p->how = e->is_exit;
	p->status = e->status;
	p->end_ts = e->ts;
	if (e->str_len > 0 && p->name[0] == '\0')
		return setstr(&p->name, e->str, e->str_len);
	return 0;
}

static struct grmtrace_host *
host_get(struct tr_tables *t, uint32_t node)
{
	struct grmtrace_host *h;
	int made;

	if ((h = tget(&t->hosts, node, 0, sizeof(struct host), &made)) ==
	    NULL)
		return NULL;
	h->node = node;
	if (made && setstr(&h->hostname, "", 0) != 0)
		return NULL;
	return h;
}

/* Keeps the model of a numbered #SYNC line: in the order of from (a
 * line with a number already kept, repeated at the top of the next file
 * of a rotated trace, is not kept again).  0, or -1. */
static int
add_model(struct host *h, const struct grmtrace_host *p)
{
	struct model *m;
	size_t i, cap;

	for (i = 0; i < h->nm; i++)
		if (h->m[i].num == p->model)
			return 0;
	if (h->nm == h->capm) {
		cap = h->capm == 0 ? 8 : h->capm * 2;
		if ((m = realloc(h->m, cap * sizeof *m)) == NULL)
			return -1;
		h->m = m;
		h->capm = cap;
	}
	for (i = h->nm; i > 0 && h->m[i - 1].from > p->from_ns; i--)
		h->m[i] = h->m[i - 1];
	h->m[i] = (struct model){ p->model, p->from_ns, p->error_ns,
	    p->allow_ppb, p->lo_ns, p->hi_ns };
	h->nm++;
	return 0;
}

/* A collection phase of e's node begins or ends (doc/formats.md 1.9). */
static int
on_phase(struct tr_tables *t, const struct tape_ev *e)
{
	struct host *h;

	if ((h = (struct host *)host_get(t, e->node)) == NULL)
		return -1;
	if (e->eid == GRMTRACE_EID_COLL_BEGIN) {
		if (h->depth++ == 0)
			h->since = e->ts;
		h->pub.phases++;
	} else if (h->depth > 0 && --h->depth == 0 && e->ts > h->since)
		h->pub.stopped_ns += e->ts - h->since;
	return 0;
}

static int
on_host(struct tr_tables *t, const struct tape_ev *e)
{
	struct grmtrace_host *h;

	if ((h = host_get(t, e->node)) == NULL)
		return -1;
	if (e->kind == TAPE_HOST) {
		h->offset_ns = e->f[1].v.i;
		h->lm_pid = (uint32_t)e->f[2].v.u;
		h->connections++;
		return setstr(&h->hostname, e->str, e->str_len);
	}
	h->synced = 1;
	h->at_ns = e->f[1].v.u;
	h->sync_offset_ns = e->f[2].v.i;
	h->drift_ppb = e->f[3].v.i;
	h->error_ns = e->f[4].v.u;
	h->rtt_ns = e->f[5].v.u;
	h->samples = (uint32_t)e->f[6].v.u;
	if (e->n < 12)
		return 0;
	h->model = (uint32_t)e->f[7].v.u;
	h->from_ns = e->f[8].v.u;
	h->lo_ns = e->f[9].v.u;
	h->hi_ns = e->f[10].v.u;
	h->allow_ppb = e->f[11].v.u;
	return add_model((struct host *)h, h);
}

/*
 * A #CLOCKSTEP line: the bound of host e->node's records in the window
 * where records it stamped around the step can lie includes the step
 * (clk_step_window).  Read before the records it concerns: mainmon
 * writes the line when the sample finds the step, before it converts any
 * record stamped after the sample before.
 */
static int
on_clockstep(struct tr_tables *t, const struct tape_ev *e)
{
	struct host *h;
	struct step *v, w;

	if (e->n < 5 || e->f[3].v.u > e->f[4].v.u)
		return 0;	/* not one mainmon writes: ignored */
	if ((h = (struct host *)host_get(t, e->node)) == NULL)
		return -1;
	clk_step_window(e->ts, e->f[2].v.i, e->f[3].v.u, e->f[4].v.u, &w.lo,
	    &w.hi, &w.add);
	if ((v = realloc(h->st, (h->nst + 1) * sizeof *v)) == NULL)
		return -1;
	v[h->nst++] = w;
	h->st = v;
	return 0;
}

/* What the steps of host h add to the bound of its record at ts. */
static uint64_t
step_add(const struct host *h, uint64_t ts)
{
	uint64_t add = 0;
	size_t i;

	for (i = 0; i < h->nst; i++)
		if (ts >= h->st[i].lo && ts <= h->st[i].hi &&
		    h->st[i].add > add)
			add = h->st[i].add;
	return add;
}

/* The model of host h that converted a record at ts: the latest whose
 * range starts at or before ts (the first, before them all). */
static const struct model *
model_at(const struct host *h, uint64_t ts)
{
	size_t lo = 0, hi = h->nm, mid;

	while (hi - lo > 1) {
		mid = lo + (hi - lo) / 2;
		if (h->m[mid].from <= ts)
			lo = mid;
		else
			hi = mid;
	}
	return &h->m[lo];
}

int
tr_tables_clock(const struct tr_tables *t, uint32_t node, uint64_t ts,
		uint32_t *model, uint64_t *bound)
{
	const struct host *h = tr_table_find(&t->hosts, node, 0);
	const struct model *m;
	uint64_t b, add;
	int rc = 0;

	*model = 0;
	*bound = 0;
	if (h == NULL || !h->pub.synced)
		return 0;
	if (h->nm == 0)
		b = h->pub.error_ns;
	else {
		m = model_at(h, ts);
		*model = m->num;
		b = clk_bound_ns(m->err, m->allow, m->lo, m->hi, ts);
		rc = 1;
	}
	add = h->nst > 0 ? step_add(h, ts) : 0;
	*bound = b > UINT64_MAX - add ? UINT64_MAX : b + add;
	return rc;
}

int
tr_tables_account(struct tr_tables *t, const struct tape_ev *e)
{
	int rc = 0;

	switch (e->kind) {
	case TAPE_RECORD:
		rc = on_record(t, e);
		if (rc == 0 && e->pid == 0 &&
		    (e->eid == GRMTRACE_EID_COLL_BEGIN ||
		    e->eid == GRMTRACE_EID_COLL_END))
			rc = on_phase(t, e);
		break;
	case TAPE_PROC:
		rc = on_proc(t, e);
		break;
	case TAPE_HOST:
	case TAPE_SYNC:
		rc = on_host(t, e);
		break;
	case TAPE_CLOCKSTEP:
		rc = on_clockstep(t, e);
		break;
	default:
		break;
	}
	if (rc != 0)
		errno = ENOMEM;
	return rc;
}
