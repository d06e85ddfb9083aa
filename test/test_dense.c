/* SPDX-License-Identifier: MIT */
/* test_dense.c: the dense encoding of record runs (common/rec/dense.c,
 * doc/formats.md 2.6): sizes, forms, round trips, malformed runs. */
#include <criterion/criterion.h>
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
