/* SPDX-License-Identifier: MIT */
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

/* The layout of a map, and so the order pv_map_values gives, follows from
 * this hash: outputs listed in that order stay as they were only if it
 * does not change. */
static uint32_t
key_hash(const void *key)
{
	const struct pv_key *k = key;
	uint64_t x = k->k1 ^ (k->k2 * 0x9e3779b97f4a7c15ull);

	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 29;
	return (uint32_t)x;
}

static const struct hmap_type map_type = {
	sizeof(struct pv_key), sizeof(void *), 64, key_hash
};

const struct hmap_type pv_ix_type = {
	sizeof(struct pv_key), sizeof(size_t), 64, key_hash
};

void *
pv_map_find(const struct pv_map *m, uint64_t k1, uint64_t k2)
{
	const struct pv_key k = { k1, k2 };
	void **v = hmap_find(&m->m, &k);

	return v != NULL ? *v : NULL;
}

void *
pv_map_get(struct pv_map *m, uint64_t k1, uint64_t k2, size_t size)
{
	const struct pv_key k = { k1, k2 };
	void **v;
	int added;

	if (m->m.type == NULL)
		hmap_init(&m->m, &map_type);
	if ((v = hmap_put(&m->m, &k, &added)) == NULL)
		return NULL;
	if (added && (*v = calloc(1, size)) == NULL) {
		hmap_del_value(&m->m, v);
		return NULL;
	}
	return *v;
}

void *
pv_map_next(const struct pv_map *m, uint32_t *it)
{
	void **v = hmap_next(&m->m, it, NULL);

	return v != NULL ? *v : NULL;
}

void **
pv_map_values(const struct pv_map *m)
{
	void **a, *v;
	uint32_t it = 0;
	size_t n = 0;

	if ((a = calloc(pv_map_n(m) + 1, sizeof *a)) == NULL)
		return NULL;
	while ((v = pv_map_next(m, &it)) != NULL)
		a[n++] = v;
	return a;
}

void
pv_map_free(struct pv_map *m, void (*fn)(void *))
{
	uint32_t it = 0;
	void *v;

	while ((v = pv_map_next(m, &it)) != NULL) {
		if (fn != NULL)
			fn(v);
		free(v);
	}
	hmap_free(&m->m);
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
