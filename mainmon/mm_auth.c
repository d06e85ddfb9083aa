/* SPDX-License-Identifier: MIT */
/* mm_auth.c: the Main Monitor's half of the authentication handshake
 * (doc/protocol.md 1.11): HELLO, CHALLENGE, the peer's proof, then WELCOME
 * with ours, or DENIED; the time limit, admission (how many connections
 * may wait in it, per source address and in all), and the rate-limited
 * log of the connections refused or closed before they authenticated. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mm.h"
#include "net/auth.h"
#include "net/loop.h"
#include "net/peer.h"
#include "util/clock.h"
#include "util/hmap.h"
#include "util/log.h"
#include "util/sha256.h"

/*
 * Admission.  Handshakes waiting (accepted, not yet authenticated, not
 * refused) at most per source address and in all; past either, the
 * newcomer is kept and a waiting one of its address (for the global
 * bound: of the address with the most) is dropped with DENIED: one that
 * has closed, else the oldest that has sent nothing, else the oldest that
 * has sent something (its HELLO, unread or answered more than
 * MM_AUTH_GRACE_MS ago).  A handshake challenged less than that ago is
 * not dropped (a real peer proves the token within a round trip): if every
 * one is, the newcomer is refused instead.  So a local process that opens
 * connections in a loop, silent or closed at once, never pushes out an LM
 * whose HELLO has come, and one from another address never at all.
 */
#define MM_AUTH_PER_ADDR	8
#define MM_AUTH_WAITING_MAX	256
#define MM_AUTH_GRACE_MS	2000
/* Connections at most in the handshake, refused ones included (these are
 * closed once DENIED is written, or after MM_AUTH_DENY_MS). */
#define MM_AUTH_CONNS_MAX	512
#define MM_AUTH_DENY_MS		1000
/* How long a newcomer refused before its HELLO is given to say who it is
 * (for the log) before it is turned away. */
#define MM_AUTH_NAME_MS		500
/* The log: per source address and interval, the first lines of each kind
 * one by one, then counts in one line at the interval's end. */
#define MM_AUTH_LOG_S		10

enum {
	AD_DROPPED,	/* a waiting handshake dropped for a newer one */
	AD_REFUSED,	/* a newcomer refused */
	AD_LM,		/* either, of a peer whose HELLO said LM */
	AD_EARLY,	/* closed before completing the handshake */
	AD_TIMEOUT,	/* no authentication within the time limit */
	AD_BAD,		/* malformed or out of order */
	AD_TOKEN,	/* wrong token */
	AD_N
};

static const struct {
	unsigned	burst;		/* lines one by one per interval */
	const char	*what;		/* in the count line */
} ad_kinds[AD_N] = {
	{ 1, "waiting handshakes dropped for newer ones" },
	{ 1, "connections refused" },
	{ 3, "local monitors turned away before proving the token" },
	{ 10, "closed before authenticating" },
	{ 10, "not authenticated in time" },
	{ 10, "malformed or out of order" },
	{ 10, "wrong tokens" },
};

/* A source address, numeric, NUL-padded (a hash map key). */
struct mm_src_key {
	char	host[48];
};

struct mm_src {
	uint32_t	waiting;	/* handshakes counted against it */
	uint64_t	window;		/* MM ns: the interval began */
	uint32_t	lines[AD_N];	/* logged one by one in it */
	uint64_t	quiet[AD_N];	/* not */
	char		last_lm[128];	/* the last LM among the quiet */
};

struct mm_admit {
	struct hmap	srcs;		/* struct mm_src_key: struct mm_src */
	struct loop_ev	*tick;		/* the count lines */
	uint32_t	waiting;	/* all addresses */
};

static const struct hmap_type src_type = {
	.ksize = sizeof(struct mm_src_key),
	.vsize = sizeof(struct mm_src),
	.min_cap = 16,
};

struct mm_auth {
	struct loop_ev	*timer;
	struct wire_hello h;
	unsigned char	hello[WIRE_PREAUTH_MAX];	/* as received */
	size_t		hello_len;
	unsigned char	nonce[WIRE_NONCE];
	int		challenged;
	int		closing;	/* DENIED sent: closed once written */
	/* To be turned away once its HELLO says who it is (or after
	 * MM_AUTH_NAME_MS): a newcomer over the limit that sent nothing
	 * yet, so that a real LM turned away is named in the log. */
	int		refusing;
	uint32_t	refuse_nwait;
	int		waiting;	/* counted in admission */
	uint64_t	t_accept;	/* MM ns */
	uint64_t	t_challenge;
	struct mm_src_key src;
};

static const char *
role_name(uint32_t role)
{
	return role == WIRE_ROLE_LM ? "local monitor" :
	    role == WIRE_ROLE_FIRE ? "local monitor's fire link" :
	    "control client";
}

/* "1.2.3.4:5" or "[::1]:5" (mm_accept's addr): the host part. */
static void
src_of(const char *addr, struct mm_src_key *k)
{
	const char *end = strrchr(addr, ':');
	size_t n = end != NULL ? (size_t)(end - addr) : strlen(addr);

	memset(k, 0, sizeof *k);
	if (n >= 2 && addr[0] == '[' && addr[n - 1] == ']') {
		addr++;
		n -= 2;
	}
	if (n >= sizeof k->host)
		n = sizeof k->host - 1;
	memcpy(k->host, addr, n);
}

/* Writes the count line of s, if anything went unlogged, and starts a new
 * interval at now. */
static void
src_roll(const struct mm_src_key *k, struct mm_src *s, uint64_t now)
{
	char line[1024];
	size_t len = 0;
	int i, any = 0;

	for (i = 0; i < AD_N; i++) {
		if (s->quiet[i] == 0)
			continue;
		len += (size_t)snprintf(line + len, len < sizeof line ?
		    sizeof line - len : 0, "%s%llu %s", any ? ", " : "",
		    (unsigned long long)s->quiet[i], ad_kinds[i].what);
		if (i == AD_LM && len < sizeof line)
			len += (size_t)snprintf(line + len, sizeof line - len,
			    " (the last: %s)", s->last_lm);
		any = 1;
	}
	if (any)
		log_warn("%s: in the last %llu s, not logged one by one: %s; "
		    "%u waiting now", k->host, (unsigned long long)
		    ((now - s->window + 999999999u) / 1000000000u), line,
		    s->waiting);
	memset(s->lines, 0, sizeof s->lines);
	memset(s->quiet, 0, sizeof s->quiet);
	s->window = now;
}

static void
tick_cb(void *arg)
{
	struct mm_admit *ad = arg;
	const struct mm_src_key *k;
	struct mm_src *s;
	uint64_t now = clk_mono_ns();
	uint32_t it = 0;
	int again = 0, j;

	while ((s = hmap_next(&ad->srcs, &it, (const void **)&k)) != NULL) {
		if (now - s->window >= MM_AUTH_LOG_S * 1000000000ull)
			src_roll(k, s, now);
		for (j = 0; j < AD_N && s->quiet[j] == 0; j++)
			;
		if (j < AD_N)
			again = 1;
		else if (s->waiting == 0 &&
		    now - s->window >= MM_AUTH_LOG_S * 1000000000ull)
			hmap_del_value(&ad->srcs, s);
	}
	if (again || hmap_count(&ad->srcs) > 0)
		(void)loop_arm(ad->tick, 1000000000ull);
}

/* The entry of k (added), or NULL if out of memory. */
static struct mm_src *
src_get(struct mm_admit *ad, const struct mm_src_key *k)
{
	struct mm_src *s;
	int added;

	s = hmap_put(&ad->srcs, k, &added);
	if (s != NULL && added)
		s->window = clk_mono_ns();
	loop_arm_idle(ad->tick, 1000000000ull);
	return s;
}

/* A line of kind about source k: logged, or counted if that kind had its
 * lines in this interval.  lm: the LM it names (AD_LM), else NULL. */
static void
note(struct mm *mm, const struct mm_src_key *k, int kind, const char *lm,
     const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static void
note(struct mm *mm, const struct mm_src_key *k, int kind, const char *lm,
     const char *fmt, ...)
{
	struct mm_src *s = src_get(mm->admit, k);
	uint64_t now = clk_mono_ns();
	char line[400];
	va_list ap;

	if (s != NULL && now - s->window >= MM_AUTH_LOG_S * 1000000000ull)
		src_roll(k, s, now);
	if (s != NULL && s->lines[kind] >= ad_kinds[kind].burst) {
		s->quiet[kind]++;
		if (lm != NULL)
			snprintf(s->last_lm, sizeof s->last_lm, "%s", lm);
		return;
	}
	if (s != NULL)
		s->lines[kind]++;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	log_warn("%s", line);
}

int
mm_auth_init(struct mm *mm)
{
	struct mm_admit *ad;

	if ((ad = calloc(1, sizeof *ad)) == NULL)
		return -1;
	hmap_init(&ad->srcs, &src_type);
	if ((ad->tick = loop_timer(mm->base, tick_cb, ad)) == NULL) {
		free(ad);
		return -1;
	}
	mm->admit = ad;
	return 0;
}

void
mm_auth_finish(struct mm *mm)
{
	const struct mm_src_key *k;
	struct mm_src *s;
	uint32_t it = 0;

	if (mm->admit == NULL)
		return;
	/* What was counted and not yet said is said now. */
	while ((s = hmap_next(&mm->admit->srcs, &it, (const void **)&k)) !=
	    NULL)
		src_roll(k, s, clk_mono_ns());
	loop_ev_free(mm->admit->tick);
	hmap_free(&mm->admit->srcs);
	free(mm->admit);
	mm->admit = NULL;
}

/* c no longer counts against its address (refused, gone or admitted). */
static void
uncount(struct mm_conn *c)
{
	struct mm_admit *ad = c->mm->admit;
	struct mm_src *s;

	if (!c->auth->waiting)
		return;
	c->auth->waiting = 0;
	ad->waiting--;
	if ((s = hmap_find(&ad->srcs, &c->auth->src)) != NULL)
		s->waiting--;
}

static void turn_away(struct mm *mm, struct mm_conn *c, int dropped,
		      uint32_t nwait);

static void
mm_auth_timeout(void *arg)
{
	struct mm_conn *c = arg;

	if (c->auth->refusing && !c->auth->closing) {
		turn_away(c->mm, c, 0, c->auth->refuse_nwait);
		return;
	}
	if (!c->auth->closing)
		note(c->mm, &c->auth->src, AD_TIMEOUT, NULL, "%s: no "
		    "authentication within %u s: closed", c->addr,
		    c->mm->auth_secs);
	mm_conn_free(c);
}

int
mm_auth_admit(struct mm *mm, const char *addr)
{
	struct mm_src_key k;

	if (mm->npreauth < MM_AUTH_CONNS_MAX)
		return 0;
	src_of(addr, &k);
	note(mm, &k, AD_REFUSED, NULL, "%s: refused: %d connections in the "
	    "handshake already", addr, MM_AUTH_CONNS_MAX);
	return -1;
}

static void
close_after_flush(struct peer *p, void *arg)
{
	(void)p;
	mm_conn_free(arg);
}

/* Refuses the peer: DENIED with code and text, closed once it is out (or
 * after MM_AUTH_DENY_MS, if the peer does not read). */
static void
deny(struct mm_conn *c, uint32_t code, const char *text)
{
	unsigned char buf[256];
	struct wire_wr w;

	wire_wr_init(&w, buf, sizeof buf);
	wire_put_u32(&w, code);
	wire_put_str(&w, text);
	c->auth->closing = 1;
	uncount(c);
	(void)loop_arm(c->auth->timer, MM_AUTH_DENY_MS * 1000000ull);
	if (peer_send(c->p, WIRE_DENIED, buf, w.len, NULL, 0) != 0) {
		mm_conn_free(c);
		return;
	}
	peer_on_flushed(c->p, close_after_flush);
}

/*
 * Which waiting handshake of source k to drop for the newcomer nc: the
 * lowest class, then the oldest; NULL if every one is protected.
 */
static struct mm_conn *
victim(struct mm *mm, const struct mm_src_key *k, struct mm_conn *nc,
       uint64_t now)
{
	struct mm_conn *c, *best = NULL;
	int cls, best_cls = 3;

	for (c = mm->conns; c != NULL; c = c->next) {
		struct mm_auth *a = c->auth;

		if (c == nc || c->state != MM_CONN_NEW || a == NULL ||
		    !a->waiting || memcmp(&a->src, k, sizeof *k) != 0)
			continue;
		switch (peer_heard(c->p)) {
		case -1:
			cls = 0;	/* gone already */
			break;
		case 0:
			cls = a->challenged ? 2 : 1;
			break;
		default:
			cls = 2;
			break;
		}
		if (a->challenged &&
		    now - a->t_challenge < MM_AUTH_GRACE_MS * 1000000ull)
			continue;
		if (cls < best_cls || (cls == best_cls &&
		    a->t_accept < best->auth->t_accept)) {
			best = c;
			best_cls = cls;
		}
	}
	return best;
}

/*
 * Who c says it is, for the log: "local monitor 12 on host" (its role in
 * *role) once its HELLO came (read, or waiting whole in its input, looked
 * at and left there); NULL before.
 */
static const char *
who(const struct mm_conn *c, char *buf, size_t cap, uint32_t *role)
{
	unsigned char in[WIRE_HDR + WIRE_PREAUTH_MAX];
	struct wire_hello h = c->auth->h;
	const char *why;
	uint16_t type;
	uint32_t len;
	size_t n;

	if (!c->auth->challenged) {
		n = peer_peek(c->p, in, sizeof in);
		if (n < WIRE_HDR ||
		    wire_parse_header(in, &type, &len, &why) != 0 ||
		    type != WIRE_HELLO || len > n - WIRE_HDR ||
		    auth_hello_parse(in + WIRE_HDR, len, &h) != 0)
			return NULL;
	}
	snprintf(buf, cap, "%s %u on %.64s", role_name(h.role), h.pid,
	    h.host);
	*role = h.role;
	return buf;
}

/*
 * Turns c away (dropped for a newer one, or refused), telling it why.  A
 * newcomer refused before its HELLO came is no longer counted as waiting
 * and is turned away when it comes (or MM_AUTH_NAME_MS later), named.
 */
static void
turn_away(struct mm *mm, struct mm_conn *c, int dropped, uint32_t nwait)
{
	char text[200], id[128];
	uint32_t role = 0;
	const char *lm = who(c, id, sizeof id, &role);

	if (!dropped && lm == NULL && !c->auth->refusing &&
	    !c->auth->challenged) {
		c->auth->refusing = 1;
		c->auth->refuse_nwait = nwait;
		uncount(c);
		(void)loop_arm(c->auth->timer, MM_AUTH_NAME_MS * 1000000ull);
		return;
	}

	snprintf(text, sizeof text, "%s: %u connections from %s waiting to "
	    "authenticate; try again", dropped ? "dropped for a newer one" :
	    "too many", nwait, c->auth->src.host);
	if (lm != NULL && role == WIRE_ROLE_LM)
		note(mm, &c->auth->src, AD_LM, lm, "%s: %s turned away before "
		    "it proved the token: %s", c->addr, lm, text);
	else
		note(mm, &c->auth->src, dropped ? AD_DROPPED : AD_REFUSED,
		    NULL, "%s: %s", c->addr, text);
	deny(c, WIRE_DENIED_OTHER, text);
}

int
mm_auth_start(struct mm_conn *c)
{
	struct mm *mm = c->mm;
	struct mm_admit *ad = mm->admit;
	struct mm_src_key top;
	struct mm_src *s, *t;
	struct mm_conn *v;
	uint64_t now = clk_mono_ns();
	uint32_t it;
	const struct mm_src_key *k;

	c->auth = calloc(1, sizeof *c->auth);
	if (c->auth == NULL)
		return -1;
	c->auth->timer = loop_timer(mm->base, mm_auth_timeout, c);
	if (c->auth->timer == NULL) {
		free(c->auth);
		c->auth = NULL;
		return -1;
	}
	src_of(c->addr, &c->auth->src);
	if ((s = src_get(ad, &c->auth->src)) == NULL) {
		loop_ev_free(c->auth->timer);
		free(c->auth);
		c->auth = NULL;
		return -1;
	}
	(void)loop_arm(c->auth->timer, mm->auth_secs * 1000000000ull);
	peer_set_max(c->p, WIRE_PREAUTH_MAX);
	c->auth->t_accept = now;
	c->auth->waiting = 1;
	s->waiting++;
	ad->waiting++;
	mm->npreauth++;
	/* Over a bound: the oldest of its address goes, or of the address
	 * that holds the most. */
	while (!c->auth->closing && !c->auth->refusing) {
		s = hmap_find(&ad->srcs, &c->auth->src);
		if (s != NULL && s->waiting > MM_AUTH_PER_ADDR)
			top = c->auth->src;
		else if (ad->waiting > MM_AUTH_WAITING_MAX) {
			it = 0;
			s = NULL;
			while ((t = hmap_next(&ad->srcs, &it,
			    (const void **)&k)) != NULL)
				if (s == NULL || t->waiting > s->waiting) {
					s = t;
					top = *k;
				}
		} else
			break;
		v = victim(mm, &top, c, now);
		if (v != NULL)
			turn_away(mm, v, 1, s->waiting);
		else
			turn_away(mm, c, 0, s->waiting);
	}
	return 0;
}

void
mm_auth_free(struct mm_conn *c)
{
	if (c->auth == NULL)
		return;
	uncount(c);
	loop_ev_free(c->auth->timer);
	hmac_wipe(c->auth, sizeof *c->auth);
	free(c->auth);
	c->auth = NULL;
	c->mm->npreauth--;
}

void
mm_auth_closed(struct mm_conn *c, const char *why)
{
	if (c->auth == NULL || c->auth->closing)
		return;
	note(c->mm, &c->auth->src, AD_EARLY, NULL, "%s: connection closed "
	    "%s: %s", c->addr, c->auth->challenged ? "during authentication" :
	    "before hello", why);
}

void
mm_auth_bad(struct mm_conn *c, const char *why)
{
	note(c->mm, &c->auth->src, AD_BAD, NULL, "%s: closing connection: "
	    "bad or unexpected message: %s", c->addr, why);
}

static int
got_hello(struct mm_conn *c, struct wire_rd *msg)
{
	struct mm_auth *a = c->auth;
	size_t len = wire_rd_left(msg);

	if (a->refusing) {
		/* Now it can be named (who() reads a->h once challenged). */
		if (auth_hello_parse(msg->p + msg->off, len, &a->h) == 0)
			a->challenged = 1;
		turn_away(c->mm, c, 0, a->refuse_nwait);
		return 0;
	}
	if (a->challenged || len > sizeof a->hello ||
	    auth_hello_parse(msg->p + msg->off, len, &a->h) != 0) {
		note(c->mm, &a->src, AD_BAD, NULL, "%s: malformed or repeated "
		    "hello: closed", c->addr);
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
	a->t_challenge = clk_mono_ns();
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
		note(mm, &a->src, AD_BAD, NULL, "%s: early proof: closed",
		    c->addr);
		return -1;
	}
	auth_proof(mm->mmid.token, AUTH_PEER, a->hello, a->hello_len,
	    a->nonce, want);
	if (!hmac_equal(proof, want, sizeof want)) {
		note(mm, &a->src, AD_TOKEN, NULL, "%s: %s %u on %s refused: "
		    "wrong token", c->addr, role_name(a->h.role), a->h.pid,
		    a->h.host);
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
		return WIRE_BY_LM | WIRE_BY_CTL | WIRE_BY_FIRE;
	return a->h.role == WIRE_ROLE_LM ? WIRE_BY_LM :
	    a->h.role == WIRE_ROLE_FIRE ? WIRE_BY_FIRE : WIRE_BY_CTL;
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
