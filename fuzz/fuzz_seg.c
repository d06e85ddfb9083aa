/* SPDX-License-Identifier: MIT */
/* fuzz_seg.c: libFuzzer target for the Local Monitor's side of the shared
 * segment (seg.c): seg_collect, seg_reclaim_session, seg_used, and
 * seg_check.
 *
 * Traced processes write the chunk table and the chunk data, and are not
 * trusted.  A segment of NCHUNKS chunks of CHUNK bytes is laid out with
 * seg_init (its header is the Local Monitor's and stays valid), then the
 * input overwrites the chunk table and data:
 *
 *	0	u32	session given to seg_reclaim_session
 *	4	u8	stop: a first seg_collect stops at that piece (0: no)
 *	5	u8	acquire: nonzero runs the writer path at the end
 *	6	u8	bit 0: the overwrite path (seg_steal) runs first
 *	7	u8	(unused)
 *	8	NCHUNKS x 64 bytes: the chunk table (struct seg_chunk)
 *	...	per chunk: u16 n, then n data bytes (at most CHUNK)
 *
 * A short input leaves the rest zero.  Every emitted piece is checked
 * against the chunk it came from.  Separately, the raw input is given to
 * seg_check, and when seg_check accepts it, it is collected too.
 *
 * With FUZZ_SEG_HOSTILE_HEADER=1 in the environment, the writers are also
 * allowed what the shared memory lets them do to the header: after the
 * layout above comes HDRW bytes that overwrite the header from offset 16
 * (chunk_size, nchunks, table_off, data_off, lm_pid) before the
 * collection, and HDRW more that overwrite it again during the first emit
 * (a writer racing with the Local Monitor).  Only memory safety is checked
 * then.  This mode is not run by run.sh: see README.md.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "rec/rec.h"
#include "shm/seg.h"
#include "shm/stab.h"

#define NCHUNKS		4
#define CHUNK		SEG_CHUNK_MIN
#define CTL		8
#define HDRW		32	/* header bytes 16..48 */
#define HDRO		16

/*
 * The view every call uses: bound when a segment is created (seg_init) or
 * accepted (seg_check), never re-read from a header the input may
 * scribble afterwards, as the LM keeps its own.
 */
static struct seg cur_view;

static void
bind(struct seg_hdr *s, size_t size)
{
	seg_view(&cur_view, s, size);
}

static const struct seg *
V(struct seg_hdr *s)
{
	(void)s;
	return &cur_view;
}

/* What each chunk should give, computed before a collection. */
struct expect {
	int		cand;		/* OWNED or FULL: seg_collect looks */
	int		sane;		/* consumed/committed in range */
	int		used;		/* matched by an emitted piece */
	uint32_t	pid, tid, session;
	uint64_t	seq, from, committed, ok;
};

struct ctx {
	struct seg_hdr	*s;
	struct expect	*e;
	uint32_t	n;
	int		pieces;
	int		stop_at;	/* return -1 on this piece (1-based) */
	uint64_t	bytes;
	int		have_last;
	uint32_t	last_pid, last_session;
	uint64_t	last_seq;
};

static void
expect_all(struct seg_hdr *s, struct expect *e)
{
	struct seg_chunk *c;
	uint32_t i, st;

	for (i = 0; i < s->nchunks; i++) {
		c = seg_chunk(V(s), i);
		st = atomic_load(&c->state);
		memset(&e[i], 0, sizeof e[i]);
		e[i].cand = (st == SEG_OWNED || st == SEG_FULL) &&
		    c->kind != SEG_KIND_TABLE;
		e[i].pid = c->pid;
		e[i].tid = c->tid;
		e[i].session = c->session;
		e[i].seq = c->seq;
		e[i].from = c->consumed;
		e[i].committed = atomic_load(&c->committed);
		e[i].sane = e[i].committed <= s->chunk_size &&
		    e[i].from <= e[i].committed && e[i].from % REC_ALIGN == 0;
		if (e[i].cand && e[i].sane)
			e[i].ok = rec_valid_prefix(seg_data(V(s), i) + e[i].from,
			    e[i].committed - e[i].from);
	}
}

/* Bytes seg_collect will count as emitted or bad (a scribbled committed
 * counts up to the chunk's end). */
static uint64_t
expect_bytes(const struct expect *e, uint32_t n)
{
	uint64_t t = 0, to;
	uint32_t i;

	for (i = 0; i < n; i++) {
		to = e[i].committed < CHUNK ? e[i].committed : CHUNK;
		if (e[i].cand && to > e[i].from)
			t += to - e[i].from;
	}
	return t;
}

static int
expect_pieces(const struct expect *e, uint32_t n)
{
	uint32_t i;
	int k = 0;

	for (i = 0; i < n; i++)
		k += e[i].cand && e[i].sane && e[i].ok > 0;
	return k;
}

static int
emit(void *arg, uint32_t pid, uint32_t tid, uint32_t session, uint64_t seq,
     uint64_t at, const void *data, size_t len, int meta)
{
	struct ctx *x = arg;
	const unsigned char *p = data;
	struct expect *e;
	uint64_t h = 0;
	uint32_t i, best = UINT32_MAX;
	size_t k;
	int m;

	x->pieces++;
	CHECK(len > 0 && len <= x->s->chunk_size && len % REC_ALIGN == 0);
	CHECK(rec_valid_prefix_meta(data, len, &m) == len && m == meta);
	for (k = 0; k < len; k++)
		h += p[k];
	sink += h;
	/* The chunk it came from: same thread and seq, same bytes.  Among
	 * equals, the lowest session comes first. */
	for (i = 0; i < x->n; i++) {
		e = &x->e[i];
		if (e->used || !e->cand || !e->sane || e->ok != len ||
		    e->pid != pid || e->tid != tid || e->seq != seq ||
		    e->session != session ||
		    memcmp(seg_data(V(x->s), i) + e->from, data, len) != 0)
			continue;
		if (best == UINT32_MAX || e->session < x->e[best].session)
			best = i;
	}
	if (best == UINT32_MAX) {
		fprintf(stderr, "emitted piece (pid %u tid %u seq %llu, %zu "
		    "bytes) matches no chunk\n", pid, tid,
		    (unsigned long long)seq, len);
		abort();
	}
	e = &x->e[best];
	/* (pid, session, seq) order. */
	if (x->have_last)
		CHECK(x->last_pid < pid || (x->last_pid == pid &&
		    (x->last_session < e->session ||
		    (x->last_session == e->session && x->last_seq <= seq))));
	x->have_last = 1;
	x->last_pid = pid;
	x->last_session = e->session;
	x->last_seq = seq;
	if (x->stop_at != 0 && x->pieces == x->stop_at)
		return -1;
	e->used = 1;
	x->bytes += len;
	return 0;
}

/* One checked seg_collect; returns the pieces emitted. */
static int
collect(struct seg_hdr *s, struct expect *e, int stop_at)
{
	struct ctx x;
	uint64_t bad = 0, want;
	int rc, npieces;
	uint32_t i, st;

	memset(&x, 0, sizeof x);
	x.s = s;
	x.e = e;
	x.n = s->nchunks;
	x.stop_at = stop_at;
	expect_all(s, e);
	want = expect_bytes(e, x.n);
	npieces = expect_pieces(e, x.n);
	rc = seg_collect(V(s), emit, &x, &bad);
	if (stop_at != 0 && stop_at <= npieces) {
		CHECK(rc == -1 && x.pieces == stop_at);
		return 0;
	}
	CHECK(rc == x.pieces && rc == npieces);
	CHECK(x.bytes + bad == want);
	/* FULL chunks are freed; OWNED ones are consumed up to committed. */
	for (i = 0; i < x.n; i++) {
		st = atomic_load(&seg_chunk(V(s), i)->state);
		if (!e[i].cand)
			continue;
		CHECK(st != SEG_FULL);
		if (st == SEG_FREE)
			CHECK(seg_chunk(V(s), i)->consumed == 0);
		else if (e[i].sane)
			CHECK(seg_chunk(V(s), i)->consumed == e[i].committed);
	}
	return rc;
}

/* Each record stab_read makes of a table must be a well-formed record. */
static int
tab_rec(void *arg, const void *rec, size_t len)
{
	(void)arg;
	CHECK(len >= sizeof(struct rec_hdr) && len <= REC_MAX &&
	    rec_valid_prefix(rec, len) == len);
	sink += len;
	return 0;
}

static int
tab_emit(void *arg, uint32_t pid, uint32_t tid, uint32_t session, int final,
	 const void *shared, const void *data, size_t len)
{
	struct seg_hdr *s = arg;

	(void)pid;
	(void)tid;
	(void)session;
	CHECK(len <= s->chunk_size);
	CHECK(stab_read(data, shared, len, final, 1, tab_rec, NULL) >= 0);
	return 0;
}

/* Table chunks: read whole, FULL ones freed. */
static void
tables(struct seg_hdr *s)
{
	uint32_t i, st, nfull = 0;

	for (i = 0; i < s->nchunks; i++) {
		st = atomic_load(&seg_chunk(V(s), i)->state);
		nfull += st == SEG_FULL &&
		    seg_chunk(V(s), i)->kind == SEG_KIND_TABLE;
	}
	CHECK(seg_tables(V(s), tab_emit, s, NULL) >= (int)nfull);
	for (i = 0; i < s->nchunks; i++)
		CHECK(atomic_load(&seg_chunk(V(s), i)->state) != SEG_FULL ||
		    seg_chunk(V(s), i)->kind != SEG_KIND_TABLE);
}

/* The overwrite policy's path: take back a FULL record chunk. */
static void
steal(struct seg_hdr *s)
{
	struct seg_loss loss;
	struct seg_chunk *c;
	int i;

	i = seg_steal(V(s), 98, 0xffffffe0u, 0xffffffe1u, 6, &loss);
	if (i < 0)
		return;
	CHECK((uint32_t)i < s->nchunks);
	c = seg_chunk(V(s), (uint32_t)i);
	CHECK(atomic_load(&c->state) == SEG_OWNED && c->pid == 0xffffffe0u &&
	    atomic_load(&c->committed) == 0 && c->consumed == 0);
	CHECK(loss.events <= s->chunk_size / sizeof(struct rec_hdr));
	seg_release(V(s), (uint32_t)i);
}

/* The writer path on what is left: take a chunk, commit a record, give it
 * back, and it must come out. */
static void
writer(struct seg_hdr *s, struct expect *e)
{
	struct rec_hdr h = { 24, REC_CLASS_USER, REC_ATTR_POINT, 7, 42 };
	struct seg_chunk *c;
	uint64_t v = 0x1122334455667788u;
	int i, notify;

	i = seg_acquire(V(s), 99, 0xfffffff0u, 0xfffffff1u, 5, SEG_KIND_RECORDS, &notify);
	if (i < 0)
		return;
	CHECK((uint32_t)i < s->nchunks);
	c = seg_chunk(V(s), (uint32_t)i);
	CHECK(atomic_load(&c->state) == SEG_OWNED && c->pid == 0xfffffff0u);
	memcpy(seg_data(V(s), (uint32_t)i), &h, sizeof h);
	memcpy(seg_data(V(s), (uint32_t)i) + sizeof h, &v, sizeof v);
	c->consumed = 0;	/* the LM's word; a writer may have left junk */
	atomic_store(&c->committed, 24);
	seg_release(V(s), (uint32_t)i);
	CHECK(collect(s, e, 0) >= 1);
	CHECK(atomic_load(&c->state) == SEG_FREE);
}

static struct seg_hdr *
aligned_copy(const void *p, size_t n)
{
	void *m;

	if (posix_memalign(&m, 64, n > 0 ? n : 1) != 0)
		abort();
	memcpy(m, p, n);
	return m;
}

/* seg_check on the raw input; a segment it accepts must be safe to use. */
static void
raw(const uint8_t *data, size_t size)
{
	struct seg_hdr *s = aligned_copy(data, size);
	struct expect *e;

	if (seg_check(s, size) == 0) {
		bind(s, size);
		CHECK(size >= seg_size_for(s->nchunks, s->chunk_size));
		CHECK((e = calloc(s->nchunks, sizeof *e)) != NULL);
		seg_reclaim_session(V(s), 1);
		sink += seg_used(V(s));
		steal(s);
		collect(s, e, 0);
		tables(s);
		writer(s, e);
		free(e);
	}
	free(s);
}

/* ---- FUZZ_SEG_HOSTILE_HEADER=1 ---- */

struct hctx {
	struct seg_hdr	*s;
	const uint8_t	*later;		/* HDRW bytes, or NULL */
	int		pieces;
};

static int
hemit(void *arg, uint32_t pid, uint32_t tid, uint32_t session, uint64_t seq,
      uint64_t at, const void *data, size_t len, int meta)
{
	struct hctx *x = arg;
	const unsigned char *p = data;
	uint64_t h = pid ^ tid ^ session ^ seq ^ (uint64_t)meta;
	size_t k;

	for (k = 0; k < len; k++)
		h += p[k];
	sink += h;
	if (x->pieces++ == 0 && x->later != NULL)
		memcpy((char *)x->s + HDRO, x->later, HDRW);
	return 0;
}

/* The LM's way: collections in flight, acknowledged or not, and an LM
 * adopting the segment, on the scribbled segment. */
static void
hostile_flight(struct seg_hdr *s, uint8_t how, struct hctx *x)
{
	static struct seg_sent sent[NCHUNKS];
	struct seg_flight fl = { NULL, 0, 0, 0 };
	struct seg v = *V(s);
	uint64_t bad = 0;

	memset(sent, 0, sizeof sent);
	v.sent = sent;
	seg_collect_ex(&v, how & 1, hemit, x, &bad, &fl);
	seg_collect_ex(&v, 0, hemit, x, &bad, &fl);
	if (how & 2)
		seg_flight_commit(&v, &fl);
	else
		seg_flight_abort(&v, &fl);
	if (how & 4)
		seg_adopt(&v);
	seg_collect_ex(&v, 0, hemit, x, &bad, &fl);
	seg_flight_commit(&v, &fl);
	seg_flight_free(&fl);
	sink += seg_used(&v);
}

static void
hostile(struct seg_hdr *s, const uint8_t *p, const uint8_t *end,
	uint32_t session)
{
	struct hctx x = { s, NULL, 0 };
	uint64_t bad = 0;

	if (end - p < HDRW)
		return;
	memcpy((char *)s + HDRO, p, HDRW);
	if (end - p >= 2 * HDRW)
		x.later = p + HDRW;
	seg_collect(V(s), hemit, &x, &bad);
	seg_reclaim_session(V(s), session);
	sink += seg_used(V(s));
	hostile_flight(s, p[0], &x);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct seg_hdr *s;
	static size_t ssize;
	static int hostile_header = -1;
	struct expect e[NCHUNKS];
	const uint8_t *p = data, *end = data + size;
	uint8_t ctl[CTL] = { 0 };
	struct seg_chunk *c;
	uint32_t i, session, used;
	size_t n;

	if (hostile_header < 0) {
		const char *v = getenv("FUZZ_SEG_HOSTILE_HEADER");

		hostile_header = v != NULL && *v != '\0' && *v != '0';
	}
	raw(data, size);

	if (s == NULL) {
		ssize = seg_size_for(NCHUNKS, CHUNK);
		if (posix_memalign((void **)&s, 64, ssize) != 0)
			abort();
	}
	memset(s, 0, ssize);
	CHECK(seg_init(s, ssize, CHUNK) == 0);
	CHECK(s->nchunks == NCHUNKS && seg_check(s, ssize) == 0);
	bind(s, ssize);

	n = size < CTL ? size : CTL;
	memcpy(ctl, p, n);
	p += n;
	n = (size_t)(end - p) < NCHUNKS * sizeof *c ? (size_t)(end - p) :
	    NCHUNKS * sizeof *c;
	memcpy(seg_chunk(V(s), 0), p, n);
	p += n;
	for (i = 0; i < NCHUNKS && end - p >= 2; i++) {
		n = (size_t)(p[0] | p[1] << 8);
		p += 2;
		if (n > (size_t)(end - p))
			n = (size_t)(end - p);
		if (n > CHUNK)
			n = CHUNK;
		memcpy(seg_data(V(s), i), p, n);
		p += n;
	}
	session = ld32(ctl);
	if (hostile_header) {
		hostile(s, p, end, session);
		return 0;
	}

	if (ctl[6] & 1)
		steal(s);
	if (ctl[4] != 0)
		collect(s, e, ctl[4]);
	collect(s, e, 0);
	/* Everything was consumed: nothing more comes out. */
	CHECK(collect(s, e, 0) == 0);

	seg_reclaim_session(V(s), session);
	for (i = 0; i < NCHUNKS; i++) {
		c = seg_chunk(V(s), i);
		if (c->session == session)
			CHECK(atomic_load(&c->state) != SEG_OWNED &&
			    SEG_STATE(atomic_load(&c->state)) != SEG_CLAIMED);
	}
	collect(s, e, 0);
	tables(s);
	for (used = 0, i = 0; i < NCHUNKS; i++) {
		CHECK(atomic_load(&seg_chunk(V(s), i)->state) != SEG_FULL);
		used += atomic_load(&seg_chunk(V(s), i)->state) != SEG_FREE;
	}
	CHECK(seg_used(V(s)) == used);

	if (ctl[5] != 0)
		writer(s, e);
	return 0;
}
