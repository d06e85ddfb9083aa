/* SPDX-License-Identifier: MIT */
/* gmi_plan.c: the writer's side of monitoring plans (doc/plans.md 7): the
 * watched types' rows copied out of the segment, run on a record just
 * written, and a match handed to the LM through the row's firing slot. */
#include <string.h>

#include "gmi_int.h"
#include "plan/plan.h"

/*
 * The private copy of the segment's rows and strings, made under the
 * definition lock when the control generation changes (gmi_ctl_refresh)
 * and read without a lock by writers: a writer may run a row of the
 * previous plan or of the new one while a change is applied, never an
 * invalid one (every row is checked before it is published here).
 */
static struct seg_plan_row gmi_rows[SEG_PLAN_ROWS];
static char gmi_strs[SEG_PLAN_STRS];
static _Atomic uint32_t gmi_nrows;

/* 1 if row r's comparisons stay inside the string area and its fields
 * and operators are ones the language has. */
static int
row_ok(const struct seg_plan_row *r)
{
	const struct seg_plan_insn *in;
	unsigned i;

	if (r->ninsn > SEG_PLAN_INSNS || REC_EID_BIT(r->eid) >= GMI_NTYPES)
		return 0;
	for (i = 0; i < r->ninsn; i++) {
		in = &r->insn[i];
		if (in->op > PLAN_GE || in->field < 1 ||
		    in->field > PLAN_FIELDS_MAX)
			return 0;
		if (in->is_str && (in->value < 0 || in->len > PLAN_STR_MAX ||
		    (uint64_t)in->value + in->len > SEG_PLAN_STRS))
			return 0;
	}
	return 1;
}

void
gmi_plan_refresh(const struct seg_hdr *s, uint32_t *watch)
{
	uint32_t n, i, k = 0;

	n = *(const volatile uint32_t *)&s->plan_rows;
	if (n > SEG_PLAN_ROWS)
		n = 0;
	atomic_store_explicit(&gmi_nrows, 0, memory_order_release);
	memcpy(gmi_strs, s->plan_strs, sizeof gmi_strs);
	for (i = 0; i < n; i++) {
		memcpy(&gmi_rows[k], &s->plan[i], sizeof gmi_rows[k]);
		gmi_rows[k].pad = i;	/* its firing slot */
		if (row_ok(&gmi_rows[k]))
			k++;
	}
	for (i = 0; i < REC_EID_BITS / 32; i++)
		watch[i] = 0;
	for (i = 0; i < k; i++)
		watch[REC_EID_BIT(gmi_rows[i].eid) / 32] |=
		    1u << (REC_EID_BIT(gmi_rows[i].eid) % 32);
	atomic_store_explicit(&gmi_nrows, k, memory_order_release);
}

static int
cmp_dbl(double a, uint8_t op, double b)
{
	switch (op) {
	case PLAN_EQ: return a == b;
	case PLAN_NE: return a != b;
	case PLAN_LT: return a < b;
	case PLAN_LE: return a <= b;
	case PLAN_GT: return a > b;
	default: return a >= b;
	}
}

static int
cmp_int(int64_t a, uint8_t op, int64_t b)
{
	switch (op) {
	case PLAN_EQ: return a == b;
	case PLAN_NE: return a != b;
	case PLAN_LT: return a < b;
	case PLAN_LE: return a <= b;
	case PLAN_GT: return a > b;
	default: return a >= b;
	}
}

/* The fields of a record of ty at rec (len bytes, written by this
 * thread): each one's slot and, for a string, its length. */
struct slots {
	const char	*p[PLAN_FIELDS_MAX];
	uint32_t	slen[PLAN_FIELDS_MAX];
	unsigned	n;
};

static void
find_slots(const struct gmi_type *ty, const char *rec, uint32_t len,
	   struct slots *sl)
{
	const char *p = rec + sizeof(struct rec_hdr), *end = rec + len;
	uint32_t l;
	unsigned i;

	sl->n = 0;
	for (i = 0; i < ty->fmt.n && i < PLAN_FIELDS_MAX; i++) {
		if (p + 8 > end)
			break;
		sl->p[i] = p;
		if (ty->fmt.kind[i] == REC_K_STR) {
			memcpy(&l, p, 4);
			if (l > REC_STR_MAX || p + rec_str_size(l) > end)
				break;
			sl->slen[i] = l;
			p += rec_str_size(l);
		} else
			p += 8;
		sl->n = i + 1;
	}
}

/* 1 if every comparison of row r holds for the record's fields. */
static int
row_match(const struct seg_plan_row *r, const struct gmi_type *ty,
	  const struct slots *sl)
{
	const struct seg_plan_insn *in;
	unsigned i, f;
	int64_t v;
	double d;
	int eq;

	for (i = 0; i < r->ninsn; i++) {
		in = &r->insn[i];
		f = in->field - 1u;
		if (f >= sl->n)
			return 0;
		if (in->is_str) {
			if (ty->fmt.kind[f] != REC_K_STR)
				return 0;
			eq = sl->slen[f] == in->len && memcmp(sl->p[f] + 4,
			    gmi_strs + in->value, in->len) == 0;
			if (eq != (in->op == PLAN_EQ))
				return 0;
			continue;
		}
		if (ty->fmt.kind[f] == REC_K_STR)
			return 0;
		if (ty->fmt.kind[f] == REC_K_DOUBLE) {
			memcpy(&d, sl->p[f], 8);
			if (!cmp_dbl(d, in->op, (double)in->value))
				return 0;
			continue;
		}
		memcpy(&v, sl->p[f], 8);
		if (!cmp_int(v, in->op, in->value))
			return 0;
	}
	return 1;
}

/* Hands a match of row i to the LM: the slot if it is free, else a
 * match missed. */
static void
raise_fire(const struct seg_plan_row *r, int eid, uint64_t ts)
{
	struct seg_fire *f = &gmi_seg->fire[r->pad];
	uint32_t want = SEG_FIRE_FREE, pid = gmi_self_pid();

	if (atomic_load_explicit(&f->state, memory_order_relaxed) !=
	    SEG_FIRE_FREE || !atomic_compare_exchange_strong_explicit(
	    &f->state, &want, SEG_FIRE_CLAIMED_BY(pid), memory_order_acquire,
	    memory_order_relaxed)) {
		atomic_fetch_add_explicit(&f->missed, 1, memory_order_relaxed);
		return;
	}
	f->rule = r->rule;
	f->pid = pid;
	f->tid = gmi_thr.tid;
	f->eid = eid;
	f->ts = ts;
	atomic_store_explicit(&f->state, SEG_FIRE_READY, memory_order_release);
	gmi_plan_note();
}

void
gmi_plan_check(int eid, const struct gmi_type *ty, const char *rec,
	       uint32_t len)
{
	uint32_t n = atomic_load_explicit(&gmi_nrows, memory_order_acquire), i;
	struct slots sl;
	uint64_t ts;
	int found = 0;

	if (gmi_seg == NULL)
		return;
	for (i = 0; i < n; i++) {
		if (gmi_rows[i].eid != eid)
			continue;
		if (!found) {
			find_slots(ty, rec, len, &sl);
			found = 1;
		}
		if (row_match(&gmi_rows[i], ty, &sl)) {
			memcpy(&ts, rec + offsetof(struct rec_hdr, ts), 8);
			raise_fire(&gmi_rows[i], eid, ts);
		}
	}
}
