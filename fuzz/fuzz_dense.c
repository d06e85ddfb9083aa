/* SPDX-License-Identifier: MIT */
/* fuzz_dense.c: libFuzzer target for the dense encoding of records
 * (common/rec/dense.c, doc/formats.md 2.6).
 *
 * Input: any bytes, read two ways.
 *  - As a dense run: rec_dense_len and rec_dense_decode must agree (both
 *    fail, or give the same length); what decodes is whole, well-formed
 *    records, at most twice the run's bytes; encoded again and decoded,
 *    it gives the same records back.
 *  - As records: their well-formed prefix (rec_valid_prefix) is encoded,
 *    within REC_DENSE_MAX, and must decode to exactly those bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "rec/dense.h"
#include "rec/rec.h"

/* recs[0..len), well formed: encoded then decoded gives them back. */
static void
round_trip(const unsigned char *recs, size_t len)
{
	size_t cap = REC_DENSE_MAX(len);
	unsigned char *enc, *dec;
	ssize_t n, m;

	CHECK((enc = malloc(cap)) != NULL);
	CHECK((dec = malloc(len + 1)) != NULL);
	n = rec_dense_encode(recs, len, enc, cap);
	CHECK(n >= REC_DENSE_BASE && (size_t)n <= cap && n % 4 == 0);
	CHECK(rec_dense_len(enc, (size_t)n) == (ssize_t)len);
	m = rec_dense_decode(enc, (size_t)n, dec, len);
	CHECK(m == (ssize_t)len);
	CHECK(memcmp(dec, recs, len) == 0);
	free(enc);
	free(dec);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t cap = REC_DENSE_OUT_MAX(size), ok;
	unsigned char *out;
	ssize_t n, m;

	/* As a dense run. */
	CHECK((out = malloc(cap + 1)) != NULL);
	n = rec_dense_len(data, size);
	m = rec_dense_decode(data, size, out, cap);
	CHECK(n == m);
	if (m >= 0) {
		CHECK((size_t)m <= cap);
		CHECK(rec_valid_prefix(out, (size_t)m) == (size_t)m);
		if (m > 0)
			round_trip(out, (size_t)m);
		/* One byte short of room: refused, not overrun. */
		if (m > 0)
			CHECK(rec_dense_decode(data, size, out,
			    (size_t)m - 1) == -1);
	}
	free(out);

	/* As records. */
	ok = rec_valid_prefix(data, size);
	if (ok > 0)
		round_trip(data, ok);
	return 0;
}
