/* SPDX-License-Identifier: MIT */
/* hmap.c: the hash map of fixed-size keys and values (hmap.h).
 *
 * A slot is a 32-bit tag (0 empty, 1 deleted, else the key's hash, kept
 * off 0 and 1), then the key, then the value, each 8-byte aligned.  The
 * map grows before it is half full, counting deleted slots; a deleted
 * slot is reused by the next put that probes past it. */
#include <stdlib.h>
#include <string.h>

#include "util/hmap.h"

#define TAG_EMPTY	0u
#define TAG_DEAD	1u
#define HDR		8u

static size_t
round8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

static uint32_t
tag_of(uint32_t h)
{
	return h < 2 ? h + 2 : h;
}

/* A general hash of the key's bytes, 8 at a time. */
static uint32_t
bytes_hash(const void *key, size_t len)
{
	const unsigned char *p = key;
	uint64_t h = 0x9e3779b97f4a7c15ull ^ len, w;

	for (; len >= 8; p += 8, len -= 8) {
		memcpy(&w, p, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	if (len > 0) {
		w = 0;
		memcpy(&w, p, len);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
	}
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return (uint32_t)h;
}

static inline uint32_t
hash_of(const struct hmap_type *t, const void *key)
{
	return t->hash != NULL ? t->hash(key) : bytes_hash(key, t->ksize);
}

static int
key_eq(const void *a, const void *b, size_t len)
{
	uint32_t x4, y4;
	uint64_t x8, y8;

	switch (len) {
	case 4:
		memcpy(&x4, a, 4);
		memcpy(&y4, b, 4);
		return x4 == y4;
	case 8:
		memcpy(&x8, a, 8);
		memcpy(&y8, b, 8);
		return x8 == y8;
	default:
		return memcmp(a, b, len) == 0;
	}
}

static unsigned char *
slot_at(const struct hmap *m, uint32_t i)
{
	return m->v + (size_t)i * m->slot;
}

static uint32_t
tag_at(const unsigned char *s)
{
	uint32_t t;

	memcpy(&t, s, sizeof t);
	return t;
}

static void
tag_set(unsigned char *s, uint32_t t)
{
	memcpy(s, &t, sizeof t);
}

static size_t
val_off(const struct hmap *m)
{
	return m->voff;
}

void
hmap_init(struct hmap *m, const struct hmap_type *t)
{
	memset(m, 0, sizeof *m);
	m->type = t;
	/* 0: too large to allocate (every put fails). */
	if (t->ksize < SIZE_MAX / 4 && t->vsize < SIZE_MAX / 4)
		m->slot = HDR + round8(t->ksize) + round8(t->vsize);
	m->voff = HDR + round8(t->ksize);
}

/* The slot of key (hash h), or NULL. */
static inline unsigned char *
lookup(const struct hmap *m, const void *key, uint32_t h)
{
	uint32_t mask = m->cap - 1, i, want = tag_of(h), t;
	unsigned char *s;

	for (i = h & mask;; i = (i + 1) & mask) {
		s = slot_at(m, i);
		t = tag_at(s);
		if (t == TAG_EMPTY)
			return NULL;
		if (t == want && key_eq(s + HDR, key, m->type->ksize))
			return s;
	}
}

void *
hmap_find(const struct hmap *m, const void *key)
{
	unsigned char *s;

	if (m->n == 0)
		return NULL;
	s = lookup(m, key, hash_of(m->type, key));
	return s != NULL ? s + val_off(m) : NULL;
}

/* Moves every entry into a table of cap slots; -1 if out of memory. */
static int
rehash(struct hmap *m, uint32_t cap)
{
	unsigned char *nv, *s, *d;
	uint32_t i, j, h;

	if (m->slot == 0 || cap == 0 || m->slot > SIZE_MAX / cap)
		return -1;
	if ((nv = calloc(cap, m->slot)) == NULL)
		return -1;
	for (i = 0; i < m->cap; i++) {
		s = slot_at(m, i);
		if (tag_at(s) <= TAG_DEAD)
			continue;
		h = hash_of(m->type, s + HDR);
		for (j = h & (cap - 1);; j = (j + 1) & (cap - 1)) {
			d = nv + (size_t)j * m->slot;
			if (tag_at(d) == TAG_EMPTY)
				break;
		}
		memcpy(d, s, m->slot);
	}
	free(m->v);
	m->v = nv;
	m->cap = cap;
	m->dead = 0;
	return 0;
}

void *
hmap_put(struct hmap *m, const void *key, int *added)
{
	uint32_t h, mask, i, t, cap;
	unsigned char *s, *free_slot = NULL;

	if ((uint64_t)(m->n + m->dead + 1) * 2 > m->cap) {
		if (m->cap == 0)
			cap = m->type->min_cap > 0 ? m->type->min_cap : 16;
		else if ((uint64_t)(m->n + 1) * 4 <= m->cap)
			cap = m->cap;		/* only deleted slots to drop */
		else if (m->cap > UINT32_MAX / 2)
			return NULL;
		else
			cap = m->cap * 2;
		if (rehash(m, cap) != 0)
			return NULL;
	}
	h = hash_of(m->type, key);
	mask = m->cap - 1;
	for (i = h & mask;; i = (i + 1) & mask) {
		s = slot_at(m, i);
		t = tag_at(s);
		if (t == TAG_EMPTY)
			break;
		if (t == TAG_DEAD) {
			if (free_slot == NULL)
				free_slot = s;
		} else if (t == tag_of(h) &&
		    key_eq(s + HDR, key, m->type->ksize)) {
			if (added != NULL)
				*added = 0;
			return s + val_off(m);
		}
	}
	if (free_slot != NULL) {
		s = free_slot;
		m->dead--;
	}
	memset(s, 0, m->slot);
	tag_set(s, tag_of(h));
	memcpy(s + HDR, key, m->type->ksize);
	m->n++;
	if (added != NULL)
		*added = 1;
	return s + val_off(m);
}

void
hmap_del_value(struct hmap *m, void *val)
{
	unsigned char *s = (unsigned char *)val - val_off(m);

	tag_set(s, TAG_DEAD);
	m->n--;
	m->dead++;
}

int
hmap_del(struct hmap *m, const void *key)
{
	void *v = hmap_find(m, key);

	if (v == NULL)
		return -1;
	hmap_del_value(m, v);
	return 0;
}

void *
hmap_next(const struct hmap *m, uint32_t *it, const void **key)
{
	unsigned char *s;

	for (; *it < m->cap; (*it)++) {
		s = slot_at(m, *it);
		if (tag_at(s) <= TAG_DEAD)
			continue;
		(*it)++;
		if (key != NULL)
			*key = s + HDR;
		return s + val_off(m);
	}
	return NULL;
}

const void *
hmap_key(const struct hmap *m, const void *val)
{
	return (const unsigned char *)val - val_off(m) + HDR;
}

void
hmap_free(struct hmap *m)
{
	const struct hmap_type *t = m->type;

	free(m->v);
	if (t != NULL)
		hmap_init(m, t);
	else
		memset(m, 0, sizeof *m);
}
