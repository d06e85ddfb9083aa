/* SPDX-License-Identifier: MIT */
/* test_wire.c: unit tests of the wire encoding (wire.c) and of a peer's
 * liveness (peer.c). */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <event2/event.h>

#include "net/peer.h"
#include "net/wire.h"
#include "util/clock.h"

/* ---- writer and reader ---- */

Test(wire, round_trip)
{
	unsigned char buf[64];
	struct wire_wr w;
	struct wire_rd r;
	char s[16];
	static const unsigned char raw[3] = { 0xde, 0x00, 0xad };

	memset(buf, 0xcc, sizeof buf);
	wire_wr_init(&w, buf, sizeof buf);
	wire_put_u16(&w, 0xbeef);
	wire_put_u32(&w, 0x12345678u);
	wire_put_u64(&w, 0x0102030405060708ull);
	wire_put_str(&w, "hello");
	wire_put_bytes(&w, raw, sizeof raw);
	wire_put_str(&w, "");
	wire_put_u64(&w, UINT64_MAX);
	wire_put_u16(&w, 0);
	cr_assert_eq(w.err, 0);
	cr_assert_eq(w.len, 2 + 4 + 8 + 2 + 5 + 3 + 2 + 8 + 2);

	wire_rd_init(&r, buf, w.len);
	cr_assert_eq(wire_get_u16(&r), 0xbeef);
	cr_assert_eq(wire_get_u32(&r), 0x12345678u);
	cr_assert_eq(wire_get_u64(&r), 0x0102030405060708ull);
	wire_get_str(&r, s, sizeof s);
	cr_assert(wire_rd_ok(&r));
	cr_assert_str_eq(s, "hello");
	cr_assert_eq(wire_rd_left(&r), 3 + 2 + 8 + 2);
	cr_assert_eq(memcmp(buf + 21, raw, sizeof raw), 0);
	r.off += sizeof raw;
	memset(s, 'x', sizeof s);
	wire_get_str(&r, s, sizeof s);
	cr_assert_str_eq(s, "");
	cr_assert_eq(wire_get_u64(&r), UINT64_MAX);
	cr_assert_eq(wire_get_u16(&r), 0);
	cr_assert(wire_rd_ok(&r));
	cr_assert_eq(wire_rd_left(&r), 0);
	cr_assert_eq(buf[w.len], 0xcc, "wrote past its length");
}

Test(wire, little_endian_layout)
{
	static const unsigned char want[] = {
		0xef, 0xbe,
		0x78, 0x56, 0x34, 0x12,
		0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01,
		0x03, 0x00, 'a', 'b', 'c',
		0x00, 0x00, 0x00, 0x80,
		0xff, 0xee, 0xdd, 0xcc, 0xbb, 0xaa, 0x99, 0x88
	};
	unsigned char buf[64];
	struct wire_wr w;
	struct wire_rd r;

	wire_wr_init(&w, buf, sizeof buf);
	wire_put_u16(&w, 0xbeef);
	wire_put_u32(&w, 0x12345678u);
	wire_put_u64(&w, 0x0102030405060708ull);
	wire_put_str(&w, "abc");
	wire_put_u32(&w, 0x80000000u);
	wire_put_u64(&w, 0x8899aabbccddeeffull);
	cr_assert_eq(w.err, 0);
	cr_assert_eq(w.len, sizeof want);
	cr_assert_arr_eq(buf, want, sizeof want);

	/* And the reader takes bytes, not host words. */
	wire_rd_init(&r, want + 2, 12);
	cr_assert_eq(wire_get_u32(&r), 0x12345678u);
	cr_assert_eq(wire_get_u64(&r), 0x0102030405060708ull);
	wire_rd_init(&r, want + 19, 12);
	cr_assert_eq(wire_get_u32(&r), 0x80000000u);
	cr_assert_eq(wire_get_u64(&r), 0x8899aabbccddeeffull);
}

Test(wire, writer_overflow)
{
	unsigned char buf[16];
	struct wire_wr w;
	unsigned i;

	memset(buf, 0xaa, sizeof buf);
	wire_wr_init(&w, buf, 6);
	wire_put_u32(&w, 0x01020304u);
	cr_assert_eq(w.err, 0);
	cr_assert_eq(w.len, 4);
	wire_put_u32(&w, 0x05060708u);		/* 4 more do not fit in 6 */
	cr_assert_neq(w.err, 0);
	cr_assert_eq(w.len, 4);
	wire_put_u16(&w, 0x0909);		/* would fit, but too late */
	cr_assert_neq(w.err, 0);
	cr_assert_eq(w.len, 4);
	wire_put_bytes(&w, "x", 1);
	wire_put_str(&w, "");
	cr_assert_eq(w.len, 4);
	for (i = 4; i < sizeof buf; i++)
		cr_assert_eq(buf[i], 0xaa, "byte %u written after the error",
		    i);
	cr_assert_eq(buf[0], 0x04);
	cr_assert_eq(buf[3], 0x01);
}

Test(wire, writer_exact_fit)
{
	unsigned char buf[14];
	struct wire_wr w;

	wire_wr_init(&w, buf, sizeof buf);
	wire_put_u64(&w, 1);
	wire_put_u32(&w, 2);
	wire_put_u16(&w, 3);
	cr_assert_eq(w.err, 0);
	cr_assert_eq(w.len, sizeof buf);
	wire_put_bytes(&w, "", 0);
	cr_assert_eq(w.err, 0);
	wire_put_bytes(&w, "z", 1);
	cr_assert_neq(w.err, 0);
	cr_assert_eq(w.len, sizeof buf);
}

/* put writes a string of max bytes, read back whole into a buffer that
 * holds it and refused by one that holds WIRE_STR_MAX; one more byte is an
 * error. */
static void
check_str_max(void (*put)(struct wire_wr *, const char *), size_t max)
{
	static char s[WIRE_TEXT_MAX + 2], back[WIRE_TEXT_MAX + 1];
	static unsigned char buf[WIRE_TEXT_MAX + 64];
	struct wire_wr w;
	struct wire_rd r;

	memset(s, 's', max);
	s[max] = '\0';
	wire_wr_init(&w, buf, sizeof buf);
	put(&w, s);
	cr_assert_eq(w.err, 0);
	cr_assert_eq(w.len, 2 + max);
	wire_rd_init(&r, buf, w.len);
	wire_get_str(&r, back, sizeof back);
	cr_assert(wire_rd_ok(&r));
	cr_assert_str_eq(back, s);
	wire_rd_init(&r, buf, w.len);
	wire_get_str(&r, back, WIRE_STR_MAX + 1);
	cr_assert_eq(wire_rd_ok(&r), max <= WIRE_STR_MAX);
	s[max] = 's';
	s[max + 1] = '\0';
	wire_wr_init(&w, buf, sizeof buf);
	put(&w, s);
	cr_assert_neq(w.err, 0);
}

Test(wire, writer_string_too_long)
{
	check_str_max(wire_put_str, WIRE_STR_MAX);
}

/* A CTL_REPLY's text may be longer than any other string (grmctl status
 * of many LMs). */
Test(wire, reply_text_up_to_text_max)
{
	check_str_max(wire_put_text, WIRE_TEXT_MAX);
}

Test(wire, reader_past_end)
{
	static const unsigned char buf[6] = { 1, 2, 3, 4, 5, 6 };
	struct wire_rd r;
	char s[8];

	wire_rd_init(&r, buf, sizeof buf);
	cr_assert_eq(wire_get_u32(&r), 0x04030201u);
	cr_assert(wire_rd_ok(&r));
	cr_assert_eq(wire_rd_left(&r), 2);
	cr_assert_eq(wire_get_u64(&r), 0, "a failed read returns 0");
	cr_assert_not(wire_rd_ok(&r));
	cr_assert_eq(wire_rd_left(&r), 0);
	/* Two bytes are left, but every later read fails. */
	cr_assert_eq(wire_get_u16(&r), 0);
	cr_assert_not(wire_rd_ok(&r));
	cr_assert_eq(wire_get_u32(&r), 0);
	cr_assert_eq(wire_get_u64(&r), 0);
	memset(s, 'x', sizeof s);
	wire_get_str(&r, s, sizeof s);
	cr_assert_eq(s[0], '\0');
	cr_assert_not(wire_rd_ok(&r));
}

Test(wire, reader_empty)
{
	struct wire_rd r;

	wire_rd_init(&r, "", 0);
	cr_assert(wire_rd_ok(&r));
	cr_assert_eq(wire_rd_left(&r), 0);
	cr_assert_eq(wire_get_u16(&r), 0);
	cr_assert_not(wire_rd_ok(&r));
	wire_rd_init(&r, "\x07", 1);
	cr_assert_eq(wire_get_u16(&r), 0);
	cr_assert_not(wire_rd_ok(&r));
}

/* A message holding a u16 length n and the bytes of s (len bytes). */
static size_t
str_msg(unsigned char *buf, uint16_t n, const char *s, size_t len)
{
	buf[0] = (unsigned char)(n & 0xff);
	buf[1] = (unsigned char)(n >> 8);
	memcpy(buf + 2, s, len);
	return 2 + len;
}

Test(wire, get_str_too_long_for_buffer)
{
	unsigned char buf[64];
	struct wire_rd r;
	char out[10];
	size_t len;

	len = str_msg(buf, 10, "0123456789", 10);
	memset(out, 'x', sizeof out);
	wire_rd_init(&r, buf, len);
	wire_get_str(&r, out, sizeof out);	/* no room for the NUL */
	cr_assert_not(wire_rd_ok(&r));
	cr_assert_eq(out[0], '\0');
	cr_assert_eq(wire_get_u16(&r), 0);

	len = str_msg(buf, 9, "012345678", 9);
	wire_rd_init(&r, buf, len);
	wire_get_str(&r, out, sizeof out);
	cr_assert(wire_rd_ok(&r));
	cr_assert_str_eq(out, "012345678");
}

Test(wire, get_str_past_end)
{
	unsigned char buf[64];
	struct wire_rd r;
	char out[64];
	size_t len;

	/* Bytes after the message's end that would pass for a string. */
	memset(buf, 'y', sizeof buf);
	len = str_msg(buf, 20, "short", 5);
	wire_rd_init(&r, buf, len);
	wire_get_str(&r, out, sizeof out);
	cr_assert_not(wire_rd_ok(&r));
	cr_assert_eq(out[0], '\0');
	/* One byte short. */
	len = str_msg(buf, 6, "short", 5);
	wire_rd_init(&r, buf, len);
	wire_get_str(&r, out, sizeof out);
	cr_assert_not(wire_rd_ok(&r));
	/* The length itself cut. */
	wire_rd_init(&r, buf, 1);
	wire_get_str(&r, out, sizeof out);
	cr_assert_not(wire_rd_ok(&r));
	cr_assert_eq(out[0], '\0');
}

Test(wire, get_str_embedded_nul)
{
	unsigned char buf[64];
	struct wire_rd r;
	char out[64];
	size_t len;

	len = str_msg(buf, 5, "ab\0cd", 5);
	wire_rd_init(&r, buf, len);
	wire_get_str(&r, out, sizeof out);
	cr_assert_not(wire_rd_ok(&r));
	cr_assert_eq(out[0], '\0');
	len = str_msg(buf, 3, "ab\0", 3);
	wire_rd_init(&r, buf, len);
	wire_get_str(&r, out, sizeof out);
	cr_assert_not(wire_rd_ok(&r));
	/* A NUL after the string is not part of it. */
	len = str_msg(buf, 2, "ab\0", 3);
	wire_rd_init(&r, buf, len);
	wire_get_str(&r, out, sizeof out);
	cr_assert(wire_rd_ok(&r));
	cr_assert_str_eq(out, "ab");
	cr_assert_eq(wire_rd_left(&r), 1);
}

/* ---- headers ---- */

Test(header, round_trip)
{
	static const unsigned char want[WIRE_HDR] = {
		'G', 'M', 'R', 'W', 0x0e, 0x00, 0x07, 0x00,
		0xd2, 0x04, 0x00, 0x00
	};
	unsigned char buf[WIRE_HDR + 4];
	const char *why = NULL;
	uint16_t type = 0;
	uint32_t len = 0;

	memset(buf, 0xcc, sizeof buf);
	wire_header(buf, WIRE_DATA, 1234);
	cr_assert_arr_eq(buf, want, WIRE_HDR);
	cr_assert_eq(buf[WIRE_HDR], 0xcc, "wrote past the header");
	cr_assert_eq(wire_parse_header(buf, &type, &len, &why), 0);
	cr_assert_eq(type, WIRE_DATA);
	cr_assert_eq(len, 1234);

	wire_header(buf, WIRE_CTL_REPLY, 0);
	cr_assert_eq(wire_parse_header(buf, &type, &len, &why), 0);
	cr_assert_eq(type, WIRE_CTL_REPLY);
	cr_assert_eq(len, 0);

	wire_header(buf, WIRE_HELLO, WIRE_MAX);
	cr_assert_eq(wire_parse_header(buf, &type, &len, &why), 0);
	cr_assert_eq(type, WIRE_HELLO);
	cr_assert_eq(len, WIRE_MAX);
}

Test(header, refusals)
{
	unsigned char buf[WIRE_HDR];
	const char *why;
	uint16_t type;
	uint32_t len;
	unsigned i;

	for (i = 0; i < 4; i++) {
		wire_header(buf, WIRE_PING, 8);
		buf[i] ^= 0x20;
		why = NULL;
		cr_assert_eq(wire_parse_header(buf, &type, &len, &why), -1,
		    "magic byte %u changed: accepted", i);
		cr_assert_not_null(why);
	}

	wire_header(buf, WIRE_PING, 8);
	buf[4] = WIRE_VERSION + 1;
	why = NULL;
	cr_assert_eq(wire_parse_header(buf, &type, &len, &why), -1);
	cr_assert_not_null(why);
	buf[4] = WIRE_VERSION;
	buf[5] = 1;			/* version 257 */
	why = NULL;
	cr_assert_eq(wire_parse_header(buf, &type, &len, &why), -1);
	cr_assert_not_null(why);

	wire_header(buf, WIRE_DATA, WIRE_MAX + 1);
	why = NULL;
	cr_assert_eq(wire_parse_header(buf, &type, &len, &why), -1);
	cr_assert_not_null(why);
	wire_header(buf, WIRE_DATA, UINT32_MAX);
	why = NULL;
	cr_assert_eq(wire_parse_header(buf, &type, &len, &why), -1);
	cr_assert_not_null(why);
}

/* The rules checked before dispatch (wire_check). */
Test(rules, every_type_known_and_named)
{
	uint16_t t;

	cr_assert_null(wire_rule(0));
	cr_assert_null(wire_rule(WIRE_SIGNAL + 1));
	cr_assert_null(wire_rule(UINT16_MAX));
	cr_assert_str_eq(wire_type_name(0), "unknown");
	for (t = WIRE_HELLO; t <= WIRE_SIGNAL; t++) {
		cr_assert_not_null(wire_rule(t), "type %u", t);
		cr_assert_not_null(wire_rule(t)->name);
		cr_assert_neq(wire_rule(t)->by, 0u);
		cr_assert_neq(wire_rule(t)->to, 0u);
		cr_assert_neq(wire_rule(t)->states, 0u);
	}
	cr_assert_str_eq(wire_type_name(WIRE_STATUS_REPLY), "STATUS_REPLY");
}

/* A sender and a receiver of type, and a state it is taken in. */
static void
party(uint16_t t, unsigned *by, unsigned *to, unsigned *st)
{
	const struct wire_rule *r = wire_rule(t);

	*by = r->by & WIRE_BY_LM ? WIRE_BY_LM : r->by;
	*to = r->to & WIRE_BY_LM ? WIRE_BY_LM : r->to;
	*st = r->states & WIRE_ST_READY ? WIRE_ST_READY : r->states;
}

Test(rules, lengths_exact_or_least)
{
	const struct wire_rule *r;
	unsigned by, to, st;
	char why[160];
	uint16_t t;

	for (t = WIRE_HELLO; t <= WIRE_SIGNAL; t++) {
		r = wire_rule(t);
		party(t, &by, &to, &st);
		cr_assert_eq(wire_check(t, by, to, st, r->len, why,
		    sizeof why), 0, "%s: %s", r->name, why);
		cr_assert_eq(wire_check(t, by, to, st, r->len + 1, why,
		    sizeof why), r->exact ? -1 : 0, "%s", r->name);
		if (r->exact)
			cr_assert(strstr(why, "expected") != NULL, "%s", why);
		if (r->len > 0)
			cr_assert_eq(wire_check(t, by, to, st, r->len - 1, why,
			    sizeof why), -1, "%s", r->name);
	}
}

Test(rules, the_lengths_of_the_protocol)
{
	static const struct { uint16_t t; int exact; uint32_t len; } want[] = {
		{ WIRE_HELLO, 0, 42 }, { WIRE_WELCOME, 1, 36 },
		{ WIRE_PING, 1, 8 }, { WIRE_PONG, 1, 40 },
		{ WIRE_READY, 1, 4 }, { WIRE_COLLECT, 1, 8 },
		{ WIRE_DATA, 0, 24 }, { WIRE_DONE, 1, 20 },
		{ WIRE_ACK, 1, 4 }, { WIRE_PROC, 0, 30 },
		{ WIRE_BYE, 1, 0 }, { WIRE_CTL, 0, 2 },
		{ WIRE_CTL_REPLY, 0, 6 }, { WIRE_CONTROL, 0, 42 },
		{ WIRE_CONTROL_ACK, 1, 12 }, { WIRE_STATUS, 1, 4 },
		{ WIRE_STATUS_REPLY, 0, 118 }, { WIRE_SEGMENT, 1, 8 },
		{ WIRE_CHALLENGE, 1, 16 }, { WIRE_AUTH, 1, 32 },
		{ WIRE_DENIED, 0, 6 }, { WIRE_WRITTEN, 0, 4 },
		{ WIRE_FULL, 1, 8 }, { WIRE_PAUSE, 1, 8 },
		{ WIRE_PAUSED, 1, 28 }, { WIRE_RESUME, 1, 4 },
		{ WIRE_RESUMED, 1, 20 }, { WIRE_TSC, 1, 48 },
		{ WIRE_PLAN, 0, 8 }, { WIRE_FIRE, 1, 32 },
		{ WIRE_SIGNAL, 1, 12 },
	};
	size_t i;

	for (i = 0; i < sizeof want / sizeof want[0]; i++) {
		cr_assert_eq(wire_rule(want[i].t)->exact, want[i].exact,
		    "type %u", want[i].t);
		cr_assert_eq(wire_rule(want[i].t)->len, want[i].len,
		    "type %u", want[i].t);
	}
}

Test(rules, sender_receiver_state)
{
	char why[160];

	/* Unknown. */
	cr_assert_eq(wire_check(0, WIRE_BY_MM, WIRE_BY_LM, WIRE_ST_READY, 0,
	    why, sizeof why), -1);
	cr_assert(strstr(why, "unknown") != NULL, "%s", why);
	/* A PONG from the MM; a CTL from an LM. */
	cr_assert_eq(wire_check(WIRE_PONG, WIRE_BY_MM, WIRE_BY_LM,
	    WIRE_ST_READY, 16, why, sizeof why), -1);
	cr_assert_eq(wire_check(WIRE_CTL, WIRE_BY_LM, WIRE_BY_MM,
	    WIRE_ST_READY, 8, why, sizeof why), -1);
	/* A CTL_REPLY to an LM; a PING to a ctl. */
	cr_assert_eq(wire_check(WIRE_CTL_REPLY, WIRE_BY_MM, WIRE_BY_LM,
	    WIRE_ST_READY, 8, why, sizeof why), -1);
	cr_assert(strstr(why, "never sent to") != NULL, "%s", why);
	cr_assert_eq(wire_check(WIRE_PING, WIRE_BY_MM, WIRE_BY_CTL,
	    WIRE_ST_READY, 8, why, sizeof why), -1);
	/* Before HELLO, either may send it; a data message is early. */
	cr_assert_eq(wire_check(WIRE_HELLO, WIRE_BY_LM | WIRE_BY_CTL,
	    WIRE_BY_MM, WIRE_ST_AUTH, 43, why, sizeof why), 0);
	cr_assert_eq(wire_check(WIRE_DATA, WIRE_BY_LM | WIRE_BY_CTL,
	    WIRE_BY_MM, WIRE_ST_AUTH, 48, why, sizeof why), -1);
	cr_assert(strstr(why, "before the handshake") != NULL, "%s", why);
	/* READY once, before it; the handshake's messages not after it. */
	cr_assert_eq(wire_check(WIRE_READY, WIRE_BY_MM, WIRE_BY_LM,
	    WIRE_ST_SYNC, 4, why, sizeof why), 0);
	cr_assert_eq(wire_check(WIRE_READY, WIRE_BY_MM, WIRE_BY_LM,
	    WIRE_ST_READY, 4, why, sizeof why), -1);
	cr_assert(strstr(why, "after READY") != NULL, "%s", why);
	cr_assert_eq(wire_check(WIRE_COLLECT, WIRE_BY_MM, WIRE_BY_LM,
	    WIRE_ST_SYNC, 8, why, sizeof why), -1);
	cr_assert(strstr(why, "before READY") != NULL, "%s", why);
	cr_assert_eq(wire_check(WIRE_CHALLENGE, WIRE_BY_MM, WIRE_BY_LM,
	    WIRE_ST_SYNC, 16, why, sizeof why), -1);
	cr_assert(strstr(why, "after the handshake") != NULL, "%s", why);
	/* PING and SEGMENT while synchronising too. */
	cr_assert_eq(wire_check(WIRE_PING, WIRE_BY_MM, WIRE_BY_LM,
	    WIRE_ST_SYNC, 8, why, sizeof why), 0);
	cr_assert_eq(wire_check(WIRE_SEGMENT, WIRE_BY_LM, WIRE_BY_MM,
	    WIRE_ST_SYNC, 8, why, sizeof why), 0);
	/* The reason names the message and both lengths. */
	cr_assert_eq(wire_check(WIRE_PING, WIRE_BY_MM, WIRE_BY_LM,
	    WIRE_ST_READY, 7, why, sizeof why), -1);
	cr_assert_str_eq(why, "PING (3) of 7 bytes: 8 expected");
	cr_assert_eq(wire_check(WIRE_CONTROL, WIRE_BY_MM, WIRE_BY_LM,
	    WIRE_ST_READY, 1, why, sizeof why), -1);
	cr_assert_str_eq(why, "CONTROL (14) of 1 byte: at least 42 expected");
}

Test(rules, a_fire_link_carries_fires_and_actions)
{
	char why[160];

	/* Its handshake as any peer's. */
	cr_assert_eq(wire_check(WIRE_HELLO, WIRE_BY_FIRE, WIRE_BY_MM,
	    WIRE_ST_AUTH, 43, why, sizeof why), 0, "%s", why);
	cr_assert_eq(wire_check(WIRE_AUTH, WIRE_BY_FIRE, WIRE_BY_MM,
	    WIRE_ST_AUTH, WIRE_PROOF, why, sizeof why), 0, "%s", why);
	cr_assert_eq(wire_check(WIRE_WELCOME, WIRE_BY_MM, WIRE_BY_FIRE,
	    WIRE_ST_AUTH, 4 + WIRE_PROOF, why, sizeof why), 0, "%s", why);
	/* Then FIREs and CONTROL_ACKs to mainmon, CONTROL, PLAN and SIGNAL
	 * from it (an action, applied by the LM's firing thread), once
	 * authenticated, and nothing else. */
	cr_assert_eq(wire_check(WIRE_CONTROL_ACK, WIRE_BY_FIRE, WIRE_BY_MM,
	    WIRE_ST_READY, 12, why, sizeof why), 0, "%s", why);
	cr_assert_eq(wire_check(WIRE_CONTROL, WIRE_BY_MM, WIRE_BY_FIRE,
	    WIRE_ST_READY, 42, why, sizeof why), 0, "%s", why);
	cr_assert_eq(wire_check(WIRE_PLAN, WIRE_BY_MM, WIRE_BY_FIRE,
	    WIRE_ST_READY, 8, why, sizeof why), 0, "%s", why);
	cr_assert_eq(wire_check(WIRE_SIGNAL, WIRE_BY_MM, WIRE_BY_FIRE,
	    WIRE_ST_READY, 12, why, sizeof why), 0, "%s", why);
	cr_assert_eq(wire_check(WIRE_SIGNAL, WIRE_BY_MM, WIRE_BY_FIRE,
	    WIRE_ST_AUTH, 12, why, sizeof why), -1);
	cr_assert_eq(wire_check(WIRE_COLLECT, WIRE_BY_MM, WIRE_BY_FIRE,
	    WIRE_ST_READY, 8, why, sizeof why), -1);
	cr_assert_eq(wire_check(WIRE_PLAN, WIRE_BY_MM, WIRE_BY_FIRE,
	    WIRE_ST_READY, 4, why, sizeof why), -1);
	cr_assert_eq(wire_check(WIRE_FIRE, WIRE_BY_FIRE, WIRE_BY_MM,
	    WIRE_ST_READY, 32, why, sizeof why), 0, "%s", why);
	cr_assert_eq(wire_check(WIRE_FIRE, WIRE_BY_FIRE, WIRE_BY_MM,
	    WIRE_ST_AUTH, 32, why, sizeof why), -1);
	cr_assert_eq(wire_check(WIRE_DATA, WIRE_BY_FIRE, WIRE_BY_MM,
	    WIRE_ST_READY, 48, why, sizeof why), -1);
	cr_assert_str_eq(why, "DATA (7) from a local monitor's fire link: "
	    "never sent by it");
	cr_assert_eq(wire_check(WIRE_PING, WIRE_BY_MM, WIRE_BY_FIRE,
	    WIRE_ST_READY, 8, why, sizeof why), -1);
	cr_assert_eq(wire_check(WIRE_FIRE, WIRE_BY_FIRE, WIRE_BY_MM,
	    WIRE_ST_READY, 31, why, sizeof why), -1);
}

Test(rules, reader_end)
{
	unsigned char b[8] = { 1, 0, 0, 0, 9 };
	struct wire_rd r;

	wire_rd_init(&r, b, 5);
	(void)wire_get_u32(&r);
	cr_assert(!wire_rd_end(&r));
	(void)wire_get_bytes(&r, b + 6, 1);
	cr_assert(wire_rd_end(&r));
	(void)wire_get_u32(&r);
	cr_assert(!wire_rd_end(&r));
}

/* ---- liveness (peer.c) ---- */

struct live {
	struct event_base	*base;
	int			died;
	int			msgs;
	char			why[80];
	uint64_t		t_died;
};

static void
live_dispatch(struct peer *p, uint16_t type, struct wire_rd *msg,
	      const char *why, void *arg)
{
	struct live *l = arg;

	(void)type;
	if (msg != NULL) {
		l->msgs++;
		return;
	}
	l->died++;
	l->t_died = clk_mono_ns();
	snprintf(l->why, sizeof l->why, "%s", why);
	peer_free(p);
	event_base_loopbreak(l->base);
}

static void
live_send_cb(evutil_socket_t fd, short what, void *arg)
{
	struct peer *p = arg;

	(void)fd;
	(void)what;
	peer_send(p, WIRE_PING, "01234567", 8, NULL, 0);
}

static void
live_stop_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	event_base_loopbreak(arg);
}

/* A peer that hears nothing for its bound dies once, as silent, about
 * then; one that keeps hearing from its other end lives on. */
Test(liveness, silent_peer_dies_talking_peer_lives)
{
	struct live a = { 0 }, b = { 0 };
	struct event *tick, *stop;
	struct timeval every = { 0, 200000 }, limit = { 3, 0 };
	struct peer *pa, *pb;
	uint64_t t0;
	int sv[2];

	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	a.base = b.base = event_base_new();
	cr_assert_not_null(a.base);
	pa = peer_new(a.base, sv[0], live_dispatch, &a, "a");
	pb = peer_new(b.base, sv[1], live_dispatch, &b, "b");
	cr_assert(pa != NULL && pb != NULL);
	/* b talks to a every 200 ms; a says nothing to b. */
	cr_assert_eq(peer_set_liveness(pa, 1), 0);
	cr_assert_eq(peer_set_liveness(pb, 1), 0);
	tick = event_new(a.base, -1, EV_PERSIST, live_send_cb, pb);
	event_add(tick, &every);
	stop = evtimer_new(a.base, live_stop_cb, a.base);
	evtimer_add(stop, &limit);
	t0 = clk_mono_ns();
	event_base_dispatch(a.base);
	cr_assert_eq(b.died, 1, "the silent end's peer died");
	cr_assert_str_eq(b.why, "silent for 1 s");
	cr_assert_geq(b.t_died - t0, 1000000000u, "not before the bound");
	cr_assert_lt(b.t_died - t0, 1600000000u, "within a quarter of it");
	cr_assert_eq(a.died, 0, "the peer that hears from its end lives");
	cr_assert_geq(a.msgs, 4);
	event_free(tick);
	event_free(stop);
	peer_free(pa);
	event_base_free(a.base);
}

/* ---- messages built in place (peer_reserve, peer_commit) ---- */

struct got {
	struct event_base	*base;
	int			n;
	char			payload[4][9];
};

static void
got_dispatch(struct peer *p, uint16_t type, struct wire_rd *msg,
	     const char *why, void *arg)
{
	struct got *g = arg;

	(void)p;
	(void)why;
	if (msg == NULL || type != WIRE_PING || g->n >= 4) {
		event_base_loopbreak(g->base);
		return;
	}
	wire_get_bytes(msg, g->payload[g->n], 8);
	g->payload[g->n][8] = '\0';
	if (++g->n == 3)
		event_base_loopbreak(g->base);
}

/* Messages built where they are queued arrive whole and in order among
 * the others; a reservation not committed sends nothing; a commit longer
 * than the reservation, or with none, is refused. */
Test(peer, message_built_in_place)
{
	struct got g = { 0 };
	struct peer *pa, *pb;
	struct event *stop;
	struct timeval limit = { 5, 0 };
	unsigned char *m;
	int sv[2];

	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	g.base = event_base_new();
	cr_assert_not_null(g.base);
	pa = peer_new(g.base, sv[0], got_dispatch, &g, "a");
	pb = peer_new(g.base, sv[1], got_dispatch, &g, "b");
	cr_assert(pa != NULL && pb != NULL);
	cr_assert_null(peer_reserve(pa, WIRE_MAX + 1));
	cr_assert_eq(peer_commit(pa, WIRE_PING, 8), -1, "nothing reserved");
	m = peer_reserve(pa, 100000);
	cr_assert_not_null(m);
	memcpy(m, "built-in", 8);
	cr_assert_eq(peer_commit(pa, WIRE_PING, 100001), -1);
	cr_assert_eq(peer_commit(pa, WIRE_PING, 8), 0);
	cr_assert_eq(peer_send(pa, WIRE_PING, "sent-one", 8, NULL, 0), 0);
	/* Reserved and dropped: the next reservation takes its place. */
	m = peer_reserve(pa, 64);
	cr_assert_not_null(m);
	memcpy(m, "dropped!", 8);
	m = peer_reserve(pa, 8);
	cr_assert_not_null(m);
	memcpy(m, "built-2d", 8);
	cr_assert_eq(peer_commit(pa, WIRE_PING, 8), 0);
	stop = evtimer_new(g.base, live_stop_cb, g.base);
	evtimer_add(stop, &limit);
	event_base_dispatch(g.base);
	cr_assert_eq(g.n, 3);
	cr_assert_str_eq(g.payload[0], "built-in");
	cr_assert_str_eq(g.payload[1], "sent-one");
	cr_assert_str_eq(g.payload[2], "built-2d");
	event_free(stop);
	peer_free(pa);
	peer_free(pb);
	event_base_free(g.base);
}
