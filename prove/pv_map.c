/* pv_map.c: the hash maps prove's analyses share: two 64-bit keys to a
 * value, and interned strings. */
#include <stdlib.h>
#include <string.h>

#include "pv.h"

void *
pv_grow(void *a, size_t *cap, size_t n, size_t size)
{
	size_t nc;

	if (n < *cap)
		return a;
	nc = *cap == 0 ? 16 : *cap * 2;
	if ((a = realloc(a, nc * size)) != NULL)
		*cap = nc;
	return a;
}

static size_t
hash(uint64_t a, uint64_t b)
{
	uint64_t x = a ^ (b * 0x9e3779b97f4a7c15ull);

	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 29;
	return (size_t)x;
}

static int
map_grow(struct pv_map *m)
{
	struct pv_slot *old = m->s;
	size_t i, j, ocap = m->cap;

	m->cap = ocap == 0 ? 64 : ocap * 2;
	if ((m->s = calloc(m->cap, sizeof *m->s)) == NULL) {
		m->s = old;
		m->cap = ocap;
		return -1;
	}
	for (i = 0; i < ocap; i++) {
		if (old[i].v == NULL)
			continue;
		j = hash(old[i].k1, old[i].k2) & (m->cap - 1);
		while (m->s[j].v != NULL)
			j = (j + 1) & (m->cap - 1);
		m->s[j] = old[i];
	}
	free(old);
	return 0;
}

void *
pv_map_find(const struct pv_map *m, uint64_t k1, uint64_t k2)
{
	size_t j;

	if (m->cap == 0)
		return NULL;
	j = hash(k1, k2) & (m->cap - 1);
	for (; m->s[j].v != NULL; j = (j + 1) & (m->cap - 1))
		if (m->s[j].k1 == k1 && m->s[j].k2 == k2)
			return m->s[j].v;
	return NULL;
}

void *
pv_map_get(struct pv_map *m, uint64_t k1, uint64_t k2, size_t size)
{
	size_t j;

	if ((m->n + 1) * 2 > m->cap && map_grow(m) != 0)
		return NULL;
	j = hash(k1, k2) & (m->cap - 1);
	for (; m->s[j].v != NULL; j = (j + 1) & (m->cap - 1)) {
		if (m->s[j].k1 == k1 && m->s[j].k2 == k2)
			return m->s[j].v;
	}
	if ((m->s[j].v = calloc(1, size)) == NULL)
		return NULL;
	m->s[j].k1 = k1;
	m->s[j].k2 = k2;
	m->n++;
	return m->s[j].v;
}

void **
pv_map_values(const struct pv_map *m)
{
	void **a;
	size_t i, n = 0;

	if ((a = calloc(m->n + 1, sizeof *a)) == NULL)
		return NULL;
	for (i = 0; i < m->cap; i++)
		if (m->s[i].v != NULL)
			a[n++] = m->s[i].v;
	return a;
}

void
pv_map_free(struct pv_map *m, void (*fn)(void *))
{
	size_t i;

	for (i = 0; i < m->cap; i++) {
		if (m->s[i].v != NULL && fn != NULL)
			fn(m->s[i].v);
		free(m->s[i].v);
	}
	free(m->s);
	memset(m, 0, sizeof *m);
}

/* ---- interned strings ---- */

static uint64_t
str_hash(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;

	while (n-- > 0)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ull;
	return h;
}

uint64_t
pv_str_id(struct pv_strs *t, const char *s, size_t len)
{
	uint64_t h = str_hash(s, len), k;
	struct pv_str *e, *ne;

	/* Strings of one hash are told apart by a second key: 0, 1, ... */
	for (k = 0; (e = pv_map_find(&t->ix, h, k)) != NULL; k++)
		if (e->len == len && memcmp(e->s, s, len) == 0)
			return e->id;
	if ((ne = pv_grow(t->v, &t->cap, t->n, sizeof *ne)) == NULL)
		return 0;
	t->v = ne;
	e = &t->v[t->n];
	if ((e->s = malloc(len + 1)) == NULL)
		return 0;
	memcpy(e->s, s, len);
	e->s[len] = '\0';
	e->len = len;
	e->id = t->n + 1;
	/* The index holds the id, not a pointer into t->v that moves. */
	if (pv_map_get(&t->ix, h, k, sizeof(struct pv_str)) == NULL) {
		free(e->s);
		return 0;
	}
	*(struct pv_str *)pv_map_find(&t->ix, h, k) = *e;
	t->n++;
	return e->id;
}

const char *
pv_str(const struct pv_strs *t, uint64_t id, size_t *len)
{
	if (id == 0 || id > t->n)
		return NULL;
	if (len != NULL)
		*len = t->v[id - 1].len;
	return t->v[id - 1].s;
}

void
pv_strs_free(struct pv_strs *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		free(t->v[i].s);
	free(t->v);
	pv_map_free(&t->ix, NULL);
	memset(t, 0, sizeof *t);
}
