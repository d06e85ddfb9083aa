/* SPDX-License-Identifier: MIT */
/*
 * mm_global.c: the global collection scheme (GRM paper §3.1, mainmon
 * --collect=global) on mainmon's side.  A round (a snapshot, or an LM
 * reporting its threshold with FULL) first asks every LM to stop its
 * traced processes (PAUSE); once all answered (PAUSED) or the time limit
 * passed, it collects from every LM as any round does; once all of it is
 * written, every LM that stopped its processes is told to let them go
 * (RESUME) and answers when it did (RESUMED).  Each host's stop is in the
 * trace as a "collection begin" and a "collection end" record (process 0,
 * thread 0 of the node) at the times its LM measured, on mainmon's clock,
 * so that analyses can leave the collection out.  One global round runs
 * at a time; others wait their turn in mm->colls (MM_PH_WAIT).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mm.h"
#include "net/loop.h"
#include "net/peer.h"
#include "net/wire.h"
#include "util/clock.h"
#include "util/log.h"

static struct mm_coll *
find_round(struct mm *mm, uint32_t round)
{
	struct mm_coll *co;

	for (co = mm->colls; co != NULL; co = co->next)
		if (co->global && co->round == round)
			return co;
	return NULL;
}

int
mm_global_busy(const struct mm *mm)
{
	const struct mm_coll *co;

	for (co = mm->colls; co != NULL; co = co->next)
		if (co->global && co->phase != MM_PH_WAIT)
			return 1;
	return 0;
}

/*
 * Writes a collection begin or end record of c's host, at LM time t_lm
 * (0: now), with the values v[n].  Never before what is written already:
 * nothing of the host lies between its begin and its end, so a later
 * time says the same.
 */
static void
mark(struct mm *mm, struct mm_conn *c, int32_t eid, uint64_t t_lm,
     const uint64_t *v, unsigned n)
{
	const struct rec_predef *pd = &rec_predef[-eid - 1];
	size_t len = sizeof(struct rec_hdr) + 8 * (size_t)n;
	struct mm_piece *pc;
	struct mm_stream *st;
	uint64_t ts, now = clk_mono_ns();

	if (mm->out == NULL || mm->stopped)
		return;
	ts = t_lm != 0 ? mm_conv(c, t_lm) : now;
	if (ts > now)
		ts = now;
	if (ts < mm->order.out_ts)
		ts = mm->order.out_ts;
	if ((pc = calloc(1, sizeof *pc + len)) == NULL) {
		log_warn("out of memory: a collection %s of %s not written",
		    eid == REC_EID_COLL_BEGIN ? "begin" : "end",
		    c->node->host);
		return;
	}
	pc->len = (uint32_t)len;
	pc->rec = pc->data;
	pc->node = c->node;
	pc->seg_id = c->seg_id;
	if ((st = mm_order_stream(mm, pc)) == NULL) {
		free(pc);
		return;
	}
	/* The node's process 0 stream keeps its order too. */
	if (ts < st->last_ts)
		ts = st->last_ts;
	st->last_ts = ts;
	if (ts > c->node->sync_high)
		c->node->sync_high = ts;
	rec_put_hdr(pc->rec, len, pd->cls, pd->attr, eid, ts);
	memcpy(pc->rec + sizeof(struct rec_hdr), v, 8 * (size_t)n);
	mm_order_add(mm, st, pc);
	if (eid == REC_EID_COLL_BEGIN)
		c->paused_at = ts;
	else if (c->paused_at != 0 && ts >= c->paused_at) {
		mm->stop_ns_total += ts - c->paused_at;
		if (ts - c->paused_at > mm->stop_ns_max)
			mm->stop_ns_max = ts - c->paused_at;
		c->paused_at = 0;
	}
	if (mm_order_advance(mm, 0) != 0)
		mm->exit_code = 1;
}

static void
send_resume(struct mm_conn *c, uint32_t round)
{
	unsigned char buf[4];
	struct wire_wr w;

	wire_wr_init(&w, buf, sizeof buf);
	wire_put_u32(&w, round);
	peer_send(c->p, WIRE_RESUME, buf, w.len, NULL, 0);
}

/* FULL: c reached its threshold; a round collects it, now or next. */
static int
mm_on_full(struct mm *mm, struct mm_conn *c, struct wire_rd *msg)
{
	uint32_t nfree, chunks;

	nfree = wire_get_u32(msg);
	chunks = wire_get_u32(msg);
	if (nfree > chunks)
		return -1;
	if (!mm->global || mm->stopping)
		return 0;
	log_debug("LM %u on %s: %u of %u chunks free: global collection",
	    c->lm_pid, c->node->host, nfree, chunks);
	/* None comes while its processes are stopped (the LM sends none
	 * then); that round's collection takes its data anyway. */
	if (c->glob == MM_GL_RUNS)
		c->glob = MM_GL_WANTS;
	if (!mm_global_busy(mm))
		mm_round(mm, NULL, MM_SNAPSHOT, NULL);
	return 0;
}

static int
mm_on_paused(struct mm *mm, struct mm_conn *c, struct wire_rd *msg)
{
	struct mm_coll *co;
	struct mm_conn **np;
	uint64_t v[4], t;
	int i;

	v[0] = wire_get_u32(msg);	/* round */
	v[1] = wire_get_u32(msg);	/* stopped */
	v[2] = wire_get_u32(msg);	/* not stopped */
	t = wire_get_u64(msg);
	v[3] = wire_get_u64(msg);	/* ns taken */
	if (t == 0)
		return -1;
	if (c->glob != MM_GL_STOPPED)
		mark(mm, c, REC_EID_COLL_BEGIN, t, v, 4);
	c->glob = MM_GL_STOPPED;
	c->paused_round = (uint32_t)v[0];
	co = find_round(mm, (uint32_t)v[0]);
	if (co == NULL || co->phase == MM_PH_WAIT) {
		/* Its round is over (it answered too late): go on now. */
		send_resume(c, (uint32_t)v[0]);
		return 0;
	}
	for (i = 0; i < co->npaused; i++)
		if (co->paused[i] == c)
			return 0;
	np = realloc(co->paused, sizeof *np * (size_t)(co->npaused + 1));
	if (np == NULL) {
		send_resume(c, (uint32_t)v[0]);
		return 0;
	}
	co->paused = np;
	co->paused[co->npaused++] = c;
	co->stopped += v[1];
	if (co->phase == MM_PH_PAUSE)
		mm_coll_drop(mm, co, c);
	return 0;
}

static int
mm_on_resumed(struct mm *mm, struct mm_conn *c, struct wire_rd *msg)
{
	uint64_t v[3], t;

	v[0] = wire_get_u32(msg);	/* round */
	v[1] = wire_get_u32(msg);	/* let go */
	v[2] = wire_get_u32(msg);	/* why */
	t = wire_get_u64(msg);
	if (t == 0 || v[2] > REC_COLL_END_EXIT)
		return -1;
	if (c->glob != MM_GL_STOPPED)
		return 0;	/* no begin was written: no end either */
	if (v[2] == REC_COLL_END_DEADLINE)
		log_warn("LM %u on %s: collection %u: processes let go at the "
		    "LM's time limit (mainmon --pause-max)", c->lm_pid,
		    c->node->host, (unsigned)v[0]);
	mark(mm, c, REC_EID_COLL_END, t, v, 3);
	c->glob = MM_GL_RUNS;
	c->paused_round = 0;
	return 0;
}

int
mm_global_msg(struct mm *mm, struct mm_conn *c, uint16_t type,
	      struct wire_rd *msg)
{
	switch (type) {
	case WIRE_FULL:
		return mm_on_full(mm, c, msg);
	case WIRE_PAUSED:
		return mm_on_paused(mm, c, msg);
	case WIRE_RESUMED:
		return mm_on_resumed(mm, c, msg);
	}
	return -1;
}

/* The event loop's turn after a global round: the next one starts. */
static void
next_cb(void *arg)
{
	struct mm *mm = arg;
	struct mm_coll *co, *oldest;
	struct mm_conn *c;

	for (;;) {
		if (mm_global_busy(mm))
			return;
		/* Rounds are listed newest first. */
		for (oldest = NULL, co = mm->colls; co != NULL; co = co->next)
			if (co->global && co->phase == MM_PH_WAIT)
				oldest = co;
		if (oldest == NULL)
			break;
		/* Started (or, if mainmon is stopping, answered and
		 * freed: then the next is looked for). */
		mm_round_next(mm, oldest);
	}
	if (mm->stopping)
		return;
	for (c = mm->conns; c != NULL; c = c->next)
		if (MM_IS_LM(c) && c->glob == MM_GL_WANTS) {
			mm_round(mm, NULL, MM_SNAPSHOT, NULL);
			return;
		}
}

void
mm_global_done(struct mm *mm, struct mm_coll *co)
{
	int i;

	for (i = 0; i < co->npaused; i++)
		send_resume(co->paused[i], co->round);
	mm->global_rounds++;
	if (mm->global_ev == NULL &&
	    (mm->global_ev = loop_timer(mm->base, next_cb, mm)) == NULL) {
		log_warn("out of memory: the next global collection waits for "
		    "its LM's next report");
		return;
	}
	loop_soon(mm->global_ev);
}

void
mm_global_conn_gone(struct mm *mm, struct mm_conn *c)
{
	struct mm_coll *co;
	uint64_t v[3];
	int i;

	if (c->glob == MM_GL_STOPPED) {
		/* Its guard lets the processes go (or they died with the
		 * LM): the phase ends now, as far as anyone can tell. */
		v[0] = c->paused_round;
		v[1] = 0;
		v[2] = REC_COLL_END_LOST;
		mark(mm, c, REC_EID_COLL_END, 0, v, 3);
		c->glob = MM_GL_RUNS;
		c->paused_round = 0;
	}
	for (co = mm->colls; co != NULL; co = co->next)
		for (i = 0; i < co->npaused; i++)
			if (co->paused[i] == c) {
				co->paused[i] = co->paused[--co->npaused];
				break;
			}
}

void
mm_global_status(struct mm *mm, char *buf, size_t cap)
{
	if (!mm->global) {
		snprintf(buf, cap, "collection: local (each LM pushes at its "
		    "threshold; no process is stopped)\n");
		return;
	}
	snprintf(buf, cap, "collection: global (processes stopped for each "
	    "collection, at most %u ms): %llu rounds; stopped %.1f ms in "
	    "all, %.1f ms at most, per host\n", mm->pause_max_ms,
	    (unsigned long long)mm->global_rounds,
	    (double)mm->stop_ns_total / 1e6, (double)mm->stop_ns_max / 1e6);
}
