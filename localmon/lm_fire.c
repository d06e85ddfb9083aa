/* SPDX-License-Identifier: MIT */
/*
 * lm_fire.c: how a plan's firing leaves the LM (doc/plans.md 4.4,
 * doc/protocol.md 1.13): the fire link, a second connection to the Main
 * Monitor that carries FIREs only, and the firing thread, which sends
 * them on it.
 *
 * The firing thread does nothing but wait on the segment's firing word
 * (seg_fire_wait; writers wake it, seg_fire_wake) and send the READY
 * slots as FIREs.  It uses almost no CPU, so that, when the LM's loop is
 * a CPU-bound task waiting for its turn (a flood of collections), the
 * scheduler still owes the thread its share when a firing comes: the
 * firing does not wait for the loop (doc/PERFORMANCE.md).  That holds
 * inside the process only: the kernel's autogroups share one turn among
 * a session's tasks, and the LM's session is the busy loop's; so the
 * thread asks for SCHED_FIFO (priority 1), which takes it out of that
 * share, where the LM may (root, CAP_SYS_NICE, RLIMIT_RTPRIO); else it
 * stays an ordinary thread (said in the debug log).  Its work is bounded
 * either way: each wake takes at most the 64 slots and one send; a send
 * is followed by a pause (LM_FIRE_GAP_NS) during which the slots it freed
 * fill again and further matches are counted missed in them, so that a
 * rule matching record after record costs its writers a wake and the LM
 * a send at most every LM_FIRE_GAP_NS, not one each (without the pause,
 * the thread freed each slot at once and the writers paid a system call
 * a match: four times slower); and a wake that found nothing is followed
 * by a pause too (LM_FIRE_IDLE_NS), so that a writer waking it in a loop
 * cannot keep it running.
 *
 * Who owns what:
 *  - The fire link's peer belongs to the loop: it connects, makes the
 *    handshake, reads (only to learn that the link closed: the MM sends
 *    nothing after WELCOME) and frees it.  Once the handshake is made, its
 *    output is empty (the MM's WELCOME answers the LM's last message),
 *    and from then on only the thread writes on its socket: whole FIRE
 *    frames, by send() on the socket as the loop made it, non-blocking:
 *    a link whose socket buffer is full (an MM that does not read it, a
 *    cut link) fails the send at once and is broken, below; the loop
 *    never writes on it again.
 *  - firer.mu guards `fd` (the socket the thread may write on, -1: none),
 *    `held` and `broken`.  The thread holds it while it takes slots and
 *    sends them; the loop takes it to give or take back the socket
 *    (before the peer is freed: the thread never writes on a closed or
 *    reused descriptor) and to send slots with the data itself.  So at
 *    most one of them takes slots at a time, and a slot is sent once.
 *  - fd == -1 (no link, not yet, or lost): the thread takes no slot; it
 *    wakes the loop (a byte on firer.poke) when one is READY, and the
 *    loop sends it with the data, as before the fire link (or leaves it
 *    while no MM is ready).  The loop may wait for mu while the thread
 *    sends: microseconds (the send never blocks).  A send that fails on
 *    the link: the frames
 *    not written whole go to `held`, the thread gives up the socket
 *    (broken) and wakes the loop, which drops the link and sends `held`
 *    with the data.
 *  - The thread reads the segment, which stays attached until it is
 *    joined: it is started as a step of the LM's life after the segment
 *    (LM_MADE_FIRER) and stopped (quit, a wake, joined) when that step
 *    is finished, before the segment is, on every exit path (lm_unmake).
 *    It blocks every signal (the loop takes them) and takes no lock but
 *    mu, allocates nothing and logs nothing: the LM's forks (its guard)
 *    copy only the loop's thread, which never holds mu across a fork.
 *  - If the thread cannot be started, the LM does not start (it could not
 *    hear firings: writers no longer write a note).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <time.h>

#include <event2/event.h>

#include "lm.h"
#include "net/peer.h"
#include "net/wire.h"
#include "util/clock.h"
#include "util/log.h"

/* A FIRE's payload: rule, pid, tid, eid, ts, missed. */
#define FIRE_LEN	32u
#define FIRE_FRAME	(WIRE_HDR + FIRE_LEN)
/* Frames the thread could not send, for the loop; beyond, dropped
 * (logged: it takes a link lost 64 times over with every slot READY). */
#define HELD_MAX	(2 * SEG_PLAN_ROWS)
/* The thread's wait, at most: a wake lost is found this late. */
#define LM_FIRE_WAIT_NS	100000000u
/* After a wake that found nothing to send: a pause, so that a writer
 * that only wakes the thread (scribbling) cannot keep it running. */
#define LM_FIRE_IDLE_NS	100000u
/* After a send: a pause, so that a rule firing on every record is sent at
 * most this often (its other matches counted missed); a firing waits this
 * much more at most. */
#define LM_FIRE_GAP_NS	500000u

struct lm_firer {
	pthread_t		th;
	struct seg_hdr		*seg;
	pthread_mutex_t		mu;
	int			fd;		/* mu: the link's socket, or -1 */
	int			broken;		/* mu: the thread gave it up */
	int			err;		/* mu: why (errno) */
	uint32_t		nheld;		/* mu */
	uint32_t		dropped;	/* mu: held frames that did not fit */
	unsigned char		held[HELD_MAX][FIRE_LEN];
	int			poke[2];	/* the thread wakes the loop */
	struct event		*poke_ev;
	_Atomic int		quit;
};

/* Takes READY slot i: its FIRE payload into buf, the slot freed; 0 if it
 * was not READY, else FIRE_LEN. */
static size_t
slot_take(struct seg_hdr *s, uint32_t i, unsigned char *buf)
{
	struct seg_fire *f = &s->fire[i];
	struct wire_wr w;
	uint32_t rule, pid, tid;
	int32_t eid;
	uint64_t ts, missed;

	if (atomic_load_explicit(&f->state, memory_order_acquire) !=
	    SEG_FIRE_READY)
		return 0;
	rule = f->rule;
	pid = f->pid;
	tid = f->tid;
	eid = f->eid;
	ts = f->ts;
	missed = atomic_exchange_explicit(&f->missed, 0, memory_order_relaxed);
	/* The fields are read: a writer may take the slot again. */
	atomic_store_explicit(&f->state, SEG_FIRE_FREE, memory_order_release);
	wire_wr_init(&w, buf, FIRE_LEN);
	wire_put_u32(&w, rule);
	wire_put_u32(&w, pid);
	wire_put_u32(&w, tid);
	wire_put_u32(&w, (uint32_t)eid);
	wire_put_u64(&w, ts);
	wire_put_u64(&w, missed);
	return FIRE_LEN;
}

/* Whether a slot is READY. */
static int
any_ready(struct seg_hdr *s)
{
	uint32_t i;

	for (i = 0; i < SEG_PLAN_ROWS; i++)
		if (atomic_load_explicit(&s->fire[i].state,
		    memory_order_relaxed) == SEG_FIRE_READY)
			return 1;
	return 0;
}

/* Wakes the loop (its poke event); a byte already waiting is enough. */
static void
poke(struct lm_firer *t)
{
	char c = 0;

	(void)write(t->poke[1], &c, 1);
}

/* Keeps a FIRE payload for the loop (mu held). */
static void
hold(struct lm_firer *t, const unsigned char *payload)
{
	if (t->nheld < HELD_MAX)
		memcpy(t->held[t->nheld++], payload, FIRE_LEN);
	else
		t->dropped++;
}

/* The thread: every READY slot as a FIRE on the link, in one send;
 * returns how many it took (0: the wake was for nothing). */
static size_t
firer_scan(struct lm_firer *t)
{
	unsigned char buf[SEG_PLAN_ROWS * FIRE_FRAME];
	size_t n = 0, done = 0, at;
	ssize_t r;
	uint32_t i;

	pthread_mutex_lock(&t->mu);
	if (t->fd == -1) {
		n = (size_t)any_ready(t->seg);
		if (n > 0)
			poke(t);	/* the loop sends them with the data */
		pthread_mutex_unlock(&t->mu);
		return n;
	}
	for (i = 0; i < SEG_PLAN_ROWS; i++)
		if (slot_take(t->seg, i, buf + n + WIRE_HDR) != 0) {
			wire_header(buf + n, WIRE_FIRE, FIRE_LEN);
			n += FIRE_FRAME;
		}
	while (done < n) {
		r = send(t->fd, buf + done, n - done, MSG_NOSIGNAL);
		if (r > 0)
			done += (size_t)r;
		else if (r == -1 && errno == EINTR)
			continue;
		else {
			/* The frames not written whole go with the data;
			 * the link is the loop's to drop. */
			t->err = r == 0 ? EPIPE : errno;
			for (at = done - done % FIRE_FRAME; at < n;
			    at += FIRE_FRAME)
				hold(t, buf + at + WIRE_HDR);
			t->fd = -1;
			t->broken = 1;
			poke(t);
			break;
		}
	}
	pthread_mutex_unlock(&t->mu);
	return n;
}

static void *
firer_main(void *arg)
{
	struct lm_firer *t = arg;
	struct timespec idle = { 0, LM_FIRE_IDLE_NS };
	struct timespec gap = { 0, LM_FIRE_GAP_NS };
	uint32_t seen, last = 0;

	for (;;) {
		/* The word before the slots: a firing marked READY after
		 * this load moves it, and the wait returns at once. */
		seen = atomic_load_explicit(&t->seg->fire_seq,
		    memory_order_acquire);
		if (atomic_load_explicit(&t->quit, memory_order_acquire))
			break;
		/* After a send, a pause: matches meanwhile are counted
		 * missed in the slots.  Woken for nothing (the word moved,
		 * no slot READY): a shorter one before the next look. */
		if (firer_scan(t) > 0)
			nanosleep(&gap, NULL);
		else if (seen != last)
			nanosleep(&idle, NULL);
		last = seen;
		seg_fire_wait(t->seg, seen, LM_FIRE_WAIT_NS);
	}
	return NULL;
}

/* The loop: the thread woke it (a firing while the link is not the
 * thread's, or the link broken). */
static void
poke_cb(evutil_socket_t fd, short what, void *arg)
{
	struct lm *lm = arg;
	struct lm_firer *t = lm->firer;
	char b[64];
	int broken, err;

	(void)what;
	while (read(fd, b, sizeof b) > 0)
		;
	pthread_mutex_lock(&t->mu);
	broken = t->broken;
	err = t->err;
	t->broken = 0;
	pthread_mutex_unlock(&t->mu);
	if (broken && lm->fire != NULL) {
		log_info("fire link to %s: %s: firings go with the data",
		    lm->mm_id, strerror(err));
		lm_fire_drop(lm);
	}
	lm_plan_scan(lm);
}

int
lm_firer_start(struct lm *lm)
{
	struct sched_param rt = { .sched_priority = 1 };
	struct lm_firer *t;
	sigset_t all, old;
	int rc;

	if ((t = calloc(1, sizeof *t)) == NULL) {
		log_warn("firing thread: no memory");
		return -1;
	}
	t->seg = lm->seg;
	t->fd = -1;
	if (pipe2(t->poke, O_CLOEXEC | O_NONBLOCK) != 0) {
		log_warn("firing thread: pipe: %s", strerror(errno));
		free(t);
		return -1;
	}
	if (pthread_mutex_init(&t->mu, NULL) != 0 ||
	    (t->poke_ev = event_new(lm->base, t->poke[0], EV_READ |
	    EV_PERSIST, poke_cb, lm)) == NULL ||
	    event_add(t->poke_ev, NULL) != 0) {
		log_warn("firing thread: cannot watch its pipe");
		goto fail;
	}
	/* Signals go to the loop's thread only. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&t->th, NULL, firer_main, t);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		log_warn("firing thread: %s", strerror(rc));
		goto fail;
	}
	(void)pthread_setname_np(t->th, "lm-fire");	/* for ps, tests */
	/* Its turn at once, not its process's: see the header comment. */
	rc = pthread_setschedparam(t->th, SCHED_FIFO, &rt);
	log_debug("firing thread: %s", rc == 0 ? "real-time (SCHED_FIFO 1)" :
	    "not real-time (not allowed): it waits for its process's turn");
	lm->firer = t;
	return 0;
fail:
	if (t->poke_ev != NULL)
		event_free(t->poke_ev);
	close(t->poke[0]);
	close(t->poke[1]);
	free(t);
	return -1;
}

void
lm_firer_stop(struct lm *lm)
{
	struct lm_firer *t = lm->firer;
	uint32_t i;

	if (t == NULL)
		return;
	atomic_store_explicit(&t->quit, 1, memory_order_release);
	seg_fire_wake(t->seg);
	pthread_join(t->th, NULL);
	lm->firer = NULL;
	/* What it could not send goes with the data, if it still can. */
	if (t->nheld > 0 && lm->mm != NULL && lm->mm_state == LM_LINK_READY)
		for (i = 0; i < t->nheld; i++)
			peer_send(lm->mm, WIRE_FIRE, t->held[i], FIRE_LEN,
			    NULL, 0);
	event_free(t->poke_ev);
	close(t->poke[0]);
	close(t->poke[1]);
	pthread_mutex_destroy(&t->mu);
	free(t);
}

/* The loop's own scan, with the data (mu held, or no thread): what the
 * thread held, then every READY slot. */
static void
scan_data(struct lm *lm, struct lm_firer *t)
{
	unsigned char buf[FIRE_LEN];
	uint32_t i, n = 0;

	if (t != NULL) {
		for (i = 0; i < t->nheld; i++)
			peer_send(lm->mm, WIRE_FIRE, t->held[i], FIRE_LEN,
			    NULL, 0);
		n = t->nheld;
		t->nheld = 0;
		if (t->dropped > 0)
			log_warn("fire link to %s: %u firings lost with it",
			    lm->mm_id, t->dropped);
		t->dropped = 0;
	}
	for (i = 0; i < SEG_PLAN_ROWS; i++)
		if (slot_take(lm->seg, i, buf) != 0) {
			peer_send(lm->mm, WIRE_FIRE, buf, FIRE_LEN, NULL, 0);
			n++;
		}
	if (n > 0)
		log_debug("plan: %u firing%s sent with the data", n,
		    n == 1 ? "" : "s");
}

void
lm_plan_scan(struct lm *lm)
{
	struct lm_firer *t = lm->firer;

	if (lm->seg == NULL || lm->mm_state != LM_LINK_READY)
		return;		/* kept in the slots until it is */
	if (t == NULL) {	/* no thread (stopped): the loop alone */
		scan_data(lm, NULL);
		return;
	}
	pthread_mutex_lock(&t->mu);
	if (t->fd != -1) {
		/* The thread's: woken if a slot waits (the writers wake it
		 * themselves; this is for one it has not seen yet, not a
		 * system call every millisecond of the loop's long work). */
		pthread_mutex_unlock(&t->mu);
		if (any_ready(lm->seg))
			seg_fire_wake(lm->seg);
		return;
	}
	scan_data(lm, t);
	pthread_mutex_unlock(&t->mu);
}

/* The handshake is made: the link's socket is the thread's to write. */
static void
fire_give(struct lm *lm)
{
	struct lm_firer *t = lm->firer;
	int fd = peer_fd(lm->fire);

	if (t == NULL || fd == -1)
		return;		/* the loop sends with the data */
	pthread_mutex_lock(&t->mu);
	t->fd = fd;
	t->broken = 0;
	pthread_mutex_unlock(&t->mu);
	/* Firings that waited for it. */
	seg_fire_wake(lm->seg);
}

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
		fire_give(lm);
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
	struct lm_firer *t = lm->firer;

	/* The thread lets go of the socket before it is closed. */
	if (t != NULL) {
		pthread_mutex_lock(&t->mu);
		t->fd = -1;
		t->broken = 0;
		pthread_mutex_unlock(&t->mu);
	}
	peer_free(lm->fire);
	lm->fire = NULL;
	lm->fire_ready = 0;
}

void
lm_fire_poll(struct lm *lm)
{
	uint64_t now = clk_mono_ns();

	if (now - lm->fire_polled < LM_FIRE_POLL_NS)
		return;
	lm->fire_polled = now;
	/* Firings go with the data from here while the thread has no link
	 * (not made, or broken by the thread during this long work: the
	 * loop hears of it only after); with one, the thread is woken. */
	lm_plan_scan(lm);
	lm_mm_poll(lm);
}
