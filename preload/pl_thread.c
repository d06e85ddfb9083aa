/* SPDX-License-Identifier: MIT */
/* pl_thread.c: the preload library's thread wrappers: pthread_create runs
 * the start routine between a begin and an end record (a cleanup handler
 * records the end of a thread that calls pthread_exit or is cancelled),
 * and pthread_setname_np names the thread in the trace. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sched.h>
#include <stdio.h>
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
 * pthread_create returns (tid 0 until the thread fills it in); the thread
 * waits for that before it runs, so that its end always removes the
 * entry.  A thread named before it has filled in its id keeps the name
 * in its entry and records it itself, after its begin record: however
 * long it takes to be scheduled, the name is never recorded without it.
 */
#define PL_TIDS		1024
#define PL_NAME_MAX	16	/* the kernel's, with the NUL */
static struct {
	pthread_t	th;
	uint32_t	tid;
	int		used;
	char		name[PL_NAME_MAX];	/* "": none waiting */
} pl_tids[PL_TIDS];
static pthread_mutex_t pl_tids_lock = PTHREAD_MUTEX_INITIALIZER;

/* The entry of th, or -1; with pl_tids_lock held. */
static long
tid_find(pthread_t th)
{
	size_t i;

	for (i = 0; i < PL_TIDS; i++)
		if (pl_tids[i].used && pthread_equal(pl_tids[i].th, th))
			return (long)i;
	return -1;
}

/* Enters th, by its creator (the table full: not entered). */
static void
tid_enter(pthread_t th)
{
	size_t i;

	pthread_mutex_lock(&pl_tids_lock);
	for (i = 0; i < PL_TIDS; i++)
		if (!pl_tids[i].used) {
			pl_tids[i].th = th;
			pl_tids[i].tid = 0;
			pl_tids[i].name[0] = '\0';
			pl_tids[i].used = 1;
			break;
		}
	pthread_mutex_unlock(&pl_tids_lock);
}

/* The calling thread fills in its id; name gets the name it was given
 * before that ("": none). */
static void
tid_fill(uint32_t tid, char name[PL_NAME_MAX])
{
	long e;

	name[0] = '\0';
	pthread_mutex_lock(&pl_tids_lock);
	e = tid_find(pthread_self());
	if (e >= 0) {
		pl_tids[e].tid = tid;
		memcpy(name, pl_tids[e].name, PL_NAME_MAX);
		pl_tids[e].name[0] = '\0';
	}
	pthread_mutex_unlock(&pl_tids_lock);
}

static void
tid_drop(pthread_t th)
{
	long e;

	pthread_mutex_lock(&pl_tids_lock);
	e = tid_find(th);
	if (e >= 0)
		pl_tids[e].used = 0;
	pthread_mutex_unlock(&pl_tids_lock);
}

/* Records th's name with its kernel id (0: not a thread started here),
 * or leaves it to th if th has not filled in its id yet. */
static void
name_thread(pthread_t th, const char *name)
{
	uint32_t tid = 0;
	long e;

	if (pthread_equal(th, pthread_self())) {
		tid = pl_tid();
	} else {
		pthread_mutex_lock(&pl_tids_lock);
		e = tid_find(th);
		if (e >= 0 && pl_tids[e].tid == 0) {
			snprintf(pl_tids[e].name, PL_NAME_MAX, "%s", name);
			pthread_mutex_unlock(&pl_tids_lock);
			return;
		}
		if (e >= 0)
			tid = pl_tids[e].tid;
		pthread_mutex_unlock(&pl_tids_lock);
	}
	(void)GMI_PreloadEvent(REC_EID_PL_THR_NAME, tid, name);
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
	char name[PL_NAME_MAX];
	void *r;

	while (!atomic_load_explicit(&sp->ready, memory_order_acquire))
		sched_yield();
	s = *sp;
	free(sp);
	tid_fill(tid, name);
	(void)GMI_PreloadEvent(REC_EID_PL_THR_BEGIN, tid, s.ptid);
	if (name[0] != '\0')
		(void)GMI_PreloadEvent(REC_EID_PL_THR_NAME, tid, name);
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
	tid_enter(*th);
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
		name_thread(th, name);
	errno = saved;
	return r;
}
