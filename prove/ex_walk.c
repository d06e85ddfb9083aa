/* SPDX-License-Identifier: MIT */
/* ex_walk.c: the two passes the timeline exports (json, paje) share: the
 * survey of hosts, processes, threads, blocks and messages, and the walk
 * that hands blocks, messages and events to the format. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "ex_walk.h"

int
ex_oom(struct ex_walk *w)
{
	w->what = "out of memory";
	w->eno = 0;
	return -1;
}

const char *
ex_ev_name(const struct grmtrace_ev *ev, char *buf, size_t n)
{
	if (ev->def != NULL && ev->def->description[0] != '\0')
		return ev->def->description;
	snprintf(buf, n, "eid %" PRId32, ev->eid);
	return buf;
}

char *
ex_u64(char *p, uint64_t v)
{
	char d[20];
	int n = 0;

	do
		d[n++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	while (n > 0)
		*p++ = d[--n];
	return p;
}

/* ts / unit, '.', then ts % unit in digits decimals. */
static char *
put_fixed(char *p, uint64_t ts, uint64_t unit, int digits)
{
	uint64_t f = ts % unit;
	int i;

	p = ex_u64(p, ts / unit);
	*p++ = '.';
	for (i = digits - 1; i >= 0; i--) {
		p[i] = (char)('0' + f % 10);
		f /= 10;
	}
	return p + digits;
}

const char *
ex_time(char *buf, size_t n, uint64_t ts, int us)
{
	char *e;

	if (n < 32)
		return "";
	e = us ? put_fixed(buf, ts, 1000, 3) : put_fixed(buf, ts, 1000000000,
	    9);
	*e = '\0';
	return buf;
}

/* ---- tables ---- */

static struct ex_host *
host_get(struct ex_walk *w, uint32_t node)
{
	struct ex_host *h;

	if ((h = pv_map_get(&w->hosts, node, 0, sizeof *h)) != NULL &&
	    h->seq == 0) {
		h->node = node;
		h->seq = (uint32_t)pv_map_n(&w->hosts);
	}
	return h;
}

static struct ex_proc *
proc_get(struct ex_walk *w, uint32_t node, uint32_t pid)
{
	struct ex_proc *p;

	if ((p = pv_map_get(&w->procs, node, pid, sizeof *p)) != NULL &&
	    p->seq == 0) {
		p->node = node;
		p->pid = pid;
		p->seq = (uint32_t)pv_map_n(&w->procs);
		if ((p->host = host_get(w, node)) == NULL)
			return NULL;
	}
	return p;
}

static struct ex_thr *
thr_get(struct ex_walk *w, uint32_t node, uint32_t pid, uint32_t tid)
{
	struct ex_thr *t;

	if ((t = pv_map_get(&w->thrs, (uint64_t)node << 32 | pid, tid,
	    sizeof *t)) != NULL && t->seq == 0) {
		t->node = node;
		t->pid = pid;
		t->tid = tid;
		t->seq = (uint32_t)pv_map_n(&w->thrs);
		if ((t->proc = proc_get(w, node, pid)) == NULL)
			return NULL;
	}
	return t;
}

static int
set_name(struct ex_blk *b, const char *s, size_t n)
{
	char *c;

	if ((c = malloc(n + 1)) == NULL)
		return -1;
	memcpy(c, s, n);
	c[n] = '\0';
	free(b->name);
	b->name = c;
	b->len = n;
	return 0;
}

static struct ex_blk *
blk_get(struct ex_walk *w, int64_t id, int range)
{
	return pv_map_get(&w->blks, (uint64_t)id, (uint64_t)range,
	    sizeof(struct ex_blk));
}

/* ---- input ---- */

/* Opens the trace for a pass (standard input that is not a file is
 * copied to one first: pv_export_open). */
static struct grmtrace *
reopen(struct ex_walk *w, int pass)
{
	struct grmtrace *r;

	if ((r = pv_export_open(w->x)) != NULL)
		grmtrace_select(r, GRMTRACE_WANT(GRMTRACE_LOSS) |
		    (pass == 1 ? GRMTRACE_WANT(GRMTRACE_PROC) |
		    GRMTRACE_WANT(GRMTRACE_CLOCK) |
		    GRMTRACE_WANT(GRMTRACE_MM) : 0));
	return r;
}

/* ---- pass 1: survey ---- */

static int
pev_add(struct ex_walk *w, const struct grmtrace_ev *ev)
{
	struct ex_pev *a, *e;

	if ((a = pv_grow(w->pev, &w->cpev, w->npev, sizeof *a)) == NULL)
		return -1;
	w->pev = a;
	e = &a[w->npev];
	*e = (struct ex_pev){ .ts = ev->ts, .seq = w->npev, .node = ev->node,
	    .pid = ev->pid, .ppid = ev->ppid, .how = ev->how,
	    .status = ev->status, .len = ev->str_len };
	if ((e->prog = malloc(e->len + 1)) == NULL)
		return -1;
	if (e->len > 0)
		memcpy(e->prog, ev->str, e->len);
	e->prog[e->len] = '\0';
	w->npev++;
	return 0;
}

static int
by_time(const void *a, const void *b)
{
	const struct ex_pev *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

static int
survey_ev(struct ex_walk *w, const struct grmtrace_ev *ev)
{
	struct pv_mark m;
	struct ex_blk *b;

	switch (ev->kind) {
	case GRMTRACE_CLOCK:
		pv_xrun_time(&w->run, ev);
		return 0;
	case GRMTRACE_MM:
		free(w->mm);
		return (w->mm = strndup(ev->str, ev->str_len)) == NULL ?
		    -1 : 0;
	case GRMTRACE_PROC:
		if (pev_add(w, ev) != 0)
			return -1;
		/* FALLTHROUGH */
	case GRMTRACE_LOSS:
		pv_xrun_time(&w->run, ev);
		if (proc_get(w, ev->node, ev->pid) == NULL ||
		    pv_sym_ev(&w->sym, ev) != 0 ||
		    pv_msgs_ev(&w->msgs, ev, NULL) != 0)
			return -1;
		return 0;
	case GRMTRACE_RECORD:
		break;
	default:
		return 0;
	}
	pv_xrun_time(&w->run, ev);
	if (pv_mark(&w->names, &w->sym, ev, &m) != 0)
		return -1;
	if (m.kind == PV_CBEGIN || m.kind == PV_CEND)
		return host_get(w, ev->node) == NULL ? -1 : 0;
	if (thr_get(w, ev->node, ev->pid, ev->tid) == NULL)
		return -1;
	switch (m.kind) {
	case PV_BNAME:
		if ((b = blk_get(w, m.id, 0)) == NULL)
			return -1;
		b->id = m.id;
		return set_name(b, m.s, m.len);
	case PV_BEGIN:
		if ((b = blk_get(w, m.id, m.range)) == NULL)
			return -1;
		b->id = m.id;
		b->range = m.range;
		if (b->seq == 0)
			b->seq = ++w->nbegun;
		if (m.range && b->name == NULL)
			return set_name(b, m.s, m.len);
		return 0;
	case PV_SEND:
	case PV_RECV:
		return ex_msgs_ev(&w->xm, &w->msgs, ev, &m);
	default:
		return pv_msgs_ev(&w->msgs, ev, &m);
	}
}

/* The labels of hosts and processes, and the names of unnamed blocks. */
static int
labels(struct ex_walk *w, const struct grmtrace *r)
{
	const struct grmtrace_host *gh;
	const struct pv_proc *pp;
	struct ex_host *h;
	struct ex_proc *p;
	struct ex_blk *b;
	uint32_t it = 0;
	char buf[64];
	size_t n;

	while ((h = pv_map_next(&w->hosts, &it)) != NULL)
		if ((gh = grmtrace_host(r, h->node)) != NULL &&
		    gh->hostname != NULL && gh->hostname[0] != '\0' &&
		    (h->name = strdup(gh->hostname)) == NULL)
			return -1;
	it = 0;
	while ((p = pv_map_next(&w->procs, &it)) != NULL) {
		pp = pv_proc(&w->msgs, p->node, p->pid);
		if (pp != NULL && pp->has_rank) {
			n = pp->name_len + 32;
			if ((p->label = malloc(n)) == NULL)
				return -1;
			snprintf(p->label, n, "%s%srank %" PRId64, pp->name,
			    pp->name_len > 0 ? " " : "", pp->rank);
		} else if (pp != NULL && pp->prog != NULL && pp->prog_len > 0) {
			n = pp->prog_len + 32;
			if ((p->label = malloc(n)) == NULL)
				return -1;
			snprintf(p->label, n, "%s pid %" PRIu32, pp->prog,
			    p->pid);
		} else {
			snprintf(buf, sizeof buf, "pid %" PRIu32, p->pid);
			if ((p->label = strdup(buf)) == NULL)
				return -1;
		}
	}
	it = 0;
	while ((b = pv_map_next(&w->blks, &it)) != NULL)
		if (b->name == NULL) {
			n = (size_t)snprintf(buf, sizeof buf, "block %" PRId64,
			    b->id);
			if (set_name(b, buf, n) != 0)
				return -1;
		}
	return 0;
}

/* Pass 1.  Returns 0, or -1 after a message. */
static int
survey(struct ex_walk *w)
{
	const struct grmtrace_ev *ev;
	struct grmtrace *r;
	int rc;

	if ((r = reopen(w, 1)) == NULL)
		return -1;
	pv_xrun_pass(&w->run, 1);
	while ((rc = grmtrace_next(r, &ev)) == 1) {
		if (survey_ev(w, ev) != 0) {
			rc = ex_oom(w);
			break;
		}
		if (ev->kind == GRMTRACE_RECORD)
			pv_xrun_record(&w->run);
	}
	pv_xrun_done(&w->run);
	if (rc == -1 && w->what == NULL)
		return pv_fail(w->x->in, r) == 0 ? 0 : -1;
	w->losses = grmtrace_losses(r);
	if (rc == 0 && (ex_msgs_plan(&w->xm, &w->msgs) != 0 ||
	    labels(w, r) != 0))
		rc = ex_oom(w);
	if (w->npev > 0)
		qsort(w->pev, w->npev, sizeof *w->pev, by_time);
	pv_close(w->x->in, r);
	if (rc != 0)
		fprintf(stderr, "prove: export: %s\n", w->what);
	return rc == 0 ? 0 : -1;
}

/* Closes r after pass 2 (or the pass between) read fewer records than
 * pass 1 (rc: -1 on the reader's error); says so.  Returns -1. */
static int
cut_short(struct ex_walk *w, struct grmtrace *r, int rc)
{
	if (rc == -1) {
		pv_fail(w->x->in, r);
		return -1;
	}
	pv_close(w->x->in, r);
	fprintf(stderr, "prove: export: %s: shorter than at the first pass\n",
	    w->x->in);
	return -1;
}

/* The pass between when the messages must be kept (ex_msgs): their
 * records, in pv_msgs, matched.  Returns 0, or -1 after a message. */
static int
keep_msgs(struct ex_walk *w)
{
	struct grmtrace *r;
	int rc;

	if ((r = reopen(w, 2)) == NULL)
		return -1;
	rc = ex_msgs_keep(&w->xm, &w->msgs, &w->names, &w->sym, r,
	    w->run.total);
	if (rc == -1 || rc == -3)
		return cut_short(w, r, rc);
	pv_close(w->x->in, r);
	if (rc != 0)
		fprintf(stderr, "prove: export: out of memory\n");
	return rc == 0 ? 0 : -1;
}

/* ---- pass 2: the walk ---- */

/* ts relative to the origin, and not before t's latest (t not NULL). */
static uint64_t
rel(struct ex_walk *w, struct ex_thr *t, uint64_t ts)
{
	return t == NULL ? pv_xrun_rel(&w->run, ts) :
	    pv_xrun_stamp(&w->run, &t->any, &t->last, ts);
}

static int
push(struct ex_walk *w, const struct ex_ops *ops, struct ex_thr *t,
     const struct pv_mark *m, uint64_t ts)
{
	struct ex_frame *st;
	struct ex_blk *b;

	if ((b = blk_get(w, m->id, m->range)) == NULL)
		return ex_oom(w);
	if ((st = pv_grow(t->st, &t->cap, t->depth, sizeof *st)) == NULL)
		return ex_oom(w);
	t->st = st;
	st[t->depth++] = (struct ex_frame){ b, ts };
	return ops->begin(w, t, b, ts);
}

/* The end of block m: the innermost open block of its id ends, and the
 * blocks opened inside it that are still open end with it. */
static int
pop(struct ex_walk *w, const struct ex_ops *ops, struct ex_thr *t,
    const struct pv_mark *m, uint64_t ts)
{
	struct ex_frame f;
	size_t d = t->depth;

	while (d > 0 && (t->st[d - 1].b->id != m->id ||
	    t->st[d - 1].b->range != m->range))
		d--;
	if (d == 0) {
		w->bad_ends++;
		return 0;
	}
	while (t->depth >= d) {
		f = t->st[--t->depth];
		if (t->depth >= d)
			w->auto_ends++;
		if (ops->end(w, t, f.b, f.ts, ts) != 0)
			return -1;
	}
	return 0;
}

static int
walk_record(struct ex_walk *w, const struct ex_ops *ops,
	    const struct grmtrace_ev *ev)
{
	struct pv_mark m;
	struct ex_thr *t;
	const struct pv_msg *g;
	struct pv_msg one;
	uint64_t ts, id = 0;
	size_t i;
	int k;

	if (pv_mark(&w->names, &w->sym, ev, &m) != 0)
		return ex_oom(w);
	if (m.kind == PV_CBEGIN || m.kind == PV_CEND)
		return ops->event(w, NULL, ev, rel(w, NULL, ev->ts));
	t = pv_map_find(&w->thrs, (uint64_t)ev->node << 32 | ev->pid,
	    ev->tid);
	if (t == NULL)
		return 0;
	ts = rel(w, t, ev->ts);
	switch (m.kind) {
	case PV_BEGIN:
		return push(w, ops, t, &m, ts);
	case PV_END:
		return pop(w, ops, t, &m, ts);
	case PV_BNAME:
	case PV_PNAME:
		return 0;
	case PV_SEND:
	case PV_RECV:
		if (!w->xm.keep) {
			if ((k = ex_msgs_at(&w->xm, &w->msgs, ev, &m, &id,
			    NULL)) < 0)
				return ex_oom(w);
			one = (struct pv_msg){ .peer = m.id, .tag = m.tag,
			    .bytes = m.bytes, .bound = ev->bound_ns,
			    .match = k ? (size_t)id + 1 : 0 };
			return ops->msg(w, t, m.kind == PV_SEND, &one,
			    (size_t)id, ts);
		}
		if (m.kind == PV_SEND ? w->ksnd >= w->msgs.nsnd :
		    w->krcv >= w->msgs.nrcv)
			return 0;	/* not seen by the survey */
		i = m.kind == PV_SEND ? w->ksnd++ : w->krcv++;
		g = m.kind == PV_SEND ? &w->msgs.snd[i] : &w->msgs.rcv[i];
		return ops->msg(w, t, m.kind == PV_SEND, g, i, ts);
	default:
		return ops->event(w, t, ev, ts);
	}
}

/* The #PROC lines of times up to ts (all: UINT64_MAX). */
static int
procs_until(struct ex_walk *w, const struct ex_ops *ops, uint64_t ts)
{
	const struct ex_pev *e;

	for (; w->kpev < w->npev && w->pev[w->kpev].ts <= ts; w->kpev++) {
		e = &w->pev[w->kpev];
		if (ops->proc(w, pv_map_find(&w->procs, e->node, e->pid), e,
		    rel(w, NULL, e->ts)) != 0)
			return -1;
	}
	return 0;
}

/* Pass 2.  Returns 0, or -1 after a message. */
static int
walk(struct ex_walk *w, const struct ex_ops *ops)
{
	const struct grmtrace_ev *ev;
	struct grmtrace *r;
	struct ex_thr *t;
	struct ex_frame f;
	uint32_t it = 0;
	int rc, e;

	if ((r = reopen(w, 2)) == NULL)
		return -1;
	if (ops->head(w) != 0)
		goto fail;
	pv_xrun_pass(&w->run, 2);
	/* Only the records the survey saw, should the file have grown. */
	while ((rc = grmtrace_next(r, &ev)) == 1) {
		e = 0;
		switch (ev->kind) {
		case GRMTRACE_LOSS:
			if ((e = procs_until(w, ops, ev->ts)) != 0)
				break;
			t = pv_map_find(&w->thrs, (uint64_t)ev->node << 32 |
			    ev->pid, ev->tid);
			e = ops->loss(w, pv_map_find(&w->procs, ev->node,
			    ev->pid), t, ev, rel(w, t, ev->ts));
			break;
		case GRMTRACE_RECORD:
			if (w->run.done == w->run.total)
				break;
			if ((e = procs_until(w, ops, ev->ts)) != 0)
				break;
			e = walk_record(w, ops, ev);
			pv_xrun_record(&w->run);
			break;
		default:
			break;
		}
		if (e != 0)
			goto fail;
	}
	if (rc == -1 || w->run.done < w->run.total)
		return cut_short(w, r, rc);
	pv_close(w->x->in, r);
	pv_xrun_done(&w->run);
	if (procs_until(w, ops, UINT64_MAX) != 0)
		goto fail2;
	/* Blocks still open end with the trace. */
	while ((t = pv_map_next(&w->thrs, &it)) != NULL)
		while (t->depth > 0) {
			f = t->st[--t->depth];
			w->auto_ends++;
			if (ops->end(w, t, f.b, f.ts, rel(w, t, w->run.t1)) != 0)
				goto fail2;
		}
	if (ops->tail(w) != 0)
		goto fail2;
	return 0;
fail:
	pv_close(w->x->in, r);
fail2:
	fprintf(stderr, "prove: export: %s: %s%s%s\n", w->x->out,
	    w->what != NULL ? w->what : "error", w->eno != 0 ? ": " : "",
	    w->eno != 0 ? strerror(w->eno) : "");
	return -1;
}

/* ---- the run ---- */

static void
free_host(void *v)
{
	free(((struct ex_host *)v)->name);
}

static void
free_proc(void *v)
{
	free(((struct ex_proc *)v)->label);
}

static void
free_thr(void *v)
{
	free(((struct ex_thr *)v)->st);
}

static void
free_blk(void *v)
{
	free(((struct ex_blk *)v)->name);
}

/* Says once what the trace had that the export had to mend. */
static void
tell(const struct ex_walk *w)
{
	uint64_t un = w->xm.nsnd + w->xm.nrcv - 2 * w->xm.matched;

	if (w->bad_ends > 0)
		fprintf(stderr, "prove: export: %s: %" PRIu64 " block ends "
		    "with no open block left out\n", w->fmt, w->bad_ends);
	if (w->auto_ends > 0)
		fprintf(stderr, "prove: export: %s: %" PRIu64 " blocks not "
		    "ended in order ended with their parent or at the end "
		    "of the trace\n", w->fmt, w->auto_ends);
	pv_xrun_say(&w->run);
	if (w->backwards > 0)
		fprintf(stderr, "prove: export: %s: %" PRIu64 " times "
		    "earlier than the file's previous one moved to it\n",
		    w->fmt, w->backwards);
	if (un > 0)
		fprintf(stderr, "prove: export: %s: %" PRIu64 " sends and "
		    "receives not matched (events, not arrows)\n", w->fmt,
		    un);
}

int
ex_walk_run(const struct pv_export *x, const char *fmt,
	    const struct ex_ops *ops, void *arg)
{
	struct ex_walk w;
	char *tmp = NULL;
	size_t i;
	int rc = -1;

	memset(&w, 0, sizeof w);
	w.x = x;
	w.fmt = fmt;
	pv_xrun_init(&w.run, x, fmt);
	w.arg = arg;
	if (survey(&w) == 0 && (!w.xm.keep || keep_msgs(&w) == 0) &&
	    (w.out = pv_export_create(x, &tmp)) != NULL) {
		rc = walk(&w, ops);
		rc = pv_export_finish(x, w.out, tmp, rc == 0);
	}
	if (rc == 0)
		tell(&w);
	pv_map_free(&w.hosts, free_host);
	pv_map_free(&w.procs, free_proc);
	pv_map_free(&w.thrs, free_thr);
	pv_map_free(&w.blks, free_blk);
	pv_strs_free(&w.names);
	pv_sym_free(&w.sym);
	pv_msgs_free(&w.msgs);
	ex_msgs_free(&w.xm);
	for (i = 0; i < w.npev; i++)
		free(w.pev[i].prog);
	free(w.pev);
	free(w.mm);
	return rc == 0 ? 0 : 1;
}
