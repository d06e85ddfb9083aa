/* stab.c: reading a thread's table chunk (see stab.h). */
#include <string.h>

#include "rec.h"
#include "stab.h"

/* Copies entry bytes [off, off+n) consistently into out; 0 or -1. */
static int
stable_copy(const unsigned char *copy, const unsigned char *shared,
	    size_t off, size_t n, unsigned char *out)
{
	uint32_t s0, s1;
	int tries;

	memcpy(&s0, copy + off, 4);
	memcpy(out, copy + off, n);
	if (shared == NULL)
		return (s0 & 1) ? -1 : 0;
	for (tries = 0; tries < 4; tries++) {
		atomic_thread_fence(memory_order_acquire);
		s1 = atomic_load_explicit(
		    (_Atomic uint32_t *)(void *)(shared + off),
		    memory_order_acquire);
		if (s1 == s0 && !(s0 & 1))
			return 0;
		s0 = s1;
		memcpy(out, shared + off, n);
	}
	return -1;
}

int
stab_read(const void *copy, const void *shared, size_t len, int values,
	  uint64_t ts, stab_emit_fn emit, void *arg)
{
	const unsigned char *b = copy;
	unsigned char ent[sizeof(struct stab_ent) + STAB_VALUE_MAX];
	unsigned char rec[STAB_REC_LEN];
	struct stab_ent e;
	struct stab_range r;
	struct rec_hdr h;
	uint64_t slot[8];
	size_t off = 0, plen;
	int n = 0;

	while (off + sizeof e <= len) {
		memcpy(&e, b + off, sizeof e);
		if (e.len < sizeof e || e.len % 8 != 0 || e.len > len - off ||
		    e.len > sizeof ent)
			break;
		plen = e.len - sizeof e;
		if (stable_copy(b, shared, off, e.len, ent) != 0) {
			off += e.len;
			continue;
		}
		memcpy(&e, ent, sizeof e);
		off += e.len;
		memset(&r, 0, sizeof r);
		switch (e.kind) {
		case STAB_COUNT:
			if (plen < 8)
				continue;
			memcpy(&r.count, ent + sizeof e, 8);
			break;
		case STAB_RANGE:
			if (plen < sizeof r)
				continue;
			memcpy(&r, ent + sizeof e, sizeof r);
			break;
		case STAB_VALUE:
			if (!values || plen < sizeof h ||
			    rec_valid_prefix(ent + sizeof e, plen) == 0)
				continue;
			memcpy(&h, ent + sizeof e, sizeof h);
			if (h.eid != e.eid || h.len > plen ||
			    h.cls == REC_CLASS_META)
				continue;
			if (emit(arg, ent + sizeof e, h.len) != 0)
				return -1;
			n++;
			continue;
		default:
			continue;
		}
		slot[0] = e.kind;
		memcpy(&slot[1], &e.key, 8);
		slot[2] = r.count;
		slot[3] = r.total;
		slot[4] = r.min;
		slot[5] = r.max;
		memcpy(&slot[6], &r.mean, 8);
		memcpy(&slot[7], &r.m2, 8);
		rec_put_hdr(rec, STAB_REC_LEN, REC_CLASS_META, REC_ATTR_STATS,
		    e.eid, ts);
		memcpy(rec + sizeof(struct rec_hdr), slot, sizeof slot);
		if (emit(arg, rec, sizeof rec) != 0)
			return -1;
		n++;
	}
	return n;
}

int
stab_parse(const void *rec, size_t len, struct stab_stat *out)
{
	const unsigned char *b = rec;
	struct rec_hdr h;
	uint64_t slot[8];

	if (len < STAB_REC_LEN)
		return -1;
	memcpy(&h, b, sizeof h);
	if (h.cls != REC_CLASS_META || h.attr != REC_ATTR_STATS ||
	    h.len < STAB_REC_LEN)
		return -1;
	memcpy(slot, b + sizeof h, sizeof slot);
	if (slot[0] != STAB_COUNT && slot[0] != STAB_RANGE)
		return -1;
	out->eid = h.eid;
	out->kind = (uint32_t)slot[0];
	memcpy(&out->key, &slot[1], 8);
	out->r.count = slot[2];
	out->r.total = slot[3];
	out->r.min = slot[4];
	out->r.max = slot[5];
	memcpy(&out->r.mean, &slot[6], 8);
	memcpy(&out->r.m2, &slot[7], 8);
	return 0;
}
