/* SPDX-License-Identifier: MIT */
/* tr_bin_r.c: reading the binary trace format (doc/formats.md section 3):
 * frames of meta lines (L), records (R), dense pieces of records (D) and
 * the pieces of records as they are of version 2 (P).  The input is
 * hostile: every length is checked. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tr_int.h"
#include "rec/dense.h"

/* The piece being read: records left at pp..pe, of thread (node, pid,
 * tid). */
struct bin_r {
	const char	*pp;
	const char	*pe;
	uint32_t	node, pid, tid;
	char		*dbuf;	/* a dense piece's records, decoded */
	/* Its switches to other threads (version 4): the next, sw[swi],
	 * at decoded offset sw[swi].off; nsw of them. */
	struct rec_dense_sw *sw;
	size_t		swi, nsw;
	uint64_t	version;
};

/* The most switches a D frame can hold: each takes 8 bytes or more and
 * is followed by a record of at least 8. */
#define BIN_SW_MAX	(TAPE_LINE_MAX / 16)

static uint64_t
ld64(const char *p)
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = v << 8 | (unsigned char)p[i];
	return v;
}

static uint32_t
ld32(const char *p)
{
	return (uint32_t)(unsigned char)p[0] |
	    (uint32_t)(unsigned char)p[1] << 8 |
	    (uint32_t)(unsigned char)p[2] << 16 |
	    (uint32_t)(unsigned char)p[3] << 24;
}

/* Returns 1 with the next frame's kind and payload, 0 at end of file,
 * -1. */
static int
getframe(struct tape_r *r, char *kind, char **p, size_t *len)
{
	uint32_t n;
	int rc;

	if ((rc = tr_fill(r, 5)) <= 0) {
		if (rc == 0 && r->end != r->start) {
			r->lineno++;
			return tr_cut(r, "frame", r->end - r->start);
		}
		return rc;
	}
	n = ld32(r->buf + r->start);
	*kind = r->buf[r->start + 4];
	r->lineno++;
	if (n > TAPE_LINE_MAX - 5)
		return tr_fail(r, "frame of %lu bytes (at most %d)",
		    (unsigned long)n, TAPE_LINE_MAX - 5);
	if ((rc = tr_fill(r, 5 + (size_t)n)) <= 0)
		return rc < 0 ? -1 : tr_cut(r, "frame", r->end - r->start);
	*p = r->buf + r->start + 5;
	*len = n;
	r->foff = tr_tell(r);
	r->start += 5 + (size_t)n;
	return 1;
}

/* A u16 (token) or u32 (string) length and its bytes. */
static int
bstr(struct cur *c, const char **s, size_t *n, int wide)
{
	size_t hl = wide ? 4 : 2, len;

	if ((size_t)(c->e - c->p) < hl)
		return tr_bad(c, "missing field");
	len = wide ? ld32(c->p) : (size_t)((unsigned char)c->p[0] |
	    (unsigned char)c->p[1] << 8);
	if ((size_t)(c->e - c->p) - hl < len)
		return tr_bad(c, "string past the end of its frame");
	*s = c->p + hl;
	*n = len;
	c->p += hl + len;
	return 0;
}

/* One field of kind k from a frame: every number in 8 bytes. */
static int
get1(struct tape_r *r, struct cur *c, char k, struct rec_field *f)
{
	const char *s = NULL;
	uint64_t u;
	int64_t i;
	size_t n;

	if (k == 't' || k == '=' || k == 's') {
		if (bstr(c, &s, &n, k == 's') != 0)
			return -1;
		if (k == 's')	/* handed out NUL-terminated */
			s = tr_keep(r, s, n);
		else
			for (i = 0; i < (int64_t)n; i++)
				if (tr_blank(s[i]) || s[i] == '\0' ||
				    s[i] == '\n')
					return tr_bad(c, "blank in token");
		f->v.s.p = s;
		f->v.s.len = (uint32_t)n;
		return 0;
	}
	if (c->e - c->p < 8)
		return tr_bad(c, "missing field");
	u = ld64(c->p);
	c->p += 8;
	memcpy(&i, &u, 8);
	switch (k) {
	case 'U':
		if (u > UINT32_MAX)
			return tr_bad(c, "number out of range");
		f->v.u = u;
		return 0;
	case 'b':
		if (u > 255)
			return tr_bad(c, "number out of range");
		f->v.u = u;
		return 0;
	case 'u':
		f->v.u = u;
		return 0;
	case 'i':
		if (i < INT32_MIN || i > INT32_MAX)
			return tr_bad(c, "number out of range");
		f->v.i = i;
		return 0;
	case 'I':
		f->v.i = i;
		return 0;
	default:
		memcpy(&f->v.d, &u, 8);
		return 0;
	}
}

static const struct tr_fieldops bin_fields = { get1, 0 };

/* The next record of the piece being read. */
static int
piece_record(struct tape_r *r, struct bin_r *b, struct tape_ev *ev)
{
	struct rec_hdr h;
	unsigned i;

	memcpy(&h, b->pp, sizeof h);
	if (h.len < sizeof h || h.len > (size_t)(b->pe - b->pp))
		return tr_fail(r, "piece: record of %u bytes", (unsigned)h.len);
	/* (bin_skip may have passed over records, and switches.) */
	while (b->swi < b->nsw &&
	    (size_t)(b->pp - b->dbuf) >= b->sw[b->swi].off)
		rec_dense_sw_apply(&b->sw[b->swi++], &b->node, &b->pid,
		    &b->tid);
	ev->kind = TAPE_RECORD;
	ev->ts = h.ts;
	ev->node = b->node;
	ev->pid = b->pid;
	ev->tid = b->tid;
	ev->eid = h.eid;
	if (tr_record_def(r, ev) != 0)
		return -1;
	if (rec_decode(b->pp, h.len, &ev->def->fmt, ev->f) != 0)
		return tr_fail(r, "record of eid %d does not match its format",
		    (int)ev->eid);
	ev->n = ev->def->fmt.n;
	/* Strings are handed out NUL-terminated, like the text's. */
	for (i = 0; i < ev->n; i++)
		if (ev->f[i].kind == REC_K_STR)
			ev->f[i].v.s.p = tr_keep(r, ev->f[i].v.s.p,
			    ev->f[i].v.s.len);
	b->pp += h.len;
	return 1;
}

/* A dense piece (D) of len bytes at p: its records decoded into b->dbuf,
 * then read as a P frame's.  0, -1. */
static int
dense_piece(struct tape_r *r, struct bin_r *b, const char *p, size_t len)
{
	ssize_t n;

	if (len < 12 + REC_DENSE_BASE + 8)
		return tr_fail(r, "dense piece: %zu bytes", len);
	if (b->dbuf == NULL &&
	    (b->dbuf = malloc(REC_DENSE_OUT_MAX(TAPE_LINE_MAX))) == NULL)
		return tr_fail(r, "out of memory");
	if (b->version >= 4 && b->sw == NULL &&
	    (b->sw = malloc(BIN_SW_MAX * sizeof *b->sw)) == NULL)
		return tr_fail(r, "out of memory");
	b->swi = b->nsw = 0;
	if (b->version >= 4)
		n = rec_dense_decode_sw(p + 12, len - 12, b->dbuf,
		    REC_DENSE_OUT_MAX(TAPE_LINE_MAX), b->sw, BIN_SW_MAX,
		    &b->nsw);
	else
		n = rec_dense_decode(p + 12, len - 12, b->dbuf,
		    REC_DENSE_OUT_MAX(TAPE_LINE_MAX));
	if (n <= 0)
		return tr_fail(r, "dense piece: malformed");
	b->node = ld32(p);
	b->pid = ld32(p + 4);
	b->tid = ld32(p + 8);
	b->pp = b->dbuf;
	b->pe = b->dbuf + n;
	return 0;
}

/*
 * Reads one frame: 1 with ev (a record, or a meta line asked for), 0 if it
 * gave nothing to return (a piece is then open at b->pp), -1; the end of
 * the file is 2.
 */
static int
frame(struct tape_r *r, struct bin_r *b, struct tape_ev *ev)
{
	struct cur c;
	size_t len;
	char *p, kind;
	int rc;

	if ((rc = getframe(r, &kind, &p, &len)) <= 0)
		return rc == 0 ? 2 : -1;
	c = (struct cur){ p, p + len, NULL, &bin_fields };
	switch (kind) {
	case 'L':
		return tr_meta(r, &c, ev);
	case 'R':
		return tr_record(r, &c, ev) == 0 ? 1 : -1;
	case 'P':
		if (len < 12 + sizeof(struct rec_hdr))
			return tr_fail(r, "piece: %zu bytes", len);
		b->node = ld32(p);
		b->pid = ld32(p + 4);
		b->tid = ld32(p + 8);
		b->swi = b->nsw = 0;
		b->pp = p + 12;
		b->pe = p + len;
		return 0;
	case 'D':
		return dense_piece(r, b, p, len);
	default:
		return 0;	/* a kind this reader does not know */
	}
}

static int
bin_next(struct tape_r *r, struct tape_ev *ev)
{
	struct bin_r *b = r->priv;
	int rc;

	while (!r->failed) {
		r->sp = r->sbuf;
		if (b->pp != NULL && b->pp < b->pe)
			return piece_record(r, b, ev);
		b->pp = NULL;
		if ((rc = frame(r, b, ev)) != 0)
			return rc == 2 ? 0 : rc;
	}
	return -1;
}

/*
 * The frame at the input: its kind, payload length and, for a record (R)
 * or a piece (P), the time of its (first) record.  1, 0 at the end of the
 * file, -1.  A frame too short to hold a time gets ts UINT64_MAX (it is
 * then read, and its error found, as by bin_next).
 */
static int
peek(struct tape_r *r, char *kind, uint32_t *len, uint64_t *ts)
{
	size_t at;
	int rc;

	if ((rc = tr_fill_few(r, 5)) <= 0) {
		if (rc == 0 && r->end != r->start) {
			r->lineno++;
			return tr_cut(r, "frame", r->end - r->start);
		}
		return rc;
	}
	*len = ld32(r->buf + r->start);
	*kind = r->buf[r->start + 4];
	*ts = UINT64_MAX;
	if (*len > TAPE_LINE_MAX - 5)
		return tr_fail(r, "frame of %lu bytes (at most %d)",
		    (unsigned long)*len, TAPE_LINE_MAX - 5);
	/* A dense piece's base is its first record's time. */
	at = *kind == 'R' ? 5 : *kind == 'P' ? 5 + 12 + 8 :
	    *kind == 'D' ? 5 + 12 : 0;
	if (at == 0 || *len < at + 8 - 5)
		return 1;
	if ((rc = tr_fill_few(r, at + 8)) < 0)
		return -1;
	if (rc > 0)
		*ts = ld64(r->buf + r->start + at);
	return 1;
}

/* Whether the n bytes at the input go past the end of the file (a frame
 * cut short, which is then read to say so, not passed over). */
static int
past_end(struct tape_r *r, uint64_t n)
{
	struct stat sb;

	if (tr_tell(r) + n <= r->size)
		return 0;
	if (fstat(r->fd, &sb) == 0 && sb.st_size >= 0)
		r->size = (uint64_t)sb.st_size;	/* it may have grown */
	return tr_tell(r) + n > r->size;
}

/*
 * Skips to the first record at or after ts, reading the frames' first
 * bytes only (records are in time order: doc/formats.md 1.7).  A record
 * frame (R) before ts is passed over; a piece (P) that starts before ts is
 * passed over too but remembered, and read record by record when the next
 * frame starts at or after ts (its end may be), or is a meta line (which
 * may redefine what the piece's records are read with).  Meta lines are
 * returned as bin_next returns them.
 */
#define PIECE_OR_RECORD(k)	((k) == 'R' || (k) == 'P' || (k) == 'D')

static int
bin_skip(struct tape_r *r, uint64_t ts, struct tape_ev *ev)
{
	struct bin_r *b = r->priv;
	uint64_t prev = 0, prevline = 0, fts = 0;
	struct rec_hdr h;
	int rc, back = 0, cut;
	uint32_t len = 0;
	char kind = 0;

	while (!r->failed) {
		r->sp = r->sbuf;
		while (b->pp != NULL && b->pp < b->pe) {
			memcpy(&h, b->pp, sizeof h);
			if (h.ts >= ts || h.len < sizeof h ||
			    h.len > (size_t)(b->pe - b->pp))
				return piece_record(r, b, ev);
			b->pp += h.len;
		}
		b->pp = NULL;
		if (!r->seekable)
			return bin_next(r, ev);
		if ((rc = peek(r, &kind, &len, &fts)) < 0)
			return -1;
		/* A frame cut short at the end of the file is read (to say
		 * so), after the remembered piece: its time may be anything. */
		cut = rc > 0 && past_end(r, 5 + (uint64_t)len);
		if (back && (rc == 0 || cut || !PIECE_OR_RECORD(kind) ||
		    fts >= ts)) {
			/* Read the remembered piece after all. */
			if (tr_goto(r, prev) != 0)
				return -1;
			r->lineno = prevline;
			back = 0;
			if ((rc = frame(r, b, ev)) != 0)
				return rc == 2 ? 0 : rc;
			continue;
		}
		if (rc == 0)
			return 0;
		if (PIECE_OR_RECORD(kind) && fts < ts && !cut) {
			if (kind != 'R') {
				prev = tr_tell(r);
				prevline = r->lineno;
				back = 1;
			}
			r->lineno++;
			if (tr_goto(r, tr_tell(r) + 5 + len) != 0)
				return -1;
			continue;
		}
		if ((rc = frame(r, b, ev)) != 0)
			return rc == 2 ? 0 : rc;
	}
	return -1;
}

int
tr_bin_at(struct tape_r *r, uint64_t off)
{
	struct bin_r *b = r->priv;

	if (r->fmt != GRMTRACE_FMT_BIN || !r->seekable || r->failed ||
	    off < 8) {
		errno = EINVAL;
		return -1;
	}
	b->pp = NULL;
	return tr_goto(r, off);
}

static void
bin_free(struct tape_r *r)
{
	struct bin_r *b = r->priv;

	if (b != NULL) {
		free(b->dbuf);
		free(b->sw);
	}
	free(r->priv);
	r->priv = NULL;
}

static const struct tr_rops bin_rops = { bin_next, bin_skip, bin_free };

int
tr_bin_open(struct tape_r *r, const char **why)
{
	struct rec_field v, k;
	struct cur c;
	size_t len;
	char *line, kind;

	if (tr_fill(r, 8) <= 0 || memcmp(r->buf, TAPE_BIN_MAGIC, 8) != 0)
		return 0;
	*why = "not a grm binary trace, or an unsupported version";
	r->start = 8;
	if (getframe(r, &kind, &line, &len) != 1 || kind != 'L')
		return -1;
	c = (struct cur){ line, line + len, NULL, &bin_fields };
	if (get1(r, &c, 't', &k) != 0 ||
	    tr_schema_find(k.v.s.p, k.v.s.len) != TR_M_HEADER ||
	    get1(r, &c, 'u', &v) != 0 || v.v.u < 1 ||
	    v.v.u > TAPE_BIN_VERSION)
		return -1;
	if ((r->priv = calloc(1, sizeof(struct bin_r))) == NULL) {
		*why = "out of memory";
		return -1;
	}
	((struct bin_r *)r->priv)->version = v.v.u;
	r->ops = &bin_rops;
	r->fmt = GRMTRACE_FMT_BIN;
	return 1;
}
