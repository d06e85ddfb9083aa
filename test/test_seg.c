/* SPDX-License-Identifier: MIT */
/* test_seg.c: unit tests of the shared segment's chunk ring (seg.c). */
#include <criterion/criterion.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <unistd.h>

#include "rec/rec.h"
#include "shm/seg.h"
#include "shm/stab.h"

#define CS	SEG_CHUNK_MIN		/* the chunk size of most tests */
#define POISON	9999			/* eid of bytes that must not come out */

/* ---- helpers ---- */


/* The private view of s (tests trust their own headers; see
 * collect::header_scribbled_after_view for the case where they do not). */
static const struct seg *
V(struct seg_hdr *s)
{
	static __thread struct seg v;

	seg_view(&v, s, s->size);
	return &v;
}

static size_t
round64(size_t n)
{
	return (n + 63) & ~(size_t)63;
}

/* Segments of the running test, freed after it even if it fails. */
static void	*mem[8];
static unsigned	nmem;

/* Collections in flight of the running test, likewise. */
static struct seg_flight flights[4];
static unsigned	nflights;

static struct seg_flight *
new_flight(void)
{
	cr_assert_lt(nflights, 4);
	return &flights[nflights++];
}

static void
free_all(void)
{
	while (nmem > 0)
		free(mem[--nmem]);
	while (nflights > 0)
		seg_flight_free(&flights[--nflights]);
}

TestSuite(init, .fini = free_all);
TestSuite(check, .fini = free_all);
TestSuite(acquire, .fini = free_all);
TestSuite(collect, .fini = free_all);
TestSuite(reclaim, .fini = free_all);
TestSuite(used, .fini = free_all);
TestSuite(ring, .fini = free_all);
TestSuite(steal, .fini = free_all);
TestSuite(table, .fini = free_all);
TestSuite(flight, .fini = free_all);

/* A 64-byte aligned buffer of size bytes (rounded up to 64), filled with
 * junk so that seg_init must clear what it uses. */
static void *
seg_mem(size_t size)
{
	void *m = aligned_alloc(64, round64(size));

	cr_assert_not_null(m);
	cr_assert_lt(nmem, sizeof mem / sizeof mem[0]);
	mem[nmem++] = m;
	memset(m, 0x5a, round64(size));
	return m;
}

static struct seg_hdr *
new_seg(uint32_t nchunks, size_t *sizep)
{
	size_t size = seg_size_for(nchunks, CS);
	struct seg_hdr *s = seg_mem(size);

	cr_assert_eq(size % 64, 0);
	cr_assert_eq(seg_init(s, size, CS), 0);
	cr_assert_eq(s->nchunks, nchunks);
	if (sizep != NULL)
		*sizep = size;
	return s;
}

static uint32_t
state(struct seg_hdr *s, uint32_t i)
{
	return atomic_load(&seg_chunk(V(s), i)->state);
}

static uint32_t
acq(struct seg_hdr *s, uint32_t session, uint32_t pid, uint32_t tid,
    uint64_t seq)
{
	int notify, i;

	i = seg_acquire(V(s), session, pid, tid, seq, SEG_KIND_RECORDS, &notify);
	cr_assert_geq(i, 0, "no chunk acquired");
	cr_assert_lt((uint32_t)i, s->nchunks);
	return (uint32_t)i;
}

/* Writes a record of len bytes, eid and ts eid, payload bytes (eid & 0xff)
 * at p. */
static void
put_rec(char *p, uint16_t len, int32_t eid)
{
	struct rec_hdr h = { len, REC_CLASS_EVENT, REC_ATTR_POINT, eid,
	    (uint64_t)eid };

	memcpy(p, &h, sizeof h);
	memset(p + sizeof h, eid & 0xff, len - sizeof h);
}

/* Appends a record to chunk i and publishes it, as a writer does. */
static void
append(struct seg_hdr *s, uint32_t i, int32_t eid, uint16_t len)
{
	struct seg_chunk *c = seg_chunk(V(s), i);
	uint64_t off = atomic_load(&c->committed);

	cr_assert_leq(off + len, s->chunk_size);
	put_rec(seg_data(V(s), i) + off, len, eid);
	atomic_store(&c->committed, off + len);
}

/* The same for a signal handler: no assertions. */
static void
append16(struct seg_hdr *s, uint32_t i, int32_t eid)
{
	struct seg_chunk *c = seg_chunk(V(s), i);
	uint64_t off = atomic_load(&c->committed);

	put_rec(seg_data(V(s), i) + off, 16, eid);
	atomic_store(&c->committed, off + 16);
}

/* Writes a record after the committed bytes of chunk i, not published. */
static void
stage(struct seg_hdr *s, uint32_t i, uint64_t at, int32_t eid, uint16_t len)
{
	put_rec(seg_data(V(s), i) + atomic_load(&seg_chunk(V(s), i)->committed) +
	    at, len, eid);
}

/* What seg_collect emitted. */
#define SINK_PIECES	64
#define SINK_EIDS	64

struct piece {
	uint32_t	pid, tid, session;
	uint64_t	seq;
	uint64_t	at;		/* where it starts in its chunk */
	size_t		len;
	unsigned	neid;
	int32_t		eid[SINK_EIDS];
};

struct sink {
	struct seg_hdr	*s;
	unsigned	fail_call;	/* emit returns -1 on this call (1..) */
	unsigned	calls;
	unsigned	n;
	struct piece	p[SINK_PIECES];
};

/* The emit callback: checks that a piece is whole records, no more than a
 * chunk, none of them unpublished, and notes it. */
static int
sink_emit(void *arg, uint32_t pid, uint32_t tid, uint32_t session,
	  uint64_t seq, uint64_t at, const void *data, size_t len, int meta)
{
	struct sink *k = arg;
	const char *d = data;
	struct piece *p;
	struct rec_hdr h;
	size_t off;
	int m;

	k->calls++;
	if (k->calls == k->fail_call)
		return -1;
	cr_assert_lt(k->n, SINK_PIECES);
	cr_assert_gt(len, 0, "an empty piece");
	cr_assert_leq(len, k->s->chunk_size, "a piece larger than a chunk");
	cr_assert_eq(rec_valid_prefix(data, len), len,
	    "a piece that is not whole records");
	p = &k->p[k->n++];
	memset(p, 0, sizeof *p);
	p->pid = pid;
	p->tid = tid;
	p->session = session;
	p->seq = seq;
	p->at = at;
	p->len = len;
	for (off = 0, m = 0; off < len; off += h.len) {
		memcpy(&h, d + off, sizeof h);
		cr_assert_neq(h.eid, POISON, "emitted bytes never published");
		cr_assert_lt(p->neid, SINK_EIDS);
		p->eid[p->neid++] = h.eid;
		m |= h.cls == REC_CLASS_META;
	}
	cr_assert_eq(meta, m, "the piece's META flag");
	return 0;
}

static void
sink_init(struct sink *k, struct seg_hdr *s)
{
	memset(k, 0, sizeof *k);
	k->s = s;
}

static int
collect(struct seg_hdr *s, struct sink *k, uint64_t *bad)
{
	return seg_collect(V(s), sink_emit, k, bad);
}

static void
check_piece(const struct piece *p, uint32_t pid, uint32_t tid, uint64_t seq,
	    const int32_t *eid, unsigned neid)
{
	unsigned i;

	cr_assert_eq(p->pid, pid, "pid %u, expected %u", p->pid, pid);
	cr_assert_eq(p->tid, tid, "tid %u, expected %u", p->tid, tid);
	cr_assert_eq(p->seq, seq, "seq %lu, expected %lu",
	    (unsigned long)p->seq, (unsigned long)seq);
	cr_assert_eq(p->neid, neid, "%u records, expected %u", p->neid,
	    neid);
	for (i = 0; i < neid; i++)
		cr_assert_eq(p->eid[i], eid[i], "record %u: eid %d, expected"
		    " %d", i, p->eid[i], eid[i]);
}

/* ---- seg_init, seg_check ---- */

Test(init, size_for)
{
	cr_assert_eq(seg_size_for(3, CS), sizeof(struct seg_hdr) + 3 * (64 + (size_t)CS));
	cr_assert_eq(seg_size_for(0, CS), sizeof(struct seg_hdr));
}

Test(init, refuses_chunk_size)
{
	size_t size = seg_size_for(3, SEG_CHUNK_MAX + 64);
	void *m = seg_mem(size);

	cr_assert_eq(seg_init(m, size, 0), -1);
	cr_assert_eq(seg_init(m, size, SEG_CHUNK_MIN - 8), -1);
	cr_assert_eq(seg_init(m, size, SEG_CHUNK_MAX + 8), -1);
	cr_assert_eq(seg_init(m, size, SEG_CHUNK_MAX + 64), -1);
	cr_assert_eq(seg_init(m, size, SEG_CHUNK_MIN + 4), -1);
	cr_assert_eq(seg_init(m, size, SEG_CHUNK_MIN + 1), -1);
	cr_assert_eq(seg_init(m, size, SEG_CHUNK_MAX - 4), -1);
	cr_assert_eq(seg_init(m, size, SEG_CHUNK_MIN), 0);
	cr_assert_eq(seg_init(m, size, SEG_CHUNK_MIN + 8), 0);
	cr_assert_eq(seg_init(m, size, SEG_CHUNK_MAX), 0);
	cr_assert_eq(((struct seg_hdr *)m)->nchunks, 3);
}

Test(init, refuses_small_buffer)
{
	size_t size = seg_size_for(2, CS);
	void *m = seg_mem(size);

	cr_assert_eq(seg_init(m, 0, CS), -1);
	cr_assert_eq(seg_init(m, 100, CS), -1);
	cr_assert_eq(seg_init(m, sizeof(struct seg_hdr) - 1, CS), -1);
	cr_assert_eq(seg_init(m, sizeof(struct seg_hdr), CS), -1);
	cr_assert_eq(seg_init(m, seg_size_for(1, CS), CS), -1);
	cr_assert_eq(seg_init(m, size - 1, CS), -1, "1.99 chunks: accepted");
	cr_assert_eq(seg_init(m, size, CS), 0);
	cr_assert_eq(((struct seg_hdr *)m)->nchunks, 2);
}

Test(init, layout)
{
	size_t size = seg_size_for(5, CS) + CS - 8;	/* not quite 6 */
	struct seg_hdr *s = seg_mem(size);
	struct seg_chunk *c;
	uint32_t i;

	cr_assert_eq(seg_init(s, size, CS), 0);
	cr_assert_eq(s->magic, SEG_MAGIC);
	cr_assert_eq(s->version, SEG_VERSION);
	cr_assert_eq(s->size, size);
	cr_assert_eq(s->chunk_size, CS);
	cr_assert_eq(s->nchunks, 5);
	cr_assert_eq(s->table_off, sizeof(struct seg_hdr));
	cr_assert_eq(s->data_off, sizeof(struct seg_hdr) +
	    5 * sizeof(struct seg_chunk));
	cr_assert_eq(s->data_off % 64, 0);
	cr_assert_leq(s->data_off + (uint64_t)5 * CS, size);
	cr_assert_eq(atomic_load(&s->nfree), 5);
	cr_assert_eq(atomic_load(&s->push_req), 0);
	cr_assert_eq(atomic_load(&s->ctl), SEG_CTL_ON);
	cr_assert_eq(seg_used(V(s)), 0);
	for (i = 0; i < 5; i++) {
		c = seg_chunk(V(s), i);
		cr_assert_eq((char *)c, (char *)s + s->table_off +
		    i * sizeof *c);
		cr_assert_eq(seg_data(V(s), i), (char *)s + s->data_off +
		    (size_t)i * CS);
		cr_assert_eq(atomic_load(&c->state), SEG_FREE);
		cr_assert_eq(atomic_load(&c->committed), 0);
		cr_assert_eq(c->consumed, 0);
	}
	cr_assert_eq(seg_check(s, size), 0);
}

Test(check, accepts_initialised)
{
	size_t size;
	struct seg_hdr *s = new_seg(4, &size);

	cr_assert_eq(seg_check(s, size), 0);
}

Test(check, refuses_bad_fields)
{
	size_t size;
	struct seg_hdr *s = new_seg(4, &size), good;

	memcpy(&good, s, sizeof good);
#define REFUSED(stmt) do {						\
		stmt;							\
		cr_assert_eq(seg_check(s, size), -1, "accepted: " #stmt); \
		memcpy(s, &good, sizeof good);				\
		cr_assert_eq(seg_check(s, size), 0);			\
	} while (0)
	REFUSED(s->magic ^= 1);
	REFUSED(s->magic = 0);
	REFUSED(s->version = SEG_VERSION + 1);
	REFUSED(s->version = 0);
	REFUSED(s->size = size + 64);
	REFUSED(s->size = size - 64);
	REFUSED(s->chunk_size += 8);
	REFUSED(s->chunk_size -= 8);
	REFUSED(s->chunk_size += 1);
	REFUSED(s->nchunks = 5);
	REFUSED(s->nchunks = 3);
	REFUSED(s->nchunks = 1);
	REFUSED(s->nchunks = 0);
	/* Consistent offsets, but the chunks do not fit. */
	REFUSED(s->nchunks = 5; s->data_off += 64);
	REFUSED(s->nchunks = UINT32_MAX;
	    s->data_off = sizeof(struct seg_hdr) + (uint64_t)UINT32_MAX * 64);
	REFUSED(s->chunk_size = 2 * CS);
	REFUSED(s->table_off = 0);
	REFUSED(s->table_off = 256);
	REFUSED(s->data_off += 64);
	REFUSED(s->data_off -= 64);
	REFUSED(s->data_off = 0);
#undef REFUSED
	cr_assert_eq(seg_check(s, size - 64), -1);
	cr_assert_eq(seg_check(s, size + 64), -1);
	cr_assert_eq(seg_check(s, 100), -1);
}

/* ---- seg_acquire, seg_release ---- */

Test(acquire, distinct_until_none_free)
{
	struct seg_hdr *s = new_seg(4, NULL);
	int notify, i, seen[4] = { 0 };
	struct seg_chunk *c;
	uint32_t k;

	for (k = 0; k < 4; k++) {
		i = seg_acquire(V(s), 7, 100, 200 + k, 10 + k, SEG_KIND_RECORDS, &notify);
		cr_assert(i >= 0 && i < 4, "acquisition %u: %d", k, i);
		cr_assert_eq(seen[i], 0, "chunk %d handed out twice", i);
		seen[i] = 1;
		c = seg_chunk(V(s), (uint32_t)i);
		cr_assert_eq(atomic_load(&c->state), SEG_OWNED);
		cr_assert_eq(c->session, 7);
		cr_assert_eq(c->pid, 100);
		cr_assert_eq(c->tid, 200 + k);
		cr_assert_eq(c->seq, 10 + k);
		cr_assert_eq(atomic_load(&c->committed), 0);
		cr_assert_eq(atomic_load(&s->nfree), 4 - k - 1);
		cr_assert_eq(seg_used(V(s)), k + 1);
	}
	notify = 1;
	cr_assert_eq(seg_acquire(V(s), 7, 100, 300, 20, SEG_KIND_RECORDS, &notify), -1);
	cr_assert_eq(notify, 0);
	cr_assert_eq(atomic_load(&s->nfree), 0);
}

Test(acquire, reused_chunk_starts_empty)
{
	struct seg_hdr *s = new_seg(2, NULL);
	struct sink k;
	uint64_t bad = 0;
	uint32_t a, b;

	sink_init(&k, s);
	a = acq(s, 1, 10, 11, 0);
	b = acq(s, 1, 10, 12, 0);
	append(s, a, 1, 16);
	append(s, a, 2, 24);
	seg_release(V(s), a);
	cr_assert_eq(collect(s, &k, &bad), 1);
	check_piece(&k.p[0], 10, 11, 0, (const int32_t[]){ 1, 2 }, 2);
	cr_assert_eq(state(s, b), SEG_OWNED);
	cr_assert_eq(state(s, a), SEG_FREE);
	cr_assert_eq(acq(s, 2, 20, 21, 5), a);
	cr_assert_eq(atomic_load(&seg_chunk(V(s), a)->committed), 0);
	cr_assert_eq(seg_chunk(V(s), a)->consumed, 0);
	cr_assert_eq(seg_chunk(V(s), a)->session, 2);
	/* Nothing of its former life comes out again. */
	k.n = 0;
	cr_assert_eq(collect(s, &k, &bad), 0);
	append(s, a, 3, 16);
	cr_assert_eq(collect(s, &k, &bad), 1);
	check_piece(&k.p[0], 20, 21, 5, (const int32_t[]){ 3 }, 1);
	cr_assert_eq(bad, 0);
}

Test(acquire, notify_once_below_threshold)
{
	struct seg_hdr *s = new_seg(8, NULL);
	struct sink k;
	uint64_t bad = 0;
	uint32_t idx[8], j;
	int notify, i, round;

	sink_init(&k, s);
	s->threshold = 4;
	for (round = 0; round < 2; round++) {
		for (j = 0; j < 8; j++) {
			notify = -1;
			i = seg_acquire(V(s), 1, 2, 3, j, SEG_KIND_RECORDS, &notify);
			cr_assert_geq(i, 0);
			idx[j] = (uint32_t)i;
			/* nfree 7 6 5 4 3 2 1 0: below 4 first at 3. */
			cr_assert_eq(notify, j == 4, "round %d acquisition %u:"
			    " notify %d", round, j, notify);
		}
		notify = -1;
		cr_assert_eq(seg_acquire(V(s), 1, 2, 3, 8, SEG_KIND_RECORDS, &notify), -1);
		cr_assert_eq(notify, 0);
		for (j = 0; j < 8; j++)
			seg_release(V(s), idx[j]);
		cr_assert_eq(collect(s, &k, &bad), 0);
		cr_assert_eq(atomic_load(&s->nfree), 8);
	}

	/* A collect rearms it even if the count is still low. */
	for (j = 0; j < 8; j++)
		idx[j] = acq(s, 1, 2, 3, j);
	seg_release(V(s), idx[0]);
	seg_release(V(s), idx[1]);
	cr_assert_eq(collect(s, &k, &bad), 0);
	cr_assert_eq(atomic_load(&s->nfree), 2);
	cr_assert_geq(seg_acquire(V(s), 1, 2, 3, 9, SEG_KIND_RECORDS, &notify), 0);
	cr_assert_eq(notify, 1, "no notify after the LM drained");
	cr_assert_geq(seg_acquire(V(s), 1, 2, 3, 10, SEG_KIND_RECORDS, &notify), 0);
	cr_assert_eq(notify, 0, "notified twice between drains");
}

Test(acquire, release_makes_full)
{
	struct seg_hdr *s = new_seg(4, NULL);
	uint32_t a = acq(s, 1, 2, 3, 4), b = acq(s, 1, 2, 5, 6);

	seg_release(V(s), a);
	cr_assert_eq(state(s, a), SEG_FULL);
	cr_assert_eq(state(s, b), SEG_OWNED);
	cr_assert_eq(seg_used(V(s)), 2);
	cr_assert_eq(atomic_load(&s->nfree), 2, "release frees nothing");
}

Test(acquire, finds_last_free_chunk_at_any_hint)
{
	struct seg_hdr *s = new_seg(3, NULL);
	static const uint32_t hints[] = { 0, 1, 2, 0x7fffffffu,
	    UINT32_MAX - 2, UINT32_MAX - 1, UINT32_MAX };
	struct sink k;
	uint64_t bad = 0;
	uint32_t f, h, j;
	int notify, i;

	sink_init(&k, s);
	for (j = 0; j < 3; j++)
		(void)acq(s, 1, 2, 3, j);
	for (f = 0; f < 3; f++) {
		for (h = 0; h < sizeof hints / sizeof hints[0]; h++) {
			/* Only chunk f is free. */
			seg_release(V(s), f);
			cr_assert_eq(collect(s, &k, &bad), 0);
			cr_assert_eq(state(s, f), SEG_FREE);
			atomic_store(&s->hint, hints[h]);
			i = seg_acquire(V(s), 1, 2, 3, 9, SEG_KIND_RECORDS, &notify);
			cr_assert_eq(i, (int)f, "hint %#x, chunk %u free:"
			    " got %d", hints[h], f, i);
		}
	}
}

/* ---- seg_collect ---- */

Test(collect, committed_bytes_only)
{
	struct seg_hdr *s = new_seg(4, NULL);
	struct seg_chunk *c;
	struct sink k;
	uint64_t bad = 0;
	uint32_t i;

	sink_init(&k, s);
	i = acq(s, 3, 50, 51, 9);
	c = seg_chunk(V(s), i);
	cr_assert_eq(collect(s, &k, &bad), 0, "an empty chunk emitted");
	cr_assert_eq(k.calls, 0);
	append(s, i, 1, 16);
	append(s, i, 2, 32);
	stage(s, i, 0, POISON, 24);	/* written, not yet published */
	cr_assert_eq(collect(s, &k, &bad), 1);
	cr_assert_eq(k.n, 1);
	check_piece(&k.p[0], 50, 51, 9, (const int32_t[]){ 1, 2 }, 2);
	cr_assert_eq(k.p[0].len, 48);
	cr_assert_eq(state(s, i), SEG_OWNED);
	cr_assert_eq(c->consumed, 48);
	cr_assert_eq(bad, 0);
}

Test(collect, never_twice)
{
	struct seg_hdr *s = new_seg(4, NULL);
	struct sink k;
	uint64_t bad = 0;
	uint32_t i;

	sink_init(&k, s);
	i = acq(s, 3, 50, 51, 9);
	append(s, i, 1, 16);
	append(s, i, 2, 24);
	cr_assert_eq(collect(s, &k, &bad), 1);
	check_piece(&k.p[0], 50, 51, 9, (const int32_t[]){ 1, 2 }, 2);
	cr_assert_eq(collect(s, &k, &bad), 0);
	cr_assert_eq(k.n, 1);
	append(s, i, 3, 40);
	append(s, i, 4, 16);
	append(s, i, 5, 16);
	cr_assert_eq(collect(s, &k, &bad), 1);
	cr_assert_eq(k.n, 2);
	check_piece(&k.p[1], 50, 51, 9, (const int32_t[]){ 3, 4, 5 }, 3);
	cr_assert_eq(k.p[1].len, 72);
	cr_assert_eq(collect(s, &k, &bad), 0);
	/* Released with nothing new: freed, nothing emitted. */
	seg_release(V(s), i);
	cr_assert_eq(collect(s, &k, &bad), 0);
	cr_assert_eq(k.n, 2);
	cr_assert_eq(state(s, i), SEG_FREE);
	cr_assert_eq(bad, 0);
}

Test(collect, frees_full_keeps_owned)
{
	struct seg_hdr *s = new_seg(4, NULL);
	struct sink k;
	uint64_t bad = 0;
	uint32_t a, b, e;

	sink_init(&k, s);
	a = acq(s, 1, 1, 1, 0);
	b = acq(s, 2, 2, 2, 0);
	e = acq(s, 3, 3, 3, 0);
	append(s, a, 10, 16);
	append(s, b, 20, 16);
	seg_release(V(s), a);
	seg_release(V(s), e);		/* full, but empty */
	cr_assert_eq(atomic_load(&s->nfree), 1);
	cr_assert_eq(seg_used(V(s)), 3);
	cr_assert_eq(collect(s, &k, &bad), 2);
	check_piece(&k.p[0], 1, 1, 0, (const int32_t[]){ 10 }, 1);
	check_piece(&k.p[1], 2, 2, 0, (const int32_t[]){ 20 }, 1);
	cr_assert_eq(state(s, a), SEG_FREE);
	cr_assert_eq(state(s, e), SEG_FREE);
	cr_assert_eq(state(s, b), SEG_OWNED);
	cr_assert_eq(atomic_load(&s->nfree), 3);
	cr_assert_eq(seg_used(V(s)), 1);
	/* The owner goes on writing into b. */
	append(s, b, 21, 16);
	cr_assert_eq(collect(s, &k, &bad), 1);
	check_piece(&k.p[2], 2, 2, 0, (const int32_t[]){ 21 }, 1);
	cr_assert_eq(bad, 0);
}

Test(collect, ordered_by_pid_session_seq)
{
	static const struct { uint32_t pid, session; uint64_t seq; } o[] = {
		{ 7, 2, 0 }, { 3, 1, 5 }, { 7, 1, 9 }, { 3, 1, 2 },
		{ 7, 2, 1 }, { 3, 4, 0 }, { 5, 1, 1 }, { 7, 1, 10 }
	};
	/* Acquisition numbers, sorted by (pid, session, seq). */
	static const int32_t want[] = { 3, 1, 5, 6, 2, 7, 0, 4 };
	struct seg_hdr *s = new_seg(8, NULL);
	struct sink k;
	uint64_t bad = 0;
	uint32_t i, j;

	sink_init(&k, s);
	for (j = 0; j < 8; j++) {
		i = acq(s, o[j].session, o[j].pid, 100 + j, o[j].seq);
		append(s, i, (int32_t)j, 16);
		if (j % 3 == 0)
			seg_release(V(s), i);
	}
	cr_assert_eq(collect(s, &k, &bad), 8);
	for (j = 0; j < 8; j++) {
		check_piece(&k.p[j], o[want[j]].pid, 100 + (uint32_t)want[j],
		    o[want[j]].seq, &want[j], 1);
		cr_assert_eq(k.p[j].session, o[want[j]].session,
		    "piece %u: the chunk's session", j);
	}
}

Test(collect, order_independent_of_chunk_index)
{
	struct seg_hdr *s = new_seg(4, NULL);
	struct sink k;
	uint64_t bad = 0;
	uint32_t i, j;

	/* The same thread's chunks, acquired so that higher indices carry
	 * lower seq numbers. */
	sink_init(&k, s);
	for (j = 0; j < 4; j++) {
		atomic_store(&s->hint, 3 - j);
		i = acq(s, 1, 42, 43, j);
		cr_assert_eq(i, 3 - j);
		append(s, i, (int32_t)j, 16);
		seg_release(V(s), i);
	}
	cr_assert_eq(collect(s, &k, &bad), 4);
	for (j = 0; j < 4; j++)
		check_piece(&k.p[j], 42, 43, j, (const int32_t[]){ (int32_t)j },
		    1);
}

/* A chunk of thread 10/11 holding one record of eid 1 (24 bytes), then 40
 * published bytes that are not records: a len of 0, then a valid-looking
 * record that must not be reached.  Returns its index. */
static uint32_t
stage_junk_tail(struct seg_hdr *s)
{
	uint32_t i = acq(s, 1, 10, 11, 0);
	char *d;

	append(s, i, 1, 24);
	d = seg_data(V(s), i) + 24;
	memset(d, 0, 16);
	put_rec(d + 16, 24, POISON);
	atomic_store(&seg_chunk(V(s), i)->committed, 64);
	return i;
}

/* A FULL chunk of thread 12/13 of 32 bytes of junk only.  Its index. */
static uint32_t
stage_junk_chunk(struct seg_hdr *s)
{
	uint32_t j = acq(s, 1, 12, 13, 0);

	memset(seg_data(V(s), j), 0xff, 32);
	atomic_store(&seg_chunk(V(s), j)->committed, 32);
	seg_release(V(s), j);
	return j;
}

/* seg_collect_raw's emitter, as the Local Monitor's: checks the private
 * copy itself and takes its well-formed start (k->fail_call UINT32_MAX:
 * claims more than it was given, which must not count as taken). */
static int
raw_emit(void *arg, uint32_t pid, uint32_t tid, uint32_t session,
	 uint64_t seq, uint64_t at, const void *data, size_t len, size_t *ok)
{
	struct sink *k = arg;
	int meta;

	*ok = rec_valid_prefix_meta(data, len, &meta);
	if (k->fail_call == UINT32_MAX) {
		*ok = len + 64;
		return 0;
	}
	if (*ok == 0)
		return 0;
	return sink_emit(arg, pid, tid, session, seq, at, data, *ok, meta);
}

/* A collection of s into k: checked by seg_collect, or by the emitter. */
static int
coll(struct seg_hdr *s, struct sink *k, uint64_t *bad, int raw)
{
	return raw ? seg_collect_raw(V(s), 0, raw_emit, k, bad, NULL) :
	    collect(s, k, bad);
}

/* Malformed bytes after a record, then a chunk of nothing else: skipped,
 * counted once, the chunks consumed and freed; the chunk of the first. */
static uint32_t
junk_skipped(struct seg_hdr *s, struct sink *k, uint64_t *bad, int raw)
{
	struct seg_chunk *c;
	uint32_t i, j;

	i = stage_junk_tail(s);
	c = seg_chunk(V(s), i);
	cr_assert_eq(coll(s, k, bad, raw), 1);
	check_piece(&k->p[0], 10, 11, 0, (const int32_t[]){ 1 }, 1);
	cr_assert_eq(k->p[0].len, 24);
	cr_assert_eq(*bad, 40);
	cr_assert_eq(c->consumed, 64);
	/* Counted once, and the writer's next records come out. */
	cr_assert_eq(coll(s, k, bad, raw), 0);
	cr_assert_eq(*bad, 40);
	append(s, i, 2, 16);
	cr_assert_eq(coll(s, k, bad, raw), 1);
	check_piece(&k->p[1], 10, 11, 0, (const int32_t[]){ 2 }, 1);
	cr_assert_eq(*bad, 40);
	/* A full chunk of nothing but junk: no piece, counted, freed. */
	j = stage_junk_chunk(s);
	cr_assert_eq(coll(s, k, bad, raw), 0);
	cr_assert_eq(k->n, 2);
	cr_assert_eq(*bad, 72);
	cr_assert_eq(state(s, j), SEG_FREE);
	return i;
}

Test(collect, malformed_bytes_skipped_and_counted)
{
	struct seg_hdr *s = new_seg(4, NULL);
	struct sink k;
	uint64_t bad = 0;

	sink_init(&k, s);
	(void)junk_skipped(s, &k, &bad, 0);
}

/* The same with an emitter that checks what it takes; one that claims
 * more than its piece, or fails. */
Test(collect, raw_emitter_checks_what_it_takes)
{
	struct seg_hdr *s = new_seg(4, NULL);
	struct seg_chunk *c;
	struct sink k;
	uint64_t bad = 0;
	uint32_t i;

	sink_init(&k, s);
	i = junk_skipped(s, &k, &bad, 1);
	c = seg_chunk(V(s), i);
	/* Claiming more than the piece: the piece, no more. */
	append(s, i, 3, 16);
	k.fail_call = UINT32_MAX;
	cr_assert_eq(coll(s, &k, &bad, 1), 1);
	cr_assert_eq(bad, 72);
	cr_assert_eq(c->consumed, 64 + 16 + 16);
	/* Failing: the chunk left as it was. */
	append(s, i, 4, 16);
	k.fail_call = k.calls + 1;
	cr_assert_eq(coll(s, &k, &bad, 1), -1);
	cr_assert_eq(c->consumed, 64 + 16 + 16);
	k.fail_call = 0;
	cr_assert_eq(coll(s, &k, &bad, 1), 1);
	check_piece(&k.p[k.n - 1], 10, 11, 0, (const int32_t[]){ 4 }, 1);
}

Test(collect, scribbled_committed_past_chunk)
{
	static const uint64_t junk[] = { CS + 8, CS + 16, 2 * (uint64_t)CS,
	    UINT64_MAX - 7 };
	struct seg_hdr *s;
	struct seg_chunk *c;
	struct sink k;
	uint64_t bad, off, t;
	uint32_t i, j;
	size_t size;

	for (t = 0; t < sizeof junk / sizeof junk[0]; t++) {
		/* The last chunk: its data ends where the buffer does. */
		s = new_seg(2, &size);
		sink_init(&k, s);
		bad = 0;
		j = acq(s, 1, 10, 11, 0);
		i = acq(s, 1, 10, 11, 1);
		if (i != 1) {
			i = j;
			j = 1 - i;
		}
		cr_assert_eq(i, 1);
		/* Valid records in the whole chunk, and in the other. */
		for (off = 0; off < CS; off += 16)
			put_rec(seg_data(V(s), i) + off, 16, (int32_t)off);
		for (off = 0; off < CS; off += 16)
			put_rec(seg_data(V(s), j) + off, 16, POISON);
		c = seg_chunk(V(s), i);
		atomic_store(&c->committed, junk[t]);
		cr_assert_geq(collect(s, &k, &bad), 0);
		cr_assert_geq(collect(s, &k, &bad), 0);
		/* Whatever came out (if anything) is chunk i's records, from
		 * its start, once (the sink refuses the other chunk's). */
		cr_assert_leq(k.n, 1, "committed %#lx: %u pieces",
		    (unsigned long)junk[t], k.n);
		for (off = 0; k.n == 1 && off < k.p[0].neid; off++)
			cr_assert_eq(k.p[0].eid[off], (int32_t)(16 * off));
		cr_assert_gt(bad, 0, "committed %#lx: nothing counted",
		    (unsigned long)junk[t]);
		/* Released, the chunk returns to the pool. */
		seg_release(V(s), i);
		cr_assert_geq(collect(s, &k, &bad), 0);
		cr_assert_leq(k.n, 1);
		cr_assert_eq(state(s, i), SEG_FREE, "committed %#lx: chunk"
		    " not freed", (unsigned long)junk[t]);
		free_all();
	}
}

Test(collect, scribbled_consumed_past_committed)
{
	struct seg_hdr *s = new_seg(4, NULL);
	struct seg_chunk *c;
	struct sink k;
	uint64_t bad = 0;
	uint32_t i;

	sink_init(&k, s);
	i = acq(s, 1, 10, 11, 0);
	c = seg_chunk(V(s), i);
	append(s, i, 1, 16);
	append(s, i, 2, 16);
	cr_assert_eq(collect(s, &k, &bad), 1);
	stage(s, i, 0, POISON, 16);
	stage(s, i, 16, POISON, 16);
	c->consumed = 4096;
	cr_assert_geq(collect(s, &k, &bad), 0);
	cr_assert_eq(k.n, 1, "emitted from a consumed past committed");
	c->consumed = UINT64_MAX & ~(uint64_t)7;
	cr_assert_geq(collect(s, &k, &bad), 0);
	cr_assert_eq(k.n, 1);
	/* Full and scribbled: no garbage, and the chunk is not lost. */
	c->consumed = 4096;
	seg_release(V(s), i);
	cr_assert_geq(collect(s, &k, &bad), 0);
	cr_assert_eq(k.n, 1);
	cr_assert_eq(state(s, i), SEG_FREE);
}

Test(collect, scribbled_consumed_unaligned)
{
	struct seg_hdr *s = new_seg(4, NULL);
	struct seg_chunk *c;
	struct sink k;
	uint64_t bad = 0;
	uint32_t i, u;

	for (u = 1; u < 8; u++) {
		sink_init(&k, s);
		i = acq(s, 1, 10, 11, u);
		c = seg_chunk(V(s), i);
		/* Read from offset 4, this record's eid (16) and ts would
		 * look like a record of 16 bytes. */
		append(s, i, 16, 32);
		memset(seg_data(V(s), i) + 16, 0, 16);
		c->consumed = u;
		cr_assert_geq(collect(s, &k, &bad), 0);
		cr_assert_eq(k.n, 0, "consumed %u: emitted from mid-record",
		    u);
		seg_release(V(s), i);
		cr_assert_geq(collect(s, &k, &bad), 0);
		cr_assert_eq(k.n, 0);
		cr_assert_eq(state(s, i), SEG_FREE);
	}
}

/*
 * A writer that moves on while the collector scans the chunk table: it
 * fills its chunk (index 5, seq 0), goes through a chunk the scan has
 * already passed as free (index 10, seq 1) and on to one the scan has not
 * reached yet (index far, seq 2).  The records must still come out in
 * order.  To stop the scan at the right place, the second page of the
 * table (chunk first on; 61 with 4 KiB pages) is made inaccessible; the
 * fault handler plays the writer, opens the page again and returns, and
 * the scan goes on.
 */
static struct {
	struct seg_hdr	*s;
	char		*page;
	size_t		pagesz;
	size_t		pageoff;	/* where the protected page starts */
	uint32_t	far;
	int		fired, idx1, idx2;
} mv;

static void
mv_segv(int sig, siginfo_t *si, void *uc)
{
	struct seg_hdr *s = mv.s;
	char *a = si->si_addr;
	int notify;

	(void)uc;
	if (mv.fired || a < mv.page || a >= mv.page + mv.pagesz) {
		signal(sig, SIG_DFL);
		return;
	}
	mv.fired = 1;
	mprotect(mv.page, mv.pagesz, PROT_READ | PROT_WRITE);
	append16(s, 5, 2);
	seg_release(V(s), 5);
	atomic_store(&s->hint, 10);
	mv.idx1 = seg_acquire(V(s), 1, 1, 1, 1, SEG_KIND_RECORDS, &notify);
	if (mv.idx1 != 10)
		return;
	append16(s, 10, 3);
	append16(s, 10, 4);
	seg_release(V(s), 10);
	atomic_store(&s->hint, mv.far);
	mv.idx2 = seg_acquire(V(s), 1, 1, 1, 2, SEG_KIND_RECORDS, &notify);
	if (mv.idx2 != (int)mv.far)
		return;
	append16(s, mv.far, 5);
}

Test(collect, writer_moving_during_scan)
{
	struct sigaction sa, old;
	struct seg_hdr *s;
	int32_t eid[16];
	unsigned n = 0, j, r;
	uint32_t first;
	size_t size, map;
	struct sink k;
	uint64_t bad = 0;

	mv.pagesz = (size_t)sysconf(_SC_PAGESIZE);
	/* The first chunk entry that starts a page of its own, past the
	 * header (which is a multiple of 64 bytes, as pages are). */
	{
		size_t pg = (sizeof *s + mv.pagesz - 1) / mv.pagesz *
		    mv.pagesz;

		if (pg == sizeof *s)
			pg += mv.pagesz;
		first = (uint32_t)((pg - sizeof *s) /
		    sizeof(struct seg_chunk));
		mv.pageoff = pg;
	}
	mv.far = first + 9;
	size = seg_size_for(first + 11, CS);
	map = (size + mv.pagesz - 1) / mv.pagesz * mv.pagesz;
	s = mmap(NULL, map, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
	    -1, 0);
	cr_assert_neq(s, MAP_FAILED);
	cr_assert_eq(seg_init(s, size, CS), 0);
	cr_assert_eq(s->nchunks, first + 11);
	mv.s = s;
	mv.page = (char *)s + mv.pageoff;
	cr_assert_leq((char *)seg_chunk(V(s), first - 1), mv.page - 64);
	cr_assert_eq((char *)seg_chunk(V(s), first), mv.page);
	cr_assert_leq((char *)seg_chunk(V(s), mv.far), mv.page + mv.pagesz - 64);

	atomic_store(&s->hint, 5);
	cr_assert_eq(acq(s, 1, 1, 1, 0), 5);
	append(s, 5, 0, 16);
	append(s, 5, 1, 16);

	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = mv_segv;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	cr_assert_eq(sigaction(SIGSEGV, &sa, &old), 0);
	cr_assert_eq(mprotect(mv.page, mv.pagesz, PROT_NONE), 0);
	sink_init(&k, s);
	r = (unsigned)collect(s, &k, &bad);
	mprotect(mv.page, mv.pagesz, PROT_READ | PROT_WRITE);
	sigaction(SIGSEGV, &old, NULL);
	cr_assert_eq(mv.fired, 1, "the scan did not reach chunk %u", first);
	cr_assert_eq(mv.idx1, 10);
	cr_assert_eq(mv.idx2, (int)mv.far);
	cr_assert_leq(r, 3);

	cr_assert_geq(collect(s, &k, &bad), 0);
	seg_release(V(s), mv.far);
	cr_assert_geq(collect(s, &k, &bad), 0);
	for (j = 0; j < k.n; j++) {
		cr_assert_eq(k.p[j].pid, 1);
		for (r = 0; r < k.p[j].neid; r++) {
			cr_assert_lt(n, 16);
			eid[n++] = k.p[j].eid[r];
		}
	}
	cr_assert_eq(n, 6, "%u records, expected 6", n);
	for (j = 0; j < n; j++)
		cr_assert_eq(eid[j], (int32_t)j, "record %u is %d: the chunk"
		    " of seq 1, acquired behind the scan, came out after the"
		    " chunk of seq 2", j, eid[j]);
	cr_assert_eq(seg_used(V(s)), 0);
	munmap(s, map);
}

Test(collect, emit_failure_leaves_chunk)
{
	struct seg_hdr *s = new_seg(4, NULL);
	struct sink k;
	uint64_t bad = 0;
	uint32_t a, b;

	sink_init(&k, s);
	a = acq(s, 1, 1, 1, 0);
	b = acq(s, 1, 2, 2, 0);
	append(s, a, 1, 16);
	append(s, a, 2, 16);
	append(s, b, 3, 16);
	seg_release(V(s), a);

	/* Refused at once: nothing consumed, nothing freed. */
	k.fail_call = 1;
	cr_assert_eq(collect(s, &k, &bad), -1);
	cr_assert_eq(k.n, 0);
	cr_assert_eq(state(s, a), SEG_FULL);
	cr_assert_eq(seg_chunk(V(s), a)->consumed, 0);
	cr_assert_eq(seg_chunk(V(s), b)->consumed, 0);
	cr_assert_eq(atomic_load(&s->nfree), 2);

	/* Refused at the second piece: the first went out and is done. */
	k.calls = 0;
	k.fail_call = 2;
	cr_assert_eq(collect(s, &k, &bad), -1);
	cr_assert_eq(k.n, 1);
	check_piece(&k.p[0], 1, 1, 0, (const int32_t[]){ 1, 2 }, 2);
	cr_assert_eq(state(s, a), SEG_FREE);
	cr_assert_eq(state(s, b), SEG_OWNED);
	cr_assert_eq(seg_chunk(V(s), b)->consumed, 0);

	/* Then everything else, once. */
	k.fail_call = 0;
	cr_assert_eq(collect(s, &k, &bad), 1);
	cr_assert_eq(k.n, 2);
	check_piece(&k.p[1], 2, 2, 0, (const int32_t[]){ 3 }, 1);
	cr_assert_eq(collect(s, &k, &bad), 0);
	cr_assert_eq(k.n, 2);
	cr_assert_eq(bad, 0);
}

/* ---- seg_reclaim_session, seg_used ---- */

Test(reclaim, only_that_session)
{
	struct seg_hdr *s = new_seg(8, NULL);
	uint32_t a, b, c, d, e, g;
	struct sink k;
	uint64_t bad = 0;
	unsigned j;

	sink_init(&k, s);
	/* g: session 1 in a former life, now free. */
	g = acq(s, 1, 10, 10, 0);
	seg_release(V(s), g);
	cr_assert_eq(collect(s, &k, &bad), 0);
	cr_assert_eq(state(s, g), SEG_FREE);

	a = acq(s, 1, 10, 10, 1);		/* owned */
	b = acq(s, 1, 10, 12, 0);		/* full */
	c = acq(s, 2, 10, 10, 0);		/* same pid, later session */
	d = acq(s, 1, 11, 11, 0);		/* claimed, writer died */
	e = acq(s, 3, 12, 12, 0);		/* another session */
	append(s, a, 1, 16);
	append(s, b, 2, 16);
	seg_release(V(s), b);
	append(s, c, 3, 16);
	append(s, e, 5, 16);
	/* d died after the CAS: committed is from its former life. */
	put_rec(seg_data(V(s), d), 16, POISON);
	atomic_store(&seg_chunk(V(s), d)->committed, 16);
	atomic_store(&seg_chunk(V(s), d)->state, SEG_CLAIMED);
	cr_assert_eq(seg_used(V(s)), 5);

	seg_reclaim_session(V(s), 1);
	cr_assert_eq(state(s, a), SEG_FULL);
	cr_assert_eq(state(s, b), SEG_FULL);
	cr_assert_eq(state(s, d), SEG_FULL);
	cr_assert_eq(state(s, c), SEG_OWNED);
	cr_assert_eq(state(s, e), SEG_OWNED);
	cr_assert_eq(state(s, g), SEG_FREE);
	cr_assert_eq(seg_used(V(s)), 5);

	cr_assert_eq(collect(s, &k, &bad), 4);
	for (j = 0; j < k.n; j++)
		cr_assert_neq(k.p[j].eid[0], POISON);
	check_piece(&k.p[0], 10, 12, 0, (const int32_t[]){ 2 }, 1);
	check_piece(&k.p[1], 10, 10, 1, (const int32_t[]){ 1 }, 1);
	check_piece(&k.p[2], 10, 10, 0, (const int32_t[]){ 3 }, 1);
	check_piece(&k.p[3], 12, 12, 0, (const int32_t[]){ 5 }, 1);
	cr_assert_eq(state(s, a), SEG_FREE);
	cr_assert_eq(state(s, b), SEG_FREE);
	cr_assert_eq(state(s, d), SEG_FREE);
	cr_assert_eq(seg_used(V(s)), 2);
	cr_assert_eq(atomic_load(&s->nfree), 6);

	seg_reclaim_session(V(s), 9);
	cr_assert_eq(seg_used(V(s)), 2);
	cr_assert_eq(state(s, c), SEG_OWNED);
}

Test(used, counts_non_free)
{
	struct seg_hdr *s = new_seg(4, NULL);
	struct sink k;
	uint64_t bad = 0;
	uint32_t a, b;

	sink_init(&k, s);
	cr_assert_eq(seg_used(V(s)), 0);
	a = acq(s, 1, 1, 1, 0);
	b = acq(s, 2, 2, 2, 0);
	(void)acq(s, 2, 2, 3, 0);
	cr_assert_eq(seg_used(V(s)), 3);
	seg_release(V(s), a);
	cr_assert_eq(seg_used(V(s)), 3);
	cr_assert_eq(collect(s, &k, &bad), 0);
	cr_assert_eq(seg_used(V(s)), 2);
	seg_release(V(s), b);
	cr_assert_eq(seg_used(V(s)), 2);
	seg_reclaim_session(V(s), 2);
	cr_assert_eq(seg_used(V(s)), 2);
	cr_assert_eq(collect(s, &k, &bad), 0);
	cr_assert_eq(seg_used(V(s)), 0);
	cr_assert_eq(atomic_load(&s->nfree), 4);
}

/* ---- many writers, one collector ---- */

#define MT_THREADS	4
#define MT_RECORDS	200000u
#define MT_CHUNKS	8

/* Record n of a thread: 16, 24 or 32 bytes, eid and ts n, payload slots
 * holding n, so that chunks do not end on a record boundary. */
static uint16_t
mt_len(uint64_t n)
{
	return (uint16_t)(16 + 8 * (n % 3));
}

struct wstate {
	uint32_t	session, pid, tid;
	uint64_t	cseq;		/* the next chunk's seq */
	int		ci;		/* chunk held, or -1 */
	uint64_t	off;
	uint64_t	next;		/* the next record's number */
};

static void
w_init(struct wstate *w, unsigned t)
{
	memset(w, 0, sizeof *w);
	w->session = t + 1;
	w->pid = 1000 + t;
	w->tid = t;
	w->ci = -1;
}

/* Writes the writer's next record, switching chunks when full.  Returns 0,
 * or -1 (nothing written) if no chunk was free. */
static int
w_step(struct seg_hdr *s, struct wstate *w)
{
	uint16_t len = mt_len(w->next);
	struct rec_hdr h = { len, REC_CLASS_EVENT, REC_ATTR_POINT,
	    (int32_t)w->next, w->next };
	uint64_t k;
	int notify;
	char *p;

	if (w->ci >= 0 && w->off + len > s->chunk_size) {
		seg_release(V(s), (uint32_t)w->ci);
		w->ci = -1;
	}
	if (w->ci < 0) {
		w->ci = seg_acquire(V(s), w->session, w->pid, w->tid, w->cseq,
		    SEG_KIND_RECORDS, &notify);
		if (w->ci < 0)
			return -1;
		w->cseq++;
		w->off = 0;
	}
	p = seg_data(V(s), (uint32_t)w->ci) + w->off;
	memcpy(p, &h, sizeof h);
	for (k = sizeof h; k < len; k += 8)
		memcpy(p + k, &w->next, 8);
	w->off += len;
	atomic_store_explicit(&seg_chunk(V(s), (uint32_t)w->ci)->committed,
	    w->off, memory_order_release);
	w->next++;
	return 0;
}

/* The collector's view: each thread's records must come exactly once, in
 * order.  Errors are noted, not asserted (the writers are running). */
struct mt_check {
	uint64_t	next[MT_THREADS];
	uint64_t	last_seq[MT_THREADS];
	int		seen[MT_THREADS];
	uint64_t	records;
	char		err[256];
};

static int
mt_emit(void *arg, uint32_t pid, uint32_t tid, uint32_t session,
	uint64_t seq, uint64_t at, const void *data, size_t len, int meta)
{
	struct mt_check *m = arg;
	const char *d = data;
	struct rec_hdr h;
	uint64_t v, k;
	size_t off;
	unsigned t;

	(void)session;
	(void)meta;
	(void)at;
	if (m->err[0] != '\0')
		return 0;
	if (pid < 1000 || pid >= 1000 + MT_THREADS || tid != pid - 1000) {
		snprintf(m->err, sizeof m->err, "piece of pid %u tid %u", pid,
		    tid);
		return 0;
	}
	t = tid;
	if (m->seen[t] && seq < m->last_seq[t]) {
		snprintf(m->err, sizeof m->err, "thread %u: chunk seq %lu"
		    " after %lu", t, (unsigned long)seq,
		    (unsigned long)m->last_seq[t]);
		return 0;
	}
	m->seen[t] = 1;
	m->last_seq[t] = seq;
	for (off = 0; off < len; off += h.len) {
		if (len - off < sizeof h) {
			snprintf(m->err, sizeof m->err, "thread %u: partial"
			    " header", t);
			return 0;
		}
		memcpy(&h, d + off, sizeof h);
		if (h.len != mt_len(m->next[t]) || h.len > len - off ||
		    h.eid != (int32_t)m->next[t] || h.ts != m->next[t]) {
			snprintf(m->err, sizeof m->err, "thread %u: record"
			    " len %u eid %d, expected number %lu", t, h.len,
			    h.eid, (unsigned long)m->next[t]);
			return 0;
		}
		for (k = sizeof h; k < h.len; k += 8) {
			memcpy(&v, d + off + k, 8);
			if (v != m->next[t]) {
				snprintf(m->err, sizeof m->err, "thread %u:"
				    " record %lu: payload %lu", t,
				    (unsigned long)m->next[t],
				    (unsigned long)v);
				return 0;
			}
		}
		m->next[t]++;
		m->records++;
	}
	return 0;
}

static void
mt_verify(struct seg_hdr *s, struct mt_check *m, uint64_t bad)
{
	unsigned t;

	cr_assert_eq(m->err[0], '\0', "%s", m->err);
	for (t = 0; t < MT_THREADS; t++)
		cr_assert_eq(m->next[t], MT_RECORDS, "thread %u: %lu records",
		    t, (unsigned long)m->next[t]);
	cr_assert_eq(m->records, (uint64_t)MT_THREADS * MT_RECORDS);
	cr_assert_eq(bad, 0);
	cr_assert_eq(seg_used(V(s)), 0);
	cr_assert_eq(atomic_load(&s->nfree), MT_CHUNKS);
}

struct mt_writer {
	struct seg_hdr	*s;
	unsigned	idx;
	atomic_uint	*done;
	uint64_t	chunks;
};

static void *
mt_writer(void *arg)
{
	struct mt_writer *a = arg;
	struct wstate w;

	w_init(&w, a->idx);
	while (w.next < MT_RECORDS)
		if (w_step(a->s, &w) != 0)
			sched_yield();
	if (w.ci >= 0)
		seg_release(V(a->s), (uint32_t)w.ci);
	a->chunks = w.cseq;
	atomic_fetch_add(a->done, 1);
	return NULL;
}

Test(ring, four_writer_threads, .timeout = 60)
{
	struct seg_hdr *s = new_seg(MT_CHUNKS, NULL);
	struct mt_writer wr[MT_THREADS];
	pthread_t th[MT_THREADS];
	static struct mt_check m;
	atomic_uint done = 0;
	uint64_t bad = 0, chunks = 0;
	unsigned t;
	int n;

	for (t = 0; t < MT_THREADS; t++) {
		wr[t].s = s;
		wr[t].idx = t;
		wr[t].done = &done;
		wr[t].chunks = 0;
		cr_assert_eq(pthread_create(&th[t], NULL, mt_writer, &wr[t]),
		    0);
	}
	while (atomic_load(&done) < MT_THREADS) {
		n = seg_collect(V(s), mt_emit, &m, &bad);
		cr_assert_geq(n, 0);
		if (n == 0)
			sched_yield();
	}
	for (t = 0; t < MT_THREADS; t++) {
		cr_assert_eq(pthread_join(th[t], NULL), 0);
		chunks += wr[t].chunks;
	}
	cr_assert_geq(seg_collect(V(s), mt_emit, &m, &bad), 0);
	cr_assert_eq(seg_collect(V(s), mt_emit, &m, &bad), 0,
	    "a last collect still emitted");
	mt_verify(s, &m, bad);
	cr_assert_gt(chunks, 10 * MT_CHUNKS, "chunks were not reused");
}

Test(ring, single_thread_interleaved, .timeout = 60)
{
	struct seg_hdr *s = new_seg(MT_CHUNKS, NULL);
	struct wstate w[MT_THREADS];
	static struct mt_check m;
	uint64_t bad = 0, steps = 0;
	unsigned t, left;
	int tries;

	for (t = 0; t < MT_THREADS; t++)
		w_init(&w[t], t);
	do {
		left = 0;
		for (t = 0; t < MT_THREADS; t++) {
			if (w[t].next >= MT_RECORDS)
				continue;
			/* Writer t takes 1 to 5 steps. */
			for (tries = 0; tries < 1 + (int)(steps % 5) &&
			    w[t].next < MT_RECORDS; tries++)
				while (w_step(s, &w[t]) != 0) {
					/* No chunk free: the LM drains. */
					cr_assert_geq(seg_collect(V(s), mt_emit,
					    &m, &bad), 0);
					cr_assert_gt(atomic_load(&s->nfree),
					    0, "nothing freed");
				}
			left += w[t].next < MT_RECORDS;
			if (++steps % 997 == 0)
				cr_assert_geq(seg_collect(V(s), mt_emit, &m,
				    &bad), 0);
		}
	} while (left > 0);
	for (t = 0; t < MT_THREADS; t++)
		if (w[t].ci >= 0)
			seg_release(V(s), (uint32_t)w[t].ci);
	cr_assert_geq(seg_collect(V(s), mt_emit, &m, &bad), 0);
	cr_assert_eq(seg_collect(V(s), mt_emit, &m, &bad), 0);
	mt_verify(s, &m, bad);
}

/*
 * A writer scribbles over the layout fields of the shared header after the
 * LM took its view: the LM keeps collecting within the real segment (an
 * out-of-bounds access would fault under the sanitizers) and a writer
 * holding its own view keeps allocating correctly.
 */
Test(collect, header_scribbled_after_view)
{
	size_t size;
	struct seg_hdr *s = new_seg(4, &size);
	struct seg v;
	struct sink k;
	uint64_t bad = 0;
	int notify, a, b;

	seg_view(&v, s, size);
	sink_init(&k, s);
	a = seg_acquire(&v, 1, 10, 11, 0, SEG_KIND_RECORDS, &notify);
	cr_assert_geq(a, 0);
	append(s, (uint32_t)a, 1, 16);
	append(s, (uint32_t)a, 2, 32);
	seg_release(&v, (uint32_t)a);

	s->nchunks = UINT32_MAX;
	s->chunk_size = 1u << 30;
	s->table_off = UINT64_MAX - 63;
	s->data_off = (uint64_t)1 << 40;
	s->threshold = UINT32_MAX;

	cr_assert_eq(seg_collect(&v, sink_emit, &k, &bad), 1);
	check_piece(&k.p[0], 10, 11, 0, (const int32_t[]){ 1, 2 }, 2);
	cr_assert_eq(bad, 0);
	cr_assert_eq(seg_used(&v), 0);
	b = seg_acquire(&v, 1, 10, 11, 1, SEG_KIND_RECORDS, &notify);
	cr_assert(b >= 0 && b < 4, "acquired chunk %d of 4", b);
	seg_release(&v, UINT32_MAX);	/* out of range: ignored */
	seg_reclaim_session(&v, 1);
	cr_assert_eq(atomic_load(&seg_chunk(&v, (uint32_t)b)->state), SEG_FULL);
}

/* ---- seg_steal: the overwrite policy ---- */

/* Appends raw record bytes to chunk i and publishes them. */
static void
append_raw(struct seg_hdr *s, uint32_t i, const void *rec, size_t len)
{
	struct seg_chunk *c = seg_chunk(V(s), i);
	uint64_t off = atomic_load(&c->committed);

	memcpy(seg_data(V(s), i) + off, rec, len);
	atomic_store(&c->committed, off + len);
}

static void
append_loss(struct seg_hdr *s, uint32_t i, uint64_t n, uint64_t who)
{
	unsigned char r[32];
	struct rec_hdr h = { 32, REC_CLASS_META, REC_ATTR_LOSS, 0, 1 };

	memcpy(r, &h, sizeof h);
	memcpy(r + 16, &n, 8);
	memcpy(r + 24, &who, 8);
	append_raw(s, i, r, sizeof r);
}

Test(steal, oldest_own_chunk_keeps_definitions)
{
	struct seg_hdr *s = new_seg(5, NULL);
	char def[REC_MAX];
	size_t dlen = rec_build_define(def, 9, REC_CLASS_USER, REC_ATTR_POINT,
	    "%d", "nine", 1);
	struct seg_loss loss;
	struct rec_hdr h;
	uint32_t a, b, other, old_session, pinned;
	int i;

	cr_assert_gt(dlen, 0);
	/* Process 5 (session 1): chunk a (seq 1) is the oldest; b (seq 2)
	 * newer.  Process 6's and session 0's chunks, and a pinned one, are
	 * not to be taken. */
	pinned = acq(s, 1, 5, 50, 0);
	append(s, pinned, 1, 16);
	atomic_store(&seg_chunk(V(s), pinned)->pin, 1);
	seg_release(V(s), pinned);
	a = acq(s, 1, 5, 50, 1);
	append_raw(s, a, def, dlen);
	append(s, a, 1, 24);
	append(s, a, 2, 24);
	append_loss(s, a, 3, 0);			/* own: carried over */
	append_loss(s, a, 4, (uint64_t)5 << 32 | 51);	/* another thread's */
	append(s, a, 3, 24);
	seg_release(V(s), a);
	b = acq(s, 1, 5, 51, 2);
	append(s, b, 4, 24);
	seg_release(V(s), b);
	other = acq(s, 1, 6, 60, 0);
	append(s, other, 5, 24);
	seg_release(V(s), other);
	old_session = acq(s, 0, 5, 50, 0);
	seg_release(V(s), old_session);
	cr_assert_eq(atomic_load(&s->nfree), 0);

	i = seg_steal(V(s), 1, 5, 52, 7, &loss);
	cr_assert_eq(i, (int)a, "took chunk %d, not the oldest %u", i, a);
	cr_assert_eq(state(s, a), SEG_OWNED);
	cr_assert_eq(seg_chunk(V(s), a)->tid, 52);
	cr_assert_eq(seg_chunk(V(s), a)->seq, 7);
	cr_assert_eq(seg_chunk(V(s), a)->consumed, 0);
	cr_assert_eq(loss.pid, 5);
	cr_assert_eq(loss.tid, 50);
	cr_assert_eq(loss.events, 3 + 3, "3 events dropped, 3 lost before");
	/* Kept: the definition, then the other thread's loss record. */
	cr_assert_eq(atomic_load(&seg_chunk(V(s), a)->committed), dlen + 32);
	cr_assert_arr_eq(seg_data(V(s), a), def, dlen);
	memcpy(&h, seg_data(V(s), a) + dlen, sizeof h);
	cr_assert_eq(h.attr, REC_ATTR_LOSS);

	/* Next: b; then nothing of process 5 is FULL and unpinned. */
	seg_release(V(s), a);
	cr_assert_eq(seg_steal(V(s), 1, 5, 52, 8, &loss), (int)b);
	cr_assert_eq(loss.events, 1);
	cr_assert_eq(loss.tid, 51);
	cr_assert_eq(seg_steal(V(s), 1, 5, 52, 9, &loss), (int)a,
	    "a is FULL again and now the oldest");
	cr_assert_eq(loss.events, 0, "only definitions were left in it");
	cr_assert_eq(seg_steal(V(s), 1, 5, 52, 10, &loss), -1);
	cr_assert_eq(state(s, other), SEG_FULL);
	cr_assert_eq(state(s, pinned), SEG_FULL);
	cr_assert_eq(state(s, old_session), SEG_FULL);
}

Test(steal, lm_copy_skips_a_stolen_chunk)
{
	struct seg_hdr *s = new_seg(2, NULL);
	struct seg_loss loss;
	struct sink k;
	uint64_t bad = 0;
	uint32_t a, b;

	a = acq(s, 1, 5, 50, 1);
	append(s, a, 1, 24);
	seg_release(V(s), a);
	b = acq(s, 1, 5, 50, 2);
	append(s, b, 2, 24);
	/* Taken back and refilled: the LM sees the new owner's records
	 * only. */
	cr_assert_eq(seg_steal(V(s), 1, 5, 50, 3, &loss), (int)a);
	append(s, a, 3, 24);
	sink_init(&k, s);
	cr_assert_eq(collect(s, &k, &bad), 2);
	cr_assert_eq(k.p[0].seq, 2);
	cr_assert_eq(k.p[1].seq, 3);
	cr_assert_eq(k.p[1].eid[0], 3);
	cr_assert_eq(atomic_load(&seg_chunk(V(s), a)->pin), 0);
}

/* ---- table chunks and stab_read ---- */

struct recs {
	int		n;
	unsigned char	r[8][REC_STATS_LEN + 64];
	size_t		len[8];
};

static int
keep_rec(void *arg, const void *rec, size_t len)
{
	struct recs *x = arg;

	cr_assert_lt(x->n, 8);
	cr_assert_leq(len, sizeof x->r[0]);
	memcpy(x->r[x->n], rec, len);
	x->len[x->n++] = len;
	return 0;
}

/* Builds an entry of kind at p with payload; returns its length. */
static size_t
put_ent(unsigned char *p, uint32_t seq, uint8_t kind, int32_t eid,
	int64_t key, const void *payload, size_t plen)
{
	struct stab_ent e;

	memset(&e, 0, sizeof e);
	e.seq = seq;
	e.len = (uint16_t)((sizeof e + plen + 7) / 8 * 8);
	e.kind = kind;
	e.eid = eid;
	e.key = key;
	memset(p, 0, e.len);
	memcpy(p, &e, sizeof e);
	memcpy(p + sizeof e, payload, plen);
	return e.len;
}

Test(table, statistics_and_values)
{
	unsigned char t[1024], value[24];
	struct rec_range r = { 3, 600, 100, 300, 200.0, 20000.0 };
	struct rec_hdr h = { 24, REC_CLASS_EVENT, REC_ATTR_PROBE, 70000, 5 };
	uint64_t count = 42, v = 7;
	struct rec_stats st;
	struct recs x;
	size_t off = 0;

	memcpy(value, &h, sizeof h);
	memcpy(value + 16, &v, 8);
	off += put_ent(t + off, 2, STAB_COUNT, 9, 9, &count, 8);
	off += put_ent(t + off, 4, STAB_RANGE, -1, 12, &r, sizeof r);
	off += put_ent(t + off, 1, STAB_COUNT, 10, 10, &count, 8); /* torn */
	off += put_ent(t + off, 0, STAB_VALUE, 70000, 70000, value, 24);
	off += put_ent(t + off, 0, 99, 11, 11, &count, 8);	/* unknown */

	memset(&x, 0, sizeof x);
	cr_assert_eq(stab_read(t, NULL, off, 0, 77, keep_rec, &x), 2);
	cr_assert_eq(rec_parse_stats(x.r[0], x.len[0], &st), 0);
	cr_assert_eq(st.eid, 9);
	cr_assert_eq(st.kind, STAB_COUNT);
	cr_assert_eq(st.r.count, 42);
	cr_assert_eq(rec_parse_stats(x.r[1], x.len[1], &st), 0);
	cr_assert_eq(st.eid, -1);
	cr_assert_eq(st.key, 12);
	cr_assert_eq(st.r.count, 3);
	cr_assert_eq(st.r.total, 600);
	cr_assert_eq(st.r.min, 100);
	cr_assert_eq(st.r.max, 300);
	cr_assert_float_eq(st.r.m2, 20000.0, 1e-9);
	memcpy(&h, x.r[1], sizeof h);
	cr_assert_eq(h.ts, 77);
	cr_assert_eq(rec_valid_prefix(x.r[1], x.len[1]), x.len[1]);

	/* With values: the dormant sensor's record, as stored. */
	memset(&x, 0, sizeof x);
	cr_assert_eq(stab_read(t, NULL, off, 1, 77, keep_rec, &x), 3);
	cr_assert_eq(x.len[2], 24);
	cr_assert_arr_eq(x.r[2], value, 24);

	/* A truncated table: whole entries only. */
	memset(&x, 0, sizeof x);
	cr_assert_eq(stab_read(t, NULL, 40, 1, 77, keep_rec, &x), 1);
	/* A record that is not a statistics record. */
	cr_assert_eq(rec_parse_stats(value, 24, &st), -1);
}

static int
tab_count(void *arg, uint32_t pid, uint32_t tid, uint32_t session, int final,
	  const void *shared, const void *data, size_t len)
{
	struct recs x;

	(void)arg;
	cr_assert_eq(pid, 5);
	cr_assert_eq(tid, 50);
	cr_assert_eq(session, 1);
	memset(&x, 0, sizeof x);
	cr_assert_eq(stab_read(data, shared, len, final, 1, keep_rec, &x), 1);
	return 0;
}

Test(table, collected_whole_and_freed_when_full)
{
	struct seg_hdr *s = new_seg(3, NULL);
	uint64_t count = 5;
	int notify, i;
	struct seg_chunk *c;

	i = seg_acquire(V(s), 1, 5, 50, 0, SEG_KIND_TABLE, &notify);
	cr_assert_geq(i, 0);
	c = seg_chunk(V(s), (uint32_t)i);
	atomic_store(&c->committed, put_ent((unsigned char *)seg_data(V(s),
	    (uint32_t)i), 2, STAB_COUNT, 9, 9, &count, 8));
	struct sink k;
	uint64_t bad = 0;

	/* Not records: seg_collect leaves it alone. */
	sink_init(&k, s);
	cr_assert_eq(collect(s, &k, &bad), 0);
	cr_assert_eq(seg_tables(V(s), tab_count, NULL, NULL), 1);
	cr_assert_eq(state(s, (uint32_t)i), SEG_OWNED, "read, not consumed");
	cr_assert_eq(seg_tables(V(s), tab_count, NULL, NULL), 1, "read again");
	seg_release(V(s), (uint32_t)i);
	cr_assert_eq(seg_tables(V(s), tab_count, NULL, NULL), 1);
	cr_assert_eq(state(s, (uint32_t)i), SEG_FREE, "freed after its last read");
	cr_assert_eq(atomic_load(&s->nfree), 3);
}

Test(steal, push_of_full_chunks_takes_the_moved_definitions)
{
	struct seg_hdr *s = new_seg(3, NULL);
	char def[REC_MAX];
	size_t dlen = rec_build_define(def, 9, REC_CLASS_USER, REC_ATTR_POINT,
	    "%d", "nine", 1);
	struct seg_loss loss;
	struct sink k;
	uint64_t bad = 0;
	uint32_t a, b, c;

	a = acq(s, 1, 5, 50, 1);
	append_raw(s, a, def, dlen);
	append(s, a, 9, 24);
	seg_release(V(s), a);
	b = acq(s, 1, 5, 50, 2);
	append(s, b, 9, 24);
	seg_release(V(s), b);
	c = acq(s, 1, 6, 60, 1);	/* another writer, still writing */
	append(s, c, 1, 24);
	/* a is taken back: its definition stays at its start, and the
	 * chunk is being written again (OWNED). */
	cr_assert_eq(seg_steal(V(s), 1, 5, 50, 3, &loss), (int)a);
	cr_assert_eq(atomic_load(&seg_chunk(V(s), a)->carry), dlen);
	append(s, a, 9, 24);
	/* A push takes the full chunk b and, for the definition b needs,
	 * chunk a; not c. */
	sink_init(&k, s);
	cr_assert_eq(seg_collect_ex(V(s), 1, sink_emit, &k, &bad, NULL), 2);
	cr_assert_eq(k.p[0].seq, 2);
	cr_assert_eq(k.p[1].seq, 3);
	cr_assert_eq(k.p[1].neid, 2, "the definition and the new event");
	cr_assert_eq(atomic_load(&seg_chunk(V(s), a)->carry), 0);
	cr_assert_eq(state(s, a), SEG_OWNED);
	/* Carried once: the next push leaves a alone again. */
	append(s, a, 9, 24);
	sink_init(&k, s);
	cr_assert_eq(seg_collect_ex(V(s), 1, sink_emit, &k, &bad, NULL), 0);
	cr_assert_eq(atomic_load(&seg_chunk(V(s), c)->committed), 24);
	cr_assert_eq(seg_chunk(V(s), c)->consumed, 0, "c was not touched");
}

/* ---- collections in flight: seg_flight_commit, seg_flight_abort ---- */

/* A view with the LM's private record of what was sent. */
static struct seg
lm_view(struct seg_hdr *s, struct seg_sent *sent, size_t size)
{
	struct seg v;

	seg_view(&v, s, size);
	memset(sent, 0, sizeof *sent * s->nchunks);
	v.sent = sent;
	return v;
}

static int
collect_fl(struct seg *v, struct sink *k, struct seg_flight *fl)
{
	uint64_t bad = 0;

	return seg_collect_ex(v, 0, sink_emit, k, &bad, fl);
}

/*
 * A segment of 4 chunks seen by an LM (v, sent), and a collection in
 * flight (fl) of process 10's thread 10, session 1: chunk a (seq 1, FULL)
 * and chunk b (seq 2, still being written), one 32-byte record each, of
 * event 1 and 2.
 */
static struct seg_hdr *
two_in_flight(struct seg *v, struct seg_sent *sent, struct seg_flight *fl,
	      struct sink *k, uint32_t *a, uint32_t *b)
{
	struct seg_hdr *s;
	size_t size;

	s = new_seg(4, &size);
	*v = lm_view(s, sent, size);
	*a = acq(s, 1, 10, 10, 1);
	append(s, *a, 1, 32);
	seg_release(v, *a);
	*b = acq(s, 1, 10, 10, 2);
	append(s, *b, 2, 32);
	sink_init(k, s);
	cr_assert_eq(collect_fl(v, k, fl), 2);
	cr_assert_eq(fl->n, 2);
	return s;
}

Test(flight, nothing_consumed_until_acknowledged)
{
	struct seg_sent sent[4];
	struct seg_flight *fl = new_flight();
	struct seg_hdr *s;
	struct sink k;
	struct seg v;
	uint32_t a, b;

	s = two_in_flight(&v, sent, fl, &k, &a, &b);
	/* Sent, not acknowledged: still there, pinned, not consumed. */
	cr_assert_eq(state(s, a), SEG_FULL);
	cr_assert_eq(seg_chunk(&v, a)->consumed, 0);
	cr_assert_eq(atomic_load(&seg_chunk(&v, a)->pin), 1);
	cr_assert_eq(atomic_load(&s->nfree), 2);
	/* Another collection before the ACK sends only what is new. */
	append(s, b, 3, 32);
	{
		struct seg_flight *fl2 = new_flight();

		sink_init(&k, s);
		cr_assert_eq(collect_fl(&v, &k, fl2), 1);
		cr_assert_eq(k.p[0].at, 32, "sent again from %lu",
		    (unsigned long)k.p[0].at);
		check_piece(&k.p[0], 10, 10, 2, (int32_t[]){ 3 }, 1);
		seg_flight_commit(&v, fl);
		cr_assert_eq(state(s, a), SEG_FREE, "acknowledged: freed");
		cr_assert_eq(seg_chunk(&v, b)->consumed, 32);
		seg_flight_commit(&v, fl2);
		cr_assert_eq(seg_chunk(&v, b)->consumed, 64);
		cr_assert_eq(atomic_load(&seg_chunk(&v, b)->pin), 0);
		seg_flight_free(fl2);
	}
	sink_init(&k, s);
	cr_assert_eq(collect_fl(&v, &k, fl), 0, "all acknowledged");
	seg_flight_free(fl);
}

/* The MM wrote one piece before the rest of its collection
 * (WIRE_WRITTEN): its chunk is consumed, and freed if FULL, at once; the
 * collection's commit and abort then leave that entry alone. */
Test(flight, piece_written_before_the_rest)
{
	struct seg_sent sent[4];
	struct seg_flight *fl = new_flight();
	struct seg_hdr *s;
	struct sink k;
	struct seg v;
	uint32_t a, b, c;

	s = two_in_flight(&v, sent, fl, &k, &a, &b);
	/* Other threads hold the other chunks: a, once free, is the
	 * next one taken. */
	acq(s, 1, 10, 11, 3);
	acq(s, 1, 10, 12, 4);
	cr_assert_eq(atomic_load(&s->nfree), 0);
	/* Not that piece: another pid, session, chunk, or end. */
	cr_assert_eq(seg_flight_written(&v, fl, 11, 1, 1, 32), 0);
	cr_assert_eq(seg_flight_written(&v, fl, 10, 2, 1, 32), 0);
	cr_assert_eq(seg_flight_written(&v, fl, 10, 1, 3, 32), 0);
	cr_assert_eq(seg_flight_written(&v, fl, 10, 1, 1, 24), 0);
	cr_assert_eq(state(s, a), SEG_FULL, "freed for another piece");
	cr_assert_eq(atomic_load(&seg_chunk(&v, a)->pin), 1);
	/* a's piece is written: free now, b untouched. */
	cr_assert_eq(seg_flight_written(&v, fl, 10, 1, 1, 32), 1);
	cr_assert_eq(state(s, a), SEG_FREE);
	cr_assert_eq(atomic_load(&s->nfree), 1);
	cr_assert_eq(seg_chunk(&v, b)->consumed, 0);
	cr_assert_eq(atomic_load(&seg_chunk(&v, b)->pin), 1);
	cr_assert_eq(seg_flight_written(&v, fl, 10, 1, 1, 32), 0,
	    "written twice");
	/* A writer takes a again before the collection is acknowledged:
	 * the acknowledgement must not touch the new owner's chunk. */
	c = acq(s, 1, 10, 10, 5);
	cr_assert_eq(c, a);
	append(s, c, 3, 32);
	seg_flight_commit(&v, fl);
	cr_assert_eq(state(s, c), SEG_OWNED);
	cr_assert_eq(seg_chunk(&v, c)->consumed, 0);
	cr_assert_eq(atomic_load(&s->nfree), 0, "freed twice");
	cr_assert_eq(seg_chunk(&v, b)->consumed, 32);
	cr_assert_eq(atomic_load(&seg_chunk(&v, b)->pin), 0);
	sink_init(&k, s);
	cr_assert_eq(collect_fl(&v, &k, fl), 1, "only c's record is new");
	check_piece(&k.p[0], 10, 10, 5, (int32_t[]){ 3 }, 1);
	seg_flight_free(fl);
}

/* A piece written, then the connection lost: only the rest goes again. */
Test(flight, abort_after_a_piece_written)
{
	struct seg_sent sent[4];
	struct seg_flight *fl = new_flight();
	struct seg_hdr *s;
	struct sink k;
	struct seg v;
	uint32_t a, b;

	s = two_in_flight(&v, sent, fl, &k, &a, &b);
	cr_assert_eq(seg_flight_written(&v, fl, 10, 1, 2, 32), 1);
	cr_assert_eq(seg_chunk(&v, b)->consumed, 32);
	cr_assert_eq(atomic_load(&seg_chunk(&v, b)->pin), 0);
	seg_flight_abort(&v, fl);
	sink_init(&k, s);
	cr_assert_eq(collect_fl(&v, &k, fl), 1, "a's piece again, not b's");
	check_piece(&k.p[0], 10, 10, 1, (int32_t[]){ 1 }, 1);
	seg_flight_commit(&v, fl);
	cr_assert_eq(state(s, a), SEG_FREE);
	seg_flight_free(fl);
}

/* A chunk sent in two collections, the later piece written first (as
 * told in the same message before the older collection's ACK): freed
 * only once both have let go of it. */
Test(flight, chunk_in_two_collections)
{
	struct seg_sent sent[4];
	struct seg_flight *f1 = new_flight(), *f2 = new_flight();
	struct seg_hdr *s;
	struct sink k;
	struct seg v;
	size_t size;
	uint32_t a;

	s = new_seg(4, &size);
	v = lm_view(s, sent, size);
	a = acq(s, 1, 10, 10, 1);
	append(s, a, 1, 32);
	sink_init(&k, s);
	cr_assert_eq(collect_fl(&v, &k, f1), 1);
	append(s, a, 2, 32);
	seg_release(&v, a);
	sink_init(&k, s);
	cr_assert_eq(collect_fl(&v, &k, f2), 1);
	cr_assert_eq(atomic_load(&seg_chunk(&v, a)->pin), 2);
	cr_assert_eq(seg_flight_written(&v, f2, 10, 1, 1, 32), 0,
	    "the first piece is not the second collection's");
	cr_assert_eq(seg_flight_written(&v, f2, 10, 1, 1, 64), 1);
	cr_assert_eq(seg_chunk(&v, a)->consumed, 64);
	cr_assert_eq(state(s, a), SEG_FULL, "still pinned by the first");
	seg_flight_commit(&v, f1);
	cr_assert_eq(state(s, a), SEG_FREE, "all consumed, unpinned: free");
	seg_flight_commit(&v, f2);
	cr_assert_eq(atomic_load(&s->nfree), 4);
	seg_flight_free(f1);
	seg_flight_free(f2);
}

Test(flight, abort_sends_again)
{
	struct seg_sent sent[4];
	struct seg_flight *fl = new_flight();
	struct seg_hdr *s;
	struct sink k;
	struct seg v;
	size_t size;
	uint32_t a;

	s = new_seg(4, &size);
	v = lm_view(s, sent, size);
	a = acq(s, 1, 10, 10, 1);
	append(s, a, 1, 32);
	append(s, a, 2, 32);
	seg_release(&v, a);
	sink_init(&k, s);
	cr_assert_eq(collect_fl(&v, &k, fl), 1);
	sink_init(&k, s);
	cr_assert_eq(collect_fl(&v, &k, fl), 0, "in flight: not sent twice");
	seg_flight_abort(&v, fl);
	cr_assert_eq(atomic_load(&seg_chunk(&v, a)->pin), 0);
	cr_assert_eq(state(s, a), SEG_FULL);
	sink_init(&k, s);
	cr_assert_eq(collect_fl(&v, &k, fl), 1, "never acknowledged: again");
	check_piece(&k.p[0], 10, 10, 1, (int32_t[]){ 1, 2 }, 2);
	cr_assert_eq(k.p[0].at, 0);
	seg_flight_commit(&v, fl);
	cr_assert_eq(state(s, a), SEG_FREE);
	seg_flight_free(fl);
}

Test(flight, pinned_chunk_not_stolen)
{
	struct seg_sent sent[4];
	struct seg_flight *fl = new_flight();
	struct seg_loss loss;
	struct seg_hdr *s;
	struct sink k;
	struct seg v;
	size_t size;
	uint32_t a;

	s = new_seg(4, &size);
	v = lm_view(s, sent, size);
	a = acq(s, 1, 10, 10, 1);
	append(s, a, 1, 32);
	seg_release(&v, a);
	sink_init(&k, s);
	cr_assert_eq(collect_fl(&v, &k, fl), 1);
	cr_assert_eq(seg_steal(&v, 1, 10, 11, 5, &loss), -1,
	    "data in flight was taken back");
	seg_flight_commit(&v, fl);
	seg_flight_free(fl);
}

Test(flight, adoption_forgets_pins)
{
	struct seg_sent sent[4];
	struct seg_flight *fl = new_flight();
	struct seg_hdr *s;
	struct sink k;
	struct seg v, v2;
	size_t size;
	uint32_t a;

	s = new_seg(4, &size);
	v = lm_view(s, sent, size);
	a = acq(s, 1, 10, 10, 1);
	append(s, a, 1, 32);
	sink_init(&k, s);
	cr_assert_eq(collect_fl(&v, &k, fl), 1);
	/* That LM dies; the next one adopts the segment and sends the
	 * unacknowledged data again, from consumed. */
	{
		struct seg_sent sent2[4];

		v2 = lm_view(s, sent2, size);
		seg_adopt(&v2);
		cr_assert_eq(atomic_load(&seg_chunk(&v2, a)->pin), 0);
		sink_init(&k, s);
		cr_assert_eq(collect_fl(&v2, &k, NULL), 1);
		check_piece(&k.p[0], 10, 10, 1, (int32_t[]){ 1 }, 1);
	}
	seg_flight_free(fl);
}

Test(reclaim, claim_of_a_dead_process)
{
	struct seg_hdr *s = new_seg(4, NULL);
	struct sink k;
	uint64_t bad = 0;
	uint32_t a, b;
	int notify;

	/* Process 20 dies right after its CAS: the state says whose it was,
	 * the rest of the header is a former owner's. */
	a = acq(s, 1, 10, 10, 1);
	append(s, a, 1, 16);
	seg_release(V(s), a);
	cr_assert_eq(collect(s, (sink_init(&k, s), &k), &bad), 1);
	b = (uint32_t)seg_acquire(V(s), 2, 20, 20, 1, SEG_KIND_RECORDS,
	    &notify);
	cr_assert_eq(state(s, b), SEG_OWNED);
	atomic_store(&seg_chunk(V(s), b)->state, SEG_CLAIMED_BY(20));
	put_rec(seg_data(V(s), b), 16, POISON);
	atomic_store(&seg_chunk(V(s), b)->committed, 16);
	seg_reclaim_claims(V(s), 21);
	cr_assert_eq(state(s, b), SEG_CLAIMED_BY(20), "another's claim taken");
	seg_reclaim_claims(V(s), 20);
	cr_assert_eq(state(s, b), SEG_FULL);
	sink_init(&k, s);
	cr_assert_eq(collect(s, &k, &bad), 0, "a half-claimed chunk's bytes");
	cr_assert_eq(state(s, b), SEG_FREE, "not freed");
}

Test(acquire, clears_a_scribbled_consumed)
{
	struct seg_hdr *s = new_seg(2, NULL);
	struct sink k;
	uint64_t bad = 0;
	uint32_t i;

	/* A writer left consumed set on FREE chunks. */
	for (i = 0; i < 2; i++)
		seg_chunk(V(s), i)->consumed = 64;
	i = acq(s, 1, 10, 10, 1);
	append(s, i, 1, 32);
	append(s, i, 2, 32);
	sink_init(&k, s);
	cr_assert_eq(collect(s, &k, &bad), 1);
	check_piece(&k.p[0], 10, 10, 1, (int32_t[]){ 1, 2 }, 2);
	cr_assert_eq(bad, 0);
}

/* ---- seg_attach ---- */

/* Bytes of this process's anonymous PROT_NONE mappings (a reservation
 * seg_attach would have left behind). */
static size_t
none_bytes(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512], perm[8];
	unsigned long a, b;
	size_t sum = 0;
	int n;

	cr_assert_not_null(f);
	while (fgets(line, sizeof line, f) != NULL) {
		n = 0;
		if (sscanf(line, "%lx-%lx %7s %*s %*s %*s%n", &a, &b, perm,
		    &n) == 3 && strcmp(perm, "---p") == 0 &&
		    line[n + strspn(line + n, " ")] == '\n')
			sum += b - a;
	}
	fclose(f);
	return sum;
}

/* The VmFlags and size of the mapping at at, from /proc/self/smaps. */
static void
mapping_of(const void *at, char flags[512], size_t *size)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	unsigned long a, b;
	int in = 0;

	cr_assert_not_null(f);
	flags[0] = '\0';
	*size = 0;
	while (fgets(line, sizeof line, f) != NULL) {
		if (sscanf(line, "%lx-%lx ", &a, &b) == 2 &&
		    strchr(line, '-') < strchr(line, ' ')) {
			in = a == (uintptr_t)at;
			if (in)
				*size = b - a;
		} else if (in && strncmp(line, "VmFlags:", 8) == 0) {
			memcpy(flags, line + 8, sizeof line - 8);
		}
	}
	fclose(f);
}

Test(attach, aligned_marked_nothing_left)
{
	const size_t huge = (size_t)2 << 20, size = 2 * huge + 4096 + 100;
	size_t before = none_bytes(), len;
	char flags[512];
	int id = shmget(IPC_PRIVATE, size, IPC_CREAT | 0600);
	char *m;

	cr_assert_neq(id, -1);
	m = seg_attach(id, size);
	shmctl(id, IPC_RMID, NULL);	/* gone with the last detach */
	cr_assert_neq(m, (void *)-1);
	cr_assert_eq((uintptr_t)m % huge, 0, "not at a 2 MiB boundary");
	mapping_of(m, flags, &len);
	cr_assert_eq(len, 2 * huge + 2 * 4096, "mapped %zu bytes", len);
	cr_assert_not_null(strstr(flags, " hg"), "not MADV_HUGEPAGE: %s",
	    flags);
	cr_assert_eq(none_bytes(), before, "the reservation's rest is left");
	memset(m, 0x5a, size);
	cr_assert_eq(m[size - 1], 0x5a);
	cr_assert_eq(shmdt(m), 0);
	cr_assert_eq(none_bytes(), before);
}

Test(attach, small_segment_as_shmat)
{
	int id = shmget(IPC_PRIVATE, 65536, IPC_CREAT | 0600);
	char *m;

	cr_assert_neq(id, -1);
	m = seg_attach(id, 65536);
	shmctl(id, IPC_RMID, NULL);
	cr_assert_neq(m, (void *)-1);
	m[65535] = 1;
	cr_assert_eq(shmdt(m), 0);
}
