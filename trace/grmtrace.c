/* SPDX-License-Identifier: MIT */
/* grmtrace.c: the public trace reader API (<grm/trace.h>, grmtrace(3)) on
 * the internal reader: arguments checked, events in the API's types, the
 * tables of hosts, processes and threads (tr_tables.c) kept as the file is
 * read, seeking. */
#pragma GCC visibility push(default)
#include <grm/trace.h>
#pragma GCC visibility pop

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "tr_causal.h"
#include "tr_int.h"
#include "tr_tables.h"

struct grmtrace {
	struct tape_r	*r;
	char		*path;
	unsigned	want;
	int		failed;
	int		pending;	/* seek found ev: next returns it */
	uint64_t	limit;		/* grmtrace_limit's, 0: none */
	uint64_t	records;
	struct tape_ev	iev;
	struct grmtrace_ev ev;
	struct grmtrace_field f[GRMTRACE_FIELDS_MAX];
	struct tr_tables tab;
	struct tr_causal causal;	/* the correction; path NULL: off */
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

/* convert() and the tables copy these values as they are: the public
 * names must keep the internal values. */
#define SAME(a, b)	((int)(a) == (int)(b))
_Static_assert(SAME(GRMTRACE_INT, REC_K_INT) &&
    SAME(GRMTRACE_UINT, REC_K_UINT) && SAME(GRMTRACE_DOUBLE, REC_K_DOUBLE) &&
    SAME(GRMTRACE_STRING, REC_K_STR), "field types");
_Static_assert(SAME(GRMTRACE_PROC_START, TAPE_PROC_START) &&
    SAME(GRMTRACE_PROC_EXIT, TAPE_PROC_EXIT) &&
    SAME(GRMTRACE_PROC_KILLED, TAPE_PROC_KILLED) &&
    SAME(GRMTRACE_PROC_EXEC, TAPE_PROC_EXEC) &&
    SAME(GRMTRACE_PROC_GONE, TAPE_PROC_GONE), "how a process changed");
_Static_assert(SAME(GRMTRACE_CLASS_PROCEDURE, REC_CLASS_PROCEDURE) &&
    SAME(GRMTRACE_CLASS_EVENT, REC_CLASS_EVENT) &&
    SAME(GRMTRACE_CLASS_STRING, REC_CLASS_STRING) &&
    SAME(GRMTRACE_CLASS_MESSAGE, REC_CLASS_MESSAGE) &&
    SAME(GRMTRACE_CLASS_USER, REC_CLASS_USER), "event classes");
_Static_assert(SAME(GRMTRACE_ATTR_ACT, REC_ATTR_ACT) &&
    SAME(GRMTRACE_ATTR_TERM, REC_ATTR_TERM) &&
    SAME(GRMTRACE_ATTR_POINT, REC_ATTR_POINT) &&
    SAME(GRMTRACE_ATTR_AGGREGATE, REC_ATTR_AGGREGATE) &&
    SAME(GRMTRACE_ATTR_NAME, REC_ATTR_NAME) &&
    SAME(GRMTRACE_ATTR_PROBE, REC_ATTR_PROBE), "attributes");
_Static_assert(SAME(GRMTRACE_EID_BLOCK_BEGIN, REC_EID_BLOCK_BEGIN) &&
    SAME(GRMTRACE_EID_BLOCK_END, REC_EID_BLOCK_END) &&
    SAME(GRMTRACE_EID_BLOCK_NAME, REC_EID_BLOCK_NAME) &&
    SAME(GRMTRACE_EID_MSG_SEND, REC_EID_MSG_SEND) &&
    SAME(GRMTRACE_EID_MSG_RECV, REC_EID_MSG_RECV) &&
    SAME(GRMTRACE_EID_PROC_NAME, REC_EID_PROC_NAME) &&
    SAME(GRMTRACE_EID_COLL_BEGIN, REC_EID_COLL_BEGIN) &&
    SAME(GRMTRACE_EID_COLL_END, REC_EID_COLL_END), "predefined types");
_Static_assert(SAME(GRMTRACE_EID_OBJECT, REC_EID_PL_OBJECT) &&
    SAME(GRMTRACE_EID_UNLOAD, REC_EID_PL_UNLOAD) &&
    SAME(GRMTRACE_EID_FN_ENTER, REC_EID_FN_ENTER) &&
    SAME(GRMTRACE_EID_FN_EXIT, REC_EID_FN_EXIT), "preload types");
_Static_assert(SAME(GRMTRACE_FIELDS_MAX, REC_ARGS_MAX), "fields of a record");

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
	if (e->kind == TAPE_RECORD) {
		(void)tr_tables_clock(&t->tab, e->node, e->ts, &v->sync_model,
		    &v->bound_ns);
		v->raw_ts = e->ts;
		v->ts += tr_causal_shift(&t->causal, e->node, e->pid, e->tid,
		    e->ts, v->bound_ns);
	} else {
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
	if (tr_causal_init(&t->causal, path) != 0) {
		tr_causal_free(&t->causal);
		put_err(err, errlen, path, "out of memory");
		free(t->path);
		free(t);
		errno = ENOMEM;
		return NULL;
	}
	if ((t->r = tape_ropen(path, &why)) == NULL) {
		e = errno;
		put_err(err, errlen, path, why);
		tr_causal_free(&t->causal);
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
	tr_tables_free(&t->tab);
	tr_causal_free(&t->causal);
	free(t->path);
	free(t);
}

int
grmtrace_raw_times(struct grmtrace *t, int raw)
{
	if (t == NULL || (!raw && t->causal.path == NULL)) {
		errno = EINVAL;
		return -1;
	}
	if (raw)
		tr_causal_off(&t->causal);
	return 0;
}

const struct grmtrace_causal *
grmtrace_causal(struct grmtrace *t, size_t i)
{
	return t != NULL ? tr_causal_at(&t->causal, i) : NULL;
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
	if (tr_tables_account(&t->tab, &t->iev) != 0) {
		t->failed = 1;
		return fail(t, ENOMEM, "out of memory");
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
	tr_limit(r, t->limit);
	tr_tables_free(&t->tab);
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
		if (tr_tables_account(&t->tab, &t->iev) != 0) {
			t->failed = 1;
			return fail(t, ENOMEM, "out of memory");
		}
	}
	t->pending = 1;
	return 1;
}

int
grmtrace_seek_offset(struct grmtrace *t, uint64_t offset)
{
	if (t == NULL || t->failed) {
		errno = EINVAL;
		return -1;
	}
	if (tr_bin_at(t->r, offset) != 0)
		return fail(t, errno, "cannot go to offset %llu: %s",
		    (unsigned long long)offset, errno == EINVAL ? "not a "
		    "binary file one can seek in" : strerror(errno));
	/* A jump to a frame is to read a piece of a big file fast: the
	 * correction, which matches messages from the file's start, would
	 * read all of it before.  The file's times from here. */
	tr_causal_off(&t->causal);
	t->pending = 0;
	return 0;
}

int
grmtrace_limit(struct grmtrace *t, uint64_t offset)
{
	if (t == NULL) {
		errno = EINVAL;
		return -1;
	}
	t->limit = offset;
	tr_limit(t->r, offset);
	tr_causal_limit(&t->causal, offset);
	return 0;
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

const char *
grmtrace_warning(const struct grmtrace *t)
{
	return t != NULL ? tape_rwarning(t->r) : NULL;
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

/* The predefined types as the API shows them, made once from rec_predef
 * (common/rec/rec.c), the list mainmon defines them from. */
static struct grmtrace_def predefs[REC_NPREDEF];
static pthread_once_t predefs_once = PTHREAD_ONCE_INIT;

static void
predefs_make(void)
{
	const struct rec_predef *p;
	struct tape_def d;
	size_t i;

	for (i = 0; i < REC_NPREDEF; i++) {
		p = &rec_predef[i];
		d = (struct tape_def){ .eid = p->eid, .cls = p->cls,
		    .attr = p->attr, .format = (char *)(uintptr_t)p->format,
		    .dsc = (char *)(uintptr_t)p->dsc };
		/* Cannot fail: test_rec parses every predefined format. */
		if (rec_parse_format(p->format, &d.fmt) != 0)
			continue;
		tr_def_fill_pub(&predefs[i], &d);
	}
}

const struct grmtrace_def *
grmtrace_predef(int32_t eid)
{
	if (eid >= 0 || eid < -REC_NPREDEF)
		return NULL;
	pthread_once(&predefs_once, predefs_make);
	return &predefs[-eid - 1];
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
	return t != NULL ? t->tab.hosts.n : 0;
}

const struct grmtrace_host *
grmtrace_host_at(const struct grmtrace *t, size_t i)
{
	return t != NULL && i < t->tab.hosts.n ? t->tab.hosts.v[i] : NULL;
}

const struct grmtrace_host *
grmtrace_host(const struct grmtrace *t, uint32_t node)
{
	return t != NULL ? tr_table_find(&t->tab.hosts, node, 0) : NULL;
}

size_t
grmtrace_nprocs(const struct grmtrace *t)
{
	return t != NULL ? t->tab.procs.n : 0;
}

const struct grmtrace_proc *
grmtrace_proc_at(const struct grmtrace *t, size_t i)
{
	return t != NULL && i < t->tab.procs.n ? t->tab.procs.v[i] : NULL;
}

const struct grmtrace_proc *
grmtrace_proc(const struct grmtrace *t, uint32_t node, uint32_t pid)
{
	return t != NULL ? tr_table_find(&t->tab.procs, node, pid) : NULL;
}

size_t
grmtrace_nthreads(const struct grmtrace *t)
{
	return t != NULL ? t->tab.thrs.n : 0;
}

const struct grmtrace_thread *
grmtrace_thread_at(const struct grmtrace *t, size_t i)
{
	return t != NULL && i < t->tab.thrs.n ? t->tab.thrs.v[i] : NULL;
}

const struct grmtrace_thread *
grmtrace_thread(const struct grmtrace *t, uint32_t node, uint32_t pid,
		uint32_t tid)
{
	return t != NULL ? tr_table_find(&t->tab.thrs,
	    (uint64_t)node << 32 | pid, tid) : NULL;
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
