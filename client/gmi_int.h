/* SPDX-License-Identifier: MIT */
/* gmi_int.h: the client library's internal state (hidden symbols). */
#ifndef GRM_GMI_INT_H
#define GRM_GMI_INT_H

#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>

#include "grm.h"
#include "rec/rec.h"
#include "shm/seg.h"
#include "util/clock.h"
#include "util/tsc.h"

#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)

#define GRM_API __attribute__((visibility("default")))

/* Process tracing state. */
enum { GMI_UNINIT = 0, GMI_ON = 1, GMI_OFF = 2 };

/*
 * Event ids the library knows: the predefined ones (-64 .. -1), the
 * users' (0 .. GRM_EID_MAX-1) and the BEE sensors' (GMI_SENSOR_BASE ..
 * GMI_SENSOR_BASE + GMI_SENSOR_MAX - 1), all indexed by REC_EID_BIT(eid).
 */
#define GMI_SENSOR_BASE	GRM_EID_MAX
#define GMI_SENSOR_MAX	4096
#define GMI_NTYPES	REC_EID_BITS
_Static_assert(GMI_SENSOR_BASE + GMI_SENSOR_MAX + REC_EID_BIAS ==
    REC_EID_BITS, "the segment's eid bitmap covers every id");

/* A type's state, read first on the hot path: one byte says everything. */
enum {
	GMI_T_UNDEF = 0,	/* not defined in this process */
	GMI_T_REC = 1,		/* on: write a record */
	GMI_T_OFF = 2,		/* defined, switched off (control, filter) */
	GMI_T_STATS = 3,	/* on, statistics mode: update counters */
	GMI_T_CHECK = 4		/* on, watched by a plan: write a record,
				   then run the plan's rows on it */
};

/* Range role of a type, for statistics of exclusive durations. */
enum { GMI_R_NONE = 0, GMI_R_BEGIN = 1, GMI_R_END = 2 };

struct gmi_type {
	_Atomic uint8_t	st;		/* GMI_T_* */
	uint8_t		cls;
	uint8_t		attr;
	uint8_t		has_str;
	uint8_t		range;		/* GMI_R_* */
	uint8_t		key_field;	/* range key: 1 = first field, 0 = eid */
	uint8_t		ints;		/* every field an int (%d %i %c...) */
	uint16_t	fixed_len;	/* record length when !has_str */
	int32_t		range_eid;	/* GMI_R_END of a sensor: its begin */
	struct rec_fmt	fmt;
};

/* The calling thread's chunk.  data == NULL: no chunk yet. */
struct gmi_thread {
	char			*data;
	_Atomic uint64_t	*committed;
	uint32_t		off;
	uint32_t		cap;
	int32_t			idx;
	uint32_t		tid;
	uint64_t		lost;	/* events not recorded, not yet reported */
	int			keyed;	/* exit destructor registered */
	struct gmi_table	*table;	/* statistics / dormant values */
};

extern _Atomic int gmi_state;
extern struct seg_hdr *gmi_seg;	/* shared: only control words are read */
extern struct seg gmi_view;	/* its layout as checked at attach */
extern uint32_t gmi_ctl_seen;	/* segment ctl word last applied, | ON */
extern int gmi_stats_mode;	/* GRM_MODE=stats */
extern int gmi_tsc;		/* the segment's clock is the TSC */
extern struct gmi_type gmi_types[GMI_NTYPES];
extern __thread struct gmi_thread gmi_thr
    __attribute__((tls_model("initial-exec")));

static inline struct gmi_type *
gmi_type_of(int eid)
{
	uint32_t b = REC_EID_BIT(eid);

	return b < GMI_NTYPES ? &gmi_types[b] : (struct gmi_type *)0;
}

/* A record's timestamp: the segment's clock (SEG_CLOCK_*), taken from it
 * at attach; one predictable branch. */
static inline uint64_t
gmi_now(void)
{
	if (gmi_tsc)
		return tsc_read();
	return clk_mono_ns();
}

/* Attaches the process (once); returns the resulting state. */
int gmi_init(void);
/* Gives the thread a new chunk with room for need bytes; NULL if none
 * could be had in time (the event is then counted as lost). */
char *gmi_new_chunk(uint32_t need);
/* Takes a chunk of the given kind for the thread; -1 if none. */
int gmi_take_chunk(uint32_t kind);
/* Locks (phase 0) or unlocks (1) the definition lock around fork. */
void gmi_def_lock_fork(int phase);
/* Sets up the predefined types. */
void gmi_define_predefined(void);
/* Tells the LM that free chunks fell below its threshold. */
void gmi_notify_lm(void);
/* Tells the LM the process is exiting with status (as at exit). */
void gmi_exit_note(int status);
/* Asks the LM to deliver everything to mainmon; waits up to ms. */
int gmi_flush_lm(long ms);
/* Error reporting: returns code, with one line on stderr if GRM_DEBUG. */
int gmi_error(int code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Applies the segment's control words (their generation changed). */
void gmi_ctl_refresh(void);
/* gmi_plan.c: copies the segment's plan rows out (gmi_def_lock held, the
 * control generation changed) and sets watch[] (REC_EID_BITS / 32
 * words): the types a row watches. */
/* A plan's switches of this process (SEG_ROW_SWITCH rows): types and
 * classes on or off whatever the control words say. */
struct gmi_sw {
	uint32_t	eid_on[REC_EID_BITS / 32], eid_off[REC_EID_BITS / 32];
	uint32_t	cls_on[8], cls_off[8];
};
void gmi_plan_refresh(const struct seg_hdr *s, uint32_t *watch,
		      struct gmi_sw *sw);
/* Runs the rows watching eid on the record rec[0..len) of type ty this
 * thread has just committed; a match goes to the row's firing slot. */
void gmi_plan_check(int eid, const struct gmi_type *ty, const char *rec,
		    uint32_t len);
/* Remembers block bid's name (GMI_DefineBlock), for block rows. */
void gmi_plan_block_name(int bid, const char *name);
/* gmi_attach.c: this process's pid as attached. */
uint32_t gmi_self_pid(void);
/* Its name as its lmp_hello said it (a plan's `process` scope), and the
 * rank it gave itself (GMI_SetName; -1: none, as after a fork): read
 * without a lock by gmi_plan.c. */
extern char gmi_name[64];
extern _Atomic int64_t gmi_rank;
/* Points GMI_on_ at the segment's ctl word (traced > 0), at a constant
 * 1 (not attached yet, traced < 0) or 0 (not traced). */
void gmi_set_on_word(int traced);
/* After a definition record: the next push takes this thread's chunk. */
void gmi_carry_defs(void);

/*
 * The interface of the BEE layer (client/bee.c) and other callers inside
 * the library.
 *
 * gmi_define_type defines eid (a user id or a sensor id) with class cls,
 * attribute attr, a printf-style format and a name (the description: the
 * sensor filter matches it).  range says whether records of the type begin
 * or end a range (GMI_R_*); range_eid is the eid of the begin type for an
 * end type.  Same return codes as GMI_DefineEvent.
 */
int gmi_define_type(int eid, uint8_t cls, uint8_t attr, uint8_t range,
		    int range_eid, const char *format, const char *name);
/* Records eid from n decoded values whose kinds match its format. */
int gmi_emit_fields(int eid, const struct rec_field *f, unsigned n);
/* Records eid from a va_list. */
int gmi_emit_va(int eid, va_list ap);
/* Records eid, a type with one 64-bit field, with value v at time ts
 * (0: now); gmi.c. */
int gmi_emit_word(int eid, uint64_t v, uint64_t ts);
/* Whether records of eid are currently written (or counted). */
int gmi_type_on(int eid);
/* Process-local switches (BEE Event_Sensor_Control, Event_Sensor_Filter):
 * combined with the segment's; NULL or "" clears the filter. */
void gmi_local_class(unsigned cls, int on);
int gmi_local_filter(const char *substr);
/* Keeps the latest value of eid for the LM to read when asked (dormant
 * sensor); nothing is recorded now. */
int gmi_set_dormant(int eid, const struct rec_field *f, unsigned n);
/* The name given to eid, or NULL. */
const char *gmi_type_name(int eid);

/* Builds the record of eid from n values into buf (REC_MAX bytes), with
 * attribute attr; returns its length, or 0 if the values do not fit. */
size_t gmi_build_fields(char *buf, int eid, const struct gmi_type *ty,
			uint8_t attr, const struct rec_field *f, unsigned n,
			uint64_t ts);

/* Statistics mode (gmi_table.c). */
int gmi_stats_event(int eid, const struct gmi_type *ty, uint64_t ts,
		    int64_t key);
void gmi_table_release(struct gmi_thread *t);

#endif /* GRM_GMI_INT_H */
