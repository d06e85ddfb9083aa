/* SPDX-License-Identifier: MIT */
/* pv_rp_link.c: prove replay's connections to mainmon, one an LM: the
 * handshake under the host's name, one after the other, and the answers
 * an LM owes (PONG, DONE, CONTROL_ACK, STATUS_REPLY, PAUSED, RESUMED),
 * then BYE (doc/protocol.md 1.12). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "pv_replay.h"
#include "net/peer.h"
#include "net/wire.h"
#include "util/clock.h"

static void
bye_flushed(struct peer *p, void *arg)
{
	struct rp_node *n = arg;
	struct rp *rp = n->rp;
	size_t i;

	(void)p;
	peer_free(n->peer);
	n->peer = NULL;
	n->state = RP_GONE;
	for (i = 0; i < rp->nnodes; i++)
		if (rp->nodes[i].state != RP_GONE)
			return;
	event_base_loopbreak(rp->base);
}

/* Once everything is acknowledged: BYE on every connection. */
void
rp_finish(struct rp *rp)
{
	struct rp_node *n;
	size_t i;

	if (!rp->eof && !rp->stopped)
		return;
	for (i = 0; i < rp->nnodes; i++)
		if (rp->nodes[i].state == RP_READY &&
		    rp->nodes[i].unacked > 0)
			return;
	for (i = 0; i < rp->nnodes; i++) {
		n = &rp->nodes[i];
		if (n->state != RP_READY)
			continue;
		n->state = RP_BYE;
		if (peer_send(n->peer, WIRE_BYE, NULL, 0, NULL, 0) != 0) {
			rp_fail(rp, "%s: cannot queue a message to mainmon",
			    n->host, NULL);
			return;
		}
		peer_on_flushed(n->peer, bye_flushed);
	}
}

static void
handshake(struct rp_node *n, uint16_t type, struct wire_rd *msg)
{
	char text[160];
	uint32_t node;

	switch (peer_auth(n->peer, &n->auth, type, msg, &node, text,
	    sizeof text)) {
	case AUTH_MORE:
		return;
	case AUTH_OK:
		n->state = RP_SYNC;
		/* One after the other: a new mainmon numbers the hosts
		 * (nodes) in the trace's order. */
		if (n + 1 < n->rp->nodes + n->rp->nnodes &&
		    rp_connect(n->rp, n + 1) != 0)
			rp_fail(n->rp, "%s: cannot connect%s", n[1].host, "");
		return;
	case AUTH_REFUSED:
	case AUTH_DENIED:
		rp_fail(n->rp, "mainmon at %s refused: %s", n->rp->id.hostport,
		    text);
		return;
	case AUTH_IMPOSTOR:
		rp_fail(n->rp, "%s is not the main monitor we were given: it "
		    "did not prove the token%s", n->rp->id.hostport, "");
		return;
	case AUTH_BAD:
		rp_fail(n->rp, "%s: %s out of place during authentication",
		    n->host, wire_type_name(type));
		return;
	}
}

/* Answers what mainmon asks of an LM. */
static void
dispatch(struct peer *p, uint16_t type, struct wire_rd *msg,
	 const char *why, void *arg)
{
	struct rp_node *n = arg;
	struct rp *rp = n->rp;
	unsigned char buf[160];
	char bad[160];
	struct wire_wr w;
	struct wire_status st;
	uint32_t round, flags;
	size_t i;

	(void)p;
	wire_wr_init(&w, buf, sizeof buf);
	if (msg == NULL) {
		/* After BYE, or a final collection: mainmon is done. */
		if (n->state == RP_BYE || (rp->stopped && n->unacked == 0)) {
			bye_flushed(n->peer, n);
			return;
		}
		rp_fail(rp, "%s: connection to mainmon lost: %s", n->host, why);
		return;
	}
	if (wire_check(type, WIRE_BY_MM, WIRE_BY_LM,
	    n->state == RP_CONNECTING ? WIRE_ST_AUTH :
	    n->state == RP_SYNC ? WIRE_ST_SYNC : WIRE_ST_READY,
	    wire_rd_left(msg), bad, sizeof bad) != 0) {
		rp_fail(rp, "%s: %s", n->host, bad);
		return;
	}
	if (n->state == RP_CONNECTING) {
		handshake(n, type, msg);
		return;
	}
	switch (type) {
	case WIRE_PING:
		wire_put_u64(&w, wire_get_u64(msg));
		wire_put_u64(&w, clk_mono_ns());
		wire_put_u64(&w, 0);	/* no kernel departure times */
		wire_put_u64(&w, 0);
		wire_put_u64(&w, clk_mono_ns());
		rp_send_msg(n, WIRE_PONG, &w);
		break;
	case WIRE_READY:
		(void)wire_get_u32(msg);	/* both schemes are answered */
		n->state = RP_READY;
		for (i = 0; i < rp->nnodes; i++)
			if (rp->nodes[i].state != RP_READY)
				break;
		if (i == rp->nnodes && !rp->started)
			rp_start(rp);
		break;
	case WIRE_COLLECT:
		round = wire_get_u32(msg);
		flags = wire_get_u32(msg);
		if (flags & WIRE_COLLECT_STOP) {
			if (!rp->eof && !rp->stopped) {
				fflush(stdout);
				fprintf(stderr, "prove replay: mainmon "
				    "stopped: the replay ends early\n");
			}
			rp->stopped = 1;
		}
		rp_flush_node(n, round, rp_below(rp, clk_mono_ns()));
		/* Its final collection: a DONE sent on it after this one
		 * would never be acknowledged. */
		if (flags & WIRE_COLLECT_STOP)
			n->final = 1;
		/* The other hosts' pieces too: all that was read is sent. */
		if (rp->stopped)
			rp_flush_all(rp, clk_mono_ns());
		break;
	case WIRE_CONTROL:
		/* Replayed records are not filtered: acknowledged as
		 * applied. */
		wire_put_u32(&w, wire_get_u32(msg));
		wire_put_u64(&w, clk_mono_ns());
		msg->off = msg->len;
		rp_send_msg(n, WIRE_CONTROL_ACK, &w);
		break;
	case WIRE_STATUS:
		memset(&st, 0, sizeof st);
		st.lm_pid = (uint64_t)getpid();
		/* Its CPUs: none to tell. */
		wire_put_status(&w, wire_get_u32(msg), &st, "");
		rp_send_msg(n, WIRE_STATUS_REPLY, &w);
		break;
	case WIRE_ACK:
		(void)wire_get_u32(msg);
		if (n->unacked > 0)
			n->unacked--;
		rp_finish(rp);
		break;
	case WIRE_WRITTEN:
		msg->off = msg->len;	/* pieces are not kept: nothing to
					   free early */
		break;
	case WIRE_PAUSE:
		/* No process to stop: all stopped at once. */
		wire_put_u32(&w, wire_get_u32(msg));
		(void)wire_get_u32(msg);
		wire_put_u32(&w, 0);
		wire_put_u32(&w, 0);
		wire_put_u64(&w, clk_mono_ns());
		wire_put_u64(&w, 0);
		rp_send_msg(n, WIRE_PAUSED, &w);
		break;
	case WIRE_PLAN:
	case WIRE_SIGNAL:
		/* A plan's rows are for writers, and replayed records
		 * have none: they fire no record rule; and there is no
		 * process to stop or continue. */
		msg->off = msg->len;
		break;
	case WIRE_RESUME:
		wire_put_u32(&w, wire_get_u32(msg));
		wire_put_u32(&w, 0);
		wire_put_u32(&w, REC_COLL_END_ASKED);
		wire_put_u64(&w, clk_mono_ns());
		rp_send_msg(n, WIRE_RESUMED, &w);
		break;
	default:
		rp_fail(rp, "%s: unexpected %s from mainmon", n->host,
		    wire_type_name(type));
		return;
	}
	if (!wire_rd_ok(msg))
		rp_fail(rp, "%s: malformed %s from mainmon", n->host,
		    wire_type_name(type));
}

int
rp_connect(struct rp *rp, struct rp_node *n)
{
	unsigned char rnd[WIRE_NONCE];
	const char *why;

	n->rp = rp;
	if (auth_nonce(rnd) != 0)
		return -1;
	memcpy(&n->seg_id, rnd, sizeof n->seg_id);
	n->seg_id |= 1;		/* never 0: 0 is no segment */
	n->peer = peer_connect(rp->base, rp->id.hostport, dispatch, n, &why);
	if (n->peer == NULL) {
		fprintf(stderr, "prove replay: %s: %s\n", rp->id.hostport,
		    why);
		return -1;
	}
	if (peer_send_hello_as(n->peer, &n->auth, rp->id.token,
	    WIRE_ROLE_LM, n->seg_id, n->host) != 0) {
		fprintf(stderr, "prove replay: cannot start the handshake\n");
		return -1;
	}
	return 0;
}

void
rp_ready_timeout(evutil_socket_t fd, short what, void *arg)
{
	struct rp *rp = arg;

	(void)fd;
	(void)what;
	if (!rp->started)
		rp_fail(rp, "%s: not every host connected and synchronised "
		    "within %s s", rp->id.hostport, "30");
}
