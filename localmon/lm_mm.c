/* SPDX-License-Identifier: MIT */
/* lm_mm.c: the LM's link to its Main Monitor: hello, clock pongs, and
 * collections (pulled by the MM or pushed at the threshold and job end). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/stat.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "lm.h"
#include "net/peer.h"
#include "net/wire.h"
#include "rec/rec.h"
#include "shm/stab.h"
#include "util/clock.h"
#include "util/log.h"

static void lm_mm_dispatch(struct peer *p, uint16_t type, struct wire_rd *msg,
			const char *why, void *arg);
static void lm_mm_lost(struct lm *lm, const char *why);

static void
retry_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	lm_mm_connect(arg);
}

/* Seconds an MM has to complete the handshake (answer HELLO, prove the
 * token) before the LM gives up on that connection and tries again. */
#define LM_HANDSHAKE_S	10

static void
hs_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct lm *lm = arg;

	(void)fd;
	(void)what;
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
		event_add(lm->retry,
		    &(struct timeval){ .tv_sec = lm->retry_s, .tv_usec = 0 });
		return;
	}
	lm->mm_state = LM_LINK_CONNECTING;
	event_add(lm->hs_timer,
	    &(struct timeval){ .tv_sec = LM_HANDSHAKE_S, .tv_usec = 0 });
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
static void
done_push(struct lm *lm, uint32_t round, struct lm_flight *f, uint64_t below)
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

static void
flight_free(struct lm_flight *f)
{
	seg_flight_free(&f->fl);
	free(f);
}

/* The MM will acknowledge nothing more: what was in flight is sent again
 * (from the segment, or from the spill file). */
static void
flights_abort(struct lm *lm)
{
	struct lm_flight *f;

	while ((f = lm->flights) != NULL) {
		lm->flights = f->next;
		seg_flight_abort(&lm->view, &f->fl);
		flight_free(f);
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
	event_del(lm->hs_timer);
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
	log_warn("main monitor %s: %s", lm->mm_id, why);
	lm_mm_drop(lm);
	if (lm->stopped) {
		/* The final collection was sent; nobody waits for more. */
		lm_finish(lm);
		return;
	}
	event_add(lm->retry,
	    &(struct timeval){ .tv_sec = lm->retry_s, .tv_usec = 0 });
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
		event_del(lm->hs_timer);
		lm->mm_state = LM_LINK_SYNCING;
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

struct emit_ctx {
	struct lm	*lm;
	int		err;
	struct evbuffer	*spill;		/* spilling: the messages go here */
	uint64_t	room;		/* spilling: bytes the file may take */
	uint64_t	events;		/* counting only (lm_count_left) */
	int		count;
	uint64_t	now;		/* the time of the LM's own records: a
					   collection's scan (0: the clock) */
};

static uint64_t
ec_now(const struct emit_ctx *ec)
{
	return ec->now != 0 ? ec->now : clk_mono_ns();
}

/* The 24 bytes that start a DATA payload. */
static void
data_fields(unsigned char *p, uint32_t pid, uint32_t tid, uint32_t session,
	    uint64_t seq, uint64_t off)
{
	struct wire_wr w;

	wire_wr_init(&w, p, 24);
	wire_put_u32(&w, pid);
	wire_put_u32(&w, tid);
	wire_put_u64(&w, seq);
	wire_put_u32(&w, session);
	wire_put_u32(&w, (uint32_t)off);
}

int
lm_send_data(struct lm *lm, uint32_t pid, uint32_t tid, uint32_t session,
	     uint64_t seq, uint64_t off, const void *data, size_t len)
{
	unsigned char f[24];

	data_fields(f, pid, tid, session, seq, off);
	return peer_send(lm->mm, WIRE_DATA, f, sizeof f, data, len);
}

static int
emit_piece(void *arg, uint32_t pid, uint32_t tid, uint32_t session,
	   uint64_t seq, uint64_t off, const void *data, size_t len)
{
	struct emit_ctx *ec = arg;
	unsigned char hdr[WIRE_HDR + 24];

	if (ec->count) {
		ec->events += rec_count_events(data, len);
		return 0;
	}
	/* Definitions leaving the segment: kept, for a later MM. */
	if (seq != 0)
		lm_defs_note(ec->lm, pid, session, data, len);
	if (ec->spill != NULL) {
		if (evbuffer_get_length(ec->spill) + sizeof hdr + len >
		    ec->room)
			return -1;
		data_fields(hdr + WIRE_HDR, pid, tid, session, seq, off);
		wire_header(hdr, WIRE_DATA, (uint32_t)(24 + len));
		if (evbuffer_add(ec->spill, hdr, sizeof hdr) != 0 ||
		    evbuffer_add(ec->spill, data, len) != 0) {
			ec->err = 1;
			return -1;
		}
		return 0;
	}
	if (lm_send_data(ec->lm, pid, tid, session, seq, off, data, len) != 0) {
		ec->err = 1;
		return -1;
	}
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
static int64_t
report_losses(struct lm *lm, struct emit_ctx *ec, uint64_t extra)
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
	if (emit_piece(ec, 0, 0, 0, 0, 0, rec, sizeof rec) != 0)
		return -1;
	log_warn("%llu events lost (buffer full%s)", (unsigned long long)(n +
	    extra), extra ? ", or no room to keep them" : "");
	return (int64_t)n;
}

struct table_ctx {
	struct emit_ctx	*ec;
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
		if (emit_piece(tc->ec, tc->pid, tc->tid, tc->session, 0, 0,
		    tc->buf, tc->len) != 0)
			return -1;
		tc->len = 0;
	}
	memcpy(tc->buf + tc->len, rec, len);
	tc->len += len;
	return 0;
}

struct tables_ctx {
	struct emit_ctx	*ec;
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
		r = emit_piece(xc->ec, pid, tid, session, 0, 0, tc.buf,
		    tc.len);
	free(tc.buf);
	return r < 0 ? -1 : 0;
}

static int replay_next(struct lm *lm);
static ssize_t spill_append(struct lm *lm, struct evbuffer *b);

int
lm_collect(struct lm *lm, uint32_t round, int probe)
{
	struct lm_flight *f;
	struct tables_ctx xc;
	struct emit_ctx ec = { lm, 0, NULL, 0, 0, 0, 0 };
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
		return lm->outstanding == 0 ? replay_next(lm) : 0;
	}
	f = calloc(1, sizeof *f);
	if (f == NULL)
		return -1;
	/* Process starts and exits first: the MM writes them before the
	 * records of this collection. */
	if (evbuffer_get_length(lm->procs) > 0 &&
	    peer_send_raw(lm->mm, lm->procs) != 0)
		goto fail;
	/* Every collection, a push too, takes everything committed: the
	 * MM then knows that nothing older than the scan is left here, and
	 * writes in time order without waiting (doc/protocol.md 1.8).  A
	 * writer may have read the clock just before and commit just
	 * after: allowed for by WIRE_ORDER_GRACE.  The LM's own records
	 * (statistics, losses) are stamped with that time.  So a flush
	 * asked before any collection, the MM's rounds too, is answered at
	 * its acknowledgement (a round of the MM's clears push_wanted: a
	 * flush left waiting for a push would wait for the next one). */
	if (!lm->exiting)
		(void)lm_flushes_start(lm);
	below = ec.now = clk_mono_ns() - WIRE_ORDER_GRACE;
	below = lm_pause_below(lm, below);
	n = seg_collect_ex(&lm->view, 0, emit_piece, &ec,
	    &lm->bad_bytes, &f->fl);
	xc.ec = &ec;
	xc.probe = probe || lm->exiting;
	if (n >= 0 && !ec.err &&
	    seg_tables(&lm->view, emit_table, &xc, &f->fl) < 0)
		n = -1;
	if (n < 0 || ec.err)
		goto fail;
	if (lm->bad_bytes != bad)
		log_warn("%llu bytes of malformed records skipped",
		    (unsigned long long)(lm->bad_bytes - bad));
	if (lm->exiting && (lost = report_losses(lm, &ec, 0)) < 0)
		goto fail;
	f->lost = (uint64_t)lost;
	done_push(lm, round, f, below);
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
	flight_free(f);
	return -1;
}

int
lm_below_threshold(const struct lm *lm)
{
	/* Free chunks counted here: nfree is the writers' to scribble. */
	return lm->view.nchunks - seg_used(&lm->view) < lm->view.threshold;
}

void
lm_threshold(struct lm *lm)
{
	unsigned char buf[8];
	struct wire_wr w;
	uint64_t now;

	if (!lm->global || lm->mm_state != LM_LINK_READY || lm->exiting) {
		lm_push(lm);
		return;
	}
	/* Not while the processes are stopped (a round is under way; at
	 * its end, lm_resume looks again); then once until a collection
	 * is acknowledged, again every second if none is. */
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

/* ---- the spill file ---- */

/* A SEGMENT message naming our segment: into b, or to the MM (b NULL). */
static int
segment_msg(struct lm *lm, struct evbuffer *b)
{
	unsigned char m[WIRE_HDR + 8];
	struct wire_wr w;

	wire_wr_init(&w, m + WIRE_HDR, 8);
	wire_put_u64(&w, lm->seg_id);
	wire_header(m, WIRE_SEGMENT, 8);
	if (b != NULL)
		return evbuffer_add(b, m, sizeof m);
	return peer_send_bytes(lm->mm, m, sizeof m);
}

/* Length of the whole, well-formed messages at the start of buf. */
static size_t
whole_messages(const unsigned char *buf, size_t len)
{
	size_t off = 0;
	uint16_t type;
	uint32_t plen;
	const char *why;

	while (len - off >= WIRE_HDR &&
	    wire_parse_header(buf + off, &type, &plen, &why) == 0 &&
	    (type == WIRE_DATA || type == WIRE_PROC ||
	    type == WIRE_SEGMENT) &&
	    len - off - WIRE_HDR >= plen)
		off += WIRE_HDR + plen;
	return off;
}

/*
 * Takes the spill file: one LM at a time (flock; a predecessor still
 * delivering keeps it, and we try again at each tick), and keeps only its
 * whole messages: an LM killed while writing leaves a partial one, whose
 * data is still in the segment.
 */
int
lm_spill_take(struct lm *lm)
{
	struct stat a, b;
	unsigned char *buf;
	size_t have = 0, good;
	uint64_t off = 0;
	ssize_t r;
	int fd;

	if (lm->spill_fd != -1 || lm->spill_max == 0)
		return 0;
	fd = open(lm->spill_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd == -1) {
		log_warn("%s: %s", lm->spill_path, strerror(errno));
		return -1;
	}
	/* The predecessor removes the file when it is done with it: the
	 * lock must be on the file the name still names. */
	if (flock(fd, LOCK_EX | LOCK_NB) != 0 || fstat(fd, &a) != 0 ||
	    stat(lm->spill_path, &b) != 0 || a.st_ino != b.st_ino ||
	    a.st_dev != b.st_dev) {
		close(fd);
		return -1;
	}
	buf = malloc(2 * WIRE_MAX + WIRE_HDR);
	if (buf == NULL) {
		close(fd);
		return -1;
	}
	for (;;) {
		r = pread(fd, buf + have, 2 * WIRE_MAX + WIRE_HDR - have,
		    (off_t)(off + have));
		if (r > 0)
			have += (size_t)r;
		good = whole_messages(buf, have);
		off += good;
		if (r <= 0 || good == 0)
			break;
		memmove(buf, buf + good, have - good);
		have -= good;
	}
	free(buf);
	if (ftruncate(fd, (off_t)off) != 0)
		log_warn("%s: %s", lm->spill_path, strerror(errno));
	lm->spill_fd = fd;
	lm->spill_bytes = off;
	lm->spill_sent = lm->spill_acked = 0;
	if (off > 0) {
		log_warn("%s: %llu bytes of trace data kept for the main "
		    "monitor", lm->spill_path, (unsigned long long)off);
		if (lm->mm_state == LM_LINK_READY && lm->outstanding == 0)
			replay_next(lm);
	}
	return 0;
}

void
lm_spill_close(struct lm *lm)
{
	if (lm->spill_fd == -1)
		return;
	if (lm->spill_bytes == 0)
		unlink(lm->spill_path);
	close(lm->spill_fd);
	lm->spill_fd = -1;
}

void
lm_spill_lost(struct lm *lm, uint64_t n)
{
	struct emit_ctx ec = { lm, 0, NULL, UINT64_MAX, 0, 0, 0 };
	int64_t r;

	if (lm->spill_fd == -1 || (ec.spill = evbuffer_new()) == NULL)
		return;
	segment_msg(lm, ec.spill);
	r = report_losses(lm, &ec, n);
	if (r >= 0 && spill_append(lm, ec.spill) > 0)
		atomic_fetch_add(&lm->seg->lost_reported, (uint64_t)r);
	evbuffer_free(ec.spill);
}

/*
 * Appends b (a SEGMENT message, then what to keep) to the spill file.
 * Returns the bytes appended, 0 if b held only the SEGMENT message, or -1
 * (logged; the file is cut back to what it was).
 */
static ssize_t
spill_append(struct lm *lm, struct evbuffer *b)
{
	size_t len = evbuffer_get_length(b);

	if (len <= WIRE_HDR + 8)
		return 0;
	if (lseek(lm->spill_fd, (off_t)lm->spill_bytes, SEEK_SET) < 0)
		goto fail;
	while (evbuffer_get_length(b) > 0)
		if (evbuffer_write(b, lm->spill_fd) < 0 && errno != EINTR)
			goto fail;
	lm->spill_bytes += len;
	return (ssize_t)len;
fail:
	log_warn("%s: %s: the data stays in the segment", lm->spill_path,
	    strerror(errno));
	if (ftruncate(lm->spill_fd, (off_t)lm->spill_bytes) != 0)
		log_warn("%s: %s", lm->spill_path, strerror(errno));
	return -1;
	return 0;
}

void
lm_spill(struct lm *lm, int all)
{
	struct seg_flight fl = { NULL, 0, 0, 0 };
	struct emit_ctx ec = { lm, 0, NULL, 0, 0, 0, 0 };
	struct tables_ctx xc = { &ec, 1 };
	ssize_t len;
	int64_t lost = 0;

	if (lm->spill_max == 0 || lm->spill_fd == -1 || lm->seg == NULL ||
	    lm->spill_bytes >= lm->spill_max)
		return;
	ec.spill = evbuffer_new();
	if (ec.spill == NULL)
		return;
	ec.room = lm->spill_max - lm->spill_bytes;
	/* Whoever replays it says which segment the data came from. */
	segment_msg(lm, ec.spill);
	evbuffer_add_buffer(ec.spill, lm->procs);
	seg_collect_ex(&lm->view, !all, emit_piece, &ec, &lm->bad_bytes,
	    &fl);
	/* At the end, the tables too (the segment goes away). */
	if (all && !ec.err)
		seg_tables(&lm->view, emit_table, &xc, &fl);
	if (all && !ec.err) {
		ec.room += 64;	/* a loss record always fits */
		lost = report_losses(lm, &ec, 0);
	}
	if ((len = spill_append(lm, ec.spill)) < 0)
		seg_flight_abort(&lm->view, &fl);
	else {
		seg_flight_commit(&lm->view, &fl);
		if (lost > 0)
			atomic_fetch_add(&lm->seg->lost_reported,
			    (uint64_t)lost);
		lm->spilled_total += (uint64_t)len;
		if (len > 0)
			log_debug("spilled %zd bytes (%llu in %s)", len,
			    (unsigned long long)lm->spill_bytes,
			    lm->spill_path);
	}
	seg_flight_free(&fl);
	evbuffer_free(ec.spill);
}

uint64_t
lm_count_left(struct lm *lm)
{
	struct emit_ctx ec = { lm, 0, NULL, 0, 0, 1, 0 };

	if (lm->seg == NULL)
		return 0;
	seg_collect_ex(&lm->view, 0, emit_piece, &ec, NULL, NULL);
	return ec.events;
}

/* Sends the next block of the spill file (whole messages, at most 8 MiB)
 * with a DONE; the file is emptied once the MM has acknowledged it all. */
static int
replay_next(struct lm *lm)
{
	enum { BLOCK = 8 << 20 };
	struct lm_flight *f;
	unsigned char *buf;
	size_t want, good;
	ssize_t r;

	if (lm->spill_sent >= lm->spill_bytes)
		return 0;
	want = lm->spill_bytes - lm->spill_sent;
	if (want > BLOCK + WIRE_MAX + WIRE_HDR)
		want = BLOCK + WIRE_MAX + WIRE_HDR;
	buf = malloc(want);
	f = calloc(1, sizeof *f);
	if (buf == NULL || f == NULL)
		goto fail;
	r = pread(lm->spill_fd, buf, want, (off_t)lm->spill_sent);
	if (r <= 0)
		goto fail;
	good = whole_messages(buf, (size_t)r);
	if (good == 0)
		goto fail;
	if (peer_send_bytes(lm->mm, buf, good) != 0 ||
	    segment_msg(lm, NULL) != 0)
		goto fail;
	free(buf);
	lm->spill_sent += good;
	f->replay = 1;
	f->spill_end = lm->spill_sent;
	done_push(lm, WIRE_ROUND_PUSH, f, WIRE_BELOW_REPLAY);
	log_debug("replayed %zu bytes of %s", good, lm->spill_path);
	return 0;
fail:
	/* Unreadable: what follows cannot be sent; it is dropped. */
	log_warn("%s: cannot replay from byte %llu: dropped", lm->spill_path,
	    (unsigned long long)lm->spill_sent);
	free(buf);
	free(f);
	lm->spill_bytes = lm->spill_sent;
	if (lm->spill_bytes == lm->spill_acked)
		lm->spill_bytes = lm->spill_sent = lm->spill_acked = 0;
	if (ftruncate(lm->spill_fd, (off_t)lm->spill_bytes) != 0)
		log_warn("%s: %s", lm->spill_path, strerror(errno));
	return -1;
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
	if ((evbuffer_get_length(lm->procs) > 0 &&
	    peer_send_raw(lm->mm, lm->procs) != 0) || lm_defs_send(lm) < 0) {
		free(f);
		return;
	}
	/* With a spill file to replay, collections wait for it: the MM
	 * must not wait for this LM's time order meanwhile. */
	done_push(lm, WIRE_ROUND_PUSH, f, lm->spill_bytes > 0 ?
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
		lm->spill_acked = f->spill_end;
	if (f->replay && f->spill_end >= lm->spill_bytes) {
		/* All of the spill file is with the MM. */
		if (ftruncate(lm->spill_fd, 0) != 0)
			log_warn("%s: %s", lm->spill_path, strerror(errno));
		log_debug("%s delivered (%llu bytes)", lm->spill_path,
		    (unsigned long long)lm->spill_bytes);
		lm->spill_bytes = lm->spill_sent = lm->spill_acked = 0;
	}
	flight_free(f);
	if (lm->outstanding > 0) {
		/* Pushes overlap: one more may go now. */
		if (lm->push_wanted && lm->spill_bytes == 0 &&
		    lm->ndeferred == 0 && !lm->exiting)
			lm_push(lm);
		return;
	}
	if (lm->spill_bytes > 0) {
		replay_next(lm);
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
		lm_finish(lm);
}

/*
 * The MM wrote pieces of collections still in flight (WIRE_WRITTEN): their
 * chunks are consumed now, and those written whole are free for the
 * writers, without waiting for the rest of their collection (whose last
 * records wait for the global time order).  A piece no flight holds (sent
 * before a reconnection, or a scribbled chunk's) is ignored.
 */
static void
written(struct lm *lm, struct wire_rd *msg)
{
	struct lm_flight *f;
	uint32_t n, pid, session, end;
	uint64_t seq;

	n = wire_get_u32(msg);
	if (n > WIRE_WRITTEN_MAX ||
	    wire_rd_left(msg) != (size_t)n * WIRE_WRITTEN_ITEM) {
		msg->err = 1;
		return;
	}
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
}

static void
send_status(struct lm *lm, uint32_t round)
{
	struct wire_status st;
	unsigned char buf[4 + sizeof st];
	const uint64_t *v = (const uint64_t *)&st;
	struct wire_wr w;
	size_t i;

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
	wire_put_u32(&w, round);
	for (i = 0; i < WIRE_STATUS_FIELDS; i++)
		wire_put_u64(&w, v[i]);
	peer_send(lm->mm, WIRE_STATUS_REPLY, buf, w.len, NULL, 0);
}

/*
 * The MM's control state (grmctl enable/disable/filter): written into the
 * segment's control words, then the generation in ctl is bumped so that
 * every writer applies it at its next event.  Acknowledged once in place.
 */
static int
apply_control(struct lm *lm, struct wire_rd *msg)
{
	uint32_t round, cls[8], n, i, w;
	char filter[SEG_FILTER_MAX];
	unsigned char buf[12];
	struct wire_wr ww;
	struct seg_hdr *s = lm->seg;

	round = wire_get_u32(msg);
	for (i = 0; i < 8; i++)
		cls[i] = wire_get_u32(msg);
	wire_get_str(msg, filter, sizeof filter);
	n = wire_get_u32(msg);
	if (!wire_rd_ok(msg) || n != REC_EID_BITS / 32 ||
	    wire_rd_left(msg) != (size_t)n * 4) {
		msg->err = 1;
		return -1;
	}
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
	wire_wr_init(&ww, buf, sizeof buf);
	wire_put_u32(&ww, round);
	wire_put_u64(&ww, clk_mono_ns());
	peer_send(lm->mm, WIRE_CONTROL_ACK, buf, ww.len, NULL, 0);
	return 0;
}

static void
lm_mm_dispatch(struct peer *p, uint16_t type, struct wire_rd *msg,
	    const char *why, void *arg)
{
	struct lm *lm = arg;
	unsigned char buf[32];
	char bad[160];
	struct wire_wr w;
	uint64_t t_mm;
	uint32_t round, flags;

	(void)p;
	if (msg == NULL) {
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
		t_mm = wire_get_u64(msg);
		wire_wr_init(&w, buf, sizeof buf);
		wire_put_u64(&w, t_mm);
		wire_put_u64(&w, clk_mono_ns());
		peer_send(lm->mm, WIRE_PONG, buf, w.len, NULL, 0);
		break;
	case WIRE_READY:
		flags = wire_get_u32(msg);
		if (flags & WIRE_READY_GLOBAL)
			lm_pause_global(lm);
		else
			lm->global = 0;
		lm->mm_state = LM_LINK_READY;
		log_debug("connected to %s", lm->mm_id);
		send_known(lm);
		if (lm->outstanding > 0)
			lm->push_wanted = lm->push_wanted || lm->exiting;
		else if (lm->spill_bytes > 0)
			replay_next(lm);
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
		apply_control(lm, msg);
		break;
	case WIRE_ACK:
		acked(lm);
		break;
	case WIRE_WRITTEN:
		written(lm, msg);
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
	if (!wire_rd_ok(msg)) {
		snprintf(bad, sizeof bad, "%s (%u): malformed",
		    wire_type_name(type), type);
		lm_mm_lost(lm, bad);
	}
}

void
lm_mm_init(struct lm *lm)
{
	lm->retry = evtimer_new(lm->base, retry_cb, lm);
	lm->hs_timer = evtimer_new(lm->base, hs_timeout_cb, lm);
	lm->retry_s = 1;
}
