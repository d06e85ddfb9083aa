/* SPDX-License-Identifier: MIT */
/* mm_peer.c: the Main Monitor's connections: one state each, every
 * message checked against the rule table, then the dispatcher of its
 * role: LMs (hello, clock ping-pong, data, collections) and control
 * clients (commands); rounds are mm_round.c's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/util.h>

#include "mm.h"
#include "net/auth.h"
#include "net/loop.h"
#include "net/peer.h"
#include "net/wire.h"
#include "rec/dense.h"
#include "tape.h"
#include "util/clock.h"
#include "util/log.h"

#define MM_PINGS_FIRST		16	/* exchanges at connect */
#define MM_PINGS		4	/* in each later burst */
/* Before a batch is converted (sample_soon): the best of them is the
 * sample after its records, whose width the batch's bound covers. */
#define MM_PINGS_SOON		4
/* A refitted clock model is written (#SYNC) at most this often, and at
 * the end. */
#define MM_SYNC_WRITE_NS	10000000000u
/* Most memory an LM's data may take before its DONE (records decoded,
 * the runs they came in, their stretches): more than the largest segment
 * (GRM_SEGSIZE at most 512M, common/util/env.c) takes, so that a host's
 * collection is never refused and sent again in a loop. */
#define MM_BATCH_MAX		((uint64_t)2 << 30)

static void conn_dispatch(struct peer *p, uint16_t type, struct wire_rd *msg,
			  const char *why, void *arg);
static int auth_dispatch(struct mm *mm, struct mm_conn *c, uint16_t type,
			 struct wire_rd *msg);
static int lm_dispatch(struct mm *mm, struct mm_conn *c, uint16_t type,
		       struct wire_rd *msg);
static int ctl_dispatch(struct mm *mm, struct mm_conn *c, uint16_t type,
			struct wire_rd *msg);
static int fire_dispatch(struct mm *mm, struct mm_conn *c, uint16_t type,
			 struct wire_rd *msg);
static int release_batch(struct mm *mm, struct mm_conn *c);

void
mm_accept(struct mm *mm, int fd, const char *addr)
{
	struct mm_conn *c;

	if (mm_auth_admit(mm, addr) != 0 ||
	    (c = calloc(1, sizeof *c)) == NULL) {
		evutil_closesocket(fd);
		return;
	}
	c->mm = mm;
	c->on_msg = auth_dispatch;
	c->batch_tail = &c->batch;
	c->acks_tail = &c->acks;
	snprintf(c->addr, sizeof c->addr, "%s", addr);
	c->p = peer_new(mm->base, fd, conn_dispatch, c, addr);
	if (c->p == NULL) {
		evutil_closesocket(fd);
		free(c);
		return;
	}
	c->next = mm->conns;
	mm->conns = c;
	if (mm_auth_start(c) != 0)
		mm_conn_free(c);
}

static struct mm_node *
node_for(struct mm *mm, const char *host)
{
	struct mm_node *n;

	for (n = mm->nodes; n != NULL; n = n->next)
		if (strcmp(n->host, host) == 0)
			return n;
	n = calloc(1, sizeof *n);
	if (n == NULL)
		return NULL;
	n->id = ++mm->next_node;
	snprintf(n->host, sizeof n->host, "%s", host);
	mm_node_init_defs(mm, n);
	n->next = mm->nodes;
	mm->nodes = n;
	return n;
}

void
mm_send_u32s(struct mm_conn *c, uint16_t type, uint32_t a, uint32_t b, int n)
{
	unsigned char buf[8];
	struct wire_wr w;

	wire_wr_init(&w, buf, sizeof buf);
	wire_put_u32(&w, a);
	if (n > 1)
		wire_put_u32(&w, b);
	peer_send(c->p, type, buf, w.len, NULL, 0);
}

void
mm_send_ping(struct mm_conn *c)
{
	/* The clock read as late as can be: just before the send. */
	(void)peer_send_clock(c->p, WIRE_PING, NULL, 0, &c->last_ping);
}

static void
start_burst(struct mm_conn *c, int n)
{
	c->burst = n;
	c->burst_best.rtt = UINT64_MAX;
	c->xprev = 0;
	mm_send_ping(c);
}

/* A clock sample as soon as can be: MM_PINGS_SOON exchanges now (each
 * but the last gets the LM's kernel departure time of its answer from
 * the next), or the burst under way ends after as many. */
static void
sample_soon(struct mm_conn *c)
{
	if (c->burst == 0)
		start_burst(c, MM_PINGS_SOON);
	else if (c->burst > MM_PINGS_SOON)
		c->burst = MM_PINGS_SOON;
}

void
mm_send_collect(struct mm_conn *c, uint32_t round, uint32_t flags)
{
	if (c->state != MM_CONN_READY ||
	    c->nheld == (int)(sizeof c->held / sizeof c->held[0])) {
		mm_send_u32s(c, WIRE_COLLECT, round, flags, 2);
		return;
	}
	c->held[c->nheld][0] = round;
	c->held[c->nheld][1] = flags;
	c->nheld++;
	sample_soon(c);
}

/* The COLLECTs held for the burst just answered. */
static void
send_held(struct mm_conn *c)
{
	int i;

	for (i = 0; i < c->nheld; i++)
		mm_send_u32s(c, WIRE_COLLECT, c->held[i][0], c->held[i][1], 2);
	c->nheld = 0;
}

static void
sync_due(void *arg)
{
	struct mm_conn *c = arg;

	if (c->burst == 0)
		start_burst(c, MM_PINGS);
}

/* c's model, number u->num, as a #SYNC line of w. */
int
mm_sync_line(struct tape_w *w, const struct mm_conn *c,
	     const struct mm_sync_used *u)
{
	const struct mm_sync_model *md = &u->md;

	return tape_sync(w, &(struct tape_sync){ c->node->id, md->m0,
	    md->off0, mm_sync_drift_ppb(md), md->err, md->best_rtt, md->used,
	    u->num, u->from, md->lo, md->hi, md->allow_ppb });
}

/*
 * Publishes c's clock model if it changed: from then on it converts the
 * node's records (those after the latest converted) and it is written
 * (#SYNC).  At most every MM_SYNC_WRITE_NS, unless forced (before a
 * batch is converted, after a change) or, while the published model
 * spans less than MM_SYNC_DRIFT_SPAN, unless its bound has grown
 * (extrapolated) past 4/3 of the new one's: at the start, every sample
 * is published.
 */
void
mm_write_sync(struct mm *mm, struct mm_conn *c, int force)
{
	struct mm_sync_model pub = c->clk.model, *md = &pub;
	const struct mm_sync_used *cur = mm_sync_current(&c->book);
	struct mm_node *n = c->node;
	uint64_t now = clk_mono_ns();

	if (c->state != MM_CONN_READY || !c->clk.valid)
		return;
	/* The records it will convert lie before its newest sample: its
	 * bound covers that sample, line or not. */
	pub.err = mm_sync_err_last(&c->clk, md);
	if (cur != NULL && md->m0 == cur->md.m0 && md->off0 == cur->md.off0 &&
	    md->drift == cur->md.drift && md->err == cur->md.err &&
	    md->lo == cur->md.lo && md->hi == cur->md.hi)
		return;
	/* Past the start, records are converted when a batch comes, and
	 * the sample before it forces a model out (mm_on_pong): the others
	 * wait for the next or for MM_SYNC_WRITE_NS. */
	if (!force && cur != NULL &&
	    now - c->sync_written < MM_SYNC_WRITE_NS &&
	    (cur->md.hi - cur->md.lo >= MM_SYNC_DRIFT_SPAN ||
	    mm_sync_bound(md, now) / 3 * 4 >= mm_sync_bound(&cur->md, now)))
		return;
	if (mm_sync_publish(&c->book, md, n->sync_num + 1,
	    c->step_from > n->sync_high ? c->step_from : n->sync_high + 1)
	    != 0) {
		log_warn("out of memory: the clock model of %s not updated",
		    n->host);
		return;
	}
	n->sync_num++;
	/* The causality check tells violations beyond the bounds. */
	if (mm_causal_model(mm, n->id, mm_sync_current(&c->book)) != 0)
		log_warn("out of memory: causality of %s not told from "
		    "its clock bound", n->host);
	c->sync_written = now;
	c->step_from = 0;
	if (mm->out != NULL && mm_sync_line(mm->out, c,
	    mm_sync_current(&c->book)) != 0)
		log_warn("%s: cannot write", mm->out_path);
}

/* Host time h of c on mainmon's clock, by the model that converts it. */
uint64_t
mm_conv(struct mm_conn *c, uint64_t h)
{
	return mm_sync_conv(&c->book, &c->clk.model, mm_host_ns(c, h), NULL);
}

void
mm_ctl_reply(struct mm_conn *ctl, int status, const char *text)
{
	unsigned char buf[WIRE_TEXT_MAX + 16];
	struct wire_wr w;

	if (ctl == NULL)
		return;
	wire_wr_init(&w, buf, sizeof buf);
	wire_put_u32(&w, (uint32_t)status);
	wire_put_text(&w, text);
	peer_send(ctl->p, WIRE_CTL_REPLY, buf, w.len, NULL, 0);
}

static int
mm_on_ctl(struct mm *mm, struct mm_conn *c, struct wire_rd *msg)
{
	char cmd[WIRE_STR_MAX + 1];

	wire_get_str(msg, cmd, sizeof cmd);
	if (!wire_rd_end(msg))
		return -1;
	mm_command(mm, c, cmd);
	return 0;
}

int
mm_welcome(struct mm *mm, struct mm_conn *c, const struct wire_hello *h,
	   const unsigned char proof[WIRE_PROOF])
{
	unsigned char buf[4 + WIRE_PROOF];
	struct wire_wr w;

	c->lm_pid = h->pid;
	c->seg_id = h->seg_id;
	if (h->role == WIRE_ROLE_CTL) {
		c->state = MM_CONN_CTL;
		c->on_msg = ctl_dispatch;
	} else if (h->role == WIRE_ROLE_FIRE) {
		/* An LM's fire link: known by its host and LM pid, the host
		 * of an LM connected before it. */
		c->state = MM_CONN_FIRE;
		c->on_msg = fire_dispatch;
		for (c->node = mm->nodes; c->node != NULL &&
		    strcmp(c->node->host, h->host) != 0; c->node =
		    c->node->next)
			;
		if (c->node == NULL)
			return -1;
	} else {
		c->state = MM_CONN_SYNC;
		c->on_msg = lm_dispatch;
		c->node = node_for(mm, h->host);
		if (c->node == NULL)
			return -1;
		c->node->lm_pid = c->lm_pid;
		snprintf(c->node->addr, sizeof c->node->addr, "%s", c->addr);
	}
	wire_wr_init(&w, buf, sizeof buf);
	wire_put_u32(&w, c->node != NULL ? c->node->id : 0);
	wire_put_bytes(&w, proof, WIRE_PROOF);
	peer_send(c->p, WIRE_WELCOME, buf, w.len, NULL, 0);
	if (c->state == MM_CONN_FIRE && peer_fd(c->p) >= 0) {
		c->boost_fd = peer_fd(c->p) + 1;
		mm_boost_watch(mm, c->boost_fd - 1, 1);
	}
	if (c->state == MM_CONN_CTL || c->state == MM_CONN_FIRE)
		return 0;
	c->sync_ev = loop_timer(mm->base, sync_due, c);
	if (c->sync_ev == NULL ||
	    peer_set_liveness(c->p, mm->silent_secs) != 0)
		return -1;
	start_burst(c, MM_PINGS_FIRST);
	log_debug("LM %u on %s connected from %s as node %u", c->lm_pid,
	    h->host, c->addr, c->node->id);
	return 0;
}

/* When c's next burst is due: every MM_SYNC_START_NS until its samples
 * span enough for a drift (the model until then knows none, and its bound
 * grows by the largest drift believed), then every -s. */
static uint64_t
next_burst(const struct mm *mm, const struct mm_conn *c)
{
	const struct mm_sync_model *md = &c->clk.model;

	if (md->hi - md->lo < MM_SYNC_DRIFT_SPAN &&
	    mm->sync_ns > MM_SYNC_START_NS)
		return MM_SYNC_START_NS;
	return mm->sync_ns;
}

/*
 * c's clock is not the line its samples drew: the window started again
 * (mm_sync_add).  A step (a paused machine, a clock set) is logged and
 * marked in the trace (#CLOCKSTEP): the records the host stamped before
 * the last sample before it keep the model before (step_from).
 */
static void
clock_changed(struct mm *mm, struct mm_conn *c, enum mm_sync_change what)
{
	const struct mm_sync *cs = &c->clk;

	if (what == MM_SYNC_RATE) {
		log_info("the clock of %s changed its rate: refitted",
		    c->node->host);
		return;
	}
	c->step_from = mm_sync_to_mm(&cs->model, cs->step_lo) + 1;
	mm_causal_step(mm, c->node->id, c->clk.model.hi, cs->step,
	    cs->step_lo, cs->step_hi);
	if (mm->out != NULL && tape_clockstep(mm->out, c->node->id,
	    c->clk.model.hi, cs->step, cs->step_lo, cs->step_hi) != 0)
		log_warn("%s: cannot write", mm->out_path);
	log_warn("the clock of %s stepped by %+lld ns between its times "
	    "%llu and %llu (a paused machine, or a clock set): refitted",
	    c->node->host, (long long)cs->step,
	    (unsigned long long)cs->step_lo, (unsigned long long)cs->step_hi);
}

static int
mm_on_pong(struct mm *mm, struct mm_conn *c, struct wire_rd *msg)
{
	/* As early as can be: when the answer arrived, by the kernel
	 * (when the bytes were read, without its stamp). */
	uint64_t t1, t2, t3, t4 = peer_rx_time(c->p), pmm, ptx, k1, age;
	struct mm_sync_sample smp;
	enum mm_sync_change what;

	t1 = wire_get_u64(msg);
	t2 = wire_get_u64(msg);	/* by the kernel: CLOCK_MONOTONIC ns */
	pmm = wire_get_u64(msg);
	ptx = wire_get_u64(msg);	/* CLOCK_MONOTONIC ns, or 0 */
	t3 = mm_host_ns(c, wire_get_u64(msg));
	/* The answer to a lone heartbeat (mm_live.c), sent before any ping
	 * of a burst still out: only its arrival counts. */
	if (c->beats > 0) {
		c->beats--;
		return 0;
	}
	if (c->burst == 0 || t4 < t1)
		return -1;
	/* The previous exchange again, with the time its answer left the
	 * LM by the LM's kernel (t3 later, the hold longer: narrower).  */
	if (c->xprev && pmm == c->xprev_mm && ptx != 0 &&
	    mm_sync_sample_of(c->xprev_t1, c->xprev_t2, ptx, c->xprev_t4,
	    &smp) == 0 && smp.rtt < c->burst_best.rtt)
		c->burst_best = smp;
	/* The ping's departure by this kernel, if it gave one: after the
	 * clock read it carries, before the answer came. */
	c->xprev_mm = t1;
	if (t1 == c->last_ping && (k1 = peer_tx_time(c->p, &age)) != 0 &&
	    k1 >= t1 && k1 <= t4)
		t1 = k1;
	if (mm_sync_sample_of(t1, t2, t3, t4, &smp) != 0)
		return -1;
	c->xprev = 1;
	c->xprev_t1 = t1;
	c->xprev_t2 = t2;
	c->xprev_t4 = t4;
	/* Of a burst, the exchange with the smallest round trip: its
	 * midpoint is the best estimate of when the LM read its clock. */
	if (smp.rtt < c->burst_best.rtt)
		c->burst_best = smp;
	if (--c->burst > 0) {
		mm_send_ping(c);
		return 0;
	}
	what = mm_sync_add(&c->clk, &c->burst_best);
	if (what != MM_SYNC_SAME)
		clock_changed(mm, c, what);
	(void)loop_arm(c->sync_ev, next_burst(mm, c));
	if (c->state == MM_CONN_READY) {
		/* Out now if records are to be converted by it. */
		mm_write_sync(mm, c, what != MM_SYNC_SAME || c->nheld > 0 ||
		    c->hb_on);
		send_held(c);
		return release_batch(mm, c);
	}
	c->state = MM_CONN_READY;
	c->ready_at = clk_mono_ns();
	if (mm->out == NULL)
		return -1;	/* stopped: nothing more is written */
	if (tape_host(mm->out, c->node->id, c->clk.model.off0, c->lm_pid,
	    c->node->host) != 0 || mm_tsc_line(mm->out, c) != 0)
		log_warn("%s: cannot write", mm->out_path);
	mm_write_sync(mm, c, 1);
	mm_send_u32s(c, WIRE_READY, mm->global ? WIRE_READY_GLOBAL : 0, 0, 1);
	mm_live_returned(mm, c);
	mm_send_control(mm, c, 0);
	mm_plan_send(mm, c);
	mm_round_ready(mm, c);
	return 0;
}

static int
mm_on_data(struct mm_conn *c, struct wire_rd *msg)
{
	struct mm *mm = c->mm;
	static struct rec_dense_seg segs[REC_DENSE_MAX(WIRE_CHUNK_MAX) / 64 +
	    1];
	struct rec_dense_info info;
	struct mm_piece *pc;
	uint32_t pid, tid, session, off;
	uint64_t seq;
	size_t len, dlen, nseg, held;
	int seg;
	ssize_t n;
	int canon;

	pid = wire_get_u32(msg);
	tid = wire_get_u32(msg);
	seq = wire_get_u64(msg);
	session = wire_get_u32(msg);
	off = wire_get_u32(msg);
	/* The records come dense (doc/protocol.md, DATA): checked here,
	 * and kept as they came after the room they take decoded; admit
	 * (mm_out.c) decodes them once the batch is taken, converting their
	 * times in the same pass where it can.  A binary file's D frames
	 * are made from the run as it came. */
	dlen = wire_rd_left(msg);
	if (dlen > REC_DENSE_MAX(WIRE_CHUNK_MAX))
		return -1;
	n = rec_dense_scan_st(msg->p + msg->off, dlen, &canon, &info, segs,
	    (uint32_t)(dlen / 64 + 1));
	len = (size_t)n;
	if (n <= 0 || off > WIRE_CHUNK_MAX || len > WIRE_CHUNK_MAX - off)
		return -1;
	/* Its stretches of one kind of record noted if they are long
	 * enough to save walking them (8 records on average).  The batch
	 * holds it all until admit: the records, the run, the offsets. */
	seg = (size_t)info.nseg * 8 <= info.nrec;
	nseg = seg ? info.nseg : 0;
	held = len + dlen + (4 + sizeof *segs) * nseg;
	if (c->batch_bytes + held > MM_BATCH_MAX ||
	    (pc = malloc(sizeof *pc + held + 24)) == NULL)
		return -1;
	/* The run first, then the stretches (mm_piece_place).  (A stretch
	 * begins after the first record: none fewer than 8 bytes of run, so
	 * that segs held them all.) */
	memcpy(pc->data, msg->p + msg->off, dlen);
	pc->undec = 1;
	pc->lazy = 0;
	pc->rlen = (uint32_t)dlen;
	pc->info = info;
	(void)mm_piece_place(pc, seg, seg && nseg > 0,
	    mm->fmt == TAPE_FMT_BIN);
	if (pc->st != NULL)
		memcpy((void *)(uintptr_t)pc->st, segs, nseg * sizeof *segs);
	pc->dlen = mm->fmt == TAPE_FMT_BIN ? (uint32_t)dlen : 0;
	pc->dpos = REC_DENSE_BASE;
	pc->dmark = 0;
	pc->canon = (uint8_t)canon;
	pc->nbrk = 0;
	pc->pid = pid;
	pc->tid = tid;
	pc->session = session;
	pc->len = (uint32_t)len;
	pc->seq = seq;
	pc->off = off;
	pc->seg_id = c->seg_id;
	pc->next = NULL;
	*c->batch_tail = pc;
	c->batch_tail = &pc->next;
	c->batch_bytes += held;
	return 0;
}

static void
batch_free(struct mm_conn *c)
{
	struct mm_piece *pc, *pn;

	for (pc = c->batch; pc != NULL; pc = pn) {
		pn = pc->next;
		free(pc);
	}
	c->batch = NULL;
	c->batch_tail = &c->batch;
	c->batch_bytes = 0;
}

/* Writes the batch c holds, of round (its DONE said below). */
static int
batch_done(struct mm *mm, struct mm_conn *c, uint32_t round, uint64_t below)
{
	struct mm_coll *co;

	/* Acknowledged once written to the file (it survives mainmon; a
	 * snapshot, when complete, also flushes it to disk), in time order
	 * with the other LMs' (mm_order.c): the LM then consumes it.  Not
	 * written: not acknowledged, so the LM keeps it, for this
	 * mainmon's successor. */
	if (mm->out == NULL) {
		batch_free(c);
		mm_send_u32s(c, WIRE_ACK, round, 0, 1);
	} else if (mm_out_batch(mm, c, round, below) != 0) {
		/* Not acknowledged, and nothing later may be: the LM takes
		 * the connection's end as "send it all again". */
		mm->exit_code = 1;
		log_warn("%s: cannot write: data of %s left with its LM",
		    mm->out_path, c->node->host);
		return -1;
	}
	if (round == WIRE_ROUND_PUSH)
		return 0;
	for (co = mm->colls; co != NULL; co = co->next)
		if (co->round == round && co->what != MM_CONTROL &&
		    co->what != MM_PLAN) {
			mm_coll_drop(mm, co, c);
			break;
		}
	return 0;
}

/* The pushed batch held for a clock sample (hold_batch), written: in
 * place of c's batch, which may hold pieces of the next already. */
static int
release_batch(struct mm *mm, struct mm_conn *c)
{
	struct mm_piece *b = c->batch, **bt = c->batch_tail;
	uint64_t bb = c->batch_bytes;
	int r;

	if (!c->hb_on)
		return 0;
	c->hb_on = 0;
	c->batch = c->hb;
	c->batch_tail = c->hb == NULL ? &c->batch : c->hb_tail;
	c->batch_bytes = c->hb_bytes;
	r = batch_done(mm, c, c->hb_round, c->hb_below);
	c->batch = b;
	c->batch_tail = b == NULL ? &c->batch : bt;
	c->batch_bytes = bb;
	return r;
}

/*
 * A batch the LM pushed of itself came without a clock sample after its
 * records (a COLLECT has one, mm_send_collect): it is held, and a sample
 * asked for, so that the model converting it spans its records instead
 * of extrapolating to them.  Its answer releases it (mm_on_pong).
 */
static void
hold_batch(struct mm_conn *c, uint32_t round, uint64_t below)
{
	c->hb = c->batch;
	c->hb_tail = c->batch_tail;
	c->hb_bytes = c->batch_bytes;
	c->hb_round = round;
	c->hb_below = below;
	c->hb_on = 1;
	c->batch = NULL;
	c->batch_tail = &c->batch;
	c->batch_bytes = 0;
	sample_soon(c);
}

static int
mm_on_done(struct mm *mm, struct mm_conn *c, struct wire_rd *msg)
{
	uint32_t round;
	uint64_t below;

	round = wire_get_u32(msg);
	(void)wire_get_u64(msg);
	below = wire_get_u64(msg);
	if (below > WIRE_BELOW_REPLAY) {
		if (c->order == MM_ORD_OUT)
			mm_live_returned(mm, c);
		c->order = MM_ORD_FOLLOW;
	}
	c->last_done = clk_mono_ns();
	/* In order: one held before is written first. */
	if (release_batch(mm, c) != 0)
		return -1;
	if (round == WIRE_ROUND_PUSH && mm->out != NULL &&
	    c->state == MM_CONN_READY && c->batch != NULL) {
		hold_batch(c, round, below);
		return 0;
	}
	return batch_done(mm, c, round, below);
}

void
mm_control_ack(struct mm *mm, struct mm_conn *c, uint32_t round, uint64_t t)
{
	struct mm_coll *co;

	/* When the LM applied it, in MM time: the acknowledgement may have
	 * waited behind a collection's data. */
	t = mm_conv(c, t);
	for (co = mm->colls; co != NULL && round != 0; co = co->next)
		if (co->round == round && (co->what == MM_CONTROL ||
		    co->what == MM_PLAN)) {
			if (t > co->t_applied)
				co->t_applied = t;
			mm_coll_drop(mm, co, c);
			break;
		}
}

static int
mm_on_control_ack(struct mm *mm, struct mm_conn *c, struct wire_rd *msg)
{
	uint32_t round;
	uint64_t t;

	round = wire_get_u32(msg);
	t = wire_get_u64(msg);
	/* Those taken during long work first: rounds end in order. */
	mm_plan_acks(mm);
	mm_control_ack(mm, c, round, t);
	return 0;
}

static int
mm_on_status_reply(struct mm *mm, struct mm_conn *c, struct wire_rd *msg)
{
	struct wire_status st;
	uint64_t *v = (uint64_t *)&st;
	struct mm_coll *co;
	uint32_t round;
	size_t i;

	char cpus[WIRE_CPUS_MAX];

	round = wire_get_u32(msg);
	for (i = 0; i < WIRE_STATUS_FIELDS; i++)
		v[i] = wire_get_u64(msg);
	wire_get_str(msg, cpus, sizeof cpus);
	if (!wire_rd_end(msg))
		return -1;
	snprintf(c->st_cpus, sizeof c->st_cpus, "%s", cpus);
	snprintf(c->node->st_cpus, sizeof c->node->st_cpus, "%s", cpus);
	c->st = st;
	c->has_st = 1;
	c->node->st = st;
	c->node->has_st = 1;
	for (co = mm->colls; co != NULL; co = co->next)
		if (co->round == round && co->what == MM_STATUS) {
			mm_coll_drop(mm, co, c);
			break;
		}
	return 0;
}

/* Logs why c is closed: its address, who it is, the reason. */
static void
conn_refuse(struct mm_conn *c, const char *why)
{
	if (MM_IS_LM(c))
		log_warn("%s (LM %u on %s): closing connection: bad or "
		    "unexpected message: %s", c->addr, c->lm_pid,
		    c->node->host, why);
	else if (c->state == MM_CONN_NEW)
		mm_auth_bad(c, why);	/* limited per address */
	else
		log_warn("%s%s: closing connection: bad or unexpected "
		    "message: %s", c->addr, c->state == MM_CONN_CTL ?
		    " (control client)" : "", why);
}

/* Before authentication: the handshake (mm_auth.c), which may free c. */
static int
auth_dispatch(struct mm *mm, struct mm_conn *c, uint16_t type,
	      struct wire_rd *msg)
{
	mm_auth_msg(mm, c, type, msg);
	return 1;
}

/* WIRE_TSC: the host's clock is the TSC; its calibration.  Before any
 * exchange only: the samples would mix units. */
static int
mm_on_tsc(struct mm_conn *c, struct wire_rd *msg)
{
	struct tsc_cal k;

	k.tick0 = wire_get_u64(msg);
	k.ns0 = wire_get_u64(msg);
	k.mult = wire_get_u64(msg);
	k.err_ns = wire_get_u64(msg);
	k.span_ns = wire_get_u64(msg);
	k.rate_ppb = wire_get_u64(msg);
	if (c->tsc || c->clk.n > 0 || c->burst_best.rtt != UINT64_MAX ||
	    k.mult == 0)
		return -1;
	c->tsc_cal = k;
	c->tsc = 1;
	log_info("LM %u on %s: clock TSC, %.6f ticks per ns", c->lm_pid,
	    c->node->host, 4294967296.0 / (double)k.mult);
	return 0;
}

int
mm_tsc_line(struct tape_w *w, const struct mm_conn *c)
{
	const struct tsc_cal *k = &c->tsc_cal;

	if (!c->tsc)
		return 0;
	return tape_tsc(w, &(struct tape_tsc){ c->node->id, k->tick0, k->ns0,
	    k->mult, k->err_ns, k->span_ns, k->rate_ppb });
}

/* An LM's messages, each checked against its rule for the state. */
static int
lm_dispatch(struct mm *mm, struct mm_conn *c, uint16_t type,
	    struct wire_rd *msg)
{
	switch (type) {
	case WIRE_PONG:
		return mm_on_pong(mm, c, msg);
	case WIRE_TSC:
		return mm_on_tsc(c, msg);
	case WIRE_DATA:
		c->last_data = peer_last_rx(c->p);
		/* Many in one read: firings do not wait for them all. */
		mm_plan_poll(mm);
		return mm_on_data(c, msg);
	case WIRE_PROC:
		return mm->out != NULL ? mm_out_proc(mm, c, msg) : -1;
	case WIRE_DONE:
		c->last_data = peer_last_rx(c->p);
		return mm_on_done(mm, c, msg);
	case WIRE_BYE:
		c->said_bye = 1;
		mm_dedup_forget(mm, c->seg_id);
		return 0;
	case WIRE_SEGMENT:
		c->seg_id = wire_get_u64(msg);
		return 0;
	case WIRE_STATUS_REPLY:
		return mm_on_status_reply(mm, c, msg);
	case WIRE_CONTROL_ACK:
		return mm_on_control_ack(mm, c, msg);
	case WIRE_FIRE:
		return mm_plan_fire(mm, c, msg);
	case WIRE_FULL:
	case WIRE_PAUSED:
	case WIRE_RESUMED:
		return mm_global_msg(mm, c, type, msg);
	}
	return -1;
}

/* A control client's: one command line. */
static int
ctl_dispatch(struct mm *mm, struct mm_conn *c, uint16_t type,
	     struct wire_rd *msg)
{
	return type == WIRE_CTL ? mm_on_ctl(mm, c, msg) : -1;
}

/* An LM's fire link's: FIREs, and the CONTROL_ACKs of the CONTROLs its
 * firing thread applied (counted as its LM connection's). */
static int
fire_dispatch(struct mm *mm, struct mm_conn *c, uint16_t type,
	      struct wire_rd *msg)
{
	struct mm_conn *o;
	/* Whether this is the last message read from the link (before it
	 * is handled: an action may end the link, and c with it). */
	int last = peer_input_left(c->p) <= wire_rd_left(msg);
	int r;

	if (type == WIRE_FIRE) {
		r = mm_plan_fire(mm, c, msg);
		/* What it sent the LMs goes now, then the loop's turn ends
		 * (mm_boost.c). */
		mm_plan_flush(mm);
	} else if (type != WIRE_CONTROL_ACK)
		return -1;
	else if ((o = mm_fire_owner(mm, c)) == NULL)
		r = 0;	/* that LM is gone: nothing waits for it */
	else
		r = mm_on_control_ack(mm, o, msg);
	/* The link's last message read: the loop's raise ends (not after
	 * the first of several read together: the next would wait for the
	 * loop's ordinary turn). */
	if (last)
		mm_boost_done(mm);
	return r;
}

/* Logs why c ended: an LM's silence in one line (its host is given up,
 * mm_live.c), broken framing whoever the peer is; a plain close is an
 * LM's normal end. */
static void
conn_closed(struct mm_conn *c, const char *why)
{
	if (c->state == MM_CONN_NEW)
		mm_auth_closed(c, why);
	else if (MM_IS_LM(c) && peer_silent(c->p))
		log_warn("LM %u on %s (%s): %s: given up", c->lm_pid,
		    c->node->host, c->addr, why);
	else if (MM_IS_LM(c) && peer_broken(c->p))
		log_warn("%s: LM %u on %s: %s", c->addr, c->lm_pid,
		    c->node->host, why);
	else if (MM_IS_LM(c))
		log_debug("LM %u on %s: %s", c->lm_pid, c->node->host, why);
	else if (peer_broken(c->p))
		log_warn("%s: control client: %s", c->addr, why);
}

/* Who may send, in which state of the rule table (wire.h), for c; by 0
 * for a connection refused (what it sends then is not read). */
static void
conn_rule_state(const struct mm_conn *c, unsigned *by, unsigned *state)
{
	switch (c->state) {
	case MM_CONN_NEW:
		*by = mm_auth_peer(c);
		*state = WIRE_ST_AUTH;
		break;
	case MM_CONN_CTL:
		*by = WIRE_BY_CTL;
		*state = WIRE_ST_READY;
		break;
	case MM_CONN_FIRE:
		*by = WIRE_BY_FIRE;
		*state = WIRE_ST_READY;
		break;
	case MM_CONN_SYNC:
		*by = WIRE_BY_LM;
		*state = WIRE_ST_SYNC;
		break;
	case MM_CONN_READY:
		*by = WIRE_BY_LM;
		*state = WIRE_ST_READY;
		break;
	}
}

static void
conn_dispatch(struct peer *p, uint16_t type, struct wire_rd *msg,
	      const char *why, void *arg)
{
	struct mm_conn *c = arg;
	char bad[160];
	unsigned by = 0, state = 0;
	int r;

	(void)p;
	if (msg == NULL) {
		if (MM_IS_LM(c) && !mm_live_clean_end(c->mm, c)) {
			mm_live_gone(c->mm, c, peer_silent(c->p) ? why :
			    "closed");
			mm_coll_give_up(c->mm, c);
		}
		conn_closed(c, why);
		mm_conn_free(c);
		return;
	}
	/* Every message against its rule (wire.h) before its handler. */
	conn_rule_state(c, &by, &state);
	if (by == 0)
		return;
	if (wire_check(type, by, WIRE_BY_MM, state, wire_rd_left(msg), bad,
	    sizeof bad) != 0) {
		conn_refuse(c, bad);
		mm_conn_free(c);
		return;
	}
	if ((r = c->on_msg(c->mm, c, type, msg)) >= 0)
		return;
	snprintf(bad, sizeof bad, "%s (%u): a field out of range, or out of "
	    "place", wire_type_name(type), type);
	conn_refuse(c, bad);
	mm_conn_free(c);
}

void
mm_conn_free(struct mm_conn *c)
{
	struct mm *mm = c->mm;
	struct mm_conn **pp;
	struct mm_coll *co, *next;

	if (MM_IS_LM(c)) {
		/* A batch held for a clock sample that will not come: as
		 * the models stand. */
		if (c->hb_on && mm->out != NULL && release_batch(mm, c) != 0)
			mm->exit_code = 1;
		mm_write_sync(mm, c, 1);
		mm_global_conn_gone(mm, c);
	}
	for (pp = &mm->conns; *pp != NULL; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	if (c->boost_fd != 0)
		mm_boost_watch(mm, c->boost_fd - 1, 0);
	if (c->state == MM_CONN_FIRE && !mm->stopped)
		mm_fire_gone(mm, c);
	mm_order_conn_gone(c);
	loop_ev_free(c->sync_ev);
	for (co = mm->colls; co != NULL; co = next) {
		next = co->next;
		if (co->ctl == c)
			co->ctl = NULL;
		mm_coll_drop(mm, co, c);
	}
	if (mm->stop_wait != NULL && mm->stop_wait->ctl == c)
		mm->stop_wait->ctl = NULL;	/* the stop waits on */
	if (mm->stopped && mm->stop_ctl == c)
		loop_exit(mm->base);
	batch_free(c);
	mm_auth_free(c);
	mm_sync_book_free(&c->book);
	peer_free(c->p);
	free(c);
	/* Its watermark no longer holds the others back. */
	if (mm->out != NULL && !mm->stopped && mm_order_advance(mm, 0) != 0)
		mm->exit_code = 1;
}
