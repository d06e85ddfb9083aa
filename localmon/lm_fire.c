/* SPDX-License-Identifier: MIT */
/* lm_fire.c: the LM's fire link, a second connection to its Main Monitor
 * that carries FIREs only, so that a plan's firing does not wait behind
 * the collections queued on the data connection (doc/protocol.md 1.13,
 * doc/plans.md 4.4).  Without it (not made yet, refused, gone), FIREs go
 * on the data connection as before. */
#include <string.h>

#include "lm.h"
#include "net/peer.h"
#include "net/wire.h"
#include "util/clock.h"
#include "util/log.h"

static void
fire_dispatch(struct peer *p, uint16_t type, struct wire_rd *msg,
	      const char *why, void *arg)
{
	struct lm *lm = arg;
	char bad[160], text[160];
	uint32_t node;

	(void)p;
	if (msg == NULL) {
		log_info("fire link to %s: %s: firings go with the data",
		    lm->mm_id, why);
		lm_fire_drop(lm);
		return;
	}
	if (lm->fire_ready || wire_check(type, WIRE_BY_MM, WIRE_BY_FIRE,
	    WIRE_ST_AUTH, wire_rd_left(msg), bad, sizeof bad) != 0) {
		/* The MM sends nothing once it is made. */
		log_info("fire link to %s: %s (%u) out of place: closed",
		    lm->mm_id, wire_type_name(type), type);
		lm_fire_drop(lm);
		return;
	}
	switch (peer_auth(lm->fire, &lm->fire_auth, type, msg, &node, text,
	    sizeof text)) {
	case AUTH_MORE:
		return;
	case AUTH_OK:
		lm->fire_ready = 1;
		log_debug("fire link to %s made", lm->mm_id);
		/* Firings that waited for it. */
		lm_plan_scan(lm);
		return;
	default:
		log_info("fire link to %s refused (%s): firings go with the "
		    "data", lm->mm_id, text);
		lm_fire_drop(lm);
		return;
	}
}

void
lm_fire_connect(struct lm *lm)
{
	const char *why;

	if (lm->fire != NULL || lm->refused || lm->mm_state != LM_LINK_READY)
		return;
	lm->fire = peer_connect(lm->base, lm->mmid.hostport, fire_dispatch,
	    lm, &why);
	if (lm->fire == NULL) {
		log_info("fire link to %s: %s", lm->mm_id, why);
		return;
	}
	lm->fire_ready = 0;
	if (peer_send_hello(lm->fire, &lm->fire_auth, lm->mmid.token,
	    WIRE_ROLE_FIRE, lm->seg_id) != 0)
		lm_fire_drop(lm);
}

void
lm_fire_drop(struct lm *lm)
{
	peer_free(lm->fire);
	lm->fire = NULL;
	lm->fire_ready = 0;
}

int
lm_fire_send(struct lm *lm, const void *buf, size_t len)
{
	if (!lm->fire_ready)
		return -1;
	return peer_send_now(lm->fire, WIRE_FIRE, buf, len);
}

void
lm_fire_poll(struct lm *lm)
{
	uint64_t now = clk_mono_ns();

	if (now - lm->fire_polled < LM_FIRE_POLL_NS)
		return;
	lm->fire_polled = now;
	if (lm->fire_ready)
		lm_plan_scan(lm);
	lm_mm_poll(lm);
}
