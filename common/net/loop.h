/* SPDX-License-Identifier: MIT */
/* loop.h: the daemons' event loop, its signals and timers, wrapped once
 * (as peer.h wraps connections) for mainmon and localmon. */
#ifndef GRM_LOOP_H
#define GRM_LOOP_H

#include <stdint.h>

struct event_base;
struct loop_ev;

/*
 * The loop is libevent's base (peer.c and the listener take it).  A
 * daemon makes it at its start, runs it until loop_exit, and frees what
 * it made on it, then the loop, in reverse order.
 */
/* NULL if out of memory. */
struct event_base *loop_new(void);
/* Runs callbacks until loop_exit (or nothing is left to wait for). */
void loop_run(struct event_base *b);
/* loop_run returns once the callback running now has returned. */
void loop_exit(struct event_base *b);
void loop_free(struct event_base *b);

/*
 * A timer or a signal's handler, made disarmed; NULL if out of memory.
 * Callbacks run from the loop and get only their argument (a signal's
 * handler, the signal too).  loop_every's timer, once armed, fires every
 * ns it was armed with; loop_timer's once per arming.
 */
struct loop_ev *loop_timer(struct event_base *b, void (*cb)(void *arg),
			   void *arg);
struct loop_ev *loop_every(struct event_base *b, void (*cb)(void *arg),
			   void *arg);
struct loop_ev *loop_signal(struct event_base *b, int sig,
			    void (*cb)(int sig, void *arg), void *arg);
/* A timer fires ns from now (an armed one: the new time replaces the
 * old); a signal is handled from now on.  0, or -1 (nothing changed). */
int loop_arm(struct loop_ev *e, uint64_t ns);
/* A timer not armed already fires ns from now (an armed one keeps its
 * time). */
void loop_arm_idle(struct loop_ev *e, uint64_t ns);
/* Its callback runs at the loop's next turn (not from here). */
void loop_soon(struct loop_ev *e);
void loop_disarm(struct loop_ev *e);
int loop_armed(const struct loop_ev *e);
/* Disarms and frees e; NULL: nothing. */
void loop_ev_free(struct loop_ev *e);

#endif /* GRM_LOOP_H */
