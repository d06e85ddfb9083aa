/* SPDX-License-Identifier: MIT */
/* tr_tok.c: the trace readers' tokenizer: blank-separated tokens, decimal
 * numbers, doubles and quoted strings as doc/formats.md 1.2 has them, and
 * the text format's fields.  The input is hostile: every length and number
 * is checked. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tr_int.h"
#include "util/num.h"

#define NUM_MAX		32	/* longest number we read as a double */

int
tr_at_end(struct cur *c)
{
	while (c->ops->blanks && c->p < c->e && tr_blank(*c->p))
		c->p++;
	return c->p == c->e;
}

int
tr_bad(struct cur *c, const char *why)
{
	c->why = why;
	return -1;
}

int
tr_tok(struct cur *c, const char **s, size_t *n)
{
	if (tr_at_end(c))
		return tr_bad(c, "missing field");
	*s = c->p;
	while (c->p < c->e && !tr_blank(*c->p))
		c->p++;
	*n = (size_t)(c->p - *s);
	return 0;
}

int
tr_mag(struct cur *c, const char *s, size_t n, uint64_t max, uint64_t *v)
{
	unsigned d;

	*v = 0;
	if (n == 0)
		return tr_bad(c, "bad number");
	for (; n > 0; s++, n--) {
		if (*s < '0' || *s > '9')
			return tr_bad(c, "bad number");
		d = (unsigned)(*s - '0');
		if (*v > (max - d) / 10)
			return tr_bad(c, "number out of range");
		*v = *v * 10 + d;
	}
	return 0;
}

static int
get_u(struct cur *c, uint64_t max, uint64_t *v)
{
	const char *s;
	size_t n;

	if (tr_tok(c, &s, &n) != 0)
		return -1;
	return tr_mag(c, s, n, max, v);
}

static int
get_i(struct cur *c, int64_t min, int64_t max, int64_t *v)
{
	const char *s;
	size_t n;

	if (tr_tok(c, &s, &n) != 0)
		return -1;
	return tr_int(c, s, n, min, max, v);
}

int
tr_int(struct cur *c, const char *s, size_t n, int64_t min, int64_t max,
       int64_t *v)
{
	uint64_t m;

	if (n == 0)
		return tr_bad(c, "bad number");
	if (*s != '-') {
		if (tr_mag(c, s, n, (uint64_t)max, &m) != 0)
			return -1;
		*v = (int64_t)m;
	} else {
		if (tr_mag(c, s + 1, n - 1, -(uint64_t)min, &m) != 0)
			return -1;
		*v = m == 0 ? 0 : -(int64_t)(m - 1) - 1;
	}
	return 0;
}

/* A decimal floating-point number (no hex, no "infinity"), inf, -inf, nan. */
int
tr_double(struct cur *c, const char *s, size_t n, double *v)
{
	char t[NUM_MAX * 2], *end;

	if (n >= sizeof t)
		return tr_bad(c, "bad floating-point number");
	memcpy(t, s, n);
	t[n] = '\0';
	if (strspn(t, "0123456789+-.eEinfa") < n)
		return tr_bad(c, "bad floating-point number");
	if (strcmp(t, "nan") == 0 || strcmp(t, "-nan") == 0) {
		*v = NAN;
		return 0;
	}
	*v = strtod(t, &end);
	if (end != t + n || isnan(*v))
		return tr_bad(c, "bad floating-point number");
	return 0;
}

static int
get_d(struct cur *c, double *v)
{
	const char *s;
	size_t n;

	if (tr_tok(c, &s, &n) != 0)
		return -1;
	return tr_double(c, s, n, v);
}

/* A quoted string, unescaped into r->sbuf (and NUL-terminated there). */
int
tr_str(struct tape_r *r, struct cur *c, const char **s, uint32_t *len)
{
	char *d = r->sp;
	int h, l;

	if (tr_at_end(c))
		return tr_bad(c, "missing field");
	if (*c->p != '"')
		return tr_bad(c, "expected a quoted string");
	for (c->p++; c->p < c->e && *c->p != '"'; c->p++) {
		if ((unsigned char)*c->p < 0x20 || *c->p == 0x7f)
			return tr_bad(c, "control character in string");
		if (*c->p != '\\') {
			*d++ = *c->p;
			continue;
		}
		if (++c->p == c->e)
			break;
		switch (*c->p) {
		case '"':
		case '\\':
			*d++ = *c->p;
			break;
		case 'n':
			*d++ = '\n';
			break;
		case 't':
			*d++ = '\t';
			break;
		case 'r':
			*d++ = '\r';
			break;
		case 'x':
			if (c->e - c->p < 3 ||
			    (h = num_hexdigit((unsigned char)c->p[1])) < 0 ||
			    (l = num_hexdigit((unsigned char)c->p[2])) < 0)
				return tr_bad(c, "bad \\x escape in string");
			*d++ = (char)(h << 4 | l);
			c->p += 2;
			break;
		default:
			return tr_bad(c, "bad escape in string");
		}
	}
	if (c->p == c->e)
		return tr_bad(c, "unterminated string");
	if (++c->p < c->e && !tr_blank(*c->p))
		return tr_bad(c, "text after closing quote");
	*s = r->sp;
	*len = (uint32_t)(d - r->sp);
	*d++ = '\0';
	r->sp = d;
	return 0;
}

const char *
tr_keep(struct tape_r *r, const char *s, size_t n)
{
	char *d = r->sp;

	memcpy(d, s, n);
	d[n] = '\0';
	r->sp += n + 1;
	return d;
}

int
tr_text_get1(struct tape_r *r, struct cur *c, char k, struct rec_field *f)
{
	size_t n;

	switch (k) {
	case 'U':
		return get_u(c, UINT32_MAX, &f->v.u);
	case 'u':
		return get_u(c, UINT64_MAX, &f->v.u);
	case 'b':
		return get_u(c, 255, &f->v.u);
	case 'i':
		return get_i(c, INT32_MIN, INT32_MAX, &f->v.i);
	case 'I':
		return get_i(c, INT64_MIN, INT64_MAX, &f->v.i);
	case 'd':
		return get_d(c, &f->v.d);
	case 't':
	case '=':
		if (tr_tok(c, &f->v.s.p, &n) != 0)
			return -1;
		f->v.s.len = (uint32_t)n;
		return 0;
	default:
		return tr_str(r, c, &f->v.s.p, &f->v.s.len);
	}
}

const struct tr_fieldops tr_text_fields = { tr_text_get1, 1 };
