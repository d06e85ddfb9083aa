/* SPDX-License-Identifier: MIT */
/* ex_walk.h: what the timeline exports (json, paje) share: a survey of the
 * trace (hosts, processes, threads, block names, matched messages) and a
 * second pass that hands each thing to the format in time order. */
#ifndef GRM_EX_WALK_H
#define GRM_EX_WALK_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "pv.h"
#include "pv_export.h"

/*
 * Memory grows with hosts, processes, threads, block ids and names, the
 * open blocks of each thread, and the message channels and the messages
 * in flight (ex_msgs, below); never with the other records nor with the
 * messages; #PROC lines are kept, to be put in time order.  The trace is
 * read twice (standard input only if it is a regular file); three times
 * if its messages must be kept (ex_msgs.keep).
 */

/*
 * ---- ex_msg.c: messages matched as they stream ----
 *
 * The rule is prove stats's (pv_msgs_match, doc/formats.md 1.9): on each
 * channel (sender rank, receiver rank, tag), the k-th send in time order
 * meets the k-th receive, for k < min(sends, receives); messages of a
 * process with no rank are not matched.  Pass 1 (ex_msgs_ev) counts the
 * sends and receives of each channel, and pairs them first in, first out
 * in the file's order: a receive that comes before its send in the file
 * waits in its channel's queue, and is then noted with its send's index
 * (first).  That is the rule when each end of a channel with a match is
 * one process's, its times never go back in the file, and each process
 * has its (last) rank at its first message; else ex_msgs_plan sets keep.
 * Pass 2 (ex_msgs_at) tells at each send or receive whether it is
 * matched (the k-th of its channel, for k < min) and gives both ends the
 * send's index among the trace's sends, which waits in the channel's
 * queue from the send to its receive.
 *
 * Memory: the channels and processes, and 8 bytes per message in flight:
 * in pass 2, sent but not yet received in the file; in pass 1, received
 * with no send yet (the receives never matched among them, until the end
 * of the pass), and about 50 bytes per receive that comes before its send;
 * never the other messages.  With keep, the export keeps every message
 * record instead to match them (pv_msgs, about 90 bytes each), in a pass
 * of its own.
 */

/* A queue of 64-bit values. */
struct ex_q {
	uint64_t	*v;
	size_t		head;
	size_t		n;
	size_t		cap;
};

/* A channel (sender rank, receiver rank, tag). */
struct ex_chan {
	uint64_t	nsnd;		/* of pass 1 */
	uint64_t	nrcv;
	uint64_t	sproc;		/* node << 32 | pid of an end */
	uint64_t	rproc;
	int		has_s;
	int		has_r;
	int		several;	/* processes at an end */
	int		backwards;	/* an end's times go back in the file */
	uint64_t	slast;		/* their latest */
	uint64_t	rlast;
	uint64_t	ahead;		/* pass 1: sends no receive met yet */
	struct ex_q	wait;		/* pass 1: receives no send met yet */
	uint64_t	ksnd;		/* pass 2: passed */
	uint64_t	krcv;
	struct ex_q	fly;		/* pass 2: ids sent, not received */
};

struct ex_msgs {
	struct pv_map	procs;		/* (node, pid) -> rank, pass 1 */
	struct pv_map	rt;		/* (receiver rank, tag) -> id */
	struct pv_map	chan;		/* (sender rank, rt id) -> ex_chan */
	struct pv_map	first;		/* (receive's index, 0) -> its send's,
					   for receives before their send */
	uint64_t	nsnd;		/* every send, receive */
	uint64_t	nrcv;
	uint64_t	matched;
	int		keep;		/* match with pv_msgs instead */
	uint64_t	ksnd;		/* pass 2: passed */
	uint64_t	krcv;
};

/* Pass 1: a send or receive (m->kind PV_SEND or PV_RECV), g holding the
 * processes' ranks so far.  0, or -1 if out of memory. */
int ex_msgs_ev(struct ex_msgs *c, const struct pv_msgs *g,
	       const struct grmtrace_ev *ev, const struct pv_mark *m);
/* After pass 1, with the processes' ranks in g: matched and keep.  0, or
 * -1 if out of memory. */
int ex_msgs_plan(struct ex_msgs *c, const struct pv_msgs *g);
/* Pass 2, each send or receive in the file's order: 1 and its id in *id
 * if it is matched, 0 if not, -1 if out of memory. */
int ex_msgs_at(struct ex_msgs *c, const struct pv_msgs *g,
	       const struct grmtrace_ev *ev, const struct pv_mark *m,
	       uint64_t *id);
void ex_msgs_free(struct ex_msgs *c);

struct ex_host {
	uint32_t	node;
	uint32_t	seq;		/* 1, 2, ... in order first seen */
	char		*name;		/* #HOST name, or NULL */
};

struct ex_proc {
	uint32_t	node;
	uint32_t	pid;
	uint32_t	seq;		/* 1, 2, ... in order first seen */
	struct ex_host	*host;
	int		ended;		/* an exit or kill was given */
	char		*label;		/* "name rank R", "prog pid P", ... */
};

/* A block id, or a BEE range or function (id: its name's id). */
struct ex_blk {
	int64_t		id;
	int		range;
	uint32_t	seq;		/* 1, 2, ... in order first begun */
	char		*name;		/* "block 7" if it was never named */
	size_t		len;
};

struct ex_frame {
	struct ex_blk	*b;
	uint64_t	ts;		/* its begin */
};

struct ex_thr {
	uint32_t	node;
	uint32_t	pid;
	uint32_t	tid;
	uint32_t	seq;		/* 1, 2, ... in order first seen */
	struct ex_proc	*proc;
	struct ex_frame	*st;		/* open blocks */
	size_t		depth;
	size_t		cap;
	int		any;		/* a time was handed out: */
	uint64_t	last;		/* the latest (relative) */
};

/* A #PROC line, kept from pass 1: the file may have it before records
 * of earlier times (mainmon writes a collection's #PROC lines first),
 * and it is handed out in time order with them. */
struct ex_pev {
	uint64_t	ts;
	uint64_t	seq;		/* order in the file */
	uint32_t	node;
	uint32_t	pid;
	uint32_t	ppid;
	int		how;		/* enum grmtrace_how */
	int32_t		status;
	char		*prog;		/* NUL-terminated */
	size_t		len;
};

struct ex_walk;

/* What a format does with each thing, in the file's order (which is time
 * order but for late records).  Each returns 0, or -1 after setting
 * w->what (and w->eno).  ts are trace-relative: ns since w->run.t0. */
struct ex_ops {
	/* Before the first thing: hosts, processes, threads, blocks known. */
	int	(*head)(struct ex_walk *w);
	int	(*begin)(struct ex_walk *w, struct ex_thr *t, struct ex_blk *b,
			 uint64_t ts);
	/* b ends; its begin was at t0 (relative too). */
	int	(*end)(struct ex_walk *w, struct ex_thr *t, struct ex_blk *b,
		       uint64_t t0, uint64_t ts);
	/* A send (send 1) or receive; m->match says if it was matched: both
	 * ends of a matched message have one id, the send's index among the
	 * trace's sends: i at the send, m->match - 1 at the receive. */
	int	(*msg)(struct ex_walk *w, struct ex_thr *t, int send,
		       const struct pv_msg *m, size_t i, uint64_t ts);
	/* Another record (a user event, a preload record, a collection
	 * phase of process 0: t is then NULL). */
	int	(*event)(struct ex_walk *w, struct ex_thr *t,
			 const struct grmtrace_ev *ev, uint64_t ts);
	/* A #PROC line, a #LOSS line (t NULL if the thread has no record). */
	int	(*proc)(struct ex_walk *w, struct ex_proc *p,
			const struct ex_pev *e, uint64_t ts);
	int	(*loss)(struct ex_walk *w, struct ex_proc *p, struct ex_thr *t,
			const struct grmtrace_ev *ev, uint64_t ts);
	/* After the last: the blocks still open have been ended at w->run.t1. */
	int	(*tail)(struct ex_walk *w);
};

struct ex_walk {
	const struct pv_export	*x;
	const char		*fmt;		/* "json", for messages */
	FILE			*out;
	struct pv_xrun		run;		/* progress, origin (run.t0,
						   run.t1), #CLOCK, records
						   (run.total) */
	char			*mm;		/* #MM identifier, or NULL */
	uint64_t		losses;
	struct pv_map		hosts;		/* (node, 0) */
	struct pv_map		procs;		/* (node, pid) */
	struct pv_map		thrs;		/* (node << 32 | pid, tid) */
	struct pv_map		blks;		/* (id, range) */
	uint32_t		nbegun;		/* of them, begun */
	struct pv_strs		names;		/* of ranges and functions */
	struct pv_sym		sym;
	struct pv_msgs		msgs;		/* processes; messages if
						   xm.keep */
	struct ex_msgs		xm;
	struct ex_pev		*pev;		/* #PROC lines, by time */
	size_t			npev;
	size_t			cpev;
	size_t			kpev;		/* passed */
	size_t			ksnd;		/* sends and receives passed */
	size_t			krcv;
	/* Counted in pass 2, said once on stderr at the end. */
	uint64_t		bad_ends;	/* ends of no open block */
	uint64_t		auto_ends;	/* blocks ended by another's end
						   or by the end of the trace */
	uint64_t		backwards;	/* times moved to a later one:
						   the file's (paje; the
						   thread's: run.clamped) */
	const char		*what;		/* of an error */
	int			eno;
	void			*arg;		/* the format's */
};

/*
 * Runs an export: surveys x->in, creates x->out safely, calls ops in order
 * and renames the file into place.  Returns prove's exit status (0, or 1
 * after a message, with nothing left at x->out).
 */
int ex_walk_run(const struct pv_export *x, const char *fmt,
		const struct ex_ops *ops, void *arg);

/* Sets w->what to "out of memory"; returns -1. */
int ex_oom(struct ex_walk *w);

/* The name of the format's type of a record (its definition's
 * description, or "eid N" in buf). */
const char *ex_ev_name(const struct grmtrace_ev *ev, char *buf, size_t n);

/* Relative time ts (ns) as decimal text: microseconds with 3 decimals
 * (us 1) or seconds with 9 (us 0), exact; buf of n >= 32 bytes (else
 * ""). */
const char *ex_time(char *buf, size_t n, uint64_t ts, int us);
/* Writes v in decimal at p (20 bytes at most); returns the end. */
char *ex_u64(char *p, uint64_t v);

#endif
