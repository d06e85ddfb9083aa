/* SPDX-License-Identifier: MIT */
/* auth.h: the wire protocol's authentication handshake, in which both
 * sides prove they know the Main Monitor's token without sending it
 * (doc/protocol.md, section 1.11). */
#ifndef GRM_AUTH_H
#define GRM_AUTH_H

#include <stddef.h>
#include <stdint.h>

#include "net/mmid.h"
#include "net/wire.h"

/* What a HELLO carries. */
struct wire_hello {
	uint32_t	role;
	uint32_t	pid;
	uint64_t	now;
	char		host[256];
	uint64_t	seg_id;
	unsigned char	nonce[WIRE_NONCE];
};

/*
 * Parses a HELLO payload p[len]: every field present, nothing after the
 * nonce, host 1 to 255 bytes without NUL, role WIRE_ROLE_LM or
 * WIRE_ROLE_CTL.  Returns 0 or -1.
 */
int auth_hello_parse(const void *p, size_t len, struct wire_hello *h);

/* Writes h as a HELLO payload into buf[cap]; returns its length, or 0 if
 * it does not fit or h->host is too long. */
size_t auth_hello_build(void *buf, size_t cap, const struct wire_hello *h);

/* Who proves: the connecting side (LM, ctl) or the MM. */
enum { AUTH_PEER = 0, AUTH_MM = 1 };

/*
 * The proof of side: HMAC-SHA256 keyed with the token over a 16-byte
 * label ("grm-auth v4 peer" or "grm-auth v4 main"), the HELLO payload as
 * sent, and the MM's nonce.  Both nonces are in it (the connecting side's
 * is in the HELLO), so a proof is good for one handshake only.
 */
void auth_proof(const unsigned char token[MMID_TOKEN_LEN], int side,
		const void *hello, size_t hlen,
		const unsigned char nonce_mm[WIRE_NONCE],
		unsigned char out[WIRE_PROOF]);

/* Fills n[WIRE_NONCE] from getrandom.  0 or -1. */
int auth_nonce(unsigned char n[WIRE_NONCE]);

/* The connecting side's handshake (localmon, grmctl). */
struct auth_client {
	unsigned char	token[MMID_TOKEN_LEN];
	unsigned char	hello[WIRE_PREAUTH_MAX];	/* as sent */
	size_t		hello_len;
	unsigned char	expect[WIRE_PROOF];	/* the MM's proof, once known */
	int		state;			/* AUTH_C_* */
};
enum { AUTH_C_HELLO, AUTH_C_PROVED, AUTH_C_DONE };

/* What auth_client_msg made of a message. */
enum auth_result {
	AUTH_MORE = 0,		/* answered (reply holds the AUTH payload) */
	AUTH_OK = 1,		/* WELCOME with the MM's right proof */
	AUTH_REFUSED = -1,	/* DENIED: the MM did not take our proof */
	AUTH_DENIED = -2,	/* DENIED for another reason (time, load) */
	AUTH_IMPOSTOR = -3,	/* WELCOME without the right proof */
	AUTH_BAD = -4		/* anything else: unexpected or malformed */
};

/*
 * Starts a handshake: makes the HELLO of h (nonce chosen here) and keeps
 * it in a.  Returns 0, or -1 (no randomness, or h does not fit).
 */
int auth_client_start(struct auth_client *a,
		      const unsigned char token[MMID_TOKEN_LEN],
		      struct wire_hello *h);

/*
 * Takes one message of the MM's before the handshake is complete.
 * CHALLENGE: writes our proof into reply[WIRE_PROOF] (send it as AUTH)
 * and returns AUTH_MORE.  WELCOME: checks the MM's proof (in constant
 * time) and returns AUTH_OK with *node set, or AUTH_IMPOSTOR.  DENIED:
 * AUTH_REFUSED or AUTH_DENIED, with the MM's text, made printable, in
 * text[textsz].  Anything else, or out of order: AUTH_BAD.
 */
enum auth_result auth_client_msg(struct auth_client *a, uint16_t type,
				 struct wire_rd *msg,
				 unsigned char reply[WIRE_PROOF],
				 uint32_t *node, char *text, size_t textsz);

#endif /* GRM_AUTH_H */
