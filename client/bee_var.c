/* SPDX-License-Identifier: MIT */
/* bee_var.c: BEE type descriptors: the C layout of an event variant, and
 * its decoding into record fields. */
#include <string.h>

#include "bee_int.h"

/* The integer type a length modifier gives: 1, 2, 4 or 8 bytes. */
static int
int_size(const char *mod)
{
	if (strcmp(mod, "hh") == 0)
		return 1;
	if (strcmp(mod, "h") == 0)
		return 2;
	if (*mod == '\0')
		return 4;
	return 8;	/* l ll j z t q: 64-bit here (rec.h asserts LP64) */
}

static uint8_t
int_ctype(int size, int sign)
{
	switch (size) {
	case 1:
		return sign ? BEE_I8 : BEE_U8;
	case 2:
		return sign ? BEE_I16 : BEE_U16;
	case 4:
		return sign ? BEE_I32 : BEE_U32;
	default:
		return sign ? BEE_I64 : BEE_U64;
	}
}

/*
 * One conversion at *pp (just after its '%'): fills fd with the type and
 * size (not the offset) and moves *pp past it.  Returns 0, or -1 for what
 * a structure field cannot be.  rec_parse_format has already accepted the
 * descriptor, so the syntax is known to be sound.
 */
static int
conversion(const char **pp, struct bee_field *fd)
{
	const char *p = *pp;
	char mod[3] = "";
	unsigned long width = 0;
	int sz, sign;

	while (*p != '\0' && strchr("-+ #0'", *p) != NULL)
		p++;
	while (*p >= '0' && *p <= '9') {
		if (width < 100000)
			width = width * 10 + (unsigned long)(*p - '0');
		p++;
	}
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++)
			;
	if (*p != '\0' && strchr("hljztq", *p) != NULL) {
		mod[0] = *p++;
		if ((mod[0] == 'h' || mod[0] == 'l') && *p == mod[0])
			mod[1] = *p++;
	}
	*pp = p;
	switch (*p) {
	case 'd':
	case 'i':
	case 'u':
	case 'x':
	case 'X':
	case 'o':
		sz = int_size(mod);
		sign = *p == 'd' || *p == 'i';
		fd->ctype = int_ctype(sz, sign);
		fd->kind = sign ? REC_K_INT : REC_K_UINT;
		fd->size = (uint16_t)sz;
		return 0;
	case 'c':	/* char; %lc: wint_t */
		fd->ctype = *mod == '\0' ? BEE_CHAR : BEE_I32;
		fd->kind = REC_K_INT;
		fd->size = *mod == '\0' ? 1 : 4;
		return 0;
	case 'f':
	case 'F':
	case 'e':
	case 'E':
	case 'g':
	case 'G':
	case 'a':
	case 'A':	/* scanf's sizes: float, or double with l */
		fd->ctype = *mod == '\0' ? BEE_F32 : BEE_F64;
		fd->kind = REC_K_DOUBLE;
		fd->size = *mod == '\0' ? 4 : 8;
		return 0;
	case 'p':
		fd->ctype = BEE_PTR;
		fd->kind = REC_K_UINT;
		fd->size = sizeof(void *);
		return 0;
	case 's':
		fd->kind = REC_K_STR;
		if (width == 0) {
			fd->ctype = BEE_STRP;
			fd->size = sizeof(char *);
		} else if (width <= UINT16_MAX) {
			fd->ctype = BEE_CHARS;
			fd->size = (uint16_t)width;
		} else {
			return -1;
		}
		return 0;
	default:
		return -1;
	}
}

int
bee_layout_parse(const char *type, struct bee_layout *out)
{
	struct rec_fmt rf;
	struct bee_field *fd;
	uint32_t off = 0, align, maxalign = 1;
	const char *p;

	if (type == NULL || rec_parse_format(type, &rf) != 0)
		return -1;
	memset(out, 0, sizeof *out);
	for (p = type; *p != '\0'; p++) {
		if (*p != '%')
			continue;
		if (p[1] == '%') {
			p++;
			continue;
		}
		p++;
		if (out->n == REC_ARGS_MAX)
			return -1;
		fd = &out->f[out->n];
		if (conversion(&p, fd) != 0 || fd->kind != rf.kind[out->n])
			return -1;
		align = fd->ctype == BEE_CHARS ? 1 : fd->size;
		off = (off + align - 1) / align * align;
		fd->off = off;
		off += fd->size;
		if (align > maxalign)
			maxalign = align;
		out->n++;
	}
	if (out->n != rf.n)
		return -1;
	out->size = (off + maxalign - 1) / maxalign * maxalign;
	return 0;
}

static void
put_str(struct rec_field *f, const char *s, size_t max)
{
	f->kind = REC_K_STR;
	if (s == NULL)
		s = "(null)";
	if (max > REC_STR_MAX)
		max = REC_STR_MAX;
	f->v.s.p = s;
	f->v.s.len = (uint32_t)strnlen(s, max);
}

int
bee_decode(const struct bee_layout *l, const void *var, struct rec_field *f)
{
	const unsigned char *b = var;
	const struct bee_field *fd;
	const char *s;
	unsigned i;
	union {
		int8_t i8; int16_t i16; int32_t i32; int64_t i64;
		uint8_t u8; uint16_t u16; uint32_t u32; uint64_t u64;
		float f32; double f64; void *ptr;
	} x;

	if (l->n > 0 && var == NULL)
		return -1;
	for (i = 0; i < l->n; i++) {
		fd = &l->f[i];
		f[i].kind = fd->kind;
		if (fd->ctype == BEE_CHARS) {
			put_str(&f[i], (const char *)b + fd->off, fd->size);
			continue;
		}
		if (fd->ctype == BEE_STRP) {
			memcpy(&s, b + fd->off, sizeof s);
			put_str(&f[i], s, REC_STR_MAX);
			continue;
		}
		memcpy(&x, b + fd->off, fd->size);
		switch (fd->ctype) {
		case BEE_I8:	f[i].v.i = x.i8; break;
		case BEE_I16:	f[i].v.i = x.i16; break;
		case BEE_I32:	f[i].v.i = x.i32; break;
		case BEE_I64:	f[i].v.i = x.i64; break;
		case BEE_U8:	f[i].v.u = x.u8; break;
		case BEE_U16:	f[i].v.u = x.u16; break;
		case BEE_U32:	f[i].v.u = x.u32; break;
		case BEE_U64:	f[i].v.u = x.u64; break;
		case BEE_CHAR:	f[i].v.i = x.u8; break;
		case BEE_F32:	f[i].v.d = x.f32; break;
		case BEE_F64:	f[i].v.d = x.f64; break;
		default:	f[i].v.u = (uint64_t)(uintptr_t)x.ptr; break;
		}
	}
	return (int)l->n;
}
