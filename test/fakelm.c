/* SPDX-License-Identifier: MIT */
/* fakelm.c: a scripted Local Monitor for test/written.sh.  It connects to
 * a mainmon as an LM (the handshake, the clock exchanges), sends one
 * collection whose "sent below" time falls between its two pieces, and
 * prints what mainmon tells it (WIRE_WRITTEN items, ACKs); once the first
 * piece is reported written, it sends a second collection that lets the
 * other piece be written, and prints what follows.
 *
 *	fakelm HOST:PORT:TOKEN
 *	fakelm HOST:PORT:TOKEN bad KIND
 *	fakelm HOST:PORT:TOKEN len TYPE short|long
 *	fakelm HOST:PORT:TOKEN hold FILE
 *
 * With "hold FILE", after READY it answers pings and nothing else (an LM
 * alive that never answers an order pull: test/hostage.sh) until FILE
 * exists, printing "collect" for each COLLECT, then closes and exits 0.
 *
 * Piece 1 (chunk seq 1): a definition of event 1 ("%d") and records 1 to
 * 3, stamped 2 s ago; piece 2 (seq 2): records 4 and 5, stamped 1 s ago;
 * the first DONE's "below" is 1.5 s ago, the second's now.  Process 4242,
 * thread 4243, session 1.  Exit 0 once both ACKs came, 1 if something
 * else came first or nothing within 10 s, 2 on a usage or system error.
 *
 * With "bad KIND", after READY it sends one malformed message of the
 * global collection scheme (or DATA, below), and exits 0 if mainmon then closes the
 * connection within 10 s (answering pings meanwhile), 1 if not.  KIND:
 * full (more chunks free than the segment has), paused (time 0), resumed
 * (an unknown reason), short (PAUSED without its last field), extra
 * (RESUMED with a byte after its fields); or a DATA whose records are
 * not a well-formed dense run: dense-form (a record of form 3),
 * dense-cut (a record's slots past the payload), dense-len (a record
 * kept as it is, of a length not a multiple of 8).
 *
 * With "len TYPE short|long", it sends one message of TYPE (PONG, DATA,
 * DONE, PROC, BYE, SEGMENT, CONTROL_ACK, STATUS_REPLY, FULL, PAUSED,
 * RESUMED) one byte shorter than its rule allows (wire.h), or a right
 * one with a byte after its last field.  A PONG goes
 * as the answer to the first PING (mainmon must then send nothing: no
 * next PING, no READY); the others after READY (mainmon must then send
 * nothing but PING, CONTROL or COLLECT: no ACK of a short DONE, ...).
 * Exit 0 if mainmon closes the connection within 10 s acting on nothing,
 * 1 if not.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "net/auth.h"
#include "net/mmid.h"
#include "net/wire.h"
#include "rec/rec.h"
#include "util/clock.h"
#include "wireio.h"

#define WAIT_MS	10000
#define PID	4242u
#define TID	4243u

static int fd = -1;

static int
msg(uint16_t type, const void *p, size_t n)
{
	return wio_msg(fd, type, p, n);
}

static int
get_msg(uint16_t *type, unsigned char *buf, size_t cap, size_t *len)
{
	return wio_get(fd, type, buf, cap, len, WAIT_MS);
}

/* Answers a PING; 0, or -1. */
static int
pong(const unsigned char *buf, size_t len)
{
	unsigned char out[40];
	struct wire_rd r;
	struct wire_wr w;
	uint64_t t;

	wire_rd_init(&r, buf, len);
	t = wire_get_u64(&r);
	wire_wr_init(&w, out, sizeof out);
	wire_put_u64(&w, t);
	wire_put_u64(&w, clk_mono_ns());
	wire_put_u64(&w, 0);	/* no departure time of the last */
	wire_put_u64(&w, 0);
	wire_put_u64(&w, clk_mono_ns());
	return wire_rd_ok(&r) ? msg(WIRE_PONG, out, w.len) : -1;
}

/*
 * Reads messages, answering pings, until one of type `until` (printing
 * WRITTEN items and ACKs as they come); 0, or -1.
 */
static int
wait_for(uint16_t until)
{
	static unsigned char buf[WIRE_MAX];
	struct wire_rd r;
	uint16_t type;
	uint32_t n;
	size_t len;

	for (;;) {
		if (get_msg(&type, buf, sizeof buf, &len) != 0)
			return -1;
		wire_rd_init(&r, buf, len);
		if (type == WIRE_PING && pong(buf, len) != 0)
			return -1;
		if (type == WIRE_ACK)
			printf("ack %u\n", wire_get_u32(&r));
		if (type == WIRE_WRITTEN) {
			n = wire_get_u32(&r);
			printf("written %u:", n);
			while (n-- > 0) {
				uint32_t pid = wire_get_u32(&r);
				uint32_t session = wire_get_u32(&r);
				uint64_t seq = wire_get_u64(&r);
				uint32_t end = wire_get_u32(&r);

				printf(" pid %u session %u seq %llu end %u",
				    pid, session, (unsigned long long)seq, end);
			}
			printf("%s\n", wire_rd_ok(&r) && wire_rd_left(&r) == 0 ?
			    "" : " (malformed)");
		}
		fflush(stdout);
		if (type == until)
			return 0;
		if (type == WIRE_ACK || type == WIRE_WRITTEN)
			return -1;	/* not in the expected order */
	}
}

/*
 * An LM that answers pings and nothing else (no order pull, no status)
 * until file exists; prints "collect" for each COLLECT.  0, or -1.
 */
static int
hold(const char *file)
{
	static unsigned char buf[WIRE_MAX];
	uint16_t type;
	size_t len;

	while (access(file, F_OK) != 0) {
		if (get_msg(&type, buf, sizeof buf, &len) != 0)
			return -1;
		if (type == WIRE_PING && pong(buf, len) != 0)
			return -1;
		if (type == WIRE_COLLECT) {
			printf("collect\n");
			fflush(stdout);
		}
	}
	return 0;
}

/* One record of event 1 ("%d": v) stamped ts, at p; its length. */
static size_t
event(unsigned char *p, uint64_t ts, int64_t v)
{
	struct rec_hdr h = { 24, REC_CLASS_USER, REC_ATTR_POINT, 1, ts };

	memcpy(p, &h, sizeof h);
	memcpy(p + sizeof h, &v, 8);
	return 24;
}

/* DATA of process PID's thread TID: records rec[len] of chunk seq. */
static int
data(uint64_t seq, const unsigned char *rec, size_t len)
{
	unsigned char buf[4096];
	struct wire_wr w;

	wire_wr_init(&w, buf, sizeof buf);
	/* session 1, off 0 */
	wire_put_data(&w, PID, TID, seq, 1, 0, rec, len);
	return w.err ? -1 : msg(WIRE_DATA, buf, w.len);
}

static int
done(uint64_t below)
{
	unsigned char buf[20];
	struct wire_wr w;

	wire_wr_init(&w, buf, sizeof buf);
	wire_put_u32(&w, WIRE_ROUND_PUSH);
	wire_put_u64(&w, 0);
	wire_put_u64(&w, below);
	return msg(WIRE_DONE, buf, w.len);
}

/* Sends the malformed message KIND; 0, or -1 (unknown kind or error). */
static int
bad(const char *kind)
{
	static const unsigned char zero[22];
	unsigned char buf[64];
	struct wire_wr w;
	uint16_t type;

	wire_wr_init(&w, buf, sizeof buf);
	if (strcmp(kind, "full") == 0) {
		type = WIRE_FULL;
		wire_put_u32(&w, 9);
		wire_put_u32(&w, 8);
	} else if (strcmp(kind, "paused") == 0 || strcmp(kind, "short") == 0) {
		type = WIRE_PAUSED;
		wire_put_u32(&w, 1);
		wire_put_u32(&w, 1);
		wire_put_u32(&w, 0);
		wire_put_u64(&w, kind[0] == 'p' ? 0 : clk_mono_ns());
		if (kind[0] == 'p')
			wire_put_u64(&w, 1000);
	} else if (strcmp(kind, "resumed") == 0 || strcmp(kind, "extra") == 0) {
		type = WIRE_RESUMED;
		wire_put_u32(&w, 1);
		wire_put_u32(&w, 1);
		wire_put_u32(&w, kind[0] == 'r' ? 9 : 0);
		wire_put_u64(&w, clk_mono_ns());
		if (kind[0] == 'e')
			wire_put_bytes(&w, "", 1);
	} else if (strncmp(kind, "dense-", 6) == 0) {
		/* DATA whose records are not a well-formed dense run
		 * (doc/formats.md 2.6): form 3; a short record of 2 slots
		 * with one; a record kept as it is whose len is not a
		 * multiple of 8. */
		type = WIRE_DATA;
		wire_put_u32(&w, PID);
		wire_put_u32(&w, TID);
		wire_put_u64(&w, 1);
		wire_put_u32(&w, 1);
		wire_put_u32(&w, 0);
		wire_put_u64(&w, clk_mono_ns());
		if (strcmp(kind, "dense-form") == 0) {
			wire_put_u32(&w, 3);
			wire_put_u32(&w, 0);
		} else if (strcmp(kind, "dense-cut") == 0) {
			wire_put_u32(&w, 2u << 2 | 8u << 6 | 65u << 14);
			wire_put_u32(&w, 0);
			wire_put_u32(&w, 7);
		} else if (strcmp(kind, "dense-len") == 0) {
			wire_put_u32(&w, 2);
			wire_put_u16(&w, 20);		/* not 8-aligned */
			wire_put_bytes(&w, zero, 22);
		} else
			return -1;
	} else
		return -1;
	return msg(type, buf, w.len);
}

/*
 * Whether mainmon closes the connection within WAIT_MS (pings answered).
 * With quiet, any message but STATUS before the close makes it 0; with
 * strict, any but PING, CONTROL, COLLECT and STATUS (which mainmon sends
 * unasked).
 */
static int
closed_after(int quiet, int strict)
{
	static unsigned char buf[WIRE_MAX];
	uint64_t t0 = clk_mono_ns();
	uint16_t type;
	size_t len;

	for (;;) {
		/* An error before the time limit: the end of the connection. */
		if (get_msg(&type, buf, sizeof buf, &len) != 0)
			return clk_mono_ns() - t0 < (WAIT_MS - 500) * 1000000ull;
		if ((quiet && type != WIRE_STATUS) || (strict &&
		    type != WIRE_PING && type != WIRE_CONTROL &&
		    type != WIRE_PLAN && type != WIRE_COLLECT &&
		    type != WIRE_STATUS)) {
			printf("mainmon answered with %s (%u)\n",
			    wire_type_name(type), type);
			return 0;
		}
		if (type == WIRE_PING && pong(buf, len) != 0)
			return 1;
	}
}

static int
closed(void)
{
	return closed_after(0, 0);
}

/*
 * A right payload of type into w (PONG: the answer to the PING in
 * ping[8]); -1 if type is not one an LM sends after the handshake.
 */
static int
right(uint16_t type, struct wire_wr *w, const unsigned char *ping)
{
	struct wire_status st;
	unsigned char rec[24];

	switch (type) {
	case WIRE_PONG:
		wire_put_bytes(w, ping, 8);
		wire_put_u64(w, clk_mono_ns());
		wire_put_u64(w, 0);
		wire_put_u64(w, 0);
		wire_put_u64(w, clk_mono_ns());
		return 0;
	case WIRE_DATA:
		wire_put_u32(w, PID);
		wire_put_u32(w, TID);
		wire_put_u64(w, 1);
		wire_put_u32(w, 1);
		wire_put_u32(w, 0);
		wire_put_bytes(w, rec, event(rec, clk_mono_ns(), 1));
		return 0;
	case WIRE_DONE:
		wire_put_u32(w, WIRE_ROUND_PUSH);
		wire_put_u64(w, 0);
		wire_put_u64(w, WIRE_BELOW_NONE);
		return 0;
	case WIRE_PROC:
		wire_put_u32(w, PID);
		wire_put_u32(w, 1);
		wire_put_u32(w, WIRE_PROC_START);
		wire_put_u32(w, 0);
		wire_put_u64(w, clk_mono_ns());
		wire_put_str(w, "fake");
		wire_put_u32(w, 1);
		return 0;
	case WIRE_BYE:
		return 0;
	case WIRE_SEGMENT:
		wire_put_u64(w, 0x5eed);
		return 0;
	case WIRE_CONTROL_ACK:
		wire_put_u32(w, 1);
		wire_put_u64(w, clk_mono_ns());
		return 0;
	case WIRE_STATUS_REPLY:
		memset(&st, 0, sizeof st);
		wire_put_status(w, 1, &st, "");
		return 0;
	case WIRE_FULL:
		wire_put_u32(w, 1);
		wire_put_u32(w, 8);
		return 0;
	case WIRE_PAUSED:
		wire_put_u32(w, 1);
		wire_put_u32(w, 1);
		wire_put_u32(w, 0);
		wire_put_u64(w, clk_mono_ns());
		wire_put_u64(w, 1000);
		return 0;
	case WIRE_RESUMED:
		wire_put_u32(w, 1);
		wire_put_u32(w, 1);
		wire_put_u32(w, REC_COLL_END_ASKED);
		wire_put_u64(w, clk_mono_ns());
		return 0;
	case WIRE_FIRE:
		wire_put_u32(w, 1);
		wire_put_u32(w, PID);
		wire_put_u32(w, TID);
		wire_put_u32(w, 1);
		wire_put_u64(w, clk_mono_ns());
		wire_put_u64(w, 0);
		return 0;
	}
	return -1;
}

/* The type called name (wire.h), or 0. */
static uint16_t
type_of(const char *name)
{
	uint16_t t;

	for (t = 1; wire_rule(t) != NULL; t++)
		if (strcmp(wire_type_name(t), name) == 0)
			return t;
	return 0;
}

/*
 * Sends a message of type one byte shorter than its rule allows, or (lng)
 * a right one and a byte, and says whether mainmon closed the connection
 * acting on nothing.
 */
static int
wrong_length(uint16_t type, int lng, const unsigned char *ping)
{
	unsigned char buf[256];
	struct wire_wr w;
	size_t len;

	wire_wr_init(&w, buf, sizeof buf);
	if (right(type, &w, ping) != 0 || w.err)
		return -1;
	len = w.len;
	if (lng)
		buf[len++] = 0;
	else if ((len = wire_rule(type)->len) == 0)
		return -1;
	else
		len--;
	if (msg(type, buf, len) != 0)
		return -1;
	return closed_after(type == WIRE_PONG, 1);
}

int
main(int argc, char **argv)
{
	unsigned char hb[WIRE_PREAUTH_MAX], proof[WIRE_PROOF], buf[4096];
	unsigned char p1[1024], p2[1024];
	struct wire_hello h;
	struct mmid id;
	const char *why;
	uint64_t now;
	uint16_t type;
	size_t hl, len, l1 = 0, l2 = 0;

	if ((argc != 2 && (argc != 4 || (strcmp(argv[2], "bad") != 0 &&
	    strcmp(argv[2], "hold") != 0)) &&
	    (argc != 5 || strcmp(argv[2], "len") != 0 ||
	    right(type_of(argv[3]), &(struct wire_wr){ .err = 1 }, NULL) !=
	    0)) || mmid_parse(argv[1], &id, &why) != 0) {
		fprintf(stderr, "usage: fakelm HOST:PORT:TOKEN [bad KIND | "
		    "len TYPE short|long | hold FILE]\n");
		return 2;
	}
	if ((fd = wio_dial(id.host, id.port)) == -1) {
		perror("fakelm: connect");
		return 2;
	}
	memset(&h, 0, sizeof h);
	h.role = WIRE_ROLE_LM;
	h.pid = (uint32_t)getpid();
	h.seg_id = 0x5eed;
	snprintf(h.host, sizeof h.host, "fakelm");
	if (auth_nonce(h.nonce) != 0 ||
	    (hl = auth_hello_build(hb, sizeof hb, &h)) == 0 ||
	    msg(WIRE_HELLO, hb, hl) != 0 ||
	    get_msg(&type, buf, sizeof buf, &len) != 0 ||
	    type != WIRE_CHALLENGE || len != WIRE_NONCE)
		goto fail;
	auth_proof(id.token, AUTH_PEER, hb, hl, buf, proof);
	if (msg(WIRE_AUTH, proof, sizeof proof) != 0 ||
	    get_msg(&type, buf, sizeof buf, &len) != 0 ||
	    type != WIRE_WELCOME)
		goto fail;
	if (argc == 5 && type_of(argv[3]) == WIRE_PONG) {
		if (get_msg(&type, buf, sizeof buf, &len) != 0 ||
		    type != WIRE_PING || len != 8)
			goto fail;
		return wrong_length(WIRE_PONG, argv[4][0] == 'l', buf) == 1 ?
		    0 : 1;
	}
	if (wait_for(WIRE_READY) != 0)
		goto fail;
	if (argc == 5)
		return wrong_length(type_of(argv[3]), argv[4][0] == 'l',
		    NULL) == 1 ? 0 : 1;
	if (argc == 4 && strcmp(argv[2], "hold") == 0) {
		if (hold(argv[3]) != 0)
			goto fail;
		close(fd);
		return 0;
	}
	if (argc == 4) {
		if (bad(argv[3]) != 0)
			goto fail;
		return closed() ? 0 : 1;
	}

	now = clk_mono_ns();
	l1 = rec_build_define(p1, 1, REC_CLASS_USER, REC_ATTR_POINT, "%d",
	    "fake", now - 2000000000u);
	l1 += event(p1 + l1, now - 2000000000u, 1);
	l1 += event(p1 + l1, now - 1999000000u, 2);
	l1 += event(p1 + l1, now - 1998000000u, 3);
	l2 += event(p2 + l2, now - 1000000000u, 4);
	l2 += event(p2 + l2, now - 999000000u, 5);
	/* Piece 1 is below the first DONE's time, piece 2 is not. */
	if (data(1, p1, l1) != 0 || data(2, p2, l2) != 0 ||
	    done(now - 1500000000u) != 0 || wait_for(WIRE_WRITTEN) != 0)
		goto fail;
	if (done(clk_mono_ns()) != 0 || wait_for(WIRE_ACK) != 0 ||
	    wait_for(WIRE_ACK) != 0)
		goto fail;
	close(fd);
	return 0;
fail:
	printf("fakelm: the exchange did not go as expected\n");
	return 1;
}
