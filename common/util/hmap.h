/* SPDX-License-Identifier: MIT */
/* hmap.h: a hash map of fixed-size keys to fixed-size values, stored in
 * place (open addressing, linear probing, grown at half full). */
#ifndef GRM_HMAP_H
#define GRM_HMAP_H

#include <stddef.h>
#include <stdint.h>

/*
 * What a map holds.  Keys are compared byte for byte (memcmp): a key
 * struct must have no padding, or have it zeroed.  hash may be NULL (a
 * general hash of the key's bytes); a map's iteration order follows from
 * its hash, its first capacity and the order of its puts, nothing else.
 */
struct hmap_type {
	size_t		ksize;		/* bytes, > 0 */
	size_t		vsize;		/* bytes, may be 0 */
	uint32_t	min_cap;	/* first capacity: a power of two */
	uint32_t	(*hash)(const void *key);
};

/* A zeroed map is empty: it may be searched, iterated and freed; it needs
 * hmap_init before its first put. */
struct hmap {
	const struct hmap_type	*type;
	unsigned char		*v;		/* cap slots */
	size_t			slot;		/* bytes per slot */
	size_t			voff;		/* where a slot's value is */
	uint32_t		cap;		/* 0 or a power of two */
	uint32_t		n;		/* keys */
	uint32_t		dead;		/* deleted slots not reused yet */
};

/* An empty map of type t (which must outlive it).  This cannot fail. */
void hmap_init(struct hmap *m, const struct hmap_type *t);

/* The value of key, or NULL.  Valid until the next put on the map. */
void *hmap_find(const struct hmap *m, const void *key);

/*
 * The value of key, added (zeroed, *added 1) if absent, else *added 0
 * (added may be NULL).  NULL if out of memory: the map is unchanged.  The
 * map may grow on any put, even of a key it has, which moves every value:
 * pointers from earlier finds and puts are then invalid.
 */
void *hmap_put(struct hmap *m, const void *key, int *added);

/* Deletes key: 0, or -1 if absent.  Values do not move: deleting while
 * iterating is safe. */
int hmap_del(struct hmap *m, const void *key);

/* Deletes the entry whose value is val (from hmap_find, hmap_put or
 * hmap_next of this map). */
void hmap_del_value(struct hmap *m, void *val);

/*
 * Iteration: start with *it = 0; each call gives the next value (and its
 * key in *key if key is not NULL), NULL at the end.  Puts during an
 * iteration may reorder the map; deletes do not.
 */
void *hmap_next(const struct hmap *m, uint32_t *it, const void **key);

/* The key stored with value val. */
const void *hmap_key(const struct hmap *m, const void *val);

static inline uint32_t
hmap_count(const struct hmap *m)
{
	return m->n;
}

/* Frees the slots (not what values point to); the map is then empty, of
 * the same type. */
void hmap_free(struct hmap *m);

#endif /* GRM_HMAP_H */
