/* SPDX-License-Identifier: MIT */
/* tr_tables.h: what the public reader keeps as it reads (grmtrace.c):
 * hosts, processes and threads, each in the order first seen and by key.
 * Memory grows with their number only. */
#ifndef GRM_TR_TABLES_H
#define GRM_TR_TABLES_H

#include <grm/trace.h>

#include "util/hmap.h"
#include "tr_read.h"

/* A table of individually allocated items (their addresses are handed
 * out), in the order first seen, with a map from keys to items.  A zeroed
 * table is empty. */
struct tr_table {
	void		**v;
	size_t		n;
	size_t		cap;
	struct hmap	ix;		/* (k1, k2) -> item */
};

struct tr_tables {
	struct tr_table	hosts;		/* struct grmtrace_host */
	struct tr_table	procs;		/* struct grmtrace_proc */
	struct tr_table	thrs;		/* struct grmtrace_thread */
};

/* What the internal event e changes in the tables: 0, or -1 (ENOMEM). */
int tr_tables_account(struct tr_tables *t, const struct tape_ev *e);
/* The clock model (*model: its #SYNC number) that put a record of node
 * at ts on mainmon's clock, and its error bound there (*bound): 1; 0 if
 * the file does not number its models (*model 0; *bound the latest
 * #SYNC's error_ns, 0 if none). */
int tr_tables_clock(const struct tr_tables *t, uint32_t node, uint64_t ts,
		    uint32_t *model, uint64_t *bound);
/* The item of (k1, k2), or NULL.  Hosts are keyed (node, 0), processes
 * (node, pid), threads (node << 32 | pid, tid). */
const void *tr_table_find(const struct tr_table *tb, uint64_t k1,
			  uint64_t k2);
/* Empties the tables and frees what they hold. */
void tr_tables_free(struct tr_tables *t);

#endif /* GRM_TR_TABLES_H */
