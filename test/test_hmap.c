/* SPDX-License-Identifier: MIT */
/* test_hmap.c: the hash map (common/util/hmap.c): keys found after many
 * puts and growths, every key colliding, deletes and the reuse of their
 * slots, iteration that visits each key once, and a map too large to
 * allocate; and the FIFO ring (common/util/ring.c): order kept across
 * wrap-arounds and growths. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "util/hmap.h"
#include "util/ring.h"

struct key3 {
	uint32_t a;
	uint32_t b;
	uint64_t c;
};

struct val {
	uint64_t x;
	char name[20];
};

static uint32_t
same_hash(const void *key)
{
	(void)key;
	return 7;
}

static const struct hmap_type int_type = { sizeof(int32_t),
    sizeof(struct val), 4, NULL };
static const struct hmap_type k3_type = { sizeof(struct key3),
    sizeof(struct val), 16, NULL };
static const struct hmap_type collide_type = { sizeof(int32_t),
    sizeof(uint64_t), 8, same_hash };

static struct hmap m;

static void
setup(void)
{
	memset(&m, 0, sizeof m);
}

static void
teardown(void)
{
	hmap_free(&m);
}

TestSuite(hmap, .init = setup, .fini = teardown);

Test(hmap, a_zeroed_map_is_empty)
{
	uint32_t it = 0;
	int32_t k = 1;

	cr_expect_null(hmap_find(&m, &k));
	cr_expect_null(hmap_next(&m, &it, NULL));
	cr_expect_eq(hmap_del(&m, &k), -1);
	cr_expect_eq(hmap_count(&m), 0);
}

Test(hmap, a_new_value_is_zeroed_and_found_again)
{
	struct val *v, *w;
	int32_t k = 42;
	int added = -1;

	hmap_init(&m, &int_type);
	v = hmap_put(&m, &k, &added);
	cr_assert_not_null(v);
	cr_expect_eq(added, 1);
	cr_expect_eq(v->x, 0);
	cr_expect_eq(v->name[0], '\0');
	v->x = 99;
	w = hmap_put(&m, &k, &added);
	cr_expect_eq(added, 0);
	cr_expect_eq(w, v);
	cr_expect_eq(((struct val *)hmap_find(&m, &k))->x, 99);
	cr_expect_eq(*(const int32_t *)hmap_key(&m, v), 42);
	k = 43;
	cr_expect_null(hmap_find(&m, &k));
	cr_expect_eq(hmap_count(&m), 1);
}

Test(hmap, every_key_survives_growth)
{
	struct key3 k;
	struct val *v;
	uint32_t i;

	hmap_init(&m, &k3_type);
	for (i = 0; i < 10000; i++) {
		memset(&k, 0, sizeof k);
		k.a = i;
		k.b = i * 3;
		k.c = (uint64_t)i << 40;
		v = hmap_put(&m, &k, NULL);
		cr_assert_not_null(v);
		v->x = i + 1;
		snprintf(v->name, sizeof v->name, "n%u", i);
	}
	cr_expect_eq(hmap_count(&m), 10000);
	cr_expect_geq(m.cap, 20000, "grown before half full: %u", m.cap);
	for (i = 0; i < 10000; i++) {
		char want[20];

		memset(&k, 0, sizeof k);
		k.a = i;
		k.b = i * 3;
		k.c = (uint64_t)i << 40;
		v = hmap_find(&m, &k);
		cr_assert_not_null(v, "key %u lost", i);
		cr_expect_eq(v->x, i + 1);
		snprintf(want, sizeof want, "n%u", i);
		cr_expect_str_eq(v->name, want);
	}
	memset(&k, 0, sizeof k);
	k.a = 1;
	k.b = 4;	/* a field differs: another key */
	k.c = 1ull << 40;
	cr_expect_null(hmap_find(&m, &k));
}

Test(hmap, keys_with_one_hash_are_told_apart)
{
	uint64_t *v;
	int32_t k;

	hmap_init(&m, &collide_type);
	for (k = 0; k < 300; k++) {
		v = hmap_put(&m, &k, NULL);
		cr_assert_not_null(v);
		*v = (uint64_t)k * 10;
	}
	for (k = 0; k < 300; k++) {
		v = hmap_find(&m, &k);
		cr_assert_not_null(v);
		cr_expect_eq(*v, (uint64_t)k * 10);
	}
	k = 300;
	cr_expect_null(hmap_find(&m, &k));
	/* Deleting one in the middle of the probe run keeps the rest. */
	k = 150;
	cr_expect_eq(hmap_del(&m, &k), 0);
	cr_expect_null(hmap_find(&m, &k));
	for (k = 0; k < 300; k++)
		if (k != 150)
			cr_expect_not_null(hmap_find(&m, &k), "key %d", k);
}

Test(hmap, deleted_keys_are_gone_and_their_slots_reused)
{
	uint32_t cap, round;
	struct val *v;
	int32_t k;

	hmap_init(&m, &int_type);
	for (k = 0; k < 100; k++)
		cr_assert_not_null(hmap_put(&m, &k, NULL));
	cap = m.cap;
	/* Many deletes and puts of new keys, the count staying at 100: the
	 * table is cleaned of deleted slots, not grown without end. */
	for (round = 0; round < 50; round++)
		for (k = 0; k < 100; k++) {
			int32_t old = (int32_t)round * 100 + k;
			int32_t nk = old + 100;

			cr_assert_eq(hmap_del(&m, &old), 0);
			cr_assert_eq(hmap_del(&m, &old), -1);
			v = hmap_put(&m, &nk, NULL);
			cr_assert_not_null(v);
			v->x = (uint64_t)nk;
		}
	cr_expect_eq(hmap_count(&m), 100);
	cr_expect_leq(m.cap, cap * 2, "cap %u, was %u", m.cap, cap);
	for (k = 0; k < 5000; k++)
		cr_expect_null(hmap_find(&m, &k));
	for (k = 5000; k < 5100; k++) {
		v = hmap_find(&m, &k);
		cr_assert_not_null(v);
		cr_expect_eq(v->x, (uint64_t)k);
	}
}

Test(hmap, iteration_visits_each_key_once_and_may_delete)
{
	unsigned char seen[1000] = { 0 };
	const void *key;
	struct val *v;
	uint32_t it = 0, n = 0;
	int32_t k;

	hmap_init(&m, &int_type);
	for (k = 0; k < 1000; k++) {
		v = hmap_put(&m, &k, NULL);
		cr_assert_not_null(v);
		v->x = (uint64_t)k;
	}
	while ((v = hmap_next(&m, &it, &key)) != NULL) {
		memcpy(&k, key, sizeof k);
		cr_assert(k >= 0 && k < 1000);
		cr_expect_eq(v->x, (uint64_t)k);
		cr_expect_eq(seen[k], 0, "key %d seen twice", k);
		seen[k] = 1;
		n++;
		if (k % 2 == 0)
			hmap_del_value(&m, v);
	}
	cr_expect_eq(n, 1000);
	cr_expect_eq(hmap_count(&m), 500);
	for (n = 0, it = 0; (v = hmap_next(&m, &it, &key)) != NULL; n++) {
		memcpy(&k, key, sizeof k);
		cr_expect_eq(k % 2, 1);
	}
	cr_expect_eq(n, 500);
}

Test(hmap, the_order_follows_the_hash_and_the_puts)
{
	struct hmap other;
	const void *ka, *kb;
	uint32_t ia = 0, ib = 0;
	int32_t k;

	hmap_init(&m, &int_type);
	hmap_init(&other, &int_type);
	for (k = 0; k < 500; k++) {
		int32_t x = k * 7919 % 1000;

		cr_assert_not_null(hmap_put(&m, &x, NULL));
		cr_assert_not_null(hmap_put(&other, &x, NULL));
	}
	while (hmap_next(&m, &ia, &ka) != NULL) {
		cr_assert_not_null(hmap_next(&other, &ib, &kb));
		cr_expect_eq(memcmp(ka, kb, sizeof k), 0);
	}
	cr_expect_null(hmap_next(&other, &ib, &kb));
	hmap_free(&other);
}

Test(hmap, a_map_too_large_to_allocate_fails_and_stays_usable)
{
	static const struct hmap_type huge = { sizeof(int32_t),
	    SIZE_MAX / 8, 16, NULL };
	static const struct hmap_type wide = { sizeof(int32_t),
	    SIZE_MAX / 2, 16, NULL };
	int32_t k = 5;
	int added = -1;

	hmap_init(&m, &huge);
	cr_expect_null(hmap_put(&m, &k, &added));
	cr_expect_eq(added, -1, "not said added");
	cr_expect_eq(hmap_count(&m), 0);
	cr_expect_null(hmap_find(&m, &k));
	hmap_free(&m);
	hmap_init(&m, &wide);
	cr_expect_null(hmap_put(&m, &k, NULL));
	hmap_free(&m);
	/* The same map object, another type: it works again. */
	hmap_init(&m, &int_type);
	cr_expect_not_null(hmap_put(&m, &k, NULL));
	cr_expect_not_null(hmap_find(&m, &k));
}

Test(hmap, free_leaves_an_empty_map_of_the_same_type)
{
	int32_t k;

	hmap_init(&m, &int_type);
	for (k = 0; k < 50; k++)
		cr_assert_not_null(hmap_put(&m, &k, NULL));
	hmap_free(&m);
	cr_expect_eq(hmap_count(&m), 0);
	k = 3;
	cr_expect_null(hmap_find(&m, &k));
	cr_expect_not_null(hmap_put(&m, &k, NULL));
	cr_expect_eq(hmap_count(&m), 1);
}

/* Elements of an odd size, pushed and popped so that the ring grows while
 * its contents wrap around the end of the array: every pop gives back the
 * oldest, in order, whatever the growths. */
struct odd {
	uint64_t	seq;
	char		pad[5];
};

Test(ring, keeps_order_across_wraps_and_growths)
{
	struct ring r = { 0 };
	struct odd e, out;
	uint64_t next_in = 0, next_out = 0;
	int round, i;

	memset(&e, 0, sizeof e);
	for (round = 0; round < 40; round++) {
		/* Push more than we pop: the ring fills, wraps and grows. */
		for (i = 0; i < 7 + round % 5; i++) {
			e.seq = next_in++;
			e.pad[0] = (char)e.seq;
			cr_assert_eq(ring_push(&r, &e, sizeof e), 0);
		}
		for (i = 0; i < 5; i++) {
			ring_pop(&r, &out, sizeof out);
			cr_assert_eq(out.seq, next_out, "popped %llu, want %llu",
			    (unsigned long long)out.seq,
			    (unsigned long long)next_out);
			cr_assert_eq(out.pad[0], (char)next_out);
			next_out++;
		}
		cr_assert_eq(r.n, next_in - next_out);
		cr_assert_eq(r.cap & (r.cap - 1), 0, "cap %u", r.cap);
	}
	while (r.n > 0) {
		ring_pop(&r, &out, sizeof out);
		cr_assert_eq(out.seq, next_out++);
	}
	cr_expect_eq(next_out, next_in);
	ring_free(&r);
	cr_expect_eq(r.cap, 0);
	cr_expect_null(r.v);
	/* Ready again after ring_free. */
	cr_assert_eq(ring_push(&r, &e, sizeof e), 0);
	cr_expect_eq(r.n, 1);
	ring_free(&r);
}
