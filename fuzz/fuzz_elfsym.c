/* SPDX-License-Identifier: MIT */
/* fuzz_elfsym.c: libFuzzer target for the ELF symbol reader (elfsym.c):
 * the input is an ELF file; whatever it holds, elfsym_parse either fails
 * or gives symbols sorted by address whose names lie in the input, each
 * NUL-terminated there, and elfsym_find answers inside that table. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "util/elfsym.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elfsym e;
	const struct elfsym_fn *fn;
	char *b = malloc(size + 1);	/* 16-byte aligned */
	size_t i;

	if (b == NULL)
		return 0;
	memcpy(b, data, size);
	if (elfsym_parse(&e, b, size) == 0) {
		for (i = 0; i < e.n; i++) {
			CHECK(e.fn[i].name >= b && e.fn[i].name < b + size);
			CHECK(memchr(e.fn[i].name, '\0',
			    (size_t)(b + size - e.fn[i].name)) != NULL);
			CHECK(i == 0 || e.fn[i - 1].addr < e.fn[i].addr);
			fn = elfsym_find(&e, e.fn[i].addr);
			CHECK(fn == &e.fn[i]);
		}
		sink += e.n + e.hi;
	}
	elfsym_free(&e);
	free(b);
	return 0;
}
