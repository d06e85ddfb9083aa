/* SPDX-License-Identifier: MIT */
/* pv_msg.c: processes (ranks, names) and the matching of message sends
 * with receives (doc/formats.md 1.9), shared by prove stats and svg. */
#include <stdlib.h>
#include <string.h>

#include "pv.h"

static struct pv_proc *
proc_get(struct pv_msgs *g, uint32_t node, uint32_t pid)
{
	struct pv_proc *p;

	if ((p = pv_map_get(&g->procs, node, pid, sizeof *p)) != NULL) {
		p->node = node;
		p->pid = pid;
	}
	return p;
}

const struct pv_proc *
pv_proc(const struct pv_msgs *g, uint32_t node, uint32_t pid)
{
	return pv_map_find(&g->procs, node, pid);
}

/* Replaces *dst with a NUL-terminated copy of s[0..n). */
static int
set_str(char **dst, size_t *dlen, const char *s, size_t n)
{
	char *c;

	if ((c = malloc(n + 1)) == NULL)
		return -1;
	memcpy(c, s, n);
	c[n] = '\0';
	free(*dst);
	*dst = c;
	*dlen = n;
	return 0;
}

static int
add(struct pv_msgs *g, int send, const struct grmtrace_ev *ev,
    const struct pv_mark *m)
{
	struct pv_msg **a = send ? &g->snd : &g->rcv, *na;
	size_t *n = send ? &g->nsnd : &g->nrcv;
	size_t *cap = send ? &g->csnd : &g->crcv;

	if ((na = pv_grow(*a, cap, *n, sizeof *na)) == NULL)
		return -1;
	*a = na;
	(*a)[(*n)++] = (struct pv_msg){ .ts = ev->ts,
	    .seq = g->nsnd + g->nrcv, .node = ev->node, .pid = ev->pid,
	    .tid = ev->tid, .peer = m->id, .tag = m->tag, .bytes = m->bytes,
	    .bound = ev->bound_ns };
	return 0;
}

int
pv_msgs_ev(struct pv_msgs *g, const struct grmtrace_ev *ev,
	   const struct pv_mark *m)
{
	struct pv_proc *p;

	if (ev->kind == GRMTRACE_PROC) {
		if (ev->how)
			return 0;
		if ((p = proc_get(g, ev->node, ev->pid)) == NULL)
			return -1;
		return set_str(&p->prog, &p->prog_len, ev->str, ev->str_len);
	}
	if (ev->kind != GRMTRACE_RECORD || m == NULL)
		return 0;
	switch (m->kind) {
	case PV_PNAME:
		if ((p = proc_get(g, ev->node, ev->pid)) == NULL)
			return -1;
		p->has_rank = 1;
		p->rank = m->id;
		return set_str(&p->name, &p->name_len, m->s, m->len);
	case PV_SEND:
	case PV_RECV:
		return add(g, m->kind == PV_SEND, ev, m);
	default:
		return 0;
	}
}

/* Sends and receives are sorted on (sender rank, receiver rank, tag), then
 * time, then file order. */
static void
key(const struct pv_msg *x, int send, int64_t k[3])
{
	k[0] = send ? x->rank : x->peer;
	k[1] = send ? x->peer : x->rank;
	k[2] = x->tag;
}

static int
cmp_key(const int64_t a[3], const int64_t b[3])
{
	int i;

	for (i = 0; i < 2 && a[i] == b[i]; i++)
		continue;
	return pv_cmp(a[i], b[i]);
}

struct sorting {
	const struct pv_msg	*v;
	int			send;
};

static int
by_key(const void *a, const void *b, void *arg)
{
	const struct sorting *s = arg;
	const struct pv_msg *x = &s->v[*(const size_t *)a];
	const struct pv_msg *y = &s->v[*(const size_t *)b];
	int64_t kx[3], ky[3];
	int c;

	key(x, s->send, kx);
	key(y, s->send, ky);
	if ((c = cmp_key(kx, ky)) != 0)
		return c;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The indexes of the messages of v[0..n) whose process has a rank, sorted;
 * the others are counted.  NULL if out of memory. */
static size_t *
ranked(struct pv_msgs *g, struct pv_msg *v, size_t n, int send, size_t *nr)
{
	struct sorting s = { v, send };
	const struct pv_proc *p;
	size_t i, *ix;

	if ((ix = malloc((n + 1) * sizeof *ix)) == NULL)
		return NULL;
	*nr = 0;
	for (i = 0; i < n; i++) {
		v[i].match = 0;
		p = pv_proc(g, v[i].node, v[i].pid);
		if ((v[i].has_rank = p != NULL && p->has_rank)) {
			v[i].rank = p->rank;
			ix[(*nr)++] = i;
		} else
			g->norank++;
	}
	qsort_r(ix, *nr, sizeof *ix, by_key, &s);
	return ix;
}

int
pv_msgs_match(struct pv_msgs *g)
{
	size_t *si, *ri, ns, nr, i = 0, j = 0;
	int64_t ks[3], kr[3];
	int c;

	g->matched = 0;
	g->norank = 0;
	if ((si = ranked(g, g->snd, g->nsnd, 1, &ns)) == NULL)
		return -1;
	if ((ri = ranked(g, g->rcv, g->nrcv, 0, &nr)) == NULL) {
		free(si);
		return -1;
	}
	/* Both sorted on the key: the k-th send of a key meets the k-th
	 * receive of that key. */
	while (i < ns && j < nr) {
		key(&g->snd[si[i]], 1, ks);
		key(&g->rcv[ri[j]], 0, kr);
		if ((c = cmp_key(ks, kr)) < 0)
			i++;
		else if (c > 0)
			j++;
		else {
			g->snd[si[i]].match = ri[j] + 1;
			g->rcv[ri[j]].match = si[i] + 1;
			g->matched++;
			i++;
			j++;
		}
	}
	free(si);
	free(ri);
	return 0;
}

static void
proc_free(void *v)
{
	struct pv_proc *p = v;

	free(p->name);
	free(p->prog);
}

void
pv_msgs_free(struct pv_msgs *g)
{
	pv_map_free(&g->procs, proc_free);
	free(g->snd);
	free(g->rcv);
	memset(g, 0, sizeof *g);
}
