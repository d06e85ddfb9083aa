/* SPDX-License-Identifier: MIT */
/* stab.h: a thread's table chunk: statistics-mode counters and the latest
 * values of dormant sensors, updated in place by the thread and read whole
 * by the Local Monitor at each collection. */
#ifndef GRM_STAB_H
#define GRM_STAB_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "rec/rec.h"

/*
 * A table chunk (SEG_KIND_TABLE) is a sequence of entries, appended by the
 * owning thread and published by the chunk's `committed`, like records.
 * An entry is never moved or removed; its payload changes in place under
 * its own sequence lock: the owner makes `seq` odd, writes, makes it even
 * again.  A reader that finds `seq` odd, or changed across its copy, reads
 * again.  Every field is untrusted: the reader checks lengths and kinds.
 *
 *	0  u32 seq	sequence lock
 *	4  u16 len	entry bytes, header included, multiple of 8
 *	6  u8  kind	STAB_*
 *	7  u8  pad
 *	8  i32 eid	event id (a range's begin type for STAB_RANGE)
 *	12 u32 pad
 *	16 i64 key	block id for predefined blocks, else eid
 *	24 ...		payload
 */
enum {
	STAB_COUNT = REC_STATS_COUNT,	/* u64 events */
	STAB_RANGE = REC_STATS_RANGE,	/* struct rec_range: exclusive
					   durations */
	STAB_VALUE = 3		/* a whole record: a dormant sensor's latest */
};

struct stab_ent {
	_Atomic uint32_t	seq;
	uint16_t		len;
	uint8_t			kind;
	uint8_t			pad;
	int32_t			eid;
	uint32_t		pad2;
	int64_t			key;
};
_Static_assert(sizeof(struct stab_ent) == 24, "stab_ent layout");

#define STAB_VALUE_MAX	1024	/* largest record a value entry keeps */

/*
 * Reads the table in copy[0..len) and calls
 *	emit(arg, rec, rec_len)
 * with one record per well-formed entry: a statistics record (rec.h) for
 * COUNT and RANGE entries, and, if values is set, the stored record of
 * each VALUE entry.  shared, if not NULL, is the live table the copy was taken from:
 * an entry whose sequence number is odd, or differs there now, is read
 * again from it (a few times, then skipped).  ts stamps the statistics
 * records.  Returns the number of records emitted, or -1 if emit failed.
 */
typedef int (*stab_emit_fn)(void *arg, const void *rec, size_t len);
int stab_read(const void *copy, const void *shared, size_t len, int values,
	      uint64_t ts, stab_emit_fn emit, void *arg);

#endif /* GRM_STAB_H */
