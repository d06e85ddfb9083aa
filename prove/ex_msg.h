/* SPDX-License-Identifier: MIT */
/* ex_msg.h: the exports' matching of message sends with receives as the
 * trace streams (ex_msg.c), for the timeline exports and OTF2. */
#ifndef GRM_EX_MSG_H
#define GRM_EX_MSG_H

#include <stdint.h>
#include <stddef.h>

#include "pv.h"

/*
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
 * With pairs (OTF2), pass 1 also notes the matched messages that are not
 * MPI ones (ex_msgs_bad): received before sent, or an end not on its
 * process's first thread with a message (ex_msgs_mtid); it then keeps
 * the time of each send in flight too (24 bytes), and of each receive
 * waiting for its send.
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
	struct ex_q	sent;		/* pass 1, pairs: theirs (index, time,
					   on the message thread) */
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
	int		pairs;		/* note the pairs that are not MPI */
	struct pv_map	bad;		/* pairs: (send's index, 0) -> those */
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
 * (and its channel in *chp, if chp) if it is matched, 0 if not, -1 if out
 * of memory. */
int ex_msgs_at(struct ex_msgs *c, const struct pv_msgs *g,
	       const struct grmtrace_ev *ev, const struct pv_mark *m,
	       uint64_t *id, const struct ex_chan **chp);
/* With pairs: whether the message of id (matched) was noted in pass 1:
 * received before sent, or an end not on its process's message thread. */
int ex_msgs_bad(const struct ex_msgs *c, uint64_t id);
/* The thread of the first message of process (node, pid) in *tid: 1, or
 * 0 if it has none. */
int ex_msgs_mtid(const struct ex_msgs *c, uint32_t node, uint32_t pid,
		 uint32_t *tid);
/* With keep, in a pass of its own: the sends and receives of the first
 * total records of r (pass 1's) into g, matched (pv_msgs_match), and
 * matched set.  0; -1 on the reader's error, -2 out of memory, -3 if r
 * has fewer records (none said). */
int ex_msgs_keep(struct ex_msgs *c, struct pv_msgs *g, struct pv_strs *names,
		 struct pv_sym *sym, struct grmtrace *r, uint64_t total);
void ex_msgs_free(struct ex_msgs *c);

#endif
