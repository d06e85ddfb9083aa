/* SPDX-License-Identifier: MIT */
/* grm/trace.h: reading grm trace files (libgrmtrace, grmtrace(3)). */
#ifndef GRM_TRACE_H
#define GRM_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A reader of every trace format grm writes (doc/formats.md: text, binary,
 * BEE Ascii) and of the original BEE's event files, the format told by the
 * first bytes.  It streams: memory grows with the number of definitions,
 * hosts, processes and threads, never with the number of records.
 *
 * Every function that can fail says how.  A handle is used by one thread
 * at a time; different handles are independent.  Pointers the reader
 * hands out (events, definitions, hosts, processes, threads, strings) are
 * owned by it: an event and its strings are valid until the next call of
 * grmtrace_next or grmtrace_seek on the handle; definitions, hosts,
 * processes and threads until grmtrace_seek or grmtrace_close.
 *
 * Structures below are plain data the library fills and the caller only
 * reads; the caller never allocates one (but a struct grmtrace_field to
 * print with grmtrace_fput_field).  A later version of the library may
 * add fields at the end of struct grmtrace_ev, grmtrace_def,
 * grmtrace_host, grmtrace_proc and grmtrace_thread (never in between,
 * never changing a field), so code built against this header keeps
 * working; struct grmtrace_field does not change.
 */

#define GRMTRACE_VERSION_MAJOR	0
#define GRMTRACE_VERSION_MINOR	6
#define GRMTRACE_VERSION_PATCH	0
/* The version of this header, as one comparable number. */
#define GRMTRACE_VERSION	(GRMTRACE_VERSION_MAJOR * 10000 + \
				 GRMTRACE_VERSION_MINOR * 100 + \
				 GRMTRACE_VERSION_PATCH)

/* The version of the library in use (GRMTRACE_VERSION of its build). */
int grmtrace_version(void);

/* ---- what a trace holds ---- */

/* The file formats (grmtrace_format). */
enum grmtrace_format {
	GRMTRACE_FMT_TEXT = 1,		/* doc/formats.md section 1 */
	GRMTRACE_FMT_BIN = 2,		/* section 3 */
	GRMTRACE_FMT_BEE = 3,		/* section 4, as grm writes it */
	GRMTRACE_FMT_BEE_ORIG = 4	/* section 4.7, the original BEE's */
};

/* What grmtrace_next gives: a record, or one meta line type each
 * (doc/formats.md 1.3). */
enum grmtrace_kind {
	GRMTRACE_RECORD = 0,	/* a record line */
	GRMTRACE_MM,		/* #MM: the writer's identifier */
	GRMTRACE_CLOCK,		/* #CLOCK: real and monotonic time */
	GRMTRACE_HOST,		/* #HOST: a host (node) joined */
	GRMTRACE_SYNC,		/* #SYNC: a host's clock model */
	GRMTRACE_ORDER,		/* #ORDER: how the global order went */
	GRMTRACE_CAUSAL,	/* #CAUSAL: the causality check */
	GRMTRACE_DEF,		/* #DEF: an event type definition */
	GRMTRACE_PROC,		/* #PROC: a process started or ended */
	GRMTRACE_LOSS,		/* #LOSS: events lost */
	GRMTRACE_STATS_COUNT,	/* #STATS count */
	GRMTRACE_STATS_RANGE,	/* #STATS range */
	GRMTRACE_CONTROL,	/* #CONTROL: a control command took effect */
	GRMTRACE_COLLECT,	/* #COLLECT: a collection round ended */
	GRMTRACE_END,		/* #END: the trace is complete */
	GRMTRACE_GIVENUP,	/* #GIVENUP: a host's order open from ts */
	GRMTRACE_LATE,		/* #LATE: a host's records written late */
	GRMTRACE_MISSING,	/* #MISSING: a host gone at the end */
	GRMTRACE_PLAN_ADD,	/* #PLAN add: a monitoring plan's rule */
	GRMTRACE_PLAN_DEL,	/* #PLAN del: a rule removed */
	GRMTRACE_TSC,		/* #TSC: a host's TSC calibration (since 0.6) */
	GRMTRACE_CLOCKSTEP,	/* #CLOCKSTEP: a host's clock stopped or
				   jumped (node, ts; since 0.6) */
	GRMTRACE_PLAN_FIRE,	/* #PLAN fire: a rule fired (since 0.6) */
	GRMTRACE_NKINDS
};
#define GRMTRACE_WANT(kind)	(1u << (kind))
#define GRMTRACE_WANT_ALL	((1u << GRMTRACE_NKINDS) - 1)

/* How a #PROC line's process changed (grmtrace_ev.how). */
enum grmtrace_how {
	GRMTRACE_PROC_START = 0,
	GRMTRACE_PROC_EXIT = 1,		/* status: its exit status */
	GRMTRACE_PROC_KILLED = 2,	/* status: the signal's number */
	GRMTRACE_PROC_EXEC = 3,		/* the image was replaced */
	GRMTRACE_PROC_GONE = 4		/* ended, how is not known */
};

/* Event classes and attributes (doc/formats.md 1.6); other values may
 * appear. */
enum {
	GRMTRACE_CLASS_PROCEDURE = 0,
	GRMTRACE_CLASS_EVENT = 1,
	GRMTRACE_CLASS_STRING = 2,
	GRMTRACE_CLASS_MESSAGE = 3,
	GRMTRACE_CLASS_USER = 8
};
enum {
	GRMTRACE_ATTR_ACT = 0,
	GRMTRACE_ATTR_TERM = 1,
	GRMTRACE_ATTR_POINT = 2,
	GRMTRACE_ATTR_AGGREGATE = 3,
	GRMTRACE_ATTR_NAME = 4,
	GRMTRACE_ATTR_PROBE = 5
};

/* The predefined event types (doc/formats.md 1.9). */
#define GRMTRACE_EID_BLOCK_BEGIN	(-1)	/* block id */
#define GRMTRACE_EID_BLOCK_END		(-2)	/* block id */
#define GRMTRACE_EID_BLOCK_NAME		(-3)	/* block id, name */
#define GRMTRACE_EID_MSG_SEND		(-4)	/* peer rank, tag, bytes */
#define GRMTRACE_EID_MSG_RECV		(-5)	/* peer rank, tag, bytes */
#define GRMTRACE_EID_PROC_NAME		(-6)	/* rank, name */
#define GRMTRACE_EID_COLL_BEGIN		(-7)	/* round, stopped, not
						   stopped, ns to stop */
#define GRMTRACE_EID_COLL_END		(-8)	/* round, let go, why */

/* Types the preload library defines (doc/formats.md 1.11): the load map,
 * and function entry and exit, named from it. */
#define GRMTRACE_EID_OBJECT		(-25)	/* why, base, path, build id */
#define GRMTRACE_EID_UNLOAD		(-26)	/* base, path */
#define GRMTRACE_EID_FN_ENTER		(-40)	/* function address */
#define GRMTRACE_EID_FN_EXIT		(-39)	/* function address */

/* The type of a field. */
enum grmtrace_type {
	GRMTRACE_INT = 0,	/* %d %i %c: v.i */
	GRMTRACE_UINT = 1,	/* %u %x %X %o %p: v.u */
	GRMTRACE_DOUBLE = 2,	/* %f %g %e %a ...: v.d */
	GRMTRACE_STRING = 3	/* %s, and a meta line's strings and words:
				   v.s, NUL-terminated at v.s.len (it may
				   hold NUL bytes before) */
};

#define GRMTRACE_FIELDS_MAX	16	/* fields of a record, at most */

struct grmtrace_field {
	int		type;		/* enum grmtrace_type */
	union {
		int64_t		i;
		uint64_t	u;
		double		d;
		struct {
			const char	*p;
			uint32_t	len;
		} s;
	} v;
};

/* An event type's definition (#DEF, doc/formats.md 1.3 and 1.5). */
struct grmtrace_def {
	int32_t		eid;
	uint8_t		cls;		/* GRMTRACE_CLASS_* */
	uint8_t		attr;		/* GRMTRACE_ATTR_* */
	uint32_t	node;		/* scope: 0 for every process, else */
	uint32_t	pid;		/* the one process it is for */
	const char	*format;	/* printf-style, NUL-terminated */
	const char	*description;	/* NUL-terminated, may be empty */
	unsigned	nfields;	/* conversions of the format */
	uint8_t		type[GRMTRACE_FIELDS_MAX];	/* of each field */
	char		conv[GRMTRACE_FIELDS_MAX];	/* its conversion
							   letter: 'd',
							   'u', 'x', 'p',
							   'f', 's', ... */
};

/*
 * One record or meta line.  Every kind has its fields in f[0 .. n), in
 * the order of doc/formats.md (a record's are the values of its type; a
 * meta line's are its fields, named by grmtrace_field_name), and the
 * members below that it has filled; the others are 0.
 */
struct grmtrace_ev {
	int		kind;		/* enum grmtrace_kind */
	uint64_t	where;		/* line (text, BEE: the entry's first
					   line) or frame number (binary) */
	uint64_t	ts;		/* record, PROC, LOSS, CONTROL,
					   COLLECT, GIVENUP, MISSING, PLAN_*;
					   SYNC: at_ns */
	uint32_t	node;		/* record, HOST, SYNC, TSC, DEF (scope),
					   PROC, LOSS, STATS_*, GIVENUP,
					   LATE, MISSING */
	uint32_t	pid;		/* record, DEF (scope), PROC, LOSS,
					   STATS_* */
	uint32_t	tid;		/* record, LOSS */
	int32_t		eid;		/* record, DEF, STATS_* */
	const struct grmtrace_def *def;	/* record: the definition it is
					   read with; DEF: the new one;
					   STATS_*: eid's, if known */
	unsigned	n;
	const struct grmtrace_field *f;
	/* PROC */
	uint32_t	ppid;
	int		how;		/* enum grmtrace_how */
	int32_t		status;
	/* LOSS: events lost; STATS_*: n; COLLECT: round; LATE: records
	 * written late; END, COLLECT: records; PLAN_*: the rule's number;
	 * PLAN_FIRE: records is the firing's number (1, 2, ...), node,
	 * pid, tid, eid and ts are the triggering record's */
	uint64_t	count;
	uint64_t	records;
	/* PROC: the name; CONTROL: the command; MM: the identifier; HOST:
	 * the host name; GIVENUP: why; PLAN_ADD: the rule, PLAN_FIRE: the
	 * mark's text (NUL-terminated;
	 * str_len bytes) */
	const char	*str;
	uint32_t	str_len;
	/* Since 0.4.  Record: the clock model that put it on mainmon's
	 * clock (its #SYNC line's model number; 0 if the file does not
	 * number them), and the bound on the error of its ts by that model
	 * (0 if the file has no #SYNC for its node; in a file without
	 * model numbers, the latest #SYNC's error_ns).  Since 0.6 the bound
	 * of a record that may have been stamped around a step of its
	 * host's clock (a #CLOCKSTEP read before it) includes the step. */
	uint32_t	sync_model;
	uint64_t	bound_ns;
	/* Since 0.5.  Record: its time as the file has it.  ts is that
	 * time corrected so that no message is received before it was sent
	 * (ts - raw_ts ns later, never more than bound_ns; see
	 * grmtrace_causal), unless grmtrace_raw_times asked for the file's
	 * times (then ts == raw_ts). */
	uint64_t	raw_ts;
};

/* The names of the fields of a meta line kind, as doc/formats.md has
 * them ("node", "offset_ns", ...): field i's, or NULL if kind has no
 * field i (and for GRMTRACE_RECORD). */
const char *grmtrace_field_name(int kind, unsigned i);
/* The keyword of a meta line kind ("#HOST"), "record", or NULL. */
const char *grmtrace_kind_name(int kind);

/* A host (node) as its #HOST and #SYNC lines so far say. */
struct grmtrace_host {
	uint32_t	node;
	uint32_t	lm_pid;		/* of its latest #HOST line */
	const char	*hostname;
	int64_t		offset_ns;	/* first estimate, latest #HOST */
	uint32_t	connections;	/* #HOST lines */
	int		synced;		/* a #SYNC line was read: */
	uint64_t	at_ns;		/* the latest model: */
	int64_t		sync_offset_ns;	/* host - mainmon = offset + */
	int64_t		drift_ppb;	/* drift * (t - at) / 1e9, */
	uint64_t	error_ns;	/* within error_ns (in its span) */
	uint64_t	rtt_ns;
	uint32_t	samples;
	/* Collection phases (records -7 and -8 of process 0, the global
	 * collection scheme): how many began, and the time the host's
	 * processes were stopped in those that ended (a phase runs from
	 * the first begin to the last end, should the node have several
	 * Local Monitors). */
	uint32_t	phases;
	uint64_t	stopped_ns;
	/* Since 0.4: the latest #SYNC's model number (0: the file does
	 * not number them), the time from which it converts, the span of
	 * the samples it was fitted to, and how fast its bound grows
	 * outside that span (doc/formats.md #SYNC). */
	uint32_t	model;
	uint64_t	from_ns;
	uint64_t	lo_ns;
	uint64_t	hi_ns;
	uint64_t	allow_ppb;
};

/* A process (node, pid), as #PROC lines, its records of type -6 and its
 * records so far say. */
struct grmtrace_proc {
	uint32_t	node;
	uint32_t	pid;
	uint32_t	ppid;		/* as declared; 0 if not known */
	const char	*name;		/* of its latest start, or "" */
	int		started;	/* a start line was read, at */
	uint64_t	start_ts;
	int		ended;		/* an end line was read (how): */
	int		how;		/* enum grmtrace_how of it */
	int32_t		status;
	uint64_t	end_ts;
	int		has_rank;	/* a record of type -6 gave */
	int64_t		rank;		/* a rank and */
	const char	*rank_name;	/* a name (the latest) */
	uint64_t	records;	/* records read */
	uint32_t	threads;	/* threads seen */
};

/* A thread (node, pid, tid) that has records. */
struct grmtrace_thread {
	uint32_t	node;
	uint32_t	pid;
	uint32_t	tid;
	uint64_t	first_ts;	/* of its first record read */
	uint64_t	last_ts;	/* of its latest */
	uint64_t	records;
};

/* ---- reading ---- */

struct grmtrace;

/*
 * Opens path ("-": standard input) and reads its first line or frame.
 * Returns the handle, or NULL with errno set (EINVAL: path is NULL or
 * empty; EILSEQ: not a trace of a format the library reads, or a version
 * it does not know; ENOMEM; or open(2)'s and read(2)'s) and, if err is
 * not NULL, a message of at most errlen bytes in err ("not a grm trace
 * (no #GRM-TRACE line)").
 */
struct grmtrace *grmtrace_open(const char *path, char *err, size_t errlen);
/* Closes t and frees everything it handed out; t may be NULL. */
void grmtrace_close(struct grmtrace *t);

/*
 * Reads the next record, or meta line of a kind asked for with
 * grmtrace_select (all, by default).  Returns 1 with *ev set, 0 at the end
 * of the file, -1 on an error: a malformed line (grmtrace_error says
 * where and why), a read error, no memory, or t or ev NULL (EINVAL).
 * After an error every further call returns -1.  Meta lines not asked
 * for are still read and remembered (definitions, hosts, processes).
 */
int grmtrace_next(struct grmtrace *t, const struct grmtrace_ev **ev);
/* Which kinds grmtrace_next returns: GRMTRACE_WANT() of each, or'ed
 * (records are always returned).  Returns 0, or -1 (EINVAL) for a bit
 * that is no kind. */
int grmtrace_select(struct grmtrace *t, unsigned kinds);

/*
 * Makes the next record grmtrace_next returns the first record, in file
 * order, whose ts is at or after ts; meta lines before it are read and
 * remembered (definitions, hosts, processes), not returned.  Records
 * skipped are not counted in processes and threads.  Records of a trace
 * are in time order, except those #ORDER counts as late: a late record
 * with a time at or after ts may be skipped on the binary format, which
 * reads only the frames' first bytes to find the place (a binary file has
 * no index: the search reads every frame header, not every byte).  A
 * seek starts from the beginning of the file, so it also goes back; on
 * standard input (not seekable) it only goes forward.  Returns 1 if there
 * is such a record, 0 if none (the end of the file was reached), -1 as
 * grmtrace_next (and ESPIPE: back on a pipe).
 */
int grmtrace_seek(struct grmtrace *t, uint64_t ts);

/*
 * Reads no byte of the file at or after offset (0: no limit, the
 * default): grmtrace_next returns 0 there, as at the end of the file.  A
 * later call with a larger offset (or 0) lets grmtrace_next go on from
 * where it stopped, with what was appended to the file since: this is how
 * a reader follows a trace a writer is still writing, up to an offset the
 * writer says holds whole lines or frames (mainmon's "live" command,
 * doc/protocol.md); a line or frame cut by the limit is taken as cut
 * short (grmtrace_warning) and lost, so give the offset of a whole one.
 * The limit stays over grmtrace_seek.  Returns 0, or -1 (EINVAL: t NULL).
 * Since version 0.3.
 */
int grmtrace_limit(struct grmtrace *t, uint64_t offset);

/* The reason of the last failure of t, with the line or frame it was
 * found on ("line 12: record before definition of eid 5"), or "no
 * error".  Never NULL (for t NULL too). */
const char *grmtrace_error(const struct grmtrace *t);

/*
 * Why the trace read may not be whole, or NULL: its last line, entry or
 * frame is cut short, as a writer that stopped while writing (a crash) or
 * whose disk filled leaves a file ("line 812: cut short at the end of the
 * file (17 bytes; ...)").  grmtrace_next then returned the lines before
 * it, and 0 at the cut, as at the end of a whole file.  A line or frame
 * cut anywhere else is an error, as before.  Since version 0.2.
 */
const char *grmtrace_warning(const struct grmtrace *t);

/* The format of t (enum grmtrace_format), or -1 for t NULL. */
int grmtrace_format(const struct grmtrace *t);

/* ---- what was read so far ---- */

/* The global definition of eid, or NULL. */
const struct grmtrace_def *grmtrace_def(const struct grmtrace *t,
					int32_t eid);
/* The definition records of (node, pid) of eid are read with: the
 * process's own if it has one, else the global one; or NULL. */
const struct grmtrace_def *grmtrace_def_for(const struct grmtrace *t,
					    uint32_t node, uint32_t pid,
					    int32_t eid);
/*
 * What grm defines predefined type eid (-1 .. GRMTRACE_EID_COLL_END) as,
 * whatever file is read: the definition mainmon writes for it (its
 * description is the type's name: "block begin", ...); NULL for another
 * eid.  A file defines the types it uses with #DEF lines (doc/formats.md
 * 1.9), which grmtrace_def gives; this is for files that do not.
 */
const struct grmtrace_def *grmtrace_predef(int32_t eid);
/* The definitions, global and scoped, in the order first read: i from 0
 * to grmtrace_ndefs() - 1, else NULL. */
size_t grmtrace_ndefs(const struct grmtrace *t);
const struct grmtrace_def *grmtrace_def_at(const struct grmtrace *t,
					   size_t i);

/* Hosts, processes and threads, in the order first seen, and by key;
 * NULL if there is none (or i is out of range). */
size_t grmtrace_nhosts(const struct grmtrace *t);
const struct grmtrace_host *grmtrace_host_at(const struct grmtrace *t,
					     size_t i);
const struct grmtrace_host *grmtrace_host(const struct grmtrace *t,
					  uint32_t node);
size_t grmtrace_nprocs(const struct grmtrace *t);
const struct grmtrace_proc *grmtrace_proc_at(const struct grmtrace *t,
					     size_t i);
const struct grmtrace_proc *grmtrace_proc(const struct grmtrace *t,
					  uint32_t node, uint32_t pid);
size_t grmtrace_nthreads(const struct grmtrace *t);
const struct grmtrace_thread *grmtrace_thread_at(const struct grmtrace *t,
						 size_t i);
const struct grmtrace_thread *grmtrace_thread(const struct grmtrace *t,
					      uint32_t node, uint32_t pid,
					      uint32_t tid);

/* Events lost: the sum of the #LOSS lines read (saturated). */
uint64_t grmtrace_losses(const struct grmtrace *t);
/* Records returned since the open or the last seek. */
uint64_t grmtrace_records(const struct grmtrace *t);
/* Whether #END was read; if so, *records (if not NULL) is its count. */
int grmtrace_ended(const struct grmtrace *t, uint64_t *records);

/* ---- the causality correction (since 0.5) ---- */

/*
 * A message received before it was sent, once both ends are on mainmon's
 * clock, is an error of the clock correction (doc/clock-sync.md).  By
 * default the reader corrects it as a controlled logical clock does: the
 * receive (matched with its send as doc/formats.md 1.9 says) is moved to
 * its send's time, and the later records of its thread with it, the move
 * lessening by 1 ns per microsecond after it; no record is moved by more
 * than its bound_ns.  A receive before its send by more than the two
 * records' bounds together shows a bound was wrong: it is counted
 * (beyond) and left where it is.  To do this the library reads the file
 * a second time, ahead of the caller, by twice the largest bound of a
 * message end:
 * a record's time is final when it is returned; a moved record may come
 * after records of other threads up to its move later.  Standard input is
 * corrected only if it is a regular file read from its start.
 */
struct grmtrace_causal {
	uint32_t	send_node;	/* the pair of hosts (sender's, */
	uint32_t	recv_node;	/* receiver's); 0, 0: every pair */
	uint64_t	matched;	/* sends and receives matched */
	uint64_t	violations;	/* receive stamped before its send */
	uint64_t	worst_ns;	/* by at most this, in the file */
	uint64_t	moved;		/* receives moved (to or toward their
					   send, or with it) */
	uint64_t	capped;		/* needed more than their bound: moved
					   by their bound, still before their
					   send (within the two bounds) */
	uint64_t	beyond;		/* before their send by more than the
					   two bounds: a bound was wrong; not
					   moved */
	uint64_t	beyond_ns;	/* the largest excess over the bounds */
	uint64_t	max_shift_ns;	/* of the receives moved */
	uint64_t	median_shift_ns;
	/* Totals only (pair 0): */
	uint64_t	unchecked;	/* no rank, or too many waiting */
	uint64_t	records_moved;	/* records returned moved (since the
					   open; the receives and the records
					   after them) */
	uint64_t	records_max_ns;	/* the largest move of those */
	int		corrected;	/* 0: raw times, standard input, or the
					   reader ahead failed */
	int		complete;	/* the reader ahead read the whole file
					   (the counts are final) */
};

/*
 * raw 1: records keep the file's times (nothing is read twice); 0: they
 * are corrected (the default).  Call before the first grmtrace_next; a
 * later call only stops the correction.  Returns 0, or -1 (EINVAL: t
 * NULL; raw 0 when the correction was stopped or cannot be made, on a
 * pipe).
 */
int grmtrace_raw_times(struct grmtrace *t, int raw);
/*
 * The check's counts so far (the reader ahead has read at least what was
 * returned): i 0, over every pair of hosts; i >= 1, one pair each, in the
 * order first matched.  NULL past the last pair.  Valid until the next
 * call on t.
 */
const struct grmtrace_causal *grmtrace_causal(struct grmtrace *t, size_t i);

/* ---- the summary sidecar (doc/formats.md section 6) ---- */

/*
 * A binary trace may have a summary beside it, FILE.idx (mainmon writes
 * it as it writes the trace; grmtrace_index writes it for any binary
 * trace): per thread (row) and time bucket (at most 4096 buckets, of a
 * width 2^k ns), the records and the outermost block that took most of
 * the bucket, and the file offset of the frame each bucket's first record
 * is in.  It lets a viewer draw a whole run at once.  Since version 0.4.
 */
struct grmtrace_sum;

/* One row in one bucket. */
struct grmtrace_sum_cell {
	uint32_t	records;
	uint32_t	state;	/* the outermost block that took most of the
				   bucket: grmtrace_sum_state(state - 1);
				   0: none */
	uint64_t	ns;	/* its time in the bucket */
};

struct grmtrace_sum_info {
	uint64_t	first;		/* bucket 0 starts here (the first
					   record's ts) */
	uint64_t	width_ns;	/* of a bucket */
	uint32_t	nbuckets;
	uint32_t	nrows;
	uint32_t	nstates;
	uint64_t	records;
	uint64_t	last;		/* the latest record's ts */
	uint64_t	covers;		/* the trace's first bytes it is of */
};

/*
 * Reads the binary trace path and writes its summary to path + ".idx"
 * (through a temporary file, renamed).  Returns 0, or -1 with why in err
 * (not a binary trace, unreadable, malformed, cannot write).
 */
int grmtrace_index(const char *path, char *err, size_t errlen);
/*
 * The summary of trace path, checked to be its own (the trace bytes it
 * covers are there and hash the same: a trace that grew since is fine).
 * NULL with why in err: errno ENOENT if there is none; EINVAL if it is
 * malformed, of another version, or stale.
 */
struct grmtrace_sum *grmtrace_sum_open(const char *path, char *err,
				       size_t errlen);
void grmtrace_sum_close(struct grmtrace_sum *s);
void grmtrace_sum_get_info(const struct grmtrace_sum *s,
			   struct grmtrace_sum_info *info);
/* Row i's thread: 0, or -1 if there is no row i. */
int grmtrace_sum_row(const struct grmtrace_sum *s, size_t i, uint32_t *node,
		     uint32_t *pid, uint32_t *tid);
/* Row i's cells, nbuckets of them, or NULL. */
const struct grmtrace_sum_cell *grmtrace_sum_cells(
    const struct grmtrace_sum *s, size_t i);
/* State i's block id (0 if out of range). */
int64_t grmtrace_sum_state(const struct grmtrace_sum *s, size_t i);
/* Bucket b's first record's frame offset (UINT64_MAX: no record). */
uint64_t grmtrace_sum_offset(const struct grmtrace_sum *s, size_t b);
/*
 * Binary traces: the next grmtrace_next reads from the frame at offset
 * (a frame's start: grmtrace_sum_offset's), with the definitions, hosts
 * and processes read so far; read the file's start first (up to its first
 * record, where mainmon writes the definitions it knows).  A record of a
 * type defined between there and offset is then an error ("record before
 * definition").  Returns 0, or -1 (EINVAL: not a binary file one can seek
 * in, t NULL or failed).  Since version 0.4.  Since 0.5 it also stops the
 * causality correction (grmtrace_raw_times): records from there have the
 * file's times (matching messages needs the file from its start).
 */
int grmtrace_seek_offset(struct grmtrace *t, uint64_t offset);

/* ---- printing ---- */

/* Writes one field to f as a record line of the text format has it (a
 * string quoted and escaped, a double as %.17g).  Returns 0, or -1 with
 * errno set (EINVAL for NULL or a bad type; or the stream's error). */
int grmtrace_fput_field(FILE *f, const struct grmtrace_field *fld);
/* Writes s[0 .. len) quoted and escaped, as the text format has strings.
 * Returns 0 or -1 as grmtrace_fput_field. */
int grmtrace_fput_string(FILE *f, const char *s, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* GRM_TRACE_H */
