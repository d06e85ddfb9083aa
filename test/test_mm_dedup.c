/* SPDX-License-Identifier: MIT */
/* test_mm_dedup.c: mainmon dropping what an LM sends a second time
 * (mainmon/mm_dedup.c), fed pieces directly. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mm.h"

#define SEG	0x5e6001u	/* an LM's segment id */
#define REC	16u		/* each record here: a header alone */

static struct mm *mm;
static struct mm_node node1 = { .id = 1, .host = "host1" };
static struct mm_node node2 = { .id = 2, .host = "host2" };
static struct mm_conn lm1 = { .node = &node1 };
static struct mm_conn lm2 = { .node = &node2 };
/* Pieces made by a test, freed after it whatever happens. */
static struct mm_piece *made[64];
static int nmade;

static void
setup(void)
{
	mm = calloc(1, sizeof *mm);
	cr_assert_not_null(mm);
}

static void
teardown(void)
{
	while (nmade > 0)
		free(made[--nmade]);
	if (mm != NULL)
		mm_dedup_free(mm);
	free(mm);
	mm = NULL;
}

TestSuite(dedup, .init = setup, .fini = teardown, .timeout = 10);

/* The records of a chunk from offset off to end (multiples of REC): record
 * i (at i * REC) stamped 1000 + i, so that every piece of the same chunk
 * has the same bytes at the same offsets. */
static struct mm_piece *
piece(uint64_t seg, uint32_t pid, uint32_t tid, uint32_t session,
      uint64_t seq, uint32_t off, uint32_t end)
{
	struct mm_piece *pc;
	uint32_t o;

	cr_assert_lt(nmade, 64);
	cr_assert(off % REC == 0 && end % REC == 0 && off <= end);
	pc = calloc(1, sizeof *pc + (end - off));
	cr_assert_not_null(pc);
	made[nmade++] = pc;
	pc->pid = pid;
	pc->tid = tid;
	pc->session = session;
	pc->seq = seq;
	pc->seg_id = seg;
	pc->off = off;
	pc->len = end - off;
	pc->rec = pc->data;
	for (o = off; o < end; o += REC)
		rec_put_hdr(pc->data + (o - off), REC, REC_CLASS_USER, 0, 1,
		    1000 + o / REC);
	return pc;
}

/* The timestamp of the first record pc holds now. */
static uint64_t
first_ts(const struct mm_piece *pc)
{
	struct rec_hdr h;

	memcpy(&h, pc->data, sizeof h);
	return h.ts;
}

Test(dedup, the_first_piece_of_a_thread_is_kept)
{
	struct mm_piece *pc = piece(SEG, 10, 1, 1, 1, 0, 4 * REC);

	cr_assert_eq(mm_dedup(mm, &lm1, pc), 0);
	cr_assert_eq(pc->len, 4 * REC);
	cr_assert_eq(mm->dup_bytes, 0);
}

Test(dedup, the_next_piece_of_the_same_chunk_is_kept)
{
	cr_assert_eq(mm_dedup(mm, &lm1, piece(SEG, 10, 1, 1, 1, 0, 4 * REC)), 0);
	cr_assert_eq(mm_dedup(mm, &lm1, piece(SEG, 10, 1, 1, 1, 4 * REC,
	    6 * REC)), 0);
	cr_assert_eq(mm->dup_bytes, 0);
}

Test(dedup, a_piece_sent_again_whole_is_dropped_and_counted)
{
	cr_assert_eq(mm_dedup(mm, &lm1, piece(SEG, 10, 1, 1, 1, 0, 4 * REC)), 0);
	cr_assert_eq(mm_dedup(mm, &lm1, piece(SEG, 10, 1, 1, 1, 0, 4 * REC)), 1);
	cr_assert_eq(mm->dup_bytes, 4 * REC);
	/* A part of what was written, too. */
	cr_assert_eq(mm_dedup(mm, &lm1, piece(SEG, 10, 1, 1, 1, REC, 3 * REC)), 1);
	cr_assert_eq(mm->dup_bytes, 6 * REC);
}

Test(dedup, a_piece_sent_again_by_the_next_lm_is_dropped)
{
	/* An LM that adopted the segment: another connection, same node. */
	struct mm_conn next = { .node = &node1 };

	cr_assert_eq(mm_dedup(mm, &lm1, piece(SEG, 10, 1, 1, 1, 0, 4 * REC)), 0);
	cr_assert_eq(mm_dedup(mm, &next, piece(SEG, 10, 1, 1, 1, 0, 4 * REC)), 1);
}

Test(dedup, a_piece_overlapping_what_was_written_is_trimmed_to_what_follows)
{
	struct mm_piece *pc;

	cr_assert_eq(mm_dedup(mm, &lm1, piece(SEG, 10, 1, 1, 1, 0, 4 * REC)), 0);
	pc = piece(SEG, 10, 1, 1, 1, 2 * REC, 7 * REC);
	cr_assert_eq(mm_dedup(mm, &lm1, pc), 0);
	cr_assert_eq(pc->off, 4 * REC);
	cr_assert_eq(pc->len, 3 * REC);
	cr_assert_eq(first_ts(pc), 1004, "the piece starts at record 4");
	cr_assert_eq(mm->dup_bytes, 2 * REC);
	/* The mark moved to its end. */
	cr_assert_eq(mm_dedup(mm, &lm1, piece(SEG, 10, 1, 1, 1, 0, 7 * REC)), 1);
}

Test(dedup, a_piece_sent_again_that_does_not_match_what_was_written_is_dropped)
{
	struct mm_piece *pc;

	/* What follows the mark is not a record: not the bytes written. */
	cr_assert_eq(mm_dedup(mm, &lm1, piece(SEG, 10, 1, 1, 1, 0, 2 * REC)), 0);
	pc = piece(SEG, 10, 1, 1, 1, REC, 4 * REC);
	memset(pc->data + REC, 0xff, 2);	/* record 2's length scribbled */
	cr_assert_eq(mm_dedup(mm, &lm1, pc), 1);
	pc = piece(SEG, 10, 1, 1, 1, 0, 3 * REC);
	memset(pc->data + 2 * REC, 0, 2);	/* record 2's length 0 */
	cr_assert_eq(mm_dedup(mm, &lm1, pc), 1);
	/* Nothing of them was taken: the next record is still new. */
	cr_assert_eq(mm_dedup(mm, &lm1, piece(SEG, 10, 1, 1, 1, 2 * REC,
	    3 * REC)), 0);
	cr_assert_eq(mm->dup_bytes, 0);
}

Test(dedup, a_piece_of_an_older_chunk_or_session_is_dropped)
{
	cr_assert_eq(mm_dedup(mm, &lm1, piece(SEG, 10, 1, 2, 5, 0, 2 * REC)), 0);
	cr_assert_eq(mm_dedup(mm, &lm1, piece(SEG, 10, 1, 2, 4, 0, 8 * REC)), 1,
	    "an older chunk");
	cr_assert_eq(mm_dedup(mm, &lm1, piece(SEG, 10, 1, 1, 9, 0, 8 * REC)), 1,
	    "an older session");
}

Test(dedup, a_later_chunk_or_session_is_kept_from_its_start)
{
	cr_assert_eq(mm_dedup(mm, &lm1, piece(SEG, 10, 1, 2, 5, 0, 4 * REC)), 0);
	cr_assert_eq(mm_dedup(mm, &lm1, piece(SEG, 10, 1, 2, 6, 0, REC)), 0,
	    "the next chunk");
	cr_assert_eq(mm_dedup(mm, &lm1, piece(SEG, 10, 1, 3, 1, 0, REC)), 0,
	    "the next session (an exec)");
	cr_assert_eq(mm->dup_bytes, 0);
}

Test(dedup, tables_and_the_lm_own_records_are_never_dropped)
{
	cr_assert_eq(mm_dedup(mm, &lm1, piece(SEG, 10, 1, 1, 0, 0, 2 * REC)), 0);
	cr_assert_eq(mm_dedup(mm, &lm1, piece(SEG, 10, 1, 1, 0, 0, 2 * REC)), 0,
	    "a table (seq 0) again");
	cr_assert_eq(mm_dedup(mm, &lm1, piece(0, 0, 0, 0, 1, 0, 2 * REC)), 0);
	cr_assert_eq(mm_dedup(mm, &lm1, piece(0, 0, 0, 0, 1, 0, 2 * REC)), 0,
	    "the LM's own (segment 0) again");
	cr_assert_eq(mm->dup_bytes, 0);
}

Test(dedup, marks_are_per_segment_node_process_and_thread)
{
	cr_assert_eq(mm_dedup(mm, &lm1, piece(SEG, 10, 1, 1, 1, 0, 4 * REC)), 0);
	cr_assert_eq(mm_dedup(mm, &lm1, piece(SEG + 1, 10, 1, 1, 1, 0, 4 * REC)), 0,
	    "another segment");
	cr_assert_eq(mm_dedup(mm, &lm2, piece(SEG, 10, 1, 1, 1, 0, 4 * REC)), 0,
	    "another node");
	cr_assert_eq(mm_dedup(mm, &lm1, piece(SEG, 11, 1, 1, 1, 0, 4 * REC)), 0,
	    "another process");
	cr_assert_eq(mm_dedup(mm, &lm1, piece(SEG, 10, 2, 1, 1, 0, 4 * REC)), 0,
	    "another thread");
	cr_assert_eq(mm->dup_bytes, 0);
}

Test(dedup, forgetting_a_segment_forgets_its_marks_only)
{
	cr_assert_eq(mm_dedup(mm, &lm1, piece(SEG, 10, 1, 1, 1, 0, 4 * REC)), 0);
	cr_assert_eq(mm_dedup(mm, &lm1, piece(SEG + 1, 10, 1, 1, 1, 0, 4 * REC)), 0);
	mm_dedup_forget(mm, SEG);
	cr_assert_eq(mm_dedup(mm, &lm1, piece(SEG, 10, 1, 1, 1, 0, 4 * REC)), 0,
	    "the forgotten segment's piece is new again");
	cr_assert_eq(mm_dedup(mm, &lm1, piece(SEG + 1, 10, 1, 1, 1, 0, 4 * REC)), 1,
	    "the other segment's mark is kept");
	mm_dedup_forget(mm, 0);		/* the LM's own: nothing to forget */
	cr_assert_eq(mm_dedup(mm, &lm1, piece(SEG + 1, 10, 1, 1, 1, 0, 4 * REC)), 1);
}

/* Enough threads for the table to grow several times: each keeps its
 * mark through the growth. */
Test(dedup, the_marks_of_many_threads_survive_the_table_growing)
{
	struct mm_piece *pc;
	uint32_t t;

	for (t = 0; t < 5000; t++) {
		pc = piece(SEG, 10 + t % 7, t, 1, 1, 0, REC);
		cr_assert_eq(mm_dedup(mm, &lm1, pc), 0);
		free(made[--nmade]);
	}
	cr_assert_geq(mm->marks.map.cap, 2 * hmap_count(&mm->marks.map));
	cr_assert_eq(hmap_count(&mm->marks.map), 5000);
	for (t = 0; t < 5000; t++) {
		pc = piece(SEG, 10 + t % 7, t, 1, 1, 0, REC);
		cr_assert_eq(mm_dedup(mm, &lm1, pc), 1, "thread %u forgotten", t);
		free(made[--nmade]);
	}
	mm_dedup_forget(mm, SEG);
	cr_assert_eq(hmap_count(&mm->marks.map), 0);
}
