/* SPDX-License-Identifier: MIT */
/*
 * mm_live.c: liveness on mainmon's side.  Every LM is sent something at
 * least every second (a lone PING if nothing else: the LM takes a
 * mainmon silent for its bound as dead), and asked its status now and
 * then, so that what a host held is known if it goes.  An LM silent for
 * --silent seconds is closed by its peer (net/peer.c); one that closes
 * without its BYE, or leaves an order pull unanswered for --order-wait,
 * has its host given up: a #GIVENUP line, and the host no longer holds
 * the time order of the others.  Its records that come back later are
 * written late, counted per host (#LATE); at stop, a host given up and
 * not back is named with what its LM's last status held (#MISSING).
 */
#include <stdio.h>
#include <string.h>

#include "mm.h"
#include "net/loop.h"
#include "net/peer.h"
#include "net/wire.h"
#include "tape.h"
#include "util/clock.h"
#include "util/log.h"

#define BEAT_TICK_US	250000		/* the heartbeat timer */
#define BEAT_NS		500000000u	/* a PING if none for this long */
#define STATUS_NS	5000000000u	/* a STATUS at least this often */
/* An LM heard from within this is "answering" in grmctl status. */
#define ANSWERING_NS	1500000000u

static double
secs(uint64_t ns)
{
	return (double)ns / 1e9;
}

static void give_up(struct mm *mm, struct mm_node *n, uint64_t ts,
		    const char *token, const char *why);
static int other_lm(const struct mm *mm, const struct mm_conn *c);

/* c, asked at t_asked, answered nothing and sent no data since, for
 * --order-wait: it no longer holds the order, nor the round; its host is
 * given up (what: the request, for the log). */
static int
unanswered(struct mm *mm, struct mm_conn *c, uint64_t t_asked, uint64_t now,
	   const char *what)
{
	uint64_t since = t_asked > c->last_data ? t_asked : c->last_data;
	char why[64];

	/* Asked when it became ready, if the round began before. */
	if (c->ready_at > since)
		since = c->ready_at;
	if (mm->order_wait_ns == 0 || c->state != MM_CONN_READY ||
	    c->order == MM_ORD_OUT || now - since < mm->order_wait_ns)
		return 0;
	c->order = MM_ORD_OUT;
	snprintf(why, sizeof why, "no answer to %s for %.1f s", what,
	    secs(now - since));
	log_warn("LM %u on %s (%s): %s: the host no longer holds the order",
	    c->lm_pid, c->node->host, c->addr, why);
	if (!other_lm(mm, c))
		give_up(mm, c->node, c->wm, "no-answer", why);
	return 1;
}

/* Collection rounds do not wait for an LM that does not answer (and is
 * not sending) past --order-wait: they go on, naming its host. */
static void
rounds_check(struct mm *mm, uint64_t now)
{
	struct mm_coll *co;
	int i;

again:
	for (co = mm->colls; co != NULL; co = co->next) {
		if (co->phase != MM_PH_COLLECT || co->what == MM_STATUS ||
		    co->what == MM_CONTROL || co->what == MM_PLAN)
			continue;
		for (i = 0; i < co->npending; i++)
			if (unanswered(mm, co->pending[i], co->t_asked, now,
			    "a collection")) {
				/* Rounds may have ended: look again. */
				mm_coll_give_up(mm, co->pending[i]);
				goto again;
			}
	}
}

static void
beat(void *arg)
{
	struct mm *mm = arg;
	struct mm_conn *c;
	uint64_t now = clk_mono_ns();
	unsigned char buf[4] = { 0 };

	for (c = mm->conns; c != NULL; c = c->next) {
		if (!MM_IS_LM(c))
			continue;
		/* A burst's pings come one per answer: a frozen LM gets
		 * nothing more, which changes nothing for it. */
		if (c->burst == 0 && now - c->last_ping >= BEAT_NS) {
			c->beats++;
			mm_send_ping(c);
		}
		/* Round 0: nobody waits; the answer is kept (mm_peer.c). */
		if (c->state == MM_CONN_READY &&
		    now - c->last_status >= STATUS_NS) {
			c->last_status = now;
			peer_send(c->p, WIRE_STATUS, buf, sizeof buf, NULL, 0);
		}
	}
	if (!mm->stopped)
		rounds_check(mm, now);
}

int
mm_live_init(struct mm *mm)
{
	mm->beat_ev = loop_every(mm->base, beat, mm);
	if (mm->beat_ev == NULL ||
	    loop_arm(mm->beat_ev, BEAT_TICK_US * 1000ull) != 0)
		return -1;
	return 0;
}

void
mm_live_finish(struct mm *mm)
{
	loop_ev_free(mm->beat_ev);
	mm->beat_ev = NULL;
}

/* An LM that exits with everything delivered says BYE first; a close
 * without it is its end only while mainmon stops (the final collection
 * answered, nothing unacknowledged). */
int
mm_live_clean_end(const struct mm *mm, const struct mm_conn *c)
{
	if (c->said_bye)
		return 1;
	if (peer_silent(c->p) || peer_broken(c->p) || c->acks != NULL ||
	    c->batch != NULL)
		return 0;
	return mm->stopping;
}

/* Whether another LM of c's host is connected (a successor). */
static int
other_lm(const struct mm *mm, const struct mm_conn *c)
{
	const struct mm_conn *o;

	for (o = mm->conns; o != NULL; o = o->next)
		if (o != c && MM_IS_LM(o) && o->node == c->node &&
		    o->order != MM_ORD_OUT)
			return 1;
	return 0;
}

/* Host n is given up from MM time ts (a token why for the trace, a
 * phrase for status). */
static void
give_up(struct mm *mm, struct mm_node *n, uint64_t ts, const char *token,
	const char *why)
{
	if (n->state == MM_NODE_GIVENUP)
		return;
	n->state = MM_NODE_GIVENUP;
	n->gone_at = clk_mono_ns();
	snprintf(n->gone_why, sizeof n->gone_why, "%s", why);
	mm->givenup++;
	if (mm->out != NULL && !mm->stopped &&
	    tape_givenup(mm->out, n->id, ts, token) != 0)
		log_warn("%s: cannot write", mm->out_path);
}

void
mm_live_gone(struct mm *mm, struct mm_conn *c, const char *why)
{
	if (other_lm(mm, c))
		return;
	if (!peer_silent(c->p))
		log_info("LM %u on %s (%s): %s before its end: the host no "
		    "longer holds the order", c->lm_pid, c->node->host,
		    c->addr, why);
	give_up(mm, c->node, c->order == MM_ORD_REPLAY ? 0 : c->wm,
	    peer_silent(c->p) ? "silent" : "closed", why);
}

void
mm_live_returned(struct mm *mm, struct mm_conn *c)
{
	struct mm_node *n = c->node;

	(void)mm;
	if (c->order == MM_ORD_OUT) {
		c->order = MM_ORD_FOLLOW;
		log_warn("LM %u on %s (%s): answered the order pull again",
		    c->lm_pid, n->host, c->addr);
	}
	if (n->state != MM_NODE_GIVENUP)
		return;
	n->state = MM_NODE_LIVE;
	log_warn("LM %u on %s (%s): the host is back, %.1f s after it was "
	    "given up (%s); what it sends older than the trace is written "
	    "late", c->lm_pid, n->host, c->addr, secs(clk_mono_ns() -
	    n->gone_at), n->gone_why);
}

void
mm_live_order_check(struct mm *mm, uint64_t now)
{
	struct mm_conn *c;

	for (c = mm->conns; c != NULL; c = c->next)
		if (c->order == MM_ORD_PULLED)
			(void)unanswered(mm, c, c->last_pull, now,
			    "an order pull");
}

/* The LM of n connected now, if any (the newest). */
static const struct mm_conn *
lm_of(const struct mm *mm, const struct mm_node *n)
{
	const struct mm_conn *c;

	for (c = mm->conns; c != NULL; c = c->next)
		if (MM_IS_LM(c) && c->node == n)
			return c;
	return NULL;
}

/* c's state (or, c NULL, its host's, given up) in words. */
static void
state_text(const struct mm_node *n, const struct mm_conn *c, uint64_t now,
	   char *buf, size_t cap)
{
	size_t k;

	if (c == NULL)
		snprintf(buf, cap, "given up %.1f s ago (%s)",
		    secs(now - n->gone_at), n->gone_why);
	else if (c->state == MM_CONN_SYNC)
		snprintf(buf, cap, "syncing its clock");
	else if (now - peer_last_rx(c->p) >= ANSWERING_NS)
		snprintf(buf, cap, "silent for %.1f s",
		    secs(now - peer_last_rx(c->p)));
	else
		snprintf(buf, cap, "answering");
	k = strlen(buf);
	if (c != NULL && c->order == MM_ORD_OUT && k < cap)
		snprintf(buf + k, cap - k, ", given up for the order (%s)",
		    n->gone_why);
	k = strlen(buf);
	if (c != NULL && c->has_st && c->st.spilled > 0 && k < cap)
		snprintf(buf + k, cap - k, ", spilling");
}

/* An LM's status, as its last STATUS_REPLY said (cpus: its CPU list). */
static size_t
st_text(const struct wire_status *st, const char *cpus, const char *what,
	char *text, size_t cap)
{
	return (size_t)snprintf(text, cap, "  %sprocesses %llu alive, %llu "
	    "ended; segment %llu bytes, %llu of %llu chunks used (%.0f%%), "
	    "push below %llu free; spilled %llu bytes now (at most %llu), "
	    "%llu in all; %llu pushes; %llu events lost; %llu bad bytes; "
	    "runs on CPUs %s\n",
	    what, (unsigned long long)st->alive, (unsigned long long)st->dead,
	    (unsigned long long)st->seg_size, (unsigned long long)st->used,
	    (unsigned long long)st->chunks,
	    st->chunks ? 100.0 * (double)st->used / (double)st->chunks : 0.0,
	    (unsigned long long)st->threshold,
	    (unsigned long long)st->spilled,
	    (unsigned long long)st->spill_max,
	    (unsigned long long)st->spilled_total,
	    (unsigned long long)st->pushes, (unsigned long long)st->lost,
	    (unsigned long long)st->bad_bytes, *cpus != '\0' ? cpus : "?");
}

size_t
mm_live_status(struct mm *mm, char *text, size_t cap)
{
	const struct mm_conn *c;
	const struct mm_node *nd;
	uint64_t now = clk_mono_ns();
	char state[160];
	size_t n = 0;

	for (c = mm->conns; c != NULL && n < cap; c = c->next) {
		const struct mm_sync_used *u;
		const struct mm_sync_model *md, *fit = &c->clk.model;
		char more[256];
		size_t k = 0;

		if (!MM_IS_LM(c))
			continue;
		nd = c->node;
		/* The model that converts the host's records (#SYNC), not
		 * the one fitted since, which may not be published yet. */
		u = mm_sync_current(&c->book);
		md = u != NULL ? &u->md : fit;
		more[0] = '\0';
		if (md != fit && (fit->m0 != md->m0 ||
		    fit->off0 != md->off0 || fit->drift != md->drift ||
		    fit->err != md->err))
			k += (size_t)snprintf(more, sizeof more, "; fitted "
			    "since, not published: clock offset %lld ns, "
			    "drift %lld ppb, error %llu ns",
			    (long long)mm_sync_offset(fit, now),
			    (long long)mm_sync_drift_ppb(fit),
			    (unsigned long long)fit->err);
		/* 2^32 / mult ticks per ns: GHz. */
		if (c->tsc && c->tsc_cal.mult != 0)
			k += (size_t)snprintf(more + k, sizeof more - k,
			    "; stamps with the TSC, %.6f GHz",
			    4294967296.0 / (double)c->tsc_cal.mult);
		/* Through the local door: no kernel stamps in its clock's
		 * exchanges (doc/protocol.md 1.1). */
		if (k < sizeof more && peer_is_local(c->p))
			k += (size_t)snprintf(more + k, sizeof more - k,
			    "; through the local door");
		if (k < sizeof more && c->clk.rates + c->clk.steps > 0)
			(void)snprintf(more + k, sizeof more - k, "; its clock "
			    "changed rate %u times, stepped %u times (last "
			    "%+lld ns)", c->clk.rates, c->clk.steps,
			    (long long)c->clk.step);
		state_text(nd, c, now, state, sizeof state);
		n += (size_t)snprintf(text + n, cap - n, "node %u %s: lm pid "
		    "%u%s, %s, clock offset %lld ns, drift %lld ppb, error "
		    "%llu ns (best round trip %llu ns, %u of %u samples; "
		    "model %u, bound now %llu ns%s), %llu "
		    "of the host's late, %llu records%s\n", nd->id, nd->host,
		    c->lm_pid, c->has_st && c->st.adopted ? " (adopted a dead "
		    "LM's segment)" : "", state,
		    (long long)mm_sync_offset(md, now),
		    (long long)mm_sync_drift_ppb(md),
		    (unsigned long long)md->err,
		    (unsigned long long)md->best_rtt,
		    md->used, c->clk.n, u != NULL ? u->num : 0,
		    (unsigned long long)mm_sync_bound(md, now), more,
		    (unsigned long long)nd->late,
		    (unsigned long long)c->records,
		    c->glob == MM_GL_STOPPED ? "; its processes are stopped" :
		    "");
		if (c->has_st && n < cap)
			n += st_text(&c->st, c->st_cpus, "", text + n,
			    cap - n);
	}
	for (nd = mm->nodes; nd != NULL && n < cap; nd = nd->next) {
		if (nd->state != MM_NODE_GIVENUP || lm_of(mm, nd) != NULL)
			continue;
		state_text(nd, NULL, now, state, sizeof state);
		n += (size_t)snprintf(text + n, cap - n, "node %u %s: %s; lm "
		    "pid %u (%s) gone; %llu of the host's records late\n",
		    nd->id, nd->host, state, nd->lm_pid, nd->addr,
		    (unsigned long long)nd->late);
		if (nd->has_st && n < cap)
			n += st_text(&nd->st, nd->st_cpus, "last status: ",
			    text + n, cap - n);
	}
	return n < cap ? n : cap;
}

/* The bytes its LM's last status held: chunks in use, and spilled. */
static uint64_t
held_bytes(const struct mm_node *n)
{
	const struct wire_status *st = &n->st;

	if (!n->has_st || st->chunks == 0)
		return 0;
	return st->seg_size / st->chunks * st->used;
}

void
mm_live_missing(struct mm *mm, char *text, size_t cap)
{
	const struct mm_node *n;
	uint64_t now = clk_mono_ns();
	size_t k = 0;

	text[0] = '\0';
	for (n = mm->nodes; n != NULL; n = n->next) {
		if (n->state != MM_NODE_GIVENUP || lm_of(mm, n) != NULL)
			continue;
		if (mm->out != NULL && tape_missing(mm->out, n->id, now,
		    held_bytes(n), n->has_st ? n->st.spilled : 0,
		    n->has_st) != 0)
			log_warn("%s: cannot write", mm->out_path);
		if (n->has_st)
			log_warn("host %s (node %u) missing at stop: its LM "
			    "(pid %u) %s %.1f s before; its last status held "
			    "%llu bytes in %llu chunks and %llu spilled",
			    n->host, n->id, n->lm_pid, n->gone_why,
			    secs(now - n->gone_at),
			    (unsigned long long)held_bytes(n),
			    (unsigned long long)n->st.used,
			    (unsigned long long)n->st.spilled);
		else
			log_warn("host %s (node %u) missing at stop: its LM "
			    "(pid %u) %s %.1f s before; no status known",
			    n->host, n->id, n->lm_pid, n->gone_why,
			    secs(now - n->gone_at));
		if (k >= cap)
			continue;
		if (n->has_st)
			k += (size_t)snprintf(text + k, cap - k, "; missing "
			    "host %s (LM %s %.1f s before stop): its last "
			    "status held %llu bytes in %llu chunks, %llu "
			    "spilled", n->host, n->gone_why,
			    secs(now - n->gone_at),
			    (unsigned long long)held_bytes(n),
			    (unsigned long long)n->st.used,
			    (unsigned long long)n->st.spilled);
		else
			k += (size_t)snprintf(text + k, cap - k, "; missing "
			    "host %s (LM %s %.1f s before stop): no status "
			    "known", n->host, n->gone_why,
			    secs(now - n->gone_at));
	}
}

int
mm_live_late(struct mm *mm)
{
	const struct mm_node *n;

	for (n = mm->nodes; n != NULL; n = n->next)
		if (n->late > 0 && tape_late(mm->out, n->id, n->late) != 0)
			return -1;
	return 0;
}
