/* SPDX-License-Identifier: MIT */
/* mm_dedup.c: dropping records an LM sends a second time.
 *
 * An LM consumes its segment's data only when mainmon acknowledges it.
 * If the LM dies, or the connection breaks, between mainmon writing a
 * collection and the LM reading the ACK, the next LM (or the same one,
 * reconnected) sends that data again.  Per segment and thread, mainmon
 * remembers the last (session, chunk seq, end offset) written; a piece at
 * or before it is dropped, or trimmed to what follows it.  A thread's
 * pieces come in (session, seq, offset) order, so one mark per thread is
 * enough. */
#include <stdlib.h>
#include <string.h>

#include "mm.h"
#include "rec/rec.h"
#include "util/log.h"

/* What a mark is kept by: no padding (hmap compares the bytes). */
struct mark_key {
	uint64_t	seg_id;
	uint32_t	node;
	uint32_t	pid;
	uint32_t	tid;
	uint32_t	zero;
};

static uint32_t
mark_hash(const void *key)
{
	struct mark_key k;
	uint64_t h;

	memcpy(&k, key, sizeof k);
	h = k.seg_id ^ ((uint64_t)k.node << 48) ^ ((uint64_t)k.pid << 20) ^
	    k.tid;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return (uint32_t)h;
}

static const struct hmap_type marks_type = {
	sizeof(struct mark_key), sizeof(struct mm_mark), 1024, mark_hash
};

static struct mm_mark *
mark_get(struct mm_marks *m, uint64_t seg, uint32_t node, uint32_t pid,
	 uint32_t tid)
{
	struct mark_key k = { seg, node, pid, tid, 0 };

	if (m->map.type == NULL)
		hmap_init(&m->map, &marks_type);
	return hmap_put(&m->map, &k, NULL);
}

int
mm_dedup(struct mm *mm, struct mm_conn *c, struct mm_piece *pc)
{
	struct mm_mark *k;
	uint64_t end = (uint64_t)pc->off + pc->len, skip;

	/* Tables and the LM's own loss records are not consumed data:
	 * statistics are latest-value, and a loss is reported once. */
	if (pc->seq == 0 || pc->seg_id == 0)
		return 0;
	k = mark_get(&mm->marks, pc->seg_id, c->node->id, pc->pid, pc->tid);
	if (k == NULL)
		return -1;
	if (k->seq != 0 && (pc->session < k->session ||
	    (pc->session == k->session && pc->seq < k->seq) ||
	    (pc->session == k->session && pc->seq == k->seq &&
	    end <= k->end))) {
		mm->dup_bytes += pc->len;
		return 1;
	}
	if (k->seq != 0 && pc->session == k->session && pc->seq == k->seq &&
	    pc->off < k->end) {
		/* The same chunk's bytes are the same records: what follows
		 * the mark starts on a record. */
		skip = k->end - pc->off;
		mm_piece_decode(pc, NULL);
		if (rec_valid_prefix(pc->rec + skip, pc->len - skip) !=
		    pc->len - skip) {
			log_warn("%s: process %u: a piece sent again does not "
			    "match what was written: dropped",
			    c->node->host, pc->pid);
			return 1;
		}
		memmove(pc->rec, pc->rec + skip, pc->len - skip);
		pc->dense = NULL;	/* rare: its D frames encoded again */
		pc->seg = NULL;
		pc->len -= (uint32_t)skip;
		pc->off += (uint32_t)skip;
		mm->dup_bytes += skip;
	}
	k->session = pc->session;
	k->seq = pc->seq;
	k->end = end;
	return 0;
}

void
mm_dedup_forget(struct mm *mm, uint64_t seg_id)
{
	struct hmap *m = &mm->marks.map;
	struct mark_key k;
	const void *key;
	struct mm_mark *v;
	uint32_t it = 0;

	if (seg_id == 0)
		return;
	while ((v = hmap_next(m, &it, &key)) != NULL) {
		memcpy(&k, key, sizeof k);
		if (k.seg_id == seg_id)
			hmap_del_value(m, v);
	}
}

void
mm_dedup_free(struct mm *mm)
{
	hmap_free(&mm->marks.map);
}
