/* SPDX-License-Identifier: MIT */
/* test_auth.c: unit tests of the Main Monitor identifier (mmid.c) and of
 * the authentication handshake (auth.c). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "net/auth.h"
#include "net/mmid.h"
#include "net/wire.h"
#include "util/sha256.h"

#define TOK	"000102030405060708090a0b0c0d0e0f"

/* ---- mmid_parse ---- */

Test(mmid, parse)
{
	struct mmid id;
	const char *why = NULL;
	int i;

	cr_assert_eq(mmid_parse("127.0.0.1:40123:" TOK, &id, &why), 0);
	cr_assert_str_eq(id.hostport, "127.0.0.1:40123");
	cr_assert_str_eq(id.host, "127.0.0.1");
	cr_assert_eq(id.port, 40123);
	cr_assert_str_eq(id.hex, TOK);
	for (i = 0; i < MMID_TOKEN_LEN; i++)
		cr_assert_eq(id.token[i], i);
	/* Upper case is taken, and shown in lower case. */
	cr_assert_eq(mmid_parse("h:1:000102030405060708090A0B0C0D0E0F", &id,
	    &why), 0);
	cr_assert_str_eq(id.hex, TOK);
	cr_assert_eq(mmid_parse("[::1]:8080:" TOK, &id, &why), 0);
	cr_assert_str_eq(id.hostport, "[::1]:8080");
	cr_assert_str_eq(id.host, "::1");
	cr_assert_eq(id.port, 8080);
}

static void
refused(const char *s, const char *reason)
{
	struct mmid id;
	const char *why = NULL;

	cr_assert_eq(mmid_parse(s, &id, &why), -1, "\"%s\" accepted", s);
	cr_assert_not_null(why);
	cr_assert(strstr(why, reason) != NULL, "\"%s\": \"%s\"", s, why);
	/* The reason never quotes what was given. */
	cr_assert(strstr(why, "0102") == NULL);
}

Test(mmid, refused)
{
	refused("127.0.0.1:40123", "no token");
	refused("node:7", "no token");
	refused("[::1]:8080", "no token");
	refused("127.0.0.1:40123:" "000102030405060708090a0b0c0d0e0", "bad token");
	refused("127.0.0.1:40123:" TOK "0", "bad token");
	refused("127.0.0.1:40123:" "g00102030405060708090a0b0c0d0e0f",
	    "bad token");
	refused("127.0.0.1:40123:", "bad token");
	refused(TOK, "not a main monitor identifier");
	refused(":" TOK, "not a main monitor identifier");
	refused("127.0.0.1:" TOK, "not a main monitor identifier");
	refused("127.0.0.1:0:" TOK, "not a main monitor identifier");
	refused("host:65536:" TOK, "not a main monitor identifier");
	refused("", "not a main monitor identifier");
	refused("nothing", "not a main monitor identifier");
}

Test(mmid, format_and_token)
{
	struct mmid id, again;
	char s[MMID_MAX];
	const char *why;

	cr_assert_eq(mmid_parse("node:7:" TOK, &id, &why), 0);
	cr_assert_eq(mmid_format(&id, s, sizeof s), 0);
	cr_assert_str_eq(s, "node:7:" TOK);
	cr_assert_eq(mmid_format(&id, s, 10), -1);
	cr_assert_eq(mmid_token_new(&id), 0);
	cr_assert_eq(strlen(id.hex), MMID_TOKEN_HEX);
	cr_assert_eq(mmid_format(&id, s, sizeof s), 0);
	cr_assert_eq(mmid_parse(s, &again, &why), 0);
	cr_assert(memcmp(again.token, id.token, MMID_TOKEN_LEN) == 0);
	/* Two new tokens differ (128 random bits). */
	memcpy(again.token, id.token, MMID_TOKEN_LEN);
	cr_assert_eq(mmid_token_new(&id), 0);
	cr_assert(memcmp(again.token, id.token, MMID_TOKEN_LEN) != 0);
	/* A key file may hold the token alone or a whole identifier. */
	cr_assert_eq(mmid_token_parse("000102030405060708090A0B0C0D0E0F",
	    &again), 0);
	cr_assert_eq(again.token[15], 15);
	cr_assert_str_eq(again.hex, TOK);
	cr_assert_eq(mmid_token_parse("h:1:" TOK, &again), 0);
	cr_assert_eq(mmid_token_parse("h:1", &again), -1);
}

Test(mmid, read_file)
{
	char path[] = "/tmp/grm-test-mmid.XXXXXX", out[MMID_MAX], arg[64];
	const char *why = NULL;
	int fd;

	cr_assert_eq(mmid_read("h:1:" TOK, out, sizeof out, &why), 0);
	cr_assert_str_eq(out, "h:1:" TOK);
	fd = mkstemp(path);
	cr_assert_neq(fd, -1);
	cr_assert_eq(write(fd, "h:1:" TOK "\r\n", 38), 38);
	close(fd);
	snprintf(arg, sizeof arg, "@%s", path);
	cr_assert_eq(mmid_read(arg, out, sizeof out, &why), 0);
	cr_assert_str_eq(out, "h:1:" TOK);
	unlink(path);
	cr_assert_eq(mmid_read(arg, out, sizeof out, &why), -1);
	cr_assert_not_null(why);
}

/* The run-folder name: readable when it fits, and the hash of the address
 * and token (the same as sha256sum gives, so scripts can find it). */
Test(mmid, lm_name)
{
	struct mmid id, other;
	char name[256], dir[200];
	const char *why;

	cr_assert_eq(mmid_parse("127.0.0.1:40123:" TOK, &id, &why), 0);
	cr_assert_eq(mmid_lm_name(&id, "/tmp/grm-1000", name, sizeof name), 0);
	/* sha256("grm-lm 127.0.0.1:40123 000102...0f") */
	cr_assert_str_eq(name, "lm-127.0.0.1_40123-b6e1278f8f0d2041");
	/* Another token on the same address: another LM. */
	cr_assert_eq(mmid_parse("127.0.0.1:40123:" "ff0102030405060708090a0b0c0d0e0f",
	    &other, &why), 0);
	cr_assert_eq(mmid_lm_name(&other, "/tmp/grm-1000", dir, sizeof dir), 0);
	cr_assert_str_neq(name, dir);
	/* A folder too long for the readable socket name: the short one. */
	cr_assert_eq(mmid_parse("a-very-long-host-name.example.org:40123:"
	    TOK, &id, &why), 0);
	memset(dir, 'd', 50);
	dir[0] = '/';
	dir[50] = '\0';
	cr_assert_eq(mmid_lm_name(&id, dir, name, sizeof name), 0);
	cr_assert_str_eq(name, "lm-b26c6367d1021a43fa67323a86dea442");
	cr_assert_lt(strlen(dir) + 1 + strlen(name) + 5, 108);
	dir[20] = '\0';
	cr_assert_eq(mmid_lm_name(&id, dir, name, sizeof name), 0);
	cr_assert_str_eq(name, "lm-a-very-long-host-name.example.org_40123-"
	    "b26c6367d1021a43");
	/* One where even that does not fit. */
	memset(dir, 'd', 90);
	dir[90] = '\0';
	cr_assert_eq(mmid_lm_name(&id, dir, name, sizeof name), -1);
	cr_assert_eq(mmid_lm_name(&id, "/tmp", name, 8), -1);
}

/* ---- the handshake ---- */

static const unsigned char nonce_mm[WIRE_NONCE] = {
	0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27,
	0x28, 0x29, 0x2a, 0x2b, 0x2c, 0x2d, 0x2e, 0x2f
};

static void
example_hello(struct wire_hello *h)
{
	int i;

	memset(h, 0, sizeof *h);
	h->role = WIRE_ROLE_LM;
	h->pid = 4242;
	h->now = 1000000000;
	strcpy(h->host, "node");
	h->seg_id = 0x1122334455667788ull;
	for (i = 0; i < WIRE_NONCE; i++)
		h->nonce[i] = (unsigned char)(0x10 + i);
}

/* The example of doc/protocol.md, section 1.6 (computed independently). */
Test(auth, known_proofs)
{
	unsigned char token[MMID_TOKEN_LEN], buf[512], proof[WIRE_PROOF];
	char got[2 * WIRE_PROOF + 1];
	struct wire_hello h, back;
	size_t n;
	int i;

	for (i = 0; i < MMID_TOKEN_LEN; i++)
		token[i] = (unsigned char)i;
	example_hello(&h);
	n = auth_hello_build(buf, sizeof buf, &h);
	cr_assert_eq(n, 46);
	cr_assert_eq(auth_hello_parse(buf, n, &back), 0);
	cr_assert_eq(back.pid, 4242);
	cr_assert_str_eq(back.host, "node");
	cr_assert(memcmp(back.nonce, h.nonce, WIRE_NONCE) == 0);
	auth_proof(token, AUTH_PEER, buf, n, nonce_mm, proof);
	for (i = 0; i < WIRE_PROOF; i++)
		sprintf(got + 2 * i, "%02x", proof[i]);
	cr_assert_str_eq(got, "1c0f3d5bd50eba60175ae82da788dcbc"
	    "2241d12a4625f3a6a39bba6e27c37657");
	auth_proof(token, AUTH_MM, buf, n, nonce_mm, proof);
	for (i = 0; i < WIRE_PROOF; i++)
		sprintf(got + 2 * i, "%02x", proof[i]);
	cr_assert_str_eq(got, "511677dd0ad6cb2f54275e0f2762fbc8"
	    "dc9dedbc0b5c7be812cb57d2daf70dfb");
}

Test(auth, hello_refused)
{
	unsigned char buf[512];
	struct wire_hello h, back;
	size_t n;

	example_hello(&h);
	n = auth_hello_build(buf, sizeof buf, &h);
	cr_assert_eq(auth_hello_parse(buf, n - 1, &back), -1, "truncated");
	buf[n] = 0;
	cr_assert_eq(auth_hello_parse(buf, n + 1, &back), -1, "extra byte");
	h.role = WIRE_ROLE_FIRE;
	n = auth_hello_build(buf, sizeof buf, &h);
	cr_assert_eq(auth_hello_parse(buf, n, &back), 0, "a fire link");
	h.role = 4;
	n = auth_hello_build(buf, sizeof buf, &h);
	cr_assert_eq(auth_hello_parse(buf, n, &back), -1, "role 4");
	example_hello(&h);
	h.host[0] = '\0';
	n = auth_hello_build(buf, sizeof buf, &h);
	cr_assert_eq(auth_hello_parse(buf, n, &back), -1, "empty host");
	memset(h.host, 'h', 255);
	h.host[255] = '\0';
	n = auth_hello_build(buf, sizeof buf, &h);
	cr_assert_eq(n, 46 - 4 + 255);
	cr_assert_eq(auth_hello_parse(buf, n, &back), 0, "255-byte host");
	cr_assert_eq(auth_hello_build(buf, 40, &h), 0, "does not fit");
}

/* Plays the MM's side of a handshake against auth_client_msg. */
struct mm_side {
	unsigned char	token[MMID_TOKEN_LEN];
	unsigned char	nonce[WIRE_NONCE];
};

static enum auth_result
feed(struct auth_client *a, uint16_t type, const void *p, size_t n,
     unsigned char reply[WIRE_PROOF], uint32_t *node, char *text)
{
	struct wire_rd r;

	wire_rd_init(&r, p, n);
	return auth_client_msg(a, type, &r, reply, node, text, 64);
}

static void
client_for(struct auth_client *a, const char *hex)
{
	struct wire_hello h;
	struct mmid id;

	example_hello(&h);
	cr_assert_eq(mmid_token_parse(hex, &id), 0);
	cr_assert_eq(auth_client_start(a, id.token, &h), 0);
}

static size_t
welcome(unsigned char *buf, uint32_t node, const unsigned char proof[32])
{
	struct wire_wr w;

	wire_wr_init(&w, buf, 64);
	wire_put_u32(&w, node);
	wire_put_bytes(&w, proof, WIRE_PROOF);
	return w.len;
}

Test(auth, right_token)
{
	unsigned char token[MMID_TOKEN_LEN], reply[WIRE_PROOF], want[WIRE_PROOF];
	unsigned char mmproof[WIRE_PROOF], buf[64];
	struct auth_client a;
	struct mmid id;
	uint32_t node = 0;
	char text[64];

	client_for(&a, TOK);
	mmid_token_parse(TOK, &id);
	memcpy(token, id.token, sizeof token);
	cr_assert_eq(feed(&a, WIRE_CHALLENGE, nonce_mm, WIRE_NONCE, reply,
	    &node, text), AUTH_MORE);
	/* The MM checks the proof over the HELLO as it received it. */
	auth_proof(token, AUTH_PEER, a.hello, a.hello_len, nonce_mm, want);
	cr_assert(hmac_equal(reply, want, WIRE_PROOF));
	auth_proof(token, AUTH_MM, a.hello, a.hello_len, nonce_mm, mmproof);
	cr_assert_eq(feed(&a, WIRE_WELCOME, buf, welcome(buf, 3, mmproof),
	    reply, &node, text), AUTH_OK);
	cr_assert_eq(node, 3);
	/* Nothing more is taken as part of the handshake. */
	cr_assert_eq(feed(&a, WIRE_CHALLENGE, nonce_mm, WIRE_NONCE, reply,
	    &node, text), AUTH_BAD);
}

Test(auth, impostor)
{
	unsigned char reply[WIRE_PROOF];
	unsigned char proof[WIRE_PROOF], buf[64];
	struct auth_client a;
	struct mmid id;
	uint32_t node;
	char text[64];

	/* WELCOME before any CHALLENGE: nothing was proved. */
	client_for(&a, TOK);
	memset(proof, 0, sizeof proof);
	cr_assert_eq(feed(&a, WIRE_WELCOME, buf, welcome(buf, 1, proof),
	    reply, &node, text), AUTH_IMPOSTOR);
	/* The proof of another token. */
	client_for(&a, TOK);
	cr_assert_eq(feed(&a, WIRE_CHALLENGE, nonce_mm, WIRE_NONCE, reply,
	    &node, text), AUTH_MORE);
	mmid_token_parse("ff0102030405060708090a0b0c0d0e0f", &id);
	auth_proof(id.token, AUTH_MM, a.hello, a.hello_len, nonce_mm, proof);
	cr_assert_eq(feed(&a, WIRE_WELCOME, buf, welcome(buf, 1, proof),
	    reply, &node, text), AUTH_IMPOSTOR);
	/* Our own proof sent back (a reflection). */
	client_for(&a, TOK);
	cr_assert_eq(feed(&a, WIRE_CHALLENGE, nonce_mm, WIRE_NONCE, reply,
	    &node, text), AUTH_MORE);
	cr_assert_eq(feed(&a, WIRE_WELCOME, buf, welcome(buf, 1, reply),
	    reply, &node, text), AUTH_IMPOSTOR);
	/* A WELCOME one byte short. */
	client_for(&a, TOK);
	cr_assert_eq(feed(&a, WIRE_CHALLENGE, nonce_mm, WIRE_NONCE, reply,
	    &node, text), AUTH_MORE);
	cr_assert_eq(feed(&a, WIRE_WELCOME, buf, welcome(buf, 1, proof) - 1,
	    reply, &node, text), AUTH_IMPOSTOR);
}

Test(auth, denied_and_bad)
{
	unsigned char reply[WIRE_PROOF], buf[64];
	struct auth_client a;
	struct wire_wr w;
	uint32_t node;
	char text[64];

	client_for(&a, TOK);
	wire_wr_init(&w, buf, sizeof buf);
	wire_put_u32(&w, WIRE_DENIED_TOKEN);
	wire_put_str(&w, "wrong\ntoken\x7f");
	cr_assert_eq(feed(&a, WIRE_DENIED, buf, w.len, reply, &node, text),
	    AUTH_REFUSED);
	cr_assert_str_eq(text, "wrong?token?");
	wire_wr_init(&w, buf, sizeof buf);
	wire_put_u32(&w, WIRE_DENIED_OTHER);
	wire_put_str(&w, "busy");
	cr_assert_eq(feed(&a, WIRE_DENIED, buf, w.len, reply, &node, text),
	    AUTH_DENIED);
	cr_assert_eq(feed(&a, WIRE_DENIED, buf, 3, reply, &node, text),
	    AUTH_BAD);
	cr_assert_eq(feed(&a, WIRE_PING, buf, 8, reply, &node, text),
	    AUTH_BAD);
	cr_assert_eq(feed(&a, WIRE_CHALLENGE, nonce_mm, WIRE_NONCE - 1, reply,
	    &node, text), AUTH_BAD);
	cr_assert_eq(feed(&a, WIRE_CHALLENGE, buf, WIRE_NONCE + 1, reply,
	    &node, text), AUTH_BAD);
}

/* ---- mmid_split: HOST:PORT ---- */

static void
split_ok(const char *hp, const char *host, unsigned port)
{
	char h[64];
	unsigned p = 0;

	memset(h, 'x', sizeof h);
	cr_assert_eq(mmid_split(hp, h, sizeof h, &p), 0, "\"%s\" refused",
	    hp);
	cr_assert_str_eq(h, host, "\"%s\": host \"%s\"", hp, h);
	cr_assert_eq(p, port, "\"%s\": port %u", hp, p);
}

static void
split_refused(const char *hp)
{
	char h[64];
	unsigned p = 4242;

	cr_assert_eq(mmid_split(hp, h, sizeof h, &p), -1, "\"%s\" accepted",
	    hp);
	cr_assert_eq(p, 4242, "\"%s\": port set on a refusal", hp);
}

Test(mmid_split, host_port)
{
	split_ok("example.org:8080", "example.org", 8080);
	split_ok("localhost:1", "localhost", 1);
	split_ok("10.0.0.1:65535", "10.0.0.1", 65535);
	split_ok("h:7", "h", 7);
}

Test(mmid_split, bracketed_ipv6)
{
	split_ok("[::1]:80", "::1", 80);
	split_ok("[fe80::1:2]:4000", "fe80::1:2", 4000);
	split_refused("[]:80");
}

Test(mmid_split, missing_port)
{
	split_refused("example.org");
	split_refused("example.org:");
	split_refused("[::1]");
	split_refused("");
}

Test(mmid_split, port_range)
{
	split_refused("host:0");
	split_refused("host:00");
	split_refused("host:65536");
	split_refused("host:99999999999999999999999");
	split_refused("host:-1");
	split_ok("host:065535", "host", 65535);
}

Test(mmid_split, trailing_garbage)
{
	split_refused("host:80x");
	split_refused("host:80 ");
	split_refused("host:80:");
	split_refused("host:0x50");
	split_refused("host:8.0");
}

Test(mmid_split, empty_host)
{
	split_refused(":80");
	split_refused(":");
}

Test(mmid_split, host_buffer_size)
{
	char h[7];
	unsigned p = 0;

	cr_assert_eq(mmid_split("abcdefg:1", h, sizeof h, &p), -1,
	    "a 7-byte host fitted in 7 bytes");
	cr_assert_eq(mmid_split("abcdef:1", h, sizeof h, &p), 0);
	cr_assert_str_eq(h, "abcdef");
	cr_assert_eq(p, 1);
}
