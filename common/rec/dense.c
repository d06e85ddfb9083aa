/* SPDX-License-Identifier: MIT */
/* dense.c: encoding runs of records densely and back (dense.h). */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "rec.h"
#include "dense.h"

enum { FORM_SIGNED = 0, FORM_UNSIGNED = 1, FORM_LONG = 2 };

#define EID_SHIFT	14
#define EID_LIMIT	(1u << 18)

static inline uint32_t
ld32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static inline void
st32(unsigned char *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

size_t
rec_dense_begin(struct rec_dense_enc *e, void *out, uint64_t base)
{
	e->prev = base;
	memcpy(out, &base, 8);
	return REC_DENSE_BASE;
}

/* The n 8-byte slots at r as 32-bit ones at o; in *form, the short form
 * they fit (FORM_SIGNED first), or FORM_LONG. */
static inline void
put_slots(const unsigned char *r, size_t n, unsigned char *o, uint32_t *form)
{
	uint32_t sok = 1, zok = 1;
	uint64_t v;
	size_t i;

	for (i = 0; i < n; i++) {
		memcpy(&v, r + 8 * i, 8);
		sok &= (int64_t)v == (int32_t)(uint32_t)v;
		zok &= (v >> 32) == 0;
		st32(o + 4 * i, (uint32_t)v);
	}
	*form = sok ? FORM_SIGNED : zok ? FORM_UNSIGNED : FORM_LONG;
}

/* rec_dense_put's work, inlined in the loops below. */
static inline size_t
put_one(struct rec_dense_enc *e, const unsigned char *r, size_t len,
	unsigned char *o)
{
	struct rec_hdr h;
	uint32_t ebias, form;
	int64_t d;
	size_t n;

	memcpy(&h, r, sizeof h);
	n = (len - sizeof h) / 8;
	d = (int64_t)(h.ts - e->prev);
	ebias = (uint32_t)h.eid + REC_EID_BIAS;
	if (n <= 15 && (h.cls | h.attr) < 16 && ebias < EID_LIMIT &&
	    d >= INT32_MIN && d <= INT32_MAX) {
		put_slots(r + 16, n, o + 8, &form);
		if (form != FORM_LONG) {
			st32(o, form | (uint32_t)n << 2 | (uint32_t)h.cls << 6 |
			    (uint32_t)h.attr << 10 | ebias << EID_SHIFT);
			st32(o + 4, (uint32_t)(int32_t)d);
			e->prev = h.ts;
			return 8 + 4 * n;
		}
	}
	st32(o, FORM_LONG);
	memcpy(o + 4, r, len);
	e->prev = h.ts;
	return 4 + len;
}

ssize_t
rec_dense_encode_valid(const void *recs, size_t len, void *out, size_t cap,
		       size_t *used, int *meta)
{
	const unsigned char *p = recs;
	unsigned char *o = out;
	struct rec_dense_enc e = { 0 };
	size_t off = 0, pos = 0, n, sl = 0, ns = 0;
	uint64_t ts, hw, same = 0;
	uint32_t word = 0, form;
	uint16_t l;
	int64_t d;
	int m = 0;

	*used = 0;
	*meta = 0;
	if (cap < REC_DENSE_MAX(len)) {
		errno = EMSGSIZE;
		return -1;
	}
	/* rec_valid_prefix_meta's walk and rec_dense_encode's in one.  A
	 * record whose first 8 bytes (length, class, attribute, eid) are
	 * those of the one before, which went short, is checked and
	 * encoded from that one's word: only its delta and slots looked
	 * at. */
	while (len - off >= sizeof(struct rec_hdr)) {
		memcpy(&hw, p + off, 8);
		if (hw == same && same != 0 && sl <= len - off) {
			memcpy(&ts, p + off + 8, 8);
			d = (int64_t)(ts - e.prev);
			if (d >= INT32_MIN && d <= INT32_MAX) {
				put_slots(p + off + 16, ns, o + pos + 8, &form);
				if (form != FORM_LONG) {
					st32(o + pos, form | word);
					st32(o + pos + 4, (uint32_t)(int32_t)d);
					e.prev = ts;
					pos += 8 + 4 * ns;
					off += sl;
					continue;
				}
			}
		}
		memcpy(&l, p + off, sizeof l);
		if (l < sizeof(struct rec_hdr) || l % REC_ALIGN != 0 ||
		    l > REC_MAX || l > len - off)
			break;
		m |= p[off + offsetof(struct rec_hdr, cls)] == REC_CLASS_META;
		if (off == 0) {
			memcpy(&ts, p + offsetof(struct rec_hdr, ts), 8);
			pos = rec_dense_begin(&e, o, ts);
		}
		n = put_one(&e, p + off, l, o + pos);
		/* Short: the next record may be of the same kind. */
		same = 0;
		if ((o[pos] & 3) != FORM_LONG) {
			same = hw;
			sl = l;
			ns = (l - sizeof(struct rec_hdr)) / 8;
			word = ld32(o + pos) & ~3u;
		}
		pos += n;
		off += l;
	}
	*used = off;
	*meta = m;
	return (ssize_t)pos;
}

size_t
rec_dense_put(struct rec_dense_enc *e, const void *rec, size_t len,
	      void *out)
{
	return put_one(e, rec, len, out);
}

/*
 * Whether the short record of ns slots at s (within its run) is what
 * put_one writes for the record of header h after a record of time prev,
 * given that its slots decode to the record's: the same word (its form
 * the one put_one chooses) and the same delta.
 */
static inline int
same_short(const struct rec_hdr *h, uint64_t prev, const unsigned char *s,
	   size_t ns)
{
	uint32_t w = ld32(s), ebias = (uint32_t)h->eid + REC_EID_BIAS, acc = 0;
	int64_t d = (int64_t)(h->ts - prev);
	size_t i;

	if ((h->cls | h->attr) >= 16 || ebias >= EID_LIMIT ||
	    (w & ~3u) != ((uint32_t)ns << 2 | (uint32_t)h->cls << 6 |
	    (uint32_t)h->attr << 10 | ebias << EID_SHIFT) ||
	    d != (int32_t)ld32(s + 4))
		return 0;
	if ((w & 3) == FORM_SIGNED)
		return 1;
	/* Unsigned: put_one takes it only if a slot is not sign-extended. */
	for (i = 0; i < ns; i++)
		acc |= ld32(s + 8 + 4 * i);
	return acc >> 31;
}

/* The bytes of the record at s[0..n) and, in *rl, its decoded length;
 * 0 if there is no whole record there. */
static inline size_t
src_rec(const unsigned char *s, size_t n, size_t *rl)
{
	uint32_t w;
	uint16_t l;
	size_t ns;

	if (n < 4)
		return 0;
	w = ld32(s);
	if ((w & 2) == 0) {
		ns = (w >> 2) & 15;
		*rl = 16 + 8 * ns;
		return n >= 8 + 4 * ns ? 8 + 4 * ns : 0;
	}
	if (w != FORM_LONG || n < 4 + sizeof(struct rec_hdr))
		return 0;
	memcpy(&l, s + 4, 2);
	*rl = l;
	return n - 4 >= l ? 4 + (size_t)l : 0;
}

/*
 * rec_dense_encode_part's and rec_dense_recode_part's work: with src,
 * each short record of src still right (same_short) is copied (in
 * stretches), the others encoded.
 */
static inline ssize_t
encode_from(const unsigned char *p, size_t len, const unsigned char *src,
	    size_t slen, unsigned char *o, size_t cap, size_t *used,
	    size_t *sused, size_t *nrec, uint64_t *cont)
{
	struct rec_dense_enc e;
	struct rec_hdr h;
	uint64_t ts = 0;
	size_t off = 0, pos, k = 0, sp = 0, sl, rl, cs = 0, cn = 0;
	uint16_t l;

	*used = 0;
	if (nrec != NULL)
		*nrec = 0;
	if (cont != NULL) {
		e.prev = *cont;
		pos = 0;
	} else {
		if (cap < REC_DENSE_BASE) {
			errno = EMSGSIZE;
			return -1;
		}
		if (len >= sizeof(struct rec_hdr))
			memcpy(&ts, p + offsetof(struct rec_hdr, ts), 8);
		pos = rec_dense_begin(&e, o, ts);
	}
	while (off < len) {
		if (len - off < sizeof(struct rec_hdr))
			goto bad;
		memcpy(&l, p + off, 2);
		if (l < sizeof(struct rec_hdr) || l % REC_ALIGN != 0 ||
		    l > REC_MAX || l > len - off)
			goto bad;
		if (cap - pos < (size_t)l + 4)
			break;
		if (src != NULL) {
			sl = src_rec(src + sp, slen - sp, &rl);
			if (sl == 0 || rl != l) {
				/* src does not follow the records. */
				memcpy(o + pos - cn, src + cs, cn);
				cn = 0;
				src = NULL;
				sp = SIZE_MAX;
			} else {
				memcpy(&h, p + off, sizeof h);
				if ((ld32(src + sp) & 2) == 0 &&
				    same_short(&h, e.prev, src + sp,
				    (sl - 8) / 4)) {
					if (cn == 0)
						cs = sp;
					cn += sl;
					e.prev = h.ts;
					pos += sl;
					sp += sl;
					off += l;
					k++;
					continue;
				}
				sp += sl;
			}
		}
		if (cn != 0) {
			memcpy(o + pos - cn, src + cs, cn);
			cn = 0;
		}
		pos += put_one(&e, p + off, l, o + pos);
		off += l;
		k++;
	}
	if (cn != 0)
		memcpy(o + pos - cn, src + cs, cn);
	*used = off;
	if (sused != NULL)
		*sused = sp;
	if (nrec != NULL)
		*nrec = k;
	if (cont != NULL)
		*cont = e.prev;
	return (ssize_t)pos;
bad:
	errno = EINVAL;
	return -1;
}

ssize_t
rec_dense_encode_part(const void *recs, size_t len, void *out, size_t cap,
		      size_t *used, size_t *nrec)
{
	return encode_from(recs, len, NULL, 0, out, cap, used, NULL, nrec,
	    NULL);
}

ssize_t
rec_dense_encode_cont(const void *recs, size_t len, uint64_t *prev,
		      void *out, size_t cap, size_t *used, size_t *nrec)
{
	return encode_from(recs, len, NULL, 0, out, cap, used, NULL, nrec,
	    prev);
}

ssize_t
rec_dense_recode_part(const void *recs, size_t len, const void *src,
		      size_t slen, void *out, size_t cap, size_t *used,
		      size_t *sused, size_t *nrec)
{
	return encode_from(recs, len, src, slen, out, cap, used, sused, nrec,
	    NULL);
}

/* rec_dense_copy_part's work; with at, rec_dense_copy_part_st's. */
static inline ssize_t
copy_from(const void *recs, size_t len, const void *src, size_t slen,
	  int one, const uint32_t *at, uint32_t nat, uint32_t base, void *out,
	  size_t cap, size_t *used, size_t *sused, size_t *nrec)
{
	const unsigned char *p = recs, *s = src;
	unsigned char *o = out;
	struct rec_dense_enc e;
	size_t off, pos, k = 1, sp, sl, rl, ns, cs, cpos, last = 0, end, m;
	uint64_t ts;
	uint32_t w, si = 0, lo, hi, mid;
	uint16_t l;
	ssize_t n;

	if (len == 0 || cap < REC_DENSE_BASE)
		return encode_from(p, len, NULL, 0, o, cap, used, sused, nrec,
		    NULL);
	memcpy(&l, p, 2);
	sl = src_rec(s, slen, &rl);
	if (len < sizeof(struct rec_hdr) || sl == 0 || rl != l ||
	    l < sizeof(struct rec_hdr) || l % REC_ALIGN != 0 || l > REC_MAX ||
	    l > len)
		goto other;
	memcpy(&ts, p + offsetof(struct rec_hdr, ts), 8);
	pos = rec_dense_begin(&e, o, ts);
	if (cap - pos < (size_t)l + 4) {
		*used = *sused = 0;
		if (nrec != NULL)
			*nrec = 0;
		return (ssize_t)pos;
	}
	/* The first record: its delta is now from the base. */
	pos += put_one(&e, p, l, o + pos);
	off = l;
	sp = sl;
	cs = sp;
	cpos = pos;
	/* All short of one length (half theirs decoded): as many as fit,
	 * reckoned. */
	if (one && (ld32(s) & 2) == 0 && rl == 2 * sl) {
		k = (len - off) / rl;
		if ((slen - sp) / sl < k || (len - off) % rl != 0)
			goto other;
		if (cap - pos < rl + 4)
			k = 0;
		else if ((cap - pos - rl - 4) / sl + 1 < k)
			k = (cap - pos - rl - 4) / sl + 1;
		memcpy(o + pos, s + sp, k * sl);
		*used = off + k * rl;
		*sused = sp + k * sl;
		if (nrec != NULL)
			*nrec = 1 + k;
		return (ssize_t)(pos + k * sl);
	}
	/* The stretches after the first record. */
	for (lo = 0, hi = at != NULL ? nat : 0; lo < hi;) {
		mid = lo + (hi - lo) / 2;
		if (at[mid] <= base + off)
			lo = mid + 1;
		else
			hi = mid;
	}
	si = lo;
	/* The others: short ones copied as they are (their deltas are the
	 * same), long ones (their ts whole) encoded. */
	while (off < len) {
		if (slen - sp < 4)
			goto other;
		w = ld32(s + sp);
		if ((w & 2) == 0) {
			ns = (w >> 2) & 15;
			sl = 8 + 4 * ns;
			rl = 16 + 8 * ns;
			if (sl > slen - sp || rl > len - off)
				goto other;
			if (cap - pos < rl + 4)
				break;
			/* The rest of its stretch: as many as fit,
			 * reckoned. */
			while (si < nat && at[si] - base <= off)
				si++;
			end = si < nat && at[si] - base < len ?
			    at[si] - base : len;
			if (at != NULL && end - off >= 2 * rl &&
			    (end - off) % rl == 0 &&
			    (slen - sp) / sl >= (end - off) / rl) {
				m = (cap - pos - rl - 4) / sl + 1;
				if (m > (end - off) / rl)
					m = (end - off) / rl;
				last = off + (m - 1) * rl;
				pos += m * sl;
				sp += m * sl;
				off += m * rl;
				k += m;
				if (off < end)
					break;	/* the frame is full */
				continue;
			}
			last = off;
			pos += sl;
			sp += sl;
			off += rl;
			k++;
			continue;
		}
		memcpy(&l, p + off, 2);
		sl = src_rec(s + sp, slen - sp, &rl);
		if (sl == 0 || rl != l || l < sizeof(struct rec_hdr) ||
		    l > len - off)
			goto other;
		if (cap - pos < (size_t)l + 4)
			break;
		memcpy(o + cpos, s + cs, pos - cpos);
		memcpy(&e.prev, p + last + offsetof(struct rec_hdr, ts), 8);
		pos += put_one(&e, p + off, l, o + pos);
		last = off;
		sp += sl;
		off += l;
		k++;
		cs = sp;
		cpos = pos;
	}
	memcpy(o + cpos, s + cs, pos - cpos);
	*used = off;
	*sused = sp;
	if (nrec != NULL)
		*nrec = k;
	return (ssize_t)pos;
other:
	/* src does not follow: encoded. */
	n = encode_from(p, len, NULL, 0, o, cap, used, NULL, nrec, NULL);
	*sused = SIZE_MAX;
	return n;
}

ssize_t
rec_dense_copy_part(const void *recs, size_t len, const void *src,
		    size_t slen, int one, void *out, size_t cap, size_t *used,
		    size_t *sused, size_t *nrec)
{
	return copy_from(recs, len, src, slen, one, NULL, 0, 0, out, cap,
	    used, sused, nrec);
}

ssize_t
rec_dense_copy_part_st(const void *recs, size_t len, const void *src,
		       size_t slen, const uint32_t *at, uint32_t nat,
		       uint32_t base, void *out, size_t cap, size_t *used,
		       size_t *sused, size_t *nrec)
{
	return copy_from(recs, len, src, slen, 0, at, nat, base, out, cap,
	    used, sused, nrec);
}

ssize_t
rec_dense_skip(const void *src, size_t slen, size_t dec)
{
	const unsigned char *s = src;
	size_t sp = 0, done = 0, sl, rl;

	while (done < dec) {
		if ((sl = src_rec(s + sp, slen - sp, &rl)) == 0 ||
		    rl > dec - done)
			return -1;
		sp += sl;
		done += rl;
	}
	return (ssize_t)sp;
}

ssize_t
rec_dense_encode(const void *recs, size_t len, void *out, size_t cap)
{
	size_t used;
	ssize_t n;

	n = rec_dense_encode_part(recs, len, out, cap, &used, NULL);
	if (n >= 0 && used != len) {
		errno = EMSGSIZE;
		return -1;
	}
	return n;
}

/* Whether put_one would write the record r (len bytes) short after a
 * record of time prev (asked of long records only: seldom). */
static int
fits_short(const unsigned char *r, size_t len, uint64_t prev)
{
	unsigned char o[REC_MAX + 4];
	struct rec_dense_enc e = { prev };

	put_one(&e, r, len, o);
	return (ld32(o) & 2) == 0;
}

/* Moves *k to the step of sh that time t is in, and *lim, *shift to
 * its; notes the record at decoded offset off if its shift changed. */
static void
step(struct rec_dense_shift *sh, uint32_t *k, uint64_t t, size_t off,
     uint64_t *lim, uint64_t *shift)
{
	uint64_t was = *shift;

	while (*k + 1 < sh->n && t > sh->upto[*k])
		++*k;
	*lim = *k + 1 < sh->n ? sh->upto[*k] : UINT64_MAX;
	*shift = sh->by[*k];
	if (*shift != was && off > 0 && sh->nbrk <= sh->brk_max) {
		if (sh->nbrk < sh->brk_max)
			sh->brk[sh->nbrk] = (uint32_t)off;
		sh->nbrk++;
	}
}

/* Where walk notes the switches it may take (NULL: none). */
struct sw_out {
	struct rec_dense_sw	*v;
	size_t			n, max;
};

/*
 * A scan's records after one of word w that have the same word: of
 * the same length and stretch, with the same checks but their delta's
 * (and, unsigned, their slots').  Returns where the first other one
 * starts.
 */
static size_t
scan_same(const unsigned char *in, size_t n, size_t pos, uint32_t w,
	  int *canon, uint64_t *prev, uint32_t *mono, uint32_t *nrec,
	  size_t *olen)
{
	size_t ns = (w >> 2) & 15, rl = 8 + 4 * ns, i, k = 0;
	uint64_t t = *prev;
	uint32_t acc, neg = 0;
	int32_t d;
	int uns = canon != NULL && (w & 3) == FORM_UNSIGNED;

	while (n - pos >= rl && ld32(in + pos) == w) {
		d = (int32_t)ld32(in + pos + 4);
		neg |= (uint32_t)d;
		t += (uint64_t)(int64_t)d;
		if (uns) {
			for (i = 0, acc = 0; i < ns; i++)
				acc |= ld32(in + pos + 8 + 4 * i);
			if ((acc >> 31) == 0)
				*canon &= ~REC_DENSE_CANON;
		}
		pos += rl;
		k++;
	}
	*mono &= (neg >> 31) == 0;
	*prev = t;
	*nrec += (uint32_t)k;
	*olen += k * (16 + 8 * ns);
	return pos;
}

/* Walks in[0..n) (inlined in each caller below: what each asks for is
 * known when compiled, and the loop runs per record); with out, decodes into out[0..cap), every time moved
 * by sh (none if NULL); with canon says in *canon whether every record is as put_one
 * writes it (REC_DENSE_CANON), whether all are short of one header word
 * (REC_DENSE_ONE); with inf, what rec_dense_scan says.  Returns the
 * decoded length, or -1. */
static inline __attribute__((always_inline)) ssize_t
walk(const unsigned char *in, size_t n, unsigned char *out, size_t cap,
     int *canon, struct rec_dense_shift *sh, struct rec_dense_info *inf,
     struct rec_dense_seg *sg, uint32_t sgmax, struct sw_out *sw)
{
	static const uint64_t all = UINT64_MAX, none = 0;
	struct rec_dense_shift nosh = { 1, &all, &none, NULL, 0, 0, NULL };
	uint64_t lim, shift;
	uint32_t k = 0;
	size_t pos = REC_DENSE_BASE, olen = 0, ns, i;
	uint64_t prev, v, pre = 0, first = 0;
	uint32_t w, acc, w0, one = 1, mono = 1, nrec = 0, nmeta = 0, nseg = 0;
	uint32_t key = FORM_LONG;
	struct rec_hdr h;
	unsigned char *o;
	int32_t d;

	if (n < REC_DENSE_BASE)
		return -1;
	if (canon != NULL)
		*canon = REC_DENSE_CANON;
	if (sh == NULL)
		sh = &nosh;
	sh->nbrk = 0;
	lim = sh->n > 1 ? sh->upto[0] : UINT64_MAX;
	shift = sh->by[0];
	w0 = n - pos >= 4 ? ld32(in + pos) | 3 : 0;
	memcpy(&prev, in, 8);
	while (pos < n) {
		if (n - pos < 4)
			return -1;
		w = ld32(in + pos);
		nrec++;
		if ((w & 2) == 0) {	/* short, either form */
			ns = (w >> 2) & 15;
			if (n - pos < 8 + 4 * ns)
				return -1;
			d = (int32_t)ld32(in + pos + 4);
			mono &= d >= 0;
			prev += (uint64_t)(int64_t)d;
			if (nrec == 1)
				first = prev;
			one &= (w | 3) == w0;
			if ((w | 3) != key && olen > 0) {
				if (sh != NULL && sh->seg != NULL)
					sh->seg[nseg] = (uint32_t)olen;
				if (sg != NULL && nseg < sgmax) {
					sg[nseg].off = (uint32_t)olen;
					sg[nseg].sp = (uint32_t)pos;
					sg[nseg].prev = prev -
					    (uint64_t)(int64_t)d;
				}
				nseg++;
			}
			key = w | 3;
			/* (A meta record is long: its class is 255.) */
			if ((w >> EID_SHIFT) < REC_EID_BIAS)
				pre |= 1ull << (w >> EID_SHIFT);
			if (out != NULL) {
				if (cap - olen < 16 + 8 * ns)
					return -1;
				o = out + olen;
				h.len = (uint16_t)(16 + 8 * ns);
				h.cls = (uint8_t)((w >> 6) & 15);
				h.attr = (uint8_t)((w >> 10) & 15);
				h.eid = (int32_t)(w >> EID_SHIFT) -
				    REC_EID_BIAS;
				if (prev > lim)
					step(sh, &k, prev, olen, &lim, &shift);
				h.ts = prev + shift;
				memcpy(o, &h, sizeof h);
				if ((w & 3) == FORM_SIGNED)
					for (i = 0; i < ns; i++) {
						v = (uint64_t)(int64_t)(int32_t)
						    ld32(in + pos + 8 + 4 * i);
						memcpy(o + 16 + 8 * i, &v, 8);
					}
				else {
					/* Written signed if it could be. */
					for (i = 0, acc = 0; i < ns; i++) {
						v = ld32(in + pos + 8 + 4 * i);
						acc |= (uint32_t)v;
						memcpy(o + 16 + 8 * i, &v, 8);
					}
					if (canon != NULL && (acc >> 31) == 0)
						*canon &= ~REC_DENSE_CANON;
				}
			} else if (canon != NULL && (w & 3) == FORM_UNSIGNED) {
				for (i = 0, acc = 0; i < ns; i++)
					acc |= ld32(in + pos + 8 + 4 * i);
				if ((acc >> 31) == 0)
					*canon &= ~REC_DENSE_CANON;
			}
			pos += 8 + 4 * ns;
			olen += 16 + 8 * ns;
			if (out == NULL)
				pos = scan_same(in, n, pos, w, canon, &prev,
				    &mono, &nrec, &olen);
			continue;
		}
		if (sw != NULL && (w == REC_DENSE_SW_THREAD ||
		    w == REC_DENSE_SW_PROC || w == REC_DENSE_SW_HOST)) {
			struct rec_dense_sw *x = sw->v + sw->n;
			size_t xl = 8 + 4 * (w >> 2);	/* 8, 12, 16 */

			/* After a record, not after a switch. */
			if (n - pos < xl || olen == 0 ||
			    (sw->n > 0 && x[-1].off == olen) ||
			    sw->n == sw->max)
				return -1;
			x->off = (uint32_t)olen;
			x->word = w;
			x->node = w == REC_DENSE_SW_HOST ?
			    ld32(in + pos + 4) : 0;
			x->pid = w != REC_DENSE_SW_THREAD ?
			    ld32(in + pos + xl - 8) : 0;
			x->tid = ld32(in + pos + xl - 4);
			sw->n++;
			nrec--;
			key = FORM_LONG;	/* a stretch ends */
			one = 0;
			pos += xl;
			continue;
		}
		if (w != FORM_LONG || n - pos - 4 < sizeof h)
			return -1;
		memcpy(&h, in + pos + 4, sizeof h);
		if (h.len < sizeof h || h.len % REC_ALIGN != 0 ||
		    h.len > REC_MAX || h.len > n - pos - 4)
			return -1;
		if (out != NULL) {
			if (cap - olen < h.len)
				return -1;
			memcpy(out + olen, in + pos + 4, h.len);
			if (h.ts > lim)
				step(sh, &k, h.ts, olen, &lim, &shift);
			if (shift != 0) {
				v = h.ts + shift;
				memcpy(out + olen + offsetof(struct rec_hdr,
				    ts), &v, sizeof v);
			}
		}
		if (canon != NULL && fits_short(in + pos + 4, h.len, prev))
			*canon &= ~REC_DENSE_CANON;
		nmeta += h.cls == REC_CLASS_META;
		if (h.eid < 0 && h.eid >= -REC_EID_BIAS)
			pre |= 1ull << (h.eid + REC_EID_BIAS);
		mono &= h.ts >= prev;
		if (olen > 0) {
			if (sh != NULL && sh->seg != NULL)
				sh->seg[nseg] = (uint32_t)olen;
			if (sg != NULL && nseg < sgmax) {
				sg[nseg].off = (uint32_t)olen;
				sg[nseg].sp = (uint32_t)pos;
				sg[nseg].prev = prev;
			}
			nseg++;
		}
		key = FORM_LONG;	/* no short record's */
		one = 0;
		prev = h.ts;
		if (nrec == 1)
			first = prev;
		pos += 4 + h.len;
		olen += h.len;
	}
	/* Before a record. */
	if (sw != NULL && sw->n > 0 && sw->v[sw->n - 1].off == olen)
		return -1;
	if (canon != NULL && one && olen > 0)
		*canon |= REC_DENSE_ONE;
	if (inf != NULL) {
		inf->first = first;
		inf->last = prev;
		inf->nrec = nrec;
		inf->nmeta = nmeta;
		inf->nseg = nseg;
		inf->pre = pre;
		inf->mono = (int)mono;
	}
	return (ssize_t)olen;
}

ssize_t
rec_dense_len(const void *in, size_t n)
{
	return walk(in, n, NULL, 0, NULL, NULL, NULL, NULL, 0, NULL);
}

ssize_t
rec_dense_decode(const void *in, size_t n, void *out, size_t cap)
{
	return walk(in, n, out, cap, NULL, NULL, NULL, NULL, 0, NULL);
}

ssize_t
rec_dense_decode_canon(const void *in, size_t n, void *out, size_t cap,
		       int *canon)
{
	return walk(in, n, out, cap, canon, NULL, NULL, NULL, 0, NULL);
}

ssize_t
rec_dense_scan(const void *in, size_t n, int *canon,
	       struct rec_dense_info *inf)
{
	return walk(in, n, NULL, 0, canon, NULL, inf, NULL, 0, NULL);
}

ssize_t
rec_dense_scan_st(const void *in, size_t n, int *canon,
		  struct rec_dense_info *inf, struct rec_dense_seg *seg,
		  uint32_t max)
{
	return walk(in, n, NULL, 0, canon, NULL, inf, seg, max, NULL);
}

ssize_t
rec_dense_decode_sw(const void *in, size_t n, void *out, size_t cap,
		    struct rec_dense_sw *sw, size_t max, size_t *nsw)
{
	struct sw_out so = { sw, 0, max };
	ssize_t r;

	r = walk(in, n, out, cap, NULL, NULL, NULL, NULL, 0, &so);
	*nsw = so.n;
	return r;
}

ssize_t
rec_dense_decode_shift(const void *in, size_t n, void *out, size_t cap,
		       struct rec_dense_shift *sh)
{
	return walk(in, n, out, cap, NULL, sh, NULL, NULL, 0, NULL);
}

size_t
rec_dense_one(const void *src, uint64_t prev, uint64_t shift, void *out,
	      uint64_t *t)
{
	const unsigned char *s = src;
	unsigned char *o = out;
	struct rec_hdr h;
	uint32_t w = ld32(s);
	uint64_t v;
	size_t ns, i;

	if ((w & 2) != 0) {	/* long: the record as it is */
		memcpy(&h, s + 4, sizeof h);
		memcpy(o, s + 4, h.len);
		*t = h.ts;
		h.ts += shift;
		memcpy(o + offsetof(struct rec_hdr, ts), &h.ts, sizeof h.ts);
		return h.len;
	}
	ns = (w >> 2) & 15;
	*t = prev + (uint64_t)(int64_t)(int32_t)ld32(s + 4);
	h.len = (uint16_t)(16 + 8 * ns);
	h.cls = (uint8_t)((w >> 6) & 15);
	h.attr = (uint8_t)((w >> 10) & 15);
	h.eid = (int32_t)(w >> EID_SHIFT) - REC_EID_BIAS;
	h.ts = *t + shift;
	memcpy(o, &h, sizeof h);
	for (i = 0; i < ns; i++) {
		v = ld32(s + 8 + 4 * i);
		if ((w & 3) == FORM_SIGNED)
			v = (uint64_t)(int64_t)(int32_t)(uint32_t)v;
		memcpy(o + 16 + 8 * i, &v, 8);
	}
	return h.len;
}

ssize_t
rec_dense_frame(const void *src, size_t slen, uint64_t prev,
		const struct rec_dense_shift *sh, size_t len, void *out,
		size_t cap, size_t *used, size_t *sused, size_t *nrec,
		uint64_t *last)
{
	return rec_dense_frame_st(src, slen, prev, sh, NULL, len, out, cap,
	    used, sused, nrec, last);
}

ssize_t
rec_dense_frame_st(const void *src, size_t slen, uint64_t prev,
		   const struct rec_dense_shift *sh,
		   const struct rec_dense_segs *sg, size_t len, void *out,
		   size_t cap, size_t *used, size_t *sused, size_t *nrec,
		   uint64_t *last)
{
	return rec_dense_frame_cont(src, slen, prev, sh, sg, len, NULL, out,
	    cap, used, sused, nrec, last);
}

ssize_t
rec_dense_frame_cont(const void *src, size_t slen, uint64_t prev,
		     const struct rec_dense_shift *sh,
		     const struct rec_dense_segs *sg, size_t len,
		     const uint64_t *cont, void *out, size_t cap,
		     size_t *used, size_t *sused, size_t *nrec,
		     uint64_t *last)
{
	uint32_t si = 0, end;
	uint64_t te;
	size_t m, f;
	const unsigned char *s = src;
	unsigned char *o = out, r[REC_MAX];
	struct rec_dense_enc e;
	size_t pos, sp, off, k = 0, sl, rl, cs, cpos;
	uint64_t t, lim, shift;
	uint32_t w, st;
	uint16_t l;

	*used = *sused = 0;
	*nrec = 0;
	*last = prev;
	if (cont == NULL && cap < REC_DENSE_BASE) {
		errno = EMSGSIZE;
		return -1;
	}
	if ((sl = src_rec(s, slen, &rl)) == 0 || rl > len) {
		errno = EINVAL;
		return -1;
	}
	/* The first record, its delta now from the base. */
	if ((w = ld32(s)) & 2)
		memcpy(&t, s + 4 + offsetof(struct rec_hdr, ts), 8);
	else
		t = prev + (uint64_t)(int64_t)(int32_t)ld32(s + 4);
	st = rec_dense_step(sh, t);
	shift = sh->by[st];
	lim = st + 1 < sh->n ? sh->upto[st] : UINT64_MAX;
	rl = rec_dense_one(s, prev, shift, r, &t);
	if (cont != NULL) {
		e.prev = *cont;
		pos = 0;
	} else
		pos = rec_dense_begin(&e, o, t + shift);
	if (cap - pos < rl + 4)
		return (ssize_t)pos;
	pos += put_one(&e, r, rl, o + pos);
	off = rl;
	sp = sl;
	k = 1;
	cs = sp;
	cpos = pos;
	prev = t;
	while (off < len && slen - sp >= 4) {
		w = ld32(s + sp);
		if ((w & 2) == 0) {
			sl = 8 + 4 * (size_t)((w >> 2) & 15);
			rl = 2 * sl;
			if (sg != NULL && sg->n > 0) {
				/* The rest of its stretch, if in one step: as
				 * many as fit, reckoned. */
				end = rec_dense_seg_end(sg, &si, sg->base + sp,
				    &te);
				m = (end - sg->base - sp) / sl;
				if (m >= 2 && te <= lim &&
				    end - sg->base <= slen) {
					f = cap - pos < rl + 4 ? 0 :
					    (cap - pos - rl - 4) / sl + 1;
					m = m < f ? m : f;
					f = (len - off) / rl;
					m = m < f ? m : f;
					if (m == 0)
						break;
					prev = sg->base + sp + m * sl == end ?
					    te : rec_dense_walk_ts(s + sp,
					    m * sl, sl, prev);
					pos += m * sl;
					sp += m * sl;
					off += m * rl;
					k += m;
					continue;
				}
			}
			t = prev + (uint64_t)(int64_t)(int32_t)ld32(s + sp + 4);
			if (sl > slen - sp || rl > len - off ||
			    cap - pos < rl + 4)
				break;
			if (t <= lim) {
				/* Moved as the one before: as it is. */
				pos += sl;
				sp += sl;
				off += rl;
				k++;
				prev = t;
				continue;
			}
		} else {
			memcpy(&l, s + sp + 4, 2);
			sl = 4 + (size_t)l;
			rl = l;
			memcpy(&t, s + sp + 4 + offsetof(struct rec_hdr, ts), 8);
			if (sl > slen - sp || rl > len - off ||
			    cap - pos < rl + 4)
				break;
		}
		if (t > lim) {
			st = rec_dense_step(sh, t);
			shift = sh->by[st];
			lim = st + 1 < sh->n ? sh->upto[st] : UINT64_MAX;
		}
		/* Long, or after a step: encoded (its delta from the one
		 * before's moved time). */
		memcpy(o + cpos, s + cs, pos - cpos);
		e.prev = prev + sh->by[rec_dense_step(sh, prev)];
		(void)rec_dense_one(s + sp, prev, shift, r, &t);
		pos += put_one(&e, r, rl, o + pos);
		sp += sl;
		off += rl;
		k++;
		prev = t;
		cs = sp;
		cpos = pos;
	}
	memcpy(o + cpos, s + cs, pos - cpos);
	*used = off;
	*sused = sp;
	*nrec = k;
	*last = prev;
	return (ssize_t)pos;
}
