/* SPDX-License-Identifier: MIT */
/* mm_auth.c: the Main Monitor's half of the authentication handshake
 * (doc/protocol.md 1.11): HELLO, CHALLENGE, the peer's proof, then WELCOME
 * with ours, or DENIED; the time limit and the number of connections
 * allowed to be in it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "mm.h"
#include "net/auth.h"
#include "net/peer.h"
#include "util/log.h"
#include "util/sha256.h"

/* Connections at most between accept and a complete handshake. */
#define MM_PREAUTH_CONNS	64

struct mm_auth {
	struct event	*timer;
	struct wire_hello h;
	unsigned char	hello[WIRE_PREAUTH_MAX];	/* as received */
	size_t		hello_len;
	unsigned char	nonce[WIRE_NONCE];
	int		challenged;
	int		closing;	/* DENIED sent: closed once written */
};

static const char *
role_name(uint32_t role)
{
	return role == WIRE_ROLE_LM ? "local monitor" : "control client";
}

static void
mm_auth_timeout(evutil_socket_t fd, short what, void *arg)
{
	struct mm_conn *c = arg;

	(void)fd;
	(void)what;
	if (!c->auth->closing)
		log_warn("%s: no authentication within %u s: closed", c->addr,
		    c->mm->auth_secs);
	mm_conn_free(c);
}

int
mm_auth_admit(struct mm *mm, const char *addr)
{
	if (mm->npreauth < MM_PREAUTH_CONNS)
		return 0;
	log_warn("%s: refused: %d connections already waiting to "
	    "authenticate", addr, MM_PREAUTH_CONNS);
	return -1;
}

int
mm_auth_start(struct mm_conn *c)
{
	struct mm *mm = c->mm;

	c->auth = calloc(1, sizeof *c->auth);
	if (c->auth == NULL)
		return -1;
	c->auth->timer = evtimer_new(mm->base, mm_auth_timeout, c);
	if (c->auth->timer == NULL) {
		free(c->auth);
		c->auth = NULL;
		return -1;
	}
	event_add(c->auth->timer, &(struct timeval){
	    .tv_sec = mm->auth_secs, .tv_usec = 0 });
	peer_set_max(c->p, WIRE_PREAUTH_MAX);
	mm->npreauth++;
	return 0;
}

void
mm_auth_free(struct mm_conn *c)
{
	if (c->auth == NULL)
		return;
	event_free(c->auth->timer);
	hmac_wipe(c->auth, sizeof *c->auth);
	free(c->auth);
	c->auth = NULL;
	c->mm->npreauth--;
}

void
mm_auth_closed(struct mm_conn *c, const char *why)
{
	if (c->auth != NULL && c->auth->closing)
		return;
	log_warn("%s: connection closed %s: %s", c->addr,
	    c->auth != NULL && c->auth->challenged ? "during authentication" :
	    "before hello", why);
}

static void
close_after_flush(struct peer *p, void *arg)
{
	(void)p;
	mm_conn_free(arg);
}

/* Refuses the peer: DENIED with code and text, closed once it is out (or
 * at the time limit, if the peer does not read). */
static void
deny(struct mm_conn *c, uint32_t code, const char *text)
{
	unsigned char buf[128];
	struct wire_wr w;

	wire_wr_init(&w, buf, sizeof buf);
	wire_put_u32(&w, code);
	wire_put_str(&w, text);
	c->auth->closing = 1;
	if (peer_send(c->p, WIRE_DENIED, buf, w.len, NULL, 0) != 0) {
		mm_conn_free(c);
		return;
	}
	peer_on_flushed(c->p, close_after_flush);
}

static int
got_hello(struct mm_conn *c, struct wire_rd *msg)
{
	struct mm_auth *a = c->auth;
	size_t len = wire_rd_left(msg);

	if (a->challenged || len > sizeof a->hello ||
	    auth_hello_parse(msg->p + msg->off, len, &a->h) != 0) {
		log_warn("%s: malformed or repeated hello: closed", c->addr);
		return -1;
	}
	memcpy(a->hello, msg->p + msg->off, len);
	a->hello_len = len;
	if (auth_nonce(a->nonce) != 0) {
		log_warn("%s: no random numbers for the handshake: closed",
		    c->addr);
		return -1;
	}
	a->challenged = 1;
	return peer_send(c->p, WIRE_CHALLENGE, a->nonce, sizeof a->nonce,
	    NULL, 0);
}

static int
got_proof(struct mm *mm, struct mm_conn *c, struct wire_rd *msg)
{
	struct mm_auth *a = c->auth;
	unsigned char proof[WIRE_PROOF], want[WIRE_PROOF];
	struct wire_hello h;

	wire_get_bytes(msg, proof, sizeof proof);
	if (!a->challenged) {
		log_warn("%s: early proof: closed", c->addr);
		return -1;
	}
	auth_proof(mm->mmid.token, AUTH_PEER, a->hello, a->hello_len,
	    a->nonce, want);
	if (!hmac_equal(proof, want, sizeof want)) {
		log_warn("%s: %s %u on %s refused: wrong token", c->addr,
		    role_name(a->h.role), a->h.pid, a->h.host);
		deny(c, WIRE_DENIED_TOKEN, "wrong token");
		return 0;
	}
	auth_proof(mm->mmid.token, AUTH_MM, a->hello, a->hello_len, a->nonce,
	    want);
	h = a->h;
	mm_auth_free(c);
	peer_set_max(c->p, WIRE_MAX);
	return mm_welcome(mm, c, &h, want);
}

unsigned
mm_auth_peer(const struct mm_conn *c)
{
	const struct mm_auth *a = c->auth;

	if (a->closing)
		return 0;
	if (!a->challenged)
		return WIRE_BY_LM | WIRE_BY_CTL;
	return a->h.role == WIRE_ROLE_LM ? WIRE_BY_LM : WIRE_BY_CTL;
}

void
mm_auth_msg(struct mm *mm, struct mm_conn *c, uint16_t type,
	    struct wire_rd *msg)
{
	int r;

	r = type == WIRE_HELLO ? got_hello(c, msg) : got_proof(mm, c, msg);
	if (r != 0)
		mm_conn_free(c);
}
