/* SPDX-License-Identifier: MIT */
/* mm_plan.c: the job's monitoring plan (doc/plans.md): rules loaded from
 * mainmon -P, added and removed by grmctl plan, shown by status and
 * written to the trace as #PLAN lines; the rules this version fires are
 * armed: their watched rows go to the Local Monitors, whose FIREs count,
 * write #PLAN fire lines and run the actions. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include "mm.h"
#include "net/loop.h"
#include "net/peer.h"
#include "net/wire.h"
#include "plan/plan.h"
#include "shm/seg.h"
#include "util/clock.h"
#include "util/log.h"

static void act_signal(struct mm *mm, const struct mm_plan *p,
		       struct mm_node *node, uint32_t pid, uint32_t what);
static uint64_t until_at(uint32_t at);

/*
 * Why this version does not fire r, or NULL if it does.  Every rule the
 * language has is armed in this version; the "(not armed: WHY)" wherever
 * a rule is shown stays for a version that fires less.
 */
static const char *
unarmed(const struct plan_rule *r)
{
	(void)r;
	return NULL;
}

/*
 * The row of a rule's `until` trigger (event, block, rate) goes to the
 * writers under the rule's number with this bit set (protocol.md, PLAN),
 * while a switch it ends is in force.
 */
#define UNTIL_ROW	0x80000000u

/* 1 if p fired as many times as it may. */
static int
exhausted(const struct mm_plan *p)
{
	return p->rule->times != 0 && p->fired >= p->rule->times;
}

static void
plan_free1(struct mm_plan *p)
{
	unsigned i;

	for (i = 0; i < PLAN_ACTS_MAX; i++)
		loop_ev_free(p->undo[i].ev);
	loop_ev_free(p->snap_ev);
	loop_ev_free(p->time_ev);
	if (p->exec_pid > 0)
		(void)waitpid(p->exec_pid, NULL, WNOHANG);
	free(p->rule);
	free(p->text);
	free(p);
}

/* ---- the watched rows (PLAN) ---- */

/* 1 if trigger t is checked by the writers (a row). */
static int
trig_watched(const struct plan_trig *t)
{
	return t->kind == PLAN_W_EVENT || t->kind == PLAN_W_BLOCK ||
	    t->kind == PLAN_W_RATE;
}

/* 1 if p's trigger is checked by the writers. */
static int
watched(const struct mm_plan *p)
{
	return trig_watched(&p->rule->when);
}

/* 1 if p's until trigger is checked by the writers now: a record, and a
 * switch it ends in force. */
static int
until_watched(const struct mm_plan *p)
{
	unsigned i;

	if (!p->rule->has_until || !trig_watched(&p->rule->until))
		return 0;
	for (i = 0; i < p->rule->nact; i++)
		if (p->undo[i].on && p->rule->act[i].until)
			return 1;
	return 0;
}

/* A row's head in PLAN (protocol.md 1.4). */
static void
put_row_head(struct wire_wr *w, uint32_t rule, uint32_t kind, int32_t eid,
	     uint32_t ninsn)
{
	wire_put_u32(w, rule);
	wire_put_u32(w, kind);
	wire_put_u32(w, (uint32_t)eid);
	wire_put_u32(w, ninsn);
}

/* One comparison of a row, and its string's bytes (str, len) if any. */
static void
put_insn(struct wire_wr *w, uint8_t op, uint8_t field, uint8_t is_str,
	 uint32_t len, int64_t value, const char *str)
{
	uint8_t b[4] = { op, field, is_str, 0 };

	wire_put_bytes(w, b, 4);
	wire_put_u32(w, len);
	wire_put_u64(w, (uint64_t)value);
	if (is_str)
		wire_put_bytes(w, str, len);
}

/* Appends the row of p's trigger t (its when or its until: rule is p's
 * number, or it with UNTIL_ROW) to w; -1 if its strings do not fit in
 * what is left of the segment's string area (*strs bytes used). */
static int
put_row(struct wire_wr *w, const struct mm_plan *p,
	const struct plan_trig *t, uint32_t rule, uint32_t *strs)
{
	const struct plan_pred *pr;
	uint32_t need = 0;
	unsigned i;

	if (t->kind == PLAN_W_BLOCK) {
		/* The name, then the duration: two comparisons. */
		if (*strs + t->name.len > SEG_PLAN_STRS)
			return -1;
		*strs += t->name.len;
		put_row_head(w, rule, SEG_ROW_BLOCK, REC_EID_BLOCK_END, 2);
		put_insn(w, PLAN_EQ, 1, 1, t->name.len, 0,
		    p->rule->pool + t->name.off);
		put_insn(w, PLAN_GT, 1, 0, 0, (int64_t)t->ns, NULL);
		return 0;
	}
	if (t->kind == PLAN_W_RATE) {
		put_row_head(w, rule, SEG_ROW_RATE, t->eid, 1);
		put_insn(w, PLAN_GT, 1, 0, 0, (int64_t)t->rate, NULL);
		return 0;
	}
	for (i = 0; i < t->npred; i++)
		if (t->pred[i].is_str)
			need += t->pred[i].str.len;
	if (*strs + need > SEG_PLAN_STRS)
		return -1;
	*strs += need;
	put_row_head(w, rule, SEG_ROW_EVENT, t->eid, t->npred);
	for (i = 0; i < t->npred; i++) {
		pr = &t->pred[i];
		put_insn(w, pr->op, pr->field, pr->is_str, pr->is_str ?
		    pr->str.len : 0, pr->is_str ? 0 : pr->num, pr->is_str ?
		    p->rule->pool + pr->str.off : NULL);
	}
	return 0;
}

/* The items of p's scope a writer can decide for itself (SEG_ROW_SCOPE):
 * pid, thread, rank, process name; 0 if it has none. */
static unsigned
scope_items(const struct mm_plan *p)
{
	uint8_t has = p->rule->scope.has;

	return !!(has & PLAN_S_PID) + !!(has & PLAN_S_THREAD) +
	    !!(has & PLAN_S_RANK) + !!(has & PLAN_S_PROCESS);
}

/* Appends the scope row of p (rule: its row's number) to w. */
static void
put_scope(struct wire_wr *w, const struct mm_plan *p, uint32_t rule)
{
	const struct plan_scope *s = &p->rule->scope;

	put_row_head(w, rule, SEG_ROW_SCOPE, 0, scope_items(p));
	if (s->has & PLAN_S_PID)
		put_insn(w, PLAN_EQ, SEG_SC_PID, 0, 0, s->pid, NULL);
	if (s->has & PLAN_S_THREAD)
		put_insn(w, PLAN_EQ, SEG_SC_THREAD, 0, 0, s->thread, NULL);
	if (s->has & PLAN_S_RANK)
		put_insn(w, PLAN_EQ, SEG_SC_RANK, 0, 0, s->rank, NULL);
	if (s->has & PLAN_S_PROCESS)
		put_insn(w, PLAN_EQ, SEG_SC_NAME, 1, s->process.len, 0,
		    p->rule->pool + s->process.off);
}

/* 1 if node's host is in p's scope (no host named: every host). */
static int
host_in_scope(const struct mm_plan *p, const struct mm_node *node)
{
	const struct plan_scope *s = &p->rule->scope;

	return !(s->has & PLAN_S_HOST) || (strlen(node->host) ==
	    s->host.len && memcmp(node->host, p->rule->pool + s->host.off,
	    s->host.len) == 0);
}

/*
 * Appends one row (put_row) for node's LM if there is room for it,
 * counting it in *n; with the rule's scope row after it (SEG_ROW_SCOPE),
 * so that a writer outside the scope does not take its firing slot.  A
 * host out of the scope gets no row.  -1 (logged) if there is no room.
 */
static int
put_one(struct wire_wr *w, const struct mm_plan *p,
	const struct plan_trig *t, uint32_t rule, const struct mm_node *node,
	uint32_t *strs, uint32_t *n)
{
	const char *what = rule & UNTIL_ROW ? "its until" : "its trigger";
	unsigned sc = scope_items(p) > 0;
	uint32_t used = *strs;
	size_t at = w->len;

	if (!host_in_scope(p, node))
		return 0;
	if (*n + 1 + sc > SEG_PLAN_ROWS) {
		log_warn("plan %u: %s not watched on %s: the segment holds %d "
		    "rows", p->n, what, node->host, SEG_PLAN_ROWS);
		return -1;
	}
	if ((p->rule->scope.has & PLAN_S_PROCESS))
		used += p->rule->scope.process.len;
	if (used > SEG_PLAN_STRS || put_row(w, p, t, rule, &used) != 0) {
		w->len = at;
		log_warn("plan %u: %s not watched: its strings do not fit in "
		    "the segment's %d bytes with the other rules'", p->n, what,
		    SEG_PLAN_STRS);
		return -1;
	}
	if (sc)
		put_scope(w, p, rule);
	*strs = used;
	*n += 1 + sc;
	return 0;
}

/* Appends one switch row of action a's targets from *t (at most 8 of
 * them, moving *t on), for process pid (0: every process of the scope). */
static void
put_switch_row(struct wire_wr *w, const struct mm_plan *p,
	       const struct plan_act *a, unsigned *t, uint32_t pid)
{
	unsigned m = a->ntgt - *t < SEG_PLAN_INSNS ? a->ntgt - *t :
	    SEG_PLAN_INSNS;

	put_row_head(w, p->n, SEG_ROW_SWITCH, 0, m);
	for (; m > 0; m--, (*t)++)
		put_insn(w, a->kind == PLAN_D_ENABLE ? SEG_SW_ON : SEG_SW_OFF,
		    a->tgt[*t].is_class ? SEG_SW_CLASS : SEG_SW_TYPE, 0, pid,
		    a->tgt[*t].value, NULL);
}

/*
 * Appends to w the switch rows of p's scoped switches in force for
 * node's LM (SEG_ROW_SWITCH, 8 targets a row), counting them in *n:
 * under a `thread` scope, a row per process switched (the triggering
 * ones: a switch is per process); otherwise, on a host of the scope,
 * rows for every process (pid 0), each with the rule's scope row after
 * it, so that each writer decides for itself whether it is in the scope
 * (its pid, name and rank): every process of the scope, however many,
 * those that start or name their rank later too.  -1 (logged) when the
 * segment's rows or strings are all taken.
 */
static int
put_switches(struct wire_wr *w, const struct mm_plan *p,
	     const struct mm_node *node, uint32_t *strs, uint32_t *n)
{
	const struct plan_scope *s = &p->rule->scope;
	const struct mm_plan_undo *u;
	const struct plan_act *a;
	unsigned i, k, t, sc = scope_items(p) > 0;
	uint32_t need;

	for (i = 0; i < p->rule->nact; i++) {
		u = &p->undo[i];
		a = &p->rule->act[i];
		if (!u->on || !u->scoped)
			continue;
		if (s->has & PLAN_S_THREAD) {
			for (k = 0; k < u->nsw; k++) {
				if (u->sw[k].node != node)
					continue;
				for (t = 0; t < a->ntgt; ) {
					if (*n == SEG_PLAN_ROWS)
						goto full;
					put_switch_row(w, p, a, &t,
					    u->sw[k].pid);
					(*n)++;
				}
			}
			continue;
		}
		if (!host_in_scope(p, node))
			continue;
		for (t = 0; t < a->ntgt; ) {
			need = (s->has & PLAN_S_PROCESS) ? s->process.len : 0;
			if (*n + 1 + sc > SEG_PLAN_ROWS ||
			    *strs + need > SEG_PLAN_STRS)
				goto full;
			put_switch_row(w, p, a, &t, 0);
			if (sc)
				put_scope(w, p, p->n);
			*strs += need;
			*n += 1 + sc;
		}
	}
	return 0;
full:
	log_warn("plan %u: a switch not sent to %s: the segment holds %d rows "
	    "and %d bytes of strings", p->n, node->host, SEG_PLAN_ROWS,
	    SEG_PLAN_STRS);
	return -1;
}

void
mm_plan_send(struct mm *mm, struct mm_conn *c)
{
	/* 64 rows of 8 comparisons and their strings, at most. */
	static unsigned char buf[WIRE_HDR + 8 + SEG_PLAN_ROWS *
	    (16 + SEG_PLAN_INSNS * 16) + SEG_PLAN_STRS];
	const struct mm_plan *p;
	struct mm_conn *k;
	struct wire_wr w;
	uint32_t n, strs;

	/* One number for this plan, whichever link it takes: an LM applies
	 * a PLAN only if it is newer than the one in place (one on its data
	 * link may be read after a newer one on its fire link). */
	mm->plan_seq++;
	for (k = mm->conns; k != NULL; k = k->next) {
		if ((c != NULL && k != c) || k->state != MM_CONN_READY)
			continue;
		/* Each LM its own rows: those of its host's scope, each
		 * with its scope row; then its processes' switches. */
		n = strs = 0;
		wire_wr_init(&w, buf, sizeof buf);
		wire_put_u32(&w, mm->plan_seq);
		wire_put_u32(&w, 0);
		for (p = mm->plans; p != NULL; p = p->next) {
			if (p->unarmed != NULL || exhausted(p) || !watched(p))
				continue;
			(void)put_one(&w, p, &p->rule->when, p->n, k->node,
			    &strs, &n);
		}
		/* The untils in force, after every rule's own row. */
		for (p = mm->plans; p != NULL; p = p->next)
			if (p->unarmed == NULL && until_watched(p))
				(void)put_one(&w, p, &p->rule->until, p->n |
				    UNTIL_ROW, k->node, &strs, &n);
		for (p = mm->plans; p != NULL; p = p->next)
			if (put_switches(&w, p, k->node, &strs, &n) != 0)
				break;
		buf[4] = (unsigned char)n;	/* the u32 n (at most 64), LE */
		peer_send(mm_fire_of(mm, k), WIRE_PLAN, buf, w.len, NULL, 0);
	}
}

/* ---- actions ---- */

static int
bit(const uint32_t *w, uint32_t b)
{
	return (w[b / 32] >> (b % 32)) & 1;
}

/* The "off" bit of target t in the control state. */
static uint32_t *
target_word(struct mm *mm, const struct plan_target *t, uint32_t *b)
{
	if (t->is_class) {
		*b = (uint32_t)t->value;
		return mm->ctl.cls_off;
	}
	*b = REC_EID_BIT(t->value);
	return mm->ctl.eid_off;
}

/* "enable 13 class:8": action a's targets, for #CONTROL lines. */
static void
targets_text(const struct plan_act *a, char *buf, size_t cap)
{
	size_t n;
	unsigned i;

	n = (size_t)snprintf(buf, cap, "%s", a->kind == PLAN_D_ENABLE ?
	    "enable" : "disable");
	for (i = 0; i < a->ntgt && n < cap; i++)
		n += (size_t)snprintf(buf + n, cap - n, a->tgt[i].is_class ?
		    " class:%d" : " %d", (int)a->tgt[i].value);
}

/* The end of an enable/disable "for D": its targets' bits as they were
 * before its first firing in force. */
static void
undo_apply(struct mm *mm, struct mm_plan_undo *u)
{
	const struct plan_act *a = &u->p->rule->act[u->act];
	uint32_t *w, b;
	unsigned i;

	if (u->scoped) {
		/* Its switch rows go (mm_plan_send, by the caller). */
		u->nsw = 0;
		u->on = 0;
		return;
	}
	for (i = 0; i < a->ntgt; i++) {
		w = target_word(mm, &a->tgt[i], &b);
		mm_set_bit(w, b, a->tgt[i].is_class ? bit(u->cls_was, b) :
		    u->eid_was[i]);
	}
	u->on = 0;
}

static void
undo_cb(void *arg)
{
	struct mm_plan_undo *u = arg;
	char cmd[200], t[160];

	int scoped = u->scoped;

	if (!u->on)
		return;
	undo_apply(u->mm, u);
	targets_text(&u->p->rule->act[u->act], t, sizeof t);
	snprintf(cmd, sizeof cmd, "plan %u: end of %s%s", u->p->n, t,
	    scoped ? " in its scope" : "");
	log_info("%s", cmd);
	if (scoped)
		mm_plan_send(u->mm, NULL);
	else
		mm_round(u->mm, NULL, MM_CONTROL, cmd);
}

/* Rule p is deleted: what it switched for a duration goes back now. */
static void
plan_undo_all(struct mm *mm, struct mm_plan *p)
{
	char cmd[64];
	unsigned i;
	int any = 0, scoped = 0;

	for (i = 0; i < PLAN_ACTS_MAX; i++)
		if (p->undo[i].on) {
			loop_disarm(p->undo[i].ev);
			if (p->undo[i].scoped)
				scoped = 1;
			else
				any = 1;
			undo_apply(mm, &p->undo[i]);
		}
	if (scoped)
		mm_plan_send(mm, NULL);
	if (any) {
		snprintf(cmd, sizeof cmd, "plan %u deleted: its switches "
		    "undone", p->n);
		mm_round(mm, NULL, MM_CONTROL, cmd);
	}
}

/* Runs enable/disable action i of p; 1 if the control state changed. */
/* The end of a switch in force, timed: `for D` from this firing, or an
 * until's next `every` or `at` (an until's other kinds come when they
 * come: a process's end or a loss, queue_cb; a record, mm_plan_fire). */
static void
undo_arm(const struct mm_plan *p, const struct plan_act *a,
	 struct mm_plan_undo *u)
{
	if (a->for_ns != 0)
		(void)loop_arm(u->ev, a->for_ns);
	else if (a->until && p->rule->until.kind == PLAN_W_EVERY)
		loop_arm_idle(u->ev, p->rule->until.ns);
	else if (a->until && p->rule->until.kind == PLAN_W_AT)
		loop_arm_idle(u->ev, until_at(p->rule->until.at));
}

static int
act_switch(struct mm *mm, struct mm_plan *p, unsigned i)
{
	const struct plan_act *a = &p->rule->act[i];
	struct mm_plan_undo *u = &p->undo[i];
	uint32_t *w, b;
	unsigned k;

	if ((a->for_ns != 0 || a->until) && !u->on) {
		if (u->ev == NULL &&
		    (u->ev = loop_timer(mm->base, undo_cb, u)) == NULL) {
			log_warn("plan %u: out of memory: '%s' not done",
			    p->n, a->kind == PLAN_D_ENABLE ? "enable" :
			    "disable");
			return 0;
		}
		u->p = p;
		u->mm = mm;
		u->act = i;
		for (k = 0; k < a->ntgt; k++) {
			w = target_word(mm, &a->tgt[k], &b);
			if (a->tgt[k].is_class)
				mm_set_bit(u->cls_was, b, bit(w, b));
			else
				u->eid_was[k] = (uint8_t)bit(w, b);
		}
		u->since = clk_mono_ns();
		u->on = 1;
	}
	for (k = 0; k < a->ntgt; k++) {
		w = target_word(mm, &a->tgt[k], &b);
		mm_set_bit(w, b, a->kind == PLAN_D_DISABLE);
	}
	/* Another firing in force: the duration runs from this one. */
	undo_arm(p, a, u);
	return 1;
}

/* What triggered a firing: a record (FIRE), a process's end, a loss, a
 * time (node NULL: no process). */
struct trig {
	struct mm_node	*node;
	const char	*name;		/* the process's, or NULL: look it up */
	uint32_t	pid, tid;
	int32_t		eid;
	uint64_t	ts;		/* MM clock */
	uint64_t	missed;
};

/* 1 if the triggering process is in p's scope (a time: always). */
static int
in_scope(const struct mm_plan *p, const struct trig *t)
{
	const struct plan_scope *s = &p->rule->scope;
	const char *pool = p->rule->pool, *name;
	int64_t rank;

	if (t->node == NULL)
		return 1;
	if ((s->has & PLAN_S_RANK) && (mm_causal_rank(p->mm, t->node->id,
	    t->pid, &rank) != 0 || rank != (int64_t)s->rank))
		return 0;
	if ((s->has & PLAN_S_PID) && s->pid != t->pid)
		return 0;
	if ((s->has & PLAN_S_THREAD) && s->thread != t->tid)
		return 0;
	if ((s->has & PLAN_S_HOST) && (strlen(t->node->host) !=
	    s->host.len || memcmp(t->node->host, pool + s->host.off,
	    s->host.len) != 0))
		return 0;
	if (s->has & PLAN_S_PROCESS) {
		name = t->name != NULL ? t->name : mm_proc_name(t->node,
		    t->pid);
		if (name == NULL || strlen(name) != s->process.len ||
		    memcmp(name, pool + s->process.off, s->process.len) != 0)
			return 0;
	}
	return 1;
}

/* Adds process pid of node to u's switched processes (once). */
static void
sw_add(struct mm_plan_undo *u, struct mm_node *node, uint32_t pid)
{
	unsigned k;

	for (k = 0; k < u->nsw; k++)
		if (u->sw[k].node == node && u->sw[k].pid == pid)
			return;
	if (u->nsw == MM_PLAN_SW_MAX) {
		log_warn("plan %u: more than %d processes of its thread "
		    "switched: process %u not switched", u->p->n,
		    MM_PLAN_SW_MAX, pid);
		return;
	}
	u->sw[u->nsw].node = node;
	u->sw[u->nsw++].pid = pid;
}

/*
 * Runs enable/disable action i of p, whose rule has a scope, in the
 * processes of that scope only (doc/plans.md 4.4).  They go to the LMs
 * of the scope's hosts as switch rows (the caller sends the plan): for
 * every process there, each writer deciding by the rule's scope row
 * whether it is in it (put_switches); with `thread`, for the triggering
 * processes only (the switch is per process).
 */
static void
act_switch_scoped(struct mm *mm, struct mm_plan *p, unsigned i,
		  const struct trig *t)
{
	const struct plan_act *a = &p->rule->act[i];
	struct mm_plan_undo *u = &p->undo[i];

	if (!u->on) {
		if ((a->for_ns != 0 || a->until) && u->ev == NULL &&
		    (u->ev = loop_timer(mm->base, undo_cb, u)) == NULL) {
			log_warn("plan %u: out of memory: '%s' not done",
			    p->n, a->kind == PLAN_D_ENABLE ? "enable" :
			    "disable");
			return;
		}
		u->p = p;
		u->mm = mm;
		u->act = i;
		u->nsw = 0;
		u->scoped = 1;
		u->since = clk_mono_ns();
		u->on = 1;
	}
	if ((p->rule->scope.has & PLAN_S_THREAD) && t->node != NULL &&
	    t->pid != 0)
		sw_add(u, t->node, t->pid);
	undo_arm(p, a, u);
}

/* A snapshot's second collection, `after` the trigger. */
static void
snap_cb(void *arg)
{
	struct mm_plan *p = arg;

	log_info("plan %u: the snapshot's collection after the trigger",
	    p->n);
	mm_round(p->mm, NULL, MM_SNAPSHOT, NULL);
}

/* rotate: the trace goes on in BASE.planN-K, BASE being the file mainmon
 * wrote when a plan first rotated it. */
static void
act_rotate(struct mm *mm, const struct mm_plan *p)
{
	char name[4200];

	if (mm->out_path == NULL)
		return;
	if (mm->plan_base == NULL && (mm->plan_base =
	    strdup(mm->out_path)) == NULL) {
		log_warn("plan %u: out of memory: 'rotate' not done", p->n);
		return;
	}
	snprintf(name, sizeof name, "%s.plan%u-%llu", mm->plan_base, p->n,
	    (unsigned long long)p->fired);
	log_info("plan %u: rotate to %s", p->n, name);
	mm_rotate(mm, NULL, name);
}

/* Sends what (WIRE_SIGNAL_*) for process pid to node's ready LM. */
static void
act_signal(struct mm *mm, const struct mm_plan *p, struct mm_node *node,
	   uint32_t pid, uint32_t what)
{
	unsigned char buf[12];
	struct mm_conn *c;
	struct wire_wr w;

	wire_wr_init(&w, buf, sizeof buf);
	wire_put_u32(&w, p->n);
	wire_put_u32(&w, pid);
	wire_put_u32(&w, what);
	for (c = mm->conns; c != NULL; c = c->next)
		if (c->state == MM_CONN_READY && c->node == node) {
			peer_send(mm_fire_of(mm, c), WIRE_SIGNAL, buf, w.len,
			    NULL, 0);
			return;
		}
	log_warn("plan %u: no local monitor of %s now: process %u not %s",
	    p->n, node->host, pid, what == WIRE_SIGNAL_STOP ? "stopped" :
	    "continued");
}

/* stop: the triggering process (a time has none). */
static void
act_stop(struct mm *mm, const struct mm_plan *p, const struct trig *t)
{
	unsigned i;

	if (t->node == NULL || t->pid == 0)
		return;
	for (i = 0; i < mm->plan_nstopped; i++)
		if (mm->plan_stopped[i].node == t->node &&
		    mm->plan_stopped[i].pid == t->pid)
			break;
	if (i == mm->plan_nstopped) {
		if (i == sizeof mm->plan_stopped / sizeof mm->plan_stopped[0]) {
			log_warn("plan %u: %u processes stopped already: "
			    "process %u not stopped", p->n, i, t->pid);
			return;
		}
		mm->plan_stopped[i].node = t->node;
		mm->plan_stopped[i].pid = t->pid;
		mm->plan_nstopped++;
	}
	act_signal(mm, p, t->node, t->pid, WIRE_SIGNAL_STOP);
}

/* continue: the processes a plan stopped, of p's scope. */
static void
act_continue(struct mm *mm, const struct mm_plan *p)
{
	struct trig t;
	unsigned i;

	for (i = 0; i < mm->plan_nstopped; i++) {
		memset(&t, 0, sizeof t);
		t.node = mm->plan_stopped[i].node;
		t.pid = mm->plan_stopped[i].pid;
		if (!in_scope(p, &t))
			continue;
		act_signal(mm, p, t.node, t.pid, WIRE_SIGNAL_CONT);
		mm->plan_stopped[i--] =
		    mm->plan_stopped[--mm->plan_nstopped];
	}
}

/* exec: COMMAND by /bin/sh -c on this host, the trigger in its
 * environment; one at a time per rule, at most once a second. */
static void
act_exec(struct mm *mm, struct mm_plan *p, const struct plan_act *a,
	 const struct trig *t)
{
	char cmd[PLAN_STR_MAX + 1], v[6][32];
	uint64_t now = clk_mono_ns();
	pid_t pid;
	int fd;

	if (!mm->allow_exec)
		return;		/* cannot be: refused when added */
	if (p->exec_pid > 0 && waitpid(p->exec_pid, NULL, WNOHANG) == 0) {
		log_warn("plan %u: its command still runs: not run again",
		    p->n);
		return;
	}
	p->exec_pid = 0;
	if (p->exec_ns != 0 && now - p->exec_ns < 1000000000ull) {
		log_warn("plan %u: its command ran less than a second ago: "
		    "not run again", p->n);
		return;
	}
	memcpy(cmd, p->rule->pool + a->str.off, a->str.len);
	cmd[a->str.len] = '\0';
	snprintf(v[0], sizeof v[0], "%u", p->n);
	snprintf(v[1], sizeof v[1], "%u", t->pid);
	snprintf(v[2], sizeof v[2], "%u", t->tid);
	snprintf(v[3], sizeof v[3], "%llu", (unsigned long long)t->ts);
	snprintf(v[4], sizeof v[4], "%d", (int)t->eid);
	if ((pid = fork()) < 0) {
		log_warn("plan %u: cannot run its command: %s", p->n,
		    strerror(errno));
		return;
	}
	if (pid == 0) {
		/* The child: the trigger in its environment, nothing of
		 * mainmon's open (its sockets, its trace). */
		setsid();
		if ((fd = open("/dev/null", O_RDONLY)) > 0) {
			dup2(fd, 0);
			close(fd);
		}
		for (fd = 3; fd < 65536; fd++)
			close(fd);
		setenv("GRM_PLAN_RULE", v[0], 1);
		setenv("GRM_PLAN_HOST", t->node != NULL ? t->node->host : "",
		    1);
		setenv("GRM_PLAN_PID", v[1], 1);
		setenv("GRM_PLAN_TID", v[2], 1);
		setenv("GRM_PLAN_TS", v[3], 1);
		setenv("GRM_PLAN_EID", v[4], 1);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	p->exec_pid = pid;
	p->exec_ns = now;
	log_info("plan %u: command started (pid %d)", p->n, (int)pid);
}

/*
 * Fires p for t, if its scope, count and interval allow: counts it,
 * writes the #PLAN fire line, runs its actions in order.
 */
static void
plan_fire(struct mm *mm, struct mm_plan *p, const struct trig *t)
{
	const struct plan_rule *r = p->rule;
	const struct plan_act *a;
	struct tape_fire f;
	char cmd[200], txt[160];
	uint64_t now = clk_mono_ns();
	const char *text = "";
	size_t text_len = 0;
	unsigned i;
	int changed = 0, snapped = 0, rows = 0, until_was;

	if (p->unarmed != NULL || exhausted(p) || !in_scope(p, t))
		return;
	until_was = until_watched(p);
	/* Within the interval: not a firing, not counted. */
	if (p->fired > 0 && r->interval != 0 &&
	    now - p->last_ns < r->interval)
		return;
	p->fired++;
	p->last_ns = now;
	mm->plan_fired++;
	for (i = 0; i < r->nact; i++)
		if (r->act[i].kind == PLAN_D_MARK) {
			text = r->pool + r->act[i].str.off;
			text_len = r->act[i].str.len;
			break;
		}
	memset(&f, 0, sizeof f);
	f.n = p->n;
	f.ts = t->ts;
	f.k = p->fired;
	f.node = t->node != NULL ? t->node->id : 0;
	f.pid = t->pid;
	f.tid = t->tid;
	f.eid = t->eid;
	f.missed = t->missed;
	f.acted = now;
	f.text = text;
	f.text_len = text_len;
	if (mm->out != NULL && tape_plan_fire(mm->out, &f) != 0)
		log_warn("cannot write %s: %s (a #PLAN fire line)",
		    mm->out_path, strerror(errno));
	log_info("plan %u fired (%llu): process %u thread %u on %s", p->n,
	    (unsigned long long)p->fired, t->pid, t->tid, t->node != NULL ?
	    t->node->host : "(a time)");
	cmd[0] = '\0';
	for (i = 0; i < r->nact; i++) {
		a = &r->act[i];
		switch (a->kind) {
		case PLAN_D_ENABLE:
		case PLAN_D_DISABLE:
			if (r->scope.has != 0) {
				act_switch_scoped(mm, p, i, t);
				rows = 1;
				break;
			}
			if (!act_switch(mm, p, i))
				break;
			targets_text(a, txt, sizeof txt);
			if (!changed)
				snprintf(cmd, sizeof cmd, "plan %u: %s", p->n,
				    txt);
			else if (strlen(cmd) + strlen(txt) + 3 < sizeof cmd)
				strcat(strcat(cmd, ", "), txt);
			changed = 1;
			break;
		case PLAN_D_SNAPSHOT:
			/* Now: what the ring holds of the time before is
			 * saved from overwriting; then after the trigger. */
			if (!snapped)
				mm_round(mm, NULL, MM_SNAPSHOT, NULL);
			snapped = 1;
			if (a->after == 0)
				break;
			if (p->snap_ev == NULL)
				p->snap_ev = loop_timer(mm->base, snap_cb, p);
			if (p->snap_ev != NULL)
				(void)loop_arm(p->snap_ev, a->after);
			break;
		case PLAN_D_ROTATE:
			act_rotate(mm, p);
			break;
		case PLAN_D_STOP:
			act_stop(mm, p, t);
			break;
		case PLAN_D_CONTINUE:
			act_continue(mm, p);
			break;
		case PLAN_D_EXEC:
			act_exec(mm, p, a, t);
			break;
		}
	}
	if (changed)
		mm_round(mm, NULL, MM_CONTROL, cmd);
	/* Its last firing: the writers stop checking for it; a switch
	 * until a record now in force: they start checking for that. */
	if (rows || (exhausted(p) && watched(p)) ||
	    until_watched(p) != until_was)
		mm_plan_send(mm, NULL);
}

static void until_met(struct mm_plan *p, int kind, const struct trig *t);

/* A record of p's until row: the switches it ends, if in force since
 * before that record; the writers stop checking for it. */
static void
until_fire(struct mm *mm, struct mm_plan *p, const struct trig *t)
{
	unsigned i;

	if (!until_watched(p))
		return;		/* ended already: a late match */
	for (i = 0; i < p->rule->nact; i++)
		if (p->undo[i].on && p->rule->act[i].until &&
		    t->ts < p->undo[i].since)
			return;	/* a match from before this firing */
	until_met(p, p->rule->until.kind, t);
	if (!until_watched(p))
		mm_plan_send(mm, NULL);
}

static void enqueue(struct mm *mm, int kind, uint32_t rule,
		    const struct trig *t);

/* 1 if p's actions must not run inside the work that polled. */
static int
acts_later(const struct mm_plan *p)
{
	unsigned i;

	for (i = 0; i < p->rule->nact; i++)
		if (p->rule->act[i].kind == PLAN_D_SNAPSHOT ||
		    p->rule->act[i].kind == PLAN_D_ROTATE)
			return 1;
	return 0;
}

struct mm_conn *
mm_fire_owner(struct mm *mm, struct mm_conn *c)
{
	struct mm_conn *k;

	if (c->state != MM_CONN_FIRE)
		return c;
	for (k = mm->conns; k != NULL; k = k->next)
		if (k->state == MM_CONN_READY && k->node == c->node &&
		    k->lm_pid == c->lm_pid)
			return k;
	return NULL;
}

struct peer *
mm_fire_of(struct mm *mm, struct mm_conn *c)
{
	struct mm_conn *k;

	/* The newest (first in the list): an older one of the same LM is
	 * one it gave up and mainmon has not seen close yet. */
	for (k = mm->conns; k != NULL; k = k->next)
		if (k->state == MM_CONN_FIRE && k->node == c->node &&
		    k->lm_pid == c->lm_pid && !peer_broken(k->p))
			return k->p;
	return c->p;
}

void
mm_fire_gone(struct mm *mm, struct mm_conn *c)
{
	struct mm_conn *o;
	struct mm_coll *co;
	int i;

	if ((o = mm_fire_owner(mm, c)) == NULL || o == c)
		return;
	/* The plan first: a plan's change waits for a control state sent
	 * behind its rows. */
	mm_plan_send(mm, o);
	for (co = mm->colls; co != NULL; co = co->next)
		if (co->what == MM_CONTROL || co->what == MM_PLAN)
			for (i = 0; i < co->npending; i++)
				if (co->pending[i] == o)
					mm_send_control(mm, o, co->round);
	log_debug("LM %u on %s: its fire link closed: its control state and "
	    "plan sent again on its data link", o->lm_pid, o->node->host);
}

int
mm_plan_fire(struct mm *mm, struct mm_conn *c, struct wire_rd *msg)
{
	const struct plan_trig *tr;
	struct mm_plan *p;
	struct trig t;
	uint32_t rule;

	memset(&t, 0, sizeof t);
	rule = wire_get_u32(msg);
	t.pid = wire_get_u32(msg);
	t.tid = wire_get_u32(msg);
	t.eid = (int32_t)wire_get_u32(msg);
	t.ts = wire_get_u64(msg);
	t.missed = wire_get_u64(msg);
	if (!wire_rd_end(msg))
		return -1;
	for (p = mm->plans; p != NULL && p->n != (rule & ~UNTIL_ROW);
	    p = p->next)
		;
	tr = p == NULL ? NULL : rule & UNTIL_ROW ? &p->rule->until :
	    &p->rule->when;
	/* Deleted, or the LM's rows are older than the plan: nothing. */
	if (p == NULL || ((rule & UNTIL_ROW) && !p->rule->has_until) ||
	    !trig_watched(tr) || t.eid != (tr->kind == PLAN_W_BLOCK ?
	    REC_EID_BLOCK_END : tr->eid))
		return 0;
	if ((c = mm_fire_owner(mm, c)) == NULL) {
		log_info("plan %u: a firing from a local monitor no longer "
		    "connected: dropped", p->n);
		return 0;
	}
	t.node = c->node;
	t.ts = mm_conv(c, t.ts);
	if (rule & UNTIL_ROW)
		until_fire(mm, p, &t);
	else if (mm->plan_polling && acts_later(p))
		/* Snapshots and rotates at the loop's next turn, not
		 * inside the work that polled (a rotate would change the
		 * file under the records being written). */
		enqueue(mm, -1, p->n, &t);
	else
		plan_fire(mm, p, &t);
	return 0;
}

/*
 * CONTROL_ACKs taken from the fire links while mainmon is busy: the end
 * of a control round writes its #CONTROL line and answers grmctl, not
 * to be done inside the work that polled; so they are kept (by the LM's
 * node and pid, not its connection, which may go meanwhile) and counted
 * at the loop's next turn.  Taken, they no longer stop the FIREs behind
 * them.
 */
#define PLAN_ACKS_MAX	64
struct mm_plan_ack {
	struct loop_ev	*ev;
	unsigned	n;
	struct {
		struct mm_node	*node;
		uint32_t	lm_pid, round;
		uint64_t	t;
	} q[PLAN_ACKS_MAX];
};

static void
acks_cb(void *arg)
{
	struct mm *mm = arg;
	struct mm_plan_ack *a = mm->plan_acks;
	struct mm_conn *c;
	unsigned i;

	for (i = 0; i < a->n; i++)
		for (c = mm->conns; c != NULL; c = c->next)
			if (c->state == MM_CONN_READY &&
			    c->node == a->q[i].node &&
			    c->lm_pid == a->q[i].lm_pid) {
				mm_control_ack(mm, c, a->q[i].round,
				    a->q[i].t);
				break;
			}
	a->n = 0;
}

void
mm_plan_acks(struct mm *mm)
{
	if (mm->plan_acks != NULL && mm->plan_acks->n > 0 &&
	    !mm->plan_polling)
		acks_cb(mm);
}

/* Keeps fire link c's CONTROL_ACK for the loop's next turn; 1, or 0 if
 * it cannot (left to the link's dispatch). */
static int
ack_later(struct mm *mm, struct mm_conn *c, struct wire_rd *msg)
{
	struct mm_plan_ack *a = mm->plan_acks;

	if (a == NULL) {
		if ((a = calloc(1, sizeof *a)) == NULL ||
		    (a->ev = loop_timer(mm->base, acks_cb, mm)) == NULL) {
			free(a);
			return 0;
		}
		mm->plan_acks = a;
	}
	if (a->n == PLAN_ACKS_MAX)
		return 0;
	a->q[a->n].node = c->node;
	a->q[a->n].lm_pid = c->lm_pid;
	a->q[a->n].round = wire_get_u32(msg);
	a->q[a->n].t = wire_get_u64(msg);
	a->n++;
	loop_soon(a->ev);
	return 1;
}

/* A message of a fire link while mainmon is busy: a FIRE is taken (and
 * fired), a CONTROL_ACK kept for later; anything else is left to the
 * link's dispatch. */
static int
take_fire(struct peer *pe, uint16_t type, struct wire_rd *msg, void *arg)
{
	struct mm_conn *c = arg;
	char why[160];

	(void)pe;
	if (wire_check(type, WIRE_BY_FIRE, WIRE_BY_MM, WIRE_ST_READY,
	    wire_rd_left(msg), why, sizeof why) != 0)
		return 0;
	if (type == WIRE_CONTROL_ACK)
		return ack_later(c->mm, c, msg);
	if (type != WIRE_FIRE)
		return 0;
	return mm_plan_fire(c->mm, c, msg) == 0;
}

void
mm_plan_poll(struct mm *mm)
{
	struct mm_conn *c;
	uint64_t now;
	int n = 0;

	if (mm->plan_polling)
		return;
	if (mm->plans == NULL) {
		/* No rule: nothing to take in a hurry. */
		mm_boost_done(mm);
		return;
	}
	now = clk_mono_ns();
	/* Raised by mm-boost: a link has something, now. */
	if (now - mm->plan_polled < MM_PLAN_POLL_NS && !mm_boost_raised(mm))
		return;
	mm->plan_polled = now;
	/* take_fire frees no connection: the list stays as it is. */
	mm->plan_polling = 1;
	for (c = mm->conns; c != NULL; c = c->next)
		if (c->state == MM_CONN_FIRE)
			n += peer_poll(c->p, take_fire, c);
	mm->plan_polling = 0;
	/* What the firings sent the LMs (CONTROL, SIGNAL) goes now, not
	 * after the work; then the loop's turn ends (mm_boost.c). */
	if (n > 0)
		mm_plan_flush(mm);
	/* Every link read to its end: the raise ends.  A message left to
	 * a link's dispatch (or a link in its own dispatch) keeps it until
	 * the loop's dispatch has taken it (mm_boost.c). */
	for (c = mm->conns; c != NULL; c = c->next)
		if (c->state == MM_CONN_FIRE && peer_input_left(c->p) > 0)
			return;
	mm_boost_done(mm);
}

void
mm_plan_flush(struct mm *mm)
{
	struct mm_conn *c;

	for (c = mm->conns; c != NULL; c = c->next)
		if (MM_IS_LM(c) || c->state == MM_CONN_FIRE)
			peer_flush(c->p);
}

/*
 * Process ends and losses are met while mainmon writes (a #PROC or #LOSS
 * line): their firings run from the loop's next turn, not from inside
 * the write (a rotate would change the file under it); so do the firings
 * mm_plan_poll took of a rule that snapshots or rotates (rule: its
 * number; 0 for an end or a loss, for every rule of kind).  At most
 * PLAN_Q_MAX wait; more are counted and dropped (logged).
 */
#define PLAN_Q_MAX	256
struct mm_plan_q {
	struct loop_ev	*ev;
	unsigned	n;
	uint64_t	dropped;
	struct {
		int		kind;
		uint32_t	rule;
		struct trig	t;
		char		name[64];
	} q[PLAN_Q_MAX];
};

/* The end of p's switches in force whose until is of kind, met by t in
 * p's scope. */
static void
until_met(struct mm_plan *p, int kind, const struct trig *t)
{
	unsigned i;

	if (!p->rule->has_until || p->rule->until.kind != kind ||
	    !in_scope(p, t))
		return;
	for (i = 0; i < p->rule->nact; i++)
		if (p->undo[i].on && p->rule->act[i].until) {
			loop_disarm(p->undo[i].ev);
			undo_cb(&p->undo[i]);
		}
}

static void
queue_cb(void *arg)
{
	struct mm *mm = arg;
	struct mm_plan_q *q = mm->plan_q;
	struct mm_plan *p;
	unsigned i;

	if (q->dropped > 0)
		log_warn("plan: %llu process ends, losses or firings not "
		    "looked at (more than %d at once)", (unsigned long long)
		    q->dropped, PLAN_Q_MAX);
	q->dropped = 0;
	for (i = 0; i < q->n; i++) {
		if (q->q[i].name[0] != '\0')
			q->q[i].t.name = q->q[i].name;
		if (q->q[i].rule != 0) {
			for (p = mm->plans; p != NULL &&
			    p->n != q->q[i].rule; p = p->next)
				;
			if (p != NULL)
				plan_fire(mm, p, &q->q[i].t);
			continue;
		}
		for (p = mm->plans; p != NULL; p = p->next) {
			until_met(p, q->q[i].kind, &q->q[i].t);
			if (p->rule->when.kind == q->q[i].kind)
				plan_fire(mm, p, &q->q[i].t);
		}
	}
	q->n = 0;
}

/* Queues t for rule number rule, or (rule 0) for the rules of kind, if
 * there are any. */
static void
enqueue(struct mm *mm, int kind, uint32_t rule, const struct trig *t)
{
	struct mm_plan_q *q;
	struct mm_plan *p;

	for (p = mm->plans; p != NULL && rule == 0; p = p->next)
		if (p->unarmed == NULL && (p->rule->when.kind == kind ||
		    (p->rule->has_until && p->rule->until.kind == kind)))
			break;
	if (p == NULL && rule == 0)
		return;
	if (mm->plan_q == NULL) {
		if ((q = calloc(1, sizeof *q)) == NULL ||
		    (q->ev = loop_timer(mm->base, queue_cb, mm)) == NULL) {
			free(q);
			log_warn("plan: out of memory: a process end or loss "
			    "not looked at");
			return;
		}
		mm->plan_q = q;
	}
	q = mm->plan_q;
	if (q->n == PLAN_Q_MAX) {
		q->dropped++;
		return;
	}
	q->q[q->n].kind = kind;
	q->q[q->n].rule = rule;
	q->q[q->n].t = *t;
	q->q[q->n].t.name = NULL;
	snprintf(q->q[q->n].name, sizeof q->q[q->n].name, "%s",
	    t->name != NULL ? t->name : "");
	q->n++;
	loop_soon(q->ev);
}

void
mm_plan_proc_end(struct mm *mm, struct mm_node *node, uint32_t pid,
		 int killed, int32_t status, uint64_t ts, const char *name)
{
	struct trig t = { node, name, pid, 0, 0, ts, 0 };

	if (killed || status != 0)
		enqueue(mm, PLAN_W_ABNORMAL, 0, &t);
}

void
mm_plan_loss(struct mm *mm, struct mm_node *node, uint32_t pid, uint32_t tid,
	     uint64_t ts)
{
	struct trig t = { node, NULL, pid, tid, 0, ts, 0 };

	enqueue(mm, PLAN_W_LOSS, 0, &t);
}

/* ns from now to the next HH:MM:SS (at: seconds after local midnight). */
static uint64_t
until_at(uint32_t at)
{
	time_t now = time(NULL);
	struct tm tm;
	int64_t d;

	if (localtime_r(&now, &tm) == NULL)
		return 86400ull * 1000000000;
	d = (int64_t)at - (tm.tm_hour * 3600 + tm.tm_min * 60 + tm.tm_sec);
	if (d <= 0)
		d += 86400;
	return (uint64_t)d * 1000000000;
}

/* every D, at HH:MM: its time came. */
static void
time_cb(void *arg)
{
	struct mm_plan *p = arg;
	struct trig t = { NULL, NULL, 0, 0, 0, clk_mono_ns(), 0 };

	(void)loop_arm(p->time_ev, p->rule->when.kind == PLAN_W_EVERY ?
	    p->rule->when.ns : until_at(p->rule->when.at));
	plan_fire(p->mm, p, &t);
	if (exhausted(p))
		loop_disarm(p->time_ev);
}

/* Starts p's clock, for a time trigger. */
static void
plan_arm_time(struct mm *mm, struct mm_plan *p)
{
	const struct plan_trig *w = &p->rule->when;

	if (p->unarmed != NULL || (w->kind != PLAN_W_EVERY &&
	    w->kind != PLAN_W_AT))
		return;
	if ((p->time_ev = loop_timer(mm->base, time_cb, p)) == NULL ||
	    loop_arm(p->time_ev, w->kind == PLAN_W_EVERY ? w->ns :
	    until_at(w->at)) != 0)
		log_warn("plan %u: out of memory: its time will not come",
		    p->n);
}

/* Why a rule is refused beyond its syntax: exec without --allow-exec, or
 * a full plan.  NULL if it may be added. */
static const char *
refusal(const struct mm *mm, const struct plan_rule *r)
{
	if (plan_has_exec(r) && !mm->allow_exec)
		return "a rule with exec is refused: mainmon was not started "
		    "with --allow-exec";
	if (mm->nplans >= PLAN_RULES_MAX)
		return "the plan is full (64 rules): delete one first";
	if (mm->plan_next >= UNTIL_ROW - 1)
		return "no more rule numbers in this run of mainmon";
	return NULL;
}

/* Adds r (checked) at MM time ts; its number in *n.  0, or -1 (out of
 * memory). */
static int
plan_store(struct mm *mm, const struct plan_rule *r, uint64_t ts,
	   uint32_t *n)
{
	char text[PLAN_PRINT_MAX];
	struct mm_plan *p, **tail;

	plan_print(r, text, sizeof text);
	if ((p = calloc(1, sizeof *p)) == NULL ||
	    (p->text = strdup(text)) == NULL ||
	    (p->rule = malloc(sizeof *p->rule)) == NULL) {
		if (p != NULL)
			free(p->text);
		free(p);
		return -1;
	}
	*p->rule = *r;
	p->unarmed = unarmed(r);
	p->mm = mm;
	p->n = ++mm->plan_next;
	p->ts = ts;
	for (tail = &mm->plans; *tail != NULL; tail = &(*tail)->next)
		;
	*tail = p;
	mm->nplans++;
	*n = p->n;
	plan_arm_time(mm, p);
	return 0;
}

/* plan_load's callback: one rule of the -P file. */
static int
load_one(const struct plan_rule *r, unsigned line, void *arg,
	 struct plan_err *e)
{
	struct mm *mm = arg;
	const char *why;
	uint32_t n;

	(void)line;
	if ((why = refusal(mm, r)) != NULL ||
	    (plan_store(mm, r, clk_mono_ns(), &n) != 0 &&
	    (why = "out of memory") != NULL)) {
		e->col = 1;
		snprintf(e->msg, sizeof e->msg, "%s", why);
		return -1;
	}
	return 0;
}

int
mm_plan_load(struct mm *mm, const char *path, char *why, size_t cap)
{
	return plan_load(path, mm->allow_exec, load_one, mm, why, cap);
}

/* grmctl ID plan add RULE */
static void
plan_add(struct mm *mm, struct mm_conn *ctl, const char *rule)
{
	static struct plan_rule r;
	char text[WIRE_STR_MAX + 64], err[1600];
	const char *why;
	struct plan_err e;
	uint64_t ts;
	uint32_t n;

	if (plan_parse_rule(rule, strlen(rule), &r, &e) != 0) {
		plan_err_format(&e, NULL, rule, strlen(rule), err, sizeof err);
		mm_ctl_reply(ctl, 1, err);
		return;
	}
	if ((why = refusal(mm, &r)) != NULL) {
		snprintf(text, sizeof text, "plan add: %s", why);
		mm_ctl_reply(ctl, 1, text);
		return;
	}
	ts = clk_mono_ns();
	if (plan_store(mm, &r, ts, &n) != 0) {
		mm_ctl_reply(ctl, 1, "plan add: out of memory");
		return;
	}
	if (mm->out != NULL)
		(void)mm_plan_write(mm, mm->out, n);
	log_info("plan %u added: %s", n, rule);
	why = unarmed(&r);
	snprintf(text, sizeof text, "plan %u added (%s)", n, why != NULL ?
	    why : "armed");
	if (why != NULL) {
		mm_ctl_reply(ctl, 0, text);
		return;
	}
	/* Answered once the LMs have its rows: a step a writer takes after
	 * the answer is checked. */
	mm_plan_send(mm, NULL);
	mm_round(mm, ctl, MM_PLAN, text);
}

/* grmctl ID plan del N */
static void
plan_del(struct mm *mm, struct mm_conn *ctl, const char *arg)
{
	struct mm_plan **pp, *p;
	char text[256], *end;
	unsigned long v;
	int armed;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (arg[0] < '0' || arg[0] > '9' || *end != '\0' || errno != 0 ||
	    v == 0 || v > UINT32_MAX) {
		snprintf(text, sizeof text, "plan del: expected a rule's number "
		    "(plan list shows them), not \"%.40s\"", arg);
		mm_ctl_reply(ctl, 1, text);
		return;
	}
	for (pp = &mm->plans; *pp != NULL && (*pp)->n != v;
	    pp = &(*pp)->next)
		;
	if ((p = *pp) == NULL) {
		snprintf(text, sizeof text, "plan del: no rule %lu", v);
		mm_ctl_reply(ctl, 1, text);
		return;
	}
	*pp = p->next;
	mm->nplans--;
	if (mm->out != NULL)
		(void)tape_plan_del(mm->out, p->n, clk_mono_ns());
	log_info("plan %u deleted", p->n);
	armed = p->unarmed == NULL;
	if (armed)
		mm_plan_send(mm, NULL);
	plan_undo_all(mm, p);
	plan_free1(p);
	snprintf(text, sizeof text, "plan %lu deleted", v);
	/* Answered once no LM checks its rows any more. */
	if (armed)
		mm_round(mm, ctl, MM_PLAN, text);
	else
		mm_ctl_reply(ctl, 0, text);
}

size_t
mm_plan_list(const struct mm *mm, char *buf, size_t cap)
{
	const struct mm_plan *p;
	size_t n;

	n = (size_t)snprintf(buf, cap, "plan: %u rule%s, fired %llu "
	    "time%s\n", mm->nplans, mm->nplans == 1 ? "" : "s",
	    (unsigned long long)mm->plan_fired, mm->plan_fired == 1 ? "" :
	    "s");
	for (p = mm->plans; p != NULL && n < cap; p = p->next) {
		n += (size_t)snprintf(buf + n, cap - n, "%u %s\n", p->n,
		    p->text);
		if (n >= cap)
			break;
		if (p->unarmed != NULL)
			n += (size_t)snprintf(buf + n, cap - n, "  (%s)\n",
			    p->unarmed);
		else
			n += (size_t)snprintf(buf + n, cap - n, "  (armed, "
			    "fired %llu time%s%s)\n",
			    (unsigned long long)p->fired, p->fired == 1 ? "" :
			    "s", exhausted(p) ? ", no more" : "");
	}
	return n;
}

void
mm_plan_command(struct mm *mm, struct mm_conn *ctl, const char *arg)
{
	char text[WIRE_TEXT_MAX];
	size_t n;

	if (strncmp(arg, "add ", 4) == 0)
		plan_add(mm, ctl, arg + 4);
	else if (strncmp(arg, "del ", 4) == 0)
		plan_del(mm, ctl, arg + 4);
	else if (strcmp(arg, "list") == 0) {
		n = mm_plan_list(mm, text, sizeof text);
		if (n >= sizeof text && sizeof text > 16)
			memcpy(text + sizeof text - 16, "\n(truncated)\n", 14);
		mm_ctl_reply(ctl, 0, text);
	} else
		mm_ctl_reply(ctl, 1, "plan: expected add RULE, list, or del N");
}

int
mm_plan_write(const struct mm *mm, struct tape_w *w, uint32_t n)
{
	const struct mm_plan *p;

	for (p = mm->plans; p != NULL; p = p->next)
		if (n == 0 || p->n == n) {
			if (tape_plan_add(w, p->n, p->ts, p->text,
			    strlen(p->text)) != 0)
				return -1;
			if (n != 0)
				break;
		}
	return 0;
}

void
mm_plan_free(struct mm *mm)
{
	struct mm_plan *p, *next;

	for (p = mm->plans; p != NULL; p = next) {
		next = p->next;
		plan_free1(p);
	}
	mm->plans = NULL;
	mm->nplans = 0;
	free(mm->plan_base);
	mm->plan_base = NULL;
	if (mm->plan_q != NULL)
		loop_ev_free(mm->plan_q->ev);
	free(mm->plan_q);
	mm->plan_q = NULL;
	if (mm->plan_acks != NULL)
		loop_ev_free(mm->plan_acks->ev);
	free(mm->plan_acks);
	mm->plan_acks = NULL;
}
