/* SPDX-License-Identifier: MIT */
/* tr_fmt.c: printf-free formatting of numbers and strings (tr_fmt.h). */
#include <string.h>

#include "tr_fmt.h"

static const char hexd[] = "0123456789abcdef";

const char tr_fmt_dig2[200] =
    "00010203040506070809101112131415161718192021222324252627282930313233"
    "34353637383940414243444546474849505152535455565758596061626364656667"
    "6869707172737475767778798081828384858687888990919293949596979899";

const uint64_t tr_fmt_pow10[20] = { 1ull, 10ull, 100ull, 1000ull, 10000ull,
	100000ull, 1000000ull, 10000000ull, 100000000ull, 1000000000ull,
	10000000000ull, 100000000000ull, 1000000000000ull, 10000000000000ull,
	100000000000000ull, 1000000000000000ull, 10000000000000000ull,
	100000000000000000ull, 1000000000000000000ull,
	10000000000000000000ull };

char *
tr_fmt_hex(char *d, uint64_t v)
{
	char t[16], *p = t + sizeof t;
	size_t n;

	do {
		*--p = hexd[v & 15];
		v >>= 4;
	} while (v != 0);
	n = (size_t)(t + sizeof t - p);
	memcpy(d, p, n);
	return d + n;
}

char *
tr_fmt_secs(char *d, uint64_t ns)
{
	uint32_t f = (uint32_t)(ns % 1000000000u);
	int i;

	d = tr_fmt_u64(d, ns / 1000000000u);
	*d = '.';
	for (i = 8; i > 0; i -= 2) {
		memcpy(d + i, tr_fmt_dig2 + 2 * (f % 100), 2);
		f /= 100;
	}
	d[1] = (char)('0' + f);
	return d + 10;
}

/* ---- doubles: the exact decimal value, rounded to 17 digits ---- */

#define BIG_BASE	1000000000u	/* limbs of nine decimal digits */
#define BIG_LIMBS	90	/* 2^1024, or 2^53 * 5^1074: 767 digits */

static const uint32_t pow5[14] = { 1, 5, 25, 125, 625, 3125, 15625, 78125,
	390625, 1953125, 9765625, 48828125, 244140625, 1220703125 };

/* n[0..*len) (least significant first) *= k, with k * BIG_BASE < 2^64. */
static void
big_mul(uint32_t *n, int *len, uint64_t k)
{
	uint64_t c = 0, t;
	int i;

	for (i = 0; i < *len; i++) {
		t = (uint64_t)n[i] * k + c;
		n[i] = (uint32_t)(t % BIG_BASE);
		c = t / BIG_BASE;
	}
	while (c != 0) {
		n[(*len)++] = (uint32_t)(c % BIG_BASE);
		c /= BIG_BASE;
	}
}

/*
 * The decimal digits of m * 2^e (m > 0): returns their number, without
 * leading zeros, and the power of ten of the last one in *dexp.  Only the
 * first ones are written to dg, at least 18 (all if fewer), *have of them;
 * *rest says whether any digit after those is not zero.
 */
static int
exact_digits(uint64_t m, int e, char *dg, int *dexp, int *have, int *rest)
{
	uint32_t n[BIG_LIMBS], v;
	int len = 0, i, j, k, nd = 0;
	char t[9];

	for (; m != 0; m /= BIG_BASE)
		n[len++] = (uint32_t)(m % BIG_BASE);
	/* m * 2^e = m * 5^-e / 10^-e when e is negative. */
	*dexp = e < 0 ? e : 0;
	for (; e >= 32; e -= 32)
		big_mul(n, &len, 1ull << 32);
	if (e > 0)
		big_mul(n, &len, 1ull << e);
	for (; e <= -13; e += 13)
		big_mul(n, &len, pow5[13]);
	if (e < 0)
		big_mul(n, &len, pow5[-e]);
	*have = 0;
	*rest = 0;
	for (i = len - 1; i >= 0; i--) {
		nd += 9;
		if (*have >= 18) {
			*rest |= n[i] != 0;
			continue;
		}
		v = n[i];
		for (j = 7; j >= 1; j -= 2) {
			memcpy(t + j, tr_fmt_dig2 + 2 * (v % 100), 2);
			v /= 100;
		}
		t[0] = (char)('0' + v);
		for (k = 0; i == len - 1 && k < 8 && t[k] == '0'; k++)
			nd--;
		memcpy(dg + *have, t + k, (size_t)(9 - k));
		*have += 9 - k;
	}
	return nd;
}

char *
tr_fmt_double(char *d, double v)
{
	char dg[32];
	uint64_t bits, m;
	int be, e, dexp, nd, have, rest, x, k, i, round;

	memcpy(&bits, &v, 8);
	be = (int)(bits >> 52 & 0x7ff);
	m = bits & ((1ull << 52) - 1);
	if (be == 0x7ff) {
		if (m != 0) {
			memcpy(d, "nan", 3);
			return d + 3;
		}
		if (bits >> 63)
			*d++ = '-';
		memcpy(d, "inf", 3);
		return d + 3;
	}
	if (bits >> 63)
		*d++ = '-';
	if (be == 0 && m == 0) {
		*d++ = '0';
		return d;
	}
	if (be == 0)
		e = -1074;
	else {
		m |= 1ull << 52;
		e = be - 1075;
	}
	k = __builtin_ctzll(m);
	m >>= k;
	e += k;
	nd = exact_digits(m, e, dg, &dexp, &have, &rest);
	x = nd - 1 + dexp;	/* the power of ten of the first digit */
	if (nd > 17) {
		/* To nearest, ties to even, as the C library does. */
		round = dg[17] > '5';
		if (dg[17] == '5') {
			round = ((dg[16] - '0') & 1) | rest;
			for (i = 18; i < have && !round; i++)
				round = dg[i] != '0';
		}
		nd = 17;
		for (i = 16; round && i >= 0; i--) {
			if (dg[i] != '9') {
				dg[i]++;
				round = 0;
			} else
				dg[i] = '0';
		}
		if (round) {
			dg[0] = '1';
			x++;
		}
	}
	while (nd > 1 && dg[nd - 1] == '0')
		nd--;
	if (x < -4 || x >= 17) {
		*d++ = dg[0];
		if (nd > 1) {
			*d++ = '.';
			memcpy(d, dg + 1, (size_t)(nd - 1));
			d += nd - 1;
		}
		*d++ = 'e';
		*d++ = x < 0 ? '-' : '+';
		if (x < 0)
			x = -x;
		if (x < 10)
			*d++ = '0';
		return tr_fmt_u64(d, (uint64_t)x);
	}
	if (x < 0) {
		*d++ = '0';
		*d++ = '.';
		for (i = x; i < -1; i++)
			*d++ = '0';
		memcpy(d, dg, (size_t)nd);
		return d + nd;
	}
	for (i = 0; i <= x; i++)
		*d++ = i < nd ? dg[i] : '0';
	if (nd > x + 1) {
		*d++ = '.';
		memcpy(d, dg + x + 1, (size_t)(nd - x - 1));
		d += nd - x - 1;
	}
	return d;
}

/* ---- strings ---- */

char *
tr_fmt_esc(char *d, const char *lim, const char *s, size_t len, int blank_free)
{
	const unsigned char *u = (const unsigned char *)s;
	unsigned c;
	size_t i;

	for (i = 0; i < len; i++) {
		if (lim - d < 4)
			return NULL;
		c = u[i];
		if (c > 0x20 && c < 0x7f && c != '"' && c != '\\' &&
		    (!blank_free || (c != '(' && c != ')'))) {
			*d++ = (char)c;
			continue;
		}
		if (c == ' ' && !blank_free) {
			*d++ = ' ';
			continue;
		}
		*d++ = '\\';
		switch (c) {
		case '"':
		case '\\':
			*d++ = (char)c;
			break;
		case '\n':
			*d++ = 'n';
			break;
		case '\t':
			*d++ = 't';
			break;
		case '\r':
			*d++ = 'r';
			break;
		default:
			*d++ = 'x';
			*d++ = hexd[c >> 4];
			*d++ = hexd[c & 15];
		}
	}
	return d;
}

size_t
tr_fmt_bee_type(const char *format, char *t)
{
	const char *p;
	size_t n = 0;

	for (p = format; *p != '\0'; p++) {
		if (*p != '%')
			continue;
		if (*++p == '%')
			continue;
		p += strspn(p, "-+ #0'");
		p += strspn(p, "0123456789");
		if (*p == '.')
			p += 1 + strspn(p + 1, "0123456789");
		if (*p == '\0')
			break;	/* not a format the reader takes */
		t[n++] = '%';
		while (*p != '\0' && strchr("hlqjzt", *p) != NULL)
			t[n++] = *p++;
		if (*p == '\0')
			break;
		t[n++] = *p;
	}
	return n;
}

void
tr_fmt_convs(const char *format, char *cv)
{
	char t[256];
	size_t i, n, k = 0;

	if (strlen(format) >= sizeof t)
		return;
	n = tr_fmt_bee_type(format, t);
	for (i = 0; i < n; i++)
		if (i + 1 == n || t[i + 1] == '%')
			cv[k++] = t[i];
}
