/* SPDX-License-Identifier: MIT */
/*
 * lm_fire.c: how a plan's firing leaves the LM and its action comes back
 * (doc/plans.md 4.4, doc/protocol.md 1.13): the fire link, a second
 * connection to the Main Monitor that carries FIREs (and CONTROL_ACKs)
 * to it and the actions it decides (CONTROL, PLAN, SIGNAL) from it; the
 * firing thread, which sends the FIREs on it; and the link thread, which
 * reads it and applies the actions at once, whatever the loop is doing.
 *
 * The firing thread (lm-fire) does nothing but wait on the segment's
 * firing word (seg_fire_wait; writers wake it, seg_fire_wake) and send
 * the READY slots as FIREs.  It uses almost no CPU, so that, when the
 * LM's loop is a CPU-bound task waiting for its turn (a flood of
 * collections), the scheduler still owes the thread its share when a
 * firing comes: the firing does not wait for the loop
 * (doc/PERFORMANCE.md).  That holds inside the process only: the
 * kernel's autogroups share one turn among a session's tasks, and the
 * LM's session is the busy loop's; so the thread asks for SCHED_FIFO
 * (priority 1), which takes it out of that share, where the LM may
 * (root, CAP_SYS_NICE, RLIMIT_RTPRIO); else it stays an ordinary thread
 * (said in the debug log).  Its work is bounded either way: each wake
 * takes at most the 64 slots and one send; a send is followed by a pause
 * (LM_FIRE_GAP_NS) during which the slots it freed fill again and
 * further matches are counted missed in them, so that a rule matching
 * record after record costs its writers a wake and the LM a send at most
 * every LM_FIRE_GAP_NS, not one each; and a wake that found nothing is
 * followed by a pause too (LM_FIRE_IDLE_NS), so that a writer waking it
 * in a loop cannot keep it running.
 *
 * The link thread (lm-act, SCHED_FIFO 1 too where allowed) waits in
 * poll() on the link (its own duplicate of the socket) and on a pipe
 * (firer.wake): it reads mainmon's CONTROL, PLAN and SIGNAL and applies
 * them (the control words, the plan rows, kill(2)) under the act lock,
 * queues a CONTROL's CONTROL_ACK behind the FIREs, and tells the loop
 * (notes, below), which logs what was done; and it writes what the
 * socket could not take when it is writable again.
 *
 * Who owns what:
 *  - The fire link's peer belongs to the loop: it connects, makes the
 *    handshake and frees it.  Once the handshake is made, the loop stops
 *    reading it (what it read with WELCOME it applies itself, and
 *    answers on the data link) and, at its next turn, gives the socket
 *    to the threads (fd, a new gen): from then on only the threads write
 *    on it (whole frames, by send(), non-blocking) and only the link
 *    thread reads it.
 *  - firer.mu, the act lock, guards fd, gen, out (the frames waiting for
 *    the socket), held, broken, notes and pids, and is held by whoever
 *    applies an action (the loop's lm_control_apply, lm_plan_apply and
 *    the TSC calibration's update too): so an action is applied by one
 *    of them at a time, and a state (a CONTROL, a PLAN) only if it is
 *    newer than the one in place (lm.h: ctl_round, plan_seq); the writes
 *    into the segment (control words and plan rows relaxed, then the
 *    release add to its ctl word that the writers acquire) are the same
 *    whoever makes them, and the lock orders one applier's after the
 *    other's, so the generation moves once per state applied.  Each
 *    action comes on one link and is applied once, by that link's reader;
 *    an `enable for D` is undone by mainmon's next CONTROL, never by the
 *    LM itself: nothing is applied or undone twice.
 *  - The firing thread holds mu while it takes slots and sends them; the
 *    loop takes it to give or take back the socket (before the peer is
 *    freed: the threads never write on a closed or reused descriptor;
 *    the link thread reads its own duplicate, closed when it sees gen
 *    move) and to send slots with the data itself.  So at most one of
 *    them takes slots at a time, and a slot is sent once.
 *  - A full socket (mainmon not reading for a while) does not break the
 *    link: what send() did not take stays in out (at most LM_FIRE_OUT
 *    bytes; meanwhile slots are left READY and further matches counted
 *    missed in them) and the link thread writes it when the socket is
 *    writable, then wakes the firing thread.  The socket's send buffer
 *    is kept small (LM_FIRE_SNDBUF): firings wait in the LM, counted,
 *    not in the kernel.
 *  - fd == -1 (no link, not yet, or lost): the firing thread takes no
 *    slot; it wakes the loop (a byte on firer.poke) when one is READY,
 *    and the loop sends it with the data, as before the fire link (or
 *    leaves it while no MM is ready).  A send that fails, an end or a
 *    message out of rule on the link: the FIREs in out go to `held`,
 *    the CONTROL_ACKs are dropped (mainmon sends a CONTROL again on the
 *    data link when it sees the link close), the threads give up the
 *    socket (broken) and wake the loop, which drops the link and sends
 *    `held` with the data.
 *  - The threads read the segment, which stays attached until they are
 *    joined: they are started as a step of the LM's life after the
 *    segment (LM_MADE_FIRER) and stopped (quit, a wake, joined) when
 *    that step is finished, before the segment is, on every exit path
 *    (lm_unmake).  They block every signal (the loop takes them), take
 *    no lock but mu, allocate nothing and log nothing: the LM's forks
 *    (its guard) copy only the loop's thread, which never holds mu
 *    across a fork.
 *  - If they cannot be started, the LM does not start (it could not
 *    hear firings: writers no longer write a note).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <time.h>

#include <event2/event.h>

#include "lm.h"
#include "net/loop.h"
#include "net/peer.h"
#include "net/wire.h"
#include "util/clock.h"
#include "util/log.h"

/* A FIRE's payload: rule, pid, tid, eid, ts, missed. */
#define FIRE_LEN	32u
#define FIRE_FRAME	(WIRE_HDR + FIRE_LEN)
/* A CONTROL_ACK's: round, t_lm. */
#define ACK_LEN		12u
#define ACK_FRAME	(WIRE_HDR + ACK_LEN)
/* Frames waiting for the socket, at most; FIREs leave the last
 * LM_FIRE_ACK_ROOM bytes to CONTROL_ACKs. */
#define LM_FIRE_OUT	16384u
#define LM_FIRE_ACK_ROOM (16u * ACK_FRAME)
/* The link's send buffer (setsockopt; the kernel doubles it). */
#define LM_FIRE_SNDBUF	8192
/* Frames the threads could not send, for the loop: what out holds, and
 * the slots; beyond, dropped (logged). */
#define HELD_MAX	(LM_FIRE_OUT / FIRE_FRAME + 2 * SEG_PLAN_ROWS)
/* A message from mainmon on the link, at most (a PLAN: 64 rows of 8
 * comparisons and 8 KiB of strings; a CONTROL: 8.7 KiB). */
#define LM_FIRE_IN	(64u << 10)
/* What the link thread tells the loop, at most, between two of its
 * turns; traced processes it may signal without asking the loop. */
#define NOTES_MAX	256
#define PIDS_MAX	4096
/* The thread's wait, at most: a wake lost is found this late. */
#define LM_FIRE_WAIT_NS	100000000u
/* After a wake that found nothing to send: a pause, so that a writer
 * that only wakes the thread (scribbling) cannot keep it running. */
#define LM_FIRE_IDLE_NS	100000u
/* After a send: a pause, so that a rule firing on every record is sent at
 * most this often (its other matches counted missed); a firing waits this
 * much more at most. */
#define LM_FIRE_GAP_NS	500000u

/* What the link thread did, for the loop to log and finish: a CONTROL
 * applied (a: round; b: its ACK left to the loop), a PLAN (a: its rows),
 * a SIGNAL (a: rule, b: pid, c: what; err: kill's errno, or -1: not
 * known to be attached here, the loop looks). */
struct fire_note {
	uint16_t	type;
	uint8_t		applied;	/* 0: older than the one in place */
	uint32_t	a, b, c;
	uint64_t	t;
	int		err;
};

struct lm_firer {
	pthread_t		th;		/* lm-fire */
	pthread_t		lt;		/* lm-act */
	int			lt_started;
	struct lm		*lm;
	struct seg_hdr		*seg;
	pthread_mutex_t		mu;		/* the act lock */
	int			fd;		/* mu: the link's socket, or -1 */
	uint32_t		gen;		/* mu: moves with fd */
	int			broken;		/* mu: the threads gave it up */
	int			err;		/* mu: why (errno; 0: closed) */
	const char		*bad;		/* mu: a message out of rule */
	unsigned char		out[LM_FIRE_OUT]; /* mu: whole frames */
	size_t			nout;		/* mu: bytes in out */
	size_t			sent;		/* mu: of them, sent */
	int			lt_out;		/* mu: lm-act polls for out */
	uint64_t		fulls;		/* mu: times out had to wait */
	uint64_t		fulls_said;	/* the loop's: logged up to */
	uint32_t		nheld;		/* mu */
	uint32_t		dropped;	/* mu: held frames that did not fit */
	unsigned char		held[HELD_MAX][FIRE_LEN];
	struct fire_note	notes[NOTES_MAX];	/* mu */
	uint32_t		nnotes;		/* mu */
	uint32_t		notes_lost;	/* mu */
	uint32_t		pids[PIDS_MAX];	/* mu: attached processes */
	uint32_t		npids;		/* mu */
	int			pids_over;	/* mu: some not in pids */
	int			poke[2];	/* the threads wake the loop */
	struct event		*poke_ev;
	int			wake[2];	/* anyone wakes lm-act */
	unsigned char		in[LM_FIRE_IN];	/* lm-act's */
	size_t			nin;		/* lm-act's */
	/* mu: what the loop read of the link after WELCOME and did not
	 * dispatch (a message's beginning), for lm-act to go on from. */
	unsigned char		pre[LM_FIRE_IN];
	size_t			npre;
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

/* Wakes the link thread (the link given or taken, out to watch, quit). */
static void
wake_link(struct lm_firer *t)
{
	char c = 0;

	(void)write(t->wake[1], &c, 1);
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

/* The length of the frame at out[at] (a whole one: put there by us). */
static size_t
frame_len(const struct lm_firer *t, size_t at, uint16_t *type)
{
	const unsigned char *h = t->out + at;

	*type = (uint16_t)(h[6] | h[7] << 8);
	return WIRE_HDR + ((size_t)h[8] | (size_t)h[9] << 8 |
	    (size_t)h[10] << 16 | (size_t)h[11] << 24);
}

/* The socket is given up or taken back (mu held): the FIREs out holds
 * (the first too if partly sent: its connection ends with it) go to
 * held, for the data link; its CONTROL_ACKs are dropped (mainmon sends
 * the CONTROL again on the data link when it sees the link close). */
static void
out_to_held(struct lm_firer *t)
{
	size_t at, len;
	uint16_t type;

	for (at = 0; at < t->nout; at += len) {
		len = frame_len(t, at, &type);
		if (type == WIRE_FIRE)
			hold(t, t->out + at + WIRE_HDR);
	}
	t->nout = t->sent = 0;
}

/* The threads give up the link (mu held): err (0: mainmon closed it), or
 * bad (a message out of rule); the loop drops it. */
static void
give_up(struct lm_firer *t, int err, const char *bad)
{
	if (t->fd == -1)
		return;
	out_to_held(t);
	t->err = err;
	t->bad = bad;
	t->fd = -1;
	t->gen++;
	t->broken = 1;
	poke(t);
	wake_link(t);
}

/* Writes what out holds as far as the socket takes it (mu held): what
 * it does not take waits for the link thread, which watches the socket
 * for room; an error gives the link up. */
static void
out_flush(struct lm_firer *t)
{
	size_t at, len;
	uint16_t type;
	ssize_t r;

	while (t->fd != -1 && t->sent < t->nout) {
		r = send(t->fd, t->out + t->sent, t->nout - t->sent,
		    MSG_NOSIGNAL | MSG_DONTWAIT);
		if (r > 0) {
			t->sent += (size_t)r;
			continue;
		}
		if (r == -1 && errno == EINTR)
			continue;
		if (r == -1 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (!t->lt_out) {
				t->fulls++;
				t->lt_out = 1;
				wake_link(t);
				poke(t);	/* the loop says it */
			}
			break;
		}
		give_up(t, r == 0 ? EPIPE : errno, NULL);
		return;
	}
	/* The frames sent whole leave out. */
	for (at = 0; at < t->sent; at += len) {
		len = frame_len(t, at, &type);
		if (at + len > t->sent)
			break;
	}
	if (at > 0) {
		memmove(t->out, t->out + at, t->nout - at);
		t->nout -= at;
		t->sent -= at;
	}
}

/* Queues one frame in out (mu held); 0, or -1 if it has no room for it
 * below limit. */
static int
out_put(struct lm_firer *t, uint16_t type, const void *payload, size_t len,
	size_t limit)
{
	if (t->nout + WIRE_HDR + len > limit)
		return -1;
	wire_header(t->out + t->nout, type, (uint32_t)len);
	memcpy(t->out + t->nout + WIRE_HDR, payload, len);
	t->nout += WIRE_HDR + len;
	return 0;
}

/* The thread: every READY slot as a FIRE on the link, in one send, as
 * far as out has room; returns how many it took (0: the wake was for
 * nothing, or out is full). */
static size_t
firer_scan(struct lm_firer *t)
{
	unsigned char buf[FIRE_LEN];
	size_t n = 0;
	uint32_t i;

	pthread_mutex_lock(&t->mu);
	if (t->fd == -1) {
		n = (size_t)any_ready(t->seg);
		if (n > 0)
			poke(t);	/* the loop sends them with the data */
		pthread_mutex_unlock(&t->mu);
		return n;
	}
	for (i = 0; i < SEG_PLAN_ROWS; i++) {
		if (t->nout + FIRE_FRAME > LM_FIRE_OUT - LM_FIRE_ACK_ROOM)
			break;	/* left READY: sent when there is room */
		if (slot_take(t->seg, i, buf) != 0) {
			(void)out_put(t, WIRE_FIRE, buf, FIRE_LEN,
			    LM_FIRE_OUT);
			n++;
		}
	}
	if (n > 0 && !t->lt_out)
		out_flush(t);
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

/* Whether note n leaves work to the loop, not only a line to log: a
 * CONTROL's acknowledgement (a round waits for it), a SIGNAL to a process
 * the thread does not know. */
static int
note_duty(const struct fire_note *n)
{
	return (n->type == WIRE_CONTROL && n->b) ||
	    (n->type == WIRE_SIGNAL && n->err == -1);
}

/* Tells the loop what the link thread did (mu held).  Full, a note with
 * work in it takes the place of one that is only to be logged. */
static void
note(struct lm_firer *t, const struct fire_note *n)
{
	uint32_t i;

	if (t->nnotes < NOTES_MAX) {
		t->notes[t->nnotes++] = *n;
		return;
	}
	t->notes_lost++;
	if (!note_duty(n))
		return;
	for (i = 0; i < NOTES_MAX; i++)
		if (!note_duty(&t->notes[i])) {
			t->notes[i] = *n;
			return;
		}
}

/* Whether process pid is attached to this LM, as far as the link thread
 * knows (mu held): 1 yes, 0 no, -1 the loop must look. */
static int
pid_known(const struct lm_firer *t, uint32_t pid)
{
	uint32_t i;

	for (i = 0; i < t->npids; i++)
		if (t->pids[i] == pid)
			return 1;
	return t->pids_over ? -1 : 0;
}

/* A SIGNAL from the link (mu held): the process stopped or continued
 * now if it is one of this LM's (as lm_plan_signal). */
static const char *
act_signal(struct lm_firer *t, struct wire_rd *msg, struct fire_note *n)
{
	int k;

	n->a = wire_get_u32(msg);	/* rule */
	n->b = wire_get_u32(msg);	/* pid */
	n->c = wire_get_u32(msg);	/* what */
	if (!wire_rd_end(msg))
		return "a field cut short";
	if (n->c != WIRE_SIGNAL_STOP && n->c != WIRE_SIGNAL_CONT)
		return "neither stop nor continue";
	k = n->b == 0 ? 0 : pid_known(t, n->b);
	n->applied = k == 1;
	n->err = k == -1 ? -1 : 0;
	if (k == 1 && kill((pid_t)n->b, n->c == WIRE_SIGNAL_STOP ? SIGSTOP :
	    SIGCONT) != 0)
		n->err = errno;
	return NULL;
}

/* One message of mainmon's on the link, applied (mu held); NULL, or what
 * is wrong with it. */
static const char *
act(struct lm_firer *t, uint16_t type, const unsigned char *p, uint32_t len)
{
	unsigned char ack[ACK_LEN];
	struct fire_note n;
	struct wire_rd msg;
	struct wire_wr w;
	const char *wrong;
	int applied = 0;

	memset(&n, 0, sizeof n);
	n.type = type;
	wire_rd_init(&msg, p, len);
	switch (type) {
	case WIRE_CONTROL:
		wrong = lm_control_put(t->lm, &msg, &n.a, &applied);
		if (wrong != NULL)
			return wrong;
		n.applied = (uint8_t)applied;
		n.t = lm_now(t->lm);
		wire_wr_init(&w, ack, sizeof ack);
		wire_put_u32(&w, n.a);
		wire_put_u64(&w, n.t);
		/* Behind the FIREs waiting; no room: the loop sends it on
		 * the data link. */
		n.b = out_put(t, WIRE_CONTROL_ACK, ack, ACK_LEN,
		    LM_FIRE_OUT) != 0;
		if (!t->lt_out)
			out_flush(t);
		break;
	case WIRE_PLAN:
		wrong = lm_plan_put(t->lm, &msg, &n.a, &applied);
		if (wrong != NULL)
			return wrong;
		n.applied = (uint8_t)applied;
		break;
	case WIRE_SIGNAL:
		if ((wrong = act_signal(t, &msg, &n)) != NULL)
			return wrong;
		break;
	default:
		return "not an action";
	}
	note(t, &n);
	poke(t);
	return NULL;
}

/* Reads what the link holds and applies each whole message (lm-act,
 * its descriptor fd of generation gen). */
static void
link_read(struct lm_firer *t, int fd, uint32_t gen)
{
	char why[160];
	const char *bad = NULL, *w;
	size_t off = 0;
	uint32_t len;
	uint16_t type;
	ssize_t r;

	r = recv(fd, t->in + t->nin, sizeof t->in - t->nin, MSG_DONTWAIT);
	if (r == -1 && (errno == EAGAIN || errno == EWOULDBLOCK ||
	    errno == EINTR))
		return;
	if (r <= 0) {
		pthread_mutex_lock(&t->mu);
		if (t->gen == gen)
			give_up(t, r == 0 ? 0 : errno, NULL);
		pthread_mutex_unlock(&t->mu);
		return;
	}
	t->nin += (size_t)r;
	while (t->nin - off >= WIRE_HDR) {
		if (wire_parse_header(t->in + off, &type, &len, &w) != 0) {
			bad = "a header out of rule";
			break;
		}
		if (len > sizeof t->in - WIRE_HDR) {
			bad = "a message too long";
			break;
		}
		if (t->nin - off < WIRE_HDR + (size_t)len)
			break;
		if (wire_check(type, WIRE_BY_MM, WIRE_BY_FIRE, WIRE_ST_READY,
		    len, why, sizeof why) != 0) {
			bad = "a message out of its rule";
			break;
		}
		pthread_mutex_lock(&t->mu);
		if (t->gen != gen) {	/* taken back: mainmon sends it again */
			pthread_mutex_unlock(&t->mu);
			t->nin = 0;
			return;
		}
		bad = act(t, type, t->in + off + WIRE_HDR, len);
		pthread_mutex_unlock(&t->mu);
		if (bad != NULL)
			break;
		off += WIRE_HDR + len;
	}
	if (bad != NULL) {
		pthread_mutex_lock(&t->mu);
		if (t->gen == gen)
			give_up(t, EPROTO, bad);
		pthread_mutex_unlock(&t->mu);
		t->nin = 0;
		return;
	}
	memmove(t->in, t->in + off, t->nin - off);
	t->nin -= off;
}

/* The link thread: the link's input, and its output when the socket
 * was full. */
static void *
link_main(void *arg)
{
	struct lm_firer *t = arg;
	struct pollfd pf[2];
	uint32_t gen = 0;
	int fd = -1, nfd;
	char b[64];

	for (;;) {
		pthread_mutex_lock(&t->mu);
		if (atomic_load_explicit(&t->quit, memory_order_acquire)) {
			pthread_mutex_unlock(&t->mu);
			break;
		}
		if (t->gen != gen) {
			/* Given or taken back: our own descriptor of the
			 * socket, so that the loop may close its own. */
			if (fd != -1)
				close(fd);
			fd = -1;
			/* What the loop read and left: the link's next
			 * bytes. */
			memcpy(t->in, t->pre, t->npre);
			t->nin = t->npre;
			t->npre = 0;
			if (t->fd != -1 && (fd = fcntl(t->fd, F_DUPFD_CLOEXEC,
			    0)) == -1)
				give_up(t, errno, NULL);
			gen = t->gen;
		}
		t->lt_out = fd != -1 && t->sent < t->nout;
		pf[1].fd = fd;
		pf[1].events = (short)(POLLIN | (t->lt_out ? POLLOUT : 0));
		pthread_mutex_unlock(&t->mu);
		pf[0].fd = t->wake[0];
		pf[0].events = POLLIN;
		pf[0].revents = pf[1].revents = 0;
		nfd = poll(pf, fd != -1 ? 2 : 1, -1);
		if (nfd <= 0)
			continue;
		if (pf[0].revents != 0)
			while (read(t->wake[0], b, sizeof b) > 0)
				;
		if (fd == -1)
			continue;
		if (pf[1].revents & POLLOUT) {
			pthread_mutex_lock(&t->mu);
			if (t->gen == gen) {
				t->lt_out = 0;
				out_flush(t);
				/* Room again: slots left READY meanwhile. */
				if (t->sent == t->nout && any_ready(t->seg))
					seg_fire_wake(t->seg);
			}
			pthread_mutex_unlock(&t->mu);
		}
		if (pf[1].revents & (POLLIN | POLLHUP | POLLERR))
			link_read(t, fd, gen);
	}
	if (fd != -1)
		close(fd);
	return NULL;
}

/* The loop: what the link thread did, logged and finished. */
static void
notes_take(struct lm *lm, struct lm_firer *t)
{
	static struct fire_note n[NOTES_MAX];
	uint32_t i, k, lost;
	uint64_t fulls;

	pthread_mutex_lock(&t->mu);
	k = t->nnotes;
	memcpy(n, t->notes, k * sizeof n[0]);
	t->nnotes = 0;
	lost = t->notes_lost;
	t->notes_lost = 0;
	fulls = t->fulls;
	pthread_mutex_unlock(&t->mu);
	if (fulls != t->fulls_said)
		log_debug("fire link to %s: its socket was full %llu time%s: "
		    "what it did not take was kept and sent after",
		    lm->mm_id, (unsigned long long)fulls, fulls == 1 ? "" :
		    "s");
	t->fulls_said = fulls;
	if (lost > 0)
		log_warn("fire link to %s: %u actions applied and not logged",
		    lm->mm_id, lost);
	for (i = 0; i < k; i++)
		switch (n[i].type) {
		case WIRE_CONTROL:
			log_debug("control round %u %s by the firing thread",
			    n[i].a, n[i].applied ? "applied" :
			    "older than the one in place: left");
			if (n[i].b)
				lm_control_ack(lm, n[i].a, n[i].t);
			break;
		case WIRE_PLAN:
			log_debug("plan: %u watched row%s%s by the firing "
			    "thread", n[i].a, n[i].a == 1 ? "" : "s",
			    n[i].applied ? "" : " (older: left)");
			break;
		case WIRE_SIGNAL:
			if (n[i].err == -1) {
				/* Not in the thread's list (full): the
				 * loop's. */
				unsigned char b[12];
				struct wire_wr w;
				struct wire_rd r;

				wire_wr_init(&w, b, sizeof b);
				wire_put_u32(&w, n[i].a);
				wire_put_u32(&w, n[i].b);
				wire_put_u32(&w, n[i].c);
				wire_rd_init(&r, b, w.len);
				(void)lm_plan_signal(lm, &r);
			} else if (!n[i].applied)
				log_info("plan %u: process %u is not attached "
				    "here: not %s", n[i].a, n[i].b,
				    n[i].c == WIRE_SIGNAL_STOP ? "stopped" :
				    "continued");
			else if (n[i].err != 0)
				log_warn("plan %u: cannot signal process %u: "
				    "%s", n[i].a, n[i].b, strerror(n[i].err));
			else
				log_info("plan %u: process %u %s by the firing "
				    "thread", n[i].a, n[i].b,
				    n[i].c == WIRE_SIGNAL_STOP ? "stopped" :
				    "continued");
			break;
		}
}

/* The loop: the threads woke it (a firing while the link is not theirs,
 * the link broken, actions applied). */
static void
poke_cb(evutil_socket_t fd, short what, void *arg)
{
	struct lm *lm = arg;
	struct lm_firer *t = lm->firer;
	const char *bad;
	char b[64];
	int broken, err;

	(void)what;
	while (read(fd, b, sizeof b) > 0)
		;
	notes_take(lm, t);
	pthread_mutex_lock(&t->mu);
	broken = t->broken;
	err = t->err;
	bad = t->bad;
	t->broken = 0;
	pthread_mutex_unlock(&t->mu);
	if (broken && lm->fire != NULL) {
		if (bad != NULL)
			log_info("fire link to %s: %s: closed; firings go "
			    "with the data", lm->mm_id, bad);
		else
			log_info("fire link to %s: %s: firings go with the "
			    "data", lm->mm_id, err == 0 ? "closed by the main "
			    "monitor" : strerror(err));
		lm_fire_drop(lm);
	}
	lm_plan_scan(lm);
}

void
lm_act_lock(struct lm *lm)
{
	if (lm->firer != NULL)
		pthread_mutex_lock(&lm->firer->mu);
}

void
lm_act_unlock(struct lm *lm)
{
	if (lm->firer != NULL)
		pthread_mutex_unlock(&lm->firer->mu);
}

void
lm_firer_pid(struct lm *lm, uint32_t pid, int on)
{
	struct lm_firer *t = lm->firer;
	uint32_t i;

	if (t == NULL)
		return;
	pthread_mutex_lock(&t->mu);
	for (i = 0; i < t->npids && t->pids[i] != pid; i++)
		;
	if (on && i == t->npids) {
		if (t->npids < PIDS_MAX)
			t->pids[t->npids++] = pid;
		else
			t->pids_over = 1;
	} else if (!on && i < t->npids)
		t->pids[i] = t->pids[--t->npids];
	pthread_mutex_unlock(&t->mu);
}

/* A thread with every signal blocked (they go to the loop's), named,
 * real-time if allowed; 0, or an error number. */
static int
thread_start(pthread_t *th, void *(*fn)(void *), void *arg,
	     const char *name, int *rt)
{
	struct sched_param p = { .sched_priority = 1 };
	sigset_t all, old;
	int rc;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(th, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0)
		return rc;
	(void)pthread_setname_np(*th, name);	/* for ps, tests */
	/* Its turn at once, not its process's: see the header comment. */
	*rt = pthread_setschedparam(*th, SCHED_FIFO, &p) == 0;
	return 0;
}

/* The handshake is made and what came with it dispatched: the link's
 * socket is the threads'. */
static void
give_cb(void *arg)
{
	struct lm *lm = arg;
	struct lm_firer *t = lm->firer;
	int fd = lm->fire_ready ? peer_fd(lm->fire) : -1;
	int sz = LM_FIRE_SNDBUF;
	size_t pre;

	if (t == NULL || fd == -1)
		return;		/* the loop sends with the data */
	/* Firings wait in out, counted, not in the kernel. */
	(void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof sz);
	pthread_mutex_lock(&t->mu);
	/* A message whose beginning the loop read with WELCOME: the link
	 * thread goes on from it. */
	if ((pre = peer_take_input(lm->fire, t->pre, sizeof t->pre)) ==
	    SIZE_MAX) {
		pthread_mutex_unlock(&t->mu);
		log_info("fire link to %s: a message too long: closed",
		    lm->mm_id);
		lm_fire_drop(lm);
		return;
	}
	t->npre = pre;
	t->fd = fd;
	t->gen++;
	t->broken = 0;
	t->nout = t->sent = 0;
	t->lt_out = 0;
	pthread_mutex_unlock(&t->mu);
	wake_link(t);
	/* Firings that waited for it. */
	seg_fire_wake(lm->seg);
}

int
lm_firer_start(struct lm *lm)
{
	struct lm_firer *t;
	int rc, rt = 0, rt2 = 0;

	if ((t = calloc(1, sizeof *t)) == NULL) {
		log_warn("firing thread: no memory");
		return -1;
	}
	t->lm = lm;
	t->seg = lm->seg;
	t->fd = -1;
	t->poke[0] = t->poke[1] = t->wake[0] = t->wake[1] = -1;
	if (pipe2(t->poke, O_CLOEXEC | O_NONBLOCK) != 0 ||
	    pipe2(t->wake, O_CLOEXEC | O_NONBLOCK) != 0) {
		log_warn("firing thread: pipe: %s", strerror(errno));
		goto fail;
	}
	if (pthread_mutex_init(&t->mu, NULL) != 0 ||
	    (t->poke_ev = event_new(lm->base, t->poke[0], EV_READ |
	    EV_PERSIST, poke_cb, lm)) == NULL ||
	    event_add(t->poke_ev, NULL) != 0 ||
	    (lm->fire_give_ev == NULL && (lm->fire_give_ev =
	    loop_timer(lm->base, give_cb, lm)) == NULL)) {
		log_warn("firing thread: cannot watch its pipe");
		goto fail;
	}
	if ((rc = thread_start(&t->th, firer_main, t, "lm-fire", &rt)) != 0) {
		log_warn("firing thread: %s", strerror(rc));
		goto fail;
	}
	if ((rc = thread_start(&t->lt, link_main, t, "lm-act", &rt2)) != 0) {
		log_warn("firing thread's link thread: %s", strerror(rc));
		atomic_store(&t->quit, 1);
		seg_fire_wake(t->seg);
		pthread_join(t->th, NULL);
		goto fail;
	}
	t->lt_started = 1;
	log_debug("firing thread: %s", rt && rt2 ? "real-time (SCHED_FIFO 1)" :
	    "not real-time (not allowed): it waits for its process's turn");
	lm->firer = t;
	return 0;
fail:
	if (t->poke_ev != NULL)
		event_free(t->poke_ev);
	close(t->poke[0]);
	close(t->poke[1]);
	close(t->wake[0]);
	close(t->wake[1]);
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
	wake_link(t);
	pthread_join(t->th, NULL);
	pthread_join(t->lt, NULL);
	notes_take(lm, t);
	lm->firer = NULL;
	loop_ev_free(lm->fire_give_ev);
	lm->fire_give_ev = NULL;
	/* What they could not send goes with the data, if it still can. */
	out_to_held(t);
	if (t->nheld > 0 && lm->mm != NULL && lm->mm_state == LM_LINK_READY)
		for (i = 0; i < t->nheld; i++)
			peer_send(lm->mm, WIRE_FIRE, t->held[i], FIRE_LEN,
			    NULL, 0);
	event_free(t->poke_ev);
	close(t->poke[0]);
	close(t->poke[1]);
	close(t->wake[0]);
	close(t->wake[1]);
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

/* An action read by the loop with the handshake (before the link was the
 * threads'): applied here, a CONTROL answered on the data link; NULL, or
 * what is wrong with it. */
static const char *
fire_act(struct lm *lm, uint16_t type, struct wire_rd *msg)
{
	char bad[160];

	if (wire_check(type, WIRE_BY_MM, WIRE_BY_FIRE, WIRE_ST_READY,
	    wire_rd_left(msg), bad, sizeof bad) != 0)
		return "out of place";
	log_debug("fire link to %s: %s read with the handshake: applied by "
	    "the loop", lm->mm_id, wire_type_name(type));
	return type == WIRE_CONTROL ? lm_control_apply(lm, msg) :
	    type == WIRE_PLAN ? lm_plan_apply(lm, msg) :
	    lm_plan_signal(lm, msg);
}

static void
fire_dispatch(struct peer *p, uint16_t type, struct wire_rd *msg,
	      const char *why, void *arg)
{
	struct lm *lm = arg;
	char bad[160], text[160];
	const char *wrong;
	uint32_t node;

	(void)p;
	if (msg == NULL) {
		log_info("fire link to %s: %s: firings go with the data",
		    lm->mm_id, why);
		lm_fire_drop(lm);
		return;
	}
	if (lm->fire_ready) {
		if ((wrong = fire_act(lm, type, msg)) == NULL &&
		    wire_rd_ok(msg))
			return;
		log_info("fire link to %s: %s (%u): %s: closed", lm->mm_id,
		    wire_type_name(type), type, wrong != NULL ? wrong :
		    "a field cut short");
		lm_fire_drop(lm);
		return;
	}
	if (wire_check(type, WIRE_BY_MM, WIRE_BY_FIRE, WIRE_ST_AUTH,
	    wire_rd_left(msg), bad, sizeof bad) != 0) {
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
		if (peer_is_local(lm->fire))
			log_debug("fire link to %s made (local door)",
			    lm->mm_id);
		else
			log_debug("fire link to %s made (port %d)", lm->mm_id,
			    lm_fire_port(lm));
		/* From now on the threads read it; what came with WELCOME
		 * is dispatched first (here), then it is theirs. */
		if (lm->firer != NULL) {
			peer_stop_reading(lm->fire);
			loop_soon(lm->fire_give_ev);
		}
		return;
	default:
		log_info("fire link to %s refused (%s): firings go with the "
		    "data", lm->mm_id, text);
		lm_fire_drop(lm);
		return;
	}
}

int
lm_fire_port(struct lm *lm)
{
	struct sockaddr_storage a;
	socklen_t len = sizeof a;
	int fd = peer_fd(lm->fire);

	if (fd == -1 || getsockname(fd, (struct sockaddr *)&a, &len) != 0)
		return 0;
	if (a.ss_family == AF_INET)
		return ntohs(((struct sockaddr_in *)&a)->sin_port);
	if (a.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)&a)->sin6_port);
	return 0;
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

	/* The threads let go of the socket before it is closed: the FIREs
	 * waiting in out go with the data. */
	if (t != NULL) {
		pthread_mutex_lock(&t->mu);
		if (t->fd != -1) {
			out_to_held(t);
			t->fd = -1;
			t->gen++;
		}
		t->npre = 0;
		t->broken = 0;
		pthread_mutex_unlock(&t->mu);
		wake_link(t);
	}
	if (lm->fire_give_ev != NULL)
		loop_disarm(lm->fire_give_ev);
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
