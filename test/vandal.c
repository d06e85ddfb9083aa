/* SPDX-License-Identifier: MIT */
/* vandal.c: a hostile traced process (test/hostile.sh).  It emits events
 * like any traced program, and between them scribbles over what the
 * shared segment lets it reach: the header, the chunk table entries of its
 * own chunks and of free chunks, and its own chunks' data.  The Local
 * Monitor must survive it, and other processes' records must reach the
 * trace intact; the vandal's own records may be lost.
 *
 * usage: vandal PIDFILE ROUNDS SEED READY_FILE [ctl]
 *
 * PIDFILE is the LM's lm-ID.pid ("pid shmid"); READY_FILE is created once
 * the first round is done.  Values are drawn from a fixed-seed generator,
 * biased towards what a bounds check must catch (0, chunk size, just past
 * it, misaligned, all ones) and towards well-formed records with hostile
 * contents.  It never writes another process's pid into an entry (that
 * would be forging its data, which nothing can detect), and it takes a
 * chunk before it rewrites its entry (a FREE one by compare-and-swap, a
 * FULL one of its own as the overwrite policy does, pin checked), so that
 * the writer who takes the chunk next finds the scribbles, not a half
 * written entry.
 *
 * The count of free chunks (nfree) is scribbled too, and left wrong when
 * the vandal moves an entry to or from FREE, and so is `consumed` of the
 * chunks it leaves FREE (seg_acquire clears it for the next owner).  Left
 * out unless asked for:
 *	ctl	the control words (ctl, cls_off, filter, eid_off): every writer
 *		obeys them by design, so other processes may lose events.
 *
 * Exits 0 after the last round; 1 if it is not traced or cannot attach. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/shm.h>

#include "grm.h"
#include "rec/rec.h"
#include "shm/seg.h"

#define EV_VANDAL	7
#define EVENTS_PER_ROUND 200
#define MAX_LEAKS	3	/* chunks left in a state nobody frees */

static uint64_t rng_state;
static struct seg view;		/* the layout, read before any scribbling */
static uint32_t my_pid, my_session;
static int leaks;

static uint64_t
rnd(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static uint64_t
below(uint64_t n)
{
	return n == 0 ? 0 : rnd() % n;
}

/* A hostile value for a field holding old, in a segment of chunk_size
 * byte chunks. */
static uint64_t
pick(uint64_t old)
{
	uint64_t cs = view.chunk_size;

	switch (below(14)) {
	case 0: return rnd();
	case 1: return 0;
	case 2: return 1 + below(4);
	case 3: return UINT64_MAX;
	case 4: return UINT32_MAX;
	case 5: return cs;
	case 6: return cs + 8 * (1 + below(4));
	case 7: return below(cs) & ~(uint64_t)7;
	case 8: return below(cs) | 1;
	case 9: return old ^ (1ull << below(64));
	case 10: return old + below(64) - 32;
	case 11: return 1ull << 63;
	case 12: return view.nchunks + below(3) - 1;
	default: return (uint64_t)0x80000000u + below(16);
	}
}

static void
put32(void *base, size_t off, uint32_t v)
{
	__atomic_store_n((uint32_t *)(void *)((char *)base + off), v,
	    __ATOMIC_RELAXED);
}

static void
put64(void *base, size_t off, uint64_t v)
{
	__atomic_store_n((uint64_t *)(void *)((char *)base + off), v,
	    __ATOMIC_RELAXED);
}

static uint64_t
get64(const void *base, size_t off)
{
	return __atomic_load_n((const uint64_t *)(const void *)
	    ((const char *)base + off), __ATOMIC_RELAXED);
}

/* A pid nobody has (above the largest pid_max). */
static uint32_t
bogus_pid(void)
{
	return (uint32_t)(4194304 + 1 + below(0x7fffffffu - 4194304));
}

/* The header: every field of the layout and allocation lines; the control
 * lines only with ctl. */
static void
scribble_header(struct seg_hdr *h, int ctl)
{
	static const struct { size_t off, size; int ctl; } f[] = {
#define F(m, c) { offsetof(struct seg_hdr, m), \
	sizeof(((struct seg_hdr *)0)->m), c }
		F(magic, 0), F(version, 0), F(size, 0), F(chunk_size, 0),
		F(nchunks, 0), F(table_off, 0), F(data_off, 0), F(lm_pid, 0),
		F(sessions, 0), F(seg_id, 0), F(clock, 0), F(policy, 0),
		F(pad2, 0), F(nfree, 0), F(hint, 0), F(push_req, 0),
		F(threshold, 0), F(lost, 0), F(lost_recorded, 0), F(pushes, 0),
		F(lost_reported, 0), F(pad3, 0),
		F(ctl, 1), F(cls_off, 1), F(filter, 1), F(eid_off, 1),
#undef F
	};
	size_t i, k, o;

	for (i = 0; i < sizeof f / sizeof f[0]; i++) {
		if ((f[i].ctl && !ctl) || below(2) == 0)
			continue;
		if (f[i].size == 4) {
			put32(h, f[i].off, (uint32_t)pick(0));
			continue;
		}
		if (f[i].size == 8) {
			put64(h, f[i].off, pick(get64(h, f[i].off)));
			continue;
		}
		/* An array: a few of its words, or bytes for the filter. */
		for (k = 0; k < 4; k++) {
			o = f[i].off + (below(f[i].size) & ~(size_t)3);
			put32(h, o, (uint32_t)rnd());
		}
	}
}

/* A record of hostile content at p, at most room bytes; returns its
 * length field as written (what a reader would step by). */
static size_t
forge_record(unsigned char *p, size_t room)
{
	static const uint8_t cls[] = { 0, 1, 2, 3, 8, 255, 255, 255 };
	static const int32_t eids[] = { -6, -5, -4, -3, -2, -1, 0, 1,
		EV_VANDAL, 65535, 65536, 69631, 69632, INT32_MIN };
	static const char *const fmts[] = { "%d %s %ld", "%s%s%s%s%s%s",
		"%", "%999999999d", "%p %f %c %u", "%s", "", "%ld %ld %ld %ld "
		"%ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld" };
	size_t len, off, n;
	uint32_t sl;
	uint64_t v;

	switch (below(8)) {
	case 0: len = 0; break;
	case 1: len = below(24); break;			/* short, odd */
	case 2: len = REC_MAX + 8 * below(3); break;	/* at or past max */
	case 3: len = 65535; break;
	default: len = 16 + 8 * below(12); break;	/* plausible */
	}
	if (room < sizeof(struct rec_hdr))
		return 0;
	rec_put_hdr(p, len, below(4) ? cls[below(sizeof cls)] : (uint8_t)rnd(),
	    (uint8_t)below(10), eids[below(sizeof eids / sizeof eids[0])],
	    rnd());
	off = sizeof(struct rec_hdr);
	n = len < room ? len : room;
	if (p[2] == REC_CLASS_META && p[3] == REC_ATTR_DESCRIPTOR &&
	    n >= off + 8) {
		/* A definition: class/attribute slot, format, description. */
		v = rnd();
		memcpy(p + off, &v, 8);
		off += 8;
		while (off + 4 <= n) {
			const char *s;

			s = fmts[below(sizeof fmts / sizeof fmts[0])];

			sl = below(4) ? (uint32_t)strlen(s) : (uint32_t)pick(0);
			memcpy(p + off, &sl, 4);
			off += 4;
			while (*s != '\0' && off < n)
				p[off++] = (unsigned char)*s++;
			off = (off + 7) & ~(size_t)7;
		}
	}
	for (; off < n; off++)
		p[off] = (unsigned char)(below(3) ? rnd() : 0);
	return len;
}

/* Own chunk data: random bytes over a random range, or a run of forged
 * records from an aligned offset. */
static void
scribble_data(uint32_t i)
{
	unsigned char *d = (unsigned char *)seg_data(&view, i);
	size_t cs = view.chunk_size, a, b, step;
	int k;

	if (below(2) == 0) {
		a = below(cs);
		b = a + below(cs - a + 1);
		for (; a < b; a++)
			d[a] = (unsigned char)rnd();
		return;
	}
	a = below(cs) & ~(size_t)7;
	for (k = 0; k < 64 && a + sizeof(struct rec_hdr) <= cs; k++) {
		step = forge_record(d + a, cs - a);
		if (step == 0 || step % 8 != 0)
			step = 16;
		a += step;
	}
}

/* Whether a chunk entry may end in a state nobody ever frees. */
static int
may_leak(void)
{
	if (leaks >= MAX_LEAKS)
		return 0;
	leaks++;
	return 1;
}

/*
 * Rewrites entry c (which we hold: state CLAIMED by us) and gives it a
 * final state.  OWNED and CLAIMED keep our pid and session, so the LM
 * frees them when we exit; a garbage state is allowed a few times.
 */
static void
scribble_entry(struct seg_chunk *c)
{
	uint32_t st;

	put32(c, offsetof(struct seg_chunk, pid),
	    below(2) ? my_pid : bogus_pid());
	put32(c, offsetof(struct seg_chunk, tid), (uint32_t)pick(c->tid));
	put32(c, offsetof(struct seg_chunk, session), below(2) ? my_session :
	    (uint32_t)(1u << 20) + (uint32_t)below(1u << 30));
	put64(c, offsetof(struct seg_chunk, seq), pick(c->seq));
	put64(c, offsetof(struct seg_chunk, committed), pick(c->committed));
	put64(c, offsetof(struct seg_chunk, consumed), pick(c->consumed));
	put64(c, offsetof(struct seg_chunk, carry), pick(c->carry));
	put32(c, offsetof(struct seg_chunk, kind),
	    below(3) ? (uint32_t)below(2) : (uint32_t)rnd());
	put32(c, offsetof(struct seg_chunk, pin),
	    below(3) ? (uint32_t)below(2) : (uint32_t)rnd());
	put64(c, offsetof(struct seg_chunk, pad1), rnd());
	switch (below(20)) {
	case 0: case 1: case 2: case 3: case 4: case 5: case 6: case 7:
		st = SEG_FREE;
		break;
	case 8: case 9: case 10: case 11: case 12: case 13:
		st = SEG_FULL;
		break;
	case 14: case 15: case 16:
		st = SEG_OWNED;
		break;
	case 17: case 18:
		st = SEG_CLAIMED;
		break;
	default:
		st = may_leak() ? 4 + (uint32_t)below(UINT32_MAX - 4) :
		    SEG_FULL;
		break;
	}
	if (st == SEG_OWNED || st == SEG_CLAIMED) {
		put32(c, offsetof(struct seg_chunk, pid), my_pid);
		put32(c, offsetof(struct seg_chunk, session), my_session);
	}
	if (st == SEG_CLAIMED)
		st = below(2) ? SEG_CLAIMED_BY(my_pid) : SEG_CLAIMED;
	atomic_store(&c->state, st);
}

/* Free chunks: a few of them, taken by compare-and-swap first. */
static void
scribble_free(void)
{
	struct seg_chunk *c;
	uint32_t k, i, expect;

	for (k = 0; k < 3; k++) {
		i = (uint32_t)below(view.nchunks);
		c = seg_chunk(&view, i);
		expect = SEG_FREE;
		if (atomic_compare_exchange_strong(&c->state, &expect,
		    SEG_CLAIMED_BY(my_pid)))
			scribble_entry(c);
	}
}

/* Whether entry c names us (read after its state: an owner writes its
 * pid and session before it publishes the state). */
static int
ours(const struct seg_chunk *c)
{
	return c->pid == my_pid && c->session == my_session;
}

/* Our own chunks.  A FULL one is taken back as the overwrite policy does
 * (state first, then pin: the LM pins before it looks at the state) and
 * rewritten whole.  An OWNED one may be the chunk our library is filling:
 * its state, pid and session stay, so that it is never freed under the
 * library; the rest of the entry and the data are fair game.
 * Whose a chunk is is read after its state, and a FULL one's again once
 * it is held: between two looks, a chunk of ours may have been consumed,
 * freed, and taken and filled by another writer, whose data is not ours
 * to scribble.  An OWNED one of ours is our library's, which this thread
 * runs: it cannot change hands while we scribble. */
static void
scribble_own(void)
{
	struct seg_chunk *c;
	uint32_t i, st, expect;

	for (i = 0; i < view.nchunks; i++) {
		c = seg_chunk(&view, i);
		st = atomic_load_explicit(&c->state, memory_order_acquire);
		if (st == SEG_FULL && ours(c)) {
			expect = SEG_FULL;
			if (!atomic_compare_exchange_strong(&c->state, &expect,
			    SEG_CLAIMED_BY(my_pid)))
				continue;
			if (atomic_load(&c->pin) != 0 || !ours(c)) {
				atomic_store(&c->state, SEG_FULL);
				continue;
			}
			if (below(2))
				scribble_data(i);
			scribble_entry(c);
			continue;
		}
		if (st != SEG_OWNED || !ours(c) || below(2))
			continue;
		if (below(2))
			scribble_data(i);
		put32(c, offsetof(struct seg_chunk, tid),
		    (uint32_t)pick(c->tid));
		put64(c, offsetof(struct seg_chunk, seq), pick(c->seq));
		put64(c, offsetof(struct seg_chunk, committed),
		    pick(c->committed));
		put64(c, offsetof(struct seg_chunk, consumed),
		    pick(c->consumed));
		put64(c, offsetof(struct seg_chunk, carry), pick(c->carry));
		put32(c, offsetof(struct seg_chunk, kind),
		    below(3) ? (uint32_t)below(2) : (uint32_t)rnd());
		put32(c, offsetof(struct seg_chunk, pin), (uint32_t)below(2));
	}
}

/* Attaches the LM's segment named in pidfile and copies its layout. */
static struct seg_hdr *
attach(const char *pidfile)
{
	struct shmid_ds ds;
	struct seg_hdr *h;
	FILE *f;
	int pid, shmid;
	uint32_t i;

	f = fopen(pidfile, "r");
	if (f == NULL || fscanf(f, "%d %d", &pid, &shmid) != 2) {
		fprintf(stderr, "vandal: %s: cannot read\n", pidfile);
		return NULL;
	}
	fclose(f);
	if (shmctl(shmid, IPC_STAT, &ds) != 0 ||
	    (h = shmat(shmid, NULL, 0)) == (void *)-1) {
		fprintf(stderr, "vandal: segment %d: %s\n", shmid,
		    strerror(errno));
		return NULL;
	}
	if (seg_check(h, ds.shm_segsz) != 0) {
		fprintf(stderr, "vandal: segment %d: not a segment\n", shmid);
		return NULL;
	}
	seg_view(&view, h, ds.shm_segsz);
	/* Our session: on the chunks our library took. */
	for (i = 0; i < view.nchunks; i++)
		if (seg_chunk(&view, i)->pid == my_pid &&
		    atomic_load(&seg_chunk(&view, i)->state) == SEG_OWNED)
			my_session = seg_chunk(&view, i)->session;
	if (my_session == 0) {
		fprintf(stderr, "vandal: no chunk of ours in the segment\n");
		return NULL;
	}
	return h;
}

static int
emit(long round, int n)
{
	int k;

	for (k = 0; k < n; k++)
		if (GMI_Event(EV_VANDAL, (int)round, (long)k) != GRM_OK)
			return -1;
	return 0;
}

/* The definition and the first events, before any scribbling: the good
 * writers may have left the segment full and the LM still draining it (a
 * loaded machine), and the vandal blocks for 1 ms only, so a record lost
 * for want of space (the definition's too: it is a record) is tried
 * again until a deadline.  It needs a chunk of its own to learn its
 * session.  Each returns a GRM code; rc_where says which call failed. */
static const char *rc_where = "";

static int
define_first(void)
{
	int rc, tries = 0;

	rc_where = "GMI_DefineEvent";
	while ((rc = GMI_DefineEvent(EV_VANDAL, "round %d i %ld",
	    "vandal")) == GRM_ELOST && tries++ < 60000)
		usleep(1000);
	return rc;
}

static int
emit_first(int n)
{
	int k, rc = GRM_OK, tries;

	rc_where = "GMI_Event";
	for (k = 0; k < n; k++) {
		tries = 0;
		while ((rc = GMI_Event(EV_VANDAL, -1, (long)k)) == GRM_ELOST &&
		    tries++ < 60000)
			usleep(1000);
		if (rc != GRM_OK)
			return rc;
	}
	return rc;
}

int
main(int argc, char **argv)
{
	struct seg_hdr *h;
	long rounds, r;
	int ctl, rc;
	FILE *f;

	if (argc != 5 && argc != 6) {
		fprintf(stderr, "usage: vandal PIDFILE ROUNDS SEED READY_FILE "
		    "[ctl]\n");
		return 2;
	}
	rounds = atol(argv[2]);
	rng_state = strtoull(argv[3], NULL, 0) | 1;
	ctl = argc == 6 && strstr(argv[5], "ctl") != NULL;
	my_pid = (uint32_t)getpid();
	if ((rc = define_first()) != GRM_OK ||
	    (rc = emit_first(4 * EVENTS_PER_ROUND)) != GRM_OK) {
		fprintf(stderr, "vandal: not traced (%s: GRM error %d)\n",
		    rc_where, rc);
		return 1;
	}
	if ((h = attach(argv[1])) == NULL)
		return 1;
	for (r = 0; r < rounds; r++) {
		scribble_header(h, ctl);
		scribble_free();
		scribble_own();
		if (r == 0 && (f = fopen(argv[4], "w")) != NULL)
			fclose(f);
		/* Lost events are ours to lose; other errors are not. */
		(void)emit(r, EVENTS_PER_ROUND);
		if (r % 8 == 0)
			GMI_DefineEvent(EV_VANDAL + 1 + (int)(r % 64), "%s",
			    "vandal more");
		usleep(200);
	}
	shmdt(h);
	printf("vandal: %ld rounds, %d chunks left in a garbage state\n",
	    rounds, leaks);
	return 0;
}
