/* SPDX-License-Identifier: MIT */
/* fuzz_tape.c: libFuzzer target for the trace file readers, through the
 * public API (<grm/trace.h>: grmtrace_open, grmtrace_next, grmtrace_seek),
 * and through write-read round trips, for the writers.
 *
 * The input is a whole trace file, in any format.  It is read to its end or
 * its first error, touching every field.  Each record read is written
 * again with the writer (tape_open_fmt, tape_def before each record,
 * tape_record, tape_close) into two more files, one as text and one as BEE
 * Ascii; each must read back without error, and writing it once more in
 * its format must give the same bytes (the writer's output is a fixed
 * point of read-then-write; when the writer refused a record as too long,
 * its definition stays behind, so definitions are then left out of the
 * comparison).  Each field is also formatted with grmtrace_fput_field.
 * Meta lines the reader returns (#HOST, #SYNC, #ORDER, #CAUSAL, #PROC,
 * #LOSS, #STATS, #CONTROL) are written again the same way, in the same
 * order.  Then the input is sought: to no time, to the time of records
 * read, just after, and past the end; a seek in a file that read whole
 * must not fail, and must land on a record at or after the time (on the
 * first one, in file order, where the records are in time order or the
 * format is not binary).
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <grm/trace.h>

#include "fuzz.h"
#include "tape.h"

/* An anonymous in-memory file and the path grmtrace_open/tape_open
 * take. */
struct mfile {
	int	fd;
	char	path[64];
};

static void
mf_open(struct mfile *m)
{
	m->fd = memfd_create("fuzz_tape", MFD_CLOEXEC);
	if (m->fd < 0) {
		perror("memfd_create");
		abort();
	}
	snprintf(m->path, sizeof m->path, "/proc/self/fd/%d", m->fd);
}

static void
mf_write(struct mfile *m, const void *p, size_t n)
{
	const char *b = p;
	ssize_t k;

	while (n > 0) {
		k = write(m->fd, b, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			perror("write to memfd");
			abort();
		}
		b += k;
		n -= (size_t)k;
	}
}

/* The whole contents, in a malloc'ed buffer. */
static char *
mf_slurp(struct mfile *m, size_t *n)
{
	off_t end = lseek(m->fd, 0, SEEK_END);
	char *b;

	if (end < 0 || (b = malloc((size_t)end + 1)) == NULL)
		abort();
	if (pread(m->fd, b, (size_t)end, 0) != end)
		abort();
	*n = (size_t)end;
	return b;
}

/* Removes the definition lines of t[0..*n) (they start with def): a
 * record the writer refused (too long) leaves its definition behind, and a
 * second pass does not. */
static void
drop_defs(char *t, size_t *n, const char *def)
{
	size_t i = 0, o = 0, e;
	char *nl;

	while (i < *n) {
		nl = memchr(t + i, '\n', *n - i);
		e = nl != NULL ? (size_t)(nl - t) + 1 : *n;
		if (e - i < strlen(def) ||
		    memcmp(t + i, def, strlen(def)) != 0) {
			memmove(t + o, t + i, e - i);
			o += e - i;
		}
		i = e;
	}
	*n = o;
}

/* Something the compiler cannot drop: every byte we read goes into it. */

/*
 * Formats one field with grmtrace_fput_field (what prove prints) and
 * checks the text: a quoted string, or a number that reads back the same.
 */
static void
put_field(const struct grmtrace_field *f)
{
	static char *text;
	static size_t len;
	static FILE *ms;
	char *end;

	if (ms == NULL && (ms = open_memstream(&text, &len)) == NULL)
		abort();
	rewind(ms);
	if (grmtrace_fput_field(ms, f) != 0)
		abort();
	putc('\0', ms);
	if (fflush(ms) != 0 || len == 0)
		abort();
	switch (f->type) {
	case GRMTRACE_STRING:
		if (len < 3 || text[0] != '"' || text[len - 2] != '"')
			abort();
		break;
	case GRMTRACE_INT:
		if (strtoll(text, &end, 10) != f->v.i || *end != '\0')
			abort();
		break;
	case GRMTRACE_UINT:
		if (strtoull(text, &end, 10) != f->v.u || *end != '\0')
			abort();
		break;
	default:
		if (strlen(text) == 0 || strchr(text, ' ') != NULL)
			abort();
	}
}

static void
touch(const struct grmtrace_ev *ev)
{
	uint64_t h = ev->ts ^ ev->node ^ ev->pid ^ ev->tid ^ (uint32_t)ev->eid;
	unsigned i;
	uint32_t k;

	if (ev->n > GRMTRACE_FIELDS_MAX || ev->def == NULL ||
	    ev->def->eid != ev->eid || ev->def->nfields != ev->n)
		abort();
	h += strlen(ev->def->format) + strlen(ev->def->description);
	for (i = 0; i < ev->n; i++) {
		if (ev->f[i].type != ev->def->type[i] || ev->def->conv[i] == 0)
			abort();
		switch (ev->f[i].type) {
		case GRMTRACE_STRING:
			if (ev->f[i].v.s.p[ev->f[i].v.s.len] != '\0')
				abort();
			for (k = 0; k < ev->f[i].v.s.len; k++)
				h = h * 31 + (unsigned char)ev->f[i].v.s.p[k];
			break;
		case GRMTRACE_DOUBLE:
			h += isnan(ev->f[i].v.d) ? 1 :
			    (uint64_t)(ev->f[i].v.d != 0);
			break;
		default:
			h += ev->f[i].v.u;
		}
		put_field(&ev->f[i]);
	}
	sink += h;
}

/* A meta line as read: its fields must be those of its kind. */
static void
touch_meta(const struct grmtrace_ev *ev)
{
	uint64_t h = ev->ts ^ ev->node ^ ev->pid ^ ev->tid ^ ev->count;
	unsigned i;

	if (ev->kind <= GRMTRACE_RECORD || ev->kind >= GRMTRACE_NKINDS ||
	    ev->n > 12 || grmtrace_kind_name(ev->kind) == NULL)
		abort();
	for (i = 0; i < ev->n; i++) {
		if (grmtrace_field_name(ev->kind, i) == NULL)
			abort();
		if (ev->f[i].type == GRMTRACE_STRING &&
		    ev->f[i].v.s.p[ev->f[i].v.s.len] != '\0')
			abort();
		h += ev->f[i].v.u;
	}
	if ((ev->kind == GRMTRACE_PROC || ev->kind == GRMTRACE_CONTROL ||
	    ev->kind == GRMTRACE_PLAN_ADD) &&
	    (ev->str == NULL || ev->str[ev->str_len] != '\0'))
		abort();
	if (ev->str != NULL)
		h += ev->str_len > 0 ? (unsigned char)ev->str[0] : 0;
	if (ev->def != NULL && ev->def->eid != ev->eid)
		abort();
	sink += h;
}

/* The kinds of meta lines written again (the others the writer makes
 * itself: #MM, #CLOCK, #COLLECT's count, #END; or writes with the
 * records: #DEF). */
#define META_WANT	(GRMTRACE_WANT(GRMTRACE_HOST) | \
	GRMTRACE_WANT(GRMTRACE_SYNC) | GRMTRACE_WANT(GRMTRACE_ORDER) | \
	GRMTRACE_WANT(GRMTRACE_CAUSAL) | GRMTRACE_WANT(GRMTRACE_PROC) | \
	GRMTRACE_WANT(GRMTRACE_LOSS) | GRMTRACE_WANT(GRMTRACE_STATS_COUNT) | \
	GRMTRACE_WANT(GRMTRACE_STATS_RANGE) | GRMTRACE_WANT(GRMTRACE_CONTROL) | \
	GRMTRACE_WANT(GRMTRACE_PLAN_ADD) | GRMTRACE_WANT(GRMTRACE_PLAN_DEL) | \
	GRMTRACE_WANT(GRMTRACE_TSC) | GRMTRACE_WANT(GRMTRACE_CLOCKSTEP) | \
	GRMTRACE_WANT(GRMTRACE_PLAN_FIRE))

/* Writes a meta line as read; a line grown too long is left out. */
static void
put_meta(struct tape_w *w, const struct grmtrace_ev *ev)
{
	const struct grmtrace_field *f = ev->f;
	int rc;

	switch (ev->kind) {
	case GRMTRACE_HOST:
		rc = tape_host(w, ev->node, f[1].v.i, (uint32_t)f[2].v.u,
		    ev->str);
		break;
	case GRMTRACE_SYNC:
		rc = tape_sync(w, &(struct tape_sync){ ev->node, f[1].v.u,
		    f[2].v.i, f[3].v.i, f[4].v.u, f[5].v.u,
		    (uint32_t)f[6].v.u, ev->n > 7 ? (uint32_t)f[7].v.u : 0,
		    ev->n > 7 ? f[8].v.u : 0, ev->n > 7 ? f[9].v.u : 0,
		    ev->n > 7 ? f[10].v.u : 0, ev->n > 7 ? f[11].v.u : 0 });
		break;
	case GRMTRACE_TSC:
		rc = tape_tsc(w, &(struct tape_tsc){ ev->node, f[1].v.u,
		    f[2].v.u, f[3].v.u, f[4].v.u, f[5].v.u, f[6].v.u });
		break;
	case GRMTRACE_CLOCKSTEP:
		rc = tape_clockstep(w, ev->node, f[1].v.u, f[2].v.i, f[3].v.u,
		    f[4].v.u);
		break;
	case GRMTRACE_ORDER:
		rc = tape_order(w, f[0].v.u, f[1].v.u, f[2].v.u, f[3].v.u);
		break;
	case GRMTRACE_CAUSAL:
		rc = tape_causal(w, f[0].v.u, f[1].v.u, f[2].v.u, f[3].v.u,
		    ev->n > 4 ? f[4].v.u : 0);
		break;
	case GRMTRACE_PROC:
		/* The writer takes a C string: a name with a NUL is cut. */
		rc = tape_proc(w, ev->node, ev->pid, ev->ppid, ev->how,
		    ev->ts, ev->status, ev->str);
		break;
	case GRMTRACE_LOSS:
		rc = tape_loss(w, ev->node, ev->pid, ev->tid, ev->count,
		    ev->ts);
		break;
	case GRMTRACE_STATS_COUNT:
		rc = tape_stats_count(w, ev->node, ev->pid, ev->eid,
		    ev->count);
		break;
	case GRMTRACE_STATS_RANGE:
		rc = tape_stats_range(w, ev->node, ev->pid, ev->eid, f[4].v.i,
		    ev->count, f[6].v.u, f[7].v.u, f[8].v.u, f[9].v.d,
		    f[10].v.d);
		break;
	case GRMTRACE_PLAN_ADD:
		rc = tape_plan_add(w, (uint32_t)ev->count, ev->ts, ev->str,
		    ev->str_len);
		break;
	case GRMTRACE_PLAN_DEL:
		rc = tape_plan_del(w, (uint32_t)ev->count, ev->ts);
		break;
	case GRMTRACE_PLAN_FIRE:
		rc = tape_plan_fire(w, &(struct tape_fire){ (uint32_t)ev->count,
		    ev->ts, ev->records, ev->node, ev->pid, ev->tid, ev->eid,
		    f[8].v.u, f[9].v.u, ev->str, ev->str_len });
		break;
	default:
		rc = tape_control(w, ev->ts, ev->str, ev->str_len);
	}
	if (rc != 0 && errno != EMSGSIZE) {
		fprintf(stderr, "writing a meta line: %s\n", strerror(errno));
		abort();
	}
}

/* The writer of another file, opened at the first record or meta line. */
struct out {
	int		fmt;		/* TAPE_FMT_* */
	struct mfile	mf;
	struct tape_w	*w;
	int		opened;
	uint64_t	written;	/* records */
};

/* The formats written, and how their definition lines start. */
#define NOUT	2
static const struct {
	int		fmt;
	const char	*def;
} outs[NOUT] = { { TAPE_FMT_TAPE, "#DEF " }, { TAPE_FMT_BEE, "(7 (" } };

static void
out_open(struct out *o)
{
	mf_open(&o->mf);
	if ((o->w = tape_open_fmt(o->mf.path, o->fmt, "fuzz", 1, 2)) == NULL) {
		perror("tape_open");
		abort();
	}
	o->opened = 1;
}

static void
out_close(struct out *o)
{
	if (o->w == NULL)
		return;
	o->written = tape_records(o->w);
	if (tape_close(o->w) != 0) {
		perror("tape_close");
		abort();
	}
	o->w = NULL;
}

/* Writes a record read (its definition first) into o. */
static void
put_record(struct out *o, const struct grmtrace_ev *ev)
{
	const struct grmtrace_def *d = ev->def;
	struct rec_field f[REC_ARGS_MAX];
	unsigned i;

	/* Bytes >= 0x80 are read as themselves but written as \xHH (and in
	 * BEE Ascii, blanks and parentheses too): a line may grow past
	 * TAPE_LINE_MAX (EMSGSIZE).  A record whose #DEF is too long is
	 * left out too. */
	if (tape_def(o->w, d->eid, d->cls, d->attr, d->format,
	    strlen(d->format), d->description, strlen(d->description)) != 0) {
		if (errno == EMSGSIZE)
			return;
		fprintf(stderr, "tape_def refused a definition the reader "
		    "took: %s\n", strerror(errno));
		abort();
	}
	for (i = 0; i < ev->n; i++) {
		f[i].kind = (enum rec_kind)ev->f[i].type;
		memcpy(&f[i].v, &ev->f[i].v, sizeof f[i].v);
	}
	if (tape_record(o->w, ev->ts, ev->node, ev->pid, ev->tid, ev->eid,
	    f, ev->n) != 0 && errno != EMSGSIZE) {
		fprintf(stderr, "tape_record: %s\n", strerror(errno));
		abort();
	}
}

/* The times of the records of the input, in file order (for the seeks);
 * at most TS_MAX are kept. */
#define TS_MAX	(1 << 16)
static uint64_t tss[TS_MAX];
static size_t nts;

/*
 * Reads the file at path to its end and writes each record and meta line
 * it holds into each of o[0..no); keeps the records' times if keep.
 * Returns the number of records read; *rc is the last grmtrace_next
 * result, or -2 if the file was refused.
 */
static uint64_t
read_all(const char *path, struct out *o, int no, int *rc, int keep)
{
	const struct grmtrace_ev *ev;
	struct grmtrace *r;
	uint64_t n = 0, end;
	char err[256] = "";
	size_t i;
	int k;

	if ((r = grmtrace_open(path, err, sizeof err)) == NULL) {
		if (err[0] == '\0')
			abort();
		*rc = -2;
		return 0;
	}
	if (grmtrace_select(r, META_WANT) != 0)
		abort();
	while ((*rc = grmtrace_next(r, &ev)) == 1) {
		if (ev->kind == GRMTRACE_RECORD) {
			n++;
			touch(ev);
			if (keep && nts < TS_MAX)
				tss[nts++] = ev->ts;
		} else
			touch_meta(ev);
		for (k = 0; k < no; k++) {
			if (o[k].w == NULL)
				out_open(&o[k]);
			if (ev->kind == GRMTRACE_RECORD)
				put_record(&o[k], ev);
			else
				put_meta(o[k].w, ev);
		}
	}
	/* An error is final and says why; the end of file stays the end. */
	if (*rc == -1 && (strcmp(grmtrace_error(r), "no error") == 0 ||
	    grmtrace_next(r, &ev) != -1))
		abort();
	if (*rc == 0 && grmtrace_next(r, &ev) != 0)
		abort();
	sink += grmtrace_losses(r) + grmtrace_records(r);
	if (grmtrace_ended(r, &end))
		sink += end;
	for (i = 0; i < grmtrace_ndefs(r); i++)
		sink += strlen(grmtrace_def_at(r, i)->format);
	for (i = 0; i < grmtrace_nprocs(r); i++)
		sink += strlen(grmtrace_proc_at(r, i)->name) +
		    strlen(grmtrace_proc_at(r, i)->rank_name);
	for (i = 0; i < grmtrace_nhosts(r); i++)
		sink += strlen(grmtrace_host_at(r, i)->hostname);
	for (i = 0; i < grmtrace_nthreads(r); i++)
		sink += grmtrace_thread_at(r, i)->records;
	grmtrace_close(r);
	for (k = 0; k < no; k++)
		out_close(&o[k]);
	return n;
}

/*
 * Seeks in the file at path (which read whole if whole) to ts: the record
 * it lands on is at or after ts, and is the first such in file order
 * where the times read (tss) are in order or the format is not binary.
 */
static void
seek_one(struct grmtrace *r, uint64_t ts, int whole)
{
	const struct grmtrace_ev *ev;
	size_t i, want = nts;
	int rc, sorted = 1, exact;

	for (i = 0; i < nts; i++) {
		if (want == nts && tss[i] >= ts)
			want = i;
		if (i > 0 && tss[i] < tss[i - 1])
			sorted = 0;
	}
	exact = whole && nts < TS_MAX &&
	    (sorted || grmtrace_format(r) != GRMTRACE_FMT_BIN);
	rc = grmtrace_seek(r, ts);
	if (rc < 0) {
		if (whole) {
			fprintf(stderr, "seek failed in a file that read "
			    "whole: %s\n", grmtrace_error(r));
			abort();
		}
		if (grmtrace_next(r, &ev) != -1)
			abort();
		return;
	}
	if (exact && rc != (want < nts)) {
		fprintf(stderr, "seek to %llu: %d, want %d\n",
		    (unsigned long long)ts, rc, want < nts);
		abort();
	}
	if (rc == 0) {
		if (grmtrace_next(r, &ev) != 0)
			abort();
		return;
	}
	if (grmtrace_next(r, &ev) != 1 || ev->kind != GRMTRACE_RECORD ||
	    ev->ts < ts)
		abort();
	if (exact && ev->ts != tss[want]) {
		fprintf(stderr, "seek to %llu: at %llu, want %llu\n",
		    (unsigned long long)ts, (unsigned long long)ev->ts,
		    (unsigned long long)tss[want]);
		abort();
	}
	touch(ev);
}

static void
seeks(const char *path, int whole)
{
	struct grmtrace *r;
	uint64_t t[6];
	size_t i;

	if ((r = grmtrace_open(path, NULL, 0)) == NULL)
		return;
	if (grmtrace_select(r, 0) != 0)
		abort();
	t[0] = 0;
	t[1] = UINT64_MAX;
	t[2] = nts > 0 ? tss[nts / 2] : 1;
	t[3] = nts > 0 ? tss[nts - 1] : 2;
	t[4] = nts > 0 && tss[nts / 3] < UINT64_MAX ? tss[nts / 3] + 1 : 3;
	t[5] = nts > 0 ? tss[0] : 4;
	for (i = 0; i < 6; i++)
		seek_one(r, t[i], whole);
	grmtrace_close(r);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct out a[NOUT], b;
	struct mfile in;
	uint64_t n0, na;
	int rc0, rca, k;
	char *ta, *tb;
	size_t la, lb;

	mf_open(&in);
	mf_write(&in, data, size);

	/* Read the input, and write what was read into each a[k]; seek in
	 * it. */
	for (k = 0; k < NOUT; k++)
		a[k] = (struct out){ .fmt = outs[k].fmt, .w = NULL };
	nts = 0;
	n0 = read_all(in.path, a, NOUT, &rc0, 1);
	if (rc0 != -2)
		seeks(in.path, rc0 == 0);
	close(in.fd);
	if (!a[0].opened)
		return 0;	/* nothing read: nothing was written */

	/* Each writer's output must read back whole, and again into b. */
	for (k = 0; k < NOUT; k++) {
		b = (struct out){ .fmt = outs[k].fmt, .w = NULL };
		na = read_all(a[k].mf.path, &b, 1, &rca, 0);
		if (rca != 0 || na != a[k].written || na > n0) {
			fprintf(stderr, "the writer's output (format %d) does "
			    "not read back (rc %d after %llu records)\n",
			    outs[k].fmt, rca, (unsigned long long)na);
			abort();
		}
		if (b.opened) {
			ta = mf_slurp(&a[k].mf, &la);
			tb = mf_slurp(&b.mf, &lb);
			if (a[k].written != n0) {
				drop_defs(ta, &la, outs[k].def);
				drop_defs(tb, &lb, outs[k].def);
			}
			if (la != lb || memcmp(ta, tb, la) != 0) {
				fprintf(stderr, "format %d: write(read(write("
				    "read(input)))) differs from write(read("
				    "input))\n", outs[k].fmt);
				abort();
			}
			free(ta);
			free(tb);
			close(b.mf.fd);
		}
		close(a[k].mf.fd);
	}
	return 0;
}
