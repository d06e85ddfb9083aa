/* SPDX-License-Identifier: MIT */
/* pl_thread.c: the preload library's thread wrappers: pthread_create runs
 * the start routine between a begin and an end record (a cleanup handler
 * records the end of a thread that calls pthread_exit or is cancelled),
 * and pthread_setname_np names the thread in the trace. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "pl.h"

#define PL_API __attribute__((visibility("default")))

struct pl_start {
	void		*(*fn)(void *);
	void		*arg;
	uint32_t	ptid;	/* the creating thread's */
	_Atomic int	ready;	/* the creator entered the thread */
};

static __thread int pl_exiting;	/* this thread called pthread_exit */

/*
 * pthread_t to kernel id, for naming another thread: the threads started
 * through pthread_create.  The creator enters a new thread as soon as
 * pthread_create returns (tid 0 until the thread fills it in), so that
 * naming it at once waits (briefly) for its id rather than missing it;
 * the thread waits for that before it runs, so that its end always
 * removes the entry.
 */
#define PL_TIDS	1024
static struct {
	pthread_t	th;
	uint32_t	tid;
	int		used;
} pl_tids[PL_TIDS];
static pthread_mutex_t pl_tids_lock = PTHREAD_MUTEX_INITIALIZER;

/* Enters th (tid 0: by its creator) or fills in its tid. */
static void
tid_put(pthread_t th, uint32_t tid)
{
	size_t i, fr = PL_TIDS;

	pthread_mutex_lock(&pl_tids_lock);
	for (i = 0; i < PL_TIDS; i++) {
		if (pl_tids[i].used && pthread_equal(pl_tids[i].th, th)) {
			if (tid != 0)
				pl_tids[i].tid = tid;
			goto out;
		}
		if (!pl_tids[i].used && fr == PL_TIDS)
			fr = i;
	}
	if (fr < PL_TIDS) {
		pl_tids[fr].th = th;
		pl_tids[fr].tid = tid;
		pl_tids[fr].used = 1;
	}
out:
	pthread_mutex_unlock(&pl_tids_lock);
}

static void
tid_drop(pthread_t th)
{
	size_t i;

	pthread_mutex_lock(&pl_tids_lock);
	for (i = 0; i < PL_TIDS; i++)
		if (pl_tids[i].used && pthread_equal(pl_tids[i].th, th))
			pl_tids[i].used = 0;
	pthread_mutex_unlock(&pl_tids_lock);
}

/* th's kernel id; 0 if it is not a thread started here. */
static uint32_t
tid_of(pthread_t th)
{
	uint32_t tid = 0;
	size_t i;
	int tries, found;

	if (pthread_equal(th, pthread_self()))
		return pl_tid();
	for (tries = 0; tries < 10000; tries++) {
		found = 0;
		pthread_mutex_lock(&pl_tids_lock);
		for (i = 0; i < PL_TIDS; i++)
			if (pl_tids[i].used &&
			    pthread_equal(pl_tids[i].th, th)) {
				found = 1;
				tid = pl_tids[i].tid;
				break;
			}
		pthread_mutex_unlock(&pl_tids_lock);
		if (!found || tid != 0)
			break;
		sched_yield();	/* it has not run yet */
	}
	return tid;
}

static void
thread_end(uint32_t tid, int how)
{
	(void)GMI_PreloadEvent(REC_EID_PL_THR_END, tid, how);
	tid_drop(pthread_self());
}

/* Runs when the thread calls pthread_exit or is cancelled. */
static void
unwound(void *arg)
{
	uint32_t *tid = arg;

	thread_end(*tid, pl_exiting ? REC_PL_THR_EXIT : REC_PL_THR_CANCEL);
}

static void *
trampoline(void *p)
{
	struct pl_start *sp = p, s;
	uint32_t tid = pl_tid();
	void *r;

	while (!atomic_load_explicit(&sp->ready, memory_order_acquire))
		sched_yield();
	s = *sp;
	free(sp);
	tid_put(pthread_self(), tid);
	(void)GMI_PreloadEvent(REC_EID_PL_THR_BEGIN, tid, s.ptid);
	pthread_cleanup_push(unwound, &tid);
	r = s.fn(s.arg);
	pthread_cleanup_pop(0);
	thread_end(tid, REC_PL_THR_RETURN);
	return r;
}

PL_API int
pthread_create(pthread_t *th, const pthread_attr_t *attr,
	       void *(*fn)(void *), void *arg)
{
	int (*real)(pthread_t *, const pthread_attr_t *, void *(*)(void *),
	    void *) = pl_next("pthread_create");
	struct pl_start *s;
	int r;

	pl_init();
	if (!pl_active || !pl_threads)
		return real(th, attr, fn, arg);
	s = malloc(sizeof *s);
	if (s == NULL)
		return real(th, attr, fn, arg);
	s->fn = fn;
	s->arg = arg;
	s->ptid = pl_tid();
	atomic_init(&s->ready, 0);
	r = real(th, attr, trampoline, s);
	if (r != 0) {
		free(s);
		return r;
	}
	tid_put(*th, 0);
	atomic_store_explicit(&s->ready, 1, memory_order_release);
	return 0;
}

PL_API void
pthread_exit(void *ret)
{
	void (*real)(void *) = pl_next("pthread_exit");

	pl_exiting = 1;
	real(ret);
	__builtin_unreachable();
}

PL_API int
pthread_setname_np(pthread_t th, const char *name)
{
	int (*real)(pthread_t, const char *) = pl_next("pthread_setname_np");
	int r = real(th, name);
	int saved = errno;

	pl_init();
	if (r == 0 && pl_active && pl_threads)
		(void)GMI_PreloadEvent(REC_EID_PL_THR_NAME, tid_of(th), name);
	errno = saved;
	return r;
}
