/* SPDX-License-Identifier: MIT */
/* auth.c: the authentication handshake: HELLO, proofs, and the connecting
 * side's half (the MM's is mainmon/mm_auth.c). */
#include <errno.h>
#include <string.h>
#include <sys/random.h>

#include "net/auth.h"
#include "util/sha256.h"

int
auth_hello_parse(const void *p, size_t len, struct wire_hello *h)
{
	struct wire_rd r;

	memset(h, 0, sizeof *h);
	wire_rd_init(&r, p, len);
	h->role = wire_get_u32(&r);
	h->pid = wire_get_u32(&r);
	h->now = wire_get_u64(&r);
	wire_get_str(&r, h->host, sizeof h->host);
	h->seg_id = wire_get_u64(&r);
	wire_get_bytes(&r, h->nonce, WIRE_NONCE);
	if (!wire_rd_ok(&r) || wire_rd_left(&r) != 0 || h->host[0] == '\0' ||
	    (h->role != WIRE_ROLE_LM && h->role != WIRE_ROLE_CTL &&
	    h->role != WIRE_ROLE_FIRE))
		return -1;
	return 0;
}

size_t
auth_hello_build(void *buf, size_t cap, const struct wire_hello *h)
{
	struct wire_wr w;

	if (strlen(h->host) > 255)
		return 0;
	wire_wr_init(&w, buf, cap);
	wire_put_u32(&w, h->role);
	wire_put_u32(&w, h->pid);
	wire_put_u64(&w, h->now);
	wire_put_str(&w, h->host);
	wire_put_u64(&w, h->seg_id);
	wire_put_bytes(&w, h->nonce, WIRE_NONCE);
	return w.err ? 0 : w.len;
}

void
auth_proof(const unsigned char token[MMID_TOKEN_LEN], int side,
	   const void *hello, size_t hlen,
	   const unsigned char nonce_mm[WIRE_NONCE],
	   unsigned char out[WIRE_PROOF])
{
	struct hmac_sha256 h;

	hmac_sha256_init(&h, token, MMID_TOKEN_LEN);
	hmac_sha256_update(&h, side == AUTH_MM ? "grm-auth v4 main" :
	    "grm-auth v4 peer", 16);
	hmac_sha256_update(&h, hello, hlen);
	hmac_sha256_update(&h, nonce_mm, WIRE_NONCE);
	hmac_sha256_final(&h, out);
}

int
auth_nonce(unsigned char n[WIRE_NONCE])
{
	size_t got = 0;
	ssize_t r;

	while (got < WIRE_NONCE) {
		r = getrandom(n + got, WIRE_NONCE - got, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}

int
auth_client_start(struct auth_client *a,
		  const unsigned char token[MMID_TOKEN_LEN],
		  struct wire_hello *h)
{
	memset(a, 0, sizeof *a);
	if (auth_nonce(h->nonce) != 0)
		return -1;
	a->hello_len = auth_hello_build(a->hello, sizeof a->hello, h);
	if (a->hello_len == 0)
		return -1;
	memcpy(a->token, token, MMID_TOKEN_LEN);
	a->state = AUTH_C_HELLO;
	return 0;
}

/* The MM's text, cut to textsz and made printable (it may be anyone's). */
static void
printable(const char *in, char *text, size_t textsz)
{
	size_t i;

	if (textsz == 0)
		return;
	for (i = 0; in[i] != '\0' && i + 1 < textsz; i++)
		text[i] = in[i] >= 0x20 && in[i] < 0x7f ? in[i] : '?';
	text[i] = '\0';
}

enum auth_result
auth_client_msg(struct auth_client *a, uint16_t type, struct wire_rd *msg,
		unsigned char reply[WIRE_PROOF], uint32_t *node, char *text,
		size_t textsz)
{
	unsigned char nonce[WIRE_NONCE], proof[WIRE_PROOF];
	char buf[WIRE_PREAUTH_MAX];
	uint32_t code;

	if (textsz > 0)
		text[0] = '\0';
	switch (type) {
	case WIRE_CHALLENGE:
		wire_get_bytes(msg, nonce, sizeof nonce);
		if (a->state != AUTH_C_HELLO || !wire_rd_ok(msg) ||
		    wire_rd_left(msg) != 0)
			return AUTH_BAD;
		auth_proof(a->token, AUTH_PEER, a->hello, a->hello_len, nonce,
		    reply);
		auth_proof(a->token, AUTH_MM, a->hello, a->hello_len, nonce,
		    a->expect);
		a->state = AUTH_C_PROVED;
		return AUTH_MORE;
	case WIRE_WELCOME:
		*node = wire_get_u32(msg);
		wire_get_bytes(msg, proof, sizeof proof);
		if (a->state != AUTH_C_PROVED || !wire_rd_ok(msg) ||
		    wire_rd_left(msg) != 0 ||
		    !hmac_equal(proof, a->expect, sizeof proof))
			return AUTH_IMPOSTOR;
		a->state = AUTH_C_DONE;
		hmac_wipe(a->token, sizeof a->token);
		return AUTH_OK;
	case WIRE_DENIED:
		code = wire_get_u32(msg);
		wire_get_str(msg, buf, sizeof buf);
		if (!wire_rd_end(msg))
			return AUTH_BAD;
		printable(buf, text, textsz);
		return code == WIRE_DENIED_TOKEN ? AUTH_REFUSED : AUTH_DENIED;
	}
	return AUTH_BAD;
}
