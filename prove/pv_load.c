/* SPDX-License-Identifier: MIT */
/* pv_load.c: counting a trace's events per process and interval (the load
 * meter's numbers, pv_load.h). */
#include <stdlib.h>
#include <string.h>

#include "pv_load.h"

void
pv_load_init(struct pv_load *l, uint64_t interval)
{
	memset(l, 0, sizeof *l);
	l->interval = interval != 0 ? interval : 1;
}

/* Room for n buckets in every process's array. */
static int
grow_buckets(struct pv_load *l, size_t n)
{
	size_t cap = l->cbuckets != 0 ? l->cbuckets : 64, i;
	uint64_t *c;

	while (cap < n)
		cap *= 2;
	for (i = 0; i < l->nprocs; i++) {
		if ((c = realloc(l->procs[i].count, cap * sizeof *c)) == NULL)
			return -1;
		memset(c + l->cbuckets, 0, (cap - l->cbuckets) * sizeof *c);
		l->procs[i].count = c;
	}
	l->cbuckets = cap;
	return 0;
}

void
pv_load_cap(struct pv_load *l, uint64_t t0, size_t max)
{
	l->t0 = t0;
	l->started = 1;
	l->max = max != 0 ? max : 1;
}

/* Doubles the interval: bucket i takes 2i and 2i + 1. */
static void
widen(struct pv_load *l)
{
	size_t i, b;

	for (i = 0; i < l->nprocs; i++)
		for (b = 0; b < l->nbuckets; b++)
			l->procs[i].count[b] =
			    (2 * b < l->nbuckets ? l->procs[i].count[2 * b] : 0) +
			    (2 * b + 1 < l->nbuckets ?
			    l->procs[i].count[2 * b + 1] : 0);
	l->nbuckets = (l->nbuckets + 1) / 2;
	l->interval *= 2;
}

int
pv_load_add(struct pv_load *l, uint32_t node, uint32_t pid, uint64_t ts)
{
	struct pv_load_proc *p;
	uint64_t b;
	size_t *ix;

	if (!l->started) {
		l->t0 = ts;
		l->started = 1;
	}
	b = ts > l->t0 ? (ts - l->t0) / l->interval : 0;
	while (l->max != 0 && b >= l->max && l->interval <= UINT64_MAX / 2) {
		widen(l);
		b = (ts - l->t0) / l->interval;
	}
	if (l->max != 0 && b >= l->max)
		b = l->max - 1;
	if (b >= PV_LOAD_MAX_BUCKETS)
		return -1;
	if (b >= l->cbuckets && grow_buckets(l, (size_t)b + 1) != 0)
		return -1;
	if ((ix = pv_map_get(&l->ix, node, pid, sizeof *ix)) == NULL)
		return -1;
	if (*ix == 0) {
		if (l->nprocs == l->cprocs && (l->procs = pv_grow(l->procs,
		    &l->cprocs, l->nprocs, sizeof *l->procs)) == NULL)
			return -1;
		p = &l->procs[l->nprocs];
		memset(p, 0, sizeof *p);
		if ((p->count = calloc(l->cbuckets, sizeof *p->count)) ==
		    NULL)
			return -1;
		p->node = node;
		p->pid = pid;
		*ix = ++l->nprocs;
	}
	p = &l->procs[*ix - 1];
	p->count[b]++;
	p->total++;
	if (b + 1 > l->nbuckets)
		l->nbuckets = (size_t)b + 1;
	l->records++;
	return 0;
}

double
pv_load_rate(const struct pv_load *l, size_t i, size_t b)
{
	if (i >= l->nprocs || b >= l->nbuckets)
		return 0;
	return (double)l->procs[i].count[b] * 1e9 / (double)l->interval;
}

void
pv_load_free(struct pv_load *l)
{
	size_t i;

	for (i = 0; i < l->nprocs; i++)
		free(l->procs[i].count);
	free(l->procs);
	pv_map_free(&l->ix, NULL);
	memset(l, 0, sizeof *l);
}
