/* SPDX-License-Identifier: MIT */
/* rec.h: the binary event record (BEE event model) and event formats. */
#ifndef GRM_REC_H
#define GRM_REC_H

#include <stddef.h>
#include <stdint.h>

/*
 * One record, as written into a chunk of the shared segment and carried
 * unchanged (little-endian) in WIRE_DATA messages.  Node, process and thread
 * are not in the record: the chunk (and the DATA message) says them.
 *
 *	0  u16 len	whole record in bytes, header included, multiple of 8
 *	2  u8  cls	BEE event class (REC_CLASS_*)
 *	3  u8  attr	BEE attribute (REC_ATTR_*)
 *	4  i32 eid	event id
 *	8  u64 ts	timestamp, ns, the host's CLOCK_MONOTONIC
 *	16 ...		variant: the fields, each in an 8-byte aligned slot
 *
 * Field slots: integers and characters are 8 bytes (int64 or uint64 by the
 * conversion's signedness), floating point is an IEEE double, a string is a
 * u32 length followed by its bytes (no NUL), padded to a multiple of 8.
 * doc/formats.md section 2 specifies the record in prose.
 */
struct rec_hdr {
	uint16_t	len;
	uint8_t		cls;
	uint8_t		attr;
	int32_t		eid;
	uint64_t	ts;
};
_Static_assert(sizeof(struct rec_hdr) == 16, "rec_hdr is 16 bytes");

/* Slots are copied in host order and the wire says little-endian. */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
    "grm records are little-endian; big-endian hosts are not supported yet");
/* %lld, %jd, %zd are fetched as long (REC_VA_LONG): 64-bit longs only. */
_Static_assert(sizeof(long) == 8 && sizeof(long long) == 8 &&
    sizeof(size_t) == 8, "grm needs an LP64 platform for now");

#define REC_ALIGN	8
#define REC_MAX		8192	/* largest record, header included */
#define REC_ARGS_MAX	16	/* GRM_ARGS_MAX */
#define REC_STR_MAX	1024	/* GRM_STR_MAX */
#define REC_FMT_MAX	256	/* longest format string */
#define REC_DSC_MAX	256	/* longest description */

/* BEE event classes (seed 001 §9.1) and ours. */
enum {
	REC_CLASS_PROCEDURE = 0,	/* block begin/end/name */
	REC_CLASS_EVENT = 1,
	REC_CLASS_STRING = 2,
	REC_CLASS_MESSAGE = 3,
	REC_CLASS_USER = 8,		/* GMI_DefineEvent types */
	REC_CLASS_META = 255		/* definitions; never shown as events */
};

/* BEE attributes (seed 001 §9.2) and ours. */
enum {
	REC_ATTR_ACT = 0,
	REC_ATTR_TERM = 1,
	REC_ATTR_POINT = 2,
	REC_ATTR_AGGREGATE = 3,
	REC_ATTR_NAME = 4,
	REC_ATTR_PROBE = 5,
	REC_ATTR_DESCRIPTOR = 6,	/* meta: event type definition */
	REC_ATTR_LOSS = 7,		/* meta: u64 events not recorded just
					   before; optional u64 (pid << 32 |
					   tid) whose they were (0: this
					   thread's) */
	REC_ATTR_STATS = 8		/* meta: statistics (common/shm/stab.h) */
};

/* Predefined event ids (negative: users have 0 .. GRM_EID_MAX-1). */
#define REC_EID_BLOCK_BEGIN	(-1)	/* "%d": block id */
#define REC_EID_BLOCK_END	(-2)	/* "%d": block id */
#define REC_EID_BLOCK_NAME	(-3)	/* "%d %s": block id, name */
#define REC_EID_MSG_SEND	(-4)	/* "%d %d %ld": peer rank, tag, bytes */
#define REC_EID_MSG_RECV	(-5)	/* "%d %d %ld": peer rank, tag, bytes */
#define REC_EID_PROC_NAME	(-6)	/* "%d %s": this process's rank, name */
/* The global collection scheme's phases, per host (written by mainmon as
 * records of process 0, thread 0 of the node): the host's processes were
 * all stopped at the begin's time and let go at the end's. */
#define REC_EID_COLL_BEGIN	(-7)	/* "%u %u %u %lu": round, processes
					   stopped, not stopped, ns taken */
#define REC_EID_COLL_END	(-8)	/* "%u %u %u": round, processes let
					   go, why (REC_COLL_END_*) */
#define REC_EID_PREDEF_MIN	(-8)	/* lowest predefined id */
#define REC_NPREDEF		8

/*
 * The preload library's types (libgrm-preload, preload/): in the reserved
 * negative space but not predefined: the library defines them in each
 * process with a definition record (GMI_PreloadDefine), so mainmon and
 * readers need nothing new.  doc/formats.md section 1.11 lists them.
 */
#define REC_EID_PL_CMDLINE	(-16)	/* "%s %s": executable, command line */
#define REC_EID_PL_END		(-17)	/* "%d %d": how (REC_PL_END_*), status */
#define REC_EID_PL_FORK		(-18)	/* "%d %d": child pid, how (0 fork,
					   1 vfork run as fork) */
#define REC_EID_PL_SPAWN	(-19)	/* "%d %s": child pid, what it runs */
#define REC_EID_PL_EXEC		(-20)	/* "%s": the program exec is tried on */
#define REC_EID_PL_EXEC_FAIL	(-21)	/* "%d %s": errno, that program */
#define REC_EID_PL_THR_BEGIN	(-22)	/* "%u %u": tid, creating thread's tid */
#define REC_EID_PL_THR_END	(-23)	/* "%u %d": tid, how (REC_PL_THR_*) */
#define REC_EID_PL_THR_NAME	(-24)	/* "%u %s": tid, name */
#define REC_EID_PL_OBJECT	(-25)	/* "%d %lx %s %s": why (0 load map at
					   start, 1 dlopen), base, path,
					   build id (hex) */
#define REC_EID_PL_UNLOAD	(-26)	/* "%lx %s": base, path (dlclose
					   unmapped it) */
#define REC_EID_PL_MIN		(-26)
#define REC_EID_PL_MAX		(-16)

/* Function entry and exit (-finstrument-functions, preload/pl_func.c):
 * a range of class PROCEDURE keyed by the function's address, named when
 * the trace is read from the load map (REC_EID_PL_OBJECT).  Defined by
 * GMI_PreloadDefine like the ids above; recorded by GMI_PreloadFunc. */
#define REC_EID_FN_ENTER	(-40)	/* "%lx": function address */
#define REC_EID_FN_EXIT		(-39)	/* "%lx": function address */
#define REC_EID_FN_MIN		(-40)
#define REC_EID_FN_MAX		(-39)

/* Whether eid is one of the preload library's types (defined per image). */
static inline int
rec_eid_preload(int eid)
{
	return (eid >= REC_EID_PL_MIN && eid <= REC_EID_PL_MAX) ||
	    (eid >= REC_EID_FN_MIN && eid <= REC_EID_FN_MAX);
}

/* How a process ended, as the preload library saw it (REC_EID_PL_END). */
enum {
	REC_PL_END_RETURN = 0,	/* main returned its status */
	REC_PL_END_EXIT = 1,	/* exit(status) */
	REC_PL_END__EXIT = 2,	/* _exit or _Exit(status) */
	REC_PL_END_ABORT = 3,	/* abort() */
	REC_PL_END_ASSERT = 4	/* a failed assert (then abort) */
};

/* How a thread ended (REC_EID_PL_THR_END). */
enum {
	REC_PL_THR_RETURN = 0,	/* its start routine returned */
	REC_PL_THR_EXIT = 1,	/* pthread_exit */
	REC_PL_THR_CANCEL = 2	/* cancelled */
};

/*
 * The event-id space: user ids 0 .. 65535 + 4096 (BEE classes' ids above
 * GRM_EID_MAX), predefined ids -REC_EID_BIAS .. -1.  REC_EID_BIT(eid) is an
 * id's index in bit maps over the whole space (the segment's control words,
 * mainmon's copy of them).
 */
#define REC_EID_BIAS	64		/* predefined ids are -64 .. -1 */
#define REC_EID_BITS	(65536u + 4096u + REC_EID_BIAS)
#define REC_EID_BIT(eid)	((uint32_t)((eid) + REC_EID_BIAS))

/* Why a collection phase ended on a host. */
enum {
	REC_COLL_END_ASKED = 0,		/* mainmon's collection was over */
	REC_COLL_END_DEADLINE = 1,	/* the LM's time limit passed first */
	REC_COLL_END_LOST = 2,		/* the LM's connection went (its
					   guard let the processes go) */
	REC_COLL_END_EXIT = 3		/* the LM was exiting */
};

/* The predefined event types, in order -1, -2, ...: every process and
 * mainmon know them without a definition record. */
struct rec_predef {
	int32_t		eid;
	uint8_t		cls;
	uint8_t		attr;
	const char	*format;
	const char	*dsc;
};
extern const struct rec_predef rec_predef[REC_NPREDEF];

/* Field kinds, from a format's conversions. */
enum rec_kind {
	REC_K_INT,	/* %d %i %c, any length modifier: int64 slot */
	REC_K_UINT,	/* %u %x %X %o %p: uint64 slot */
	REC_K_DOUBLE,	/* %f %g %e %F %G %E %a */
	REC_K_STR	/* %s */
};

/*
 * A parsed format.  va[i] says how to fetch argument i from a va_list:
 * REC_VA_INT (int, also %c and %hd), REC_VA_LONG (long / long long),
 * REC_VA_DOUBLE, REC_VA_PTR (char *), REC_VA_VOIDP (void *, %p: its value
 * is kept in a uint64 slot).
 */
enum { REC_VA_INT, REC_VA_UINT, REC_VA_LONG, REC_VA_ULONG, REC_VA_DOUBLE,
	REC_VA_PTR, REC_VA_VOIDP };

struct rec_fmt {
	uint8_t	n;
	uint8_t	kind[REC_ARGS_MAX];
	uint8_t	va[REC_ARGS_MAX];
};

/* Parses a printf-style format.  Returns 0, or -1 if it cannot be parsed. */
int rec_parse_format(const char *format, struct rec_fmt *out);

/* One decoded field. */
struct rec_field {
	enum rec_kind	kind;
	union {
		int64_t		i;
		uint64_t	u;
		double		d;
		struct {
			const char	*p;	/* not NUL-terminated */
			uint32_t	len;
		} s;
	} v;
};

/* A field of each kind, to build records and meta lines with. */
static inline struct rec_field
rec_fi(int64_t i)
{
	return (struct rec_field){ .kind = REC_K_INT, .v.i = i };
}

static inline struct rec_field
rec_fu(uint64_t u)
{
	return (struct rec_field){ .kind = REC_K_UINT, .v.u = u };
}

static inline struct rec_field
rec_fd(double d)
{
	return (struct rec_field){ .kind = REC_K_DOUBLE, .v.d = d };
}

/* s[0..len) (not copied); s NULL: the empty string. */
static inline struct rec_field
rec_fs(const char *s, size_t len)
{
	return (struct rec_field){ .kind = REC_K_STR,
	    .v.s = { s != NULL ? s : "", s != NULL ? (uint32_t)len : 0 } };
}

/*
 * Decodes the variant of a record of len bytes (header included) by fmt
 * into out[fmt->n].  The record is untrusted: returns 0, or -1 if a field
 * would run past the record's end.  Strings point into the record.
 */
int rec_decode(const void *rec, size_t len, const struct rec_fmt *fmt,
	       struct rec_field *out);

/*
 * Walks the records in buf[0..len): returns the number of bytes that form
 * whole, well-formed records (len field >= 16, multiple of 8, at most
 * REC_MAX, within the buffer).  A malformed record ends the walk.
 */
size_t rec_valid_prefix(const void *buf, size_t len);
/* The same, and in *meta whether one of those records is of class META
 * (definitions, losses: what a Local Monitor looks for). */
size_t rec_valid_prefix_meta(const void *buf, size_t len, int *meta);
/* Number of events in the whole, well-formed records at the start of
 * buf[0..len): records not of class META, plus the events loss records
 * count. */
uint64_t rec_count_events(const void *buf, size_t len);

/* Writes a record header at p (any alignment). */
static inline void
rec_put_hdr(void *p, size_t len, uint8_t cls, uint8_t attr, int32_t eid,
	    uint64_t ts)
{
	struct rec_hdr h;

	h.len = (uint16_t)len;
	h.cls = cls;
	h.attr = attr;
	h.eid = eid;
	h.ts = ts;
	__builtin_memcpy(p, &h, sizeof h);
}

/* Rounds n up to REC_ALIGN. */
static inline size_t
rec_align(size_t n)
{
	return (n + REC_ALIGN - 1) & ~(size_t)(REC_ALIGN - 1);
}

/* Bytes a string field of len bytes takes. */
static inline size_t
rec_str_size(size_t len)
{
	return rec_align(4 + len);
}

/*
 * Builds a meta definition record (class META, attribute DESCRIPTOR) for
 * eid with its class, attribute, format and description into buf (at least
 * REC_MAX bytes).  Returns its length, or 0 if the strings are too long.
 */
size_t rec_build_define(void *buf, int32_t eid, uint8_t cls, uint8_t attr,
			const char *format, const char *dsc, uint64_t ts);

/*
 * Parses a definition record.  The record is untrusted; out strings point
 * into it and are NOT NUL-terminated (copy before rec_parse_format).  The defined type's class and attribute are stored in the
 * variant's first slot.  Returns 0 or -1.
 */
struct rec_define {
	int32_t		eid;
	uint8_t		cls;
	uint8_t		attr;
	const char	*format;
	uint32_t	format_len;
	const char	*dsc;
	uint32_t	dsc_len;
};
int rec_parse_define(const void *rec, size_t len, struct rec_define *out);

/*
 * The statistics record (class META, attribute REC_ATTR_STATS; the eid is
 * the counted type, or a range's begin type): what the LM makes of a
 * statistics-mode counter (common/shm/stab.h) at each collection, and what
 * mainmon adds up.  Eight 8-byte slots after the header:
 *	u64 kind, i64 key, u64 count, u64 total, u64 min, u64 max,
 *	f64 mean, f64 m2
 * (a COUNT has total = min = max = 0 and mean = m2 = 0).
 */
enum {
	REC_STATS_COUNT = 1,	/* count: events */
	REC_STATS_RANGE = 2	/* count, durations: closed ranges */
};
#define REC_STATS_LEN	(16 + 8 * 8)

/* Durations in ns; mean and m2 by Welford's method (m2 / count is the
 * variance). */
struct rec_range {
	uint64_t	count;
	uint64_t	total;
	uint64_t	min;
	uint64_t	max;
	double		mean;
	double		m2;
};

struct rec_stats {
	int32_t			eid;
	uint32_t		kind;	/* REC_STATS_* */
	int64_t			key;	/* block id of a GMI block, else eid */
	struct rec_range	r;
};

/* Writes the statistics record of st, stamped ts, at buf (REC_STATS_LEN
 * bytes, any alignment); returns REC_STATS_LEN. */
size_t rec_build_stats(void *buf, const struct rec_stats *st, uint64_t ts);
/* Decodes a statistics record (untrusted); returns 0, or -1 if it is not
 * one. */
int rec_parse_stats(const void *rec, size_t len, struct rec_stats *out);

#endif /* GRM_REC_H */
