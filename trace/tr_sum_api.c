/* SPDX-License-Identifier: MIT */
/* tr_sum_api.c: <grm/trace.h>'s summary sidecar: grmtrace_index (a trace
 * read and summarised with mainmon's code, tr_sum.c) and the loaded
 * summary's accessors. */
#pragma GCC visibility push(default)
#include <grm/trace.h>
#pragma GCC visibility pop

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tr_int.h"
#include "tr_sum.h"

_Static_assert(sizeof(struct grmtrace_sum_cell) == sizeof(struct sum_cell) &&
    offsetof(struct grmtrace_sum_cell, state) ==
    offsetof(struct sum_cell, st) &&
    offsetof(struct grmtrace_sum_cell, ns) == offsetof(struct sum_cell, ns),
    "a summary cell as the library keeps it");

struct grmtrace_sum {
	struct tr_sum	s;
};

int
grmtrace_index(const char *path, char *err, size_t errlen)
{
	struct tape_ev ev;
	struct tape_r *r;
	struct tr_sum *s;
	const char *why;
	int rc;

	if ((r = tape_ropen(path, &why)) == NULL) {
		snprintf(err, errlen, "%s: %s", path, why);
		return -1;
	}
	if (tape_rformat(r) != GRMTRACE_FMT_BIN) {
		snprintf(err, errlen, "%s: a summary is made of binary traces "
		    "only", path);
		tape_rclose(r);
		return -1;
	}
	if ((s = malloc(sizeof *s)) == NULL) {
		snprintf(err, errlen, "out of memory");
		tape_rclose(r);
		return -1;
	}
	sum_init(s);
	while ((rc = tape_next(r, &ev)) == 1) {
		if (ev.kind != TAPE_RECORD)
			continue;
		s->foff = r->foff;
		if (sum_rec(s, ev.ts, ev.node, ev.pid, ev.tid, ev.eid,
		    ev.eid == -1 && ev.n > 0 && ev.f[0].kind != REC_K_STR ?
		    ev.f[0].v.i : 0) != 0) {
			snprintf(err, errlen, "out of memory");
			rc = -2;
			break;
		}
	}
	if (rc == -1)
		snprintf(err, errlen, "%s: %s", path, tape_rerror(r));
	else if (rc == 0 && sum_write(s, path, tr_tell(r)) != 0) {
		snprintf(err, errlen, "%s.idx: cannot write it: %s", path,
		    strerror(errno));
		rc = -1;
	}
	tape_rclose(r);
	sum_free(s);
	free(s);
	return rc == 0 ? 0 : -1;
}

struct grmtrace_sum *
grmtrace_sum_open(const char *path, char *err, size_t errlen)
{
	struct grmtrace_sum *g;
	int e;

	if ((g = malloc(sizeof *g)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (sum_load(&g->s, path, err, errlen) != 0) {
		e = errno;
		free(g);
		errno = e;
		return NULL;
	}
	return g;
}

void
grmtrace_sum_close(struct grmtrace_sum *g)
{
	if (g == NULL)
		return;
	sum_free(&g->s);
	free(g);
}

void
grmtrace_sum_get_info(const struct grmtrace_sum *g,
		      struct grmtrace_sum_info *i)
{
	*i = (struct grmtrace_sum_info){ g->s.t0, UINT64_C(1) << g->s.shift,
	    g->s.nb, (uint32_t)g->s.nrow, (uint32_t)g->s.nstate,
	    g->s.records, g->s.tlast, g->s.covers };
}

int
grmtrace_sum_row(const struct grmtrace_sum *g, size_t i, uint32_t *node,
		 uint32_t *pid, uint32_t *tid)
{
	if (i >= g->s.nrow)
		return -1;
	*node = g->s.row[i].node;
	*pid = g->s.row[i].pid;
	*tid = g->s.row[i].tid;
	return 0;
}

const struct grmtrace_sum_cell *
grmtrace_sum_cells(const struct grmtrace_sum *g, size_t i)
{
	if (i >= g->s.nrow)
		return NULL;
	return (const struct grmtrace_sum_cell *)(const void *)g->s.row[i].c;
}

int64_t
grmtrace_sum_state(const struct grmtrace_sum *g, size_t i)
{
	return i < g->s.nstate ? g->s.state[i] : 0;
}

uint64_t
grmtrace_sum_offset(const struct grmtrace_sum *g, size_t b)
{
	return b < g->s.nb ? g->s.off[b] : UINT64_MAX;
}
