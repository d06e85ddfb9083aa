/* SPDX-License-Identifier: MIT */
/* tr_sum.c: the summary sidecar of a binary trace: built record by record,
 * written beside the trace, loaded and checked (the file is hostile). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rec/rec.h"
#include "rec/dense.h"
#include "tr_sum.h"

struct rowkey {
	uint32_t	node;
	uint32_t	pid;
	uint32_t	tid;
};

static const struct hmap_type rows_type = {
	sizeof(struct rowkey), sizeof(size_t), 64, NULL
};
static const struct hmap_type states_type = {
	sizeof(int64_t), sizeof(size_t), 64, NULL
};

/* Header: magic, u32 version, u32 shift, u64 t0, u64 covers, u64 hash,
 * u32 nb, u32 nrow, u32 nstate, u32 0, u64 records, u64 tlast. */
#define SUM_HDR	72

void
sum_init(struct tr_sum *s)
{
	memset(s, 0, sizeof *s);
	s->shift = SUM_SHIFT0;
	memset(s->off, 0xff, sizeof s->off);
	hmap_init(&s->rows, &rows_type);
	hmap_init(&s->states, &states_type);
}

void
sum_free(struct tr_sum *s)
{
	size_t i;

	for (i = 0; i < s->nrow; i++)
		free(s->row[i].c);
	free(s->row);
	free(s->state);
	hmap_free(&s->rows);
	hmap_free(&s->states);
	sum_init(s);
}

/* The dominant state of a cell: time of the same state adds up; another
 * takes the cell if it alone has more.  Order-dependent, but the same for
 * every writer, which feeds the same records in the same order. */
static void
cell_add(struct sum_cell *c, uint32_t st, uint64_t ns)
{
	if (st == c->st)
		c->ns += ns;
	else if (ns > c->ns) {
		c->st = st;
		c->ns = ns;
	}
}

/* Doubles the bucket width: pairs of buckets merged. */
static void
widen(struct tr_sum *s)
{
	struct sum_cell *c, m;
	uint32_t b, nb = (s->nb + 1) / 2;
	size_t i;

	for (b = 0; b < nb; b++)
		s->off[b] = s->off[2 * b] < s->off[2 * b + 1] ?
		    s->off[2 * b] : s->off[2 * b + 1];
	for (b = nb; b < SUM_NB; b++)
		s->off[b] = SUM_NOOFF;
	/* A row's cells in place: new cell j (bucket lo / 2 + j) from its
	 * old buckets 2 (lo / 2 + j) and the next, at indexes j or more
	 * (not yet written over); an empty cell merged in changes nothing. */
	for (i = 0; i < s->nrow; i++) {
		struct sum_row *r = &s->row[i];
		uint32_t lo2 = r->lo / 2, j, k;

		c = r->c;
		for (j = 0; j < r->cap && lo2 + j < nb; j++) {
			k = 2 * (lo2 + j) - r->lo;	/* may be lo - 1 */
			memset(&m, 0, sizeof m);
			if (k < r->cap)
				m = c[k];
			if (k + 1 < r->cap) {
				m.n += c[k + 1].n;
				cell_add(&m, c[k + 1].st, c[k + 1].ns);
			}
			c[j] = m;
		}
		if (j < r->cap)
			memset(&c[j], 0, (r->cap - j) * sizeof *c);
		r->lo = lo2;
	}
	s->nb = nb;
	s->shift++;
	s->cur_w = 0;
}

/* The bucket of ts, the width doubled until it fits. */
static uint32_t
bucket(struct tr_sum *s, uint64_t ts)
{
	uint64_t b;

	if (ts < s->t0)
		return 0;
	while ((b = (ts - s->t0) >> s->shift) >= SUM_NB)
		widen(s);
	if (b >= s->nb)
		s->nb = (uint32_t)b + 1;
	return (uint32_t)b;
}

/* Row r's range grown to hold bucket b: its cell, or NULL (out of
 * memory). */
static struct sum_cell *
cell_grow(struct sum_row *r, uint32_t b)
{
	uint32_t lo = r->cap == 0 || b < r->lo ? b : r->lo;
	uint32_t hi = r->cap == 0 || b >= r->lo + r->cap ? b + 1 :
	    r->lo + r->cap;
	uint32_t cap = hi - lo;
	struct sum_cell *c;

	if (r->cap == 0 && cap < 8)
		cap = 8;
	if (cap < 2 * r->cap)
		cap = 2 * r->cap;
	if (cap > SUM_NB - lo)
		cap = SUM_NB - lo;
	if ((c = calloc(cap, sizeof *c)) == NULL)
		return NULL;
	if (r->cap > 0)
		memcpy(c + (r->lo - lo), r->c, r->cap * sizeof *c);
	free(r->c);
	r->c = c;
	r->lo = lo;
	r->cap = cap;
	return &c[b - lo];
}

/* The cell of bucket b (< SUM_NB) in row r, made if need be; NULL if
 * out of memory. */
static inline struct sum_cell *
cell_at(struct sum_row *r, uint32_t b)
{
	if (b - r->lo < r->cap)
		return &r->c[b - r->lo];
	return cell_grow(r, b);
}

/* k records more in bucket b of row r: 0, or -1 (out of memory). */
static inline int
cell_count(struct sum_row *r, uint32_t b, uint32_t k)
{
	struct sum_cell *c = cell_at(r, b);

	if (c == NULL)
		return -1;
	c->n += k;
	return 0;
}

/* Time [t0, t1) of row r's state st spread over the buckets it covers:
 * 0, or -1 (out of memory). */
static int
stretch(const struct tr_sum *s, struct sum_row *r, uint32_t st,
	uint64_t t0, uint64_t t1)
{
	uint64_t b, lo, hi, e;
	struct sum_cell *c;

	t0 = t0 < s->t0 ? s->t0 : t0;
	if (t1 <= t0)
		return 0;
	for (b = (t0 - s->t0) >> s->shift; b < s->nb; b++) {
		lo = s->t0 + (b << s->shift);
		hi = lo + (UINT64_C(1) << s->shift);
		if (lo >= t1)
			break;
		e = t1 < hi ? t1 : hi;
		if ((c = cell_at(r, (uint32_t)b)) == NULL)
			return -1;
		cell_add(c, st, e - (t0 > lo ? t0 : lo));
	}
	return 0;
}

/* k records of row r in the bucket of the last (cur_b), the latest at
 * tlast: counted at once. */
static inline int
bucket_add(struct tr_sum *s, struct sum_row *r, uint32_t k, uint64_t tlast)
{
	s->records += k;
	if (tlast > s->tlast)
		s->tlast = tlast;
	return cell_count(r, s->cur_b, k);
}

static struct sum_row *
row_get(struct tr_sum *s, uint32_t node, uint32_t pid, uint32_t tid)
{
	struct rowkey k = { node, pid, tid };
	struct sum_row *r;
	size_t *ix;
	int added;

	if (s->last > 0) {
		r = &s->row[s->last - 1];
		if (r->tid == tid && r->pid == pid && r->node == node)
			return r;
	}
	if (s->last2 > 0) {
		r = &s->row[s->last2 - 1];
		if (r->tid == tid && r->pid == pid && r->node == node) {
			s->last2 = s->last;
			s->last = (size_t)(r - s->row) + 1;
			return r;
		}
	}
	if ((ix = hmap_put(&s->rows, &k, &added)) == NULL)
		return NULL;
	if (added) {
		if (s->nrow == s->crow) {
			r = realloc(s->row, (s->crow * 2 + 8) * sizeof *r);
			if (r == NULL) {
				hmap_del(&s->rows, &k);
				return NULL;
			}
			s->row = r;
			s->crow = s->crow * 2 + 8;
		}
		r = &s->row[s->nrow];
		memset(r, 0, sizeof *r);	/* no cells yet */
		r->node = node;
		r->pid = pid;
		r->tid = tid;
		*ix = ++s->nrow;
	}
	s->last2 = s->last;
	s->last = *ix;
	return &s->row[*ix - 1];
}

static uint32_t
state_of(struct tr_sum *s, int64_t id)
{
	size_t *ix;
	int64_t *a;
	int added;

	if ((ix = hmap_put(&s->states, &id, &added)) == NULL)
		return 0;
	if (added) {
		if (s->nstate == s->cstate) {
			a = realloc(s->state, (s->cstate * 2 + 16) * sizeof *a);
			if (a == NULL) {
				hmap_del(&s->states, &id);
				return 0;
			}
			s->state = a;
			s->cstate = s->cstate * 2 + 16;
		}
		s->state[s->nstate] = id;
		*ix = ++s->nstate;
	}
	return (uint32_t)*ix;
}

/* One record of row r. */
static inline int
rec1(struct tr_sum *s, struct sum_row *r, uint64_t ts, int32_t eid,
     int64_t arg)
{
	uint32_t b;

	if (s->records++ == 0)
		s->t0 = ts;
	if (ts > s->tlast)
		s->tlast = ts;
	/* Records come in time order: mostly in the bucket of the last. */
	if (ts - s->cur_lo < s->cur_w)
		b = s->cur_b;
	else {
		b = bucket(s, ts);
		if (s->off[b] == SUM_NOOFF)
			s->off[b] = s->foff;
		s->cur_b = b;
		s->cur_lo = s->t0 + ((uint64_t)b << s->shift);
		s->cur_w = ts < s->t0 ? 0 : UINT64_C(1) << s->shift;
	}
	if (cell_count(r, b, 1) != 0)
		return -1;
	if (eid == -1) {		/* block begin */
		if (r->depth++ == 0) {
			if ((r->open = state_of(s, arg)) == 0)
				return -1;
			r->open_t0 = ts;
		}
	} else if (eid == -2 && r->depth > 0 && --r->depth == 0)
		return stretch(s, r, r->open, r->open_t0, ts);
	return 0;
}

int
sum_rec(struct tr_sum *s, uint64_t ts, uint32_t node, uint32_t pid,
	uint32_t tid, int32_t eid, int64_t arg)
{
	struct sum_row *r;

	if ((r = row_get(s, node, pid, tid)) == NULL)
		return -1;
	return rec1(s, r, ts, eid, arg);
}

void
sum_bucket(const struct tr_sum *s, uint64_t *lo, uint64_t *w)
{
	*lo = s->cur_lo;
	*w = s->records != 0 ? s->cur_w : 0;
}

int
sum_count(struct tr_sum *s, uint32_t node, uint32_t pid, uint32_t tid,
	  uint32_t k, uint64_t tlast)
{
	struct sum_row *r;

	if (k == 0)
		return 0;
	if ((r = row_get(s, node, pid, tid)) == NULL)
		return -1;
	return bucket_add(s, r, k, tlast);
}

int
sum_piece(struct tr_sum *s, uint32_t node, uint32_t pid, uint32_t tid,
	  const void *recs, size_t len)
{
	const char *p = recs;
	struct sum_row *r;
	struct rec_hdr h;
	size_t off;
	int64_t arg;

	if ((r = row_get(s, node, pid, tid)) == NULL)
		return -1;
	for (off = 0; off + sizeof h <= len; off += h.len) {
		memcpy(&h, p + off, sizeof h);
		if (h.len < sizeof h)
			break;
		/* Most records: no block, in the bucket of the last; the
		 * run of them counted in locals (what rec1 does, per record,
		 * through the pointers). */
		if (s->records != 0 && h.eid != -1 && h.eid != -2 &&
		    h.ts - s->cur_lo < s->cur_w) {
			uint64_t lo = s->cur_lo, wd = s->cur_w, tl = s->tlast;
			uint32_t k = 0;

			do {
				k++;
				tl = h.ts > tl ? h.ts : tl;
				off += h.len;
				if (off + sizeof h > len)
					break;
				memcpy(&h, p + off, sizeof h);
			} while (h.len >= sizeof h && h.eid != -1 &&
			    h.eid != -2 && h.ts - lo < wd);
			if (bucket_add(s, r, k, tl) != 0)
				return -1;
			if (off + sizeof h > len || h.len < sizeof h)
				break;
		}
		arg = 0;
		if (h.eid == -1 && h.len >= sizeof h + 8)
			memcpy(&arg, p + off + sizeof h, 8);
		if (rec1(s, r, h.ts, h.eid, arg) != 0)
			return -1;
	}
	return 0;
}

/* The time of the i-th record of length l at p. */
static inline uint64_t
ts_of(const char *p, size_t i, size_t l)
{
	uint64_t ts;

	memcpy(&ts, p + i * l + offsetof(struct rec_hdr, ts), sizeof ts);
	return ts;
}

/* sum_piece of records all of one header, in time order: those in the
 * bucket of the last found by bisecting (what sum_piece's inner loop
 * counts one by one). */
static int
sum_stretch(struct tr_sum *s, uint32_t node, uint32_t pid, uint32_t tid,
	    const char *p, size_t len)
{
	struct sum_row *r;
	struct rec_hdr h;
	uint64_t ts, lim;
	size_t i, n, lo, hi, mid;

	if (len < sizeof h)
		return 0;
	memcpy(&h, p, sizeof h);
	/* Blocks: each record is a change of state; few: walked. */
	if (h.len < sizeof h || len % h.len != 0 || len / h.len < 8 ||
	    h.eid == -1 || h.eid == -2)
		return sum_piece(s, node, pid, tid, p, len);
	if ((r = row_get(s, node, pid, tid)) == NULL)
		return -1;
	n = len / h.len;
	for (i = 0; i < n;) {
		ts = ts_of(p, i, h.len);
		if (s->records == 0 || ts - s->cur_lo >= s->cur_w) {
			if (rec1(s, r, ts, h.eid, 0) != 0)
				return -1;
			i++;
			continue;
		}
		/* ts >= cur_lo, and so are the later ones: those below lim
		 * are in the bucket. */
		lim = s->cur_lo + s->cur_w;
		for (lo = i + 1, hi = n; lo < hi;) {
			mid = lo + (hi - lo) / 2;
			if (ts_of(p, mid, h.len) < lim)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (bucket_add(s, r, (uint32_t)(lo - i),
		    ts_of(p, lo - 1, h.len)) != 0)
			return -1;
		i = lo;
	}
	return 0;
}

int
sum_piece_st(struct tr_sum *s, uint32_t node, uint32_t pid, uint32_t tid,
	     const void *recs, size_t len, const uint32_t *at, uint32_t n,
	     uint32_t base, int one)
{
	const char *p = recs;
	uint32_t lo = 0, hi = n, mid;
	size_t a = 0, b;

	if (one)
		return sum_stretch(s, node, pid, tid, p, len);
	/* The first stretch beginning after base. */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (at[mid] <= base)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; a < len; lo++, a = b) {
		b = lo < n && at[lo] - base < len ? at[lo] - base : len;
		if (sum_stretch(s, node, pid, tid, p + a, b - a) != 0)
			return -1;
	}
	return 0;
}

int
sum_dense(struct tr_sum *s, uint32_t node, uint32_t pid, uint32_t tid,
	  const void *src, size_t slen, uint64_t prev,
	  const struct rec_dense_shift *sh, const struct rec_dense_segs *sg)
{
	uint32_t si = 0, end, w2;
	uint64_t te, tl, t2;
	size_t m, q;
	const unsigned char *p = src;
	struct sum_row *r;
	struct rec_hdr h;
	uint64_t t, ts, lim = 0, shift = 0;
	uint32_t w, st;
	int32_t eid, v32;
	int64_t arg;
	size_t sp, sl, ns;

	if ((r = row_get(s, node, pid, tid)) == NULL)
		return -1;
	for (sp = 0; slen - sp >= 4; sp += sl, prev = t) {
		memcpy(&w, p + sp, 4);
		arg = 0;
		if ((w & 2) == 0) {
			ns = (w >> 2) & 15;
			sl = 8 + 4 * ns;
			memcpy(&v32, p + sp + 4, 4);
			t = prev + (uint64_t)(int64_t)v32;
			eid = (int32_t)(w >> 14) - REC_EID_BIAS;
			if (eid == -1 && ns > 0) {
				memcpy(&v32, p + sp + 8, 4);
				arg = (w & 3) == 0 ? (int64_t)v32 :
				    (int64_t)(uint32_t)v32;
			}
		} else {
			memcpy(&h, p + sp + 4, sizeof h);
			sl = 4 + (size_t)h.len;
			t = h.ts;
			eid = h.eid;
			if (eid == -1 && h.len >= sizeof h + 8)
				memcpy(&arg, p + sp + 4 + sizeof h, 8);
		}
		if (sp == 0 || t > lim) {
			st = rec_dense_step(sh, t);
			shift = sh->by[st];
			lim = st + 1 < sh->n ? sh->upto[st] : UINT64_MAX;
		}
		ts = t + shift;
		/* The rest of a stretch in one step, all in the bucket of
		 * the last: counted at once. */
		if ((w & 2) == 0 && sg != NULL && sg->n > 0 &&
		    s->records != 0 && eid != -1 && eid != -2 &&
		    ts - s->cur_lo < s->cur_w) {
			end = rec_dense_seg_end(sg, &si, sg->base + sp, &te);
			m = (end - sg->base - sp) / sl;
			tl = te + shift;
			if (m >= 2 && end - sg->base <= slen && te <= lim &&
			    tl - s->cur_lo < s->cur_w) {
				if (bucket_add(s, r, (uint32_t)m, tl) != 0)
					return -1;
				sl *= m;
				t = te;
				continue;
			}
		}
		/* Or those after it of its header in the bucket and the
		 * step, walked by their deltas alone. */
		if ((w & 2) == 0 && s->records != 0 && eid != -1 &&
		    eid != -2 && ts - s->cur_lo < s->cur_w) {
			for (m = 1, q = sp + sl; slen - q >= sl; q += sl, m++) {
				memcpy(&w2, p + q, 4);
				memcpy(&v32, p + q + 4, 4);
				t2 = t + (uint64_t)(int64_t)v32;
				if (w2 != w || t2 > lim ||
				    t2 + shift - s->cur_lo >= s->cur_w)
					break;
				t = t2;
			}
			if (bucket_add(s, r, (uint32_t)m, t + shift) != 0)
				return -1;
			sl = q - sp;
			continue;
		}
		/* Most records: no block, in the bucket of the last. */
		if (s->records != 0 && eid != -1 && eid != -2 &&
		    ts - s->cur_lo < s->cur_w) {
			if (bucket_add(s, r, 1, ts) != 0)
				return -1;
			continue;
		}
		if (rec1(s, r, ts, eid, arg) != 0)
			return -1;
	}
	return 0;
}

/* ---- the file ---- */

static unsigned char *
put32(unsigned char *d, uint32_t v)
{
	int i;

	for (i = 0; i < 4; i++)
		*d++ = (unsigned char)(v >> (8 * i));
	return d;
}

static unsigned char *
put64(unsigned char *d, uint64_t v)
{
	int i;

	for (i = 0; i < 8; i++)
		*d++ = (unsigned char)(v >> (8 * i));
	return d;
}

static uint32_t
get32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24;
}

static uint64_t
get64(const unsigned char *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

/* FNV-1a, 64 bits. */
static uint64_t
fnv(const unsigned char *p, size_t n)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);

	while (n-- > 0)
		h = (h ^ *p++) * UINT64_C(0x100000001b3);
	return h;
}

int
sum_hash(const char *trace, uint64_t covers, uint64_t *h)
{
	unsigned char b[SUM_HASHED];
	size_t want = covers < SUM_HASHED ? (size_t)covers : SUM_HASHED;
	ssize_t k;
	int fd, e;

	if ((fd = open(trace, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	k = pread(fd, b, want, 0);
	e = errno;
	close(fd);
	if (k < 0 || (size_t)k != want) {
		errno = k < 0 ? e : EINVAL;
		return -1;
	}
	*h = fnv(b, want);
	return 0;
}

/* The file's bytes: nrow rows, nstate states, nb offsets, then the
 * cells, row after row. */
static size_t
file_size(uint32_t nb, size_t nrow, size_t nstate)
{
	return SUM_HDR + (size_t)nb * 8 + nrow * 16 + nstate * 8 +
	    nrow * (size_t)nb * sizeof(struct sum_cell);
}

/* A block still open at the end counts in cell c of bucket b to the last
 * record (in what is written, not in s: more records may close it). */
static void
open_add(const struct tr_sum *s, const struct sum_row *r, uint32_t b,
	 struct sum_cell *c)
{
	uint64_t lo = s->t0 + ((uint64_t)b << s->shift);
	uint64_t hi = lo + (UINT64_C(1) << s->shift);
	uint64_t a = r->open_t0 > lo ? r->open_t0 : lo;
	uint64_t z = s->tlast < hi ? s->tlast : hi;

	if (z > a)
		cell_add(c, r->open, z - a);
}

static int
write_all(int fd, const unsigned char *p, size_t n)
{
	ssize_t k;

	while (n > 0) {
		if ((k = write(fd, p, n)) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

struct sum_cell
sum_cell_of(const struct tr_sum *s, size_t row, uint32_t b)
{
	const struct sum_row *r = &s->row[row];
	struct sum_cell c;

	memset(&c, 0, sizeof c);
	if (b - r->lo < r->cap)
		c = r->c[b - r->lo];
	return c;
}

unsigned char *
sum_image(const struct tr_sum *s, uint64_t covers, size_t *lenp)
{
	size_t len = file_size(s->nb, s->nrow, s->nstate), i;
	unsigned char *buf, *d;
	struct sum_cell c;
	uint32_t b;

	if ((buf = malloc(len)) == NULL)
		return NULL;
	memcpy(buf, SUM_MAGIC, 8);
	d = put32(buf + 8, SUM_VERSION);
	d = put32(d, s->shift);
	d = put64(d, s->t0);
	d = put64(d, covers);
	d = put64(d, 0);		/* the hash: sum_image_put's */
	d = put32(d, s->nb);
	d = put32(d, (uint32_t)s->nrow);
	d = put32(d, (uint32_t)s->nstate);
	d = put32(d, 0);
	d = put64(d, s->records);
	d = put64(d, s->tlast);
	for (b = 0; b < s->nb; b++)
		d = put64(d, s->off[b]);
	for (i = 0; i < s->nrow; i++) {
		d = put32(d, s->row[i].node);
		d = put32(d, s->row[i].pid);
		d = put32(d, s->row[i].tid);
		d = put32(d, 0);
	}
	for (i = 0; i < s->nstate; i++)
		d = put64(d, (uint64_t)s->state[i]);
	for (i = 0; i < s->nrow; i++)
		for (b = 0; b < s->nb; b++) {
			c = sum_cell_of(s, i, b);
			if (s->row[i].depth > 0)	/* open: to the last */
				open_add(s, &s->row[i], b, &c);
			d = put32(d, c.n);
			d = put32(d, c.st);
			d = put64(d, c.ns);
		}
	*lenp = len;
	return buf;
}

int
sum_image_put(unsigned char *img, size_t len, const char *trace)
{
	size_t plen = strlen(trace);
	char *tmp = NULL, *path = NULL;
	uint64_t h;
	int fd = -1, e;

	if (sum_hash(trace, get64(img + 24), &h) != 0)
		return -1;
	put64(img + 32, h);
	if ((path = malloc(plen + 5)) == NULL ||
	    (tmp = malloc(plen + 9)) == NULL)
		goto fail;
	snprintf(path, plen + 5, "%s.idx", trace);
	snprintf(tmp, plen + 9, "%s.idx.new", trace);
	/* A new file, never through a link someone left at its name (the
	 * rename replaces a link at path, not what it points to). */
	(void)unlink(tmp);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0644)) < 0 || write_all(fd, img, len) != 0)
		goto fail;
	e = close(fd);
	fd = -1;
	if (e != 0 || rename(tmp, path) != 0)
		goto fail;
	free(path);
	free(tmp);
	return 0;
fail:
	e = errno;
	if (fd >= 0)
		close(fd);
	if (tmp != NULL)
		unlink(tmp);
	free(path);
	free(tmp);
	errno = e;
	return -1;
}

int
sum_write(const struct tr_sum *s, const char *trace, uint64_t covers)
{
	size_t len;
	unsigned char *img = sum_image(s, covers, &len);
	int r;

	if (img == NULL)
		return -1;
	r = sum_image_put(img, len, trace);
	free(img);
	return r;
}

/* ---- loading ---- */

#define BAD(...)	do {						\
	snprintf(err, errlen, __VA_ARGS__);				\
	goto bad;							\
} while (0)

int
sum_parse(struct tr_sum *s, const unsigned char *p, size_t n, char *err,
	  size_t errlen)
{
	const unsigned char *q;
	uint32_t nb, nrow, nstate, b, v;
	size_t i;

	sum_free(s);
	if (n < SUM_HDR || memcmp(p, SUM_MAGIC, 8) != 0)
		BAD("not a grm trace sidecar");
	if ((v = get32(p + 8)) != SUM_VERSION)
		BAD("sidecar version %u (this reader knows %d)", v,
		    SUM_VERSION);
	s->shift = get32(p + 12);
	s->t0 = get64(p + 16);
	s->covers = get64(p + 24);
	s->hash = get64(p + 32);
	nb = get32(p + 40);
	nrow = get32(p + 44);
	nstate = get32(p + 48);
	s->records = get64(p + 56);
	s->tlast = get64(p + 64);
	if (s->shift < SUM_SHIFT0 || s->shift > 63 || nb > SUM_NB ||
	    get32(p + 52) != 0 || (nb == 0) != (s->records == 0) ||
	    s->tlast < s->t0 || nrow > (1u << 20) || nstate > (1u << 24))
		BAD("malformed sidecar header");
	if (n != file_size(nb, nrow, nstate))
		BAD("sidecar of %zu bytes, its header says %zu", n,
		    file_size(nb, nrow, nstate));
	q = p + SUM_HDR;
	s->nb = nb;
	for (b = 0; b < nb; b++, q += 8)
		s->off[b] = get64(q);
	if (nrow > 0 && (s->row = calloc(nrow, sizeof *s->row)) == NULL)
		BAD("out of memory");
	s->crow = nrow;
	for (i = 0; i < nrow; i++, q += 16) {
		s->row[i].node = get32(q);
		s->row[i].pid = get32(q + 4);
		s->row[i].tid = get32(q + 8);
		s->nrow++;
		/* nb cells, not SUM_NB: what is loaded is not fed, and its
		 * memory stays that of the file. */
		if ((s->row[i].c = calloc(nb + 1, sizeof(struct sum_cell))) ==
		    NULL)
			BAD("out of memory");
		s->row[i].cap = nb + 1;
	}
	if (nstate > 0 && (s->state = calloc(nstate, sizeof *s->state)) ==
	    NULL)
		BAD("out of memory");
	s->nstate = s->cstate = nstate;
	for (i = 0; i < nstate; i++, q += 8)
		s->state[i] = (int64_t)get64(q);
	for (i = 0; i < nrow; i++)
		for (b = 0; b < nb; b++, q += 16) {
			s->row[i].c[b].n = get32(q);
			s->row[i].c[b].st = get32(q + 4);
			s->row[i].c[b].ns = get64(q + 8);
			if (s->row[i].c[b].st > nstate)
				BAD("sidecar cell names state %u of %u",
				    s->row[i].c[b].st, nstate);
		}
	return 0;
bad:
	sum_free(s);
	return -1;
}

int
sum_load(struct tr_sum *s, const char *trace, char *err, size_t errlen)
{
	unsigned char *p = NULL;
	struct stat sb, tb;
	char *path, why[256];
	size_t plen = strlen(trace);
	uint64_t h;
	ssize_t k;
	int fd = -1;

	sum_init(s);
	if ((path = malloc(plen + 5)) == NULL)
		BAD("out of memory");
	snprintf(path, plen + 5, "%s.idx", trace);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		free(path);
		errno = errno == ENOENT ? ENOENT : errno;
		return -1;
	}
	if (fstat(fd, &sb) != 0 || sb.st_size > (off_t)1 << 32)
		BAD("%s: unreadable or too large", path);
	if ((p = malloc((size_t)sb.st_size + 1)) == NULL)
		BAD("out of memory");
	if ((k = pread(fd, p, (size_t)sb.st_size, 0)) != sb.st_size)
		BAD("%s: cannot read it", path);
	if (sum_parse(s, p, (size_t)k, why, sizeof why) != 0)
		BAD("%s: %s", path, why);
	if (stat(trace, &tb) != 0 || (uint64_t)tb.st_size < s->covers ||
	    sum_hash(trace, s->covers, &h) != 0 || h != s->hash)
		BAD("%s: stale (not of this trace, or of a longer one)", path);
	free(p);
	free(path);
	close(fd);
	errno = 0;
	return 0;
bad:
	sum_free(s);
	free(p);
	free(path);
	if (fd >= 0)
		close(fd);
	errno = EINVAL;
	return -1;
}
