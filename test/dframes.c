/* SPDX-License-Identifier: MIT */
/* dframes.c: checks that every D frame of a binary trace holds its run as
 * the encoder writes it (rec_dense_encode_part of the records it decodes
 * to, before another thread's records the shortest switch that says
 * which), whatever way
 * mainmon made it (test/dense.sh, test/interleave.sh).
 * Usage: dframes FILE; prints "frames records switches", exits 1 on a
 * difference. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rec/dense.h"
#include "rec/rec.h"

#define SW_MAX	4096

static uint32_t
ld32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24;
}

/* What the encoder writes for recs[0..len) with the thread switches sw
 * (rec_dense_encode_part's run, a switch before the records of another
 * thread, each record's delta from the one before it in the frame). */
static ssize_t
encode_sw(const unsigned char *recs, size_t len, uint32_t node, uint32_t pid,
	  uint32_t tid, const struct rec_dense_sw *sw, size_t nsw,
	  unsigned char *out, size_t *used, size_t *nrec)
{
	uint32_t n1, p1, t1;
	struct rec_dense_enc e;
	struct rec_hdr h;
	size_t off, pos, i = 0;

	*nrec = 0;
	if (nsw == 0)
		return rec_dense_encode_part(recs, len, out,
		    REC_DENSE_MAX(len), used, nrec);
	memcpy(&h, recs, sizeof h);
	pos = rec_dense_begin(&e, out, h.ts);
	for (off = 0; off < len; off += h.len) {
		memcpy(&h, recs + off, sizeof h);
		if (i < nsw && sw[i].off == off) {
			/* The one mainmon writes: the shortest that says
			 * what changed. */
			n1 = node;
			p1 = pid;
			t1 = tid;
			rec_dense_sw_apply(&sw[i], &n1, &p1, &t1);
			pos += rec_dense_sw_put(out + pos, node, pid, tid, n1,
			    p1, t1);
			node = n1;
			pid = p1;
			tid = t1;
			i++;
		}
		pos += rec_dense_put(&e, recs + off, h.len, out + pos);
		++*nrec;
	}
	*used = len;
	return (ssize_t)pos;
}

int
main(int argc, char **argv)
{
	static unsigned char dec[2 * 65536], enc[REC_DENSE_MAX(2 * 65536) +
	    SW_MAX * REC_DENSE_SW_MAX];
	static struct rec_dense_sw sw[SW_MAX];
	unsigned long long switches = 0;
	size_t nsw;
	unsigned long long frames = 0, recs = 0;
	unsigned char *b;
	size_t n, pos = 8, flen, used, nrec;
	ssize_t dl, el;
	FILE *f;
	long sz;

	if (argc != 2 || (f = fopen(argv[1], "rb")) == NULL ||
	    fseek(f, 0, SEEK_END) != 0 || (sz = ftell(f)) < 8) {
		fprintf(stderr, "usage: dframes FILE (a binary trace)\n");
		return 2;
	}
	rewind(f);
	n = (size_t)sz;
	if ((b = malloc(n)) == NULL || fread(b, 1, n, f) != n ||
	    memcmp(b, "\x89GRMBIN\n", 8) != 0) {
		fprintf(stderr, "dframes: %s: not a binary trace\n", argv[1]);
		return 2;
	}
	fclose(f);
	while (n - pos >= 5) {
		flen = (size_t)b[pos] | (size_t)b[pos + 1] << 8 |
		    (size_t)b[pos + 2] << 16 | (size_t)b[pos + 3] << 24;
		if (flen > n - pos - 5)
			break;		/* cut short */
		if (b[pos + 4] == 'D') {
			dl = flen >= 12 ? rec_dense_decode_sw(b + pos + 17,
			    flen - 12, dec, sizeof dec, sw, SW_MAX, &nsw) :
			    -1;
			el = dl < 0 ? -1 : encode_sw(dec, (size_t)dl,
			    ld32(b + pos + 5), ld32(b + pos + 9),
			    ld32(b + pos + 13), sw, nsw, enc, &used, &nrec);
			if (el != (ssize_t)(flen - 12) ||
			    used != (size_t)dl ||
			    memcmp(enc, b + pos + 17, flen - 12) != 0) {
				fprintf(stderr, "dframes: %s: the D frame at "
				    "%zu is not as the encoder writes it\n",
				    argv[1], pos);
				return 1;
			}
			frames++;
			recs += nrec;
			switches += nsw;
		}
		pos += 5 + flen;
	}
	printf("%llu %llu %llu\n", frames, recs, switches);
	free(b);
	return 0;
}
