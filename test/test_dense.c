/* SPDX-License-Identifier: MIT */
/* test_dense.c: the dense encoding of record runs (common/rec/dense.c,
 * doc/formats.md 2.6): sizes, forms, round trips, malformed runs. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "rec/dense.h"
#include "rec/rec.h"

/* Appends a record of n 8-byte slots s[] at b + *off. */
static void
put(unsigned char *b, size_t *off, uint8_t cls, uint8_t attr, int32_t eid,
    uint64_t ts, const uint64_t *s, unsigned n)
{
	rec_put_hdr(b + *off, 16 + 8 * n, cls, attr, eid, ts);
	if (n > 0)
		memcpy(b + *off + 16, s, 8 * n);
	*off += 16 + 8 * n;
}

/* recs[0..len) encoded: its length; decodes back to the same bytes. */
static size_t
trip(const unsigned char *recs, size_t len)
{
	static unsigned char enc[1 << 16], dec[1 << 16];
	ssize_t n;

	n = rec_dense_encode(recs, len, enc, sizeof enc);
	cr_assert_geq(n, REC_DENSE_BASE);
	cr_assert_leq((size_t)n, REC_DENSE_MAX(len));
	cr_assert_eq(n % 4, 0);
	cr_assert_eq(rec_dense_len(enc, (size_t)n), (ssize_t)len);
	cr_assert_eq(rec_dense_decode(enc, (size_t)n, dec, sizeof dec),
	    (ssize_t)len);
	cr_assert_eq(memcmp(dec, recs, len), 0);
	return (size_t)n;
}

Test(dense, two_ints_take_16_bytes)
{
	unsigned char b[32 * 1000];
	uint64_t s[2];
	size_t off = 0;
	int i;

	for (i = 0; i < 1000; i++) {
		s[0] = (uint64_t)(int64_t)(i - 500);	/* negative too */
		s[1] = (uint64_t)i * 7;
		put(b, &off, REC_CLASS_USER, REC_ATTR_POINT, 1,
		    1000000000000ull + 37 * (uint64_t)i, s, 2);
	}
	cr_assert_eq(trip(b, off), REC_DENSE_BASE + 16 * 1000);
}

Test(dense, unsigned_32_bits)
{
	unsigned char b[64];
	uint64_t s[2] = { 0xdeadbeefu, 0xffffffffu };
	size_t off = 0;

	put(b, &off, REC_CLASS_USER, REC_ATTR_POINT, 7, 5, s, 2);
	cr_assert_eq(trip(b, off), REC_DENSE_BASE + 16);
}

Test(dense, long_forms)
{
	unsigned char b[4096];
	uint64_t big[2] = { 1ull << 40, 1 }, mixed[2] = { 0xffffffffu,
	    (uint64_t)-1 }, one = 3, many[16] = { 0 };
	size_t off = 0, n;

	/* Each of these cannot be short: a 64-bit value, slots signed and
	 * unsigned at once, class META, an eid too large, a jump in time
	 * over 2^31 ns, 16 slots. */
	put(b, &off, 8, 2, 1, 100, big, 2);
	put(b, &off, 8, 2, 1, 100, mixed, 2);
	put(b, &off, REC_CLASS_META, REC_ATTR_LOSS, 0, 100, &one, 1);
	put(b, &off, 8, 2, 300000, 100, &one, 1);
	put(b, &off, 8, 2, 1, 100 + (1ull << 31), &one, 1);
	put(b, &off, 8, 2, 1, 100 + (1ull << 31), many, 16);
	n = trip(b, off);
	cr_assert_eq(n, REC_DENSE_BASE + off + 6 * 4);
}

Test(dense, time_goes_back_and_wraps)
{
	unsigned char b[256];
	uint64_t v = 1;
	size_t off = 0;

	put(b, &off, 8, 2, 1, 5000, &v, 1);
	put(b, &off, 8, 2, 1, 4000, &v, 1);	/* earlier: delta < 0 */
	put(b, &off, 8, 2, -64, UINT64_MAX, &v, 1);	/* near, modulo 2^64 */
	put(b, &off, 8, 2, 1, 3, &v, 1);	/* wraps: short */
	put(b, &off, 15, 15, 262079, 3, NULL, 0);
	put(b, &off, 8, 2, 1, 1ull << 40, &v, 1);	/* far: long */
	put(b, &off, 8, 2, 1, (1ull << 40) + 1, &v, 1);	/* from the long */
	cr_assert_eq(trip(b, off), REC_DENSE_BASE + 12 + 12 + 12 + 12 + 8 +
	    (4 + 24) + 12);
}

Test(dense, empty_and_malformed)
{
	unsigned char b[64] = { 0 }, out[256];
	uint32_t w;
	uint64_t base = 9;

	cr_assert_eq(rec_dense_encode(b, 0, out, sizeof out), REC_DENSE_BASE);
	cr_assert_eq(rec_dense_len(out, REC_DENSE_BASE), 0);
	/* Short of its base, of its word, of its slots. */
	cr_assert_eq(rec_dense_len(b, 7), -1);
	memcpy(b, &base, 8);
	w = 0 | 2 << 2;				/* short, 2 slots */
	memcpy(b + 8, &w, 4);
	cr_assert_eq(rec_dense_len(b, 10), -1);
	cr_assert_eq(rec_dense_len(b, 8 + 8 + 7), -1);
	cr_assert_eq(rec_dense_len(b, 8 + 8 + 8), 32);
	/* Too little room to decode into. */
	cr_assert_eq(rec_dense_decode(b, 8 + 16, out, 31), -1);
	/* Form 3; a long word with bits above its form. */
	w = 3;
	memcpy(b + 8, &w, 4);
	cr_assert_eq(rec_dense_len(b, 8 + 16), -1);
	w = 2 | 4;
	memcpy(b + 8, &w, 4);
	cr_assert_eq(rec_dense_len(b, 8 + 4 + 16), -1);
	/* A long record of a bad length. */
	w = 2;
	memcpy(b + 8, &w, 4);
	rec_put_hdr(b + 12, 20, 8, 2, 1, 0);
	cr_assert_eq(rec_dense_len(b, 12 + 24), -1);
	rec_put_hdr(b + 12, 24, 8, 2, 1, 0);
	cr_assert_eq(rec_dense_len(b, 12 + 16), -1);
	cr_assert_eq(rec_dense_len(b, 12 + 24), 24);
	/* Encoding malformed records, or into too little room. */
	rec_put_hdr(b, 20, 8, 2, 1, 0);
	cr_assert_eq(rec_dense_encode(b, 24, out, sizeof out), -1);
	rec_put_hdr(b, 24, 8, 2, 1, 0);
	cr_assert_eq(rec_dense_encode(b, 24, out, 10), -1);
}

/* ---- writing a run again from the bytes it came in (recode) ---- */

static uint64_t rnd_state = 88172645463325252ull;

static uint64_t
rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/* Up to nmax random records of every kind into b; returns their bytes. */
static size_t
random_recs(unsigned char *b, size_t cap, unsigned nmax)
{
	uint64_t s[16], ts = rnd();
	size_t off = 0;
	unsigned i, j, n;
	int32_t eid;
	uint8_t cls, attr;

	for (i = 0; i < nmax && cap - off >= 16 + 8 * 16; i++) {
		n = (unsigned)(rnd() % 4 == 0 ? rnd() % 17 : rnd() % 3);
		for (j = 0; j < n; j++)
			switch (rnd() % 6) {
			case 0:		/* signed, negative */
				s[j] = (uint64_t)-(int64_t)(rnd() % 1000);
				break;
			case 1:		/* unsigned, 32 bits */
				s[j] = (uint32_t)rnd() | 0x80000000u;
				break;
			case 2:		/* 64 bits */
				s[j] = rnd();
				break;
			default:	/* small */
				s[j] = rnd() % 1000;
			}
		cls = rnd() % 8 == 0 ? REC_CLASS_META : (uint8_t)(rnd() % 16);
		attr = (uint8_t)(rnd() % 16);
		eid = rnd() % 16 == 0 ? 300000 : (int32_t)(rnd() % 200) - 64;
		/* Mostly small steps; some back, some over 2^31 ns. */
		switch (rnd() % 16) {
		case 0:
			ts -= rnd() % 5000;
			break;
		case 1:
			ts += (1ull << 31) + rnd() % 100;
			break;
		default:
			ts += rnd() % 3000;
		}
		put(b, &off, cls, attr, eid, ts, s, n);
	}
	return off;
}

/* Whether the encoder writes the record r of len bytes short after a
 * record of time prev. */
static int
fits_short(const unsigned char *r, size_t len, uint64_t prev)
{
	unsigned char o[REC_MAX + 8];
	struct rec_dense_enc e = { prev };
	uint32_t w;

	rec_dense_put(&e, r, len, o);
	memcpy(&w, o, 4);
	return (w & 2) == 0;
}

/* recs[0..len) as a dense run, each record as the writer writes it or,
 * with odd, at random, as another encoder might (long; unsigned where
 * signed fits): *made_odd says if one is not as the writer writes it. */
static size_t
random_src(const unsigned char *recs, size_t len, unsigned char *out,
	   int odd, int *made_odd)
{
	struct rec_dense_enc e;
	struct rec_hdr h;
	size_t off, pos, n;
	uint32_t w;

	memcpy(&h, recs, sizeof h);
	pos = rec_dense_begin(&e, out, len > 0 ? h.ts : 0);
	*made_odd = 0;
	for (off = 0; off < len; off += h.len) {
		memcpy(&h, recs + off, sizeof h);
		if (odd && rnd() % 8 == 0) {
			/* Long where it could be short (or not). */
			*made_odd |= fits_short(recs + off, h.len, e.prev);
			w = 2;
			memcpy(out + pos, &w, 4);
			memcpy(out + pos + 4, recs + off, h.len);
			pos += 4 + h.len;
			e.prev = h.ts;
			continue;
		}
		n = rec_dense_put(&e, recs + off, h.len, out + pos);
		memcpy(&w, out + pos, 4);
		if (odd && (w & 3) == 0 && rnd() % 4 == 0) {
			/* Every slot non-negative: it reads the same. */
			size_t i, ns = (w >> 2) & 15;
			uint32_t acc = 0, v;

			for (i = 0; i < ns; i++) {
				memcpy(&v, out + pos + 8 + 4 * i, 4);
				acc |= v;
			}
			if ((acc >> 31) == 0) {
				*made_odd = 1;
				w |= 1;
				memcpy(out + pos, &w, 4);
			}
		}
		pos += n;
	}
	return pos;
}

/* Moves the records' times as mainmon's clock conversion does: by an
 * offset that steps now and then (by a nanosecond of rounding, or more),
 * and now and then a record held to the time of the one before. */
static void
convert(unsigned char *recs, size_t len)
{
	struct rec_hdr h;
	uint64_t shift = rnd(), prev = 0;
	size_t off;

	for (off = 0; off < len; off += h.len) {
		memcpy(&h, recs + off, sizeof h);
		if (rnd() % 32 == 0)
			shift += rnd() % 2 ? 1 : -1;
		else if (rnd() % 256 == 0)
			shift += rnd();
		h.ts += shift;
		if (off > 0 && rnd() % 64 == 0)
			h.ts = prev;
		prev = h.ts;
		memcpy(recs + off, &h, sizeof h);
	}
}

/* Moves the times of every record of recs[0..len) by shift. */
static void
move_all(unsigned char *recs, size_t len, uint64_t shift)
{
	struct rec_hdr h;
	size_t off;

	for (off = 0; off < len; off += h.len) {
		memcpy(&h, recs + off, sizeof h);
		h.ts += shift;
		memcpy(recs + off, &h, sizeof h);
	}
}

/* The record boundary at or after byte k of recs[0..len). */
static size_t
boundary(const unsigned char *recs, size_t len, size_t k)
{
	size_t off = 0;
	uint16_t l;

	while (off < len && off < k) {
		memcpy(&l, recs + off, 2);
		off += l;
	}
	return off;
}

/* Where recs' stretches of one header begin (copy 3 below). */
static uint32_t st_at[1 << 14], st_n;

/* recs[a..b) in frames of cap bytes, from src's records from a on:
 * the same frames as encoding them; with copy, by rec_dense_copy_part
 * (2: told the records are of one length; 3: told st_at). */
static void
same_frames(const unsigned char *recs, size_t a, size_t b,
	    const unsigned char *src, size_t slen, size_t cap, int follows,
	    int copy)
{
	static unsigned char o1[1 << 17], o2[1 << 17];
	size_t u1, u2, k1, k2, su;
	ssize_t n1, n2, sk;

	sk = rec_dense_skip(src + REC_DENSE_BASE, slen - REC_DENSE_BASE, a);
	cr_assert_geq(sk, 0);
	src += REC_DENSE_BASE + (size_t)sk;
	slen -= REC_DENSE_BASE + (size_t)sk;
	while (a < b) {
		n1 = rec_dense_encode_part(recs + a, b - a, o1, cap, &u1, &k1);
		n2 = copy == 3 ? rec_dense_copy_part_st(recs + a, b - a, src,
		    slen, st_at, st_n, (uint32_t)a, o2, cap, &u2, &su, &k2) :
		    copy ? rec_dense_copy_part(recs + a, b - a, src, slen,
		    copy > 1, o2, cap, &u2, &su, &k2) :
		    rec_dense_recode_part(recs + a, b - a, src, slen, o2, cap,
		    &u2, &su, &k2);
		cr_assert_eq(n1, n2);
		cr_assert_geq(n1, REC_DENSE_BASE);
		cr_assert_eq(u1, u2);
		cr_assert_eq(k1, k2);
		cr_assert_eq(memcmp(o1, o2, (size_t)n1), 0,
		    "recoded differs at record %zu", a);
		cr_assert(u1 > 0);
		a += u1;
		if (!follows) {
			cr_assert_eq(su, SIZE_MAX);
			return;
		}
		cr_assert_neq(su, SIZE_MAX);
		cr_assert_leq(su, slen);
		src += su;
		slen -= su;
	}
}

/* Random records into recs (their bytes returned) and their run into src
 * (*slen bytes; with odd, some records not as the writer writes them):
 * the decoding says which it is. */
static size_t
random_run(unsigned char *recs, size_t cap, unsigned char *src, int odd,
	   size_t *slen)
{
	static unsigned char dec[1 << 17];
	size_t len;
	int made_odd, canon;

	len = random_recs(recs, cap, 1 + rnd() % 400);
	*slen = random_src(recs, len, src, odd, &made_odd);
	cr_assert_eq(rec_dense_decode_canon(src, *slen, dec, sizeof dec,
	    &canon), (ssize_t)len);
	cr_assert_eq(canon & REC_DENSE_CANON, !made_odd);
	return len;
}

Test(dense, recode_writes_what_encode_writes)
{
	static unsigned char recs[1 << 16], src[1 << 17];
	size_t len, slen, a, b, cap;
	int round;

	for (round = 0; round < 3000; round++) {
		len = random_run(recs, sizeof recs, src, 1, &slen);
		convert(recs, len);
		a = boundary(recs, len, rnd() % (len + 1));
		b = boundary(recs, len, a + rnd() % (len - a + 1));
		/* Frames of a few records to whole ones. */
		cap = rnd() % 2 ? 8 + 4 + 16 + 16 * 8 + rnd() % 2000 :
		    sizeof recs;
		same_frames(recs, a, b, src, slen, cap, 1, 0);
	}
}

/* Copied without looking at the records: runs as the writer writes them,
 * every record of a part moved by as much (not the ones before it). */
Test(dense, copy_writes_what_encode_writes)
{
	static unsigned char recs[1 << 16], src[1 << 17];
	size_t len, slen, a, b, cap;
	int round;

	for (round = 0; round < 3000; round++) {
		len = random_run(recs, sizeof recs, src, 0, &slen);
		move_all(recs, len, rnd());
		a = boundary(recs, len, rnd() % (len + 1));
		b = boundary(recs, len, a + rnd() % (len - a + 1));
		/* The records before the part moved otherwise: its first
		 * record's delta changed. */
		move_all(recs, a, rnd() % 2 ? 1 : rnd());
		cap = rnd() % 2 ? 8 + 4 + 16 + 16 * 8 + rnd() % 2000 :
		    sizeof recs;
		same_frames(recs, a, b, src, slen, cap, 1, 1);
	}
}

Test(dense, recode_from_bytes_that_do_not_follow)
{
	static unsigned char recs[1024], other[1024], src[2048];
	uint64_t s[2] = { 1, 2 };
	size_t len = 0, olen = 0, slen;
	int i;

	/* The run's records are of 2 slots, src's of 1 from the third on:
	 * encoded from there, and said. */
	for (i = 0; i < 10; i++) {
		put(recs, &len, 8, 2, 1, 1000 + (uint64_t)i, s, 2);
		put(other, &olen, 8, 2, 1, 1000 + (uint64_t)i, s, i < 2 ? 2 : 1);
	}
	slen = (size_t)rec_dense_encode(other, olen, src, sizeof src);
	same_frames(recs, 0, len, src, slen, sizeof src, 0, 0);
	same_frames(recs, 0, len, src, slen, sizeof src, 0, 1);
	same_frames(recs, 0, len, src, slen, sizeof src, 0, 2);
}

/* Runs of one kind of record (GMI_Event of two ints): said so when
 * decoded, and copied by reckoning rather than walking. */
Test(dense, copy_runs_of_one_length)
{
	static unsigned char recs[1 << 16], src[1 << 17], dec[1 << 17];
	struct rec_hdr h;
	uint64_t s[2], ts, shift;
	size_t len, slen, a, b, cap, off;
	int round, canon, n, i;

	for (round = 0; round < 3000; round++) {
		len = 0;
		ts = rnd();
		n = 1 + (int)(rnd() % 2000);
		for (i = 0; i < n; i++) {
			/* Signed and unsigned forms, one length. */
			if (rnd() % 2) {
				s[0] = (uint64_t)-(int64_t)(rnd() % 100000);
				s[1] = rnd() % 1000;
			} else {
				s[0] = rnd() % 1000;
				s[1] = 0x80000000u | (uint32_t)rnd();
			}
			ts += rnd() % 5000;
			put(recs, &len, REC_CLASS_USER, REC_ATTR_POINT, 1, ts, s,
			    2);
		}
		slen = (size_t)rec_dense_encode(recs, len, src, sizeof src);
		cr_assert_eq(rec_dense_decode_canon(src, slen, dec, sizeof dec,
		    &canon), (ssize_t)len);
		cr_assert_eq(canon, REC_DENSE_CANON | REC_DENSE_ONE);
		shift = rnd();
		a = boundary(recs, len, rnd() % (len + 1));
		b = boundary(recs, len, a + rnd() % (len - a + 1));
		for (off = 0; off < len; off += h.len) {
			memcpy(&h, recs + off, sizeof h);
			h.ts += off < a ? shift + rnd() % 3 : shift;
			memcpy(recs + off, &h, sizeof h);
		}
		cap = rnd() % 2 ? 8 + 4 + 32 + rnd() % 3000 : 65519;
		same_frames(recs, a, b, src, slen, cap, 1, 2);
	}
	/* Not of one: a long record, another eid. */
	len = 0;
	s[0] = 1ull << 40;
	put(recs, &len, 8, 2, 1, 10, s, 2);
	put(recs, &len, 8, 2, 1, 11, s + 1, 1);
	slen = (size_t)rec_dense_encode(recs, len, src, sizeof src);
	rec_dense_decode_canon(src, slen, dec, sizeof dec, &canon);
	cr_assert_eq(canon, REC_DENSE_CANON);
	len = 0;
	put(recs, &len, 8, 2, 1, 10, s + 1, 1);
	put(recs, &len, 8, 2, 2, 11, s + 1, 1);
	slen = (size_t)rec_dense_encode(recs, len, src, sizeof src);
	rec_dense_decode_canon(src, slen, dec, sizeof dec, &canon);
	cr_assert_eq(canon, REC_DENSE_CANON);
}

/* Records in stretches of one header (as a thread tracing a loop writes
 * them: a block begun, events, the block ended), now and then another,
 * meta or long; their bytes. */
static size_t
stretchy_recs(unsigned char *b, size_t cap)
{
	uint64_t s[4], ts = rnd();
	size_t off = 0;
	unsigned i, k, n, kind;

	while (cap - off >= 64 && rnd() % 40 != 0) {
		kind = (unsigned)(rnd() % 5);
		n = 1 + (unsigned)(rnd() % (rnd() % 4 == 0 ? 200 : 8));
		for (k = 0; k < n && cap - off >= 64; k++) {
			ts += rnd() % 1024 == 0 ? (uint64_t)-(int64_t)(rnd() % 50) :
			    k == 0 && rnd() % 8 == 0 ? (1ull << 31) + rnd() % 9 :
			    rnd() % 2000;	/* a stretch after a long one */
			for (i = 0; i < 4; i++)
				s[i] = rnd() % 4 == 0 ? rnd() : rnd() % 1000;
			switch (kind) {
			case 0:
				put(b, &off, REC_CLASS_USER, REC_ATTR_POINT, 1,
				    ts, s, 2);
				break;
			case 1:
				put(b, &off, REC_CLASS_USER, REC_ATTR_POINT,
				    REC_EID_BLOCK_BEGIN, ts, s, 1);
				break;
			case 2:
				put(b, &off, REC_CLASS_META, 1, 5, ts, s, 3);
				break;
			case 3:
				put(b, &off, REC_CLASS_USER, REC_ATTR_POINT,
				    REC_EID_BLOCK_NAME, ts, s, 2);
				break;
			default:
				put(b, &off, 3, 2, 7, ts, s, 4);
			}
		}
	}
	return off;
}

/* What rec_dense_scan says of a run, and what rec_dense_decode_shift
 * writes (mainmon's fast path: a run admitted whole), against the slow
 * path: the run decoded, then each record looked at one by one. */
Test(dense, scan_and_shifted_decode_as_record_by_record)
{
	static unsigned char recs[1 << 16], src[1 << 17], dec[1 << 17],
	    out[1 << 17];
	static uint32_t seg[1 << 14];
	struct rec_dense_info inf;
	struct rec_dense_shift sh;
	struct rec_hdr h, hp;
	uint64_t upto[6], by[6], base, pre, first, last, t;
	uint32_t brk[3], nbrk, nseg, k, kp, i, w, n;
	size_t len, slen, off, sp;
	int round, odd, canon, canon2, mono, lng, plng;

	for (round = 0; round < 3000; round++) {
		len = round % 2 ? stretchy_recs(recs, sizeof recs) :
		    random_recs(recs, sizeof recs, 1 + rnd() % 400);
		slen = random_src(recs, len, src, round % 4 < 2, &odd);
		cr_assert_eq(rec_dense_decode_canon(src, slen, dec, sizeof dec,
		    &canon), (ssize_t)len);
		cr_assert_eq(rec_dense_scan(src, slen, &canon2, &inf),
		    (ssize_t)len);
		cr_assert_eq(canon2, canon);
		/* The same, record by record. */
		memcpy(&base, src, 8);
		pre = 0;
		first = last = 0;
		mono = 1;
		nseg = 0;
		plng = 0;
		memset(&hp, 0, sizeof hp);
		for (off = 0, sp = REC_DENSE_BASE, n = 0; off < len;
		    off += h.len, n++) {
			memcpy(&h, dec + off, sizeof h);
			memcpy(&w, src + sp, 4);
			lng = (w & 3) == 2;
			sp += lng ? 4 + h.len : 8 + (h.len - 16) / 2;
			if (h.eid < 0 && h.eid >= -REC_EID_BIAS)
				pre |= 1ull << (h.eid + REC_EID_BIAS);
			mono &= h.ts >= (n == 0 ? base : last);
			if (n == 0)
				first = h.ts;
			else if (lng || plng || h.len != hp.len ||
			    h.cls != hp.cls || h.attr != hp.attr ||
			    h.eid != hp.eid)
				cr_assert_eq(seg[nseg++] = (uint32_t)off, off);
			last = h.ts;
			hp = h;
			plng = lng;
		}
		cr_assert_eq(sp, slen);
		cr_assert_eq(inf.nrec, n);
		cr_assert_eq(inf.pre, pre);
		cr_assert_eq(inf.mono, mono);
		cr_assert_eq(inf.nseg, nseg);
		if (n > 0) {
			cr_assert_eq(inf.first, first);
			cr_assert_eq(inf.last, last);
		}
		for (off = 0, i = 0; off < len; off += h.len) {
			memcpy(&h, dec + off, sizeof h);
			i += h.cls == REC_CLASS_META;
		}
		cr_assert_eq(inf.nmeta, i);
		/* Shifted by steps: at random times between the first's and
		 * the last's. */
		sh.n = 1 + (uint32_t)(rnd() % 6);
		for (i = 0; i < sh.n; i++) {
			upto[i] = first + (last > first ? rnd() % (last - first +
			    1) : 0);
			for (k = i; k > 0 && upto[k - 1] > upto[k]; k--) {
				t = upto[k];
				upto[k] = upto[k - 1];
				upto[k - 1] = t;
			}
			by[i] = rnd() % 3 == 0 ? rnd() : by[i > 0 ? i - 1 : 0] +
			    rnd() % 3;
		}
		upto[sh.n - 1] = UINT64_MAX;
		sh.upto = upto;
		sh.by = by;
		sh.brk = brk;
		sh.brk_max = 3;
		sh.seg = seg + nseg;
		cr_assert_eq(rec_dense_decode_shift(src, slen, out, sizeof out,
		    &sh), (ssize_t)len);
		cr_assert_eq(memcmp(seg, seg + nseg, 4 * (size_t)nseg), 0);
		for (off = 0, k = 0, kp = 0, nbrk = 0; off < len; off += h.len) {
			memcpy(&h, dec + off, sizeof h);
			while (k + 1 < sh.n && h.ts > upto[k])
				k++;
			if (off > 0 && by[k] != by[kp] && nbrk <= 3) {
				if (nbrk < 3)
					cr_assert_eq(brk[nbrk], off);
				nbrk++;
			}
			kp = k;
			h.ts += by[k];
			memcpy(dec + off, &h, sizeof h);
		}
		cr_assert_eq(sh.nbrk, nbrk);
		cr_assert_eq(memcmp(out, dec, len), 0);
	}
}

/* A scan takes the records after one of the same word at once: what it
 * says of them must still be what the decoding says, wherever in such a
 * stretch the one that differs is (a time back, an unsigned slot that
 * the encoder would have written signed). */
Test(dense, scan_of_a_stretch_of_one_word)
{
	static unsigned char recs[1 << 12], src[1 << 13], dec[1 << 13];
	struct rec_dense_info inf;
	uint64_t s[2], ts;
	size_t len, slen, at, sp;
	int canon, canon2, i, n, what;
	int32_t d;

	for (n = 2; n < 40; n++)
		for (what = 0; what < 3; what++) {
			len = 0;
			ts = 1000000;
			for (i = 0; i < n; i++) {
				s[0] = 0x80000000u + (uint64_t)i;
				s[1] = 0xffffffffu - (uint64_t)i;
				ts += 100 + (uint64_t)i;
				put(recs, &len, REC_CLASS_USER,
				    REC_ATTR_POINT, 9, ts, s, 2);
			}
			slen = (size_t)rec_dense_encode(recs, len, src,
			    sizeof src);
			cr_assert_eq(slen, REC_DENSE_BASE + 16 * (size_t)n);
			/* Record at (1 to n-1), after the first: changed in
			 * the run, its word kept. */
			at = 1 + (size_t)(n * 7 + what) % (size_t)(n - 1);
			sp = REC_DENSE_BASE + 16 * at;
			if (what == 0) {		/* back in time */
				d = -5;
				memcpy(src + sp + 4, &d, 4);
			} else if (what == 1) {		/* fits signed */
				memset(src + sp + 8, 0, 8);
			}
			cr_assert_eq(rec_dense_decode_canon(src, slen, dec,
			    sizeof dec, &canon), (ssize_t)len);
			cr_assert_eq(rec_dense_scan(src, slen, &canon2, &inf),
			    (ssize_t)len);
			cr_assert_eq(canon2, canon, "n %d what %d", n, what);
			cr_assert_eq(canon & REC_DENSE_CANON,
			    what == 1 ? 0 : REC_DENSE_CANON);
			cr_assert_eq(inf.mono, what != 0, "n %d what %d", n,
			    what);
			cr_assert_eq(inf.nrec, (uint32_t)n);
			cr_assert_eq(inf.nseg, 0);
			cr_assert_eq(inf.first, 1000100);
			cr_assert_eq(inf.last, ts - (what == 0 ?
			    100 + at + 5 : 0));
			/* Cut short inside the stretch: malformed. */
			cr_assert_eq(rec_dense_scan(src, slen - 4, &canon2,
			    &inf), -1);
		}
}

/* Appends a short record of two slots (eid 1, signed) to a run. */
static size_t
put_short(unsigned char *b, size_t pos, int32_t d, uint32_t a, uint32_t c)
{
	uint32_t w = 2u << 2 | (uint32_t)(1 + REC_EID_BIAS) << 14;

	memcpy(b + pos, &w, 4);
	memcpy(b + pos + 4, &d, 4);
	memcpy(b + pos + 8, &a, 4);
	memcpy(b + pos + 12, &c, 4);
	return pos + 16;
}

static size_t
put_switch(unsigned char *b, size_t pos, uint32_t tid)
{
	uint32_t w = REC_DENSE_SW_THREAD;

	memcpy(b + pos, &w, 4);
	memcpy(b + pos + 4, &tid, 4);
	return pos + 8;
}

/* Switches (a D frame's run in a version-4 binary file): read where they
 * lie, each record's time still from the one before it in the run;
 * refused first, last, two in a row, cut short, beyond the room given,
 * of an unknown word, and by a reader of runs without them. */
Test(dense, thread_switches)
{
	unsigned char run[256], dec[512];
	struct rec_dense_sw sw[4];
	struct rec_hdr h;
	uint64_t base = 1000;
	size_t pos, nsw, good;
	ssize_t n;

	memcpy(run, &base, 8);
	pos = put_short(run, 8, 0, 1, 2);
	pos = put_short(run, pos, 10, 3, 4);
	pos = put_switch(run, pos, 4242);
	pos = put_short(run, pos, -3, 5, 6);
	pos = put_switch(run, pos, 17);
	pos = put_short(run, pos, 20, 7, 8);
	good = pos;
	n = rec_dense_decode_sw(run, good, dec, sizeof dec, sw, 4, &nsw);
	cr_assert_eq(n, 4 * 32);
	cr_assert_eq(nsw, 2);
	cr_assert_eq(sw[0].off, 64);
	cr_assert_eq(sw[0].tid, 4242);
	cr_assert_eq(sw[1].off, 96);
	cr_assert_eq(sw[1].tid, 17);
	memcpy(&h, dec + 64, sizeof h);
	cr_assert_eq(h.ts, 1007);	/* 1000 + 10 - 3 */
	memcpy(&h, dec + 96, sizeof h);
	cr_assert_eq(h.ts, 1027);
	cr_assert_eq(h.eid, 1);
	/* Not in a run of one thread. */
	cr_assert_eq(rec_dense_decode(run, good, dec, sizeof dec), -1);
	cr_assert_eq(rec_dense_len(run, good), -1);
	/* More switches than room: refused. */
	cr_assert_eq(rec_dense_decode_sw(run, good, dec, sizeof dec, sw, 1,
	    &nsw), -1);
	/* Cut short in a switch; a switch last. */
	cr_assert_eq(rec_dense_decode_sw(run, good - 16 - 4, dec, sizeof dec,
	    sw, 4, &nsw), -1);
	cr_assert_eq(rec_dense_decode_sw(run, good - 16, dec, sizeof dec, sw,
	    4, &nsw), -1);
	/* Two in a row. */
	pos = put_switch(run, good, 5);
	pos = put_switch(run, pos, 6);
	pos = put_short(run, pos, 1, 0, 0);
	cr_assert_eq(rec_dense_decode_sw(run, pos, dec, sizeof dec, sw, 4,
	    &nsw), -1);
	/* First. */
	pos = put_switch(run, 8, 9);
	pos = put_short(run, pos, 1, 0, 0);
	cr_assert_eq(rec_dense_decode_sw(run, pos, dec, sizeof dec, sw, 4,
	    &nsw), -1);
	/* None: as rec_dense_decode. */
	pos = put_short(run, 8, 1, 0, 0);
	cr_assert_eq(rec_dense_decode_sw(run, pos, dec, sizeof dec, sw, 4,
	    &nsw), 32);
	cr_assert_eq(nsw, 0);
	/* Another process, another host: as rec_dense_sw_put writes them,
	 * the shortest that says what changed. */
	cr_assert_eq(rec_dense_sw_put(run, 1, 2, 3, 1, 2, 3), 0);
	cr_assert_eq(rec_dense_sw_put(run, 1, 2, 3, 1, 2, 4), 8);
	pos = put_short(run, 8, 1, 0, 0);
	pos += rec_dense_sw_put(run + pos, 1, 2, 3, 1, 9, 3);
	pos = put_short(run, pos, 5, 0, 0);
	pos += rec_dense_sw_put(run + pos, 1, 9, 3, 6, 9, 3);
	pos = put_short(run, pos, 5, 0, 0);
	cr_assert_eq(pos, 8 + 16 + 12 + 16 + 16 + 16);
	cr_assert_eq(rec_dense_decode_sw(run, pos, dec, sizeof dec, sw, 4,
	    &nsw), 96);
	cr_assert_eq(nsw, 2);
	cr_assert(sw[0].off == 32 && sw[0].word == REC_DENSE_SW_PROC &&
	    sw[0].node == 0 && sw[0].pid == 9 && sw[0].tid == 3);
	cr_assert(sw[1].off == 64 && sw[1].word == REC_DENSE_SW_HOST &&
	    sw[1].node == 6 && sw[1].pid == 9 && sw[1].tid == 3);
	/* The host's switch cut short (its 16 bytes are 12). */
	cr_assert_eq(rec_dense_decode_sw(run, pos - 16 - 4, dec, sizeof dec,
	    sw, 4, &nsw), -1);
	/* A word of form 3 that is no switch. */
	run[8 + 16 + 12 + 16] = 15;
	cr_assert_eq(rec_dense_decode_sw(run, pos, dec, sizeof dec, sw, 4,
	    &nsw), -1);
}

/* A frame continued (rec_dense_encode_cont from records,
 * rec_dense_frame_cont from their run, times moved): what encoding the
 * records before and these in one run writes after the records before,
 * wherever the cut. */
Test(dense, frame_continued_as_one_run)
{
	static unsigned char recs[400 * 32], run[sizeof recs * 2],
	    one[sizeof recs * 2], out[sizeof recs * 2], moved[sizeof recs];
	static const uint64_t upto[2] = { 1000000 + 3000, UINT64_MAX };
	static const uint64_t by[2] = { 70, 71 };
	struct rec_dense_shift sh = { 2, upto, by, NULL, 0, 0, NULL };
	struct rec_hdr h;
	uint64_t s[2], ts = 1000000, prev, last, t;
	size_t len = 0, rlen, olen, cut, a, sp, used, su, nrec, n1;
	ssize_t n;
	unsigned i;

	for (i = 0; i < 400; i++) {
		s[0] = i;
		s[1] = i % 11 == 0 ? 1ull << 40 : (uint64_t)-(int64_t)i;
		ts += i % 50 == 0 ? (3ull << 30) : 17 + i % 5;
		put(recs, &len, REC_CLASS_USER, REC_ATTR_POINT, 1, ts, s, 2);
	}
	rlen = (size_t)rec_dense_encode(recs, len, run, sizeof run);
	cr_assert_eq(rec_dense_decode_shift(run, rlen, moved, sizeof moved,
	    &sh), (ssize_t)len);
	olen = (size_t)rec_dense_encode(moved, len, one, sizeof one);
	for (cut = 32; cut < len; cut += 32 * (1 + cut / 320)) {
		/* The records before the cut, then the rest continued. */
		n = rec_dense_encode_part(moved, cut, out, sizeof out, &used,
		    &nrec);
		cr_assert_eq(used, cut);
		n1 = (size_t)n;
		memcpy(&h, moved + cut - 32, sizeof h);
		t = h.ts;
		n = rec_dense_encode_cont(moved + cut, len - cut, &t, out + n1,
		    sizeof out - n1, &used, &nrec);
		cr_assert_eq(used, len - cut);
		cr_assert_eq(n1 + (size_t)n, olen);
		cr_assert_eq(memcmp(out, one, olen), 0, "cut %zu", cut);
		memcpy(&h, moved + len - 32, sizeof h);
		cr_assert_eq(t, h.ts);
		/* The same from the run. */
		sp = REC_DENSE_BASE + (size_t)rec_dense_skip(run +
		    REC_DENSE_BASE, rlen - REC_DENSE_BASE, cut);
		memcpy(&h, recs + cut - 32, sizeof h);
		prev = h.ts;
		memcpy(&h, moved + cut - 32, sizeof h);
		t = h.ts;
		memset(out + n1, 0, sizeof out - n1);
		for (a = cut; a < len; a += used, sp += su) {
			n = rec_dense_frame_cont(run + sp, rlen - sp, prev, &sh,
			    NULL, len - a, &t, out + n1, sizeof out - n1,
			    &used, &su, &nrec, &last);
			cr_assert_gt(used, 0);
			n1 += (size_t)n;
			prev = last;
			memcpy(&h, moved + a + used - 32, sizeof h);
			t = h.ts;
		}
		cr_assert_eq(n1, olen);
		cr_assert_eq(memcmp(out, one, olen), 0, "run, cut %zu", cut);
	}
}

/* Stretches of one kind of record copied whole (rec_dense_copy_part_st,
 * told where they begin as the decoding says): the frames encoding
 * writes, from any record on, frames of any size. */
Test(dense, copy_stretches_writes_what_encode_writes)
{
	static unsigned char recs[1 << 16], src[1 << 17], dec[1 << 17];
	static const uint64_t all = UINT64_MAX, none = 0;
	struct rec_dense_shift sh = { 1, &all, &none, NULL, 0, 0, st_at };
	struct rec_dense_info inf;
	size_t len, slen, a, b, cap;
	int round, canon;

	for (round = 0; round < 3000; round++) {
		len = stretchy_recs(recs, sizeof recs);
		slen = (size_t)rec_dense_encode(recs, len, src, sizeof src);
		cr_assert_eq(rec_dense_scan(src, slen, &canon, &inf),
		    (ssize_t)len);
		cr_assert_lt(inf.nseg, sizeof st_at / sizeof st_at[0]);
		cr_assert_eq(rec_dense_decode_shift(src, slen, dec, sizeof dec,
		    &sh), (ssize_t)len);
		st_n = inf.nseg;
		move_all(recs, len, rnd());
		a = boundary(recs, len, rnd() % (len + 1));
		b = boundary(recs, len, a + rnd() % (len - a + 1));
		cap = rnd() % 2 ? 8 + 4 + 16 + 16 * 8 + rnd() % 2000 :
		    sizeof recs;
		same_frames(recs, a, b, src, slen, cap, 1, 3);
	}
}

/* A run's records written from the run alone (rec_dense_frame: mainmon's
 * runs never decoded), their times moved by steps: the frames encoding
 * the records decoded writes, from any record on, frames of any size. */
Test(dense, frames_from_the_run_alone_as_encode_writes)
{
	static unsigned char recs[1 << 16], src[1 << 17], dec[1 << 17],
	    moved[1 << 17], o1[1 << 17], o2[1 << 17];
	static const uint64_t all = UINT64_MAX, none = 0;
	struct rec_dense_shift sh = { 1, &all, &none, NULL, 0, 0, NULL };
	static struct rec_dense_seg seg[1 << 14];
	struct rec_dense_segs sg;
	struct rec_dense_info inf;
	struct rec_hdr h;
	uint64_t upto[4], by[4], prev, last, t;
	size_t len, slen, a, b, off, sp, cap, u1, u2, su, n1, n2;
	ssize_t r1, r2;
	uint32_t i, k;
	int round, tried = 0;

	for (round = 0; round < 3000; round++) {
		len = round % 2 ? stretchy_recs(recs, sizeof recs) :
		    random_recs(recs, sizeof recs, 1 + rnd() % 400);
		slen = (size_t)rec_dense_encode(recs, len, src, sizeof src);
		cr_assert_eq(rec_dense_scan_st(src, slen, NULL, &inf, seg,
		    1 << 14), (ssize_t)len);
		if (!inf.mono || len == 0)
			continue;
		/* Where the stretches begin told, or not. */
		sg.at = seg;
		sg.n = round % 3 ? inf.nseg : 0;
		sg.end = (uint32_t)slen;
		sg.last = inf.last;
		cr_assert_eq(rec_dense_decode(src, slen, dec, sizeof dec),
		    (ssize_t)len);
		/* Steps of a nanosecond or a jump, at random times. */
		sh.n = 1 + (uint32_t)(rnd() % 4);
		for (i = 0; i < sh.n; i++) {
			upto[i] = inf.first + (inf.last > inf.first ?
			    rnd() % (inf.last - inf.first + 1) : 0);
			for (k = i; k > 0 && upto[k - 1] > upto[k]; k--) {
				t = upto[k];
				upto[k] = upto[k - 1];
				upto[k - 1] = t;
			}
			by[i] = rnd() % 4 == 0 ? rnd() : (i > 0 ? by[i - 1] :
			    rnd()) + rnd() % 3;
		}
		upto[sh.n - 1] = UINT64_MAX;
		sh.upto = upto;
		sh.by = by;
		cr_assert_eq(rec_dense_decode_shift(src, slen, moved,
		    sizeof moved, &sh), (ssize_t)len);
		/* From a record a to a record b, frames of random sizes. */
		a = boundary(dec, len, rnd() % len);
		if (a == len)
			continue;
		b = boundary(dec, len, a + 1 + rnd() % (len - a));
		sp = REC_DENSE_BASE + (size_t)rec_dense_skip(src +
		    REC_DENSE_BASE, slen - REC_DENSE_BASE, a);
		memcpy(&prev, src, 8);
		if (a > 0) {
			for (off = 0; off < a; off += h.len)
				memcpy(&h, dec + off, sizeof h);
			prev = h.ts;
		}
		for (off = a; off < b; off += u1) {
			cap = rnd() % 2 ? REC_DENSE_BASE + rnd() % 300 :
			    sizeof o1;
			r1 = rec_dense_encode_part(moved + off, b - off, o1, cap,
			    &u1, &n1);
			sg.base = (uint32_t)sp;
			r2 = rec_dense_frame_st(src + sp, slen - sp, prev, &sh,
			    &sg, b - off, o2, cap, &u2, &su, &n2, &last);
			cr_assert_eq(r2, r1, "round %d", round);
			cr_assert_eq(u2, u1);
			cr_assert_eq(n2, n1);
			cr_assert_eq(memcmp(o1, o2, (size_t)r1), 0,
			    "round %d", round);
			if (u1 == 0)
				break;
			sp += su;
			cr_assert_eq(su, (size_t)rec_dense_skip(src + sp - su,
			    slen - sp + su, u1));
			for (k = 0; k < u1; k += h.len)
				memcpy(&h, dec + off + k, sizeof h);
			cr_assert_eq(last, h.ts);
			prev = last;
		}
		tried++;
	}
	cr_assert_gt(tried, 500, "%d runs tried", tried);
}

/* The stretch a place is in (rec_dense_seg_end, galloping and
 * bisecting): what a walk of the beginnings one by one finds, from any
 * beginning on, for places that only grow (a frame's walk) and for one
 * place far into the run (a short piece of it, looked at from 0). */
Test(dense, stretch_end_as_walking_the_beginnings)
{
	static struct rec_dense_seg at[600];
	struct rec_dense_segs sg;
	uint32_t n, i, si, sj, e1, e2, from;
	uint64_t t1, t2;
	size_t sp;
	int round, q;

	for (round = 0; round < 3000; round++) {
		n = rnd() % 600;
		for (i = 0, sp = 4 + rnd() % 40; i < n; i++) {
			at[i].sp = (uint32_t)sp;
			at[i].off = (uint32_t)(2 * sp);
			at[i].prev = 1000 + i;
			sp += 4 + 4 * (rnd() % (i % 7 == 0 ? 300 : 3));
		}
		sg = (struct rec_dense_segs){ at, n, (uint32_t)sp + 100, 77,
			0 };
		from = n > 0 ? rnd() % (n + 1) : 0;
		si = from;
		sp = from < n && from > 0 ? at[from - 1].sp : 0;
		for (q = 0; q < 20; q++) {
			sp += rnd() % (q % 5 == 0 ? 5000 : 20);
			sj = si;
			while (sj < n && at[sj].sp <= sp)
				sj++;
			e1 = sj < n ? at[sj].sp : sg.end;
			t1 = sj < n ? at[sj].prev : sg.last;
			e2 = rec_dense_seg_end(&sg, &si, sp, &t2);
			cr_assert_eq(si, sj);
			cr_assert_eq(e2, e1);
			cr_assert_eq(t2, t1);
		}
	}
}

/* recs[0..len) with, after some records, more of the same kind (the same
 * first 8 bytes: length, class, attribute, eid), their times and slots
 * changed, as a program's loop writes them; the new length. */
static size_t
same_kind(unsigned char *recs, size_t len, size_t cap)
{
	static unsigned char out[1 << 16];
	size_t off = 0, o = 0, j;
	uint64_t ts, v;
	uint16_t l;
	unsigned k, n;

	while (off < len) {
		memcpy(&l, recs + off, 2);
		if (o + l > cap)
			break;
		memcpy(out + o, recs + off, l);
		o += l;
		for (n = (unsigned)(rnd() % 4 == 0 ? rnd() % 40 : 0), k = 0;
		    k < n && o + l <= cap; k++) {
			memcpy(out + o, out + o - l, l);
			memcpy(&ts, out + o + 8, 8);
			ts += rnd() % 8 == 0 ? rnd() : rnd() % 3000;
			memcpy(out + o + 8, &ts, 8);
			for (j = 16; j < l; j += 8)
				if (rnd() % 3 == 0) {
					v = rnd() % 5 == 0 ? rnd() :
					    rnd() % 2 ? rnd() % 1000 :
					    (uint64_t)-(int64_t)(rnd() % 9);
					memcpy(out + o + j, &v, 8);
				}
			o += l;
		}
		off += l;
	}
	memcpy(recs, out, o);
	return o;
}

/* The records checked and encoded in one pass (the Local Monitor's): the
 * bytes and flag of rec_valid_prefix_meta, then rec_dense_encode, for
 * runs whose tail is malformed in each way the check knows. */
Test(dense, encode_valid_as_check_then_encode)
{
	static unsigned char recs[1 << 16], a[REC_DENSE_MAX(1 << 16)],
	    b[REC_DENSE_MAX(1 << 16)];
	size_t len, used, ok, at, cut;
	int meta, vmeta, round, how, seen[7] = { 0 };
	uint16_t l;
	ssize_t n, m;

	for (round = 0; round < 3000; round++) {
		len = random_recs(recs, sizeof recs - 64,
		    1 + (unsigned)(rnd() % (rnd() % 2 ? 4 : 300)));
		if (rnd() % 2)
			len = same_kind(recs, len, sizeof recs - 64);
		at = boundary(recs, len, rnd() % (len + 1));
		how = (int)(rnd() % 7);
		seen[how] = 1;
		l = 0;
		switch (how) {
		case 0:		/* all well formed */
			break;
		case 1:		/* a record cut short, or its header */
			if (at < len) {
				memcpy(&l, recs + at, 2);
				cut = 1 + rnd() % (l - 1);
				len = at + cut;
			}
			break;
		case 2:		/* shorter than a header */
			l = (uint16_t)(8 * (rnd() % 2));
			break;
		case 3:		/* not a multiple of 8 */
			l = (uint16_t)(16 + 1 + rnd() % 7);
			break;
		case 4:		/* longer than REC_MAX */
			l = REC_MAX + 8;
			break;
		case 5:		/* past the end */
			l = (uint16_t)(((len - at) / 8 + 1) * 8);
			break;
		case 6:		/* the first record, or a record of zeros */
			if (rnd() % 2) {
				at = 0;
				l = 8;
			} else if (at + 16 <= len) {
				memset(recs + at, 0, 16);
			}
			break;
		}
		if (how >= 2 && at < len)
			memcpy(recs + at, &l, 2);
		ok = rec_valid_prefix_meta(recs, len, &vmeta);
		if (how >= 1 && at < len)
			cr_assert_eq(ok, at);
		n = rec_dense_encode_valid(recs, len, a, sizeof a, &used,
		    &meta);
		cr_assert_eq(used, ok);
		cr_assert_eq(meta, vmeta);
		if (ok == 0) {
			cr_assert_eq(n, 0);
			continue;
		}
		m = rec_dense_encode(recs, ok, b, sizeof b);
		cr_assert_eq(n, m);
		cr_assert_eq(memcmp(a, b, (size_t)n), 0);
	}
	for (how = 0; how < 7; how++)
		cr_assert(seen[how]);
	/* Too little room for the worst case: refused, not cut. */
	len = random_recs(recs, sizeof recs - 64, 10);
	errno = 0;
	cr_assert_eq(rec_dense_encode_valid(recs, len, a,
	    REC_DENSE_MAX(len) - 1, &used, &meta), -1);
	cr_assert_eq(errno, EMSGSIZE);
}
