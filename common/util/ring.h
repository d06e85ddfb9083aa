/* SPDX-License-Identifier: MIT */
/* ring.h: a first-in first-out queue of fixed-size elements in a ring
 * that doubles when full. */
#ifndef GRM_RING_H
#define GRM_RING_H

#include <stddef.h>
#include <stdint.h>

/*
 * A zeroed ring is empty and ready.  Every call on one ring passes the
 * same element size.  The ring owns its array: ring_free releases it and
 * leaves the ring empty and ready again.
 */
struct ring {
	unsigned char	*v;
	uint32_t	head;
	uint32_t	n;		/* elements held */
	uint32_t	cap;		/* a power of two, or 0 */
};

/* Appends a copy of *e; 0, or -1 if out of memory (the ring unchanged). */
int ring_push(struct ring *r, const void *e, size_t size);
/* Copies the oldest element to *out and removes it; r must not be empty. */
void ring_pop(struct ring *r, void *out, size_t size);
void ring_free(struct ring *r);

#endif
