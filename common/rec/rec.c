/* SPDX-License-Identifier: MIT */
/* rec.c: parsing event formats; decoding and checking binary records. */
#include <string.h>

#include "rec/rec.h"

const struct rec_predef rec_predef[REC_NPREDEF] = {
	{ REC_EID_BLOCK_BEGIN, REC_CLASS_PROCEDURE, REC_ATTR_ACT, "%d",
	    "block begin" },
	{ REC_EID_BLOCK_END, REC_CLASS_PROCEDURE, REC_ATTR_TERM, "%d",
	    "block end" },
	{ REC_EID_BLOCK_NAME, REC_CLASS_PROCEDURE, REC_ATTR_NAME, "%d %s",
	    "block name" },
	{ REC_EID_MSG_SEND, REC_CLASS_MESSAGE, REC_ATTR_ACT, "%d %d %ld",
	    "message send" },
	{ REC_EID_MSG_RECV, REC_CLASS_MESSAGE, REC_ATTR_TERM, "%d %d %ld",
	    "message receive" },
	{ REC_EID_PROC_NAME, REC_CLASS_EVENT, REC_ATTR_NAME, "%d %s",
	    "process name" },
	{ REC_EID_COLL_BEGIN, REC_CLASS_EVENT, REC_ATTR_ACT, "%u %u %u %lu",
	    "collection begin" },
	{ REC_EID_COLL_END, REC_CLASS_EVENT, REC_ATTR_TERM, "%u %u %u",
	    "collection end" },
};

int
rec_parse_format(const char *format, struct rec_fmt *out)
{
	const char *p;
	int lng, mod;

	if (format == NULL || strlen(format) >= REC_FMT_MAX)
		return -1;
	memset(out, 0, sizeof *out);
	for (p = format; *p != '\0'; p++) {
		if (*p != '%')
			continue;
		p++;
		if (*p == '%')
			continue;
		while (*p != '\0' && strchr("-+ #0'", *p) != NULL)
			p++;
		while (*p >= '0' && *p <= '9')
			p++;
		if (*p == '.') {
			p++;
			while (*p >= '0' && *p <= '9')
				p++;
		}
		/* Length modifiers: only a 64-bit one changes how va_arg
		 * fetches (size_t, intmax_t, ptrdiff_t are 64-bit here). */
		lng = 0;
		mod = 0;
		if (*p == 'h') {
			mod = 1;
			p++;
			if (*p == 'h')
				p++;
		} else if (*p == 'l') {
			mod = lng = 1;
			p++;
			if (*p == 'l') {
				lng = 2;
				p++;
			}
		} else if (*p == 'z' || *p == 'j' || *p == 't' || *p == 'q') {
			mod = lng = 1;
			p++;
		} else if (*p == 'L') {
			return -1;	/* long double: not supported */
		}
		if (out->n == REC_ARGS_MAX)
			return -1;
		switch (*p) {
		case 'c':	/* int, or wint_t for %lc: promoted to int */
			if (mod && lng != 1)
				return -1;
			out->kind[out->n] = REC_K_INT;
			out->va[out->n] = REC_VA_INT;
			break;
		case 'd':
		case 'i':
			out->kind[out->n] = REC_K_INT;
			out->va[out->n] = lng ? REC_VA_LONG : REC_VA_INT;
			break;
		case 'u':
		case 'x':
		case 'X':
		case 'o':
			out->kind[out->n] = REC_K_UINT;
			out->va[out->n] = lng ? REC_VA_ULONG : REC_VA_UINT;
			break;
		case 'f':
		case 'F':
		case 'g':
		case 'G':
		case 'e':
		case 'E':
		case 'a':
		case 'A':
			if (mod && lng != 1)
				return -1;	/* only %lf is valid */
			if (p[-1] != 'l' && mod)
				return -1;
			out->kind[out->n] = REC_K_DOUBLE;
			out->va[out->n] = REC_VA_DOUBLE;
			break;
		case 'p':
			if (mod)
				return -1;
			out->kind[out->n] = REC_K_UINT;
			out->va[out->n] = REC_VA_VOIDP;
			break;
		case 's':
			if (mod)
				return -1;	/* wide or invalid strings */
			out->kind[out->n] = REC_K_STR;
			out->va[out->n] = REC_VA_PTR;
			break;
		default:
			return -1;	/* '*', %n, unknown, or end of string */
		}
		out->n++;
	}
	return 0;
}

int
rec_decode(const void *rec, size_t len, const struct rec_fmt *fmt,
	   struct rec_field *out)
{
	const unsigned char *b = rec;
	size_t off = sizeof(struct rec_hdr);
	uint32_t slen;
	unsigned i;

	for (i = 0; i < fmt->n; i++) {
		if (off + 8 > len)
			return -1;
		out[i].kind = fmt->kind[i];
		switch (fmt->kind[i]) {
		case REC_K_INT:
			memcpy(&out[i].v.i, b + off, 8);
			off += 8;
			break;
		case REC_K_UINT:
			memcpy(&out[i].v.u, b + off, 8);
			off += 8;
			break;
		case REC_K_DOUBLE:
			memcpy(&out[i].v.d, b + off, 8);
			off += 8;
			break;
		case REC_K_STR:
			memcpy(&slen, b + off, 4);
			if (slen > REC_STR_MAX || off + rec_str_size(slen) > len)
				return -1;
			out[i].v.s.p = (const char *)b + off + 4;
			out[i].v.s.len = slen;
			off += rec_str_size(slen);
			break;
		default:
			return -1;
		}
	}
	return 0;
}

size_t
rec_valid_prefix(const void *buf, size_t len)
{
	int meta;

	return rec_valid_prefix_meta(buf, len, &meta);
}

size_t
rec_valid_prefix_meta(const void *buf, size_t len, int *meta)
{
	const unsigned char *b = buf;
	size_t off = 0;
	uint16_t rlen;
	uint8_t cls = 0;

	while (off + sizeof(struct rec_hdr) <= len) {
		memcpy(&rlen, b + off, sizeof rlen);
		if (rlen < sizeof(struct rec_hdr) || rlen % REC_ALIGN != 0 ||
		    rlen > REC_MAX || rlen > len - off)
			break;
		cls |= (uint8_t)(b[off + offsetof(struct rec_hdr, cls)] ==
		    REC_CLASS_META);
		off += rlen;
	}
	*meta = cls != 0;
	return off;
}

static size_t
put_str(unsigned char *b, size_t off, const char *s, size_t n)
{
	uint32_t l = (uint32_t)n;

	memcpy(b + off, &l, 4);
	memcpy(b + off + 4, s, n);
	memset(b + off + 4 + n, 0, rec_str_size(n) - 4 - n);
	return off + rec_str_size(n);
}

size_t
rec_build_define(void *buf, int32_t eid, uint8_t cls, uint8_t attr,
		 const char *format, const char *dsc, uint64_t ts)
{
	unsigned char *b = buf;
	size_t fl, dl, off;
	uint64_t ca;

	if (format == NULL)
		return 0;
	if (dsc == NULL)
		dsc = "";
	fl = strlen(format);
	dl = strlen(dsc);
	if (fl >= REC_FMT_MAX || dl >= REC_DSC_MAX)
		return 0;
	off = sizeof(struct rec_hdr);
	ca = (uint64_t)cls | (uint64_t)attr << 8;
	memcpy(b + off, &ca, 8);
	off += 8;
	off = put_str(b, off, format, fl);
	off = put_str(b, off, dsc, dl);
	rec_put_hdr(b, off, REC_CLASS_META, REC_ATTR_DESCRIPTOR, eid, ts);
	return off;
}

int
rec_parse_define(const void *rec, size_t len, struct rec_define *out)
{
	static const struct rec_fmt fmt = {
		3, { REC_K_UINT, REC_K_STR, REC_K_STR }, { 0 }
	};
	struct rec_field f[3];
	struct rec_hdr h;

	if (len < sizeof h)
		return -1;
	memcpy(&h, rec, sizeof h);
	if (h.cls != REC_CLASS_META || h.attr != REC_ATTR_DESCRIPTOR ||
	    rec_decode(rec, len, &fmt, f) != 0)
		return -1;
	if (f[1].v.s.len >= REC_FMT_MAX || f[2].v.s.len >= REC_DSC_MAX ||
	    memchr(f[1].v.s.p, '\0', f[1].v.s.len) != NULL ||
	    memchr(f[2].v.s.p, '\0', f[2].v.s.len) != NULL)
		return -1;
	out->eid = h.eid;
	out->cls = (uint8_t)(f[0].v.u & 0xff);
	out->attr = (uint8_t)(f[0].v.u >> 8 & 0xff);
	out->format = f[1].v.s.p;
	out->format_len = f[1].v.s.len;
	out->dsc = f[2].v.s.p;
	out->dsc_len = f[2].v.s.len;
	return 0;
}

uint64_t
rec_count_events(const void *buf, size_t len)
{
	const char *p = buf;
	size_t off = 0, ok = rec_valid_prefix(buf, len);
	struct rec_hdr h;
	uint64_t n = 0, lost;

	while (off < ok) {
		memcpy(&h, p + off, sizeof h);
		if (h.cls != REC_CLASS_META)
			n++;
		else if (h.attr == REC_ATTR_LOSS && h.len >= sizeof h + 8) {
			memcpy(&lost, p + off + sizeof h, 8);
			n += lost;
		}
		off += h.len;
	}
	return n;
}

size_t
rec_build_stats(void *buf, const struct rec_stats *st, uint64_t ts)
{
	unsigned char *b = buf;
	uint64_t slot[8];

	slot[0] = st->kind;
	memcpy(&slot[1], &st->key, 8);
	slot[2] = st->r.count;
	slot[3] = st->r.total;
	slot[4] = st->r.min;
	slot[5] = st->r.max;
	memcpy(&slot[6], &st->r.mean, 8);
	memcpy(&slot[7], &st->r.m2, 8);
	rec_put_hdr(b, REC_STATS_LEN, REC_CLASS_META, REC_ATTR_STATS, st->eid,
	    ts);
	memcpy(b + sizeof(struct rec_hdr), slot, sizeof slot);
	return REC_STATS_LEN;
}

int
rec_parse_stats(const void *rec, size_t len, struct rec_stats *out)
{
	const unsigned char *b = rec;
	struct rec_hdr h;
	uint64_t slot[8];

	if (len < REC_STATS_LEN)
		return -1;
	memcpy(&h, b, sizeof h);
	if (h.cls != REC_CLASS_META || h.attr != REC_ATTR_STATS ||
	    h.len < REC_STATS_LEN)
		return -1;
	memcpy(slot, b + sizeof h, sizeof slot);
	if (slot[0] != REC_STATS_COUNT && slot[0] != REC_STATS_RANGE)
		return -1;
	out->eid = h.eid;
	out->kind = (uint32_t)slot[0];
	memcpy(&out->key, &slot[1], 8);
	out->r.count = slot[2];
	out->r.total = slot[3];
	out->r.min = slot[4];
	out->r.max = slot[5];
	memcpy(&out->r.mean, &slot[6], 8);
	memcpy(&out->r.m2, &slot[7], 8);
	return 0;
}
