/* SPDX-License-Identifier: MIT */
/* stab.c: reading a thread's table chunk (see stab.h). */
#include <string.h>

#include "rec/rec.h"
#include "shm/stab.h"

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
	unsigned char rec[REC_STATS_LEN];
	struct rec_stats st;
	struct stab_ent e;
	struct rec_range r;
	struct rec_hdr h;
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
		st.eid = e.eid;
		st.kind = e.kind;
		st.key = e.key;
		st.r = r;
		rec_build_stats(rec, &st, ts);
		if (emit(arg, rec, sizeof rec) != 0)
			return -1;
		n++;
	}
	return n;
}
