/* SPDX-License-Identifier: MIT */
/* ex_otf2_evt.c: prove export --to otf2, pass 2: records, losses and
 * process ends as OTF2 events on their threads' locations (ex_otf2.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ex_otf2.h"

/* ---- pass 2 ---- */

int
ox_fail(const char *what, OTF2_ErrorCode e)
{
	fprintf(stderr, "prove: export: otf2: %s: %s\n", what,
	    OTF2_Error_GetDescription(e));
	return -1;
}

/* The time stamp of ev on t: from t0, not before t's previous one. */
static uint64_t
stamp(struct ox *o, struct thr *t, uint64_t ts)
{
	uint64_t v = pv_xrun_stamp(&o->run, &t->any, &t->last, ts);

	if (v > o->tmax)
		o->tmax = v;
	return v;
}

int
ox_writer(struct ox *o, struct thr *t)
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
		return ox_oom();
	if (t->depth == t->cap) {
		if ((f = realloc(t->st, (t->cap + 16) * 2 * sizeof *f)) ==
		    NULL)
			return ox_oom();
		t->st = f;
		t->cap = (t->cap + 16) * 2;
	}
	t->st[t->depth++] = (struct frame){ m->id, m->range, g->ref };
	if ((e = OTF2_EvtWriter_Enter(t->w, NULL, stamp(o, t, ts),
	    g->ref)) != OTF2_SUCCESS)
		return ox_fail("enter", e);
	return 0;
}

static int
leave_top(struct thr *t, uint64_t v)
{
	OTF2_ErrorCode e;

	t->depth--;
	if ((e = OTF2_EvtWriter_Leave(t->w, NULL, v,
	    t->st[t->depth].region)) != OTF2_SUCCESS)
		return ox_fail("leave", e);
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
		if (ox_sref_f(o, &ref, "%s (eid %" PRId32 ")", nm,
		    ev->eid) != 0)
			return NULL;
	} else {
		for (i = 0; i < n; i++) {
			c->type[i] = ty[i];
			c->field[i] = (uint8_t)i;
		}
		c->n = n;
		if (ox_sref(o, name, strlen(name), &ref) != 0)
			return NULL;
	}
	c->name = ref;
	if (c->n <= 1)
		c->mname[0] = ref;
	else
		for (i = 0; i < c->n; i++)
			if (ox_sref_f(o, &c->mname[i], "%s: field %u",
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
	return e == OTF2_SUCCESS ? 0 : ox_fail("metric", e);
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
		return ox_oom();
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

/* Whether a send or receive is written as an MPI one, matched as the
 * trace streams (ex_msgs): as msg_ok (ex_otf2.c) says.  -1 if out of
 * memory. */
static int
streamed(struct ox *o, const struct grmtrace_ev *ev, const struct pv_mark *m)
{
	const struct ex_chan *ch;
	const struct proc *ps, *pr;
	uint64_t id;
	int k;

	if ((k = ex_msgs_at(&o->xm, &o->msgs, ev, m, &id, &ch)) <= 0)
		return k;
	ps = pv_map_find(&o->px, (uint32_t)(ch->sproc >> 32),
	    (uint32_t)ch->sproc);
	pr = pv_map_find(&o->px, (uint32_t)(ch->rproc >> 32),
	    (uint32_t)ch->rproc);
	return ps != NULL && pr != NULL && ps->holder && pr->holder &&
	    m->tag >= 0 && m->tag <= (int64_t)UINT32_MAX &&
	    !ex_msgs_bad(&o->xm, id);
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
	int mpi;

	if (o->xm.keep)
		mpi = i < (send ? o->msgs.nsnd : o->msgs.nrcv) && ok[i];
	else if ((mpi = streamed(o, ev, m)) < 0)
		return ox_oom();
	if (!mpi || (peer = ox_rank_ix(o, m->id)) < 0) {
		o->msg_metric++;
		return user_event(o, t, ev);
	}
	if (send)
		e = OTF2_EvtWriter_MpiSend(t->w, NULL, stamp(o, t, ev->ts),
		    (uint32_t)peer, 0, (uint32_t)m->tag, len);
	else
		e = OTF2_EvtWriter_MpiRecv(t->w, NULL, stamp(o, t, ev->ts),
		    (uint32_t)peer, 0, (uint32_t)m->tag, len);
	return e == OTF2_SUCCESS ? 0 : ox_fail("message", e);
}

static int
block_name(struct ox *o, const struct pv_mark *m)
{
	uint64_t *v, id;

	if ((id = pv_str_id(&o->strs, m->s, m->len)) == 0 ||
	    (v = pv_map_get(&o->bnames, (uint64_t)m->id, 0, sizeof *v)) ==
	    NULL)
		return ox_oom();
	*v = id;
	return 0;
}

/* The thread (node, pid, tid), else the first of process (node, pid), else
 * NULL. */
struct thr *
ox_proc_thr(struct ox *o, uint32_t node, uint32_t pid, uint32_t tid)
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
		return ox_oom();
	if (ev->kind == GRMTRACE_LOSS) {
		o->losses += ev->count;
		if ((t = ox_proc_thr(o, ev->node, ev->pid, ev->tid)) == NULL) {
			o->noloc++;
			return 0;
		}
		if (ox_writer(o, t) != 0)
			return -1;
		if ((c = mclass(o, NULL, "events lost (#LOSS)", 1, u1)) ==
		    NULL)
			return ox_oom();
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
int
ox_proc_ends(struct ox *o, const struct grmtrace *r)
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
			t = ox_proc_thr(o, o->pr[i]->node, o->pr[i]->pid, 0);
		if (t == NULL || ox_writer(o, t) != 0)
			return -1;
		c = mclass(o, NULL, gp->how == GRMTRACE_PROC_EXIT ?
		    "process exit status (#PROC exit)" :
		    gp->how == GRMTRACE_PROC_KILLED ?
		    "process killed by signal (#PROC killed)" :
		    "process gone (#PROC gone)", 1, i1);
		if (c == NULL)
			return ox_oom();
		v.signed_int = gp->status;
		/* Not before the thread's last event: not counted as
		 * raised. */
		ts = gp->end_ts;
		if (t->any && pv_xrun_rel(&o->run, ts) < t->last)
			ts = t->last + o->run.t0;
		if (metric(o, t, ts, c, &v) != 0)
			return -1;
	}
	return 0;
}

int
ox_write_events(struct ox *o, struct grmtrace *r)
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
		    ev->pid, ev->tid)) == NULL || ox_writer(o, t) != 0 ||
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
int
ox_close_open(struct ox *o)
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

