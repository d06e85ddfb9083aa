/* SPDX-License-Identifier: MIT */
/* lm_plan.c: the Local Monitor's part of monitoring plans (doc/plans.md
 * 7): the watched types' rows mainmon sends, put into the segment for the
 * writers, and the firing slots the writers fill, sent on to mainmon. */
#include <errno.h>
#include <signal.h>
#include <string.h>

#include "lm.h"
#include "net/peer.h"
#include "net/wire.h"
#include "plan/plan.h"
#include "util/log.h"

/* Reads one comparison (or switch) of a PLAN row; 0, or -1 if the
 * message is cut short. */
static int
get_insn(struct wire_rd *msg, struct seg_plan_insn *in)
{
	wire_get_bytes(msg, &in->op, 1);
	wire_get_bytes(msg, &in->field, 1);
	wire_get_bytes(msg, &in->is_str, 1);
	wire_get_bytes(msg, &in->pad, 1);
	in->len = wire_get_u32(msg);
	in->value = (int64_t)wire_get_u64(msg);
	return wire_rd_ok(msg) ? 0 : -1;
}

/* 1 if in is a switch of a switch row (seg.h, SEG_ROW_SWITCH). */
static int
switch_ok(const struct seg_plan_insn *in)
{
	if (in->op > SEG_SW_ON || in->is_str != 0 || in->pad != 0)
		return 0;
	if (in->field == SEG_SW_TYPE)
		return in->value >= -REC_EID_BIAS &&
		    in->value < (int64_t)REC_EID_BITS - REC_EID_BIAS;
	return in->field == SEG_SW_CLASS && in->value >= 0 &&
	    in->value <= 254;
}

const char *
lm_plan_put(struct lm *lm, struct wire_rd *msg, uint32_t *nrows,
	    int *applied)
{
	static struct seg_plan_row rows[SEG_PLAN_ROWS];
	static char strs[SEG_PLAN_STRS];
	static uint32_t watch[REC_EID_BITS / 32];
	struct seg_hdr *s = lm->seg;
	struct seg_plan_insn *in;
	uint32_t seq, n, i, k, b, used = 0;
	int32_t eid;

	*applied = 0;
	*nrows = 0;
	seq = wire_get_u32(msg);
	n = wire_get_u32(msg);
	if (!wire_rd_ok(msg) || n > SEG_PLAN_ROWS)
		return "more rows than a plan has rules";
	memset(rows, 0, sizeof rows);
	memset(strs, 0, sizeof strs);
	memset(watch, 0, sizeof watch);
	for (i = 0; i < n; i++) {
		rows[i].rule = wire_get_u32(msg);
		k = wire_get_u32(msg);
		eid = (int32_t)wire_get_u32(msg);
		rows[i].ninsn = wire_get_u32(msg);
		if (!wire_rd_ok(msg))
			return "a row cut short";
		if (eid < -REC_EID_BIAS || eid >= (int32_t)REC_EID_BITS -
		    REC_EID_BIAS)
			return "an event type out of range";
		if (rows[i].ninsn > SEG_PLAN_INSNS)
			return "more comparisons than a rule has";
		if (k > SEG_ROW_SCOPE)
			return "a row of no known kind";
		if (k == SEG_ROW_SCOPE) {
			rows[i].kind = (uint16_t)k;
			if (eid != 0 || rows[i].ninsn == 0 || rows[i].ninsn >
			    4 || i == 0 || rows[i - 1].kind > SEG_ROW_SWITCH ||
			    rows[i - 1].rule != rows[i].rule)
				return "a scope row not as its kind says";
			for (k = 0; k < rows[i].ninsn; k++) {
				in = &rows[i].insn[k];
				if (get_insn(msg, in) != 0)
					return "a scope cut short";
				if (in->op != PLAN_EQ || in->field >
				    SEG_SC_NAME || in->pad != 0 ||
				    in->is_str != (in->field == SEG_SC_NAME))
					return "a scope the language has not";
				if (!in->is_str)
					continue;
				if (in->len > PLAN_STR_MAX ||
				    used + in->len > SEG_PLAN_STRS)
					return "more string bytes than the "
					    "segment holds";
				wire_get_bytes(msg, strs + used, in->len);
				in->value = used;
				used += in->len;
			}
			continue;	/* watches nothing */
		}
		if (k == SEG_ROW_SWITCH) {
			rows[i].kind = (uint16_t)k;
			if (eid != 0 || rows[i].ninsn == 0)
				return "a switch row not as its kind says";
			for (k = 0; k < rows[i].ninsn; k++) {
				in = &rows[i].insn[k];
				if (get_insn(msg, in) != 0)
					return "a switch cut short";
				if (!switch_ok(in))
					return "a switch the language has not";
			}
			continue;	/* watches nothing */
		}
		if ((k == SEG_ROW_BLOCK && (eid != REC_EID_BLOCK_END ||
		    rows[i].ninsn != 2)) || (k == SEG_ROW_RATE &&
		    rows[i].ninsn != 1))
			return "a block or rate row not as its kind says";
		rows[i].kind = (uint16_t)k;
		rows[i].eid = eid;
		for (k = 0; k < rows[i].ninsn; k++) {
			in = &rows[i].insn[k];
			if (get_insn(msg, in) != 0)
				return "a comparison cut short";
			if (in->op > PLAN_GE || in->field < 1 ||
			    in->field > PLAN_FIELDS_MAX || in->is_str > 1 ||
			    in->pad != 0)
				return "a comparison the language has not";
			if (!in->is_str)
				continue;
			if (in->len > PLAN_STR_MAX || (in->op != PLAN_EQ &&
			    in->op != PLAN_NE))
				return "a string comparison the language has "
				    "not";
			if (used + in->len > SEG_PLAN_STRS)
				return "more string bytes than the segment "
				    "holds";
			wire_get_bytes(msg, strs + used, in->len);
			in->value = used;
			used += in->len;
		}
		/* Times in the segment's clock (TSC ticks on a TSC host):
		 * a block's duration, and a rate's second, set here. */
		if (rows[i].kind == SEG_ROW_BLOCK)
			rows[i].insn[1].value = rows[i].insn[1].value <= 0 ? 0 :
			    (int64_t)lm_clock_dur(lm,
			    (uint64_t)rows[i].insn[1].value);
		if (rows[i].kind == SEG_ROW_RATE)
			rows[i].insn[1].value =
			    (int64_t)lm_clock_dur(lm, 1000000000u);
		b = REC_EID_BIT(eid);
		watch[b / 32] |= 1u << (b % 32);
		/* A block's duration: its begin is watched too. */
		if (rows[i].kind == SEG_ROW_BLOCK) {
			b = REC_EID_BIT(REC_EID_BLOCK_BEGIN);
			watch[b / 32] |= 1u << (b % 32);
		}
	}
	if (!wire_rd_end(msg))
		return "bytes after the last row";
	*nrows = n;
	/* Older than the rows in place (read on the data link after a
	 * newer one on the fire link): left. */
	if (seq < lm->plan_seq)
		return NULL;
	lm->plan_seq = seq;
	*applied = 1;
	/* Into the segment, then the generation: writers copy it out at
	 * their next event (they check every row of their copy). */
	memcpy(s->plan, rows, sizeof rows);
	memcpy(s->plan_strs, strs, sizeof strs);
	for (i = 0; i < REC_EID_BITS / 32; i++)
		atomic_store_explicit(&s->eid_watch[i], watch[i],
		    memory_order_relaxed);
	s->plan_rows = n;
	atomic_fetch_add_explicit(&s->ctl, SEG_CTL_STEP,
	    memory_order_release);
	return NULL;
}

const char *
lm_plan_apply(struct lm *lm, struct wire_rd *msg)
{
	const char *wrong;
	uint32_t n;
	int applied;

	lm_act_lock(lm);
	wrong = lm_plan_put(lm, msg, &n, &applied);
	lm_act_unlock(lm);
	if (wrong == NULL)
		log_debug("plan: %u watched row%s%s", n, n == 1 ? "" : "s",
		    applied ? "" : " (older than those in place: left)");
	return wrong;
}

void
lm_plan_forget(struct lm *lm, uint32_t pid)
{
	uint32_t i, want;

	if (lm->seg == NULL)
		return;
	for (i = 0; i < SEG_PLAN_ROWS; i++) {
		want = SEG_FIRE_CLAIMED_BY(pid);
		(void)atomic_compare_exchange_strong(&lm->seg->fire[i].state,
		    &want, SEG_FIRE_FREE);
	}
}

const char *
lm_plan_signal(struct lm *lm, struct wire_rd *msg)
{
	uint32_t rule, pid, what;

	rule = wire_get_u32(msg);
	pid = wire_get_u32(msg);
	what = wire_get_u32(msg);
	if (!wire_rd_end(msg))
		return "a field cut short";
	if (what != WIRE_SIGNAL_STOP && what != WIRE_SIGNAL_CONT)
		return "neither stop nor continue";
	/* Only a process of this LM's: never any other pid. */
	if (pid == 0 || !lm_client_attached(lm, pid)) {
		log_info("plan %u: process %u is not attached here: not %s",
		    rule, pid, what == WIRE_SIGNAL_STOP ? "stopped" :
		    "continued");
		return NULL;
	}
	if (kill((pid_t)pid, what == WIRE_SIGNAL_STOP ? SIGSTOP :
	    SIGCONT) != 0)
		log_warn("plan %u: cannot signal process %u: %s", rule, pid,
		    strerror(errno));
	else
		log_info("plan %u: process %u %s", rule, pid,
		    what == WIRE_SIGNAL_STOP ? "stopped" : "continued");
	return NULL;
}
