/* SPDX-License-Identifier: MIT */
/* seg.h: the layout of a host's shared trace segment (one per LM). */
#ifndef GRM_SEG_H
#define GRM_SEG_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "rec/rec.h"

/*
 * A segment is one SysV shared memory object, created by the Local Monitor
 * (owner-only) and attached by every traced process on the host:
 *
 *	[struct seg_hdr][struct seg_chunk x nchunks][chunk data x nchunks]
 *
 * Everything is addressed by offsets and indices from the header, never by
 * pointers, and the LM checks every one of them: the writers are not
 * trusted.  Each chunk is owned by at most one writer thread at a time.
 *
 * Chunk life (state word; CLAIMED carries the claimant's pid, 0 for the LM):
 *	FREE --writer CAS (seg_acquire)--> CLAIMED(pid)
 *	CLAIMED(pid) --writer fills session/pid/tid/seq/kind--> OWNED
 *	OWNED --writer, chunk full or thread exit (seg_release)--> FULL
 *	OWNED or CLAIMED --LM, the session's connection closed
 *		(seg_reclaim_session)--> FULL
 *	CLAIMED(pid) --LM, the claimant died before it filled the chunk
 *		(seg_reclaim_claims)--> FULL, empty
 *	FULL --writer, overwrite policy, own image's oldest, not pinned
 *		(seg_steal)--> CLAIMED(pid) --> OWNED (or back to FULL if
 *		the LM pinned it meanwhile)
 *	FULL --LM, everything copied out and acknowledged
 *		(chunk_free)--> CLAIMED(0) --> FREE
 *	CLAIMED(0) --LM adopting the segment of one that died while freeing
 *		it (seg_adopt)--> FREE
 *
 * The writer appends records to an OWNED chunk and publishes each one with a
 * release-store of `committed`.  The LM copies [consumed, committed) and,
 * once the MM has acknowledged it (or it is in the spill file), advances
 * `consumed`, which only the LM writes (and a writer taking the chunk
 * back under the overwrite policy); so no record is sent twice by one LM,
 * and none is lost if the LM dies before the acknowledgement.
 * A thread's chunks carry increasing `seq` numbers (a per-process counter),
 * and LM sessions increase, so sorting by (pid, session, seq) gives each
 * thread's records in emission order, across exec too.
 *
 * Bump SEG_VERSION whenever this layout changes.  doc/protocol.md section
 * 2.4 specifies the segment in prose, for someone writing a compatible LM
 * or client.
 */
#define SEG_MAGIC	0x534d5247u	/* "GRMS" */
#define SEG_VERSION	7u

#define SEG_CHUNK_MIN	16384u	/* > REC_MAX plus a loss record */
#define SEG_CHUNK_MAX	(1u << 20)
#define SEG_SIZE_DEFAULT	(32u << 20)
#define SEG_CHUNK_DEFAULT	(64u << 10)

enum seg_state {
	SEG_FREE = 0,
	SEG_CLAIMED = 1,	/* with the claimant's pid above bit 2 */
	SEG_OWNED = 2,
	SEG_FULL = 3
};
/* A chunk being claimed by process pid (its fields not yet filled): if
 * that process dies now, the LM still knows whose it was. */
#define SEG_CLAIMED_BY(pid)	(SEG_CLAIMED | (uint32_t)(pid) << 2)
#define SEG_STATE(st)		((st) & 3u)

struct seg_chunk {
	_Atomic uint32_t	state;
	uint32_t		pid;
	uint32_t		tid;
	uint32_t		session;	/* the LM connection that owns it */
	uint64_t		seq;
	_Atomic uint64_t	committed;	/* bytes, written by the owner */
	uint64_t		consumed;	/* bytes, written by the LM */
	_Atomic uint64_t	carry;		/* bytes at the start: definitions
						   moved here by overwriting, not
						   yet collected */
	uint32_t		kind;		/* SEG_KIND_* */
	_Atomic uint32_t	pin;		/* LM copying it, or its data sent
						   and not yet acknowledged: not
						   to be stolen */
	uint32_t		pad1[2];
};
_Static_assert(sizeof(struct seg_chunk) == 64, "seg_chunk is a cache line");

/* What a chunk holds: records (emitted in order, consumed once), or a
 * thread's table of counters and latest values (statistics mode, dormant
 * sensors), updated in place and read whole at each collection. */
enum { SEG_KIND_RECORDS = 0, SEG_KIND_TABLE = 1 };

/*
 * Runtime control (grmctl enable/disable/filter), written by the LM only
 * and read by every writer: a writer compares `ctl` with the value it last
 * applied and, when the generation changed, recomputes which of its event
 * types are on.  Bits are indexed by REC_EID_BIT(eid) and class number.  The
 * filter is a NUL-terminated substring of the names of the types that stay
 * on ("" : no filter).  Writers copy these words out before use and never
 * trust them for anything but on/off.
 */
#define SEG_FILTER_MAX	128
#define SEG_CTL_ON	1u	/* ctl: recording on */
#define SEG_CTL_STEP	2u	/* ctl: one control change */

/*
 * The monitoring plan's watched types (doc/plans.md 7), written by the LM
 * only, with the control words and under the same generation: a row per
 * "event E [where ...]" rule, its comparisons as a program the writer
 * runs on the record it has just written, strings in plan_strs.  A
 * writer copies the rows and the strings out when ctl changes and checks
 * every offset and number of its copy before use.
 */
#define SEG_PLAN_ROWS	64		/* PLAN_RULES_MAX */
#define SEG_PLAN_INSNS	8		/* PLAN_PREDS_MAX */
#define SEG_PLAN_STRS	8192		/* bytes of every row's strings */

struct seg_plan_insn {
	uint8_t		op;		/* enum plan_op: EQ NE LT LE GT GE */
	uint8_t		field;		/* 1..16 */
	uint8_t		is_str;
	uint8_t		pad;
	uint32_t	len;		/* string: its length */
	int64_t		value;		/* integer, or the string's offset in
					   plan_strs */
};
_Static_assert(sizeof(struct seg_plan_insn) == 16, "plan_insn");

/* What a row watches: a record of eid whose fields pass the comparisons;
 * a block (eid REC_EID_BLOCK_END) whose name is insn[0]'s string lasting
 * longer than insn[1].value; the rate of eid passing insn[0].value
 * records in a second of the host, insn[1].value being that second.
 * Both times are in the segment's clock (SEG_CLOCK_*: TSC ticks on a TSC
 * segment): the LM converts a block's nanoseconds from mainmon, and sets
 * a rate's second. */
enum { SEG_ROW_EVENT = 0, SEG_ROW_BLOCK = 1, SEG_ROW_RATE = 2,
       SEG_ROW_SWITCH = 3, SEG_ROW_SCOPE = 4 };
/*
 * A SCOPE row comes right after the event, block or rate row it limits
 * (the same rule): the writers that may take that row's firing slot.
 * Its eid is 0; each comparison is one item of the rule's scope, `op`
 * PLAN_EQ and `pad` 0: `field` SEG_SC_PID (`value` a process id),
 * SEG_SC_THREAD (a thread id), SEG_SC_RANK (the rank the process gave
 * itself, GMI_SetName), SEG_SC_NAME (`is_str` 1: the process's name as
 * its lmp_hello says it, in plan_strs).  A writer outside it does not
 * check the row (a rate row: counts, never takes the slot); a writer
 * that does not know the kind ignores it and checks the row as any
 * other (mainmon applies the scope again).
 */
enum { SEG_SC_PID = 0, SEG_SC_THREAD = 1, SEG_SC_RANK = 2, SEG_SC_NAME = 3 };
/*
 * A SWITCH row watches nothing and never fires: it is a plan's enable or
 * disable limited to processes (doc/plans.md 4.4).  Its eid is 0; each
 * of its comparisons is one switch: in process `len` (a pid), type
 * (`field` SEG_SW_TYPE: `value` an event id) or class (`field`
 * SEG_SW_CLASS: `value` 0..254) on (`op` SEG_SW_ON) or off (SEG_SW_OFF),
 * whatever the control words say; `is_str` and `pad` 0.  A writer applies
 * the switches of its own pid, after the control words; a writer that
 * does not know the kind ignores the row.
 */
enum { SEG_SW_OFF = 0, SEG_SW_ON = 1 };
enum { SEG_SW_TYPE = 0, SEG_SW_CLASS = 1 };

struct seg_plan_row {
	uint32_t	rule;		/* the rule's number (mainmon's) */
	int32_t		eid;
	uint32_t	ninsn;
	uint16_t	kind;		/* SEG_ROW_* */
	uint16_t	pad;
	struct seg_plan_insn insn[SEG_PLAN_INSNS];
};

/*
 * A row's firing slot, written by writers (untrusted) and the LM: state
 * FREE; a writer whose record matches takes it (CAS to SEG_FIRE_CLAIMED
 * with its pid), fills it, marks it READY and wakes the LM's firing
 * thread (seg_fire_wake); a match while the slot is not FREE only adds
 * to `missed`.  The LM reads a READY slot, sends it to mainmon and frees
 * it; a slot still CLAIMED by a process that died is freed when its end
 * is noticed.
 */
enum { SEG_FIRE_FREE = 0, SEG_FIRE_CLAIMED = 1, SEG_FIRE_READY = 2 };
#define SEG_FIRE_CLAIMED_BY(pid)	(SEG_FIRE_CLAIMED | (uint32_t)(pid) << 2)

struct seg_fire {
	_Atomic uint32_t	state;
	uint32_t		rule;
	uint32_t		pid;
	uint32_t		tid;
	int32_t			eid;
	uint32_t		pad;
	uint64_t		ts;		/* the record's, host clock */
	_Atomic uint64_t	missed;
	/* A rate row's count of the host's current second, summed over
	 * its writers (gmi_plan.c): rule & 0xffff << 48, the second &
	 * 0xffff << 32, the count (saturated) in the low 32 bits. */
	_Atomic uint64_t	rate;
	uint32_t		pad2[4];
};
_Static_assert(sizeof(struct seg_fire) == 64, "seg_fire is a cache line");

struct seg_hdr {
	uint32_t		magic;
	uint32_t		version;
	uint64_t		size;		/* whole segment, bytes */
	uint32_t		chunk_size;	/* data bytes per chunk */
	uint32_t		nchunks;
	uint64_t		table_off;	/* offset of seg_chunk[0] */
	uint64_t		data_off;	/* offset of chunk 0's data */
	uint32_t		lm_pid;
	_Atomic uint32_t	sessions;	/* last session given (LM) */
	uint64_t		seg_id;		/* random, chosen at creation:
						   names the segment to the MM
						   across LMs adopting it */
	/* Control words read by writers (own cache line).  ctl is the one
	 * word the hot path reads: bit 0 (SEG_CTL_ON) says whether anything
	 * is recorded, the other bits count control changes (+2 each). */
	_Alignas(64) _Atomic uint32_t	ctl;
	uint32_t		clock;		/* SEG_CLOCK_*: what writers
						   stamp records with; set by
						   the LM at creation */
	_Atomic uint32_t	cls_off[8];	/* class c disabled: bit c */
	_Atomic uint32_t	policy;		/* SEG_POLICY_* */
	uint32_t		pad2[5];
	/* Allocation state (own cache line). */
	_Alignas(64) _Atomic uint32_t	nfree;		/* FREE chunks */
	_Atomic uint32_t	hint;		/* where to look for a free chunk */
	_Atomic uint32_t	push_req;	/* a writer asked the LM to drain */
	uint32_t		threshold;	/* push when nfree < threshold */
	/* Events writers could not record, and how many of those are in a
	 * loss record in some chunk; the LM reports the difference at its
	 * last collection, so no loss goes uncounted. */
	_Atomic uint64_t	lost;
	_Atomic uint64_t	lost_recorded;
	_Atomic uint64_t	pushes;		/* unused: nothing writes it (0);
						   the LM counts its pushes in
						   its own memory */
	/* Of lost - lost_recorded, what the MM has acknowledged receiving
	 * in the LM's own loss records (LM). */
	_Atomic uint64_t	lost_reported;
	uint32_t		pad3[4];
	/* The rest of the control state (rarely read). */
	char			filter[SEG_FILTER_MAX];
	_Atomic uint32_t	eid_off[REC_EID_BITS / 32];
	/* The plan (above): types watched (bit by REC_EID_BIT), the rows,
	 * their strings; and the rows' firing slots. */
	_Atomic uint32_t	eid_watch[REC_EID_BITS / 32];
	uint32_t		plan_rows;
	/* The firing word: a futex shared by the writers and the LM's
	 * firing thread (seg_fire_wake, seg_fire_wait). */
	_Atomic uint32_t	fire_seq;
	uint32_t		pad4[14];
	struct seg_plan_row	plan[SEG_PLAN_ROWS];
	char			plan_strs[SEG_PLAN_STRS];
	_Alignas(64) struct seg_fire fire[SEG_PLAN_ROWS];
};
_Static_assert(sizeof(struct seg_hdr) % 64 == 0, "seg_hdr layout");

/* The clock of every record's timestamp in the segment (GRM_CLOCK). */
enum {
	SEG_CLOCK_MONO = 0,		/* CLOCK_MONOTONIC, ns */
	SEG_CLOCK_TSC = 1		/* the TSC, ticks (util/tsc.h) */
};

/* What a writer does when no chunk is free (GRM_POLICY). */
enum {
	SEG_POLICY_BLOCK = 0,		/* wait for the LM, bounded; then lose */
	SEG_POLICY_DISCARD = 1,		/* lose the event at once, counted */
	SEG_POLICY_OVERWRITE = 2	/* take back the oldest full chunk */
};

/*
 * A process's private view of a segment: the shared header and the layout
 * copied out of it once, when the segment was created or checked.  Every
 * function below takes the view and computes addresses from the private
 * copy only: a writer that scribbles over the shared header cannot move
 * the LM (or another writer) outside the segment.
 */
struct seg_sent;

struct seg {
	struct seg_hdr	*hdr;		/* shared: only its atomics are read */
	size_t		size;
	uint32_t	chunk_size;
	uint32_t	nchunks;
	uint32_t	threshold;
	uint64_t	table_off;
	uint64_t	data_off;
	/* The LM's own: per chunk, how far its data was sent and not yet
	 * acknowledged (NULL: collections commit at once). */
	struct seg_sent	*sent;
};

/* How far chunk i's data has been sent, valid while its seq is seq; and
 * how many collections in flight hold it (published in its pin word). */
struct seg_sent {
	uint64_t	seq;
	uint64_t	off;
	uint32_t	pins;
	uint32_t	pad;
};

/* Bytes needed for nchunks chunks of chunk_size data bytes. */
size_t seg_size_for(uint32_t nchunks, uint32_t chunk_size);

/*
 * Lays out a segment in mem[0..size): as many chunks of chunk_size bytes as
 * fit.  Returns 0, or -1 if chunk_size is out of range or fewer than two
 * chunks fit.
 */
int seg_init(void *mem, size_t size, uint32_t chunk_size);

/*
 * Checks that mem[0..size) holds a segment header this code understands and
 * whose offsets stay inside it.  Returns 0 or -1.
 */
int seg_check(const void *mem, size_t size);

/*
 * Attaches the System V segment shmid, of size bytes, as shmat(shmid,
 * NULL, 0) does, but at an address aligned to 2 MiB and marked for
 * transparent huge pages (MADV_HUGEPAGE): where the system allows huge
 * pages for shared memory (/sys/kernel/mm/transparent_hugepage/
 * shmem_enabled set to advise, within_size or always), the segment is
 * then mapped by 2 MiB pages, and writers and the LM walk 512 times fewer
 * page-table entries.  Falls back to shmat's own address where that
 * cannot be had.  Returns the address, or (void *)-1 with errno set.
 */
void *seg_attach(int shmid, size_t size);

/*
 * Makes the pages of an attached segment present and writable in this
 * process's page tables now (Linux's MADV_POPULATE_WRITE), so that
 * writers take no page fault on the hot path.  Changes no byte.  Returns
 * 0, or -1 where the system cannot (then pages fault in on first use).
 */
int seg_populate(void *mem, size_t size);

/* Fills v from mem[0..size), which must have passed seg_check. */
void seg_view(struct seg *v, void *mem, size_t size);
/* LM: writes the header's layout words (and its id and pid) back from
 * the private view, over whatever a writer scribbled there. */
void seg_restore_layout(const struct seg *v, uint64_t seg_id,
			uint32_t lm_pid);

static inline struct seg_chunk *
seg_chunk(const struct seg *v, uint32_t i)
{
	return (struct seg_chunk *)((char *)v->hdr + v->table_off) + i;
}

static inline char *
seg_data(const struct seg *v, uint32_t i)
{
	return (char *)v->hdr + v->data_off + (size_t)i * v->chunk_size;
}

/*
 * Writer side.  seg_acquire takes a FREE chunk for (pid, tid) and gives it
 * sequence number seq; returns its index, or -1 if none is free.  It sets
 * *notify to 1 when this acquisition made free chunks fall below the push
 * threshold for the first time since the LM last drained (the caller then
 * tells the LM).  seg_release marks an OWNED chunk FULL.
 */
int seg_acquire(const struct seg *v, uint32_t session, uint32_t pid,
		uint32_t tid, uint64_t seq, uint32_t kind, int *notify);
void seg_release(const struct seg *v, uint32_t i);

/*
 * Overwrite policy (flight recorder): takes back the calling process's
 * (same pid and session) FULL record chunk with the lowest sequence number
 * (the oldest), for thread tid with sequence number seq.  Returns its index,
 * or -1 if there is none.  The chunk's uncollected definitions and names
 * are kept, moved to its start (committed says how many bytes); the other
 * records are dropped and described in *loss: the chunk's thread and their
 * number.  The LM pins a chunk while it copies it, and a pinned chunk is
 * never taken.
 */
struct seg_loss {
	uint32_t	pid;
	uint32_t	tid;
	uint64_t	events;
};
int seg_steal(const struct seg *v, uint32_t session, uint32_t pid,
	      uint32_t tid, uint64_t seq, struct seg_loss *loss);

/*
 * LM side.  seg_collect copies out everything committed and not yet
 * consumed, in (pid, session, seq) order, calling
 *	emit(arg, pid, tid, session, seq, off, data, len, meta)
 * for each non-empty piece (whole, well-formed records only, from a
 * private copy; a malformed tail is skipped and counted in *bad_bytes);
 * off is where the piece starts in its chunk, meta whether a record of
 * it is of class META (definitions, losses).  FULL chunks are freed after
 * their data is emitted.  emit returns 0, or -1 to stop (the chunk is then
 * left as it was, nothing consumed).  Returns the number of pieces
 * emitted, or -1 on a stop or no memory.
 */
typedef int (*seg_emit_fn)(void *arg, uint32_t pid, uint32_t tid,
			   uint32_t session, uint64_t seq, uint64_t off,
			   const void *data, size_t len, int meta);
int seg_collect(const struct seg *v, seg_emit_fn emit, void *arg,
		uint64_t *bad_bytes);

/*
 * Data sent and not yet acknowledged: one entry per chunk copied.  Until
 * seg_flight_commit, the chunks stay pinned (not taken back), their
 * `consumed` is unchanged and FULL ones are not freed, so that an LM dying
 * meanwhile, or a Main Monitor that never acknowledges, loses nothing: the
 * data is sent again (from v->sent on, by this LM; from `consumed` on, by
 * an LM adopting the segment).
 */
struct seg_fl_ent {
	uint32_t	idx;
	uint32_t	pid;
	uint64_t	seq;
	uint64_t	end;		/* consumed once acknowledged */
	uint64_t	carry;		/* restored if not delivered */
	uint32_t	full;		/* FULL when read (a table chunk:
					   free once acknowledged) */
	uint32_t	kind;
	uint32_t	session;
	uint32_t	done;		/* committed already (seg_flight_written) */
};
struct seg_flight {
	struct seg_fl_ent	*v;
	size_t			n;
	size_t			cap;
	size_t			open;		/* entries before it are done */
};

/*
 * The same; with full_only, FULL chunks only (and those carrying moved
 * definitions): a push leaves the chunks being written alone, so that the
 * LM does not pull the cache lines a writer is filling.  With fl (and
 * v->sent), nothing is consumed or freed: the chunks are recorded in fl,
 * for seg_flight_commit or seg_flight_abort.
 */
int seg_collect_ex(const struct seg *v, int full_only, seg_emit_fn emit,
		   void *arg, uint64_t *bad_bytes, struct seg_flight *fl);

/*
 * seg_collect_ex for an emitter that checks the records as it reads them
 * (rec_dense_encode_valid): emit gets each piece's private copy unchecked,
 * data[0..len), and sets *ok to the bytes of whole, well-formed records
 * at its start that it took (the rest is skipped as malformed and counted
 * in *bad_bytes).  The rest is as seg_collect_ex.
 */
typedef int (*seg_emit_raw_fn)(void *arg, uint32_t pid, uint32_t tid,
			       uint32_t session, uint64_t seq, uint64_t off,
			       const void *data, size_t len, size_t *ok);
int seg_collect_raw(const struct seg *v, int full_only,
		    seg_emit_raw_fn emit, void *arg, uint64_t *bad_bytes,
		    struct seg_flight *fl);

/*
 * Table chunks (statistics, dormant values) are not consumed: each
 * collection reads them whole.  seg_tables copies [0, committed) of each
 * OWNED or FULL table chunk and calls emit(arg, pid, tid, session, final,
 * shared, data, len), final being 1 for a FULL chunk, which is then freed
 * (with fl: recorded there, freed at commit); shared is the live chunk
 * (for stab_read's consistency checks).  Returns the number of chunks
 * read, or -1 on a stop or no memory.
 */
typedef int (*seg_table_fn)(void *arg, uint32_t pid, uint32_t tid,
			    uint32_t session, int final, const void *shared,
			    const void *data, size_t len);
int seg_tables(const struct seg *v, seg_table_fn emit, void *arg,
	       struct seg_flight *fl);

/* The Main Monitor has the data of fl: consume it, free what is done. */
void seg_flight_commit(const struct seg *v, struct seg_flight *fl);
/*
 * It has written one piece of fl before the rest: the record chunk piece
 * of (pid, session, seq) that ended at end.  Its entry is committed now
 * (and then skipped by seg_flight_commit and seg_flight_abort), so that a
 * FULL chunk all written is free at once.  Returns 1 if fl held that
 * entry, else 0.
 */
int seg_flight_written(const struct seg *v, struct seg_flight *fl,
		       uint32_t pid, uint32_t session, uint64_t seq,
		       uint64_t end);
/* It will never acknowledge fl: send that data again next time. */
void seg_flight_abort(const struct seg *v, struct seg_flight *fl);
void seg_flight_free(struct seg_flight *fl);

/*
 * An LM adopting the segment of one that died: forgets what that LM had
 * pinned (its unacknowledged data is sent again, from `consumed`).
 */
void seg_adopt(const struct seg *v);

/*
 * Marks every OWNED or CLAIMED chunk of session FULL: the process that held
 * that LM connection has died or exec'd.  (By session, not pid: an exec'd
 * image keeps its pid but opens a new session.)
 */
void seg_reclaim_session(const struct seg *v, uint32_t session);
/* Marks FULL, empty, every chunk process pid was claiming when it died. */
void seg_reclaim_claims(const struct seg *v, uint32_t pid);

/*
 * The firing word (seg_hdr.fire_seq), a futex shared between processes:
 * a writer that marked a firing slot READY calls seg_fire_wake (adds 1,
 * release, then FUTEX_WAKE); the LM's firing thread reads the word
 * (acquire), looks at the slots, then calls seg_fire_wait with the value
 * it read: it returns at once if the word moved since (a firing whose
 * wake came before the wait is never slept through), else when woken or
 * after timeout_ns.  Neither fails in a way the caller must handle: a
 * wake lost is found at the wait's timeout.  Never a lock.
 */
void seg_fire_wake(struct seg_hdr *s);
void seg_fire_wait(struct seg_hdr *s, uint32_t seen, uint64_t timeout_ns);

/* Number of chunks not FREE. */
uint32_t seg_used(const struct seg *v);
/* Whether a chunk holds records committed and not yet collected (sent or
 * consumed): a collection would send something.  One pass over the chunk
 * headers, no copy; scribbled values may say yes, never crash. */
int seg_pending(const struct seg *v);

#endif /* GRM_SEG_H */
