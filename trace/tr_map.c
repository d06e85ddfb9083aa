/* tr_map.c: a hash map from two 64-bit keys to an index (tr_map.h), open
 * addressing with linear probing, at most half full. */
#include <stdlib.h>

#include "tr_map.h"

static size_t
find(const struct tr_slot *s, size_t cap, uint64_t k1, uint64_t k2)
{
	uint64_t h = (k1 * 0x9e3779b97f4a7c15ull) ^ (k2 * 0xc2b2ae3d27d4eb4full);
	size_t i = (size_t)(h ^ h >> 29) & (cap - 1);

	while (s[i].v != 0 && (s[i].k1 != k1 || s[i].k2 != k2))
		i = (i + 1) & (cap - 1);
	return i;
}

size_t
tr_map_get(const struct tr_map *m, uint64_t k1, uint64_t k2)
{
	size_t i;

	if (m->cap == 0)
		return SIZE_MAX;
	i = find(m->s, m->cap, k1, k2);
	return m->s[i].v != 0 ? m->s[i].v - 1 : SIZE_MAX;
}

int
tr_map_put(struct tr_map *m, uint64_t k1, uint64_t k2, size_t v)
{
	struct tr_slot *s;
	size_t i, cap;

	if ((m->n + 1) * 2 > m->cap) {
		cap = m->cap == 0 ? 64 : m->cap * 2;
		if ((s = calloc(cap, sizeof *s)) == NULL)
			return -1;
		for (i = 0; i < m->cap; i++)
			if (m->s[i].v != 0)
				s[find(s, cap, m->s[i].k1, m->s[i].k2)] =
				    m->s[i];
		free(m->s);
		m->s = s;
		m->cap = cap;
	}
	i = find(m->s, m->cap, k1, k2);
	m->s[i] = (struct tr_slot){ k1, k2, v + 1 };
	m->n++;
	return 0;
}

void
tr_map_free(struct tr_map *m)
{
	free(m->s);
	m->s = NULL;
	m->cap = m->n = 0;
}
