/* lm_mm.c: the LM's link to its Main Monitor: hello, clock pongs, and
 * collections (pulled by the MM or pushed at the threshold and job end). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "clock.h"
#include "lm.h"
#include "log.h"
#include "peer.h"
#include "rec.h"
#include "stab.h"
#include "wire.h"

static void mm_dispatch(struct peer *p, uint16_t type, struct wire_rd *msg,
			const char *why, void *arg);

static void
retry_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	lm_mm_connect(arg);
}

void
lm_mm_connect(struct lm *lm)
{
	const char *why;

	if (lm->mm != NULL)
		return;
	lm->mm = peer_connect(lm->base, lm->mm_id, mm_dispatch, lm, &why);
	if (lm->mm == NULL) {
		log_warn("main monitor %s: %s", lm->mm_id, why);
		event_add(lm->retry,
		    &(struct timeval){ .tv_sec = lm->retry_s, .tv_usec = 0 });
		return;
	}
	lm->mm_state = MM_CONNECTING;
	peer_send_hello(lm->mm, WIRE_ROLE_LM);
}

static void
mm_lost(struct lm *lm, const char *why)
{
	log_warn("main monitor %s: %s", lm->mm_id, why);
	peer_free(lm->mm);
	lm->mm = NULL;
	lm->mm_state = MM_DOWN;
	lm->outstanding = 0;
	lm_flushes_done(lm, 0);
	if (lm->mm_down_since == 0)
		lm->mm_down_since = clk_mono_ns();
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

struct emit_ctx {
	struct lm	*lm;
	int		err;
};

static int
emit_piece(void *arg, uint32_t pid, uint32_t tid, uint32_t session,
	   uint64_t seq, const void *data, size_t len)
{
	struct emit_ctx *ec = arg;
	unsigned char hdr[20];
	struct wire_wr w;

	wire_wr_init(&w, hdr, sizeof hdr);
	wire_put_u32(&w, pid);
	wire_put_u32(&w, tid);
	wire_put_u64(&w, seq);
	wire_put_u32(&w, session);
	if (peer_send(ec->lm->mm, WIRE_DATA, hdr, w.len, data, len) != 0) {
		ec->err = 1;
		return -1;
	}
	return 0;
}

/*
 * At the last collections: events writers lost and never wrote a loss
 * record for (a thread that never got another chunk) are reported as one
 * loss record of process 0, thread 0, so that no loss goes uncounted.
 */
static int
report_unrecorded_losses(struct lm *lm)
{
	unsigned char piece[20 + sizeof(struct rec_hdr) + 8];
	uint64_t lost, rec, n;
	struct rec_hdr h;
	struct wire_wr w;

	lost = atomic_load(&lm->seg->lost);
	rec = atomic_load(&lm->seg->lost_recorded);
	n = lost > rec ? lost - rec : 0;
	if (n <= lm->lost_reported)
		return 0;
	n -= lm->lost_reported;
	memset(&h, 0, sizeof h);
	h.len = sizeof h + 8;
	h.cls = REC_CLASS_META;
	h.attr = REC_ATTR_LOSS;
	h.ts = clk_mono_ns();
	wire_wr_init(&w, piece, sizeof piece);
	wire_put_u32(&w, 0);
	wire_put_u32(&w, 0);
	wire_put_u64(&w, 0);
	wire_put_u32(&w, 0);
	wire_put_bytes(&w, &h, sizeof h);
	wire_put_bytes(&w, &n, 8);
	if (peer_send(lm->mm, WIRE_DATA, piece, w.len, NULL, 0) != 0)
		return -1;
	lm->lost_reported += n;
	log_warn("%llu events lost by traced processes (buffer full)",
	    (unsigned long long)n);
	return 0;
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
		if (emit_piece(tc->ec, tc->pid, tc->tid, tc->session, 0, tc->buf,
		    tc->len) != 0)
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
	r = stab_read(data, shared, len, xc->probe || final, clk_mono_ns(),
	    table_rec, &tc);
	if (r >= 0 && tc.len > 0)
		r = emit_piece(xc->ec, pid, tid, session, 0, tc.buf, tc.len);
	free(tc.buf);
	return r < 0 ? -1 : 0;
}

int
lm_collect(struct lm *lm, uint32_t round, int probe)
{
	struct tables_ctx xc;
	int full_only;
	struct emit_ctx ec = { lm, 0 };
	unsigned char buf[16];
	struct wire_wr w;
	uint64_t bad = lm->bad_bytes;
	int n;

	if (lm->mm_state != MM_READY)
		return -1;
	/* Process starts and exits first: the MM writes them before the
	 * records of this collection. */
	if (evbuffer_get_length(lm->procs) > 0 &&
	    peer_send_raw(lm->mm, lm->procs) != 0)
		return -1;
	/* A push at the threshold takes what is full; everything else
	 * (snapshot, flush, the end) takes everything committed. */
	full_only = round == WIRE_ROUND_PUSH && !lm->exiting &&
	    !lm_flushes_start(lm);
	n = seg_collect_ex(&lm->view, full_only, emit_piece, &ec,
	    &lm->bad_bytes);
	xc.ec = &ec;
	xc.probe = probe || lm->exiting;
	if (n >= 0 && !ec.err && seg_tables(&lm->view, emit_table, &xc) < 0)
		n = -1;
	if (n < 0 || ec.err) {
		log_warn("collection failed: cannot queue data for the MM");
		return -1;
	}
	if (lm->bad_bytes != bad)
		log_warn("%llu bytes of malformed records skipped",
		    (unsigned long long)(lm->bad_bytes - bad));
	if (lm->exiting && report_unrecorded_losses(lm) != 0)
		return -1;
	wire_wr_init(&w, buf, sizeof buf);
	wire_put_u32(&w, round);
	wire_put_u64(&w, lm->bad_bytes);
	peer_send(lm->mm, WIRE_DONE, buf, w.len, NULL, 0);
	lm->outstanding++;
	lm->push_wanted = 0;
	if (lm->exiting)
		lm->final_sent = 1;
	log_debug("collection %u: %d pieces", round, n);
	return 0;
}

void
lm_push(struct lm *lm)
{
	if (lm->mm_state == MM_READY && lm->outstanding == 0)
		lm_collect(lm, WIRE_ROUND_PUSH, 0);
	else
		lm->push_wanted = 1;
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
	if (!wire_rd_ok(msg) || n != SEG_EID_BITS / 32 ||
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
mm_dispatch(struct peer *p, uint16_t type, struct wire_rd *msg,
	    const char *why, void *arg)
{
	struct lm *lm = arg;
	unsigned char buf[32];
	struct wire_wr w;
	uint64_t t_mm;
	uint32_t round, flags;

	(void)p;
	if (msg == NULL) {
		mm_lost(lm, why);
		return;
	}
	switch (type) {
	case WIRE_WELCOME:
		(void)wire_get_u32(msg);
		lm->mm_state = MM_SYNCING;
		lm->retry_s = 1;
		lm->mm_down_since = 0;
		break;
	case WIRE_PING:
		t_mm = wire_get_u64(msg);
		wire_wr_init(&w, buf, sizeof buf);
		wire_put_u64(&w, t_mm);
		wire_put_u64(&w, clk_mono_ns());
		peer_send(lm->mm, WIRE_PONG, buf, w.len, NULL, 0);
		break;
	case WIRE_READY:
		lm->mm_state = MM_READY;
		log_debug("connected to %s", lm->mm_id);
		if (lm->push_wanted || lm->exiting)
			lm_collect(lm, WIRE_ROUND_PUSH, 0);
		break;
	case WIRE_COLLECT:
		round = wire_get_u32(msg);
		flags = wire_get_u32(msg);
		if (!wire_rd_ok(msg))
			break;
		if (flags & WIRE_COLLECT_STOP) {
			lm->stopped = 1;
			atomic_fetch_and(&lm->seg->ctl, ~SEG_CTL_ON);
			lm_begin_exit(lm, "stopped by the main monitor");
		}
		lm_collect(lm, round, (flags & WIRE_COLLECT_PROBE) != 0);
		break;
	case WIRE_CONTROL:
		if (apply_control(lm, msg) != 0)
			break;
		break;
	case WIRE_ACK:
		(void)wire_get_u32(msg);
		if (lm->outstanding > 0)
			lm->outstanding--;
		if (lm->outstanding > 0)
			break;
		lm_flushes_done(lm, 1);
		/* Exiting: one more collection after the exit began, so
		 * nothing committed before it is left behind. */
		if (lm->push_wanted || (lm->exiting && !lm->final_sent))
			lm_collect(lm, WIRE_ROUND_PUSH, 0);
		else if (lm->exiting)
			lm_finish(lm);
		break;
	default:
		mm_lost(lm, "unexpected message");
		return;
	}
	if (!wire_rd_ok(msg))
		mm_lost(lm, "malformed message");
}

void
lm_mm_init(struct lm *lm)
{
	lm->retry = evtimer_new(lm->base, retry_cb, lm);
	lm->retry_s = 1;
}
