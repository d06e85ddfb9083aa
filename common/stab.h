/* stab.h: a thread's table chunk: statistics-mode counters and the latest
 * values of dormant sensors, updated in place by the thread and read whole
 * by the Local Monitor at each collection. */
#ifndef GRM_STAB_H
#define GRM_STAB_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

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
	STAB_COUNT = 1,		/* u64 events */
	STAB_RANGE = 2,		/* struct stab_range: exclusive durations */
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

/* Durations in ns; mean and m2 by Welford's method (m2 / count is the
 * variance). */
struct stab_range {
	uint64_t	count;
	uint64_t	total;
	uint64_t	min;
	uint64_t	max;
	double		mean;
	double		m2;
};

#define STAB_VALUE_MAX	1024	/* largest record a value entry keeps */

/*
 * The record the LM makes of a COUNT or RANGE entry (class META,
 * attribute REC_ATTR_STATS, the entry's eid): eight 8-byte slots,
 *	u64 kind, i64 key, u64 count, u64 total, u64 min, u64 max,
 *	f64 mean, f64 m2
 * (a COUNT entry has total = min = max = 0 and mean = m2 = 0).
 */
#define STAB_REC_LEN	(16 + 8 * 8)

/*
 * Reads the table in copy[0..len) and calls
 *	emit(arg, rec, rec_len)
 * with one record per well-formed entry: a statistics record for COUNT and
 * RANGE entries, and, if values is set, the stored record of each VALUE
 * entry.  shared, if not NULL, is the live table the copy was taken from:
 * an entry whose sequence number is odd, or differs there now, is read
 * again from it (a few times, then skipped).  ts stamps the statistics
 * records.  Returns the number of records emitted, or -1 if emit failed.
 */
typedef int (*stab_emit_fn)(void *arg, const void *rec, size_t len);
int stab_read(const void *copy, const void *shared, size_t len, int values,
	      uint64_t ts, stab_emit_fn emit, void *arg);

/* Decodes a statistics record made by stab_read; returns 0 or -1. */
struct stab_stat {
	int32_t			eid;
	uint32_t		kind;
	int64_t			key;
	struct stab_range	r;
};
int stab_parse(const void *rec, size_t len, struct stab_stat *out);

#endif /* GRM_STAB_H */
