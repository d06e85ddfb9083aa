/* SPDX-License-Identifier: MIT */
/* pv_stmode.c: prove stats: the statistics-mode lines (#STATS) added up
 * per process, and the runtime control commands (#CONTROL). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pv.h"

struct scnt {
	int32_t		eid;
	uint64_t	n;
};

struct srng {
	int32_t		eid;
	int64_t		key;
	uint64_t	n;
	uint64_t	total;
	uint64_t	min;
	uint64_t	max;
	double		mean;
	double		m2;
};

struct sproc {
	uint32_t	node;
	uint32_t	pid;
	struct pv_map	cnt;	/* (eid, 0) */
	struct pv_map	rng;	/* (eid, key) */
};

static uint64_t
sat_add(uint64_t a, uint64_t b)
{
	return b > UINT64_MAX - a ? UINT64_MAX : a + b;
}

/* The durations of a #STATS range line, ns: its fields key, total_ns,
 * min_ns, max_ns, mean_ns and m2 (doc/formats.md 1.3). */
struct range {
	int64_t		key;
	uint64_t	total;
	uint64_t	min;
	uint64_t	max;
	double		mean;
	double		m2;
};

/* Adds n ranges with the statistics x to g (doc/formats.md, #STATS). */
static void
merge(struct srng *g, uint64_t n, const struct range *x)
{
	double na = (double)g->n, nb = (double)n, d;

	if (n == 0)
		return;
	if (g->n == 0) {
		g->n = n;
		g->total = x->total;
		g->min = x->min;
		g->max = x->max;
		g->mean = x->mean;
		g->m2 = x->m2;
		return;
	}
	d = x->mean - g->mean;
	g->mean += d * nb / (na + nb);
	g->m2 += x->m2 + d * d * na * nb / (na + nb);
	g->n = sat_add(g->n, n);
	g->total = sat_add(g->total, x->total);
	if (x->min < g->min)
		g->min = x->min;
	if (x->max > g->max)
		g->max = x->max;
}

static int
add_ctl(struct pv_stmode *s, const struct grmtrace_ev *ev)
{
	struct pv_ctl *c;

	if ((c = pv_grow(s->ctl, &s->cctl, s->nctl, sizeof *c)) == NULL)
		return -1;
	s->ctl = c;
	c = &s->ctl[s->nctl];
	if ((c->cmd = malloc(ev->str_len + 1)) == NULL)
		return -1;
	memcpy(c->cmd, ev->str, ev->str_len + 1);
	c->len = ev->str_len;
	c->ts = ev->ts;
	s->nctl++;
	return 0;
}

int
pv_stmode_ev(struct pv_stmode *s, const struct grmtrace_ev *ev)
{
	struct range x;
	struct sproc *p;
	struct scnt *c;
	struct srng *g;

	if (ev->kind == GRMTRACE_CONTROL)
		return add_ctl(s, ev);
	if (ev->kind != GRMTRACE_STATS_COUNT &&
	    ev->kind != GRMTRACE_STATS_RANGE)
		return 0;
	if ((p = pv_map_get(&s->procs, ev->node, ev->pid, sizeof *p)) == NULL)
		return -1;
	p->node = ev->node;
	p->pid = ev->pid;
	s->lines++;
	if (ev->kind == GRMTRACE_STATS_COUNT) {
		if ((c = pv_map_get(&p->cnt, (uint32_t)ev->eid, 0,
		    sizeof *c)) == NULL)
			return -1;
		c->eid = ev->eid;
		c->n = sat_add(c->n, ev->count);
		return 0;
	}
	x = (struct range){ ev->f[4].v.i, ev->f[6].v.u, ev->f[7].v.u,
	    ev->f[8].v.u, ev->f[9].v.d, ev->f[10].v.d };
	if ((g = pv_map_get(&p->rng, (uint32_t)ev->eid, (uint64_t)x.key,
	    sizeof *g)) == NULL)
		return -1;
	g->eid = ev->eid;
	g->key = x.key;
	merge(g, ev->count, &x);
	return 0;
}

static int
by_proc(const void *a, const void *b)
{
	const struct sproc *x = *(const struct sproc *const *)a;
	const struct sproc *y = *(const struct sproc *const *)b;

	return x->node != y->node ? pv_cmp(x->node, y->node) :
	    pv_cmp(x->pid, y->pid);
}

static int
by_eid(const void *a, const void *b)
{
	const struct scnt *x = *(const struct scnt *const *)a;
	const struct scnt *y = *(const struct scnt *const *)b;

	return pv_cmp(x->eid, y->eid);
}

static int
by_eid_key(const void *a, const void *b)
{
	const struct srng *x = *(const struct srng *const *)a;
	const struct srng *y = *(const struct srng *const *)b;

	return x->eid != y->eid ? pv_cmp(x->eid, y->eid) :
	    pv_cmp(x->key, y->key);
}

/* The description of eid for (node, pid), its format if it has none; a
 * predefined type's own if the trace does not define it. */
static const char *
type_name(const struct grmtrace *r, uint32_t node, uint32_t pid, int32_t eid)
{
	const struct grmtrace_def *d = grmtrace_def_for(r, node, pid, eid);

	if (d == NULL && (d = grmtrace_predef(eid)) == NULL)
		return NULL;
	return d->description[0] != '\0' ? d->description : d->format;
}

static void
proc_line(const struct sproc *p, const struct pv_msgs *g)
{
	const struct pv_proc *q = pv_proc(g, p->node, p->pid);

	printf("process node %" PRIu32 " pid %" PRIu32, p->node, p->pid);
	if (q != NULL && q->has_rank) {
		printf(": ");
		pv_put_name(q->name, q->name_len);
		printf(" rank %" PRId64, q->rank);
	}
	if (q != NULL && q->prog != NULL) {
		printf(", program ");
		pv_put_name(q->prog, q->prog_len);
	}
	putchar('\n');
}

static int
print_counts(const struct sproc *p, const struct grmtrace *r)
{
	struct scnt **c;
	const char *nm;
	size_t i;

	if (pv_map_n(&p->cnt) == 0)
		return 0;
	if ((c = (struct scnt **)pv_map_values(&p->cnt)) == NULL)
		return -1;
	qsort(c, pv_map_n(&p->cnt), sizeof *c, by_eid);
	printf("  event counts\n  %11s %20s  %s\n", "eid", "count", "name");
	for (i = 0; i < pv_map_n(&p->cnt); i++) {
		printf("  %11" PRId32 " %20" PRIu64 "  ", c[i]->eid, c[i]->n);
		if ((nm = type_name(r, p->node, p->pid, c[i]->eid)) != NULL)
			pv_put_name(nm, strlen(nm));
		putchar('\n');
	}
	free(c);
	return 0;
}

static int
print_ranges(const struct sproc *p, const struct grmtrace *r,
	     const char *(*block_name)(void *, int64_t, size_t *), void *arg)
{
	char t1[32], t2[32], t3[32];
	size_t i, len, n = 0;
	const char *nm;
	struct srng **g;
	double sd;

	if ((g = (struct srng **)pv_map_values(&p->rng)) == NULL)
		return -1;
	/* Lines of no range say nothing. */
	for (i = 0; i < pv_map_n(&p->rng); i++)
		if (g[i]->n > 0)
			g[n++] = g[i];
	qsort(g, n, sizeof *g, by_eid_key);
	if (n > 0)
		printf("  ranges (exclusive time, seconds)\n  %11s %20s %12s "
		    "%16s %16s %16s %14s %14s  %s\n", "eid", "key", "count",
		    "total", "min", "max", "mean", "stddev", "name");
	for (i = 0; i < n; i++) {
		sd = sqrt(g[i]->m2 / (double)g[i]->n);
		printf("  %11" PRId32 " %20" PRId64 " %12" PRIu64 " %16s %16s "
		    "%16s %14.9f %14.9f  ", g[i]->eid, g[i]->key, g[i]->n,
		    pv_secs(t1, sizeof t1, g[i]->total),
		    pv_secs(t2, sizeof t2, g[i]->min),
		    pv_secs(t3, sizeof t3, g[i]->max), g[i]->mean / 1e9,
		    sd / 1e9);
		nm = NULL;
		if (g[i]->eid == GRMTRACE_EID_BLOCK_BEGIN && block_name != NULL)
			nm = block_name(arg, g[i]->key, &len);
		else if (g[i]->eid != GRMTRACE_EID_BLOCK_BEGIN &&
		    (nm = type_name(r, p->node, p->pid, g[i]->eid)) != NULL)
			len = strlen(nm);
		if (nm != NULL)
			pv_put_name(nm, len);
		else if (g[i]->eid == GRMTRACE_EID_BLOCK_BEGIN)
			printf("block %" PRId64, g[i]->key);
		else
			printf("eid %" PRId32, g[i]->eid);
		putchar('\n');
	}
	free(g);
	return 0;
}

int
pv_stmode_print(const struct pv_stmode *s, const struct grmtrace *r,
		const struct pv_msgs *g,
		const char *(*block_name)(void *, int64_t, size_t *),
		void *arg)
{
	struct sproc **p;
	size_t i;
	int rc = 0;

	if (s->lines > 0) {
		if ((p = (struct sproc **)pv_map_values(&s->procs)) == NULL)
			return -1;
		qsort(p, pv_map_n(&s->procs), sizeof *p, by_proc);
		printf("\nstatistics mode (the #STATS lines, added up per "
		    "process)\n");
		for (i = 0; i < pv_map_n(&s->procs) && rc == 0; i++) {
			proc_line(p[i], g);
			if (print_counts(p[i], r) != 0 ||
			    print_ranges(p[i], r, block_name, arg) != 0)
				rc = -1;
		}
		free(p);
	}
	if (s->nctl > 0)
		printf("\nruntime control (#CONTROL lines)\n%20s  %s\n", "ts",
		    "command");
	for (i = 0; i < s->nctl; i++) {
		printf("%20" PRIu64 "  ", s->ctl[i].ts);
		pv_put_name(s->ctl[i].cmd, s->ctl[i].len);
		putchar('\n');
	}
	return rc;
}

static void
sproc_free(void *v)
{
	struct sproc *p = v;

	pv_map_free(&p->cnt, NULL);
	pv_map_free(&p->rng, NULL);
}

void
pv_stmode_free(struct pv_stmode *s)
{
	size_t i;

	pv_map_free(&s->procs, sproc_free);
	for (i = 0; i < s->nctl; i++)
		free(s->ctl[i].cmd);
	free(s->ctl);
	memset(s, 0, sizeof *s);
}
