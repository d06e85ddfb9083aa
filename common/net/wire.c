/* SPDX-License-Identifier: MIT */
/* wire.c: encoding and bounds-checked decoding of protocol messages. */
#include <string.h>

#include "net/wire.h"

void
wire_wr_init(struct wire_wr *w, void *buf, size_t cap)
{
	w->p = buf;
	w->len = 0;
	w->cap = cap;
	w->err = 0;
}

void
wire_put_bytes(struct wire_wr *w, const void *p, size_t n)
{
	if (w->err || n > w->cap - w->len) {
		w->err = 1;
		return;
	}
	memcpy(w->p + w->len, p, n);
	w->len += n;
}

static void
put_le(struct wire_wr *w, uint64_t v, int n)
{
	unsigned char b[8];
	int i;

	for (i = 0; i < n; i++)
		b[i] = (unsigned char)(v >> (8 * i));
	wire_put_bytes(w, b, (size_t)n);
}

void
wire_put_u16(struct wire_wr *w, uint16_t v)
{
	put_le(w, v, 2);
}

void
wire_put_u32(struct wire_wr *w, uint32_t v)
{
	put_le(w, v, 4);
}

void
wire_put_u64(struct wire_wr *w, uint64_t v)
{
	put_le(w, v, 8);
}

static void
put_str(struct wire_wr *w, const char *s, size_t max)
{
	size_t n = strlen(s);

	if (n > max) {
		w->err = 1;
		return;
	}
	wire_put_u16(w, (uint16_t)n);
	wire_put_bytes(w, s, n);
}

void
wire_put_str(struct wire_wr *w, const char *s)
{
	put_str(w, s, WIRE_STR_MAX);
}

void
wire_put_text(struct wire_wr *w, const char *s)
{
	put_str(w, s, WIRE_TEXT_MAX);
}

void
wire_header(void *buf, uint16_t type, uint32_t len)
{
	struct wire_wr w;

	wire_wr_init(&w, buf, WIRE_HDR);
	wire_put_u32(&w, WIRE_MAGIC);
	wire_put_u16(&w, WIRE_VERSION);
	wire_put_u16(&w, type);
	wire_put_u32(&w, len);
}

void
wire_rd_init(struct wire_rd *r, const void *buf, size_t len)
{
	r->p = buf;
	r->len = len;
	r->off = 0;
	r->err = 0;
}

static uint64_t
get_le(struct wire_rd *r, int n)
{
	uint64_t v = 0;
	int i;

	if (r->err || (size_t)n > r->len - r->off) {
		r->err = 1;
		return 0;
	}
	for (i = 0; i < n; i++)
		v |= (uint64_t)r->p[r->off + i] << (8 * i);
	r->off += (size_t)n;
	return v;
}

uint16_t
wire_get_u16(struct wire_rd *r)
{
	return (uint16_t)get_le(r, 2);
}

uint32_t
wire_get_u32(struct wire_rd *r)
{
	return (uint32_t)get_le(r, 4);
}

uint64_t
wire_get_u64(struct wire_rd *r)
{
	return get_le(r, 8);
}

void
wire_get_bytes(struct wire_rd *r, void *out, size_t n)
{
	if (r->err || n > r->len - r->off) {
		r->err = 1;
		memset(out, 0, n);
		return;
	}
	memcpy(out, r->p + r->off, n);
	r->off += n;
}

void
wire_get_str(struct wire_rd *r, char *out, size_t outsz)
{
	size_t n = wire_get_u16(r);

	if (r->err || n >= outsz || n > r->len - r->off ||
	    memchr(r->p + r->off, '\0', n) != NULL) {
		r->err = 1;
		if (outsz > 0)
			out[0] = '\0';
		return;
	}
	memcpy(out, r->p + r->off, n);
	out[n] = '\0';
	r->off += n;
}

int
wire_parse_header(const void *buf, uint16_t *type, uint32_t *len,
		  const char **why)
{
	struct wire_rd r;
	uint32_t magic;
	uint16_t version;

	wire_rd_init(&r, buf, WIRE_HDR);
	magic = wire_get_u32(&r);
	version = wire_get_u16(&r);
	*type = wire_get_u16(&r);
	*len = wire_get_u32(&r);
	if (magic != WIRE_MAGIC) {
		*why = "bad magic";
		return -1;
	}
	if (version != WIRE_VERSION) {
		*why = "unsupported protocol version";
		return -1;
	}
	if (*len > WIRE_MAX) {
		*why = "message too long";
		return -1;
	}
	return 0;
}
