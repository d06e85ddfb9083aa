/* SPDX-License-Identifier: MIT */
/* wire.c: encoding and bounds-checked decoding of protocol messages, and
 * the table of their rules checked before dispatch. */
#include <stdio.h>
#include <string.h>

#include "net/wire.h"
#include "rec/dense.h"

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
put_data_fields(struct wire_wr *w, uint32_t pid, uint32_t tid, uint64_t seq,
		uint32_t session, uint32_t off)
{
	wire_put_u32(w, pid);
	wire_put_u32(w, tid);
	wire_put_u64(w, seq);
	wire_put_u32(w, session);
	wire_put_u32(w, off);
}

void
wire_put_data(struct wire_wr *w, uint32_t pid, uint32_t tid, uint64_t seq,
	      uint32_t session, uint32_t off, const void *recs, size_t len)
{
	ssize_t n;

	put_data_fields(w, pid, tid, seq, session, off);
	if (w->err)
		return;
	n = rec_dense_encode(recs, len, w->p + w->len, w->cap - w->len);
	if (n < 0)
		w->err = 1;
	else
		w->len += (size_t)n;
}

size_t
wire_put_data_valid(struct wire_wr *w, uint32_t pid, uint32_t tid,
		 uint64_t seq, uint32_t session, uint32_t off,
		 const void *recs, size_t len, int *meta)
{
	size_t used = 0;
	ssize_t n;

	*meta = 0;
	put_data_fields(w, pid, tid, seq, session, off);
	if (w->err)
		return 0;
	n = rec_dense_encode_valid(recs, len, w->p + w->len, w->cap - w->len,
	    &used, meta);
	if (n < 0)
		w->err = 1;
	else
		w->len += (size_t)n;
	return used;
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
wire_put_status(struct wire_wr *w, uint32_t round,
		const struct wire_status *st, const char *cpus)
{
	const uint64_t v[WIRE_STATUS_FIELDS] = { st->lm_pid, st->alive,
	    st->dead, st->seg_size, st->chunks, st->used, st->threshold,
	    st->spilled, st->spill_max, st->spilled_total, st->pushes,
	    st->lost, st->bad_bytes, st->adopted };
	size_t i;

	wire_put_u32(w, round);
	for (i = 0; i < WIRE_STATUS_FIELDS; i++)
		wire_put_u64(w, v[i]);
	wire_put_str(w, cpus);
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

/* Bytes of a str field with no bytes, of a u32, of a u64. */
#define S	2u
#define U32	4u
#define U64	8u

/* Who (WIRE_BY_*), and in which states (WIRE_ST_*). */
#define MM	WIRE_BY_MM
#define LM	WIRE_BY_LM
#define CTL	WIRE_BY_CTL
#define FLINK	WIRE_BY_FIRE
#define PEER	(WIRE_BY_LM | WIRE_BY_CTL | FLINK)
#define HS	WIRE_ST_AUTH
#define SYNC	WIRE_ST_SYNC
#define READY	WIRE_ST_READY
#define AUTHD	(WIRE_ST_SYNC | WIRE_ST_READY)
#define EXACT	1
#define LEAST	0
#define R(type, by, to, states, exact, len) \
	[WIRE_##type] = { #type, by, to, states, exact, len }

/* Indexed by type; doc/protocol.md 1.4 gives the same in prose.  (HELLO's
 * two u64 are counted as four u32, to fit the line.) */
static const struct wire_rule rules[] = {
	R(HELLO,	PEER, MM,   HS,    LEAST, 6 * U32 + S + WIRE_NONCE),
	R(WELCOME,	MM,   PEER, HS,    EXACT, U32 + WIRE_PROOF),
	R(PING,		MM,   LM,   AUTHD, EXACT, U64),
	R(PONG,		LM,   MM,   AUTHD, EXACT, 5 * U64),
	R(READY,	MM,   LM,   SYNC,  EXACT, U32),
	R(COLLECT,	MM,   LM,   READY, EXACT, 2 * U32),
	R(DATA,		LM,   MM,   READY, LEAST, 4 * U32 + U64),
	R(DONE,		LM,   MM,   READY, EXACT, U32 + 2 * U64),
	R(ACK,		MM,   LM,   READY, EXACT, U32),
	R(PROC,		LM,   MM,   READY, LEAST, 5 * U32 + U64 + S),
	R(BYE,		LM,   MM,   AUTHD, EXACT, 0),
	R(CTL,		CTL,  MM,   READY, LEAST, S),
	R(CTL_REPLY,	MM,   CTL,  READY, LEAST, U32 + S),
	R(CONTROL,	MM,   LM | FLINK, READY, LEAST, 10 * U32 + S),
	R(CONTROL_ACK,	LM | FLINK, MM, READY, EXACT, U32 + U64),
	R(STATUS,	MM,   LM,   READY, EXACT, U32),
	R(STATUS_REPLY,	LM,   MM,   READY, LEAST, U32 + 14 * U64 + S),
	R(SEGMENT,	LM,   MM,   AUTHD, EXACT, U64),
	R(CHALLENGE,	MM,   PEER, HS,    EXACT, WIRE_NONCE),
	R(AUTH,		PEER, MM,   HS,    EXACT, WIRE_PROOF),
	R(DENIED,	MM,   PEER, HS,    LEAST, U32 + S),
	R(WRITTEN,	MM,   LM,   READY, LEAST, U32),
	R(FULL,		LM,   MM,   READY, EXACT, 2 * U32),
	R(PAUSE,	MM,   LM,   READY, EXACT, 2 * U32),
	R(PAUSED,	LM,   MM,   READY, EXACT, 3 * U32 + 2 * U64),
	R(RESUME,	MM,   LM,   READY, EXACT, U32),
	R(RESUMED,	LM,   MM,   READY, EXACT, 3 * U32 + U64),
	R(TSC,		LM,   MM,   SYNC,  EXACT, 6 * U64),
	R(PLAN,		MM,   LM | FLINK, READY, LEAST, 2 * U32),
	R(FIRE,		LM | FLINK, MM, READY, EXACT, 4 * U32 + 2 * U64),
	R(SIGNAL,	MM,   LM | FLINK, READY, EXACT, 3 * U32),
};
_Static_assert(WIRE_STATUS_FIELDS == 14, "STATUS_REPLY's length above");

const struct wire_rule *
wire_rule(uint16_t type)
{
	if (type >= sizeof rules / sizeof rules[0] || rules[type].name == NULL)
		return NULL;
	return &rules[type];
}

const char *
wire_type_name(uint16_t type)
{
	const struct wire_rule *r = wire_rule(type);

	return r != NULL ? r->name : "unknown";
}

static const char *
party_name(unsigned by)
{
	if (by == WIRE_BY_MM)
		return "the main monitor";
	if (by == WIRE_BY_LM)
		return "a local monitor";
	if (by == WIRE_BY_CTL)
		return "a control client";
	if (by == WIRE_BY_FIRE)
		return "a local monitor's fire link";
	return "this peer";
}

int
wire_check(uint16_t type, unsigned by, unsigned to, unsigned state,
	   size_t len, char *why, size_t whysz)
{
	const struct wire_rule *r = wire_rule(type);

	if (r == NULL)
		snprintf(why, whysz, "message of unknown type %u", type);
	else if ((r->by & by) == 0)
		snprintf(why, whysz, "%s (%u) from %s: never sent by it",
		    r->name, type, party_name(by));
	else if ((r->to & to) == 0)
		snprintf(why, whysz, "%s (%u) to %s: never sent to it",
		    r->name, type, party_name(to));
	else if ((r->states & state) == 0)
		snprintf(why, whysz, "%s (%u) %s", r->name, type,
		    state == WIRE_ST_AUTH ? "before the handshake is complete" :
		    r->states == WIRE_ST_AUTH ? "after the handshake" :
		    state == WIRE_ST_SYNC ? "before READY" : "after READY");
	else if (r->exact && len != r->len)
		snprintf(why, whysz, "%s (%u) of %zu byte%s: %u expected",
		    r->name, type, len, len == 1 ? "" : "s", (unsigned)r->len);
	else if (!r->exact && len < r->len)
		snprintf(why, whysz, "%s (%u) of %zu byte%s: at least %u "
		    "expected", r->name, type, len, len == 1 ? "" : "s",
		    (unsigned)r->len);
	else
		return 0;
	return -1;
}
