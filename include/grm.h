/* SPDX-License-Identifier: MIT */
/* grm.h: the GMI instrumentation API of grm (client library libgrm). */
#ifndef GRM_H
#define GRM_H

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Tracing starts by itself: the first GMI call of a process reads GRM_MM
 * ("host:port" of a running mainmon) from the environment, finds or starts
 * the host's Local Monitor and attaches its shared segment.  Without GRM_MM
 * every call returns GRM_OK at once and nothing is recorded.
 *
 * Every call returns GRM_OK (0) or one of the negative codes below.  The
 * library never prints unless GRM_DEBUG is set in the environment, in which
 * case each error is explained by one line on stderr.
 */

#define GRM_OK		0
#define GRM_EINVAL	(-1)	/* bad argument (NULL format, eid out of range) */
#define GRM_EFORMAT	(-2)	/* format cannot be parsed or has too many fields */
#define GRM_EREDEF	(-3)	/* eid already defined with another format */
#define GRM_EUNDEF	(-4)	/* eid used before GMI_DefineEvent */
#define GRM_E2BIG	(-5)	/* string argument or record too long */
#define GRM_ELOST	(-6)	/* no buffer space in time: the event was counted as lost */
#define GRM_ETIMEDOUT	(-7)	/* GMI_Flush: delivery not confirmed in time */

/* User event ids are 0 .. GRM_EID_MAX - 1. */
#define GRM_EID_MAX	65536

/* Longest string argument, in bytes, and most fields in one format. */
#define GRM_STR_MAX	1024
#define GRM_ARGS_MAX	16

/*
 * Defines event type eid.  format is a printf-style list of conversions
 * (%d %i %u %x %o %ld %lu %lx %lld %llu %zu %f %g %e %c %p %s); text between
 * conversions is kept in the definition but not in records.  dsc is a
 * description (may be NULL).  Defining the same eid again with the same
 * format is allowed; with another format it fails with GRM_EREDEF.
 */
int GMI_DefineEvent(int eid, const char *format, const char *dsc);

/* Records one event of type eid; the arguments follow the type's format. */
int (GMI_Event)(int eid, ...);

/*
 * Block (procedure range) events.  A block id is any int; GMI_DefineBlock
 * gives it a name for PROVE.  Begin and end must nest within a thread.
 */
int GMI_DefineBlock(int bid, const char *name);
int (GMI_BlockBegin)(int bid);
int (GMI_BlockEnd)(int bid);

/*
 * Messages between processes, so that PROVE can draw them: peer is the
 * rank (GMI_SetName) of the process sent to or received from, tag the
 * program's message tag, size the bytes.  A send and a receive match by
 * (sender, receiver, tag), in order.
 */
int GMI_MessageSend(int peer, int tag, long size);
int GMI_MessageRecv(int peer, int tag, long size);

/* Names this process in the trace, with its rank (>= 0) among the job's
 * processes (an MPI rank, for example). */
int GMI_SetName(int rank, const char *name);

/*
 * Returns once everything this process recorded so far has reached the
 * Main Monitor (GRM_OK), or after about 5 seconds (GRM_ETIMEDOUT: the
 * records stay in the host's buffer and are delivered later).  Records
 * need no flush to survive the process's exit or crash; this call is for
 * programs that must know they were delivered.
 */
int GMI_Flush(void);

/* Whether this process is being traced (1) or not (0). */
int GMI_Traced(void);

/*
 * GMI_Event, GMI_BlockBegin and GMI_BlockEnd check inline whether
 * recording is on before calling the library, so that instrumentation
 * left in a program costs about a nanosecond when tracing is off.  As with
 * assert(), their arguments are then not evaluated.  Define GRM_NO_INLINE
 * before including grm.h to always call the functions.
 */
extern const volatile unsigned int *volatile GMI_on_;
#if !defined(GRM_NO_INLINE) && defined(__GNUC__)
#define GMI_Event(...) \
	(__builtin_expect(*GMI_on_ != 0, 1) ? (GMI_Event)(__VA_ARGS__) : GRM_OK)
#define GMI_BlockBegin(bid) \
	(__builtin_expect(*GMI_on_ != 0, 1) ? (GMI_BlockBegin)(bid) : GRM_OK)
#define GMI_BlockEnd(bid) \
	(__builtin_expect(*GMI_on_ != 0, 1) ? (GMI_BlockEnd)(bid) : GRM_OK)
#endif

#ifdef __cplusplus
}
#endif

#endif /* GRM_H */
