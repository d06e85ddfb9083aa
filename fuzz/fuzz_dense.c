/* SPDX-License-Identifier: MIT */
/* fuzz_dense.c: libFuzzer target for the dense encoding of records
 * (common/rec/dense.c, doc/formats.md 2.6).
 *
 * Input: any bytes, read two ways.
 *  - As a dense run: rec_dense_len, rec_dense_decode and rec_dense_scan
 *    (mainmon's check on arrival, which also says what
 *    rec_dense_decode_canon does of the run) must agree (all fail, or
 *    give the same length); what decodes is whole, well-formed
 *    records, at most twice the run's bytes; encoded again and decoded,
 *    it gives the same records back.
 *    Written again in frames from the run's own bytes
 *    (rec_dense_recode_part; rec_dense_copy_part when the decoding says
 *    it is canonical, told of one length when it says so), it gives what
 *    encoding the records gives.
 *  - As a D frame's run of a version-4 binary file (rec_dense_decode_sw):
 *    without a switch it is what rec_dense_decode says; with some, they
 *    lie between whole records, in order, and encoding the records with
 *    them (rec_dense_put, each switch's word and ids before the records
 *    it applies to) and decoding that again gives the same records and
 *    switches.
 *  - As records: their well-formed prefix (rec_valid_prefix) is encoded,
 *    within REC_DENSE_MAX, and must decode to exactly those bytes; checked
 *    and encoded in one pass (rec_dense_encode_valid, the Local
 *    Monitor's), the same prefix, META flag and bytes.
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

/* recs[0..len), decoded from run[0..n) (flags: rec_dense_decode_canon's),
 * in frames of cap bytes made from the run (mode 0: recode, 1: copy, 2:
 * copy of one length, 3: from the run alone, its stretches told, the run
 * canonical and its times not going back): the frames encoding gives. */
static void
frames(const unsigned char *run, size_t n, const unsigned char *recs,
       size_t len, size_t cap, int mode)
{
	static const uint64_t all = UINT64_MAX, none = 0;
	struct rec_dense_shift sh = { 1, &all, &none, NULL, 0, 0, NULL };
	struct rec_dense_segs sg = { NULL, 0, (uint32_t)n, 0, 0 };
	struct rec_dense_seg *seg = NULL;
	struct rec_dense_info inf;
	unsigned char *o1, *o2;
	size_t a = 0, sp = REC_DENSE_BASE, u1, u2, k1, k2, su;
	uint64_t prev = 0, last = 0;
	ssize_t n1, n2;

	CHECK((o1 = malloc(cap)) != NULL && (o2 = malloc(cap)) != NULL);
	if (mode == 3) {
		CHECK(rec_dense_scan(run, n, NULL, &inf) == (ssize_t)len);
		CHECK((seg = malloc(sizeof *seg * (inf.nseg + 1))) != NULL);
		CHECK(rec_dense_scan_st(run, n, NULL, &inf, seg, inf.nseg) ==
		    (ssize_t)len);
		sg.at = seg;
		sg.n = inf.nseg;
		sg.last = inf.last;
		memcpy(&prev, run, 8);
	}
	while (a < len) {
		n1 = rec_dense_encode_part(recs + a, len - a, o1, cap, &u1, &k1);
		sg.base = (uint32_t)sp;
		n2 = mode == 3 ? rec_dense_frame_st(run + sp, n - sp, prev, &sh,
		    &sg, len - a, o2, cap, &u2, &su, &k2, &last) :
		    mode == 0 ? rec_dense_recode_part(recs + a, len - a,
		    run + sp, n - sp, o2, cap, &u2, &su, &k2) :
		    rec_dense_copy_part(recs + a, len - a, run + sp, n - sp,
		    mode == 2, o2, cap, &u2, &su, &k2);
		prev = last;
		CHECK(n1 == n2 && n1 >= REC_DENSE_BASE && u1 == u2 &&
		    k1 == k2 && u1 > 0);
		CHECK(memcmp(o1, o2, (size_t)n1) == 0);
		CHECK(su != SIZE_MAX && su <= n - sp);
		a += u1;
		sp += su;
	}
	free(seg);
	free(o1);
	free(o2);
}

/* run[0..size) read with thread switches; m what rec_dense_decode said
 * of it, out its records then. */
#define SW_MAX	64
static void
switches(const unsigned char *run, size_t size, ssize_t m,
	 const unsigned char *out)
{
	static struct rec_dense_sw sw[SW_MAX], sw2[SW_MAX];
	size_t cap = REC_DENSE_OUT_MAX(size), nsw, nsw2, off, pos, i;
	unsigned char *dec, *enc, *dec2;
	struct rec_dense_enc e;
	struct rec_hdr h;
	ssize_t k;

	CHECK((dec = malloc(cap + 1)) != NULL);
	k = rec_dense_decode_sw(run, size, dec, cap, sw, SW_MAX, &nsw);
	if (m >= 0) {
		/* A run without a switch reads the same. */
		CHECK(k == m && nsw == 0);
		CHECK(memcmp(dec, out, (size_t)m) == 0);
	}
	if (k <= 0 || nsw == 0) {
		CHECK(k < 0 || nsw == 0);
		free(dec);
		return;
	}
	CHECK(rec_valid_prefix(dec, (size_t)k) == (size_t)k);
	for (i = 0; i < nsw; i++) {
		CHECK(sw[i].off > 0 && sw[i].off < (size_t)k);
		CHECK(i == 0 || sw[i].off > sw[i - 1].off);
		CHECK(rec_valid_prefix(dec, sw[i].off) == sw[i].off);
	}
	CHECK((enc = malloc(REC_DENSE_MAX((size_t)k) + REC_DENSE_SW_MAX *
	    nsw)) != NULL);
	CHECK((dec2 = malloc((size_t)k)) != NULL);
	memcpy(&h, dec, sizeof h);
	pos = rec_dense_begin(&e, enc, h.ts);
	for (off = 0, i = 0; off < (size_t)k; off += h.len) {
		memcpy(&h, dec + off, sizeof h);
		if (i < nsw && sw[i].off == off) {
			/* As it came: its word, the ids it gives. */
			memcpy(enc + pos, &sw[i].word, 4);
			pos += 4;
			if (sw[i].word == REC_DENSE_SW_HOST) {
				memcpy(enc + pos, &sw[i].node, 4);
				pos += 4;
			}
			if (sw[i].word != REC_DENSE_SW_THREAD) {
				memcpy(enc + pos, &sw[i].pid, 4);
				pos += 4;
			}
			memcpy(enc + pos, &sw[i].tid, 4);
			pos += 4;
			i++;
		}
		pos += rec_dense_put(&e, dec + off, h.len, enc + pos);
	}
	CHECK(rec_dense_decode_sw(enc, pos, dec2, (size_t)k, sw2, SW_MAX,
	    &nsw2) == k);
	CHECK(nsw2 == nsw && memcmp(sw, sw2, nsw * sizeof *sw) == 0);
	CHECK(memcmp(dec, dec2, (size_t)k) == 0);
	/* Without switches allowed: refused. */
	CHECK(rec_dense_decode(enc, pos, dec2, (size_t)k) == -1);
	free(enc);
	free(dec2);
	free(dec);
}

/* recs[0..len), not checked: checked and encoded in one pass as checked
 * then encoded. */
static void
as_unchecked(const unsigned char *recs, size_t len)
{
	size_t cap = REC_DENSE_MAX(len), ok, used;
	unsigned char *a, *b;
	int meta, vmeta;
	ssize_t n;

	CHECK((a = malloc(cap)) != NULL);
	CHECK((b = malloc(cap)) != NULL);
	ok = rec_valid_prefix_meta(recs, len, &vmeta);
	n = rec_dense_encode_valid(recs, len, a, cap, &used, &meta);
	CHECK(used == ok && meta == vmeta);
	if (ok == 0)
		CHECK(n == 0);
	else {
		CHECK(rec_dense_encode(recs, ok, b, cap) == n);
		CHECK(memcmp(a, b, (size_t)n) == 0);
	}
	if (len > 0)
		CHECK(rec_dense_encode_valid(recs, len, a, cap - 1, &used,
		    &meta) == -1);
	free(a);
	free(b);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t cap = REC_DENSE_OUT_MAX(size), ok, fcap;
	struct rec_dense_info inf;
	unsigned char *out;
	ssize_t n, m;
	int canon, canon2;

	/* As a dense run. */
	CHECK((out = malloc(cap + 1)) != NULL);
	n = rec_dense_len(data, size);
	m = rec_dense_decode(data, size, out, cap);
	CHECK(n == m);
	/* mainmon's check of a DATA on arrival: the decoding's answer. */
	CHECK(rec_dense_scan(data, size, &canon2, &inf) == m);
	if (m >= 0) {
		CHECK((size_t)m <= cap);
		CHECK(rec_valid_prefix(out, (size_t)m) == (size_t)m);
		CHECK(rec_dense_decode_canon(data, size, out, cap, &canon) ==
		    m);
		CHECK(canon2 == canon);
		CHECK(inf.nseg < inf.nrec || inf.nrec == 0);
		for (fcap = REC_DENSE_BASE + 4 + REC_MAX; m > 0;
		    fcap = REC_DENSE_MAX((size_t)m)) {
			frames(data, size, out, (size_t)m, fcap, 0);
			if (canon & REC_DENSE_CANON)
				frames(data, size, out, (size_t)m, fcap, 1);
			if (canon == (REC_DENSE_CANON | REC_DENSE_ONE))
				frames(data, size, out, (size_t)m, fcap, 2);
			if ((canon & REC_DENSE_CANON) && inf.mono)
				frames(data, size, out, (size_t)m, fcap, 3);
			if (fcap == REC_DENSE_MAX((size_t)m))
				break;
		}
		if (m > 0)
			round_trip(out, (size_t)m);
		/* One byte short of room: refused, not overrun. */
		if (m > 0)
			CHECK(rec_dense_decode(data, size, out,
			    (size_t)m - 1) == -1);
	}
	switches(data, size, m, out);
	free(out);

	/* As records. */
	ok = rec_valid_prefix(data, size);
	if (ok > 0)
		round_trip(data, ok);
	as_unchecked(data, size);
	return 0;
}
