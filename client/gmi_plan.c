/* SPDX-License-Identifier: MIT */
/* gmi_plan.c: the writer's side of monitoring plans (doc/plans.md 7): the
 * watched types' rows copied out of the segment, run on a record just
 * written, and a match handed to the LM through the row's firing slot. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
static uint32_t gmi_slot[SEG_PLAN_ROWS];	/* each row's firing slot */
/*
 * Each row's scope (SEG_ROW_SCOPE) as this process sees it: the items
 * it can decide once (pid, name) are decided when the rows are copied:
 * a row whose scope leaves this process out is not copied (a rate row
 * is, to count, with `out` set: it never takes the slot); the thread
 * and the rank are checked at each match.
 */
static struct gmi_scope {
	uint8_t		narrow;		/* out, or a thread or rank to check */
	uint8_t		out;
	uint8_t		has_tid, has_rank;
	uint32_t	tid;
	int64_t		rank;
} gmi_scope[SEG_PLAN_ROWS];
static char gmi_strs[SEG_PLAN_STRS];
static _Atomic uint32_t gmi_nrows;
static _Atomic uint32_t gmi_plan_gen;	/* copies made: rates move */
/* Rows of blocks: some (odd) or none (even), counted up at each change
 * between the two: a thread's block stack is good while it is the same. */
static _Atomic uint32_t gmi_block_gen;

/*
 * Block names (GMI_DefineBlock), for "block NAME longer D": kept from the
 * first call on, plan or not (the call is rare), read without a lock:
 * an entry's name is published after its bytes, never freed (a block
 * named again gets a new copy).
 */
#define BNAMES	1024
static struct {
	_Atomic int64_t		bid;	/* bid + 1; 0: free */
	_Atomic(char *)		name;
} gmi_bnames[BNAMES];

/*
 * The calling thread's history for block and rate rows, its own memory
 * (no lock, no shared line): the blocks it is in, with their begin
 * times, kept while some row watches blocks (a block that began before
 * is not timed); per row, the current one-second window of a rate and
 * the rule it belongs to (its number + 1; 0: none), carried over to that
 * rule's row when the rows are copied again (a change of the control
 * words, or of other rules, does not restart it).
 */
#define BSTACK	32
static __thread struct {
	uint32_t	gen;
	uint32_t	bgen;
	uint32_t	depth;
	struct { int32_t bid; uint64_t ts; } stk[BSTACK];
	uint64_t	win[SEG_PLAN_ROWS];
	uint64_t	cnt[SEG_PLAN_ROWS];
	uint64_t	rule[SEG_PLAN_ROWS];
} hist;

/* The rate windows of this thread moved to the rows' new places: a row
 * of a rule that had one keeps it, any other starts empty. */
static void
rates_moved(uint32_t n)
{
	uint64_t win[SEG_PLAN_ROWS], cnt[SEG_PLAN_ROWS], rule;
	uint32_t i, j;

	for (i = 0; i < n; i++) {
		win[i] = cnt[i] = 0;
		if (gmi_rows[i].kind != SEG_ROW_RATE)
			continue;
		rule = (uint64_t)gmi_rows[i].rule + 1;
		for (j = 0; j < SEG_PLAN_ROWS; j++)
			if (hist.rule[j] == rule) {
				win[i] = hist.win[j];
				cnt[i] = hist.cnt[j];
				break;
			}
	}
	memset(hist.rule, 0, sizeof hist.rule);
	for (i = 0; i < n; i++) {
		hist.win[i] = win[i];
		hist.cnt[i] = cnt[i];
		if (gmi_rows[i].kind == SEG_ROW_RATE)
			hist.rule[i] = (uint64_t)gmi_rows[i].rule + 1;
	}
}

/* 1 if row r's comparisons stay inside the string area and its fields
 * and operators are ones the language has. */
static int
row_ok(const struct seg_plan_row *r)
{
	const struct seg_plan_insn *in;
	unsigned i;

	if (r->ninsn > SEG_PLAN_INSNS || REC_EID_BIT(r->eid) >= GMI_NTYPES ||
	    r->kind > SEG_ROW_RATE)
		return 0;
	if ((r->kind == SEG_ROW_BLOCK && (r->eid != REC_EID_BLOCK_END ||
	    r->ninsn != 2 || !r->insn[0].is_str)) ||
	    (r->kind == SEG_ROW_RATE && r->ninsn != 1))
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

/* The switches of switch row r (copied) that are this process's (its
 * pid, or 0: every process of the row's scope, the caller has checked
 * it), into sw (enum gmi_sw); the row's other switches are other
 * processes'. */
static void
row_switches(const struct seg_plan_row *r, uint32_t pid, struct gmi_sw *sw)
{
	const struct seg_plan_insn *in;
	uint32_t *w, b;
	unsigned i;

	if (r->ninsn > SEG_PLAN_INSNS)
		return;
	for (i = 0; i < r->ninsn; i++) {
		in = &r->insn[i];
		if ((in->len != pid && in->len != 0) || in->op > SEG_SW_ON)
			continue;
		if (in->field == SEG_SW_TYPE && in->value >= -REC_EID_BIAS &&
		    in->value < (int64_t)REC_EID_BITS - REC_EID_BIAS) {
			b = REC_EID_BIT(in->value);
			w = in->op == SEG_SW_ON ? sw->eid_on : sw->eid_off;
		} else if (in->field == SEG_SW_CLASS && in->value >= 0 &&
		    in->value <= 254) {
			b = (uint32_t)in->value;
			w = in->op == SEG_SW_ON ? sw->cls_on : sw->cls_off;
		} else
			continue;
		w[b / 32] |= 1u << (b % 32);
	}
}

/* Reads scope row r (copied; its strings in gmi_strs) into sc; 0, or -1
 * if it is not valid (then the row it limits is checked for every
 * process, as by a writer that does not know scope rows). */
static int
scope_of(const struct seg_plan_row *r, uint32_t pid, struct gmi_scope *sc)
{
	const struct seg_plan_insn *in;
	unsigned i;

	memset(sc, 0, sizeof *sc);
	if (r->ninsn > SEG_PLAN_INSNS)
		return -1;
	for (i = 0; i < r->ninsn; i++) {
		in = &r->insn[i];
		if (in->op != PLAN_EQ || in->is_str != (in->field ==
		    SEG_SC_NAME))
			return -1;
		switch (in->field) {
		case SEG_SC_PID:
			if (in->value != (int64_t)pid)
				sc->out = 1;
			break;
		case SEG_SC_THREAD:
			sc->has_tid = 1;
			sc->tid = (uint32_t)in->value;
			break;
		case SEG_SC_RANK:
			sc->has_rank = 1;
			sc->rank = in->value;
			break;
		case SEG_SC_NAME:
			if (in->value < 0 || (uint64_t)in->value + in->len >
			    SEG_PLAN_STRS)
				return -1;
			if (strnlen(gmi_name, sizeof gmi_name) != in->len ||
			    memcmp(gmi_name, gmi_strs + in->value, in->len) != 0)
				sc->out = 1;
			break;
		default:
			return -1;
		}
	}
	sc->narrow = sc->out || sc->has_tid || sc->has_rank;
	return 0;
}

/* 1 if the calling thread is in the scope sc. */
static int
in_scope(const struct gmi_scope *sc)
{
	return !sc->out && (!sc->has_tid || sc->tid == gmi_thr.tid) &&
	    (!sc->has_rank || sc->rank == atomic_load_explicit(&gmi_rank,
	    memory_order_relaxed));
}

/* If row *i + 1 of s (n rows) is the scope row of rule, steps *i over
 * it and reads it into sc (scope_of: 0, or -1 if not valid); 1 if no
 * scope row follows (sc cleared). */
static int
next_scope(const struct seg_hdr *s, uint32_t n, uint32_t *i, uint32_t rule,
	   uint32_t pid, struct gmi_scope *sc)
{
	struct seg_plan_row next;

	memset(sc, 0, sizeof *sc);
	if (*i + 1 >= n)
		return 1;
	memcpy(&next, &s->plan[*i + 1], sizeof next);
	if (next.kind != SEG_ROW_SCOPE || next.rule != rule)
		return 1;
	(*i)++;
	return scope_of(&next, pid, sc);
}

void
gmi_plan_refresh(const struct seg_hdr *s, uint32_t *watch, struct gmi_sw *sw)
{
	struct gmi_scope sc;
	int r;
	uint32_t n, i, k = 0, blocks = 0, pid = (uint32_t)getpid();

	n = *(const volatile uint32_t *)&s->plan_rows;
	if (n > SEG_PLAN_ROWS)
		n = 0;
	atomic_store_explicit(&gmi_nrows, 0, memory_order_release);
	memcpy(gmi_strs, s->plan_strs, sizeof gmi_strs);
	memset(sw, 0, sizeof *sw);
	for (i = 0; i < n; i++) {
		memcpy(&gmi_rows[k], &s->plan[i], sizeof gmi_rows[k]);
		gmi_slot[k] = i;
		if (gmi_rows[k].kind == SEG_ROW_SWITCH) {
			/* For every process of a scope: this one's if its
			 * pid, name and rank (now) are the scope's. */
			r = next_scope(s, n, &i, gmi_rows[k].rule, pid, &sc);
			if (r < 0 || (r == 0 && (sc.out || (sc.has_rank &&
			    sc.rank != atomic_load(&gmi_rank)))))
				continue;
			row_switches(&gmi_rows[k], pid, sw);
			continue;
		}
		if (!row_ok(&gmi_rows[k]))
			continue;
		/* Its scope, if the next row is one (not valid: none).
		 * Not ours: not checked at all, but a rate counts. */
		r = next_scope(s, n, &i, gmi_rows[k].rule, pid, &gmi_scope[k]);
		if (r < 0)
			memset(&gmi_scope[k], 0, sizeof gmi_scope[k]);
		else if (r == 0 && gmi_scope[k].out &&
		    gmi_rows[k].kind != SEG_ROW_RATE)
			continue;
		k++;
	}
	for (i = 0; i < REC_EID_BITS / 32; i++)
		watch[i] = 0;
	for (i = 0; i < k; i++) {
		watch[REC_EID_BIT(gmi_rows[i].eid) / 32] |=
		    1u << (REC_EID_BIT(gmi_rows[i].eid) % 32);
		if (gmi_rows[i].kind == SEG_ROW_BLOCK) {
			watch[REC_EID_BIT(REC_EID_BLOCK_BEGIN) / 32] |=
			    1u << (REC_EID_BIT(REC_EID_BLOCK_BEGIN) % 32);
			blocks = 1;
		}
	}
	if ((atomic_load(&gmi_block_gen) & 1) != blocks)
		atomic_fetch_add(&gmi_block_gen, 1);
	atomic_fetch_add_explicit(&gmi_plan_gen, 1, memory_order_relaxed);
	atomic_store_explicit(&gmi_nrows, k, memory_order_release);
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
			/* As the sign of the difference; NaN equals
			 * nothing. */
			memcpy(&d, sl->p[f], 8);
			if (d != d ? in->op != PLAN_NE :
			    !cmp_int(d < (double)in->value ? -1 :
			    d > (double)in->value, in->op, 0))
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
raise_fire(uint32_t row, int eid, uint64_t ts)
{
	const struct seg_plan_row *r = &gmi_rows[row];
	struct seg_fire *f = &gmi_seg->fire[gmi_slot[row]];
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
	/* The LM's firing thread, which waits for nothing else. */
	seg_fire_wake(gmi_seg);
}

/*
 * A rate row's record: counted for the host's second (ts / 1 s, the
 * second in the segment's clock that the LM put in insn[1]; one window
 * for every writer of the segment), in this thread first and
 * added to the row's shared count every `batch` records (and when the
 * second changes: the rest of a second past is dropped), by one
 * compare-and-swap on the row's firing slot (seg_fire.rate); the add
 * that takes the count past the rate is the match, one a second on the
 * host (doc/plans.md 4.4).
 */
static void
rate_count(uint32_t row, int eid, uint64_t ts)
{
	const struct seg_plan_row *r = &gmi_rows[row];
	struct seg_fire *f = &gmi_seg->fire[gmi_slot[row]];
	/* The host's second, in its clock (set by the LM). */
	uint64_t one = r->insn[1].value > 0 ? (uint64_t)r->insn[1].value :
	    1000000000u;
	uint64_t sec = ts / one, lim = (uint64_t)r->insn[0].value;
	uint64_t batch = lim / 64, tag, old, cnt, nw;

	if (batch < 1)
		batch = 1;
	if (batch > 64)
		batch = 64;
	if (hist.win[row] != sec + 1) {
		hist.win[row] = sec + 1;	/* 0: none yet */
		hist.cnt[row] = 0;
	}
	if (++hist.cnt[row] < batch)
		return;
	tag = ((uint64_t)(r->rule & 0xffff) << 48) | ((sec & 0xffff) << 32);
	old = atomic_load_explicit(&f->rate, memory_order_relaxed);
	do {
		/* A later second of this rule's: this one's count is late,
		 * dropped. */
		if ((old >> 48) == (r->rule & 0xffff) &&
		    (int16_t)(((old >> 32) & 0xffff) - (sec & 0xffff)) > 0) {
			hist.cnt[row] = 0;
			return;
		}
		/* Another rule's, or an older second's: this one starts. */
		cnt = (old & ~0xffffffffull) == tag ? old & 0xffffffffu : 0;
		nw = cnt + hist.cnt[row];
		if (nw > 0xffffffffu)
			nw = 0xffffffffu;
	} while (!atomic_compare_exchange_weak_explicit(&f->rate, &old,
	    tag | nw, memory_order_relaxed, memory_order_relaxed));
	hist.cnt[row] = 0;
	/* Out of the rule's scope: counted, not fired (the second's
	 * firing is lost, as mainmon would drop it). */
	if (cnt <= lim && nw > lim && (!gmi_scope[row].narrow ||
	    in_scope(&gmi_scope[row])))
		raise_fire(row, eid, ts);
}

void
gmi_plan_block_name(int bid, const char *name)
{
	uint32_t h = (uint32_t)bid * 2654435761u % BNAMES, i;
	int64_t want;
	char *copy;

	if ((copy = strdup(name)) == NULL)
		return;
	for (i = 0; i < BNAMES; i++, h = (h + 1) % BNAMES) {
		want = 0;
		if (atomic_load(&gmi_bnames[h].bid) == (int64_t)bid + 1 ||
		    atomic_compare_exchange_strong(&gmi_bnames[h].bid, &want,
		    (int64_t)bid + 1)) {
			atomic_store_explicit(&gmi_bnames[h].name, copy,
			    memory_order_release);
			return;
		}
	}
	free(copy);		/* full: that block is not watched by name */
}

/* The name of block bid, or NULL. */
static const char *
block_name(int32_t bid)
{
	uint32_t h = (uint32_t)bid * 2654435761u % BNAMES, i;
	int64_t b;

	for (i = 0; i < BNAMES; i++, h = (h + 1) % BNAMES) {
		b = atomic_load_explicit(&gmi_bnames[h].bid,
		    memory_order_relaxed);
		if (b == 0)
			return NULL;
		if (b == (int64_t)bid + 1)
			return atomic_load_explicit(&gmi_bnames[h].name,
			    memory_order_acquire);
	}
	return NULL;
}

/* A block begins or ends in this thread: its stack.  At an end, *dur
 * is how long the block lasted; 0 if its begin is not known. */
static void
block_edge(int eid, int32_t bid, uint64_t ts, uint64_t *dur)
{
	uint32_t k;

	*dur = 0;
	if (eid == REC_EID_BLOCK_BEGIN) {
		if (hist.depth < BSTACK) {
			hist.stk[hist.depth].bid = bid;
			hist.stk[hist.depth].ts = ts;
		}
		hist.depth++;
		return;
	}
	for (k = hist.depth < BSTACK ? hist.depth : BSTACK; k > 0; k--)
		if (hist.stk[k - 1].bid == bid) {
			*dur = ts - hist.stk[k - 1].ts;
			hist.depth = k - 1;
			return;
		}
}

void
gmi_plan_check(int eid, const struct gmi_type *ty, const char *rec,
	       uint32_t len)
{
	uint32_t n = atomic_load_explicit(&gmi_nrows, memory_order_acquire), i;
	uint32_t gen = atomic_load_explicit(&gmi_plan_gen, memory_order_relaxed);
	uint32_t bgen = atomic_load_explicit(&gmi_block_gen,
	    memory_order_relaxed);
	const struct seg_plan_row *r;
	const char *name;
	struct slots sl;
	uint64_t ts, dur = 0;
	int32_t bid = 0;
	int found = 0;

	if (gmi_seg == NULL)
		return;
	if (hist.gen != gen) {
		rates_moved(n);
		hist.gen = gen;
	}
	if (hist.bgen != bgen) {
		hist.depth = 0;
		hist.bgen = bgen;
	}
	memcpy(&ts, rec + offsetof(struct rec_hdr, ts), 8);
	if ((bgen & 1) && (eid == REC_EID_BLOCK_BEGIN ||
	    eid == REC_EID_BLOCK_END)) {
		if (len >= sizeof(struct rec_hdr) + 8)
			memcpy(&bid, rec + sizeof(struct rec_hdr), 4);
		block_edge(eid, bid, ts, &dur);
	}
	for (i = 0; i < n; i++) {
		r = &gmi_rows[i];
		if (r->eid != eid)
			continue;
		/* Another thread's or rank's row: not this one's to fire
		 * (a rate row counts first). */
		if (gmi_scope[i].narrow && r->kind != SEG_ROW_RATE &&
		    !in_scope(&gmi_scope[i]))
			continue;
		switch (r->kind) {
		case SEG_ROW_BLOCK:
			if (dur <= (uint64_t)r->insn[1].value ||
			    (name = block_name(bid)) == NULL ||
			    strlen(name) != r->insn[0].len ||
			    memcmp(name, gmi_strs + r->insn[0].value,
			    r->insn[0].len) != 0)
				break;
			raise_fire(i, eid, ts);
			break;
		case SEG_ROW_RATE:
			rate_count(i, eid, ts);
			break;
		default:
			if (!found) {
				find_slots(ty, rec, len, &sl);
				found = 1;
			}
			if (row_match(r, ty, &sl))
				raise_fire(i, eid, ts);
		}
	}
}
