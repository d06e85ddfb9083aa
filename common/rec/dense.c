/* SPDX-License-Identifier: MIT */
/* dense.c: encoding runs of records densely and back (dense.h). */
#include <errno.h>
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

size_t
rec_dense_put(struct rec_dense_enc *e, const void *rec, size_t len,
	      void *out)
{
	const unsigned char *r = rec;
	unsigned char *o = out;
	struct rec_hdr h;
	uint32_t ebias, lo, hi, sok = 1, zok = 1;
	int64_t d;
	size_t i, n;

	memcpy(&h, r, sizeof h);
	n = (len - sizeof h) / 8;
	d = (int64_t)(h.ts - e->prev);
	ebias = (uint32_t)h.eid + REC_EID_BIAS;
	if (n <= 15 && h.cls < 16 && h.attr < 16 && ebias < EID_LIMIT &&
	    d >= INT32_MIN && d <= INT32_MAX) {
		for (i = 0; i < n; i++) {
			lo = ld32(r + 16 + 8 * i);
			hi = ld32(r + 20 + 8 * i);
			sok &= hi == (uint32_t)-(int32_t)(lo >> 31);
			zok &= hi == 0;
			st32(o + 8 + 4 * i, lo);
		}
		if (sok | zok) {
			st32(o, (sok ? FORM_SIGNED : FORM_UNSIGNED) |
			    (uint32_t)n << 2 | (uint32_t)h.cls << 6 |
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
rec_dense_encode(const void *recs, size_t len, void *out, size_t cap)
{
	const unsigned char *p = recs;
	unsigned char *o = out;
	struct rec_dense_enc e;
	struct rec_hdr h;
	size_t off = 0, pos;

	if (rec_valid_prefix(recs, len) != len) {
		errno = EINVAL;
		return -1;
	}
	if (cap < REC_DENSE_BASE) {
		errno = EMSGSIZE;
		return -1;
	}
	memcpy(&h, p, len >= sizeof h ? sizeof h : 0);
	pos = rec_dense_begin(&e, o, len >= sizeof h ? h.ts : 0);
	while (off < len) {
		memcpy(&h, p + off, sizeof h);
		if (cap - pos < (size_t)h.len + 4) {
			errno = EMSGSIZE;
			return -1;
		}
		pos += rec_dense_put(&e, p + off, h.len, o + pos);
		off += h.len;
	}
	return (ssize_t)pos;
}

/* Walks in[0..n); with out, decodes into out[0..cap).  Returns the
 * decoded length, or -1. */
static ssize_t
walk(const unsigned char *in, size_t n, unsigned char *out, size_t cap)
{
	size_t pos = REC_DENSE_BASE, olen = 0, ns, i;
	uint64_t prev;
	uint32_t w, v;
	struct rec_hdr h;
	uint16_t rlen;

	if (n < REC_DENSE_BASE)
		return -1;
	memcpy(&prev, in, 8);
	while (pos < n) {
		if (n - pos < 4)
			return -1;
		w = ld32(in + pos);
		switch (w & 3) {
		case FORM_SIGNED:
		case FORM_UNSIGNED:
			ns = (w >> 2) & 15;
			if (n - pos < 8 + 4 * ns)
				return -1;
			rlen = (uint16_t)(16 + 8 * ns);
			prev += (uint64_t)(int64_t)(int32_t)ld32(in + pos + 4);
			if (out != NULL) {
				if (cap - olen < rlen)
					return -1;
				h.len = rlen;
				h.cls = (uint8_t)((w >> 6) & 15);
				h.attr = (uint8_t)((w >> 10) & 15);
				h.eid = (int32_t)(w >> EID_SHIFT) -
				    REC_EID_BIAS;
				h.ts = prev;
				memcpy(out + olen, &h, sizeof h);
				for (i = 0; i < ns; i++) {
					v = ld32(in + pos + 8 + 4 * i);
					st32(out + olen + 16 + 8 * i, v);
					st32(out + olen + 20 + 8 * i,
					    (w & 3) == FORM_SIGNED ?
					    (uint32_t)-(int32_t)(v >> 31) : 0);
				}
			}
			pos += 8 + 4 * ns;
			olen += rlen;
			break;
		case FORM_LONG:
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
			}
			prev = h.ts;
			pos += 4 + h.len;
			olen += h.len;
			break;
		default:
			return -1;
		}
	}
	return (ssize_t)olen;
}

ssize_t
rec_dense_len(const void *in, size_t n)
{
	return walk(in, n, NULL, 0);
}

ssize_t
rec_dense_decode(const void *in, size_t n, void *out, size_t cap)
{
	return walk(in, n, out, cap);
}
