/* SPDX-License-Identifier: MIT */
/* num.c: the number parsers of options and environment variables
 * (num.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/num.h"

/* The digits at the start of s as *v; where they end in *end.  -1 if
 * there are none or they overflow. */
static int
digits(const char *s, uint64_t *v, const char **end)
{
	unsigned long long x;
	char *e;

	if (*s < '0' || *s > '9')
		return -1;	/* strtoull would take a sign or spaces */
	errno = 0;
	x = strtoull(s, &e, 10);
	if (errno != 0)
		return -1;
	*v = x;
	*end = e;
	return 0;
}

static int
in_range(uint64_t x, uint64_t min, uint64_t max, uint64_t *v)
{
	if (x < min || x > max)
		return -1;
	*v = x;
	return 0;
}

int
num_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *v)
{
	const char *end;
	uint64_t x;

	if (digits(s, &x, &end) != 0 || *end != '\0')
		return -1;
	return in_range(x, min, max, v);
}

int
num_parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *v)
{
	const char *end;
	unsigned shift = 0;
	uint64_t x;

	if (digits(s, &x, &end) != 0)
		return -1;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	}
	if (*end != '\0' || (shift > 0 && x > UINT64_MAX >> shift))
		return -1;
	return in_range(x << shift, min, max, v);
}

int
num_parse_percent(const char *s, uint64_t min, uint64_t max, uint64_t *v)
{
	const char *end;
	uint64_t x;

	if (digits(s, &x, &end) != 0)
		return -1;
	if (*end == '%')
		end++;
	if (*end != '\0')
		return -1;
	return in_range(x, min, max, v);
}

int
num_parse_double(const char *s, double min, double max, double *v)
{
	char *end;
	double x;

	if ((*s < '0' || *s > '9') && *s != '.')
		return -1;	/* no sign, space, "inf" or "nan" */
	if (strpbrk(s, "xX") != NULL)
		return -1;	/* decimal only: strtod would read 0x10 */
	errno = 0;
	x = strtod(s, &end);
	if (errno != 0 || *end != '\0' || !isfinite(x) || x < min || x > max)
		return -1;
	*v = x;
	return 0;
}

const char *
num_msg(char *buf, size_t cap, const char *what, const char *s,
	const char *expected)
{
	int env = what[0] >= 'A' && what[0] <= 'Z';

	snprintf(buf, cap, "%s%s%s: not %s", what, env ? "=" : " ", s,
	    expected);
	return buf;
}

int
num_hexdigit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}
