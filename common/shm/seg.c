/* SPDX-License-Identifier: MIT */
/* seg.c: chunk allocation for writers and collection for the Local Monitor. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/syscall.h>

#include "rec/rec.h"
#include "shm/seg.h"

size_t
seg_size_for(uint32_t nchunks, uint32_t chunk_size)
{
	return sizeof(struct seg_hdr) +
	    (size_t)nchunks * (sizeof(struct seg_chunk) + chunk_size);
}

int
seg_init(void *mem, size_t size, uint32_t chunk_size)
{
	struct seg_hdr *s = mem;
	size_t per, n;

	if (chunk_size < SEG_CHUNK_MIN || chunk_size > SEG_CHUNK_MAX ||
	    chunk_size % REC_ALIGN != 0 || size < sizeof *s)
		return -1;
	per = sizeof(struct seg_chunk) + chunk_size;
	n = (size - sizeof *s) / per;
	if (n < 2 || n > UINT32_MAX / 2)
		return -1;
	memset(s, 0, sizeof *s);
	s->magic = SEG_MAGIC;
	s->version = SEG_VERSION;
	s->size = size;
	s->chunk_size = chunk_size;
	s->nchunks = (uint32_t)n;
	s->table_off = sizeof *s;
	s->data_off = sizeof *s + n * sizeof(struct seg_chunk);
	s->threshold = (uint32_t)(n / 2);
	memset((char *)s + s->table_off, 0, n * sizeof(struct seg_chunk));
	atomic_store(&s->nfree, (uint32_t)n);
	atomic_store(&s->ctl, SEG_CTL_ON);
	return 0;
}

int
seg_check(const void *mem, size_t size)
{
	const struct seg_hdr *s = mem;

	if (size < sizeof *s || s->magic != SEG_MAGIC ||
	    s->version != SEG_VERSION || s->size != size ||
	    s->chunk_size < SEG_CHUNK_MIN || s->chunk_size > SEG_CHUNK_MAX ||
	    s->chunk_size % REC_ALIGN != 0 || s->nchunks < 2 ||
	    s->table_off != sizeof *s ||
	    s->data_off != sizeof *s +
	    (uint64_t)s->nchunks * sizeof(struct seg_chunk) ||
	    seg_size_for(s->nchunks, s->chunk_size) > size ||
	    s->clock > SEG_CLOCK_TSC)
		return -1;
	return 0;
}

void
seg_fire_wake(struct seg_hdr *s)
{
	atomic_fetch_add_explicit(&s->fire_seq, 1, memory_order_release);
	/* Shared, not private: the waiter is another process. */
	(void)syscall(SYS_futex, &s->fire_seq, FUTEX_WAKE, 1, NULL, NULL, 0);
}

void
seg_fire_wait(struct seg_hdr *s, uint32_t seen, uint64_t timeout_ns)
{
	struct timespec ts;

	ts.tv_sec = (time_t)(timeout_ns / 1000000000u);
	ts.tv_nsec = (long)(timeout_ns % 1000000000u);
	/* EAGAIN (the word moved), EINTR, ETIMEDOUT: the caller looks at
	 * the slots again in every case. */
	(void)syscall(SYS_futex, &s->fire_seq, FUTEX_WAIT, seen, &ts, NULL,
	    0);
}

void *
seg_attach(int shmid, size_t size)
{
#if defined(__linux__) && defined(SHM_REMAP) && defined(MADV_HUGEPAGE)
	const size_t huge = (size_t)2 << 20;
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), len;
	uintptr_t a;
	char *r;
	void *mem;

	len = (size + pg - 1) / pg * pg;
	if (size < huge || len > SIZE_MAX - huge)
		return shmat(shmid, NULL, 0);
	/* Reserve room for an aligned start, attach there (SHM_REMAP
	 * replaces the reservation), give back the rest. */
	r = mmap(NULL, len + huge, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
	    MAP_NORESERVE, -1, 0);
	if (r == MAP_FAILED)
		return shmat(shmid, NULL, 0);
	a = ((uintptr_t)r + huge - 1) & ~(uintptr_t)(huge - 1);
	mem = shmat(shmid, (void *)a, SHM_REMAP);
	if (mem == (void *)-1) {
		(void)munmap(r, len + huge);
		return shmat(shmid, NULL, 0);
	}
	/* a < r + huge: there is always a tail to give back. */
	if (a > (uintptr_t)r)
		(void)munmap(r, a - (uintptr_t)r);
	(void)munmap((void *)(a + len), (uintptr_t)r + huge - a);
	(void)madvise(mem, len, MADV_HUGEPAGE);
	return mem;
#else
	(void)size;
	return shmat(shmid, NULL, 0);
#endif
}

int
seg_populate(void *mem, size_t size)
{
#ifdef MADV_POPULATE_WRITE
	uintptr_t pg = 4096, a = (uintptr_t)mem & ~(pg - 1);

	return madvise((void *)a, size + ((uintptr_t)mem - a),
	    MADV_POPULATE_WRITE);
#else
	(void)mem;
	(void)size;
	return -1;
#endif
}

void
seg_view(struct seg *v, void *mem, size_t size)
{
	const struct seg_hdr *s = mem;

	v->hdr = mem;
	v->size = size;
	v->chunk_size = s->chunk_size;
	v->nchunks = s->nchunks;
	v->threshold = s->threshold < s->nchunks ? s->threshold :
	    s->nchunks / 2;
	v->table_off = s->table_off;
	v->data_off = s->data_off;
	v->sent = NULL;
}

void
seg_restore_layout(const struct seg *v, uint64_t seg_id, uint32_t lm_pid)
{
	struct seg_hdr *s = v->hdr;

	s->magic = SEG_MAGIC;
	s->version = SEG_VERSION;
	s->size = v->size;
	s->chunk_size = v->chunk_size;
	s->nchunks = v->nchunks;
	s->table_off = v->table_off;
	s->data_off = v->data_off;
	s->threshold = v->threshold;
	s->seg_id = seg_id;
	s->lm_pid = lm_pid;
}

int
seg_acquire(const struct seg *v, uint32_t session, uint32_t pid, uint32_t tid,
	    uint64_t seq, uint32_t kind, int *notify)
{
	struct seg_hdr *s = v->hdr;
	uint32_t n = v->nchunks, start, k, i, nf;
	struct seg_chunk *c;
	uint32_t expect;

	*notify = 0;
	if (atomic_load_explicit(&s->nfree, memory_order_relaxed) == 0)
		return -1;
	/* Reduce the hint first: start + k must not wrap around 2^32. */
	start = atomic_fetch_add_explicit(&s->hint, 1, memory_order_relaxed) %
	    n;
	for (k = 0; k < n; k++) {
		i = start + k < n ? start + k : start + k - n;
		c = seg_chunk(v, i);
		expect = SEG_FREE;
		if (atomic_load_explicit(&c->state, memory_order_relaxed) !=
		    SEG_FREE ||
		    !atomic_compare_exchange_strong_explicit(&c->state,
		    &expect, SEG_CLAIMED_BY(pid), memory_order_acquire,
		    memory_order_relaxed))
			continue;
		c->session = session;
		c->pid = pid;
		c->tid = tid;
		c->seq = seq;
		c->kind = kind;
		/* consumed too: a writer may have left it set on a FREE
		 * chunk, and the LM would skip our first records. */
		c->consumed = 0;
		atomic_store_explicit(&c->committed, 0, memory_order_relaxed);
		atomic_store_explicit(&c->carry, 0, memory_order_relaxed);
		atomic_store_explicit(&c->state, SEG_OWNED,
		    memory_order_release);
		nf = atomic_fetch_sub_explicit(&s->nfree, 1,
		    memory_order_release) - 1;
		if (nf < v->threshold &&
		    atomic_exchange_explicit(&s->push_req, 1,
		    memory_order_relaxed) == 0)
			*notify = 1;
		return (int)i;
	}
	return -1;
}

void
seg_release(const struct seg *v, uint32_t i)
{
	if (i < v->nchunks)
		atomic_store_explicit(&seg_chunk(v, i)->state, SEG_FULL,
		    memory_order_release);
}

/* Whether a record must outlive the overwriting of its chunk: the types
 * and names later records are read with. */
static int
keep_record(const struct rec_hdr *h)
{
	return (h->cls == REC_CLASS_META && h->attr == REC_ATTR_DESCRIPTOR) ||
	    (h->cls != REC_CLASS_META && h->attr == REC_ATTR_NAME);
}

/*
 * Compacts the uncollected records of chunk i, [from, to), to the start of
 * its data, keeping only definitions, names, and losses of other threads;
 * returns the bytes kept.  *dropped counts the events lost: the records
 * dropped, plus those the chunk's own loss records counted (they are
 * dropped too, and their counts carried over).
 */
static uint64_t
compact_kept(const struct seg *v, uint32_t i, uint64_t from, uint64_t to,
	     uint64_t *dropped)
{
	const struct seg_chunk *c = seg_chunk(v, i);
	uint64_t self = (uint64_t)c->pid << 32 | c->tid;
	char *d = seg_data(v, i);
	uint64_t out = 0, n, who;
	struct rec_hdr h;

	*dropped = 0;
	if (to > v->chunk_size || from > to)
		return 0;
	while (from + sizeof h <= to) {
		memcpy(&h, d + from, sizeof h);
		if (h.len < sizeof h || h.len % REC_ALIGN != 0 ||
		    h.len > to - from)
			break;
		who = 0;
		if (h.cls == REC_CLASS_META && h.attr == REC_ATTR_LOSS &&
		    h.len >= sizeof h + 8) {
			memcpy(&n, d + from + sizeof h, 8);
			if (h.len >= sizeof h + 16)
				memcpy(&who, d + from + sizeof h + 8, 8);
		}
		if (h.cls == REC_CLASS_META && h.attr == REC_ATTR_LOSS &&
		    h.len >= sizeof h + 8 && (who == 0 || who == self))
			*dropped += n;
		else if (keep_record(&h) ||
		    (h.cls == REC_CLASS_META && h.attr == REC_ATTR_LOSS)) {
			memmove(d + out, d + from, h.len);
			out += h.len;
		} else
			(*dropped)++;
		from += h.len;
	}
	return out;
}

int
seg_steal(const struct seg *v, uint32_t session, uint32_t pid, uint32_t tid,
	  uint64_t seq, struct seg_loss *loss)
{
	uint32_t i, best, tries;
	struct seg_chunk *c;
	uint64_t best_seq, to, kept;
	uint32_t expect;

	for (tries = 0; tries < 4; tries++) {
		best = UINT32_MAX;
		best_seq = UINT64_MAX;
		for (i = 0; i < v->nchunks; i++) {
			c = seg_chunk(v, i);
			if (atomic_load_explicit(&c->state,
			    memory_order_relaxed) != SEG_FULL ||
			    c->kind != SEG_KIND_RECORDS || c->pid != pid ||
			    c->session != session ||
			    atomic_load_explicit(&c->pin,
			    memory_order_relaxed) != 0)
				continue;
			/* The process's chunks are numbered in the order
			 * they were taken: the lowest is the oldest. */
			if (c->seq < best_seq) {
				best_seq = c->seq;
				best = i;
			}
		}
		if (best == UINT32_MAX)
			return -1;
		c = seg_chunk(v, best);
		expect = SEG_FULL;
		if (!atomic_compare_exchange_strong(&c->state, &expect,
		    SEG_CLAIMED_BY(pid)))
			continue;
		/* The LM sets pin before it looks at the state; we changed
		 * the state before we look at pin (both sequentially
		 * consistent): one of us sees the other. */
		if (atomic_load(&c->pin) != 0) {
			atomic_store(&c->state, SEG_FULL);
			continue;
		}
		to = atomic_load_explicit(&c->committed, memory_order_acquire);
		loss->pid = c->pid;
		loss->tid = c->tid;
		kept = compact_kept(v, best, c->consumed, to, &loss->events);
		c->consumed = 0;
		if (v->sent != NULL)
			v->sent[best].seq = 0;
		c->session = session;
		c->pid = pid;
		c->tid = tid;
		c->seq = seq;
		c->kind = SEG_KIND_RECORDS;
		atomic_store_explicit(&c->committed, kept,
		    memory_order_relaxed);
		/* The definitions must reach the MM with the older chunks
		 * that need them, even by a push of full chunks only. */
		atomic_store_explicit(&c->carry, kept, memory_order_relaxed);
		atomic_store_explicit(&c->state, SEG_OWNED,
		    memory_order_release);
		return (int)best;
	}
	return -1;
}

struct cand {
	uint32_t	idx;
	uint32_t	pid;
	uint32_t	session;
	uint64_t	seq;
};

static int
cand_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->session != y->session)
		return x->session < y->session ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return 0;
}

/*
 * Frees a FULL chunk the LM is done with.  A writer of the overwrite
 * policy may take it back between the LM's unpin and this (it takes FULL
 * chunks nobody pins): the LM first claims the chunk itself, as process
 * 0, and leaves it to the writer if that fails.  An LM adopting the
 * segment frees a chunk left claimed by process 0 (seg_adopt).
 */
static void
chunk_free(const struct seg *v, struct seg_chunk *c)
{
	uint32_t i = (uint32_t)(c - seg_chunk(v, 0)), expect = SEG_FULL;

	if (!atomic_compare_exchange_strong(&c->state, &expect,
	    SEG_CLAIMED_BY(0)))
		return;
	c->consumed = 0;
	atomic_store(&c->pin, 0);
	if (v->sent != NULL)
		v->sent[i].seq = v->sent[i].pins = 0;
	atomic_store_explicit(&c->state, SEG_FREE, memory_order_release);
	atomic_fetch_add_explicit(&v->hdr->nfree, 1, memory_order_relaxed);
}

static int
flight_add(struct seg_flight *fl, const struct seg_fl_ent *e)
{
	struct seg_fl_ent *nv;

	if (fl->n == fl->cap) {
		nv = realloc(fl->v, sizeof *nv * (fl->cap ? fl->cap * 2 : 64));
		if (nv == NULL)
			return -1;
		fl->v = nv;
		fl->cap = fl->cap ? fl->cap * 2 : 64;
	}
	fl->v[fl->n++] = *e;
	return 0;
}

/*
 * The LM counts its pins privately (v->sent) and publishes the count in
 * the chunk's pin word for writers to see: a writer scribbling over that
 * word can neither make the LM keep a chunk forever nor free one in
 * flight.  Without v->sent, a pin lasts only while the chunk is copied.
 */
static void
pin(const struct seg *v, uint32_t i)
{
	uint32_t n = v->sent != NULL ? ++v->sent[i].pins : 1;

	atomic_store(&seg_chunk(v, i)->pin, n);
}

/* Returns the pins left. */
static uint32_t
unpin(const struct seg *v, uint32_t i)
{
	uint32_t n = 0;

	if (v->sent != NULL && v->sent[i].pins > 0)
		n = --v->sent[i].pins;
	atomic_store(&seg_chunk(v, i)->pin, n);
	return n;
}

int
seg_collect(const struct seg *v, seg_emit_fn emit, void *arg,
	    uint64_t *bad_bytes)
{
	return seg_collect_ex(v, 0, emit, arg, bad_bytes, NULL);
}

/* Where the next piece of chunk i starts: after what was sent, if that
 * is still this chunk's, else after what was consumed. */
static uint64_t
next_from(const struct seg *v, uint32_t i, const struct seg_chunk *c)
{
	uint64_t from = c->consumed;

	if (v->sent != NULL && v->sent[i].seq == c->seq && c->seq != 0 &&
	    v->sent[i].off > from)
		from = v->sent[i].off;
	return from;
}

/* seg_collect_ex and seg_collect_raw: one of emit and emit_raw. */
static int
collect(const struct seg *v, int full_only, seg_emit_fn emit,
	seg_emit_raw_fn emit_raw, void *arg, uint64_t *bad_bytes,
	struct seg_flight *fl)
{
	struct seg_hdr *s = v->hdr;
	struct seg_fl_ent e;
	struct cand *cv;
	char *copy;
	uint32_t i, n = 0, st, nf, tries;
	struct seg_chunk *c;
	uint64_t committed, from;
	size_t ok;
	int pieces = 0, meta, r;

	if (v->sent == NULL)
		fl = NULL;
	/* Records are checked and emitted from a private copy: a writer
	 * changing the shared bytes meanwhile cannot make us send what we
	 * did not check. */
	cv = malloc(sizeof *cv * v->nchunks + v->chunk_size);
	if (cv == NULL)
		return -1;
	copy = (char *)(cv + v->nchunks);
	/*
	 * Find the chunks holding data.  A writer may switch chunks while we
	 * scan: if it took a chunk behind us and then one ahead, we would see
	 * its later chunk without the one between, and send its records out
	 * of order.  Only writers lower nfree and only we raise it, so an
	 * unchanged nfree across the scan means no chunk was taken during it;
	 * otherwise scan again (at most nfree times: without us, writers run
	 * out of chunks).
	 */
	for (tries = 0;; tries++) {
		nf = atomic_load_explicit(&s->nfree, memory_order_acquire);
		for (n = 0, i = 0; i < v->nchunks; i++) {
			c = seg_chunk(v, i);
			st = atomic_load_explicit(&c->state,
			    memory_order_acquire);
			/* Any kind but a table holds records (a scribbled
			 * kind is read as records, and checked as such). */
			if ((st != SEG_OWNED && st != SEG_FULL) ||
			    (full_only && st != SEG_FULL &&
			    atomic_load_explicit(&c->carry,
			    memory_order_relaxed) == 0) ||
			    c->kind == SEG_KIND_TABLE)
				continue;
			cv[n].idx = i;
			cv[n].pid = c->pid;
			cv[n].session = c->session;
			cv[n].seq = c->seq;
			n++;
		}
		if (atomic_load_explicit(&s->nfree, memory_order_acquire) ==
		    nf || tries > v->nchunks)
			break;
	}
	qsort(cv, n, sizeof *cv, cand_cmp);
	/* Clear the request first: a writer crossing the threshold again
	 * during this pass asks again. */
	atomic_store_explicit(&s->push_req, 0, memory_order_relaxed);
	for (i = 0; i < n; i++) {
		c = seg_chunk(v, cv[i].idx);
		/* Pin, then look: a writer stealing chunks (overwrite
		 * policy) leaves a pinned chunk alone, and if it took this
		 * one first, we see it changed hands. */
		pin(v, cv[i].idx);
		st = atomic_load(&c->state);
		if ((st != SEG_OWNED && st != SEG_FULL) || c->seq != cv[i].seq ||
		    c->pid != cv[i].pid || c->kind == SEG_KIND_TABLE) {
			unpin(v, cv[i].idx);
			continue;
		}
		/* Load the state before committed: if it was FULL, committed
		 * is final (the writer stored it before releasing). */
		committed = atomic_load_explicit(&c->committed,
		    memory_order_acquire);
		from = next_from(v, cv[i].idx, c);
		if (committed > v->chunk_size || from > committed ||
		    from % REC_ALIGN != 0) {
			/* Scribbled on: the owner loses this chunk. */
			if (bad_bytes != NULL && committed > from &&
			    from < v->chunk_size)
				*bad_bytes += (committed <= v->chunk_size ?
				    committed : v->chunk_size) - from;
			c->consumed = committed <= v->chunk_size ?
			    committed : v->chunk_size;
			if (v->sent != NULL)
				v->sent[cv[i].idx].seq = 0;
			if (unpin(v, cv[i].idx) == 0 && st == SEG_FULL)
				chunk_free(v, c);
			continue;
		}
		if (from == committed) {
			/* Nothing new: free a FULL chunk all acknowledged. */
			if (unpin(v, cv[i].idx) == 0 && st == SEG_FULL &&
			    c->consumed == committed)
				chunk_free(v, c);
			continue;
		}
		memcpy(copy, seg_data(v, cv[i].idx) + from, committed - from);
		ok = 0;
		r = 0;
		if (emit_raw != NULL)
			r = emit_raw(arg, c->pid, c->tid, c->session, c->seq,
			    from, copy, committed - from, &ok);
		else if ((ok = rec_valid_prefix_meta(copy, committed - from,
		    &meta)) > 0)
			r = emit(arg, c->pid, c->tid, c->session, c->seq, from,
			    copy, ok, meta);
		if (r != 0) {
			unpin(v, cv[i].idx);
			free(cv);
			return -1;
		}
		if (ok > committed - from)
			ok = committed - from;
		pieces += ok > 0;
		if (ok < committed - from && bad_bytes != NULL)
			*bad_bytes += committed - from - ok;
		if (fl != NULL) {
			memset(&e, 0, sizeof e);
			e.idx = cv[i].idx;
			e.pid = c->pid;
			e.seq = c->seq;
			e.end = committed;
			e.carry = atomic_load_explicit(&c->carry,
			    memory_order_relaxed);
			e.full = st == SEG_FULL;
			e.kind = SEG_KIND_RECORDS;
			e.session = c->session;
			if (flight_add(fl, &e) != 0) {
				unpin(v, cv[i].idx);
				free(cv);
				return -1;
			}
			v->sent[cv[i].idx].seq = c->seq;
			v->sent[cv[i].idx].off = committed;
			atomic_store_explicit(&c->carry, 0,
			    memory_order_relaxed);
			continue;	/* pinned until acknowledged */
		}
		c->consumed = committed;
		atomic_store_explicit(&c->carry, 0, memory_order_relaxed);
		if (unpin(v, cv[i].idx) == 0 && st == SEG_FULL)
			chunk_free(v, c);
	}
	free(cv);
	return pieces;
}

int
seg_collect_ex(const struct seg *v, int full_only, seg_emit_fn emit,
	       void *arg, uint64_t *bad_bytes, struct seg_flight *fl)
{
	return collect(v, full_only, emit, NULL, arg, bad_bytes, fl);
}

int
seg_collect_raw(const struct seg *v, int full_only, seg_emit_raw_fn emit,
	       void *arg, uint64_t *bad_bytes, struct seg_flight *fl)
{
	return collect(v, full_only, NULL, emit, arg, bad_bytes, fl);
}

int
seg_tables(const struct seg *v, seg_table_fn emit, void *arg,
	   struct seg_flight *fl)
{
	struct seg_fl_ent e;
	uint32_t i, st, n = 0;
	struct seg_chunk *c;
	uint64_t committed;
	char *copy;

	if (v->sent == NULL)
		fl = NULL;
	copy = malloc(v->chunk_size);
	if (copy == NULL)
		return -1;
	for (i = 0; i < v->nchunks; i++) {
		c = seg_chunk(v, i);
		st = atomic_load_explicit(&c->state, memory_order_acquire);
		if ((st != SEG_OWNED && st != SEG_FULL) ||
		    c->kind != SEG_KIND_TABLE)
			continue;
		/* Its last read is in flight already. */
		if (st == SEG_FULL && v->sent != NULL && v->sent[i].pins > 0)
			continue;
		committed = atomic_load_explicit(&c->committed,
		    memory_order_acquire);
		if (committed > v->chunk_size)
			committed = v->chunk_size;
		memcpy(copy, seg_data(v, i), committed);
		atomic_thread_fence(memory_order_acquire);
		if (emit(arg, c->pid, c->tid, c->session, st == SEG_FULL,
		    seg_data(v, i), copy, committed) != 0) {
			free(copy);
			return -1;
		}
		n++;
		if (st != SEG_FULL)
			continue;
		if (fl == NULL) {
			chunk_free(v, c);
			continue;
		}
		memset(&e, 0, sizeof e);
		e.idx = i;
		e.pid = c->pid;
		e.seq = c->seq;
		e.full = 1;
		e.kind = SEG_KIND_TABLE;
		if (flight_add(fl, &e) != 0) {
			free(copy);
			return -1;
		}
		pin(v, i);
	}
	free(copy);
	return (int)n;
}

/* Whether entry e still names the chunk it was taken from. */
static struct seg_chunk *
flight_chunk(const struct seg *v, const struct seg_fl_ent *e)
{
	struct seg_chunk *c;

	if (e->idx >= v->nchunks)
		return NULL;
	c = seg_chunk(v, e->idx);
	if (c->seq != e->seq || c->pid != e->pid)
		return NULL;
	return c;
}

/* The data of entry e is with the Main Monitor. */
static void
commit_ent(const struct seg *v, struct seg_fl_ent *e)
{
	struct seg_chunk *c;
	uint32_t st;

	e->done = 1;
	if ((c = flight_chunk(v, e)) == NULL) {
		/* Scribbled on meanwhile: just let go of it. */
		if (e->idx < v->nchunks)
			unpin(v, e->idx);
		return;
	}
	if (e->kind == SEG_KIND_RECORDS && e->end > c->consumed)
		c->consumed = e->end;
	st = atomic_load(&c->state);
	/* A record chunk that filled after it was sent is free too once
	 * all of it is consumed (its last piece may be written first). */
	if (unpin(v, e->idx) == 0 && st == SEG_FULL &&
	    (e->kind == SEG_KIND_TABLE ? e->full :
	    c->consumed == atomic_load(&c->committed)))
		chunk_free(v, c);
}

void
seg_flight_commit(const struct seg *v, struct seg_flight *fl)
{
	size_t i;

	for (i = 0; i < fl->n; i++)
		if (!fl->v[i].done)
			commit_ent(v, &fl->v[i]);
	fl->n = fl->open = 0;
}

int
seg_flight_written(const struct seg *v, struct seg_flight *fl, uint32_t pid,
		   uint32_t session, uint64_t seq, uint64_t end)
{
	struct seg_fl_ent *e;
	size_t i;

	/* Pieces are mostly written in the order they were sent: the
	 * search starts at the first entry not yet done. */
	for (i = fl->open; i < fl->n; i++) {
		e = &fl->v[i];
		if (e->done || e->kind != SEG_KIND_RECORDS || e->pid != pid ||
		    e->session != session || e->seq != seq || e->end != end)
			continue;
		commit_ent(v, e);
		while (fl->open < fl->n && fl->v[fl->open].done)
			fl->open++;
		return 1;
	}
	return 0;
}

void
seg_flight_abort(const struct seg *v, struct seg_flight *fl)
{
	struct seg_chunk *c;
	size_t i;

	for (i = 0; i < fl->n; i++) {
		/* Written already: consumed, nothing to send again. */
		if (fl->v[i].done)
			continue;
		if ((c = flight_chunk(v, &fl->v[i])) == NULL) {
			if (fl->v[i].idx < v->nchunks)
				unpin(v, fl->v[i].idx);
			continue;
		}
		if (v->sent != NULL)
			v->sent[fl->v[i].idx].seq = 0;
		if (fl->v[i].carry != 0)
			atomic_store(&c->carry, fl->v[i].carry);
		unpin(v, fl->v[i].idx);
	}
	fl->n = fl->open = 0;
}

void
seg_flight_free(struct seg_flight *fl)
{
	free(fl->v);
	fl->v = NULL;
	fl->n = fl->cap = fl->open = 0;
}

void
seg_adopt(const struct seg *v)
{
	uint32_t i, expect;

	for (i = 0; i < v->nchunks; i++) {
		atomic_store(&seg_chunk(v, i)->pin, 0);
		if (v->sent != NULL)
			v->sent[i].seq = v->sent[i].pins = 0;
		/* Being freed by the LM that died (chunk_free). */
		expect = SEG_CLAIMED_BY(0);
		if (atomic_compare_exchange_strong(&seg_chunk(v, i)->state,
		    &expect, SEG_FREE))
			atomic_fetch_add(&v->hdr->nfree, 1);
	}
}

void
seg_reclaim_session(const struct seg *v, uint32_t session)
{
	uint32_t i, st;
	struct seg_chunk *c;

	for (i = 0; i < v->nchunks; i++) {
		c = seg_chunk(v, i);
		st = atomic_load_explicit(&c->state, memory_order_acquire);
		if ((st == SEG_OWNED || SEG_STATE(st) == SEG_CLAIMED) &&
		    c->session == session) {
			if (SEG_STATE(st) == SEG_CLAIMED)
				atomic_store_explicit(&c->committed, 0,
				    memory_order_relaxed);
			atomic_store_explicit(&c->state, SEG_FULL,
			    memory_order_release);
		}
	}
}

void
seg_reclaim_claims(const struct seg *v, uint32_t pid)
{
	uint32_t i, want = SEG_CLAIMED_BY(pid);
	struct seg_chunk *c;

	for (i = 0; i < v->nchunks; i++) {
		c = seg_chunk(v, i);
		if (atomic_load_explicit(&c->state, memory_order_acquire) !=
		    want)
			continue;
		/* Its header is half filled: nothing in it counts. */
		atomic_store_explicit(&c->committed, 0, memory_order_relaxed);
		c->consumed = 0;
		c->kind = SEG_KIND_RECORDS;
		atomic_store_explicit(&c->state, SEG_FULL,
		    memory_order_release);
	}
}

uint32_t
seg_used(const struct seg *v)
{
	uint32_t i, n = 0;

	for (i = 0; i < v->nchunks; i++)
		if (atomic_load_explicit(&seg_chunk(v, i)->state,
		    memory_order_relaxed) != SEG_FREE)
			n++;
	return n;
}

int
seg_pending(const struct seg *v)
{
	const struct seg_chunk *c;
	uint32_t i, st;

	for (i = 0; i < v->nchunks; i++) {
		c = seg_chunk(v, i);
		st = atomic_load_explicit(&c->state, memory_order_relaxed);
		if ((st != SEG_OWNED && st != SEG_FULL) ||
		    c->kind == SEG_KIND_TABLE)
			continue;
		if (atomic_load_explicit(&c->committed, memory_order_relaxed) >
		    next_from(v, i, c))
			return 1;
	}
	return 0;
}
