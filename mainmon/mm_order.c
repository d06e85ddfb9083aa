/* SPDX-License-Identifier: MIT */
/* mm_order.c: records written in global time order: per-thread streams,
 * merged by a heap under a watermark (doc/ARCHITECTURE.md, "Global
 * order"). */
#include <stdlib.h>
#include <string.h>

#include "mm.h"
#include "net/loop.h"
#include "net/peer.h"
#include "net/wire.h"
#include "util/clock.h"
#include "util/log.h"

#define NONE		UINT32_MAX
/* An LM whose watermark is this far behind the newest record held is
 * asked for its data at once; one that holds the oldest record back and
 * sent nothing for PULL_IDLE, at the next tick (it may be idle, or push
 * rarely).  Never more often than every PULL_IDLE. */
#define PULL_LAG	10000000u
#define PULL_IDLE	10000000u
#define PULL_TICK_US	20000

/* A thread: what its stream is kept by (no padding). */
struct stream_key {
	uint32_t	node;
	uint32_t	pid;
	uint32_t	tid;
};

static uint32_t
stream_hash(const void *key)
{
	struct stream_key k;

	memcpy(&k, key, sizeof k);
	return (k.node * 31u + k.pid) * 2654435761u ^ k.tid * 40503u;
}

static const struct hmap_type streams_type = {
	sizeof(struct stream_key), sizeof(struct mm_stream *), 1024,
	stream_hash
};

static struct mm_stream *
stream_get(struct mm_order *o, uint32_t node, uint32_t pid, uint32_t tid)
{
	struct stream_key k = { node, pid, tid };
	struct mm_stream **v, *s;
	int added;

	if (o->streams.type == NULL)
		hmap_init(&o->streams, &streams_type);
	if ((v = hmap_put(&o->streams, &k, &added)) == NULL)
		return NULL;
	if (!added)
		return *v;
	if ((s = calloc(1, sizeof *s)) == NULL) {
		hmap_del_value(&o->streams, v);
		return NULL;
	}
	s->node = node;
	s->pid = pid;
	s->tid = tid;
	s->heap_ix = NONE;
	s->tail = &s->head;
	*v = s;
	return s;
}

static int
pid_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

void
mm_order_forget(struct mm *mm, uint32_t node, uint32_t *pid, size_t n)
{
	struct mm_order *o = &mm->order;
	struct mm_stream **v, *s;
	uint32_t it = 0;

	if (n == 0 || o->streams.type == NULL)
		return;
	qsort(pid, n, sizeof *pid, pid_cmp);
	while ((v = hmap_next(&o->streams, &it, NULL)) != NULL) {
		s = *v;
		if (s->node != node || s->head != NULL ||
		    s->heap_ix != NONE ||
		    bsearch(&s->pid, pid, n, sizeof *pid, pid_cmp) == NULL)
			continue;
		hmap_del_value(&o->streams, v);
		free(s);
	}
}

/* ---- the heap of streams with records, by their next timestamp ---- */

static void
heap_set(struct mm_order *o, uint32_t i, struct mm_stream *s)
{
	o->heap[i] = s;
	s->heap_ix = i;
}

static void
sift_up(struct mm_order *o, uint32_t i)
{
	struct mm_stream *s = o->heap[i];

	while (i > 0 && o->heap[(i - 1) / 2]->head_ts > s->head_ts) {
		heap_set(o, i, o->heap[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	heap_set(o, i, s);
}

static void
sift_down(struct mm_order *o, uint32_t i)
{
	struct mm_stream *s = o->heap[i];
	uint32_t c;

	while ((c = 2 * i + 1) < o->nheap) {
		if (c + 1 < o->nheap &&
		    o->heap[c + 1]->head_ts < o->heap[c]->head_ts)
			c++;
		if (o->heap[c]->head_ts >= s->head_ts)
			break;
		heap_set(o, i, o->heap[c]);
		i = c;
	}
	heap_set(o, i, s);
}

/* Room for one more stream in the heap: 0, or -1 (out of memory). */
static int
heap_room(struct mm_order *o)
{
	uint32_t cap = o->capheap ? o->capheap * 2 : 64;
	struct mm_stream **h;

	if (o->nheap < o->capheap)
		return 0;
	if ((h = realloc(o->heap, cap * sizeof *h)) == NULL)
		return -1;
	o->heap = h;
	o->capheap = cap;
	return 0;
}

/* Adds s to the heap (heap_room first). */
static void
heap_push(struct mm_order *o, struct mm_stream *s)
{
	heap_set(o, o->nheap++, s);
	sift_up(o, o->nheap - 1);
}

static void
heap_pop(struct mm_order *o)
{
	o->heap[0]->heap_ix = NONE;
	if (--o->nheap > 0) {
		heap_set(o, 0, o->heap[o->nheap]);
		sift_down(o, 0);
	}
}

/* The next record's timestamp of a piece not yet written to its end. */
static uint64_t
piece_ts(const struct mm_piece *pc)
{
	struct rec_hdr h;

	if (pc->lazy)
		return mm_out_lazy_ts(pc);
	memcpy(&h, pc->rec + pc->pos, sizeof h);
	return h.ts;
}

struct mm_stream *
mm_order_stream(struct mm *mm, const struct mm_piece *pc)
{
	struct mm_order *o = &mm->order;
	struct mm_stream *s;

	s = stream_get(o, pc->node->id, pc->pid, pc->tid);
	if (s == NULL || (s->heap_ix == NONE && heap_room(o) != 0))
		return NULL;
	return s;
}

void
mm_order_add(struct mm *mm, struct mm_stream *s, struct mm_piece *pc)
{
	struct mm_order *o = &mm->order;

	pc->pos = 0;
	pc->next = NULL;
	*s->tail = pc;
	s->tail = &pc->next;
	/* What it holds: the records, the run they came in (-f bin), and
	 * where the run's stretches of one kind of record begin; a lazy
	 * piece, its allocation cut back to its run and stretches. */
	pc->held = pc->lazy ? pc->roff : (uint64_t)pc->len + pc->dlen +
	    (pc->seg != NULL ? (uint64_t)pc->info.nseg * sizeof *pc->seg : 0);
	o->bytes += pc->held;
	if (o->bytes > o->bytes_max)
		o->bytes_max = o->bytes;
	if (pc->ack != NULL)
		pc->ack->pending++;
	if (s->heap_ix == NONE) {
		s->head_ts = piece_ts(s->head);
		heap_push(o, s);
	}
}

/* Notes that a piece of a chunk is written, for its LM (mm_order_acks). */
static void
note_written(struct mm_conn *c, struct mm_ack *a, const struct mm_piece *pc,
	     uint64_t upto)
{
	struct mm_written *v;
	uint32_t cap;

	if (c->nwritten == c->capwritten) {
		cap = c->capwritten ? c->capwritten * 2 : 256;
		if ((v = realloc(c->written, cap * sizeof *v)) == NULL)
			return;		/* the ACK will do */
		c->written = v;
		c->capwritten = cap;
	}
	v = &c->written[c->nwritten++];
	v->ack = a;
	v->pid = pc->pid;
	v->session = pc->session;
	v->seq = pc->seq;
	v->end = pc->off + pc->len;
	v->upto = upto;
}

/* A piece written to its end: its collection may now be acknowledged,
 * and its chunk's LM may free the chunk now. */
static void
piece_done(struct mm *mm, struct mm_stream *s)
{
	struct mm_piece *pc = s->head;
	struct mm_ack *a = pc->ack;
	uint64_t upto = mm_out_end(mm);

	if ((s->head = pc->next) == NULL)
		s->tail = &s->head;
	mm->order.bytes -= pc->held;
	if (a != NULL)
		a->upto = upto;
	if (a != NULL && a->c != NULL && pc->seq != 0)
		note_written(a->c, a, pc, upto);
	if (a != NULL && --a->pending == 0 && a->c == NULL)
		free(a);
	free(pc);
}

/* Tells c which pieces are in the file (up to done) of its collections
 * that are not acknowledged whole now (those that are, the ACK says). */
static void
send_written(struct mm_conn *c, uint64_t done)
{
	unsigned char *buf;
	struct wire_wr w;
	uint32_t i, n, k, m;

	/* They were noted in the order they were given to the file. */
	for (m = 0; m < c->nwritten && c->written[m].upto <= done; m++)
		;
	if (m == 0)
		return;
	buf = malloc(4 + WIRE_WRITTEN_MAX * WIRE_WRITTEN_ITEM);
	for (i = 0; buf != NULL && i < m; i = k) {
		for (n = 0, k = i; k < m && n < WIRE_WRITTEN_MAX; k++)
			n += !c->written[k].ack->whole;
		if (n == 0)
			continue;
		wire_wr_init(&w, buf, 4 + n * WIRE_WRITTEN_ITEM);
		wire_put_u32(&w, n);
		for (; i < k; i++) {
			if (c->written[i].ack->whole)
				continue;
			wire_put_u32(&w, c->written[i].pid);
			wire_put_u32(&w, c->written[i].session);
			wire_put_u64(&w, c->written[i].seq);
			wire_put_u32(&w, c->written[i].end);
		}
		peer_send(c->p, WIRE_WRITTEN, buf, w.len, NULL, 0);
	}
	free(buf);
	memmove(c->written, c->written + m,
	    (c->nwritten - m) * sizeof *c->written);
	c->nwritten -= m;
}

/* Sends every connection what is written: the pieces of collections
 * written in part, then the ACKs of those written in full, in the order
 * of their DONEs. */
void
mm_order_acks(struct mm *mm)
{
	unsigned char buf[4];
	struct wire_wr w;
	struct mm_conn *c;
	struct mm_ack *a;
	uint64_t done = mm_out_done(mm);

	for (c = mm->conns; c != NULL; c = c->next) {
		for (a = c->acks; a != NULL && a->pending == 0 &&
		    a->upto <= done; a = a->next)
			a->whole = 1;
		if (c->nwritten > 0)
			send_written(c, done);
		while ((a = c->acks) != NULL && a->whole) {
			if ((c->acks = a->next) == NULL)
				c->acks_tail = &c->acks;
			wire_wr_init(&w, buf, sizeof buf);
			wire_put_u32(&w, a->round);
			peer_send(c->p, WIRE_ACK, buf, w.len, NULL, 0);
			free(a);
		}
	}
}

/*
 * The heap's top stream and the next (heap[1] or heap[2]) taking turns:
 * their records before w and the third's next merged at once
 * (mm_out_pair), their places in the heap mended.  Returns how many.
 */
static uint64_t
pair(struct mm *mm, uint64_t w)
{
	struct mm_order *o = &mm->order;
	struct mm_stream *s = o->heap[0], *t = o->heap[1];
	uint64_t bound = w, n;
	uint32_t i, c;

	if (o->nheap > 2 && o->heap[2]->head_ts < t->head_ts)
		t = o->heap[2];
	if (!t->head->lazy)
		return 0;
	/* The third stream's next: the other of heap[1] and heap[2], or a
	 * child of t. */
	for (i = 1; i <= 2 && i < o->nheap; i++)
		if (o->heap[i] != t && o->heap[i]->head_ts < bound)
			bound = o->heap[i]->head_ts;
	for (c = 2 * t->heap_ix + 1; c <= 2 * t->heap_ix + 2 &&
	    c < o->nheap; c++)
		if (o->heap[c]->head_ts < bound)
			bound = o->heap[c]->head_ts;
	if ((n = mm_out_pair(mm, s->head, t->head, bound)) == 0)
		return 0;
	o->paired += n;
	t->head_ts = piece_ts(t->head);
	sift_down(o, t->heap_ix);
	s->head_ts = piece_ts(s->head);
	sift_down(o, 0);
	return n;
}

int
mm_order_write(struct mm *mm, uint64_t w)
{
	struct mm_order *o = &mm->order;
	struct mm_stream *s;
	struct mm_node *node;
	uint64_t lim, next, late;
	int r;

	/* The file cannot be written (a full disk): the records wait; so
	 * they do, where they may, while its thread has much in hand (a
	 * slow or frozen disk: the loop does not wait for it). */
	while (!mm_out_stalled(mm) && !(o->may_hold && mm_out_full(mm)) &&
	    o->nheap > 0 &&
	    (s = o->heap[0])->head_ts < w) {
		/* This stream's records go up to the next stream's first
		 * (ties: this one's first, in a run). */
		next = UINT64_MAX;
		if (o->nheap > 1)
			next = o->heap[1]->head_ts;
		if (o->nheap > 2 && o->heap[2]->head_ts < next)
			next = o->heap[2]->head_ts;
		lim = next == UINT64_MAX ? w : next + 1 < w ? next + 1 : w;
		if (o->nheap > 1 && s->head->lazy && pair(mm, w) > 0) {
			mm_plan_poll(mm);
			continue;
		}
		/* Late records counted per host too (#LATE). */
		node = s->head->node;
		late = o->late;
		if (mm_out_piece(mm, s->head, lim) != 0)
			return -1;
		if (node != NULL)
			node->late += o->late - late;
		if (s->head->pos >= s->head->len)
			piece_done(mm, s);
		if (s->head == NULL)
			heap_pop(o);
		else {
			s->head_ts = piece_ts(s->head);
			sift_down(o, 0);
		}
		/* Between two runs: firings do not wait for the rest. */
		mm_plan_poll(mm);
	}
	/* Acknowledged once in the file (1: not now; nothing lost). */
	if ((r = mm_out_write_out(mm)) != 0)
		return r < 0 ? -1 : 0;
	mm_order_acks(mm);
	return 0;
}

uint64_t
mm_order_watermark(const struct mm *mm)
{
	const struct mm_conn *c;
	uint64_t w = UINT64_MAX;

	for (c = mm->conns; c != NULL; c = c->next)
		if (MM_IS_LM(c) && (c->order == MM_ORD_FOLLOW ||
		    c->order == MM_ORD_PULLED) && c->wm < w)
			w = c->wm;
	return w;
}

uint64_t
mm_order_scanned(const struct mm *mm)
{
	const struct mm_conn *c;
	uint64_t w = UINT64_MAX;

	for (c = mm->conns; c != NULL; c = c->next)
		if (c->state == MM_CONN_READY && c->order != MM_ORD_OUT &&
		    c->scan < w)
			w = c->scan;
	return w;
}

/* Asks one LM for everything committed, for the watermark's sake (no one
 * waits for the answer: its DONE is acknowledged like a push's). */
static void
pull(struct mm *mm, struct mm_conn *c, uint64_t now)
{
	if (c->order != MM_ORD_FOLLOW || c->state != MM_CONN_READY)
		return;
	c->order = MM_ORD_PULLED;
	c->last_pull = now;
	mm_send_collect(c, ++mm->next_round, 0);
}

/* Whether a collection an LM started itself waits to be written. */
static int
push_waits(const struct mm *mm)
{
	const struct mm_conn *c;
	const struct mm_ack *a;

	for (c = mm->conns; c != NULL; c = c->next)
		for (a = c->acks; a != NULL; a = a->next)
			if (a->round == WIRE_ROUND_PUSH)
				return 1;
	return 0;
}

int
mm_order_advance(struct mm *mm, int tick)
{
	struct mm_order *o = &mm->order;
	struct mm_conn *c;
	uint64_t now;
	uint64_t w = mm_order_watermark(mm), newest = 0, top;
	uint32_t i;
	int r;

	if (mm->out == NULL)
		return 0;
	/* What is at the watermark itself may go: nothing older comes. */
	o->may_hold = 1;
	r = mm_order_write(mm, w == UINT64_MAX ? w : w + 1);
	/* Out of room: the oldest go now, whatever may still come. */
	while (r == 0 && o->bytes > o->max_bytes && o->nheap > 0 &&
	    !mm_out_full(mm)) {
		o->forced++;
		r = mm_order_write(mm, o->heap[0]->head_ts + 1);
	}
	o->may_hold = 0;
	if (o->nheap == 0)
		return r;
	/* Records stamped in the future (a scribbled timestamp) cannot be
	 * released by asking: they wait for the time, or the end. */
	now = clk_mono_ns();
	if (tick)
		mm_live_order_check(mm, now);
	top = o->heap[0]->head_ts;
	for (i = 0; i < o->nheap; i++)
		if (o->heap[i]->head_ts > newest && o->heap[i]->head_ts <= now)
			newest = o->heap[i]->head_ts;
	/* The global scheme collects in its rounds, with the processes
	 * stopped: what waits goes at the next one; unless an LM's own
	 * collection (a flush, its last before exiting) waits for it. */
	if (mm->global && !push_waits(mm))
		return r;
	for (c = mm->conns; c != NULL; c = c->next) {
		if (!MM_IS_LM(c) || c->order == MM_ORD_REPLAY ||
		    c->order == MM_ORD_OUT || now - c->last_pull < PULL_IDLE)
			continue;
		if (c->wm + PULL_LAG < newest || (tick && top <= now &&
		    c->wm <= top && now - c->last_done >= PULL_IDLE))
			pull(mm, c, now);
	}
	if (mm->order_ev != NULL)
		loop_arm_idle(mm->order_ev, PULL_TICK_US * 1000ull);
	return r;
}

int
mm_order_summary(struct mm *mm)
{
	const struct mm_order *o = &mm->order;
	const struct mm_causal *g = &mm->causal;

	log_debug("order: %llu records of two threads taking turns merged "
	    "record by record", (unsigned long long)o->paired);
	if (tape_order(mm->out, o->late, o->clamped, o->forced,
	    o->bytes_max) != 0 || mm_live_late(mm) != 0)
		return -1;
	return tape_causal(mm->out, g->checked, g->violations, g->worst,
	    g->unchecked + g->waiting, g->beyond);
}

void
mm_order_conn_gone(struct mm_conn *c)
{
	struct mm_ack *a, *next;

	for (a = c->acks; a != NULL; a = next) {
		next = a->next;
		if (a->pending == 0)
			free(a);
		else
			a->c = NULL;	/* freed by its last piece */
	}
	c->acks = NULL;
	c->acks_tail = &c->acks;
	free(c->written);
	c->written = NULL;
	c->nwritten = c->capwritten = 0;
}

void
mm_order_free(struct mm *mm)
{
	struct mm_order *o = &mm->order;
	struct mm_stream **v, *s;
	uint32_t it = 0;

	while ((v = hmap_next(&o->streams, &it, NULL)) != NULL) {
		s = *v;
		while (s->head != NULL)
			piece_done(mm, s);
		free(s);
	}
	hmap_free(&o->streams);
	free(o->heap);
	o->heap = NULL;
	o->nheap = o->capheap = 0;
}
