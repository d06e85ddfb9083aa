/* SPDX-License-Identifier: MIT */
/* fuzz.h: what the libFuzzer targets share: the entry point, a check that
 * aborts (so libFuzzer keeps the input), a sink, little-endian loads. */
#ifndef GRM_FUZZ_H
#define GRM_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { \
	if (!(c)) { \
		fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, \
		    __LINE__, #c); \
		abort(); \
	} \
} while (0)

/* Where values go so the compiler keeps the reads that made them. */
static volatile uint64_t sink;

/* The n (at most 8) bytes at p as a little-endian integer. */
static inline uint64_t
ld(const unsigned char *p, int n)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static inline uint16_t
ld16(const unsigned char *p)
{
	return (uint16_t)ld(p, 2);
}

static inline uint32_t
ld32(const unsigned char *p)
{
	return (uint32_t)ld(p, 4);
}

static inline uint64_t
ld64(const unsigned char *p)
{
	return ld(p, 8);
}

#endif /* GRM_FUZZ_H */
