/* SPDX-License-Identifier: MIT */
/* mm_plan.c: the job's monitoring plan (doc/plans.md): rules loaded from
 * mainmon -P, added and removed by grmctl plan, shown by status and
 * written to the trace as #PLAN lines.  Not armed: this version stores
 * and shows plans, it does not fire them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mm.h"
#include "net/wire.h"
#include "plan/plan.h"
#include "util/clock.h"
#include "util/log.h"

/* Said wherever plans are shown: nothing pretends to fire. */
#define NOT_ARMED	"not armed: this version does not fire plans yet"

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
	    (p->text = strdup(text)) == NULL) {
		free(p);
		return -1;
	}
	p->n = ++mm->plan_next;
	p->ts = ts;
	for (tail = &mm->plans; *tail != NULL; tail = &(*tail)->next)
		;
	*tail = p;
	mm->nplans++;
	*n = p->n;
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
	snprintf(text, sizeof text, "plan %u added (%s)", n, NOT_ARMED);
	mm_ctl_reply(ctl, 0, text);
}

/* grmctl ID plan del N */
static void
plan_del(struct mm *mm, struct mm_conn *ctl, const char *arg)
{
	struct mm_plan **pp, *p;
	char text[256], *end;
	unsigned long v;

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
	free(p->text);
	free(p);
	snprintf(text, sizeof text, "plan %lu deleted", v);
	mm_ctl_reply(ctl, 0, text);
}

size_t
mm_plan_list(const struct mm *mm, char *buf, size_t cap)
{
	const struct mm_plan *p;
	size_t n;

	n = (size_t)snprintf(buf, cap, "plan: %u rule%s (%s)\n", mm->nplans,
	    mm->nplans == 1 ? "" : "s", NOT_ARMED);
	for (p = mm->plans; p != NULL && n < cap; p = p->next)
		n += (size_t)snprintf(buf + n, cap - n, "%u %s\n", p->n,
		    p->text);
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
		free(p->text);
		free(p);
	}
	mm->plans = NULL;
	mm->nplans = 0;
}
