/* SPDX-License-Identifier: MIT */
/* tr_fmt.h: printf-free formatting of numbers and strings for the trace
 * writers' per-record path (doc/PERFORMANCE.md). */
#ifndef GRM_TR_FMT_H
#define GRM_TR_FMT_H

#include <stddef.h>
#include <stdint.h>

/*
 * Each function writes at d, without a NUL, and returns the end of what it
 * wrote.  The caller gives room: TR_FMT_NUM_MAX bytes for any one number.
 */
#define TR_FMT_NUM_MAX	24	/* "-2.2250738585072014e-308" */

extern const char tr_fmt_dig2[200];	/* "00" "01" ... "99" */
extern const uint64_t tr_fmt_pow10[20];

/* Decimal (inline: the writers' hot path is mostly this). */
static inline char *
tr_fmt_u64(char *d, uint64_t v)
{
	/* Digits: about log10 from the bit length, then one compare. */
	int n = (64 - __builtin_clzll(v | 1)) * 1233 >> 12;
	char *e;

	n += v >= tr_fmt_pow10[n];
	e = d += n + (n == 0);
	while (v >= 100) {
		d -= 2;
		__builtin_memcpy(d, tr_fmt_dig2 + 2 * (v % 100), 2);
		v /= 100;
	}
	if (v >= 10)
		__builtin_memcpy(d - 2, tr_fmt_dig2 + 2 * v, 2);
	else
		d[-1] = (char)('0' + v);
	return e;
}

static inline char *
tr_fmt_i64(char *d, int64_t v)
{
	if (v >= 0)
		return tr_fmt_u64(d, (uint64_t)v);
	*d++ = '-';
	return tr_fmt_u64(d, -(uint64_t)v);
}

/* Lower-case hexadecimal, no leading zeros ("0" for 0). */
char *tr_fmt_hex(char *d, uint64_t v);
/* Exactly as printf("%.17g") in the C locale writes v (rounded to nearest,
 * ties to even), but "nan" for every NaN and "inf", "-inf". */
char *tr_fmt_double(char *d, double v);
/* ns as seconds, a point and nine digits: 5.000200100 */
char *tr_fmt_secs(char *d, uint64_t ns);

/*
 * Escapes s[0..len) as a quoted string's inside (doc/formats.md 1.2): '"',
 * '\', and bytes below 0x20 or from 0x7f up; with blank_free, also ' ', '('
 * and ')' (as \x20, \x28, \x29: BEE Ascii, section 4).  Returns NULL if it
 * would pass lim.
 */
char *tr_fmt_esc(char *d, const char *lim, const char *s, size_t len,
	      int blank_free);

/* The BEE type descriptor of a printf-style format (doc/formats.md 4.5):
 * its conversions without flags, width and precision ("%d%s%lf"), at t (as
 * long as the format at most); returns its length. */
size_t tr_fmt_bee_type(const char *format, char *t);
/* The conversion letter of each conversion of format ('d', 's', 'p', ...)
 * into cv[0 ..], as many as it has. */
void tr_fmt_convs(const char *format, char *cv);

#endif /* GRM_TR_FMT_H */
