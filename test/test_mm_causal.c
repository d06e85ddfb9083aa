/* SPDX-License-Identifier: MIT */
/* test_mm_causal.c: mainmon's causality check (mainmon/mm_causal.c) fed
 * message records directly, as mm_out gives them in time order. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mm.h"

static struct mm *mm;

static void
setup(void)
{
	mm = calloc(1, sizeof *mm);
	cr_assert_not_null(mm);
}

static void
teardown(void)
{
	if (mm != NULL)
		mm_causal_free(mm);
	free(mm);
	mm = NULL;
}

TestSuite(causal, .init = setup, .fini = teardown, .timeout = 10);

#define NODE	1

/* Process pid of NODE names itself rank (GMI_SetName). */
static void
rank_at(uint32_t node, uint32_t pid, int64_t rank)
{
	struct rec_field f[2] = {
		{ .kind = REC_K_INT, .v.i = rank },
		{ .kind = REC_K_STR, .v.s = { "p", 1 } },
	};

	mm_causal_record(mm, node, pid, 0, REC_EID_PROC_NAME, f, 2);
}

static void
msg_at(uint32_t node, uint32_t pid, int32_t eid, int64_t peer, int64_t tag,
       uint64_t ts)
{
	struct rec_field f[3] = {
		{ .kind = REC_K_INT, .v.i = peer },
		{ .kind = REC_K_INT, .v.i = tag },
		{ .kind = REC_K_INT, .v.i = 8 },
	};

	mm_causal_record(mm, node, pid, ts, eid, f, 3);
}

static void
rank(uint32_t pid, int64_t r)
{
	rank_at(NODE, pid, r);
}

static void
send_at(uint32_t pid, int64_t to, int64_t tag, uint64_t ts)
{
	msg_at(NODE, pid, REC_EID_MSG_SEND, to, tag, ts);
}

static void
recv_at(uint32_t pid, int64_t from, int64_t tag, uint64_t ts)
{
	msg_at(NODE, pid, REC_EID_MSG_RECV, from, tag, ts);
}

Test(causal, a_message_received_after_it_was_sent_is_no_violation)
{
	rank(100, 0);
	rank(200, 1);
	send_at(100, 1, 7, 1000);
	recv_at(200, 0, 7, 1500);
	cr_assert_eq(mm->causal.checked, 1);
	cr_assert_eq(mm->causal.violations, 0);
	cr_assert_eq(mm->causal.worst, 0);
	cr_assert_eq(mm->causal.waiting, 0);
}

Test(causal, a_receive_stamped_before_its_send_is_a_violation_by_the_difference)
{
	rank(100, 0);
	rank(200, 1);
	recv_at(200, 0, 7, 1000);
	cr_assert_eq(mm->causal.waiting, 1, "the receive waits for its send");
	send_at(100, 1, 7, 1300);
	cr_assert_eq(mm->causal.checked, 1);
	cr_assert_eq(mm->causal.violations, 1);
	cr_assert_eq(mm->causal.worst, 300);
	cr_assert_eq(mm->causal.waiting, 0);
}

Test(causal, a_receive_at_the_time_of_its_send_is_no_violation)
{
	rank(100, 0);
	rank(200, 1);
	send_at(100, 1, 7, 1000);
	recv_at(200, 0, 7, 1000);
	cr_assert_eq(mm->causal.checked, 1);
	cr_assert_eq(mm->causal.violations, 0);
}

Test(causal, the_worst_violation_is_the_largest)
{
	rank(100, 0);
	rank(200, 1);
	recv_at(200, 0, 7, 1000);
	send_at(100, 1, 7, 1100);	/* 100 early */
	recv_at(200, 0, 7, 2000);
	send_at(100, 1, 7, 2900);	/* 900 early */
	recv_at(200, 0, 7, 3000);
	send_at(100, 1, 7, 3200);	/* 200 early */
	cr_assert_eq(mm->causal.violations, 3);
	cr_assert_eq(mm->causal.worst, 900);
}

/* Send k at S(k), irregularly spaced; its receive stamped 1000 before
 * (a clock 1000 off), fed in time order: about 10 receives wait at a time,
 * so the queue grows and wraps around.  Matched k-th to k-th, every pair
 * is a violation by exactly 1000; matched to any other send, some pair
 * would be one by more. */
static uint64_t
send_ts(int k)
{
	return 10000 + (uint64_t)k * 100 + (uint64_t)(k % 7) * 13;
}

Test(causal, the_kth_send_matches_the_kth_receive_of_its_sender_receiver_and_tag)
{
	int s = 0, r = 0;

	rank(100, 0);
	rank(200, 1);
	while (s < 100) {
		if (r < 100 && send_ts(r) - 1000 <= send_ts(s)) {
			recv_at(200, 0, 7, send_ts(r) - 1000);
			r++;
		} else {
			send_at(100, 1, 7, send_ts(s));
			s++;
		}
	}
	cr_assert_eq(mm->causal.checked, 100);
	cr_assert_eq(mm->causal.violations, 100);
	cr_assert_eq(mm->causal.worst, 1000, "matched out of order: worst %llu",
	    (unsigned long long)mm->causal.worst);
	cr_assert_eq(mm->causal.waiting, 0);
}

Test(causal, receives_waiting_for_their_sends_match_them_in_order)
{
	int k;

	rank(100, 0);
	rank(200, 1);
	/* 20 receives stamped 1000 early, then their 20 sends. */
	for (k = 0; k < 20; k++)
		recv_at(200, 0, 7, 10000 + (uint64_t)k * 10);
	cr_assert_eq(mm->causal.waiting, 20);
	for (k = 0; k < 20; k++)
		send_at(100, 1, 7, 11000 + (uint64_t)k * 10);
	cr_assert_eq(mm->causal.checked, 20);
	cr_assert_eq(mm->causal.violations, 20);
	cr_assert_eq(mm->causal.worst, 1000, "matched out of order: worst %llu",
	    (unsigned long long)mm->causal.worst);
}

Test(causal, messages_of_another_tag_or_pair_of_ranks_do_not_match)
{
	rank(100, 0);
	rank(200, 1);
	rank(300, 2);
	send_at(100, 1, 7, 1000);
	recv_at(200, 0, 8, 900);	/* another tag */
	recv_at(300, 0, 7, 900);	/* another receiver */
	recv_at(200, 2, 7, 900);	/* another sender */
	cr_assert_eq(mm->causal.checked, 0);
	cr_assert_eq(mm->causal.waiting, 4);
	recv_at(200, 0, 7, 1100);
	cr_assert_eq(mm->causal.checked, 1);
	cr_assert_eq(mm->causal.violations, 0);
	cr_assert_eq(mm->causal.waiting, 3);
}

Test(causal, a_message_of_a_process_without_a_rank_is_unchecked)
{
	send_at(100, 1, 7, 1000);
	cr_assert_eq(mm->causal.unchecked, 1);
	rank(200, 1);
	recv_at(200, 0, 7, 900);
	send_at(100, 1, 7, 1000);
	cr_assert_eq(mm->causal.unchecked, 2);
	cr_assert_eq(mm->causal.checked, 0);
	cr_assert_eq(mm->causal.waiting, 1);
}

Test(causal, a_rank_belongs_to_one_process_of_one_node)
{
	rank_at(1, 100, 0);
	msg_at(2, 100, REC_EID_MSG_SEND, 1, 7, 1000);	/* same pid, node 2 */
	cr_assert_eq(mm->causal.unchecked, 1);
	rank_at(2, 100, 5);
	rank_at(1, 200, 1);
	msg_at(2, 100, REC_EID_MSG_SEND, 1, 7, 1000);	/* from rank 5 */
	msg_at(1, 200, REC_EID_MSG_RECV, 0, 7, 900);	/* from rank 0 */
	cr_assert_eq(mm->causal.checked, 0);
	msg_at(1, 200, REC_EID_MSG_RECV, 5, 7, 1100);
	cr_assert_eq(mm->causal.checked, 1);
	cr_assert_eq(mm->causal.violations, 0);
}

Test(causal, a_process_named_again_takes_its_new_rank)
{
	rank(100, 0);
	rank(200, 1);
	rank(100, 4);
	send_at(100, 1, 7, 1000);
	recv_at(200, 0, 7, 900);
	cr_assert_eq(mm->causal.checked, 0);
	recv_at(200, 4, 7, 900);
	cr_assert_eq(mm->causal.checked, 1);
	cr_assert_eq(mm->causal.violations, 1);
}

Test(causal, other_records_and_malformed_fields_are_ignored)
{
	struct rec_field f[3] = {
		{ .kind = REC_K_INT, .v.i = 1 },
		{ .kind = REC_K_STR, .v.s = { "x", 1 } },
		{ .kind = REC_K_INT, .v.i = 8 },
	};

	rank(100, 0);
	mm_causal_record(mm, NODE, 100, 10, 5, f, 3);	/* a user event */
	mm_causal_record(mm, NODE, 100, 10, REC_EID_MSG_SEND, f, 3);
	mm_causal_record(mm, NODE, 100, 10, REC_EID_MSG_SEND, f, 1);
	f[0].kind = REC_K_STR;
	mm_causal_record(mm, NODE, 100, 10, REC_EID_MSG_SEND, f, 3);
	mm_causal_record(mm, NODE, 300, 10, REC_EID_PROC_NAME, f, 2);
	cr_assert_eq(mm->causal.checked, 0);
	cr_assert_eq(mm->causal.waiting, 0);
	cr_assert_eq(mm->causal.unchecked, 0);
}

Test(causal, beyond_the_bound_of_messages_held_a_message_is_unchecked)
{
	rank(100, 0);
	rank(200, 1);
	mm->causal.waiting = MM_CAUSAL_MAX;	/* as if that many waited */
	send_at(100, 1, 7, 1000);
	cr_assert_eq(mm->causal.unchecked, 1);
	cr_assert_eq(mm->causal.waiting, MM_CAUSAL_MAX);
	mm->causal.waiting = 0;
	send_at(100, 1, 7, 1000);
	recv_at(200, 0, 7, 1200);
	cr_assert_eq(mm->causal.checked, 1, "a match needs no room");
}

Test(causal, many_pairs_of_ranks_are_each_matched)
{
	int r;

	for (r = 0; r < 2000; r++)
		rank(1000 + (uint32_t)r, r);
	/* Rank r sends to rank r + 1, each with its own tag. */
	for (r = 0; r + 1 < 2000; r++)
		send_at(1000 + (uint32_t)r, r + 1, r % 5, 100);
	cr_assert_eq(mm->causal.waiting, 1999);
	for (r = 1; r < 2000; r++)
		recv_at(1000 + (uint32_t)r, r - 1, (r - 1) % 5, 200);
	cr_assert_eq(mm->causal.checked, 1999);
	cr_assert_eq(mm->causal.violations, 0);
	cr_assert_eq(mm->causal.waiting, 0);
	cr_assert_eq(mm->causal.unchecked, 0);
}

Test(causal, freed_it_starts_again_empty)
{
	rank(100, 0);
	rank(200, 1);
	recv_at(200, 0, 7, 100);
	mm_causal_free(mm);
	cr_assert_eq(mm->causal.waiting, 0);
	send_at(100, 1, 7, 1000);
	cr_assert_eq(mm->causal.unchecked, 1, "ranks are forgotten too");
}

/* Node publishes a model of error err (ns, growing by allow_ppb outside
 * [lo, hi]) converting its records from `from` on. */
static void
model_at(uint32_t node, uint64_t from, uint64_t err, uint64_t allow_ppb,
	 uint64_t lo, uint64_t hi)
{
	struct mm_sync_used u = { .from = from, .num = 1 };

	u.md.err = err;
	u.md.allow_ppb = allow_ppb;
	u.md.lo = lo;
	u.md.hi = hi;
	cr_assert_eq(mm_causal_model(mm, node, &u), 0);
}

/* Rank 0 is pid 100 of node 1, rank 1 pid 200 of node 2. */
static void
two_hosts(void)
{
	rank_at(1, 100, 0);
	rank_at(2, 200, 1);
}

Test(causal, a_violation_within_the_two_bounds_is_not_beyond_them)
{
	two_hosts();
	model_at(1, 0, 100, 0, 0, 100000);
	model_at(2, 0, 200, 0, 0, 100000);
	msg_at(2, 200, REC_EID_MSG_RECV, 0, 7, 700);
	msg_at(1, 100, REC_EID_MSG_SEND, 1, 7, 1000);	/* 300 early */
	cr_assert_eq(mm->causal.violations, 1);
	cr_assert_eq(mm->causal.beyond, 0);
	msg_at(1, 100, REC_EID_MSG_SEND, 1, 7, 2000);
	msg_at(2, 200, REC_EID_MSG_RECV, 0, 7, 1700);	/* 300 early */
	cr_assert_eq(mm->causal.violations, 2);
	cr_assert_eq(mm->causal.beyond, 0);
}

Test(causal, a_violation_beyond_the_two_bounds_is_counted)
{
	two_hosts();
	model_at(1, 0, 100, 0, 0, 100000);
	model_at(2, 0, 200, 0, 0, 100000);
	msg_at(2, 200, REC_EID_MSG_RECV, 0, 7, 699);
	msg_at(1, 100, REC_EID_MSG_SEND, 1, 7, 1000);	/* 301 early */
	msg_at(1, 100, REC_EID_MSG_SEND, 1, 7, 2000);
	msg_at(2, 200, REC_EID_MSG_RECV, 0, 7, 2100);	/* in order */
	msg_at(2, 200, REC_EID_MSG_RECV, 0, 7, 2500);
	msg_at(1, 100, REC_EID_MSG_SEND, 1, 7, 3000);	/* 500 early */
	msg_at(2, 200, REC_EID_MSG_RECV, 0, 7, 3800);
	msg_at(1, 100, REC_EID_MSG_SEND, 1, 7, 3900);	/* 100 early */
	cr_assert_eq(mm->causal.checked, 4);
	cr_assert_eq(mm->causal.violations, 3);
	cr_assert_eq(mm->causal.beyond, 2);
	cr_assert_eq(mm->causal.worst, 500);
}

Test(causal, each_record_takes_the_bound_of_the_model_that_converted_it)
{
	two_hosts();
	/* Node 1: error 100 up to 5000, 1000 from then on. */
	model_at(1, 0, 100, 0, 0, 100000);
	model_at(1, 5000, 1000, 0, 0, 100000);
	model_at(2, 0, 0, 0, 0, 100000);
	msg_at(2, 200, REC_EID_MSG_RECV, 0, 7, 4000);
	msg_at(1, 100, REC_EID_MSG_SEND, 1, 7, 4500);	/* 500 > 100 */
	cr_assert_eq(mm->causal.beyond, 1);
	msg_at(2, 200, REC_EID_MSG_RECV, 0, 7, 5000);
	msg_at(1, 100, REC_EID_MSG_SEND, 1, 7, 5500);	/* 500 <= 1000 */
	cr_assert_eq(mm->causal.violations, 2);
	cr_assert_eq(mm->causal.beyond, 1);
}

Test(causal, an_extrapolated_model_has_a_wider_bound)
{
	two_hosts();
	/* 10 ns within [0, 1000], and 1000 ppm of the distance beyond. */
	model_at(1, 0, 10, 1000000, 0, 1000);
	model_at(2, 0, 10, 1000000, 0, 1000);
	msg_at(2, 200, REC_EID_MSG_RECV, 0, 7, 100);
	msg_at(1, 100, REC_EID_MSG_SEND, 1, 7, 150);	/* 50 > 20 */
	cr_assert_eq(mm->causal.beyond, 1);
	/* At 1001000: 10 + 1000 each. */
	msg_at(2, 200, REC_EID_MSG_RECV, 0, 7, 1000000);
	msg_at(1, 100, REC_EID_MSG_SEND, 1, 7, 1001000);	/* 1000 */
	cr_assert_eq(mm->causal.violations, 2);
	cr_assert_eq(mm->causal.beyond, 1);
}

Test(causal, without_a_model_a_violation_is_not_said_beyond_the_bounds)
{
	two_hosts();
	model_at(1, 0, 0, 0, 0, 100000);
	msg_at(2, 200, REC_EID_MSG_RECV, 0, 7, 100);
	msg_at(1, 100, REC_EID_MSG_SEND, 1, 7, 90000);
	cr_assert_eq(mm->causal.violations, 1);
	cr_assert_eq(mm->causal.beyond, 0);
}

Test(causal, models_no_record_to_come_needs_are_dropped)
{
	two_hosts();
	model_at(1, 0, 1000, 0, 0, 100000);
	model_at(1, 1000, 100, 0, 0, 100000);
	model_at(2, 0, 0, 0, 0, 100000);
	mm->order.out_ts = 5000;	/* written up to there */
	model_at(1, 6000, 100000, 0, 0, 100000);
	/* Before every model kept: the oldest kept (from 1000). */
	msg_at(2, 200, REC_EID_MSG_RECV, 0, 7, 400);
	msg_at(1, 100, REC_EID_MSG_SEND, 1, 7, 600);	/* 200 > 100 */
	cr_assert_eq(mm->causal.beyond, 1);
	msg_at(2, 200, REC_EID_MSG_RECV, 0, 7, 6000);
	msg_at(1, 100, REC_EID_MSG_SEND, 1, 7, 8000);
	cr_assert_eq(mm->causal.violations, 2);
	cr_assert_eq(mm->causal.beyond, 1);
}

/* The lines of the log (stderr) that fn writes saying str. */
static int
logged(void (*fn)(void), const char *str)
{
	char line[1024];
	FILE *f = tmpfile();
	int save, n = 0;

	cr_assert_not_null(f);
	fflush(stderr);
	cr_assert_geq(save = dup(2), 0);
	cr_assert_eq(dup2(fileno(f), 2), 2);
	fn();
	fflush(stderr);
	cr_assert_eq(dup2(save, 2), 2);
	close(save);
	rewind(f);
	while (fgets(line, sizeof line, f) != NULL)
		n += strstr(line, str) != NULL;
	fclose(f);
	return n;
}

/* Three beyond the bounds from host 1 to host 2, one from 2 to 1. */
static void
three_and_one(void)
{
	int k;

	two_hosts();
	model_at(1, 0, 100, 0, 0, 100000);
	model_at(2, 0, 100, 0, 0, 100000);
	for (k = 0; k < 3; k++) {
		msg_at(2, 200, REC_EID_MSG_RECV, 0, 7, 1000 + (uint64_t)k * 10);
		msg_at(1, 100, REC_EID_MSG_SEND, 1, 7, 2000 + (uint64_t)k * 10);
	}
	msg_at(1, 100, REC_EID_MSG_RECV, 1, 8, 3000);
	msg_at(2, 200, REC_EID_MSG_SEND, 0, 8, 4000);
}

Test(causal, a_pair_of_hosts_is_warned_of_once_in_a_while)
{
	cr_assert_eq(logged(three_and_one, "beyond the clock bounds"), 2);
	cr_assert_eq(mm->causal.violations, 4);
	cr_assert_eq(mm->causal.beyond, 4);
}
