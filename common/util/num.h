/* SPDX-License-Identifier: MIT */
/* num.h: parsing the numbers of options and environment variables, with
 * one shape of error message. */
#ifndef GRM_NUM_H
#define GRM_NUM_H

#include <stddef.h>
#include <stdint.h>

/*
 * Each parser takes the whole of s (no sign, no space, nothing after) as
 * a number from min to max, stores it in *v and returns 0; otherwise it
 * returns -1 and leaves *v alone.  Nothing is printed: the caller says
 * what was wrong with num_msg.
 */
/* A decimal integer. */
int num_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *v);
/* A decimal integer of bytes with an optional K, M or G (any case:
 * 1024, 1024^2, 1024^3). */
int num_parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *v);
/* A decimal integer with an optional % after it. */
int num_parse_percent(const char *s, uint64_t min, uint64_t max,
		      uint64_t *v);
/* A decimal number, with a fraction or an exponent if need be. */
int num_parse_double(const char *s, double min, double max, double *v);

/*
 * The message for a value s of `what` that did not parse, in buf:
 * "WHAT S: not EXPECTED", or "WHAT=S: not EXPECTED" if what is an
 * environment variable (a name in capitals).  what: "-m", "--linger",
 * "GRM_THRESHOLD"; expected: "a number of MiB (1 to 1048576)".  Returns
 * buf.
 */
const char *num_msg(char *buf, size_t cap, const char *what, const char *s,
		    const char *expected);

/* The value of hexadecimal digit c (either case), or -1. */
int num_hexdigit(int c);

/* Enough for num_msg's usual messages (longer ones are cut). */
#define NUM_MSG_MAX	256

#endif /* GRM_NUM_H */
