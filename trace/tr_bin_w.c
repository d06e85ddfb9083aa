/* SPDX-License-Identifier: MIT */
/* tr_bin_w.c: writing the binary trace format (doc/formats.md section 3):
 * the magic, then frames: meta lines (L), records (R) and dense pieces of
 * in-memory records (D). */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "tr_int.h"
#include "rec/dense.h"

static char *
b_u64(char *d, const char *lim, uint64_t v)
{
	int i;

	if (d == NULL || lim - d < 8)
		return NULL;
	for (i = 0; i < 8; i++)
		*d++ = (char)(v >> (8 * i));
	return d;
}

static char *
b_u32(char *d, const char *lim, uint32_t v)
{
	int i;

	if (d == NULL || lim - d < 4)
		return NULL;
	for (i = 0; i < 4; i++)
		*d++ = (char)(v >> (8 * i));
	return d;
}

/* A token: u16 length and bytes; a string: u32 length and bytes. */
static char *
b_str(char *d, const char *lim, const char *s, size_t len, int wide)
{
	size_t hl = wide ? 4 : 2;

	if (d == NULL || (size_t)(lim - d) < hl + len ||
	    (!wide && len > UINT16_MAX))
		return NULL;
	*d++ = (char)len;
	*d++ = (char)(len >> 8);
	if (wide) {
		*d++ = (char)(len >> 16);
		*d++ = (char)(len >> 24);
	}
	memcpy(d, s, len);
	return d + len;
}

/* A token as the text writer writes it: "-" if empty, anything but
 * printable non-blank ASCII turned into '_'. */
static char *
b_tok(char *d, const char *lim, const char *s, size_t n)
{
	char *start;
	size_t i;

	if (n == 0) {
		s = "-";
		n = 1;
	}
	if ((d = b_str(d, lim, s, n, 0)) == NULL)
		return NULL;
	start = d - n;
	for (i = 0; i < n; i++)
		if (!((unsigned char)start[i] > 0x20 &&
		    (unsigned char)start[i] < 0x7f))
			start[i] = '_';
	return d;
}

static char *
b_field(char *d, const char *lim, const struct rec_field *f)
{
	uint64_t u;

	switch (f->kind) {
	case REC_K_STR:
		return b_str(d, lim, f->v.s.p, f->v.s.len, 1);
	case REC_K_DOUBLE:
		memcpy(&u, &f->v.d, 8);
		return b_u64(d, lim, u);
	case REC_K_UINT:
		return b_u64(d, lim, f->v.u);
	default:
		return b_u64(d, lim, (uint64_t)f->v.i);
	}
}

/* Opens a frame of kind k: its length is filled in by fend. */
static char *
fbegin(struct tape_w *w, const char **lim, char kind)
{
	char *d = tw_begin(w, lim);

	w->dfr_open = 0;	/* no longer the last */
	if (d == NULL)
		return NULL;
	d[4] = kind;
	return d + 5;
}

static int
fend(struct tape_w *w, char *d)
{
	char *f = w->buf + w->len;

	if (d != NULL)
		b_u32(f, f + 4, (uint32_t)(d - f - 5));
	return tw_commit(w, d);
}

static int
bin_open(struct tape_w *w)
{
	memcpy(w->buf, TAPE_BIN_MAGIC, 8);
	w->len = 8;
	return 0;
}

static int
bin_meta(struct tape_w *w, int m, const struct rec_field *v, unsigned n)
{
	const char *lim, *k = tr_schema[m].kinds, *word = tr_schema[m].word;
	unsigned i;
	char *d;

	if ((d = fbegin(w, &lim, 'L')) == NULL)
		return fend(w, NULL);
	d = b_str(d, lim, tr_schema[m].key, strlen(tr_schema[m].key), 0);
	for (i = 0; i < n; i++) {
		if (k[i] == '=')
			d = b_tok(d, lim, word, strlen(word));
		else if (k[i] == 't')
			d = b_tok(d, lim, v[i].v.s.p, v[i].v.s.len);
		else
			d = b_field(d, lim, &v[i]);
	}
	return fend(w, d);
}

static int
bin_record(struct tape_w *w, uint64_t ts, uint32_t node, uint32_t pid,
	   uint32_t tid, int32_t eid, const struct rec_field *f, unsigned n)
{
	uint64_t foff = w->out + w->len;
	const char *lim;
	unsigned i;
	char *d;

	if ((d = fbegin(w, &lim, 'R')) == NULL)
		return fend(w, NULL);
	d = b_u64(d, lim, ts);
	d = b_u64(d, lim, node);
	d = b_u64(d, lim, pid);
	d = b_u64(d, lim, tid);
	d = b_u64(d, lim, (uint64_t)(int64_t)eid);
	for (i = 0; i < n; i++)
		d = b_field(d, lim, &f[i]);
	if (fend(w, d) != 0)
		return -1;
	if (w->sum != NULL)
		tw_sum(w, foff, ts, node, pid, tid, eid, eid == -1 && n > 0 &&
		    f[0].kind != REC_K_STR ? f[0].v.i : 0);
	return 0;
}

/* Opens a D frame of thread (node, pid, tid): where its run goes, or
 * NULL (then fend(w, NULL)). */
static char *
dbegin(struct tape_w *w, const char **lim, uint32_t node, uint32_t pid,
       uint32_t tid)
{
	char *d;

	if ((d = fbegin(w, lim, 'D')) == NULL)
		return NULL;
	d = b_u32(d, *lim, node);
	d = b_u32(d, *lim, pid);
	return b_u32(d, *lim, tid);
}

/* Ends the D frame whose run, of n bytes (-1: failed), begins at d and
 * holds nrec records, used bytes of them (none: EMSGSIZE).  0 or -1. */
static int
dend(struct tape_w *w, char *d, ssize_t n, size_t used, size_t nrec)
{
	if (n < 0)
		return -1;
	if (used == 0) {
		errno = EMSGSIZE;
		return -1;
	}
	if (fend(w, d + n) != 0)
		return -1;
	w->records += nrec;
	return 0;
}

/*
 * Records join the last D frame if it still ends the buffer and has room
 * for a record and a switch (doc/formats.md 3): threads or processes
 * whose records interleave in time fill one frame, not a frame (25
 * bytes of header and base) every few records.  Returns where they go
 * in the frame (after a switch, if of another thread); NULL if they
 * cannot join it.
 */
static char *
djoin(struct tape_w *w, uint32_t node, uint32_t pid, uint32_t tid,
      const char **lim)
{
	char *d = w->buf + w->len;

	if (!w->dfr_open)
		return NULL;
	*lim = w->buf + w->dfr + TAPE_LINE_MAX;
	if (*lim - d < REC_DENSE_SW_MAX + 4 + REC_MAX)
		return NULL;
	return d + rec_dense_sw_put(d, w->dfr_node, w->dfr_pid, w->dfr_tid,
	    node, pid, tid);
}

/* Notes the D frame at buf[fst] as open, its last record of thread tid
 * at time last. */
static void
dopen(struct tape_w *w, size_t fst, uint32_t node, uint32_t pid,
      uint32_t tid, uint64_t last)
{
	w->dfr_open = 1;
	w->dfr = fst;
	w->dfr_node = node;
	w->dfr_pid = pid;
	w->dfr_tid = tid;
	w->dfr_last = last;
}

/* The records joined to the open frame end at d: its length, the
 * buffer's. */
static void
djoined(struct tape_w *w, char *d, size_t nrec)
{
	char *f = w->buf + w->dfr;

	b_u32(f, f + 4, (uint32_t)(d - f - 5));
	w->len = (size_t)(d - w->buf);
	w->records += nrec;
}

char *
tr_bin_dense_at(struct tape_w *w, uint32_t node, uint32_t pid, uint32_t tid,
		char **lim, uint64_t *prev, uint64_t *foff)
{
	const char *l;
	char *d;

	if ((d = djoin(w, node, pid, tid, &l)) == NULL)
		return NULL;
	*lim = (char *)(uintptr_t)l;
	*prev = w->dfr_last;
	*foff = w->out + w->dfr;
	return d;
}

void
tr_bin_dense_put(struct tape_w *w, char *end, size_t nrec, uint32_t node,
		 uint32_t pid, uint32_t tid, uint64_t last)
{
	if (nrec == 0)
		return;
	djoined(w, end, nrec);
	dopen(w, w->dfr, node, pid, tid, last);
}

/* The time of the last of the whole records at p[0..len). */
static uint64_t
last_ts(const char *p, size_t len)
{
	struct rec_hdr h;
	size_t off = 0;

	h.ts = 0;
	while (len - off >= sizeof h) {
		memcpy(&h, p + off, sizeof h);
		if (h.len < sizeof h || h.len > len - off)
			break;
		off += h.len;
	}
	return h.ts;
}

/* The next D frame's run of bin_piece, at d (room up to lim): from the
 * records at p (len bytes, off into what st describes), copied from *s
 * at *sp (NULL: not known) where it can.  Its length or -1; what it
 * holds in *used, *nrec; *s NULL if the source is lost, else *sp moved
 * past what it took. */
static ssize_t
bin_piece_frame(const char *p, size_t len, const char **sv, size_t slen,
		size_t *spv, int same, const struct tape_stretch *st,
		size_t off, char *d, const char *lim, size_t *used,
		size_t *nrec)
{
	const char *s = *sv;
	size_t sp = *spv, su, room = (size_t)(lim - d);
	ssize_t n;

	if (s != NULL && (same & TAPE_SRC_ALIKE) && !(same & TAPE_SRC_ONE) &&
	    st != NULL && st->at != NULL)
		n = rec_dense_copy_part_st(p, len, s + sp, slen - sp, st->at,
		    st->n, st->base + (uint32_t)off, d, room, used, &su, nrec);
	else if (s != NULL && (same & TAPE_SRC_ALIKE))
		n = rec_dense_copy_part(p, len, s + sp, slen - sp,
		    same & TAPE_SRC_ONE, d, room, used, &su, nrec);
	else if (s != NULL)
		n = rec_dense_recode_part(p, len, s + sp, slen - sp, d, room,
		    used, &su, nrec);
	else
		return rec_dense_encode_part(p, len, d, room, used, nrec);
	if (n >= 0 && su == SIZE_MAX)
		*sv = NULL;
	else if (n >= 0)
		*spv = sp + su;
	return n;
}

/* Records go in dense pieces (D frames, doc/formats.md section 3): the
 * run of section 2.6 after the thread, as many records a frame as fit;
 * with src, copied from it where it can (tape_piece_from; same holds
 * from one frame to the next: a frame's first record is encoded), with
 * st whole stretches at once. */
static int
bin_piece(struct tape_w *w, uint32_t node, uint32_t pid, uint32_t tid,
	  const void *recs, size_t len, const void *src, size_t slen, int same,
	  const struct tape_stretch *st, size_t *sused)
{
	const char *p = recs, *s = src, *lim;
	size_t off = 0, used, nrec, sp = 0, fst;
	uint64_t t;
	ssize_t n, sk;
	char *d;

	while (off < len) {
		if ((d = djoin(w, node, pid, tid, &lim)) != NULL) {
			/* Encoded after the open frame's last record (the
			 * slower way: these records were decoded). */
			t = w->dfr_last;
			n = rec_dense_encode_cont(p + off, len - off, &t, d,
			    (size_t)(lim - d), &used, &nrec);
			if (n < 0)
				return -1;
			if (used == 0) {
				w->dfr_open = 0;
				continue;
			}
			if (s != NULL) {
				sk = rec_dense_skip(s + sp, slen - sp, used);
				if (sk < 0)
					s = NULL;
				else
					sp += (size_t)sk;
			}
			djoined(w, d + n, nrec);
			fst = w->dfr;
		} else {
			if ((d = dbegin(w, &lim, node, pid, tid)) == NULL)
				return fend(w, NULL);
			fst = (size_t)(d - 17 - w->buf);
			n = bin_piece_frame(p + off, len - off, &s, slen, &sp,
			    same, st, off, d, lim, &used, &nrec);
			if (dend(w, d, n, used, nrec) != 0)
				return -1;
			t = last_ts(p + off, used);
		}
		dopen(w, fst, node, pid, tid, t);
		if (w->sum != NULL)
			tw_sum_piece(w, w->out + fst, node, pid, tid, p + off,
			    used, st, off);
		off += used;
	}
	if (sused != NULL)
		*sused = s != NULL ? sp : SIZE_MAX;
	return 0;
}

int
tr_bin_piece_dense(struct tape_w *w, uint32_t node, uint32_t pid,
		   uint32_t tid, const void *src, size_t slen, uint64_t prev,
		   const struct rec_dense_shift *sh,
		   const struct rec_dense_segs *sg, size_t len, size_t *sused,
		   uint64_t *last)
{
	struct rec_dense_segs g = { NULL, 0, 0, 0, 0 };
	const char *s = src, *lim;
	size_t off = 0, sp = 0, used, su, nrec, fst;
	uint64_t t = prev;
	ssize_t n;
	char *d;

	while (off < len) {
		if (sg != NULL) {
			g = *sg;
			g.base = sg->base + (uint32_t)sp;
		}
		if ((d = djoin(w, node, pid, tid, &lim)) != NULL) {
			fst = w->dfr;
			n = rec_dense_frame_cont(s + sp, slen - sp, t, sh, &g,
			    len - off, &w->dfr_last, d, (size_t)(lim - d),
			    &used, &su, &nrec, last);
			if (n < 0)
				return -1;
			if (used == 0) {	/* cannot be: a new frame */
				w->dfr_open = 0;
				continue;
			}
			djoined(w, d + n, nrec);
		} else {
			if ((d = dbegin(w, &lim, node, pid, tid)) == NULL)
				return fend(w, NULL);
			fst = (size_t)(d - 17 - w->buf);
			n = rec_dense_frame_st(s + sp, slen - sp, t, sh, &g,
			    len - off, d, (size_t)(lim - d), &used, &su, &nrec,
			    last);
			if (dend(w, d, n, used, nrec) != 0)
				return -1;
		}
		dopen(w, fst, node, pid, tid,
		    *last + sh->by[rec_dense_step(sh, *last)]);
		if (w->sum != NULL)
			tw_sum_dense(w, w->out + fst, node, pid, tid, s + sp,
			    su, t, sh, &g);
		t = *last;
		off += used;
		sp += su;
	}
	*sused = sp;
	*last = t;
	return 0;
}

/* Whole frames (and the magic, at the file's start) in w->buf[0..n). */
static size_t
bin_whole(const struct tape_w *w, size_t n)
{
	const unsigned char *b = (const unsigned char *)w->buf;
	size_t pos = w->out == 0 ? 8 : 0, flen;

	if (pos > n)
		return 0;
	while (n - pos >= 5) {
		flen = 5 + ((size_t)b[pos] | (size_t)b[pos + 1] << 8 |
		    (size_t)b[pos + 2] << 16 | (size_t)b[pos + 3] << 24);
		if (flen > n - pos)
			break;
		pos += flen;
	}
	return pos;
}

const struct tr_wops tr_bin_wops = {
	.open = bin_open,
	.meta = bin_meta,
	.record = bin_record,
	.piece = bin_piece,
	.whole = bin_whole,
};
