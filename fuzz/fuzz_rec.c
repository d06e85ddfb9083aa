/* SPDX-License-Identifier: MIT */
/* fuzz_rec.c: libFuzzer target for the binary record code (rec.c):
 * rec_valid_prefix, rec_parse_define, rec_build_define, rec_parse_format
 * and rec_decode.
 *
 * Input: <format bytes> NUL <record bytes>.  The format is the bytes before
 * the first NUL (at most FMT_SCAN of them; without a NUL in that range, the
 * first FMT_SCAN bytes); the records are the bytes after it.
 *
 *  - rec_valid_prefix and rec_parse_define run over the whole input and
 *    over the record part; every definition that parses is rebuilt with
 *    rec_build_define and must parse back to the same definition.
 *  - The format is parsed; if it parses, the record part is decoded with
 *    it, and the result must agree with a straightforward decoder here.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "rec/rec.h"

#define FMT_SCAN	(REC_FMT_MAX + 64)

static void
check_define(const unsigned char *rec, size_t len)
{
	struct rec_define d, d2;
	char f[REC_FMT_MAX], ds[REC_DSC_MAX];
	unsigned char *buf;
	struct rec_hdr h;
	struct rec_fmt fmt;
	size_t n;

	if (rec_parse_define(rec, len, &d) != 0)
		return;
	memcpy(&h, rec, sizeof h);
	/* What it returned is inside the record and as documented. */
	CHECK(h.cls == REC_CLASS_META && h.attr == REC_ATTR_DESCRIPTOR);
	CHECK(d.eid == h.eid);
	CHECK(d.format_len < REC_FMT_MAX && d.dsc_len < REC_DSC_MAX);
	CHECK(d.format >= (const char *)rec + sizeof h + 8 &&
	    d.format + d.format_len <= (const char *)rec + len);
	CHECK(d.dsc >= d.format + d.format_len &&
	    d.dsc + d.dsc_len <= (const char *)rec + len);
	CHECK(memchr(d.format, '\0', d.format_len) == NULL);
	CHECK(memchr(d.dsc, '\0', d.dsc_len) == NULL);
	CHECK(d.cls == rec[sizeof h] && d.attr == rec[sizeof h + 1]);

	/* Round trip through rec_build_define. */
	memcpy(f, d.format, d.format_len);
	f[d.format_len] = '\0';
	memcpy(ds, d.dsc, d.dsc_len);
	ds[d.dsc_len] = '\0';
	CHECK((buf = malloc(REC_MAX)) != NULL);
	n = rec_build_define(buf, d.eid, d.cls, d.attr, f, ds, h.ts);
	CHECK(n >= sizeof h + 8 + 8 && n <= REC_MAX && n % REC_ALIGN == 0);
	CHECK(ld16(buf) == n);
	CHECK(rec_valid_prefix(buf, n) == n);
	CHECK(ld64(buf + 8) == h.ts);
	CHECK(rec_parse_define(buf, n, &d2) == 0);
	CHECK(d2.eid == d.eid && d2.cls == d.cls && d2.attr == d.attr);
	CHECK(d2.format_len == d.format_len &&
	    memcmp(d2.format, f, d.format_len) == 0);
	CHECK(d2.dsc_len == d.dsc_len && memcmp(d2.dsc, ds, d.dsc_len) == 0);
	/* A truncated copy must not parse past its end. */
	if (rec_parse_define(buf, n - 8, &d2) == 0)
		CHECK(d2.dsc + d2.dsc_len <= (const char *)buf + n - 8);
	free(buf);
	/* The format as mainmon would take it. */
	if (rec_parse_format(f, &fmt) == 0)
		sink += fmt.n;
}

/* Walks the valid prefix of b[0..len) record by record. */
static void
walk(const unsigned char *b, size_t len)
{
	size_t ok, off, rlen;

	ok = rec_valid_prefix(b, len);
	CHECK(ok <= len && ok % REC_ALIGN == 0);
	for (off = 0; off < ok; off += rlen) {
		CHECK(ok - off >= sizeof(struct rec_hdr));
		rlen = ld16(b + off);
		CHECK(rlen >= sizeof(struct rec_hdr) && rlen % REC_ALIGN == 0 &&
		    rlen <= REC_MAX && rlen <= ok - off);
		check_define(b + off, rlen);
	}
	CHECK(off == ok);
	/* It stopped for a reason: no whole header, or a bad length. */
	if (len - ok >= sizeof(struct rec_hdr)) {
		rlen = ld16(b + ok);
		CHECK(rlen < sizeof(struct rec_hdr) || rlen % REC_ALIGN != 0 ||
		    rlen > REC_MAX || rlen > len - ok);
	}
}

static void
check_format(const struct rec_fmt *fmt)
{
	unsigned i;

	CHECK(fmt->n <= REC_ARGS_MAX);
	for (i = 0; i < fmt->n; i++) {
		switch (fmt->kind[i]) {
		case REC_K_INT:
			CHECK(fmt->va[i] == REC_VA_INT ||
			    fmt->va[i] == REC_VA_LONG);
			break;
		case REC_K_UINT:
			CHECK(fmt->va[i] == REC_VA_UINT ||
			    fmt->va[i] == REC_VA_ULONG ||
			    fmt->va[i] == REC_VA_VOIDP);
			break;
		case REC_K_DOUBLE:
			CHECK(fmt->va[i] == REC_VA_DOUBLE);
			break;
		case REC_K_STR:
			CHECK(fmt->va[i] == REC_VA_PTR);
			break;
		default:
			CHECK(0);
		}
	}
}

/* A second decoder, written from doc/formats.md 2.2, to compare with. */
static int
ref_decode(const unsigned char *b, size_t len, const struct rec_fmt *fmt,
	   const struct rec_field *got)
{
	size_t off = sizeof(struct rec_hdr);
	uint32_t slen;
	unsigned i;

	for (i = 0; i < fmt->n; i++) {
		if (len < off || len - off < 8)
			return -1;
		if (fmt->kind[i] != REC_K_STR) {
			if (got != NULL)
				CHECK(got[i].kind == fmt->kind[i] &&
				    got[i].v.u == ld64(b + off));
			off += 8;
			continue;
		}
		slen = ld32(b + off);
		if (slen > REC_STR_MAX || len - off < rec_str_size(slen))
			return -1;
		if (got != NULL)
			CHECK(got[i].kind == REC_K_STR &&
			    got[i].v.s.len == slen &&
			    got[i].v.s.p == (const char *)b + off + 4);
		off += rec_str_size(slen);
	}
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rec_field out[REC_ARGS_MAX];
	char fstr[FMT_SCAN + 1];
	const unsigned char *nul, *rest;
	struct rec_fmt fmt;
	size_t flen, rlen, i;
	uint32_t k;
	int rc;

	walk(data, size);

	flen = size < FMT_SCAN ? size : FMT_SCAN;
	nul = memchr(data, '\0', flen);
	if (nul != NULL) {
		flen = (size_t)(nul - data);
		rest = nul + 1;
	} else
		rest = data + flen;
	rlen = size - (size_t)(rest - data);
	memcpy(fstr, data, flen);
	fstr[flen] = '\0';

	walk(rest, rlen);

	rc = rec_parse_format(fstr, &fmt);
	if (flen >= REC_FMT_MAX)
		CHECK(rc != 0);
	if (rc != 0)
		return 0;
	check_format(&fmt);
	memset(out, 0, sizeof out);
	rc = rec_decode(rest, rlen, &fmt, out);
	CHECK(rc == ref_decode(rest, rlen, &fmt, rc == 0 ? out : NULL));
	if (rc != 0)
		return 0;
	for (i = 0; i < fmt.n; i++) {
		if (out[i].kind != REC_K_STR) {
			sink += out[i].v.u;
			continue;
		}
		CHECK(out[i].v.s.len <= REC_STR_MAX);
		CHECK((const unsigned char *)out[i].v.s.p >= rest +
		    sizeof(struct rec_hdr) &&
		    (const unsigned char *)out[i].v.s.p + out[i].v.s.len <=
		    rest + rlen);
		for (k = 0; k < out[i].v.s.len; k++)
			sink += (unsigned char)out[i].v.s.p[k];
	}
	return 0;
}
