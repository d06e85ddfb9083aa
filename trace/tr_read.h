/* SPDX-License-Identifier: MIT */
/* tr_read.h: the trace library's internal reader, under the public one
 * (grmtrace.c, <grm/trace.h>): the same events with the internal types
 * (struct rec_field, the definitions with their parsed formats). */
#ifndef GRM_TR_READ_H
#define GRM_TR_READ_H

#include <stdint.h>
#include <stdio.h>

#include <grm/trace.h>

#include "rec/rec.h"

#include "tape.h"

/* A definition read: struct tape_def (tape.h) and the same as the API
 * shows it.  The reader hands out &def->t. */
struct tr_def {
	struct tape_def	t;
	struct grmtrace_def pub;
};

/* The API's view of a definition the reader made. */
static inline struct grmtrace_def *
tr_def_pub(const struct tape_def *d)
{
	return &((struct tr_def *)(void *)(uintptr_t)d)->pub;
}

/*
 * What tape_next gives: a record, or a meta line of a kind the caller
 * asked for with tape_rwant; the same values as enum grmtrace_kind and
 * TR_M_* (tr_schema.h).
 */
enum tape_kind {
	TAPE_RECORD = GRMTRACE_RECORD,
	TAPE_MM = GRMTRACE_MM,
	TAPE_CLOCK = GRMTRACE_CLOCK,
	TAPE_HOST = GRMTRACE_HOST,	/* node str (host name) */
	TAPE_SYNC = GRMTRACE_SYNC,	/* node ts (at) */
	TAPE_ORDER = GRMTRACE_ORDER,
	TAPE_CAUSAL = GRMTRACE_CAUSAL,
	TAPE_DEF = GRMTRACE_DEF,	/* eid node pid def */
	TAPE_PROC = GRMTRACE_PROC,	/* node pid ts ppid is_exit status
					   str */
	TAPE_LOSS = GRMTRACE_LOSS,	/* node pid tid count ts */
	TAPE_STATS_COUNT = GRMTRACE_STATS_COUNT,	/* node pid eid count */
	TAPE_STATS_RANGE = GRMTRACE_STATS_RANGE,	/* node pid eid count
							   range */
	TAPE_CONTROL = GRMTRACE_CONTROL,	/* ts str */
	TAPE_COLLECT = GRMTRACE_COLLECT,	/* count (round) ts records */
	TAPE_END = GRMTRACE_END,		/* records */
	TAPE_GIVENUP = GRMTRACE_GIVENUP,	/* node ts str (why) */
	TAPE_LATE = GRMTRACE_LATE,		/* node count */
	TAPE_MISSING = GRMTRACE_MISSING,	/* node ts */
	TAPE_PLAN_ADD = GRMTRACE_PLAN_ADD,	/* count (n) ts str (rule) */
	TAPE_PLAN_DEL = GRMTRACE_PLAN_DEL,	/* count (n) ts */
	TAPE_TSC = GRMTRACE_TSC,		/* node */
	TAPE_CLOCKSTEP = GRMTRACE_CLOCKSTEP,	/* node ts */
	TAPE_PLAN_FIRE = GRMTRACE_PLAN_FIRE,	/* count (n) ts records (k)
						   node pid tid eid str */
	TAPE_NKINDS = GRMTRACE_NKINDS
};
#define TAPE_WANT(kind)	(1u << (kind))

/* The durations of a #STATS range line, ns. */
struct tape_range {
	int64_t		key;
	uint64_t	total;
	uint64_t	min;
	uint64_t	max;
	double		mean;
	double		m2;
};

struct tape_ev {
	enum tape_kind	kind;
	uint64_t	where;		/* line or frame it began on */
	uint64_t	ts;
	uint32_t	node;
	uint32_t	pid;
	uint32_t	tid;
	int32_t		eid;
	/* A record's fields; a meta line's, in schema order (tr_schema.h),
	 * strings and words NUL-terminated.  Valid until the next
	 * tape_next. */
	unsigned	n;
	struct rec_field f[REC_ARGS_MAX];
	const struct tape_def *def;	/* a record's; of a #STATS line, the
					   definition of eid if known yet; of
					   a #DEF line, the new one */
	/* Of meta lines only (a record leaves them as they were); fields a
	 * meta kind does not have are zero. */
	uint32_t	ppid;
	int		is_exit;	/* TAPE_PROC_*: 0 start, else an end */
	int32_t		status;
	uint64_t	count;		/* events lost, a #STATS n, a round */
	uint64_t	records;	/* #COLLECT, #END */
	struct tape_range range;
	const char	*str;		/* #PROC name, #CONTROL command, #MM
					   id, #HOST name: NUL-terminated
					   (may hold NULs: see str_len),
					   valid until the next tape_next */
	uint32_t	str_len;
};

struct tape_r;

/* Opens path ("-" is stdin) and checks the first line; the format (text,
 * binary, or BEE Ascii, ours or the original BEE's) is told by the first
 * bytes.  NULL on error, with a reason in *why (static string). */
struct tape_r *tape_ropen(const char *path, const char **why);
/*
 * Reads the next record, or meta line of a kind asked for.  Returns 1 with
 * *ev filled, 0 at end of file, -1 on a malformed line (tape_rerror() says
 * which and why).  Other meta lines are consumed and remembered
 * (definitions, hosts, losses) or checked and skipped.
 */
int tape_next(struct tape_r *r, struct tape_ev *ev);
/* Which meta lines tape_next also returns: TAPE_WANT() of each kind, or'ed;
 * 0 (the default) for records only. */
void tape_rwant(struct tape_r *r, unsigned kinds);
/*
 * As tape_next, but records before ts are passed over (the first record
 * at or after ts is returned); the binary format reads only the first
 * bytes of frames it can pass over (grmtrace_seek in <grm/trace.h>).
 */
int tape_rskip(struct tape_r *r, uint64_t ts, struct tape_ev *ev);
/* The line (or frame) the last line read began on. */
uint64_t tape_rwhere(const struct tape_r *r);
/* GRMTRACE_FMT_* */
int tape_rformat(const struct tape_r *r);
/* The definitions in the order read: i < tape_rndefs(). */
size_t tape_rndefs(const struct tape_r *r);
const struct tape_def *tape_rdef_at(const struct tape_r *r, size_t i);
const char *tape_rerror(const struct tape_r *r);
/* Why the trace may not be whole, or NULL: its last line or frame is cut
 * short (grmtrace_warning). */
const char *tape_rwarning(const struct tape_r *r);
/* The global definition of eid, or NULL. */
const struct tape_def *tape_rdef(const struct tape_r *r, int32_t eid);
/* The definition records of (node, pid) of eid are read with: the
 * process's own if one was given, else the global one; or NULL. */
const struct tape_def *tape_rdef_for(const struct tape_r *r, uint32_t node,
				     uint32_t pid, int32_t eid);
/* Counters of meta lines seen so far. */
uint64_t tape_rlosses(const struct tape_r *r);
/* Whether #END was seen; if so, *records (may be NULL) is its count. */
int tape_rend(const struct tape_r *r, uint64_t *records);
void tape_rclose(struct tape_r *r);

/* Writes s[0..len) as a quoted, escaped string to f. */
void tape_put_quoted(FILE *f, const char *s, size_t len);
/* Writes one field to f as a record line has it. */
void tape_put_field(FILE *f, const struct rec_field *fld);

#endif /* GRM_TR_READ_H */
