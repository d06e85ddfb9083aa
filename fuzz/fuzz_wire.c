/* SPDX-License-Identifier: MIT */
/* fuzz_wire.c: libFuzzer target for the wire protocol decoding (wire.c),
 * the handshake's parsers (auth.c) and the identifier's (mmid.c).
 *
 * Input:
 *	0	12 bytes: a message header, for wire_parse_header
 *	12	u8 nops (at most MAXOPS are used), then nops operation bytes
 *	...	the payload the operations read
 *
 * Each operation byte picks wire_get_u16/u32/u64/str (low two bits); for
 * a string, bit 2 picks the 64-byte or the 4097-byte output buffer.  Every
 * result is compared with a model of the reader written here, and what was
 * read is written again with wire_put_* and must give the same bytes.  The
 * whole input, NUL-terminated, is also given to mmid_split and mmid_parse
 * (an identifier that parses must format back to itself, but for the
 * token's case); the payload after the operation bytes to
 * auth_hello_parse (a HELLO that parses must build back to the same
 * bytes), and, cut into messages, to the connecting side's handshake
 * (auth_client_msg), which must never take a WELCOME whose proof it did
 * not compute itself.  A header that parses is also checked against its
 * rule (wire_check), from a sender, to a receiver and in a state picked by
 * the byte after it, and the answer compared with the table it reads.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "net/auth.h"
#include "net/mmid.h"
#include "net/wire.h"

#define MAXOPS	64
#define SMALL	64
#define BIG	(WIRE_STR_MAX + 1)

/* wire_check says what the rule of type says, and why when it refuses. */
static void
rule(uint16_t type, uint32_t len, unsigned pick)
{
	const struct wire_rule *r = wire_rule(type);
	unsigned by = 1u << (pick % 3), to = 1u << (pick / 3 % 3);
	unsigned st = 1u << (pick / 9 % 3);
	char why[160] = "";
	int rc, ok;

	rc = wire_check(type, by, to, st, len, why, sizeof why);
	ok = r != NULL && (r->by & by) && (r->to & to) && (r->states & st) &&
	    (r->exact ? len == r->len : len >= r->len);
	CHECK(rc == (ok ? 0 : -1));
	CHECK(rc == 0 || why[0] != '\0');
	CHECK(r == NULL || strcmp(wire_type_name(type), r->name) == 0);
}

static void
header(const uint8_t *data, size_t size)
{
	uint8_t h[WIRE_HDR] = { 0 }, h2[WIRE_HDR];
	const char *why = NULL;
	uint16_t type, type2;
	uint32_t len, len2;
	int rc;

	memcpy(h, data, size < WIRE_HDR ? size : WIRE_HDR);
	rc = wire_parse_header(h, &type, &len, &why);
	CHECK(type == ld(h + 6, 2) && len == ld(h + 8, 4));
	CHECK(rc == ((ld(h, 4) == WIRE_MAGIC && ld(h + 4, 2) == WIRE_VERSION &&
	    len <= WIRE_MAX) ? 0 : -1));
	if (rc != 0) {
		CHECK(why != NULL && *why != '\0');
		return;
	}
	rule(type, len, size > WIRE_HDR ? data[WIRE_HDR] : 0);
	/* wire_header writes back the same twelve bytes. */
	wire_header(h2, type, len);
	CHECK(memcmp(h, h2, WIRE_HDR) == 0);
	CHECK(wire_parse_header(h2, &type2, &len2, &why) == 0 &&
	    type2 == type && len2 == len);
}

static void
reader(const uint8_t *ops, size_t nops, const uint8_t *pl, size_t plen)
{
	struct wire_rd r;
	struct wire_wr w;
	char *small, *big, *out;
	unsigned char *wbuf;
	size_t i, moff = 0, outsz, n;
	uint64_t v, want;
	int merr = 0, width;

	CHECK((small = malloc(SMALL)) != NULL && (big = malloc(BIG)) != NULL);
	CHECK((wbuf = malloc(plen > 0 ? plen : 1)) != NULL);
	wire_rd_init(&r, pl, plen);
	wire_wr_init(&w, wbuf, plen);
	for (i = 0; i < nops; i++) {
		switch (ops[i] & 3) {
		case 3:
			outsz = ops[i] & 4 ? BIG : SMALL;
			out = outsz == BIG ? big : small;
			memset(out, 'x', outsz);
			wire_get_str(&r, out, outsz);
			/* The model. */
			if (merr || plen - moff < 2) {
				merr = 1;
			} else {
				n = (size_t)ld(pl + moff, 2);
				moff += 2;
				if (n >= outsz || n > plen - moff ||
				    memchr(pl + moff, '\0', n) != NULL) {
					merr = 1;
				} else {
					CHECK(memcmp(out, pl + moff, n) == 0 &&
					    out[n] == '\0');
					moff += n;
					wire_put_str(&w, out);
				}
			}
			if (merr)
				CHECK(out[0] == '\0');
			break;
		default:
			width = 2 << (ops[i] & 3);
			if (width == 2)
				v = wire_get_u16(&r);
			else if (width == 4)
				v = wire_get_u32(&r);
			else
				v = wire_get_u64(&r);
			if (merr || plen - moff < (size_t)width) {
				merr = 1;
				want = 0;
			} else {
				want = ld(pl + moff, width);
				moff += (size_t)width;
				if (width == 2)
					wire_put_u16(&w, (uint16_t)v);
				else if (width == 4)
					wire_put_u32(&w, (uint32_t)v);
				else
					wire_put_u64(&w, v);
			}
			CHECK(v == want);
			sink += v;
		}
		CHECK(r.err == merr && wire_rd_ok(&r) == !merr);
		CHECK(r.off <= r.len && r.len == plen);
		CHECK(wire_rd_left(&r) == (merr ? 0 : plen - moff));
		if (!merr)
			CHECK(r.off == moff);
	}
	/* Writing what was read gives the bytes read. */
	CHECK(!w.err);
	if (!merr)
		CHECK(w.len == moff && memcmp(wbuf, pl, moff) == 0);
	/* One more byte than the room left must fail, and stay failed. */
	if (w.len < w.cap) {
		n = w.cap - w.len;
		wire_put_bytes(&w, pl, n);
		CHECK(!w.err && w.len == w.cap);
	}
	wire_put_u16(&w, 1);
	CHECK(w.err && w.len == w.cap);
	free(small);
	free(big);
	free(wbuf);
}

static void
split(const uint8_t *data, size_t size)
{
	char *s, *host, *small;
	const char *colon;
	unsigned port = 0;
	size_t hsz;

	CHECK((s = malloc(size + 1)) != NULL);
	memcpy(s, data, size);
	s[size] = '\0';
	CHECK((host = malloc(256)) != NULL);
	if (mmid_split(s, host, 256, &port) == 0) {
		colon = strrchr(s, ':');
		CHECK(colon != NULL && port >= 1 && port <= 65535);
		CHECK(strlen(host) > 0 && strlen(host) < 256);
		CHECK(strlen(host) <= (size_t)(colon - s));
		sink += port + strlen(host);
	}
	/* A host buffer of the first byte's size, exactly, to catch a write
	 * past it. */
	hsz = size > 0 ? data[0] % 32 : 0;
	small = malloc(hsz > 0 ? hsz : 1);
	CHECK(small != NULL);
	if (mmid_split(s, small, hsz, &port) == 0)
		CHECK(strlen(small) < hsz);
	free(small);
	free(host);
	free(s);
}

static void
ident(const uint8_t *data, size_t size)
{
	char *s, again[MMID_MAX], name[256];
	struct mmid id, id2;
	const char *why = NULL;
	size_t i;

	CHECK((s = malloc(size + 1)) != NULL);
	memcpy(s, data, size);
	s[size] = '\0';
	if (mmid_parse(s, &id, &why) != 0) {
		CHECK(why != NULL && *why != '\0');
		free(s);
		return;
	}
	CHECK(strlen(id.hex) == MMID_TOKEN_HEX);
	CHECK(id.port >= 1 && id.port <= 65535 && id.host[0] != '\0');
	CHECK(strncmp(s, id.hostport, strlen(id.hostport)) == 0);
	CHECK(mmid_format(&id, again, sizeof again) == 0);
	CHECK(strlen(again) == strlen(s) && strncmp(again, s,
	    strlen(id.hostport)) == 0);
	CHECK(mmid_parse(again, &id2, &why) == 0 &&
	    memcmp(id.token, id2.token, MMID_TOKEN_LEN) == 0);
	if (mmid_lm_name(&id, "/tmp/grm-0", name, sizeof name) == 0) {
		CHECK(strncmp(name, "lm-", 3) == 0);
		for (i = 0; name[i] != '\0'; i++)
			CHECK(strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOP"
			    "QRSTUVWXYZ0123456789.-_", name[i]) != NULL);
		CHECK(strlen("/tmp/grm-0/") + strlen(name) + 5 < 108);
	}
	free(s);
}

static void
hello(const uint8_t *p, size_t n)
{
	unsigned char back[WIRE_PREAUTH_MAX];
	struct wire_hello h;

	if (auth_hello_parse(p, n, &h) != 0)
		return;
	CHECK(h.host[0] != '\0' && strlen(h.host) <= 255);
	CHECK(h.role == WIRE_ROLE_LM || h.role == WIRE_ROLE_CTL ||
	    h.role == WIRE_ROLE_FIRE);
	CHECK(auth_hello_build(back, sizeof back, &h) == n &&
	    memcmp(back, p, n) == 0);
}

/* Messages for the connecting side: a type byte (0 CHALLENGE, 1 WELCOME,
 * 2 DENIED, else that number), a length byte, then that many bytes. */
static void
client(const uint8_t *p, size_t n)
{
	static const unsigned char token[MMID_TOKEN_LEN] = { 1, 2, 3 };
	unsigned char reply[WIRE_PROOF];
	struct auth_client a;
	struct wire_hello h;
	struct wire_rd r;
	enum auth_result res;
	uint32_t node;
	char text[64];
	uint16_t type;
	size_t len;

	memset(&h, 0, sizeof h);
	h.role = WIRE_ROLE_LM;
	strcpy(h.host, "fuzz");
	CHECK(auth_client_start(&a, token, &h) == 0);
	while (n >= 2) {
		type = p[0] == 0 ? WIRE_CHALLENGE : p[0] == 1 ? WIRE_WELCOME :
		    p[0] == 2 ? WIRE_DENIED : p[0];
		len = p[1] < n - 2 ? p[1] : n - 2;
		wire_rd_init(&r, p + 2, len);
		res = auth_client_msg(&a, type, &r, reply, &node, text,
		    sizeof text);
		CHECK(strlen(text) < sizeof text);
		/* The nonce is new each time: no input can carry the MM's
		 * proof. */
		CHECK(res != AUTH_OK);
		if (res != AUTH_MORE)
			break;
		p += 2 + len;
		n -= 2 + len;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *p = data, *end = data + size;
	size_t nops;

	header(data, size);
	if (size > WIRE_HDR) {
		p += WIRE_HDR;
		nops = *p++;
		if (nops > (size_t)(end - p))
			nops = (size_t)(end - p);
		reader(p, nops > MAXOPS ? MAXOPS : nops, p + nops,
		    (size_t)(end - p - nops));
		hello(p + nops, (size_t)(end - p - nops));
		client(p + nops, (size_t)(end - p - nops));
	}
	split(data, size);
	ident(data, size);
	return 0;
}
