/* SPDX-License-Identifier: MIT */
/* dframes.c: checks that every D frame of a binary trace holds its run as
 * the encoder writes it (rec_dense_encode_part of the records it decodes
 * to), whatever way mainmon made it (test/dense.sh).
 * Usage: dframes FILE; prints "frames records", exits 1 on a difference. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rec/dense.h"

int
main(int argc, char **argv)
{
	static unsigned char dec[2 * 65536], enc[REC_DENSE_MAX(2 * 65536)];
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
			dl = flen >= 12 ? rec_dense_decode(b + pos + 17,
			    flen - 12, dec, sizeof dec) : -1;
			el = dl < 0 ? -1 : rec_dense_encode_part(dec,
			    (size_t)dl, enc, sizeof enc, &used, &nrec);
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
		}
		pos += 5 + flen;
	}
	printf("%llu %llu\n", frames, recs);
	free(b);
	return 0;
}
