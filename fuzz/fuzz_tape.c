/* fuzz_tape.c: libFuzzer target for the trace file readers (trace/), and
 * through write-read round trips, for the writers.
 *
 * The input is a whole trace file, in any format.  It is read to its end or
 * its first error, touching every field.  Each record read is written
 * again with the writer (tape_open_fmt, tape_def before each record,
 * tape_record, tape_close) into two more files, one as text and one as BEE
 * Ascii; each must read back without error, and writing it once more in
 * its format must give the same bytes (the writer's output is a fixed
 * point of read-then-write; when the writer refused a record as too long,
 * its definition stays behind, so definitions are then left out of the
 * comparison).  Each field is also formatted with tape_put_field.  Meta
 * lines the reader returns (#PROC, #LOSS, #STATS, #CONTROL) are written
 * again the same way, in the same order.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "tape.h"

/* An anonymous in-memory file and the path tape_ropen/tape_open take. */
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
 * Formats one field with tape_put_field (what prove prints) and checks
 * the text: a quoted string, or a number that reads back the same.
 */
static void
put_field(const struct rec_field *f)
{
	static char *text;
	static size_t len;
	static FILE *ms;
	char *end;

	if (ms == NULL && (ms = open_memstream(&text, &len)) == NULL)
		abort();
	rewind(ms);
	tape_put_field(ms, f);
	putc('\0', ms);
	if (fflush(ms) != 0 || len == 0)
		abort();
	switch (f->kind) {
	case REC_K_STR:
		if (len < 3 || text[0] != '"' || text[len - 2] != '"')
			abort();
		break;
	case REC_K_INT:
		if (strtoll(text, &end, 10) != f->v.i || *end != '\0')
			abort();
		break;
	case REC_K_UINT:
		if (strtoull(text, &end, 10) != f->v.u || *end != '\0')
			abort();
		break;
	default:
		if (strlen(text) == 0 || strchr(text, ' ') != NULL)
			abort();
	}
}

static void
touch(const struct tape_ev *ev)
{
	uint64_t h = ev->ts ^ ev->node ^ ev->pid ^ ev->tid ^ (uint32_t)ev->eid;
	unsigned i;
	uint32_t k;

	if (ev->n > REC_ARGS_MAX || ev->def == NULL ||
	    ev->def->eid != ev->eid || ev->def->fmt.n != ev->n)
		abort();
	h += strlen(ev->def->format) + strlen(ev->def->dsc);
	for (i = 0; i < ev->n; i++) {
		if (ev->f[i].kind != ev->def->fmt.kind[i])
			abort();
		switch (ev->f[i].kind) {
		case REC_K_STR:
			for (k = 0; k < ev->f[i].v.s.len; k++)
				h = h * 31 + (unsigned char)ev->f[i].v.s.p[k];
			break;
		case REC_K_DOUBLE:
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
touch_meta(const struct tape_ev *ev)
{
	uint64_t h = ev->ts ^ ev->node ^ ev->pid ^ ev->tid ^ ev->count;

	if (ev->kind <= TAPE_RECORD || ev->kind >= TAPE_NKINDS || ev->n > 12)
		abort();
	if ((ev->kind == TAPE_PROC || ev->kind == TAPE_CONTROL) &&
	    (ev->str == NULL || ev->str[ev->str_len] != '\0'))
		abort();
	if (ev->str != NULL)
		h += ev->str_len > 0 ? (unsigned char)ev->str[0] : 0;
	if (ev->kind == TAPE_STATS_RANGE)
		h += ev->range.total ^ ev->range.min ^ ev->range.max ^
		    (uint64_t)ev->range.key ^ (uint64_t)(ev->range.m2 > 0);
	if (ev->def != NULL && ev->def->eid != ev->eid)
		abort();
	sink += h;
}

/* Writes a meta line as read; a line grown too long is left out. */
static void
put_meta(struct tape_w *w, const struct tape_ev *ev)
{
	const struct tape_range *g = &ev->range;
	int rc;

	switch (ev->kind) {
	case TAPE_PROC:
		/* The writer takes a C string: a name with a NUL is cut. */
		rc = tape_proc(w, ev->node, ev->pid, ev->ppid, ev->is_exit,
		    ev->ts, ev->status, ev->str);
		break;
	case TAPE_LOSS:
		rc = tape_loss(w, ev->node, ev->pid, ev->tid, ev->count,
		    ev->ts);
		break;
	case TAPE_STATS_COUNT:
		rc = tape_stats_count(w, ev->node, ev->pid, ev->eid,
		    ev->count);
		break;
	case TAPE_STATS_RANGE:
		rc = tape_stats_range(w, ev->node, ev->pid, ev->eid, g->key,
		    ev->count, g->total, g->min, g->max, g->mean, g->m2);
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
put_record(struct out *o, const struct tape_ev *ev)
{
	const struct tape_def *d = ev->def;

	/* Bytes >= 0x80 are read as themselves but written as \xHH (and in
	 * BEE Ascii, blanks and parentheses too): a line may grow past
	 * TAPE_LINE_MAX (EMSGSIZE).  A record whose #DEF is too long is
	 * left out too. */
	if (tape_def(o->w, d->eid, d->cls, d->attr, d->format,
	    strlen(d->format), d->dsc, strlen(d->dsc)) != 0) {
		if (errno == EMSGSIZE)
			return;
		fprintf(stderr, "tape_def refused a definition the reader "
		    "took: %s\n", strerror(errno));
		abort();
	}
	if (tape_record(o->w, ev->ts, ev->node, ev->pid, ev->tid, ev->eid,
	    ev->f, ev->n) != 0 && errno != EMSGSIZE) {
		fprintf(stderr, "tape_record: %s\n", strerror(errno));
		abort();
	}
}

/*
 * Reads the file at path to its end and writes each record and meta line
 * it holds into each of o[0..no).  Returns the number of records read;
 * *rc is the last tape_next result, or -2 if the file was refused.
 */
static uint64_t
read_all(const char *path, struct out *o, int no, int *rc)
{
	struct tape_ev ev;
	struct tape_r *r;
	const char *why = NULL;
	uint64_t n = 0, end;
	int k;

	if ((r = tape_ropen(path, &why)) == NULL) {
		if (why == NULL)
			abort();
		*rc = -2;
		return 0;
	}
	tape_rwant(r, TAPE_WANT(TAPE_PROC) | TAPE_WANT(TAPE_LOSS) |
	    TAPE_WANT(TAPE_STATS_COUNT) | TAPE_WANT(TAPE_STATS_RANGE) |
	    TAPE_WANT(TAPE_CONTROL));
	while ((*rc = tape_next(r, &ev)) == 1) {
		if (ev.kind == TAPE_RECORD) {
			n++;
			touch(&ev);
		} else
			touch_meta(&ev);
		for (k = 0; k < no; k++) {
			if (o[k].w == NULL)
				out_open(&o[k]);
			if (ev.kind == TAPE_RECORD)
				put_record(&o[k], &ev);
			else
				put_meta(o[k].w, &ev);
		}
	}
	/* An error is final and says why; the end of file stays the end. */
	if (*rc == -1 && (strcmp(tape_rerror(r), "no error") == 0 ||
	    tape_next(r, &ev) != -1))
		abort();
	if (*rc == 0 && tape_next(r, &ev) != 0)
		abort();
	sink += tape_rlosses(r);
	if (tape_rend(r, &end))
		sink += end;
	if (tape_rdef(r, -1) != NULL)
		sink += strlen(tape_rdef(r, -1)->format);
	tape_rclose(r);
	for (k = 0; k < no; k++)
		out_close(&o[k]);
	return n;
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

	/* Read the input, and write what was read into each a[k]. */
	for (k = 0; k < NOUT; k++)
		a[k] = (struct out){ .fmt = outs[k].fmt, .w = NULL };
	n0 = read_all(in.path, a, NOUT, &rc0);
	close(in.fd);
	if (!a[0].opened)
		return 0;	/* nothing read: nothing was written */

	/* Each writer's output must read back whole, and again into b. */
	for (k = 0; k < NOUT; k++) {
		b = (struct out){ .fmt = outs[k].fmt, .w = NULL };
		na = read_all(a[k].mf.path, &b, 1, &rca);
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
