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

/* User event ids are 0 .. GRM_EID_MAX - 1. */
#define GRM_EID_MAX	65536

/* Longest string argument, in bytes, and most fields in one format. */
#define GRM_STR_MAX	1024
#define GRM_ARGS_MAX	16

/*
 * Defines event type eid.  format is a printf-style list of conversions
 * (%d %i %u %x %ld %lu %lx %lld %llu %f %g %e %c %s); text between
 * conversions is kept in the definition but not in records.  dsc is a
 * description (may be NULL).  Defining the same eid again with the same
 * format is allowed; with another format it fails with GRM_EREDEF.
 */
int GMI_DefineEvent(int eid, const char *format, const char *dsc);

/* Records one event of type eid; the arguments follow the type's format. */
int GMI_Event(int eid, ...);

/*
 * Block (procedure range) events.  A block id is any int; GMI_DefineBlock
 * gives it a name for PROVE.  Begin and end must nest within a thread.
 */
int GMI_DefineBlock(int bid, const char *name);
int GMI_BlockBegin(int bid);
int GMI_BlockEnd(int bid);

/* Whether this process is being traced (1) or not (0). */
int GMI_Traced(void);

#ifdef __cplusplus
}
#endif

#endif /* GRM_H */
