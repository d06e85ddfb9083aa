/* SPDX-License-Identifier: MIT */
/* test_rec.c: unit tests of event formats and binary records (rec.c). */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rec/rec.h"

/* ---- rec_parse_format ---- */

/* Parses f, which must succeed with exactly n fields of these kinds and
 * va classes. */
static void
check_format(const char *f, unsigned n, const uint8_t *kind,
	     const uint8_t *va)
{
	struct rec_fmt fmt;
	unsigned i;

	memset(&fmt, 0xee, sizeof fmt);
	cr_assert_eq(rec_parse_format(f, &fmt), 0, "\"%s\" refused", f);
	cr_assert_eq(fmt.n, n, "\"%s\": %u fields, expected %u", f,
	    (unsigned)fmt.n, n);
	for (i = 0; i < n; i++) {
		cr_assert_eq(fmt.kind[i], kind[i], "\"%s\" field %u: kind %u,"
		    " expected %u", f, i, (unsigned)fmt.kind[i],
		    (unsigned)kind[i]);
		cr_assert_eq(fmt.va[i], va[i], "\"%s\" field %u: va %u,"
		    " expected %u", f, i, (unsigned)fmt.va[i],
		    (unsigned)va[i]);
	}
}

static void
check_refused(const char *f)
{
	struct rec_fmt fmt;

	cr_assert_eq(rec_parse_format(f, &fmt), -1, "\"%s\" accepted", f);
}

Test(format, signed_integers)
{
	const uint8_t k[] = { REC_K_INT, REC_K_INT, REC_K_INT };
	const uint8_t v[] = { REC_VA_INT, REC_VA_INT, REC_VA_INT };

	check_format("%d %i %c", 3, k, v);
}

Test(format, unsigned_integers)
{
	const uint8_t k[] = { REC_K_UINT, REC_K_UINT, REC_K_UINT,
	    REC_K_UINT };
	const uint8_t v[] = { REC_VA_UINT, REC_VA_UINT, REC_VA_UINT,
	    REC_VA_UINT };

	check_format("%u %x %X %o", 4, k, v);
}

Test(format, doubles)
{
	const uint8_t k[] = { REC_K_DOUBLE, REC_K_DOUBLE, REC_K_DOUBLE,
	    REC_K_DOUBLE, REC_K_DOUBLE, REC_K_DOUBLE, REC_K_DOUBLE,
	    REC_K_DOUBLE, REC_K_DOUBLE };
	const uint8_t v[] = { REC_VA_DOUBLE, REC_VA_DOUBLE, REC_VA_DOUBLE,
	    REC_VA_DOUBLE, REC_VA_DOUBLE, REC_VA_DOUBLE, REC_VA_DOUBLE,
	    REC_VA_DOUBLE, REC_VA_DOUBLE };

	check_format("%f %g %e %E %G %a %F %A %lf", 9, k, v);
}

Test(format, string)
{
	const uint8_t k[] = { REC_K_STR };
	const uint8_t v[] = { REC_VA_PTR };

	check_format("%s", 1, k, v);
}

Test(format, mixed_order_kept)
{
	const uint8_t k[] = { REC_K_STR, REC_K_DOUBLE, REC_K_UINT,
	    REC_K_INT, REC_K_STR };
	const uint8_t v[] = { REC_VA_PTR, REC_VA_DOUBLE, REC_VA_ULONG,
	    REC_VA_INT, REC_VA_PTR };

	check_format("%s%f%lx%c%s", 5, k, v);
}

Test(format, flags_width_precision)
{
	const uint8_t k[] = { REC_K_INT, REC_K_INT, REC_K_INT, REC_K_UINT,
	    REC_K_DOUBLE, REC_K_INT, REC_K_STR, REC_K_STR, REC_K_DOUBLE,
	    REC_K_UINT, REC_K_DOUBLE };
	const uint8_t v[] = { REC_VA_INT, REC_VA_INT, REC_VA_INT,
	    REC_VA_UINT, REC_VA_DOUBLE, REC_VA_INT, REC_VA_PTR, REC_VA_PTR,
	    REC_VA_DOUBLE, REC_VA_UINT, REC_VA_DOUBLE };

	check_format("%-8d %+d % d %#x %08.3f %'d %.5s %10s "
	    "%-+ #0'12.7e %#.0o %.g", 11, k, v);
}

Test(format, length_modifiers_signed)
{
	const uint8_t k[] = { REC_K_INT, REC_K_INT, REC_K_INT, REC_K_INT,
	    REC_K_INT, REC_K_INT, REC_K_INT, REC_K_INT, REC_K_INT };
	const uint8_t v[] = { REC_VA_LONG, REC_VA_LONG, REC_VA_INT,
	    REC_VA_INT, REC_VA_LONG, REC_VA_LONG, REC_VA_LONG, REC_VA_INT,
	    REC_VA_LONG };

	check_format("%ld %lld %hd %hhd %zd %jd %li %hi %-20lli", 9, k, v);
}

Test(format, length_modifiers_unsigned)
{
	const uint8_t k[] = { REC_K_UINT, REC_K_UINT, REC_K_UINT,
	    REC_K_UINT, REC_K_UINT, REC_K_UINT, REC_K_UINT, REC_K_UINT,
	    REC_K_UINT, REC_K_UINT };
	const uint8_t v[] = { REC_VA_ULONG, REC_VA_ULONG, REC_VA_UINT,
	    REC_VA_UINT, REC_VA_ULONG, REC_VA_ULONG, REC_VA_ULONG,
	    REC_VA_UINT, REC_VA_ULONG, REC_VA_UINT };

	check_format("%lu %llu %hu %hhu %zu %jx %lX %ho %#018llx %hhx", 10,
	    k, v);
}

Test(format, char_is_int)
{
	const uint8_t k[] = { REC_K_INT, REC_K_INT, REC_K_INT };
	const uint8_t v[] = { REC_VA_INT, REC_VA_INT, REC_VA_INT };
	static const char *const f[] = { "%hhc", "%hc" };
	struct rec_fmt fmt;
	unsigned i;

	/* A char argument is promoted to int. */
	check_format("%c %5c %-3c", 3, k, v);
	/* h and hh do not apply to %c: refused, or still an int. */
	for (i = 0; i < 2; i++)
		if (rec_parse_format(f[i], &fmt) == 0)
			cr_assert(fmt.n == 1 && fmt.kind[0] == REC_K_INT &&
			    fmt.va[0] == REC_VA_INT, "%s", f[i]);
}

Test(format, wide_char_not_fetched_as_long)
{
	struct rec_fmt fmt;

	/* %lc takes a wint_t (an unsigned int): fetching it with
	 * va_arg(ap, long) would be undefined.  Either refuse it, like %ls,
	 * or fetch it as an int. */
	if (rec_parse_format("%lc", &fmt) != 0)
		return;
	cr_assert_eq(fmt.n, 1);
	cr_assert(fmt.va[0] == REC_VA_INT || fmt.va[0] == REC_VA_UINT,
	    "%%lc: va %u, a wint_t is not a long", (unsigned)fmt.va[0]);
}

Test(format, text_between_conversions)
{
	const uint8_t k[] = { REC_K_INT, REC_K_STR, REC_K_DOUBLE };
	const uint8_t v[] = { REC_VA_INT, REC_VA_PTR, REC_VA_DOUBLE };

	check_format("x=%d, name='%s' (t=%g s) done", 3, k, v);
	check_format("no conversions at all", 0, k, v);
	check_format("", 0, k, v);
}

Test(format, percent_percent_ignored)
{
	const uint8_t k[] = { REC_K_INT, REC_K_UINT };
	const uint8_t v[] = { REC_VA_INT, REC_VA_UINT };

	check_format("100%%", 0, k, v);
	check_format("%%%%", 0, k, v);
	check_format("%%s %%d %%n", 0, k, v);
	check_format("%%%d%% of %u%%", 2, k, v);
}

Test(format, pointer)
{
	const uint8_t k[] = { REC_K_UINT, REC_K_INT, REC_K_UINT };
	const uint8_t v[] = { REC_VA_VOIDP, REC_VA_INT, REC_VA_VOIDP };

	check_format("%p %d %#18p", 3, k, v);
}

Test(format, predefined_types_parse)
{
	struct rec_fmt fmt;
	unsigned i;

	for (i = 0; i < REC_NPREDEF; i++) {
		cr_assert_eq(rec_predef[i].eid, -(int)i - 1);
		cr_assert_eq(rec_parse_format(rec_predef[i].format, &fmt), 0,
		    "%s", rec_predef[i].format);
	}
	cr_assert_eq(REC_EID_PREDEF_MIN, -(int)REC_NPREDEF);
}

Test(format, refusals)
{
	check_refused("%n");
	check_refused("%d %n");
	check_refused("%hn");
	check_refused("%lp");
	check_refused("%hp");
	check_refused("%*d");
	check_refused("%.*f");
	check_refused("%-*s");
	check_refused("%Lf");
	check_refused("%Lg");
	check_refused("%llf");
	check_refused("%ls");
	check_refused("%lls");
	check_refused("%1$d");
	check_refused("%y");
	check_refused("%w");
}

Test(format, trailing_percent)
{
	check_refused("%");
	check_refused("abc %");
	check_refused("%d %");
	check_refused("%-");
	check_refused("%08");
	check_refused("%5.");
	check_refused("%l");
	check_refused("%ll");
	check_refused("%h");
	check_refused("%hh");
	check_refused("%%%");
}

Test(format, args_max)
{
	char f[REC_ARGS_MAX * 3 + 8];
	struct rec_fmt fmt;
	unsigned i;

	f[0] = '\0';
	for (i = 0; i < REC_ARGS_MAX; i++)
		strcat(f, i % 2 ? "%s " : "%d ");
	cr_assert_eq(rec_parse_format(f, &fmt), 0);
	cr_assert_eq(fmt.n, REC_ARGS_MAX);
	for (i = 0; i < REC_ARGS_MAX; i++)
		cr_assert_eq(fmt.kind[i], i % 2 ? REC_K_STR : REC_K_INT);
	strcat(f, "%d");
	cr_assert_eq(rec_parse_format(f, &fmt), -1,
	    "%u fields accepted", REC_ARGS_MAX + 1);
	/* Literal text and %% after the last field do not count. */
	f[0] = '\0';
	for (i = 0; i < REC_ARGS_MAX; i++)
		strcat(f, "%u");
	strcat(f, " %% end");
	cr_assert_eq(rec_parse_format(f, &fmt), 0);
	cr_assert_eq(fmt.n, REC_ARGS_MAX);
}

Test(format, null)
{
	struct rec_fmt fmt;

	cr_assert_eq(rec_parse_format(NULL, &fmt), -1);
}

Test(format, length_limit)
{
	char f[REC_FMT_MAX + 1];
	struct rec_fmt fmt;

	memset(f, 'a', REC_FMT_MAX);
	f[REC_FMT_MAX] = '\0';
	cr_assert_eq(rec_parse_format(f, &fmt), -1,
	    "a format of REC_FMT_MAX chars accepted");
	/* One shorter is fine, and its conversions are parsed. */
	f[REC_FMT_MAX - 1] = '\0';
	memcpy(f + REC_FMT_MAX - 3, "%d", 2);
	cr_assert_eq(rec_parse_format(f, &fmt), 0);
	cr_assert_eq(fmt.n, 1);
	cr_assert_eq(fmt.kind[0], REC_K_INT);
}

/* ---- hand-built records ---- */

struct rb {
	_Alignas(8) unsigned char	b[REC_MAX + 64];
	size_t				off;
};

static void
rb_init(struct rb *r)
{
	memset(r->b, 0, sizeof r->b);
	r->off = sizeof(struct rec_hdr);
}

static void
rb_slot(struct rb *r, const void *v)
{
	memcpy(r->b + r->off, v, 8);
	r->off += 8;
}

static void
rb_i64(struct rb *r, int64_t v)
{
	rb_slot(r, &v);
}

static void
rb_u64(struct rb *r, uint64_t v)
{
	rb_slot(r, &v);
}

static void
rb_dbl(struct rb *r, double v)
{
	rb_slot(r, &v);
}

/* A string slot whose length word says len, holding n bytes of s. */
static void
rb_str_raw(struct rb *r, uint32_t len, const char *s, size_t n)
{
	memcpy(r->b + r->off, &len, 4);
	memcpy(r->b + r->off + 4, s, n);
	r->off += (4 + n + 7) / 8 * 8;
}

static void
rb_str(struct rb *r, const char *s)
{
	rb_str_raw(r, (uint32_t)strlen(s), s, strlen(s));
}

/* Writes the header; returns the record's length. */
static size_t
rb_finish(struct rb *r, uint8_t cls, uint8_t attr, int32_t eid)
{
	struct rec_hdr h;

	h.len = (uint16_t)r->off;
	h.cls = cls;
	h.attr = attr;
	h.eid = eid;
	h.ts = 123456789;
	memcpy(r->b, &h, sizeof h);
	return r->off;
}

static struct rec_fmt
fmt_of(const char *f)
{
	struct rec_fmt fmt;

	cr_assert_eq(rec_parse_format(f, &fmt), 0, "\"%s\"", f);
	return fmt;
}

/* ---- rec_decode ---- */

Test(decode, all_kinds)
{
	struct rec_fmt fmt = fmt_of("%d %u %f %s %ld %c");
	struct rec_field f[REC_ARGS_MAX];
	struct rb r;
	size_t len;

	rb_init(&r);
	rb_i64(&r, -5);
	rb_u64(&r, UINT64_MAX);
	rb_dbl(&r, -1.5e300);
	rb_str(&r, "hello");
	rb_i64(&r, INT64_MIN);
	rb_i64(&r, 'x');
	len = rb_finish(&r, REC_CLASS_USER, REC_ATTR_POINT, 7);
	cr_assert_eq(len, 16 + 8 + 8 + 8 + 16 + 8 + 8);
	cr_assert_eq(rec_decode(r.b, len, &fmt, f), 0);
	cr_assert_eq(f[0].kind, REC_K_INT);
	cr_assert_eq(f[0].v.i, -5);
	cr_assert_eq(f[1].kind, REC_K_UINT);
	cr_assert_eq(f[1].v.u, UINT64_MAX);
	cr_assert_eq(f[2].kind, REC_K_DOUBLE);
	cr_assert_eq(f[2].v.d, -1.5e300);
	cr_assert_eq(f[3].kind, REC_K_STR);
	cr_assert_eq(f[3].v.s.len, 5);
	cr_assert_eq(memcmp(f[3].v.s.p, "hello", 5), 0);
	cr_assert_eq(f[3].v.s.p, (const char *)r.b + 16 + 24 + 4,
	    "the string points into the record");
	cr_assert_eq(f[4].kind, REC_K_INT);
	cr_assert_eq(f[4].v.i, INT64_MIN);
	cr_assert_eq(f[5].v.i, 'x');
}

Test(decode, string_padding)
{
	struct rec_fmt fmt = fmt_of("%s %d %s %d %s %d");
	struct rec_field f[6];
	struct rb r;
	size_t len;

	rb_init(&r);
	rb_str(&r, "abcd");		/* 4 + 4: exactly one slot */
	rb_i64(&r, 1);
	rb_str(&r, "abcde");		/* 4 + 5: two slots */
	rb_i64(&r, 2);
	rb_str(&r, "");			/* 4 + 0: one slot */
	rb_i64(&r, 3);
	len = rb_finish(&r, REC_CLASS_EVENT, REC_ATTR_POINT, 1);
	cr_assert_eq(len, 16 + 8 + 8 + 16 + 8 + 8 + 8);
	cr_assert_eq(rec_decode(r.b, len, &fmt, f), 0);
	cr_assert_eq(f[0].v.s.len, 4);
	cr_assert_eq(memcmp(f[0].v.s.p, "abcd", 4), 0);
	cr_assert_eq(f[1].v.i, 1);
	cr_assert_eq(f[2].v.s.len, 5);
	cr_assert_eq(memcmp(f[2].v.s.p, "abcde", 5), 0);
	cr_assert_eq(f[3].v.i, 2);
	cr_assert_eq(f[4].v.s.len, 0);
	cr_assert_eq(f[5].v.i, 3);
}

Test(decode, string_at_end)
{
	struct rec_fmt fmt = fmt_of("%d %s");
	struct rec_field f[2];
	struct rb r;
	size_t len;

	rb_init(&r);
	rb_i64(&r, 42);
	rb_str(&r, "the end");		/* 4 + 7 = 11 -> 16 */
	len = rb_finish(&r, REC_CLASS_EVENT, REC_ATTR_POINT, 1);
	cr_assert_eq(len, 40);
	cr_assert_eq(rec_decode(r.b, len, &fmt, f), 0);
	cr_assert_eq(f[0].v.i, 42);
	cr_assert_eq(f[1].v.s.len, 7);
	cr_assert_eq(memcmp(f[1].v.s.p, "the end", 7), 0);
	/* The same record cut by one slot: the string no longer fits. */
	cr_assert_eq(rec_decode(r.b, len - 8, &fmt, f), -1);
}

Test(decode, string_max)
{
	static char s[REC_STR_MAX + 1];
	struct rec_fmt fmt = fmt_of("%s");
	struct rec_field f[1];
	static struct rb r;
	size_t len;

	memset(s, 'q', sizeof s);
	rb_init(&r);
	rb_str_raw(&r, REC_STR_MAX, s, REC_STR_MAX);
	len = rb_finish(&r, REC_CLASS_STRING, REC_ATTR_POINT, 1);
	cr_assert_eq(rec_decode(r.b, len, &fmt, f), 0);
	cr_assert_eq(f[0].v.s.len, REC_STR_MAX);

	/* One byte more is refused even though the buffer holds it. */
	rb_init(&r);
	rb_str_raw(&r, REC_STR_MAX + 1, s, REC_STR_MAX + 1);
	len = rb_finish(&r, REC_CLASS_STRING, REC_ATTR_POINT, 1);
	cr_assert_eq(rec_decode(r.b, len, &fmt, f), -1);
	cr_assert_eq(rec_decode(r.b, sizeof r.b, &fmt, f), -1);

	/* And so is a huge length. */
	rb_init(&r);
	rb_str_raw(&r, UINT32_MAX, s, 8);
	cr_assert_eq(rec_decode(r.b, sizeof r.b, &fmt, f), -1);
}

Test(decode, too_short_for_fields)
{
	struct rec_fmt fmt = fmt_of("%d %u %f");
	struct rec_field f[3];
	struct rb r;
	size_t len;

	rb_init(&r);
	rb_i64(&r, 1);
	rb_u64(&r, 2);
	rb_dbl(&r, 3.0);
	len = rb_finish(&r, REC_CLASS_EVENT, REC_ATTR_POINT, 1);
	cr_assert_eq(rec_decode(r.b, len, &fmt, f), 0);
	cr_assert_eq(f[2].v.d, 3.0);
	cr_assert_eq(rec_decode(r.b, len - 8, &fmt, f), -1);
	cr_assert_eq(rec_decode(r.b, len - 1, &fmt, f), -1);
	cr_assert_eq(rec_decode(r.b, 16, &fmt, f), -1);
	cr_assert_eq(rec_decode(r.b, 0, &fmt, f), -1);
}

Test(decode, no_fields)
{
	struct rec_fmt fmt = fmt_of("plain");
	struct rec_field f[1];
	struct rb r;

	rb_init(&r);
	cr_assert_eq(rec_decode(r.b, rb_finish(&r, 1, 2, 3), &fmt, f), 0);
}

Test(decode, string_length_past_end)
{
	struct rec_fmt fmt = fmt_of("%s");
	struct rec_field f[1];
	struct rb r;
	size_t len;

	rb_init(&r);
	/* Says 20 bytes, holds 4: the record is 16 + 8. */
	rb_str_raw(&r, 20, "abcd", 4);
	len = rb_finish(&r, REC_CLASS_EVENT, REC_ATTR_POINT, 1);
	cr_assert_eq(len, 24);
	cr_assert_eq(rec_decode(r.b, len, &fmt, f), -1);
	/* Says 5 bytes, which need two slots: one slot is not enough. */
	rb_init(&r);
	rb_str_raw(&r, 5, "abcd", 4);
	len = rb_finish(&r, REC_CLASS_EVENT, REC_ATTR_POINT, 1);
	cr_assert_eq(rec_decode(r.b, len, &fmt, f), -1);
	cr_assert_eq(rec_decode(r.b, len + 8, &fmt, f), 0);
	/* A string's length word cut off. */
	cr_assert_eq(rec_decode(r.b, 20, &fmt, f), -1);
}

/* ---- rec_valid_prefix ---- */

static void
put_hdr(unsigned char *b, uint16_t len)
{
	struct rec_hdr h = { len, REC_CLASS_EVENT, REC_ATTR_POINT, 9, 1 };

	memcpy(b, &h, sizeof h);
}

Test(valid_prefix, whole_records)
{
	_Alignas(8) unsigned char b[128];

	memset(b, 0, sizeof b);
	put_hdr(b, 16);
	put_hdr(b + 16, 24);
	put_hdr(b + 40, 32);
	cr_assert_eq(rec_valid_prefix(b, 72), 72);
	cr_assert_eq(rec_valid_prefix(b, 40), 40);
	cr_assert_eq(rec_valid_prefix(b, 16), 16);
	cr_assert_eq(rec_valid_prefix(b, 0), 0);
	/* A partial record at the end is not counted. */
	cr_assert_eq(rec_valid_prefix(b, 71), 40);
	cr_assert_eq(rec_valid_prefix(b, 50), 40);
	cr_assert_eq(rec_valid_prefix(b, 15), 0);
}

/* The META flag: set only by a whole record of class META within the
 * prefix (a Local Monitor looks for definitions only then). */
Test(valid_prefix, meta_flag)
{
	_Alignas(8) unsigned char b[128];
	int meta = -1;

	memset(b, 0, sizeof b);
	put_hdr(b, 16);
	put_hdr(b + 16, 24);
	put_hdr(b + 40, 32);
	cr_assert_eq(rec_valid_prefix_meta(b, 72, &meta), 72);
	cr_assert_eq(meta, 0);
	b[40 + offsetof(struct rec_hdr, cls)] = REC_CLASS_META;
	cr_assert_eq(rec_valid_prefix_meta(b, 72, &meta), 72);
	cr_assert_eq(meta, 1);
	/* Not within the whole records: not counted. */
	cr_assert_eq(rec_valid_prefix_meta(b, 71, &meta), 40);
	cr_assert_eq(meta, 0);
	b[offsetof(struct rec_hdr, cls)] = REC_CLASS_META;
	cr_assert_eq(rec_valid_prefix_meta(b, 71, &meta), 40);
	cr_assert_eq(meta, 1);
	cr_assert_eq(rec_valid_prefix_meta(b, 0, &meta), 0);
	cr_assert_eq(meta, 0);
}

Test(valid_prefix, len_zero)
{
	_Alignas(8) unsigned char b[64];

	memset(b, 0, sizeof b);
	cr_assert_eq(rec_valid_prefix(b, sizeof b), 0);
	put_hdr(b, 16);
	cr_assert_eq(rec_valid_prefix(b, sizeof b), 16);
}

Test(valid_prefix, len_not_multiple_of_8)
{
	_Alignas(8) unsigned char b[64];

	memset(b, 0, sizeof b);
	put_hdr(b, 20);
	cr_assert_eq(rec_valid_prefix(b, sizeof b), 0);
	put_hdr(b, 17);
	cr_assert_eq(rec_valid_prefix(b, sizeof b), 0);
	put_hdr(b, 16);
	put_hdr(b + 16, 31);
	cr_assert_eq(rec_valid_prefix(b, sizeof b), 16);
}

Test(valid_prefix, len_below_header)
{
	_Alignas(8) unsigned char b[64];

	memset(b, 0, sizeof b);
	put_hdr(b, 8);
	cr_assert_eq(rec_valid_prefix(b, sizeof b), 0);
	put_hdr(b, 16);
	put_hdr(b + 16, 8);
	cr_assert_eq(rec_valid_prefix(b, sizeof b), 16);
}

Test(valid_prefix, len_past_buffer)
{
	_Alignas(8) unsigned char b[64];

	memset(b, 0, sizeof b);
	put_hdr(b, 72);
	cr_assert_eq(rec_valid_prefix(b, sizeof b), 0);
	put_hdr(b, 16);
	put_hdr(b + 16, 56);
	cr_assert_eq(rec_valid_prefix(b, sizeof b), 16);
	put_hdr(b + 16, 48);
	cr_assert_eq(rec_valid_prefix(b, sizeof b), 64);
	put_hdr(b, 65528);
	cr_assert_eq(rec_valid_prefix(b, sizeof b), 0);
}

Test(valid_prefix, good_then_garbage)
{
	_Alignas(8) unsigned char b[96];

	memset(b, 0xff, sizeof b);
	put_hdr(b, 24);
	put_hdr(b + 24, 16);
	/* b + 40 on: 0xffff is not a multiple of 8 and past the end. */
	cr_assert_eq(rec_valid_prefix(b, sizeof b), 40);
	/* Valid-looking records after the garbage are not reached. */
	memset(b + 40, 0x01, 8);
	put_hdr(b + 48, 16);
	cr_assert_eq(rec_valid_prefix(b, sizeof b), 40);
}

/* ---- rec_build_define / rec_parse_define ---- */

static void
check_define(int32_t eid, uint8_t cls, uint8_t attr, const char *format,
	     const char *dsc)
{
	static _Alignas(8) unsigned char b[REC_MAX];
	const char *d = dsc != NULL ? dsc : "";
	struct rec_define def;
	struct rec_hdr h;
	size_t len;

	memset(b, 0xa5, sizeof b);
	len = rec_build_define(b, eid, cls, attr, format, dsc, 987654321);
	cr_assert_eq(len, 16 + 8 + rec_str_size(strlen(format)) +
	    rec_str_size(strlen(d)), "length %zu", len);
	cr_assert_eq(len % REC_ALIGN, 0);
	memcpy(&h, b, sizeof h);
	cr_assert_eq(h.len, len);
	cr_assert_eq(h.cls, REC_CLASS_META);
	cr_assert_eq(h.attr, REC_ATTR_DESCRIPTOR);
	cr_assert_eq(h.eid, eid);
	cr_assert_eq(h.ts, 987654321);
	cr_assert_eq(rec_valid_prefix(b, len), len);

	memset(&def, 0, sizeof def);
	cr_assert_eq(rec_parse_define(b, len, &def), 0);
	cr_assert_eq(def.eid, eid);
	cr_assert_eq(def.cls, cls);
	cr_assert_eq(def.attr, attr);
	cr_assert_eq(def.format_len, strlen(format));
	cr_assert_eq(memcmp(def.format, format, def.format_len), 0);
	cr_assert_eq(def.dsc_len, strlen(d));
	cr_assert_eq(memcmp(def.dsc, d, def.dsc_len), 0);
	cr_assert(def.format >= (const char *)b &&
	    def.format + def.format_len <= (const char *)b + len);
	cr_assert(def.dsc >= (const char *)b &&
	    def.dsc + def.dsc_len <= (const char *)b + len);
}

Test(define, round_trip_negative_eid)
{
	check_define(REC_EID_BLOCK_NAME, REC_CLASS_PROCEDURE, REC_ATTR_NAME,
	    "%d %s", "block name");
	check_define(INT32_MIN, REC_CLASS_PROCEDURE, REC_ATTR_ACT, "%d",
	    "most negative");
}

Test(define, round_trip_positive_eid)
{
	check_define(0, REC_CLASS_USER, REC_ATTR_POINT, "x=%d y=%f", "xy");
	check_define(4242, REC_CLASS_MESSAGE, REC_ATTR_AGGREGATE,
	    "%s sent %zu bytes to %u", "a message");
	check_define(INT32_MAX, 0xab, 0xcd, "", "odd class and attribute");
}

Test(define, empty_and_null_description)
{
	check_define(7, REC_CLASS_EVENT, REC_ATTR_PROBE, "%u", "");
	check_define(8, REC_CLASS_EVENT, REC_ATTR_TERM, "%u", NULL);
}

Test(define, longest_strings)
{
	char f[REC_FMT_MAX], d[REC_DSC_MAX];

	memset(f, 'f', sizeof f - 1);
	f[sizeof f - 1] = '\0';
	memset(d, 'd', sizeof d - 1);
	d[sizeof d - 1] = '\0';
	check_define(1, REC_CLASS_USER, REC_ATTR_POINT, f, d);
}

Test(define, too_long)
{
	static _Alignas(8) unsigned char b[REC_MAX];
	char f[REC_FMT_MAX + 1], d[REC_DSC_MAX + 1];

	memset(f, 'f', sizeof f - 1);
	f[sizeof f - 1] = '\0';
	memset(d, 'd', sizeof d - 1);
	d[sizeof d - 1] = '\0';
	cr_assert_eq(rec_build_define(b, 1, 8, 2, f, "ok", 0), 0);
	cr_assert_eq(rec_build_define(b, 1, 8, 2, "%d", d, 0), 0);
}

Test(define, refuses_non_meta)
{
	static _Alignas(8) unsigned char b[REC_MAX];
	struct rec_define def;
	size_t len;

	len = rec_build_define(b, 3, REC_CLASS_USER, REC_ATTR_POINT, "%d",
	    "d", 0);
	cr_assert_gt(len, 0);
	cr_assert_eq(rec_parse_define(b, len, &def), 0);
	b[2] = REC_CLASS_USER;
	cr_assert_eq(rec_parse_define(b, len, &def), -1);
	b[2] = REC_CLASS_META;
	b[3] = REC_ATTR_LOSS;
	cr_assert_eq(rec_parse_define(b, len, &def), -1);
	b[3] = REC_ATTR_DESCRIPTOR;
	cr_assert_eq(rec_parse_define(b, len, &def), 0);
}

Test(define, refuses_truncated)
{
	static _Alignas(8) unsigned char b[REC_MAX];
	struct rec_define def;
	unsigned char *cp;
	size_t len, l;
	int r;

	len = rec_build_define(b, 3, REC_CLASS_USER, REC_ATTR_POINT,
	    "%d and %s", "some description", 0);
	cr_assert_gt(len, 0);
	/* Each cut in a buffer of just that size: no reading past it. */
	for (l = 0; l < len; l++) {
		cp = malloc(l > 0 ? l : 1);
		cr_assert_not_null(cp);
		memcpy(cp, b, l);
		r = rec_parse_define(cp, l, &def);
		free(cp);
		cr_assert_eq(r, -1, "accepted cut to %zu of %zu bytes", l, len);
	}
	cr_assert_eq(rec_parse_define(b, len, &def), 0);
}

Test(define, refuses_nul_in_strings)
{
	static _Alignas(8) unsigned char b[REC_MAX];
	struct rec_define def;
	size_t len;

	/* format "abcd" at 24 + 4, description "efgh" at 32 + 4. */
	len = rec_build_define(b, 3, REC_CLASS_USER, REC_ATTR_POINT, "abcd",
	    "efgh", 0);
	cr_assert_eq(len, 40);
	cr_assert_eq(memcmp(b + 28, "abcd", 4), 0);
	cr_assert_eq(memcmp(b + 36, "efgh", 4), 0);
	b[29] = '\0';
	cr_assert_eq(rec_parse_define(b, len, &def), -1);
	b[29] = 'b';
	cr_assert_eq(rec_parse_define(b, len, &def), 0);
	b[39] = '\0';
	cr_assert_eq(rec_parse_define(b, len, &def), -1);
}

Test(define, refuses_overlong_strings)
{
	static char s[REC_FMT_MAX];
	struct rec_define def;
	static struct rb r;
	size_t len;

	memset(s, 'a', sizeof s);
	/* A format of REC_FMT_MAX bytes, hand-built. */
	rb_init(&r);
	rb_u64(&r, REC_CLASS_USER);
	rb_str_raw(&r, REC_FMT_MAX, s, REC_FMT_MAX);
	rb_str(&r, "d");
	len = rb_finish(&r, REC_CLASS_META, REC_ATTR_DESCRIPTOR, 1);
	cr_assert_eq(rec_parse_define(r.b, len, &def), -1);
	/* A description of REC_DSC_MAX bytes. */
	rb_init(&r);
	rb_u64(&r, REC_CLASS_USER);
	rb_str(&r, "%d");
	rb_str_raw(&r, REC_DSC_MAX, s, REC_DSC_MAX);
	len = rb_finish(&r, REC_CLASS_META, REC_ATTR_DESCRIPTOR, 1);
	cr_assert_eq(rec_parse_define(r.b, len, &def), -1);
	/* One byte shorter each: accepted. */
	rb_init(&r);
	rb_u64(&r, REC_CLASS_USER | REC_ATTR_POINT << 8);
	rb_str_raw(&r, REC_FMT_MAX - 1, s, REC_FMT_MAX - 1);
	rb_str_raw(&r, REC_DSC_MAX - 1, s, REC_DSC_MAX - 1);
	len = rb_finish(&r, REC_CLASS_META, REC_ATTR_DESCRIPTOR, -9);
	cr_assert_eq(rec_parse_define(r.b, len, &def), 0);
	cr_assert_eq(def.eid, -9);
	cr_assert_eq(def.cls, REC_CLASS_USER);
	cr_assert_eq(def.attr, REC_ATTR_POINT);
	cr_assert_eq(def.format_len, REC_FMT_MAX - 1);
	cr_assert_eq(def.dsc_len, REC_DSC_MAX - 1);
}

/* A record longer than REC_MAX is malformed even if the buffer holds it. */
Test(valid_prefix, longer_than_rec_max)
{
	static unsigned char buf[2 * REC_MAX];
	struct rec_hdr h = { 0 };

	h.len = REC_MAX;
	memcpy(buf, &h, sizeof h);
	cr_assert_eq(rec_valid_prefix(buf, REC_MAX), REC_MAX);
	h.len = REC_MAX + REC_ALIGN;
	memcpy(buf, &h, sizeof h);
	cr_assert_eq(rec_valid_prefix(buf, sizeof buf), 0);
}
