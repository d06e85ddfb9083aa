/* grmtrace.c: the public trace reader API (<grm/trace.h>, grmtrace(3)) on
 * the internal reader: arguments checked, events in the API's types, and
 * the tables of hosts, processes and threads kept as the file is read. */
#pragma GCC visibility push(default)
#include <grm/trace.h>
#pragma GCC visibility pop

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "tr_int.h"
#include "tr_map.h"

/* A table of individually allocated items (their addresses are handed
 * out), in the order first seen, with a map from keys to index. */
struct table {
	void		**v;
	size_t		n;
	size_t		cap;
	struct tr_map	ix;
};

/* A host, and where its collection phase stands. */
struct host {
	struct grmtrace_host pub;	/* first: the table hands it out */
	unsigned	depth;		/* phases begun and not ended */
	uint64_t	since;		/* when the outermost began */
};

struct grmtrace {
	struct tape_r	*r;
	char		*path;
	unsigned	want;
	int		failed;
	int		pending;	/* seek found ev: next returns it */
	uint64_t	records;
	struct tape_ev	iev;
	struct grmtrace_ev ev;
	struct grmtrace_field f[GRMTRACE_FIELDS_MAX];
	struct table	hosts;		/* struct host */
	struct table	procs;		/* struct grmtrace_proc */
	struct table	thrs;		/* struct grmtrace_thread */
	char		err[256];
};

int
grmtrace_version(void)
{
	return GRMTRACE_VERSION;
}

/* Says why t failed (its own errors: arguments, memory); returns -1. */
static int
fail(struct grmtrace *t, int e, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t->err, sizeof t->err, fmt, ap);
	va_end(ap);
	errno = e;
	return -1;
}

/* ---- tables ---- */

/* The item of (k1, k2), created zeroed with size bytes if new (*made
 * says so); NULL if out of memory. */
static void *
tget(struct table *tb, uint64_t k1, uint64_t k2, size_t size, int *made)
{
	size_t i = tr_map_get(&tb->ix, k1, k2), cap;
	void **v, *p;

	*made = 0;
	if (i != SIZE_MAX)
		return tb->v[i];
	if (tb->n == tb->cap) {
		cap = tb->cap == 0 ? 16 : 2 * tb->cap;
		if ((v = realloc(tb->v, cap * sizeof *v)) == NULL)
			return NULL;
		tb->v = v;
		tb->cap = cap;
	}
	if ((p = calloc(1, size)) == NULL)
		return NULL;
	if (tr_map_put(&tb->ix, k1, k2, tb->n) != 0) {
		free(p);
		return NULL;
	}
	tb->v[tb->n++] = p;
	*made = 1;
	return p;
}

static const void *
tfind(const struct table *tb, uint64_t k1, uint64_t k2)
{
	size_t i = tr_map_get(&tb->ix, k1, k2);

	return i != SIZE_MAX ? tb->v[i] : NULL;
}

/* Frees the items (and the string at offset off of each, if off is not
 * SIZE_MAX, and at off2 likewise). */
static void
tfree(struct table *tb, size_t off, size_t off2)
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
	tr_map_free(&tb->ix);
	memset(tb, 0, sizeof *tb);
}

static void
tables_free(struct grmtrace *t)
{
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
proc_get(struct grmtrace *t, uint32_t node, uint32_t pid)
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
on_record(struct grmtrace *t, const struct tape_ev *e)
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
on_proc(struct grmtrace *t, const struct tape_ev *e)
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
host_get(struct grmtrace *t, uint32_t node)
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

/* A collection phase of e's node begins or ends (doc/formats.md 1.9). */
static int
on_phase(struct grmtrace *t, const struct tape_ev *e)
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
on_host(struct grmtrace *t, const struct tape_ev *e)
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
	return 0;
}

/* What the internal event e changes in the tables. */
static int
account(struct grmtrace *t, const struct tape_ev *e)
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
	default:
		break;
	}
	return rc == 0 ? 0 : fail(t, ENOMEM, "out of memory");
}

/* The API's event for e. */
static const struct grmtrace_ev *
convert(struct grmtrace *t, const struct tape_ev *e)
{
	struct grmtrace_ev *v = &t->ev;
	unsigned i;

	memset(v, 0, sizeof *v);
	v->kind = e->kind;
	v->where = e->kind == TAPE_RECORD ? tape_rwhere(t->r) : e->where;
	v->ts = e->ts;
	v->node = e->node;
	v->pid = e->pid;
	v->tid = e->tid;
	v->eid = e->eid;
	v->def = e->def != NULL ? tr_def_pub(e->def) : NULL;
	v->n = e->n;
	for (i = 0; i < e->n; i++) {
		t->f[i].type = e->f[i].kind;
		memcpy(&t->f[i].v, &e->f[i].v, sizeof t->f[i].v);
	}
	v->f = t->f;
	if (e->kind != TAPE_RECORD) {
		v->ppid = e->ppid;
		v->how = e->is_exit;
		v->status = e->status;
		v->count = e->count;
		v->records = e->records;
		v->str = e->str;
		v->str_len = e->str_len;
	}
	return v;
}

/* ---- reading ---- */

static void
put_err(char *err, size_t errlen, const char *path, const char *why)
{
	if (err != NULL && errlen > 0)
		snprintf(err, errlen, "%s: %s", path, why);
}

struct grmtrace *
grmtrace_open(const char *path, char *err, size_t errlen)
{
	struct grmtrace *t;
	const char *why;
	int e;

	if (path == NULL || *path == '\0') {
		put_err(err, errlen, "", "no file named");
		errno = EINVAL;
		return NULL;
	}
	if ((t = calloc(1, sizeof *t)) == NULL ||
	    (t->path = strdup(path)) == NULL) {
		free(t);
		put_err(err, errlen, path, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	if ((t->r = tape_ropen(path, &why)) == NULL) {
		e = errno;
		put_err(err, errlen, path, why);
		free(t->path);
		free(t);
		errno = e;
		return NULL;
	}
	t->want = GRMTRACE_WANT_ALL;
	tape_rwant(t->r, GRMTRACE_WANT_ALL);
	return t;
}

void
grmtrace_close(struct grmtrace *t)
{
	if (t == NULL)
		return;
	tape_rclose(t->r);
	tables_free(t);
	free(t->path);
	free(t);
}

int
grmtrace_select(struct grmtrace *t, unsigned kinds)
{
	if (t == NULL || (kinds & ~(unsigned)GRMTRACE_WANT_ALL) != 0) {
		errno = EINVAL;
		return -1;
	}
	t->want = kinds | GRMTRACE_WANT(GRMTRACE_RECORD);
	return 0;
}

/* After the internal reader's rc: 1 with *ev if it is wanted, 0 to read
 * on, -1 (or 2 at the end). */
static int
take(struct grmtrace *t, int rc, const struct grmtrace_ev **ev)
{
	if (rc < 0) {
		t->failed = 1;
		errno = EILSEQ;
		return -1;
	}
	if (rc == 0)
		return 2;
	if (account(t, &t->iev) != 0) {
		t->failed = 1;
		return -1;
	}
	if ((t->want & GRMTRACE_WANT(t->iev.kind)) == 0)
		return 0;
	t->records += t->iev.kind == TAPE_RECORD;
	*ev = convert(t, &t->iev);
	return 1;
}

int
grmtrace_next(struct grmtrace *t, const struct grmtrace_ev **ev)
{
	int rc;

	if (t == NULL || ev == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (t->failed)
		return -1;
	if (t->pending) {
		t->pending = 0;
		return take(t, 1, ev);
	}
	do
		rc = take(t, tape_next(t->r, &t->iev), ev);
	while (rc == 0);
	return rc == 2 ? 0 : rc;
}

/* Starts again from the beginning of the file: a new internal reader,
 * empty tables.  0, or -1. */
static int
rewind_all(struct grmtrace *t)
{
	struct tape_r *r;
	const char *why;

	if ((r = tape_ropen(t->path, &why)) == NULL) {
		t->failed = 1;
		return fail(t, errno, "%s", why);
	}
	tape_rclose(t->r);
	t->r = r;
	tape_rwant(r, GRMTRACE_WANT_ALL);
	tables_free(t);
	t->records = 0;
	return 0;
}

int
grmtrace_seek(struct grmtrace *t, uint64_t ts)
{
	int rc;

	if (t == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (t->failed)
		return -1;
	t->pending = 0;
	if (strcmp(t->path, "-") != 0 && rewind_all(t) != 0)
		return -1;
	for (;;) {
		if ((rc = tape_rskip(t->r, ts, &t->iev)) <= 0) {
			if (rc < 0) {
				t->failed = 1;
				errno = EILSEQ;
			}
			return rc;
		}
		if (t->iev.kind == TAPE_RECORD)
			break;
		if (account(t, &t->iev) != 0) {
			t->failed = 1;
			return -1;
		}
	}
	t->pending = 1;
	return 1;
}

const char *
grmtrace_error(const struct grmtrace *t)
{
	if (t == NULL)
		return "no trace (NULL)";
	if (t->err[0] != '\0')
		return t->err;
	return tape_rerror(t->r);
}

int
grmtrace_format(const struct grmtrace *t)
{
	return t != NULL ? tape_rformat(t->r) : -1;
}

/* ---- what was read so far ---- */

const struct grmtrace_def *
grmtrace_def(const struct grmtrace *t, int32_t eid)
{
	const struct tape_def *d;

	if (t == NULL || (d = tape_rdef(t->r, eid)) == NULL)
		return NULL;
	return tr_def_pub(d);
}

const struct grmtrace_def *
grmtrace_def_for(const struct grmtrace *t, uint32_t node, uint32_t pid,
		 int32_t eid)
{
	const struct tape_def *d;

	if (t == NULL || (d = tape_rdef_for(t->r, node, pid, eid)) == NULL)
		return NULL;
	return tr_def_pub(d);
}

size_t
grmtrace_ndefs(const struct grmtrace *t)
{
	return t != NULL ? tape_rndefs(t->r) : 0;
}

const struct grmtrace_def *
grmtrace_def_at(const struct grmtrace *t, size_t i)
{
	const struct tape_def *d;

	if (t == NULL || (d = tape_rdef_at(t->r, i)) == NULL)
		return NULL;
	return tr_def_pub(d);
}

size_t
grmtrace_nhosts(const struct grmtrace *t)
{
	return t != NULL ? t->hosts.n : 0;
}

const struct grmtrace_host *
grmtrace_host_at(const struct grmtrace *t, size_t i)
{
	return t != NULL && i < t->hosts.n ? t->hosts.v[i] : NULL;
}

const struct grmtrace_host *
grmtrace_host(const struct grmtrace *t, uint32_t node)
{
	return t != NULL ? tfind(&t->hosts, node, 0) : NULL;
}

size_t
grmtrace_nprocs(const struct grmtrace *t)
{
	return t != NULL ? t->procs.n : 0;
}

const struct grmtrace_proc *
grmtrace_proc_at(const struct grmtrace *t, size_t i)
{
	return t != NULL && i < t->procs.n ? t->procs.v[i] : NULL;
}

const struct grmtrace_proc *
grmtrace_proc(const struct grmtrace *t, uint32_t node, uint32_t pid)
{
	return t != NULL ? tfind(&t->procs, node, pid) : NULL;
}

size_t
grmtrace_nthreads(const struct grmtrace *t)
{
	return t != NULL ? t->thrs.n : 0;
}

const struct grmtrace_thread *
grmtrace_thread_at(const struct grmtrace *t, size_t i)
{
	return t != NULL && i < t->thrs.n ? t->thrs.v[i] : NULL;
}

const struct grmtrace_thread *
grmtrace_thread(const struct grmtrace *t, uint32_t node, uint32_t pid,
		uint32_t tid)
{
	return t != NULL ? tfind(&t->thrs, (uint64_t)node << 32 | pid, tid) :
	    NULL;
}

uint64_t
grmtrace_losses(const struct grmtrace *t)
{
	return t != NULL ? tape_rlosses(t->r) : 0;
}

uint64_t
grmtrace_records(const struct grmtrace *t)
{
	return t != NULL ? t->records : 0;
}

int
grmtrace_ended(const struct grmtrace *t, uint64_t *records)
{
	return t != NULL ? tape_rend(t->r, records) : 0;
}

/* ---- names and printing ---- */

const char *
grmtrace_field_name(int kind, unsigned i)
{
	if (kind <= GRMTRACE_RECORD || kind >= GRMTRACE_NKINDS ||
	    i >= strlen(tr_schema[kind].kinds))
		return NULL;
	return tr_schema[kind].names[i];
}

const char *
grmtrace_kind_name(int kind)
{
	if (kind == GRMTRACE_RECORD)
		return "record";
	if (kind < 0 || kind >= GRMTRACE_NKINDS)
		return NULL;
	return tr_schema[kind].key;
}

int
grmtrace_fput_string(FILE *f, const char *s, size_t len)
{
	if (f == NULL || (s == NULL && len > 0)) {
		errno = EINVAL;
		return -1;
	}
	tape_put_quoted(f, s != NULL ? s : "", len);
	return ferror(f) ? -1 : 0;
}

int
grmtrace_fput_field(FILE *f, const struct grmtrace_field *fld)
{
	struct rec_field r;

	if (f == NULL || fld == NULL || fld->type < GRMTRACE_INT ||
	    fld->type > GRMTRACE_STRING ||
	    (fld->type == GRMTRACE_STRING && fld->v.s.p == NULL &&
	    fld->v.s.len > 0)) {
		errno = EINVAL;
		return -1;
	}
	r.kind = (enum rec_kind)fld->type;
	memcpy(&r.v, &fld->v, sizeof r.v);
	if (r.kind == REC_K_STR && r.v.s.p == NULL)
		r.v.s.p = "";
	tape_put_field(f, &r);
	return ferror(f) ? -1 : 0;
}
