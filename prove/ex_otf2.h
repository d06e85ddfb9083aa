/* SPDX-License-Identifier: MIT */
/* ex_otf2.h: prove export --to otf2: what its files share (ex_otf2.c: the
 * command, pass 1 and the archive; ex_otf2_evt.c: pass 2, the events;
 * ex_otf2_def.c: the definitions). */
#ifndef GRM_EX_OTF2_H
#define GRM_EX_OTF2_H

#include <stdint.h>

#include <otf2/otf2.h>

#include "pv.h"
#include "ex_msg.h"
#include "pv_export.h"

#define REGION_PHASE	2	/* a collection phase, in frame.range */

struct frame {
	int64_t		id;
	int		range;
	uint32_t	region;
};

struct thr {
	uint32_t	node;
	uint32_t	pid;
	uint32_t	tid;
	uint64_t	loc;		/* location id */
	uint64_t	last;		/* last time stamp written */
	int		any;		/* an event was written */
	OTF2_EvtWriter	*w;
	struct frame	*st;
	size_t		depth;
	size_t		cap;
};

struct proc {
	uint32_t	node;
	uint32_t	pid;
	size_t		seen;		/* order first met */
	size_t		first;		/* its first thread, index + 1 */
	size_t		host;		/* system tree node */
	int		holder;		/* holds its rank in the comm */
	int64_t		rank;
	int		has_mtid;	/* its messages' thread: the first */
	uint32_t	mtid;		/* with one (its rank's location) */
	uint64_t	mseq;
};

/* A region: a block id, a range's name id, or a phase. */
struct region {
	int64_t		id;
	int		range;
	uint32_t	ref;
	uint64_t	name;		/* string id, 0 until known */
};

/* A metric class: an event type (eid, scope and format) or one of ours. */
struct mclass {
	uint32_t	ref;
	uint8_t		n;
	uint32_t	member0;	/* its members: member0 .. + n */
	OTF2_Type	type[GRMTRACE_FIELDS_MAX];
	uint8_t		field[GRMTRACE_FIELDS_MAX];	/* record field */
	uint32_t	name;		/* string ref */
	uint32_t	mname[GRMTRACE_FIELDS_MAX];	/* members' */
};

struct ox {
	const struct pv_export *x;
	struct pv_strs	strs;		/* every OTF2 string: id - 1 */
	struct pv_strs	names;		/* pv_mark's range names */
	struct pv_sym	sym;
	struct pv_msgs	msgs;		/* processes; messages if xm.keep */
	struct ex_msgs	xm;		/* messages matched as they stream */
	struct pv_map	thx;		/* (node << 32 | pid, tid) -> thr */
	struct thr	**th;		/* by location */
	size_t		nth;
	struct pv_map	px;		/* (node, pid) -> struct proc */
	struct proc	**pr;
	size_t		npr;
	struct pv_map	hx;		/* (node, 0) -> host index + 1 */
	uint32_t	*hosts;		/* node of each */
	size_t		nhost;
	size_t		chost;
	struct pv_map	bnames;		/* (block id, 0) -> string id */
	struct pv_map	rx;		/* (id, range) -> struct region */
	uint32_t	nreg;
	struct pv_map	mx;		/* (key) -> struct mclass */
	uint32_t	nmclass;
	uint32_t	nmember;
	int64_t		*ranks;		/* distinct ranks, sorted */
	size_t		nranks;
	uint8_t		*sok;		/* per send, per receive: as MPI */
	uint8_t		*rok;
	size_t		isnd;		/* sends and receives seen, pass 2 */
	size_t		ircv;
	struct pv_xrun	run;		/* progress, time origin, #CLOCK */
	uint64_t	tmax;
	uint64_t	epoch;		/* wall-clock ns of t0, 0 if unknown */
	/* what could not be expressed */
	uint64_t	unmatched_end;	/* no block of its id open */
	uint64_t	closed_by;	/* closed by an enclosing one's end */
	uint64_t	unclosed;
	uint64_t	strfields;
	uint64_t	msg_metric;
	uint64_t	noloc;
	uint64_t	losses;
	OTF2_Archive	*ar;
};


/* Functions returning int return 0, or -1 after saying on stderr what
 * failed (out of memory, an OTF2 call), but for the passes' own. */

/* ex_otf2.c */
int ox_oom(void);
/* The OTF2 string ref of s[0..n), or of a printf-style text, interned in
 * o->strs (equal strings, one ref). */
int ox_sref(struct ox *o, const char *s, size_t n, uint32_t *ref);
int ox_sref_f(struct ox *o, uint32_t *ref, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Pass 1: the threads, processes, hosts, ranks, time span, #CLOCK and the
 * messages (ex_msgs).  0 at the end of the trace; -1 on the reader's
 * error, -2 out of memory (neither said yet). */
int ox_survey(struct ox *o, struct grmtrace *r);
/* After pass 1: the ranks' communicator, the locations' numbers, which
 * messages are written as MPI ones. */
int ox_plan(struct ox *o);
/* The index of rank in the communicator, or -1. */
int64_t ox_rank_ix(const struct ox *o, int64_t rank);

/* ex_otf2_evt.c */
/* Says what an OTF2 call failed with; returns -1. */
int ox_fail(const char *what, OTF2_ErrorCode e);
/* Gives t its event writer, if it has none. */
int ox_writer(struct ox *o, struct thr *t);
/* Pass 2: every record and #LOSS line as events.  0 at the end of the
 * trace; -1 on the reader's error (not said yet), -2 on another (said). */
int ox_write_events(struct ox *o, struct grmtrace *r);
/* Leaves the blocks still open at the end, at their thread's last time. */
int ox_close_open(struct ox *o);
/* How each process ended (r's processes), after its other events. */
int ox_proc_ends(struct ox *o, const struct grmtrace *r);
/* The thread (node, pid, tid), else the first of process (node, pid), else
 * NULL. */
struct thr *ox_proc_thr(struct ox *o, uint32_t node, uint32_t pid,
			uint32_t tid);

/* ex_otf2_def.c */
/* The global definitions: strings, clock, system tree, location groups,
 * locations (with their event counts: before the writers are closed),
 * regions, metrics, the communicator; hosts named from r. */
int ox_write_defs(struct ox *o, const struct grmtrace *r);

/* Returns ox_fail's -1 from the calling function (which has an
 * OTF2_ErrorCode e) if call fails. */
#define CK(call)	do { if ((e = (call)) != OTF2_SUCCESS) \
	return ox_fail(#call, e); } while (0)

#endif /* GRM_EX_OTF2_H */
