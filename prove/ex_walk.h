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
#include "ex_msg.h"

/*
 * Memory grows with hosts, processes, threads, block ids and names, the
 * open blocks of each thread, and the message channels and the messages
 * in flight (ex_msg.h); never with the other records nor with the
 * messages; #PROC lines are kept, to be put in time order.  The trace is
 * read twice (standard input only if it is a regular file); three times
 * if its messages must be kept (ex_msgs.keep).
 */


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
