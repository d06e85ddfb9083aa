/* SPDX-License-Identifier: MIT */
/* ring.c: a first-in first-out queue of fixed-size elements (ring.h). */
#include <stdlib.h>
#include <string.h>

#include "ring.h"

int
ring_push(struct ring *r, const void *e, size_t size)
{
	unsigned char *nv;
	uint32_t cap, first;

	if (r->n == r->cap) {
		if (r->cap > UINT32_MAX / 2 ||
		    (cap = r->cap ? r->cap * 2 : 8) > SIZE_MAX / size)
			return -1;
		if ((nv = malloc((size_t)cap * size)) == NULL)
			return -1;
		/* Oldest first, from 0: the part up to the array's end,
		 * then the part that wrapped. */
		first = r->cap - r->head;
		if (first > r->n)
			first = r->n;
		if (r->n > 0) {
			memcpy(nv, r->v + (size_t)r->head * size,
			    (size_t)first * size);
			memcpy(nv + (size_t)first * size, r->v,
			    (size_t)(r->n - first) * size);
		}
		free(r->v);
		r->v = nv;
		r->cap = cap;
		r->head = 0;
	}
	memcpy(r->v + (size_t)((r->head + r->n) & (r->cap - 1)) * size, e,
	    size);
	r->n++;
	return 0;
}

void
ring_pop(struct ring *r, void *out, size_t size)
{
	memcpy(out, r->v + (size_t)r->head * size, size);
	r->head = (r->head + 1) & (r->cap - 1);
	r->n--;
}

void
ring_free(struct ring *r)
{
	free(r->v);
	memset(r, 0, sizeof *r);
}
