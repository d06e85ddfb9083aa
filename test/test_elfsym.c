/* SPDX-License-Identifier: MIT */
/* test_elfsym.c: the ELF symbol reader (common/util/elfsym.c) on this
 * test's own executable (its functions found by address, its build id as
 * the loader sees it) and on every truncation and many corruptions of it
 * (each fails or yields symbols inside the file, never a bad read). */
#include <criterion/criterion.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/elfsym.h"

int elfsym_probe(int x);

int __attribute__((noinline))
elfsym_probe(int x)
{
	return x * 7 + 1;
}

/* This executable's load bias. */
static int
bias_of(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	*(uintptr_t *)arg = info->dlpi_addr;
	return 1;	/* the first object is the executable */
}

/* The executable's bytes, 8-byte aligned, in *len. */
static void *
slurp(size_t *len)
{
	FILE *f = fopen("/proc/self/exe", "rb");
	size_t cap = 1 << 20, n = 0, r;
	char *b = malloc(cap);

	cr_assert(f != NULL && b != NULL);
	while ((r = fread(b + n, 1, cap - n, f)) > 0) {
		n += r;
		if (n == cap) {
			char *t = malloc(2 * cap);

			cr_assert(t != NULL);
			memcpy(t, b, n);
			free(b);
			b = t;
			cap *= 2;
		}
	}
	fclose(f);
	*len = n;
	return b;
}

Test(elfsym, names_its_own_functions)
{
	struct elfsym e;
	const struct elfsym_fn *fn;
	uintptr_t bias = 0;
	uint64_t a;

	cr_assert_eq(elfsym_load(&e, "/proc/self/exe"), 0);
	dl_iterate_phdr(bias_of, &bias);
	cr_expect_gt(e.n, 2);
	a = (uintptr_t)elfsym_probe - bias;
	fn = elfsym_find(&e, a);
	cr_assert(fn != NULL);
	cr_expect_str_eq(fn->name, "elfsym_probe");
	fn = elfsym_find(&e, a + 1);	/* inside it */
	cr_assert(fn != NULL);
	cr_expect_str_eq(fn->name, "elfsym_probe");
	cr_expect(e.hi > e.lo);
	cr_expect_null(elfsym_find(&e, 0));
	elfsym_free(&e);
	elfsym_free(&e);	/* a zeroed one too */
}

Test(elfsym, not_elf)
{
	static const uint64_t junk[16] = { 1, 2, 3 };
	struct elfsym e;

	errno = 0;
	cr_expect_eq(elfsym_parse(&e, junk, sizeof junk), -1);
	cr_expect_eq(errno, ENOEXEC);
	cr_expect_eq(elfsym_load(&e, "/nonexistent/file"), -1);
	cr_expect_eq(elfsym_load(&e, "/proc/self"), -1);	/* a folder */
	cr_expect_eq(elfsym_parse(&e, (const char *)junk + 1, 64), -1);
	cr_expect_eq(errno, EINVAL);
}

/* Every symbol found lies in the buffer and is NUL-terminated in it. */
static void
check_inside(const struct elfsym *e, const char *b, size_t len)
{
	size_t i;

	for (i = 0; i < e->n; i++) {
		cr_assert(e->fn[i].name >= b && e->fn[i].name < b + len);
		cr_assert(memchr(e->fn[i].name, '\0',
		    (size_t)(b + len - e->fn[i].name)) != NULL);
		if (i > 0)
			cr_assert(e->fn[i - 1].addr < e->fn[i].addr);
	}
}

Test(elfsym, truncated_and_corrupted)
{
	size_t len, cut, i;
	struct elfsym e;
	char *b = slurp(&len), *c;
	unsigned seed = 15;

	cr_assert(len > 4096);
	for (cut = 0; cut < len; cut += cut < 256 ? 1 : 97) {
		c = malloc(cut + 1);	/* malloc aligns to 16 */
		memcpy(c, b, cut);
		if (elfsym_parse(&e, c, cut) == 0)
			check_inside(&e, c, cut);
		elfsym_free(&e);
		free(c);
	}
	c = malloc(len);
	for (i = 0; i < 3000; i++) {
		size_t k, at;

		memcpy(c, b, len);
		for (k = 0; k < 1 + i % 8; k++) {
			/* Most flips in the headers, where the offsets are. */
			at = (size_t)rand_r(&seed) % (k % 2 ? len : 4096);
			c[at] = (char)rand_r(&seed);
		}
		if (elfsym_parse(&e, c, len) == 0)
			check_inside(&e, c, len);
		elfsym_free(&e);
	}
	free(c);
	free(b);
}
