/* SPDX-License-Identifier: MIT */
/* test_mm_order.c: mainmon's time-ordered merge (mainmon/mm_order.c): which
 * records are written when, in what order, and which collections are then
 * acknowledged.  The file and the connections are stand-ins below, which
 * note what mm_order asks of them. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mm.h"
#include "net/peer.h"
#include "util/clock.h"

/* ---- stand-ins for mm_out.c, the trace file and the peers ---- */

#define MAXW	4096
static struct written_rec {
	uint32_t	pid, tid;
	uint64_t	ts;
} out[MAXW];
static int nout;
static int fail_piece, fail_out;	/* make the file fail */
/* Where what is given to the file ends (a record: 16 bytes), and, while
 * held, how much of it the writer's thread has written (mm_out_done). */
static uint64_t file_end, file_done;
static int held;
static uint64_t sum_late = UINT64_MAX, sum_checked = UINT64_MAX;

/* As mm_out_piece: the records of pc from pc->pos, up to w (exclusive). */
int
mm_out_piece(struct mm *m, struct mm_piece *pc, uint64_t w)
{
	struct rec_hdr h;
	uint32_t off;

	(void)m;
	if (fail_piece)
		return -1;
	for (off = pc->pos; off < pc->len; off += h.len) {
		memcpy(&h, pc->data + off, sizeof h);
		if (h.ts >= w)
			break;
		cr_assert_lt(nout, MAXW);
		out[nout++] = (struct written_rec){ pc->pid, pc->tid, h.ts };
		file_end += 16;
	}
	pc->pos = off;
	return 0;
}

/* No piece here is lazy (mm_out.c). */
uint64_t
mm_out_lazy_ts(const struct mm_piece *pc)
{
	(void)pc;
	cr_assert_fail("a lazy piece");
	return 0;
}

uint64_t
mm_out_pair(struct mm *m, struct mm_piece *a, struct mm_piece *b,
	    uint64_t w)
{
	(void)m;
	(void)a;
	(void)b;
	(void)w;
	cr_assert_fail("a lazy piece");
	return 0;
}

int
mm_out_write_out(struct mm *m)
{
	(void)m;
	return fail_out ? -1 : 0;
}

uint64_t
mm_out_end(const struct mm *m)
{
	(void)m;
	return file_end;
}

int
mm_out_full(const struct mm *m)
{
	(void)m;
	return 0;
}

uint64_t
mm_out_done(const struct mm *m)
{
	(void)m;
	return held ? file_done : file_end;
}

int
mm_out_stalled(struct mm *m)
{
	(void)m;
	return 0;
}

/* No plan here: nothing to fire between runs. */
void
mm_plan_poll(struct mm *m)
{
	(void)m;
}

int
tape_order(struct tape_w *w, uint64_t late, uint64_t clamped,
	   uint64_t forced, uint64_t held_max)
{
	(void)w;
	(void)clamped;
	(void)forced;
	(void)held_max;
	sum_late = late;
	return 0;
}

int
tape_causal(struct tape_w *w, uint64_t matched, uint64_t violations,
	    uint64_t worst, uint64_t unmatched, uint64_t beyond)
{
	(void)w;
	(void)beyond;
	(void)violations;
	(void)worst;
	(void)unmatched;
	sum_checked = matched;
	return 0;
}

/* Liveness (mm_live.c) is tested end to end (test/hostage.sh). */
void
mm_live_order_check(struct mm *m, uint64_t now)
{
	(void)m;
	(void)now;
}

int
mm_live_late(struct mm *m)
{
	(void)m;
	return 0;
}

/* What was sent to the LMs: each message's peer, type and first u32
 * (an ACK's or COLLECT's round; a WRITTEN's count) and, for a WRITTEN,
 * its first piece's pid and end. */
static struct sent_msg {
	struct peer	*p;
	uint16_t	type;
	uint32_t	u0;
	uint32_t	pid, end;
} sent[256];
static int nsent;

int
peer_send(struct peer *p, uint16_t type, const void *a, size_t alen,
	  const void *b, size_t blen)
{
	const unsigned char *q = a;

	(void)b;
	cr_assert_eq(blen, 0);
	cr_assert_lt(nsent, 256);
	sent[nsent] = (struct sent_msg){ .p = p, .type = type };
	if (alen >= 4)
		memcpy(&sent[nsent].u0, q, 4);
	if (type == WIRE_WRITTEN && alen >= 4 + WIRE_WRITTEN_ITEM) {
		memcpy(&sent[nsent].pid, q + 4, 4);
		memcpy(&sent[nsent].end, q + 4 + 16, 4);
	}
	nsent++;
	return 0;
}

/* A COLLECT (mm_peer.c sends it after a clock exchange; none here). */
void
mm_send_collect(struct mm_conn *c, uint32_t round, uint32_t flags)
{
	unsigned char buf[8];
	struct wire_wr w;

	wire_wr_init(&w, buf, sizeof buf);
	wire_put_u32(&w, round);
	wire_put_u32(&w, flags);
	peer_send(c->p, WIRE_COLLECT, buf, w.len, NULL, 0);
}

/* ---- the fixture ---- */

static struct mm *mm;
static struct mm_node node1 = { .id = 1, .host = "host1" };
static struct mm_conn *lm1, *lm2;
/* Stand-in peers: only their addresses matter. */
static char peer1, peer2;

static struct mm_conn *
new_lm(struct peer *p)
{
	struct mm_conn *c = calloc(1, sizeof *c);

	cr_assert_not_null(c);
	c->mm = mm;
	c->p = p;
	c->state = MM_CONN_READY;
	c->node = &node1;
	c->acks_tail = &c->acks;
	c->next = mm->conns;
	mm->conns = c;
	return c;
}

static void
setup(void)
{
	mm = calloc(1, sizeof *mm);
	cr_assert_not_null(mm);
	mm->out = (struct tape_w *)&node1;	/* not NULL: there is a file */
	mm->order.max_bytes = UINT64_MAX;
	lm2 = new_lm((struct peer *)&peer2);
	lm1 = new_lm((struct peer *)&peer1);
	nout = nsent = 0;
	fail_piece = fail_out = 0;
}

static void
teardown(void)
{
	struct mm_conn *c, *next;

	if (mm == NULL)
		return;
	for (c = mm->conns; c != NULL; c = next) {
		next = c->next;
		mm_order_conn_gone(c);
		free(c);
	}
	mm_order_free(mm);
	free(mm);
	mm = NULL;
}

TestSuite(order, .init = setup, .fini = teardown, .timeout = 10);

/* A collection of c (round) still to be acknowledged, as mm_out_batch
 * makes one. */
static struct mm_ack *
collection(struct mm_conn *c, uint32_t round)
{
	struct mm_ack *a = calloc(1, sizeof *a);

	cr_assert_not_null(a);
	a->c = c;
	a->round = round;
	*c->acks_tail = a;
	c->acks_tail = &a->next;
	return a;
}

/* A piece of thread (pid, tid) of collection a with n records stamped
 * ts[0..n), dlen bytes of the run they came in kept after them and the
 * nseg offsets seg of its stretches of one kind of record, put in its
 * stream. */
static struct mm_piece *
add_kept_st(struct mm_ack *a, uint32_t pid, uint32_t tid, uint64_t seq,
	    const uint64_t *ts, int n, uint32_t dlen, uint32_t *seg,
	    uint32_t nseg)
{
	struct mm_piece *pc = calloc(1, sizeof *pc + (size_t)n * 16 + dlen);
	struct mm_stream *s;
	int i;

	cr_assert_not_null(pc);
	pc->pid = pid;
	pc->tid = tid;
	pc->session = 1;
	pc->seq = seq;
	pc->seg_id = 1;
	pc->off = 0;
	pc->len = (uint32_t)n * 16;
	pc->rec = pc->data;
	pc->node = &node1;
	pc->ack = a;
	for (i = 0; i < n; i++)
		rec_put_hdr(pc->data + i * 16, 16, REC_CLASS_USER, 0, 1, ts[i]);
	pc->dlen = dlen;	/* pc->dense NULL: written by encoding */
	pc->seg = seg;
	pc->info.nseg = nseg;
	s = mm_order_stream(mm, pc);
	cr_assert_not_null(s);
	mm_order_add(mm, s, pc);
	return pc;
}

static struct mm_piece *
add_kept(struct mm_ack *a, uint32_t pid, uint32_t tid, uint64_t seq,
	 const uint64_t *ts, int n, uint32_t dlen)
{
	return add_kept_st(a, pid, tid, seq, ts, n, dlen, NULL, 0);
}

static struct mm_piece *
add(struct mm_ack *a, uint32_t pid, uint32_t tid, uint64_t seq,
    const uint64_t *ts, int n)
{
	return add_kept(a, pid, tid, seq, ts, n, 0);
}

#define ADD(a, pid, tid, seq, ...) add(a, pid, tid, seq, \
	(const uint64_t[]){ __VA_ARGS__ }, \
	(int)(sizeof((const uint64_t[]){ __VA_ARGS__ }) / sizeof(uint64_t)))

static void
assert_written(const uint64_t *ts, int n)
{
	int i;

	cr_assert_eq(nout, n, "%d records written, want %d", nout, n);
	for (i = 0; i < n; i++)
		cr_assert_eq(out[i].ts, ts[i], "record %d at %llu, want %llu",
		    i, (unsigned long long)out[i].ts,
		    (unsigned long long)ts[i]);
}

#define WRITTEN(...) assert_written((const uint64_t[]){ __VA_ARGS__ }, \
	(int)(sizeof((const uint64_t[]){ __VA_ARGS__ }) / sizeof(uint64_t)))

/* The messages of one type sent to p. */
static int
count_sent(struct peer *p, uint16_t type)
{
	int i, n = 0;

	for (i = 0; i < nsent; i++)
		n += sent[i].p == p && sent[i].type == type;
	return n;
}

/* ---- what is written, and when ---- */

Test(order, the_records_of_several_threads_are_written_in_time_order)
{
	struct mm_ack *a = collection(lm1, 1);

	ADD(a, 10, 1, 1, 100, 400, 700);
	ADD(a, 10, 2, 1, 200, 500, 800);
	ADD(a, 20, 1, 1, 300, 600, 900);
	cr_assert_eq(mm_order_write(mm, UINT64_MAX), 0);
	WRITTEN(100, 200, 300, 400, 500, 600, 700, 800, 900);
	cr_assert_eq(mm->order.bytes, 0);
	cr_assert_eq(mm->order.nheap, 0);
}

/* 60 threads, 20 records each, at times a small generator scatters: all
 * 1200 written, in time order, each thread's in its own order. */
Test(order, the_records_of_many_threads_are_merged_in_time_order)
{
	struct mm_ack *a = collection(lm1, 1);
	uint64_t ts[20], x = 88172645463325252ull, last[60] = { 0 };
	int t, i;

	for (t = 0; t < 60; t++) {
		uint64_t at = 0;

		for (i = 0; i < 20; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			at += 1 + x % 1000;
			ts[i] = at;
		}
		add(a, 10, (uint32_t)t, 1, ts, 20);
	}
	/* In two steps: the heap is rebuilt in between. */
	cr_assert_eq(mm_order_write(mm, 5000), 0);
	cr_assert_eq(mm_order_write(mm, UINT64_MAX), 0);
	cr_assert_eq(nout, 1200);
	for (i = 0; i < nout; i++) {
		cr_assert(i == 0 || out[i - 1].ts <= out[i].ts,
		    "record %d at %llu after %llu", i,
		    (unsigned long long)out[i].ts,
		    (unsigned long long)out[i - 1].ts);
		cr_assert_gt(out[i].ts, last[out[i].tid]);
		last[out[i].tid] = out[i].ts;
	}
}

Test(order, a_thread_whose_records_are_apart_from_the_others_is_written_in_runs)
{
	struct mm_ack *a = collection(lm1, 1);

	ADD(a, 10, 1, 1, 100, 110, 120, 130, 700);
	ADD(a, 10, 2, 1, 500, 510);
	cr_assert_eq(mm_order_write(mm, UINT64_MAX), 0);
	WRITTEN(100, 110, 120, 130, 500, 510, 700);
}

Test(order, records_at_the_same_time_are_all_written)
{
	struct mm_ack *a = collection(lm1, 1);

	ADD(a, 10, 1, 1, 100, 200, 200, 300);
	ADD(a, 10, 2, 1, 200, 200);
	ADD(a, 10, 3, 1, 200);
	cr_assert_eq(mm_order_write(mm, UINT64_MAX), 0);
	WRITTEN(100, 200, 200, 200, 200, 200, 300);
}

Test(order, only_records_before_the_limit_are_written_the_rest_wait)
{
	struct mm_ack *a = collection(lm1, 1);

	ADD(a, 10, 1, 1, 100, 300, 500);
	ADD(a, 10, 2, 1, 200, 400);
	cr_assert_eq(mm_order_write(mm, 300), 0);
	WRITTEN(100, 200);
	cr_assert_eq(mm->order.bytes, 5 * 16, "the pieces are held whole");
	cr_assert_eq(mm_order_write(mm, 301), 0);
	WRITTEN(100, 200, 300);
	cr_assert_eq(mm_order_write(mm, UINT64_MAX), 0);
	WRITTEN(100, 200, 300, 400, 500);
	cr_assert_eq(mm->order.bytes, 0);
}

Test(order, a_thread_pieces_follow_one_another)
{
	struct mm_ack *a = collection(lm1, 1);

	ADD(a, 10, 1, 1, 100, 300);
	ADD(a, 10, 1, 2, 500, 700);
	ADD(a, 10, 2, 1, 200, 600);
	cr_assert_eq(mm_order_write(mm, UINT64_MAX), 0);
	WRITTEN(100, 200, 300, 500, 600, 700);
}

Test(order, a_piece_added_after_a_write_joins_the_merge)
{
	struct mm_ack *a = collection(lm1, 1), *b;

	ADD(a, 10, 1, 1, 100, 400);
	cr_assert_eq(mm_order_write(mm, 200), 0);
	b = collection(lm2, 1);
	ADD(b, 30, 1, 1, 300, 500);
	cr_assert_eq(mm_order_write(mm, UINT64_MAX), 0);
	WRITTEN(100, 300, 400, 500);
}

/* What mainmon holds, bounded by -m, counts a binary file's runs kept
 * beside their records as well as the records. */
Test(order, a_run_kept_beside_its_records_counts)
{
	struct mm_ack *a = collection(lm1, 1);
	static const uint64_t ts[] = { 100, 200 };

	add_kept(a, 10, 1, 1, ts, 2, 12);
	ADD(a, 10, 2, 1, 150);
	cr_assert_eq(mm->order.bytes, 3 * 16 + 12);
	cr_assert_eq(mm_order_write(mm, UINT64_MAX), 0);
	cr_assert_eq(mm->order.bytes, 0);
	cr_assert_eq(mm->order.bytes_max, 3 * 16 + 12);
	WRITTEN(100, 150, 200);
}

/* And where the run's stretches of one kind of record begin, kept with
 * it (mm_peer.c), until the piece is written. */
Test(order, a_runs_stretches_count)
{
	struct mm_ack *a = collection(lm1, 1);
	static const uint64_t ts[] = { 100, 200 };
	static uint32_t seg[3] = { 16, 16, 16 };

	add_kept_st(a, 10, 1, 1, ts, 2, 12, seg, 3);
	ADD(a, 10, 2, 1, 150);
	cr_assert_eq(mm->order.bytes, 3 * 16 + 12 + 3 * 4);
	cr_assert_eq(mm_order_write(mm, UINT64_MAX), 0);
	cr_assert_eq(mm->order.bytes, 0, "every byte counted is given back");
	cr_assert_eq(mm->order.bytes_max, 3 * 16 + 12 + 3 * 4);
	WRITTEN(100, 150, 200);
}

Test(order, the_largest_held_is_remembered)
{
	struct mm_ack *a = collection(lm1, 1);

	ADD(a, 10, 1, 1, 100, 200, 300);
	ADD(a, 10, 2, 1, 150);
	cr_assert_eq(mm->order.bytes, 4 * 16);
	cr_assert_eq(mm_order_write(mm, UINT64_MAX), 0);
	ADD(collection(lm1, 2), 10, 1, 2, 400);
	cr_assert_eq(mm->order.bytes, 16);
	cr_assert_eq(mm->order.bytes_max, 4 * 16);
}

/* ---- acknowledgements ---- */

/* Processes freed: their threads' streams go, but not one with records
 * waiting, nor another process's, nor the same pid's on another host. */
Test(order, the_streams_of_processes_freed_are_forgotten)
{
	struct mm_ack *a = collection(lm1, 1);
	uint32_t pid[] = { 40, 30, 10 };

	ADD(a, 10, 1, 1, 100);
	ADD(a, 10, 2, 1, 200);
	ADD(a, 20, 1, 1, 300);
	ADD(a, 30, 1, 1, 900);
	cr_assert_eq(mm_order_write(mm, 500), 0);
	WRITTEN(100, 200, 300);
	cr_assert_eq(hmap_count(&mm->order.streams), 4);
	mm_order_forget(mm, 2, pid, 3);
	cr_assert_eq(hmap_count(&mm->order.streams), 4);
	mm_order_forget(mm, 1, pid, 3);
	cr_assert_eq(hmap_count(&mm->order.streams), 2,
	    "%u streams left, want those of 20 and of 30 (900 waits)",
	    hmap_count(&mm->order.streams));
	cr_assert_eq(pid[0], 10, "the pids sorted");
	cr_assert_eq(mm_order_write(mm, UINT64_MAX), 0);
	WRITTEN(100, 200, 300, 900);
	mm_order_forget(mm, 1, pid, 3);
	cr_assert_eq(hmap_count(&mm->order.streams), 1);
	ADD(collection(lm1, 2), 10, 1, 2, 1000);	/* made again */
	cr_assert_eq(hmap_count(&mm->order.streams), 2);
	cr_assert_eq(mm_order_write(mm, UINT64_MAX), 0);
	WRITTEN(100, 200, 300, 900, 1000);
}

Test(order, a_collection_is_acknowledged_once_all_its_pieces_are_written)
{
	struct mm_ack *a = collection(lm1, 7);

	ADD(a, 10, 1, 1, 100);
	ADD(a, 10, 2, 1, 300);
	cr_assert_eq(mm_order_write(mm, 200), 0);
	cr_assert_eq(count_sent((struct peer *)&peer1, WIRE_ACK), 0);
	cr_assert_eq(mm_order_write(mm, UINT64_MAX), 0);
	cr_assert_eq(count_sent((struct peer *)&peer1, WIRE_ACK), 1);
	cr_assert_eq(sent[nsent - 1].u0, 7);
	cr_assert_null(lm1->acks);
}

Test(order, a_piece_written_while_its_collection_waits_is_told_to_its_lm)
{
	struct mm_ack *a = collection(lm1, 7);

	ADD(a, 10, 1, 5, 100);
	ADD(a, 11, 2, 6, 300);
	cr_assert_eq(mm_order_write(mm, 200), 0);
	cr_assert_eq(count_sent((struct peer *)&peer1, WIRE_WRITTEN), 1);
	cr_assert_eq(sent[0].u0, 1, "one piece");
	cr_assert_eq(sent[0].pid, 10);
	cr_assert_eq(sent[0].end, 16, "written to its end in the chunk");
	/* Once the collection is whole, the ACK says it all. */
	cr_assert_eq(mm_order_write(mm, UINT64_MAX), 0);
	cr_assert_eq(count_sent((struct peer *)&peer1, WIRE_WRITTEN), 1);
	cr_assert_eq(count_sent((struct peer *)&peer1, WIRE_ACK), 1);
}

Test(order, what_the_writers_thread_holds_is_acknowledged_once_written)
{
	struct mm_ack *a = collection(lm1, 7), *b = collection(lm1, 8);

	held = 1;
	file_done = file_end;
	ADD(a, 10, 1, 5, 100);
	ADD(a, 11, 2, 6, 300);
	ADD(b, 10, 1, 7, 400);
	/* In the file's buffer or the thread's hands: nothing told. */
	cr_assert_eq(mm_order_write(mm, 200), 0);
	cr_assert_eq(nout, 1);
	cr_assert_eq(count_sent((struct peer *)&peer1, WIRE_WRITTEN), 0);
	/* Written: the piece is told, no more. */
	file_done = file_end;
	mm_order_acks(mm);
	cr_assert_eq(count_sent((struct peer *)&peer1, WIRE_WRITTEN), 1);
	cr_assert_eq(sent[0].pid, 10);
	cr_assert_eq(count_sent((struct peer *)&peer1, WIRE_ACK), 0);
	/* The rest given to the file, half of it written: 7 whole, 8 not. */
	cr_assert_eq(mm_order_write(mm, UINT64_MAX), 0);
	cr_assert_eq(count_sent((struct peer *)&peer1, WIRE_ACK), 0);
	file_done = file_end - 16;
	mm_order_acks(mm);
	cr_assert_eq(count_sent((struct peer *)&peer1, WIRE_ACK), 1);
	cr_assert_eq(sent[nsent - 1].u0, 7);
	cr_assert_not_null(lm1->acks);
	file_done = file_end;
	mm_order_acks(mm);
	cr_assert_eq(count_sent((struct peer *)&peer1, WIRE_ACK), 2);
	cr_assert_eq(sent[nsent - 1].u0, 8);
	cr_assert_null(lm1->acks);
	cr_assert_eq(count_sent((struct peer *)&peer1, WIRE_WRITTEN), 1);
	held = 0;
}

Test(order, a_table_piece_written_is_not_told)
{
	struct mm_ack *a = collection(lm1, 7);

	ADD(a, 10, 1, 0, 100);		/* seq 0: a statistics table */
	ADD(a, 10, 2, 1, 300);
	cr_assert_eq(mm_order_write(mm, 200), 0);
	cr_assert_eq(count_sent((struct peer *)&peer1, WIRE_WRITTEN), 0);
}

Test(order, acknowledgements_go_in_the_order_of_the_collections)
{
	struct mm_ack *a = collection(lm1, 1), *b = collection(lm1, 2);

	ADD(a, 10, 1, 1, 500);
	ADD(b, 10, 2, 1, 100);
	cr_assert_eq(mm_order_write(mm, 200), 0);
	cr_assert_eq(count_sent((struct peer *)&peer1, WIRE_ACK), 0,
	    "round 2 is written, but round 1 is not");
	cr_assert_eq(mm_order_write(mm, UINT64_MAX), 0);
	cr_assert_eq(count_sent((struct peer *)&peer1, WIRE_ACK), 2);
	cr_assert_eq(sent[nsent - 2].u0, 1);
	cr_assert_eq(sent[nsent - 1].u0, 2);
}

Test(order, a_collection_without_pieces_is_acknowledged_at_the_next_write)
{
	collection(lm1, 3);
	cr_assert_eq(mm_order_write(mm, 0), 0);
	cr_assert_eq(count_sent((struct peer *)&peer1, WIRE_ACK), 1);
	cr_assert_eq(count_sent((struct peer *)&peer2, WIRE_ACK), 0,
	    "each LM gets its own");
}

Test(order, the_pieces_of_a_connection_gone_are_written_and_told_to_nobody)
{
	struct mm_ack *a = collection(lm1, 1);

	ADD(a, 10, 1, 1, 100);
	ADD(a, 10, 2, 1, 300);
	mm_order_conn_gone(lm1);
	cr_assert_null(lm1->acks);
	cr_assert_eq(mm_order_write(mm, UINT64_MAX), 0);
	WRITTEN(100, 300);
	cr_assert_eq(nsent, 0);
	/* The acknowledgement went with its last piece (no leak). */
}

Test(order, when_the_file_cannot_be_written_nothing_is_acknowledged)
{
	struct mm_ack *a = collection(lm1, 1);

	ADD(a, 10, 1, 1, 100);
	fail_out = 1;
	cr_assert_eq(mm_order_write(mm, UINT64_MAX), -1);
	cr_assert_eq(nsent, 0);
	fail_out = 0;
	fail_piece = 1;
	ADD(collection(lm1, 2), 10, 1, 2, 200);
	cr_assert_eq(mm_order_write(mm, UINT64_MAX), -1);
	cr_assert_eq(nsent, 0);
	cr_assert_eq(mm->order.bytes, 16, "what was not written is held");
}

/* ---- the watermark, and the LMs asked for their data ---- */

Test(order, the_watermark_is_the_oldest_of_the_lms_that_know_it)
{
	struct mm_conn *ctl = new_lm(NULL);

	cr_assert_eq(mm_order_watermark(mm), 0, "LMs that said nothing yet");
	lm1->wm = 500;
	lm2->wm = 300;
	ctl->state = MM_CONN_CTL;
	ctl->wm = 0;
	cr_assert_eq(mm_order_watermark(mm), 300);
	lm2->order = MM_ORD_REPLAY;		/* replaying its spill file */
	cr_assert_eq(mm_order_watermark(mm), 500);
	lm1->order = MM_ORD_REPLAY;
	cr_assert_eq(mm_order_watermark(mm), UINT64_MAX, "nobody to wait for");
}

Test(order, what_is_scanned_is_the_oldest_scan_of_the_synced_lms)
{
	lm1->scan = 500;
	lm2->scan = 300;
	cr_assert_eq(mm_order_scanned(mm), 300);
	lm2->state = MM_CONN_SYNC;
	cr_assert_eq(mm_order_scanned(mm), 500);
	lm1->state = MM_CONN_SYNC;
	cr_assert_eq(mm_order_scanned(mm), UINT64_MAX);
}

Test(order, advancing_writes_up_to_and_including_the_watermark)
{
	struct mm_ack *a = collection(lm1, 1);

	lm1->wm = lm2->wm = 300;
	lm1->last_pull = lm2->last_pull = clk_mono_ns();	/* no pulls */
	ADD(a, 10, 1, 1, 100, 300, 301);
	cr_assert_eq(mm_order_advance(mm, 0), 0);
	WRITTEN(100, 300);
}

Test(order, without_a_file_nothing_advances)
{
	ADD(collection(lm1, 1), 10, 1, 1, 100);
	lm1->order = lm2->order = MM_ORD_REPLAY;
	mm->out = NULL;
	cr_assert_eq(mm_order_advance(mm, 0), 0);
	cr_assert_eq(nout, 0);
	mm->out = (struct tape_w *)&node1;
}

Test(order, past_its_bound_the_oldest_are_written_anyway_and_counted)
{
	struct mm_ack *a = collection(lm1, 1);

	lm1->wm = lm2->wm = 0;
	lm1->last_pull = lm2->last_pull = clk_mono_ns();
	mm->order.max_bytes = 2 * 16;
	ADD(a, 10, 1, 1, 100, 300);
	ADD(a, 10, 2, 1, 200, 400);
	cr_assert_eq(mm_order_advance(mm, 0), 0);
	/* A piece is held until written whole: down to the bound, three
	 * early writes, one record each. */
	WRITTEN(100, 200, 300);
	cr_assert_eq(mm->order.bytes, 2 * 16);
	cr_assert_eq(mm->order.forced, 3);
}

Test(order, an_lm_far_behind_the_newest_record_is_asked_for_its_data)
{
	uint64_t now = clk_mono_ns();

	lm1->wm = now - 1000000;		/* 1 ms behind: fine */
	lm2->wm = now - 1000000000;		/* 1 s behind */
	ADD(collection(lm1, 1), 10, 1, 1, now - 500000);
	cr_assert_eq(mm_order_advance(mm, 0), 0);
	cr_assert_eq(count_sent((struct peer *)&peer2, WIRE_COLLECT), 1);
	cr_assert_eq(count_sent((struct peer *)&peer1, WIRE_COLLECT), 0);
	cr_assert_eq(lm2->order, MM_ORD_PULLED);
	/* Asked once: not again while that is out. */
	cr_assert_eq(mm_order_advance(mm, 0), 0);
	cr_assert_eq(count_sent((struct peer *)&peer2, WIRE_COLLECT), 1);
}

Test(order, an_lm_not_synced_or_replaying_is_not_asked)
{
	uint64_t now = clk_mono_ns();

	lm1->wm = now;
	lm2->wm = now - 1000000000;
	lm2->state = MM_CONN_SYNC;
	ADD(collection(lm1, 1), 10, 1, 1, now - 500000);
	cr_assert_eq(mm_order_advance(mm, 0), 0);
	cr_assert_eq(nsent, 0);
	lm2->state = MM_CONN_READY;
	lm2->order = MM_ORD_REPLAY;
	cr_assert_eq(mm_order_advance(mm, 0), 0);
	cr_assert_eq(count_sent((struct peer *)&peer2, WIRE_COLLECT), 0);
}

Test(order, under_the_global_scheme_no_lm_is_asked_between_rounds)
{
	uint64_t now = clk_mono_ns();

	mm->global = 1;
	lm1->wm = now;
	lm2->wm = now - 1000000000;
	ADD(collection(lm1, 1), 10, 1, 1, now - 500000);
	cr_assert_eq(mm_order_advance(mm, 0), 0);
	cr_assert_eq(nsent, 0);
	/* Unless an LM's own collection (a flush) waits to be written. */
	ADD(collection(lm1, WIRE_ROUND_PUSH), 10, 1, 2, now - 400000);
	cr_assert_eq(mm_order_advance(mm, 0), 0);
	cr_assert_eq(count_sent((struct peer *)&peer2, WIRE_COLLECT), 1);
}

Test(order, the_summary_gives_the_counts_to_the_file)
{
	mm->order.late = 3;
	mm->causal.checked = 42;
	cr_assert_eq(mm_order_summary(mm), 0);
	cr_assert_eq(sum_late, 3);
	cr_assert_eq(sum_checked, 42);
}

Test(order, freeing_drops_every_held_piece)
{
	struct mm_ack *a = collection(lm1, 1);

	ADD(a, 10, 1, 1, 100, 200);
	ADD(a, 10, 2, 1, 150);
	ADD(collection(lm2, 1), 30, 1, 1, 120);
	/* The teardown frees them: the sanitizer build would say if not. */
	cr_assert_eq(mm->order.nheap, 3);
}

Test(order, an_lm_given_up_for_the_order_holds_nothing_back)
{
	uint64_t now = clk_mono_ns();
	static const uint64_t want[] = { 100, 200 };

	lm1->wm = 1000;
	lm2->wm = 50;		/* would hold everything back */
	ADD(collection(lm1, 1), 10, 1, 1, 100, 200);
	cr_assert_eq(mm_order_advance(mm, 0), 0);
	cr_assert_eq(nout, 0);
	lm2->order = MM_ORD_OUT;
	cr_assert_eq(mm_order_advance(mm, 0), 0);
	assert_written(want, 2);
	cr_assert_eq(mm_order_scanned(mm), lm1->scan);
	(void)now;
}
