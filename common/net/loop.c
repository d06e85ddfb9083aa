/* SPDX-License-Identifier: MIT */
/* loop.c: the daemons' event loop, its signals and timers, on libevent
 * (loop.h). */
#include <stdlib.h>

#include <event2/event.h>

#include "net/loop.h"

struct loop_ev {
	struct event	*ev;
	int		sig;		/* -1: a timer */
	void		(*cb)(void *arg);
	void		(*sig_cb)(int sig, void *arg);
	void		*arg;
};

struct event_base *
loop_new(void)
{
	return event_base_new();
}

void
loop_run(struct event_base *b)
{
	(void)event_base_dispatch(b);
}

void
loop_exit(struct event_base *b)
{
	(void)event_base_loopexit(b, NULL);
}

void
loop_free(struct event_base *b)
{
	if (b != NULL)
		event_base_free(b);
}

static void
fired(evutil_socket_t fd, short what, void *arg)
{
	struct loop_ev *e = arg;

	(void)what;
	if (e->sig >= 0)
		e->sig_cb((int)fd, e->arg);
	else
		e->cb(e->arg);
}

static struct loop_ev *
ev_new(struct event_base *b, int sig, short flags)
{
	struct loop_ev *e = calloc(1, sizeof *e);

	if (e == NULL)
		return NULL;
	e->sig = sig;
	e->ev = event_new(b, sig, flags, fired, e);
	if (e->ev == NULL) {
		free(e);
		return NULL;
	}
	return e;
}

struct loop_ev *
loop_timer(struct event_base *b, void (*cb)(void *arg), void *arg)
{
	struct loop_ev *e = ev_new(b, -1, 0);

	if (e != NULL) {
		e->cb = cb;
		e->arg = arg;
	}
	return e;
}

struct loop_ev *
loop_every(struct event_base *b, void (*cb)(void *arg), void *arg)
{
	struct loop_ev *e = ev_new(b, -1, EV_PERSIST);

	if (e != NULL) {
		e->cb = cb;
		e->arg = arg;
	}
	return e;
}

struct loop_ev *
loop_signal(struct event_base *b, int sig, void (*cb)(int sig, void *arg),
	    void *arg)
{
	struct loop_ev *e = ev_new(b, sig, EV_SIGNAL | EV_PERSIST);

	if (e != NULL) {
		e->sig_cb = cb;
		e->arg = arg;
	}
	return e;
}

int
loop_arm(struct loop_ev *e, uint64_t ns)
{
	struct timeval tv;

	if (e->sig >= 0)
		return event_add(e->ev, NULL);
	tv.tv_sec = (time_t)(ns / 1000000000u);
	tv.tv_usec = (suseconds_t)(ns % 1000000000u / 1000);
	return event_add(e->ev, &tv);
}

void
loop_arm_idle(struct loop_ev *e, uint64_t ns)
{
	if (!loop_armed(e))
		(void)loop_arm(e, ns);
}

void
loop_soon(struct loop_ev *e)
{
	event_active(e->ev, EV_TIMEOUT, 0);
}

void
loop_disarm(struct loop_ev *e)
{
	(void)event_del(e->ev);
}

int
loop_armed(const struct loop_ev *e)
{
	return event_pending(e->ev, EV_TIMEOUT | EV_SIGNAL, NULL) != 0;
}

void
loop_ev_free(struct loop_ev *e)
{
	if (e == NULL)
		return;
	event_free(e->ev);
	free(e);
}
