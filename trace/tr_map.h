/* tr_map.h: a hash map from two 64-bit keys to an index, for the trace
 * reader's tables of hosts, processes and threads. */
#ifndef GRM_TR_MAP_H
#define GRM_TR_MAP_H

#include <stddef.h>
#include <stdint.h>

struct tr_slot {
	uint64_t	k1;
	uint64_t	k2;
	size_t		v;		/* index + 1; 0: empty */
};

struct tr_map {
	struct tr_slot	*s;
	size_t		cap;
	size_t		n;
};

/* The index stored for (k1, k2), or SIZE_MAX. */
size_t tr_map_get(const struct tr_map *m, uint64_t k1, uint64_t k2);
/* Stores index v for (k1, k2), which is not there yet.  0, or -1 if out
 * of memory (m is then as it was). */
int tr_map_put(struct tr_map *m, uint64_t k1, uint64_t k2, size_t v);
/* Empties m and frees its memory. */
void tr_map_free(struct tr_map *m);

#endif /* GRM_TR_MAP_H */
