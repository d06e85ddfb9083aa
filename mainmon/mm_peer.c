/* SPDX-License-Identifier: MIT */
/* mm_peer.c: the Main Monitor's connections: LMs (hello, clock ping-pong,
 * data, collections) and control clients (snapshot, stop, status). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "mm.h"
#include "net/auth.h"
#include "net/peer.h"
#include "net/wire.h"
#include "tape.h"
#include "util/clock.h"
#include "util/log.h"

#define MM_PINGS_FIRST		16	/* exchanges at connect */
#define MM_PINGS		4	/* in each later burst */
/* A refitted clock model is written (#SYNC) at most this often, and at
 * the end. */
#define MM_SYNC_WRITE_NS	10000000000u
#define MM_COLLECT_TIMEOUT	60
/* Seconds a global round waits for the LMs to stop their processes. */
#define MM_PAUSE_TIMEOUT	5
/* Most data an LM may send before its DONE: more than a segment holds. */
#define MM_BATCH_MAX		((uint64_t)1 << 30)

static void conn_dispatch(struct peer *p, uint16_t type, struct wire_rd *msg,
			  const char *why, void *arg);

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

static void
send_u32s(struct mm_conn *c, uint16_t type, uint32_t a, uint32_t b, int n)
{
	unsigned char buf[8];
	struct wire_wr w;

	wire_wr_init(&w, buf, sizeof buf);
	wire_put_u32(&w, a);
	if (n > 1)
		wire_put_u32(&w, b);
	peer_send(c->p, type, buf, w.len, NULL, 0);
}

static void
send_ping(struct mm_conn *c)
{
	unsigned char buf[8];
	struct wire_wr w;

	wire_wr_init(&w, buf, sizeof buf);
	wire_put_u64(&w, clk_mono_ns());
	peer_send(c->p, WIRE_PING, buf, w.len, NULL, 0);
}

static void
start_burst(struct mm_conn *c, int n)
{
	c->burst = n;
	c->burst_best.rtt = UINT64_MAX;
	send_ping(c);
}

static void
sync_due(evutil_socket_t fd, short what, void *arg)
{
	struct mm_conn *c = arg;

	(void)fd;
	(void)what;
	if (c->burst == 0)
		start_burst(c, MM_PINGS);
}

/* Writes c's clock model (#SYNC) if it changed, at most every
 * MM_SYNC_WRITE_NS unless forced. */
void
mm_write_sync(struct mm *mm, struct mm_conn *c, int force)
{
	const struct mm_sync_model *md = &c->clk.model;
	const struct mm_sync_model *old = &c->model_written;
	uint64_t now = clk_mono_ns();

	if (mm->out == NULL || !c->synced || !c->clk.valid)
		return;
	if (md->m0 == old->m0 && md->off0 == old->off0 &&
	    md->drift == old->drift && md->err == old->err)
		return;
	if (!force && c->sync_written != 0 &&
	    now - c->sync_written < MM_SYNC_WRITE_NS)
		return;
	if (tape_sync(mm->out, c->node->id, md->m0, md->off0,
	    mm_sync_drift_ppb(md), md->err, md->best_rtt, md->used) != 0)
		log_warn("%s: cannot write", mm->out_path);
	c->model_written = *md;
	c->sync_written = now;
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

static void coll_start(struct mm *mm, struct mm_coll *co);

static void
exit_after_flush(struct peer *p, void *arg)
{
	struct mm_conn *c = arg;

	(void)p;
	event_base_loopexit(c->mm->base, NULL);
}

static void
coll_unlink(struct mm *mm, struct mm_coll *co)
{
	struct mm_coll **pp;

	for (pp = &mm->colls; *pp != NULL; pp = &(*pp)->next)
		if (*pp == co) {
			*pp = co->next;
			break;
		}
}

static void
coll_free(struct mm_coll *co)
{
	if (co->timeout != NULL)
		event_free(co->timeout);
	free(co->pending);
	free(co->paused);
	free(co);
}

static void
coll_complete(struct mm *mm, struct mm_coll *co, const char *failed)
{
	char text[768];
	uint64_t stopped_ns = 0;
	int r = 0;

	coll_unlink(mm, co);
	if (co->what == MM_CONTROL) {
		/* In effect when the last LM applied it (never before the
		 * request, whatever the clock estimates say). */
		uint64_t at = co->t_applied > co->t0 ? co->t_applied : co->t0;

		if (co->t_applied == 0)
			at = clk_mono_ns();
		snprintf(text, sizeof text, "%s: in effect%s%s at %llu "
		    "(%.1f ms after the request)", co->cmd,
		    failed ? " except on " : "", failed ? failed : "",
		    (unsigned long long)at, (double)(at - co->t0) / 1e6);
		r = mm->out != NULL ? mm_out_control(mm, at, co->cmd) : 0;
		goto answer;
	}
	if (co->what == MM_STATUS) {
		char *big = malloc(WIRE_TEXT_MAX + 1);

		if (big == NULL)
			mm_ctl_reply(co->ctl, 1, "out of memory");
		else {
			mm_status_text(mm, big, WIRE_TEXT_MAX + 1);
			mm_ctl_reply(co->ctl, 0, big);
			free(big);
		}
		r = 0;
		goto done;
	}
	mm->collections++;
	/* What the LMs had committed when asked is all here: written (and
	 * their own records, stamped with the scan's time). */
	if (mm->out != NULL) {
		uint64_t w = co->stop ? UINT64_MAX : mm_order_scanned(mm);

		r = mm_order_write(mm, w == UINT64_MAX ? w : w + 1);
	}
	/* Written (to the system): the processes go on while the file is
	 * synced. */
	if (co->global) {
		stopped_ns = clk_mono_ns() - co->t_paused;
		mm_global_done(mm, co);
	}
	if (co->stop && mm->out != NULL) {
		uint64_t n = tape_records(mm->out);
		struct mm_conn *c;

		for (c = mm->conns; c != NULL; c = c->next)
			if (c->role == MM_CONN_LM)
				mm_write_sync(mm, c, 1);
		if (r == 0)
			r = mm_order_summary(mm);
		if (r == 0)
			r = mm_stats_write(mm);
		if (tape_close(mm->out) != 0)
			r = -1;
		mm->out = NULL;
		snprintf(text, sizeof text, "stopped: %llu records in %s%s%s",
		    (unsigned long long)n, mm->out_path,
		    failed ? "; no answer from " : "", failed ? failed : "");
	} else if (mm->out == NULL) {
		r = -1;
		snprintf(text, sizeof text, "the trace file is closed");
	} else if (r == 0) {
		r = tape_collect(mm->out, co->round, clk_mono_ns());
		if (r == 0)
			r = tape_flush(mm->out);
		snprintf(text, sizeof text, "%s %u: %llu records in "
		    "%s%s%s", co->what == MM_PROBE ? "probe" : "snapshot",
		    co->round, (unsigned long long)tape_records(mm->out),
		    mm->out_path, failed ? "; no answer from " : "",
		    failed ? failed : "");
	}
	if (co->global)
		snprintf(text + strlen(text), sizeof text - strlen(text),
		    "; %llu processes stopped on %d hosts for %.1f ms%s%s",
		    (unsigned long long)co->stopped, co->npaused,
		    (double)stopped_ns / 1e6,
		    co->unpaused[0] ? "; not stopped on " : "", co->unpaused);
answer:
	if (r != 0 && mm->out != NULL) {
		snprintf(text, sizeof text, "cannot write %s", mm->out_path);
		mm->exit_code = 1;
	}
	if (co->what == MM_STATS && r == 0 && failed == NULL) {
		char *big = malloc(WIRE_TEXT_MAX + 1);

		if (big != NULL) {
			mm_stats_text(mm, big, WIRE_TEXT_MAX + 1);
			mm_ctl_reply(co->ctl, 0, big);
			free(big);
		} else
			mm_ctl_reply(co->ctl, 1, "out of memory");
	} else
		mm_ctl_reply(co->ctl, r != 0 || failed != NULL, text);
	if (co->stop) {
		/* Exit once the answer is out, or at once if nobody waits
		 * (mm_conn_free ends the loop if the requester goes). */
		mm->stopped = 1;
		mm->stop_ctl = co->ctl;
		if (co->ctl != NULL)
			peer_on_flushed(co->ctl->p, exit_after_flush);
		else
			event_base_loopexit(mm->base, NULL);
	}
done:
	coll_free(co);
}

/* Removes c from co's pending list; completes co when it empties. */
void
mm_coll_drop(struct mm *mm, struct mm_coll *co, struct mm_conn *c)
{
	int i;

	for (i = 0; i < co->npending; i++)
		if (co->pending[i] == c) {
			co->pending[i] = co->pending[--co->npending];
			if (co->npending > 0)
				return;
			if (co->phase == MM_PH_PAUSE)
				mm_round_next(mm, co);
			else
				coll_complete(mm, co, NULL);
			return;
		}
}

static void
coll_timeout(evutil_socket_t fd, short what, void *arg)
{
	struct mm_coll *co = arg;
	struct mm *mm = co->pending[0]->mm;
	char failed[300];
	int i;

	(void)fd;
	(void)what;
	failed[0] = '\0';
	for (i = 0; i < co->npending; i++)
		snprintf(failed + strlen(failed), sizeof failed -
		    strlen(failed), "%s%s", i ? ", " : "",
		    co->pending[i]->node->host);
	co->npending = 0;
	if (co->phase == MM_PH_PAUSE) {
		/* Collected all the same; the answer names them. */
		snprintf(co->unpaused, sizeof co->unpaused, "%s", failed);
		mm_round_next(mm, co);
		return;
	}
	coll_complete(mm, co, failed);
}

void
mm_send_control(struct mm *mm, struct mm_conn *c, uint32_t round)
{
	unsigned char *buf;
	struct wire_wr w;
	size_t cap = 64 + sizeof mm->ctl;
	unsigned i;

	buf = malloc(cap);
	if (buf == NULL)
		return;
	wire_wr_init(&w, buf, cap);
	wire_put_u32(&w, round);
	for (i = 0; i < 8; i++)
		wire_put_u32(&w, mm->ctl.cls_off[i]);
	wire_put_str(&w, mm->ctl.filter);
	wire_put_u32(&w, MM_CTL_WORDS);
	for (i = 0; i < MM_CTL_WORDS; i++)
		wire_put_u32(&w, mm->ctl.eid_off[i]);
	peer_send(c->p, WIRE_CONTROL, buf, w.len, NULL, 0);
	free(buf);
}

/* Asks c for its part of round co. */
static void
coll_send(struct mm_conn *c, struct mm_coll *co)
{
	if (co->what == MM_CONTROL)
		mm_send_control(c->mm, c, co->round);
	else if (co->what == MM_STATUS)
		send_u32s(c, WIRE_STATUS, co->round, 0, 1);
	else if (co->phase == MM_PH_PAUSE)
		send_u32s(c, WIRE_PAUSE, co->round, c->mm->pause_max_ms, 2);
	else
		send_u32s(c, WIRE_COLLECT, co->round,
		    (co->stop ? WIRE_COLLECT_STOP : 0) |
		    (co->what == MM_PROBE ? WIRE_COLLECT_PROBE : 0), 2);
}

static void
coll_ask(struct mm_coll *co, struct mm_conn *c)
{
	struct mm_conn **np;

	np = realloc(co->pending, sizeof *np * (size_t)(co->npending + 1));
	if (np == NULL)
		return;
	co->pending = np;
	co->pending[co->npending++] = c;
	/* An LM still synchronising is asked when it becomes ready. */
	if (c->synced)
		coll_send(c, co);
}

/* Sends c every collection it is pending in (it just became ready), and
 * adds it to the final one if a stop is under way. */
static void
coll_ask_ready(struct mm *mm, struct mm_conn *c)
{
	struct mm_coll *co;
	int i, found;

	for (co = mm->colls; co != NULL; co = co->next) {
		for (found = 0, i = 0; i < co->npending; i++)
			if (co->pending[i] == c)
				found = 1;
		if (found)
			coll_send(c, co);
		else if (co->stop)
			coll_ask(co, c);
	}
}

void
mm_round(struct mm *mm, struct mm_conn *ctl, enum mm_what what,
	 const char *cmd)
{
	struct mm_coll *co;
	int stop = what == MM_STOP;

	if (mm->stopping) {
		mm_ctl_reply(ctl, 1, "the main monitor is stopping");
		return;
	}
	co = calloc(1, sizeof *co);
	if (co == NULL) {
		mm_ctl_reply(ctl, 1, "out of memory");
		return;
	}
	co->round = ++mm->next_round;
	co->stop = stop;
	co->what = what;
	co->t0 = clk_mono_ns();
	if (cmd != NULL)
		snprintf(co->cmd, sizeof co->cmd, "%s", cmd);
	co->ctl = ctl;
	co->next = mm->colls;
	mm->colls = co;
	if (stop)
		mm->stopping = 1;
	/* The global scheme: a snapshot stops every process first, one
	 * such round at a time (the next waits its turn: mm_global_done). */
	if (what == MM_SNAPSHOT && mm->global) {
		co->phase = mm_global_busy(mm) ? MM_PH_WAIT : MM_PH_PAUSE;
		co->global = 1;
		if (co->phase == MM_PH_WAIT)
			return;
	}
	coll_start(mm, co);
}

/* Asks every LM for its part of co (the PAUSE first, for a global round
 * in that phase), with a time limit. */
static void
coll_start(struct mm *mm, struct mm_coll *co)
{
	struct mm_conn *c;

	for (c = mm->conns; c != NULL; c = c->next)
		if (c->role == MM_CONN_LM) {
			/* Collected now: a FULL before is answered. */
			if (co->phase == MM_PH_COLLECT &&
			    co->what != MM_STATUS && co->what != MM_CONTROL)
				c->full = 0;
			coll_ask(co, c);
		}
	if (co->npending == 0) {
		if (co->phase == MM_PH_PAUSE)
			mm_round_next(mm, co);
		else
			coll_complete(mm, co, NULL);
		return;
	}
	if (co->timeout == NULL)
		co->timeout = evtimer_new(mm->base, coll_timeout, co);
	event_add(co->timeout, &(struct timeval){ .tv_sec =
	    co->phase == MM_PH_PAUSE ? MM_PAUSE_TIMEOUT : MM_COLLECT_TIMEOUT,
	    .tv_usec = 0 });
}

void
mm_round_next(struct mm *mm, struct mm_coll *co)
{
	if (co->phase == MM_PH_WAIT && mm->stopping) {
		/* Queued behind a round, and now mainmon stops. */
		mm_ctl_reply(co->ctl, 1, "the main monitor is stopping");
		coll_unlink(mm, co);
		coll_free(co);
		return;
	}
	if (co->phase == MM_PH_PAUSE)
		co->t_paused = clk_mono_ns();
	co->phase = co->phase == MM_PH_WAIT ? MM_PH_PAUSE : MM_PH_COLLECT;
	if (co->timeout != NULL)
		event_del(co->timeout);
	coll_start(mm, co);
}

void
mm_status(struct mm *mm, struct mm_conn *ctl)
{
	mm_round(mm, ctl, MM_STATUS, NULL);
}

/* What grmctl status prints: the MM, then each host's LM. */
void
mm_status_text(struct mm *mm, char *text, size_t cap)
{
	const struct wire_status *st;
	struct mm_conn *c;
	size_t n;

	n = (size_t)snprintf(text, cap, "main monitor %s\nfile %s: %llu "
	    "records, %llu collections, %llu events lost, %llu bytes sent "
	    "twice and dropped\n", mm->id, mm->out_path,
	    (unsigned long long)(mm->out != NULL ? tape_records(mm->out) : 0),
	    (unsigned long long)mm->collections,
	    (unsigned long long)mm->losses, (unsigned long long)mm->dup_bytes);
	if (n < cap)
		n += (size_t)snprintf(text + n, cap - n, "order: %llu bytes "
		    "held (at most %llu), %llu records late, %llu clamped, "
		    "%llu early writes for room; causality: %llu messages "
		    "matched, %llu received before sent (worst by %llu ns), "
		    "%llu unchecked\n",
		    (unsigned long long)mm->order.bytes,
		    (unsigned long long)mm->order.bytes_max,
		    (unsigned long long)mm->order.late,
		    (unsigned long long)mm->order.clamped,
		    (unsigned long long)mm->order.forced,
		    (unsigned long long)mm->causal.checked,
		    (unsigned long long)mm->causal.violations,
		    (unsigned long long)mm->causal.worst,
		    (unsigned long long)mm->causal.unchecked);
	if (n < cap) {
		mm_global_status(mm, text + n, cap - n);
		n += strlen(text + n);
	}
	for (c = mm->conns; c != NULL && n < cap; c = c->next) {
		if (c->role != MM_CONN_LM)
			continue;
		n += (size_t)snprintf(text + n, cap - n, "node %u %s: lm pid "
		    "%u%s, clock offset %lld ns, drift %lld ppb, error %llu "
		    "ns (best round trip %llu ns, %u of %u samples), %llu "
		    "records%s\n", c->node->id, c->node->host, c->lm_pid,
		    c->has_st && c->st.adopted ? " (adopted a dead LM's "
		    "segment)" : "",
		    (long long)mm_sync_offset(&c->clk.model, clk_mono_ns()),
		    (long long)mm_sync_drift_ppb(&c->clk.model),
		    (unsigned long long)c->clk.model.err,
		    (unsigned long long)c->clk.model.best_rtt,
		    c->clk.model.used, c->clk.n,
		    (unsigned long long)c->records,
		    c->paused_round ? "; its processes are stopped" : "");
		if (!c->has_st || n >= cap)
			continue;
		st = &c->st;
		n += (size_t)snprintf(text + n, cap - n, "  processes %llu "
		    "alive, %llu ended; segment %llu bytes, %llu of %llu "
		    "chunks used (%.0f%%), push below %llu free; spilled "
		    "%llu bytes now (at most %llu), %llu in all; %llu pushes; "
		    "%llu events lost; %llu bad bytes\n",
		    (unsigned long long)st->alive, (unsigned long long)st->dead,
		    (unsigned long long)st->seg_size,
		    (unsigned long long)st->used,
		    (unsigned long long)st->chunks,
		    st->chunks ? 100.0 * (double)st->used /
		    (double)st->chunks : 0.0,
		    (unsigned long long)st->threshold,
		    (unsigned long long)st->spilled,
		    (unsigned long long)st->spill_max,
		    (unsigned long long)st->spilled_total,
		    (unsigned long long)st->pushes,
		    (unsigned long long)st->lost,
		    (unsigned long long)st->bad_bytes);
	}
	if (n >= cap && cap > 16)
		memcpy(text + cap - 16, "\n(truncated)\n", 14);
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
	if (h->role == WIRE_ROLE_CTL)
		c->role = MM_CONN_CTL;
	else {
		c->role = MM_CONN_LM;
		c->node = node_for(mm, h->host);
		if (c->node == NULL)
			return -1;
	}
	wire_wr_init(&w, buf, sizeof buf);
	wire_put_u32(&w, c->role == MM_CONN_LM ? c->node->id : 0);
	wire_put_bytes(&w, proof, WIRE_PROOF);
	peer_send(c->p, WIRE_WELCOME, buf, w.len, NULL, 0);
	if (c->role == MM_CONN_CTL)
		return 0;
	c->sync_ev = evtimer_new(mm->base, sync_due, c);
	if (c->sync_ev == NULL)
		return -1;
	start_burst(c, MM_PINGS_FIRST);
	log_debug("LM %u on %s connected from %s as node %u", c->lm_pid,
	    h->host, c->addr, c->node->id);
	return 0;
}

static int
mm_on_pong(struct mm *mm, struct mm_conn *c, struct wire_rd *msg)
{
	uint64_t t1, tl, t4 = clk_mono_ns();
	struct mm_sync_sample smp;
	struct timeval tv;

	t1 = wire_get_u64(msg);
	tl = wire_get_u64(msg);
	if (c->burst == 0 ||
	    mm_sync_sample_of(t1, tl, t4, &smp) != 0)
		return -1;
	/* Of a burst, the exchange with the smallest round trip: its
	 * midpoint is the best estimate of when the LM read its clock. */
	if (smp.rtt < c->burst_best.rtt)
		c->burst_best = smp;
	if (--c->burst > 0) {
		send_ping(c);
		return 0;
	}
	mm_sync_add(&c->clk, &c->burst_best);
	tv.tv_sec = (time_t)(mm->sync_ns / 1000000000u);
	tv.tv_usec = (suseconds_t)(mm->sync_ns % 1000000000u / 1000);
	evtimer_add(c->sync_ev, &tv);
	if (c->synced) {
		mm_write_sync(mm, c, 0);
		return 0;
	}
	c->synced = 1;
	if (mm->out == NULL)
		return -1;	/* stopped: nothing more is written */
	if (tape_host(mm->out, c->node->id, c->clk.model.off0, c->lm_pid,
	    c->node->host) != 0)
		log_warn("%s: cannot write", mm->out_path);
	mm_write_sync(mm, c, 1);
	send_u32s(c, WIRE_READY, mm->global ? WIRE_READY_GLOBAL : 0, 0, 1);
	mm_send_control(mm, c, 0);
	coll_ask_ready(mm, c);
	return 0;
}

static int
mm_on_data(struct mm_conn *c, struct wire_rd *msg)
{
	struct mm_piece *pc;
	uint32_t pid, tid, session, off;
	uint64_t seq;
	size_t len;

	pid = wire_get_u32(msg);
	tid = wire_get_u32(msg);
	seq = wire_get_u64(msg);
	session = wire_get_u32(msg);
	off = wire_get_u32(msg);
	len = wire_rd_left(msg);
	if (len == 0 ||
	    rec_valid_prefix(msg->p + msg->off, len) != len ||
	    c->batch_bytes + len > MM_BATCH_MAX || off > WIRE_CHUNK_MAX ||
	    len > WIRE_CHUNK_MAX - off)
		return -1;
	pc = malloc(sizeof *pc + len);
	if (pc == NULL)
		return -1;
	pc->pid = pid;
	pc->tid = tid;
	pc->session = session;
	pc->len = (uint32_t)len;
	pc->seq = seq;
	pc->off = off;
	pc->seg_id = c->seg_id;
	pc->next = NULL;
	memcpy(pc->data, msg->p + msg->off, len);
	*c->batch_tail = pc;
	c->batch_tail = &pc->next;
	c->batch_bytes += len;
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

static int
mm_on_done(struct mm *mm, struct mm_conn *c, struct wire_rd *msg)
{
	struct mm_coll *co;
	uint32_t round;
	uint64_t below;

	round = wire_get_u32(msg);
	(void)wire_get_u64(msg);
	below = wire_get_u64(msg);
	if (below > WIRE_BELOW_REPLAY)
		c->pulling = 0;
	c->last_done = clk_mono_ns();
	/* Acknowledged once written to the file (it survives mainmon; a
	 * snapshot, when complete, also flushes it to disk), in time order
	 * with the other LMs' (mm_order.c): the LM then consumes it.  Not
	 * written: not acknowledged, so the LM keeps it, for this
	 * mainmon's successor. */
	if (mm->out == NULL) {
		batch_free(c);
		send_u32s(c, WIRE_ACK, round, 0, 1);
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
		if (co->round == round && co->what != MM_CONTROL) {
			mm_coll_drop(mm, co, c);
			break;
		}
	return 0;
}

static int
mm_on_control_ack(struct mm *mm, struct mm_conn *c, struct wire_rd *msg)
{
	struct mm_coll *co;
	uint32_t round;

	uint64_t t;

	round = wire_get_u32(msg);
	t = wire_get_u64(msg);
	/* When the LM applied it, in MM time: the acknowledgement may have
	 * waited behind a collection's data. */
	t = mm_sync_to_mm(&c->clk.model, t);
	for (co = mm->colls; co != NULL && round != 0; co = co->next)
		if (co->round == round && co->what == MM_CONTROL) {
			if (t > co->t_applied)
				co->t_applied = t;
			mm_coll_drop(mm, co, c);
			break;
		}
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

	round = wire_get_u32(msg);
	for (i = 0; i < WIRE_STATUS_FIELDS; i++)
		v[i] = wire_get_u64(msg);
	c->st = st;
	c->has_st = 1;
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
	if (c->role == MM_CONN_LM)
		log_warn("%s (LM %u on %s): closing connection: bad or "
		    "unexpected message: %s", c->addr, c->lm_pid,
		    c->node->host, why);
	else if (c->role == MM_CONN_NEW)
		mm_auth_bad(c, why);	/* limited per address */
	else
		log_warn("%s%s: closing connection: bad or unexpected "
		    "message: %s", c->addr, c->role == MM_CONN_CTL ?
		    " (control client)" : "", why);
}

static void
conn_dispatch(struct peer *p, uint16_t type, struct wire_rd *msg,
	      const char *why, void *arg)
{
	struct mm_conn *c = arg;
	struct mm *mm = c->mm;
	char bad[160];
	unsigned by, state;
	int r = -1;

	if (msg == NULL) {
		/* A plain close is an LM's normal end; broken framing is
		 * worth a line whoever the peer is. */
		if (c->role == MM_CONN_NEW)
			mm_auth_closed(c, why);
		else if (c->role == MM_CONN_LM && peer_broken(p))
			log_warn("%s: LM %u on %s: %s", c->addr, c->lm_pid,
			    c->node->host, why);
		else if (c->role == MM_CONN_LM)
			log_debug("LM %u on %s: %s", c->lm_pid, c->node->host,
			    why);
		else if (peer_broken(p))
			log_warn("%s: control client: %s", c->addr, why);
		mm_conn_free(c);
		return;
	}
	/* Every message against its rule (wire.h) before its handler. */
	if (c->role == MM_CONN_NEW) {
		by = mm_auth_peer(c);
		if (by == 0)
			return;		/* refused: what follows is not read */
		state = WIRE_ST_AUTH;
	} else if (c->role == MM_CONN_CTL) {
		by = WIRE_BY_CTL;
		state = WIRE_ST_READY;
	} else {
		by = WIRE_BY_LM;
		state = c->synced ? WIRE_ST_READY : WIRE_ST_SYNC;
	}
	if (wire_check(type, by, WIRE_BY_MM, state, wire_rd_left(msg), bad,
	    sizeof bad) != 0) {
		conn_refuse(c, bad);
		mm_conn_free(c);
		return;
	}
	switch (type) {
	case WIRE_HELLO:
	case WIRE_AUTH:
		mm_auth_msg(mm, c, type, msg);
		return;
	case WIRE_PONG:
		r = mm_on_pong(mm, c, msg);
		break;
	case WIRE_DATA:
		r = mm_on_data(c, msg);
		break;
	case WIRE_PROC:
		r = mm->out != NULL ? mm_out_proc(mm, c, msg) : -1;
		break;
	case WIRE_DONE:
		r = mm_on_done(mm, c, msg);
		break;
	case WIRE_BYE:
		mm_dedup_forget(mm, c->seg_id);
		r = 0;
		break;
	case WIRE_SEGMENT:
		c->seg_id = wire_get_u64(msg);
		r = 0;
		break;
	case WIRE_STATUS_REPLY:
		r = mm_on_status_reply(mm, c, msg);
		break;
	case WIRE_CONTROL_ACK:
		r = mm_on_control_ack(mm, c, msg);
		break;
	case WIRE_CTL:
		r = mm_on_ctl(mm, c, msg);
		break;
	case WIRE_FULL:
	case WIRE_PAUSED:
	case WIRE_RESUMED:
		r = mm_global_msg(mm, c, type, msg);
		break;
	}
	if (r == 0)
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

	if (c->role == MM_CONN_LM) {
		mm_write_sync(mm, c, 1);
		mm_global_conn_gone(mm, c);
	}
	for (pp = &mm->conns; *pp != NULL; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	mm_order_conn_gone(c);
	if (c->sync_ev != NULL)
		event_free(c->sync_ev);
	for (co = mm->colls; co != NULL; co = next) {
		next = co->next;
		if (co->ctl == c)
			co->ctl = NULL;
		mm_coll_drop(mm, co, c);
	}
	if (mm->stopped && mm->stop_ctl == c)
		event_base_loopexit(mm->base, NULL);
	batch_free(c);
	mm_auth_free(c);
	peer_free(c->p);
	free(c);
	/* Its watermark no longer holds the others back. */
	if (mm->out != NULL && !mm->stopped && mm_order_advance(mm, 0) != 0)
		mm->exit_code = 1;
}
