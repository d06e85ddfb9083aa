/* SPDX-License-Identifier: MIT */
/* pv_sel.c: a selection of records (a time range and rows) for prove
 * stats, svg, report and serve's views, and the options that give it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pv.h"

/* A decimal number of at most 19 digits in s[0..n), nothing else. */
static int
dec(const char *s, size_t n, uint64_t *v)
{
	size_t i;

	*v = 0;
	if (n == 0 || n > 19)
		return -1;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		*v = *v * 10 + (uint64_t)(s[i] - '0');
	}
	return 0;
}

int
pv_sel_time(struct pv_sel *s, const char *cmd, const char *arg)
{
	const char *c = strchr(arg, ':');
	uint64_t a = 0, b = UINT64_MAX;

	if (c == NULL ||
	    (c > arg && dec(arg, (size_t)(c - arg), &a) != 0) ||
	    (c[1] != '\0' && dec(c + 1, strlen(c + 1), &b) != 0) ||
	    a >= b) {
		fprintf(stderr, "prove %s: -t: FROM:TO, times in ns with FROM "
		    "< TO (either may be left out), not %s\n", cmd, arg);
		return -1;
	}
	s->from = a;
	s->to = b;
	return 0;
}

int
pv_sel_add(struct pv_sel *s, int64_t node, int64_t pid, int64_t tid)
{
	struct pv_rowspec *v;

	if ((v = pv_grow(s->spec, &s->cspec, s->nspec, sizeof *v)) == NULL)
		return -1;
	s->spec = v;
	v[s->nspec++] = (struct pv_rowspec){ node, pid, tid };
	return 0;
}

/* One part of a row filter: '*' (-1) or a number below 2^32. */
static int
part(const char *p, size_t n, int64_t *v)
{
	uint64_t u;

	if (n == 1 && p[0] == '*') {
		*v = -1;
		return 0;
	}
	if (dec(p, n, &u) != 0 || u > UINT32_MAX)
		return -1;
	*v = (int64_t)u;
	return 0;
}

int
pv_sel_rows(struct pv_sel *s, const char *cmd, const char *arg)
{
	const char *p = arg, *e, *q;
	int64_t v[3];
	size_t k;

	for (;;) {
		e = p + strcspn(p, ",");
		v[0] = v[1] = v[2] = -1;
		for (k = 0, q = p; k < 3; k++) {
			const char *sl = q;

			while (sl < e && *sl != '/')
				sl++;
			if (part(q, (size_t)(sl - q), &v[k]) != 0)
				goto bad;
			if (sl == e)
				break;
			q = sl + 1;
		}
		if (k == 3)
			goto bad;	/* a fourth part */
		if (pv_sel_add(s, v[0], v[1], v[2]) != 0) {
			fprintf(stderr, "prove %s: out of memory\n", cmd);
			return -1;
		}
		if (*e == '\0')
			return 0;
		p = e + 1;
	}
bad:
	fprintf(stderr, "prove %s: -r: NODE[/PID[/TID]][,...], numbers or "
	    "'*', not %s\n", cmd, arg);
	return -1;
}

int
pv_sel_row(const struct pv_sel *s, uint32_t node, uint32_t pid,
	   uint32_t tid)
{
	const struct pv_rowspec *r;
	size_t i;

	if (s->nspec == 0)
		return 1;
	for (i = 0; i < s->nspec; i++) {
		r = &s->spec[i];
		if ((r->node < 0 || r->node == node) &&
		    (r->pid < 0 || r->pid == pid) &&
		    (r->tid < 0 || r->tid == tid))
			return 1;
	}
	return 0;
}

int
pv_sel_has(const struct pv_sel *s, uint32_t node, uint32_t pid,
	   uint32_t tid, uint64_t ts)
{
	return ts >= s->from && ts < s->to && pv_sel_row(s, node, pid, tid);
}

void
pv_sel_free(struct pv_sel *s)
{
	free(s->spec);
	s->spec = NULL;
	s->nspec = s->cspec = 0;
}
