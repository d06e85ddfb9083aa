/* SPDX-License-Identifier: MIT */
/* gmi_table.c: a thread's table chunk: statistics mode (GRM_MODE=stats)
 * and the latest values of dormant sensors (layout in common/shm/stab.h). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "gmi_int.h"
#include "shm/stab.h"
#include "util/clock.h"

#define TAB_SLOTS	1024	/* hash slots; entries are far fewer */
#define TAB_DEPTH	128	/* deepest range nesting tracked */

struct gmi_frame {
	int64_t		key;
	int32_t		eid;
	uint64_t	start;
	uint64_t	child;	/* time spent in ranges nested inside */
};

/* The private side of a thread's table: where each entry is. */
struct gmi_table {
	int32_t			idx;
	char			*data;
	_Atomic uint64_t	*committed;
	uint32_t		off;
	uint32_t		cap;
	struct {
		int32_t		eid;
		uint8_t		kind;
		int64_t		key;
		uint32_t	off;	/* 0: empty (no entry sits at 0 but
					   the first, which has off + 1) */
	} slot[TAB_SLOTS];
	unsigned		nent;
	unsigned		depth;
	unsigned		lost_depth;	/* ranges past TAB_DEPTH */
	struct gmi_frame	stack[TAB_DEPTH];
};

static uint32_t
hash(int32_t eid, uint8_t kind, int64_t key)
{
	uint64_t h = (uint64_t)(uint32_t)eid * 0x9e3779b97f4a7c15ull ^
	    (uint64_t)key * 0xc2b2ae3d27d4eb4full ^ kind;

	return (uint32_t)(h >> 40) % TAB_SLOTS;
}

static struct gmi_table *
table_get(void)
{
	struct gmi_thread *t = &gmi_thr;
	struct gmi_table *tb = t->table;
	int idx;

	if (tb != NULL)
		return tb;
	tb = calloc(1, sizeof *tb);
	if (tb == NULL)
		return NULL;
	idx = gmi_take_chunk(SEG_KIND_TABLE);
	if (idx < 0) {
		free(tb);
		return NULL;
	}
	tb->idx = idx;
	tb->data = seg_data(&gmi_view, (uint32_t)idx);
	tb->committed = &seg_chunk(&gmi_view, (uint32_t)idx)->committed;
	tb->cap = gmi_view.chunk_size;
	t->table = tb;
	return tb;
}

void
gmi_table_release(struct gmi_thread *t)
{
	seg_release(&gmi_view, (uint32_t)t->table->idx);
	free(t->table);
	t->table = NULL;
}

/* The entry for (eid, kind, key) with payload bytes, made if need be. */
static struct stab_ent *
entry(struct gmi_table *tb, int32_t eid, uint8_t kind, int64_t key,
      uint32_t payload)
{
	uint32_t h = hash(eid, kind, key), i, len;
	struct stab_ent e;

	for (i = 0; i < TAB_SLOTS; i++, h = (h + 1) % TAB_SLOTS) {
		if (tb->slot[h].off == 0)
			break;
		if (tb->slot[h].eid == eid && tb->slot[h].kind == kind &&
		    tb->slot[h].key == key)
			return (struct stab_ent *)(tb->data +
			    tb->slot[h].off - 1);
	}
	len = (uint32_t)rec_align(sizeof e + payload);
	/* Keep a quarter of the slots empty: probes stay short. */
	if (i == TAB_SLOTS || tb->off + len > tb->cap ||
	    tb->nent >= TAB_SLOTS * 3 / 4)
		return NULL;
	tb->nent++;
	memset(&e, 0, sizeof e);
	e.len = (uint16_t)len;
	e.kind = kind;
	e.eid = eid;
	e.key = key;
	memset(tb->data + tb->off, 0, len);
	memcpy(tb->data + tb->off, &e, sizeof e);
	tb->slot[h].eid = eid;
	tb->slot[h].kind = kind;
	tb->slot[h].key = key;
	tb->slot[h].off = tb->off + 1;
	tb->off += len;
	atomic_store_explicit(tb->committed, tb->off, memory_order_release);
	return (struct stab_ent *)(tb->data + tb->slot[h].off - 1);
}

/* Sequence lock around an update of e's payload (single writer). */
static void
upd_begin(struct stab_ent *e)
{
	atomic_store_explicit(&e->seq, atomic_load_explicit(&e->seq,
	    memory_order_relaxed) + 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
}

static void
upd_end(struct stab_ent *e)
{
	atomic_store_explicit(&e->seq, atomic_load_explicit(&e->seq,
	    memory_order_relaxed) + 1, memory_order_release);
}

static int
table_full(int eid)
{
	atomic_fetch_add_explicit(&gmi_seg->lost, 1, memory_order_relaxed);
	gmi_thr.lost++;
	return gmi_error(GRM_ELOST, "statistics of event %d: no room in the "
	    "thread's table", eid);
}

static void
add_duration(struct rec_range *r, uint64_t d)
{
	double delta;

	r->count++;
	r->total += d;
	if (r->count == 1 || d < r->min)
		r->min = d;
	if (d > r->max)
		r->max = d;
	delta = (double)d - r->mean;
	r->mean += delta / (double)r->count;
	r->m2 += delta * ((double)d - r->mean);
}

int
gmi_stats_event(int eid, const struct gmi_type *ty, uint64_t ts, int64_t key)
{
	struct gmi_table *tb = table_get();
	struct gmi_frame *f;
	struct stab_ent *e;
	struct rec_range r;
	uint64_t cnt, d;
	int32_t reid;

	if (tb == NULL)
		return table_full(eid);
	/* Every event is counted by type; blocks by id too. */
	e = entry(tb, eid, STAB_COUNT, ty->key_field ? key : eid, 8);
	if (e == NULL)
		return table_full(eid);
	upd_begin(e);
	memcpy(&cnt, e + 1, 8);
	cnt++;
	memcpy(e + 1, &cnt, 8);
	upd_end(e);
	if (ty->range == GMI_R_BEGIN) {
		if (tb->depth == TAB_DEPTH) {
			tb->lost_depth++;
			return GRM_OK;
		}
		f = &tb->stack[tb->depth++];
		f->key = key;
		f->eid = eid;
		f->start = ts;
		f->child = 0;
		return GRM_OK;
	}
	if (ty->range != GMI_R_END)
		return GRM_OK;
	if (tb->lost_depth > 0) {
		tb->lost_depth--;
		return GRM_OK;
	}
	reid = ty->key_field ? REC_EID_BLOCK_BEGIN : ty->range_eid;
	/* Unwind to the matching begin: ranges left open inside it end
	 * with it (their time counts as its own). */
	while (tb->depth > 0 && (tb->stack[tb->depth - 1].key != key ||
	    tb->stack[tb->depth - 1].eid != reid))
		tb->depth--;
	if (tb->depth == 0)
		return gmi_error(GRM_EINVAL, "end of range %lld without a "
		    "begin", (long long)key);
	f = &tb->stack[--tb->depth];
	d = ts > f->start ? ts - f->start : 0;
	if (tb->depth > 0)
		tb->stack[tb->depth - 1].child += d;
	d = d > f->child ? d - f->child : 0;
	e = entry(tb, reid, STAB_RANGE, key, sizeof r);
	if (e == NULL)
		return table_full(eid);
	upd_begin(e);
	memcpy(&r, e + 1, sizeof r);
	add_duration(&r, d);
	memcpy(e + 1, &r, sizeof r);
	upd_end(e);
	return GRM_OK;
}

int
gmi_set_dormant(int eid, const struct rec_field *f, unsigned n)
{
	const struct gmi_type *ty;
	char buf[REC_MAX];
	struct gmi_table *tb;
	struct stab_ent *e;
	size_t len;

	if (!GMI_Traced())
		return GRM_OK;
	ty = gmi_type_of(eid);
	if (ty == NULL || atomic_load_explicit(&ty->st,
	    memory_order_acquire) == GMI_T_UNDEF)
		return gmi_error(GRM_EUNDEF, "dormant value of undefined "
		    "event %d", eid);
	len = gmi_build_fields(buf, eid, ty, REC_ATTR_PROBE, f, n,
	    gmi_now());
	if (len == 0)
		return GRM_EINVAL;
	if (len > STAB_VALUE_MAX)
		return gmi_error(GRM_E2BIG, "dormant value of event %d: %zu "
		    "bytes, at most %d", eid, len, STAB_VALUE_MAX);
	tb = table_get();
	if (tb == NULL)
		return table_full(eid);
	e = entry(tb, eid, STAB_VALUE, eid, STAB_VALUE_MAX);
	if (e == NULL)
		return table_full(eid);
	upd_begin(e);
	memcpy(e + 1, buf, len);
	upd_end(e);
	return GRM_OK;
}
