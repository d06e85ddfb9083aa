/* SPDX-License-Identifier: MIT */
/* ex_ctf.c: prove export --to ctf: the trace as a CTF 1.8 trace (TSDL
 * metadata and binary packet streams; babeltrace2, Trace Compass): the
 * command, the packets and the events (ex_ctf.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ex_ctf.h"

/*
 * A first pass finds the first record's time stamp and the wall-clock
 * epoch (#CLOCK); a second writes the events.  One stream per thread
 * (file stream_N; N in the order threads are first met), of one stream
 * class: its packet context names the thread (node, pid, tid; babeltrace2
 * prints it with every event).  An event class per record type (eid,
 * scope and format: its fields, f1 .. fN, as int64, uint64 (hexadecimal
 * for %p and %x), double or string), and two of ours, grm_proc (#PROC
 * lines) and grm_loss (#LOSS lines), which are kept and written last, in
 * time order, on a stream of their own (node, pid and tid 0 in its packet
 * context; their fields say whose they are).  The metadata (ex_ctf_meta.c)
 * is written last, when every class is known; everything goes into a
 * temporary folder renamed at the end, so no reader sees a cut packet.
 *
 * Time stamps are nanoseconds from the first record (clock "grm", whose
 * offset is that record's wall-clock time when the trace has a #CLOCK
 * line); one earlier than the previous one of its stream (clock
 * corrections, late records) is raised to it and counted.
 *
 * Memory grows with threads (a packet buffer of 64 KiB each, more for an
 * event larger than that), event classes and #PROC and #LOSS lines, never
 * with records.
 */

int
ctf_oom(void)
{
	fprintf(stderr, "prove: export: ctf: out of memory\n");
	return -1;
}

/* ---- packets ---- */

static int
room(struct stream *s, size_t n)
{
	unsigned char *b;
	size_t cap = s->cap;

	if (s->len + n <= s->cap)
		return 0;
	while (cap < s->len + n)
		cap *= 2;
	if ((b = realloc(s->buf, cap)) == NULL)
		return ctf_oom();
	memset(b + s->cap, 0, cap - s->cap);
	s->buf = b;
	s->cap = cap;
	return 0;
}

static void
put(struct stream *s, const void *p, size_t n)
{
	memcpy(s->buf + s->len, p, n);
	s->len += n;
}

/* In host byte order, which the metadata declares (le or be). */
static void
put32(struct stream *s, uint32_t v)
{
	put(s, &v, 4);
}

static void
put64(struct stream *s, uint64_t v)
{
	put(s, &v, 8);
}

static void
packet_start(struct stream *s)
{
	memset(s->buf, 0, s->cap);
	s->len = PKT_HDR;
	s->events = 0;
}

/* Writes the packet being filled (if it holds events), whole. */
static int
packet_flush(struct cx *c, struct stream *s)
{
	uint64_t content = (uint64_t)s->len * 8, size;
	size_t padded = (s->len + 7) & ~(size_t)7, save;

	if (s->events == 0)
		return 0;
	size = (uint64_t)padded * 8;
	save = s->len;
	s->len = 0;
	put32(s, CTF_MAGIC);
	put32(s, 0);			/* stream_id */
	put64(s, s->first);		/* timestamp_begin */
	put64(s, s->last);		/* timestamp_end */
	put64(s, content);
	put64(s, size);
	put64(s, 0);			/* events_discarded */
	put32(s, s->node);
	put32(s, s->pid);
	put32(s, s->tid);
	s->len = save;
	if (fwrite(s->buf, 1, padded, s->f) != padded) {
		fprintf(stderr, "prove: export: ctf: %s/stream_%" PRIu32
		    ": %s\n", c->dir, s->ix, strerror(errno));
		return -1;
	}
	packet_start(s);
	return 0;
}

static struct stream *
stream(struct cx *c, uint32_t node, uint32_t pid, uint32_t tid)
{
	struct stream *s = pv_map_find(&c->sx, (uint64_t)node << 32 | pid,
	    tid);
	char path[4200];

	if (s != NULL)
		return s;
	if ((s = pv_map_get(&c->sx, (uint64_t)node << 32 | pid, tid,
	    sizeof *s)) == NULL) {
		ctf_oom();
		return NULL;
	}
	s->node = node;
	s->pid = pid;
	s->tid = tid;
	s->ix = c->nstreams++;
	snprintf(path, sizeof path, "%s/stream_%" PRIu32, c->dir, s->ix);
	if ((s->buf = calloc(1, PKT_SIZE)) == NULL) {
		ctf_oom();
		return NULL;
	}
	s->cap = PKT_SIZE;
	if ((s->f = fopen(path, "wbx")) == NULL) {
		fprintf(stderr, "prove: export: ctf: %s: %s\n", path,
		    strerror(errno));
		return NULL;
	}
	packet_start(s);
	return s;
}

/* The time stamp of an event at ts on s: from t0, not before s's last. */
static uint64_t
stamp(struct cx *c, struct stream *s, uint64_t ts)
{
	return pv_xrun_stamp(&c->run, &s->any, &s->last, ts);
}

/* Starts an event of class id at v: a packet that cannot take need more
 * bytes is written first. */
static int
event_start(struct cx *c, struct stream *s, uint32_t id, uint64_t v,
	    size_t need)
{
	need += 12;			/* header */
	if (s->events > 0 && s->len + need > PKT_SIZE &&
	    packet_flush(c, s) != 0)
		return -1;
	if (room(s, need) != 0)
		return -1;
	if (s->events++ == 0)
		s->first = v;
	s->last = v;
	s->any = 1;
	put32(s, id);
	put64(s, v);
	return 0;
}

static size_t
str_len(const char *p, size_t len)
{
	const char *z = memchr(p, '\0', len);

	return z != NULL ? (size_t)(z - p) : len;
}

/* ---- event classes ---- */

static struct eclass *
eclass(struct cx *c, const struct grmtrace_ev *ev)
{
	const struct grmtrace_def *d = ev->def;
	struct eclass *e;
	uint64_t fid;
	const char *nm;
	unsigned i;
	size_t n;

	if ((fid = pv_str_id(&c->fmts, d->format, strlen(d->format))) == 0)
		return NULL;
	if ((e = pv_map_find(&c->ex, (uint64_t)(uint32_t)ev->eid << 32 | fid,
	    (uint64_t)d->node << 32 | d->pid)) != NULL)
		return e;
	if ((e = pv_map_get(&c->ex, (uint64_t)(uint32_t)ev->eid << 32 | fid,
	    (uint64_t)d->node << 32 | d->pid, sizeof *e)) == NULL)
		return NULL;
	e->id = EV_USER0 + c->nclasses++;
	e->eid = ev->eid;
	e->n = d->nfields < GRMTRACE_FIELDS_MAX ? d->nfields :
	    GRMTRACE_FIELDS_MAX;
	for (i = 0; i < e->n; i++) {
		e->type[i] = d->type[i];
		e->conv[i] = d->conv[i];
	}
	nm = d->description[0] != '\0' ? d->description : d->format;
	n = strlen(nm) + 32;
	if ((e->name = malloc(n)) == NULL)
		return NULL;
	snprintf(e->name, n, "%s (eid %" PRId32 ")", nm, ev->eid);
	return e;
}

static int
record(struct cx *c, const struct grmtrace_ev *ev)
{
	const struct grmtrace_field *f;
	struct stream *s;
	struct eclass *e;
	size_t need = 0, n;
	unsigned i;
	double d;
	uint64_t u;

	if (ev->def == NULL)
		return 0;
	if ((s = stream(c, ev->node, ev->pid, ev->tid)) == NULL)
		return -1;
	if ((e = eclass(c, ev)) == NULL)
		return ctf_oom();
	for (i = 0; i < e->n; i++)
		need += (i < ev->n && ev->f[i].type == GRMTRACE_STRING ?
		    ev->f[i].v.s.len + 1 : 8);
	if (event_start(c, s, e->id, stamp(c, s, ev->ts), need) != 0)
		return -1;
	for (i = 0; i < e->n; i++) {
		f = i < ev->n ? &ev->f[i] : NULL;
		switch (e->type[i]) {
		case GRMTRACE_STRING:
			if (f == NULL || f->type != GRMTRACE_STRING) {
				put(s, "", 1);
				break;
			}
			n = str_len(f->v.s.p, f->v.s.len);
			c->nul_cut += n < f->v.s.len;
			put(s, f->v.s.p, n);
			put(s, "", 1);
			break;
		case GRMTRACE_DOUBLE:
			d = f == NULL ? 0 : f->type == GRMTRACE_DOUBLE ?
			    f->v.d : f->type == GRMTRACE_INT ? (double)f->v.i :
			    (double)f->v.u;
			memcpy(&u, &d, 8);
			put64(s, u);
			break;
		default:
			u = f == NULL || f->type == GRMTRACE_STRING ? 0 :
			    f->type == GRMTRACE_DOUBLE ?
			    (uint64_t)(int64_t)f->v.d :
			    f->v.u;
			put64(s, u);
		}
	}
	return 0;
}

/* Keeps a #PROC or #LOSS line: they can come before records of earlier
 * times (a Local Monitor learns of a process's end, or reports losses of
 * no thread, before it collects the last records). */
static int
meta(struct cx *c, const struct grmtrace_ev *ev)
{
	struct mline *m;
	size_t n;

	if (ev->kind != GRMTRACE_LOSS && ev->kind != GRMTRACE_PROC)
		return 0;
	if ((m = pv_grow(c->ml, &c->cml, c->nml, sizeof *m)) == NULL)
		return ctf_oom();
	c->ml = m;
	m = &c->ml[c->nml];
	memset(m, 0, sizeof *m);
	m->ts = ev->ts;
	m->seq = c->nml;
	m->node = ev->node;
	m->pid = ev->pid;
	if (ev->kind == GRMTRACE_LOSS) {
		m->kind = EV_LOSS;
		m->tid = ev->tid;
		m->count = ev->count;
	} else {
		m->kind = EV_PROC;
		m->ppid = ev->ppid;
		m->how = ev->how;
		m->status = ev->status;
		n = str_len(ev->str, ev->str_len);
		c->nul_cut += n < ev->str_len;
		if ((m->name = malloc(n + 1)) == NULL)
			return ctf_oom();
		memcpy(m->name, ev->str, n);
		m->name[n] = '\0';
	}
	c->nml++;
	return 0;
}

static int
by_ts(const void *a, const void *b)
{
	const struct mline *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/* The #PROC and #LOSS lines, in time order, on a stream of their own
 * (its packet context says node, pid and tid 0; each event names its
 * own). */
static int
write_meta(struct cx *c)
{
	static const char *how[] = { "start", "exit", "killed", "exec",
	    "gone" };
	struct stream *s;
	const struct mline *m;
	const char *h;
	size_t i;

	if (c->nml == 0)
		return 0;
	qsort(c->ml, c->nml, sizeof *c->ml, by_ts);
	if ((s = stream(c, 0, 0, 0)) == NULL)
		return -1;
	for (i = 0; i < c->nml; i++) {
		m = &c->ml[i];
		if (m->kind == EV_LOSS) {
			if (event_start(c, s, EV_LOSS, stamp(c, s, m->ts),
			    20) != 0)
				return -1;
			put32(s, m->node);
			put32(s, m->pid);
			put32(s, m->tid);
			put64(s, m->count);
			continue;
		}
		h = m->how >= 0 && m->how <= 4 ? how[m->how] : "?";
		if (event_start(c, s, EV_PROC, stamp(c, s, m->ts),
		    18 + strlen(h) + strlen(m->name)) != 0)
			return -1;
		put32(s, m->node);
		put32(s, m->pid);
		put32(s, m->ppid);
		put(s, h, strlen(h) + 1);
		put32(s, (uint32_t)m->status);
		put(s, m->name, strlen(m->name) + 1);
	}
	return 0;
}

/* ---- the command ---- */

/* Pass 1: the time origin, the records and the wall clock. */
static int
survey(struct cx *c)
{
	const struct grmtrace_ev *ev;
	struct grmtrace *r;
	int rc;

	if ((r = pv_export_open(c->x)) == NULL)
		return -1;
	grmtrace_select(r, GRMTRACE_WANT(GRMTRACE_CLOCK) |
	    GRMTRACE_WANT(GRMTRACE_PROC) | GRMTRACE_WANT(GRMTRACE_LOSS));
	pv_xrun_pass(&c->run, 1);
	while ((rc = grmtrace_next(r, &ev)) == 1) {
		pv_xrun_time(&c->run, ev);
		if (ev->kind == GRMTRACE_RECORD)
			pv_xrun_record(&c->run);
	}
	pv_xrun_done(&c->run);
	if (rc < 0) {
		pv_fail(c->x->in, r);
		return -1;
	}
	grmtrace_close(r);
	c->epoch = pv_xrun_epoch(&c->run, c->run.t0);
	return 0;
}

static int
write_streams(struct cx *c)
{
	const struct grmtrace_ev *ev;
	struct grmtrace *r;
	struct stream *s;
	uint32_t it = 0;
	int rc;

	if ((r = pv_export_open(c->x)) == NULL)
		return -1;
	grmtrace_select(r, GRMTRACE_WANT(GRMTRACE_PROC) |
	    GRMTRACE_WANT(GRMTRACE_LOSS));
	pv_xrun_pass(&c->run, 2);
	while ((rc = grmtrace_next(r, &ev)) == 1) {
		if (ev->kind != GRMTRACE_RECORD) {
			if (meta(c, ev) != 0)
				break;
			continue;
		}
		pv_xrun_record(&c->run);
		if (record(c, ev) != 0)
			break;
	}
	if (rc < 0) {
		pv_fail(c->x->in, r);
		return -1;
	}
	pv_close(c->x->in, r);
	if (rc != 0 || write_meta(c) != 0)
		return -1;
	pv_xrun_done(&c->run);
	while ((s = pv_map_next(&c->sx, &it)) != NULL) {
		if (packet_flush(c, s) != 0)
			return -1;
		if (fclose(s->f) != 0) {
			s->f = NULL;
			fprintf(stderr, "prove: export: ctf: %s: %s\n",
			    c->dir, strerror(errno));
			return -1;
		}
		s->f = NULL;
	}
	return ctf_write_metadata(c);
}

static void
stream_free(void *v)
{
	struct stream *s = v;

	if (s->f != NULL)
		fclose(s->f);
	free(s->buf);
}

static void
eclass_free(void *v)
{
	free(((struct eclass *)v)->name);
}

int
ex_ctf(const struct pv_export *x)
{
	struct cx c;
	char tmp[4096];
	int rc;

	memset(&c, 0, sizeof c);
	c.x = x;
	pv_xrun_init(&c.run, x, "ctf");
	if (survey(&c) != 0)
		return 1;
	if (pv_export_dir_open(x, tmp, sizeof tmp) != 0)
		return 1;
	c.dir = tmp;
	rc = write_streams(&c);
	pv_map_free(&c.sx, stream_free);
	pv_map_free(&c.ex, eclass_free);
	pv_strs_free(&c.fmts);
	while (c.nml > 0)
		free(c.ml[--c.nml].name);
	free(c.ml);
	if (rc != 0) {
		pv_export_dir_abort(tmp);
		return 1;
	}
	pv_xrun_say(&c.run);
	if (c.nul_cut > 0)
		fprintf(stderr, "prove: export: ctf: %" PRIu64 " strings "
		    "holding a NUL byte cut there\n", c.nul_cut);
	return pv_export_dir_commit(x, tmp) == 0 ? 0 : 1;
}

