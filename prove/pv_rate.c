/* SPDX-License-Identifier: MIT */
/* pv_rate.c: the load meter's buckets: events of each process over time,
 * in a fixed number of buckets whose width doubles as the time grows. */
#include <stdlib.h>
#include <string.h>

#include "pv.h"

static void
proc_free(void *v)
{
	free(((struct pv_rate_proc *)v)->c);
}

/* Doubles the width: bucket i takes 2i and 2i + 1. */
static void
widen(struct pv_rate *r)
{
	struct pv_rate_proc *p;
	uint32_t it = 0;
	unsigned i;

	while ((p = pv_map_next(&r->procs, &it)) != NULL) {
		for (i = 0; i < r->n; i++)
			p->c[i] = (2 * i < r->n ? p->c[2 * i] : 0) +
			    (2 * i + 1 < r->n ? p->c[2 * i + 1] : 0);
	}
	r->width *= 2;
}

int
pv_rate_add(struct pv_rate *r, uint32_t node, uint32_t pid, uint64_t ts)
{
	struct pv_rate_proc *p;
	uint64_t b;

	if (r->n == 0)
		return 0;
	if (!r->started) {
		if (r->width == 0) {
			r->origin = ts;
			r->width = 1;
		}
		r->started = 1;
	}
	if ((p = pv_map_get(&r->procs, node, pid, sizeof *p)) == NULL)
		return -1;
	if (p->c == NULL) {
		if ((p->c = calloc(r->n, sizeof *p->c)) == NULL)
			return -1;
		p->node = node;
		p->pid = pid;
	}
	b = ts > r->origin ? ts - r->origin : 0;
	while (b / r->width >= r->n && r->width <= UINT64_MAX / 2)
		widen(r);
	b /= r->width;
	p->c[b < r->n ? b : r->n - 1]++;
	return 0;
}

void
pv_rate_free(struct pv_rate *r)
{
	pv_map_free(&r->procs, proc_free);
}
