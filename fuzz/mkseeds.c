/* SPDX-License-Identifier: MIT */
/* mkseeds.c: writes the binary seed files of fuzz/corpus/{rec,seg,wire}.
 * Run once by hand when an input layout changes (see fuzz/README.md):
 *
 *	cc -D_GNU_SOURCE -Iinclude -Icommon fuzz/mkseeds.c common/rec/rec.c common/rec/dense.c \
 *	    common/shm/seg.c common/net/wire.c -o mkseeds && ./mkseeds fuzz/corpus
 *
 * The layouts are those described at the top of each fuzz_*.c file.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "net/wire.h"
#include "rec/rec.h"
#include "shm/seg.h"

static const char *top;

static void
put(const char *target, const char *name, const void *p, size_t n)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof path, "%s/%s", top, target);
	if (mkdir(path, 0755) != 0 && errno != EEXIST) {
		perror(path);
		exit(1);
	}
	snprintf(path, sizeof path, "%s/%s/%s", top, target, name);
	if ((f = fopen(path, "wb")) == NULL || fwrite(p, 1, n, f) != n ||
	    fclose(f) != 0) {
		perror(path);
		exit(1);
	}
}

/* A growing byte buffer. */
struct buf {
	unsigned char	b[70000];
	size_t		n;
};

static void
add(struct buf *b, const void *p, size_t n)
{
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

static void
add_u16(struct buf *b, uint16_t v)
{
	add(b, &v, 2);
}

static void
add_u32(struct buf *b, uint32_t v)
{
	add(b, &v, 4);
}

static void
add_u64(struct buf *b, uint64_t v)
{
	add(b, &v, 8);
}

/* Appends s and its NUL. */
static void
add_str0(struct buf *b, const char *s)
{
	add(b, s, strlen(s) + 1);
}

/*
 * Appends a record: one slot per kinds character, i (int64_t), d (double)
 * or s (char *).  Returns its length.
 */
static size_t
add_rec(struct buf *b, uint8_t cls, uint8_t attr, int32_t eid, uint64_t ts,
	const char *kinds, ...)
{
	size_t start = b->n, sl;
	struct rec_hdr h;
	const char *s;
	va_list ap;
	double d;

	b->n += sizeof h;
	va_start(ap, kinds);
	for (; *kinds != '\0'; kinds++) {
		switch (*kinds) {
		case 'i':
			add_u64(b, (uint64_t)va_arg(ap, int64_t));
			break;
		case 'd':
			d = va_arg(ap, double);
			add(b, &d, 8);
			break;
		default:
			s = va_arg(ap, const char *);
			sl = strlen(s);
			add_u32(b, (uint32_t)sl);
			add(b, s, sl);
			while ((b->n - start) % REC_ALIGN != 0)
				b->b[b->n++] = 0;
		}
	}
	va_end(ap);
	h.len = (uint16_t)(b->n - start);
	h.cls = cls;
	h.attr = attr;
	h.eid = eid;
	h.ts = ts;
	memcpy(b->b + start, &h, sizeof h);
	return b->n - start;
}

static void
add_define(struct buf *b, int32_t eid, const char *fmt, const char *dsc)
{
	b->n += rec_build_define(b->b + b->n, eid, REC_CLASS_USER,
	    REC_ATTR_POINT, fmt, dsc, 1000 + (uint64_t)eid);
}

static void
rec_seeds(void)
{
	struct buf *b = calloc(1, sizeof *b);

	/* A format, then a record of it. */
	add_str0(b, "token %d from %s took %f s");
	add_rec(b, REC_CLASS_USER, REC_ATTR_POINT, 10, 5000, "isd",
	    (int64_t)7, "beta", 0.25);
	put("rec", "record-d-s-f", b->b, b->n);

	/* No format, then definitions and a loss record. */
	b->n = 0;
	add_str0(b, "");
	add_define(b, 10, "token %d from %s took %f s", "token passed");
	add_define(b, -3, "%d %s", "block name");
	add_rec(b, REC_CLASS_META, REC_ATTR_LOSS, 0, 6000, "i", (int64_t)3);
	put("rec", "defines-loss", b->b, b->n);

	/* Many kinds of conversion. */
	b->n = 0;
	add_str0(b, "%lld %hhu %zx %lf %c %5.2e %-8s %%");
	add_rec(b, REC_CLASS_USER, REC_ATTR_ACT, 1, 1, "iiidids",
	    (int64_t)-1, (int64_t)255, (int64_t)4096, 1e300, (int64_t)'A',
	    -0.0, "left");
	put("rec", "conversions", b->b, b->n);
	free(b);
}

static void
seg_seeds(void)
{
	struct buf *b = calloc(1, sizeof *b);
	struct buf *d = calloc(4, sizeof *d);
	struct seg_chunk c[4];
	size_t len[4];
	int i;

	/* Chunk 0 FULL and chunk 1 OWNED for thread (10, 11) in session 1,
	 * chunk 2 FREE, chunk 3 CLAIMED by session 2. */
	memset(c, 0, sizeof c);
	for (i = 0; i < 4; i++) {
		d[i].n = 0;
		add_define(&d[i], i, "%d %s", "x");
		add_rec(&d[i], REC_CLASS_USER, REC_ATTR_POINT, i, 100 + i,
		    "is", (int64_t)i, "text");
		len[i] = d[i].n;
	}
	c[0].state = SEG_FULL;
	c[1].state = SEG_OWNED;
	c[2].state = SEG_FREE;
	c[3].state = SEG_CLAIMED;
	for (i = 0; i < 4; i++) {
		c[i].pid = 10;
		c[i].tid = 11;
		c[i].session = i < 3 ? 1 : 2;
		c[i].seq = (uint64_t)(4 - i);
		c[i].committed = len[i];
		c[i].consumed = 0;
	}
	c[1].consumed = 8;	/* not at a record boundary: skipped bytes */
	add_u32(b, 1);		/* reclaim session 1 */
	b->b[b->n++] = 0;	/* no stop */
	b->b[b->n++] = 1;	/* writer path */
	add_u16(b, 0);
	add(b, c, sizeof c);
	for (i = 0; i < 4; i++) {
		add_u16(b, (uint16_t)len[i]);
		add(b, d[i].b, len[i]);
	}
	put("seg", "full-owned-free-claimed", b->b, b->n);

	/* Two FULL chunks of two processes, the collection stopping at the
	 * second piece; committed past the chunk on a third. */
	c[0].pid = 20;
	c[1].state = SEG_FULL;
	c[1].consumed = 0;
	c[2].state = SEG_OWNED;
	c[2].committed = (uint64_t)1 << 40;
	memcpy(b->b + 8, c, sizeof c);
	b->b[4] = 2;
	put("seg", "stop-and-scribbled", b->b, b->n);

	/* A raw valid segment header, for seg_check. */
	b->n = 0;
	{
		size_t n = seg_size_for(2, SEG_CHUNK_MIN);
		struct seg_hdr *s = aligned_alloc(64, (n + 63) & ~(size_t)63);

		memset(s, 0, n);
		seg_init(s, n, SEG_CHUNK_MIN);
		put("seg", "raw-segment", s, n);
		free(s);
	}
	free(b);
	free(d);
}

static void
wire_seeds(void)
{
	struct buf *b = calloc(1, sizeof *b);
	unsigned char h[WIRE_HDR];
	static const char host[] = "alpha.example.org";

	/* HELLO: u32 role, u32 pid, u64 now, str host, u64 seg_id,
	 * u8[16] nonce. */
	wire_header(h, WIRE_HELLO, 4 + 4 + 8 + 2 + sizeof host - 1 + 8 + 16);
	add(b, h, sizeof h);
	b->b[b->n++] = 5;
	b->b[b->n++] = 1;	/* u32 */
	b->b[b->n++] = 1;	/* u32 */
	b->b[b->n++] = 2;	/* u64 */
	b->b[b->n++] = 3;	/* str, small buffer */
	b->b[b->n++] = 2;	/* u64 */
	add_u32(b, 1);
	add_u32(b, 4242);
	add_u64(b, 123456789);
	add_u16(b, sizeof host - 1);
	add(b, host, sizeof host - 1);
	add_u64(b, 0x1122334455667788ull);
	memset(b->b + b->n, 0x5a, 16);
	b->n += 16;
	put("wire", "hello", b->b, b->n);
	/* The same from an LM's fire link (role 3). */
	b->b[b->n - 16 - 8 - (sizeof host - 1) - 2 - 8 - 4 - 4] = 3;
	put("wire", "hello_fire", b->b, b->n);

	/* PONG: u64 t_mm, t_rx, t_mm_prev, t_tx_prev, t_lm. */
	b->n = 0;
	wire_header(h, WIRE_PONG, 5 * 8);
	add(b, h, sizeof h);
	b->b[b->n++] = 5;
	memset(b->b + b->n, 2, 5);	/* u64 */
	b->n += 5;
	add_u64(b, 1000000000ull);
	add_u64(b, 5000000123ull);
	add_u64(b, 999000000ull);
	add_u64(b, 5000000456ull);
	add_u64(b, 5000000789ull);
	put("wire", "pong", b->b, b->n);

	/* The handshake as the connecting side sees it (fuzz_wire's client
	 * messages: type byte, length byte, bytes): a CHALLENGE, then a
	 * WELCOME with a proof that is not the MM's; and a DENIED. */
	b->n = 0;
	wire_header(h, WIRE_CHALLENGE, 16);
	add(b, h, sizeof h);
	b->b[b->n++] = 0;	/* no reader operations */
	b->b[b->n++] = 0;
	b->b[b->n++] = 16;
	memset(b->b + b->n, 0x20, 16);
	b->n += 16;
	b->b[b->n++] = 1;
	b->b[b->n++] = 36;
	add_u32(b, 1);
	memset(b->b + b->n, 0x77, 32);
	b->n += 32;
	put("wire", "handshake", b->b, b->n);
	b->n = 0;
	wire_header(h, WIRE_DENIED, 17);
	add(b, h, sizeof h);
	b->b[b->n++] = 0;
	b->b[b->n++] = 2;
	b->b[b->n++] = 17;
	add_u32(b, 1);
	add_u16(b, 11);
	add(b, "wrong token", 11);
	put("wire", "denied", b->b, b->n);

	/* CTL_REPLY with a long text: u32 status, str (big buffer). */
	b->n = 0;
	wire_header(h, WIRE_CTL_REPLY, 4 + 2 + 300);
	add(b, h, sizeof h);
	b->b[b->n++] = 3;
	b->b[b->n++] = 1;
	b->b[b->n++] = 7;	/* str, big buffer */
	b->b[b->n++] = 3;	/* past the end */
	add_u32(b, 0);
	add_u16(b, 300);
	memset(b->b + b->n, 'r', 300);
	b->n += 300;
	put("wire", "ctl-reply", b->b, b->n);

	/* Identifiers, for mmid_split and mmid_parse. */
	put("wire", "hostport", "127.0.0.1:40123", 15);
	put("wire", "hostport6", "[::1]:8080", 10);
	put("wire", "identifier",
	    "127.0.0.1:40123:000102030405060708090a0b0c0d0e0f", 48);
	put("wire", "identifier6",
	    "[::1]:8080:000102030405060708090A0B0C0D0E0F", 43);
	free(b);
}

int
main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: mkseeds corpus-dir\n");
		return 2;
	}
	top = argv[1];
	rec_seeds();
	seg_seeds();
	wire_seeds();
	return 0;
}
