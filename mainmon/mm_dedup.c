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

static uint32_t
mark_hash(uint64_t seg, uint32_t node, uint32_t pid, uint32_t tid)
{
	uint64_t h = seg ^ ((uint64_t)node << 48) ^ ((uint64_t)pid << 20) ^
	    tid;

	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return (uint32_t)h;
}

static int
marks_grow(struct mm_marks *m)
{
	struct mm_marks n;
	uint32_t i, j;

	n.cap = m->cap ? m->cap * 2 : 1024;
	n.n = 0;
	n.v = calloc(n.cap, sizeof *n.v);
	if (n.v == NULL)
		return -1;
	for (i = 0; i < m->cap; i++) {
		if (m->v[i].seg_id == 0)
			continue;
		j = mark_hash(m->v[i].seg_id, m->v[i].node, m->v[i].pid,
		    m->v[i].tid) & (n.cap - 1);
		while (n.v[j].seg_id != 0)
			j = (j + 1) & (n.cap - 1);
		n.v[j] = m->v[i];
		n.n++;
	}
	free(m->v);
	*m = n;
	return 0;
}

static struct mm_mark *
mark_get(struct mm_marks *m, uint64_t seg, uint32_t node, uint32_t pid,
	 uint32_t tid)
{
	uint32_t j;

	if ((m->n + 1) * 2 > m->cap && marks_grow(m) != 0)
		return NULL;
	j = mark_hash(seg, node, pid, tid) & (m->cap - 1);
	while (m->v[j].seg_id != 0) {
		if (m->v[j].seg_id == seg && m->v[j].node == node &&
		    m->v[j].pid == pid && m->v[j].tid == tid)
			return &m->v[j];
		j = (j + 1) & (m->cap - 1);
	}
	memset(&m->v[j], 0, sizeof m->v[j]);
	m->v[j].seg_id = seg;
	m->v[j].node = node;
	m->v[j].pid = pid;
	m->v[j].tid = tid;
	m->n++;
	return &m->v[j];
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
		if (rec_valid_prefix(pc->data + skip, pc->len - skip) !=
		    pc->len - skip) {
			log_warn("%s: process %u: a piece sent again does not "
			    "match what was written: dropped",
			    c->node->host, pc->pid);
			return 1;
		}
		memmove(pc->data, pc->data + skip, pc->len - skip);
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
	struct mm_marks *m = &mm->marks;
	struct mm_marks keep = *m;
	uint32_t i;

	if (seg_id == 0 || m->cap == 0)
		return;
	/* Rebuild without that segment's marks. */
	m->v = NULL;
	m->cap = m->n = 0;
	for (i = 0; i < keep.cap; i++) {
		struct mm_mark *k;

		if (keep.v[i].seg_id == 0 || keep.v[i].seg_id == seg_id)
			continue;
		k = mark_get(m, keep.v[i].seg_id, keep.v[i].node,
		    keep.v[i].pid, keep.v[i].tid);
		if (k != NULL)
			*k = keep.v[i];
	}
	free(keep.v);
}

void
mm_dedup_free(struct mm *mm)
{
	free(mm->marks.v);
	memset(&mm->marks, 0, sizeof mm->marks);
}
