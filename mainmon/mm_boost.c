/* SPDX-License-Identifier: MIT */
/*
 * mm_boost.c: mainmon's turn when a firing comes (doc/plans.md 4.4).
 *
 * A FIRE that reaches mainmon while a flood fills the machine waits for
 * mainmon's thread to get a core: on a 2-core machine that thread, an
 * ordinary one in a session of its own, waited up to 25 ms behind the
 * writers and the Local Monitor (doc/PERFORMANCE.md, "mainmon's turn").
 * Running mainmon real-time all the time is not an answer: it is busy
 * for as long as the data come, and would take a core from them.
 *
 * So a thread (mm-boost, SCHED_FIFO 1) does nothing but wait for the fire
 * links to be readable.  When one is, it raises the loop's thread to
 * SCHED_FIFO 1 too, and waits: that thread, running at once, takes the
 * link's messages (in the loop, or every millisecond of a long piece of
 * work: mm_plan_poll), writes what the actions send, and asks mm-boost
 * to put it back to SCHED_OTHER (mm_boost_done); mm-boost does, and
 * watches again.  The loop does not lower itself: a thread that does so
 * under load is preempted at once, before it could wake mm-boost, which
 * then slept while FIREs came (traced: two, for 12 ms, until the loop's
 * next ordinary turn).  The loop asks only when no link has anything
 * left: nothing read and not yet handled (a link's messages read
 * together are handled one by one, the raise kept to the last), nothing
 * in a socket (what the raise was for may have come after what the loop
 * just took: traced, the loop lowered for an acknowledgement and the
 * FIRE behind it waited 14 ms for its ordinary turn).  A raise lasts
 * MM_BOOST_MAX_NS at most: past it mm-boost lowers the thread unasked
 * and waits MM_BOOST_COOL_NS before the next raise, so that a loop busy
 * elsewhere cannot hold a core real-time.  After each lowering mm-boost
 * pauses MM_BOOST_GAP_NS, so that a link the loop has not read to its
 * end yet is not raised for again and again.
 *
 * The raise has SCHED_RESET_ON_FORK: a command a plan runs (exec) starts
 * as an ordinary process.  Where mainmon may not use SCHED_FIFO (not
 * root, no CAP_SYS_NICE, no RLIMIT_RTPRIO), there is no mm-boost: the
 * fire links are read at the loop's turn, as before (said in the debug
 * log).
 *
 * The set of links is the loop's: it changes it under mu and wakes
 * mm-boost, which takes a copy with its generation; a poll's answer for a
 * generation that has changed meanwhile is thrown away (a link closed,
 * its descriptor maybe reused).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "mm.h"
#include "util/clock.h"
#include "util/log.h"

#ifndef SCHED_RESET_ON_FORK
#define SCHED_RESET_ON_FORK	0x40000000
#endif

#define MM_BOOST_LINKS		64		/* links watched at most */
#define MM_BOOST_MAX_NS		50000000	/* a raise at most: 50 ms */
#define MM_BOOST_COOL_NS	20000000	/* then none for 20 ms */
#define MM_BOOST_GAP_NS		200000		/* 0.2 ms after a lowering */

struct mm_boost {
	pthread_t	th;
	pid_t		loop_tid;	/* the loop's thread */
	int		wake[2];	/* the set changed, lowered, quit */
	pthread_mutex_t	mu;
	/* under mu: */
	int		fds[MM_BOOST_LINKS];
	unsigned	nfds;
	unsigned	gen;		/* moves with each change of fds */
	atomic_int	raised;		/* read by the loop unlocked too */
	int		lower_asked;	/* by the loop: it is done */
	int		quit;
	uint64_t	raises, forced, refused, full;
};

static int
set_policy(pid_t tid, int policy, int prio)
{
	struct sched_param p = { .sched_priority = prio };

	return (int)syscall(SYS_sched_setscheduler, tid,
	    policy | SCHED_RESET_ON_FORK, &p);
}

/* The loop back to SCHED_OTHER (mu held; by mm-boost, or once it is
 * joined). */
static void
lower(struct mm_boost *b)
{
	(void)set_policy(b->loop_tid, SCHED_OTHER, 0);
	b->raised = 0;
	b->lower_asked = 0;
}

static void
wake(struct mm_boost *b)
{
	char c = 0;

	(void)write(b->wake[1], &c, 1);
}

static void
drain(int fd)
{
	char buf[64];

	while (read(fd, buf, sizeof buf) > 0)
		;
}

static int
ms_left(uint64_t until)
{
	uint64_t now = clk_mono_ns();

	return now >= until ? 0 : (int)((until - now + 999999) / 1000000);
}

static void
nap(long ns)
{
	struct timespec ts = { 0, ns };

	nanosleep(&ts, NULL);
}

static void *
boost_main(void *arg)
{
	struct mm_boost *b = arg;
	struct pollfd pf[MM_BOOST_LINKS + 1];
	unsigned n, i, gen;
	uint64_t raised_at = 0, cool_until = 0;
	int raised, r;

	for (;;) {
		pthread_mutex_lock(&b->mu);
		if (b->quit) {
			pthread_mutex_unlock(&b->mu);
			break;
		}
		raised = b->raised;
		gen = b->gen;
		n = raised ? 0 : b->nfds;
		for (i = 0; i < n; i++) {
			pf[i].fd = b->fds[i];
			pf[i].events = POLLIN;
		}
		pthread_mutex_unlock(&b->mu);
		pf[n].fd = b->wake[0];
		pf[n].events = POLLIN;
		if (raised) {
			/* Until the loop asks to be lowered, MM_BOOST_MAX_NS
			 * at most. */
			r = poll(&pf[n], 1, ms_left(raised_at +
			    MM_BOOST_MAX_NS));
			if (r > 0)
				drain(b->wake[0]);
			pthread_mutex_lock(&b->mu);
			if (b->raised && b->lower_asked)
				lower(b);
			else if (r == 0 && b->raised &&
			    clk_mono_ns() - raised_at >= MM_BOOST_MAX_NS) {
				lower(b);
				b->forced++;
				cool_until = clk_mono_ns() + MM_BOOST_COOL_NS;
			}
			raised = b->raised;
			pthread_mutex_unlock(&b->mu);
			if (!raised)
				nap(MM_BOOST_GAP_NS);
			continue;
		}
		if (clk_mono_ns() < cool_until) {
			r = poll(&pf[n], 1, ms_left(cool_until));
			if (r > 0)
				drain(b->wake[0]);
			continue;
		}
		r = poll(pf, n + 1, -1);
		if (r <= 0)
			continue;
		if (pf[n].revents != 0)
			drain(b->wake[0]);
		for (i = 0; i < n; i++)
			if (pf[i].revents != 0)
				break;
		if (i == n)
			continue;
		pthread_mutex_lock(&b->mu);
		/* Not for a set that changed meanwhile; not twice. */
		if (gen == b->gen && !b->raised && !b->quit) {
			if (set_policy(b->loop_tid, SCHED_FIFO, 1) == 0) {
				b->raised = 1;
				b->raises++;
				raised_at = clk_mono_ns();
			} else {
				/* No longer allowed: the loop's turn, and
				 * not a busy wait on a readable link. */
				b->refused++;
				cool_until = clk_mono_ns() + MM_BOOST_COOL_NS;
			}
		}
		pthread_mutex_unlock(&b->mu);
	}
	return NULL;
}

/* mm-boost started, or NULL where it cannot be (said why, debug). */
static struct mm_boost *
boost_start(void)
{
	struct sched_param p = { .sched_priority = 1 };
	struct mm_boost *b;
	sigset_t all, old;
	pid_t tid = (pid_t)syscall(SYS_gettid);
	int rc;

	/* Whether this thread may be raised: tried, and undone. */
	if (set_policy(tid, SCHED_FIFO, 1) != 0) {
		log_debug("firings: no real-time turn for mainmon (%s): the "
		    "fire links are read at the loop's turn", strerror(errno));
		return NULL;
	}
	(void)set_policy(tid, SCHED_OTHER, 0);
	if ((b = calloc(1, sizeof *b)) == NULL)
		return NULL;
	b->loop_tid = tid;
	if (pipe2(b->wake, O_NONBLOCK | O_CLOEXEC) != 0) {
		free(b);
		return NULL;
	}
	pthread_mutex_init(&b->mu, NULL);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&b->th, NULL, boost_main, b);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		log_warn("cannot start a thread: %s (the fire links are read "
		    "at the loop's turn)", strerror(rc));
		close(b->wake[0]);
		close(b->wake[1]);
		pthread_mutex_destroy(&b->mu);
		free(b);
		return NULL;
	}
	(void)pthread_setname_np(b->th, "mm-boost");
	if ((rc = pthread_setschedparam(b->th, SCHED_FIFO, &p)) != 0)
		log_debug("firings: mm-boost is not real-time: %s",
		    strerror(rc));
	log_debug("firings: mainmon's loop is raised to SCHED_FIFO 1 while "
	    "it takes them (mm-boost)");
	return b;
}

void
mm_boost_watch(struct mm *mm, int fd, int on)
{
	struct mm_boost *b;
	unsigned i;

	if (fd < 0)
		return;
	if (on && mm->boost == NULL && !mm->boost_tried) {
		mm->boost_tried = 1;
		mm->boost = boost_start();
	}
	if ((b = mm->boost) == NULL)
		return;
	pthread_mutex_lock(&b->mu);
	for (i = 0; i < b->nfds && b->fds[i] != fd; i++)
		;
	if (on && i == b->nfds) {
		if (b->nfds < MM_BOOST_LINKS)
			b->fds[b->nfds++] = fd;
		else
			b->full++;	/* read at the loop's turn */
	} else if (!on && i < b->nfds)
		b->fds[i] = b->fds[--b->nfds];
	b->gen++;
	/* A raise for a link that closes: the loop is taking it now. */
	if (!on && b->raised)
		b->lower_asked = 1;
	pthread_mutex_unlock(&b->mu);
	wake(b);
}

int
mm_boost_raised(const struct mm *mm)
{
	return mm->boost != NULL && atomic_load_explicit(&mm->boost->raised,
	    memory_order_relaxed);
}

void
mm_boost_done(struct mm *mm)
{
	struct mm_boost *b = mm->boost;
	struct pollfd pf[MM_BOOST_LINKS];
	unsigned i, n;

	if (b == NULL || !atomic_load_explicit(&b->raised,
	    memory_order_relaxed))
		return;
	pthread_mutex_lock(&b->mu);
	/* Not while a link has bytes the loop has not read: what the
	 * raise was for may have come after what the loop just took. */
	for (n = 0; n < b->nfds; n++) {
		pf[n].fd = b->fds[n];
		pf[n].events = POLLIN;
	}
	if (n > 0 && poll(pf, n, 0) > 0)
		for (i = 0; i < n; i++)
			if (pf[i].revents & POLLIN) {
				pthread_mutex_unlock(&b->mu);
				return;
			}
	if (!b->raised || b->lower_asked) {	/* lowered meanwhile, or
						   asked already */
		pthread_mutex_unlock(&b->mu);
		return;
	}
	b->lower_asked = 1;
	pthread_mutex_unlock(&b->mu);
	wake(b);
	/* On one core, mm-boost (the same priority) runs only if the loop
	 * makes way. */
	sched_yield();
}

void
mm_boost_stop(struct mm *mm)
{
	struct mm_boost *b = mm->boost;

	if (b == NULL)
		return;
	pthread_mutex_lock(&b->mu);
	b->quit = 1;
	pthread_mutex_unlock(&b->mu);
	wake(b);
	pthread_join(b->th, NULL);
	if (b->raised)
		lower(b);
	log_debug("firings: the loop raised %llu times, %llu of them lowered "
	    "unasked after 50 ms (%llu raises refused, %llu links not "
	    "watched)",
	    (unsigned long long)b->raises, (unsigned long long)b->forced,
	    (unsigned long long)b->refused, (unsigned long long)b->full);
	close(b->wake[0]);
	close(b->wake[1]);
	pthread_mutex_destroy(&b->mu);
	free(b);
	mm->boost = NULL;
}
