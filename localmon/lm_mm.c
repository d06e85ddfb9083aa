/* SPDX-License-Identifier: MIT */
/* lm_mm.c: the LM's link to its Main Monitor: hello, clock pongs, and
 * collections (pulled by the MM or pushed at the threshold and job end). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "lm.h"
#include "net/loop.h"
#include "net/peer.h"
#include "net/wire.h"
#include "rec/dense.h"
#include "rec/rec.h"
#include "shm/stab.h"
#include "util/clock.h"
#include "util/log.h"

static void lm_mm_dispatch(struct peer *p, uint16_t type, struct wire_rd *msg,
			const char *why, void *arg);
static void lm_mm_lost(struct lm *lm, const char *why);

static void
retry_cb(void *arg)
{
	lm_mm_connect(arg);
}

/* Seconds an MM has to complete the handshake (answer HELLO, prove the
 * token) before the LM gives up on that connection and tries again. */
#define LM_HANDSHAKE_S	10

static void
hs_timeout_cb(void *arg)
{
	struct lm *lm = arg;

	if (lm->mm != NULL && lm->mm_state == LM_LINK_CONNECTING)
		lm_mm_lost(lm, "no complete handshake within 10 s");
}

void
lm_mm_connect(struct lm *lm)
{
	const char *why;

	if (lm->mm != NULL || lm->refused)
		return;
	lm->mm = peer_connect(lm->base, lm->mmid.hostport, lm_mm_dispatch, lm,
	    &why);
	if (lm->mm == NULL) {
		log_warn("main monitor %s: %s", lm->mm_id, why);
		(void)loop_arm(lm->retry, lm->retry_s * 1000000000ull);
		return;
	}
	lm->mm_state = LM_LINK_CONNECTING;
	(void)loop_arm(lm->hs_timer, LM_HANDSHAKE_S * 1000000000ull);
	if (peer_send_hello(lm->mm, &lm->auth, lm->mmid.token, WIRE_ROLE_LM,
	    lm->seg_id) != 0)
		lm_mm_lost(lm, "cannot start the handshake");
}

/*
 * Ends a collection: DONE(round), and f waits for its ACK.  below: every
 * record committed with an earlier timestamp (LM clock) has been sent, so
 * the MM may write what it holds up to there in time order; or
 * WIRE_BELOW_NONE, WIRE_BELOW_REPLAY.
 */
void
lm_done_push(struct lm *lm, uint32_t round, struct lm_flight *f, uint64_t below)
{
	unsigned char buf[24];
	struct wire_wr w;

	wire_wr_init(&w, buf, sizeof buf);
	wire_put_u32(&w, round);
	wire_put_u64(&w, lm->bad_bytes);
	wire_put_u64(&w, below);
	peer_send(lm->mm, WIRE_DONE, buf, w.len, NULL, 0);
	if (lm->flights == NULL)
		lm->flights_tail = &lm->flights;
	*lm->flights_tail = f;
	lm->flights_tail = &f->next;
	lm->outstanding++;
	lm->flights_pushed++;
}

void
lm_flight_free(struct lm_flight *f)
{
	seg_flight_free(&f->fl);
	if (f->procs != NULL)
		evbuffer_free(f->procs);
	free(f);
}

/* Sends the PROC messages queued, kept with f until it is acknowledged;
 * 0 or -1. */
static int
flight_procs(struct lm *lm, struct lm_flight *f)
{
	size_t len = evbuffer_get_length(lm->procs);

	if (len == 0)
		return 0;
	if (f->procs == NULL && (f->procs = evbuffer_new()) == NULL)
		return -1;
	if (evbuffer_add_buffer(f->procs, lm->procs) != 0)
		return -1;
	return peer_send_bytes(lm->mm, evbuffer_pullup(f->procs, -1), len);
}

/* The MM will acknowledge nothing more: what was in flight is sent again
 * (from the segment, or from the spill file). */
static void
flights_abort(struct lm *lm)
{
	struct lm_flight *f;
	struct evbuffer *again = evbuffer_new();

	while ((f = lm->flights) != NULL) {
		lm->flights = f->next;
		seg_flight_abort(&lm->view, &f->fl);
		/* Process starts and ends it carried go again, before those
		 * queued since (the MM drops a start it wrote already). */
		if (f->procs != NULL && again != NULL)
			evbuffer_add_buffer(again, f->procs);
		lm_flight_free(f);
	}
	if (again != NULL) {
		evbuffer_prepend_buffer(lm->procs, again);
		evbuffer_free(again);
	}
	lm->flights_tail = &lm->flights;
	lm->outstanding = 0;
	lm->spill_sent = lm->spill_acked;
	lm->ndeferred = 0;
}

/* The connection is gone: what was in flight goes again, flushes are
 * answered "kept", and the time without an MM starts. */
static void
lm_mm_drop(struct lm *lm)
{
	loop_disarm(lm->hs_timer);
	lm_fire_drop(lm);
	peer_free(lm->mm);
	lm->mm = NULL;
	lm->mm_state = LM_LINK_DOWN;
	/* Nobody will say when a collection is over. */
	lm_resume(lm, REC_COLL_END_LOST);
	lm->full_sent = 0;
	flights_abort(lm);
	lm_flushes_done(lm, 0);
	if (lm->mm_down_since == 0)
		lm->mm_down_since = clk_mono_ns();
}

static void
lm_mm_lost(struct lm *lm, const char *why)
{
	if (!lm->bye_sent)
		log_warn("main monitor %s: %s", lm->mm_id, why);
	lm_mm_drop(lm);
	if (lm->stopped || lm->bye_sent) {
		/* The final collection was sent; nobody waits for more. */
		lm_finish(lm);
		return;
	}
	(void)loop_arm(lm->retry, lm->retry_s * 1000000000ull);
	if (lm->retry_s < 8)
		lm->retry_s *= 2;
}

/*
 * The MM at our address refused our token, or did not prove it knows it:
 * trying again cannot help, and nothing may be sent to it.  Recording
 * stops in the segment (the job runs on untraced); what it holds is kept
 * as when the MM is away (the spill file), for a main monitor that proves
 * the token.  A spawned LM stays, so that the job's processes find it and
 * stay quiet, and exits when they are gone; one started by hand exits now.
 */
static void
lm_mm_refused(struct lm *lm, const char *why)
{
	log_warn("%s", why);
	log_warn("no trace data goes to %s; the job runs on untraced",
	    lm->mm_id);
	lm->refused = 1;
	lm_mm_drop(lm);
	if (lm->seg != NULL)
		atomic_fetch_and(&lm->seg->ctl, ~SEG_CTL_ON);
	if (lm->standalone)
		lm_begin_exit(lm, "refused by the main monitor");
}

/* A message while the handshake is not complete. */
static void
lm_mm_handshake(struct lm *lm, uint16_t type, struct wire_rd *msg)
{
	char text[160], line[600];
	uint32_t node;

	switch (peer_auth(lm->mm, &lm->auth, type, msg, &node, text,
	    sizeof text)) {
	case AUTH_MORE:
		return;
	case AUTH_OK:
		loop_disarm(lm->hs_timer);
		/* From now on, an MM that stops answering (hung, stopped,
		 * cut off) is taken for gone, as if it had closed. */
		if (peer_set_liveness(lm->mm, lm->silent_s) != 0)
			log_warn("main monitor %s: cannot watch its liveness",
			    lm->mm_id);
		lm->mm_state = LM_LINK_SYNCING;
		lm_clock_send(lm);
		lm->retry_s = 1;
		lm->mm_down_since = 0;
		return;
	case AUTH_REFUSED:
		snprintf(line, sizeof line, "mainmon at %s refused: %s",
		    lm->mm_id, text);
		lm_mm_refused(lm, line);
		return;
	case AUTH_IMPOSTOR:
		snprintf(line, sizeof line, "%s is not the main monitor we "
		    "were given: it did not prove the token", lm->mm_id);
		lm_mm_refused(lm, line);
		return;
	case AUTH_DENIED:
		snprintf(line, sizeof line, "refused: %s", text);
		lm_mm_lost(lm, line);
		return;
	case AUTH_BAD:
		snprintf(line, sizeof line, "%s (%u) out of place or malformed "
		    "during authentication", wire_type_name(type), type);
		lm_mm_lost(lm, line);
		return;
	}
}

static uint64_t
ec_now(const struct lm_emit *ec)
{
	return ec->now != 0 ? ec->now : lm_now(ec->lm);
}

/*
 * A DATA message of len bytes of records, whole (header included, dense
 * records: doc/protocol.md 1.6), in a buffer of the LM's that the next
 * call reuses.  NULL if the records are malformed or no memory.
 */
static unsigned char *
data_msg(uint32_t pid, uint32_t tid, uint32_t session, uint64_t seq,
	 uint64_t off, const void *data, size_t len, size_t *mlen)
{
	static unsigned char *buf;
	static size_t cap;
	size_t need = WIRE_HDR + WIRE_DATA_FIELDS + REC_DENSE_MAX(len);
	struct wire_wr w;
	unsigned char *nb;

	if (need > cap) {
		if ((nb = realloc(buf, need)) == NULL)
			return NULL;
		buf = nb;
		cap = need;
	}
	wire_wr_init(&w, buf + WIRE_HDR, cap - WIRE_HDR);
	wire_put_data(&w, pid, tid, seq, session, (uint32_t)off, data, len);
	if (w.err || w.len > WIRE_MAX)
		return NULL;
	wire_header(buf, WIRE_DATA, (uint32_t)w.len);
	*mlen = WIRE_HDR + w.len;
	return buf;
}

/*
 * A DATA message of the well-formed records at the start of data[0..len),
 * checked and encoded in one pass straight into the MM's queue (no copy):
 * their bytes (0: the first is malformed, nothing sent), and in *meta
 * whether one is of class META; or -1 (no room, the link down, or, with
 * whole, not all len bytes well formed: nothing sent).
 */
static ssize_t
send_valid(struct lm *lm, uint32_t pid, uint32_t tid, uint32_t session,
	   uint64_t seq, uint64_t off, const void *data, size_t len,
	   int whole, int *meta)
{
	size_t cap = WIRE_DATA_FIELDS + REC_DENSE_MAX(len), ok;
	struct wire_wr w;
	unsigned char *m;

	if (cap > WIRE_MAX || (m = peer_reserve(lm->mm, cap)) == NULL)
		return -1;
	wire_wr_init(&w, m, cap);
	ok = wire_put_data_valid(&w, pid, tid, seq, session, (uint32_t)off,
	    data, len, meta);
	/* Not committed: the reservation is dropped. */
	if (w.err || (whole && ok != len))
		return -1;
	if (ok == 0)
		return 0;
	return peer_commit(lm->mm, WIRE_DATA, w.len) != 0 ? -1 : (ssize_t)ok;
}

int
lm_send_data(struct lm *lm, uint32_t pid, uint32_t tid, uint32_t session,
	     uint64_t seq, uint64_t off, const void *data, size_t len)
{
	int meta;

	return send_valid(lm, pid, tid, session, seq, off, data, len, 1,
	    &meta) < 0 ? -1 : 0;
}

int
lm_emit_piece(void *arg, uint32_t pid, uint32_t tid, uint32_t session,
	   uint64_t seq, uint64_t off, const void *data, size_t len, int meta)
{
	struct lm_emit *ec = arg;
	unsigned char *m;
	size_t mlen;

	if (ec->count) {
		ec->events += rec_count_events(data, len);
		return 0;
	}
	/* Definitions leaving the segment: kept, for a later MM (a piece
	 * with no META record has none: not walked again). */
	if (seq != 0 && meta)
		lm_defs_note(ec->lm, pid, session, data, len);
	if (ec->spill != NULL) {
		if ((m = data_msg(pid, tid, session, seq, off, data, len,
		    &mlen)) == NULL) {
			ec->err = 1;
			return -1;
		}
		if (evbuffer_get_length(ec->spill) + mlen > ec->room)
			return -1;
		if (evbuffer_add(ec->spill, m, mlen) != 0) {
			ec->err = 1;
			return -1;
		}
		return 0;
	}
	/* A long collection: firings go out meanwhile, on the fire link. */
	lm_fire_poll(ec->lm);
	if (lm_send_data(ec->lm, pid, tid, session, seq, off, data, len) != 0) {
		ec->err = 1;
		return -1;
	}
	return 0;
}

/* seg_collect_raw's emitter: the piece's well-formed records sent
 * (send_valid), their bytes in *ok. */
static int
lm_emit_raw(void *arg, uint32_t pid, uint32_t tid, uint32_t session,
	    uint64_t seq, uint64_t off, const void *data, size_t len,
	    size_t *ok)
{
	struct lm_emit *ec = arg;
	ssize_t n;
	int meta;

	/* A long collection: firings go out meanwhile, on the fire link. */
	lm_fire_poll(ec->lm);
	if ((n = send_valid(ec->lm, pid, tid, session, seq, off, data, len, 0,
	    &meta)) < 0) {
		ec->err = 1;
		return -1;
	}
	*ok = (size_t)n;
	/* Definitions leaving the segment: kept, for a later MM (a piece
	 * with no META record has none: not walked again). */
	if (seq != 0 && meta && n > 0)
		lm_defs_note(ec->lm, pid, session, data, *ok);
	return 0;
}

/* Losses reported in loss records of collections still in flight. */
static uint64_t
lost_in_flight(const struct lm *lm)
{
	const struct lm_flight *f;
	uint64_t n = 0;

	for (f = lm->flights; f != NULL; f = f->next)
		n += f->lost;
	return n;
}

/*
 * At the last collections: events writers lost and never wrote a loss
 * record for (a thread that never got another chunk), plus extra (events
 * the LM itself could not keep), are reported as one loss record of
 * process 0, thread 0, so that no loss goes uncounted.  Returns the
 * events reported (0: nothing to report), or -1.
 */
int64_t
lm_report_losses(struct lm *lm, struct lm_emit *ec, uint64_t extra)
{
	unsigned char rec[sizeof(struct rec_hdr) + 8];
	uint64_t lost, recd, done, n;

	lost = atomic_load(&lm->seg->lost);
	recd = atomic_load(&lm->seg->lost_recorded);
	done = atomic_load(&lm->seg->lost_reported) + lost_in_flight(lm);
	n = lost > recd ? lost - recd : 0;
	n = n > done ? n - done : 0;
	if (n > INT64_MAX)	/* writers' counters, scribbled: not a failure */
		n = INT64_MAX;
	if (n + extra == 0)
		return 0;
	rec_put_hdr(rec, sizeof rec, REC_CLASS_META, REC_ATTR_LOSS, 0,
	    ec_now(ec));
	memcpy(rec + sizeof(struct rec_hdr), &(uint64_t){ n + extra }, 8);
	if (lm_emit_piece(ec, 0, 0, 0, 0, 0, rec, sizeof rec, 1) != 0)
		return -1;
	log_warn("%llu events lost (buffer full%s)", (unsigned long long)(n +
	    extra), extra ? ", or no room to keep them" : "");
	return (int64_t)n;
}

struct table_ctx {
	struct lm_emit	*ec;
	uint32_t	pid;
	uint32_t	tid;
	uint32_t	session;
	unsigned char	*buf;
	size_t		len;
};

static int
table_rec(void *arg, const void *rec, size_t len)
{
	struct table_ctx *tc = arg;

	if (tc->len + len > WIRE_MAX / 2) {
		if (lm_emit_piece(tc->ec, tc->pid, tc->tid, tc->session, 0, 0,
		    tc->buf, tc->len, 1) != 0)
			return -1;
		tc->len = 0;
	}
	memcpy(tc->buf + tc->len, rec, len);
	tc->len += len;
	return 0;
}

struct tables_ctx {
	struct lm_emit	*ec;
	int		probe;
};

/* One thread's table: its statistics (and values) as records. */
static int
emit_table(void *arg, uint32_t pid, uint32_t tid, uint32_t session,
	   int final, const void *shared, const void *data, size_t len)
{
	struct tables_ctx *xc = arg;
	struct table_ctx tc = { xc->ec, pid, tid, session, NULL, 0 };
	int r;

	tc.buf = malloc(WIRE_MAX / 2);
	if (tc.buf == NULL)
		return -1;
	r = stab_read(data, shared, len, xc->probe || final, ec_now(xc->ec),
	    table_rec, &tc);
	if (r >= 0 && tc.len > 0)
		r = lm_emit_piece(xc->ec, pid, tid, session, 0, 0, tc.buf,
		    tc.len, 1);
	free(tc.buf);
	return r < 0 ? -1 : 0;
}

int
lm_emit_tables(struct lm_emit *ec, int probe, struct seg_flight *fl)
{
	struct tables_ctx xc = { ec, probe };

	return seg_tables(&ec->lm->view, emit_table, &xc, fl) < 0 ? -1 : 0;
}

int
lm_collect(struct lm *lm, uint32_t round, int probe)
{
	struct lm_flight *f;
	struct lm_emit ec = { lm, 0, NULL, 0, 0, 0, 0 };
	uint64_t bad = lm->bad_bytes;
	int64_t lost = 0;
	uint64_t below;
	int n;

	if (lm->mm_state != LM_LINK_READY)
		return -1;
	/* The spill file goes first: it is older than the segment. */
	if (lm->spill_bytes > 0) {
		if (round == WIRE_ROUND_PUSH)
			lm->push_wanted = 1;
		else if (lm->ndeferred < LM_DEFERRED_MAX) {
			lm->deferred[lm->ndeferred][0] = round;
			lm->deferred[lm->ndeferred++][1] = (uint32_t)probe;
		} else
			log_warn("collection %u asked during the replay of %s: "
			    "too many waiting, not answered", round,
			    lm->spill_path);
		return lm->outstanding == 0 ? lm_spill_replay(lm) : 0;
	}
	f = calloc(1, sizeof *f);
	if (f == NULL)
		return -1;
	/* Process starts and exits first: the MM writes them before the
	 * records of this collection. */
	if (flight_procs(lm, f) != 0)
		goto fail;
	/* Every collection, a push too, takes everything committed: the
	 * MM then knows that nothing older than the scan is left here, and
	 * writes in time order without waiting (doc/protocol.md 1.8).  A
	 * writer may have read the clock just before and commit just
	 * after: allowed for by WIRE_ORDER_GRACE.  The LM's own records
	 * (statistics, losses) are stamped with that time.  So a flush
	 * asked before any collection, the MM's rounds too, is answered at
	 * its acknowledgement (a round of the MM's clears push_wanted: a
	 * flush left waiting for a push would wait for the next one).  In
	 * the global scheme only a push takes it, as before: taken by a
	 * round there, it went unanswered for its whole 5 s in most runs
	 * of global.sh (part 4). */
	if (!lm->exiting && (round == WIRE_ROUND_PUSH || !lm->global))
		(void)lm_flushes_start(lm);
	below = ec.now = lm_now(lm) - lm_clock_dur(lm, WIRE_ORDER_GRACE);
	below = lm_pause_below(lm, below);
	n = seg_collect_raw(&lm->view, 0, lm_emit_raw, &ec, &lm->bad_bytes,
	    &f->fl);
	if (n >= 0 && !ec.err &&
	    lm_emit_tables(&ec, probe || lm->exiting, &f->fl) != 0)
		n = -1;
	if (n < 0 || ec.err)
		goto fail;
	if (lm->bad_bytes != bad)
		log_warn("%llu bytes of malformed records skipped",
		    (unsigned long long)(lm->bad_bytes - bad));
	if (lm->exiting && (lost = lm_report_losses(lm, &ec, 0)) < 0)
		goto fail;
	f->lost = (uint64_t)lost;
	lm_done_push(lm, round, f, below);
	peer_flush(lm->mm);
	if (round == WIRE_ROUND_PUSH)
		lm->pushes++;
	lm->push_wanted = 0;
	if (lm->exiting)
		lm->final_sent = 1;
	log_debug("collection %u: %d pieces", round, n);
	return 0;
fail:
	log_warn("collection failed: cannot queue data for the MM");
	seg_flight_abort(&lm->view, &f->fl);
	if (f->procs != NULL)
		evbuffer_prepend_buffer(lm->procs, f->procs);
	lm_flight_free(f);
	return -1;
}

int
lm_below_threshold(const struct lm *lm)
{
	/* Free chunks counted here: nfree is the writers' to scribble. */
	return lm->view.nchunks - seg_used(&lm->view) < lm->view.threshold;
}

/* The global scheme: FULL asks the MM for a round (every LM collected,
 * their processes stopped meanwhile).  Not while the processes are
 * stopped (a round is under way; at its end, lm_resume looks again);
 * then once until a collection is acknowledged, again every second if
 * none is. */
void
lm_full(struct lm *lm)
{
	unsigned char buf[8];
	struct wire_wr w;
	uint64_t now;

	if (lm->pause.on)
		return;
	now = clk_mono_ns();
	if (lm->full_sent != 0 && now - lm->full_sent < 1000000000u)
		return;
	lm->full_sent = now;
	wire_wr_init(&w, buf, sizeof buf);
	wire_put_u32(&w, lm->view.nchunks - seg_used(&lm->view));
	wire_put_u32(&w, lm->view.nchunks);
	peer_send(lm->mm, WIRE_FULL, buf, w.len, NULL, 0);
}

void
lm_threshold(struct lm *lm)
{
	if (!lm->global || lm->mm_state != LM_LINK_READY || lm->exiting) {
		lm_push(lm);
		return;
	}
	lm_full(lm);
}

void
lm_push(struct lm *lm)
{
	/* Pushes overlap (the MM writes one while the LM sends the next),
	 * a few at a time. */
	if (lm->mm_state == LM_LINK_READY && lm->outstanding < LM_PUSHES_MAX &&
	    lm->spill_bytes == 0 && lm->ndeferred == 0)
		lm_collect(lm, WIRE_ROUND_PUSH, 0);
	else if (lm->mm_state == LM_LINK_READY)
		lm->push_wanted = 1;
	else
		lm_spill(lm, lm->exiting);
}

/*
 * A new connection: this MM may be another than the one that received
 * them, so every live image's definitions and every attached process go
 * first (it writes only what it did not know), with a DONE of their own.
 */
static void
send_known(struct lm *lm)
{
	struct lm_flight *f;

	lm_clients_resume_all(lm);
	if (lm->defs == NULL && evbuffer_get_length(lm->procs) == 0)
		return;
	if ((f = calloc(1, sizeof *f)) == NULL)
		return;
	if (flight_procs(lm, f) != 0 || lm_defs_send(lm) < 0) {
		lm_flight_free(f);
		return;
	}
	/* With a spill file to replay, collections wait for it: the MM
	 * must not wait for this LM's time order meanwhile. */
	lm_done_push(lm, WIRE_ROUND_PUSH, f, lm->spill_bytes > 0 ?
	    WIRE_BELOW_REPLAY : WIRE_BELOW_NONE);
}

/* The MM acknowledged the oldest collection in flight. */
static void
acked(struct lm *lm)
{
	struct lm_flight *f = lm->flights;
	int i, n;

	if (f == NULL)
		return;
	lm->flights = f->next;
	if (lm->flights == NULL)
		lm->flights_tail = &lm->flights;
	lm->outstanding--;
	lm->flights_acked++;
	seg_flight_commit(&lm->view, &f->fl);
	lm_defs_acked(lm);
	if (f->lost > 0)
		atomic_fetch_add(&lm->seg->lost_reported, f->lost);
	if (f->replay)
		lm_spill_acked(lm, f->spill_end);
	lm_flight_free(f);
	if (lm->outstanding > 0) {
		/* Pushes overlap: one more may go now. */
		if (lm->push_wanted && lm->spill_bytes == 0 &&
		    lm->ndeferred == 0 && !lm->exiting)
			lm_push(lm);
		return;
	}
	if (lm->spill_bytes > 0) {
		lm_spill_replay(lm);
		return;
	}
	/* Collections asked for during the replay. */
	n = lm->ndeferred;
	lm->ndeferred = 0;
	for (i = 0; i < n; i++)
		lm_collect(lm, lm->deferred[i][0], (int)lm->deferred[i][1]);
	if (lm->outstanding > 0)
		return;
	lm_flushes_done(lm, 1);
	/* Global scheme: all collected is freed; still below the threshold
	 * (the writers went on meanwhile), a round is due again. */
	lm->full_sent = 0;
	if (lm->global && !lm->exiting && lm_below_threshold(lm))
		lm_threshold(lm);
	/* Exiting: one more collection after the exit began, so nothing
	 * committed before it is left behind. */
	if (lm->push_wanted || (lm->exiting && !lm->final_sent))
		lm_collect(lm, WIRE_ROUND_PUSH, 0);
	else if (lm->exiting)
		lm_bye(lm);
}

static void
bye_written(struct peer *p, void *arg)
{
	(void)p;
	lm_finish(arg);
}

/*
 * Everything is delivered and acknowledged, and the LM exits: it says so
 * (BYE), so that the MM takes the close that follows for its end, not its
 * death, and forgets what it kept of this segment; then, once that is
 * written, it finishes.
 */
void
lm_bye(struct lm *lm)
{
	if (lm->bye_sent)
		return;
	if (lm->mm == NULL || lm->mm_state != LM_LINK_READY ||
	    peer_send(lm->mm, WIRE_BYE, NULL, 0, NULL, 0) != 0) {
		lm_finish(lm);
		return;
	}
	lm->bye_sent = 1;
	peer_on_flushed(lm->mm, bye_written);
}

/*
 * The MM wrote pieces of collections still in flight (WIRE_WRITTEN): their
 * chunks are consumed now, and those written whole are free for the
 * writers, without waiting for the rest of their collection (whose last
 * records wait for the global time order).  A piece no flight holds (sent
 * before a reconnection, or a scribbled chunk's) is ignored.
 */
static const char *
written(struct lm *lm, struct wire_rd *msg)
{
	struct lm_flight *f;
	uint32_t n, pid, session, end;
	uint64_t seq;

	n = wire_get_u32(msg);
	if (n > WIRE_WRITTEN_MAX)
		return "more pieces than WIRE_WRITTEN_MAX";
	if (wire_rd_left(msg) != (size_t)n * WIRE_WRITTEN_ITEM)
		return "its pieces do not fill it exactly";
	while (n-- > 0) {
		pid = wire_get_u32(msg);
		session = wire_get_u32(msg);
		seq = wire_get_u64(msg);
		end = wire_get_u32(msg);
		for (f = lm->flights; f != NULL; f = f->next)
			if (!f->replay && seg_flight_written(&lm->view, &f->fl,
			    pid, session, seq, end))
				break;
	}
	return NULL;
}

static void
send_status(struct lm *lm, uint32_t round)
{
	struct wire_status st;
	unsigned char buf[4 + sizeof st + 2 + WIRE_CPUS_MAX];
	char cpus[WIRE_CPUS_MAX];
	struct wire_wr w;

	memset(&st, 0, sizeof st);
	st.lm_pid = (uint64_t)getpid();
	st.alive = (uint64_t)lm->nclients + (uint64_t)lm->norphans;
	st.dead = lm->dead;
	st.seg_size = lm->seg_size;
	st.chunks = lm->view.nchunks;
	st.used = lm->seg != NULL ? seg_used(&lm->view) : 0;
	st.threshold = lm->view.threshold;
	st.spilled = lm->spill_bytes;
	st.spill_max = lm->spill_max;
	st.spilled_total = lm->spilled_total;
	st.pushes = lm->pushes;
	st.lost = lm->seg != NULL ? atomic_load(&lm->seg->lost) : 0;
	st.bad_bytes = lm->bad_bytes;
	st.adopted = (uint64_t)lm->adopted;
	wire_wr_init(&w, buf, sizeof buf);
	wire_put_status(&w, round, &st, lm_cpus_now(cpus, sizeof cpus));
	peer_send(lm->mm, WIRE_STATUS_REPLY, buf, w.len, NULL, 0);
}

/*
 * The MM's control state (grmctl enable/disable/filter): written into the
 * segment's control words, then the generation in ctl is bumped so that
 * every writer applies it at its next event; only if it is newer than
 * the one in place (its round: one read on the data link may come after
 * a newer one the firing thread applied from the fire link).
 */
const char *
lm_control_put(struct lm *lm, struct wire_rd *msg, uint32_t *round,
	       int *applied)
{
	uint32_t cls[8], n, i, w;
	char filter[SEG_FILTER_MAX];
	struct seg_hdr *s = lm->seg;

	*applied = 0;
	*round = wire_get_u32(msg);
	for (i = 0; i < 8; i++)
		cls[i] = wire_get_u32(msg);
	wire_get_str(msg, filter, sizeof filter);
	n = wire_get_u32(msg);
	if (!wire_rd_ok(msg))
		return "its filter is cut short or too long";
	if (n != REC_EID_BITS / 32)
		return "not as many event words as event ids need";
	if (wire_rd_left(msg) != (size_t)n * 4)
		return "its event words do not fill it exactly";
	if (*round < lm->ctl_round) {
		msg->off = msg->len;	/* read: older, left */
		return NULL;
	}
	lm->ctl_round = *round;
	*applied = 1;
	for (i = 0; i < 8; i++)
		atomic_store_explicit(&s->cls_off[i], cls[i],
		    memory_order_relaxed);
	memset(s->filter, 0, sizeof s->filter);
	memcpy(s->filter, filter, strlen(filter));
	for (i = 0; i < n; i++) {
		w = wire_get_u32(msg);
		atomic_store_explicit(&s->eid_off[i], w, memory_order_relaxed);
	}
	atomic_fetch_add_explicit(&s->ctl, SEG_CTL_STEP,
	    memory_order_release);
	return NULL;
}

void
lm_control_ack(struct lm *lm, uint32_t round, uint64_t t)
{
	unsigned char buf[12];
	struct wire_wr ww;

	if (lm->mm == NULL || lm->mm_state != LM_LINK_READY)
		return;
	wire_wr_init(&ww, buf, sizeof buf);
	wire_put_u32(&ww, round);
	wire_put_u64(&ww, t);
	peer_send(lm->mm, WIRE_CONTROL_ACK, buf, ww.len, NULL, 0);
}

/* Acknowledged once in place (or left for a newer one): NULL, or what
 * is wrong with msg (nothing is applied). */
const char *
lm_control_apply(struct lm *lm, struct wire_rd *msg)
{
	const char *wrong;
	uint32_t round;
	int applied;

	lm_act_lock(lm);
	wrong = lm_control_put(lm, msg, &round, &applied);
	lm_act_unlock(lm);
	if (wrong != NULL)
		return wrong;
	log_debug("control round %u %s by the loop", round, applied ?
	    "applied" : "older than the one in place: left");
	lm_control_ack(lm, round, lm_now(lm));
	return NULL;
}

/*
 * During a long collection: the MM's control changes, plan rows and a
 * plan's signals at the head of what it sent are applied now, not after the
 * collection (a plan's enable in effect soon after its trigger).  A
 * message that fails its checks, and every one behind it, is left to
 * the dispatch (which drops the link for it).
 */
static int
take_urgent(struct peer *p, uint16_t type, struct wire_rd *msg, void *arg)
{
	struct lm *lm = arg;
	char bad[160];
	const char *wrong;

	(void)p;
	if ((type != WIRE_CONTROL && type != WIRE_SIGNAL &&
	    type != WIRE_PLAN) ||
	    lm->mm_state != LM_LINK_READY || wire_check(type, WIRE_BY_MM,
	    WIRE_BY_LM, WIRE_ST_READY, wire_rd_left(msg), bad,
	    sizeof bad) != 0)
		return 0;
	/* Both check the whole message before they change anything. */
	wrong = type == WIRE_CONTROL ? lm_control_apply(lm, msg) :
	    type == WIRE_PLAN ? lm_plan_apply(lm, msg) :
	    lm_plan_signal(lm, msg);
	return wrong == NULL && wire_rd_ok(msg);
}

void
lm_mm_poll(struct lm *lm)
{
	if (lm->mm != NULL && lm->mm_state == LM_LINK_READY)
		(void)peer_poll(lm->mm, take_urgent, lm);
}

static void
lm_mm_dispatch(struct peer *p, uint16_t type, struct wire_rd *msg,
	    const char *why, void *arg)
{
	struct lm *lm = arg;
	unsigned char buf[32];
	char bad[160];
	struct wire_wr w;
	uint64_t t_mm, t_rx, t_tx, age;
	uint32_t round, flags;
	const char *wrong = NULL;	/* a handler's check that failed */

	if (msg == NULL) {
		if (peer_silent(p)) {
			snprintf(bad, sizeof bad, "no word for %u s (hung, "
			    "stopped or cut off): taken for gone; its data is "
			    "kept and sent again", lm->silent_s);
			why = bad;
		}
		lm_mm_lost(lm, why);
		return;
	}
	/* Every message against its rule (wire.h) before its handler. */
	if (wire_check(type, WIRE_BY_MM, WIRE_BY_LM,
	    lm->mm_state == LM_LINK_CONNECTING ? WIRE_ST_AUTH :
	    lm->mm_state == LM_LINK_SYNCING ? WIRE_ST_SYNC : WIRE_ST_READY,
	    wire_rd_left(msg), bad, sizeof bad) != 0) {
		lm_mm_lost(lm, bad);
		return;
	}
	if (lm->mm_state == LM_LINK_CONNECTING) {
		lm_mm_handshake(lm, type, msg);
		return;
	}
	switch (type) {
	case WIRE_PING:
		/* When the ping arrived, by the kernel, and the clock
		 * read just before the answer is sent
		 * (doc/clock-sync.md). */
		t_mm = wire_get_u64(msg);
		t_rx = peer_rx_time(lm->mm);
		/* And when the previous answer left, by the kernel: its
		 * stamp has come, since that answer arrived before this
		 * ping left (0 if none). */
		t_tx = peer_tx_time(lm->mm, &age);
		wire_wr_init(&w, buf, sizeof buf);
		wire_put_u64(&w, t_mm);
		wire_put_u64(&w, t_rx);
		wire_put_u64(&w, lm->pong_mm);
		wire_put_u64(&w, t_tx);
		lm->pong_mm = t_mm;
		(void)peer_send_clock(lm->mm, WIRE_PONG, buf, w.len,
		    &lm->pong_t3);
		break;
	case WIRE_READY:
		flags = wire_get_u32(msg);
		if (flags & WIRE_READY_GLOBAL)
			lm_pause_global(lm);
		else
			lm->global = 0;
		lm->mm_state = LM_LINK_READY;
		/* A new MM's rounds and plans: none in place is newer. */
		lm_act_lock(lm);
		lm->ctl_round = 0;
		lm->plan_seq = 0;
		lm_act_unlock(lm);
		log_debug("connected to %s", lm->mm_id);
		send_known(lm);
		lm_plan_scan(lm);
		lm_fire_connect(lm);
		if (lm->outstanding > 0)
			lm->push_wanted = lm->push_wanted || lm->exiting;
		else if (lm->spill_bytes > 0)
			lm_spill_replay(lm);
		else if (lm->push_wanted || lm->exiting)
			lm_collect(lm, WIRE_ROUND_PUSH, 0);
		break;
	case WIRE_COLLECT:
		round = wire_get_u32(msg);
		flags = wire_get_u32(msg);
		/* Processes that ended before this was asked for: their
		 * ends go with it. */
		lm_clients_drain(lm);
		if (flags & WIRE_COLLECT_STOP) {
			lm->stopped = 1;
			atomic_fetch_and(&lm->seg->ctl, ~SEG_CTL_ON);
			lm_begin_exit(lm, "stopped by the main monitor");
		}
		lm_collect(lm, round, (flags & WIRE_COLLECT_PROBE) != 0);
		break;
	case WIRE_CONTROL:
		wrong = lm_control_apply(lm, msg);
		break;
	case WIRE_PLAN:
		wrong = lm_plan_apply(lm, msg);
		break;
	case WIRE_SIGNAL:
		wrong = lm_plan_signal(lm, msg);
		break;
	case WIRE_ACK:
		acked(lm);
		break;
	case WIRE_WRITTEN:
		wrong = written(lm, msg);
		break;
	case WIRE_STATUS:
		send_status(lm, wire_get_u32(msg));
		break;
	case WIRE_PAUSE:
		round = wire_get_u32(msg);
		flags = wire_get_u32(msg);	/* the time limit, ms */
		lm_pause(lm, round, flags);
		break;
	case WIRE_RESUME:
		round = wire_get_u32(msg);
		if (lm->pause.on && lm->pause.round == round)
			lm_resume(lm, REC_COLL_END_ASKED);
		break;
	}
	/* Lengths were checked by the rule: what is left is values. */
	if (wrong == NULL && !wire_rd_ok(msg))
		wrong = "a field cut short";
	if (wrong != NULL) {
		snprintf(bad, sizeof bad, "%s (%u): %s", wire_type_name(type),
		    type, wrong);
		lm_mm_lost(lm, bad);
	}
}

/*
 * Pushes on time (GRM_PUSH_INTERVAL): what was committed since the last
 * collection, chunks still being written included, goes to the MM at
 * least this often, so that a slow writer's events reach the file within
 * seconds.  A collection already in flight, or a replay, carries it soon
 * enough; nothing new committed costs one look at the chunk headers.
 * In the global scheme (mainmon --collect=global) data moves in rounds
 * only (a push would wait in mainmon for the next round, and so would a
 * GMI_Flush asked meanwhile): there the LM asks for a round (FULL) when
 * something committed waits, as at its threshold, or a collection is
 * not acknowledged yet, and mainmon collects every LM with its processes
 * stopped.
 */
static void
push_timer_cb(void *arg)
{
	struct lm *lm = arg;

	/* A firing whose note was lost (the socket full) goes now; a fire
	 * link lost is made again. */
	if (!lm->finished) {
		lm_plan_scan(lm);
		lm_fire_connect(lm);
	}
	if (lm->finished || lm->seg == NULL || lm->exiting ||
	    lm->mm_state != LM_LINK_READY || lm->spill_bytes > 0 ||
	    lm->ndeferred > 0 || lm->pause.on)
		return;
	/* Global: a round is asked for while something is committed here,
	 * or a collection is not acknowledged (mainmon holds its newest
	 * records, those within WIRE_ORDER_GRACE of its scan, for the next
	 * round's). */
	if (lm->global && lm->outstanding > 0) {
		lm_full(lm);
		return;
	}
	if (lm->outstanding > 0 || (evbuffer_get_length(lm->procs) == 0 &&
	    !seg_pending(&lm->view)))
		return;
	if (lm->global)
		lm_full(lm);
	else
		lm_collect(lm, WIRE_ROUND_PUSH, 0);
}

void
lm_mm_init(struct lm *lm)
{
	lm->retry = loop_timer(lm->base, retry_cb, lm);
	lm->hs_timer = loop_timer(lm->base, hs_timeout_cb, lm);
	lm->retry_s = 1;
	if (lm->push_ns == 0)
		return;
	lm->push_timer = loop_every(lm->base, push_timer_cb, lm);
	if (lm->push_timer == NULL || loop_arm(lm->push_timer,
	    lm->push_ns) != 0)
		log_warn("cannot push every %llu ms: pushes at the threshold "
		    "only", (unsigned long long)(lm->push_ns / 1000000));
}

void
lm_mm_finish(struct lm *lm)
{
	loop_ev_free(lm->push_timer);
	lm->push_timer = NULL;
}
