/* SPDX-License-Identifier: MIT */
/* wire.h: the TCP protocol between Local Monitors, grmctl and mainmon. */
#ifndef GRM_WIRE_H
#define GRM_WIRE_H

#include <stddef.h>
#include <stdint.h>

/*
 * Every message is a 12-byte header and a payload, all integers
 * little-endian:
 *
 *	0 u32 magic	WIRE_MAGIC
 *	4 u16 version	WIRE_VERSION
 *	6 u16 type	WIRE_* below
 *	8 u32 len	payload bytes, at most WIRE_MAX
 *
 * A receiver closes the connection on a wrong magic or version, an unknown
 * type, a length over WIRE_MAX, a message that breaks its rule
 * (wire_check, below), or a payload that does not parse.
 * Bump WIRE_VERSION whenever a message changes; doc/protocol.md says what
 * each carries.
 */
#define WIRE_MAGIC	0x57524d47u	/* "GMRW" on the wire */
#define WIRE_VERSION	14
#define WIRE_HDR	12
#define WIRE_MAX	(2u << 20)

enum wire_type {
	WIRE_HELLO = 1,		/* LM/ctl -> MM: u32 role, u32 pid, u64 now,
				   str host, u64 seg_id (0: ctl),
				   u8[WIRE_NONCE] nonce */
	WIRE_WELCOME = 2,	/* MM -> LM/ctl: u32 node, u8[WIRE_PROOF]
				   the MM's proof (auth.h) */
	WIRE_PING = 3,		/* MM -> LM: u64 t_mm */
	WIRE_PONG = 4,		/* LM -> MM: u64 t_mm, t_rx, t_mm_prev,
				   t_tx_prev, t_lm */
	WIRE_READY = 5,		/* MM -> LM: clock sync done; push allowed:
				   u32 flags (WIRE_READY_*) */
	WIRE_COLLECT = 6,	/* MM -> LM: u32 round, u32 flags */
	WIRE_DATA = 7,		/* LM -> MM: u32 pid, u32 tid, u64 seq,
				   u32 session, u32 off, records... */
	WIRE_DONE = 8,		/* LM -> MM: u32 round, u64 lost_bytes,
				   u64 below */
	WIRE_ACK = 9,		/* MM -> LM: u32 round */
	WIRE_PROC = 10,		/* LM -> MM: u32 pid, u32 ppid, u32 what,
				   u32 status, u64 ts, str name,
				   u32 session */
	WIRE_BYE = 11,		/* LM -> MM: the LM exits; nothing follows */
	WIRE_CTL = 12,		/* ctl -> MM: str command line */
	WIRE_CTL_REPLY = 13,	/* MM -> ctl: i32 status, str text */
	WIRE_CONTROL = 14,	/* MM -> LM (data or fire link): u32 round,
				   u32 cls_off[8], str filter, u32 n,
				   u32 eid_off[n] */
	WIRE_CONTROL_ACK = 15,	/* LM -> MM (data or fire link): u32 round,
				   u64 t_lm: when it was applied, LM
				   clock */
	WIRE_STATUS = 16,	/* MM -> LM: u32 round */
	WIRE_STATUS_REPLY = 17,	/* LM -> MM: u32 round, then struct
				   wire_status's fields in order, then
				   str cpus (WIRE_CPUS_MAX) */
	WIRE_SEGMENT = 18,	/* LM -> MM: u64 seg_id: the DATA that
				   follow come from that segment (a spill
				   file written under another LM) */
	WIRE_CHALLENGE = 19,	/* MM -> LM/ctl: u8[WIRE_NONCE] nonce */
	WIRE_AUTH = 20,		/* LM/ctl -> MM: u8[WIRE_PROOF] proof */
	WIRE_DENIED = 21,	/* MM -> LM/ctl: u32 code, str text; the MM
				   then closes the connection */
	WIRE_WRITTEN = 22,	/* MM -> LM: u32 n, then n pieces of
				   collections not yet acknowledged that are
				   written: u32 pid, u32 session, u64 seq,
				   u32 end */
	/* The global collection scheme (WIRE_READY_GLOBAL). */
	WIRE_FULL = 23,		/* LM -> MM: u32 free chunks, u32 chunks:
				   the threshold is reached; collect */
	WIRE_PAUSE = 24,	/* MM -> LM: u32 round, u32 max_ms: stop the
				   traced processes, for max_ms at most */
	WIRE_PAUSED = 25,	/* LM -> MM: u32 round, u32 stopped, u32 not
				   stopped, u64 t_lm (all stopped), u64 ns
				   taken */
	WIRE_RESUME = 26,	/* MM -> LM: u32 round: let them go */
	WIRE_RESUMED = 27,	/* LM -> MM: u32 round, u32 let go, u32 why
				   (REC_COLL_END_*), u64 t_lm (just before) */
	WIRE_TSC = 28,		/* LM -> MM, first after WELCOME, only if
				   the host's clock is the TSC: u64 tick0,
				   u64 ns0, u64 mult, u64 err_ns, u64
				   span_ns, u64 rate_ppb (util/tsc.h): every
				   host time after it is in TSC ticks */
	/* Monitoring plans (doc/plans.md 7). */
	WIRE_PLAN = 29,		/* MM -> LM (data or fire link): u32 seq
				   (newer wins), u32 n, then n rows: u32 rule,
				   u32 kind (SEG_ROW_*), u32 eid (i32),
				   u32 ninsn, then ninsn of
				   u8 op, u8 field, u8 is_str, u8 0, u32 len,
				   u64 value (i64), and is_str: len bytes */
	WIRE_FIRE = 30,		/* LM -> MM: u32 rule, u32 pid, u32 tid,
				   u32 eid (i32), u64 ts (LM clock), u64
				   missed: a row matched */
	WIRE_SIGNAL = 31	/* MM -> LM (data or fire link): u32 rule,
				   u32 pid, u32 what
				   (WIRE_SIGNAL_*): a plan's stop or
				   continue */
};

/* A DATA message's records come from one chunk: its off and length stay
 * within this (the segment's SEG_CHUNK_MAX, asserted equal by localmon).
 * A CONTROL's filter is shorter than this (the segment's SEG_FILTER_MAX). */
#define WIRE_CHUNK_MAX		(1u << 20)
#define WIRE_FILTER_MAX		128

/* Bytes of one piece in WIRE_WRITTEN; at most this many in one. */
#define WIRE_WRITTEN_ITEM	20u
#define WIRE_WRITTEN_MAX	4096u

/* WIRE_SIGNAL what. */
enum { WIRE_SIGNAL_STOP = 1, WIRE_SIGNAL_CONT = 2 };

/* WIRE_READY flags. */
#define WIRE_READY_GLOBAL	1u	/* global scheme: at the threshold,
					   send FULL instead of pushing, and
					   obey PAUSE */
/* Longest stop a PAUSE may ask for, ms. */
#define WIRE_PAUSE_MAX_MS	600000u

/* The handshake (auth.h): nonces and proofs (HMAC-SHA256) in bytes. */
#define WIRE_NONCE	16
#define WIRE_PROOF	32
/* WIRE_DENIED codes: the token is wrong (trying again cannot help), or
 * something else (time limit, too many connections). */
enum { WIRE_DENIED_TOKEN = 1, WIRE_DENIED_OTHER = 2 };
/* Longest message either side takes before the handshake is complete
 * (a HELLO with the longest host name is 297 bytes). */
#define WIRE_PREAUTH_MAX	1024

/* Roles a HELLO gives.  FIRE: an LM's second connection, its fire link,
 * that carries its FIREs only, so that a firing does not wait behind the
 * collections on its data connection (doc/protocol.md 1.13). */
enum { WIRE_ROLE_LM = 1, WIRE_ROLE_CTL = 2, WIRE_ROLE_FIRE = 3 };

/* WIRE_COLLECT flags. */
#define WIRE_COLLECT_STOP	1u	/* final collection: the LM then exits */
#define WIRE_COLLECT_PROBE	2u	/* also read dormant sensors' values */

/* WIRE_PROC what; status is the exit code for EXIT, the signal number
 * for KILLED, 0 otherwise.  RESUME: a process already announced attached
 * again (to an LM that adopted the segment). */
enum {
	WIRE_PROC_START = 1,
	WIRE_PROC_EXIT = 2,
	WIRE_PROC_KILLED = 3,
	WIRE_PROC_EXEC = 4,	/* the image was replaced */
	WIRE_PROC_GONE = 5,	/* ended, cause unknown */
	WIRE_PROC_RESUME = 6
};

/* What an LM reports of itself (WIRE_STATUS_REPLY), all u64. */
struct wire_status {
	uint64_t	lm_pid;
	uint64_t	alive;		/* processes attached now */
	uint64_t	dead;		/* processes ended since it started */
	uint64_t	seg_size;	/* bytes */
	uint64_t	chunks;
	uint64_t	used;		/* chunks not free */
	uint64_t	threshold;	/* push when free chunks fall below */
	uint64_t	spilled;	/* bytes in the spill file now */
	uint64_t	spill_max;
	uint64_t	spilled_total;	/* bytes ever spilled */
	uint64_t	pushes;		/* collections the LM started */
	uint64_t	lost;		/* events writers could not record */
	uint64_t	bad_bytes;	/* malformed bytes skipped */
	uint64_t	adopted;	/* 1: it adopted a dead LM's segment */
};
#define WIRE_STATUS_FIELDS	(sizeof(struct wire_status) / 8)
/* STATUS_REPLY's cpus: the CPUs the LM may run on, a CPU list ("0-3,6"),
 * shorter than this (a longer list is cut after its last whole item). */
#define WIRE_CPUS_MAX		256

/* Round number of a collection the LM started itself (threshold, job end). */
#define WIRE_ROUND_PUSH	0u
/* A DONE's "sent below" time is the LM's scan less this (ns): a writer
 * that read its clock before the scan may commit after it, this late at
 * most (doc/ARCHITECTURE.md, "Global order"). */
#define WIRE_ORDER_GRACE	5000000u
/* "Sent below" values that are not times: nothing known (the DONE carried
 * no records of the segment), and replaying a spill file (older records
 * may follow; the MM should not wait for them). */
#define WIRE_BELOW_NONE		0u
#define WIRE_BELOW_REPLAY	1u

/* Longest string inside a message (host, process name, command). */
#define WIRE_STR_MAX	4096
/* Longest CTL_REPLY text: the status of over 200 LMs, the statistics of
 * many processes (the most a u16 count says). */
#define WIRE_TEXT_MAX	65535

/*
 * The rule of every message type, checked by every receiver before the
 * message's handler runs (doc/protocol.md 1.4): who sends it, who
 * receives it, in which
 * states of the connection its receiver takes it, and its payload's
 * length, exact or (a message with strings, arrays or records) at least.
 * A message that breaks its rule closes the connection, and nothing of it
 * is acted upon; handlers check only what a length cannot say (a string's
 * own length, a count against its array, values), and that nothing
 * follows the last field.
 */
enum {				/* who sends or receives (a mask) */
	WIRE_BY_MM = 1,
	WIRE_BY_LM = 2,
	WIRE_BY_CTL = 4,
	WIRE_BY_FIRE = 8	/* an LM's fire link (WIRE_ROLE_FIRE) */
};
enum {				/* the receiver's connection state (a mask) */
	WIRE_ST_AUTH = 1,	/* the handshake is not complete */
	WIRE_ST_SYNC = 2,	/* an LM's: authenticated, before READY */
	WIRE_ST_READY = 4	/* an LM's after READY; a ctl's and a
				   fire link's once authenticated */
};
struct wire_rule {
	const char	*name;		/* "HELLO", ... */
	unsigned	by;		/* WIRE_BY_*: who sends it */
	unsigned	to;		/* WIRE_BY_*: who receives it */
	unsigned	states;		/* WIRE_ST_* */
	int		exact;		/* 1: len is the length; 0: the least */
	uint32_t	len;
};

/* The rule of type, or NULL if the type is unknown. */
const struct wire_rule *wire_rule(uint16_t type);
/* The name of type ("HELLO"), or "unknown". */
const char *wire_type_name(uint16_t type);
/*
 * Checks a message of type with a payload of len bytes, from a peer that
 * is one of by (WIRE_BY_*) to the receiver to (one WIRE_BY_*), arriving
 * in state (one WIRE_ST_*), against its rule.  Returns 0, or -1 with the
 * message and the reason in why[whysz] (for example "PONG (4) of 15
 * bytes: 16 expected").
 */
int wire_check(uint16_t type, unsigned by, unsigned to, unsigned state,
	       size_t len, char *why, size_t whysz);

/*
 * A little-endian writer and a bounds-checked reader over a byte buffer.
 * The reader never reads past its end; once a read fails, every later read
 * fails too and wire_rd_ok() says so.
 */
struct wire_wr {
	unsigned char	*p;
	size_t		len;
	size_t		cap;
	int		err;
};

struct wire_rd {
	const unsigned char	*p;
	size_t			len;
	size_t			off;
	int			err;
};

void wire_wr_init(struct wire_wr *w, void *buf, size_t cap);
void wire_put_u16(struct wire_wr *w, uint16_t v);
void wire_put_u32(struct wire_wr *w, uint32_t v);
void wire_put_u64(struct wire_wr *w, uint64_t v);
void wire_put_bytes(struct wire_wr *w, const void *p, size_t n);
/* u16 length then bytes (no NUL). */
void wire_put_str(struct wire_wr *w, const char *s);
/* The same for a CTL_REPLY's text, up to WIRE_TEXT_MAX bytes. */
/* A STATUS_REPLY's body: round, st's fields in order, cpus ("" when
 * not known). */
void wire_put_status(struct wire_wr *w, uint32_t round,
    const struct wire_status *st, const char *cpus);
void wire_put_text(struct wire_wr *w, const char *s);

/*
 * A DATA payload: pid, tid, seq, session, off (WIRE_DATA_FIELDS bytes),
 * then the records recs[0..len) (whole, well formed) as one dense run
 * (rec/dense.h), into w, which needs room for
 * WIRE_DATA_FIELDS + REC_DENSE_MAX(len) bytes; w->err is set if it has
 * not, or if a record is malformed.
 */
#define WIRE_DATA_FIELDS	24
void wire_put_data(struct wire_wr *w, uint32_t pid, uint32_t tid,
    uint64_t seq, uint32_t session, uint32_t off, const void *recs,
    size_t len);

/*
 * The same for records not checked yet (rec_dense_encode_valid): those
 * well formed at the start of recs[0..len).  Returns their bytes (0: the
 * first is malformed, and the payload is only the fields), and in *meta
 * whether one is of class META.
 */
size_t wire_put_data_valid(struct wire_wr *w, uint32_t pid, uint32_t tid,
    uint64_t seq, uint32_t session, uint32_t off, const void *recs,
    size_t len, int *meta);

/* Writes a header for a payload of len bytes into buf[WIRE_HDR]. */
void wire_header(void *buf, uint16_t type, uint32_t len);

void wire_rd_init(struct wire_rd *r, const void *buf, size_t len);
uint16_t wire_get_u16(struct wire_rd *r);
uint32_t wire_get_u32(struct wire_rd *r);
uint64_t wire_get_u64(struct wire_rd *r);
/* Copies n bytes into out (zeros if they are not there). */
void wire_get_bytes(struct wire_rd *r, void *out, size_t n);
/* Copies a string into out[outsz] with a NUL; fails if it does not fit. */
void wire_get_str(struct wire_rd *r, char *out, size_t outsz);
static inline int
wire_rd_ok(const struct wire_rd *r)
{
	return !r->err;
}
/* Whether every read succeeded and nothing is left: the payload held
 * exactly its fields. */
static inline int
wire_rd_end(const struct wire_rd *r)
{
	return !r->err && r->off == r->len;
}
static inline size_t
wire_rd_left(const struct wire_rd *r)
{
	return r->err ? 0 : r->len - r->off;
}

/*
 * Parses a header from buf[WIRE_HDR].  Returns 0 and sets *type and *len,
 * or -1 (with a reason in *why) if the magic, version or length is wrong.
 */
int wire_parse_header(const void *buf, uint16_t *type, uint32_t *len,
		      const char **why);

#endif /* GRM_WIRE_H */
